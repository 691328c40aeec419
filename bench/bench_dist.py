"""all_reduce bandwidth on 2 ranks: `tpu_dist` on tpu tensors against gloo on
CPU tensors, in the same run (the same processes, interleaved rounds).

  python bench/bench_dist.py            # 1, 16 and 64 MiB
  python bench/bench_dist.py --quick    # fewer iterations

On the CPU plugins tpu_dist stages through the host over gloo: device -> host,
gloo's all-reduce, host -> device, plus a 32-byte signature exchange. So gloo
on host tensors is the limit (goal: >= 0.8x its bandwidth). Bandwidth is the
"bus bandwidth" of an all-reduce: 2 (n-1)/n x bytes / time.
Writes bench/dist_results.md and the table in docs/benchmarks.md (between its
dist-bench markers)."""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES_MIB = (1, 16, 64)


def worker(rank, world, port, iters, rounds):
    import torch
    import torch.distributed as dist

    import torch_tpu  # noqa: F401

    dist.init_process_group("cpu:gloo,tpu:tpu_dist", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    res = {}
    for mib in SIZES_MIB:
        n = mib * (1 << 20) // 4
        ts = {"tpu_dist": torch.ones(n, device="tpu"), "gloo": torch.ones(n)}
        for t in ts.values():  # warm up (programs compiled, connections made)
            dist.all_reduce(t)
        torch.tpu.synchronize()
        for _ in range(rounds):
            for name, t in ts.items():
                dist.barrier()
                t0 = time.perf_counter()
                for _ in range(iters):
                    dist.all_reduce(t)
                if t.device.type == "tpu":
                    torch.tpu.synchronize()
                res.setdefault((mib, name), []).append((time.perf_counter() - t0) / iters)
    ok = torch.allclose(ts["tpu_dist"].cpu(), ts["gloo"])  # both summed the same number of times
    dist.destroy_process_group()
    if rank == 0:
        print("OK" if ok else "MISMATCH", flush=True)
        for (mib, name), v in res.items():
            print(f"RES {mib} {name} {statistics.median(v)}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", nargs=3, type=int)
    args = ap.parse_args()
    iters, rounds = (3, 2) if args.quick else (10, 5)
    if args.worker:
        worker(*args.worker, iters, rounds)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(r), "2", str(port)] +
                              (["--quick"] if args.quick else []), stdout=subprocess.PIPE, text=True)
             for r in range(2)]
    out = procs[0].communicate(timeout=1200)[0]
    procs[1].communicate(timeout=60)
    assert all(p.returncode == 0 for p in procs), out
    assert "OK" in out, out
    t = {}
    for line in out.splitlines():
        if line.startswith("RES "):
            _, mib, name, sec = line.split()
            t[(int(mib), name)] = float(sec)
    import torch

    lines = [f"2 ranks on one machine ({os.cpu_count()} cores), torch {torch.__version__}; medians of {rounds} "
             f"interleaved rounds of {iters} all-reduces (float32, SUM).", "",
             "| size | tpu_dist (tpu tensors) | gloo (CPU tensors) | tpu_dist / gloo bandwidth |",
             "|---|---|---|---|"]
    for mib in SIZES_MIB:
        bw = {k: 2 * (2 - 1) / 2 * mib / 1024 / t[(mib, k)] for k in ("tpu_dist", "gloo")}  # GiB/s
        lines.append(f"| {mib} MiB | {t[(mib, 'tpu_dist')] * 1e3:.2f} ms ({bw['tpu_dist']:.2f} GiB/s) | "
                     f"{t[(mib, 'gloo')] * 1e3:.2f} ms ({bw['gloo']:.2f} GiB/s) | "
                     f"{bw['tpu_dist'] / bw['gloo']:.2f}× |")
    text = "\n".join(lines)
    print(text)
    if not args.quick:
        with open(os.path.join(HERE, "dist_results.md"), "w") as f:
            f.write(text + "\n")
        docs = os.path.join(os.path.dirname(HERE), "docs", "benchmarks.md")
        doc = open(docs).read()
        a, b = "<!-- dist-bench:begin -->\n", "<!-- dist-bench:end -->"
        if a in doc and b in doc:
            doc = doc[:doc.index(a) + len(a)] + text + "\n" + doc[doc.index(b):]
            with open(docs, "w") as f:
                f.write(doc)


if __name__ == "__main__":
    main()
