"""The package itself: its version is the installed distribution's."""
import importlib.metadata as md

import torch_tpu
from torch_tpu import _version


def test_version_is_the_installed_distributions():
    assert torch_tpu.__version__ == md.version("torch_tpu")


def test_installed_distribution_is_this_source_tree():
    # `make` installs the package from this tree (editable): metadata and
    # source agree, so a version bump in _version.py reaches pip's metadata.
    assert md.version("torch_tpu") == _version.VERSION
    assert torch_tpu.__version__.count(".") >= 2


def _start_device(**env):
    import os
    import subprocess
    import sys
    code = "import torch, torch_tpu; print((torch.ones(2, device='tpu') + 1).cpu().tolist())"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


def test_plugin_start_up_log_is_quiet_by_default():
    r = _start_device(TORCH_TPU_PJRT_LOG="0")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "[2.0, 2.0]"
    assert "absl::InitializeLog" not in r.stderr and "create_options" not in r.stderr, r.stderr


def test_plugin_start_up_log_comes_back_with_torch_tpu_pjrt_log():
    r = _start_device(TORCH_TPU_PJRT_LOG="1")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "[2.0, 2.0]"
    # XLA's CPU plugin logs the option torch_tpu passes when it creates the client.
    assert "cpu_device_count set via create_options" in r.stderr, r.stderr
