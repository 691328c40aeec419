"""`torch.tpu`: the device module, shaped like `torch.cuda`."""
import contextlib
from dataclasses import dataclass

import torch

from . import _C


def _no_plugin_message():
    return _C._init_error()


def is_available():
    return _C._device_count() > 0


def is_initialized():
    return is_available()


def __getattr__(name):
    # module attributes that torch.cuda keeps as values and PyTorch's generic code probes with
    # getattr (torch.utils.checkpoint stashes the device's RNG states only when the device
    # module's `_initialized` is true: without it, recomputed dropout masks differ)
    if name == "_initialized":
        return is_initialized()
    if name == "default_generators":
        return tuple(_C._default_generator(i) for i in range(device_count()))
    raise AttributeError(f"module 'torch.tpu' has no attribute '{name}'")


def _lazy_init():
    if not is_available():
        raise RuntimeError(_no_plugin_message())


def device_count():
    return _C._device_count()


def current_device():
    return _C._current_device()


def _index(device):
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "tpu":
        raise ValueError(f"expected a tpu device, got {device}")
    return current_device() if device.index is None else device.index


def set_device(device):
    _C._set_device(_index(device))


class device:
    """Context manager that makes `device` current inside the block."""

    def __init__(self, device):
        self.idx = _index(device)
        self.prev = -1

    def __enter__(self):
        self.prev = current_device()
        if self.idx != self.prev:
            _C._set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx != self.prev:
            _C._set_device(self.prev)
        return False


def synchronize(device=None):
    """Waits for all work on the device; raises errors of asynchronous ops."""
    _C._synchronize(-1 if device is None else _index(device))


def get_device_name(device=None):
    _lazy_init()
    info = _C._info()
    return f"{info['platform_name']}:{info['device_kind']} (PJRT {info['api_version']})"


@dataclass(frozen=True)
class _DeviceProperties:
    name: str
    platform_name: str
    platform_version: str
    device_kind: str
    plugin_path: str
    pjrt_api_version: str
    stablehlo_current_version: str
    stablehlo_minimum_version: str
    total_memory: int = 0


def get_device_properties(device=None):
    _lazy_init()
    _index(device)
    i = _C._info()
    return _DeviceProperties(
        name=get_device_name(device),
        platform_name=i["platform_name"],
        platform_version=i["platform_version"],
        device_kind=i["device_kind"],
        plugin_path=i["plugin_path"],
        pjrt_api_version=i["api_version"],
        stablehlo_current_version=i["stablehlo_current_version"],
        stablehlo_minimum_version=i["stablehlo_minimum_version"],
    )


def get_device_capability(device=None):
    return (0, 0)


# ---- random numbers ---------------------------------------------------------------

def _gen(device=None):
    return _C._default_generator(_index(device))


def default_generator(device=None):
    return _gen(device)


def _get_generator(device):
    """The default generator of `device` (what AOTAutograd's graph-safe RNG asks for)."""
    return _gen(device)


def manual_seed(seed):
    _gen().manual_seed(int(seed))


def manual_seed_all(seed):
    for i in range(max(device_count(), 1)):
        _C._default_generator(i).manual_seed(int(seed))


def seed():
    return _gen().seed()


def seed_all():
    s = seed()
    manual_seed_all(s)


def initial_seed():
    return _gen().initial_seed()


def get_rng_state(device="tpu"):
    return _gen(device).get_state()


def set_rng_state(new_state, device="tpu"):
    _gen(device).set_state(new_state)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, s in enumerate(new_states):
        set_rng_state(s, i)


# ---- memory -----------------------------------------------------------------------

def memory_stats(device=None):
    s = _C._stats(_index(device))
    return {
        "allocated_bytes.all.current": s["bytes_in_use"],
        "allocated_bytes.all.peak": s["peak_bytes"],
        "reserved_bytes.all.current": s["bytes_in_use"],
        "reserved_bytes.all.peak": s["peak_bytes"],
        "num_storages": s["num_storages"],
        "num_buffers": s["num_buffers"],
        "compile_cache.hits": s["cache_hits"],
        "compile_cache.misses": s["cache_misses"],
        "compile_cache.entries": s["cache_entries"],
        "compile_cache.evictions": s["cache_evictions"],
        "compile_cache.max_entries": s["cache_max_entries"],
        "compile_cache.maps_evictions": s["cache_maps_evictions"],
        "compile_cache.max_maps": s["maps_budget"],
        "compile_cache.compile_seconds": s["compile_seconds"],
        "executions": s["executions"],
    }


def memory_summary(device=None, abbreviated=False):
    """A printable summary of memory_stats() (what FSDP's debug messages include)."""
    s = memory_stats(device)
    lines = [f"torch.tpu memory summary, device {_index(device)}"]
    lines += [f"  {k}: {v}" for k, v in s.items()]
    return "\n".join(lines)


# ---- compilation cache ------------------------------------------------------------

def _get_cache_stats():
    """The compilation cache since the process started: ``requests`` (programs
    asked for), ``memory_hits`` (tier 1), ``disk_hits`` (tier 2: loaded from
    ``TORCH_TPU_CACHE_DIR``; ``disk_prefetched`` of them were loaded while the
    process started, from the list the last run of the same command line
    left), ``misses`` (compiled), ``compile_seconds``,
    ``disk_writes``, ``disk_rejected`` (entries found but refused: damaged,
    truncated, of another plugin; recompiled), ``disk_errors`` (I/O failures,
    ignored), ``disk_evictions`` (files this process removed to keep the
    directory within ``TORCH_TPU_CACHE_MAX_SIZE``), ``entries`` and
    ``evictions`` (tier 1), ``disk_dir`` (None when tier 2 is off:
    ``TORCH_TPU_DISK_CACHE=0``, an unusable or untrusted directory, or a
    plugin that cannot serialize), ``dumped`` (files in ``TORCH_TPU_DUMP_DIR``)."""
    s = _C._stats(-1)
    return {
        "requests": s["cache_hits"] + s["cache_misses"],
        "memory_hits": s["cache_hits"],
        "disk_hits": s["disk_hits"],
        "disk_prefetched": s["disk_prefetched"],
        "misses": s["compiles"],
        "compile_seconds": s["compile_seconds"],
        "disk_writes": s["disk_writes"],
        "disk_rejected": s["disk_rejected"],
        "disk_errors": s["disk_errors"],
        "disk_evictions": s.get("disk_evictions", 0),  # 0 from an extension built before the bound
        "entries": s["cache_entries"],
        "evictions": s["cache_evictions"],
        "disk_dir": s["disk_dir"],
        "dumped": s["dumped"],
    }


def _clear_cache(disk=True):
    """Drops every compiled program kept in memory and, with ``disk`` (the
    default), the entries of the disk cache's directory. Recorded Fused Eager
    ops run first. Programs compile again when next needed."""
    _C._clear_cache(bool(disk))


def memory_allocated(device=None):
    return _C._stats(_index(device))["bytes_in_use"]


def max_memory_allocated(device=None):
    return _C._stats(_index(device))["peak_bytes"]


def memory_reserved(device=None):
    """Bytes of every live storage (written or not): what the capacity check
    counts. At least memory_allocated(), which counts written buffers."""
    return _C._stats(_index(device))["bytes_reserved"]


def mem_get_info(device=None):
    """(free, total) bytes of the device, as torch.cuda.mem_get_info. total is
    TORCH_TPU_MEMORY_LIMIT, else the plugin's memory limit, else (CPU plugin) the
    host's physical memory, which all CPU devices share; free is what the live
    storages leave of it. Allocations beyond free raise torch.OutOfMemoryError."""
    free, total = _C._mem_info(_index(device))
    if total <= 0:
        raise RuntimeError(
            "torch.tpu.mem_get_info: the PJRT plugin does not report the device's memory; "
            "set TORCH_TPU_MEMORY_LIMIT (bytes, e.g. 16G) to declare it"
        )
    return free, total


def max_memory_reserved(device=None):
    return max(max_memory_allocated(device), memory_reserved(device))


def reset_peak_memory_stats(device=None):
    _C._reset_peak(_index(device))


def empty_cache():
    """Nothing is cached beyond live tensors; kept for torch.cuda parity."""


# ---- streams and events: work on a device runs in order on one timeline ------------

class Stream(torch.Stream):
    def __new__(cls, device=None, priority=0, **kwargs):
        return super().__new__(cls, device=torch.device("tpu", _index(device)), priority=priority, **kwargs)


class Event(torch.Event):
    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        return super().__new__(cls, device="tpu", enable_timing=enable_timing, blocking=blocking,
                               interprocess=interprocess)


def current_stream(device=None):
    return torch.Stream(device=torch.device("tpu", _index(device)))


def default_stream(device=None):
    return current_stream(device)


@contextlib.contextmanager
def stream(s):
    yield s


def _is_in_bad_fork():
    """No fork-unsafe state is held before the first device use."""
    return False


def get_amp_supported_dtype():
    """Dtypes torch.autocast("tpu", dtype=...) accepts."""
    return [torch.bfloat16, torch.float16]


def is_bf16_supported(including_emulation=True):
    return True
