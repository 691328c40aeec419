"""Reads and writes through strided views against PyTorch on CPU.

A fixed-seed randomized sweep: random sizes / strides / offsets of ranks 0-8
over a shared storage (as_strided and set_), read (clone) and written
(copy_, index_put, masked_fill). Sizes are drawn from a few shapes so that
compiled programs are reused. 200 cases in `make test`, 2000 in
`make test-full` and `make fuzz-views` (TT_VIEW_FUZZ_CASES, TT_VIEW_FUZZ_SEED).
"""

import os
import random

import pytest
import torch
from torch.testing import make_tensor

import torch_tpu  # noqa: F401
from suite import cases

CASES = cases("TT_VIEW_FUZZ_CASES", 200, 2000)
SEED = int(os.environ.get("TT_VIEW_FUZZ_SEED", "1234"))
DTYPES = [torch.float32, torch.int64, torch.int32, torch.bool, torch.float16, torch.bfloat16, torch.uint8]
STORAGE = 4096


def _view_spec(rng, rank):
    """Random sizes, strides (permuted, gapped, some 0) and offset inside STORAGE."""
    while True:
        sizes = [rng.choice([1, 2, 3, 4, 5]) for _ in range(rank)]
        order = list(range(rank))
        rng.shuffle(order)
        strides = [0] * rank
        acc = 1
        for d in reversed(order):
            if rng.random() < 0.1:
                strides[d] = 0
                continue
            strides[d] = acc * rng.choice([1, 1, 1, 2])
            acc = strides[d] * sizes[d] + rng.choice([0, 0, 1])
        span = sum((s - 1) * st for s, st in zip(sizes, strides)) + 1
        if span < STORAGE:
            return sizes, strides, rng.randrange(0, STORAGE - span + 1)


def _overlaps(sizes, strides):
    flat = torch.as_strided(torch.arange(STORAGE), sizes, strides)
    return flat.numel() != torch.unique(flat).numel()


def _cases():
    rng = random.Random(SEED)
    out = []
    for i in range(CASES):
        rank = i % 9
        out.append((rank, DTYPES[rng.randrange(len(DTYPES))], *_view_spec(rng, rank), rng.randrange(1 << 30)))
    return out


def _base(dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, (STORAGE,), generator=g).bool()
    if dtype.is_floating_point:
        return torch.randn(STORAGE, generator=g).to(dtype)
    return torch.randint(0, 100, (STORAGE,), generator=g).to(dtype)


def test_view_fuzz_reads_and_writes():
    failures = []
    for rank, dtype, sizes, strides, offset, seed in _cases():
        cpu = _base(dtype, seed)
        tpu = cpu.to("tpu")
        where = f"rank={rank} dtype={dtype} sizes={sizes} strides={strides} offset={offset}"
        # read through as_strided
        got = torch.as_strided(tpu, sizes, strides, offset).clone().cpu()
        want = torch.as_strided(cpu, sizes, strides, offset).clone()
        if not torch.equal(got, want):
            failures.append("read " + where)
            continue
        # read through set_
        s = torch.tensor((), device="tpu", dtype=dtype)
        s.set_(tpu.untyped_storage(), offset, size=sizes, stride=strides)
        if not torch.equal(s.cpu(), want):
            failures.append("set_ read " + where)
            continue
        overlapping = _overlaps(sizes, strides)
        if overlapping:
            continue  # a write through overlapping elements has no defined result
        # write: copy_
        src = _base(dtype, seed + 1)[: max(1, want.numel())][: want.numel()].reshape(sizes)
        torch.as_strided(cpu, sizes, strides, offset).copy_(src)
        s.copy_(src.to("tpu"))
        if not torch.equal(tpu.cpu(), cpu):
            failures.append("copy_ write " + where)
            continue
        # write: masked_fill_ and index_put_ through the view
        if want.numel():
            g = torch.Generator().manual_seed(seed)
            mask = torch.rand(sizes, generator=g) < 0.5
            fill = True if dtype == torch.bool else 7
            torch.as_strided(cpu, sizes, strides, offset).masked_fill_(mask, fill)
            s.masked_fill_(mask.to("tpu"), fill)
            if not torch.equal(tpu.cpu(), cpu):
                failures.append("masked_fill_ write " + where)
                continue
            if rank >= 1:
                idt = torch.int64 if seed % 2 else torch.int32
                n = sizes[0]
                ix = torch.randperm(n, generator=g)[: max(1, n // 2)]
                vals = _base(dtype, seed + 2)[: ix.numel() * (want.numel() // n)].reshape(ix.numel(), *sizes[1:])
                torch.as_strided(cpu, sizes, strides, offset).index_put_((ix,), vals)
                s.index_put_((ix.to(idt).to("tpu"),), vals.to("tpu"))
                if not torch.equal(tpu.cpu(), cpu):
                    failures.append(f"index_put_ ({idt}) write " + where)
    assert not failures, f"{len(failures)} of {CASES} cases differ from CPU, first: {failures[:5]}"


def test_high_rank_permuted_views():
    a = torch.rand(4, 2, 5, 1, 6, 2, 9, 3)
    t = a.to("tpu")
    v = t.transpose(-1, 2).transpose(-2, 3)
    assert torch.equal(v.clone().cpu(), a.transpose(-1, 2).transpose(-2, 3).clone())
    p, pc = t.permute(7, 6, 5, 4, 3, 2, 1, 0), a.permute(7, 6, 5, 4, 3, 2, 1, 0)
    assert torch.equal((p + p).cpu(), pc + pc)
    w, wc = torch.zeros_like(t), torch.zeros_like(a)
    src = torch.rand(v.shape)
    w.transpose(-1, 2).transpose(-2, 3).copy_(src.to("tpu"))
    wc.transpose(-1, 2).transpose(-2, 3).copy_(src)
    assert torch.equal(w.cpu(), wc)


def test_set_view_index_put_with_offset_and_strides():
    out = []
    for dev in ("cpu", "tpu"):
        ref = torch.arange(0.0, 24, device=dev).view(3, 8)
        s = torch.tensor((), device=dev)
        s.set_(ref.untyped_storage(), 10, size=(2, 2), stride=[7, 1])
        s[torch.tensor([[0], [1]], device=dev), torch.tensor([[0, 1], [0, 1]], device=dev)] = torch.tensor(
            [[4.0, 6], [2, 3]], device=dev
        )
        out.append(ref.cpu())
    assert torch.equal(out[0], out[1])


@pytest.mark.parametrize("idt", [torch.int32, torch.int64])
@pytest.mark.parametrize("reduce", ["mean", "prod", "amax", "amin"])
def test_index_reduce_noncontiguous(idt, reduce):
    torch.manual_seed(0)
    d = make_tensor((3, 4, 5), device="cpu", dtype=torch.int64, noncontiguous=True)
    s = make_tensor((5, 4, 5), device="cpu", dtype=torch.int64, noncontiguous=True)
    i = make_tensor(5, low=0, high=3, device="cpu", dtype=idt)
    dt = d.to("tpu")
    dt.index_reduce_(0, i.to("tpu"), s.to("tpu"), reduce, include_self=True)
    d.index_reduce_(0, i, s, reduce, include_self=True)
    assert torch.equal(dt.cpu(), d)
    assert dt.sum().item() == d.sum().item()
