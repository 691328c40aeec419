"""Trains a 2-layer MLP on `tpu` for 100 steps and prints its losses beside the
same run on the CPU (same initial weights, same data)."""
import time

import torch

import torch_tpu  # noqa: F401  (also autoloaded through torch.backends)


def make_data(n=256, d_in=32, n_cls=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d_in, generator=g)
    w = torch.randn(d_in, n_cls, generator=g)
    y = (x @ w).argmax(dim=1)
    return x, y


def make_model(d_in=32, hidden=64, n_cls=4, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, n_cls))


def train(device, steps=100, lr=1e-2):
    x, y = make_data()
    model = make_model().to(device)
    x, y = x.to(device), y.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return [float(v) for v in losses]


def main():
    info = torch_tpu._C._info()
    print(f"device:        {torch.tpu.get_device_name()}  ({torch.tpu.device_count()} device(s))")
    print(f"PJRT plugin:   {info['plugin_path']}")
    print(f"PJRT API:      {info['api_version']}  platform {info['platform_name']} {info['platform_version']}")
    t0 = time.perf_counter()
    tpu = train("tpu")
    t1 = time.perf_counter()
    cpu = train("cpu")
    t2 = time.perf_counter()
    print(f"{'step':>5} {'tpu loss':>12} {'cpu loss':>12}")
    for i in list(range(0, 100, 10)) + [99]:
        print(f"{i:>5} {tpu[i]:>12.6f} {cpu[i]:>12.6f}")
    worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(tpu, cpu))
    print(f"largest relative difference over 100 steps: {worst:.2e}")
    print(f"time: tpu {t1 - t0:.2f} s (compiles included), cpu {t2 - t1:.2f} s")
    stats = torch.tpu.memory_stats()
    print(f"programs compiled: {stats['compile_cache.misses']}, cache hits: {stats['compile_cache.hits']}")
    if worst > 1e-4:
        raise SystemExit("tpu and cpu losses differ by more than 1e-4")


if __name__ == "__main__":
    main()
