"""unary and binary families (csrc/core/lower/elementwise/unary*.c, binary*.c) against
PyTorch CPU: forward over float32 / bfloat16 / int64 / bool where PyTorch
supports the dtype (where it raises, tpu must raise too), special values,
in-place and out= forms, scalars and promotion, and gradients."""
import pytest
import torch
import torch.nn.functional as F

from ops_util import ALL_DTYPES, FLOAT_DTYPES, check, check_grad, clone, dev, make, to_dev

SPECIAL = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -3.0, 20.0])


def check_or_raises(fn, *args, **tol):
    """Like check, but where PyTorch CPU raises, tpu must raise as well."""
    try:
        fn(*clone(args))
    except Exception:
        with pytest.raises(Exception):
            fn(*to_dev(args))
            torch.tpu.synchronize()
        return
    check(fn, *args, **tol)


# ---- unary ---------------------------------------------------------------------
# op -> (low, high) of the sample values (a domain where it is defined)
FLOAT_FNS = {
    "exp": (-4, 4), "exp2": (-4, 4), "expm1": (-2, 2), "log": (0.05, 9), "log2": (0.05, 9),
    "log10": (0.05, 9), "log1p": (-0.9, 5), "sqrt": (0, 9), "rsqrt": (0.1, 9), "sin": (-4, 4),
    "cos": (-4, 4), "tan": (-1.3, 1.3), "tanh": (-4, 4), "sigmoid": (-6, 6), "asin": (-1, 1),
    "acos": (-1, 1), "atan": (-6, 6), "sinh": (-4, 4), "cosh": (-4, 4), "asinh": (-6, 6),
    "acosh": (1, 6), "atanh": (-0.99, 0.99), "erf": (-3, 3), "erfc": (-3, 3), "erfinv": (-0.99, 0.99),
    "lgamma": (0.1, 6), "digamma": (0.1, 6), "reciprocal": (0.2, 5), "deg2rad": (-200, 200),
    "rad2deg": (-4, 4),
}
SAME_FNS = ["abs", "neg", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "relu"]
PRED_FNS = ["isnan", "isinf", "isposinf", "isneginf", "signbit", "logical_not", "bitwise_not"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", sorted(FLOAT_FNS))
def test_unary_float_fns(name, dtype):
    lo, hi = FLOAT_FNS[name]
    x = make((4, 32), dtype, low=lo, high=hi) if dtype.is_floating_point else make((4, 32), dtype, low=0, high=4)
    check_or_raises(getattr(torch, name), x)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", SAME_FNS + PRED_FNS)
def test_unary_same_and_predicates(name, dtype):
    x = make((4, 16), dtype, low=-5, high=5)
    if (name, dtype) == ("abs", torch.bool):  # CPU refuses it; CUDA, and so the device, returns it unchanged
        torch.testing.assert_close(torch.abs(x.to("tpu")).cpu(), x)
        return
    check_or_raises(getattr(torch, name), x)


@pytest.mark.parametrize("name", sorted(FLOAT_FNS) + SAME_FNS + PRED_FNS + ["nan_to_num"])
def test_unary_special_values(name):
    x = SPECIAL.clone()
    if name in ("frac",):  # inf - trunc(inf) = nan on both, keep it
        pass
    check_or_raises(getattr(torch, name), x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unary_inplace_out_and_variants(dtype):
    x = make((4, 16), dtype, low=0.1, high=4)
    check(lambda t: t.exp_(), x)
    check(lambda t: t.sqrt_(), x)
    check(lambda t: torch.log(t, out=torch.empty_like(t)), x)
    check(lambda t: torch.round(t * 10, decimals=2), x)
    check(lambda t: torch.round(t * 1000, decimals=-2), x)
    check(lambda t: torch.nan_to_num(t.log() - 1, nan=0.5, posinf=3.0, neginf=-3.0), x)
    check(lambda t: torch.abs(t.neg(), out=torch.empty_like(t)), x)


def test_unary_int_to_float_and_out_dtypes():
    xi = make((6,), torch.int64, low=-3, high=9)
    check(torch.exp, xi)
    check(torch.sqrt, xi.abs())
    check(lambda t: torch.sqrt(t.abs(), out=torch.empty(6, dtype=torch.float64, device=t.device)), xi)
    check(lambda t: torch.logical_not(t, out=torch.empty(6, dtype=torch.float32, device=t.device)), xi)
    check(lambda t: torch.nan_to_num(t), make((6,), torch.bfloat16).log())


# ---- activations --------------------------------------------------------------------
ACTS = {
    "relu": F.relu, "relu6": F.relu6, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    "silu": F.silu, "mish": F.mish, "softplus": F.softplus, "softplus_b2": lambda t: F.softplus(t, 2.0, 3.0),
    "elu": F.elu, "elu_a": lambda t: F.elu(t, 0.4), "selu": F.selu, "celu": lambda t: F.celu(t, 0.7),
    "leaky_relu": lambda t: F.leaky_relu(t, 0.2), "hardtanh": lambda t: F.hardtanh(t, -2.0, 1.5),
    "hardsigmoid": F.hardsigmoid, "hardswish": F.hardswish, "threshold": lambda t: F.threshold(t, 0.3, -1.0),
    "hardshrink": F.hardshrink, "softshrink": lambda t: F.softshrink(t, 0.7), "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_forward_backward(name, dtype):
    x = make((6, 32), dtype, low=-5, high=5)
    check(ACTS[name], x)
    # bf16 grads: silu/mish backward have a CompositeImplicitAutograd kernel, which the
    # bridge lets decompose on tpu (bf16 rounding between the parts) while CPU runs its
    # fused f32 kernel; near zeros of the derivative that shows as a few bf16 ulps.
    check_grad(ACTS[name], x, **({} if dtype == torch.float32 else {"atol": 2e-2, "rtol": 2e-2}))


@pytest.mark.parametrize("name", ["relu", "gelu", "silu", "elu", "leaky_relu", "hardtanh", "hardsigmoid", "hardswish"])
def test_activation_inplace(name):
    fns = {"relu": lambda t: F.relu(t, inplace=True), "gelu": lambda t: torch.ops.aten.gelu_(t),
           "silu": lambda t: F.silu(t, inplace=True), "elu": lambda t: F.elu(t, inplace=True),
           "leaky_relu": lambda t: F.leaky_relu(t, 0.1, inplace=True),
           "hardtanh": lambda t: F.hardtanh(t, inplace=True), "hardsigmoid": lambda t: F.hardsigmoid(t, inplace=True),
           "hardswish": lambda t: F.hardswish(t, inplace=True)}
    check(fns[name], make((4, 16), torch.float32, low=-4, high=4))


def test_activation_int_and_special():
    xi = make((10,), torch.int64, low=-5, high=5)
    check(torch.relu, xi)
    check(lambda t: F.hardtanh(t, -2, 3), xi)
    check(lambda t: F.threshold(t, 1, 9), xi)
    for fn in ACTS.values():
        check(fn, SPECIAL[3:])  # finite and infinite values (NaN handling differs inside PyTorch's own kernels)


# ---- binary --------------------------------------------------------------------------
BINARY = {
    "add": torch.add, "add_alpha": lambda a, b: torch.add(a, b, alpha=2), "sub": torch.sub,
    "sub_alpha": lambda a, b: torch.sub(a, b, alpha=3), "rsub": lambda a, b: torch.rsub(a, b, alpha=2),
    "mul": torch.mul, "div": torch.div, "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"), "remainder": torch.remainder,
    "fmod": torch.fmod, "floor_divide": torch.floor_divide, "pow": torch.pow, "maximum": torch.maximum,
    "minimum": torch.minimum, "fmax": torch.fmax, "fmin": torch.fmin, "atan2": torch.atan2,
    "hypot": torch.hypot, "copysign": torch.copysign, "xlogy": torch.xlogy, "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
    "lshift": torch.bitwise_left_shift, "rshift": torch.bitwise_right_shift,
    "logical_and": torch.logical_and, "logical_or": torch.logical_or, "logical_xor": torch.logical_xor,
    "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
    "heaviside": torch.heaviside, "logaddexp": torch.logaddexp, "logaddexp2": torch.logaddexp2,
}
INT_DIVS = {"div_trunc", "div_floor", "remainder", "fmod", "floor_divide"}


# Sizes are multiples of 64: PyTorch's CPU kernels run a vectorized loop plus a
# scalar tail, and for bf16 the two round differently (the tail rounds between
# operations); tpu matches the vectorized loop.
def operands(name, dtype, shape_b=(4, 16)):
    a = make((4, 16), dtype, low=-6, high=6, seed=1)
    b = make(shape_b, dtype, low=-4, high=4, seed=2)
    if name in INT_DIVS and not dtype.is_floating_point and dtype != torch.bool:
        b = torch.where(b == 0, torch.ones_like(b), b)  # PyTorch raises on integer division by zero
    if name == "pow" and not dtype.is_floating_point and dtype != torch.bool:
        b = b.abs()  # negative integer powers of ints: ATen's powi (tested in C); keep this simple
    if name in ("lshift", "rshift") and dtype == torch.int64:
        b = b.abs() * 9
    if dtype.is_floating_point:
        b.view(-1)[:3] = a.view(-1)[:3]  # ties for comparisons / maximum
    return a, b


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name, dtype):
    a, b = operands(name, dtype)
    check_or_raises(BINARY[name], a, b)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast_and_special(name):
    a, b = operands(name, torch.float32, shape_b=(16,))
    check_or_raises(BINARY[name], a, b)
    s = SPECIAL.reshape(-1, 1)
    check_or_raises(BINARY[name], s, SPECIAL.reshape(1, -1))


MIXED = [
    (torch.float32, torch.int64), (torch.int64, torch.float32), (torch.bfloat16, torch.float32),
    (torch.int64, torch.bool), (torch.bool, torch.float32), (torch.bfloat16, torch.int64),
]


@pytest.mark.parametrize("da,db", MIXED)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "remainder", "pow", "maximum", "lt", "eq",
                                  "atan2", "logical_and", "bitwise_or", "floor_divide", "copysign"])
def test_binary_promotion(name, da, db):
    a = make((4, 16), da, low=1, high=5, seed=3)
    b = make((4, 16), db, low=1, high=5, seed=4)
    if db == torch.bool and name in INT_DIVS and not a.is_floating_point():
        b = torch.ones_like(b)  # False would be an integer division by zero (PyTorch raises)
    check_or_raises(BINARY[name], a, b)
    check_or_raises(BINARY[name], a, b[0, 0].clone())  # 0-dim tensor: lower promotion tier


SCALARS = [2, -3, 2.5, 0.5, True]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("s", SCALARS)
def test_binary_python_scalars(dtype, s):
    x = make((4, 16), dtype, low=1, high=6)
    fns = [lambda t: t + s, lambda t: s - t, lambda t: t * s, lambda t: t / s,
           lambda t: s ** t, lambda t: t % s, lambda t: t // s, lambda t: t > s, lambda t: t == s,
           lambda t: torch.add(t, s, alpha=2), lambda t: t & s, lambda t: torch.maximum(t, torch.tensor(s))]
    if dtype != torch.bool:  # a False divisor would be an integer division by zero
        fns.append(lambda t: torch.remainder(s, t))
    fns.append(lambda t: t ** s)  # bool ** True is bool; int ** -3 raises (also for uint8 and bool)
    fns.append(lambda t: t.clone().pow_(s))
    for fn in fns:
        check_or_raises(fn, x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64])
def test_binary_inplace_and_out(dtype):
    a, b = operands("add", dtype)
    check(lambda x, y: x.add_(y, alpha=2), a, b)
    check(lambda x, y: x.mul_(y), a, b)
    check(lambda x, y: x.sub_(3), a, b)
    check(lambda x, y: x.lt_(y), a, b)
    check(lambda x, y: torch.maximum(x, y, out=torch.empty_like(x)), a, b)
    check(lambda x, y: torch.eq(x, y, out=torch.empty(x.shape, dtype=torch.bool, device=x.device)), a, b)
    if dtype.is_floating_point:
        check(lambda x, y: x.div_(y.abs() + 1), a, b)
        check(lambda x, y: x.pow_(2), a, b)
        check(lambda x, y: x.atan2_(y), a, b)
        check(lambda x, y: torch.add(x, y, out=torch.empty_like(x)), a, b)


@pytest.mark.parametrize("name", ["add", "sub_alpha", "mul", "div", "pow", "maximum", "minimum", "atan2",
                                  "hypot", "xlogy", "copysign", "logaddexp", "fmax", "remainder"])
def test_binary_grad(name):
    a = make((3, 7), torch.float32, low=0.5, high=3, seed=5)
    b = make((3, 7), torch.float32, low=-2, high=2, seed=6)
    if name == "xlogy":
        b = b.abs() + 0.1  # check_grad compares gradients without equal_nan
    check_grad(BINARY[name], a, b)


# ---- where, clamp, lerp, addcmul/addcdiv, masked_fill, copy ---------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_where_masked_fill(dtype):
    a, b = make((4, 16), dtype, seed=7), make((4, 16), dtype, seed=8)
    m = make((4, 16), torch.bool, seed=9)
    check(torch.where, m, a, b)
    check(lambda c, x: torch.where(c, x, 2), m, a)
    check(lambda c, x: torch.where(c, 0.5, x), m, a)
    check(lambda c, x, y: torch.where(c[0], x, y), m, a, b)
    check(lambda x, c: x.masked_fill(c, 1), a, m)
    check(lambda x, c: x.masked_fill_(c[0], 0), a, m)
    check(lambda x, c, y: x.masked_fill(c, y[0, 0]), a, m, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_clamp(dtype):
    x = make((4, 16), dtype, low=-5, high=5)
    lo, hi = make((4, 16), dtype, low=-3, high=0, seed=3), make((16,), dtype, low=0, high=3, seed=4)
    check(lambda t: torch.clamp(t, -1, 2), x)
    check(lambda t: torch.clamp(t, min=-1), x)
    check(lambda t: torch.clamp(t, max=0.5), x)
    check(lambda t: torch.clamp(t, 2, 1), x)
    check(lambda t, l, h: torch.clamp(t, l, h), x, lo, hi)
    check(lambda t, l: torch.clamp(t, min=l), x, lo)
    check(lambda t, h: torch.clamp(t, max=h), x, hi)
    check(lambda t: torch.clamp_min(t, 0), x)
    check(lambda t, h: t.clamp_max_(h), x, hi)
    check(lambda t: t.clamp_(-1, 1), x)
    if dtype.is_floating_point:
        check(lambda t: torch.clamp(t, float("nan")), x)
        check(lambda t: torch.clamp(t, -1, 1), SPECIAL.to(dtype))
        check_grad(lambda t, l, h: torch.clamp(t, l, h), x, lo, hi)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_lerp_addcmul_addcdiv(dtype):
    a, b, c = make((4, 16), dtype, seed=1), make((4, 16), dtype, seed=2), make((4, 16), dtype, low=0.5, high=2, seed=3)
    w = make((4, 16), dtype, low=0, high=1, seed=4)
    for s in (0.3, 0.7, -0.2, 1.5):
        check(lambda x, y: torch.lerp(x, y, s), a, b)
    check(torch.lerp, a, b, w)
    check(lambda x, y, z: x.lerp_(y, z), a, b, w)
    check(lambda x, y, z: torch.addcmul(x, y, z, value=0.5), a, b, c)
    check(lambda x, y, z: torch.addcdiv(x, y, z, value=-2), a, b, c)
    check(lambda x, y, z: x.addcmul_(y, z), a, b, c)
    check(lambda x, y, z: x.addcdiv_(y, z, value=0.1), a, b, c)
    if dtype == torch.float32:
        check_grad(lambda x, y, z: torch.lerp(x, y, z), a, b, w)
        check_grad(lambda x, y, z: torch.addcdiv(x, y, z, value=0.5), a, b, c)
        check_grad(lambda x, y, z: torch.addcmul(x, y, z, value=2), a, b, c)


@pytest.mark.parametrize("src", ALL_DTYPES + [torch.float64])
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_copy_conversions(src, dst):
    s = make((3, 4), src, low=-4, high=4)
    check(lambda t: torch.empty(3, 4, dtype=dst, device=t.device).copy_(t), s)
    check(lambda t: torch.zeros(2, 3, 4, dtype=dst, device=t.device).copy_(t[0]), s)  # broadcast


def test_errors_match_pytorch():
    f = make((4,), torch.float32)
    for fn in [lambda t: t & t, lambda t: t << 1, lambda t: torch.div(t, t, rounding_mode="round"),
               lambda t: torch.clamp(t), lambda t: torch.addcdiv(t.long(), t.long(), t.long())]:
        with pytest.raises(Exception):
            fn(f.clone())
        with pytest.raises(Exception):
            fn(f.to(dev))
            torch.tpu.synchronize()


INT_DIVS = {
    "floor_divide": lambda a, b: a // b,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "remainder": lambda a, b: a % b,
    "fmod": torch.fmod,
    "remainder_scalar": lambda a, b: torch.remainder(a, 0),
}


@pytest.mark.parametrize("name", sorted(INT_DIVS))
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_integer_division_by_zero_raises_like_cpu(name, dtype):
    fn = INT_DIVS[name]
    a, b = torch.tensor([7, -7], dtype=dtype), torch.tensor([0, 2], dtype=dtype)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a, b)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a.to("tpu"), b.to("tpu")).cpu()
    ok = torch.tensor([3, -2], dtype=dtype)
    if name != "remainder_scalar":
        torch.testing.assert_close(fn(a.to("tpu"), ok.to("tpu")).cpu(), fn(a, ok))


@pytest.mark.parametrize("shape", [(3,), ()])
def test_integer_negative_scalar_power_raises_like_cpu(shape):
    x = torch.full(shape, 2, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        x ** -1
    with pytest.raises(RuntimeError, match="negative integer powers"):
        (x.to("tpu") ** -1).cpu()
    torch.testing.assert_close((x.to("tpu") ** 3).cpu(), x ** 3)
    torch.testing.assert_close((x.float().to("tpu") ** -1).cpu(), x.float() ** -1)


@pytest.mark.parametrize("fn", [torch.clamp_min, torch.clamp_max])
def test_clamp_min_max_bool(fn):
    a = torch.tensor([True, False, True, False])
    b = torch.tensor([True, True, False, False])
    check(fn, a, b)
