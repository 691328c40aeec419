"""Device-side assertions: torch._assert_async (and its message overload, the functional form
AOTAutograd emits, e.g. for F.one_hot under torch.compile) check on the device, and a failing
one raises CPU's message at the next sync (at the op in Debug Eager), eagerly and compiled.
Randomized over dtypes, values and shapes against the CPU."""
import random
import re

import pytest
import torch
import torch.nn.functional as F

import torch_tpu
from torch_tpu import _compile

DEV = "tpu"
DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.bool, torch.complex64]
VALUES = [0.0, 1.0, -2.0, 0.5, float("nan"), float("inf"), -float("inf"), 1e-30]


def _case(rng):
    dt = rng.choice(DTYPES)
    v = rng.choice(VALUES)
    if not dt.is_floating_point and not dt.is_complex:
        v = 0.0 if v != v or abs(v) == float("inf") or abs(v) < 1 else v
    shape = rng.choice([(), (1,), (1, 1)])
    t = torch.full(shape, v, dtype=torch.float32).to(dt)
    if dt.is_complex and rng.random() < 0.3:
        t = t * 1j  # imaginary part only
    msg = rng.choice([None, "", "custom message"])
    return t, msg


def _call(t, msg):
    if msg is None:
        torch._assert_async(t)
    else:
        torch._assert_async(t, msg)


def _cpu_outcome(t, msg):
    try:
        _call(t, msg)
        return None
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("seed", range(4))
def test_assert_async_randomized_against_cpu(seed):
    rng = random.Random(seed)
    for _ in range(25):
        t, msg = _case(rng)
        want = _cpu_outcome(t, msg)
        _call(t.to(DEV), msg)
        if want is None:
            torch.tpu.synchronize()
        else:
            with pytest.raises(RuntimeError, match=re.escape(want)):
                torch.tpu.synchronize()
        torch.tpu.synchronize()  # reported once


@pytest.mark.parametrize("shape", [(2,), (0,), (1, 2)])
def test_assert_async_needs_one_element(shape):
    t = torch.zeros(shape)
    want = _cpu_outcome(t, None)
    assert want is not None
    with pytest.raises(RuntimeError, match=re.escape(want)):
        torch._assert_async(t.to(DEV))


def test_assert_async_raises_at_the_op_in_debug():
    with torch_tpu.eager_mode("debug"):
        with pytest.raises(RuntimeError, match="must hold"):
            torch._assert_async(torch.tensor(0, device=DEV), "must hold")
        torch._assert_async(torch.tensor(3, device=DEV), "must hold")


def test_assert_async_on_a_computed_value_keeps_later_work():
    x = torch.randn(6)
    y = x.to(DEV) * 2
    torch._assert_async((y.abs().sum() > 1e9).to(DEV), "too small")
    z = y + 1  # work after the failing check still runs
    with pytest.raises(RuntimeError, match="too small"):
        torch.tpu.synchronize()
    torch.testing.assert_close(z.cpu(), x * 2 + 1)


def test_functional_assert_async_and_dep_token():
    tok = torch.ops.aten._make_dep_token(device=DEV)
    cpu_tok = torch.ops.aten._make_dep_token()
    assert (tok.shape, tok.dtype, tok.device.type) == (cpu_tok.shape, cpu_tok.dtype, DEV)
    out = torch.ops.aten._functional_assert_async.msg(torch.tensor(2, device=DEV), "fm", tok)
    assert out.shape == cpu_tok.shape and out.dtype == cpu_tok.dtype
    torch.ops.aten._functional_assert_async.msg(torch.tensor(0, device=DEV), "functional failed", tok)
    with pytest.raises(RuntimeError, match="functional failed"):
        torch.tpu.synchronize()


def _compiled_graphs_since(n):
    return _compile.compiled_graphs(since=n)


def test_compiled_assert_async_is_checked_on_every_replay():
    torch._dynamo.reset()

    def f(x):
        y = x * 2
        torch._assert_async(y.sum() > 0, "sum must be positive")
        return y + 1

    n = _compile.graph_serial()
    c = torch.compile(f, backend="tpu", fullgraph=True)
    x = torch.rand(5) + 0.1
    for _ in range(3):
        torch.testing.assert_close(c(x.to(DEV)).cpu(), f(x))
    out = c(-x.to(DEV))
    with pytest.raises(RuntimeError, match="sum must be positive"):
        out.cpu()
    torch.testing.assert_close(c(x.to(DEV)).cpu(), f(x))
    graphs = _compiled_graphs_since(n)
    assert len(graphs) == 1 and graphs[0]["replays"] >= 4, graphs


def test_compiled_one_hot_checks_its_classes():
    torch._dynamo.reset()
    c = torch.compile(lambda i: F.one_hot(i, 5) * 2, backend="tpu", fullgraph=True)
    i = torch.tensor([1, 4, 0, 3])
    assert torch.equal(c(i.to(DEV)).cpu(), F.one_hot(i, 5) * 2)
    out = c(torch.tensor([1, 7, 0, 3], device=DEV))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        out.cpu()
    assert torch.equal(c(i.to(DEV)).cpu(), F.one_hot(i, 5) * 2)
