"""The dtypes CUDA accepts and CPU refuses (tests/opinfo/cuda_dtypes.py): every
(OpInfo, dtype) of the class computes on tpu what CUDA computes, against CPU in a
wider dtype rounded once, forward and backward. What the device does not take yet
is listed below with its reason, and must still refuse with a clear error."""
import pytest
import torch

from . import cuda_dtypes, harness

# (op key prefix or None for all, dtype) -> why the device refuses it for now
NOT_YET = {
    (None, torch.complex32): "ComplexHalf: XLA has no complex type of 16-bit parts; the device "
                             "refuses the dtype at every op",
    ("fft.", torch.float16): "a float16 FFT returns or takes ComplexHalf (above), and PyTorch's FFT "
                             "wrappers (CompositeImplicit C++) accept float16 only on CUDA and meta",
}


def _not_yet(key, dtype):
    for (prefix, d), why in NOT_YET.items():
        if d == dtype and (prefix is None or key.startswith(prefix)):
            return why
    return None


_PAIRS = [(op, d, v) for op, d, v in cuda_dtypes.pairs()
          if harness.op_key(op) not in cuda_dtypes.NOT_DEVICE]
_RUN = [p for p in _PAIRS if not _not_yet(harness.op_key(p[0]), p[1])]
_REFUSED = [p for p in _PAIRS if _not_yet(harness.op_key(p[0]), p[1]) and p[2] == "fwd"]


def _id(p):
    return f"{harness.op_key(p[0])}-{str(p[1])[6:]}-{p[2]}"


def test_the_class_is_what_pytorch_states():
    # the class as PyTorch 2.13's OpInfos state it: a change in torch shows here
    assert len(_PAIRS) + sum(harness.op_key(op) in cuda_dtypes.NOT_DEVICE for op, _, _ in cuda_dtypes.pairs()) \
        == len(cuda_dtypes.pairs())
    assert len(_RUN) >= 40, len(_RUN)


@pytest.mark.parametrize("pair", _RUN, ids=_id)
def test_cuda_dtype_computes_like_cuda(pair):
    op, dtype, variant = pair
    assert cuda_dtypes.run_pair(op, dtype, variant) == "pass"


@pytest.mark.parametrize("pair", _REFUSED[::4], ids=_id)
def test_not_yet_refused_clearly(pair):
    op, dtype, _ = pair
    s = harness.get_samples(op, dtype, False, 1)[0]
    inp, args, kwargs, _ = harness.move(s, True) if dtype != torch.complex32 else (None, None, None, None)
    with pytest.raises((NotImplementedError, RuntimeError), match="ComplexHalf|Half"):
        if dtype == torch.complex32:
            s.input.to("tpu")
        else:
            op.op(inp, *args, **kwargs)
