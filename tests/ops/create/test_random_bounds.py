"""The random in-place ops' parameter checks on tpu, as on CPU (exception type and message):
uniform_'s range, normal_'s std, bernoulli_'s p (a float, or every element of a tensor),
exponential_'s lambda, geometric_'s p, cauchy_'s sigma, log_normal_'s std, and random_'s
bounds per dtype, with CPU's warnings where a float dtype cannot hold the range
(csrc/bridge/aten/random_checks.cpp). Valid bounds draw within them."""
import warnings

import pytest
import torch

import torch_tpu  # noqa: F401

DEV = "tpu"


def _outcome(fn, dev):
    """(exception type, first line of its message) or None, and the warnings' texts (without
    the "(Triggered internally at ...)" suffix, which names the file that warned)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn(dev)
            err = None
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            err = type(e), str(e).split("\n")[0]
    return err, [str(x.message).split(" (Triggered internally at")[0] for x in w]


def e(d, dtype=torch.float32):
    return torch.empty(8, dtype=dtype, device=d)


INVALID = {
    "uniform_from_gt_to": lambda d: e(d).uniform_(2, 1),
    "uniform_complex_from_gt_to": lambda d: e(d, torch.cfloat).uniform_(2, 1),
    "uniform_nan": lambda d: e(d).uniform_(float("nan"), 1),
    "uniform_inf": lambda d: e(d).uniform_(0, float("inf")),
    "uniform_half_to_out_of_range": lambda d: e(d, torch.half).uniform_(0, 70000),
    "uniform_range_too_wide": lambda d: e(d).uniform_(-3e38, 3e38),
    "uniform_int": lambda d: e(d, torch.long).uniform_(),
    "normal_negative_std": lambda d: e(d).normal_(0, -1),
    "normal_nan_std": lambda d: e(d).normal_(0, float("nan")),
    "normal_int": lambda d: e(d, torch.int32).normal_(),
    "normal_float_float": lambda d: torch.normal(0, -1, (10,), device=d),
    "normal_tensor_float": lambda d: torch.normal(torch.zeros(3, device=d), -1.5),
    "normal_float_tensor": lambda d: torch.normal(0, torch.full((3,), -1.0, device=d)),
    "normal_tensor_tensor": lambda d: torch.normal(torch.zeros(3, device=d), torch.tensor([1.0, -1.0, 1.0], device=d)),
    "normal_complex_std": lambda d: torch.normal(0, torch.ones(3, dtype=torch.cfloat, device=d)),
    "random_complex": lambda d: e(d, torch.cfloat).random_(0, 5),
    "randint_complex_empty": lambda d: torch.randint(6, (0,), dtype=torch.cfloat, device=d),
    "random_from_none_complex": lambda d: e(d, torch.cfloat).random_(3, None),
    "bernoulli_p_above_1": lambda d: e(d).bernoulli_(1.5),
    "bernoulli_p_below_0": lambda d: e(d).bernoulli_(-0.5),
    "bernoulli_p_functional": lambda d: torch.bernoulli(e(d), 2.0),
    "bernoulli_tensor_p": lambda d: e(d).bernoulli_(torch.full((8,), 2.0, device=d)).cpu(),
    "bernoulli_self_p": lambda d: torch.bernoulli(torch.full((2, 3), -0.5, device=d)).cpu(),
    "exponential_zero": lambda d: e(d).exponential_(0),
    "exponential_negative": lambda d: e(d).exponential_(-1),
    "exponential_nan": lambda d: e(d).exponential_(float("nan")),
    "exponential_int": lambda d: e(d, torch.long).exponential_(),
    "geometric_zero": lambda d: e(d).geometric_(0),
    "geometric_one": lambda d: e(d).geometric_(1),
    "geometric_above_1": lambda d: e(d).geometric_(1.5),
    "cauchy_zero_sigma": lambda d: e(d).cauchy_(0, 0),
    "cauchy_negative_sigma": lambda d: e(d).cauchy_(0, -1),
    "log_normal_zero_std": lambda d: e(d).log_normal_(0, 0),
    "log_normal_negative_std": lambda d: e(d).log_normal_(0, -1),
    "random_from_ge_to": lambda d: e(d).random_(2, 1),
    "random_to_zero": lambda d: e(d).random_(0),
    "random_to_negative": lambda d: e(d, torch.long).random_(-42),
    "randint_low_ge_high": lambda d: torch.randint(3, 2, (2,), device=d),
    "randint_int16_from": lambda d: torch.randint(-32769, 0, (2,), dtype=torch.int16, device=d),
    "random_from_none_float": lambda d: e(d).random_(2 ** 25, None),
}


# p checked on the device, element by element: raised at the next sync (here the copy to the
# host), CPU's message after the op's name
DEVICE_CHECKED = {"bernoulli_tensor_p", "bernoulli_self_p"}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_parameters_raise_as_cpu(name):
    want = _outcome(INVALID[name], "cpu")
    assert want[0] is not None
    got = _outcome(INVALID[name], DEV)
    if name in DEVICE_CHECKED:
        assert got[0][0] is want[0][0] and got[0][1].endswith(": " + want[0][1]) and got[1] == want[1]
    else:
        assert got == want


# (dtype, from, to): bounds in and out of each dtype's range and of the integers a float
# dtype holds exactly (2^digits), to None (up to the dtype's largest), the full int64 range
BOUNDS = [
    (torch.float32, -2 ** 25, 0), (torch.float32, 0, 2 ** 25 + 1), (torch.float32, -2 ** 60, 2 ** 60),
    (torch.float32, -2 ** 63, 42), (torch.float32, -2 ** 25, None), (torch.float32, 5, None),
    (torch.float64, -2 ** 60, 2 ** 60), (torch.float64, 0, 2 ** 54),
    (torch.float16, 0, 2 ** 11 + 2), (torch.float16, -70000, 0), (torch.float16, 0, 70000),
    (torch.float16, -2 ** 12, None), (torch.bfloat16, -2 ** 9, 2 ** 9), (torch.bfloat16, 0, 2 ** 62),
    (torch.int8, -129, 0), (torch.int8, 0, 129), (torch.int8, -128, 128), (torch.int8, -200, None),
    (torch.uint8, -1, 5), (torch.uint8, 0, 256), (torch.uint8, 0, 257), (torch.int16, -32769, 0),
    (torch.int32, 0, 2 ** 31), (torch.int32, 0, 2 ** 31 + 1), (torch.int64, -2 ** 63, 2 ** 63 - 1),
    (torch.int64, -2 ** 63, None), (torch.bool, 0, 2), (torch.bool, 0, 3), (torch.bool, -1, 1),
    (torch.uint16, 0, 2 ** 16 + 1), (torch.uint32, -1, 1),
]


@pytest.mark.parametrize("dtype,lo,hi", BOUNDS, ids=lambda v: str(v))
def test_random_bounds_as_cpu(dtype, lo, hi):
    def call(d):
        t = torch.zeros(64, dtype=dtype, device=d)
        t.random_(lo, hi)
        return t.cpu()

    want, got = _outcome(call, "cpu"), _outcome(call, DEV)
    assert got == want
    if want[0] is None:  # drawn within the bounds
        t = torch.zeros(256, dtype=dtype, device=DEV)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (compared above)
            t.random_(lo, hi)
        v = t.cpu().double()
        top = hi - 1 if hi is not None else None
        assert v.min().item() >= lo or dtype.is_floating_point  # (floats round far bounds)
        if top is not None and not dtype.is_floating_point:
            assert v.max().item() <= top


def test_random_warns_every_call():
    t = torch.empty(4, device=DEV)
    for _ in range(2):
        with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
            t.random_(0, 2 ** 25 + 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int8])
def test_valid_random_draws_in_range(dtype):
    t = torch.empty(2000, dtype=dtype, device=DEV)
    t.random_(-10, -1)
    v = t.cpu()
    assert v.min().item() == -10 and v.max().item() == -2
    t.random_(4)
    v = t.cpu()
    assert v.min().item() == 0 and v.max().item() == 3


def test_valid_bernoulli_tensor_p_and_uniform_bounds():
    p = torch.tensor([0.0, 1.0, 0.0, 1.0], device=DEV)
    assert torch.bernoulli(p).cpu().tolist() == [0.0, 1.0, 0.0, 1.0]
    u = torch.empty(1000, device=DEV).uniform_(-42, 42).cpu()
    assert u.min().item() >= -42 and u.max().item() < 42
    assert torch.empty(10, device=DEV).uniform_(3, 3).cpu().eq(3).all()
