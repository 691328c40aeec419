"""The fast OpInfo subset (part of `make test`): common ops that pass the full
sweep today, float32 forward on their first 3 OpInfo samples, and float32
backward for a smaller set; a handful in complex64. A regression test of what works: every case must
compare at least one sample's values (random ops are not on these lists).

The full sweep is `make opinfo` (tests/opinfo/run.py); an op that fails there
must not be added here until it passes.
"""
import copy

import pytest

from . import harness

FORWARD = [
    # elementwise
    "add", "sub", "mul", "div.no_rounding_mode", "neg", "abs", "exp", "log", "sqrt",
    "rsqrt", "sin", "cos", "tanh", "sigmoid", "pow", "maximum", "minimum", "clamp",
    "where", "eq", "lt", "ne", "reciprocal", "floor", "nn.functional.relu",
    "nn.functional.gelu", "nn.functional.silu", "logical_not", "masked_fill",
    # reductions
    "sum", "mean", "amax", "amin", "max.reduction_with_dim", "argmax", "prod", "var",
    "cumsum", "logsumexp",
    # matmul, softmax
    "mm", "bmm", "matmul", "addmm", "nn.functional.linear", "softmax", "log_softmax",
    # indexing
    "index_select", "gather", "take_along_dim",
    # joins, views, copies
    "cat", "stack", "view", "reshape", "permute", "transpose", "t", "unsqueeze",
    "squeeze", "expand", "flatten", "split", "chunk", "flip", "clone", "contiguous",
    "zeros_like", "full_like",
    # linalg, fft, special functions, scans and searching (families added later)
    "linalg.cholesky", "linalg.inv", "linalg.det", "linalg.solve", "linalg.qr", "linalg.eigh",
    "fft.fft", "fft.rfft", "fft.irfft", "special.i0e", "digamma", "lgamma", "erfinv",
    "special.bessel_j0", "cummax", "logcumsumexp", "searchsorted", "bucketize", "histc",
    "index_reduce.prod", "nn.functional.unfold", "nn.functional.multi_margin_loss",
]

BACKWARD = [
    "add", "mul", "div.no_rounding_mode", "exp", "tanh", "sigmoid", "nn.functional.relu",
    "nn.functional.gelu", "sum", "mean", "amax", "mm", "matmul", "nn.functional.linear",
    "softmax", "log_softmax", "index_select", "cat", "permute", "expand",
    "linalg.det", "linalg.inv", "linalg.cholesky", "fft.rfft", "logcumsumexp",
    "nn.functional.grid_sample",
]

# complex64 (inputs and outputs): arithmetic with promotion, math, comparisons,
# reductions, products
COMPLEX64_FORWARD = ["add", "mul", "div.no_rounding_mode", "exp", "log", "sqrt", "asin", "tanh",
                     "abs", "eq", "sum", "mean", "mm", "linalg.vector_norm"]
COMPLEX64_BACKWARD = ["mul", "exp", "sum", "tanh"]

# float32 forward and backward under torch.compile(backend="tpu") (every OpInfo: run.py --compiled)
COMPILED_FORWARD = ["add", "mul", "where", "sum", "var", "cumsum", "softmax", "matmul", "index_select",
                    "scatter_add", "sort", "nn.functional.layer_norm", "_native_batch_norm_legit",
                    "nn.functional.conv2d", "nn.functional.embedding", "linalg.solve", "transpose"]
COMPILED_BACKWARD = ["mul", "softmax", "nn.functional.layer_norm", "index_select", "cumsum", "matmul",
                     "fft.rfft", "nn.functional.conv2d"]

SAMPLES = 3

_OPS = {harness.op_key(op): op for op in harness.load_op_db()}


def _explain(rec):
    if rec.get("mismatch"):
        return f"MISMATCH {rec['mismatch']['message']}"
    return f"{rec['status']}: {rec.get('errors')}"


def _check(name, variant, dtype="float32"):
    rec = harness.run_variant(_OPS[name], dtype, variant, max_samples=SAMPLES)
    assert rec["status"] == "pass", _explain(rec)
    assert rec["passed"] >= 1 and rec["passed"] > rec["meta_only"], \
        f"no sample's values were compared: {rec}"


@pytest.mark.parametrize("name", FORWARD)
def test_forward_float32(name):
    _check(name, "fwd")


@pytest.mark.parametrize("name", BACKWARD)
def test_backward_float32(name):
    _check(name, "bwd")


@pytest.mark.parametrize("name", COMPLEX64_FORWARD)
def test_forward_complex64(name):
    _check(name, "fwd", "complex64")


@pytest.mark.parametrize("name", COMPLEX64_BACKWARD)
def test_backward_complex64(name):
    _check(name, "bwd", "complex64")


@pytest.mark.parametrize("name", COMPILED_FORWARD)
def test_compiled_forward_float32(name):
    from torch_tpu import _compile
    _compile._graphs.clear()
    _check(name, "compiled")
    assert _compile._graphs, "no graph went through the tpu backend"


@pytest.mark.parametrize("name", COMPILED_BACKWARD)
def test_compiled_backward_float32(name):
    from torch_tpu import _compile
    _compile._graphs.clear()
    _check(name, "compiled_bwd")
    assert any(g["kind"] == "backward" for g in _compile.compiled_graphs()), "no backward graph was compiled"


# ---- the harness itself: it must see wrong answers, missing ops, CPU failures ----

def _fake(fn):
    op = copy.copy(_OPS["neg"])
    op.op = fn
    return op


def test_harness_reports_a_wrong_answer():
    rec = harness.run_variant(_fake(lambda x: x + 1 if x.device.type == "tpu" else x),
                              "float32", "fwd", max_samples=1)
    assert rec["status"] == "fail" and rec["mismatch"]["verdict"] == "wrong"
    assert rec["mismatch"]["max_abs"] == pytest.approx(1.0)


def test_harness_reports_a_wrong_answer_under_compile():
    rec = harness.run_variant(_fake(lambda x: x + 1 if x.device.type == "tpu" else x),
                              "float32", "compiled", max_samples=1)
    assert rec["status"] == "fail" and rec["mismatch"]["verdict"] == "wrong"


def test_harness_reports_a_missing_op():
    def fn(x):
        if x.device.type == "tpu":
            raise NotImplementedError("aten::fake_op is not supported on the tpu device yet.")
        return x
    rec = harness.run_variant(_fake(fn), "float32", "fwd", max_samples=1)
    assert rec["status"] == "error" and rec["missing"] == ["aten::fake_op"]


def test_harness_excludes_cpu_failures():
    def fn(x):
        raise RuntimeError("the CPU reference fails")
    rec = harness.run_variant(_fake(fn), "float32", "fwd", max_samples=1)
    assert rec["status"] == "cpu-ref-fails" and rec["samples"] == 0
