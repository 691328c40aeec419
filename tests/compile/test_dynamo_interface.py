"""torch 2.13 registers its own dynamo TpuInterface for "tpu"; ours must win, without patching torch."""
import os
import subprocess
import sys

import torch
import torch_tpu  # noqa: F401


def _check_interface():
    from torch._dynamo import device_interface as di

    iface = di.get_interface_for_device("tpu")
    assert iface is not di.TpuInterface
    assert iface.is_available() == torch.tpu.is_available()
    assert iface.device_count() == torch.tpu.device_count()
    assert iface.current_device() == torch.tpu.current_device()
    assert iface.is_dtype_supported(torch.float64) and iface.is_dtype_supported(torch.float16)
    assert not iface.is_dtype_supported(torch.complex64)
    assert iface.get_device_properties().platform_name == torch.tpu.get_device_properties().platform_name
    assert di.get_interface_for_device(torch.device("tpu", 0)) is iface


def test_our_interface_replaces_torchs():
    _check_interface()


def test_dynamo_imported_before_torch_tpu():
    code = (
        "import torch, torch._dynamo\n"
        "from torch._dynamo import device_interface as di\n"
        "import torch_tpu\n"
        "i = di.get_interface_for_device('tpu')\n"
        "assert i is not di.TpuInterface and i.is_dtype_supported(torch.float64)\n"
        "print('ok')\n"
    )
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith("ok")
