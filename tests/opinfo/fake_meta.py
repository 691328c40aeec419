"""Meta kernels that state another backend's limits.

Under torch.compile, dynamo and AOTAutograd trace with fake tensors of the
device: PyTorch's meta kernels give their output metadata, and some of them
check what a CUDA kernel accepts (device_hint(x) == "cuda" for any device
but the CPU: _grouped_mm asks for bfloat16). Where the device computes the
op, a meta kernel that refuses it (or describes another result) breaks
compilation of code that runs in eager. This sweep finds them: every OpInfo
sample that runs in eager on tpu is run again on fake tpu tensors, and the
fake result must exist and have the eager result's shapes and dtypes.

    python -m tests.opinfo.fake_meta [--dtypes float32,bfloat16] [--ops a,b]
"""
import argparse
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from . import harness
from .compare import flatten

MAX_SAMPLES = 2


def _fake_copy(mode, x):
    return torch.utils._pytree.tree_map(
        lambda t: mode.from_tensor(t) if isinstance(t, torch.Tensor) else t, x)


def _meta(x):
    return [(tuple(t.shape), t.dtype) if isinstance(t, torch.Tensor) else None for t in flatten(x)]


def run_case(op, dtype, max_samples=MAX_SAMPLES):
    """'pass', 'no-samples' (nothing ran in eager on tpu), or raises with why the fake run differs."""
    done = 0
    for s in harness.get_samples(op, dtype, False, max_samples):
        inp, args, kwargs, m = harness.move(s, True)
        if not m.touched_tpu:
            continue
        try:
            want = op.op(inp, *args, **kwargs)
        except Exception:  # noqa: BLE001 - not computed in eager: nothing for the fake run to match
            continue
        mode = FakeTensorMode(allow_non_fake_inputs=False)
        finp, fargs, fkwargs = _fake_copy(mode, (inp, args, kwargs))
        with mode:
            try:
                got = op.op(finp, *fargs, **fkwargs)
            except Exception as e:  # noqa: BLE001
                if "data-dependent" in str(e) or type(e).__name__ in ("DynamicOutputShapeException",
                                                                      "DataDependentOutputException",
                                                                      "GuardOnDataDependentSymNode"):
                    continue  # an output shape that depends on values: dynamo breaks the graph there
                raise RuntimeError(f"fake refuses: {type(e).__name__}: {harness.first_line(e, 200)}") from None
        if _meta(got) != _meta(want):
            raise RuntimeError(f"fake metadata {_meta(got)} != eager {_meta(want)}")
        done += 1
    return "pass" if done else "no-samples"


def sweep(dtypes=("float32", "bfloat16"), ops=None, out=sys.stdout):
    rows = []
    for op in harness.load_op_db():
        key = harness.op_key(op)
        if ops and key not in ops and op.name not in ops:
            continue
        try:
            ok = set(op.supported_dtypes("cpu")) | set(op.supported_dtypes("cuda"))
        except Exception:  # noqa: BLE001
            continue
        for name in dtypes:
            d = harness.DTYPES[name]
            if d not in ok:
                continue
            try:
                st, why = run_case(op, d), ""
            except Exception as e:  # noqa: BLE001
                st, why = "fail", harness.first_line(e, 240)
            rows.append((key, name, st, why))
            if st == "fail":
                print(f"{key:45s} {name:9s} {why}", file=out, flush=True)
    counts = {}
    for r in rows:
        counts[r[2]] = counts.get(r[2], 0) + 1
    print("counts:", counts, file=out, flush=True)
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--ops", default=None)
    a = ap.parse_args()
    sweep(tuple(a.dtypes.split(",")), set(a.ops.split(",")) if a.ops else None)
