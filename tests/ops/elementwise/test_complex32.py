"""complex32 (torch.chalf, ComplexHalf): a dtype CUDA computes and CPU mostly
refuses. The device holds it as (re, im) float16 pairs, computes in complex64
and rounds once when it stores, as CUDA does; each result here is compared
with CPU computing in complex64 and rounding to complex32."""
import pytest
import torch

import torch_tpu  # noqa: F401

dev = torch.device("tpu")
C32 = torch.complex32


def cmake(shape, seed=0, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    re = torch.randn(shape, generator=g) * scale
    im = torch.randn(shape, generator=g) * scale
    return torch.complex(re, im).to(C32)


def ref(f, *args):
    """f on CPU in complex64 (chalf arguments widened), rounded to the dtype
    it would have given in complex32."""
    wide = [a.to(torch.complex64) if isinstance(a, torch.Tensor) and a.dtype == C32 else a for a in args]
    out = f(*wide)
    if out.dtype == torch.complex64:
        return out.to(C32)
    if out.dtype == torch.float32:
        return out.to(torch.float16)
    return out


def close(got, want, **kw):
    assert got.device.type == "tpu"
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    got = got.cpu()
    if want.dtype == C32:
        got, want = torch.view_as_real(got).float(), torch.view_as_real(want).float()
    torch.testing.assert_close(got, want, **kw)


def test_round_trip_keeps_bits():
    x = cmake((3, 5))
    y = x.to(dev)
    assert y.dtype == C32 and y.element_size() == 4
    assert torch.equal(torch.view_as_real(y.cpu()), torch.view_as_real(x))
    assert torch.view_as_real(y).dtype == torch.float16


@pytest.mark.parametrize("factory", ["zeros", "ones", "full", "empty_like_fill", "tensor"])
def test_factories(factory):
    if factory == "zeros":
        got, want = torch.zeros(2, 3, dtype=C32, device=dev), torch.zeros(2, 3, dtype=C32)
    elif factory == "ones":
        got, want = torch.ones(2, 3, dtype=C32, device=dev), torch.ones(2, 3, dtype=C32)
    elif factory == "full":
        got, want = torch.full((4,), 1.5 - 2j, dtype=C32, device=dev), torch.full((4,), 1.5 - 2j, dtype=C32)
    elif factory == "empty_like_fill":
        got = torch.empty(3, dtype=C32, device=dev).fill_(0.25 + 1j)
        want = torch.empty(3, dtype=C32).fill_(0.25 + 1j)
    else:
        got, want = torch.tensor([1 + 2j, -3j], dtype=C32, device=dev), torch.tensor([1 + 2j, -3j], dtype=C32)
    close(got, want, rtol=0, atol=0)


def test_random_dtype():
    x = torch.randn(64, dtype=C32, device=dev)
    assert x.dtype == C32 and torch.isfinite(torch.view_as_real(x.cpu())).all()


BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("other", ["c32", "f16", "scalar_complex", "scalar_float", "c32_0d"])
def test_binary(name, other):
    f = BINARY[name]
    a = cmake((4, 6))
    b = {"c32": cmake((4, 6), seed=1), "f16": torch.randn(4, 6, generator=torch.Generator().manual_seed(3)).half(),
         "scalar_complex": 0.5 - 1.25j, "scalar_float": -2.5, "c32_0d": cmake((), seed=4)}[other]
    got = f(a.to(dev), b.to(dev) if isinstance(b, torch.Tensor) else b)
    close(got, ref(f, a, b), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", ["neg", "conj_physical", "exp", "sqrt", "tanh", "reciprocal", "sgn"])
def test_unary(name):
    f = getattr(torch, name)
    a = cmake((5, 3), scale=0.8)
    close(f(a.to(dev)), ref(f, a), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", ["abs", "angle", "real", "imag"])
def test_to_real(name):
    f = getattr(torch, name)
    a = cmake((5, 3))
    got = f(a.to(dev))
    assert got.dtype == torch.float16
    close(got, ref(f, a), rtol=2e-3, atol=2e-3)


def test_reductions():
    a = cmake((6, 7), scale=0.5)
    d = a.to(dev)
    close(d.sum(), ref(torch.sum, a), rtol=3e-3, atol=3e-3)
    close(d.sum(1), ref(lambda t: t.sum(1), a), rtol=3e-3, atol=3e-3)
    close(d.mean(0), ref(lambda t: t.mean(0), a), rtol=3e-3, atol=3e-3)


def test_conversions():
    a = cmake((3, 4))
    d = a.to(dev)
    close(d.to(torch.complex64), a.to(torch.complex64), rtol=0, atol=0)
    close(d.to(torch.complex64).to(C32), a, rtol=0, atol=0)
    f = torch.randn(3, 4).to(dev)
    close(f.to(C32), f.cpu().to(C32), rtol=0, atol=0)
    close(d.real.float(), a.to(torch.complex64).real, rtol=0, atol=0)
    close(d.to(torch.float16), a.to(torch.complex64).real.half(), rtol=0, atol=0)


def test_views_and_writes_through_them():
    a = cmake((4, 6))
    d = a.to(dev)
    # reads: transposed, stepped, a column, a row at an offset
    close(d.t().contiguous(), a.t().contiguous(), rtol=0, atol=0)
    close(d[:, 1::2] * 2, ref(lambda t: t[:, 1::2] * 2, a), rtol=1e-3, atol=1e-3)
    close(d[2], a[2], rtol=0, atol=0)
    # writes: a column, in place through a stepped view; the rest keeps its bits
    want, got = a.clone(), d.clone()
    want[:, 3] = torch.tensor(1 - 1j, dtype=C32)
    got[:, 3] = 1 - 1j
    close(got, want, rtol=0, atol=0)
    want_w = want.to(torch.complex64)
    want_w[::2, 1:5].mul_(2j)
    got[::2, 1:5].mul_(2j)
    close(got, want_w.to(C32), rtol=0, atol=0)


def test_reinterpreting_views():
    a = cmake((3, 4))
    d = a.to(dev)
    r = torch.view_as_real(d)
    assert r.dtype == torch.float16 and r.shape == (3, 4, 2)
    r[..., 1].zero_()  # writes the imaginary parts through the float16 view
    want = a.clone()
    torch.view_as_real(want)[..., 1].zero_()
    close(d, want, rtol=0, atol=0)
    back = torch.view_as_complex(torch.view_as_real(d).contiguous())
    close(back, want, rtol=0, atol=0)
    bits = d.view(torch.int32)
    assert torch.equal(bits.cpu(), want.view(torch.int32))
    f16 = torch.randn(3, 8).half()
    close(f16.to(dev).view(C32), f16.view(C32), rtol=0, atol=0)


def test_fused_eager_matches_strict():
    a, b = cmake((8, 8)), cmake((8, 8), seed=1)
    want = ref(lambda x, y: (x * y + x).sum(0), a, b)
    with torch_tpu.eager_mode("fused"):
        d = a.to(dev)
        out = (d * b.to(dev) + d).sum(0)
    close(out, want, rtol=3e-3, atol=3e-3)


def test_cat_and_index():
    a, b = cmake((2, 3)), cmake((3, 3), seed=1)
    close(torch.cat([a.to(dev), b.to(dev)]), torch.cat([a, b]), rtol=0, atol=0)
    idx = torch.tensor([2, 0])
    close(b.to(dev)[idx.to(dev)], b[idx], rtol=0, atol=0)
