"""The `tpu_dist` process-group backend for torch.distributed.

Registered when torch_tpu loads, for device `tpu`:

    dist.init_process_group(backend="tpu_dist")          # or "tpu:tpu_dist"
    dist.init_process_group(backend="cpu:gloo,tpu:tpu_dist")  # host tensors too

The collectives run in C++ (csrc/bridge/dist.cpp: PyTorch calls a c10d
Backend for DDP's reducer and the functional collectives). On the CPU plugins
the data is staged through the host over a gloo group on the same store: the
plugin has no collectives across processes.
"""
import torch
import torch.distributed as dist

from . import _C

BACKEND = "tpu_dist"


def _create(store, rank, size, timeout):
    host = dist.ProcessGroupGloo(dist.PrefixStore("tpu_dist/host/", store), rank, size, timeout)
    return _C._TpuDistBackend(rank, size, host)


def _register():
    if not dist.is_available() or BACKEND.upper() in dist.Backend._plugins:
        return
    dist.Backend.register_backend(BACKEND, _create, devices=["tpu"])


_register()
