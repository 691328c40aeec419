"""Scalars CPU converts to an op's element type must fit it (c10::checked_convert):
CPU raises "value cannot be converted to type T without overflow", and the tpu
raises too instead of wrapping or rounding the value silently. Every op x dtype
x value of a grid around each type's limits, in a shuffled order per op, against
CPU; a valid call first puts the signature in the meta cache, so the check
cannot rely on it. (`x[i] = v` is left out: for a device tensor PyTorch's
indexing fills a 0-dim tensor with v, which checks the value as on CUDA, where
CPU's path converts it unchecked.)"""
import random
import zlib

import pytest
import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401

DEV = "tpu"
DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64, torch.bool]
VALUES = [0, 1, -1, 7, 127, 128, -128, -129, 255, 256, -255, -256, 300, 32768, 70000, 2**31, -2**31 - 1,
          2**40, 2**62, 0.5, -1.0, 255.0, 256.0, 70000.0, 1e5, 65504.0, 65520.0, 3.4e38, 3.5e38, 1e40, -1e40,
          1e300, float("inf"), float("-inf"), float("nan"), True]


def _mask(x):
    return torch.arange(x.numel()).reshape(x.shape) % 2 == 0


OPS = {
    "fill_": lambda x, v: x.fill_(v),
    "masked_fill": lambda x, v: x.masked_fill(_mask(x).to(x.device), v),
    "masked_fill_": lambda x, v: x.masked_fill_(_mask(x).to(x.device), v),
    "index_fill": lambda x, v: x.index_fill(0, torch.tensor([0, 2]).to(x.device), v),
    "scatter_value": lambda x, v: x.scatter(0, torch.tensor([[1, 0]]).to(x.device), v),
    "full_like": lambda x, v: torch.full_like(x, v),
    "new_full": lambda x, v: x.new_full((3,), v),
    "clamp_min": lambda x, v: torch.clamp(x, min=v),
    "clamp_max": lambda x, v: torch.clamp(x, max=v),
    "clamp_": lambda x, v: x.clamp_(min=v),
    "add_alpha": lambda x, v: torch.add(x, x, alpha=v),
    "sub_alpha_": lambda x, v: x.sub_(x, alpha=v),
    "addcmul": lambda x, v: torch.addcmul(x, x, x, value=v),
    "addcdiv": lambda x, v: torch.addcdiv(x, x, x + 1, value=v),
    "lerp": lambda x, v: torch.lerp(x, x * 2, v),
    "hardtanh": lambda x, v: F.hardtanh(x, -abs(v), abs(v)) if not isinstance(v, bool) else x,
    "threshold": lambda x, v: F.threshold(x, v, v),
    "leaky_relu": lambda x, v: F.leaky_relu(x, v),
    "add_scalar_other": lambda x, v: x + v,
}


def _run(name, x, v):
    try:
        return OPS[name](x, v), None
    except (RuntimeError, ValueError, TypeError, OverflowError) as e:
        return None, e


def _check(name, dt, v):
    base = torch.arange(6).reshape(3, 2).to(dt)
    want, werr = _run(name, base.clone(), v)
    got, gerr = _run(name, base.clone().to(DEV), v)
    where = f"{name} {dt} {v!r}"
    if werr is not None:
        assert gerr is not None, f"{where}: CPU raises {werr!r}, tpu does not"
        if "without overflow" in str(werr):
            # CPU's error, or one a meta kernel raises first on the same value
            # (a Python meta converting it: int(nan), int(1e300); hardtanh's
            # unsigned-with-negative-limits check)
            ok = "without overflow" in str(gerr) or isinstance(gerr, (ValueError, OverflowError)) or \
                "unsigned type with negative limits" in str(gerr)
            assert ok, f"{where}: {gerr!r} vs {werr!r}"
        return
    assert gerr is None, f"{where}: tpu raises {gerr!r}, CPU gives {want}"
    got = got.cpu()
    assert got.dtype == want.dtype, where
    torch.testing.assert_close(got, want, equal_nan=True, msg=where)


@pytest.mark.parametrize("name", sorted(OPS))
def test_scalar_overflow_matches_cpu(name):
    rng = random.Random(zlib.crc32(name.encode()))  # fixed per op (str hashes vary per process)
    for dt in DTYPES:
        _check(name, dt, 1)  # a valid call first: the signature is in the meta cache
        for v in rng.sample(VALUES, len(VALUES)):  # every value, in an order of its own per op
            _check(name, dt, v)


def test_issue_repro_uint8_fill():
    x = torch.zeros(3, dtype=torch.uint8, device=DEV)
    x.fill_(5)
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        x.fill_(300)
    assert x.cpu().tolist() == [5, 5, 5]  # nothing changed, the device still works
