"""The `tpu_dist` process-group backend for torch.distributed.

Registered when torch_tpu loads, for device `tpu`:

    dist.init_process_group(backend="tpu_dist")          # or "tpu:tpu_dist"
    dist.init_process_group(backend="cpu:gloo,tpu:tpu_dist")  # host tensors too

The collectives run in C++ (csrc/bridge/dist.cpp: PyTorch calls a c10d
Backend for DDP's reducer and the functional collectives). Two paths:

- device: where the plugin's PJRT client spans the processes (the GPU plugin,
  when init_process_group comes before the device's first use: the client is
  then created, at that first use, with node_id/num_nodes and this store as
  its key-value store), the collectives are StableHLO programs run by PJRT on
  the devices;
- host: on the CPU plugins (no collectives across processes), or when the
  device was used before init_process_group, the data is staged through the
  host over a gloo group on the same store.

TORCH_TPU_DIST_COLLECTIVES selects: "auto" (default: device where the client
spans the processes), "host", or "device" (an error at init_process_group
where the device path cannot serve the group).
"""
import os

import torch
import torch.distributed as dist

from . import _C

BACKEND = "tpu_dist"
_MODES = ("auto", "host", "device")


def _mode():
    mode = os.environ.get("TORCH_TPU_DIST_COLLECTIVES", "auto").strip().lower() or "auto"
    if mode not in _MODES:
        raise ValueError(f"TORCH_TPU_DIST_COLLECTIVES={mode!r}: expected one of {', '.join(_MODES)}")
    return mode


def _local_device():
    """The local device this process uses in a client across processes: torchrun's LOCAL_RANK."""
    try:
        return int(os.environ["LOCAL_RANK"])
    except (KeyError, ValueError):
        return -1


def _device_ids(host, rank, size):
    """Every rank's global device id (its current tpu device), in rank order."""
    mine = torch.tensor([_C._device_global_id(_C._current_device())], dtype=torch.int64)
    out = [[torch.empty(1, dtype=torch.int64) for _ in range(size)]]
    host.allgather(out, [mine]).wait()
    return [int(t.item()) for t in out[0]]


_HOST, _AUTO, _DEVICE = 0, 1, 2


def _create(store, rank, size, timeout):
    mode = _mode()
    host = dist.ProcessGroupGloo(dist.PrefixStore("tpu_dist/host/", store), rank, size, timeout)
    if mode == "auto" and _C._plugin_platform() == "cpu":
        # The CPU plugins have no collectives across processes: the host path,
        # and nothing started here (a process may create this backend without
        # ever using the device: init_process_group() makes one per device type).
        mode = "host"
    if mode == "host":
        return _C._TpuDistBackend(rank, size, host, _HOST)
    # The first group (before the device's first use) asks for a client across
    # its processes, created when the runtime starts.
    _C._set_distributed(dist.PrefixStore("tpu_dist/pjrt/", store), rank, size, _local_device())
    if mode == "auto":  # decided at the first collective: nothing starts here
        return _C._TpuDistBackend(rank, size, host, _AUTO)
    why = _C._distributed_why()  # "device": checked now, on every rank (starts the runtime)
    ids = _device_ids(host, rank, size)
    if len(set(ids)) != size or (why and size > 1):
        raise RuntimeError(
            "tpu_dist: TORCH_TPU_DIST_COLLECTIVES=device, but the devices of this group cannot run "
            f"collectives across its {size} processes (device ids {ids}): {why or 'one device twice'}. "
            "The CPU plugins have no collectives across processes: leave TORCH_TPU_DIST_COLLECTIVES unset "
            "(the host path).")
    return _C._TpuDistBackend(rank, size, host, _DEVICE)


def collectives_path(group=None):
    """Which path the collectives of `group` (default: the world) take: "device" or "host"."""
    pg = group or dist.group.WORLD
    backend = pg._get_backend(torch.device("tpu"))
    backend = getattr(backend, "wrapped_pg", backend)  # TORCH_DISTRIBUTED_DEBUG=DETAIL wraps it
    return "device" if backend._on_device() else "host"


def _register():
    if not dist.is_available() or BACKEND.upper() in dist.Backend._plugins:
        return
    dist.Backend.register_backend(BACKEND, _create, devices=["tpu"])


_register()
