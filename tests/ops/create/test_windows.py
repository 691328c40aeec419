"""Window functions on tpu against PyTorch CPU: hann, hamming, bartlett, blackman and kaiser
(torch.*_window: kaiser's ATen kernel is a device stub, lowered in csrc/core/lower/special),
periodic and symmetric, in every floating dtype, with requires_grad; and their errors (CPU's
exception type and message, the device named as the call named it)."""
import pytest
import torch

import torch_tpu  # noqa: F401

DEV = "tpu"
SIZES = [0, 1, 2, 5, 10, 64, 257]
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# The half windows other than kaiser are PyTorch's composites of half ops (arange, mul by a
# Python float, cos, ...), rounded to half after each; the device's ops round their Scalars
# otherwise, a few ulp apart (blackman float16: 5e-3 of 0.67): tolerances as PyTorch's own test
# allows the accelerators (bfloat16 5e-2), against float32 CPU values for half types.
TOL = {torch.float32: (2e-6, 1e-6), torch.float64: (1e-12, 1e-12), torch.float16: (3e-3, 3e-3),
       torch.bfloat16: (2e-2, 2e-2)}


def _windows():
    yield "hann", lambda n, **k: torch.hann_window(n, **k)
    yield "hamming", lambda n, **k: torch.hamming_window(n, **k)
    yield "hamming_alpha_beta", lambda n, **k: torch.hamming_window(n, k.pop("periodic"), 0.5, 0.4, **k)
    yield "bartlett", lambda n, **k: torch.bartlett_window(n, **k)
    yield "blackman", lambda n, **k: torch.blackman_window(n, **k)
    yield "kaiser", lambda n, **k: torch.kaiser_window(n, **k)
    for beta in (0.0, 2.5, 12.0, 29.9):
        yield f"kaiser_beta{beta}", lambda n, beta=beta, **k: torch.kaiser_window(n, k.pop("periodic"), beta, **k)


WINDOWS = dict(_windows())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_window_matches_cpu(name, dtype):
    fn = WINDOWS[name]
    atol, rtol = TOL[dtype]
    for n in SIZES:
        for periodic in (True, False):
            want = fn(n, periodic=periodic, dtype=dtype)
            got = fn(n, periodic=periodic, dtype=dtype, device=DEV)
            assert got.device.type == DEV and got.dtype == dtype and got.shape == want.shape
            assert got.stride() == want.stride()
            torch.testing.assert_close(got.cpu(), want, atol=atol, rtol=rtol, msg=f"{name} n={n} {periodic}")


def test_kaiser_default_overloads():
    # kaiser_window(n), kaiser_window(n, periodic): beta 12, periodic by default
    torch.testing.assert_close(torch.kaiser_window(9, device=DEV).cpu(), torch.kaiser_window(9))
    torch.testing.assert_close(torch.kaiser_window(9, False, device=DEV).cpu(), torch.kaiser_window(9, False))
    with torch_tpu.eager_mode("fused"):
        got = torch.kaiser_window(7, True, 3.0, device=DEV) * 2
    torch.testing.assert_close(got.cpu(), torch.kaiser_window(7, True, 3.0) * 2)


@pytest.mark.parametrize("name", ["hann", "hamming", "bartlett", "blackman", "kaiser"])
def test_window_requires_grad(name):
    fn = getattr(torch, name + "_window")
    t = fn(5, requires_grad=True, device=DEV)
    assert t.requires_grad and t.is_leaf
    assert not fn(5, device=DEV).requires_grad
    (t * 2).sum().backward()
    torch.testing.assert_close(t.grad.cpu(), torch.full((5,), 2.0))


def _error(fn, dev):
    try:
        fn(dev)
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e), str(e).split("\n")[0].replace(f"device={dev}", "device=<dev>")
    return None


@pytest.mark.parametrize("name", ["hann", "hamming", "bartlett", "blackman", "kaiser"])
@pytest.mark.parametrize("case", ["long", "int8", "sparse", "negative"])
def test_window_errors_as_cpu(name, case):
    fn = getattr(torch, name + "_window")
    call = {
        "long": lambda d: fn(3, dtype=torch.long, device=d),
        "int8": lambda d: fn(3, True, dtype=torch.int8, device=d),
        "sparse": lambda d: fn(3, layout=torch.sparse_coo, device=d),
        "negative": lambda d: fn(-1, device=d),
    }[case]
    want = _error(call, "cpu")
    assert want is not None
    assert _error(call, DEV) == want
