"""A program that reads a storage no op has written yet (torch.empty, then a write through a
strided view: the untouched bytes are read as zeros) makes those zeros itself instead of
uploading a buffer of zeros (csrc/core/runtime/call.c `use_initial`). Its cached program and a
compiled graph's captured program must then never take a written tensor for an empty one:
empty and written tensors alternate here, in Strict and Fused Eager and under torch.compile,
against CPU (where empty bytes are garbage, only written elements are compared)."""
import pytest
import torch

import torch_tpu  # noqa: F401
from ops_util import make

DEV = torch.device("tpu")


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16, torch.bool])
def test_empty_then_written_alternate(dtype):
    v = make((4, 3), dtype, seed=1)
    for k in range(6):
        if k % 2:
            base = make((4, 6), dtype, seed=10 + k)
            x_c, x_t = base.clone(), base.to(DEV)
        else:
            x_c, x_t = torch.empty(4, 6, dtype=dtype), torch.empty(4, 6, dtype=dtype, device=DEV)
        x_t[:, 1::2] = v.to(DEV)
        x_c[:, 1::2] = v
        if k % 2:  # all of it is defined
            torch.testing.assert_close(x_t.cpu(), x_c)
            if dtype != torch.bool:
                torch.testing.assert_close((x_t * 2 + 1).cpu(), x_c * 2 + 1)
        else:
            torch.testing.assert_close(x_t[:, 1::2].cpu(), v)
            torch.testing.assert_close(x_t[:, ::2].cpu(), torch.zeros(4, 3, dtype=dtype))


def test_empty_fully_written_through_views():
    a, b = make((5, 4)), make((5, 4), seed=2)
    for _ in range(3):
        x = torch.empty(5, 8, device=DEV)
        x[:, ::2] = a.to(DEV)
        x[:, 1::2] = b.to(DEV)
        want = torch.empty(5, 8)
        want[:, ::2], want[:, 1::2] = a, b
        torch.testing.assert_close((x.sum(1) * x[:, 3]).cpu(), want.sum(1) * want[:, 3])


@pytest.mark.usefixtures("fresh_dynamo")
def test_compiled_graph_empty_then_written_input():
    def f(x, v):
        x[:, 1::2] = v
        return x.sum(1), x * 3

    cf = torch.compile(f, backend="tpu")
    v = make((4, 3), seed=1)
    for k in range(6):
        if k % 2:
            base = make((4, 6), seed=20 + k)
            x_c, x_t = base.clone(), base.to(DEV)
        else:
            x_c, x_t = torch.zeros(4, 6), torch.empty(4, 6, device=DEV)  # empty: reads as zeros
        s_t, y_t = cf(x_t, v.to(DEV))
        s_c, y_c = f(x_c, v)
        torch.testing.assert_close(s_t.cpu(), s_c)
        torch.testing.assert_close(y_t.cpu(), y_c)
        torch.testing.assert_close(x_t.cpu(), x_c)
