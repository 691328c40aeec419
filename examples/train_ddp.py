"""Data-parallel training on `tpu` with the tpu_dist backend:

    torchrun --standalone --nproc-per-node 2 examples/train_ddp.py

Each rank trains DistributedDataParallel(model) on its half of every batch;
DDP averages the gradients with tpu_dist's all-reduce, so every rank holds the
same weights. Rank 0 prints the losses beside a single-process CPU run on the
whole batches, which they equal."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import torch_tpu  # noqa: F401  (registers the tpu_dist backend)


def make_model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 4))


def batches(steps=20, n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(32, 4, generator=g)
    for _ in range(steps):
        x = torch.randn(n, 32, generator=g)
        yield x, (x @ w).argmax(1)


def main():
    dist.init_process_group(backend="tpu_dist")  # torchrun's env:// rendezvous
    rank, world = dist.get_rank(), dist.get_world_size()
    model = DDP(make_model(seed=rank).to("tpu"))  # DDP broadcasts rank 0's weights
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    ref = make_model(seed=0)
    ref_opt = torch.optim.AdamW(ref.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    for step, (x, y) in enumerate(batches()):
        part = x.shape[0] // world
        xs, ys = x[rank * part:(rank + 1) * part].to("tpu"), y[rank * part:(rank + 1) * part].to("tpu")
        opt.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
        ref_opt.zero_grad()
        ref_loss = loss_fn(ref(x), y)
        ref_loss.backward()
        ref_opt.step()
        if rank == 0 and step % 5 == 0:
            print(f"step {step:2d}  tpu ({world} ranks) {total.item():.5f}  cpu {ref_loss.item():.5f}")
    same = all(torch.allclose(p.detach().cpu(), q.detach(), atol=1e-5)
               for p, q in zip(model.module.parameters(), ref.parameters()))
    if rank == 0:
        print(f"weights equal to the single-process CPU run: {same}")
    dist.destroy_process_group()
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
