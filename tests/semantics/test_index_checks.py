"""Out-of-range indices raise PyTorch's error (a device-side check, raised at the next sync in
Strict Eager and at the op in Debug Eager) instead of XLA's silent clamping."""
import pytest
import torch

import torch_tpu

DEV = "tpu"


def _cpu_error(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.type


CASES = {
    "index_select": lambda x, i: x.index_select(0, i),
    "embedding": lambda x, i: torch.nn.functional.embedding(i, x),
    "advanced_index": lambda x, i: x[i],
    "gather": lambda x, i: torch.gather(x, 0, i.view(-1, 1).expand(-1, 3)),
    "index_put": lambda x, i: x.clone().index_put_((i,), torch.tensor(1.0, device=x.device)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_range_raises_like_cpu_at_sync(name):
    fn = CASES[name]
    x = torch.randn(5, 3)
    bad = torch.tensor([0, 7])
    err = _cpu_error(fn, x, bad)
    y = fn(x.to(DEV), bad.to(DEV))  # Strict Eager: the check runs on the device
    with pytest.raises(err, match="out of (range|bounds)"):
        y.cpu()
    # the error is reported once; the device keeps working
    torch.testing.assert_close(fn(x.to(DEV), torch.tensor([1, 4]).to(DEV)).cpu(), fn(x, torch.tensor([1, 4])))


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_range_raises_at_the_op_in_debug(name):
    fn = CASES[name]
    x = torch.randn(5, 3)
    err = _cpu_error(fn, x, torch.tensor([-9]))
    with torch_tpu.eager_mode("debug"):
        with pytest.raises(err, match="out of (range|bounds)"):
            fn(x.to(DEV), torch.tensor([-9]).to(DEV))


def test_synchronize_raises_pending_check():
    x = torch.randn(4, 2).to(DEV)
    x.index_select(0, torch.tensor([4]).to(DEV))
    with pytest.raises(IndexError, match="index_select"):
        torch.tpu.synchronize()
    torch.tpu.synchronize()  # reported once


def test_negative_indices_in_range_work():
    x = torch.randn(5, 3)
    i = torch.tensor([-1, -5, 2])
    torch.testing.assert_close(x.to(DEV)[i.to(DEV)].cpu(), x[i])


# Ops that take no negative index on the CPU either (advanced indexing, take,
# put and index_fill do take them).
STRICT = {
    "index_select": lambda x, i: x.index_select(0, i),
    "embedding": lambda x, i: torch.nn.functional.embedding(i, x),
    "gather": lambda x, i: torch.gather(x, 0, i.view(-1, 1).expand(-1, 3)),
    "scatter_add": lambda x, i: x.scatter_add(0, i.view(-1, 1).expand(-1, 3), torch.ones_like(x[:1]).expand(len(i), 3)),
    "index_add": lambda x, i: x.index_add(0, i, torch.ones(len(i), 3, device=x.device)),
    "embedding_bag": lambda x, i: torch.nn.functional.embedding_bag(i, x, torch.tensor([0], device=x.device)),
}


@pytest.mark.parametrize("name", sorted(STRICT))
def test_negative_index_raises_where_cpu_does(name):
    fn = STRICT[name]
    x = torch.randn(5, 3)
    neg = torch.tensor([1, -1])
    err = _cpu_error(fn, x, neg)
    with torch_tpu.eager_mode("debug"):
        with pytest.raises(err):
            fn(x.to(DEV), neg.to(DEV))
    ok = torch.tensor([4, 0])
    torch.testing.assert_close(fn(x.to(DEV), ok.to(DEV)).cpu(), fn(x, ok))
