"""_foreach_* ops with Scalars of another class than the tensors (foreach.c, the bridge's
cpu_foreach_checks and Scalar conversion checks) against PyTorch CPU: every binary foreach op
with a real Scalar, a complex Scalar, a Scalar[] mixing real and complex values and a 0-dim
Tensor (on the tpu and on the CPU), in place and out of place, over lists of float32 /
bfloat16 / int64 / bool / complex64 tensors of different shapes. A float list with a complex
Scalar gives complex results computed on the device; where CPU refuses a call (a complex
result cast into a float tensor in place, clamp of complex values, a complex weight), the tpu
raises CPU's exception type and message. Values are random (seeded per case)."""
import random
import re

import pytest
import torch

DTYPES = [torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.complex64]
SHAPES = [(3, 4), (5,), ()]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "clamp_min", "clamp_max"]
FORMS = ["real", "complex", "mixed", "tensor", "tensor_cpu", "tensor_complex"]


def tlist(dtype, gen):
    if dtype == torch.bool:
        return [torch.rand(s, generator=gen) > 0.5 for s in SHAPES]
    if dtype == torch.int64:
        return [torch.randint(1, 5, s, generator=gen) for s in SHAPES]
    if dtype.is_complex:
        return [torch.complex(torch.rand(s, generator=gen) + 0.5, torch.rand(s, generator=gen) - 0.5) for s in SHAPES]
    return [(torch.rand(s, generator=gen) * 2 + 0.5).to(dtype) for s in SHAPES]


def scalar_arg(form, rng, dev):
    """(the argument on the CPU, on the tpu)"""
    real = rng.choice([rng.randint(1, 3), round(rng.uniform(0.5, 2.0), 3)])
    z = complex(round(rng.uniform(0.5, 2.0), 3), round(rng.uniform(-1.0, 1.0), 3) or 0.5)
    if form == "real":
        return real, real
    if form == "complex":
        return z, z
    if form == "mixed":
        sl = [real, z, rng.uniform(0.5, 2.0)][: len(SHAPES)]
        rng.shuffle(sl)
        return sl, sl
    t = torch.tensor(z if form == "tensor_complex" else float(real))
    return t, (t if form == "tensor_cpu" else t.to(dev))


# CPU's dispatch refusal of a dtype its kernel is not built for ('"lerp_kernel_scalar" not
# implemented for 'Long''): a NotImplementedError on the tpu too, in the lowering's words.
CPU_KERNEL_DTYPE = re.compile(r"^\"\w+\" not implemented for '\w+'$")


def outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 (any exception CPU raises, the tpu must raise)
        return None, e


def same_outcome(cpu_fn, tpu_fn):
    want, werr = outcome(cpu_fn)
    got, gerr = outcome(tpu_fn)
    if werr is not None:
        assert gerr is not None, f"CPU raised {type(werr).__name__}: {werr}; the tpu returned"
        assert type(gerr) is type(werr), f"{type(gerr).__name__}: {gerr} / CPU: {type(werr).__name__}: {werr}"
        first = str(werr).splitlines()[0]
        if not CPU_KERNEL_DTYPE.match(first):  # names a CPU kernel: the type is what carries over
            assert first in str(gerr), f"tpu: {gerr} / CPU: {werr}"
        return
    assert gerr is None, f"tpu raised {type(gerr).__name__}: {gerr}; CPU returned"
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.device.type == "tpu" and g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g.cpu(), w, equal_nan=True, check_stride=False)


def run_both(name, inplace, xs, others, arg_cpu, arg_tpu, dev, kwargs=None):
    fn = getattr(torch, f"_foreach_{name}{'_' if inplace else ''}")
    kwargs = kwargs or {}
    xc = [x.clone() for x in xs]
    xt = [x.to(dev) for x in xs]
    oc = [[t.clone() for t in o] for o in others]
    ot = [[t.to(dev) for t in o] for o in others]

    def call(x, o, a):
        r = fn(x, *o, a, **kwargs)
        return x if inplace else r

    same_outcome(lambda: call(xc, oc, arg_cpu), lambda: call(xt, ot, arg_tpu))


@pytest.mark.parametrize("inplace", [False, True], ids=["outplace", "inplace"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_scalars(name, dtype, inplace, dev):
    rng = random.Random(f"{name}{dtype}{inplace}")
    gen = torch.Generator().manual_seed(rng.randint(0, 1 << 30))
    xs = tlist(dtype, gen)
    for form in FORMS:
        if form.startswith("tensor") and name not in ("add", "mul", "div"):
            continue  # only these have a .Tensor overload (the others raise in Python's binding)
        a_cpu, a_tpu = scalar_arg(form, rng, dev)
        run_both(name, inplace, xs, [], a_cpu, a_tpu, dev)


@pytest.mark.parametrize("inplace", [False, True], ids=["outplace", "inplace"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["addcmul", "addcdiv", "lerp"])
def test_pointwise_scalars(name, dtype, inplace, dev):
    rng = random.Random(f"{name}{dtype}{inplace}")
    gen = torch.Generator().manual_seed(rng.randint(0, 1 << 30))
    xs = tlist(dtype, gen)
    others = [tlist(dtype, gen)] + ([tlist(dtype, gen)] if name != "lerp" else [])
    for form in ["real", "complex", "mixed", "packed"]:
        if form == "packed":  # the `Tensor scalars` overloads: a 1-D CPU tensor of values
            if name == "lerp":
                continue
            t = torch.tensor([rng.uniform(0.5, 2.0) for _ in SHAPES])
            a_cpu = a_tpu = t
        else:
            a_cpu, a_tpu = scalar_arg(form, rng, dev)
        run_both(name, inplace, xs, others, a_cpu, a_tpu, dev)


@pytest.mark.parametrize("name", ["add", "mul", "sub", "maximum", "lerp"])
def test_mismatched_lists(name, dev):
    """Lengths, element shapes and dtypes CPU refuses: CPU's exception and message."""
    fn, fn_ = getattr(torch, f"_foreach_{name}"), getattr(torch, f"_foreach_{name}_")
    a = [torch.ones(2, 3), torch.ones(4)]
    extra = [[torch.ones(2, 3), torch.ones(4)]] if name == "lerp" else []
    cases = [
        ([a, [torch.ones(2, 3)]], {}),                       # lengths
        ([a, [torch.ones(2, 3), torch.ones(5)]], {}),        # shapes that do not broadcast
        ([[torch.ones(1, 3), torch.ones(4)], [torch.ones(2, 3), torch.ones(4)]], {"inplace_only": True}),
        ([[torch.ones(2, 3).long(), torch.ones(4).long()], a], {"inplace_only": True}),  # dtypes
        ([[torch.ones(2, 3).bool(), torch.ones(4).bool()], [torch.ones(2, 3).bool(), torch.ones(4).bool()]], {}),
        ([[], []], {}),
    ]
    for lists, opts in cases:
        for f, inplace in ((fn, False), (fn_, True)):
            if opts.get("inplace_only") and not inplace:
                continue
            args_c = [[t.clone() for t in lst] for lst in lists]
            args_t = [[t.to(dev) for t in lst] for lst in lists]
            ex_c = [[t.clone() for t in lst] for lst in extra]
            ex_t = [[t.to(dev) for t in lst] for lst in extra]
            if name == "lerp":
                same_outcome(lambda: f(args_c[0], ex_c[0], args_c[1]) or args_c[0],
                             lambda: f(args_t[0], ex_t[0], args_t[1]) or args_t[0])
            else:
                same_outcome(lambda: f(*args_c) or args_c[0], lambda: f(*args_t) or args_t[0])


def test_complex_scalar_computed_on_device(dev):
    """A float list with a complex Scalar gives complex tensors on the tpu, not a host copy."""
    xs = [torch.randn(3, 2).to(dev), torch.randn(4).to(dev)]
    out = torch._foreach_mul(xs, 2 - 1j)
    assert [o.dtype for o in out] == [torch.complex64] * 2 and all(o.device.type == "tpu" for o in out)
    for o, x in zip(out, xs):
        torch.testing.assert_close(o.cpu(), x.cpu() * (2 - 1j))


@pytest.mark.parametrize("name", ["clamp_min", "clamp_max", "maximum", "minimum", "add"])
def test_complex_scalar_on_empty_element(name, dev):
    """A complex value for an empty element: clamp refuses it as CPU does (a check of its meta
    function, before any kernel and before the in-place cast), add computes the other elements."""
    xs = [torch.randn(3), torch.empty(0), torch.randn(2, 2)]
    sl = [1.5, 3 + 4.5j, -0.5]
    for inplace in (False, True):
        run_both(name, inplace, xs, [], sl, sl, dev)
