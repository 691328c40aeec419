"""General eigendecomposition (csrc/core/lower/linalg/linalg_eig*.c) against
PyTorch CPU (LAPACK's geev): torch.linalg.eig / eigvals of real matrices.

The lowering follows geev step by step (balancing, Hessenberg reduction,
double-shift QR), so the eigenvalues come in LAPACK's order: they are
compared in order, except where the order is decided by rounding (repeated
eigenvalues), where they are compared as sorted sets. Eigenvectors are unique
up to a complex phase (for distinct eigenvalues): they are checked through
A V = V diag(w), unit norms, and against CPU after aligning the phase of each
column; a real eigenvalue's vector is real with geev's sign, so it is compared
as is. Each batch shape compiles one program (a few seconds), so the cases
are lanes of a few batches."""
import pytest
import torch

from ops_util import dev


def _kinds(n, dt, seed):
    """Named test matrices of order n >= 2 (fixed seed)."""
    g = torch.Generator().manual_seed(seed)

    def rnd(*s):
        return torch.randn(*s, generator=g, dtype=torch.float64)

    q, _ = torch.linalg.qr(rnd(n, n))
    d = torch.logspace(-3, 3, n, dtype=torch.float64)
    a = rnd(n, n)
    rep = torch.tensor([1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 5.0, 5.0][:n], dtype=torch.float64)
    ones = torch.ones(n - 1, dtype=torch.float64)
    out = {
        "random": rnd(n, n),  # complex-conjugate pairs and real eigenvalues
        "random2": rnd(n, n),
        "symmetric": a + a.T,
        "upper": rnd(n, n).triu(),
        "lower": rnd(n, n).tril(),  # balancing permutes it to triangular form
        "diagonal": torch.diag(rnd(n)),
        "integer": torch.randint(-3, 4, (n, n), generator=g).double(),
        "badly_scaled": d[:, None] * rnd(n, n) / d[None, :],  # balancing scales it back
        "rotation": torch.diag(ones, 1) - torch.diag(ones, -1),
        "zero_row": rnd(n, n).index_fill(0, torch.tensor([1]), 0.0),
        # repeated eigenvalues: the order among equal values is rounding's choice
        "repeated": q @ torch.diag(rep) @ q.T,
        "identity": torch.eye(n, dtype=torch.float64),
        "jordan": 2 * torch.eye(n, dtype=torch.float64) + torch.diag(ones, 1),  # defective
        "zeros": torch.zeros(n, n, dtype=torch.float64),
    }
    return {k: v.to(dt) for k, v in out.items()}


UNORDERED = {"repeated"}          # order among equal eigenvalues: rounding decides
DEFECTIVE = {"jordan"}            # one eigenvector (no basis)
DEGENERATE = {"repeated", "identity", "zeros", "jordan"}  # vectors not unique up to phase
# rotation (zero diagonal): the signs of the QR steps' reflectors are
# rounding's choice, so the sign of its real eigenvector is too (float32 MKL
# and reference LAPACK differ there); its vectors are unique up to phase
ROUNDED_SIGN = {"rotation"}


def _tol(dt):
    return 1e-4 if dt == torch.float32 else 1e-10


def _phase_aligned(v, ref):
    """v's columns times the unit phase that best aligns them with ref's."""
    p = (ref.conj() * v).sum(-2, keepdim=True)
    return v * (p.conj() / p.abs().clamp_min(1e-30))


def _check(a, w, v, wc, vc, names, tol):
    """Eigenpairs (w, v) of the batch a (lanes named by names) against CPU's."""
    assert w.dtype == wc.dtype and v.dtype == vc.dtype and v.shape == vc.shape
    assert w.shape == wc.shape and v.stride() == vc.stride()
    n = a.shape[-1]
    a, v, vc = (t.reshape(-1, n, n) for t in (a, v, vc))
    w, wc = w.reshape(-1, n), wc.reshape(-1, n)
    scale = a.abs().amax((-2, -1), keepdim=True).clamp_min(1)
    # A V = V diag(w), unit-norm columns
    res = (a.to(w.dtype) @ v - v * w.unsqueeze(-2)).abs() / scale
    assert res.amax() < tol * 10, {names[i]: res[i].amax().item() for i in range(len(names))}
    torch.testing.assert_close(torch.linalg.vector_norm(v, dim=-2),
                               torch.ones(w.shape, dtype=a.dtype), rtol=0, atol=tol)
    # eigenvalues: LAPACK's order (sets where the order is rounding's choice)
    for i, k in enumerate(names):
        got, want = w[i], wc[i]
        if k in UNORDERED:
            key = lambda z: z.real * 1e3 + z.imag  # noqa: E731
            got, want = got[torch.argsort(key(got))], want[torch.argsort(key(want))]
        torch.testing.assert_close(got, want, rtol=tol, atol=tol, msg=k)
    # a real eigenvalue has a real eigenvector; pairs conjugate, as on CPU
    real = w.imag == 0
    assert torch.equal(real, wc.imag == 0)
    rv = real.unsqueeze(-2).expand_as(v)
    assert (v.imag[rv] == 0).all()
    for i, k in enumerate(names):
        if k in DEGENERATE:
            if k in DEFECTIVE:  # the one eigenvector, e_1 up to rounding
                torch.testing.assert_close(v[i].abs(), vc[i].abs(), rtol=1e-2, atol=1e-2, msg=k)
            continue
        # geev's sign for real eigenvalues; complex ones up to a phase
        if k not in ROUNDED_SIGN:
            torch.testing.assert_close(v[i][rv[i]], vc[i][rv[i]], rtol=tol * 10,
                                       atol=tol * 10, msg=k)
        torch.testing.assert_close(_phase_aligned(v[i], vc[i]), vc[i], rtol=tol * 10,
                                   atol=tol * 10, msg=k)


def _random_scaled(b, n, seed):
    """Random matrices (a mix of real eigenvalues and conjugate pairs), half of
    them with random row / column scales (balancing at work), float64."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(b, n, n, generator=g, dtype=torch.float64)
    d = 10.0 ** torch.empty(b, n, dtype=torch.float64).uniform_(-2, 2, generator=g)
    a[b // 2:] = d[b // 2:, :, None] * a[b // 2:] / d[b // 2:, None, :]
    return a


# (dtype, n): the named kinds as the lanes of one batch (n = 8: and 18
# random lanes); eigvals compared for the float32 batch (one more program)
@pytest.mark.parametrize("dt,n", [(torch.float32, 5), (torch.float64, 5), (torch.float32, 3),
                                  (torch.float64, 8)])
def test_eig_kinds(dt, n):
    mats = _kinds(n, dt, seed=n)
    names = list(mats)
    a = torch.stack([mats[k] for k in names])
    if n == 8:
        a = torch.cat([a, _random_scaled(18, n, seed=7)])
        names += ["random_scaled"] * 18
    w, v = torch.linalg.eig(a.to(dev))
    wc, vc = torch.linalg.eig(a)
    _check(a, w.cpu(), v.cpu(), wc, vc, names, _tol(dt))
    if dt == torch.float32 and n == 5:  # eigvals: the same values as eig, bit for bit
        assert torch.equal(torch.linalg.eigvals(a.to(dev)).cpu(), w.cpu())


# 2x2 blocks: every branch of dlanv2 (standardization of a 2x2 Schur block)
_TWO = [
    ([[0.0, 1.0], [-1.0, 0.0]], "rotation"),
    ([[1.0, 2.0], [2.0, 1.0]], "symmetric"),
    ([[3.0, 0.0], [4.0, -1.0]], "lower"),      # b = 0: swapped
    ([[1.0, 2.0], [0.0, 3.0]], "upper"),       # c = 0: as is
    ([[1.0, 2.0], [-3.0, 1.0]], "standard"),   # a = d, b c < 0: already standard
    ([[1.0, -2.0], [5.0, 4.0]], "complex"),
    ([[2.0, 1e-9], [1e-9, 2.0 + 1e-7]], "close"),
    ([[0.0, 0.0], [0.0, 0.0]], "zeros"),
    ([[4.0, 1.0], [0.0, 4.0]], "jordan"),
    ([[1e-30, 1.0], [-1.0, 1e-30]], "tiny"),
    ([[5.0, 7.0], [-2.0, -3.0]], "real_pair"),
    ([[0.5, -1.5], [2.5, 0.25]], "complex2"),
]


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
def test_eig_2x2_batched(dt):
    a = torch.tensor([m for m, _ in _TWO], dtype=dt).reshape(2, 6, 2, 2)
    names = [k for _, k in _TWO]
    w, v = torch.linalg.eig(a.to(dev))
    wc, vc = torch.linalg.eig(a)
    _check(a, w.cpu(), v.cpu(), wc, vc, names, _tol(dt))


def test_eig_1x1():
    a = torch.tensor([[[2.5]], [[-1.0]], [[0.0]], [[1e-30]]], dtype=torch.float32)
    w, v = torch.linalg.eig(a.to(dev))
    wc, vc = torch.linalg.eig(a)
    assert torch.equal(w.cpu(), wc) and torch.equal(v.cpu(), vc)
    assert v.stride() == vc.stride()


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3), (3, 0, 2, 2)])
def test_eig_empty(shape):
    a = torch.randn(shape)
    w, v = torch.linalg.eig(a.to(dev))
    wc, vc = torch.linalg.eig(a)
    assert w.shape == wc.shape and v.shape == vc.shape and w.dtype == wc.dtype
    assert v.dtype == vc.dtype and v.stride() == vc.stride() and w.stride() == wc.stride()
    e = torch.linalg.eigvals(a.to(dev))
    assert e.shape == wc.shape and e.dtype == wc.dtype


def _outs(kind, shape, dt, device):
    """out= tensors for eig of a `shape` input: empty, of the result's shape
    (row-major, column-major), or of another non-empty shape."""
    e = lambda *s: torch.empty(*s, dtype=dt, device=device)  # noqa: E731
    vs = shape
    if kind == "empty":
        return e(0), e(0)
    if kind == "rowmajor":
        return e(vs[:-1]), e(vs)
    if kind == "colmajor":
        return e(vs[:-1]), e(vs).mT
    return e(3), e(7)  # "resized"


@pytest.mark.parametrize("kind", ["empty", "rowmajor", "colmajor", "resized"])
def test_eig_out(kind):
    """out= of eig and eigvals: the values of the functional forms, the
    strides CPU gives (an empty out column-major like CPU's result, one of the
    result's shape keeps its strides, another shape is resized row-major)."""
    mats = _kinds(5, torch.float32, seed=5)  # the batch test_eig_kinds compiled
    a = torch.stack([mats[k] for k in mats])
    w, v = torch.linalg.eig(a.to(dev))
    ow, ov = _outs(kind, tuple(a.shape), torch.complex64, dev)
    cw, cv = _outs(kind, tuple(a.shape), torch.complex64, "cpu")
    with pytest.warns(UserWarning, match="resized") if kind == "resized" else _nothing():
        rw, rv = torch.linalg.eig(a.to(dev), out=(ow, ov))
    if kind == "resized":
        with pytest.warns(UserWarning, match="resized"):
            torch.linalg.eig(a, out=(cw, cv))
    else:
        torch.linalg.eig(a, out=(cw, cv))
    assert rw is ow and rv is ov
    assert ov.shape == cv.shape and ov.stride() == cv.stride(), (ov.stride(), cv.stride())
    assert ow.shape == cw.shape and ow.stride() == cw.stride()
    assert torch.equal(ow.cpu(), w.cpu()) and torch.equal(ov.cpu(), v.cpu())
    out = torch.empty(0, dtype=torch.complex64, device=dev)
    assert torch.linalg.eigvals(a.to(dev), out=out) is out
    assert torch.equal(out.cpu(), w.cpu())


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_eig_nonfinite():
    """CPU's eig refuses infs and NaNs; its eigvals returns NaN for them (the
    other lanes of the batch are unaffected)."""
    mats = _kinds(5, torch.float32, seed=5)  # the batch test_eig_kinds compiled
    a = torch.stack([mats[k] for k in mats])
    a[1, 2, 3] = float("inf")
    a[4, 0, 0] = float("nan")
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        torch.linalg.eig(a)
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        torch.linalg.eig(a.to(dev))[0].cpu()
    w = torch.linalg.eigvals(a.to(dev)).cpu()
    wc = torch.linalg.eigvals(a)
    for i in (1, 4):
        assert torch.isnan(w[i].real).all() and torch.isnan(w[i].imag).all()
        assert torch.isnan(wc[i]).any()  # CPU's are partly NaN
    # lanes are independent: the others are those of the finite batch
    keep = (torch.arange(len(a)) != 1) & (torch.arange(len(a)) != 4)
    clean = torch.stack([mats[k] for k in mats])
    assert torch.equal(w[keep], torch.linalg.eigvals(clean.to(dev)).cpu()[keep])


def test_eig_complex_input_refused():
    """CPU decomposes complex matrices (zgeev); the tpu lowering does not
    yet, and says so naming the op instead of computing something wrong."""
    a = torch.randn(3, 3, dtype=torch.complex64)
    torch.linalg.eig(a)  # works on CPU
    with pytest.raises(RuntimeError, match="linalg_eig.*complex input is not supported"):
        torch.linalg.eig(a.to(dev))
    with pytest.raises(RuntimeError, match="linalg_eigvals.*complex input is not supported"):
        torch.linalg.eigvals(a.to(dev))

