"""foreach family (csrc/core/lower/elementwise/foreach.c) against PyTorch CPU: every
_foreach_* op we lower over a list of tensors of different shapes (functional,
in-place and out= forms), and the torch.optim foreach paths (SGD, Adam, AdamW)
step for step."""
import pytest
import torch

from ops_util import FLOAT_DTYPES, check, dev, make

SHAPES = [(4, 16), (64,), (2, 4, 8), ()]


def tlist(dtype, seed, low=-3, high=3):
    return [make(s, dtype, low=low, high=high, seed=seed + i) for i, s in enumerate(SHAPES)]


SCALARS = [0.5, -2.0, 3, 1.25]

UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor",
         "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt",
         "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]
POSITIVE = {"acos": (-1, 1), "asin": (-1, 1), "log": (0.1, 5), "log10": (0.1, 5), "log1p": (0.1, 5),
            "log2": (0.1, 5), "rsqrt": (0.1, 5), "sqrt": (0.1, 5), "lgamma": (0.1, 5), "reciprocal": (0.5, 3)}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_foreach_unary(name, dtype):
    lo, hi = POSITIVE.get(name, (-3, 3))
    xs = tlist(dtype, 0, lo, hi)
    check(getattr(torch, f"_foreach_{name}"), xs)
    check(getattr(torch, f"_foreach_{name}_"), xs)


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow"]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_foreach_binary(name, dtype):
    xs, ys = tlist(dtype, 0), tlist(dtype, 10)
    if name == "pow":
        xs = tlist(dtype, 0, 0.1, 3)
    if name == "div":
        ys = tlist(dtype, 10, 0.5, 3)
    fn, fn_ = getattr(torch, f"_foreach_{name}"), getattr(torch, f"_foreach_{name}_")
    check(lambda a, b: fn(a, b), xs, ys)          # .List
    check(lambda a, b: fn_(a, b) or a, xs, ys)
    check(lambda a: fn(a, 1.5), xs)                # .Scalar
    check(lambda a: fn_(a, 2) or a, xs)
    check(lambda a: fn(a, SCALARS), xs)            # .ScalarList
    check(lambda a: fn_(a, SCALARS) or a, xs)
    if name in ("add", "sub"):
        check(lambda a, b: fn(a, b, alpha=0.5), xs, ys)
        check(lambda a, b: fn_(a, b, alpha=2) or a, xs, ys)
    if name in ("add", "mul", "div"):              # .Tensor: one 0-dim tensor for all
        t = torch.tensor(1.5, dtype=dtype)
        check(lambda a, s: fn(a, s), xs, t)
        check(lambda a, s: fn_(a, s) or a, xs, t)
    if name == "pow":                              # .ScalarAndTensor
        check(lambda b: torch._foreach_pow(0.9, b), ys)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_foreach_addc(name, dtype):
    xs, ys, zs = tlist(dtype, 0), tlist(dtype, 10), tlist(dtype, 20, 0.5, 3)
    fn, fn_ = getattr(torch, f"_foreach_{name}"), getattr(torch, f"_foreach_{name}_")
    check(lambda a, b, c: fn(a, b, c), xs, ys, zs)
    check(lambda a, b, c: fn(a, b, c, 0.3), xs, ys, zs)
    check(lambda a, b, c: fn_(a, b, c, -2) or a, xs, ys, zs)
    check(lambda a, b, c: fn(a, b, c, SCALARS), xs, ys, zs)
    check(lambda a, b, c: fn_(a, b, c, SCALARS) or a, xs, ys, zs)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_foreach_addc_tensor_scalars(name):
    xs, ys, zs = tlist(torch.float32, 0), tlist(torch.float32, 10), tlist(torch.float32, 20, 0.5, 3)
    s = torch.tensor(SCALARS, dtype=torch.float32)  # `Tensor scalars` must stay on the CPU
    check(lambda a, b, c: getattr(torch, f"_foreach_{name}")(a, b, c, s), xs, ys, zs)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_foreach_lerp_zero_copy(dtype):
    xs, ys, ws = tlist(dtype, 0), tlist(dtype, 10), tlist(dtype, 20, 0, 1)
    check(lambda a, b: torch._foreach_lerp(a, b, 0.3), xs, ys)
    check(lambda a, b: torch._foreach_lerp_(a, b, 0.8) or a, xs, ys)
    check(lambda a, b, w: torch._foreach_lerp(a, b, w), xs, ys, ws)
    check(lambda a, b: torch._foreach_lerp(a, b, [0.1, 0.6, 0.9, -0.2]), xs, ys)
    check(lambda a: torch._foreach_zero_(a) or a, xs)
    check(lambda a, b: torch._foreach_copy_(a, b) or a, xs, ys)
    check(lambda a, b: torch._foreach_copy_(a, [y.double() for y in b]) or a, xs, ys)


def test_foreach_ints_and_steps():
    steps = [torch.tensor(3.0), torch.tensor(7.0)]
    check(lambda s: torch._foreach_add_(s, 1) or s, steps)
    check(lambda s: torch._foreach_pow(0.999, s), steps)
    xi = [make((5,), torch.int64, seed=1), make((2, 3), torch.int64, seed=2)]
    check(lambda a: torch._foreach_add(a, 2), xi)
    check(lambda a: torch._foreach_mul(a, 0.5), xi)
    check(lambda a: torch._foreach_neg(a), xi)


# ---- optimizers --------------------------------------------------------------------------
def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


OPTIMS = [
    ("sgd", lambda p: torch.optim.SGD(p, lr=0.1, foreach=True)),
    ("sgd_momentum", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-2, foreach=True)),
    ("sgd_nesterov", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, foreach=True)),
    ("adam", lambda p: torch.optim.Adam(p, lr=1e-2, foreach=True)),
    ("adam_amsgrad_wd", lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True, weight_decay=0.1, foreach=True)),
    ("adam_maximize", lambda p: torch.optim.Adam(p, lr=1e-2, maximize=True, foreach=True)),
    ("adamw", lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.05, foreach=True)),
    ("adamw_amsgrad", lambda p: torch.optim.AdamW(p, lr=1e-2, amsgrad=True, foreach=True)),
]


@pytest.mark.parametrize("name,make_opt", OPTIMS, ids=[o[0] for o in OPTIMS])
def test_optimizer_foreach_steps(name, make_opt):
    cpu, tpu = make_model(0), make_model(0).to(dev)
    opt_c, opt_t = make_opt(cpu.parameters()), make_opt(tpu.parameters())
    x = make((32, 8), torch.float32, seed=5)
    y = make((32, 4), torch.float32, seed=6)
    for _ in range(4):
        for model, opt, xx, yy in ((cpu, opt_c, x, y), (tpu, opt_t, x.to(dev), y.to(dev))):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(xx), yy).backward()
            opt.step()
    for pc, pt in zip(cpu.parameters(), tpu.parameters()):
        torch.testing.assert_close(pt.detach().cpu(), pc.detach(), rtol=1e-5, atol=1e-6)


# ---- lists of 0-dim tensors --------------------------------------------------------------
# An optimizer's per-parameter step counts and bias corrections (what torch.compile'd foreach
# optimizers compute on the device): random values, every op family, several dtypes, in-place
# forms, and lists mixing dtypes or 0-dim with sized tensors.
ZD_DTYPES = [torch.float32, torch.float64, torch.bfloat16]


def zlist(dtype, seed, n=5, low=-3, high=3):
    return [make((), dtype, low=low, high=high, seed=seed + i) for i in range(n)]


@pytest.mark.parametrize("dtype", ZD_DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_foreach_zero_dim_unary(name, dtype):
    lo, hi = POSITIVE.get(name, (-3, 3))
    check(getattr(torch, f"_foreach_{name}"), zlist(dtype, 0, low=lo, high=hi))


@pytest.mark.parametrize("dtype", ZD_DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_foreach_zero_dim_binary(name, dtype):
    lo = 0.1 if name in ("pow", "div") else -3
    xs, ys = zlist(dtype, 0, low=lo), zlist(dtype, 10, low=lo)
    fn = getattr(torch, f"_foreach_{name}")
    check(lambda a, b: fn(a, b), xs, ys)
    check(lambda a: fn(a, 1.5), xs)
    check(lambda a: fn(a, SCALARS + [7]), xs)  # .ScalarList
    if name in ("add", "mul", "div"):  # .Tensor, a 0-dim float64: promotes as a 0-dim tensor
        check(lambda a, s: fn(a, s), xs, torch.tensor(1.5, dtype=torch.float64))
    if name == "pow":
        check(lambda b: torch._foreach_pow(0.9, b), ys)


def test_foreach_zero_dim_optimizer_chain():
    # AdamW's bias corrections from step counts, as torch.compile'd foreach optimizers compute them
    steps = [torch.tensor(float(s)) for s in (1, 2, 3, 10, 1000, 12345)]

    def chain(st):
        bc1 = torch._foreach_sub(torch._foreach_pow(0.9, st), 1.0)
        bc2 = torch._foreach_sqrt(torch._foreach_neg(torch._foreach_sub(torch._foreach_pow(0.999, st), 1)))
        return torch._foreach_div(torch._foreach_reciprocal(bc1), -1e-3) + torch._foreach_mul(bc2, 1e8)

    check(chain, steps)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_foreach_zero_dim_integral(dtype):
    xs, ys = zlist(dtype, 0), zlist(dtype, 10)
    if dtype != torch.bool:
        check(lambda a, b: torch._foreach_add(a, b, alpha=2), xs, ys)
        check(lambda a: torch._foreach_mul(a, 0.5), xs)  # int * float: float32
        check(lambda a: torch._foreach_neg(a), xs)
    check(lambda a, b: torch._foreach_maximum(a, b), xs, ys)


def test_foreach_zero_dim_mixed():
    mixed = [make((), torch.float32, seed=1), make((), torch.float64, seed=2), make((), torch.bfloat16, seed=3)]
    check(lambda a: torch._foreach_mul(a, 3.0), mixed)
    check(lambda a, b: torch._foreach_add(a, b), mixed, [make((), torch.float32, seed=4 + i) for i in range(3)])
    sized = [make((), torch.float32, seed=1), make((3,), torch.float32, seed=2)]
    check(lambda a: torch._foreach_sqrt(torch._foreach_abs(a)), sized)
    check(lambda a, b: torch._foreach_mul(a, b), [make((), torch.float32, seed=1)] * 2,
          [make((4,), torch.float32, seed=2), make((), torch.float32, seed=3)])


def test_foreach_zero_dim_in_place():
    xs, ys = zlist(torch.float32, 0), zlist(torch.float32, 10)
    check(lambda a, b: torch._foreach_add_(a, b, alpha=0.5) or a, xs, ys)
    check(lambda a: torch._foreach_sqrt_(torch._foreach_abs_(a) or a) or a, xs)
    check(lambda a, b: torch._foreach_lerp_(a, b, 0.25) or a, xs, ys)
    check(lambda a, b, c: torch._foreach_addcdiv_(a, b, c, 0.5) or a, xs, ys, zlist(torch.float32, 20, low=1))
    check(lambda a: torch._foreach_zero_(a) or a, xs)
