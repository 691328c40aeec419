"""`python -m torch_tpu.doctor`: what torch_tpu finds on this machine.

Prints the versions, the PJRT plugin (path, platform, C API and StableHLO
versions, devices), a smoke test on the device, the eager mode, the
TORCH_TPU_* variables that are set, the compilation cache (directory, its
size and bound, whether it is trusted, this process's stats), the distributed
backend and the optional packages. Exits 0 when the device works, 1 when it
does not (the message says how to install a plugin).

`python -m torch_tpu.doctor --clear-cache` removes the compilation cache's
files (entries, start-up lists, temporary files) from its directory and
nothing else, without starting the device."""
import argparse
import importlib.metadata
import os
import platform
import re
import stat
import sys
import time

DEFAULT_MAX_SIZE = "4G"  # TORCH_TPU_CACHE_MAX_SIZE's default (csrc/core/base/env.c)
# the cache's own file names (csrc/core/runtime/disk_cache.h): entries, start-up lists, temporary files
_ENTRY = re.compile(r"[0-9a-f]{16}\.tt(exec|list)")
_TEMP = re.compile(r"\.[0-9a-f]{16}\.tt(exec|list)\..+\.tmp")


def _version(pkg):
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return None


def cache_dir():
    """The disk cache's directory: TORCH_TPU_CACHE_DIR, else ~/.cache/torch_tpu."""
    d = os.environ.get("TORCH_TPU_CACHE_DIR") or os.path.join(os.environ.get("HOME", ""), ".cache", "torch_tpu")
    return d.rstrip("/") or "/"


def parse_size(text):
    """A byte count as the core reads it: digits, then K, M, G or T (powers of 1024) with an optional i, then an
    optional B. None if it does not parse."""
    m = re.fullmatch(r"(\d+)(?:([kmgt])i?)?b?", text, re.IGNORECASE)
    if not m:
        return None
    n = int(m.group(1)) << {None: 0, "k": 10, "m": 20, "g": 30, "t": 40}[m.group(2) and m.group(2).lower()]
    return n if n < 2**63 else None


def cache_bound():
    """(bytes, how it was chosen): TORCH_TPU_CACHE_MAX_SIZE or its default; 0: no bound."""
    text = os.environ.get("TORCH_TPU_CACHE_MAX_SIZE")
    if not text:
        return parse_size(DEFAULT_MAX_SIZE), f"default {DEFAULT_MAX_SIZE}"
    n = parse_size(text)
    if n is None:
        return parse_size(DEFAULT_MAX_SIZE), f"TORCH_TPU_CACHE_MAX_SIZE={text} does not parse: default {DEFAULT_MAX_SIZE}"
    return n, f"TORCH_TPU_CACHE_MAX_SIZE={text}"


def cache_distrust(path):
    """Why the cache would not use `path` (the core's check: this user's directory, which neither its group
    nor others may write; a symbolic link of this user's to one); None if it would."""
    try:
        st = os.lstat(path)
        what = "is"
        if stat.S_ISLNK(st.st_mode):
            if st.st_uid != os.geteuid():
                return f"{path} is a symbolic link owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
            what = "leads to a directory"
            st = os.stat(path)
    except FileNotFoundError:
        return None  # created (mode 0700) at first use
    except OSError as e:
        return f"cannot stat {path}: {e.strerror}"
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != os.geteuid():
        return f"{path} {what} owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    if mode & stat.S_IWOTH:
        return f"{path} {what} writable by other users (mode {mode:04o})"
    if mode & stat.S_IWGRP:
        return f"{path} {what} writable by its group (mode {mode:04o})"
    return None


def cache_files(path):
    """The cache's own files in `path` (regular files of this user's with its names): (name, size) pairs."""
    out = []
    try:
        names = os.listdir(path)
    except OSError:
        return out
    for name in names:
        if not (_ENTRY.fullmatch(name) or _TEMP.fullmatch(name)):
            continue
        try:
            st = os.lstat(os.path.join(path, name))
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
            out.append((name, st.st_size))
    return out


def clear_cache(path):
    """Removes the cache's own files from `path`; returns (files, bytes) removed."""
    n = size = 0
    for name, nbytes in cache_files(path):
        try:
            os.unlink(os.path.join(path, name))
        except FileNotFoundError:
            continue  # another process removed it first
        n += 1
        size += nbytes
    return n, size


def _mib(n):
    return f"{n / 2**10:.1f} KiB" if n < 2**20 else f"{n / 2**20:.1f} MiB" if n < 2**30 else f"{n / 2**30:.2f} GiB"


def cache_report(stats, out=print):
    """The disk cache: directory, size, bound, trust; `stats`: torch.tpu._get_cache_stats() or None."""
    d = (stats or {}).get("disk_dir") or cache_dir()
    files = cache_files(d)
    entries = sum(1 for name, _ in files if name.endswith(".ttexec"))
    size = sum(nbytes for _, nbytes in files)
    bound, how = cache_bound()
    why = cache_distrust(d)
    out(f"compilation cache: {d}")
    out(f"  {entries} entries, {_mib(size)} of " + (f"{_mib(bound)}" if bound else "no bound") + f" ({how}); "
        "the least recently used entries go first beyond it")
    if os.environ.get("TORCH_TPU_DISK_CACHE", "1") == "0":
        out("  not used: TORCH_TPU_DISK_CACHE=0 (memory only)")
    elif why:
        out(f"  NOT trusted: {why}; the cache is neither read nor written (memory only). Its entries are machine "
            "code this process would run: only a directory of this user's that no one else may write is used")
    elif stats is not None and not stats.get("disk_dir"):
        out("  not used: the directory cannot be written, or the plugin cannot serialize programs (memory only)")
    else:
        out("  trusted: this user's, written by no one else")
    if stats is not None:
        out(f"  this process: {stats['requests']} requests, {stats['memory_hits']} memory hits, "
            f"{stats['disk_hits']} disk hits, {stats['misses']} compiled ({stats['compile_seconds']:.2f} s), "
            f"{stats.get('disk_evictions', 0)} files evicted")


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
    cache_report(torch.tpu._get_cache_stats(), out)
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


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m torch_tpu.doctor", description="What torch_tpu finds on this machine.")
    ap.add_argument("--clear-cache", action="store_true",
                    help="remove the compilation cache's files from its directory (TORCH_TPU_CACHE_DIR, else "
                         "~/.cache/torch_tpu) and exit; nothing else there is touched")
    args = ap.parse_args(argv)
    if args.clear_cache:
        d = cache_dir()
        n, size = clear_cache(d)
        print(f"compilation cache: removed {n} files ({_mib(size)}) from {d}")
        sys.exit(0)
    ok = report()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
