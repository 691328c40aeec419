"""Hermitian eigendecomposition and SVD (csrc/core/lower/linalg/linalg_decomp_*.c)
on complex inputs, and their accuracy in double precision, against CPU.

Eigenvectors and singular vectors are unique only up to a phase per column (a
sign for real inputs), so the tests compare what does not depend on it: the
values with CPU's, the factorizations' residuals and orthonormality, |vectors|
where the values are distinct, and gradients of phase-invariant losses. The
composites built on them (eigvalsh, svdvals, pinv, matrix_rank, the nuclear
norm, cond, lstsq) are compared with CPU directly. Shapes are drawn at random,
with batches and non-square and empty matrices."""
import random

import pytest
import torch

from ops_util import dev
from suite import params, sweep

ALL = [torch.complex64, torch.complex128, torch.float32, torch.float64]


def tol(dt):
    return 2e-5 if dt in (torch.complex64, torch.float32) else 1e-12


def rand(shape, dt, seed):
    return torch.randn(shape, dtype=dt, generator=torch.Generator().manual_seed(seed))


def eye_like(a):
    return torch.eye(a.shape[-1], dtype=a.dtype).expand(a.shape)


def shape_of(rng, square):
    batch = rng.choice(((), (2,), (2, 3), (0,)))
    m = rng.choice((1, 2, 3, 5, 8))
    n = m if square else rng.choice((1, 2, 3, 5, 8))
    return (*batch, m, n)


@pytest.mark.parametrize("seed", range(sweep(3, 5)))
@pytest.mark.parametrize("dt", ALL)
def test_eigh(dt, seed):
    rng = random.Random(seed)
    a = rand(shape_of(rng, True), dt, seed)
    uplo = rng.choice("LU")
    h = a + a.mH  # Hermitian
    for x in (h, a):  # a: only the UPLO triangle is read (the diagonal's real part)
        w, v = (t.cpu() for t in torch.linalg.eigh(x.to(dev), UPLO=uplo))
        wc, vc = torch.linalg.eigh(x, UPLO=uplo)
        assert w.dtype == wc.dtype and v.dtype == vc.dtype and v.shape == vc.shape
        scale = max(1.0, float(x.abs().max())) if x.numel() else 1.0
        torch.testing.assert_close(w, wc, rtol=tol(dt), atol=tol(dt) * scale)
        full = wc.new_zeros(()).to(dt) + vc @ torch.diag_embed(wc.to(dt)) @ vc.mH  # the matrix read
        torch.testing.assert_close(v @ torch.diag_embed(w.to(dt)) @ v.mH, full, rtol=tol(dt), atol=tol(dt) * scale)
        torch.testing.assert_close(v.mH @ v, eye_like(v), rtol=0, atol=tol(dt))
        assert torch.equal(torch.linalg.eigvalsh(x.to(dev), UPLO=uplo).cpu(), w)


@pytest.mark.parametrize("seed", range(sweep(2, 5)))
@pytest.mark.parametrize("dt", ALL)
def test_svd(dt, seed):
    rng = random.Random(100 + seed)
    a = rand(shape_of(rng, False), dt, seed)
    if rng.random() < 0.3 and min(a.shape[-2:]) > 1:  # rank-deficient
        a = a[..., :1] * a[..., :1, :]
    full = rng.random() < 0.5
    u, s, vh = (t.cpu() for t in torch.linalg.svd(a.to(dev), full_matrices=full))
    uc, sc, vhc = torch.linalg.svd(a, full_matrices=full)
    assert (u.dtype, s.dtype, u.shape, s.shape, vh.shape) == (uc.dtype, sc.dtype, uc.shape, sc.shape, vhc.shape)
    scale = max(1.0, float(a.abs().max())) if a.numel() else 1.0
    torch.testing.assert_close(s, sc, rtol=tol(dt), atol=tol(dt) * scale)
    k = s.shape[-1]
    rebuilt = (u[..., :k] * s.unsqueeze(-2).to(dt)) @ vh[..., :k, :]
    torch.testing.assert_close(rebuilt, a, rtol=tol(dt), atol=tol(dt) * scale)
    torch.testing.assert_close(u.mH @ u, eye_like(u.mH @ u), rtol=0, atol=tol(dt))
    torch.testing.assert_close(vh @ vh.mH, eye_like(vh @ vh.mH), rtol=0, atol=tol(dt))
    assert torch.equal(torch.linalg.svdvals(a.to(dev)).cpu(), s)


@pytest.mark.parametrize("dt", params(ALL, [torch.complex64, torch.float32]))
def test_composites(dt):
    for seed, (m, n) in enumerate(((5, 3), (3, 5), (4, 4))):
        a = rand((2, m, n), dt, seed)
        h = rand((n, n), dt, seed) @ rand((n, n), dt, seed).mH
        h = h + h.mH
        t = tol(dt) * 10
        for f in (torch.linalg.pinv, lambda x: torch.linalg.matrix_norm(x, "nuc"), torch.linalg.cond,
                  lambda x: torch.linalg.matrix_norm(x, 2)):
            torch.testing.assert_close(f(a.to(dev)).cpu(), f(a), rtol=t, atol=t)
        torch.testing.assert_close(torch.linalg.pinv(h.to(dev), hermitian=True).cpu(),
                                   torch.linalg.pinv(h, hermitian=True), rtol=t * 10, atol=t * 10)
        assert torch.equal(torch.linalg.matrix_rank(a.to(dev)).cpu(), torch.linalg.matrix_rank(a))
        low = a[..., :1] @ a[..., :1, :]
        assert torch.equal(torch.linalg.matrix_rank(low.to(dev)).cpu(), torch.linalg.matrix_rank(low))
        b = rand((2, m, 2), dt, seed + 7)
        for driver in ("gels", "gelsy", "gelsd", "gelss"):
            if driver == "gels" and m < n:
                continue
            got = torch.linalg.lstsq(a.to(dev), b.to(dev), driver=driver)
            want = torch.linalg.lstsq(a, b, driver=driver)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape, (driver, g.dtype, w.dtype, g.shape, w.shape)
                torch.testing.assert_close(g.cpu(), w, rtol=t, atol=t)


@pytest.mark.parametrize("dt", [torch.complex64, torch.complex128])
def test_gradients(dt):
    a = rand((3, 4), dt, 1)
    h = rand((4, 4), dt, 2)
    h = h + h.mH
    fns = [
        (lambda x: torch.linalg.svdvals(x).sum(), a),
        (lambda x: torch.linalg.svd(x, full_matrices=False)[0].abs().sum(), a),  # phase-invariant
        (lambda x: (lambda u, s, vh: (u @ vh).real.sum())(*torch.linalg.svd(x, full_matrices=False)), a),
        (lambda x: torch.linalg.eigvalsh(x).pow(2).sum(), h),
        (lambda x: torch.linalg.eigh(x)[1].abs().pow(2).mul(torch.arange(4.0).to(x.device)).sum(), h),
        (lambda x: torch.linalg.pinv(x).abs().sum(), a),
    ]
    for f, x in fns:
        xc = x.clone().requires_grad_()
        f(xc).backward()
        xd = x.to(dev).requires_grad_()
        f(xd).backward()
        t = 1e-3 if dt == torch.complex64 else 1e-9
        torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=t, atol=t)


def test_double_precision_vectors_are_refined():
    """XLA's Jacobi Eigh stops near sqrt(eps) off the diagonal in double
    precision; the lowering refines the vectors to LAPACK's accuracy."""
    for dt in (torch.float64, torch.complex128):
        a = rand((40, 40), dt, 3)
        h = a + a.mH
        w, v = (t.cpu() for t in torch.linalg.eigh(h.to(dev)))
        assert (h @ v - v * w.to(dt)).abs().max() < 1e-12
        u, s, vh = (t.cpu() for t in torch.linalg.svd(a[:, :25].to(dev), full_matrices=False))
        assert ((u * s.to(dt)) @ vh - a[:, :25]).abs().max() < 1e-12
        # repeated eigenvalues: any basis of an eigenspace is one; the values
        # are the refined vectors' Rayleigh quotients (exact), ascending
        q, _ = torch.linalg.qr(a)
        d = torch.tensor([1.0] * 3 + [2.0] * 3 + [5.0] * 34, dtype=torch.float64).to(dt)
        r = q @ torch.diag(d) @ q.mH
        w, v = (t.cpu() for t in torch.linalg.eigh(r.to(dev)))
        assert (w - d.real).abs().max() < 1e-12 and bool((w[1:] >= w[:-1]).all())
        assert (r @ v - v * w.to(dt)).abs().max() < 1e-10  # was 3e-9
        assert (v.mH @ v - torch.eye(40, dtype=dt)).abs().max() < 1e-13
