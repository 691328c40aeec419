"""Eager modes (Strict, Debug) agree with each other and with CPU; missing ops
raise a clear error or fall back to the CPU; a missing plugin is reported with
install instructions."""
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import torch_tpu
from torch_tpu._eager import current_eager_mode

DEV = torch.device("tpu")

# An op with no lowering, used for the error and fallback tests: a test-only
# custom op (CPU kernels only), so that no lowering added later ever makes it
# supported. Functional, in-place and out= forms; exec'd here and in the
# subprocess tests.
MISSING_OP = "tt_test::missing"
MISSING_DEF = """
import torch
_tt_test_lib = torch.library.Library("tt_test", "DEF")
_tt_test_lib.define("missing(Tensor self, Tensor other) -> Tensor")
_tt_test_lib.define("missing_(Tensor(a!) self, Tensor other) -> Tensor(a!)")
_tt_test_lib.define("missing.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
def _tt_missing(a, b):
    return torch.atan2(a, b) * a + b
def _tt_missing_(a, b):
    return a.copy_(_tt_missing(a, b))
def _tt_missing_out(a, b, *, out):
    return out.copy_(_tt_missing(a, b))
_tt_test_lib.impl("missing", _tt_missing, "CPU")
_tt_test_lib.impl("missing_", _tt_missing_, "CPU")
_tt_test_lib.impl("missing.out", _tt_missing_out, "CPU")
"""
exec(MISSING_DEF)
missing = torch.ops.tt_test.missing
# torch.ops calls do not turn C++ warnings into Python warnings: the fallback's
# warning then goes to stderr, so the tests count both.
WARNED = MISSING_OP + " is not supported on the tpu device yet; running it on the CPU"


def missing_op(x):
    return missing(x, x * 0.5)


def _warned(ws, err):
    return sum(MISSING_OP in str(w.message) for w in ws) + err.count(WARNED)


def _env(**kw):
    env = dict(os.environ)
    for k in ("TORCH_TPU_LAUNCH_BLOCKING", "TORCH_TPU_CPU_FALLBACK", "TORCH_TPU_PJRT_PLUGIN",
              "TORCH_TPU_PJRT_PLATFORM", "TORCH_TPU_DEFER_AND_FUSE"):
        env.pop(k, None)
    env.update(kw)
    return env


def _run(code, with_stderr=False, **env):
    """Runs `code` in a fresh interpreter; returns its stdout (and stderr if
    with_stderr), asserting success."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=_env(**env),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"subprocess failed ({r.returncode}):\n{r.stdout}\n{r.stderr[-3000:]}"
    return (r.stdout, r.stderr) if with_stderr else r.stdout


# A workload touching views, in-place ops through views, matmul, reductions,
# softmax, dtype conversions, indexing and RNG.
WORKLOAD = """
def workload(dev):
    import torch
    g = torch.Generator().manual_seed(0)
    a = torch.randn(8, 16, generator=g).to(dev)
    b = torch.randn(16, 4, generator=g).to(dev)
    x = a @ b
    x[:, 1:3] += 1
    x.t()[0].mul_(2)
    y = torch.softmax(x, dim=1).sum(0)
    z = a.view(4, 32).amax(1) - a[::2, ::4].mean()
    i = (a > 0).to(torch.int32).sum(1)
    a[a < -1] = 0
    torch.tpu.manual_seed(3) if dev.type == "tpu" else None
    r = torch.rand(5, device=dev) if dev.type == "tpu" else torch.zeros(5)
    h = a.to(torch.bfloat16).float().sum()
    return [t.cpu() for t in (x, y, z, i, a, r, h)]
"""


# A smaller one for the subprocess (every new op signature costs a compile there).
SMALL_WORKLOAD = """
def workload(dev):
    import torch
    g = torch.Generator().manual_seed(0)
    a = torch.randn(8, 16, generator=g).to(dev)
    x = a @ a.t()
    x[:, 1:3] += 1
    y = torch.softmax(x, dim=1)
    torch.tpu.manual_seed(3)
    r = torch.rand(5, device=dev)
    return [t.cpu() for t in (x, y, r)]
"""


def _workload(src=WORKLOAD):
    ns = {}
    exec(src, ns)
    return ns["workload"]


# The mode of the environment (make test runs the suite in Strict and in Fused).
ENV_MODE = ("debug" if os.environ.get("TORCH_TPU_LAUNCH_BLOCKING") == "1" else
            "fused" if os.environ.get("TORCH_TPU_DEFER_AND_FUSE") == "1" else "strict")


def test_debug_mode_equals_strict_and_cpu():
    workload = _workload()
    assert current_eager_mode() == ENV_MODE
    with torch_tpu.eager_mode("strict"):
        assert current_eager_mode() == "strict"
        strict = workload(DEV)
    with torch_tpu.eager_mode("debug"):
        assert current_eager_mode() == "debug"
        debug = workload(DEV)
    assert current_eager_mode() == ENV_MODE
    cpu = workload(torch.device("cpu"))
    for s, d in zip(strict, debug):
        torch.testing.assert_close(d, s, rtol=0, atol=0)
    for s, c in zip(strict[:5], cpu[:5]):  # [5] is RNG (device specific), [6] exact either way
        torch.testing.assert_close(s, c)
    torch.testing.assert_close(strict[6], cpu[6])


def test_eager_mode_rejects_unknown():
    with pytest.raises(ValueError):
        with torch_tpu.eager_mode("nonsense"):
            pass
    assert current_eager_mode() == ENV_MODE


def test_launch_blocking_env_equals_strict(tmp_path):
    out = tmp_path / "debug.pt"
    _run(SMALL_WORKLOAD + f"""
import torch, torch_tpu
from torch_tpu._eager import current_eager_mode
assert current_eager_mode() == "debug", current_eager_mode()
torch.save(workload(torch.device("tpu")), {str(out)!r})
""", TORCH_TPU_LAUNCH_BLOCKING="1")
    debug = torch.load(out)
    strict = _workload(SMALL_WORKLOAD)(DEV)
    for s, d in zip(strict, debug):
        torch.testing.assert_close(d, s, rtol=0, atol=0)


def test_missing_op_is_absent():
    ops = torch_tpu.supported_ops()
    assert "aten::add.Tensor" in ops
    assert not any(o == MISSING_OP or o.startswith(MISSING_OP + ".") for o in ops)


@pytest.mark.parametrize("mode", ["strict", "debug"])
def test_unsupported_op_raises(mode):
    x = torch.rand(4).to(DEV)
    with torch_tpu.eager_mode(mode):
        with pytest.raises((RuntimeError, NotImplementedError)) as ei:
            missing_op(x)
    msg = str(ei.value)
    assert "is not supported on the tpu device yet" in msg
    assert MISSING_OP in msg
    assert "cpu_fallback" in msg or "TORCH_TPU_CPU_FALLBACK" in msg


def test_cpu_fallback_runs_and_warns_once(capfd):
    xc = torch.rand(4, 3) * 4 + 0.1
    xd = xc.to(DEV)
    torch_tpu.cpu_fallback(True)
    try:
        capfd.readouterr()
        with warnings.catch_warnings(record=True) as w1:
            warnings.simplefilter("always")
            got = missing_op(xd)
        err1 = capfd.readouterr().err
        with warnings.catch_warnings(record=True) as w2:
            warnings.simplefilter("always")
            got2 = missing_op(xd.t())  # second use (other shape): no new warning
        err2 = capfd.readouterr().err
    finally:
        torch_tpu.cpu_fallback(False)
    assert got.device.type == "tpu" and got2.device.type == "tpu"
    torch.testing.assert_close(got.cpu(), missing_op(xc))
    torch.testing.assert_close(got2.cpu(), missing_op(xc.t()))
    assert _warned(w1, err1) == 1, ([str(w.message) for w in w1], err1)
    assert _warned(w2, err2) == 0, ([str(w.message) for w in w2], err2)
    # off again: raises
    with pytest.raises((RuntimeError, NotImplementedError)):
        missing_op(xd)


def test_cpu_fallback_inplace_and_out_on_views():
    xc = torch.rand(4, 6) * 4 + 0.1
    xd = xc.to(DEV)
    torch_tpu.cpu_fallback(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.ops.tt_test.missing_(xd[:, ::2], xd[:, 1::2])
            torch.ops.tt_test.missing_(xc[:, ::2], xc[:, 1::2])
            od = torch.empty(3, 4, device=DEV)
            torch.ops.tt_test.missing.out(xd[1:, :4], xd[:3, 2:], out=od)
    finally:
        torch_tpu.cpu_fallback(False)
    torch.testing.assert_close(xd.cpu(), xc)
    torch.testing.assert_close(od.cpu(), missing(xc[1:, :4], xc[:3, 2:]))


def test_cpu_fallback_env(tmp_path):
    out = tmp_path / "fb.pt"
    _, err = _run(MISSING_DEF + f"""
import sys, warnings, torch, torch_tpu
missing = torch.ops.tt_test.missing
x = (torch.arange(12.0) / 3 + 0.25).view(3, 4)
with warnings.catch_warnings(record=True) as w1:
    warnings.simplefilter("always")
    a = missing(x.to("tpu"), x.to("tpu") * 0.5)
sys.stderr.write("@@PHASE2@@\\n"); sys.stderr.flush()
with warnings.catch_warnings(record=True) as w2:
    warnings.simplefilter("always")
    b = missing((x * 2).to("tpu"), x.to("tpu"))
n1 = sum("{MISSING_OP}" in str(w.message) for w in w1)
n2 = sum("{MISSING_OP}" in str(w.message) for w in w2)
torch.save([a.cpu(), b.cpu(), torch.tensor([n1, n2])], {str(out)!r})
""", with_stderr=True, TORCH_TPU_CPU_FALLBACK="1")
    a, b, counts = torch.load(out)
    err1, err2 = err.split("@@PHASE2@@")
    counts = counts + torch.tensor([err1.count(WARNED), err2.count(WARNED)])
    x = (torch.arange(12.0) / 3 + 0.25).view(3, 4)
    torch.testing.assert_close(a, missing_op(x))
    torch.testing.assert_close(b, missing(x * 2, x))
    assert counts.tolist() == [1, 0]


NO_PLUGIN = """
import torch, torch_tpu
print("count", torch.tpu.device_count())
print("avail", torch.tpu.is_available())
try:
    torch.ones(1, device="tpu")
    print("created")
except Exception as e:
    print("error", type(e).__name__)
    print("MSG<<" + str(e) + ">>")
"""


def _no_plugin_check(out):
    assert "count 0" in out
    assert "avail False" in out
    assert "created" not in out
    assert "error " in out
    msg = out.split("MSG<<", 1)[1].split(">>", 1)[0]
    assert "pip install" in msg or "TORCH_TPU_PJRT_PLUGIN" in msg, msg
    return msg


def test_no_plugin_explicit_path():
    out = _run(NO_PLUGIN, TORCH_TPU_PJRT_PLUGIN="/nonexistent/plugin.so")
    msg = _no_plugin_check(out)
    assert "/nonexistent/plugin.so" in msg  # names the explicit path that is missing


def test_no_plugin_platform_tpu():
    out = _run(NO_PLUGIN, TORCH_TPU_PJRT_PLATFORM="tpu", TPU_SKIP_MDS_QUERY="1")
    msg = _no_plugin_check(out)
    assert "pip install" in msg, msg
