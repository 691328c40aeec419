"""Errors raised as on CPU (exception type and message) where PyTorch's meta kernels raise
another one or none: clamp without bounds, a float alpha over integers, integer addcdiv, an
unsafe out= or in-place cast, cat into an out= of another kind, a host out= of an op that
runs on the host (nonzero), indexing's IndexErrors and check order, index_fill of a complex value
into a real tensor; and indexing from TorchScript."""
import pytest
import torch

import torch_tpu  # noqa: F401

DEV = "tpu"


def _error(fn, dev):
    try:
        fn(dev)
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e), str(e).split("\n")[0]
    return None


CASES = {
    "clamp_no_bounds": lambda d: torch.randn(4, device=d).clamp(),
    "clamp_no_bounds_inplace": lambda d: torch.randn(4, device=d).clamp_(),
    "clip_no_bounds": lambda d: torch.clip(torch.randn(4, device=d)),
    "add_float_alpha_int": lambda d: torch.add(torch.ones(4, dtype=torch.int32, device=d),
                                               torch.ones(4, dtype=torch.int32, device=d), alpha=1.1),
    "add_float_alpha_bool": lambda d: torch.add(torch.ones(4, dtype=torch.bool, device=d),
                                                torch.ones(4, dtype=torch.bool, device=d), alpha=1.1),
    "sub_float_alpha_int_scalar": lambda d: torch.sub(torch.ones(4, dtype=torch.int64, device=d), 2, alpha=0.5),
    "add_bool_alpha_float": lambda d: torch.add(torch.ones(4, device=d), torch.ones(4, device=d), alpha=True),
    "addcdiv_int": lambda d: torch.addcdiv(*(torch.ones(3, dtype=torch.int32, device=d),) * 3),
    "addcdiv_int_inplace": lambda d: torch.ones(3, dtype=torch.int64, device=d).addcdiv_(
        torch.ones(3, dtype=torch.int64, device=d), torch.ones(3, dtype=torch.int64, device=d)),
    "add_out_unsafe": lambda d: torch.add(torch.ones(4, device=d), torch.ones(4, device=d),
                                          out=torch.empty(4, dtype=torch.int64, device=d)),
    "add_inplace_int_by_float": lambda d: torch.ones(4, dtype=torch.int32, device=d).add_(1.5),
    "add_inplace_int_by_float_tensor": lambda d: torch.ones(4, dtype=torch.int32, device=d).add_(
        torch.ones(4, device=d)),
    "add_inplace_bool_by_uint8": lambda d: torch.ones(3, dtype=torch.bool, device=d).add_(
        torch.ones(3, dtype=torch.uint8, device=d)),
    "cat_out_float_to_int": lambda d: torch.cat([torch.ones(2, device=d), torch.ones(2, device=d)],
                                                out=torch.empty(4, dtype=torch.uint8, device=d)),
    "cat_out_complex_to_float": lambda d: torch.cat([torch.ones(2, dtype=torch.cfloat, device=d)],
                                                    out=torch.empty(2, device=d)),
    "index_no_indices": lambda d: torch.ops.aten.index.Tensor(torch.ones(1, device=d), []),
    "index_float_indices": lambda d: torch.arange(3, device=d)[torch.tensor([], device=d)],
    "mask_assign_shape_before_dtype": lambda d: torch.arange(4, device=d).__setitem__(
        torch.arange(4, device=d) > -1, torch.tensor([1.0, 2.0, 3.0], device=d)),
    "mask_assign_empty_value": lambda d: torch.arange(4, device=d).__setitem__(
        torch.arange(4, device=d) > -1, torch.tensor([], device=d)),
    "index_fill_complex_into_real": lambda d: torch.ones(2, 2, device=d).index_fill_(
        1, torch.tensor([0], device=d), 1 + 1j),
    "index_fill_complex_into_int": lambda d: torch.ones(2, 2, dtype=torch.int64, device=d).index_fill(
        0, torch.tensor([1], device=d), 2j),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_as_cpu(name):
    cpu = _error(CASES[name], "cpu")
    assert cpu is not None
    assert _error(CASES[name], DEV) == cpu


def test_allowed_cases_still_compute():
    a = torch.tensor([1, 2, 3], dtype=torch.int32)
    for d in ("cpu", DEV):
        r = torch.add(a.to(d), a.to(d), alpha=2)
        assert r.cpu().tolist() == [3, 6, 9]
        out = torch.zeros(4, dtype=torch.float64, device=d)
        torch.cat([torch.ones(2, dtype=torch.int32, device=d), torch.ones(2, device=d)], out=out)
        assert out.cpu().tolist() == [1.0] * 4
        assert torch.ones(2, device=d).clamp(min=0.5).cpu().tolist() == [1.0, 1.0]


def test_host_op_out_on_another_device():
    t = torch.tensor([0, 1, 0, 2], device=DEV)
    with pytest.raises(RuntimeError, match="on the same device"):
        torch.nonzero(t, out=torch.empty(0, dtype=torch.long))
    out = torch.empty(0, dtype=torch.long, device=DEV)
    torch.nonzero(t, out=out)
    assert torch.equal(out.cpu(), torch.nonzero(t.cpu()))


def test_positions_into_an_empty_dim():
    for d in ("cpu", DEV):
        x = torch.empty(10, 0, device=d)
        with pytest.raises(IndexError, match="index is out of bounds for dimension with size 0"):
            x[:, [0, 1]]
        assert x[[1, 2]].shape == (2, 0)
        assert x[[], []].shape == (0,)
        assert x[:, torch.empty(0, dtype=torch.long, device=d)].shape == (10, 0)


def test_torchscript_indexing():
    """TorchScript's interpreter passes index_put_'s indices as a generic list."""
    def fn1(x):
        x[x < 50] = 1.0
        return x

    def fn2(x):
        x[0:50] = 1.0
        return x

    for fn in (fn1, fn2):
        s = torch.jit.script(fn)
        want = s(torch.arange(100.0))
        assert torch.equal(s(torch.arange(100.0, device=DEV)).cpu(), want)


def test_index_put_without_indices_raises():
    """CPU refuses it with an internal assert (a RuntimeError); so does the device, with a message."""
    for d in ("cpu", DEV):
        with pytest.raises(RuntimeError):
            torch.rand([], device=d).index_put([], torch.tensor([1.0], device=d), True)
