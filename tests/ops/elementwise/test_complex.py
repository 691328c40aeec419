"""complex64 / complex128 tensors on the tpu device: copies, views (including
float views of complex storages and back), PyTorch's lazy conj / neg bits,
in-place writes, printing, the complex_ops family (complex, polar,
conj_physical), arithmetic with PyTorch's type promotion (complex with real
tensors and Python numbers), comparisons, the unary math (branch cuts,
infinities, NaNs), reductions, random fillers, Llama's rotary embedding, and
clear errors where complex is not supported (ops whose lowering
does not handle complex yet: its entry lacks TT_LF_COMPLEX, a fact beside its family's table in core/lower)."""
import pytest
import torch

from ops_util import check, check_grad, dev, make


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
    lambda a, b: a / b, lambda a, b: a + b.real, lambda a, b: a.exp(),
], ids=["add", "sub_conj", "mul", "neg", "mul_int", "mul_imag", "sum", "sum_dim", "matmul", "cat", "where", "pad",
        "index", "mul_complex_scalar", "add_complex_scalar", "abs", "sgn_with_zeros", "angle", "div", "add_real",
        "exp"])
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


def test_unsupported_ops_raise():
    t = cmake((3, 4)).to(dev)
    with pytest.raises(NotImplementedError, match="complex"):
        torch.linalg.eigvals(t[:, :3]).cpu()  # complex input: its entry lacks TT_LF_COMPLEX
    with pytest.raises(RuntimeError):
        t < t  # noqa: B015 (complex values are not ordered; CPU raises too)


# ---- arithmetic with PyTorch's type promotion ------------------------------------------------

def _operand(kind, cdtype):
    """The other operand of a complex tensor: a real / complex tensor of some
    dtype, a 0-dim tensor or a Python number."""
    real = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "bool": torch.bool,
            "f16": torch.float16}
    if kind in real:
        return make((3, 4), real[kind], seed=7)
    if kind == "c64" or kind == "c128":
        return cmake((3, 4), torch.complex64 if kind == "c64" else torch.complex128, seed=7)
    if kind == "f64_0d":
        return torch.tensor(-1.75, dtype=torch.float64)
    if kind == "c128_0d":
        return torch.tensor(0.5 - 2j, dtype=torch.complex128)
    return {"int": 3, "float": -2.5, "complex": 1.5 + 0.25j, "imag": 1j}[kind]


@pytest.mark.parametrize("cdtype", [torch.complex64, torch.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("kind", ["f32", "f64", "i64", "bool", "c64", "c128", "f64_0d", "c128_0d", "int", "float",
                                  "complex", "imag"])
def test_promotion(cdtype, kind):
    """complex (+) real / complex tensors, 0-dim tensors and Python numbers,
    either side: PyTorch's result dtype and values."""
    z = cmake((3, 4), cdtype)
    o = _operand(kind, cdtype)
    ops = [lambda a, b: a + b, lambda a, b: b + a, lambda a, b: a - b, lambda a, b: b - a,
           lambda a, b: a * b, lambda a, b: b * a, lambda a, b: a / b, lambda a, b: b / a,
           lambda a, b: a == b, lambda a, b: b != a]
    if kind == "bool":
        ops = [op for i, op in enumerate(ops) if i not in (2, 3, 7)]  # bool -: CPU refuses; b / a: 0 / z
    for op in ops:
        check(op, z, o)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_real_times_imaginary_unit(dtype):
    x = make((4, 5), dtype)
    check(lambda t: 1j * t, x)
    check(lambda t: t * (2 - 1j) + 0.5j, x)
    check(lambda t: t / (1 + 1j), x)
    check(lambda t: torch.complex(t.double(), t.double()) * 1j if t.is_floating_point() else t + 1j, x)


def test_division_is_scaled():
    """c10::complex divides without forming |b|^2 (which overflows /
    underflows in float32 for |b| beyond ~1e19 / below ~1e-19)."""
    a = torch.tensor([1e30 + 1e30j, 1e-30 + 2e-30j, 3 + 4j, 1 + 0j, -2e20 + 1j, 1e-25 - 3e-25j])
    b = torch.tensor([2e30 - 1e30j, 1e-30 - 1e-30j, 1e-30 + 0j, 3e25 + 4e25j, 1e20 + 1e20j, 2e-25 + 1e-26j])
    check(lambda x, y: x / y, a, b)
    check(lambda x, y: x / y, a.to(torch.complex128) * 1e270, b.to(torch.complex128) * 1e270)
    check(torch.reciprocal, b)


def test_compare():
    """eq / ne compare both parts as floats: -0 == +0, NaN != NaN."""
    nan = float("nan")
    a = torch.tensor([1 + 2j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(nan, 0), complex(0, nan), 3 + 0j,
                      3 + 1e-7j, complex(float("inf"), 1)])
    b = torch.tensor([1 + 2j, 0j, 0j, complex(nan, 0), complex(0, nan), 3 + 0j, 3 + 0j, complex(float("inf"), 1)])
    check(lambda x, y: (x == y, x != y, torch.eq(x, y), torch.ne(x, 3), x == 3.0, x.real == y, y.eq(x.real)), a, b)
    check(lambda x, y: (x.clone().eq_(y), x.clone().ne_(y)), a, b)
    check(lambda x, y: (torch.logical_and(x, y), torch.logical_or(x, y.real), torch.logical_xor(x, y),
                        torch.logical_not(x)), a, b)


def test_pow():
    z, w = cmake((3, 4)), cmake((3, 4), seed=3)
    for e in [2, 3, -2, 0.5, -0.5, -1, 1, 0, 2.5, 1.5 - 0.5j, 1j]:
        check(lambda t: t ** e, z)
    check(lambda t, u: t ** u, z, w)
    check(lambda t: 2 ** t, z)
    check(lambda t: t.square(), z)
    check(lambda t: t.real ** (0.5 + 1j), z)
    check(lambda t: t.clone().pow_(2), z)


# ---- unary math: random values, and the special values where CPU has defined results ----------

_SPECIAL = [0.0, -0.0, 1e-30, -1e-30, 1e-8, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, 10.0, -30.0, 100.0, 1e5, -1e10, 1e20,
            3e38, -3e38, float("inf"), -float("inf"), float("nan")]
_NONFINITE_DIFFERS = {"log1p"}  # CPU's vectorized kernel gives NaN + i NaN where a part is infinite


def _grid(dtype, finite_only=False):
    v = torch.tensor([x for x in _SPECIAL if not finite_only or abs(x) < float("inf")], dtype=torch.float64)
    re, im = v.repeat_interleave(len(v)), v.repeat(len(v))
    g = torch.Generator().manual_seed(11)
    rnd = torch.randn(2, 256, generator=g, dtype=torch.float64) * 3
    return torch.complex(torch.cat([re, rnd[0]]), torch.cat([im, rnd[1]])).to(dtype)


def _assert_parts_close(got, want, rtol, atol=1e-37):
    """Each part equal (both NaN counts), or within rtol of that part or of |want|
    (a part far below the other one only has |want| * eps of accuracy)."""
    bad = torch.zeros(want.shape, dtype=torch.bool)
    scale = want.abs().to(torch.float64)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        g, w = g.to(torch.float64), w.to(torch.float64)
        same = (g == w) | (g.isnan() & w.isnan())
        d = (g - w).abs()
        close = (d <= rtol * w.abs()) | (d <= rtol * scale) | (d <= atol)
        bad |= ~(same | close)
    idx = bad.nonzero().flatten()[:5].tolist()
    assert not idx, "; ".join(f"z[{i}]: got {got[i].item()} want {want[i].item()}" for i in idx)


_UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sigmoid",
          "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "neg",
          "isnan", "isinf", "isfinite", "abs", "angle", "sgn", "nan_to_num"]


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("op", _UNARY)
def test_unary_math(op, dtype):
    """Branch cuts (signed zeros on the real / imaginary axis), tiny and huge
    magnitudes, infinities and NaNs, and random values, against CPU."""
    x = _grid(dtype, finite_only=op in _NONFINITE_DIFFERS)
    fn = getattr(torch, op)
    got, want = fn(x.to(dev)).cpu(), fn(x)
    assert got.dtype == want.dtype
    if not want.is_complex():
        want, got = torch.complex(want.double(), torch.zeros_like(want.double())), \
            torch.complex(got.double(), torch.zeros_like(got.double()))
    # acos(1 +- 1e-30i) in complex128: CPU's value has an absolute error of ~1e-16 (of a result
    # of ~1e-15); an absolute error of eps is within acos's accuracy (its range is [0, pi])
    atol = 3e-16 if op == "acos" and dtype == torch.complex128 else 1e-37
    _assert_parts_close(got, want, 2e-5 if dtype == torch.complex64 else 1e-9, atol)


def test_unary_inplace_and_out():
    z = cmake((3, 4))
    check(lambda t: t.clone().exp_(), z)
    check(lambda t: t.clone().sqrt_(), z)
    check(lambda t: torch.log(t, out=torch.empty_like(t)), z)
    check(lambda t: torch.sin(t.T), z)
    check(lambda t: torch.tanh(t.conj()), z)


def test_branch_cut_signs():
    """sqrt / log / asin / acos / atanh / acosh on the real axis beyond their
    branch points: the sign of a zero imaginary part picks the side."""
    xs = torch.tensor([-4.0, -2.0, -1.5, -0.5, 1.5, 3.0])
    for im in (0.0, -0.0):
        z = torch.complex(xs, torch.full_like(xs, im))
        for fn in (torch.sqrt, torch.log, torch.asin, torch.acos, torch.atanh, torch.acosh, torch.rsqrt):
            check(fn, z)
        w = torch.complex(torch.full_like(xs, im), xs)  # imaginary axis: asinh / atan cuts
        for fn in (torch.asinh, torch.atan, torch.sqrt, torch.log):
            check(fn, w)


# ---- reductions --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=["c64", "c128"])
def test_reductions(dtype):
    z = cmake((4, 5), dtype)
    check(lambda t: (t.sum(), t.sum(0), t.sum((0, 1), keepdim=True), t.mean(), t.mean(1), t.prod(), t.prod(0)), z)
    check(lambda t: (t.cumsum(1), t.cumprod(0), t.var(), t.std(1), torch.var_mean(t, 0)), z)
    check(lambda t: (t.T.sum(0), t.conj().mean(), torch.sum(t, 1, dtype=torch.complex128)), z)
    check(lambda t: t.sum(0), torch.complex(make((4, 5)), make((4, 5), seed=2) * 1e30).to(dtype))


def test_addcmul_addcdiv():
    a, b, c = cmake((3, 4)), cmake((3, 4), seed=2), cmake((3, 4), seed=4)
    check(lambda x, y, w: (torch.addcmul(x, y, w, value=2 - 1j), torch.addcdiv(x, y, w, value=0.5)), a, b, c)


# ---- random ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=["c64", "c128"])
def test_random_complex(dtype):
    """randn / normal_ on complex draw each part with std / sqrt(2) (so that
    E|z - mean|^2 = std^2), independently; uniform_ draws each part in
    [from, to). The statistics are checked, not the bits (our RNG is not
    CPU's)."""
    n = 100_000
    torch.tpu.manual_seed(0)
    z = torch.randn(n, dtype=dtype, device=dev).cpu()
    assert z.dtype == dtype
    part_sd = 0.5 ** 0.5
    for p in (z.real, z.imag):
        assert abs(p.mean().item()) < 5 * part_sd / n ** 0.5
        assert abs(p.std().item() - part_sd) < 0.01
    assert abs(torch.corrcoef(torch.stack([z.real, z.imag]))[0, 1].item()) < 0.02
    assert not torch.equal(z.real, z.imag)
    w = torch.empty(n, dtype=dtype, device=dev).normal_(2.0, 3.0).cpu()
    assert abs(w.real.mean().item() - 2.0) < 0.05 and abs(w.imag.mean().item() - 2.0) < 0.05
    assert abs((w - (2 + 2j)).abs().pow(2).mean().item() - 9.0) < 0.2
    u = torch.empty(n, dtype=dtype, device=dev).uniform_(-1.0, 3.0).cpu()
    for p in (u.real, u.imag):
        assert p.min().item() >= -1.0 and p.max().item() < 3.0
        assert abs(p.mean().item() - 1.0) < 0.03
    r = torch.randn(3, 4, dtype=dtype, device=dev)
    assert torch.randn_like(r).dtype == dtype


# ---- models ------------------------------------------------------------------------------------

def _rotary(xq, freqs):
    """Llama's rotary embedding (apply_rotary_emb)."""
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)[:, None, :]
    xc = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs_cis).flatten(2).type_as(xq)


def test_llama_rotary_embedding():
    seq, heads, dim = 6, 2, 8
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    freqs = torch.outer(torch.arange(seq).float(), inv)
    xq = make((seq, heads, dim))
    check(_rotary, xq, freqs)
    check_grad(_rotary, xq, freqs)


# ---- the other ops whose entries say TT_LF_COMPLEX (facts beside the tables in core/lower) ----

def _idx(*v):
    return torch.tensor(v)


_ALLOWED = {
    "mv": lambda a, b: a @ b[0], "dot": lambda a, b: torch.dot(a[0], b[1]),
    "vdot": lambda a, b: torch.vdot(a[0], b[1]),
    "addmm": lambda a, b: torch.addmm(a[:, :3], a, b.T[:, :3], beta=0.5, alpha=1 - 2j),
    "baddbmm": lambda a, b: torch.baddbmm(a[None, :, :3], a[None], b.T[None, :, :3], alpha=2),
    "addmv": lambda a, b: torch.addmv(a[0, :3], a[:3], b[0], beta=2j),
    "addbmm": lambda a, b: torch.addbmm(a[:, :3], a[None], b.T[None, :, :3]),
    "addr": lambda a, b: torch.addr(a, a[:, 0], b[0], alpha=0.5),
    "any_all": lambda a, b: (torch.where(a.real > 0, a, 0).any(1), (a * 0).all(), a.all(0)),
    "count_nonzero": lambda a, b: torch.where(a.real > 0, a, 0).count_nonzero(1),
    "norm": lambda a, b: (torch.linalg.vector_norm(a), torch.linalg.vector_norm(a, 1, dim=1),
                          torch.linalg.vector_norm(a, float("inf")), a.norm(3), torch.linalg.norm(a),
                          torch.dist(a, b)),
    "trace": lambda a, b: torch.trace(a), "cross": lambda a, b: torch.linalg.cross(a[:, :3], b[:, :3]),
    "pad_reflect": lambda a, b: torch.nn.functional.pad(a[None], (2, 1), mode="reflect"),
    "pad_replicate": lambda a, b: torch.nn.functional.pad(a[None, None], (1, 2, 2, 0), mode="replicate"),
    "channel_shuffle": lambda a, b: torch.nn.functional.channel_shuffle(a.reshape(1, 4, 3, 1), 2),
    "eye": lambda a, b: torch.eye(3, dtype=a.dtype, device=a.device) * a[0, 0],
    "index_add": lambda a, b: a.index_add(0, _idx(2, 0).to(a.device), b[:2], alpha=2),
    "index_copy": lambda a, b: a.index_copy(1, _idx(3, 1).to(a.device), b[:, :2]),
    "index_fill": lambda a, b: a.index_fill(1, _idx(0, 2).to(a.device), 1.5 - 1j),
    "scatter_add": lambda a, b: a.scatter_add(0, _idx(2, 0, 1, 1).to(a.device)[None].expand(2, 4), b[:2]),
    "put_take": lambda a, b: (a.put(_idx(5, 0).to(a.device), b[0, :2], accumulate=True),
                              a.take(_idx(7, 1, 11).to(a.device))),
    "masked_scatter": lambda a, b: a.masked_scatter(a.real > 0, b),
    "masked_fill_": lambda a, b: a.clone().masked_fill_(a.real > 0, 2j),
    "index_put_acc": lambda a, b: a.index_put((_idx(1, 1, 0).to(a.device),), b[:3], accumulate=True),
    "silu": lambda a, b: torch.nn.functional.silu(a),
    # lerp: |weight| < 0.5 picks the formula, as PyTorch's kernel does (weights on both sides)
    "lerp": lambda a, b: torch.lerp(a, b, a * 0.45),
    "lerp_scalar": lambda a, b: (torch.lerp(a, b, 0.7 + 0.2j), torch.lerp(a, b, 0.25)),
    "lerp_": lambda a, b: a.clone().lerp_(b, b[0] * 0.5),
}


@pytest.mark.parametrize("name", sorted(_ALLOWED))
def test_allowed_ops(name):
    check(_ALLOWED[name], cmake((3, 4)), cmake((3, 4), seed=5))


@pytest.mark.parametrize("fn", [
    lambda x: torch.view_as_real(torch.complex(x, x.flip(0)).tanh()),
    lambda x: torch.view_as_real(torch.complex(x, x.flip(0)).sigmoid()),
    lambda x: torch.view_as_real(torch.nn.functional.pad(torch.complex(x, x)[None], (2, 1), mode="reflect")),
    lambda x: torch.view_as_real(torch.nn.functional.pad(torch.complex(x, -x)[None], (1, 2), mode="replicate")),
    lambda x: torch.view_as_real(torch.complex(x, x.flip(0)).unfold(0, 2, 1)),
    lambda x: torch.linalg.vector_norm(torch.complex(x, x.flip(0))),
    lambda x: torch.view_as_real(torch.complex(x, x.flip(0))[torch.tensor([0, 2, 2], device=x.device)]),
    lambda x: torch.view_as_real(torch.lerp(torch.complex(x, x.flip(0)), torch.complex(-x, x), torch.complex(x, x) * 0.4)),
], ids=["tanh", "sigmoid", "reflect_pad", "replicate_pad", "unfold", "norm", "index", "lerp"])
def test_complex_backward_ops(fn):
    """tanh / sigmoid backward (conjugate derivatives), the pad / unfold /
    index backward ops and a norm's gradient through complex intermediates."""
    check_grad(fn, make((5,)))


@pytest.mark.parametrize("case", ["same", "real_src", "complex_to_real", "broadcast"])
def test_functional_copy_of_complex(case):
    """aten::copy (the functional copy_ of torch.compile's graphs) on complex
    tensors: src converted to self's dtype (complex to real keeps the real
    part, as CPU does, with its warning) and broadcast to its shape."""
    z, z2, r = cmake((3, 4)), cmake((3, 4), seed=5), make((3, 4), seed=6)
    a, b = {"same": (z, z2), "real_src": (z, r), "complex_to_real": (r, z), "broadcast": (z, z2[0])}[case]
    want = torch.ops.aten.copy(a, b)
    got = torch.ops.aten.copy(a.to(dev), b.to(dev))
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)


@pytest.mark.parametrize("fn", [
    lambda x: torch.view_as_real(torch.fft.rfft(x)),
    lambda x: torch.view_as_real(torch.fft.rfft2(x.view(2, 4))),
    lambda x: torch.view_as_real(torch.fft.ihfft(x).resolve_conj()),
], ids=["rfft", "rfft2", "ihfft"])
def test_compiled_fft_backward(fn):
    """The backward graphs of real-to-complex FFTs under torch.compile copy a
    complex gradient into a zero-padded buffer (aten::copy): found by the
    OpInfo sweep under torch.compile."""
    x = make((8,))
    xc, xd = x.clone().requires_grad_(), x.to(dev).requires_grad_()
    w = make(tuple(fn(x).shape), seed=3)
    (fn(xc) * w).sum().backward()
    torch._dynamo.reset()
    (torch.compile(fn, backend="tpu", fullgraph=True)(xd) * w.to(dev)).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5)


# ---- log-sum-exp family, sinc, linspace, renorm (complex_math.c: CPU's complex step) -------

_INF, _NAN = float("inf"), float("nan")
_CDTYPES = [torch.complex64, torch.complex128]


def _edges(dtype):
    """Rows of edge values: infinities and NaNs in either part, large magnitudes (no
    two finite real parts further apart than ~87: CPU's complex64 log1p gives NaN for
    the subnormal exp(min - max) there, where this lowering gives max)."""
    rows = [[1 + 2j, _INF + 1j, -1 + 0.5j], [-_INF + 1j, -_INF + 3j, -_INF - 2j],
            [complex(_NAN, 1), 2 + 0j, 1j], [_INF + 0j, 3 - 1j, 0j], [1e30 + 1j, 1e30 - 1j, -1e30 + 2j],
            [complex(1, _NAN), 0j, 1 + 0j], [80 + 3j, 85 - 2j, -60 + 1j]]
    return torch.tensor(rows, dtype=dtype)


@pytest.mark.parametrize("dtype", _CDTYPES)
def test_logsumexp(dtype):
    x = cmake((4, 5, 3), dtype)
    for dim, keep in [(0, False), (1, True), ((0, 2), False), (-1, False)]:
        check(lambda t: torch.logsumexp(t, dim, keepdim=keep), x)
    check(lambda t: torch.logsumexp(t * 40, 1), x)              # large magnitudes
    check(lambda t: torch.logsumexp(t.transpose(0, 2), 1), x)   # non-contiguous
    check(lambda t: torch.logsumexp(t, 1), _edges(dtype))
    check(lambda t: torch.logsumexp(t, 0), torch.empty(0, 3, dtype=dtype))
    check(lambda t: torch.logsumexp(t, 1), torch.empty(0, 3, dtype=dtype))


@pytest.mark.parametrize("dtype", _CDTYPES)
def test_logsumexp_grad(dtype):
    x = cmake((3, 4), dtype)
    xc, xd = x.clone().requires_grad_(True), x.to(dev).requires_grad_(True)
    w = cmake((3,), dtype, seed=7)
    (torch.logsumexp(xc, 1) * w).real.sum().backward()
    (torch.logsumexp(xd, 1) * w.to(dev)).real.sum().backward()
    assert xd.grad is not None
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)


@pytest.mark.parametrize("dtype", _CDTYPES)
def test_logaddexp(dtype):
    a, b = cmake((3, 4), dtype), cmake((3, 4), dtype, seed=5)
    check(torch.logaddexp, a, b)
    # large magnitudes, close real parts (CPU's vectorized log1p gives NaN for subnormal
    # arguments, i.e. where the real parts differ by more than ~87 / ~708)
    check(torch.logaddexp, a * 50, a * 50 + b)
    check(lambda p, q: torch.logaddexp(p.T, q[0]), cmake((4, 3), dtype), b)   # non-contiguous, broadcast
    e = _edges(dtype)
    check(torch.logaddexp, e, e.roll(1, 1))
    check(torch.logaddexp, e, e.roll(1, 0))
    check(torch.logaddexp, torch.empty(0, 2, dtype=dtype), torch.empty(0, 2, dtype=dtype))


@pytest.mark.parametrize("dtype", _CDTYPES)
def test_logcumsumexp(dtype):
    """CPU's steps in order (scan.c): the imaginary parts are never brought back to
    (-pi, pi], so long runs with large imaginary parts must agree exactly in their
    multiples of 2 pi; every dim, non-contiguous input, edge values, empty dims."""
    x = cmake((4, 5, 3), dtype)
    for dim in (0, 1, 2, -1):
        check(lambda t: torch.logcumsumexp(t, dim), x)
    check(lambda t: torch.logcumsumexp(t.transpose(0, 2), 1), x)
    check(lambda t: torch.logcumsumexp(t * 1j * 7, 0), cmake((300, 2), dtype, seed=3))  # |imag| runs far past pi
    check(lambda t: torch.logcumsumexp(t * 30, 1), x)                                   # large magnitudes
    e = _edges(dtype)
    check(lambda t: torch.logcumsumexp(t, 1), e)
    check(lambda t: torch.logcumsumexp(t, 0), e)
    check(lambda t: torch.logcumsumexp(t, 0), torch.empty(0, 3, dtype=dtype))
    check(lambda t: torch.logcumsumexp(t, 0), torch.tensor(1 - 2j, dtype=dtype))
    out = torch.empty(4, 5, 3, dtype=dtype, device=dev)
    torch.logcumsumexp(x.to(dev), 1, out=out)
    torch.testing.assert_close(out.cpu(), torch.logcumsumexp(x, 1))


@pytest.mark.parametrize("dtype", _CDTYPES)
def test_logcumsumexp_grad(dtype):
    x = cmake((5, 4), dtype)
    xc, xd = x.clone().requires_grad_(True), x.to(dev).requires_grad_(True)
    w = cmake((5, 4), dtype, seed=7)
    (torch.logcumsumexp(xc, 0) * w).real.sum().backward()
    (torch.logcumsumexp(xd, 0) * w.to(dev)).real.sum().backward()
    assert xd.grad is not None
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)


@pytest.mark.parametrize("dtype", _CDTYPES)
def test_sinc(dtype):
    check(torch.sinc, cmake((3, 5), dtype))
    check(lambda t: torch.sinc(t.T), cmake((3, 5), dtype) * 4, rtol=1e-5, atol=1e-5)
    v = torch.tensor([0j, 0.5 + 0j, 1 + 1j, 1e-20j, 3 + 0j, -2 + 0j, _INF + 0j, 1 + 1j * _INF,
                      complex(_NAN, 0), 1e10 + 1e-3j], dtype=dtype)
    check(torch.sinc, v)
    check(torch.sinc, torch.empty(0, dtype=dtype))


@pytest.mark.parametrize("dtype", _CDTYPES)
def test_linspace(dtype):
    for s, e, n in [(1 + 2j, 5 - 3j, 5), (-1j, 1j, 8), (0.5 + 0j, -2.5 + 1e3j, 1), (1 + 1j, 2, 0), (3j, 1e6 + 1j, 33)]:
        got = torch.linspace(s, e, n, dtype=dtype, device=dev)
        want = torch.linspace(s, e, n, dtype=dtype)
        assert got.dtype == dtype
        torch.testing.assert_close(got.cpu(), want)
    # the Tensor overloads, with a dtype
    s, e = torch.tensor(1 + 2j, dtype=dtype), torch.tensor(4j, dtype=dtype)
    got = torch.linspace(s.to(dev), e.to(dev), 7, dtype=dtype)
    torch.testing.assert_close(got.cpu(), torch.linspace(s, e, 7, dtype=dtype))


def test_linspace_tensor_endpoints_infer_the_dtype():
    """Without a dtype, CPU infers it from the endpoints' values: a complex endpoint gives the
    default complex dtype (PyTorch's meta kernel says the default float dtype, which would drop
    the imaginary parts); real endpoints of any dtype give the default float dtype."""
    cases = [(torch.tensor(1 + 2j), torch.tensor(3 + 0j)), (torch.tensor(1 + 2j), 3.0), (1.0, torch.tensor(-2j)),
             (torch.tensor(1.0, dtype=torch.float64), torch.tensor(2.0, dtype=torch.float64)),
             (torch.tensor(2, dtype=torch.int64), 5.0)]
    old = torch.get_default_dtype()
    try:
        for default in (torch.float32, torch.float64):
            torch.set_default_dtype(default)
            for s, e in cases:
                want = torch.linspace(s, e, 5)
                got = torch.linspace(s.to(dev) if isinstance(s, torch.Tensor) else s,
                                     e.to(dev) if isinstance(e, torch.Tensor) else e, 5, device=dev)
                assert got.dtype == want.dtype, (s, e, default, got.dtype, want.dtype)
                torch.testing.assert_close(got.cpu(), want)
    finally:
        torch.set_default_dtype(old)


@pytest.mark.parametrize("dtype", _CDTYPES)
def test_renorm(dtype):
    x = cmake((4, 3, 2), dtype) * 3
    for p, dim, mx in [(2, 0, 1.0), (1, 1, 2.0), (float("inf"), 2, 0.5), (3, -1, 100.0)]:
        check(lambda t: torch.renorm(t, p, dim, mx), x)
    check(lambda t: torch.renorm(t.transpose(0, 2), 2, 1, 1.0), x)
    check(lambda t: t.renorm_(2, 0, 1.0), x)
    check(lambda t: torch.renorm(t, 2, 0, 1.0), torch.empty(0, 3, dtype=dtype))
