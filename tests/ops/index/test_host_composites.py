"""Ops whose result crosses to the host (equal, bincount), boolean-mask
indexing (data-dependent index count), hash_tensor, and the saved statistics
of the batch-norm variants, against PyTorch CPU."""
import pytest
import torch

from ops_util import check, check_grad, dev, make


@pytest.mark.parametrize("shape", [(6,), (2, 3), (2, 3, 4)])
def test_bool_mask_index(shape):
    x = make(shape)
    check(lambda t: t[t > 0], x)
    check(lambda t: t[(t > 0).to(torch.uint8).bool()], x)


def test_bool_mask_index_partial_dims():
    x = make((3, 4, 5))
    m = make((4,), torch.bool, seed=1)
    check(lambda t, mm: t[:, mm], x, m)
    m2 = make((3, 4), torch.bool, seed=2)
    check(lambda t, mm: t[mm], x, m2)
    check(lambda t, mm, i: t[mm, i], x, m2, torch.tensor([4]))


def test_bool_mask_index_put():
    x = make((3, 4))
    m = make((3, 4), torch.bool, seed=3)
    n = int(m.sum())

    def put(t, mm, v):
        t = t.clone()
        t[mm] = v
        return t
    check(put, x, m, make((n,), seed=4))
    check(put, x, m, torch.tensor(7.0))

    def put_acc(t, mm, v):
        return t.index_put((mm,), v, accumulate=True)
    check(put_acc, x, m, make((n,), seed=5))


def test_bool_mask_grad():
    x = make((3, 4))
    m = make((3, 4), torch.bool, seed=6)
    check_grad(lambda t: t[m.to(t.device)] * 2, x)

    def put(t, v):
        return t.index_put((m.to(t.device),), v)
    check_grad(put, x, make((int(m.sum()),), seed=7))


def test_bool_mask_shape_error():
    x = torch.zeros(3, 4, device=dev)
    with pytest.raises(IndexError, match="shape of the mask"):
        x[torch.ones(3, 5, dtype=torch.bool, device=dev)]


def test_equal():
    a = make((2, 3))
    assert torch.equal(a.to(dev), a.clone().to(dev))
    assert not torch.equal(a.to(dev), (a + 1).to(dev))
    assert not torch.equal(a.to(dev), a.reshape(3, 2).to(dev))
    assert torch.equal(a.to(dev), a.double().to(dev)) == torch.equal(a, a.double())
    nan = torch.tensor([1.0, float("nan")])
    assert torch.equal(nan.to(dev), nan.to(dev)) == torch.equal(nan, nan)
    assert torch.equal(torch.zeros(0, device=dev), torch.zeros(0, device=dev))


def test_bincount():
    x = torch.tensor([1, 3, 3, 0, 7])
    check(torch.bincount, x)
    check(lambda t: torch.bincount(t, minlength=10), x)
    check(lambda t, w: torch.bincount(t, weights=w), x, make((5,)))
    check(lambda t, w: torch.bincount(t, weights=w), x, make((5,), torch.float64))
    check(lambda t: torch.bincount(t, minlength=3), torch.tensor([], dtype=torch.long))
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.bincount(torch.tensor([-1, 2], device=dev))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32, torch.bool])
def test_hash_tensor(dtype):
    x = make((3, 4), dtype)
    check(torch.hash_tensor, x)
    check(lambda t: torch.hash_tensor(t, dim=1), x)
    check(lambda t: torch.hash_tensor(t, dim=0, keepdim=True), x)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_batch_norm_legit_saved_stats(training, dtype):
    x = make((4, 3, 5), dtype)
    w, b = make((3,), dtype, seed=1), make((3,), dtype, seed=2)

    def f(t, w, b):
        rm, rv = torch.zeros(3, dtype=dtype, device=t.device), torch.ones(3, dtype=dtype, device=t.device)
        out = torch.ops.aten._native_batch_norm_legit(t, w, b, rm, rv, training, 0.1, 1e-5)
        return (*out, rm, rv)
    check(f, x, w, b, **({} if dtype == torch.float32 else {"atol": 2e-2, "rtol": 2e-2}))
