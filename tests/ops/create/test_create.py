"""create family (csrc/core/lower/create/create.c) against PyTorch CPU; random ops
by distribution and determinism."""
import pytest
import torch

from ops_util import ALL_DTYPES, dev, make

CREATE_DTYPES = ALL_DTYPES + [torch.int32, torch.float64]


@pytest.mark.parametrize("dtype", CREATE_DTYPES)
def test_zeros_ones_full(dtype):
    for fn in (lambda d: torch.zeros(2, 3, dtype=dtype, device=d),
               lambda d: torch.ones(4, dtype=dtype, device=d),
               lambda d: torch.full((2, 2), 3, dtype=dtype, device=d),
               lambda d: torch.zeros_like(make((3,), dtype).to(d)),
               lambda d: make((2, 3), dtype).to(d).fill_(True if dtype == torch.bool else 2),
               lambda d: make((2, 3), dtype).to(d).zero_()):
        got = fn(dev)
        assert got.device.type == "tpu"
        torch.testing.assert_close(got.cpu(), fn("cpu"))


def test_fill_tensor_value():
    v = torch.tensor(2.5)
    got = torch.empty(3, device=dev).fill_(v.to(dev))
    torch.testing.assert_close(got.cpu(), torch.full((3,), 2.5))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.float64])
def test_arange(dtype):
    for args in ((10,), (2, 11, 3), (-1, 1, 0.1) if dtype.is_floating_point else (-7, 8, 5), (5, -5, -2)):
        got = torch.arange(*args, dtype=dtype, device=dev).cpu()
        torch.testing.assert_close(got, torch.arange(*args, dtype=dtype))


def test_linspace_eye():
    for dtype in (torch.float32, torch.int64):
        torch.testing.assert_close(torch.linspace(-3, 7, 11, dtype=dtype, device=dev).cpu(),
                                   torch.linspace(-3, 7, 11, dtype=dtype))
    torch.testing.assert_close(torch.linspace(0, 1, 1, device=dev).cpu(), torch.linspace(0, 1, 1))
    torch.testing.assert_close(torch.eye(3, 4, device=dev).cpu(), torch.eye(3, 4))
    torch.testing.assert_close(torch.eye(3, dtype=torch.bool, device=dev).cpu(), torch.eye(3, dtype=torch.bool))


def test_uniform_rand():
    x = torch.empty(100000, device=dev).uniform_().cpu()
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.01 and abs(x.var() - 1 / 12) < 0.003
    y = torch.empty(10000, device=dev).uniform_(-2, 5).cpu()
    assert y.min() >= -2 and y.max() < 5
    b = torch.rand(10000, dtype=torch.bfloat16, device=dev).cpu()
    assert b.min() >= 0 and b.max() < 1


def test_normal_randn():
    x = torch.randn(100000, device=dev).cpu()
    assert abs(x.mean()) < 0.02 and abs(x.std() - 1) < 0.02
    y = torch.empty(50000, device=dev).normal_(3, 0.5).cpu()
    assert abs(y.mean() - 3) < 0.02 and abs(y.std() - 0.5) < 0.02


def test_random_randint():
    x = torch.randint(-3, 4, (20000,), device=dev).cpu()
    assert x.min() == -3 and x.max() == 3
    counts = torch.bincount(x + 3)
    assert (counts - 20000 / 7).abs().max() < 300
    f = torch.empty(1000, device=dev).random_(0, 10).cpu()
    assert f.min() >= 0 and f.max() <= 9 and (f == f.round()).all()


def test_bernoulli_exponential():
    x = torch.empty(50000, device=dev).bernoulli_(0.25).cpu()
    assert set(x.unique().tolist()) <= {0.0, 1.0} and abs(x.mean() - 0.25) < 0.01
    p = torch.full((50000,), 0.8)
    y = torch.bernoulli(p.to(dev)).cpu()
    assert abs(y.mean() - 0.8) < 0.01
    e = torch.empty(50000, device=dev).exponential_(4.0).cpu()
    assert e.min() >= 0 and abs(e.mean() - 0.25) < 0.01


def test_seed_determinism():
    torch.manual_seed(7)
    a = torch.rand(1000, device=dev).cpu()
    b = torch.rand(1000, device=dev).cpu()
    torch.manual_seed(7)
    a2 = torch.rand(1000, device=dev).cpu()
    assert torch.equal(a, a2) and not torch.equal(a, b)


@pytest.mark.parametrize("n", [0, 1, 7, 100])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32])
def test_randperm_is_a_reproducible_permutation(n, dtype):
    g = torch.Generator(device="tpu").manual_seed(5)
    a = torch.randperm(n, device="tpu", dtype=dtype, generator=g)
    assert a.dtype == dtype and a.shape == (n,)
    assert sorted(a.cpu().long().tolist()) == list(range(n))
    g.manual_seed(5)
    torch.testing.assert_close(torch.randperm(n, device="tpu", dtype=dtype, generator=g).cpu(), a.cpu())
    if n >= 7:
        assert not torch.equal(torch.randperm(n, device="tpu").cpu(), torch.randperm(n, device="tpu").cpu())
