"""Per-op cost of Strict Eager against PyTorch CPU eager (ratios and medians;
machines are noisy). Writes bench/results.md and, when matplotlib is
installed, bench/results.png.

  tiny add      : `a + b` on 16 float32s, per op (the dispatch path)
  matmul 1024^2 : one float32 matmul, synchronized
  chain 4M      : tanh(a*a + a) * a on 4M float32s (4 ops), synchronized
"""
import os
import statistics
import sys
import time

import torch

import torch_tpu

HERE = os.path.dirname(os.path.abspath(__file__))


def median_time(fn, repeats, inner):
    fn()  # warm-up (compiles)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def tiny_add(device, inner):
    a = torch.randn(16).to(device)
    b = torch.randn(16).to(device)

    def run():
        for _ in range(100):
            c = a + b
        if device != "cpu":
            torch.tpu.synchronize()
        return c

    return median_time(run, 7, inner) / 100


def matmul(device):
    a = torch.randn(1024, 1024).to(device)
    b = torch.randn(1024, 1024).to(device)

    def run():
        c = a @ b
        if device != "cpu":
            torch.tpu.synchronize()
        return c

    return median_time(run, 5, 2)


def chain(device):
    a = torch.randn(4 * 1024 * 1024).to(device)

    def run():
        c = torch.tanh(a * a + a) * a
        if device != "cpu":
            torch.tpu.synchronize()
        return c

    return median_time(run, 5, 2)


def main():
    torch.set_num_threads(os.cpu_count() or 1)
    floor_us = torch_tpu._C._bench_execute_floor(20000)
    rows = []
    cpu_add, tpu_add = tiny_add("cpu", 20), tiny_add("tpu", 20)
    rows.append(("tiny add (per op)", tpu_add * 1e6, cpu_add * 1e6, "µs"))
    rows.append(("PJRT Execute floor (C)", floor_us, cpu_add * 1e6, "µs"))
    rows.append(("matmul 1024² f32", matmul("tpu") * 1e3, matmul("cpu") * 1e3, "ms"))
    rows.append(("tanh(a*a+a)*a, 4M f32", chain("tpu") * 1e3, chain("cpu") * 1e3, "ms"))
    info = torch_tpu._C._info()
    lines = [
        f"Plugin: PJRT {info['api_version']} ({os.path.basename(info['plugin_path'])}), "
        f"{os.cpu_count()} CPU cores, torch {torch.__version__}. Strict Eager.",
        "",
        "| benchmark | tpu (Strict Eager) | PyTorch CPU eager | ratio tpu/cpu |",
        "|---|---|---|---|",
    ]
    for name, t, c, unit in rows:
        lines.append(f"| {name} | {t:.2f} {unit} | {c:.2f} {unit} | {t / c:.2f}× |")
    lines.append("")
    lines.append(f"Tiny add: {tpu_add * 1e6 / floor_us:.2f}× the plugin's own Execute floor.")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(HERE, "results.md"), "w") as f:
        f.write(text + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)", file=sys.stderr)
        return
    names = [r[0] for r in rows]
    ratios = [r[1] / r[2] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.barh(names, ratios, color=["#4c72b0" if r > 1 else "#55a868" for r in ratios])
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel("time relative to PyTorch CPU eager (lower is better)")
    ax.set_title("torch_tpu Strict Eager on the XLA CPU plugin")
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "results.png"), dpi=120)


if __name__ == "__main__":
    main()
