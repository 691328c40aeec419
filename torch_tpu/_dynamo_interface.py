"""Dynamo's view of the `tpu` device.

torch 2.13 registers its own `TpuInterface` for "tpu" when dynamo's device
registry first initializes (lazily). Its answers do not describe this backend
(no float64 or float16, device 0 only), so once dynamo's registry has
initialized we register ours over it — without touching torch's files: a
post-import hook on `torch._dynamo.device_interface` calls `register()`.
"""
import importlib.abc
import importlib.machinery
import sys
from collections import namedtuple

import torch

_TARGET = "torch._dynamo.device_interface"


def _make_interface():
    from torch._dynamo.device_interface import DeviceInterface

    tpu = torch.tpu

    class TorchTpuInterface(DeviceInterface):
        device = tpu.device
        Event = tpu.Event
        Stream = tpu.Stream

        class Worker:
            @staticmethod
            def set_device(device):
                tpu.set_device(device)

            @staticmethod
            def current_device():
                return tpu.current_device()

            @staticmethod
            def get_device_properties(device=None):
                return tpu.get_device_properties(device)

        current_device = staticmethod(tpu.current_device)
        set_device = staticmethod(tpu.set_device)
        device_count = staticmethod(tpu.device_count)
        is_available = staticmethod(tpu.is_available)
        synchronize = staticmethod(tpu.synchronize)
        current_stream = staticmethod(tpu.current_stream)
        memory_allocated = staticmethod(tpu.memory_allocated)

        @staticmethod
        def maybe_exchange_device(device):
            old = tpu.current_device()
            if device != old:
                tpu.set_device(device)
            return old

        exchange_device = maybe_exchange_device

        @staticmethod
        def stream(stream):
            return tpu.stream(stream)

        @staticmethod
        def set_stream(stream):
            pass

        @staticmethod
        def get_raw_stream(device_idx):
            return 0

        @classmethod
        def get_device_properties(cls, device=None):
            return tpu.get_device_properties(device)

        @staticmethod
        def get_compute_capability(device=None):
            return ""

        @staticmethod
        def is_bf16_supported(including_emulation=False):
            return True

        @classmethod
        def is_dtype_supported(cls, dtype, including_emulation=False):
            return not dtype.is_complex and dtype not in (torch.float8_e4m3fn, torch.float8_e5m2)

        @staticmethod
        def is_triton_capable(device=None):
            return False

    TorchTpuInterface.Worker.properties = namedtuple("TPUProperties", ["multi_processor_count"])
    return TorchTpuInterface


def register():
    """Registers our interface for "tpu" and "tpu:i" (after dynamo's own init)."""
    from torch._dynamo import device_interface as di

    di.get_interface_for_device("cpu")  # runs dynamo's lazy init first, which registers its TpuInterface
    iface = _make_interface()
    di.register_interface_for_device("tpu", iface)
    for i in range(torch.tpu.device_count()):
        di.register_interface_for_device(f"tpu:{i}", iface)
    return iface


class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        register()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != _TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def install():
    if _TARGET in sys.modules:
        register()
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
