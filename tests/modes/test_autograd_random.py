"""Randomized autograd compositions against PyTorch on CPU.

A fixed-seed sweep builds random differentiable programs from a few leaves
(broadcasting shapes, views, in-place ops on non-leaf tensors, reductions,
matmuls, normalizations, indexing), reduces them to a weighted sum and runs
backward on both devices: every leaf's gradient must equal CPU's, in the
mode the suite runs in (Strict, or Fused with TORCH_TPU_DEFER_AND_FUSE=1),
and under torch.compile(backend="tpu").
Inputs stay in ranges where the ops are well conditioned (divisors kept
away from 0, no ties in max/min/sort), so a difference is a bug, not
rounding. More cases: TT_AUTOGRAD_FUZZ_CASES, TT_AUTOGRAD_FUZZ_COMPILED_CASES,
TT_AUTOGRAD_FUZZ_SEED.
"""

import os
import random

import pytest
import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401
from suite import cases

CASES = cases("TT_AUTOGRAD_FUZZ_CASES", 24, 192)
COMPILED_CASES = cases("TT_AUTOGRAD_FUZZ_COMPILED_CASES", 6, 24)
SEED = int(os.environ.get("TT_AUTOGRAD_FUZZ_SEED", "2026"))
SHAPES = [(4, 6), (6,), (4, 1), (1, 6), (), (3, 4, 6)]


def _unary(rng):
    """fn(x) of any shape, differentiable, well conditioned on N(0, 1)-ish x."""
    return rng.choice([
        torch.tanh, torch.sigmoid, torch.sin, torch.atan, torch.erf, F.silu, F.gelu, F.softplus,
        F.elu, F.logsigmoid, torch.relu, torch.abs,
        lambda x: F.gelu(x, approximate="tanh"),
        lambda x: F.leaky_relu(x, 0.1),
        lambda x: torch.exp(x.clamp(-4, 4)),
        lambda x: torch.log(x.abs() + 1),
        lambda x: torch.sqrt(x.abs() + 0.25),
        lambda x: torch.rsqrt(x * x + 0.5),
        lambda x: 1 / (x.abs() + 0.5),
        lambda x: x.pow(2),
        lambda x: x.pow(3) * 0.1,
        lambda x: x.clamp(-0.5, 0.7),
        lambda x: F.hardtanh(x, -0.6, 0.8),
        lambda x: x.square().mul(0.5).add(x),
        lambda x: torch.expm1(x.clamp(-3, 3)),
        lambda x: torch.log1p(x.abs()),
        lambda x: torch.cos(x) * x,
    ])


def _binary(rng):
    """fn(a, b) for broadcastable a, b."""
    return rng.choice([
        torch.add, torch.sub, torch.mul,
        lambda a, b: a / (b.abs() + 0.5),
        lambda a, b: torch.maximum(a, b * 1.0001 + 1e-3),
        lambda a, b: torch.minimum(a, b * 0.9999 - 1e-3),
        lambda a, b: torch.atan2(a, b.abs() + 0.5),
        lambda a, b: torch.lerp(a, b, 0.3),
        lambda a, b: torch.where(a > b, a * 2, b - 1),
        lambda a, b: a * torch.sigmoid(b),
        lambda a, b: torch.hypot(a, b.abs() + 0.5),
        lambda a, b: torch.addcmul(a, a, b, value=0.5),
        lambda a, b: F.smooth_l1_loss(*torch.broadcast_tensors(a, b), reduction="none"),
    ])


def _shape_op(rng, x):
    """A view, reshape, reduction, normalization or indexing of x."""
    d = x.dim()
    choices = []
    if d >= 1:
        n = x.shape[-1]
        choices += [
            lambda t: t.sum(-1, keepdim=True),
            lambda t: t.mean(-1),
            lambda t: t.amax(-1, keepdim=True),
            lambda t: t.var(-1, keepdim=True) if t.shape[-1] > 1 else t * 1.5,
            lambda t: torch.logsumexp(t, -1),
            lambda t: torch.softmax(t, -1),
            lambda t: torch.log_softmax(t, -1),
            lambda t: t.cumsum(-1),
            lambda t: t.flip(-1),
            lambda t: t.roll(1, -1),
            lambda t: F.layer_norm(t, (t.shape[-1],)),
            lambda t: t.norm(dim=-1, keepdim=True) + 0.1 if t.shape[-1] > 0 else t,
            lambda t: torch.sort(t, -1).values,
            lambda t: t.unsqueeze(0).squeeze(0),
            lambda t: F.pad(t, (1, 2), value=0.25),
        ]
        if n > 2:
            lo = rng.randrange(n - 2)
            choices += [
                lambda t: t[..., lo:lo + 2],
                lambda t: t[..., ::2],
                lambda t: t.narrow(-1, lo, 2) * t[..., :1],
                lambda t: torch.topk(t, 2, -1).values,
                lambda t: t.index_select(-1, torch.tensor([lo, 0, lo + 1], device=t.device)),
            ]
            choices += [
                lambda t: torch.cummax(t, -1).values,
                lambda t: torch.logcumsumexp(t, -1),
                lambda t: torch.diff(t, dim=-1),
                lambda t: t.unfold(-1, 2, 1).sum(-1),
                lambda t: t.repeat_interleave(2, -1)[..., 1:],
                lambda t: torch.stack(t.split(2, -1)[:1] * 2, 0).sum(0),
                lambda t: t.scatter_add(-1, torch.tensor([lo + 1, 0], device=t.device).expand(
                    *t.shape[:-1], 2).contiguous(), t[..., :2] * 3),
                lambda t: t.index_add(-1, torch.tensor([lo, lo + 1], device=t.device), t[..., :2]),
                lambda t: t.gather(-1, t.argmax(-1, keepdim=True)) * t,
                lambda t: F.max_pool1d(t.reshape(-1, 1, t.shape[-1]), 2, 1).reshape(*t.shape[:-1], -1),
                lambda t: F.avg_pool1d(t.reshape(-1, 1, t.shape[-1]), 3, 1, 1).reshape(t.shape),
                lambda t: F.interpolate(t.reshape(-1, 1, t.shape[-1]), scale_factor=2, mode="linear",
                                        align_corners=False).reshape(*t.shape[:-1], -1),
                lambda t: torch.cumprod(t.tanh() * 0.5 + 1, -1),
                lambda t: F.normalize(t, dim=-1),
                lambda t: F.glu(torch.cat([t, t.flip(-1)], -1), -1),
            ]
            idx = [rng.randrange(n) for _ in range(n)]
            choices.append(lambda t: torch.gather(
                t, -1, torch.tensor(idx, device=t.device).expand(*t.shape[:-1], n).contiguous()))
    if d >= 2:
        choices += [
            lambda t: t.transpose(0, 1).contiguous().transpose(0, 1),
            lambda t: t.transpose(-1, -2) @ t,
            lambda t: t @ t.transpose(-1, -2),
            lambda t: t.reshape(-1).view(t.shape),
            lambda t: t.sum(0),
            lambda t: t.amin(0),
            lambda t: t.std(0, keepdim=True) if t.shape[0] > 1 else t,
            lambda t: torch.cat([t, t * 2], 0),
            lambda t: torch.stack([t, -t], -1).sum(-1),
        ]
    if d >= 2 and x.shape[-1] == x.shape[-2] or d == 2:
        choices += [
            lambda t: torch.tril(t) + torch.triu(t, 1) * 0.5,
            lambda t: torch.diagonal(t, 0, -2, -1) if t.shape[-1] == t.shape[-2] else t.mT,
            lambda t: torch.kron(t[..., :2, :2].contiguous(), torch.ones(2, 1, device=t.device)) if t.dim() == 2 else t,
        ]
    if d == 2:
        choices += [
            lambda t: F.conv1d(t.unsqueeze(0), torch.linspace(-1, 1, t.shape[0] * t.shape[0] * 2,
                                                             device=t.device).reshape(t.shape[0], t.shape[0], 2),
                               padding=1).squeeze(0),
            lambda t: F.embedding(torch.tensor([0, t.shape[0] - 1, 0], device=t.device), t),
            lambda t: t.masked_scatter(t > 0, t.flip(-1) * 2),
            lambda t: torch.diag_embed(t[0]) @ t.mT if t.shape[0] > 0 else t,
        ]
    if d >= 3:
        choices += [lambda t: t.permute(2, 0, 1).contiguous().permute(1, 2, 0),
                    lambda t: torch.bmm(t, t.transpose(1, 2)).sum(-1)]
    if d <= 2:
        choices += [lambda t: t.expand(2, *t.shape) * torch.tensor([1.0, -0.5], device=t.device).view(
            2, *([1] * d))]
    return rng.choice(choices) if choices else (lambda t: t * 2)


def _inplace(rng, x):
    """An in-place update of a clone of x (autograd records it on the clone)."""
    d = x.dim()
    k = rng.randrange(6)
    if k == 0 or d == 0:
        return lambda t: t.clone().mul_(1.5).add_(0.25)
    if k == 1:
        return lambda t: (lambda c: (c[..., :1].mul_(3.0), c)[1])(t.clone())
    if k == 2:
        mask = [rng.random() < 0.5 for _ in range(x.shape[-1])]
        return lambda t: t.clone().masked_fill_(torch.tensor(mask, device=t.device), 0.5)
    if k == 3:
        return lambda t: (lambda c: (c.transpose(0, -1).sigmoid_(), c)[1])(t.clone())
    if k == 4 and x.shape[-1] > 1:
        return lambda t: (lambda c: (c[..., 1:].copy_(c[..., :-1] * 2), c)[1])(t.clone())
    return lambda t: t.clone().mul_(t).tanh_()


def _program(seed):
    """Leaf shapes and a list of (kind, fn, operand indices) steps."""
    rng = random.Random(seed)
    shapes = [rng.choice(SHAPES) for _ in range(3)]
    probe = [torch.zeros(s) for s in shapes]
    steps = []
    for _ in range(rng.randrange(4, 12)):
        i = rng.randrange(len(probe))
        k = rng.random()
        if k < 0.3:
            fn, args = _unary(rng), (i,)
        elif k < 0.55:
            j = rng.randrange(len(probe))
            try:
                torch.broadcast_shapes(probe[i].shape, probe[j].shape)
            except RuntimeError:
                j = i
            fn, args = _binary(rng), (i, j)
        elif k < 0.85:
            fn, args = _shape_op(rng, probe[i]), (i,)
        else:
            fn, args = _inplace(rng, probe[i]), (i,)
        probe.append(fn(*[probe[a] for a in args]))
        steps.append((fn, args))
    weights = [torch.randn(t.shape, generator=torch.Generator().manual_seed(seed + q))
               for q, t in enumerate(probe)]
    return shapes, steps, weights


def _forward(steps, weights, leaves):
    vals = list(leaves)
    for fn, args in steps:
        vals.append(fn(*[vals[a] for a in args]))
    dev = leaves[0].device
    return sum((v * w.to(dev)).sum() for v, w in zip(vals[len(leaves):], weights[len(leaves):]))


def _run(shapes, steps, weights, seed, dev, compiled=False):
    g = torch.Generator().manual_seed(seed)
    leaves = [torch.randn(s, generator=g).to(dev).requires_grad_() for s in shapes]
    fwd = lambda *ls: _forward(steps, weights, ls)  # noqa: E731
    if compiled:
        fwd = torch.compile(fwd, backend="tpu", fullgraph=False)
    loss = fwd(*leaves)
    loss.backward()
    return loss.detach().cpu(), [leaf.grad.cpu() if leaf.grad is not None else None for leaf in leaves]


def _check(seed, compiled=False):
    shapes, steps, weights = _program(seed)
    loss_c, grads_c = _run(shapes, steps, weights, seed, "cpu")
    loss_d, grads_d = _run(shapes, steps, weights, seed, "tpu", compiled)
    torch.testing.assert_close(loss_d, loss_c, rtol=1e-4, atol=1e-4)
    for q, (gd, gc) in enumerate(zip(grads_d, grads_c)):
        assert (gd is None) == (gc is None), f"leaf {q}: grad presence differs"
        if gc is not None:
            assert gd.shape == gc.shape and gd.dtype == gc.dtype
            torch.testing.assert_close(gd, gc, rtol=1e-4, atol=1e-4, msg=lambda m: f"leaf {q}: {m}")


@pytest.mark.parametrize("case", range(CASES))
def test_random_autograd_program_matches_cpu(case):
    _check(SEED * 1000 + case)


@pytest.mark.parametrize("case", range(COMPILED_CASES))
def test_random_autograd_program_compiled_matches_cpu(case):
    """The same programs through torch.compile(backend="tpu") (AOTAutograd's
    forward and backward graphs, one program each)."""
    _check(SEED * 1000 + 500 + case, compiled=True)
