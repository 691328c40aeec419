"""Fake tensors of tpu tensors (torch.compile's tracing) give eager's output
metadata or refuse nothing eager computes (tests/opinfo/fake_meta.py; the whole
op_db: `python -m tests.opinfo.fake_meta`): a sample of common OpInfos in float32
and bfloat16 here."""
import pytest

from . import fake_meta, harness

OPS = ["add", "mul", "div.no_rounding_mode", "matmul", "mm", "bmm", "addmm", "softmax", "log_softmax", "sum",
       "mean", "amax", "argmax", "cumsum", "index_select", "gather", "scatter_add", "index_put", "cat", "stack",
       "where", "masked_fill", "sort", "topk", "histc", "nn.functional.conv2d", "nn.functional.embedding",
       "nn.functional.scaled_dot_product_attention", "nn.functional.gelu", "nn.functional.silu",
       "nn.functional.cross_entropy", "nn.functional.interpolate.bilinear", "nn.functional.group_norm",
       "nn.functional.rms_norm", "var_mean", "linalg.vector_norm", "_upsample_bilinear2d_aa"]
_BY_KEY = {harness.op_key(op): op for op in harness.load_op_db()}
# (op, dtype) pairs that CPU or CUDA takes
_CASES = [(k, d) for k in OPS for d in ("float32", "bfloat16")
          if harness.DTYPES[d] in set(_BY_KEY[k].supported_dtypes("cpu")) | set(_BY_KEY[k].supported_dtypes("cuda"))]


@pytest.mark.parametrize("key,dtype", _CASES)
def test_fake_metadata_is_eager(key, dtype):
    assert fake_meta.run_case(_BY_KEY[key], harness.DTYPES[dtype]) in ("pass", "no-samples")


def test_the_sample_compares_something():
    ran = sum(fake_meta.run_case(_BY_KEY[k], harness.DTYPES["float32"]) == "pass" for k in OPS[:12])
    assert ran == 12
