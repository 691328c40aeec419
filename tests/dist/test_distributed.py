"""torch.distributed on tpu through the `tpu_dist` backend: 2 processes on
loopback (a free port chosen per test), each case compared with the same
computation on CPU (tests/dist/cases.py). Every launch is bounded in time."""
import os
import socket
import subprocess
import sys
import time

import pytest
import torch.distributed as dist

import torch_tpu  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases.py")
WORLD = 2
TIMEOUT_S = 240


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(cases, **env):
    port = _free_port()
    env = {**os.environ, **env}
    procs = [subprocess.Popen([sys.executable, CASES, str(r), str(WORLD), str(port), ",".join(cases)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for r in range(WORLD)]
    outs, deadline = [], time.monotonic() + TIMEOUT_S
    try:
        for p in procs:
            out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            outs.append(out)
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        tails = [p.communicate()[0] or "" for p in procs]
        pytest.fail(f"{cases} did not finish within {TIMEOUT_S} s (a hang):\n" +
                    "\n".join(f"rank {r}: ...{t[-3000:]}" for r, t in enumerate(tails)))
    for r, (p, out) in enumerate(zip(procs, outs)):
        lines = [line for line in out.splitlines() if "absl" not in line and not line.startswith("I0000")]
        assert p.returncode == 0, f"rank {r} exited {p.returncode}:\n" + "\n".join(lines[-60:])
        for c in cases:
            assert f"PASS {c}" in out, f"rank {r} did not pass {c}:\n" + "\n".join(lines[-60:])
    return outs


def test_backend_is_registered():
    assert "tpu_dist" in dist.Backend.backend_list
    assert dist.Backend.default_device_backend_map.get("tpu") == "tpu_dist"


def test_collectives():
    launch(["all_reduce", "in_place_on_device_memory", "broadcast_reduce", "all_gather", "reduce_scatter", "all_to_all", "gather_scatter",
            "send_recv", "async_and_barrier", "objects", "non_contiguous", "fused_mode", "compiled_collective",
            "random_sequence"])


def test_every_documented_form():
    launch(["output_forms", "reduce_ops"])


def test_bad_input_raises_on_every_rank():
    launch(["cpu_tensor_error", "mismatch_error", "form_errors"])


def test_debug_detail_checks_collectives():
    """TORCH_DISTRIBUTED_DEBUG=DETAIL wraps the backend (it needs our sequence numbers)."""
    launch(["detail_checks"], TORCH_DISTRIBUTED_DEBUG="DETAIL")


def test_device_path_refused_on_the_cpu_plugin():
    launch(["noinit_device_path_refused"])


def test_mpmd_ranks_run_different_code():
    outs = launch(["mpmd"])
    assert "rank 0 only" in outs[0] and "rank 0 only" not in outs[1]


def test_ddp_matches_full_batch_cpu():
    launch(["ddp"])


def test_fsdp2_matches_unsharded_cpu():
    launch(["fsdp2"])


def test_dtensor_and_tensor_parallel():
    launch(["dtensor"])


def test_example_train_ddp_under_torchrun():
    """examples/train_ddp.py as README and `make demo` run it."""
    example = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "train_ddp.py")
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    r = subprocess.run([torchrun, "--standalone", "--nproc-per-node", str(WORLD), example],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "weights equal to the single-process CPU run: True" in r.stdout, r.stdout[-3000:]
