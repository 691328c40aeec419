"""`python -m torch_tpu.doctor`: what torch_tpu finds on this machine.

Prints the versions, the PJRT plugin (path, platform, C API and StableHLO
versions, devices), a smoke test on the device, the eager mode, the
TORCH_TPU_* variables that are set, the compilation cache (directory, entries
on disk, this process's stats), the distributed backend and the optional
packages. Exits 0 when the device works, 1 when it does not (the message says
how to install a plugin)."""
import importlib.metadata
import os
import platform
import sys
import time


def _version(pkg):
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return None


def _disk_entries(path):
    n = size = 0
    try:
        for root, _dirs, files in os.walk(path):
            for f in files:
                n += 1
                size += os.path.getsize(os.path.join(root, f))
    except OSError:
        pass
    return n, size


def report(out=print):
    """Prints the report; returns True when the device works."""
    import torch

    import torch_tpu
    from torch_tpu import _C

    out(f"torch_tpu {torch_tpu.__version__}, torch {torch.__version__}, Python {platform.python_version()} "
        f"({platform.machine()}, {os.cpu_count()} CPUs)")
    n = _C._device_count()
    if n == 0:
        out("device: none")
        out("  " + _C._init_error().replace("\n", "\n  "))
        return False
    i = _C._info()
    out(f"plugin: {i['plugin_path']}")
    out(f"  platform {i['platform_name']} ({i['platform_version']}), PJRT C API {i['api_version']}, "
        f"StableHLO {i['stablehlo_current_version'] or '?'} (oldest accepted "
        f"{i['stablehlo_minimum_version'] or '?'})")
    spans = i["num_global_devices"] > i["num_devices"]
    out(f"  {n} device(s) of kind {i['device_kind']!r}"
        + (f"; a client across processes: {i['num_global_devices']} devices in all, process "
           f"{i['process_index']}" if spans else ""))
    ok = True
    try:
        t0 = time.perf_counter()
        x = torch.arange(6.0, device="tpu").view(2, 3)
        got = (x * 2 + 1).sum().item()
        dt = time.perf_counter() - t0
        ok = got == 36.0
        out(f"smoke test: {'ok' if ok else f'WRONG ({got} instead of 36.0)'} ({dt * 1e3:.0f} ms, compile included)")
    except Exception as e:  # a device that fails: say how
        ok = False
        out(f"smoke test: FAILED: {type(e).__name__}: {e}")
    out(f"eager mode: {torch_tpu._eager.current_eager_mode()}")
    set_vars = [(name, os.environ[name]) for name, _default, _help in _C._env_vars() if os.environ.get(name)]
    out("TORCH_TPU_* set: " + (", ".join(f"{k}={v}" for k, v in set_vars) if set_vars else "none"))
    s = torch.tpu._get_cache_stats()
    d = s.get("disk_dir")
    if d:
        entries, size = _disk_entries(d)
        writable = os.access(d, os.W_OK)
        out(f"compilation cache: {d} ({entries} files, {size / 2**20:.1f} MiB"
            f"{'' if writable else ', NOT writable: programs are compiled in every process'})")
    else:
        out("compilation cache: memory only (TORCH_TPU_DISK_CACHE=0 or no usable directory)")
    out(f"  this process: {s['requests']} requests, {s['memory_hits']} memory hits, {s['disk_hits']} disk hits, "
        f"{s['misses']} compiled ({s['compile_seconds']:.2f} s)")
    import torch.distributed as dist
    if dist.is_available():
        from torch_tpu import distributed as tdist
        registered = "tpu_dist" in dist.Backend.backend_list
        where = ("on the devices (the client spans the processes)" if spans else
                 "through the host (gloo): the CPU plugins have no collectives across processes"
                 if i["platform_name"] == "cpu" else
                 "on the devices when init_process_group comes before the device's first use")
        out(f"distributed: backend tpu_dist {'registered' if registered else 'NOT registered'}; "
            f"TORCH_TPU_DIST_COLLECTIVES={tdist._mode()}; collectives {where}")
    else:
        out("distributed: torch.distributed is not available in this torch build")
    extras = [(p, _version(p)) for p in ("jax", "jaxlib", "transformers", "accelerate", "numpy")]
    out("optional packages: " + ", ".join(f"{p} {v}" if v else f"{p} (not installed)" for p, v in extras))
    return ok


def main():
    ok = report()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
