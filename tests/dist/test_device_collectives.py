"""Collectives as StableHLO programs on the devices (runtime/collective.c),
the path tpu_dist takes where the PJRT client spans the processes (GPU
plugins). Here, on the CPU plugin: across the two devices of one client, and
through c10d with a group of one (tests/dist/device_cases.py, each in a fresh
process: the device count and the path are fixed when the runtime starts)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "device_cases.py")


def run(part, **env):
    r = subprocess.run([sys.executable, SCRIPT, part], capture_output=True, text=True, timeout=600,
                       env={**os.environ, **env})
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert f"PASS {part}" in r.stdout, out[-4000:]
    return r.stdout


def test_in_process_devices_match_cpu():
    """Every kind, reduction, dtype and layout, Strict and Fused, randomized against CPU."""
    out = run("local", TORCH_TPU_NUM_CPU_DEVICES="2")
    assert "(306 cases)" in out, out


def test_c10d_ops_on_the_device_path():
    run("group")


def test_c10d_ops_on_the_device_path_under_debug_detail():
    """TORCH_DISTRIBUTED_DEBUG=DETAIL: c10d's ProcessGroupWrapper around tpu_dist (sequence numbers)."""
    run("group", TORCH_DISTRIBUTED_DEBUG="DETAIL")
