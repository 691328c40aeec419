"""OpInfo conformance harness: run PyTorch's own OpInfo samples on CPU and on
`tpu`, compare, and classify each (op, dtype, variant).

Variants: "fwd" (forward, every dtype in DTYPES the OpInfo supports on CPU),
"bwd" (gradients of a weighted sum of the float outputs, float32 and
complex64: complex outputs enter through their real view), "inplace"
(`op.inplace_variant`, float32) and "out" (`out=` tensors, float32).

Statuses, per (op, dtype, variant):
  pass           every sample that CPU can run agrees on tpu
  fail           some sample gives a different answer (a silent wrong result)
  error          tpu raised (e.g. "aten::xyz is not supported on the tpu device yet")
  cpu-ref-fails  CPU itself raised on every sample: nothing to compare, excluded
  no-samples     the OpInfo produced no sample, or none that touches tpu: excluded
  timeout        the variant ran past its time limit
  crash          the process died in this op (recorded by the runner, run.py)
"""
import contextlib
import os
import re
import signal
import time

import torch

import torch_tpu  # noqa: F401,E402  (registers the tpu device)

from . import special  # noqa: E402
from .compare import Mismatch, NEAR_TOL, compare, equal_on_cpu, flatten  # noqa: E402,F401
from .tolerances import tolerance  # noqa: E402

TPU = torch.device("tpu")

DTYPES = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "int64": torch.int64,
    "int32": torch.int32,
    "bool": torch.bool,
    "complex64": torch.complex64,
    "float64": torch.float64,
    "complex128": torch.complex128,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
}
# Dtypes with a backward variant (gradients through complex inputs: PyTorch's
# conjugate Wirtinger convention, the same on CPU and tpu).
BWD_DTYPES = ("float32", "complex64")
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}

# Samples compared per variant in the full sweep (the first N the OpInfo makes).
MAX_SAMPLES = {"fwd_float32": 12, "fwd": 4, "bwd": 6, "inplace": 4, "out": 3, "compiled": 3, "compiled_bwd": 3}
# `run.py --compiled`: each OpInfo's float32 forward and backward under torch.compile(backend="tpu")
COMPILED = os.environ.get("TT_OPINFO_COMPILED") == "1"
VARIANT_TIMEOUT_S = 90

_MISSING_RE = re.compile(r"(aten::[\w.]+) is not supported on the tpu device")
_DTYPE_RE = re.compile(r"dtype (\S+) is not supported on the tpu device")
_LAYOUT_RE = re.compile(r"from the '(Sparse\w*|Mkldnn\w*|Quantized\w*)' backend")
_ARG_RE = re.compile(r"tpu: argument '(\w+)' of type (\S+) is not supported")


def op_key(op):
    """The OpInfo's unique name: `name` or `name.variant_test_name`."""
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def load_op_db():
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


# ---- moving samples ------------------------------------------------------------

class _Mover:
    """Copies a sample's tensors (CPU clone, or to tpu), keeping identity between
    repeated tensors, requires_grad on leaves (when `grad`), and non-tensors.
    On tpu, CPU devices ('cpu', torch.device('cpu')) become tpu and CPU
    generators are dropped (`touched_tpu` tells whether the sample reaches tpu)."""

    def __init__(self, to_tpu, grad, keep=()):
        self.to_tpu, self.grad = to_tpu, grad
        self.memo = {}
        if to_tpu:  # tensors PyTorch wants on the CPU (special.KEEP_ON_CPU)
            self.memo = {i: None for i in keep}
        self.touched_tpu = False
        self.dropped_generator = False

    def __call__(self, x):
        if isinstance(x, torch.Tensor):
            if id(x) in self.memo:
                return x if self.memo[id(x)] is None else self.memo[id(x)]
            t = x.detach()
            if self.to_tpu:
                t = t.to(TPU)
                self.touched_tpu = True
            else:
                t = t.clone()
            if self.grad and x.requires_grad:
                t.requires_grad_(True)
            self.memo[id(x)] = t
            return t
        if isinstance(x, torch.Size):
            return x
        if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple
            return type(x)(*(self(e) for e in x))
        if isinstance(x, (list, tuple)):
            return type(x)(self(e) for e in x)
        if isinstance(x, dict):
            return {k: self(v) for k, v in x.items()}
        if not self.to_tpu:
            return x
        if isinstance(x, torch.device) and x.type == "cpu":
            self.touched_tpu = True
            return TPU
        if isinstance(x, str) and (x == "cpu" or x.startswith("cpu:")):
            self.touched_tpu = True
            return "tpu"
        if isinstance(x, torch.Generator):
            self.dropped_generator = True
            return None
        return x


def move(sample, to_tpu, grad=False, keep=()):
    """(input, args, kwargs, mover) copied for one run (`keep`: ids of tensors
    left on CPU)."""
    m = _Mover(to_tpu, grad, keep)
    inp = m(sample.input)
    args = m(tuple(sample.args))
    kwargs = m(dict(sample.kwargs))
    return inp, args, kwargs, m


# ---- classifying errors -----------------------------------------------------------

def classify_error(exc):
    """(kind, detail) for an exception raised on tpu."""
    text = f"{type(exc).__name__}: {exc}"
    m = _MISSING_RE.search(text)
    if m:
        return "missing-op", m.group(1)
    m = _DTYPE_RE.search(text)
    if m:
        return "unsupported-dtype", m.group(1)
    if "complex" in text.lower() and "not supported" in text:
        m = re.search(r"(aten::[A-Za-z0-9_.]+|tt::[A-Za-z0-9_]+): (?:complex tensors|mixing complex)", text)
        return "unsupported-dtype", f"complex ({m.group(1)})" if m else "complex"
    m = _LAYOUT_RE.search(text)
    if m:
        return "unsupported-layout", m.group(1)
    m = _ARG_RE.search(text)
    if m:
        return "unsupported-arg", f"{m.group(1)}: {m.group(2)}"
    if isinstance(exc, TimeoutError):
        return "timeout", str(exc)
    return "other", first_line(text)


def first_line(text, limit=300):
    lines = [ln for ln in str(text).splitlines() if ln.strip()]
    s = lines[0] if lines else str(text)
    return s[:limit]


# ---- running one variant --------------------------------------------------------------

class _Alarm:
    """SIGALRM-based limit for one variant (main thread only; no-op elsewhere)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.armed = False

    def _fire(self, *_):
        raise TimeoutError(f"variant ran past {self.seconds} s")

    def __enter__(self):
        try:
            self.old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        except ValueError:  # not the main thread
            pass
        return self

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)
        return False


def _seeded(seed, fn, *a, **k):
    torch.manual_seed(seed)
    return fn(*a, **k)


@contextlib.contextmanager
def _unpinned_seed(*fns):
    """Random OpInfos wrap their op in `wrapper_set_seed`, which seeds 42 before
    each call; inside this context it calls the op as is, so that two runs
    under different seeds show whether the op draws random numbers."""
    patched = []
    for fn in fns:
        g = getattr(fn, "__globals__", None)
        if g is not None and "wrapper_set_seed" in getattr(getattr(fn, "__code__", None),
                                                            "co_names", ()):
            patched.append((g, g["wrapper_set_seed"]))
            g["wrapper_set_seed"] = lambda f, *a, **k: f(*a, **k)
    try:
        yield
    finally:
        for g, orig in reversed(patched):
            g["wrapper_set_seed"] = orig


def get_samples(op, dtype, requires_grad, limit):
    """The first `limit` samples (deterministic: seeded)."""
    torch.manual_seed(0)
    out = []
    for s in op.sample_inputs("cpu", dtype, requires_grad=requires_grad):
        out.append(s)
        if limit is not None and len(out) >= limit:
            break
    return out


def _processed(sample, x):
    """sample.output_process_fn_grad(x), or x where it does not apply to the
    out= structure."""
    try:
        return sample.output_process_fn_grad(x)
    except Exception:  # noqa: BLE001
        return x


def _compiled(fn):
    """fn under torch.compile(backend="tpu", fullgraph=True), traced afresh
    for every call (dynamo's per-code cache would fall back to eager after a
    few shapes)."""
    def run(*args, **kwargs):
        torch._dynamo.reset()

        def call(*a, **k):
            return fn(*a, **k)

        return torch.compile(call, backend="tpu", fullgraph=True)(*args, **kwargs)

    return run


def _run_forward(op, sample, fn, tol, kind, tpu_fn=None):
    """One sample of a fwd / inplace / out variant: 'pass', 'ties' (passed up to
    the order among equal values, special.TIE_INDEX_OPS), 'cpu-fail', 'no-tpu',
    or raises Mismatch / the tpu exception. Returns (status, meta_only).
    tpu_fn: what runs on the tpu instead of fn (the compiled variant)."""
    shape_of = []  # out=: the functional result, whose structure the out tensors copy
    keep = special.keep_on_cpu(op.name, sample)

    def call(to_tpu, seed):
        inp, args, kwargs, m = move(sample, to_tpu, keep=keep)
        fn_ = tpu_fn if to_tpu and tpu_fn is not None else fn
        if kind == "out":
            out = _alloc_like(shape_of[0], TPU if to_tpu else None)
            ret = _seeded(seed, fn, inp, *args, out=out, **kwargs)
            # the sample's normalization (e.g. eigenvector signs) as for fwd
            return (_processed(sample, ret), _processed(sample, out)), inp, m
        ret = _seeded(seed, fn_, inp, *args, **kwargs)
        if kind == "inplace":
            return (ret, inp), inp, m
        return sample.output_process_fn_grad(ret), inp, m

    try:
        if kind == "out":  # the functional result gives the out= structure
            inp, args, kwargs, _ = move(sample, False)
            shape_of.append(_seeded(0, op.op, inp, *args, **kwargs))
        with _unpinned_seed(fn, op.op):
            want, want_inp, _ = call(False, 0)
            again, _, _ = call(False, 1)
    except Exception:  # noqa: BLE001 - CPU reference fails: case excluded
        return "cpu-fail", False
    meta_only = op.has_nondeterministic_output or not equal_on_cpu(want, again)
    got, got_inp, m = call(True, 0)
    if not m.touched_tpu:
        return "no-tpu", meta_only
    try:
        compare(got, want, tol, meta_only)
    except Mismatch as e:
        if kind != "fwd":
            raise
        try:
            if special.tie_equivalent(op.name, sample, got, want, tol):
                return "ties", meta_only
        except Mismatch as e2:
            e = e2
        if e.kind == "float":
            e.f64 = special.f64_errors(op, sample, got, want)
        raise e from None
    if kind == "inplace" and isinstance(want[0], torch.Tensor) and want[0] is want_inp \
            and got[0] is not got_inp:
        raise Mismatch("in-place variant did not return its input")
    return "pass", meta_only


def _alloc_like(x, device):
    if isinstance(x, torch.Tensor):
        return torch.empty(x.shape, dtype=x.dtype, device=device or "cpu")
    if isinstance(x, (list, tuple)):
        return tuple(_alloc_like(e, device) for e in x)
    return x


def _run_backward(op, sample, tol, tpu_fn=None):
    """One float32 sample: gradients of sum_i (out_i * w_i).sum() w.r.t. the
    inputs that require grad (w_i: fixed random CPU tensors). tpu_fn: what
    runs on the tpu instead of op.op (the compiled variant)."""

    def run(to_tpu, seed):
        inp, args, kwargs, m = move(sample, to_tpu, grad=True,
                                    keep=special.keep_on_cpu(op.name, sample))
        leaves = [t for t in flatten([inp, list(args), kwargs])
                  if isinstance(t, torch.Tensor) and t.requires_grad]
        fn = tpu_fn if to_tpu and tpu_fn is not None else op.op
        out = sample.output_process_fn_grad(_seeded(seed, fn, inp, *args, **kwargs))
        # complex outputs (fft, ...) enter the loss through their real view
        outs = [torch.view_as_real(o.resolve_conj()) if o.is_complex() else o for o in flatten(out)
                if isinstance(o, torch.Tensor) and o.requires_grad
                and (o.is_floating_point() or o.is_complex())]
        return leaves, outs, m

    try:
        with _unpinned_seed(op.op):
            leaves_c, outs_c, _ = run(False, 0)
        if not leaves_c or not outs_c:
            return "no-grad", False
        g = torch.Generator().manual_seed(1234)
        weights = [torch.randn(o.shape, generator=g, dtype=o.dtype) for o in outs_c]
        loss = sum((o * w).sum() for o, w in zip(outs_c, weights))
        grads_c = torch.autograd.grad(loss, leaves_c, allow_unused=True)
        with _unpinned_seed(op.op):
            _, outs_again, _ = run(False, 1)
    except Exception:  # noqa: BLE001
        return "cpu-fail", False
    # Random ops: gradients depend on the draw, so only their shapes and dtypes count.
    meta_only = not equal_on_cpu([o.detach() for o in outs_c], [o.detach() for o in outs_again])
    leaves_d, outs_d, m = run(True, 0)
    if not m.touched_tpu:
        return "no-tpu", False
    if len(outs_d) != len(outs_c):
        raise Mismatch(f"{len(outs_d)} differentiable outputs on tpu, {len(outs_c)} on CPU")
    loss_d = sum((o * w.to(TPU)).sum() for o, w in zip(outs_d, weights))
    grads_d = torch.autograd.grad(loss_d, leaves_d, allow_unused=True)
    for i, (gd, gc) in enumerate(zip(grads_d, grads_c)):
        if (gd is None) != (gc is None):
            raise Mismatch(f"grad[{i}]: {'None' if gd is None else 'a tensor'} on tpu, "
                           f"{'None' if gc is None else 'a tensor'} on CPU")
        if gc is not None:
            compare(gd, gc, tol, meta_only, f"grad[{i}]")
    return "pass", meta_only


# How bad a mismatch is, from least to most: inside NEAR_TOL; beyond it but the
# tpu result is at least as close to a float64 CPU run as CPU's own result (CPU
# rounds intermediates in the half type, the tpu computes in f32 and rounds
# once); anything else, including wrong dtypes, shapes and integer values.
_VERDICTS = ["near", "tpu-closer", "wrong"]


def _verdict(e):
    if e.near:
        return "near"
    f64 = getattr(e, "f64", None)
    if e.kind == "float" and f64 is not None and f64[0] <= f64[1]:
        return "tpu-closer"
    return "wrong"


def run_variant(op, dtype_name, variant, max_samples=None, timeout=VARIANT_TIMEOUT_S):
    """Run one (op, dtype, variant); return its result record (a dict)."""
    dtype = DTYPES[dtype_name]
    key = op_key(op)
    def tol(out_dtype):  # by the dtype of the output compared, not of the inputs
        return tolerance(key, out_dtype)

    if max_samples is None:
        max_samples = MAX_SAMPLES["fwd_float32" if variant == "fwd" and dtype_name == "float32"
                                  else variant]
    rec = {"op": key, "dtype": dtype_name, "variant": variant, "status": None,
           "samples": 0, "passed": 0, "cpu_failed": 0, "meta_only": 0, "errors": {},
           "missing": [], "mismatch": None}
    t0 = time.perf_counter()
    try:
        with _Alarm(timeout):
            samples = get_samples(op, dtype, variant in ("bwd", "compiled_bwd"), max_samples)
            fn = {"fwd": op.op, "bwd": op.op, "out": op.op, "compiled": op.op, "compiled_bwd": op.op,
                  "inplace": op.inplace_variant}[variant]
            tpu_fn = _compiled(op.op) if variant.startswith("compiled") else None
            for i, s in enumerate(samples):
                if variant == "inplace" and s.broadcasts_input:
                    continue
                try:
                    if variant in ("bwd", "compiled_bwd"):
                        st, meta = _run_backward(op, s, tol, tpu_fn)
                    else:
                        st, meta = _run_forward(op, s, fn, tol, "fwd" if tpu_fn else variant, tpu_fn)
                except Mismatch as e:
                    rec["samples"] += 1
                    v = _verdict(e)
                    old = rec["mismatch"]
                    if old is None or _VERDICTS.index(v) > _VERDICTS.index(old["verdict"]):
                        rec["mismatch"] = {"sample": i, "message": first_line(e, 400),
                                           "verdict": v, "kind": e.kind,
                                           "max_abs": e.max_abs, "max_rel": e.max_rel,
                                           "f64": getattr(e, "f64", None)}
                    continue
                except TimeoutError:
                    raise
                except Exception as e:  # noqa: BLE001 - tpu raised
                    rec["samples"] += 1
                    kind, detail = classify_error(e)
                    rec["errors"].setdefault(kind, [])
                    if detail not in rec["errors"][kind]:
                        rec["errors"][kind].append(detail)
                    continue
                if st == "cpu-fail":
                    rec["cpu_failed"] += 1
                elif st in ("pass", "ties"):
                    rec["samples"] += 1
                    rec["passed"] += 1
                    rec["meta_only"] += int(meta)
                    if st == "ties":
                        rec["ties"] = rec.get("ties", 0) + 1
    except TimeoutError as e:
        rec["status"] = "timeout"
        rec["errors"].setdefault("timeout", []).append(str(e))
    except Exception as e:  # noqa: BLE001 - sample generation itself failed
        rec["status"] = "cpu-ref-fails"
        rec["errors"].setdefault("sample-generation", []).append(first_line(
            f"{type(e).__name__}: {e}"))
    rec["missing"] = sorted(set(rec["errors"].get("missing-op", [])))
    if rec["status"] is None:
        if rec["mismatch"] is not None:
            rec["status"] = "fail"
        elif rec["errors"]:
            rec["status"] = "error"
        elif rec["samples"] > 0:
            rec["status"] = "pass"
        elif rec["cpu_failed"] > 0:
            rec["status"] = "cpu-ref-fails"
        else:
            rec["status"] = "no-samples"
    if not rec["errors"]:
        del rec["errors"]
    rec["seconds"] = round(time.perf_counter() - t0, 3)
    return rec


def variants_of(op, dtype_names=tuple(DTYPES)):
    """The (dtype, variant) pairs the sweep runs for one OpInfo (dtype_names:
    the dtypes to sweep; in-place and out= run in float32 only)."""
    try:
        supported = op.supported_dtypes("cpu")
    except Exception:  # noqa: BLE001
        return []
    out = [(d, "fwd") for d in dtype_names if DTYPES[d] in supported]
    for d in BWD_DTYPES:
        if d not in dtype_names or DTYPES[d] not in supported:
            continue
        try:
            bwd_ok = op.supports_autograd and DTYPES[d] in op.supported_backward_dtypes("cpu")
        except Exception:  # noqa: BLE001
            bwd_ok = False
        if bwd_ok:
            out.append((d, "bwd"))
    if COMPILED:  # forward in each dtype swept, backward in float32
        return [(d, "compiled" if v == "fwd" else "compiled_bwd") for d, v in out
                if v == "fwd" or d == "float32"]
    if torch.float32 in supported and "float32" in dtype_names:
        if op.inplace_variant is not None:
            out.append(("float32", "inplace"))
        if op.supports_out:
            out.append(("float32", "out"))
    return out
