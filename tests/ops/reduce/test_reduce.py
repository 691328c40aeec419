"""reduce family (csrc/core/lower/reduce/reduce.c) against PyTorch CPU."""
import pytest
import torch

from ops_util import ALL_DTYPES, FLOAT_DTYPES, check, check_grad, dev, make

DIMS = [None, 0, -1, (0, 2), ()]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum(dtype, dim, keepdim):
    x = make((3, 4, 5), dtype)
    if dim is None:
        check(torch.sum, x)
    else:
        check(lambda t: torch.sum(t, dim, keepdim=keepdim), x)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_sum_dtype_prod(dtype):
    x = make((3, 4), dtype, low=-2, high=3)
    check(lambda t: torch.sum(t, 1, dtype=torch.float64), x)
    check(torch.prod, x)
    check(lambda t: torch.prod(t, 0, keepdim=True), x)
    check(lambda t: torch.count_nonzero(t, dim=1), x)
    check(torch.count_nonzero, x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("dim", DIMS)
def test_mean_var_std(dtype, dim):
    x = make((3, 4, 5), dtype)
    kw = {} if dim is None else {"dim": dim}
    check(lambda t: torch.mean(t, **kw), x)
    check(lambda t: torch.var(t, **kw), x)
    check(lambda t: torch.std(t, correction=0, **kw), x)
    check(lambda t: torch.var_mean(t, correction=2, **kw), x)
    check(lambda t: torch.std_mean(t, **kw), x)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_amax_amin_max_min(dtype):
    x = make((4, 6), dtype, low=-3, high=3)  # small range: many ties
    check(lambda t: torch.amax(t, 1), x)
    check(lambda t: torch.amin(t, (0, 1), keepdim=True), x)
    check(torch.max, x)
    check(torch.min, x)
    check(lambda t: torch.max(t, 1), x)
    check(lambda t: torch.min(t, 0, keepdim=True), x)
    check(lambda t: torch.aminmax(t, dim=1), x)
    if dtype != torch.bool:
        check(lambda t: torch.argmax(t, 1), x)
        check(lambda t: torch.argmin(t, 0, keepdim=True), x)
        check(torch.argmax, x)
        check(lambda t: torch.argmin(t, keepdim=True), x)


def test_nan_propagates():
    x = torch.tensor([[1.0, float("nan"), 3.0, float("nan")], [2.0, 5.0, 5.0, -1.0]])
    for fn in (torch.amax, torch.amin, torch.max, torch.min):
        check(fn, x)
    check(lambda t: torch.max(t, 1), x)
    check(lambda t: torch.min(t, 1), x)
    check(lambda t: torch.argmax(t, 1), x)
    check(lambda t: torch.argmin(t, 1), x)
    check(lambda t: torch.nansum(t, 1), x)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_any_all(dtype):
    x = make((3, 4), dtype, low=0, high=2)
    check(torch.any, x)
    check(torch.all, x)
    check(lambda t: torch.any(t, 1), x)
    check(lambda t: torch.all(t, 0, keepdim=True), x)
    check(lambda t: torch.any(t, dim=(0, 1)), x)
    check(lambda t: torch.all(t.to(torch.uint8)), x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_logsumexp_norm(dtype):
    x = make((3, 5), dtype)
    check(lambda t: torch.logsumexp(t, 1), x)
    check(lambda t: torch.logsumexp(t, (0, 1), keepdim=True), x)
    x2 = x.clone()
    x2[0] = float("-inf")
    check(lambda t: torch.logsumexp(t, 1), x2)
    for ord in (2, 1, 0, 3, 0.5, float("inf"), float("-inf")):
        check(lambda t: torch.linalg.vector_norm(t, ord), x)
        check(lambda t: torch.linalg.vector_norm(t, ord, dim=1, keepdim=True), x)
    check(lambda t: torch.norm(t, dim=1), x)
    check(lambda t: torch.linalg.vector_norm(t, dtype=torch.float64), x)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cumsum_cumprod(dtype):
    x = make((4, 37), dtype, low=-2, high=3)
    check(lambda t: torch.cumsum(t, 1), x, rtol=1e-5, atol=1e-4)
    check(lambda t: torch.cumsum(t, 0), x)
    check(lambda t: torch.cumsum(t, -1, dtype=torch.float64), x)
    y = make((3, 9), dtype, low=-2, high=3)
    check(lambda t: torch.cumprod(t, 1), y)


def test_reduce_out_and_inplace():
    x = make((3, 4))
    check(lambda t: torch.sum(t, 1, out=torch.empty(3, device=t.device)), x)
    check(lambda t: t.cumsum_(1), x)


def test_grads():
    x = make((3, 4, 5))
    check_grad(lambda t: t.sum((0, 2)), x)
    check_grad(lambda t: t.mean(1, keepdim=True), x)
    check_grad(lambda t: t.amax(-1), x)
    check_grad(lambda t: t.max(1).values, x)
    check_grad(lambda t: t.var(1), x, rtol=1e-5, atol=1e-5)
    check_grad(lambda t: t.std(), x, rtol=1e-5, atol=1e-5)
    check_grad(lambda t: torch.logsumexp(t, 2), x)
    check_grad(lambda t: torch.linalg.vector_norm(t, dim=1), x)
    check_grad(lambda t: torch.prod(t, 1), x)


def test_cumsum_grad():
    # the backward of cumsum is a reversed cumsum: it needs aten::flip
    check_grad(lambda t: torch.cumsum(t, 1), make((3, 4, 5)))


def test_large_sum_f32():
    x = make((1000, 300))
    check(lambda t: t.sum(), x, rtol=1e-5, atol=1e-3)
    check(lambda t: t.sum(0), x, rtol=1e-5, atol=1e-4)
