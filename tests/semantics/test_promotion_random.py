"""Type promotion and in-place result checks, randomized against CPU.

Two classes of silent wrong results found by fuzzing (stop 20):
- an op that computes integers in float (div, atan2, copysign, xlogy...) cast each
  integer operand to the promoted integer dtype first: -5 of an int32 0-dim tensor
  over a uint8 tensor became 251 (CPU: -5 / 3 = -1.67, tpu gave 83.67);
- in-place pointwise ops wrote results that CPU refuses: int8.mul_(float16 0-dim)
  truncated instead of raising "result type Half can't be cast to the desired output
  type Char", and lt_ with a larger broadcast shape resized self.

Each case draws an op, dtypes (tensor, 0-dim tensor or Python scalar operands),
shapes (broadcasting, also beyond self's shape) and values (negative ones that an
unsigned dtype cannot hold, NaN/inf/-0.0), and requires the tpu to raise where CPU
raises (leaving self untouched) and to give CPU's dtype, shape and values otherwise.
"""
import math
import random

import pytest
import torch

from ops_util import dev
from suite import sweep

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64]
SCALARS = [True, False, 1, 2, -3, 0.5, -2.5, float("inf"), float("nan"), 1 + 1j]


def make(rng, dtype, shape, nonzero=False, nonneg=False):
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    if dtype == torch.bool:
        return torch.ones(shape, dtype=torch.bool) if nonzero else torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_complex:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 3).to(dtype) + 1j
    if dtype.is_floating_point:
        t = (torch.randn(shape, generator=g, dtype=torch.float64) * 4).to(dtype)
        if nonneg:
            t = t.abs()
        if t.numel() >= 3 and not nonzero and rng.random() < 0.5:
            t.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), -0.0], dtype=dtype)
        return t
    info = torch.iinfo(dtype)
    lo, hi = (1 if nonneg or info.min == 0 else -9), 9
    t = torch.randint(lo, hi + 1, shape, generator=g, dtype=torch.int64)
    if nonzero:
        t = torch.where(t == 0, torch.ones_like(t), t)
    return t.to(dtype)


def operand(rng, shape_self, nonzero=False, nonneg=False, allow_bigger=True):
    r = rng.random()
    if r < 0.25:
        s = rng.choice([v for v in SCALARS if not (nonzero and v in (0, False))])
        if nonneg and isinstance(s, (int, float)) and not isinstance(s, bool) and s < 0:
            s = -s
        return s
    dt = rng.choice(DTYPES)
    if r < 0.45:
        return make(rng, dt, (), nonzero, nonneg)
    shapes = [shape_self, shape_self[1:], (1,) + tuple(shape_self[1:])]
    if allow_bigger:
        shapes.append((2,) + tuple(shape_self))
    return make(rng, dt, rng.choice(shapes), nonzero, nonneg)


def to_dev(x):
    return x.to(dev) if isinstance(x, torch.Tensor) else x


def same(e, g):
    assert e.dtype == g.dtype and e.shape == g.shape, f"{e.dtype}{tuple(e.shape)} vs {g.dtype}{tuple(g.shape)}"
    if e.dtype in (torch.float16, torch.bfloat16, torch.complex32):
        tol = dict(rtol=1e-2, atol=1e-2)
    elif e.dtype in (torch.float32, torch.complex64):
        tol = dict(rtol=1e-5, atol=1e-5)
    else:
        tol = dict(rtol=1e-7, atol=0)
    up = torch.complex128 if e.is_complex() else torch.float64
    torch.testing.assert_close(g.to(up), e.to(up), equal_nan=True, **tol)


# ---- binary ops, functional: integer operands promoted to float ------------------
# name -> (fn, divisor-like second operand (nonzero), nonneg operands)
BINARY = {
    "div": (torch.div, True, False), "true_divide": (torch.true_divide, True, False),
    "atan2": (torch.atan2, False, False), "copysign": (torch.copysign, False, False),
    "xlogy": (torch.xlogy, False, False), "hypot": (torch.hypot, False, False),
    "float_power": (torch.float_power, False, False), "xlog1py": (torch.special.xlog1py, False, False),
    "add": (torch.add, False, False), "sub": (torch.sub, False, False), "mul": (torch.mul, False, False),
    "remainder": (torch.remainder, True, False), "fmod": (torch.fmod, True, False),
    "floor_divide": (torch.floor_divide, True, False), "maximum": (torch.maximum, False, False),
    "fmin": (torch.fmin, False, False), "lt": (torch.lt, False, False), "eq": (torch.eq, False, False),
    "bitwise_and": (torch.bitwise_and, False, False), "logical_xor": (torch.logical_xor, False, False),
    "heaviside": (torch.heaviside, False, False), "lcm": (torch.lcm, False, False),
    "gcd": (torch.gcd, False, False), "pow": (torch.pow, False, True),
    "div_floor": (lambda a, b: torch.div(a, b, rounding_mode="floor"), True, False),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), True, False),
    "lerp": (lambda a, b: torch.lerp(a, b, 0.25), False, False),
}


def run_case(fn, args_cpu, inplace_self=None):
    """CPU first; the tpu must raise where it raises, else match."""
    try:
        exp = fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args_cpu])
        cerr = None
    except Exception as e:  # noqa: BLE001 - any CPU error is the reference
        exp, cerr = None, e
        if "not implemented for 'ComplexHalf'" in str(e) and inplace_self is None:
            # CUDA computes complex32 (a float16 tensor with a complex 0-dim tensor or Scalar):
            # in complex64, rounded once (docs/semantics.md)
            wide = [a.to(torch.complex64) if isinstance(a, torch.Tensor) and (a.is_floating_point() or a.is_complex())
                    else a for a in args_cpu]
            try:
                exp, cerr = fn(*wide).to(torch.complex32), None
            except Exception:  # noqa: BLE001 - not an op of complex numbers at all (remainder, floor division)
                pass
    dargs = [to_dev(a) for a in args_cpu]
    before = dargs[0].cpu().clone() if inplace_self is not None else None
    if cerr is not None:
        raised_at_call = False
        try:
            r = fn(*dargs)
        except Exception:
            raised_at_call = True
        else:
            try:
                (r if isinstance(r, torch.Tensor) else dargs[0]).cpu()
            except Exception:
                pass
            else:
                raise AssertionError(f"CPU raises ({str(cerr)[:120]}), the tpu does not")
        if raised_at_call and before is not None:  # a refused call leaves self as it was
            same(before, dargs[0].cpu())
        return
    got = fn(*dargs)
    if isinstance(exp, torch.Tensor):
        same(exp, got.cpu())
    if inplace_self is not None:
        assert got is dargs[0]


@pytest.mark.parametrize("seed", range(sweep(2, 8)))
def test_binary_promotion_random(seed):
    rng = random.Random(1000 + seed)
    for _ in range(120):
        name = rng.choice(sorted(BINARY))
        fn, divisor, nonneg = BINARY[name]
        shape = rng.choice([(3, 4), (4,), ()])
        a = make(rng, rng.choice(DTYPES), shape, nonneg=nonneg)
        b = operand(rng, shape, nonzero=divisor, nonneg=nonneg)
        args = [a, b]
        if isinstance(b, torch.Tensor) and rng.random() < 0.3:
            args = [b, make(rng, rng.choice(DTYPES), shape, nonzero=divisor, nonneg=nonneg)]
        try:
            run_case(fn, args)
        except AssertionError as e:
            raise AssertionError(f"{name}{tuple(describe(x) for x in args)}: {e}") from None


def test_mixed_integer_true_division_repro():
    """The repro: an int32 0-dim tensor over a uint8 tensor (and back)."""
    x, y = torch.tensor(-5, dtype=torch.int32), torch.tensor([3], dtype=torch.uint8)
    for f in (torch.div, torch.atan2, torch.copysign, torch.xlogy, torch.true_divide):
        same(f(x, y), f(x.to(dev), y.to(dev)).cpu())
        same(f(y, x), f(y.to(dev), x.to(dev)).cpu())
    u, i = torch.tensor(250, dtype=torch.uint8), torch.tensor([-3], dtype=torch.int8)
    same(u / i, (u.to(dev) / i.to(dev)).cpu())


def describe(x):
    return (x.dtype, tuple(x.shape)) if isinstance(x, torch.Tensor) else x


# ---- in-place pointwise ops: shape and result-type checks -------------------------
# name -> (fn(self, *others), number of other operands, divisor-like, nonneg)
INPLACE = {
    "add_": (lambda s, o: s.add_(o), 1, False, False), "sub_": (lambda s, o: s.sub_(o), 1, False, False),
    "mul_": (lambda s, o: s.mul_(o), 1, False, False), "div_": (lambda s, o: s.div_(o), 1, True, False),
    "div_floor_": (lambda s, o: s.div_(o, rounding_mode="floor"), 1, True, False),
    "remainder_": (lambda s, o: s.remainder_(o), 1, True, False), "fmod_": (lambda s, o: s.fmod_(o), 1, True, False),
    "pow_": (lambda s, o: s.pow_(o), 1, False, True), "atan2_": (lambda s, o: s.atan2_(o), 1, False, False),
    "copysign_": (lambda s, o: s.copysign_(o), 1, False, False), "xlogy_": (lambda s, o: s.xlogy_(o), 1, False, False),
    "hypot_": (lambda s, o: s.hypot_(o), 1, False, False), "float_power_": (lambda s, o: s.float_power_(o), 1, False, True),
    "lt_": (lambda s, o: s.lt_(o), 1, False, False), "eq_": (lambda s, o: s.eq_(o), 1, False, False),
    "logical_and_": (lambda s, o: s.logical_and_(o), 1, False, False),
    "bitwise_or_": (lambda s, o: s.bitwise_or_(o), 1, False, False),
    "floor_divide_": (lambda s, o: s.floor_divide_(o), 1, True, False),
    "clamp_min_": (lambda s, o: s.clamp_min_(o), 1, False, False),
    "clamp_": (lambda s, lo, hi: s.clamp_(lo, hi), 2, False, False),
    "lerp_": (lambda s, o: s.lerp_(o, 0.5), 1, False, False),
    "addcmul_": (lambda s, a, b: s.addcmul_(a, b, value=2), 2, False, False),
    "addcdiv_": (lambda s, a, b: s.addcdiv_(a, b), 2, True, False),
    "masked_fill_": (lambda s, m: s.masked_fill_(m if isinstance(m, torch.Tensor) and m.dtype == torch.bool
                                                 else torch.tensor(True), 2.5), 1, False, False),
    "sqrt_": (lambda s: s.sqrt_(), 0, False, True), "sin_": (lambda s: s.sin_(), 0, False, False),
    "abs_": (lambda s: s.abs_(), 0, False, False), "neg_": (lambda s: s.neg_(), 0, False, False),
    "floor_": (lambda s: s.floor_(), 0, False, False), "sigmoid_": (lambda s: s.sigmoid_(), 0, False, False),
    "logical_not_": (lambda s: s.logical_not_(), 0, False, False), "sign_": (lambda s: s.sign_(), 0, False, False),
    "reciprocal_": (lambda s: s.reciprocal_(), 0, True, False),
}


# Where CUDA accepts what the CPU refuses, the device computes what CUDA computes
# (docs/semantics.md): the in-place op's result on CUDA, by self's dtype.
CUDA_ACCEPTS = {("abs_", torch.bool): lambda s: s.clone()}  # abs of bool: unchanged


@pytest.mark.parametrize("seed", range(4))
def test_inplace_checks_random(seed):
    rng = random.Random(2000 + seed)
    for _ in range(120):
        name = rng.choice(sorted(INPLACE))
        fn, nother, divisor, nonneg = INPLACE[name]
        shape = rng.choice([(3, 4), (4,), ()])
        s = make(rng, rng.choice(DTYPES), shape, nonzero=divisor and nother == 0, nonneg=nonneg)
        if rng.random() < 0.2 and s.dim() == 2:
            s = s.t().contiguous().t()  # a column-major self
        others = [operand(rng, shape, nonzero=divisor and k == nother - 1, nonneg=nonneg) for k in range(nother)]
        args = [s] + others
        cuda = CUDA_ACCEPTS.get((name, s.dtype))
        if cuda is not None:
            d = to_dev(s)
            assert fn(d, *[to_dev(o) for o in others]) is d
            same(cuda(s), d.cpu())
            continue
        try:
            run_case(fn, args, inplace_self=True)
        except AssertionError as e:
            raise AssertionError(f"{name}{tuple(describe(x) for x in args)}: {e}") from None


def test_inplace_repro():
    """int8.mul_(float16 0-dim) and lt_ with a larger broadcast shape raise as on CPU, self untouched."""
    a = torch.tensor([1, 2, 3], dtype=torch.int8, device=dev)
    with pytest.raises(RuntimeError, match="result type Half can't be cast to the desired output type Char"):
        a.mul_(torch.tensor(2.5, dtype=torch.float16, device=dev))
    with pytest.raises(RuntimeError, match="can't be cast"):
        a.mul_(2.5)
    assert a.cpu().tolist() == [1, 2, 3]
    x = torch.arange(5.0, device=dev)
    with pytest.raises(RuntimeError, match=r"output with shape \[5\] doesn't match the broadcast shape \[1, 5\]"):
        x.lt_(torch.zeros(1, 5, device=dev))
    assert x.shape == (5,) and x.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    f = torch.ones(3, device=dev)
    with pytest.raises(RuntimeError, match="float_power_"):
        f.float_power_(2)
    assert math.isclose(f.sum().item(), 3.0)


def test_nan_times_false_is_nan():
    """x * bool_mask keeps NaN * False = NaN and -1 * False = -0.0 (XLA rewrites
    x * convert(p) into select(p, x, 0); the lowering converts by select)."""
    a = torch.tensor([float("nan"), float("inf"), -float("inf"), -1.0, 2.0, 0.0])
    m = torch.tensor([False, False, False, False, True, True])
    da, dm = a.to(dev), m.to(dev)
    for fn in (lambda x, y: x * y, lambda x, y: y * x, lambda x, y: x.clone().mul_(y),
               lambda x, y: x * y.float(), lambda x, y: y.to(torch.float16) * x.half(),
               lambda x, y: x @ y.float(), lambda x, y: x.view(2, 3) @ y.float().view(3, 2)):
        same(fn(a, m), fn(da, dm).cpu())
    assert torch.equal(torch.signbit((da * dm).cpu()), torch.signbit(a * m))


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16])
def test_lcm_narrow_ints_wrap_like_cpu(dtype):
    """CPU computes |a / g * b| in int (C's promotion) and wraps once at the end."""
    info = torch.iinfo(dtype)
    v = torch.arange(max(info.min, -300), min(info.max, 300) + 1, 7, dtype=torch.int64).to(dtype)
    a, b = v.view(-1, 1).expand(len(v), len(v)), v.view(1, -1).expand(len(v), len(v))
    same(torch.lcm(a, b), torch.lcm(a.to(dev), b.to(dev)).cpu())
    same(torch.gcd(a, b), torch.gcd(a.to(dev), b.to(dev)).cpu())


def test_zeta_special_values_like_cpu():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, 2.0, -2.0, 0.5, 3.5],
                     dtype=torch.float64)
    q = torch.tensor([-3.0, -2.0, -1.0, 0.0, -0.0, 1.0, 2.0, 0.5, -0.5, float("inf"), -float("inf"), float("nan")],
                     dtype=torch.float64)
    X, Q = x.view(-1, 1).expand(10, 12), q.view(1, -1).expand(10, 12)
    same(torch.special.zeta(X, Q), torch.special.zeta(X.to(dev), Q.to(dev)).cpu())


def test_heaviside_dtypes_must_match():
    x = torch.tensor([-1, 0, 2], dtype=torch.int32, device=dev)
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes"):
        torch.heaviside(x, torch.tensor([1], dtype=torch.uint8, device=dev))
    same(torch.heaviside(x.cpu(), torch.tensor([5], dtype=torch.int32)),
         torch.heaviside(x, torch.tensor([5], dtype=torch.int32, device=dev)).cpu())


@pytest.mark.parametrize("src", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_float_to_int_conversion_like_cpu(src):
    """Out-of-range and NaN floats convert as CPU's x86 code does (truncate to int32 or
    int64, "integer indefinite" for what does not fit, then wrap): -2.0 -> uint8 254,
    70000.0 -> int16 4464, NaN / inf -> int64 minimum. XLA alone saturates."""
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), -2.0, -1.5, 300.0, 70000.0, -70000.0,
                      3e9, -3e9, 1e20, 255.9, -0.5, 2147483520.0, -2147483648.0, 9.2e18, -9.3e18]).to(src)
    for dst in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool):
        same(x.to(dst), x.to(dev).to(dst).cpu())
        same((x * 2).to(dst), (x.to(dev) * 2).to(dst).cpu())  # fused with its producer in Fused Eager


def test_logit_eps_rounds_to_input_dtype():
    x = torch.tensor([0.0, 1.0, 0.9995, 0.5, 1e-5])
    for dt, eps in ((torch.bfloat16, 1e-3), (torch.float16, 1e-4), (torch.float32, 1e-6)):
        same(torch.logit(x.to(dt), eps), torch.logit(x.to(dt).to(dev), eps).cpu())


def test_var_std_refuse_integers():
    for dt in (torch.int64, torch.uint8, torch.bool):
        x = torch.arange(6).to(dt).to(dev)
        for f in (torch.var, torch.std, torch.var_mean, lambda t: torch.std(t, dim=0)):
            with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
                f(x)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_pdist_nan_inf_like_cpu(p):
    """p = 0 counts a NaN difference as NaN (CPU's min(ceil(|d|), 1)); p = inf skips it
    (CPU's running max from 0)."""
    import torch.nn.functional as F
    a, b = torch.randn(4, 5), torch.randn(3, 5)
    a[0, 1], b[2, 2], a[1, 3] = float("nan"), float("inf"), float("inf")
    same(torch.cdist(a, b, p), torch.cdist(a.to(dev), b.to(dev), p).cpu())
    same(F.pdist(a, p), F.pdist(a.to(dev), p).cpu())
