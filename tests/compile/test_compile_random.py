"""torch.compile(backend="tpu") against CPU eager: random programs.

A fixed-seed sweep of small functions, written out as Python source so that a
failure prints the program. Inputs: float32 `a` (4, 6), `b` (6,), int64 `c`,
bool `m` and `d`, a float32 view at an offset into a larger base. Statements mix
dtypes (promotion), broadcast, reduce, contract, copy into other layouts and
write in place: into intermediates and into the inputs themselves, through
views. Outputs are intermediates, inputs, and views of both.

Each program runs three times (the capture, then replays) on fresh values.
Every call must give CPU's outputs (values, dtypes, shapes, strides of dims of
more than one element, storage offsets), CPU's aliasing (which outputs share a
storage with which inputs and with each other) and CPU's inputs afterwards.
The training variant compares the inputs' gradients instead. The same programs also run
eagerly on the device (Strict or Fused, the mode in force), against the same checks.
More cases: TT_COMPILE_FUZZ_CASES, TT_COMPILE_FUZZ_SEED.
"""
import functools
import os
import random

import pytest
import torch

import torch_tpu  # noqa: F401
from suite import cases

CASES = cases("TT_COMPILE_FUZZ_CASES", 24, 96)
SEED = int(os.environ.get("TT_COMPILE_FUZZ_SEED", "2026"))
CALLS = 3

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

# expressions of shape (4, 6); F: a float value, I: an int64 one, M: a bool one
FLOAT = [
    "torch.tanh({F})", "{F}.exp().clamp(max=30)", "torch.relu({F})", "{F}.abs().sqrt()", "-{F}",
    "torch.sigmoid({F})", "torch.sin({F}) * 3", "{F} + {F}", "{F} * {F}", "{F} - {F}",
    "{F} / ({F}.abs() + 1)", "torch.maximum({F}, {F})", "{F} + b", "{F} * 0.5 + 2", "{F} + {I}",
    "{I} * 0.25", "torch.where({M}, {F}, {F})", "torch.where({M}, {F}, 0.5)",
    "{F}.sum(1, keepdim=True) + {F}", "{F} - {F}.amax(0)", "{F}.softmax(-1)", "{F}.cumsum(1)",
    "({F} @ {F}.t()) @ {F} / 10", "{F}.t().contiguous().t()", "{F}.flip(0)", "{F}.roll(1, 1)",
    "{F}.reshape(6, 4).t().reshape(4, 6)", "{F}[:, [5, 4, 3, 2, 1, 0]]", "{F}.half().float()",
    "{F}.mean() + {F}", "{F} * {M}", "{F}.masked_fill({M}, -1.0)", "{F}.clone()",
    "torch.cat([{F}[:, 3:], {F}[:, :3]], 1)", "{F}.var(0, keepdim=True) * {F}",
    "torch.nn.functional.layer_norm({F}, (6,))", "{F}.new_zeros(4, 6) + {F}",
]
INT = [
    "{I} + 1", "{I} * {I}", "{I} // 3", "{I} % 5", "({F} * 10).long()", "{I}.cumsum(0)",
    "{I}.amax(1, keepdim=True) - {I}", "torch.where({M}, {I}, -{I})", "{I}.flip(1)",
    "{M}.long() + {I}", "{I}.t().contiguous().t()", "({I} << 1) | 3",
]
BOOL = [
    "{F} > {F}", "{I} % 2 == 0", "{M} & ({F} > 0)", "~{M}", "{M} ^ ({I} > 0)", "{F}.isnan() | {M}",
]
# statements writing in place; {V} is the value written (a float variable)
WRITE_FLOAT = [
    "{V}[1:3].mul_(2)", "{V}[:, ::2].add_({F}[:, ::2])", "{V}.t()[1].fill_(3.0)",
    "{V}.diagonal().zero_()", "{V}.reshape(-1)[3:9].copy_({F}.reshape(-1)[0:6])",
    "{V}.clamp_(min=-1)", "{V}.add_({F})", "{V}[{M}] = 0.0", "{V}.masked_fill_({M}, 7.0)",
    "{V}[2:].sigmoid_()", "{V}.copy_({I})", "{V}.mul_(b)",
]
WRITE_INT = ["{V}[0].add_(7)", "{V}.mul_(2)", "{V}.t()[::2].neg_()"]
OUT_VIEWS = ["{V}[1:]", "{V}.t()", "{V}.diagonal()", "{V}", "{V}[:, 2:4]", "{V}.reshape(-1)",
             "{V}.unsqueeze(0)", "{V}[::2, 1::2]"]


def _program(rng, grad):
    env = {"F": ["a", "d"], "I": ["c"], "M": ["m"]}
    if grad:
        env["F"] = ["a", "d", "b.expand(4, 6)"]
    lines, n = [], [0]

    def fill(t):
        out = ""
        i = 0
        while i < len(t):
            if t[i] == "{" and t[i + 2] == "}" and t[i + 1] in "FIMV":
                out += rng.choice(env[t[i + 1]])
                i += 3
            else:
                out += t[i]
                i += 1
        return out

    def new(kind, expr):
        name = f"t{n[0]}"
        n[0] += 1
        lines.append(f"{name} = {expr}")
        env[kind].append(name)

    for _ in range(rng.randint(3, 8)):
        r = rng.random()
        if r < 0.55:
            new("F", fill(rng.choice(FLOAT)))
        elif r < 0.7:
            new("I", fill(rng.choice(INT)))
        elif r < 0.8:
            new("M", fill(rng.choice(BOOL)))
        elif r < 0.93:
            # in grad mode, only intermediates are written (a leaf that needs a gradient cannot be)
            targets = [v for v in env["F"] if v.startswith("t") or (not grad and v in ("a", "d"))]
            if targets:
                env["V"] = [rng.choice(targets)]
                lines.append(fill(rng.choice(WRITE_FLOAT)))
        else:
            targets = [v for v in env["I"] if v.startswith("t") or not grad]
            if targets:
                env["V"] = [rng.choice(targets)]
                lines.append(fill(rng.choice(WRITE_INT)))
    made = [f"t{k}" for k in range(n[0])]
    outs = rng.sample(made, min(len(made), rng.randint(1, 3)))
    if not grad:
        for _ in range(rng.randint(0, 2)):
            env["V"] = [rng.choice(made + ["a", "c", "d", "m"])]
            outs.append(fill(rng.choice(OUT_VIEWS)))
    src = "def f(a, b, c, m, d):\n" + "".join(f"    {ln}\n" for ln in lines)
    return src + f"    return ({', '.join(outs)},)\n"


def _inputs(seed, dev, grad):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(4, 6, generator=g)
    b = torch.randn(6, generator=g)
    c = torch.randint(-9, 10, (4, 6), generator=g)
    m = torch.rand(4, 6, generator=g) > 0.5
    base = torch.randn(6, 8, generator=g)
    a, b, c, m, base = (x.to(dev) for x in (a, b, c, m, base))
    if grad:
        a.requires_grad_(True)
        b.requires_grad_(True)
        base.requires_grad_(True)
    d = base[1:5, 1:7]
    return [a, b, c, m, d], base


def _check_tensor(got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    big = [k for k in range(want.dim()) if want.shape[k] > 1]
    if want.numel() > 1:
        assert [got.stride(k) for k in big] == [want.stride(k) for k in big], (what, got.stride(), want.stride())
        assert got.storage_offset() == want.storage_offset(), (what, got.storage_offset(), want.storage_offset())
    torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=1e-5, atol=1e-5, equal_nan=True,
                               msg=lambda s: f"{what}: {s}")


def _storage(t):
    return t.untyped_storage().data_ptr()


def _aliasing(outs, ins):
    """For each output: the inputs and earlier outputs it shares a storage with."""
    s_in = [_storage(x) for x in ins]
    s_out = [_storage(x) for x in outs]
    return [([k for k, s in enumerate(s_in) if s == so and outs[j].numel() and ins[k].numel()],
             [k for k in range(j) if s_out[k] == so and outs[j].numel() and outs[k].numel()])
            for j, so in enumerate(s_out)]


def _compile_fn(src):
    ns = {"torch": torch}
    exec(compile(src, "<random program>", "exec"), ns)
    return ns["f"]


@functools.lru_cache(maxsize=None)
def _cases(grad):
    rng = random.Random(SEED + (7919 if grad else 0))
    out = []
    while len(out) < CASES:
        src = _program(rng, grad)
        try:  # keep programs that CPU eager runs
            ins, base = _inputs(0, "cpu", grad)
            r = _compile_fn(src)(*ins)
            if grad:
                sum((o * 1.5).sum() for o in r if o.is_floating_point() and o.requires_grad).backward()
        except Exception:
            continue
        out.append(src)
    return out


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "eager"])
@pytest.mark.parametrize("case", range(CASES))
def test_random_programs_match_cpu(case, compiled):
    """(eager: the same programs op by op on the device, in the eager mode in force)"""
    src = _cases(False)[case]
    f = _compile_fn(src)
    cf = torch.compile(f, backend="tpu", fullgraph=True) if compiled else f
    for call in range(CALLS):
        seed = case * 101 + call
        ins_c, base_c = _inputs(seed, "cpu", False)
        ins_t, base_t = _inputs(seed, "tpu", False)
        want = f(*ins_c)
        got = cf(*ins_t)
        where = f"call {call} of\n{src}"
        assert len(got) == len(want), where
        for j, (g, w) in enumerate(zip(got, want)):
            _check_tensor(g, w, f"output {j}, {where}")
        assert _aliasing(got, ins_t) == _aliasing(want, ins_c), (_aliasing(got, ins_t), _aliasing(want, ins_c),
                                                                  where)
        for name, g, w in zip("abcmd", ins_t, ins_c):
            _check_tensor(g, w, f"input {name} after the call, {where}")
        _check_tensor(base_t, base_c, f"d's base after the call, {where}")


@pytest.mark.parametrize("case", range(CASES // 2))
def test_random_programs_train_like_cpu(case):
    src = _cases(True)[case]
    f = _compile_fn(src)
    cf = torch.compile(f, backend="tpu", fullgraph=True)
    for call in range(CALLS):
        seed = case * 103 + call
        ins_c, base_c = _inputs(seed, "cpu", True)
        ins_t, base_t = _inputs(seed, "tpu", True)
        want, got = f(*ins_c), cf(*ins_t)
        where = f"call {call} of\n{src}"
        for j, (g, w) in enumerate(zip(got, want)):
            _check_tensor(g, w, f"output {j}, {where}")
        wl = [(o * 1.5).sum() for o in want if o.is_floating_point() and o.requires_grad]
        gl = [(o * 1.5).sum() for o in got if o.is_floating_point() and o.requires_grad]
        assert len(wl) == len(gl), where
        if wl:
            sum(wl).backward()
            sum(gl).backward()
        for name, g, w in (("a", ins_t[0], ins_c[0]), ("b", ins_t[1], ins_c[1]), ("base", base_t, base_c)):
            assert (g.grad is None) == (w.grad is None), (name, where)
            if w.grad is not None:
                _check_tensor(g.grad, w.grad, f"gradient of {name}, {where}")
