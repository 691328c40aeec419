"""GPT training steps (AdamW) in each eager mode against PyTorch CPU eager and
JAX's whole-step jit (on the same plugin, and on jaxlib's own CPU); the tiny step by phase; a chain of tiny ops; time to the first step of a fresh
process with a cold and a warm disk cache. Medians; ratios matter, the
machine is noisy. Writes bench/gpt_results.md and bench/gpt_results.png.

  python bench/bench_gpt.py              # everything
  python bench/bench_gpt.py --quick      # fewer steps (a smoke run)
  python bench/bench_gpt.py --first-step tiny strict   # (internal) one fresh-process measurement

Sizes (vocab/seq/width/layers/batch): tiny 256/32/64/2/4 (dispatch-bound),
mini 1024/128/256/4/8 (compute-bound on 2 cores). Every step ends with
loss.item(), as a training loop that logs its loss does; Strict and Fused
therefore both finish the step's work inside the step."""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

T_START = time.perf_counter()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import torch_tpu  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = {"tiny": (256, 32, 64, 2, 4), "mini": (1024, 128, 256, 4, 8)}
HEADS = 4
LR, BETAS, EPS, WD = 1e-3, (0.9, 0.999), 1e-8, 0.01


# ---- the model ------------------------------------------------------------------

class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, HEADS, d // HEADS).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, seq, d, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def make(size, device):
    vocab, seq, d, layers, batch = SIZES[size]
    torch.manual_seed(0)
    m = GPT(vocab, seq, d, layers)
    idx = torch.randint(0, vocab, (batch, seq + 1))
    m = m.to(device)
    opt = torch.optim.AdamW(m.parameters(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WD)
    x, y = idx[:, :-1].to(device), idx[:, 1:].to(device)

    def step():
        opt.zero_grad(set_to_none=True)
        logits = m(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.item()

    return step


def mode_ctx(mode):
    if mode == "cpu":
        import contextlib

        return contextlib.nullcontext()
    return torch_tpu.eager_mode(mode)


def time_steps(step, warm, steps):
    for _ in range(warm):
        step()
    ts = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def torch_step_time(size, mode, warm, steps):
    dev = "cpu" if mode == "cpu" else "tpu"
    with mode_ctx(mode):
        step = make(size, dev)
        s0 = torch.tpu._get_cache_stats()
        t = time_steps(step, warm, steps)
        s1 = torch.tpu._get_cache_stats()
    progs = None
    if dev == "tpu":
        progs = (s1["requests"] - s0["requests"]) / (warm + steps)
    return t, progs


PHASES = ("zero_grad", "forward", "backward", "optimizer", "loss.item()")


def phase_times(size, mode, warm, steps):
    """Medians of each phase of the step (host time; a device mode's compute not
    yet done when the host has recorded the step is waited for in loss.item())."""
    dev = "cpu" if mode == "cpu" else "tpu"
    vocab, seq, d, layers, batch = SIZES[size]
    torch.manual_seed(0)
    m = GPT(vocab, seq, d, layers).to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WD)
    idx = torch.randint(0, vocab, (batch, seq + 1))
    x, y = idx[:, :-1].to(dev), idx[:, 1:].to(dev)
    ts = {p: [] for p in PHASES}
    with mode_ctx(mode):
        for i in range(warm + steps):
            t = [time.perf_counter()]
            opt.zero_grad(set_to_none=True)
            t.append(time.perf_counter())
            logits = m(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            t.append(time.perf_counter())
            loss.backward()
            t.append(time.perf_counter())
            opt.step()
            t.append(time.perf_counter())
            loss.item()
            t.append(time.perf_counter())
            if i >= warm:
                for k, p in enumerate(PHASES):
                    ts[p].append(t[k + 1] - t[k])
    return {p: statistics.median(v) for p, v in ts.items()}


# ---- the same model and step under jax.jit ---------------------------------------

_JAX_PLATFORM = "tt_plugin"  # the name JAX knows torch_tpu's plugin by in this process
_jax_devices = {}


def jax_device(where):
    """The device a JAX step runs on, or None where JAX is not installed or
    cannot take the plugin. "plugin": the PJRT plugin file torch_tpu runs on,
    loaded by JAX as a platform of its own with one device (torch_tpu's
    client has one): the same XLA build, the reference "JAX's jit on the
    same plugin". "jaxlib": jaxlib's own CPU backend (another XLA build),
    for reference. The plugin must be registered before JAX starts its
    backends: the first call does both."""
    if not _jax_devices:
        try:
            import jax
            from jax._src import xla_bridge
        except ImportError:
            _jax_devices.update(plugin=None, jaxlib=None)
            return None
        info = torch_tpu._C._info()
        opts = {"cpu_device_count": 1} if info["platform_name"] == "cpu" else {}
        import logging

        logging.getLogger("jax._src.xla_bridge").setLevel(logging.ERROR)  # "experimental platform"
        try:
            xla_bridge.register_plugin(_JAX_PLATFORM, library_path=info["plugin_path"], options=opts)
            _jax_devices["plugin"] = jax.devices(_JAX_PLATFORM)[0]
        except Exception as e:  # a private JAX API: report the column as n/a rather than fail
            print(f"(JAX cannot load {info['plugin_path']}: {e})", file=sys.stderr)
            _jax_devices["plugin"] = None
        try:
            _jax_devices["jaxlib"] = jax.devices("cpu")[0]
        except RuntimeError:
            _jax_devices["jaxlib"] = None
    return _jax_devices[where]


def jax_step_time(size, warm, steps, where="plugin"):
    """The whole step under jax.jit on jax_device(where); None without one."""
    dev = jax_device(where)
    if dev is None:
        return None
    import jax

    with jax.default_device(dev):
        run = jax_step_fn(size, dev)
        return time_steps(lambda: float(run()), warm, steps)


def jax_rounds(per, size, warm, steps, k):
    """One round of the JAX step on the same plugin (per["jax"]) and on
    jaxlib's CPU (per["jaxlib"])."""
    for key, where in (("jax", "plugin"), ("jaxlib", "jaxlib")):
        j = jax_step_time(size, warm, steps, where)
        if j is not None:
            per[key].append(j)
            print(f"{size} jax.jit on {where} (round {k + 1}): {j * 1e3:.2f} ms", flush=True)


def jax_step_fn(size, dev):
    """The GPT step under jax.jit on dev (call it under jax.default_device(dev)):
    a function that dispatches one step (asynchronously, as JAX does) and
    returns its loss, a JAX array; float() of it waits for the step."""
    import jax
    import jax.numpy as jnp

    vocab, seq, d, layers, batch = SIZES[size]
    torch.manual_seed(0)
    ref = GPT(vocab, seq, d, layers)
    idx = torch.randint(0, vocab, (batch, seq + 1)).numpy()
    params = {k: jnp.asarray(v.detach().numpy()) for k, v in ref.state_dict().items()}

    def ln(x, w, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * w + b

    def lin(p, name, x, bias=True):
        y = x @ p[name + ".weight"].T
        return y + p[name + ".bias"] if bias else y

    def forward(p, tokens):
        b, t = tokens.shape
        x = p["tok.weight"][tokens] + p["pos.weight"][jnp.arange(t)]
        mask = jnp.tril(jnp.ones((t, t), bool))
        for i in range(layers):
            pre = f"blocks.{i}."
            h = ln(x, p[pre + "ln1.weight"], p[pre + "ln1.bias"])
            q, k, v = jnp.split(lin(p, pre + "qkv", h), 3, axis=-1)
            q, k, v = (z.reshape(b, t, HEADS, d // HEADS).transpose(0, 2, 1, 3) for z in (q, k, v))
            s = (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(d // HEADS)
            s = jnp.where(mask, s, -jnp.inf)
            a = jax.nn.softmax(s, axis=-1) @ v
            x = x + lin(p, pre + "proj", a.transpose(0, 2, 1, 3).reshape(b, t, d))
            h = ln(x, p[pre + "ln2.weight"], p[pre + "ln2.bias"])
            x = x + lin(p, pre + "out", jax.nn.gelu(lin(p, pre + "fc", h), approximate=False))
        return lin(p, "head", ln(x, p["ln.weight"], p["ln.bias"]), bias=False)

    def loss_fn(p, tokens, targets):
        logits = forward(p, tokens)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()

    @jax.jit
    def step(p, m, v, t, tokens, targets):
        loss, g = jax.value_and_grad(loss_fn)(p, tokens, targets)
        t = t + 1
        b1, b2 = BETAS
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t

        def upd(p, m, v):
            p = p * (1 - LR * WD)
            return p - LR * (m / c1) / (jnp.sqrt(v / c2) + EPS)

        p = jax.tree_util.tree_map(upd, p, m, v)
        return p, m, v, t, loss

    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = [params, zeros, zeros, jnp.float32(0)]
    tokens, targets = jnp.asarray(idx[:, :-1]), jnp.asarray(idx[:, 1:])

    def run():
        p, m, v, t, loss = step(*state, tokens, targets)
        state[:] = [p, m, v, t]
        return loss

    float(run())
    assert state[0]["tok.weight"].devices() == {dev}, "the JAX step ran on another device"
    return run


# ---- a chain of tiny elementwise ops -----------------------------------------------

def chain_per_op(mode, n_ops=100, reps=30):
    dev = "cpu" if mode == "cpu" else "tpu"
    a = torch.randn(16).to(dev)

    def run():
        x = a
        for i in range(n_ops // 2):
            x = x * 1.0001
            x = x + 0.5
        return x.sum().item()

    with mode_ctx(mode):
        return time_steps(run, 3, reps) / n_ops


# ---- time to the first step of a fresh process ---------------------------------------

def first_step_child(size, mode):
    t_import = time.perf_counter() - T_START
    t0 = time.perf_counter()
    with mode_ctx(mode):
        step = make(size, "tpu")
        t1 = time.perf_counter()
        step()
    t2 = time.perf_counter()
    s = torch.tpu._get_cache_stats()
    # setup: the model, its copy to the device, the optimizer (whose constructor
    # imports torch._dynamo, ~1 s, as on CPU); first_step: the step alone
    print("FIRST " + json.dumps({"first_step": t2 - t1, "setup": t1 - t0, "import": t_import, "stats": s}))


def first_step(size, mode, cache_dir):
    env = dict(os.environ, TORCH_TPU_CACHE_DIR=cache_dir, TORCH_TPU_DISK_CACHE="1")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, __file__, "--first-step", size, mode], env=env,
                       capture_output=True, text=True, timeout=1200)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    r = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("FIRST ")][-1][6:])
    r["wall"] = wall
    return r


# ---- main ----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--first-step", nargs=2)
    ap.add_argument("--sizes", default="tiny,mini")
    args = ap.parse_args()
    if args.first_step:
        return first_step_child(*args.first_step)
    torch.set_num_threads(os.cpu_count() or 1)
    steps = {"tiny": 10 if args.quick else 50, "mini": 10 if args.quick else 15}
    warm = 3 if args.quick else 5
    rows, progs = {}, {}
    # The machine's speed drifts (a shared 2-core VM: the same CPU eager step
    # measured 3.4 ms and 4.9 ms in two runs minutes apart), so the modes are
    # measured in interleaved rounds and each reported time is the median of
    # its rounds' medians.
    rounds = {"tiny": 2 if args.quick else 9, "mini": 1 if args.quick else 3}
    for size in args.sizes.split(","):
        per = {m: [] for m in ("strict", "fused", "cpu", "jax", "jaxlib")}
        for k in range(rounds[size]):
            for mode in ("strict", "fused", "cpu"):
                t, progs[(size, mode)] = torch_step_time(size, mode, warm, steps[size])
                per[mode].append(t)
                print(f"{size} {mode} (round {k + 1}): {t * 1e3:.2f} ms", flush=True)
            jax_rounds(per, size, warm, steps[size], k)
        r = {m: statistics.median(v) if v else None for m, v in per.items()}
        r["ratios"] = {b: round_ratio(per, "fused", b) for b in ("strict", "cpu", "jax")}
        rows[size] = r
    runs = {m: [] for m in ("fused", "cpu")}
    for k in range(rounds["tiny"]):
        for m in runs:
            runs[m].append(phase_times("tiny", m, warm, steps["tiny"]))
    phases = {m: {p: statistics.median(x[p] for x in v) for p in PHASES} for m, v in runs.items()}
    print("tiny by phase (ms):", {m: {p: round(v * 1e3, 2) for p, v in ph.items()} for m, ph in phases.items()},
          flush=True)
    chain = {m: chain_per_op(m) for m in ("strict", "fused", "cpu")}
    print("chain per op (µs):", {k: round(v * 1e6, 2) for k, v in chain.items()}, flush=True)
    first = {}
    with tempfile.TemporaryDirectory() as d:
        for mode in ("strict", "fused"):
            sub = os.path.join(d, mode)
            first[(mode, "cold")] = first_step("mini", mode, sub)
            warms = sorted((first_step("mini", mode, sub) for _ in range(3)),
                           key=lambda r: r["first_step"])
            first[(mode, "warm")] = warms[1]  # the median of three warm processes
            print(f"first step mini {mode}: cold {first[(mode, 'cold')]['first_step']:.2f} s, "
                  f"warm {first[(mode, 'warm')]['first_step']:.2f} s", flush=True)

    L = [setup_line(steps, warm, rounds), "",
         "| GPT step (AdamW) | Strict | Fused | PyTorch CPU eager | JAX jit (same plugin) "
         "| JAX jit (jaxlib's CPU) | Fused/Strict | Fused/CPU | Fused/JAX | programs per step (Strict, Fused) |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for size, r in rows.items():
        jt, jl = (f"{r[k] * 1e3:.2f} ms" if r[k] else "n/a" for k in ("jax", "jaxlib"))
        q = r["ratios"]
        L.append(f"| {size} {'/'.join(map(str, SIZES[size]))} | {r['strict'] * 1e3:.2f} ms | "
                 f"{r['fused'] * 1e3:.2f} ms | {r['cpu'] * 1e3:.2f} ms | {jt} | {jl} | "
                 f"{fmt_ratio(q['strict'])} | {fmt_ratio(q['cpu'])} | {fmt_ratio(q['jax'])} | "
                 f"{progs[(size, 'strict')]:.0f}, {progs[(size, 'fused')]:.1f} |")
    L += ["", "JAX jit (same plugin): the whole step under `jax.jit` on the PJRT plugin file torch_tpu runs on, "
          "loaded by JAX with one device (the reference); jaxlib's CPU: JAX's own CPU backend, "
          "another XLA build, for reference. Fused/JAX is against the same plugin."]
    L += ["", "| tiny step by phase (host time) | " + " | ".join(PHASES) + " | sum |",
          "|---|" + "---|" * (len(PHASES) + 1)]
    for m, label in (("fused", "Fused"), ("cpu", "PyTorch CPU eager")):
        L.append(f"| {label} | " + " | ".join(f"{phases[m][p] * 1e3:.2f} ms" for p in PHASES) +
                 f" | {sum(phases[m].values()) * 1e3:.2f} ms |")
    L += ["", "Fused records the step's ops and runs them as programs on XLA's CPU compute threads; "
          "what is not computed when the host has recorded the step is waited for in loss.item()."]
    L += ["", "| 100 tiny elementwise ops, per op | Strict | Fused | PyTorch CPU eager | Fused/CPU |",
          "|---|---|---|---|---|",
          f"| `x * c`, `x + c` on 16 floats | {chain['strict'] * 1e6:.2f} µs | "
          f"{chain['fused'] * 1e6:.2f} µs | {chain['cpu'] * 1e6:.2f} µs | "
          f"{chain['fused'] / chain['cpu']:.2f}× |",
          "", "| first step of a fresh process (mini) | cold cache | warm cache | warm/cold "
          "| programs compiled (cold, warm) | loaded while it started (warm) "
          "| set-up before it (cold, warm) |", "|---|---|---|---|---|---|---|"]
    for mode in ("strict", "fused"):
        c, w = first[(mode, "cold")], first[(mode, "warm")]
        L.append(f"| {mode} | {c['first_step']:.2f} s | {w['first_step']:.2f} s | "
                 f"{w['first_step'] / c['first_step']:.2f}× | "
                 f"{c['stats']['misses']}, {w['stats']['misses']} | "
                 f"{w['stats']['disk_prefetched']} of {w['stats']['disk_hits']} disk hits | "
                 f"{c['import'] + c['setup']:.1f} s, {w['import'] + w['setup']:.1f} s |")
    L += ["", "Set-up: `import torch, torch_tpu`, the model, its copy to the device and the "
          "optimizer, whose constructor imports torch._dynamo (as on the CPU); the first step "
          "is timed alone; warm: the median of three processes. While the process starts, a "
          "thread loads the entries the last run of the same command used first (the disk "
          "cache's start-up list)."]
    text = "\n".join(L)
    print(text)
    with open(os.path.join(HERE, "gpt_results.md"), "w") as f:
        f.write(text + "\n")
    plot(rows, chain, first)


def round_ratio(per, a, b):
    """The median over rounds of per[a][k] / per[b][k]: each round measures
    the modes back to back, so its ratio holds while the machine's speed
    drifts between rounds (None without b)."""
    pairs = [x / y for x, y in zip(per[a], per[b])]
    return statistics.median(pairs) if pairs else None


def fmt_ratio(x):
    return f"{x:.2f}×" if x is not None else "n/a"


def setup_line(steps, warm, rounds):
    """The first line of a results table: plugin, machine, how medians were taken."""
    info = torch_tpu._C._info()
    return (f"Plugin: PJRT {info['api_version']} ({os.path.basename(info['plugin_path'])}), "
            f"{os.cpu_count()} CPU cores, torch {torch.__version__}; medians of "
            f"{steps['tiny']}/{steps['mini']} steps after {warm} warm-up steps, in "
            f"{rounds['tiny']}/{rounds['mini']} interleaved rounds (times: the median round; ratios: the median "
            "of the rounds' ratios); each step ends with loss.item().")


def plot(rows, chain, first):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, size in zip(axes[:2], rows):
        r = rows[size]
        names = [n for n in ("strict", "fused", "cpu", "jax") if r.get(n)]
        vals = [r[n] / r["cpu"] for n in names]
        label = {"strict": "Strict", "fused": "Fused", "cpu": "PyTorch CPU", "jax": "JAX jit\n(same plugin)"}
        ax.bar([label[n] for n in names], vals,
               color=["#c44e52", "#55a868", "#8c8c8c", "#4c72b0"][: len(names)])
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_title(f"GPT {size} step (rel. to PyTorch CPU eager)")
    ax = axes[2]
    modes = ["strict", "fused"]
    x = range(len(modes))
    ax.bar([i - 0.2 for i in x], [first[(m, "cold")]["first_step"] for m in modes], 0.4,
           label="cold cache")
    ax.bar([i + 0.2 for i in x], [first[(m, "warm")]["first_step"] for m in modes], 0.4,
           label="warm cache")
    ax.set_xticks(list(x), modes)
    ax.set_ylabel("s")
    ax.set_title("first mini step of a fresh process")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "gpt_results.png"), dpi=110)


if __name__ == "__main__":
    main()
