"""torch.histogramdd (aten::_histogramdd_bin_edges / _from_bin_cts /
_from_bin_tensors) on tpu against CPU: values, dtypes and shapes, exactly."""

import pytest
import torch
import torch_tpu

from ops_util import check, dev, make

EXACT = {"rtol": 0, "atol": 0}


def same(fn, *args):
    check(lambda *t: fn(*t), *args, **EXACT)


@pytest.fixture(params=["strict", "fused"])
def mode(request):
    if request.param == "strict":
        yield
    else:
        with torch_tpu.eager_mode("fused"):
            yield


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_int_bins(mode, dtype):
    for d in (1, 2, 3):
        x = make((40, d), dtype, seed=d)
        same(lambda t: tuple(torch.histogramdd(t, 4)), x)
        same(lambda t: tuple(torch.histogramdd(t, [3, 5, 2][:d])), x)
        same(lambda t: tuple(torch.histogramdd(t, [3, 5, 2][:d], density=True)), x)
        w = make((40,), dtype, low=0, high=2, seed=9)
        same(lambda t, ww: tuple(torch.histogramdd(t, [2, 3, 4][:d], weight=ww)), x, w)
        same(lambda t, ww: tuple(torch.histogramdd(t, [2, 3, 4][:d], weight=ww, density=True)), x, w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_range_and_edges(mode, dtype):
    # points outside the range, points exactly on edges (the last bin closed on the right)
    x = torch.tensor([[0.0, 0.0], [1.0, 2.0], [0.5, 1.0], [0.25, 0.5], [-1.0, 0.5], [1.5, 1.0], [1.0, 3.0],
                      [0.75, 1.5], [1.0, 1.0]], dtype=dtype)
    rng = [0.0, 1.0, 0.0, 2.0]
    same(lambda t: tuple(torch.histogramdd(t, [4, 4], range=rng)), x)
    same(lambda t: tuple(torch.histogramdd(t, [2, 4], range=rng, density=True)), x)
    same(lambda t: tuple(torch.histogramdd(t, 3)), x)
    x3 = make((3, 5, 3), dtype, seed=4)
    w3 = make((3, 5), dtype, low=0, high=1, seed=5)
    same(lambda t, ww: tuple(torch.histogramdd(t, [2, 3, 2], range=[-1, 1, -2, 2, 0, 3], weight=ww)), x3, w3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bin_tensors(mode, dtype):
    x = make((30, 2), dtype, seed=7)
    b0 = torch.tensor([-3.0, -1.0, 0.0, 0.1, 2.0], dtype=dtype)
    b1 = torch.tensor([-1.0, 0.5, 1.0], dtype=dtype)
    same(lambda t, e0, e1: tuple(torch.histogramdd(t, [e0, e1])), x, b0, b1)
    same(lambda t, e0, e1: tuple(torch.histogramdd(t, [e0, e1], density=True)), x, b0, b1)
    w = make((30,), dtype, low=0, high=3, seed=8)
    same(lambda t, e0, e1, ww: tuple(torch.histogramdd(t, [e0, e1], weight=ww, density=True)), x, b0, b1, w)
    # points on the edges; a one-edge tensor gives no bins in its dimension
    xe = torch.tensor([[-1.0, 0.5], [2.0, 1.0], [0.0, -1.0], [0.1, 0.5]], dtype=dtype)
    same(lambda t, e0, e1: tuple(torch.histogramdd(t, [e0, e1])), xe, b0, b1)
    same(lambda t, e0, e1: tuple(torch.histogramdd(t, [e0, e1])), xe, b0, b1[:1])
    x1 = make((12, 1), dtype, seed=3)
    same(lambda t, e0: tuple(torch.histogramdd(t, [e0])), x1, b0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_degenerate_and_empty(mode, dtype):
    x = torch.tensor([[2.0, 1.0], [2.0, 3.0], [2.0, 2.0]], dtype=dtype)
    same(lambda t: tuple(torch.histogramdd(t, [3, 2])), x)  # dimension 0: min == max, widened by 0.5
    same(lambda t: tuple(torch.histogramdd(t, [3, 2], range=[1.0, 1.0, 0.0, 4.0])), x)
    same(lambda t: tuple(torch.histogramdd(t, [3, 2], density=True)), x)
    e = torch.empty(0, 2, dtype=dtype)
    same(lambda t: tuple(torch.histogramdd(t, [2, 3])), e)
    same(lambda t: tuple(torch.histogramdd(t, [2, 3], range=[0.0, 1.0, -1.0, 1.0])), e)
    same(lambda t: tuple(torch.histogramdd(t, [2, 3], density=True)), e)
    same(lambda t, e0: tuple(torch.histogramdd(t, [e0, e0])), e, torch.tensor([0.0, 1.0], dtype=dtype))


def test_ops_direct():
    x = make((20, 2), seed=11)
    check(lambda t: tuple(torch.ops.aten._histogramdd_bin_edges(t, [3, 4])), x, **EXACT)
    check(lambda t: torch.ops.aten._histogramdd_from_bin_cts(t, [3, 4], range=[-1.0, 1.0, -2.0, 2.0]), x, **EXACT)
    xd = x.to(dev)
    out = [torch.empty(0, device=dev), torch.empty(0, device=dev)]
    torch.ops.aten._histogramdd_bin_edges.out(xd, [3, 4], out=out)
    for a, b in zip(out, torch.ops.aten._histogramdd_bin_edges(x, [3, 4])):
        torch.testing.assert_close(a.cpu(), b, **EXACT)
    h = torch.empty(0, device=dev)
    torch.ops.aten._histogramdd_from_bin_cts.out(xd, [3, 4], out=h)
    torch.testing.assert_close(h.cpu(), torch.ops.aten._histogramdd_from_bin_cts(x, [3, 4]), **EXACT)


def errors_match(fn, *args):
    with pytest.raises(RuntimeError):
        fn(*args)
    with pytest.raises(RuntimeError):
        r = fn(*[a.to(dev) for a in args])
        r.hist.cpu()  # runtime checks raise at the next sync


def test_errors():
    x = make((5, 2))
    errors_match(lambda t: torch.histogramdd(t, [3]), x)
    errors_match(lambda t: torch.histogramdd(t, [3, 0]), x)
    errors_match(lambda t: torch.histogramdd(t, [3, 2], range=[0.0, 1.0]), x)
    errors_match(lambda t, w: torch.histogramdd(t, [3, 2], weight=w), x, make((4,)))
    errors_match(lambda t, w: torch.histogramdd(t, [3, 2], weight=w), x, make((5,), torch.float64))
    errors_match(lambda t, b: torch.histogramdd(t, [b, b]), x, torch.tensor([0.0, 1.0], dtype=torch.float64))
    errors_match(lambda t: torch.histogramdd(t, [3, 2]).hist, torch.tensor([[1.0, float("inf")]]))
    errors_match(lambda t: torch.histogramdd(t, [3, 2], range=[0.0, 1.0, 1.0, 0.0]), x)
