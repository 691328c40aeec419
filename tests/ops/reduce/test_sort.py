"""sort family (csrc/core/lower/reduce/sort.c) against PyTorch CPU: sort (+stable,
out=), argsort / msort (composite over sort), topk, kthvalue, median,
nanmedian, mode; forward and gradients."""
import pytest
import torch

from ops_util import check, check_grad, dev, make

nan = float("nan")


def distinct(shape, dtype=torch.float32, seed=0):
    """Values without ties (a shuffled range), exact in every tested dtype."""
    g = torch.Generator().manual_seed(seed)
    n = 1
    for s in shape:
        n *= s
    x = torch.randperm(n, generator=g).reshape(shape) - n // 2
    return x.to(dtype) if dtype != torch.float32 else x.to(dtype) * 0.25


def tup(r):
    return tuple(r)


SORT_DTYPES = [torch.float32, torch.bfloat16, torch.int64]


@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_distinct(dtype, dim, descending):
    x = distinct((4, 5, 6), dtype)
    check(lambda t: tup(torch.sort(t, dim=dim, descending=descending)), x)
    check(lambda t: torch.argsort(t, dim=dim, descending=descending), x)


@pytest.mark.parametrize("dtype", SORT_DTYPES + [torch.bool])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_ties(dtype, descending):
    x = make((3, 17), dtype, low=-2, high=2)
    check(lambda t: tup(torch.sort(t, stable=True, descending=descending)), x)
    check(lambda t: torch.argsort(t, dim=0, stable=True, descending=descending), x)
    # default (unstable on CPU): the values agree
    check(lambda t: torch.sort(t, descending=descending).values, x)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_nan(descending):
    x = torch.tensor([[3.0, nan, -1.0, nan, 2.0, -float("inf"), float("inf"), 0.0],
                      [nan, nan, nan, 1.0, 1.0, -0.0, 0.0, 5.0]])
    check(lambda t: tup(torch.sort(t, stable=True, descending=descending)), x)
    check(lambda t: torch.msort(t.t()), x)


def test_sort_edge_and_out():
    check(lambda t: tup(torch.sort(t)), torch.tensor(2.5))
    check(lambda t: tup(torch.sort(t, dim=0)), torch.empty(0, 3))
    x = distinct((3, 4))

    def with_out(t):
        v = torch.empty(3, 4, device=t.device)
        i = torch.empty(3, 4, dtype=torch.long, device=t.device)
        torch.sort(t, dim=1, descending=True, out=(v, i))
        return v, i
    check(with_out, x)


@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("k,dim,largest", [(1, -1, True), (3, -1, False), (2, 0, True), (4, 1, False), (6, 2, True)])
def test_topk(dtype, k, dim, largest):
    x = distinct((4, 5, 6), dtype)
    check(lambda t: tup(torch.topk(t, k, dim=dim, largest=largest)), x)


def test_topk_ties_and_nan():
    x = make((4, 9), low=-2, high=2).round()
    check(lambda t: torch.topk(t, 4).values, x)
    check(lambda t: torch.topk(t, 4, largest=False).values, x)
    y = torch.tensor([3.0, nan, 1.0, 2.0, -5.0])
    check(lambda t: tup(torch.topk(t, 2)), y)
    check(lambda t: tup(torch.topk(t, 2, largest=False)), y)


@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("k,dim,keepdim", [(1, -1, False), (3, 0, True), (5, 1, False), (6, 2, True)])
def test_kthvalue(dtype, k, dim, keepdim):
    x = distinct((4, 5, 6), dtype)
    check(lambda t: tup(torch.kthvalue(t, k, dim=dim, keepdim=keepdim)), x)


@pytest.mark.parametrize("dtype", SORT_DTYPES)
def test_median(dtype):
    for shape in [(7,), (4, 6), (3, 4, 5)]:
        x = distinct(shape, dtype)
        check(torch.median, x)
        check(torch.nanmedian, x)
        for dim in range(len(shape)):
            for keepdim in (False, True):
                check(lambda t: tup(torch.median(t, dim, keepdim=keepdim)), x)
                check(lambda t: tup(torch.nanmedian(t, dim, keepdim=keepdim)), x)
    # ties: PyTorch's index choice is deterministic (stable order)
    y = make((5, 8), dtype, low=-2, high=2)
    check(lambda t: tup(torch.median(t, 1)), y)
    check(lambda t: tup(torch.median(t, 0)), y)


def test_median_nan():
    x = torch.tensor([[1.0, nan, 2.0, nan], [3.0, 1.0, 2.0, 0.0], [nan, 4.0, 4.0, 1.0],
                      [2.0, 2.0, nan, 7.0]])
    check(torch.median, x)
    check(torch.nanmedian, x)
    check(torch.nanmedian, torch.tensor([nan, nan]))
    check(lambda t: tup(torch.median(t, 1)), x)
    check(lambda t: tup(torch.nanmedian(t, 1)), x)
    check(lambda t: tup(torch.median(t, 0, keepdim=True)), x)
    check(torch.median, torch.tensor(3.0))
    check(torch.median, torch.empty(0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_mode(dtype):
    x = torch.tensor([[1, 2, 2, 1, 3, 3], [5, 5, 4, 4, 4, 5], [0, 1, 2, 3, 4, 5], [7, 7, 7, 7, 7, 7]]).to(dtype)
    check(lambda t: tup(torch.mode(t, 1)), x)
    check(lambda t: tup(torch.mode(t, 0, keepdim=True)), x)
    y = make((3, 10, 4), dtype, low=-2, high=3)
    check(lambda t: tup(torch.mode(t, 1)), y)
    check(lambda t: tup(torch.mode(t)), y)


def test_sort_family_grads():
    x = distinct((4, 6))
    check_grad(lambda t: torch.sort(t, dim=1, descending=True).values, x)
    check_grad(lambda t: torch.sort(t, dim=0).values, x)
    check_grad(lambda t: torch.topk(t, 3).values, x)
    check_grad(lambda t: torch.kthvalue(t, 2, 0).values, x)
    check_grad(lambda t: torch.median(t, 1).values, x)
    check_grad(lambda t: torch.median(t), x)
    check_grad(lambda t: torch.nanmedian(t, 0, keepdim=True).values, x)
    check_grad(lambda t: torch.mode(t.round(), 1).values, make((3, 7), low=-2, high=2))
