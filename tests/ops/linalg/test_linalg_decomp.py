"""linalg_decomp family (csrc/core/lower/linalg/linalg_decomp*.c) against PyTorch CPU:
QR (linalg.qr, geqrf, householder_product, ormqr), symmetric eigen (eigh,
eigvalsh), SVD (svd, svdvals and the ops built on it) and lstsq; forward
and gradients. Eigen- and singular vectors are compared up to sign (their
sign is not unique; ours may differ from LAPACK's), as PyTorch's OpInfos do."""
import pytest
import torch

from ops_util import check, check_grad, dev, make


def fullrank(*shape, seed=0):
    """Well-conditioned matrices: random orthogonal factors around singular
    values in [1, 2] (distinct, so the vectors are unique up to sign)."""
    g = torch.Generator().manual_seed(seed)
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = torch.linalg.qr(torch.randn(*shape[:-2], m, m, generator=g, dtype=torch.float64))
    v, _ = torch.linalg.qr(torch.randn(*shape[:-2], n, n, generator=g, dtype=torch.float64))
    s = torch.linspace(2, 1, k, dtype=torch.float64) if k else torch.zeros(0, dtype=torch.float64)
    return (u[..., :k] * s @ v[..., :, :k].mT).float()


# ---- QR ------------------------------------------------------------------------------
# (each shape / mode compiles a program: the cases are few but cover tall,
# wide, batched and empty inputs)

@pytest.mark.parametrize("shape,mode", [((5, 3), "reduced"), ((5, 3), "complete"),
                                        ((3, 5), "reduced"), ((3, 5), "r"),
                                        ((2, 4, 3), "complete"), ((0, 3), "reduced"),
                                        ((3, 0), "complete")])
def test_linalg_qr(shape, mode):
    check(lambda a: tuple(torch.linalg.qr(a, mode=mode)), fullrank(*shape))


def test_qr_grad_and_out():
    a = fullrank(5, 3)
    check_grad(lambda x: torch.linalg.qr(x)[0] + 0.5 * torch.linalg.qr(x)[1].sum(), a)
    q, r = torch.empty(0, device=dev), torch.empty(0, device=dev)
    torch.linalg.qr(a.to(dev), out=(q, r))
    wq, wr = torch.linalg.qr(a)
    torch.testing.assert_close(q.cpu(), wq)
    torch.testing.assert_close(r.cpu(), wr)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 3, 3), (0, 3)])
def test_geqrf(shape):
    check(lambda a: tuple(torch.geqrf(a)), fullrank(*shape))


def householder_inputs(m, n, k, seed=0):
    a, tau = torch.geqrf(make((m, n), seed=seed))
    return a, tau[:k]


@pytest.mark.parametrize("mnk", [(5, 3, 3), (5, 3, 2), (4, 4, 0), (0, 0, 0)])
def test_householder_product(mnk):
    check(torch.linalg.householder_product, *householder_inputs(*mnk))


def test_householder_product_grad():
    check_grad(torch.linalg.householder_product, *householder_inputs(5, 3, 3))


@pytest.mark.parametrize("left,transpose", [(True, False), (False, True)])
def test_ormqr(left, transpose):
    a, tau = householder_inputs(5, 3, 3)
    c = make((5, 2) if left else (2, 5), seed=3)
    check(lambda x, t, y: torch.ormqr(x, t, y, left, transpose), a, tau, c)


# ---- symmetric eigen -------------------------------------------------------------------

def eigh_abs(a, uplo):
    w, v = torch.linalg.eigh(a, UPLO=uplo)
    return w, v.abs()


@pytest.mark.parametrize("shape,uplo", [((1, 1), "L"), ((5, 5), "U"), ((2, 4, 4), "L"),
                                        ((0, 3, 3), "U")])
def test_eigh(shape, uplo):
    # not symmetric: only the triangle UPLO names is read
    check(lambda a: eigh_abs(a, uplo), make(shape, seed=1))


def test_eigvalsh_grad_and_errors():
    check_grad(lambda a: torch.linalg.eigvalsh(a + a.mT), make((4, 4), seed=2))
    a = make((3, 3), seed=2)
    a[0, 2] = float("nan")  # in the upper triangle: UPLO="L" never reads it
    check(lambda x: torch.linalg.eigvalsh(x), a)
    with pytest.raises(RuntimeError, match="linalg.eigh: The algorithm failed to converge"):
        torch.linalg.eigvalsh(a.to(dev), UPLO="U").cpu()


# ---- SVD ------------------------------------------------------------------------------

def svd_parts(a, full):
    """(|U|, S, |Vh|, U @ Vh) on the first k = min(m, n) vectors: sign-free."""
    u, s, vh = torch.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    return u[..., :k].abs(), s, vh[..., :k, :].abs(), u[..., :k] @ vh[..., :k, :]


@pytest.mark.parametrize("shape,full", [((5, 3), True), ((3, 5), False), ((2, 4, 4), False),
                                        ((0, 3), True)])
def test_svd(shape, full):
    a = fullrank(*shape)
    check(lambda a: svd_parts(a, full), a)
    u, s, vh = (t.cpu() for t in torch.linalg.svd(a.to(dev), full_matrices=full))
    torch.testing.assert_close(u.mT @ u, torch.eye(u.shape[-1]).expand_as(u.mT @ u), atol=1e-6, rtol=0)
    torch.testing.assert_close(vh @ vh.mT, torch.eye(vh.shape[-2]).expand_as(vh @ vh.mT), atol=1e-6, rtol=0)


def test_svd_derived_ops():
    a = fullrank(5, 3)
    check(torch.linalg.svdvals, make((2, 3, 5), seed=4))
    check(torch.linalg.pinv, a)
    check(lambda x: torch.linalg.matrix_norm(x, "nuc"), a)
    check(torch.linalg.cond, fullrank(4, 4))
    sing = a[:, :2] @ make((2, 3), seed=5)  # rank 2
    check(torch.linalg.matrix_rank, sing)
    check(torch.linalg.pinv, sing, atol=1e-5, rtol=1e-4)


def test_svd_grads():
    check_grad(lambda x: torch.linalg.svd(x)[0].abs() + torch.linalg.svd(x)[1].sum(),
               fullrank(4, 3), atol=1e-5, rtol=1e-4)


def test_svd_nonfinite_raises():
    a = fullrank(4, 3)
    a[1, 1] = float("inf")
    with pytest.raises(RuntimeError, match="input matrix contained non-finite values"):
        torch.linalg.svd(a.to(dev))[1].cpu()


# ---- least squares ----------------------------------------------------------------------

@pytest.mark.parametrize("shapes,driver", [
    (((5, 3), (5, 2)), None), (((5, 3), (5, 2)), "gels"), (((5, 3), (5, 2)), "gelsd"),
    (((5, 3), (5, 2)), "gelss"), (((3, 5), (3, 2)), "gelsy"), (((3, 5), (3, 2)), "gelsd"),
    (((2, 5, 3), (2, 5)), "gels"), (((2, 5, 3), (1, 5, 2)), "gelsy"),
    (((4, 4), (4, 1)), "gelsd")])
def test_lstsq(shapes, driver):
    a, b = fullrank(*shapes[0]), make(shapes[1], seed=6)
    check(lambda x, y: tuple(torch.linalg.lstsq(x, y, driver=driver)), a, b, atol=1e-5, rtol=1e-5)


def test_lstsq_grad_and_rank_deficient():
    a, b = fullrank(5, 3), make((5, 2), seed=7)
    check_grad(lambda x, y: torch.linalg.lstsq(x, y).solution, a, b, atol=1e-5, rtol=1e-4)
    sing = a[:, :2] @ make((2, 3), seed=8)  # rank 2: minimum-norm solution, rank 2
    check(lambda x, y: tuple(torch.linalg.lstsq(x, y, driver="gelsy")), sing, b,
          atol=1e-4, rtol=1e-4)
    with pytest.raises(RuntimeError, match="rank-deficient"):
        torch.linalg.lstsq(sing.to(dev), b.to(dev), driver="gelsd").residuals.cpu()
