"""`python -m torch_tpu.doctor`: the report on a working device, and on a missing plugin (exit 1, how to install)."""
import os
import subprocess
import sys


def run(**env):
    return subprocess.run([sys.executable, "-m", "torch_tpu.doctor"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


def test_doctor_reports_the_plugin_and_a_working_device():
    r = run(TORCH_TPU_DEFER_AND_FUSE="1")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    out = r.stdout
    import torch_tpu
    info = torch_tpu._C._info()
    assert info["plugin_path"] in out and f"PJRT C API {info['api_version']}" in out, out
    assert f"StableHLO {info['stablehlo_current_version']}" in out, out
    assert "smoke test: ok" in out, out
    assert "eager mode: fused" in out and "TORCH_TPU_DEFER_AND_FUSE=1" in out, out
    assert "compilation cache:" in out and "requests" in out, out
    assert "backend tpu_dist registered" in out, out


def test_doctor_says_how_to_install_a_plugin():
    r = run(TORCH_TPU_PJRT_PLUGIN="/nonexistent/plugin.so")
    assert r.returncode == 1, r.stdout + r.stderr[-3000:]
    assert "device: none" in r.stdout and "/nonexistent/plugin.so" in r.stdout, r.stdout
    assert "pip install" in r.stdout, r.stdout
