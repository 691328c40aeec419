"""Bucketed dynamic sizes against CPU: random inference functions.

A fixed-seed sweep of chains of 1-3 ops over x: [B, L, 4], compiled with
`dynamic=True` and run for several lengths L. Some ops keep positions apart
(bucketed), others mix along L (flip, roll, cumsum, sort, pooling, contractions,
reductions over L: the planner must refuse them, or the padded positions leak
into valid ones). Every run must give CPU's values, shapes, strides (of
dims of more than one element) and storage offsets. More cases: TT_BUCKET_FUZZ_CASES, TT_BUCKET_FUZZ_SEED.
"""
import os
import random

import pytest
import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401
from suite import cases

CASES = cases("TT_BUCKET_FUZZ_CASES", 16, 64)
SEED = int(os.environ.get("TT_BUCKET_FUZZ_SEED", "77"))
LENGTHS = (3, 5, 6, 2)

OPS = [
    lambda x: x * 2 + 1,
    lambda x: torch.tanh(x) * x.sum(-1, keepdim=True),
    lambda x: torch.softmax(x, -1),
    lambda x: torch.softmax(x, 1),
    lambda x: x.mean(1, keepdim=True) + x,
    lambda x: x.cumsum(1),
    lambda x: x.flip(1),
    lambda x: x.roll(1, 1),
    lambda x: x[:, 1:],
    lambda x: x[:, :-1],
    lambda x: torch.cat([x, x * 2], 1),
    lambda x: x.transpose(1, 2) @ x,
    lambda x: x @ x.transpose(1, 2),
    lambda x: F.layer_norm(x, (x.shape[-1],)),
    lambda x: x.reshape(x.shape[0], -1),
    lambda x: F.pad(x, (0, 0, 1, 0)),
    lambda x: x.sort(1).values,
    lambda x: x - x.amax(1, keepdim=True),
    lambda x: F.avg_pool1d(x.transpose(1, 2), 2, 1, padding=1).transpose(1, 2),
    lambda x: x[:, ::2],
    lambda x: torch.tril(x @ x.transpose(1, 2)) @ x,
    lambda x: x * torch.arange(x.shape[1], device=x.device).view(1, -1, 1),
    lambda x: torch.logsumexp(x, 1),
    lambda x: F.scaled_dot_product_attention(x.unsqueeze(1), x.unsqueeze(1), x.unsqueeze(1),
                                             is_causal=True).squeeze(1),
    lambda x: F.scaled_dot_product_attention(x.unsqueeze(1), x.unsqueeze(1), x.unsqueeze(1)).squeeze(1),
    lambda x: x.expand(2, *x.shape[1:]) if x.shape[0] == 1 else x + 1,
    lambda x: x[:, -1:] * x,
    lambda x: x.repeat_interleave(2, 1),
    lambda x: (x * 2)[..., 1:3],  # a view with gaps, at an offset
    lambda x: (x + 1).transpose(1, 2).transpose(1, 2),
    lambda x: (x - 1).transpose(0, 1),
    lambda x: (x * 3).unsqueeze(2).squeeze(2),
]


def _fn(chain):
    def f(x):
        for k in chain:
            x = OPS[k](x)
            if x.dim() < 3:  # back to [B, *, 1]
                x = x.reshape(x.shape[0] if x.dim() else 1, -1, 1)
        return x

    return f


@pytest.mark.parametrize("case", range(CASES))
def test_random_inference_over_dynamic_lengths_matches_cpu(case):
    rng = random.Random(SEED * 1000 + case)
    chain = [rng.randrange(len(OPS)) for _ in range(rng.randrange(1, 4))]
    batch = 1 + case % 2
    f = _fn(chain)
    torch._dynamo.reset()
    cf = torch.compile(f, backend="tpu", dynamic=True)
    with torch.no_grad():
        for L in LENGTHS:
            x = torch.randn(batch, L, 4, generator=torch.Generator().manual_seed(case * 31 + L))
            want = f(x)
            got = cf(x.to("tpu"))
            assert got.shape == want.shape, (chain, L)
            # (strides of size-1 dims aside: eager SDPA on tpu and CPU's kernel differ there)
            big = [d for d in range(want.dim()) if want.shape[d] != 1]
            assert [got.stride(d) for d in big] == [want.stride(d) for d in big] and \
                got.storage_offset() == want.storage_offset(), \
                (chain, L, got.stride(), want.stride(), got.storage_offset(), want.storage_offset())
            torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4, equal_nan=True,
                                       msg=lambda m: f"ops {chain}, L={L}: {m}")
