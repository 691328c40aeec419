"""Cases of tests/dist/test_distributed.py, run by every rank of a 2-process group:

    python tests/dist/cases.py RANK WORLD PORT CASE[,CASE...]

Each case compares what `tpu_dist` gives on `tpu` tensors with the same
computation done on CPU in this process (every rank's input is a function of
its rank, so each rank can compute the whole expected result). A rank prints
"PASS <case>" per case and exits 0, or prints the traceback and exits 1."""
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn

import torch_tpu

DEV = "tpu"


def inp(rank, n, dtype):
    """Rank r's input: small distinct values (PRODUCT stays exact)."""
    base = torch.arange(n) % 3 + 1 + rank
    return (base * (1 if dtype == torch.int64 else 0.5)).to(dtype)


def close(got, want):
    torch.testing.assert_close(got.cpu() if isinstance(got, torch.Tensor) else got, want, rtol=1e-6, atol=1e-6)


def case_all_reduce(rank, world):
    ops = {dist.ReduceOp.SUM: lambda xs: torch.stack(xs).sum(0),
           dist.ReduceOp.MAX: lambda xs: torch.stack(xs).amax(0),
           dist.ReduceOp.MIN: lambda xs: torch.stack(xs).amin(0),
           dist.ReduceOp.PRODUCT: lambda xs: torch.stack(xs).prod(0)}
    # 7 elements travel inside the signature exchange; 3000 (> 4 KiB) in gloo's own all-reduce
    for dtype, n in ((torch.float32, 7), (torch.int64, 7), (torch.float32, 3000), (torch.int64, 3000)):
        xs = [inp(r, n, dtype) for r in range(world)]
        for op, ref in ops.items():
            t = inp(rank, n, dtype).to(DEV)
            dist.all_reduce(t, op=op)
            assert t.dtype == dtype
            close(t, ref(xs).to(dtype))
        t = inp(rank, n, dtype).to(DEV)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        s = torch.stack(xs).sum(0)
        close(t, s / world if dtype.is_floating_point else torch.div(s, world, rounding_mode="trunc"))


def case_in_place_on_device_memory(rank, world):
    # On the CPU plugins the collective works in the device buffer itself:
    # pending producers, views of the storage, later readers and the source
    # of the value must all see the right bytes.
    # (2048 floats: above the size that travels inside the signature exchange)
    want = sum(inp(r, 2048, torch.float32) * 3 for r in range(world))
    for mode in ("strict", "fused"):
        with torch_tpu.eager_mode(mode):
            a = inp(rank, 2048, torch.float32).to(DEV)
            b = a * 3  # still running (or recorded) when the collective starts
            v = b.view(32, 64)
            dist.all_reduce(b)
            close(v.t() + 1, want.view(32, 64).t() + 1)  # read through a view, by a program
            close(a, inp(rank, 2048, torch.float32))  # the producer's input is untouched
            c = b.clone()
            dist.all_reduce(b, op=dist.ReduceOp.AVG)
            close(b, want * world / world)
            close(c, want)  # a copy made before is its own buffer
            x = inp(rank, 6, torch.int64).to(DEV)
            y = x + 0
            dist.broadcast(y, src=0)
            close(y, inp(0, 6, torch.int64))
            close(x, inp(rank, 6, torch.int64))


def case_broadcast_reduce(rank, world):
    for dtype in (torch.float32, torch.int64):
        t = inp(rank, 5, dtype).to(DEV)
        dist.broadcast(t, src=1)
        close(t, inp(1, 5, dtype))
        t = inp(rank, 5, dtype).to(DEV)
        dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
        close(t, sum(inp(r, 5, dtype) for r in range(world)) if rank == 0 else inp(rank, 5, dtype))


def case_all_gather(rank, world):
    for dtype in (torch.float32, torch.int64):
        outs = [torch.zeros(2, 3, dtype=dtype, device=DEV) for _ in range(world)]
        dist.all_gather(outs, inp(rank, 6, dtype).view(2, 3).to(DEV))
        for r in range(world):
            close(outs[r], inp(r, 6, dtype).view(2, 3))
        out = torch.zeros(world * 2, 3, dtype=dtype, device=DEV)
        dist.all_gather_into_tensor(out, inp(rank, 6, dtype).view(2, 3).to(DEV))
        close(out, torch.cat([inp(r, 6, dtype).view(2, 3) for r in range(world)]))


def case_reduce_scatter(rank, world):
    for dtype in (torch.float32, torch.int64):
        full = [inp(r, 4 * world, dtype) for r in range(world)]
        want = torch.stack(full).sum(0).view(world, 4)[rank]
        out = torch.zeros(4, dtype=dtype, device=DEV)
        dist.reduce_scatter(out, [c.to(DEV) for c in full[rank].view(world, 4)])
        close(out, want)
        out = torch.zeros(4, dtype=dtype, device=DEV)
        dist.reduce_scatter_tensor(out, full[rank].to(DEV))
        close(out, want)
        out = torch.zeros(4, dtype=dtype, device=DEV)
        dist.reduce_scatter_tensor(out, full[rank].to(DEV), op=dist.ReduceOp.MAX)
        close(out, torch.stack(full).amax(0).view(world, 4)[rank])


def case_all_to_all(rank, world):
    # uneven splits: rank r sends (r + 1 + k) rows to rank k
    def rows(src, dst):
        return src + 1 + dst

    for dtype in (torch.float32, torch.int64):
        send = [torch.full((rows(rank, k), 3), 10 * rank + k, dtype=dtype) for k in range(world)]
        want = torch.cat([torch.full((rows(r, rank), 3), 10 * r + rank, dtype=dtype) for r in range(world)])
        out = torch.empty(want.shape, dtype=dtype, device=DEV)
        dist.all_to_all_single(out, torch.cat(send).to(DEV), output_split_sizes=[rows(r, rank) for r in range(world)],
                               input_split_sizes=[rows(rank, k) for k in range(world)])
        close(out, want)
        outs = [torch.empty(rows(r, rank), 3, dtype=dtype, device=DEV) for r in range(world)]
        dist.all_to_all(outs, [s.to(DEV) for s in send])
        for r in range(world):
            close(outs[r], torch.full((rows(r, rank), 3), 10 * r + rank, dtype=dtype))


R = dist.ReduceOp


def rops(dtype):
    """The reduce ops c10d gives for a dtype (the bitwise ones for integers)."""
    ops = [R.SUM, R.PRODUCT, R.MIN, R.MAX, R.AVG]
    return ops if dtype.is_floating_point else ops + [R.BAND, R.BOR, R.BXOR]


def reduced(xs, op):
    """What `op` makes of every rank's tensor xs[r], on CPU (AVG of integers truncates)."""
    if op == R.AVG:
        s = torch.stack(xs).sum(0)
        return s / len(xs) if s.is_floating_point() else torch.div(s, len(xs), rounding_mode="trunc")
    fold = {R.SUM: torch.add, R.PRODUCT: torch.mul, R.MIN: torch.minimum, R.MAX: torch.maximum,
            R.BAND: torch.bitwise_and, R.BOR: torch.bitwise_or, R.BXOR: torch.bitwise_xor}[op]
    r = xs[0]
    for x in xs[1:]:
        r = fold(r, x)
    return r


def case_output_forms(rank, world):
    """Every output form the c10d docs give, against CPU: all_gather_into_tensor into the concatenation, the
    stack, a flat or a non-contiguous output; reduce_scatter_tensor from either input form (left as it was),
    every reduce op; all_to_all_single of rows with and without split sizes (or either side's alone); gather
    and scatter of 2-d tensors at either root; all_gather and reduce_scatter of uneven parts; broadcast from
    either rank."""
    for dtype in (torch.float32, torch.int64):
        xs = [inp(r, 6, dtype).view(2, 3) for r in range(world)]
        for shape in ((world * 2, 3), (world, 2, 3), (world * 6,)):
            out = torch.full(shape, -1, dtype=dtype, device=DEV)
            dist.all_gather_into_tensor(out, xs[rank].to(DEV))
            close(out, torch.stack(xs).reshape(shape))
        out = torch.full((3, 2, world), -1, dtype=dtype, device=DEV).permute(2, 1, 0)  # the stack, strided
        dist.all_gather_into_tensor(out, xs[rank].to(DEV))
        close(out, torch.stack(xs))

        full = [inp(r, 6 * world, dtype) for r in range(world)]
        for shape in ((world * 2, 3), (world, 2, 3)):
            src = full[rank].view(shape).to(DEV)
            for op in rops(dtype):
                out = torch.full((2, 3), -1, dtype=dtype, device=DEV)
                dist.reduce_scatter_tensor(out, src, op=op)
                close(out, reduced(full, op).view(world, 2, 3)[rank])
            close(src, full[rank].view(shape))

        # rows(s, d): the rows rank s sends rank d
        for rows, with_in, with_out in ((lambda s, d: 2, False, False), (lambda s, d: s + 1 + d, True, True),
                                        (lambda s, d: d + 1, True, False), (lambda s, d: s + 1, False, True)):
            send = torch.cat([torch.full((rows(rank, k), 3), 10 * rank + k, dtype=dtype) for k in range(world)])
            want = torch.cat([torch.full((rows(r, rank), 3), 10 * r + rank, dtype=dtype) for r in range(world)])
            out = torch.full(want.shape, -1, dtype=dtype, device=DEV)
            dist.all_to_all_single(out, send.to(DEV),
                                   output_split_sizes=[rows(r, rank) for r in range(world)] if with_out else None,
                                   input_split_sizes=[rows(rank, k) for k in range(world)] if with_in else None)
            close(out, want)

        for root in range(world):
            outs = [torch.full((2, 3), -1, dtype=dtype, device=DEV) for _ in range(world)] if rank == root else None
            dist.gather(xs[rank].to(DEV), outs, dst=root)
            if rank == root:
                for r in range(world):
                    close(outs[r], xs[r])
            out = torch.full((2, 3), -1, dtype=dtype, device=DEV)
            dist.scatter(out, [(x * 2).to(DEV) for x in xs] if rank == root else None, src=root)
            close(out, xs[rank] * 2)
            t = xs[rank].to(DEV)
            dist.broadcast(t, src=root)
            close(t, xs[root])

        parts = [inp(r, 3 * (r + 1), dtype).view(r + 1, 3) for r in range(world)]  # rank r: r + 1 rows
        outs = [torch.full((r + 1, 3), -1, dtype=dtype, device=DEV) for r in range(world)]
        dist.all_gather(outs, parts[rank].to(DEV))
        for r in range(world):
            close(outs[r], parts[r])

        for size in (lambda k: 4, lambda k: 2 * (k + 1)):  # even and uneven parts
            lists = [[inp(r + 3 * k, size(k), dtype) for k in range(world)] for r in range(world)]
            for op in rops(dtype):
                out = torch.full((size(rank),), -1, dtype=dtype, device=DEV)
                dist.reduce_scatter(out, [t.to(DEV) for t in lists[rank]], op=op)
                close(out, reduced([lists[r][rank] for r in range(world)], op))


def case_reduce_ops(rank, world):
    """all_reduce and reduce (to either root) with every reduce op, small (inside the signature exchange) and
    large; PREMUL_SUM with a number or a tensor factor, also in reduce_scatter_tensor; against CPU."""
    for dtype in (torch.float32, torch.int64):
        for n in (7, 3000):
            xs = [inp(r, n, dtype) for r in range(world)]
            for op in rops(dtype):
                t = xs[rank].to(DEV)
                dist.all_reduce(t, op=op)
                close(t, reduced(xs, op))
                for root in range(world):
                    t = xs[rank].to(DEV)
                    dist.reduce(t, dst=root, op=op)
                    close(t, reduced(xs, op) if rank == root else xs[rank])
    for n in (7, 3000):
        xs = [inp(r, 2 * n, torch.float32) for r in range(world)]
        for factor, f in ((2.5, 2.5), (torch.tensor([0.5]).to(DEV), 0.5)):
            op = dist._make_nccl_premul_sum(factor)
            t = xs[rank].to(DEV)
            dist.all_reduce(t, op=op)
            close(t, sum(xs) * f)
            for root in range(world):
                t = xs[rank].to(DEV)
                dist.reduce(t, dst=root, op=op)
                close(t, sum(xs) * f if rank == root else xs[rank])
            out = torch.full((2 * n // world,), -1.0, device=DEV)
            dist.reduce_scatter_tensor(out, xs[rank].to(DEV), op=op)
            close(out, (sum(xs) * f).view(world, -1)[rank])


def case_form_errors(rank, world):
    """Arguments of the wrong form: tpu_dist's own error (naming the op and what it expected, never gloo's) on
    every rank at once, also where only one rank is wrong (the others are told which); the group goes on."""
    def expect(fn, *words):
        t0 = time.time()
        try:
            fn()
        except RuntimeError as e:
            msg = str(e)
            assert "tpu_dist" in msg and all(w in msg for w in words) and "gloo" not in msg.lower(), msg
        else:
            raise AssertionError(f"no error (expected one saying {words})")
        assert time.time() - t0 < 30

    x = torch.ones(2, 3, device=DEV)
    expect(lambda: dist.all_gather_into_tensor(torch.empty(world * 2 + 1, 3, device=DEV), x),
           "all_gather_into_tensor", f"concatenated [{world * 2}, 3] or stacked [{world}, 2, 3]", "[5, 3]")
    expect(lambda: dist.reduce_scatter_tensor(torch.empty(2, 3, device=DEV), torch.ones(world * 2 + 1, 3, device=DEV)),
           "reduce_scatter_tensor", "world_size")
    expect(lambda: dist.all_to_all_single(torch.empty(4, 3, device=DEV), torch.ones(4, 3, device=DEV),
                                          input_split_sizes=[1, 2]), "all_to_all_single", "sum to 3")
    expect(lambda: dist.all_to_all_single(torch.empty(3, 3, device=DEV), torch.ones(3, 3, device=DEV)),
           "all_to_all_single", "must divide by world_size")
    expect(lambda: dist.all_to_all_single(torch.empty(4, 2, device=DEV), torch.ones(4, 3, device=DEV)),
           "all_to_all_single", "rows")
    expect(lambda: dist.all_gather([torch.empty(2, 3, device=DEV) for _ in range(world + 1)], x),
           "all_gather", "world_size")
    expect(lambda: dist.reduce_scatter(torch.empty(2, 3, device=DEV), [x] * (world + 1)), "reduce_scatter",
           "world_size")
    expect(lambda: dist.all_reduce(torch.ones(3, device=DEV), op=dist.ReduceOp.BAND), "all_reduce", "BAND")
    # only one rank is wrong
    bad = torch.empty(world * 2 + (rank == 0), 3, device=DEV)
    expect(lambda: dist.all_gather_into_tensor(bad, x), "all_gather_into_tensor",
           "world_size" if rank == 0 else "rank 0 refused")
    outs = [torch.empty(3, 3, device=DEV) for _ in range(world)] if rank == 0 else None
    expect(lambda: dist.gather(x, outs, dst=0), "gather", "must match the input" if rank == 0 else "rank 0 refused")
    ins = [x] * (world + 1) if rank == 1 else None
    expect(lambda: dist.scatter(torch.empty(2, 3, device=DEV), ins, src=1), "scatter",
           "world_size" if rank == 1 else "rank 1 refused")
    op = dist.ReduceOp.BAND if rank == 1 else dist.ReduceOp.SUM
    expect(lambda: dist.all_reduce(torch.ones(3, device=DEV), op=op), "all_reduce",
           "rank 1 refused" if rank == 0 else "BAND, BOR and BXOR need integer")
    t = torch.ones(3, device=DEV)
    dist.all_reduce(t)
    close(t, torch.full((3,), float(world)))


def case_detail_checks(rank, world):
    """Under TORCH_DISTRIBUTED_DEBUG=DETAIL c10d wraps tpu_dist in its ProcessGroupWrapper, which compares every
    collective's fingerprint (sequence number, op, shapes) across ranks first: matched collectives give CPU's
    results; a mismatched op or shape raises the wrapper's error on every rank, and the group goes on."""
    assert dist.get_debug_level() == dist.DebugLevel.DETAIL
    wrapper = dist.group.WORLD._get_backend(torch.device(DEV))
    assert type(wrapper).__name__ == "_ProcessGroupWrapper" and wrapper.wrapped_pg.name() == "tpu_dist", wrapper
    seq = wrapper._get_sequence_number_for_group()
    xs = [inp(r, 6, torch.float32) for r in range(world)]
    t = xs[rank].to(DEV)
    dist.all_reduce(t)
    close(t, sum(xs))
    out = torch.empty(world, 6, device=DEV)
    dist.all_gather_into_tensor(out, xs[rank].to(DEV))
    close(out, torch.stack(xs))
    out = torch.empty(6 // world, device=DEV)
    dist.reduce_scatter_tensor(out, xs[rank].to(DEV))
    close(out, sum(xs).view(world, -1)[rank])
    dist.barrier()
    assert wrapper._get_sequence_number_for_group() == seq + 4
    seqs = [None] * world
    dist.all_gather_object(seqs, wrapper._get_sequence_number_for_group())
    assert len(set(seqs)) == 1, seqs
    for mismatch in (lambda: dist.all_reduce(torch.ones(3, device=DEV)) if rank == 0
                     else dist.broadcast(torch.ones(3, device=DEV), src=0),
                     lambda: dist.all_reduce(torch.ones(3 + rank, device=DEV))):
        t0 = time.time()
        try:
            mismatch()
        except RuntimeError as e:
            assert "Detected mismatch between collectives on ranks" in str(e), str(e)
        else:
            raise AssertionError("a mismatched collective did not raise")
        assert time.time() - t0 < 30
    t = xs[rank].to(DEV)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    close(t, torch.stack(xs).amax(0))


def case_random_sequence(rank, world):
    """60 collectives drawn from one seed on every rank: kind, reduce op, dtype, size (either side of the
    4 KiB that travels inside the signature exchange), layout (contiguous, a strided view, a slice of a
    larger storage) and eager mode; each result equals the CPU computation of every rank's input."""
    import random
    rnd = random.Random(1234)
    g = torch.Generator().manual_seed(99)
    dtypes = (torch.float32, torch.float64, torch.int64, torch.int32, torch.bfloat16)
    ops = {dist.ReduceOp.SUM: "sum", dist.ReduceOp.MAX: "max", dist.ReduceOp.MIN: "min", dist.ReduceOp.AVG: "avg",
           dist.ReduceOp.PRODUCT: "prod"}

    def value(r, n, dtype, salt):  # rank r's input, small integers (exact in every dtype and op)
        gen = torch.Generator().manual_seed(salt * 16 + r)
        return torch.randint(-3, 4, (n,), generator=gen).to(dtype)

    def place(t, how):
        if how == "strided":
            big = torch.zeros(2 * t.numel(), dtype=t.dtype)
            big[::2] = t
            return big.to(DEV)[::2]
        if how == "offset":
            big = torch.zeros(t.numel() + 5, dtype=t.dtype)
            big[5:] = t
            return big.to(DEV)[5:]
        return t.to(DEV)

    def reduce(xs, op):
        st = torch.stack(xs).to(torch.float64)
        r = {"sum": st.sum(0), "max": st.amax(0), "min": st.amin(0), "prod": st.prod(0), "avg": st.sum(0)}[op]
        if op == "avg":
            r = r / world if xs[0].is_floating_point() else torch.div(r, world, rounding_mode="trunc")
        return r.to(xs[0].dtype)

    for i in range(60):
        kind = rnd.choice(["all_reduce", "all_reduce", "broadcast", "all_gather", "reduce_scatter", "all_to_all"])
        dtype = rnd.choice(dtypes)
        n = rnd.choice([1, 5, 64, 1000, 1023, 1024, 1025, 3000]) * (world if kind in ("reduce_scatter", "all_to_all") else 1)
        how = rnd.choice(["contiguous", "strided", "offset"])
        mode = rnd.choice(["strict", "fused"])
        op = rnd.choice(list(ops))
        if op == dist.ReduceOp.PRODUCT:
            n = min(n, 64)
        xs = [value(r, n, dtype, i) for r in range(world)]
        with torch_tpu.eager_mode(mode):
            t = place(xs[rank], how)
            if kind == "all_reduce":
                dist.all_reduce(t, op=op)
                close(t, reduce(xs, ops[op]))
            elif kind == "broadcast":
                src = rnd.randrange(world)
                dist.broadcast(t, src=src)
                close(t, xs[src])
            elif kind == "all_gather":
                out = torch.full((world * n,), 9, dtype=dtype, device=DEV)
                dist.all_gather_into_tensor(out, t)
                close(out, torch.cat(xs))
            elif kind == "reduce_scatter":
                op = rnd.choice([dist.ReduceOp.SUM, dist.ReduceOp.MAX])
                out = torch.full((n // world,), 9, dtype=dtype, device=DEV)
                dist.reduce_scatter_tensor(out, t, op=op)
                close(out, reduce(xs, ops[op]).view(world, -1)[rank])
            else:
                out = torch.full((n,), 9, dtype=dtype, device=DEV)
                dist.all_to_all_single(out, t)
                close(out, torch.cat([x.view(world, -1)[rank] for x in xs]))
        assert t.dtype == dtype, (i, kind, t.dtype)


def case_gather_scatter(rank, world):
    for dtype in (torch.float32, torch.int64):
        outs = [torch.zeros(3, dtype=dtype, device=DEV) for _ in range(world)] if rank == 0 else None
        dist.gather(inp(rank, 3, dtype).to(DEV), outs, dst=0)
        if rank == 0:
            for r in range(world):
                close(outs[r], inp(r, 3, dtype))
        out = torch.zeros(3, dtype=dtype, device=DEV)
        src = [inp(10 + r, 3, dtype).to(DEV) for r in range(world)] if rank == 1 else None
        dist.scatter(out, src, src=1)
        close(out, inp(10 + rank, 3, dtype))


def case_send_recv(rank, world):
    for dtype in (torch.float32, torch.int64):
        if rank == 0:
            dist.send(inp(0, 4, dtype).to(DEV), dst=1)
            t = torch.zeros(4, dtype=dtype, device=DEV)
            dist.recv(t, src=1)
            close(t, inp(1, 4, dtype))
        else:
            t = torch.zeros(4, dtype=dtype, device=DEV)
            dist.recv(t, src=0)
            close(t, inp(0, 4, dtype))
            dist.send(inp(1, 4, dtype).to(DEV), dst=0)
        peer = 1 - rank
        got = torch.zeros(4, dtype=dtype, device=DEV)
        works = [dist.isend(inp(rank, 4, dtype).to(DEV), dst=peer), dist.irecv(got, src=peer)]
        for w in works:
            w.wait()
        close(got, inp(peer, 4, dtype))


def case_async_and_barrier(rank, world):
    t = inp(rank, 5, torch.float32).to(DEV)
    w = dist.all_reduce(t, async_op=True)
    w.wait()
    assert w.is_completed()
    close(t, sum(inp(r, 5, torch.float32) for r in range(world)))
    t2 = inp(rank, 5, torch.float32).to(DEV)
    fut = dist.all_reduce(t2, async_op=True).get_future()
    close(fut.wait()[0], sum(inp(r, 5, torch.float32) for r in range(world)))
    dist.barrier()


def case_objects(rank, world):
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "s": "x" * rank})
    assert objs == [{"rank": r, "s": "x" * r} for r in range(world)], objs
    lst = [rank, "from", rank] if rank == 1 else [None, None, None]
    dist.broadcast_object_list(lst, src=1)
    assert lst == [1, "from", 1], lst
    out = [None]
    dist.scatter_object_list(out, [("p", r) for r in range(world)] if rank == 0 else None, src=0)
    assert out[0] == ("p", rank), out
    g = [None] * world if rank == 0 else None
    dist.gather_object(rank * 10, g, dst=0)
    if rank == 0:
        assert g == [r * 10 for r in range(world)], g


def case_non_contiguous(rank, world):
    # a transposed view and a slice with a storage offset: only their
    # elements change, with the reduced values
    base = torch.arange(24.0).view(4, 6) + rank
    d = base.to(DEV)
    view = d.t()[1:4]  # (3, 4), strided, offset 1
    dist.all_reduce(view)
    want = base.clone()
    want.t()[1:4] = sum((torch.arange(24.0).view(4, 6) + r).t()[1:4] for r in range(world))
    close(d, want)
    outs = [torch.zeros(6, 2, device=DEV).t() for _ in range(world)]  # non-contiguous outputs
    dist.all_gather(outs, (torch.arange(12.0).view(2, 6) * (rank + 1)).to(DEV))
    for r in range(world):
        close(outs[r], torch.arange(12.0).view(2, 6) * (r + 1))


def case_fused_mode(rank, world):
    with torch_tpu.eager_mode("fused"):
        a = inp(rank, 6, torch.float32).to(DEV)
        b = (a * 2 + 1).relu()  # deferred: the collective must see its value
        dist.all_reduce(b)
        c = b - 1
        close(c, sum(inp(r, 6, torch.float32) * 2 + 1 for r in range(world)) - 1)


def case_cpu_tensor_error(rank, world):
    try:
        dist.all_reduce(torch.ones(3))
    except RuntimeError as e:
        assert "cpu" in str(e), str(e)
    else:
        raise AssertionError("a CPU tensor reached tpu_dist")
    t = torch.ones(3, device=DEV)  # the group still works
    dist.all_reduce(t)
    close(t, torch.full((3,), float(world)))


def case_mismatch_error(rank, world):
    t0 = time.time()
    for make in (lambda: torch.ones(3 + rank, device=DEV),  # shapes differ
                 lambda: torch.ones(3 + 3000 * rank, device=DEV),  # one small (inline), one not
                 lambda: torch.ones(3, device=DEV, dtype=torch.float32 if rank else torch.int64)):
        try:
            dist.all_reduce(make())
        except RuntimeError as e:
            assert "ranks disagree" in str(e), str(e)
        else:
            raise AssertionError("a mismatched all_reduce did not raise")
    assert time.time() - t0 < 30
    try:
        outs = [torch.zeros(2 + rank, device=DEV) for _ in range(world)]
        dist.all_gather(outs, torch.ones(2 + rank, device=DEV))
    except RuntimeError as e:
        assert "ranks disagree" in str(e), str(e)
    else:
        raise AssertionError("a mismatched all_gather did not raise")
    t = torch.ones(3, device=DEV)
    dist.all_reduce(t)  # and the group goes on
    close(t, torch.full((3,), float(world)))


def case_mpmd(rank, world):
    # different op sequences, different eager modes, a late rank
    if rank == 0:
        x = torch.randn(50, 50, device=DEV)
        for _ in range(20):
            x = torch.tanh(x @ x.t() / 50)
        print(f"rank 0 only: {x.sum().item():.3f}", flush=True)  # rank-0-only logging
    else:
        time.sleep(1.5)
    mode = "fused" if rank == 0 else "strict"
    with torch_tpu.eager_mode(mode):
        t = (inp(rank, 8, torch.float32).to(DEV) + 1) * 2
        dist.all_reduce(t)
        close(t, sum((inp(r, 8, torch.float32) + 1) * 2 for r in range(world)))
    sub = dist.new_group([0, 1], backend="tpu_dist")
    t = torch.full((2,), float(rank), device=DEV)
    dist.all_reduce(t, group=sub)
    close(t, torch.full((2,), float(sum(range(world)))))


def _mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


def case_ddp(rank, world):
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    ref = _mlp()
    torch.manual_seed(100 + rank)  # other weights on each rank: DDP broadcasts rank 0's
    m = _mlp()
    if rank == 0:
        m.load_state_dict(ref.state_dict())
    ddp = DDP(m.to(DEV), bucket_cap_mb=0.0005)  # several buckets
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    per = 4
    for step in range(5):
        x, y = torch.randn(per * world, 8, generator=g), torch.randn(per * world, 4, generator=g)
        xs, ys = x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]
        opt.zero_grad()
        if step == 2:  # gradient accumulation: the first half without a sync
            with ddp.no_sync():
                nn.functional.mse_loss(ddp(xs[:2].to(DEV)), ys[:2].to(DEV)).mul(0.5).backward()
            nn.functional.mse_loss(ddp(xs[2:].to(DEV)), ys[2:].to(DEV)).mul(0.5).backward()
        else:
            nn.functional.mse_loss(ddp(xs.to(DEV)), ys.to(DEV)).backward()
        opt.step()
        ropt.zero_grad()
        if step == 2:
            loss = sum(nn.functional.mse_loss(ref(x[r * per + h * 2:r * per + h * 2 + 2]),
                                              y[r * per + h * 2:r * per + h * 2 + 2]) * 0.5
                       for r in range(world) for h in range(2)) / world
        else:
            loss = nn.functional.mse_loss(ref(x), y)
        loss.backward()
        ropt.step()
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-5, atol=1e-6)


def case_fsdp2(rank, world):
    """fully_shard with uneven shards (7 and 3 rows over 2 ranks), 3 AdamW
    steps = the unsharded model on CPU, and the full state dict."""
    import copy

    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh(DEV, (world,))
    torch.manual_seed(0)
    ref = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3))
    m = copy.deepcopy(ref).to(DEV)
    for layer in m:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(m, mesh=mesh)
    assert m[0].weight.to_local().shape[0] == (4 if rank == 0 else 3)
    opt = torch.optim.AdamW(m.parameters(), lr=0.01)
    ropt = torch.optim.AdamW(ref.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(1)
    per = 2
    for _ in range(3):
        x, y = torch.randn(per * world, 5, generator=g), torch.randn(per * world, 3, generator=g)
        opt.zero_grad()
        nn.functional.mse_loss(m(x[rank * per:(rank + 1) * per].to(DEV)),
                               y[rank * per:(rank + 1) * per].to(DEV)).backward()
        opt.step()
        ropt.zero_grad()
        nn.functional.mse_loss(ref(x), y).backward()
        ropt.step()
    sd = get_model_state_dict(m, options=StateDictOptions(full_state_dict=True))
    assert set(sd) == set(ref.state_dict())
    for k, v in ref.state_dict().items():
        torch.testing.assert_close(sd[k].cpu(), v, rtol=1e-5, atol=1e-6)


def case_dtensor(rank, world):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Partial, Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh(DEV, (world,))
    a, b = torch.randn(6, 4, generator=torch.Generator().manual_seed(2)), torch.randn(4, 5)
    torch.manual_seed(3)
    b = torch.randn(4, 5)
    da = distribute_tensor(a.to(DEV), mesh, [Shard(0)])
    assert da.to_local().shape == (3, 4)
    close(da.full_tensor(), a)
    db = distribute_tensor(b.to(DEV), mesh, [Replicate()])
    close((da @ db).full_tensor(), a @ b)  # Shard(0) @ Replicate
    close((da * 2 + 1).sum().full_tensor(), (a * 2 + 1).sum())  # a Partial sum, reduced
    ds = distribute_tensor(a.to(DEV), mesh, [Shard(1)])
    close(ds.redistribute(mesh, [Shard(0)]).to_local(), a.chunk(world, 0)[rank])  # all_to_all
    from torch.distributed.tensor import DTensor

    p = DTensor.from_local((a * (rank + 1)).to(DEV), mesh, [Partial()])  # Partial -> Replicate: all_reduce
    close(p.redistribute(mesh, [Replicate()]).to_local(), a * sum(r + 1 for r in range(world)))
    close(p.redistribute(mesh, [Shard(0)]).to_local(),  # Partial -> Shard: reduce_scatter
          (a * sum(r + 1 for r in range(world))).chunk(world, 0)[rank])
    # a tensor-parallel MLP: column-wise then row-wise = the local model
    torch.manual_seed(4)
    ref = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    import copy

    tp = parallelize_module(copy.deepcopy(ref).to(DEV), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(5))
    out = tp(x.to(DEV))
    close(out.full_tensor() if hasattr(out, "full_tensor") else out, ref(x))
    out.sum().backward()
    ref(x).sum().backward()
    close(tp[0].weight.grad.full_tensor(), ref[0].weight.grad)
    close(tp[2].weight.grad.full_tensor(), ref[2].weight.grad)


def case_compiled_collective(rank, world):
    """A compiled graph with a functional collective (as DTensor makes under
    torch.compile) gives eager's results on every call."""
    import torch._dynamo
    import torch.distributed._functional_collectives as funcol

    def f(x):
        return funcol.all_reduce(x * 2, "sum", dist.group.WORLD) + 1

    from torch_tpu import _compile

    n0 = _compile.graph_serial()
    cf = torch.compile(f, backend="tpu")
    for i in range(3):
        x = inp(rank, 4, torch.float32) + i
        close(cf(x.to(DEV)), sum((inp(r, 4, torch.float32) + i) * 2 for r in range(world)) + 1)
    # a tensor-parallel MLP (DTensor) under torch.compile: CPU's results
    import copy

    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh(DEV, (world,))
    torch.manual_seed(4)
    ref = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    tp = parallelize_module(copy.deepcopy(ref).to(DEV), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    ctp = torch.compile(tp, backend="tpu")
    for k in range(2):
        x = torch.randn(3, 8, generator=torch.Generator().manual_seed(5 + k))
        out = ctp(x.to(DEV))
        close(out.full_tensor() if hasattr(out, "full_tensor") else out, ref(x))
    # split at the collective: the parts before and after it are captured and replayed
    parts = _compile.compiled_graphs(since=n0)[:2]
    assert len(parts) == 2 and all(p["captures"] == 1 and p["replays"] == 2 for p in parts), parts
    torch._dynamo.reset()


def noinit_device_path_refused(rank, world, port):
    """TORCH_TPU_DIST_COLLECTIVES=device where the CPU plugin's clients serve
    one process each: init_process_group fails on every rank, naming why."""
    os.environ["TORCH_TPU_DIST_COLLECTIVES"] = "device"
    try:
        dist.init_process_group("tpu_dist", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    except RuntimeError as e:
        msg = str(e)
        assert "cannot run collectives across its 2 processes" in msg and "Unexpected option name" in msg, msg
    else:
        raise AssertionError("init_process_group took the device path on the CPU plugin")


def main():
    rank, world, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    cases = sys.argv[4].split(",")
    if cases[0].startswith("noinit_"):  # the case makes (or fails to make) the group itself
        globals()[cases[0]](rank, world, port)
        print(f"PASS {cases[0]}", flush=True)
        return
    dist.init_process_group("tpu_dist", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    assert not torch_tpu._C._runtime_started()  # creating the group starts nothing on the CPU plugins
    assert torch_tpu.distributed.collectives_path() == "host"  # the CPU plugin: no collectives across processes
    assert dist.get_backend() == "tpu_dist"
    ok = True
    for name in cases:
        try:
            globals()["case_" + name](rank, world)
            print(f"PASS {name}", flush=True)
        except Exception:
            ok = False
            print(f"FAIL {name} (rank {rank})", flush=True)
            traceback.print_exc()
            break  # the other rank may now wait in a collective: stop both
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
