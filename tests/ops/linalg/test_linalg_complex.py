"""Complex64 / complex128 linear algebra (csrc/core/lower/linalg/linalg.c,
linalg_lu.c, linalg_ldl.c) against CPU: triangular solves, the Cholesky
family, the LU family, det / slogdet, inv, solve, their gradients for a few
ops, and LDL (complex symmetric and Hermitian)."""
import pytest
import torch

from ops_util import check, dev, to_cpu, to_dev
from suite import params

# complex128 runs the same lowerings in f64 parts: make test-full adds it
CDTYPES = params([torch.complex64, torch.complex128], [torch.complex64])


def tol(dt, scale=1.0):
    if dt == torch.complex64:
        return dict(rtol=1e-4 * scale, atol=1e-4 * scale)
    return dict(rtol=1e-10 * scale, atol=1e-10 * scale)


def cmake(shape, dt, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, dtype=dt, generator=g)


def well_conditioned(*shape, dt, seed=0):
    n = shape[-1]
    return cmake(shape, dt, seed) + n * torch.eye(n, dtype=dt)


def hpd(*batch, n, dt, seed=0):
    b = cmake((*batch, n, n), dt, seed)
    return b @ b.mH + n * torch.eye(n, dtype=dt)


SHAPES = [(4, 4), (3, 5, 5), (2, 2, 3, 3), (1, 1), (0, 0), (0, 3, 3)]


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(dt, shape, upper, left, unit):
    a = well_conditioned(*shape, dt=dt)
    n = shape[-1]
    b = cmake((*shape[:-2], n, 2) if left else (*shape[:-2], 2, n), dt, seed=1)
    check(lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit),
          a, b, **tol(dt))
    # non-contiguous operands (transposed views) and a conjugated view of A
    check(lambda x, y: torch.linalg.solve_triangular(x.mT, y, upper=upper, left=left), a.mT.contiguous(), b,
          **tol(dt))
    check(lambda x, y: torch.linalg.solve_triangular(x.mH, y, upper=upper, left=left), a.mT.contiguous(), b,
          **tol(dt))


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1), (0, 0)])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_triangular_solve(dt, shape, upper, transpose, unit):
    # `transpose` is the plain transpose for complex A too (as on CPU)
    a = well_conditioned(*shape, dt=dt)
    b = cmake((*shape[:-2], shape[-1], 3), dt, seed=2)
    check(lambda y, x: torch.triangular_solve(y, x, upper=upper, transpose=transpose, unitriangular=unit),
          b, a, **tol(dt))


def test_triangular_solve_transpose_is_not_conjugate():
    a = well_conditioned(4, 4, dt=torch.complex128).triu()
    b = cmake((4, 2), torch.complex128, seed=3)
    x = torch.triangular_solve(b.to(dev), a.to(dev), upper=True, transpose=True).solution.cpu()
    torch.testing.assert_close(a.mT @ x, b)
    assert not torch.allclose(a.mH @ x, b)


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (2, 2), (0,)])
@pytest.mark.parametrize("n", [1, 4, 0])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(dt, batch, n, upper):
    a = hpd(*batch, n=n, dt=dt)
    check(lambda x: torch.linalg.cholesky_ex(x, upper=upper), a, **tol(dt))
    check(lambda x: torch.linalg.cholesky(x, upper=upper), a, **tol(dt))
    check(lambda x: torch.cholesky(x, upper=upper), a, **tol(dt))
    # only one triangle is read, and only the real part of the diagonal
    junk = a.clone()
    if n:
        junk.diagonal(dim1=-2, dim2=-1).imag.fill_(7.0)
    ones = torch.ones(n, n, dtype=torch.bool)
    unread = ones.tril(-1) if upper else ones.triu(1)
    junk = torch.where(unread, cmake(a.shape, dt, seed=5), junk)
    check(lambda x: torch.linalg.cholesky_ex(x, upper=upper), junk, **tol(dt))
    # a transposed view
    check(lambda x: torch.linalg.cholesky(x.mT, upper=upper), a.mT.contiguous(), **tol(dt))


@pytest.mark.parametrize("dt", CDTYPES)
def test_cholesky_info_and_errors(dt):
    a = hpd(3, n=5, dt=dt)
    a[1, 2, 2] = -50.0  # leading minor of order 3 is not positive definite
    check(lambda x: torch.linalg.cholesky_ex(x)[1], a)
    want = torch.linalg.cholesky_ex(a)[1]
    assert want.tolist() == [0, 3, 0]
    with pytest.raises(Exception, match="positive-definite"):
        torch.linalg.cholesky(a.to(dev)).cpu()
    with pytest.raises(Exception, match="positive-definite"):
        torch.linalg.cholesky_ex(a.to(dev), check_errors=True)[0].cpu()


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (0,)])
@pytest.mark.parametrize("n", [1, 4, 0])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_and_solve(dt, batch, n, upper):
    a = hpd(*batch, n=n, dt=dt)
    f = torch.linalg.cholesky(a, upper=upper)
    check(lambda x: torch.cholesky_inverse(x, upper=upper), f, **tol(dt, 10))
    b = cmake((*batch, n, 2), dt, seed=4)
    check(lambda y, x: torch.cholesky_solve(y, x, upper=upper), b, f, **tol(dt, 10))
    # broadcast batch of B against a single factor
    if batch == (3,):
        check(lambda y, x: torch.cholesky_solve(y, x, upper=upper), b, f[0], **tol(dt, 10))


LU_SHAPES = [(4, 4), (3, 5, 5), (3, 5), (5, 3), (2, 4, 6), (1, 1), (0, 0), (0, 3, 3)]


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("shape", LU_SHAPES)
def test_lu_family(dt, shape):
    a = cmake(shape, dt, seed=6)  # no dominant diagonal: pivoting happens
    check(lambda x: torch.linalg.lu_factor_ex(x), a, **tol(dt, 10))
    check(lambda x: torch.linalg.lu(x), a, **tol(dt, 10))
    check(lambda x: torch.linalg.lu(x.mT), a.mT.contiguous(), **tol(dt, 10))
    lu, piv = torch.linalg.lu_factor(a)
    check(lambda x, p: torch.lu_unpack(x, p), lu, piv, **tol(dt))


def test_lu_pivots_use_cabs1():
    # |re| + |im| keeps row 0 (2 + 2 > 3 + 0); |z| would pick row 1 (3 > 2 sqrt 2)
    a = torch.tensor([[2 + 2j, 1.0], [3.0 + 0j, 2.0]], dtype=torch.complex128)
    _, piv = torch.linalg.lu_factor(a)
    assert piv.tolist() == [1, 2]
    check(lambda x: torch.linalg.lu_factor(x), a)


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (1, 1), (0, 0), (0, 2, 2)])
@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(dt, shape, left, adjoint):
    a = well_conditioned(*shape, dt=dt, seed=7)
    lu, piv = torch.linalg.lu_factor(a)
    n = shape[-1]
    b = cmake((*shape[:-2], n, 2) if left else (*shape[:-2], 2, n), dt, seed=8)
    check(lambda x, p, y: torch.linalg.lu_solve(x, p, y, left=left, adjoint=adjoint), lu, piv, b, **tol(dt, 10))


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 2, 3, 3), (1, 1), (0, 0), (0, 3, 3)])
def test_det_slogdet_inv_solve(dt, shape):
    a = cmake(shape, dt, seed=9) + 2 * torch.eye(shape[-1], dtype=dt)
    t = tol(dt, 10)
    check(torch.linalg.det, a, **t)
    check(torch.linalg.slogdet, a, **t)
    check(torch.ops.aten._linalg_det, a, **t)  # LU / pivots outputs: those of A itself, as CPU
    check(torch.ops.aten._linalg_slogdet, a, **t)
    check(torch.linalg.inv, a, **t)
    check(torch.linalg.inv_ex, a, **t)
    check(lambda x: torch.linalg.det(x.mT), a.mT.contiguous(), **t)  # non-contiguous input
    check(lambda x: torch.linalg.slogdet(x.mT), a.mT.contiguous(), **t)
    check(lambda x: torch.linalg.inv(x.mT), a.mT.contiguous(), **t)
    n = shape[-1]
    b = cmake((*shape[:-2], n, 3), dt, seed=10)
    check(torch.linalg.solve, a, b, **t)
    check(torch.ops.aten._linalg_solve_ex, a, b, **t)
    check(lambda x, y: torch.linalg.solve(x, y, left=False), a, b.mT.contiguous(), **t)
    check(lambda x, y: torch.linalg.solve(x.mT, y), a.mT.contiguous(), b, **t)
    check(lambda x, y: torch.linalg.solve(x, y), a, cmake((*shape[:-2], n), dt, seed=11), **t)  # vector B
    check(lambda x: torch.linalg.matrix_power(x, 3), a, **t)
    check(lambda x: torch.linalg.matrix_power(x, -2), a, **t)


@pytest.mark.parametrize("dt", CDTYPES)
def test_singular(dt):
    a = cmake((3, 4, 4), dt, seed=12)
    a[1, :, 2] = 0  # singular
    check(lambda x: torch.linalg.lu_factor_ex(x)[2], a)
    check(lambda x: torch.linalg.inv_ex(x)[1], a)
    check(lambda x: torch.linalg.solve_ex(x, torch.ones(4, 1, dtype=dt, device=x.device))[1], a)
    got = to_cpu(torch.linalg.det(to_dev(a)))
    assert got[1] == 0
    torch.testing.assert_close(got, torch.linalg.det(a), **tol(dt, 10))
    s, l = to_cpu(torch.linalg.slogdet(to_dev(a)))
    assert s[1] == 0 and l[1] == float("-inf")
    torch.testing.assert_close(s, torch.linalg.slogdet(a)[0], **tol(dt, 10))
    with pytest.raises(Exception, match="singular"):
        torch.linalg.inv(a.to(dev)).cpu()
    with pytest.raises(Exception, match="singular"):
        torch.linalg.solve(a.to(dev), torch.ones(3, 4, 1, dtype=dt, device=dev)).cpu()
    with pytest.raises(Exception, match="division by zero"):
        torch.linalg.lu_factor(a.to(dev))[0].cpu()


@pytest.mark.parametrize("dt", CDTYPES)
def test_slogdet_sign_is_unit_complex(dt):
    a = well_conditioned(2, 4, 4, dt=dt, seed=13)
    s, l = to_cpu(torch.linalg.slogdet(to_dev(a)))
    assert s.dtype == dt and l.dtype == torch.empty(0, dtype=dt).real.dtype
    torch.testing.assert_close(s.abs(), torch.ones(2, dtype=l.dtype), **tol(dt))
    assert s.imag.abs().max() > 1e-3  # a genuinely complex sign
    torch.testing.assert_close(s * l.exp(), torch.linalg.det(a), **tol(dt, 10))


def complex_grad_check(fn, *args, **t):
    """The gradients of re(sum(fn(*args) * w)) w.r.t. every arg agree
    between CPU and tpu (w: a fixed complex weight)."""
    ca = [a.detach().clone().requires_grad_(True) for a in args]
    da = [a.detach().to(dev).requires_grad_(True) for a in args]
    oc, od = fn(*ca), fn(*da)
    w = cmake(oc.shape, oc.dtype, seed=99)
    (oc * w).sum().real.backward()
    (od * w.to(dev)).sum().real.backward()
    torch.testing.assert_close(od.detach().cpu(), oc.detach(), **t)
    for a, b in zip(ca, da):
        assert b.grad is not None, "no gradient reached the tpu input"
        torch.testing.assert_close(b.grad.cpu(), a.grad, **t)


@pytest.mark.parametrize("dt", CDTYPES)
def test_grads(dt):
    t = tol(dt, 20)
    a = well_conditioned(2, 4, 4, dt=dt, seed=14)
    b = cmake((2, 4, 3), dt, seed=15)
    complex_grad_check(torch.linalg.solve, a, b, **t)
    complex_grad_check(torch.linalg.inv, a, **t)
    complex_grad_check(torch.linalg.det, a, **t)
    complex_grad_check(lambda x: torch.linalg.slogdet(x)[1], a, **t)
    m = cmake((2, 4, 4), dt, seed=16)
    complex_grad_check(lambda x: torch.linalg.cholesky(x @ x.mH + 4 * torch.eye(4, dtype=dt, device=x.device)),
                       m, **t)
    complex_grad_check(lambda x, y: torch.linalg.solve_triangular(x.triu(), y, upper=True), a, b, **t)


# matrix_exp (linalg_exp.c): the degree follows the 1-norm of |z|, so the scales
# below reach every Taylor degree (1, 2, 4, 8, 12, 18) and the squarings
MEXP_SCALES = [1e-9, 1e-5, 1e-3, 0.02, 0.1, 0.4, 1.0, 3.0, 30.0, 400.0]


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("scale", MEXP_SCALES)
def test_matrix_exp(dt, scale):
    a = cmake((2, 4, 4), dt, seed=21) * (scale / 4)
    check(torch.linalg.matrix_exp, a, **tol(dt, 10 if scale < 100 else 1000))


@pytest.mark.parametrize("dt", CDTYPES)
def test_matrix_exp_shapes_and_edges(dt):
    t = tol(dt, 10)
    # a batch mixing degrees, a non-contiguous view, 1x1 (complex exp), empty
    a = cmake((5, 3, 3), dt, seed=22) * torch.tensor([1e-6, 0.05, 0.5, 2.0, 20.0], dtype=dt.to_real()).view(5, 1, 1)
    check(torch.linalg.matrix_exp, a, **t)
    check(lambda x: torch.linalg.matrix_exp(x.mT), a, **t)
    check(lambda x: torch.linalg.matrix_exp(x[:, ::2, ::2]), cmake((2, 6, 6), dt, seed=23), **t)
    check(torch.linalg.matrix_exp, cmake((3, 1, 1), dt, seed=24) * 5, **t)
    check(torch.linalg.matrix_exp, torch.empty(0, 3, 3, dtype=dt), **t)
    check(torch.linalg.matrix_exp, torch.empty(2, 0, 0, dtype=dt), **t)
    # purely imaginary (a rotation's generator: exp is unitary), and a NaN entry (NaN + 0i as on CPU)
    h = cmake((4, 4), dt, seed=25)
    check(lambda x: torch.linalg.matrix_exp(1j * (x + x.mH)), h, **t)
    bad = cmake((2, 3, 3), dt, seed=26)
    bad[0, 1, 2] = complex(float("nan"), 1.0)
    check(torch.linalg.matrix_exp, bad, **t)


@pytest.mark.parametrize("dt", CDTYPES)
def test_matrix_exp_grad(dt):
    for scale in [0.01, 1.0, 8.0]:
        complex_grad_check(torch.linalg.matrix_exp, cmake((2, 3, 3), dt, seed=27) * scale, **tol(dt, 100))


# ---- the QR family (linalg/linalg_decomp.c: XLA's Qr and Householder-product custom calls
# follow zgeqrf / zlarfg: complex taus, real beta on R's diagonal) ----------------------------

QR_SHAPES = [(4, 4), (5, 3), (3, 5), (1, 1), (1, 4), (4, 1), (2, 4, 3), (2, 2, 3, 4), (0, 3),
             (3, 0), (0, 0), (2, 0, 3)]


def qr_special(dt):
    """Matrices whose reflectors hit zlarfg's corner cases: nothing below the diagonal
    (tau = 0 only when alpha is real), a complex or zero diagonal, a zero column."""
    d = torch.diag(torch.tensor([1 + 1j, 2, 0, -3j], dtype=dt))
    t = torch.triu(cmake((4, 4), dt, seed=5))
    z = cmake((5, 4), dt, seed=6)
    z[:, 1] = 0
    return [d, t, z, torch.zeros(3, 3, dtype=dt), torch.tensor([[2.0, 1j], [0, 1]], dtype=dt)]


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("shape", QR_SHAPES)
def test_geqrf(dt, shape):
    a = cmake(shape, dt, seed=2)
    check(lambda x: tuple(torch.geqrf(x)), a, **tol(dt))
    if len(shape) >= 2:  # a transposed (non-contiguous) and a conjugated view
        check(lambda x: tuple(torch.geqrf(x.mT)), a.mT.contiguous(), **tol(dt))
        check(lambda x: tuple(torch.geqrf(x.conj())), a, **tol(dt))


@pytest.mark.parametrize("dt", CDTYPES)
def test_geqrf_special(dt):
    for a in qr_special(dt):
        check(lambda x: tuple(torch.geqrf(x)), a, **tol(dt))
        check(lambda x: tuple(torch.geqrf(x.mT)), a.mT.contiguous(), **tol(dt))


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("shape", QR_SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_linalg_qr(dt, shape, mode):
    a = cmake(shape, dt, seed=3)
    check(lambda x: tuple(torch.linalg.qr(x, mode=mode)), a, **tol(dt))
    if len(shape) >= 2:
        check(lambda x: tuple(torch.linalg.qr(x.mH, mode=mode)), a.mT.contiguous(), **tol(dt))


@pytest.mark.parametrize("dt", CDTYPES)
def test_linalg_qr_special_and_out(dt):
    for a in qr_special(dt):
        for mode in ["reduced", "complete"]:
            check(lambda x: tuple(torch.linalg.qr(x, mode=mode)), a, **tol(dt))
    a = cmake((2, 5, 3), dt, seed=4)
    q, r = torch.empty(0, dtype=dt, device=dev), torch.empty(0, dtype=dt, device=dev)
    torch.linalg.qr(a.to(dev), out=(q, r))
    wq, wr = torch.linalg.qr(a)
    torch.testing.assert_close(q.cpu(), wq, **tol(dt))
    torch.testing.assert_close(r.cpu(), wr, **tol(dt))
    f, t = torch.empty(0, dtype=dt, device=dev), torch.empty(0, dtype=dt, device=dev)
    torch.geqrf(a.to(dev), out=(f, t))
    wf, wt = torch.geqrf(a)
    torch.testing.assert_close(f.cpu(), wf, **tol(dt))
    torch.testing.assert_close(t.cpu(), wt, **tol(dt))


def cq_inputs(m, n, k, dt, batch=(), seed=0, geqrf=True):
    """Packed reflectors (*batch, m, n) and k taus: from geqrf, or arbitrary values."""
    a = cmake((*batch, m, n), dt, seed=seed)
    if geqrf and m * n > 0:
        a, tau = torch.geqrf(a)
    else:
        tau = cmake((*batch, min(m, n)), dt, seed=seed + 1)
    return a, tau[..., :k].contiguous()


HH_CASES = [(5, 3, 3), (5, 3, 2), (4, 4, 4), (4, 4, 0), (3, 1, 1), (1, 1, 1), (0, 0, 0), (3, 0, 0)]


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("mnk", HH_CASES)
@pytest.mark.parametrize("geqrf", [True, False])
def test_householder_product(dt, mnk, geqrf):
    a, tau = cq_inputs(*mnk, dt, geqrf=geqrf)
    check(torch.linalg.householder_product, a, tau, **tol(dt))
    a, tau = cq_inputs(*mnk, dt, batch=(2, 3), seed=7, geqrf=geqrf)
    check(torch.linalg.householder_product, a, tau, **tol(dt))
    check(lambda x, t: torch.linalg.householder_product(x.mT, t), a.mT.contiguous(), tau, **tol(dt))


def ormqr_check(fn, a, tau, c, dt):
    """Same values as CPU, or an error where CPU refuses the shapes."""
    try:
        fn(a, tau, c)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            fn(*to_dev((a, tau, c)))
        return
    check(fn, a, tau, c, **tol(dt))


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("case", [(5, 3, 3, 2), (5, 3, 2, 4), (4, 4, 4, 1), (4, 2, 0, 3), (3, 3, 3, 0)])
def test_ormqr(dt, left, transpose, case):
    # transpose is the conjugate transpose for complex (zunmqr 'C'), as on CPU
    m, n, k, p = case
    for batch in [(), (2,)]:
        for geqrf in [True, False]:
            a, tau = cq_inputs(m, n, k, dt, batch=batch, seed=8, geqrf=geqrf)
            c = cmake((*batch, m, p) if left else (*batch, p, m), dt, seed=9)
            ormqr_check(lambda x, t, y: torch.ormqr(x, t, y, left, transpose), a, tau, c, dt)
    a, tau = cq_inputs(m, n, k, dt, seed=10)
    c = cmake((p, m) if left else (m, p), dt, seed=11)
    ormqr_check(lambda x, t, y: torch.ormqr(x.mT, t, y.mT, left, transpose), a.mT.contiguous(), tau, c, dt)


def qr_flat(x):
    q, r = torch.linalg.qr(x)
    return torch.cat([q.flatten(-2), r.flatten(-2)], -1)


@pytest.mark.parametrize("dt", CDTYPES)
def test_qr_grads(dt):
    t = tol(dt, 10)
    for shape in [(4, 4), (5, 3), (2, 3, 3)]:
        complex_grad_check(lambda x: torch.linalg.qr(x)[0], cmake(shape, dt, seed=12), **t)
        complex_grad_check(lambda x: torch.linalg.qr(x)[1], cmake(shape, dt, seed=13), **t)
        complex_grad_check(lambda x: qr_flat(x), cmake(shape, dt, seed=14), **t)
    complex_grad_check(lambda x: torch.linalg.qr(x, mode="complete")[0], cmake((3, 3), dt, seed=15), **t)
    # wide: reduced Q is square, R is k x n
    complex_grad_check(lambda x: qr_flat(x), cmake((3, 5), dt, seed=16), **t)
    a, tau = cq_inputs(5, 3, 3, dt, seed=17)
    complex_grad_check(torch.linalg.householder_product, a, tau, **t)
    c = cmake((5, 2), dt, seed=18)
    for left, transpose in [(True, False), (True, True)]:
        complex_grad_check(lambda x, y, z: torch.ormqr(x, y, z, left, transpose), a, tau, c, **t)
    complex_grad_check(lambda x, y, z: torch.ormqr(x, y, z, False, True), a, tau, c.mT.contiguous(), **t)


# ---- LDL (linalg_ldl.c: zsytf2 / zsytrs, zhetf2 / zhetrs) -------------------------------------

def _ldl_input(batch, n, dt, herm, seed, small_diag):
    a = cmake((*batch, n, n), dt, seed)
    a = a + (a.mH if herm else a.mT)
    if small_diag:  # Bunch-Kaufman then takes 2x2 pivots
        a.diagonal(dim1=-2, dim2=-1).mul_(0.01)
    if herm:  # the diagonal's imaginary part is ignored (LAPACK's zhetrf)
        a = a + 0.25j * torch.eye(n, dtype=dt)
    return a


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("herm", [False, True], ids=["symmetric", "hermitian"])
@pytest.mark.parametrize("seed", range(4))
def test_ldl_random(dt, herm, seed):
    """Random complex symmetric / Hermitian matrices (some with small diagonals:
    2x2 pivots): LD to rounding, pivots and info exactly, and the solve with
    CPU's factors and with ours."""
    batch, n = [((), 5), ((3,), 4), ((), 1), ((2,), 7)][seed]
    a = _ldl_input(batch, n, dt, herm, seed, small_diag=seed % 2 == 1)
    ld, piv, info = torch.linalg.ldl_factor_ex(a, hermitian=herm)
    ld_d, piv_d, info_d = to_cpu(torch.linalg.ldl_factor_ex(to_dev(a), hermitian=herm))
    assert torch.equal(piv_d, piv) and torch.equal(info_d, info)
    torch.testing.assert_close(ld_d, ld, **tol(dt, 10))
    b = cmake((*batch, n, 3), dt, seed + 9)
    want = torch.linalg.ldl_solve(ld, piv, b, hermitian=herm)
    for f in (ld, ld_d):
        got = to_cpu(torch.linalg.ldl_solve(to_dev(f), to_dev(piv), to_dev(b), hermitian=herm))
        torch.testing.assert_close(got, want, **tol(dt, 100))
    if seed % 2 == 1:
        assert (piv < 0).any(), "the case meant to take 2x2 pivots took none"


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("herm", [False, True], ids=["symmetric", "hermitian"])
def test_ldl_singular_and_empty(dt, herm):
    a = _ldl_input((2,), 4, dt, herm, seed=3, small_diag=False)
    a[1] = 0
    a[1, 0, 0] = 2
    ld, piv, info = torch.linalg.ldl_factor_ex(a, hermitian=herm)
    got = to_cpu(torch.linalg.ldl_factor_ex(to_dev(a), hermitian=herm))
    assert info[1] > 0 and torch.equal(got[2], info) and torch.equal(got[1], piv)
    torch.testing.assert_close(got[0], ld, **tol(dt))
    for x in (a, to_dev(a)):  # CPU's own check raises for a singular D (an internal assert in torch 2.13)
        with pytest.raises(RuntimeError, match="ldl_factor"):
            torch.linalg.ldl_factor(x, hermitian=herm)[0].cpu()
    e = torch.empty(0, 3, 3, dtype=dt)
    check(lambda x: torch.linalg.ldl_factor_ex(x, hermitian=herm), e)
