"""The dtypes CUDA accepts and CPU refuses (tests/opinfo/cuda_dtypes.py): every
(OpInfo, dtype) of the class computes on tpu what CUDA computes, against CPU in a
wider dtype rounded once (or, where ATen runs several ops, each rounded as CUDA
rounds them), forward and backward."""
import pytest
import torch

import suite

from . import cuda_dtypes, harness

_PAIRS = [(op, d, v) for op, d, v in cuda_dtypes.pairs()
          if harness.op_key(op) not in cuda_dtypes.NOT_DEVICE]
# the class's results do not depend on the eager mode: the Fused pass of make test runs every
# fourth pair (that recording changes nothing), make test-full every pair in both modes
_RUN = _PAIRS if suite.FULL or not suite.FUSED_PASS else _PAIRS[::4]


def _id(p):
    return f"{harness.op_key(p[0])}-{str(p[1])[6:]}-{p[2]}"


def test_the_class_is_what_pytorch_states():
    # the class as PyTorch 2.13's OpInfos state it (193 pairs, 8 of them entry points of
    # CUDA kernels or layouts the device has not): a change in torch shows here
    if torch.__version__.startswith("2.13"):
        assert len(cuda_dtypes.pairs()) == 193 and len(_PAIRS) == 185, (len(cuda_dtypes.pairs()), len(_PAIRS))
    assert {d for _, d, _ in _PAIRS} >= {torch.complex32, torch.float16, torch.bfloat16}


@pytest.mark.parametrize("pair", _RUN, ids=_id)
def test_cuda_dtype_computes_like_cuda(pair):
    op, dtype, variant = pair
    assert cuda_dtypes.run_pair(op, dtype, variant) == "pass"
