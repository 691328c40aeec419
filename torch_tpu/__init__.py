"""torch_tpu: the `tpu` device for PyTorch, on PJRT plugins (TPU, GPU, CPU).

`import torch_tpu` (or torch's backend autoload) makes `torch.device("tpu")`
a real device and installs `torch.tpu`, a module shaped like `torch.cuda`.
"""


def _autoload():
    """Entry point of the `torch.backends` group: importing is all it takes.

    Defined before `import torch`: when torch_tpu is imported first, torch's
    autoload finds this package half-initialized and only needs this name."""


import sys as _sys  # noqa: E402

from ._version import VERSION as _SOURCE_VERSION  # noqa: E402


def _installed_version():
    """The installed distribution's version (what pip reports); the source
    tree's when the package runs from a checkout that was never installed."""
    import importlib.metadata as md

    try:
        return md.version("torch_tpu")
    except md.PackageNotFoundError:
        return _SOURCE_VERSION


__version__ = _installed_version()

import torch as _torch  # noqa: E402

if _torch._C._get_privateuse1_backend_name() != "tpu":
    _torch.utils.rename_privateuse1_backend("tpu")

from . import _C  # noqa: E402  (registers the kernels; loads no plugin yet)

_C._set_search_path([p for p in _sys.path if p])

from . import device_module as _device_module  # noqa: E402
from ._eager import cpu_fallback, eager_mode  # noqa: E402
from . import api  # noqa: E402

if not hasattr(_torch, "tpu"):
    _torch._register_device_module("tpu", _device_module)
    _torch.utils.generate_methods_for_privateuse1_backend(
        for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
    )

from . import _dynamo_interface  # noqa: E402

_dynamo_interface.install()

from . import _fake  # noqa: E402

_fake.install()

from . import distributed  # noqa: E402  (registers the tpu_dist process-group backend)

tpu_device = api.tpu_device


def _drain_autograd_threads():
    """At exit: see drain_autograd_threads in csrc/bridge/module.cpp (an
    abort at exit after a backward on the device, torch 2.13)."""
    try:
        if _C._runtime_started():  # (is_initialized() would start the plugin at exit)
            _C._drain_autograd_threads(_device_module.device_count())
    except Exception:
        pass  # a device that failed meanwhile: nothing to drain


import atexit as _atexit  # noqa: E402

_atexit.register(_drain_autograd_threads)

__all__ = ["api", "cpu_fallback", "eager_mode", "tpu_device", "supported_ops"]


def supported_ops():
    """Names of the ATen ops with a lowering (sorted)."""
    return sorted(_C._supported_ops())
