"""special family (csrc/core/lower/special/special*.c) against PyTorch CPU: Bessel
functions, orthogonal polynomials, polygamma / zeta / mvlgamma, ndtri /
log_ndtr / erfcx, and small numeric helpers; forward in several dtypes,
edge values, out= / in-place forms and gradients."""
import pytest
import torch

from ops_util import check, check_grad, make

nan, inf = float("nan"), float("inf")
sp = torch.special
F32 = dict(rtol=1.3e-6, atol=1e-5)
EDGES = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 5.0, 8.0, 8.5, -8.5, 30.0, 60.0, inf, -inf, nan])


def wide(dtype=torch.float32, seed=0):
    """Values over the pieces of the approximations (|x| up to 40) plus edges."""
    x = torch.cat([make((60,), torch.float64, -40, 40, seed), EDGES.double()])
    return x.to(dtype)


UNARY = [torch.i0, sp.i0e, sp.i1, sp.i1e, sp.modified_bessel_i0, sp.modified_bessel_i1,
         sp.modified_bessel_k0, sp.modified_bessel_k1, sp.scaled_modified_bessel_k0,
         sp.scaled_modified_bessel_k1, sp.bessel_j0, sp.bessel_j1, sp.bessel_y0, sp.bessel_y1,
         sp.spherical_bessel_j0, sp.erfcx, sp.log_ndtr, sp.entr, torch.sinc, torch.angle]


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__)
def test_unary(fn):
    check(fn, wide(), **F32)


@pytest.mark.parametrize("fn", [torch.i0, sp.erfcx, sp.bessel_y0, sp.modified_bessel_k0],
                         ids=lambda f: f.__name__)
def test_unary_f64(fn):
    check(fn, wide(torch.float64), rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("fn,dtype", [(torch.i0, torch.bfloat16), (sp.i1e, torch.float16),
                                      (sp.ndtri, torch.int64), (sp.bessel_j0, torch.int64)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_unary_other_dtypes(fn, dtype):
    check(fn, make((4, 5), dtype, -6, 6))


def test_ndtri():
    y = torch.cat([torch.rand(50, dtype=torch.float64), torch.tensor([0.0, 1.0, -0.1, 1.1, 1e-20, 0.5, nan])])
    check(sp.ndtri, y.float(), **F32)
    check(sp.ndtri, y)


def test_out_and_inplace():
    x = make((3, 4), low=0.1, high=0.9)
    check(lambda t: torch.i0(t, out=torch.empty_like(t)), x, **F32)
    check(lambda t: t.clone().i0_(), x, **F32)
    check(lambda t: t.clone().sinc_(), x, **F32)
    check(lambda t: torch.logit(t, eps=0.2), x, **F32)
    check(lambda t: t.clone().logit_(0.3), x, **F32)
    check(lambda t: sp.bessel_j1(t, out=torch.empty_like(t)), x, **F32)


POLY = [sp.chebyshev_polynomial_t, sp.chebyshev_polynomial_u, sp.chebyshev_polynomial_v,
        sp.chebyshev_polynomial_w, sp.shifted_chebyshev_polynomial_t,
        sp.shifted_chebyshev_polynomial_u, sp.shifted_chebyshev_polynomial_v,
        sp.shifted_chebyshev_polynomial_w, sp.hermite_polynomial_h, sp.hermite_polynomial_he,
        sp.laguerre_polynomial_l, sp.legendre_polynomial_p]


@pytest.mark.parametrize("fn", POLY, ids=lambda f: f.__name__)
def test_polynomials(fn):
    x = torch.cat([make((40,), low=-1.5, high=1.5), torch.tensor([1.0, -1.0, 0.0, 0.5, 1.0, -1.0, 2.0])])
    n = torch.cat([make((40,), low=-3, high=14, seed=1).floor(), torch.tensor([3.0, 4.0, 5.0, 9.0, 0.0, 12.0, 200.0])])
    check(fn, x, n, **F32)


@pytest.mark.parametrize("fn", [sp.chebyshev_polynomial_t, sp.legendre_polynomial_p],
                         ids=lambda f: f.__name__)
def test_polynomial_overloads(fn):
    x, n = make((20,), low=-1.5, high=1.5), make((20,), low=-3, high=14, seed=1).floor()
    check(lambda t: fn(t, 5), x, **F32)            # n_scalar
    check(lambda m: fn(0.25, m), n, **F32)         # x_scalar
    check(fn, make((3, 4), torch.int64, -2, 5), make((3, 4), torch.int64, -1, 6, seed=2))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma(n):
    x = make((50,), low=-4, high=12)
    check(lambda t: torch.polygamma(n, t), x, **F32)
    if n == 2:
        check(lambda t: torch.polygamma(n, t), x.double())
        check(lambda t: t.clone().polygamma_(n), x, **F32)


def test_digamma_grad_and_zeta():
    check_grad(torch.digamma, make((8,), low=0.3, high=6), **F32)
    s = torch.tensor([1.0, 0.5, 1.5, 2.0, 3.0, 7.0, 2.0, 4.0, 3.0])
    q = torch.tensor([1.0, 1.0, 0.3, -2.0, -1.5, 20.0, 0.01, 1e3, -2.5])
    check(sp.zeta, s, q, **F32)
    check(lambda t: sp.zeta(t, 2.5), s, **F32)
    check(lambda t: sp.zeta(3.0, t), q.abs() + 0.1, **F32)


@pytest.mark.parametrize("p", [1, 3])
def test_mvlgamma(p):
    x = make((4, 5), low=3, high=9)
    check(lambda t: torch.mvlgamma(t, p), x, **F32)
    check(lambda t: t.clone().mvlgamma_(p), x, **F32)
    check_grad(lambda t: torch.mvlgamma(t, p), x, **F32)


def test_binary_helpers():
    a, b = make((5, 6)), make((5, 6), seed=1)
    check(sp.xlog1py, a, b.abs(), **F32)
    check(lambda t: sp.xlog1py(t, 2.0), torch.tensor([0.0, 1.0, nan, -2.0]), **F32)
    check(lambda t: sp.xlog1py(0.0, t), torch.tensor([nan, 1.0, -0.5]), **F32)
    x = torch.tensor([0.0, -0.0, 1.0, -1.0, 1e30, inf, nan, 2.0, 3.0])
    y = torch.tensor([1.0, -1.0, 1.0, 0.0, inf, 0.0, 1.0, nan, -inf])
    check(torch.nextafter, x, y)
    check(torch.nextafter, x.double(), y.double())
    check(torch.nextafter, x.bfloat16(), y.bfloat16())
    i, j = make((4, 5), torch.int64, -50, 50), make((4, 5), torch.int64, -50, 50, seed=3)
    check(torch.gcd, i, j)
    check(torch.lcm, i, j)
    check(torch.gcd, i.int(), j.int())


def test_frexp():
    x = torch.tensor([0.0, -0.0, 1.0, -3.5, 1e-40, 6e-39, 2.0**-133, 2.0**-149, 1e30, inf, -inf, nan, 0.3])
    check(lambda t: tuple(torch.frexp(t)), x)
    check(lambda t: tuple(torch.frexp(t)), x.double())
    check(lambda t: tuple(torch.frexp(t)), x.bfloat16())


def test_logit_and_grads():
    x = torch.tensor([0.0, 0.1, 0.5, 0.9, 1.0, -0.5, 1.5, nan])
    check(torch.logit, x, **F32)
    check(lambda t: torch.logit(t, 0.05), x, **F32)
    check_grad(torch.logit, make((6,), low=0.05, high=0.95), **F32)
    check_grad(lambda t: torch.logit(t, 0.2), make((6,), low=0.05, high=0.95), **F32)
    for fn in (torch.i0, sp.entr, sp.xlog1py):
        args = (make((6,), low=0.2, high=3),) * (2 if fn is sp.xlog1py else 1)
        check_grad(fn, *args, **F32)


def test_errors():
    from ops_util import dev
    with pytest.raises(RuntimeError):
        torch.polygamma(-1, torch.ones(3, device=dev))
    with pytest.raises(RuntimeError):  # CPU: p has to be >= 1
        torch.mvlgamma(torch.ones(3, device=dev), 0)
    # CPU raises RuntimeError; the device-side check raises at the next sync
    with pytest.raises(RuntimeError, match="greater than"):
        torch.mvlgamma(torch.zeros(3, device=dev), 3).cpu()
