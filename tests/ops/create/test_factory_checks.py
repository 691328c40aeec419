"""Factories' argument and out= checks on tpu, as on CPU (exception type and message, warning
text): complex / polar (input dtypes, out= dtype), randn / rand of a complex dtype into a real
out=, linspace / logspace with a complex start or end, arange's resize warning (which fft_fftfreq
and fft_rfftfreq reach) and their results and dtypes through out=."""
import warnings

import pytest
import torch

import torch_tpu  # noqa: F401

DEV = "tpu"


def _outcome(fn, dev):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(dev)
            err = None
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            r, err = None, (type(e), str(e).split("\n")[0])
    msgs = [str(x.message).split(" (Triggered internally at")[0] for x in w]
    return err, msgs, r


def t(d, *shape, dtype=torch.float32):
    return torch.ones(*shape, dtype=dtype, device=d)


CASES = {
    "complex_out_real": lambda d: torch.complex(t(d, 2), t(d, 2), out=t(d, 2)),
    "complex_out_cdouble": lambda d: torch.complex(t(d, 2), t(d, 2), out=t(d, 2, dtype=torch.cdouble)),
    "complex_mixed": lambda d: torch.complex(t(d, 2), t(d, 2, dtype=torch.double)),
    "complex_half_float": lambda d: torch.complex(t(d, 2, dtype=torch.half), t(d, 2)),
    "complex_int": lambda d: torch.complex(t(d, 2, dtype=torch.long), t(d, 2, dtype=torch.long)),
    "complex_cfloat": lambda d: torch.complex(t(d, 2, dtype=torch.cfloat), t(d, 2, dtype=torch.cfloat)),
    "polar_out_real": lambda d: torch.polar(t(d, 2), t(d, 2), out=t(d, 2)),
    "polar_out_double_real": lambda d: torch.polar(t(d, 2, dtype=torch.double), t(d, 2, dtype=torch.double),
                                                   out=t(d, 2, dtype=torch.double)),
    "polar_mixed": lambda d: torch.polar(t(d, 2), t(d, 2, dtype=torch.double)),
    "polar_bool": lambda d: torch.polar(t(d, 2, dtype=torch.bool), t(d, 2, dtype=torch.bool)),
    "randn_complex_into_real": lambda d: torch.randn(3, dtype=torch.cfloat, out=t(d, 3)),
    "rand_complex_into_real": lambda d: torch.rand(3, dtype=torch.cdouble, out=t(d, 3)),
    "linspace_complex_dtype_float": lambda d: torch.linspace(0, 1j, 5, dtype=torch.float, device=d),
    "linspace_complex_start_dtype_float": lambda d: torch.linspace(0j, 1, 5, dtype=torch.float, device=d),
    "logspace_complex_dtype_float": lambda d: torch.logspace(0, 1j, 5, dtype=torch.float, device=d),
    "linspace_complex_into_float": lambda d: torch.linspace(0, 1j, 5, out=t(d, 5)),
    "linspace_complex_into_long": lambda d: torch.linspace(0, 1j, 5, out=t(d, 5, dtype=torch.long)),
    "linspace_complex_into_half": lambda d: torch.linspace(1j, 2, 5, out=t(d, 5, dtype=torch.half)),
    "logspace_complex_into_double": lambda d: torch.logspace(0, 1j, 5, out=t(d, 5, dtype=torch.double)),
    "linspace_negative_steps": lambda d: torch.linspace(0, 1, -1, device=d),
    "linspace_negative_steps_out": lambda d: torch.linspace(0, 1, -1, out=t(d, 3)),
    "fftfreq_int_out": lambda d: torch.fft.fftfreq(5, out=t(d, 5, dtype=torch.long)),
    "arange_nan_end": lambda d: torch.arange(-5, float("nan"), device=d),
    "arange_inf_end_negative_step": lambda d: torch.arange(0, float("-inf"), -1, device=d),
    "arange_inf": lambda d: torch.arange(float("inf"), device=d),
    "arange_nan_start": lambda d: torch.arange(float("nan"), 10, device=d),
    "arange_zero_step": lambda d: torch.arange(0, 1, 0, device=d),
    "arange_wrong_sign": lambda d: torch.arange(0, 5, -1, device=d),
    "range_inf": lambda d: torch.range(0, float("inf"), device=d),
    "linspace_overlapping_out": lambda d: torch.linspace(1, 10, 10, out=torch.zeros(1, device=d).expand(10)),
    "logspace_overlapping_out": lambda d: torch.logspace(1, 10, 10, out=torch.zeros(1, device=d).expand(10)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_as_cpu(name):
    want = _outcome(CASES[name], "cpu")
    assert want[0] is not None
    # (complex_half_float: CPU warns that ComplexHalf is experimental as it makes the result first)
    assert _outcome(CASES[name], DEV)[0] == want[0]


RESULTS = {
    "complex_out": lambda d: torch.complex(t(d, 2), 2 * t(d, 2), out=t(d, 2, dtype=torch.cfloat)),
    "polar_out": lambda d: torch.polar(t(d, 3, dtype=torch.double), t(d, 3, dtype=torch.double),
                                       out=t(d, 3, dtype=torch.cdouble)),
    "linspace_into_complex": lambda d: torch.linspace(0, 1, 5, out=t(d, 5, dtype=torch.cfloat)),
    "linspace_complex": lambda d: torch.linspace(0, 1 + 2j, 5, device=d),
    "arange_resize_warns": lambda d: torch.arange(0, 5, out=t(d, 2, 2)),
    "arange_same_numel_keeps_shape": lambda d: torch.arange(0, 4, out=t(d, 2, 2)),
    "arange_from_empty": lambda d: torch.arange(-1, 1, 2.0 / 49, out=t(d, 0)),
    "arange_rounding": lambda d: torch.arange(-1, 1, 2.0 / 49, dtype=torch.float32, out=torch.zeros(1, 49, device=d)),
    "linspace_resizes_silently": lambda d: torch.linspace(0, 1, 5, out=t(d, 3)),
    "range_resizes_silently": lambda d: torch.range(0, 3, out=t(d, 2)),
}
for n, d, p in [(5, 1.0, 3), (6, 0.5, 2), (1, 1.0, 0), (0, 1.0, 0), (7, 2.0, 9)]:
    for dt in (torch.float32, torch.float64, torch.cfloat, torch.half):
        if n or not dt.is_complex:  # (fftfreq(0) into a complex out: CPU refuses, the tpu makes nothing)
            RESULTS[f"fftfreq_{n}_{d}_{dt}_{p}"] = lambda dv, n=n, d=d, dt=dt, p=p: torch.fft.fftfreq(
                n, d, out=torch.zeros(p, dtype=dt, device=dv))
        RESULTS[f"rfftfreq_{n}_{d}_{dt}_{p}"] = lambda dv, n=n, d=d, dt=dt, p=p: torch.fft.rfftfreq(
            n, d, out=torch.zeros(p, dtype=dt, device=dv))
    RESULTS[f"fftfreq_{n}_{d}_dtype"] = lambda dv, n=n, d=d: torch.fft.fftfreq(n, d, dtype=torch.float64, device=dv)
    RESULTS[f"rfftfreq_{n}_{d}_default"] = lambda dv, n=n, d=d: torch.fft.rfftfreq(n, d, device=dv)


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_result_and_warnings_as_cpu(name):
    want = _outcome(RESULTS[name], "cpu")
    got = _outcome(RESULTS[name], DEV)
    if "complex64" in name and want[0] is not None:
        # arange has no complex kernel on either: CPU names its kernel ("arange_cpu" not implemented
        # for 'ComplexFloat'), the tpu its op; both raise NotImplementedError
        assert want[0][0] is NotImplementedError and got[0][0] is NotImplementedError
        return
    assert got[:2] == want[:2]
    if want[2] is not None:
        r = got[2]
        assert r.device.type == DEV and r.dtype == want[2].dtype and r.shape == want[2].shape
        assert r.stride() == want[2].stride()
        torch.testing.assert_close(r.cpu(), want[2], equal_nan=True)  # (rfftfreq(0): 0 * inf)
