"""igamma / igammac (torch.special.gammainc / gammaincc; csrc/core/lower/special/
special_igamma.c) against PyTorch CPU over all of CPU's regimes: the boundary
values, P's series, Q's series, Q's continued fraction, Temme's expansion for
large a near x and the edges between them; out= / in-place forms, the half
types, broadcasting and the gradient w.r.t. x."""
import pytest
import torch

from ops_util import check, check_grad, dev, make

nan, inf = float("nan"), float("inf")
# XLA's CPU runtime flushes subnormal results to zero: atol covers them.
# f32: the prefactor exp(a log x - x - lgamma a) inherits the rounding of its
# large terms, on both sides; those values are tiny, so atol covers them too.
TOL = {torch.float64: dict(rtol=1e-10, atol=1e-300), torch.float32: dict(rtol=2e-5, atol=1e-6)}
FNS = [torch.igamma, torch.igammac]


def grid(seed=0):
    """(a, x) over the regimes: log-uniform a, x in [1e-4, 1e4]; x near a
    for large a (the asymptotic regime and its borders up to a = 1e6)."""
    g = torch.Generator().manual_seed(seed)
    u = lambda n, lo, hi: torch.rand(n, generator=g, dtype=torch.float64) * (hi - lo) + lo
    a1, x1 = 10 ** u(600, -4, 4), 10 ** u(600, -4, 4)
    a2 = 10 ** u(300, 1, 6)
    x2 = a2 * (1 + u(300, -6, 6) / a2.sqrt())      # around Temme's 4.5 / sqrt(a) border
    a3 = u(200, 15, 210)
    x3 = a3 * (1 + u(200, -0.4, 0.4))              # around |x - a| / a = 0.3, a in (20, 200)
    a4, x4 = u(200, 0, 2), u(200, 0, 1.5)          # small a, x <= 1.1: Q's series vs P's
    return torch.cat([a1, a2, a3, a4]), torch.cat([x1, x2, x3, x4])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
def test_regimes(fn, dtype):
    a, x = grid()
    check(fn, a.to(dtype), x.to(dtype), **TOL[dtype])


EDGE = [0.0, -0.0, -1.0, -inf, inf, nan, 1e-30, 1e-8, 0.3, 0.5, 1.0, 1.1, 2.0, 20.0, 200.0,
        1e4, 1e10, 1e30]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
def test_edges(fn, dtype):
    """Every pair of edge values: zeros, negatives, inf, NaN, tiny and huge."""
    e = torch.tensor(EDGE, dtype=dtype)
    a, x = torch.meshgrid(e, e, indexing="ij")
    check(fn, a.reshape(-1), x.reshape(-1), **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_a_near_x(dtype):
    """x = a (1 + r) at the borders where CPU switches method."""
    a = torch.tensor([0.5, 1.0, 1.1, 19.9, 20.0, 20.1, 50.0, 199.9, 200.0, 200.1, 1e3, 1e5, 1e7],
                     dtype=torch.float64)
    r = torch.tensor([-0.31, -0.3, -0.1, -1e-3, 0.0, 1e-6, 0.05, 0.29, 0.3, 0.31], dtype=torch.float64)
    x = (a[:, None] * (1 + r[None, :])).reshape(-1)
    a = a[:, None].expand(-1, r.numel()).reshape(-1)
    for fn in FNS:
        check(fn, a.to(dtype), x.to(dtype), **TOL[dtype])


def inplace_on_view(p, q):
    p[:, ::2].igamma_(q[:, 1::2])
    return p


def test_forms_and_dtypes():
    a, x = make((3, 4), low=0.1, high=6), make((3, 4), low=0.1, high=6, seed=1)
    f32 = TOL[torch.float32]
    check(torch.special.gammainc, a, x, **f32)
    check(torch.special.gammaincc, a, x, **f32)
    check(lambda p, q: torch.igamma(p, q, out=torch.empty_like(p)), a, x, **f32)
    check(lambda p, q: torch.special.gammaincc(p, q, out=torch.empty_like(p)), a, x, **f32)
    check(lambda p, q: p.clone().igamma_(q), a, x, **f32)
    check(lambda p, q: p.clone().igammac_(q), a, x, **f32)
    check(inplace_on_view, a, x, **f32)
    check(torch.igamma, a[:, :1], x, **f32)                               # broadcasting
    check(torch.igammac, a[0, 0], x[0, 0], **f32)                          # 0-d
    check(torch.igamma, a[:0], x[:0])                                      # empty
    check(torch.igamma, a.to(torch.bfloat16), x.to(torch.bfloat16))        # through f32, as CPU
    check(torch.igammac, a.to(torch.float16), x.to(torch.float16))


@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
def test_grad_x(fn):
    """d/dx is defined (x^(a-1) e^-x / Gamma(a), negated for igammac)."""
    a = make((5, 6), low=0.2, high=30, seed=2)
    x = make((5, 6), low=0.05, high=40, seed=3)
    check_grad(lambda t: fn(a.to(t.device), t), x, **TOL[torch.float32])


def test_grad_a_not_implemented():
    """d/da raises as on CPU."""
    for device in ("cpu", dev):
        a = torch.full((3,), 2.0, device=device, requires_grad=True)
        with pytest.raises(RuntimeError, match="not implemented"):
            torch.igamma(a, torch.ones(3, device=device)).sum().backward()
