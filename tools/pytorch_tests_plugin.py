"""pytest plugin loaded by tools/pytorch_tests.py into each child pytest process.

It must be loaded with `-p pytorch_tests_plugin` so that it is imported before
pytest collects PyTorch's test files: importing torch_tpu here registers the
"tpu" device (PrivateUse1 renamed) and torch.tpu before
torch.testing._internal.common_device_type computes its device test bases.

Environment (set by the runner):
  PTT_RESULTS   file that receives one JSON record per line (appended, flushed)
  PTT_EXCLUDE   file of test ids (one a line) already finished in an earlier
                child of the same run; they are deselected
  PTT_TIMEOUT   per-test time limit in seconds (0: none)
  PTT_DTYPES    comma-separated dtype names: a test whose name ends in dtype
                suffixes (test_x_tpu_float32, test_x_cpu_int64_float32) runs only
                when all of them are listed; tests without one always run
"""
import json
import os
import re
import signal
import time

import pytest

if os.environ.get("PTT_IMPORT_TPU", "1") == "1":
    import torch_tpu  # noqa: F401  (must precede torch.testing._internal)

_RESULTS = os.environ.get("PTT_RESULTS")
_EXCLUDE = os.environ.get("PTT_EXCLUDE")
_TIMEOUT = float(os.environ.get("PTT_TIMEOUT", "0") or 0)
_DTYPES = {d for d in os.environ.get("PTT_DTYPES", "").split(",") if d}

# dtype suffixes of instantiated device tests (torch.testing._internal.common_device_type names them
# after str(dtype) without "torch.")
_ALL_DTYPES = {"float16", "float32", "float64", "bfloat16", "complex32", "complex64", "complex128",
               "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
               "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
               "half", "float", "double", "cfloat", "cdouble", "long", "int", "short", "bits8", "bits16",
               "qint8", "quint8", "qint32", "quint4x2", "quint2x4"}
_DEVICE_TAG = re.compile(r".*_(?:tpu|cpu|privateuse1|cuda)(?:_(.*))?$")  # the last device tag


def _dtypes_of(name):
    """The dtype suffixes of a test name, or () where it has none."""
    base = name.split("[", 1)[0]
    m = _DEVICE_TAG.match(base)
    if not m or not m.group(1):
        return ()
    rest = m.group(1)
    found = []
    while rest:  # greedy over known names (float8_e4m3fn contains "_")
        for d in sorted(_ALL_DTYPES, key=len, reverse=True):
            if rest == d or rest.startswith(d + "_"):
                found.append(d)
                rest = rest[len(d) + 1:]
                break
        else:
            return ()  # not dtype suffixes (a parametrization after the device): keep the test
    return tuple(found)

_out = open(_RESULTS, "a", buffering=1) if _RESULTS else None
_state = {}


class TestTimeLimit(Exception):
    """Raised inside a test that ran past PTT_TIMEOUT."""


def _emit(rec):
    if _out is not None:
        _out.write(json.dumps(rec) + "\n")
        _out.flush()
        os.fsync(_out.fileno())


def _one_line(text, limit=300):
    """The first lines of a message joined into one (an assertion's first line is often
    only "Comparing" or "Tensor-likes are not close!")."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    # common_utils appends a "to execute this test, run ..." hint: not a reason
    lines = [line for line in lines if not line.startswith(("To execute this test",
                                                            "PYTORCH_TEST_WITH", "python "))]
    out = ""
    for line in lines[:4]:
        out = f"{out} | {line}" if out else line
        if len(out) >= 80:
            break
    return out[:limit]


def _reason(report):
    lr = report.longrepr
    if lr is None:
        return ""
    if "TestTimeLimit" in str(lr):  # also where an assertion helper wrapped it in its own error
        return f"ran past the {_TIMEOUT:g} s time limit"
    if isinstance(lr, tuple) and len(lr) == 3:  # skip: (path, line, reason)
        return _one_line(lr[2])
    crash = getattr(lr, "reprcrash", None)
    chain = getattr(lr, "chain", None)
    if chain and len(chain) > 1 and chain[0][1] is not None:
        crash = chain[0][1]  # the root cause: assertEqual re-raises its errors as "Comparing ..."
    if crash is not None and getattr(crash, "message", None):
        return _one_line(crash.message)
    return _one_line(str(lr))


def pytest_collection_modifyitems(session, config, items):
    done = set()
    if _EXCLUDE and os.path.exists(_EXCLUDE):
        with open(_EXCLUDE) as f:
            done = {line.strip() for line in f if line.strip()}
    keep, drop = [], []
    for item in items:
        dts = _dtypes_of(item.name) if _DTYPES else ()
        out = item.nodeid in done or any(d not in _DTYPES for d in dts)
        (drop if out else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_finish(session):
    _emit({"event": "collected", "n": len(session.items)})


def pytest_runtest_logstart(nodeid, location):
    _state[nodeid] = {"outcome": None, "reason": "", "t0": time.monotonic()}
    _emit({"event": "start", "id": nodeid})


def pytest_runtest_logreport(report):
    st = _state.setdefault(report.nodeid, {"outcome": None, "reason": "", "t0": time.monotonic()})
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if xfail:
            st["outcome"] = "xfailed" if report.skipped else "xpassed"
            st["reason"] = _one_line(report.wasxfail) or _reason(report)
        elif report.passed:
            st["outcome"] = "passed"
        elif report.skipped:
            st["outcome"], st["reason"] = "skipped", _reason(report)
        else:
            st["outcome"], st["reason"] = "failed", _reason(report)
    elif report.when == "setup" and not report.passed:
        if report.skipped:
            st["outcome"] = "xfailed" if xfail else "skipped"
            st["reason"] = _reason(report)
        else:
            st["outcome"], st["reason"] = "failed", "setup: " + _reason(report)
    elif report.when == "teardown" and report.failed and st["outcome"] != "failed":
        st["outcome"], st["reason"] = "failed", "teardown: " + _reason(report)


def pytest_runtest_logfinish(nodeid, location):
    st = _state.pop(nodeid, None) or {"outcome": None, "reason": "", "t0": time.monotonic()}
    _emit({"event": "finish", "id": nodeid, "outcome": st["outcome"] or "failed",
           "reason": st["reason"], "seconds": round(time.monotonic() - st["t0"], 3)})


def _on_alarm(signum, frame):
    raise TestTimeLimit(f"test ran past the {_TIMEOUT:g} s time limit")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if _TIMEOUT > 0:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, _TIMEOUT)
    try:
        yield
    finally:
        if _TIMEOUT > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def pytest_sessionfinish(session, exitstatus):
    _emit({"event": "sessionfinish", "exitstatus": int(exitstatus)})
