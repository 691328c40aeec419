"""complex64 / complex128 tensors on the tpu device: copies, views (including
float views of complex storages and back), PyTorch's lazy conj / neg bits,
in-place writes, printing, the complex_ops family (complex, polar,
conj_physical), the arithmetic known to handle complex values, and clear
errors where complex is not supported (complex32, ops whose lowering does not
handle complex yet: core/runtime/complex_gate.c)."""
import pytest
import torch

from ops_util import check, dev, make


def cmake(shape, dtype=torch.complex64, seed=0):
    part = torch.float64 if dtype == torch.complex128 else torch.float32
    return torch.complex(make(shape, part, seed=seed), make(shape, part, seed=seed + 1))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_round_trip(dtype):
    x = cmake((3, 5), dtype)
    t = x.to(dev)
    assert t.dtype == dtype
    assert torch.equal(t.cpu(), x)
    assert torch.equal(torch.empty(0, dtype=dtype, device=dev).cpu(), torch.empty(0, dtype=dtype))
    assert t[1, 2].item() == x[1, 2].item()


@pytest.mark.parametrize("fn", [
    lambda t: t.T, lambda t: t[1:, ::2], lambda t: t.reshape(5, 3), lambda t: t.T.reshape(-1),
    lambda t: t.unsqueeze(0).expand(2, 3, 5), lambda t: t.clone(), lambda t: t.T.contiguous(),
    lambda t: torch.view_as_real(t), lambda t: torch.view_as_real(t.T), lambda t: t.real,
    lambda t: t.imag, lambda t: t.T.imag, lambda t: t.view(torch.float64), lambda t: t.view(torch.int32),
], ids=["T", "slice", "reshape", "T_reshape", "expand", "clone", "contiguous", "view_as_real",
        "view_as_real_T", "real", "imag", "imag_T", "view_f64", "view_i32"])
def test_views(fn):
    check(fn, cmake((3, 5)))


def test_float_storage_read_as_complex():
    check(lambda r: torch.view_as_complex(r), make((3, 4, 2)))
    check(lambda r: torch.view_as_complex(r[1:]), make((3, 4, 2)))
    check(lambda r: r.view(torch.complex64), make((3, 4)))
    check(lambda r: r.view(torch.complex128), make((4, 4)))


@pytest.mark.parametrize("fn", [
    lambda t: t.fill_(2.5), lambda t: t.zero_(), lambda t: t.real.fill_(1), lambda t: t.imag.zero_(),
    lambda t: torch.view_as_real(t)[1, 2, 1].fill_(7), lambda t: t[1].copy_(t[2]),
    lambda t: t.T[0].copy_(t[:, 1]), lambda t: t.view(torch.float64)[0, :2].fill_(0.5),
    lambda t: t.view(torch.int32)[2].zero_(), lambda t: t.real.copy_(t.imag),
], ids=["fill", "zero", "real_fill", "imag_zero", "as_real_elem", "row_copy", "col_copy",
        "f64_view_write", "i32_view_write", "real_from_imag"])
def test_inplace_writes(fn):
    check(lambda t: (fn(t), t)[1], cmake((3, 5)))


def test_conj_and_neg_bits():
    x = cmake((3, 4))
    t = x.to(dev)
    assert t.conj().is_conj()
    assert torch.equal(t.conj().cpu(), x.conj())
    assert torch.equal(t.conj().resolve_conj().cpu(), x.conj().resolve_conj())
    assert t.conj().imag.is_neg()
    assert torch.equal(t.conj().imag.cpu(), x.conj().imag)
    assert torch.equal(t.conj().imag.resolve_neg().cpu(), x.conj().imag.resolve_neg())
    # writes through a conj view store conj(value)
    check(lambda u: (u.conj().mul_(2), u)[1], x)
    check(lambda u: (u[0].copy_(u[1].conj()), u)[1], x)
    check(lambda u: (u.conj()[1].fill_(3), u)[1], x)
    # a CPU conj view copied to the device, and a device conj view to a CPU one
    d = torch.empty(3, 4, dtype=torch.complex64, device=dev)
    d.copy_(x.conj())
    assert torch.equal(d.cpu(), x.conj().resolve_conj())
    h = torch.empty(3, 4, dtype=torch.complex64).conj()
    h.copy_(t)
    assert torch.equal(h.resolve_conj(), x)


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
def test_dtype_conversions():
    x = cmake((2, 3))
    check(lambda t: t.to(torch.complex128), x)
    check(lambda t: t.to(torch.float32), x)  # the real part (PyTorch warns)
    check(lambda t: t.real.to(torch.complex64), x)
    check(lambda r: r.to(torch.complex64), make((2, 3), torch.int64))
    # to bool: re != 0 or im != 0, as floats compare (-0 is zero, NaN is not)
    nan = float("nan")
    check(lambda t: t.bool(), torch.tensor([0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1j, 2 + 0j,
                                            complex(nan, 0.0)]))


def test_repr():
    x = cmake((2, 3))
    assert repr(x.to(dev)).replace(", device='tpu:0'", "") == repr(x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_complex_and_polar(dtype):
    a, b = make((3, 4), dtype), make((4,), dtype, seed=1)
    check(torch.complex, a, b)
    check(torch.polar, a.abs(), b)

    def complex_out(x, y):
        out = torch.empty(3, 4, dtype=x.dtype.to_complex(), device=x.device)
        torch.complex(x, y, out=out)
        return out

    check(complex_out, a, b)


def test_conj_physical():
    x = cmake((3, 4))
    check(torch.conj_physical, x)
    check(lambda t: t.clone().conj_physical_(), x)
    check(lambda t: torch.conj_physical(t, out=torch.empty_like(t)), x)
    check(torch.conj_physical, make((3, 4)))  # real: a copy


@pytest.mark.parametrize("fn", [
    lambda a, b: a + b, lambda a, b: a - b.conj(), lambda a, b: a * b, lambda a, b: -a,
    lambda a, b: a * 2, lambda a, b: a * 2j, lambda a, b: a.sum(), lambda a, b: a.sum(0),
    lambda a, b: a @ b.T, lambda a, b: torch.cat([a, b]),
    lambda a, b: torch.where(a.real > 0, a, b), lambda a, b: torch.nn.functional.pad(a, (1, 2)),
    lambda a, b: a[torch.tensor([2, 0], device=a.device)],
    lambda a, b: a * (2 - 0.5j), lambda a, b: a + (1 + 3j),
    lambda a, b: a.abs(), lambda a, b: torch.sgn(torch.where(a.real > 0, a, a * 0)), lambda a, b: a.angle(),
], ids=["add", "sub_conj", "mul", "neg", "mul_int", "mul_imag", "sum", "sum_dim", "matmul", "cat", "where", "pad",
        "index", "mul_complex_scalar", "add_complex_scalar", "abs", "sgn_with_zeros", "angle"])
def test_supported_ops(fn):
    check(fn, cmake((3, 4)), cmake((3, 4), seed=5))


def test_grad_through_complex():
    a, b = make((3, 4)), make((3, 4), seed=1)

    def loss(x, y):
        z = torch.complex(x, y) * torch.complex(y, x)
        return torch.view_as_real(z).sum()

    ac, bc = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
    ad, bd = a.to(dev).requires_grad_(True), b.to(dev).requires_grad_(True)
    loss(ac, bc).backward()
    loss(ad, bd).backward()
    torch.testing.assert_close(ad.grad.cpu(), ac.grad)
    torch.testing.assert_close(bd.grad.cpu(), bc.grad)


def test_polar_grad():
    """polar's backward runs sgn of a complex tensor and complex Scalars."""
    a, t = make((5,), low=0.1, high=2), make((5,), seed=2)
    ac, tc = a.clone().requires_grad_(True), t.clone().requires_grad_(True)
    ad, td = a.to(dev).requires_grad_(True), t.to(dev).requires_grad_(True)
    torch.view_as_real(torch.polar(ac, tc)).pow(2).sum().backward()
    torch.view_as_real(torch.polar(ad, td)).pow(2).sum().backward()
    torch.testing.assert_close(ad.grad.cpu(), ac.grad)
    torch.testing.assert_close(td.grad.cpu(), tc.grad)


def test_complex32_is_refused():
    with pytest.raises(NotImplementedError, match="complex32"):
        torch.zeros(3, dtype=torch.complex32, device=dev)


def test_unsupported_ops_raise():
    t = cmake((3, 4)).to(dev)
    with pytest.raises(NotImplementedError, match="complex"):
        t.exp()
    with pytest.raises(NotImplementedError, match="mixing complex and real"):
        t + t.real
    with pytest.raises(NotImplementedError, match="complex"):
        t == t  # noqa: B015 (compares bitwise today; see complex_gate.c)
