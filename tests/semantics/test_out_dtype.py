"""out= arguments of another dtype than the result, and uint8 masks, as on CPU.

- Ops whose CPU out= kernel demands a dtype (neg's TensorIterator checks all dtypes equal;
  relu's generated out= wrapper checks the result dtype) refuse another one with CPU's
  exception type and message, where PyTorch's meta kernels would accept it and cast.
- Where an out= of another dtype is allowed, the op still computes in the inputs' dtype and
  the result is cast (float16 33000 + 33000 into a float64 out is inf, as on CPU).
- Indexing with a uint8 mask gives CPU's deprecation warning, once per mask.
"""
import warnings

import pytest
import torch

import torch_tpu  # noqa: F401

DEV = "tpu"


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return ("raise", type(e), str(e).split("\n")[0])


OUT_DTYPE_ERRORS = ("Found dtype", "Expected out tensor to have dtype", "result type")


def _same(cpu, tpu):
    assert cpu[0] == tpu[0], (cpu, tpu)
    if cpu[0] == "raise":
        # an error about the out= dtype: CPU's type and message; another (an op that does not
        # take the dtype at all) may word it otherwise
        if cpu[2].startswith(OUT_DTYPE_ERRORS):
            assert cpu[1:] == tpu[1:]
    else:
        assert tpu[1].dtype == cpu[1].dtype
        torch.testing.assert_close(tpu[1].cpu(), cpu[1], equal_nan=True)


UNARY = [torch.neg, torch.negative, torch.floor, torch.ceil, torch.round, torch.bitwise_not, torch.sin,
         torch.sqrt, torch.relu, torch.isnan, torch.isinf, torch.nn.functional.hardswish,
         torch.nn.functional.hardsigmoid, torch.nn.functional.mish, torch.conj_physical]
PAIRS = [(torch.float32, torch.float64), (torch.int64, torch.float32), (torch.float32, torch.complex64),
         (torch.float32, torch.bool), (torch.int64, torch.int64), (torch.float32, torch.float32)]


def _unary_out(op, x, out):
    if op in (torch.nn.functional.hardswish, torch.nn.functional.hardsigmoid, torch.nn.functional.mish):
        name = op.__name__
        return getattr(torch.ops.aten, name).out(x, out=out)
    return op(x, out=out)


@pytest.mark.parametrize("op", UNARY, ids=lambda op: op.__name__)
def test_unary_out_dtype_checks_match_cpu(op):
    for din, dout in PAIRS:
        x = torch.tensor([1.5, -2.0, 0.0]).to(din)

        def run(dev):
            return _unary_out(op, x.to(dev), torch.empty(0, dtype=dout, device=dev))

        _same(_outcome(lambda: run("cpu")), _outcome(lambda: run(DEV)))


def test_binary_out_computes_in_input_dtype():
    # float16: the sum overflows in float16 (inf), not in the float64 out
    for dev in ("cpu", DEV):
        t = torch.tensor(33000, dtype=torch.float16, device=dev)
        out = torch.empty(0, dtype=torch.float64, device=dev)
        torch.add(t, t, out=out)
        assert out.dtype == torch.float64 and out.item() == float("inf"), dev
    cases = [
        (torch.true_divide, torch.tensor(1.5, dtype=torch.float16), torch.tensor(0.666, dtype=torch.float16)),
        (torch.mul, torch.tensor([1.1, 3.3], dtype=torch.bfloat16), torch.tensor([7.7, 9.1], dtype=torch.bfloat16)),
        (torch.sub, torch.tensor(5, dtype=torch.uint8), torch.tensor(8, dtype=torch.uint8)),
        (torch.atan2, torch.tensor([0.3, 2.0], dtype=torch.float16), torch.tensor([1.7, -0.1], dtype=torch.float16)),
    ]
    for op, a, b in cases:
        cpu = op(a, b, out=torch.empty(0, dtype=torch.float64))
        tpu = op(a.to(DEV), b.to(DEV), out=torch.empty(0, dtype=torch.float64, device=DEV))
        assert tpu.dtype == torch.float64
        assert torch.equal(tpu.cpu(), cpu), (op, tpu, cpu)


def test_unary_out_computes_in_input_dtype():
    for x, dout in ((torch.tensor([1.5, 0.1, 3.3, -7.9], dtype=torch.float16), torch.float32),
                    (torch.tensor([1.5, 0.1, 3.3, 7.9], dtype=torch.bfloat16), torch.float64)):
        for op in (torch.sin, torch.exp, torch.sqrt, torch.tanh):
            cpu = op(x, out=torch.empty(0, dtype=dout))
            tpu = op(x.to(DEV), out=torch.empty(0, dtype=dout, device=DEV))
            assert tpu.dtype == dout
            # the float16 / bfloat16 result, cast: equal to the CPU's within one float16 ulp
            torch.testing.assert_close(tpu.cpu(), cpu, equal_nan=True)
            torch.testing.assert_close(tpu.cpu().to(x.dtype).to(dout), tpu.cpu(), atol=0, rtol=0, equal_nan=True)


def _warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    # the message without the "(Triggered internally at <file>)" that TORCH_WARN appends
    return [str(x.message).split(" (Triggered internally")[0] for x in w if "uint8" in str(x.message)]


def test_uint8_mask_warns_as_cpu():
    v = torch.randn(5, 7, 3)
    m = torch.tensor([1, 0, 1, 1, 0], dtype=torch.uint8)
    m2 = torch.tensor([1, 1, 1], dtype=torch.uint8)
    cases = [
        lambda d: v.to(d)[m.to(d)],
        lambda d: v.to(d)[m.to(d), :, m2.to(d)],
        lambda d: torch.ones(10, 10, device=d).index_put_((torch.zeros(10, dtype=torch.uint8, device=d),),
                                                         torch.tensor(1.0, device=d), accumulate=True),
        lambda d: v.to(d)[torch.tensor([True, False, True, True, False], device=d)],
    ]
    for case in cases:
        cpu = _warnings(lambda: case("cpu"))
        tpu = _warnings(lambda: case(DEV))
        assert tpu == cpu
    assert _warnings(lambda: cases[0](DEV)) == [
        "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."]
    res = v.to(DEV)[m.to(DEV)]
    assert torch.equal(res.cpu(), v[m.bool()])


def test_abs_of_complex_into_its_real_dtype():
    z = torch.tensor([3 + 4j, -1j], dtype=torch.complex64)
    for d in ("cpu", DEV):
        out = torch.empty(0, dtype=torch.float32, device=d)
        torch.abs(z.to(d), out=out)
        assert out.dtype == torch.float32 and out.cpu().tolist() == [5.0, 1.0]
