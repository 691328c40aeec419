"""torch.histogramdd (aten::_histogramdd_bin_edges / _from_bin_cts /
_from_bin_tensors) on tpu against CPU, bit for bit: counts, weighted sums,
densities and bin edges (CPU's linspace rounds each edge once, as an FMA),
in Strict and Fused Eager, on random inputs; errors with CPU's type and
message.

Weights are multiples of 1/4: CPU sums each bin in per-thread partial
histograms (their split depends on the host's thread count), so only sums
that are exact in any order can be compared bit for bit."""

import random
import re

import pytest
import torch
import torch_tpu

from ops_util import check, dev, to_cpu
from suite import params

EXACT = {"rtol": 0, "atol": 0}
DTYPES = params([torch.float32, torch.float64], [torch.float32])


def same(fn, *args):
    check(fn, *args, **EXACT)


@pytest.fixture(params=["strict", "fused"])
def mode(request):
    with torch_tpu.eager_mode(request.param):
        yield request.param


def points(rng, dtype, lead, d, scale, shift):
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    return (torch.randn(*lead, d, generator=g, dtype=torch.float64) * scale + shift).to(dtype)


def dyadic_weight(rng, dtype, lead):
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    return (torch.randint(0, 12, lead, generator=g) / 4).to(dtype)


def on_edges(rng, dtype, d, bins, rng_arg, n):
    """n points whose coordinates are CPU's own edges (some nudged by one ulp)."""
    edges = torch.histogramdd(torch.zeros(1, d, dtype=dtype), bins, range=rng_arg).bin_edges
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    x = torch.stack([e[torch.randint(0, len(e), (n,), generator=g)] for e in edges], 1)
    nudge = torch.randint(-1, 2, x.shape, generator=g)
    return torch.where(nudge == 0, x, torch.nextafter(x, nudge.to(dtype) * float("inf")))


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_int_bins(mode, dtype):
    """Random shapes (including empty), 1 to 3 dimensions, bins as an int or a
    list, with or without range / weight / density."""
    rng = random.Random(1000 + DTYPES.index(dtype))
    for _ in range(14):
        d = rng.randint(1, 3)
        lead = [rng.randint(0, 6) if rng.random() < 0.15 else rng.randint(1, 40)]
        if rng.random() < 0.3:
            lead.append(rng.randint(1, 4))
        scale, shift = rng.choice([1.0, 1e-6, 1e5, 3.7]), rng.uniform(-4, 4)
        x = points(rng, dtype, lead, d, scale, shift)
        bins = rng.randint(1, 9) if rng.random() < 0.3 else [rng.choice([1, 2, 5, 7, 33]) for _ in range(d)]
        kw = {"density": rng.random() < 0.4}
        if rng.random() < 0.5:
            kw["range"] = [v for _ in range(d) for lo in [rng.uniform(-2, 1) * scale + shift]
                           for v in (lo, lo + rng.choice([0.0, 0.5, 3.0]) * scale)]
        if rng.random() < 0.5:
            w = dyadic_weight(rng, dtype, lead)
            same(lambda t, ww: tuple(torch.histogramdd(t, bins, weight=ww, **kw)), x, w)
        else:
            same(lambda t: tuple(torch.histogramdd(t, bins, **kw)), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_points_on_edges(mode, dtype):
    """Points exactly on CPU's edges or one ulp beside them, many bins: the
    linear guess and its neighbour search must pick CPU's bins."""
    rng = random.Random(2000 + DTYPES.index(dtype))
    for _ in range(6):
        d = rng.randint(1, 3)
        bins = [rng.choice([3, 10, 97, 1000, 2049]) if k == 0 else rng.randint(1, 9) for k in range(d)]
        scale = rng.choice([1.0, 1e-7, 1e6, 0.3])
        r = [v for _ in range(d) for lo in [rng.uniform(-3, 3) * scale] for v in (lo, lo + rng.uniform(0.01, 5) * scale)]
        x = on_edges(rng, dtype, d, bins, r, rng.randint(1, 60))
        same(lambda t: tuple(torch.histogramdd(t, bins, range=r)), x)
        same(lambda t: tuple(torch.histogramdd(t, bins)), x)  # edges from the data's own range


@pytest.mark.parametrize("dtype", DTYPES)
def test_histogram_shares_the_edges(mode, dtype):
    """torch.histogram (1-D) uses the same edges and bin search: exact too."""
    rng = random.Random(4000 + DTYPES.index(dtype))
    for _ in range(6):
        bins = rng.choice([1, 4, 19, 250])
        r = (-1.7, rng.uniform(-1, 9))
        x = on_edges(rng, dtype, 1, [bins], r, 40).flatten()
        same(lambda t: tuple(torch.histogram(t, bins, range=r)), x)
        same(lambda t: tuple(torch.histogram(t, bins, density=True)), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_bin_tensors(mode, dtype):
    """Bins given as edge tensors (binary search): random sorted edges, some of
    them repeated or equal to data points, weights, density."""
    rng = random.Random(3000 + DTYPES.index(dtype))
    for _ in range(10):
        d = rng.randint(1, 3)
        n = rng.randint(0, 50)
        x = points(rng, dtype, [n], d, 2.0, 0.0)
        if n:
            x[: n // 3] = x[: n // 3].round()  # some points on integer edges
        edges = []
        for _ in range(d):
            g = torch.Generator().manual_seed(rng.randrange(1 << 30))
            e = torch.cat([torch.randn(rng.randint(2, 8), generator=g, dtype=torch.float64) * 2,
                           torch.arange(-2.0, 3.0, dtype=torch.float64)[: rng.randint(0, 5)]]).to(dtype)
            edges.append(torch.sort(e).values)
        kw = {"density": rng.random() < 0.4}
        if rng.random() < 0.5:
            w = dyadic_weight(rng, dtype, [n])
            same(lambda t, ww, *es: tuple(torch.histogramdd(t, list(es), weight=ww, **kw)), x, w, *edges)
        else:
            same(lambda t, *es: tuple(torch.histogramdd(t, list(es), **kw)), x, *edges)


@pytest.mark.parametrize("dtype", DTYPES)
def test_degenerate_and_empty(mode, dtype):
    x = torch.tensor([[2.0, 1.0], [2.0, 3.0], [2.0, 2.0]], dtype=dtype)
    same(lambda t: tuple(torch.histogramdd(t, [3, 2])), x)  # dimension 0: min == max, widened by 0.5
    same(lambda t: tuple(torch.histogramdd(t, [3, 2], range=[1.0, 1.0, 0.0, 4.0])), x)
    same(lambda t: tuple(torch.histogramdd(t, [3, 2], density=True)), x)
    e = torch.empty(0, 2, dtype=dtype)
    same(lambda t: tuple(torch.histogramdd(t, [2, 3])), e)  # CPU: edges over [0, 1]
    same(lambda t: tuple(torch.histogramdd(t, [2, 3], range=[0.0, 1.0, -1.0, 1.0])), e)
    same(lambda t: tuple(torch.histogramdd(t, [2, 3], density=True)), e)  # 0 / 0: NaN as on CPU
    same(lambda t, e0: tuple(torch.histogramdd(t, [e0, e0])), e, torch.tensor([0.0, 1.0], dtype=dtype))
    same(lambda t: tuple(torch.histogramdd(t, [4, 1])), torch.empty(3, 0, 2, dtype=dtype))


def test_ops_direct(mode):
    """The aten ops themselves, their .out forms, and _histogramdd_bin_edges'
    bins of 0 and -1 (CPU gives one edge and none)."""
    x = torch.tensor([[0.5, -1.0], [2.0, 3.0], [1.25, 0.0]])
    same(lambda t: tuple(torch.ops.aten._histogramdd_bin_edges(t, [3, 4])), x)
    same(lambda t: tuple(torch.ops.aten._histogramdd_bin_edges(t, [0, -1], range=[0.0, 1.0, 2.0, 5.0])), x)
    same(lambda t: tuple(torch.ops.aten._histogramdd_bin_edges(t, [0, 2])), x)
    same(lambda t: torch.ops.aten._histogramdd_from_bin_cts(t, [3, 4], range=[-1.0, 1.0, -2.0, 2.0]), x)
    xd = x.to(dev)
    out = [torch.empty(0, device=dev), torch.empty(0, device=dev)]
    torch.ops.aten._histogramdd_bin_edges.out(xd, [3, 4], out=out)
    for a, b in zip(out, torch.ops.aten._histogramdd_bin_edges(x, [3, 4])):
        torch.testing.assert_close(a.cpu(), b, **EXACT)
    h = torch.empty(0, device=dev)
    torch.ops.aten._histogramdd_from_bin_cts.out(xd, [3, 4], out=h)
    torch.testing.assert_close(h.cpu(), torch.ops.aten._histogramdd_from_bin_cts(x, [3, 4]), **EXACT)
    b0, b1 = torch.tensor([0.0, 1.0, 2.5]), torch.tensor([-1.0, 0.0, 3.0])
    h = torch.empty(0, device=dev)
    torch.ops.aten._histogramdd_from_bin_tensors.out(xd, [b0.to(dev), b1.to(dev)], out=h)
    torch.testing.assert_close(h.cpu(), torch.ops.aten._histogramdd_from_bin_tensors(x, [b0, b1]), **EXACT)


def first_line(e):
    return str(e).splitlines()[0]


def errors_match(fn, args, device_side=None):
    """fn raises on CPU and on tpu with the same type and message. Errors the
    device finds (the range's values) raise at the sync, inside the block,
    so none is left for a later test; their tpu message lacks CPU's values:
    both must match the `device_side` pattern instead."""
    with pytest.raises(Exception) as want:
        fn(*args)
    with pytest.raises(Exception) as got:
        to_cpu(fn(*[a.to(dev) if isinstance(a, torch.Tensor) else a for a in args]))
    assert type(got.value) is type(want.value), (got.value, want.value)
    if device_side is None:
        assert first_line(got.value) == first_line(want.value)
    else:
        assert re.search(device_side, first_line(want.value)), want.value
        assert re.search(device_side, first_line(got.value)), got.value


def test_errors(mode):
    x = torch.tensor([[0.5, -1.0], [2.0, 3.0], [1.25, 0.0], [0.0, 0.0], [1.0, 1.0]])
    ones = torch.ones(5)
    cases = [
        (lambda t: torch.histogramdd(t, [3]), (x,)),
        (lambda t: torch.histogramdd(t, [3, 0]), (x,)),
        (lambda t: torch.histogramdd(t, [3, -1]), (x,)),
        (lambda t: torch.histogramdd(t, [3, -2]), (x,)),
        (lambda t: torch.histogramdd(t, [3, 2], range=[0.0, 1.0]), (x,)),
        (lambda t, w: torch.histogramdd(t, [3, 2], weight=w), (x, torch.ones(4))),
        (lambda t, w: torch.histogramdd(t, [3, 2], weight=w), (x, torch.ones(5, 1))),
        (lambda t, w: torch.histogramdd(t, [3, 2], weight=w), (x, ones.double())),
        (lambda t, b: torch.histogramdd(t, [b]), (x, torch.tensor([0.0, 1.0]))),
        (lambda t, b: torch.histogramdd(t, [b, b]), (x, torch.tensor([0.0, 1.0], dtype=torch.float64))),
        (lambda t, b: torch.histogramdd(t, [b, b]), (x, torch.ones(2, 2))),
        (lambda t, b: torch.histogramdd(t, [b, b]), (x, torch.ones(0))),
        (lambda t, b: torch.histogramdd(t, [b, b]), (x, torch.ones(1))),
        (lambda t: torch.histogramdd(t, [3]), (torch.ones(4),)),
        (lambda t: torch.histogramdd(t, [3, 3]), (x.int(),)),
    ]
    for fn, args in cases:
        errors_match(fn, args)
    # the range's checks run on the device: non-finite data or range, min > max, per dimension
    inf, nan = float("inf"), float("nan")
    device_cases = [
        (lambda t: torch.histogramdd(t, [3, 2]), (torch.tensor([[1.0, inf], [0.0, 0.0]]),), 1),
        (lambda t: torch.histogramdd(t, [3, 2]), (torch.tensor([[nan, 1.0]]),), 0),
        (lambda t: torch.histogramdd(t, [3, 2]), (torch.tensor([[-inf, 1.0]], dtype=torch.float64),), 0),
        (lambda t: torch.histogramdd(t, [3, 2], range=[0.0, 1.0, 0.0, inf]), (x,), 1),
        (lambda t: torch.histogramdd(t, [3, 2], range=[nan, 1.0, 0.0, 1.0]), (x,), 0),
        (lambda t: torch.histogramdd(t, 2, range=[0.0, 1.0, 0.0, 1.0, -inf, 1.0]), (torch.ones(2, 3),), 2),
    ]
    for fn, args, k in device_cases:
        errors_match(fn, args, rf"torch\.histogramdd: dimension {k}'s range .*is not finite")
    for r, k in (([1.0, 0.0, 0.0, 1.0], 0), ([0.0, 1.0, 1.0, 0.0], 1)):
        errors_match(lambda t: torch.histogramdd(t, [3, 2], range=r), (x,),
                     rf"torch\.histogramdd: min should not exceed max.* for dimension {k}")
    # the device is usable afterwards: no error leaks into the next sync
    same(lambda t: tuple(torch.histogramdd(t, [2, 2])), x)
