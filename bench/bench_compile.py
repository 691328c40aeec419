"""torch.compile(backend="tpu") on the GPT training step of bench_gpt.py (AdamW),
against the eager modes, PyTorch CPU eager, inductor on CPU and JAX's jit.
Medians of interleaved rounds (a noisy 2-core VM: ratios in one run matter).
Writes bench/compile_results.md and bench/compile_results.png.

  python bench/bench_compile.py            # both sizes
  python bench/bench_compile.py --quick    # fewer steps (a smoke run)

"compiled": the model's forward and loss under torch.compile (one forward
and one backward program, replayed each step) and the optimizer step under
torch.compile too; the step ends with loss.item() as in bench_gpt.py."""
import argparse
import os
import statistics
import sys

import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401
from torch_tpu import _compile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_gpt as G  # noqa: E402

MODES = ("compiled", "fused", "strict", "cpu", "inductor")
LABEL = {"compiled": "tpu compiled", "fused": "Fused", "strict": "Strict", "cpu": "PyTorch CPU eager",
         "inductor": "inductor (CPU)", "jax": "JAX jit (same plugin)",
         "jaxlib": "JAX jit (jaxlib's CPU)"}


def make_step(size, mode):
    vocab, seq, d, layers, batch = G.SIZES[size]
    dev = "cpu" if mode in ("cpu", "inductor") else "tpu"
    torch.manual_seed(0)
    m = G.GPT(vocab, seq, d, layers)
    idx = torch.randint(0, vocab, (batch, seq + 1))
    m = m.to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=G.LR, betas=G.BETAS, eps=G.EPS, weight_decay=G.WD)
    x, y = idx[:, :-1].to(dev), idx[:, 1:].to(dev)

    def loss_fn(x, y):
        logits = m(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    opt_step = opt.step
    if mode in ("compiled", "inductor"):
        backend = "tpu" if mode == "compiled" else "inductor"
        loss_fn = torch.compile(loss_fn, backend=backend)
        opt_step = torch.compile(opt.step, backend=backend)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x, y)
        loss.backward()
        opt_step()
        return loss.item()

    return step


def step_time(size, mode, warm, steps):
    torch._dynamo.reset()
    ctx = G.mode_ctx("fused" if mode == "compiled" else "cpu" if mode == "inductor" else mode)
    with ctx:
        step = make_step(size, mode)
        s0 = torch.tpu._get_cache_stats()
        t = G.time_steps(step, warm, steps)
        s1 = torch.tpu._get_cache_stats()
    progs = (s1["requests"] - s0["requests"]) / (warm + steps) if mode not in ("cpu", "inductor") else None
    return t, progs


class _ProgramsNotRun:
    """Within it, compiled graphs do not run their programs: each replay returns
    the outputs of the capture's first replay here (run once, for real). What
    is left of a compiled step is PyTorch's host work (dynamo's guards,
    AOTAutograd's wrappers, the autograd engine, the optimizer's Python) and
    torch_tpu's Python around the replays."""

    def __init__(self):
        self.real, self.outs = _compile._C, {}

    def __getattr__(self, name):
        return getattr(self.real, name)

    def _replay(self, cap, args, host_values, checked=False):
        k = id(cap)
        if k not in self.outs:
            self.outs[k] = self.real._replay(cap, args, host_values, checked)
            torch.tpu.synchronize()
        out = self.outs[k]
        return None if out is None else list(out)

    def __enter__(self):
        _compile._C = self
        return self

    def __exit__(self, *exc):
        _compile._C = self.real


def interleaved(size, blocks, per_block, floor=True):
    """compiled vs JAX's jit (same plugin) and PyTorch CPU eager in alternating
    blocks of a few steps (the machine's speed drifts within seconds), and
    (floor) the floor of any backend under PyTorch here: JAX's whole step
    dispatched, then the compiled step's host work with torch_tpu's programs
    not run, then JAX's loss read. None without JAX on the plugin."""
    dev = G.jax_device("plugin")
    if dev is None:
        return None
    import jax

    with jax.default_device(dev):
        jrun = G.jax_step_fn(size, dev)
    torch._dynamo.reset()
    stub = _ProgramsNotRun()
    cpu_step = make_step(size, "cpu")
    with G.mode_ctx("fused"):
        step = make_step(size, "compiled")

        def jax_step():
            with jax.default_device(dev):
                return float(jrun())

        def floor_step():
            with jax.default_device(dev):
                loss = jrun()
                with stub:
                    step()
                return float(loss)

        fs = {"jax": jax_step, "compiled": step, "cpu": cpu_step}
        if floor:
            fs["floor"] = floor_step
        times = {k: [] for k in fs}
        for f in fs.values():
            for _ in range(5):
                f()
        for _ in range(blocks):
            for k, f in fs.items():
                times[k].append(G.time_steps(f, 0, per_block))
    r = {k: statistics.median(v) for k, v in times.items()}
    r["ratios"] = {k: G.round_ratio(times, k, "jax") for k in fs if k != "jax"}
    r["ratios"]["compiled/cpu"] = G.round_ratio(times, "compiled", "cpu")
    if floor:
        r["ratios"]["floor/cpu"] = G.round_ratio(times, "floor", "cpu")
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", default="tiny,mini")
    args = ap.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    steps = {"tiny": 10 if args.quick else 30, "mini": 5 if args.quick else 10}
    rounds = {"tiny": 2 if args.quick else 5, "mini": 1 if args.quick else 2}
    warm = 3 if args.quick else 5
    rows, progs = {}, {}
    for size in args.sizes.split(","):
        per = {m: [] for m in MODES + ("jax", "jaxlib")}
        for k in range(rounds[size]):
            for mode in MODES:
                t, progs[(size, mode)] = step_time(size, mode, warm, steps[size])
                per[mode].append(t)
                print(f"{size} {mode} (round {k + 1}): {t * 1e3:.2f} ms", flush=True)
            G.jax_rounds(per, size, warm, steps[size], k)
        rows[size] = {m: statistics.median(v) if v else None for m, v in per.items()}
        rows[size]["ratios"] = {b: G.round_ratio(per, "compiled", b) for b in ("jax", "cpu", "inductor")}
    fine, blocks = {}, {"tiny": (10 if args.quick else 40, 10), "mini": (3 if args.quick else 12, 2)}
    for size in args.sizes.split(","):
        fine[size] = interleaved(size, *blocks[size], floor=size == "tiny")
    refused = sorted({g["refused"] for g in _compile.compiled_graphs() if g["refused"]})

    L = [G.setup_line(steps, warm, rounds), "",
         "| GPT step (AdamW) | " + " | ".join(LABEL[m] for m in MODES + ("jax", "jaxlib")) +
         " | compiled/JAX | compiled/CPU eager | compiled/inductor | programs per step (compiled) |",
         "|---|" + "---|" * (len(MODES) + 6)]
    for size, r in rows.items():
        cells = [f"{r[m] * 1e3:.2f} ms" if r[m] else "n/a" for m in MODES + ("jax", "jaxlib")]
        q = r["ratios"]
        L.append(f"| {size} {'/'.join(map(str, G.SIZES[size]))} | " + " | ".join(cells) +
                 f" | {G.fmt_ratio(q['jax'])} | {G.fmt_ratio(q['cpu'])} | {G.fmt_ratio(q['inductor'])} | "
                 f"{progs[(size, 'compiled')]:.1f} |")
    L += ["", "compiled/JAX is against JAX's jit on the same plugin file (loaded by JAX with one device); "
          "jaxlib's CPU is JAX's own CPU backend, another XLA build, for reference."]
    fine = {k: v for k, v in fine.items() if v is not None}
    if fine:
        L += ["", "The same steps in alternating blocks (compiled, JAX's jit, PyTorch CPU eager; tiny: 10 steps a "
              "block, mini: 2; medians of the blocks' medians; ratios: the median of the blocks' ratios), and "
              "the floor:", "",
              "| GPT step | blocks | tpu compiled | JAX jit (same plugin) | PyTorch CPU eager | floor | "
              "compiled/JAX | compiled/CPU eager | floor/JAX | floor/CPU eager |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for size, r in fine.items():
            q = r["ratios"]
            fl = f"{r['floor'] * 1e3:.2f} ms" if "floor" in r else "n/a"
            L.append(f"| {size} | {blocks[size][0]} | {r['compiled'] * 1e3:.2f} ms | {r['jax'] * 1e3:.2f} ms | "
                     f"{r['cpu'] * 1e3:.2f} ms | {fl} | {G.fmt_ratio(q['compiled'])} | "
                     f"{G.fmt_ratio(q['compiled/cpu'])} | {G.fmt_ratio(q.get('floor'))} | "
                     f"{G.fmt_ratio(q.get('floor/cpu'))} |")
        L += ["", "The floor: JAX's whole step dispatched, then the compiled step's host work with torch_tpu's "
              "programs not run (dynamo's guards, AOTAutograd's wrappers, the autograd engine, the optimizer's "
              "Python), then JAX's loss read: what a backend whose device work were JAX's own would take under "
              "PyTorch on these 2 cores, where the host's work and the CPU plugin's compute share the cores."]
    if refused:
        L += ["", "Graphs recorded again on every call (not replayed): " + "; ".join(refused) + "."]
    text = "\n".join(L)
    print(text)
    with open(os.path.join(HERE, "compile_results.md"), "w") as f:
        f.write(text + "\n")
    plot(rows)


def plot(rows):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, len(rows), figsize=(6 * len(rows), 3.6))
    axes = axes if len(rows) > 1 else [axes]
    for ax, (size, r) in zip(axes, rows.items()):
        names = [n for n in MODES + ("jax",) if r.get(n)]
        ax.bar([LABEL[n].replace(" ", "\n", 1) for n in names], [r[n] / r["cpu"] for n in names],
               color=["#dd8452", "#55a868", "#c44e52", "#8c8c8c", "#937860", "#4c72b0"][: len(names)])
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_title(f"GPT {size} step (rel. to PyTorch CPU eager)")
        ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "compile_results.png"), dpi=110)


if __name__ == "__main__":
    main()
