"""index family (csrc/core/lower/index/index.c) against PyTorch CPU."""
import pytest
import torch

from ops_util import ALL_DTYPES, check, check_grad, dev, make


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_index_select_gather(dtype):
    x = make((4, 5, 3), dtype)
    idx = torch.tensor([3, 0, 0, -1 + 4])
    check(lambda t: torch.index_select(t, 1, idx.to(t.device)), x)
    check(lambda t: torch.index_select(t, 0, torch.tensor(2, device=t.device)), x)
    gi = make((4, 2, 3), torch.int64, low=0, high=5)
    check(lambda t: torch.gather(t, 1, gi.to(t.device)), x)


def test_index_select_gather_grad():
    x = make((4, 5))
    idx = torch.tensor([3, 0, 0, 1])
    check_grad(lambda t: torch.index_select(t, 0, idx.to(t.device)), x)
    gi = make((4, 3), torch.int64, low=0, high=5)
    check_grad(lambda t: torch.gather(t, 1, gi.to(t.device)), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_index_add(dtype):
    x = make((5, 3), dtype)
    src = make((4, 3), dtype, seed=1)
    idx = torch.tensor([0, 4, 0, 2])
    alpha = 2 if dtype == torch.int64 else 0.5
    check(lambda t, s: torch.index_add(t, 0, idx.to(t.device), s, alpha=alpha), x, src)
    check(lambda t, s: t.index_add_(1, torch.tensor([2, 2, 0], device=t.device), s.t()[:3].t().contiguous()),
          make((4, 3), dtype), src)


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scatter(dtype):
    x = make((3, 5), dtype)
    src = make((3, 5), dtype, seed=1)
    idx = torch.tensor([[0, 1, 2], [4, 3, 3], [1, 1, 1]])  # duplicates within a row
    uniq = torch.tensor([[0, 1, 2], [4, 3, 2], [1, 0, 3]])
    check(lambda t, s: torch.scatter(t, 1, uniq.to(t.device), s), x, src)
    check(lambda t: torch.scatter(t, 1, uniq.to(t.device), 1), x)
    if dtype != torch.bool:
        check(lambda t, s: torch.scatter_add(t, 1, idx.to(t.device), s), x, src)
        check(lambda t, s: torch.scatter(t, 1, idx.to(t.device), s, reduce="add"), x, src)
        for red in ("sum", "prod", "amax", "amin", "mean"):
            for inc in (True, False):
                check(lambda t, s: torch.scatter_reduce(t, 1, idx.to(t.device), s, red, include_self=inc),
                      x, src)


def test_scatter_add_grad():
    idx = torch.tensor([[0, 1, 2], [4, 3, 3]])
    check_grad(lambda t, s: torch.scatter_add(t, 1, idx.to(t.device), s), make((2, 5)), make((2, 3), seed=1))


def test_cat():
    a, b = make((2, 3)), make((2, 4), torch.int64)
    check(lambda x, y: torch.cat([x, y], 1), a, b)
    check(lambda x, y: torch.cat([x, torch.empty(0, device=x.device), y], -1), a, b)
    check(lambda x: torch.cat([x, x, x]), make((2, 3), torch.bfloat16))
    check(lambda x: torch.cat([x, x]), make((2, 3), torch.bool))
    check(lambda x, y: torch.cat([x, y], 1, out=torch.empty(2, 7, device=x.device)), a, b.float())
    check_grad(lambda x, y: torch.cat([x, y], 1), a, make((2, 4), seed=1))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_advanced_indexing(dtype):
    x = make((4, 5, 6), dtype)
    i = torch.tensor([3, 0, -1])
    j = torch.tensor([[1], [4]])
    check(lambda t: t[i.to(t.device)], x)
    check(lambda t: t[:, i.to(t.device)], x)
    check(lambda t: t[i.to(t.device), :, torch.tensor([0, 5, 2], device=t.device)], x)  # non-adjacent
    check(lambda t: t[:, j.to(t.device), i.to(t.device)], x)  # broadcast (2,1)x(3,)
    check(lambda t: t[1, j.to(t.device)], x)
    check(lambda t: t[..., torch.tensor([5, 5], device=t.device)], x)


def test_index_grad():
    i = torch.tensor([3, 0, 3])
    check_grad(lambda t: t[:, i.to(t.device)], make((4, 5)))
    check_grad(lambda t: t[i.to(t.device), torch.tensor([1, 1, 2], device=t.device)], make((4, 5)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_index_put(dtype):
    x = make((4, 5), dtype)
    v = make((3,), dtype, seed=1)
    r, c = torch.tensor([0, 2, 3]), torch.tensor([4, 4, 1])

    def put(t, vv):
        t = t.clone()
        t[r.to(t.device), c.to(t.device)] = vv
        return t
    check(put, x, v)

    def put_rows(t, vv):
        t = t.clone()
        t[torch.tensor([1, 3], device=t.device)] = vv
        return t
    check(put_rows, x, make((5,), dtype, seed=2))

    def put_mask(t):
        t = t.clone()
        t[t.to(torch.float32) > 0] = 1 if dtype != torch.bool else False
        return t
    check(put_mask, x)
    if dtype != torch.bool:
        dup = torch.tensor([1, 1, 3])
        check(lambda t, vv: t.index_put((dup.to(t.device),), vv, accumulate=True),
              make((5,), dtype), v)


def test_index_put_mask_values():
    x = make((4, 5))
    m = torch.tensor([True, False, True, True])

    def put(t, vv):
        t = t.clone()
        t[m.to(t.device)] = vv
        return t
    check(put, x, make((3, 5), seed=1))
    check(put, x, make((5,), seed=1))


@pytest.mark.parametrize("dims", [(0,), (1,), (-1,), (0, 2), (0, 1, 2)])
def test_flip(dims):
    x = torch.randn(3, 4, 5)
    torch.testing.assert_close(torch.flip(x.to("tpu"), dims).cpu(), torch.flip(x, dims))
    xg = x.clone().requires_grad_()
    xt = x.to("tpu").requires_grad_()
    (torch.flip(xg, dims) * torch.arange(60.).view(3, 4, 5)).sum().backward()
    (torch.flip(xt, dims) * torch.arange(60.).view(3, 4, 5).to("tpu")).sum().backward()
    torch.testing.assert_close(xt.grad.cpu(), xg.grad)
