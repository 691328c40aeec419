"""Collectives on the devices (StableHLO programs run by PJRT), run by
tests/dist/test_device_collectives.py in a fresh process:

    python tests/dist/device_cases.py local   # 2 in-process CPU devices
    python tests/dist/device_cases.py group   # a tpu_dist group of 1, device path

`local`: torch_tpu._C._device_collective over tpu:0 and tpu:1 (the CPU
plugin's two devices of one client), randomized against CPU: every kind and
reduction, dtypes, layouts (strided, offset, neg views, in place), Strict and Fused.
`group`: TORCH_TPU_DIST_COLLECTIVES=device with world size 1, where the same
programs serve c10d's ops (the path a client across processes takes on GPUs).
Prints "PASS <name>" per part."""
import os
import random
import sys

KINDS = {"all_reduce": 0, "broadcast": 1, "reduce": 2, "all_gather": 3, "reduce_scatter": 4, "all_to_all": 5}
OPS = {"sum": 0, "prod": 1, "min": 2, "max": 3, "avg": 4}


def reference(torch, kind, op, root, xs, count):
    """What member m receives, for each m, computed on CPU from every member's input."""
    n = len(xs)
    flat = [x.reshape(-1) for x in xs]
    acc = torch.float64 if flat[0].is_floating_point() else None

    def reduce(parts):
        st = torch.stack(parts)
        if flat[0].dtype == torch.bool:
            return st.any(0) if op in ("sum", "max") else st.all(0)
        if op == "min":
            return st.amin(0)
        if op == "max":
            return st.amax(0)
        if op == "prod":
            return st.prod(0, dtype=acc).to(flat[0].dtype) if acc else st.prod(0)
        s = st.sum(0, dtype=acc).to(flat[0].dtype) if acc else st.sum(0)
        if op == "avg":
            return (s / n).to(s.dtype) if s.is_floating_point() else torch.div(s, n, rounding_mode="trunc")
        return s

    if kind == "all_reduce":
        r = reduce(flat)
        return [r] * n
    if kind == "reduce":
        r = reduce(flat)
        return [r if m == root else flat[m] for m in range(n)]
    if kind == "broadcast":
        return [flat[root]] * n
    if kind == "all_gather":
        return [torch.cat(flat)] * n
    if kind == "reduce_scatter":
        r = reduce(flat)
        return [r[m * count:(m + 1) * count] for m in range(n)]
    if kind == "all_to_all":
        return [torch.cat([f[m * count:(m + 1) * count] for f in flat]) for m in range(n)]
    raise ValueError(kind)


def make(torch, dtype, shape, gen):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype.is_floating_point:
        # halves and quarters: sums of two are exact in every float dtype
        return (torch.randint(-8, 8, shape, generator=gen) / 4).to(dtype)
    lo = 0 if dtype == torch.uint8 else -6
    return torch.randint(lo, 7, shape, generator=gen).to(dtype)


def layout(torch, x, how, device):
    """x on `device` in a given layout, with the same values."""
    if how == "contiguous":
        return x.to(device)
    if how == "strided":  # a non-contiguous view whose values read as x
        if x.dim() == 2:
            return x.t().contiguous().to(device).t()
        big = torch.zeros(2 * x.numel(), dtype=x.dtype)
        big[::2] = x
        return big.to(device)[::2]
    if how == "neg":  # a lazily negated view (the neg bit) whose values read as x
        return torch._neg_view(x.neg().to(device)) if x.dtype not in (torch.bool, torch.uint8) else x.to(device)
    if how == "offset":  # a slice of a larger storage
        big = torch.zeros(x.numel() + 3, dtype=x.dtype)
        big[2:2 + x.numel()] = x.reshape(-1)
        return big.to(device)[2:2 + x.numel()].view(x.shape)
    raise ValueError(how)


def run_local():
    import torch
    import torch_tpu
    from torch_tpu import _C

    assert torch.tpu.device_count() == 2, torch.tpu.device_count()
    ids = [_C._device_global_id(0), _C._device_global_id(1)]
    assert len(set(ids)) == 2, ids
    gen = torch.Generator().manual_seed(0)
    rnd = random.Random(0)
    dtypes = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int32, torch.int64,
              torch.uint8, torch.int8, torch.bool]
    n_cases = 0
    for mode in ("strict", "fused"):
        with torch_tpu.eager_mode(mode):
            for kind in KINDS:
                for dtype in dtypes:
                    ops = list(OPS) if kind in ("all_reduce", "reduce", "reduce_scatter") else ["sum"]
                    for op in ops:
                        if dtype == torch.bool and op == "avg":
                            continue
                        if dtype in (torch.uint8, torch.int8) and op == "prod":
                            continue  # wraps: fine on the device, not comparable to a wider reference
                        count = rnd.randint(1, 6)
                        whole = kind in ("reduce_scatter", "all_to_all")
                        n_in = count * 2 if whole else count
                        n_out = count * 2 if kind in ("all_gather", "all_to_all") else count
                        shape = (2, n_in // 2) if n_in % 2 == 0 and rnd.random() < 0.5 else (n_in,)
                        xs = [make(torch, dtype, shape, gen) for _ in range(2)]
                        order = [0, 1] if rnd.random() < 0.5 else [1, 0]  # group rank -> device
                        root = rnd.randint(0, 1)
                        how = rnd.choice(["contiguous", "strided", "offset", "neg"])
                        ins = [layout(torch, xs[r], how, f"tpu:{order[r]}") for r in range(2)]
                        in_place = n_in == n_out and rnd.random() < 0.5
                        if mode == "fused":  # pending producers: the inputs are computed in the graph
                            ins = [t.mul_(1) if dtype != torch.bool else t.logical_or_(t) for t in ins]
                        outs = ins if in_place else [
                            torch.full((n_out,), 7, dtype=dtype, device=f"tpu:{order[r]}") for r in range(2)]
                        _C._device_collective(KINDS[kind], OPS[op], root, ins, outs, [ids[d] for d in order], count)
                        want = reference(torch, kind, op, root, xs, count)
                        for r in range(2):
                            got = outs[r].cpu().reshape(-1)
                            if not torch.equal(got, want[r]):
                                raise AssertionError(f"{mode} {kind} {op} {dtype} {how} root {root} order {order} "
                                                     f"in_place {in_place} member {r}: {got} != {want[r]}")
                        n_cases += 1
    torch.tpu.synchronize()
    print(f"PASS local ({n_cases} cases)", flush=True)


def run_group():
    os.environ["TORCH_TPU_DIST_COLLECTIVES"] = "device"
    import torch
    import torch.distributed as dist
    import torch_tpu

    dist.init_process_group("tpu_dist", store=dist.HashStore(), rank=0, world_size=1)
    assert torch_tpu.distributed.collectives_path() == "device"
    t = torch.arange(6.).to("tpu")
    before = torch.tpu._get_cache_stats()["misses"]
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX, dist.ReduceOp.PRODUCT):
        dist.all_reduce(t, op=op)
    assert torch.equal(t.cpu(), torch.arange(6.))
    assert torch.tpu._get_cache_stats()["misses"] > before  # programs ran (not the host path)
    i = torch.arange(4).to("tpu")
    dist.broadcast(i, 0)
    dist.reduce(i, 0, op=dist.ReduceOp.SUM)
    assert torch.equal(i.cpu(), torch.arange(4))
    o = torch.empty(2, 3, device="tpu")
    dist.all_gather_into_tensor(o, torch.ones(2, 3).to("tpu"))
    assert torch.equal(o.cpu(), torch.ones(2, 3))
    lst = [torch.empty(3, device="tpu")]
    dist.all_gather(lst, torch.full((3,), 2.0).to("tpu"))
    assert torch.equal(lst[0].cpu(), torch.full((3,), 2.0))
    rs = torch.empty(4, device="tpu")
    dist.reduce_scatter_tensor(rs, torch.arange(4.).to("tpu"), op=dist.ReduceOp.SUM)
    assert torch.equal(rs.cpu(), torch.arange(4.))
    a2a = torch.empty(5, device="tpu")
    dist.all_to_all_single(a2a, torch.arange(5.).to("tpu"))
    assert torch.equal(a2a.cpu(), torch.arange(5.))
    # the other documented forms: a stacked output and input, PREMUL_SUM (scaled, then summed on the
    # device), bitwise ops (the host path), a reduce_scatter list; and tpu_dist's own error for a wrong size
    st = torch.empty(1, 2, 3, device="tpu")
    dist.all_gather_into_tensor(st, torch.arange(6.).view(2, 3).to("tpu"))
    assert torch.equal(st.cpu(), torch.arange(6.).view(1, 2, 3))
    rs = torch.empty(2, 3, device="tpu")
    src = torch.arange(6.).view(1, 2, 3).to("tpu")
    dist.reduce_scatter_tensor(rs, src, op=dist.ReduceOp.MAX)
    assert torch.equal(rs.cpu(), torch.arange(6.).view(2, 3)) and torch.equal(src.cpu(), torch.arange(6.).view(1, 2, 3))
    p = torch.arange(4.).to("tpu")
    dist.all_reduce(p, op=dist._make_nccl_premul_sum(2.0))
    assert torch.equal(p.cpu(), torch.arange(4.) * 2)
    dist.reduce(p, 0, op=dist._make_nccl_premul_sum(torch.tensor([0.25])))
    assert torch.equal(p.cpu(), torch.arange(4.) / 2)
    rsl = torch.empty(3, device="tpu")
    dist.reduce_scatter(rsl, [torch.arange(3.).to("tpu")], op=dist._make_nccl_premul_sum(3.0))
    assert torch.equal(rsl.cpu(), torch.arange(3.) * 3)
    b = torch.tensor([5, 6]).to("tpu")
    dist.all_reduce(b, op=dist.ReduceOp.BXOR)
    assert torch.equal(b.cpu(), torch.tensor([5, 6]))
    try:
        dist.all_gather_into_tensor(torch.empty(7, device="tpu"), torch.ones(6).to("tpu"))
    except RuntimeError as e:
        assert "tpu_dist all_gather_into_tensor" in str(e) and "stacked [1, 6]" in str(e), str(e)
    else:
        raise AssertionError("a wrong output size did not raise")
    c = torch.tensor([1 + 2j, 3 - 1j]).to("tpu")  # complex: the host path
    dist.all_reduce(c)
    assert torch.equal(c.cpu(), torch.tensor([1 + 2j, 3 - 1j]))
    # an async work on the device path: completed, its tensor readable
    w = dist.all_reduce(t, async_op=True)
    w.wait()
    assert torch.equal(t.cpu(), torch.arange(6.))
    # DDP on the device path: one step equals CPU's
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(0)
    ref = nn.Linear(4, 2)
    model = DDP(nn.Linear(4, 2).to("tpu"))
    model.module.load_state_dict(ref.state_dict())
    x = torch.randn(8, 4)
    model(x.to("tpu")).square().sum().backward()
    ref(x).square().sum().backward()
    torch.testing.assert_close(model.module.weight.grad.cpu(), ref.weight.grad, rtol=1e-5, atol=1e-5)
    dist.destroy_process_group()
    print("PASS group", flush=True)


if __name__ == "__main__":
    {"local": run_local, "group": run_group}[sys.argv[1]]()
