"""index_more / scan / random_more families (csrc/core/lower/index/index_more*.c, scan*.c,
random_more*.c) against PyTorch CPU; random ops are checked statistically."""
import math

import pytest
import torch

import torch_tpu

from ops_util import check, check_grad, dev, make
from suite import sweep


# ---- index_more ------------------------------------------------------------------------

@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(reduce):
    idx = torch.tensor([0, 4, 0, 2])
    for dtype, include_self in [(torch.float32, True), (torch.float32, False), (torch.int64, False)]:
        check(lambda t, s: t.index_reduce(0, idx.to(t.device), s, reduce, include_self=include_self),
              make((5, 3), dtype), make((4, 3), dtype, seed=1))
    check(lambda t, s: t.index_reduce_(1, torch.tensor([2, 2, 0], device=t.device), s, reduce),
          make((3, 3), torch.bfloat16), make((3, 3), torch.bfloat16, seed=1))


def test_index_reduce_nan_and_grad():
    x = make((4, 3))
    src = make((3, 3), seed=2)
    src[1, 1] = float("nan")
    idx = torch.tensor([1, 1, 3])
    check(lambda t, s: t.index_reduce(0, idx.to(t.device), s, "amax"), x, src)
    check_grad(lambda t, s: t.index_reduce(0, idx.to(t.device), s, "prod"), x, make((3, 3), seed=3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_index_copy_take_put(dtype):
    x = make((4, 5), dtype)
    check(lambda t, s: t.index_copy(1, torch.tensor([4, 0], device=t.device), s), x, make((4, 2), dtype, seed=1))
    idx = torch.tensor([[0, -1], [19, 3]])
    check(lambda t: torch.take(t, idx.to(t.device)), x)
    check(lambda t, s: t.put(idx.to(t.device), s), x, make((2, 2), dtype, seed=2))
    check(lambda t, s: t.put_(torch.tensor([1, 1, 7], device=t.device), s, accumulate=True), x,
          make((3,), dtype, seed=3))


def test_take_put_grad():
    idx = torch.tensor([[0, 5], [11, 3]])
    check_grad(lambda t: torch.take(t, idx.to(t.device)), make((3, 4)))
    check_grad(lambda t, s: t.put(idx.to(t.device), s, accumulate=True), make((3, 4)), make((2, 2), seed=1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_masked_scatter_select(dtype):
    x = make((3, 4), dtype)
    m = make((4,), torch.bool, seed=5)
    src = make((20,), dtype, seed=1)
    check(lambda t, mm, s: t.masked_scatter(mm, s), x, m, src)
    check(lambda t, mm, s: t.masked_scatter_(mm, s), x, make((3, 4), torch.bool, seed=6), src)
    check(lambda t, mm: t.masked_select(mm), x, m)
    check_grad(lambda t, s: t.masked_scatter(m.to(t.device), s), make((3, 4)), make((12,)))


def test_embedding_renorm():
    w = make((10, 4)) * 3
    idx = torch.tensor([1, 3, 3, 7])
    for p in [2.0, 1.0, 3.0, math.inf]:
        check(lambda t: torch.embedding_renorm_(t, idx.to(t.device), 1.5, p), w)
    check(lambda t: torch.nn.functional.embedding(idx.to(t.device), t, max_norm=1.0), w)


INDEX_ERRORS = {
    "index_reduce": lambda x, i: x.index_reduce(0, i, torch.ones(2, 3, device=x.device), "prod"),
    "index_copy": lambda x, i: x.index_copy(0, i, torch.ones(2, 3, device=x.device)),
    "take": lambda x, i: torch.take(x, i),
    "put": lambda x, i: x.put(i, torch.ones(2, device=x.device)),
}


@pytest.mark.parametrize("name", sorted(INDEX_ERRORS))
def test_out_of_range_raises_like_cpu(name):
    fn = INDEX_ERRORS[name]
    x, bad = torch.randn(5, 3), torch.tensor([0, 70])
    with pytest.raises(IndexError):
        fn(x, bad)
    with pytest.raises(IndexError, match="out of (range|bounds)"):
        fn(x.to(dev), bad.to(dev)).cpu()


def test_masked_scatter_short_source_raises():
    with pytest.raises(RuntimeError, match="Number of elements of source"):
        torch.zeros(4, device=dev).masked_scatter(torch.ones(4, dtype=torch.bool, device=dev),
                                                  torch.ones(3, device=dev)).cpu()


# ---- index_more_misc ---------------------------------------------------------------------

def test_unfold_backward():
    check_grad(lambda t: t.unfold(0, 3, 2), make((7, 5)))
    check_grad(lambda t: t.unfold(1, 2, 3), make((2, 8, 3)))
    check_grad(lambda t: t.unfold(0, 1, 1), make(()))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, math.inf])
def test_renorm(p):
    x = make((4, 5, 3))
    check(lambda t: t.renorm(p, 1, 1.5), x, rtol=1e-5, atol=1e-6)
    check(lambda t: t.renorm_(p, 0, 2.0), x, rtol=1e-5, atol=1e-6)
    check(lambda t: t.renorm(p, 2, 1.0), x.bfloat16())


def test_tri_indices():
    for args in [(4, 5, -2), (5, 3, 1), (0, 3, 0)]:
        for fn in (torch.tril_indices, torch.triu_indices):
            torch.testing.assert_close(fn(*args, device=dev).cpu(), fn(*args))
    torch.testing.assert_close(torch.tril_indices(3, 3, 7, dtype=torch.int32, device=dev).cpu(),
                               torch.tril_indices(3, 3, 7, dtype=torch.int32))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8])
def test_logspace_narrow_copy(dtype):
    for start, end, steps, base in [(0, 2, 7, 10.0), (-1.5, 3, 5, 2.0), (2, 2, 1, 3.0)]:
        if start < 0 and dtype == torch.uint8:
            continue
        torch.testing.assert_close(torch.logspace(start, end, steps, base, dtype=dtype, device=dev).cpu(),
                                   torch.logspace(start, end, steps, base, dtype=dtype))
    check(lambda t: torch.narrow_copy(t, 1, -3, 2), make((3, 5), dtype, low=0))


# ---- random_more (statistical: fixed seed, tolerances ~5 standard errors) ----------------------

N = 20000


def _draw(fn):
    torch.manual_seed(1234)
    return fn().cpu().double()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cauchy_log_normal(dtype):
    c = _draw(lambda: torch.empty(N, dtype=dtype, device=dev).cauchy_(1.0, 2.0))
    q = torch.quantile(c.float(), torch.tensor([0.25, 0.5, 0.75]))
    assert abs(q[1] - 1.0) < 0.1 and abs((q[2] - q[0]) / 2 - 2.0) < 0.15
    ln = _draw(lambda: torch.empty(N, dtype=dtype, device=dev).log_normal_(0.5, 0.3)).log()
    assert abs(ln.mean() - 0.5) < 0.02 and abs(ln.std() - 0.3) < 0.02
    assert (ln.exp() > 0).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_geometric(dtype):
    g = _draw(lambda: torch.empty(N, dtype=dtype, device=dev).geometric_(0.3))
    assert g.min() >= 1 and (g == g.round()).all()
    assert abs(g.mean() - 1 / 0.3) < 0.06
    assert abs((g == 1).double().mean() - 0.3) < 0.015


def test_normal_tensor_overloads():
    mean, std = torch.full((4, N // 4), 2.0), torch.full((N // 4,), 0.5)
    for fn, m, s in [(lambda: torch.normal(mean.to(dev), std.to(dev)), 2.0, 0.5),
                     (lambda: torch.normal(mean.to(dev), 3.0), 2.0, 3.0),
                     (lambda: torch.normal(-1.0, std.to(dev)), -1.0, 0.5),
                     (lambda: torch.normal(mean.to(dev).bfloat16(), std.to(dev).bfloat16()), 2.0, 0.5)]:
        z = _draw(fn)
        assert z.numel() >= N // 4
        assert abs(z.mean() - m) < 5 * s / math.sqrt(z.numel()) and abs(z.std() / s - 1) < 0.03
    out = torch.empty(4, N // 4, device=dev)
    torch.normal(mean.to(dev), std.to(dev), out=out)
    assert abs(out.cpu().mean() - 2.0) < 0.02
    with pytest.raises(RuntimeError, match="std >= 0"):
        torch.normal(mean.to(dev), -std.to(dev)).cpu()


def test_multinomial():
    p = torch.tensor([0.1, 0.0, 0.6, 0.3])
    r = _draw(lambda: torch.multinomial(p.to(dev), N, replacement=True)).long()
    freq = torch.bincount(r, minlength=4).double() / N
    torch.testing.assert_close(freq, p.double(), atol=0.012, rtol=0)
    w = _draw(lambda: torch.multinomial((p * 7).repeat(N // 4, 1).to(dev), 3)).long()
    assert w.shape == (N // 4, 3)
    assert (w != 1).all() and all(len(set(row.tolist())) == 3 for row in w[:200])
    first = torch.bincount(w[:, 0], minlength=4).double() / (N // 4)
    torch.testing.assert_close(first, p.double(), atol=0.025, rtol=0)
    # P(second = k) = sum_j p_j p_k / (1 - p_j)
    second = torch.bincount(w[:, 1], minlength=4).double() / (N // 4)
    want = torch.tensor([sum(p[j] * p[k] / (1 - p[j]) for j in range(4) if j != k) for k in range(4)]).double()
    torch.testing.assert_close(second, want, atol=0.025, rtol=0)
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        torch.multinomial(p.to(dev), 4).cpu()


# ---- index_more_search ------------------------------------------------------------------------

NAN = float("nan")


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_searchsorted(right):
    b = torch.tensor([1.0, 3.0, 3.0, 5.0, NAN])
    x = torch.tensor([[0.0, 1.0, 3.0, 4.0], [5.0, 6.0, NAN, 3.0]])
    check(lambda bb, xx: torch.bucketize(xx, bb, right=right), b[:4], x)
    check(lambda bb, xx: torch.bucketize(xx, bb, right=right, out_int32=True), b[:4].long(), x.nan_to_num().int())
    check(lambda bb, xx: torch.searchsorted(bb, xx, right=right), b, x)
    seq = torch.sort(make((3, 6)), dim=-1)[0]
    check(lambda s, v: torch.searchsorted(s, v, side="right" if right else "left"), seq, make((3, 4), seed=1))
    u = make((7,), seed=2)
    check(lambda s, v, so: torch.searchsorted(s, v, sorter=so), u, make((5,), seed=3), torch.argsort(u))
    check(lambda s: torch.searchsorted(s, 3.0, right=right), b[:4])
    check(lambda s: torch.bucketize(3, s, right=right), b[:4])


def test_isin():
    e, t = make((4, 5), torch.int64, low=0, high=10), torch.tensor([1, 3, 3, 9])
    for invert in (False, True):
        check(lambda a, b: torch.isin(a, b, invert=invert), e, t)
        check(lambda a, b: torch.isin(a, b, invert=invert), e.float(), t)
    check(lambda a: torch.isin(a, 3), e)
    check(lambda b: torch.isin(3, b), t)
    check(lambda a, b: torch.isin(a, b), torch.tensor([1.0, NAN, 2.0]), torch.tensor([NAN, 2.0, 0.5]))
    check(lambda a, b: torch.isin(a, b), e, t[:0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_histc(dtype):
    h = make((1000,), dtype, low=-4, high=4)
    for args in [(10, 0, 0), (7, -1, 1), (5, 0.5, 0.5), (3, 2, 2)]:
        check(lambda t: torch.histc(t, *args), h)
    check(lambda t: torch.histc(t, 4), torch.ones(5, dtype=dtype))
    check(lambda t: torch.histc(t, 4, 0, 3), torch.tensor([0.0, 1.5, 3.0, 3.5, NAN], dtype=dtype))
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(h.to(dev), 4, 3, 1).cpu()


# ---- scan --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_cummax_cummin(dtype):
    x = make((4, 6), dtype, low=0, high=3)  # many ties: CPU keeps the last index
    for fn in (torch.cummax, torch.cummin):
        for dim in (0, 1):
            check(lambda t: tuple(fn(t, dim)), x)
    if dtype == torch.float32:
        y = torch.tensor([1.0, 3.0, 3.0, 2.0, NAN, 5.0, NAN, 1.0])
        check(lambda t: tuple(torch.cummax(t, 0)), y)
        check(lambda t: tuple(torch.cummin(t, 0)), y)
        check_grad(lambda t: torch.cummax(t, 1).values, make((3, 5)))


def test_logcumsumexp():
    x = make((4, 7), low=-20, high=20)
    x[1, 3], x[2, 2], x[3, 1] = math.inf, -math.inf, NAN
    for dim in (0, 1):
        check(lambda t: torch.logcumsumexp(t, dim), x)
    check(lambda t: torch.logcumsumexp(t, 0), torch.full((5,), -math.inf))
    check_grad(lambda t: torch.logcumsumexp(t, 1), make((3, 5)))


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce(reduce):
    data = torch.tensor([1.0, 2.0, NAN, 4.0, 5.0, 0.0, 3.0, 3.0])
    lengths = torch.tensor([2, 0, 3, 3])
    for initial in (None, 2.0):
        check(lambda d, l: torch.segment_reduce(d, reduce, lengths=l, initial=initial), data, lengths)
    check(lambda d, o: torch.segment_reduce(d, reduce, offsets=o), data, torch.tensor([0, 2, 2, 5, 8]))
    x = make((4, 6, 3), seed=4)
    x[0, 2, 1] = 0.0
    x[3, 4, 0] = x[3, 5, 0]  # a tie for max / min
    l2 = torch.tensor([[1, 2, 3], [0, 6, 0], [3, 3, 0], [2, 2, 2]])
    check_grad(lambda d: torch.segment_reduce(d, reduce, lengths=l2.to(d.device), axis=1), x, rtol=1e-5, atol=1e-5)


def test_histogram():
    x, w = make((100,)), make((100,), low=0, high=1, seed=1)
    check(lambda t: tuple(torch.histogram(t, 4)), torch.ones(3))
    check(lambda t, ww: tuple(torch.histogram(t, 7, weight=ww, density=True)), x, w)
    check(lambda t, b, ww: tuple(torch.histogram(t, b, weight=ww)), x, torch.tensor([-1.0, 0.0, 0.5, 2.0]), w)
    check(lambda t: tuple(torch.histogram(t, 10)), make((5, 3), seed=2))
    check(lambda t: tuple(torch.histogram(t, 5, range=(-0.5, 0.75))), x)
    check(lambda t: tuple(torch.histogram(t, 3, range=(2.0, 2.0))), x)


@pytest.mark.parametrize("mode", ["strict", "fused"])
def test_histogram_edges_of_empty_and_non_finite_data(mode):
    """An empty input's bins span [0, 1] as on CPU (they spanned [-0.5, 0.5]);
    data or a range with inf / NaN raises CPU's error instead of NaN edges."""
    ctx = torch_tpu.eager_mode(mode)
    with ctx:
        for dtype in (torch.float32, torch.float64):
            for bins in (1, 2, 5):
                check(lambda t: tuple(torch.histogram(t, bins)), torch.empty(0, dtype=dtype))
                check(lambda t: tuple(torch.histogram(t, bins, range=(1.0, 3.0))), torch.empty(0, dtype=dtype))
        bad = [(torch.tensor([1.0, float("inf")]), {}), (torch.tensor([float("nan"), 1.0]), {}),
               (torch.tensor([-float("inf"), 1.0]), {}), (torch.tensor([1.0, 2.0]), {"range": (0.0, float("inf"))})]
        for x, kw in bad:
            with pytest.raises(RuntimeError, match="is not finite"):
                torch.histogram(x, 3, **kw)
            with pytest.raises(RuntimeError, match="is not finite"):
                torch.histogram(x.to(dev), 3, **kw)[1].cpu()
        # the device is usable afterwards, and finite data still counts as on CPU
        check(lambda t: tuple(torch.histogram(t, 4)), torch.tensor([0.0, 1.0, 1.0, 3.0]))


@pytest.mark.parametrize("seed", range(sweep(2, 6)))
def test_histc_points_on_bin_edges_randomized(seed):
    """histc divides each point's offset by the range's width, a value whose
    elements are all equal: XLA would multiply by its reciprocal instead and
    move points near a bin edge into the neighbouring bin (a third of these
    cases did). The StableHLO builder keeps every such division exact."""
    g = torch.Generator().manual_seed(seed)
    for trial in range(12):
        dtype = (torch.float32, torch.float64, torch.bfloat16, torch.float16)[trial % 4]
        bins = int(torch.randint(1, 50, (1,), generator=g))
        lo = float(torch.randn(1, generator=g) * 3)
        hi = lo + float(torch.rand(1, generator=g) * 10 + 0.01)
        edges = torch.linspace(lo, hi, bins + 1, dtype=torch.float64)
        x = torch.cat([edges, torch.rand(100, generator=g, dtype=torch.float64) * (hi - lo) + lo]).to(dtype)
        want = torch.histc(x, bins, lo, hi)
        for mode in ("strict", "fused"):
            with torch_tpu.eager_mode(mode):
                got = torch.histc(x.to(dev), bins, lo, hi).cpu()
            assert torch.equal(got, want), (seed, trial, mode, dtype, bins, lo, hi)


def test_scatter_inplace_complex():
    """In-place scatter_ of complex tensors (src, value, and the add / multiply reductions), as the
    functional scatter; index positions repeat for the reductions."""
    def cx(shape, seed):
        return torch.complex(make(shape, seed=seed), make(shape, seed=seed + 1))
    x, src = cx((3, 4), 0), cx((2, 4), 2)
    idx = torch.tensor([[0, 1, 2, 0], [2, 0, 1, 1]])
    check(lambda t, s: t.scatter_(0, idx.to(t.device), s), x, src)
    check(lambda t: t.scatter_(1, idx.to(t.device)[:, :2], 1.5 - 2j), x)
    for red in ("add", "multiply"):
        check(lambda t, s, red=red: t.scatter_(0, idx.to(t.device), s, reduce=red), x, src)
