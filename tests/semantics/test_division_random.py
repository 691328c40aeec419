"""Division by a one-element divisor is IEEE division in every eager mode and
under torch.compile, randomized against CPU.

XLA's simplifier turns A / broadcast(B) into A * broadcast(1 / B), which
rounds differently (1 ulp off, and wrong at exact integer quotients for
trunc / floor). The lowerings hide such divisors: a one-element divisor is
spread by an edge pad of itself (no buffer; csrc/core/lower/elementwise,
tt__ew_spread_divisor), any other broadcast behind an optimization barrier.

Each case draws a float dtype, a shape (rank 0-4, also zero-size), a divisor
given as a Python scalar, a 0-dim tensor or a one-element tensor of any rank,
an op (true division, trunc / floor rounding, in place through a view of a
larger storage) and values with signed zeros, infinities and NaN, and requires
CPU's values bit for bit in Strict, Fused and compiled programs.
"""
import random

import pytest
import torch

import torch_tpu
from ops_util import dev

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64]
MAGS = [0.0, 1e-3, 0.1, 0.3, 1.0, 3.0, 7.0, 10.0, 1e3, float("inf"), float("nan")]


def _values(rng, shape, dtype):
    n = 1
    for d in shape:
        n *= d
    vals = [rng.choice(MAGS) * rng.choice((-1, 1)) * (1 + rng.random() if rng.random() < 0.7 else 1) for _ in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)


def _case(seed):
    rng = random.Random(seed)
    dtype = rng.choice(DTYPES)
    rank = rng.randrange(5)
    shape = tuple(rng.choice((0, 1, 2, 3, 5, 8)) if rng.random() < 0.1 else rng.choice((1, 2, 3, 5, 8, 17))
                  for _ in range(rank))
    a = _values(rng, shape, dtype)
    kind = rng.choice(("python", "0dim", "one"))
    d = _values(rng, (), dtype)
    if kind == "python":
        divisor = float(d)
    elif kind == "0dim":
        divisor = d
    else:
        divisor = d.reshape((1,) * rng.randrange(1, 4))
    op = rng.choice(("div", "trunc", "floor", "inplace"))
    return dtype, a, divisor, op


def _run(op, a, divisor, device):
    a = a.to(device)
    if isinstance(divisor, torch.Tensor):
        divisor = divisor.to(device)
    if op == "div":
        return a / divisor
    if op in ("trunc", "floor"):
        return torch.div(a, divisor, rounding_mode=op)
    # in place through a view of a larger storage
    base = torch.zeros((a.numel() + 3,), dtype=a.dtype, device=device)
    view = base[2:2 + a.numel()].view(a.shape)
    view.copy_(a)
    view.div_(divisor)
    return base


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    same = (got == want) | (got.isnan() & want.isnan())
    same &= (torch.signbit(got) == torch.signbit(want)) | got.isnan()  # signed zeros too
    return bool(same.all())


@pytest.mark.parametrize("seed", range(40))
def test_one_element_divisor_matches_cpu_in_every_mode(seed):
    dtype, a, divisor, op = _case(seed)
    want = _run(op, a, divisor, "cpu")
    got_strict = _run(op, a, divisor, dev).cpu()
    with torch_tpu.eager_mode("fused"):
        got_fused = _run(op, a, divisor, dev).cpu()
    compiled = torch.compile(lambda x, y: _run(op, x, y, x.device), backend="tpu", dynamic=False)
    torch._dynamo.reset()
    got_compiled = compiled(a.to(dev), divisor.to(dev) if isinstance(divisor, torch.Tensor) else divisor).cpu()
    for mode, got in (("strict", got_strict), ("fused", got_fused), ("compiled", got_compiled)):
        assert _same(got, want), (seed, mode, dtype, op, a.shape, divisor, a, got, want)


def test_spread_divisor_program_writes_in_place():
    """An optimizer-like in-place update divided by a 0-dim tensor keeps its
    result exact over steps (Fused: one program per step, storages donated)."""
    g = torch.Generator().manual_seed(0)
    p = torch.randn(64, 32, generator=g)
    s = torch.tensor(0.3)
    want = p.clone()
    got = p.to(dev)
    sd = s.to(dev)
    with torch_tpu.eager_mode("fused"):
        for _ in range(5):
            want.add_(want / s, alpha=-0.1)
            got.add_(got / sd, alpha=-0.1)
        got = got.cpu()
    assert torch.equal(got, want)


@pytest.mark.parametrize("seed", range(8))
def test_round_decimals_and_softplus_beta_divide_exactly(seed):
    """round(decimals=d) divides by 10^|d| and softplus(beta) by beta, both as
    spread scalars: CPU's round bit for bit, softplus within its log1p's
    rounding, in Strict and Fused, including 0-dim and zero-size inputs."""
    rng = random.Random(1000 + seed)
    dtype = rng.choice(DTYPES)
    shape = rng.choice(((), (0,), (7,), (3, 5), (2, 3, 4)))
    a = (torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
         * rng.choice((0.1, 10.0, 1e3))).to(dtype)
    d = rng.choice((-3, -2, -1, 1, 2, 3, 4))
    beta = rng.choice((0.5, 2.0, 3.3, 7.0, -1.5))
    want_r = torch.round(a, decimals=d)
    want_s = torch.nn.functional.softplus(a.double(), beta=beta)
    tol = {torch.float32: 1e-6, torch.float64: 1e-12}.get(dtype, 1e-2)
    for mode in ("strict", "fused"):
        with torch_tpu.eager_mode(mode):
            got_r = torch.round(a.to(dev), decimals=d).cpu()
            got_s = torch.nn.functional.softplus(a.to(dev), beta=beta).cpu()
        assert _same(got_r, want_r), (seed, mode, dtype, d, a, got_r, want_r)
        assert got_s.dtype == dtype and got_s.shape == a.shape
        torch.testing.assert_close(got_s.double(), want_s, rtol=tol, atol=tol)
