"""Linear algebra lowerings (csrc/core/lower/linalg/linalg*.c) against CPU:
Cholesky, triangular solves, LU and what is built on it, LDL, matrix_exp."""
import pytest
import torch

from ops_util import check, check_grad, dev, make

TOL = dict(rtol=1e-5, atol=1e-5)  # CPU's LAPACK/BLAS block their sums differently


def spd(*batch, n=4, seed=0):
    a = make((*batch, n, n), seed=seed)
    return a @ a.mT + n * torch.eye(n)


def well_conditioned(*shape, seed=0):
    """Random square-ish matrices with a dominant diagonal (pivoting still happens)."""
    a = make(shape, seed=seed)
    k = min(shape[-2:])
    return a + 4 * torch.eye(shape[-2], shape[-1]) * (1 + (k > 0))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper):
    a = spd(2, n=5)
    check(lambda x: torch.linalg.cholesky_ex(x, upper=upper), a, **TOL)
    check(lambda x: torch.linalg.cholesky(x, upper=upper), a[0], **TOL)
    if not upper:
        check_grad(lambda x: torch.linalg.cholesky(x @ x.mT + 5 * torch.eye(5, device=x.device)),
                   make((5, 5)), rtol=1e-4, atol=1e-4)


def test_cholesky_info_and_errors():
    a = spd(3, n=5)
    a[1, 2, 2] = -50.0  # leading minor of order 3 is not positive definite
    check(lambda x: torch.linalg.cholesky_ex(x)[1], a)
    with pytest.raises(Exception, match="positive-definite"):
        torch.linalg.cholesky(a.to(dev)).cpu()
    with pytest.raises(Exception, match="positive-definite"):
        torch.linalg.cholesky_ex(a.to(dev), check_errors=True)[0].cpu()


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_solve(upper):
    l = torch.linalg.cholesky(spd(2, n=4), upper=upper)
    b = make((2, 4, 3), seed=1)
    check(lambda x: torch.cholesky_inverse(x, upper=upper), l, **TOL)
    check(lambda x, y: torch.cholesky_solve(x, y, upper=upper), b, l, **TOL)
    check_grad(lambda x, y: torch.cholesky_solve(x, y, upper=upper), b, l, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("upper,transpose,unit", [(True, False, False), (False, True, True)])
def test_triangular_solve(upper, transpose, unit):
    a = well_conditioned(2, 4, 4)
    b = make((3, 1, 4, 2), seed=2)  # batch dims broadcast
    check(lambda x, y: torch.triangular_solve(x, y, upper=upper, transpose=transpose, unitriangular=unit),
          b, a, **TOL)
    check_grad(lambda x, y: torch.triangular_solve(x, y, upper=upper)[0], b, a, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular(left):
    a = well_conditioned(4, 4)
    b = make((2, 4, 3) if left else (2, 3, 4), seed=3)
    check(lambda x, y: torch.linalg.solve_triangular(x, y, upper=False, left=left), a, b, **TOL)
    check_grad(lambda x, y: torch.linalg.solve_triangular(x, y, upper=True, left=left), a, b,
               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(2, 5, 5), (3, 5), (5, 3), (0, 4, 4)])
def test_lu_factor(shape):
    a = make(shape, seed=4)
    check(lambda x: torch.linalg.lu_factor_ex(x), a, **TOL)
    check(lambda x: torch.linalg.lu(x), a, **TOL)


def test_lu_singular_info():
    a = make((3, 4, 4), seed=5)
    a[1, :, 0] = 0
    a[2] = 0
    check(lambda x: torch.linalg.lu_factor_ex(x), a, **TOL)


def test_lu_unpack_and_solve():
    a = well_conditioned(2, 4, 4)
    lu, piv = torch.linalg.lu_factor(a)
    b = make((2, 4, 3), seed=6)
    check(lambda x, p: torch.lu_unpack(x, p), lu, piv)
    for left, adjoint in [(True, False), (True, True), (False, False), (False, True)]:
        bb = b if left else b.mT
        check(lambda x, p, y: torch.linalg.lu_solve(x, p, y, left=left, adjoint=adjoint), lu, piv, bb, **TOL)


def test_det_slogdet_logdet():
    a = make((3, 4, 4), seed=7)
    a[2, :, 1] = 0  # singular: det 0, slogdet (0, -inf)
    check(torch.linalg.det, a, **TOL)
    check(torch.linalg.slogdet, a, **TOL)
    check(lambda x: torch.det(torch.empty(2, 0, 0, device=x.device)), a)
    good = well_conditioned(2, 4, 4)
    check(torch.logdet, good, **TOL)
    check_grad(torch.linalg.det, good, rtol=1e-4, atol=1e-4)
    check_grad(lambda x: torch.linalg.slogdet(x)[1], good, rtol=1e-4, atol=1e-4)


def test_inv_solve():
    a = well_conditioned(2, 4, 4)
    b = make((2, 4, 2), seed=8)
    check(torch.linalg.inv, a, **TOL)
    check(torch.linalg.solve, a, b, **TOL)
    check(torch.linalg.solve, a, b[..., 0], **TOL)                # vector right-hand side
    check(lambda x, y: torch.linalg.solve(x, y, left=False), a, b.mT, **TOL)
    check(lambda x, y: torch.linalg.solve(x, y), a[0], make((3, 4, 2), seed=9), **TOL)  # broadcast
    check_grad(torch.linalg.inv, a, rtol=1e-4, atol=1e-4)
    check_grad(torch.linalg.solve, a, b, rtol=1e-4, atol=1e-4)
    sing = a.clone()
    sing[1] = 0
    check(lambda x: torch.linalg.inv_ex(x)[1], sing)
    with pytest.raises(Exception, match="singular"):
        torch.linalg.inv(sing.to(dev)).cpu()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_matrix_exp(dtype):
    # norms across CPU's degree thresholds, up to scaling and squaring
    scales = torch.tensor([1e-9, 1e-4, 0.03, 0.3, 1.0, 2.0, 8.0], dtype=dtype)
    a = make((7, 4, 4), dtype, seed=10) * scales.view(-1, 1, 1) / 4
    check(torch.linalg.matrix_exp, a, rtol=1e-5, atol=1e-5)
    check(torch.linalg.matrix_exp, a[4], rtol=1e-5, atol=1e-5)
    check(torch.linalg.matrix_exp, make((2, 1, 1), dtype), rtol=1e-6, atol=1e-6)
    if dtype == torch.float32:
        check_grad(torch.linalg.matrix_exp, a[3], rtol=1e-4, atol=1e-4)


def test_ldl():
    a = make((3, 5, 5), seed=11)
    a = a + a.mT
    a[1, 0, 0] = 1e-3           # 2x2 pivots and interchanges
    a[2].fill_diagonal_(0.01)
    check(torch.linalg.ldl_factor_ex, a, **TOL)
    ld, piv = torch.linalg.ldl_factor(a)
    b = make((3, 5, 2), seed=12)
    check(torch.linalg.ldl_solve, ld, piv, b, rtol=1e-4, atol=1e-4)  # a[2] is ill-conditioned


@pytest.mark.parametrize("fn", [torch.linalg.det, lambda a: torch.linalg.slogdet(a)[1], torch.logdet])
@pytest.mark.parametrize("view", ["contiguous", "mT", "strided"])
def test_det_grad_of_views(fn, view):
    """det / slogdet save an LU for backward whose meaning (LU of A or of A^T)
    CPU decides by A's contiguity: non-symmetric A through views."""
    g = torch.Generator().manual_seed(3)
    base = torch.randn(2, 4, 4, generator=g) + 4 * torch.eye(4)

    def mk(b):
        return {"contiguous": b, "mT": b.mT, "strided": torch.stack([b, b], -1)[..., 0]}[view]

    ac = mk(base).detach().requires_grad_()
    ad = mk(base.to(dev)).detach().requires_grad_()
    assert ad.is_contiguous() == ac.is_contiguous()
    fn(ac).sum().backward()
    fn(ad).sum().backward()
    torch.testing.assert_close(ad.grad.cpu(), ac.grad, rtol=1e-4, atol=1e-5)
