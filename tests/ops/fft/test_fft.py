"""fft family (csrc/core/lower/fft/fft.c: _fft_r2c, _fft_c2r, _fft_c2c as
stablehlo.fft) through torch.fft.* and stft, against PyTorch CPU: every
normalization, signal sizes that pad or trim, dim lists longer than one
stablehlo.fft call (chained), out=, float64, and gradients."""
import pytest
import torch

from ops_util import check, dev, make

TOL = dict(rtol=1e-5, atol=1e-5)  # float32 FFTs: XLA's and pocketfft's rounding differ


def cmake(shape, dtype=torch.complex64, seed=0):
    part = torch.float64 if dtype == torch.complex128 else torch.float32
    return torch.complex(make(shape, part, seed=seed), make(shape, part, seed=seed + 1))


def resolved(fn):
    """fn's result with a lazy conj (ifft of real input returns one) applied."""
    return lambda *a, **k: fn(*a, **k).resolve_conj()


REAL_IN = ["fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "rfft2", "ihfft2", "fftn", "ifftn",
           "rfftn", "ihfftn"]
COMPLEX_IN = ["fft", "ifft", "irfft", "hfft", "fft2", "ifft2", "irfft2", "hfft2", "fftn", "ifftn",
              "irfftn", "hfftn"]


NORMS = [None, "ortho", "forward"]


# each function with two of the three normalizations (all three are covered
# for every transform kind) keeps the file fast
@pytest.mark.parametrize("name,norm", [(n, NORMS[(i + k) % 3]) for i, n in enumerate(REAL_IN)
                                       for k in range(2)])
def test_real_input(name, norm):
    fn = getattr(torch.fft, name)
    check(resolved(lambda x: fn(x, norm=norm)), make((3, 6, 8)), **TOL)


@pytest.mark.parametrize("name,norm", [(n, NORMS[(i + k) % 3]) for i, n in enumerate(COMPLEX_IN)
                                       for k in range(2)])
def test_complex_input(name, norm):
    fn = getattr(torch.fft, name)
    check(lambda x: fn(x, norm=norm), cmake((3, 6, 5)), **TOL)


def test_sizes_pad_and_trim():
    x, z = make((4, 7)), cmake((4, 7))
    check(lambda t: torch.fft.rfft(t, n=5), x, **TOL)
    check(lambda t: torch.fft.rfft(t, n=12, dim=0), x, **TOL)
    check(lambda t: torch.fft.fft2(t, s=(3, 10)), z, **TOL)
    check(lambda t: torch.fft.irfft(t, n=9), z, **TOL)
    check(lambda t: torch.fft.irfft(t, n=20), z, **TOL)
    check(lambda t: torch.fft.irfftn(t, s=(6, 5), dim=(1, 0)), z, **TOL)
    check(lambda t: torch.fft.hfft(t, n=3), z, **TOL)


def test_dim_orders():
    x, z = make((4, 5, 6)), cmake((4, 5, 6))
    check(lambda t: torch.fft.rfftn(t, dim=(2, 0)), x, **TOL)
    check(lambda t: torch.fft.fftn(t, dim=(1, -1)), z, **TOL)
    check(lambda t: torch.fft.irfftn(t, dim=(0, 1)), z, **TOL)


def test_more_than_three_dims():
    # one stablehlo.fft transforms at most 3 dims: 4 and 5 are chained
    x, z = make((2, 3, 2, 4, 6), torch.float64), cmake((2, 3, 2, 4, 6), torch.complex128)
    check(torch.fft.fftn, z)
    check(torch.fft.rfftn, x)
    check(torch.fft.irfftn, z)
    check(lambda t: torch.fft.ifftn(t, dim=(0, 1, 3, 4), norm="ortho"), z)


def test_float64():
    check(torch.fft.rfft, make((5, 8), torch.float64))
    check(torch.fft.ifft2, cmake((5, 8), torch.complex128))
    check(torch.fft.irfft, cmake((5, 8), torch.complex128))


def test_out():
    x, z = make((3, 8)), cmake((3, 8))

    def rfft_out(t):
        out = torch.empty(3, 5, dtype=torch.complex64, device=t.device)
        torch.fft.rfft(t, out=out)
        return out

    def fft_out(t):
        out = torch.empty(3, 8, dtype=torch.complex64, device=t.device)
        torch.fft.fft(t, out=out)
        return out

    def irfft_out(t):
        out = torch.empty(3, 14, device=t.device)
        torch.fft.irfft(t, out=out)
        return out

    check(rfft_out, x, **TOL)
    check(fft_out, z, **TOL)
    check(irfft_out, z, **TOL)


def test_stft():
    sig, win = make((200,)), torch.hann_window(32)
    check(lambda s, w: torch.stft(s, 32, hop_length=8, window=w, return_complex=True), sig, win,
          **TOL)


@pytest.mark.parametrize("fn", [torch.fft.rfft, torch.fft.fft, torch.fft.ihfft, torch.fft.irfft, torch.fft.fftn])
def test_half_computes_like_cuda(fn):
    """PyTorch's FFT functions take float16 only on CUDA (and meta), where they return float16 / complex32:
    computed in float32, rounded once."""
    x = make((4, 8)).half()
    got = fn(x.to(dev))
    want = fn(x.float())
    want = want.to(torch.complex32 if want.is_complex() else torch.float16)
    assert got.dtype == want.dtype
    if want.is_complex():
        got, want = torch.view_as_real(got.cpu()).float(), torch.view_as_real(want).float()
    torch.testing.assert_close(got.cpu().float(), want.float(), rtol=2e-3, atol=2e-3)


def grads_agree(fn, x):
    """d sum(view_as_real(fn(x)) * w) / dx on CPU and tpu."""
    xc = x.clone().requires_grad_(True)
    xd = x.to(dev).requires_grad_(True)
    out_c, out_d = fn(xc), fn(xd)
    if out_c.is_complex():
        out_c, out_d = torch.view_as_real(out_c.resolve_conj()), torch.view_as_real(out_d.resolve_conj())
    w = make(out_c.shape, out_c.dtype, seed=5)
    (out_c * w).sum().backward()
    (out_d * w.to(dev)).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, **TOL)


@pytest.mark.parametrize("fn", [
    torch.fft.rfft, torch.fft.fft, torch.fft.ihfft, lambda t: torch.fft.rfft2(t, norm="ortho"),
    lambda t: torch.fft.irfft(torch.fft.rfft(t)), lambda t: torch.fft.hfft(torch.fft.ifft(t)),
], ids=["rfft", "fft", "ihfft", "rfft2", "irfft", "hfft"])
def test_grad(fn):
    grads_agree(fn, make((4, 6)))
