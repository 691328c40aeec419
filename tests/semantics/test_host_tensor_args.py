"""CPU tensors as arguments of tpu ops, where CUDA accepts them and where it
refuses them (tpu matches CUDA, the other accelerator backend of PyTorch).

What CUDA does (ATen sources, torch 2.x):
- index / index_put_ / _index_put_impl_ (x[i], x[mask], x[i] = v,
  x.index_put_((i,), v, accumulate)): index tensors may be on the CPU. index's
  meta check allows indices "either on cpu or on the same device as the
  indexed tensor", and make_info (TensorAdvancedIndexingUtils.h) copies every
  index to self's device (makeLinearIndex does the same for accumulate=True).
  The values of index_put_ must be on the device, except a 0-dim CPU tensor
  (moved by _index_put_impl_).
- TensorIterator ops built with allow_cpu_scalars (binary elementwise ops)
  take at most one 0-dim CPU tensor input as a host scalar; masked_fill takes
  a 0-dim CPU value (it reads value.item()).
- Every other CPU tensor argument is refused: the dispatcher's device check or
  TensorIterator raises "Expected all tensors to be on the same device"
  (index_select, gather, take, index_add_, scatter_, masked_fill's mask, a CPU
  operand of more than 0 dims in an elementwise op, a non-0-dim CPU value of
  index_put_).
"""
import pytest
import torch

import torch_tpu  # noqa: F401

dev = torch.device("tpu")


def _x(shape=(5, 4, 3), seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g)


IDX = torch.tensor([4, 0, 2, 2])
IDX2 = torch.tensor([[1, 3], [0, 0]])
MASK = torch.tensor([True, False, True, True, False])
MASK2 = torch.rand(5, 4, generator=torch.Generator().manual_seed(3)) > 0.5

GET_CASES = [
    ("int64", lambda x: x[IDX]),
    ("int32", lambda x: x[IDX.int()]),
    ("two_dims", lambda x: x[IDX, torch.tensor([0, 1, 3, 2])]),
    ("after_slice", lambda x: x[:, torch.tensor([3, 1])]),
    ("non_adjacent", lambda x: x[torch.tensor([1, 2]), :, torch.tensor([0, 2])]),
    ("2d_index", lambda x: x[IDX2]),
    ("mask", lambda x: x[MASK]),
    ("mask_2d", lambda x: x[MASK2]),
    ("mask_and_slice", lambda x: x[MASK, 1:]),
    ("uint8_mask", lambda x: x[MASK.to(torch.uint8)]),
    ("aten_index", lambda x: torch.ops.aten.index(x, [None, torch.tensor([0, 3])])),
    ("aten_unsafe_index", lambda x: torch.ops.aten._unsafe_index(x, [IDX])),
]


@pytest.mark.parametrize("name,fn", GET_CASES, ids=[c[0] for c in GET_CASES])
def test_getitem_with_host_indices(name, fn):
    x = _x()
    got = fn(x.to(dev))
    assert got.device.type == "tpu"
    torch.testing.assert_close(got.cpu(), fn(x))


def _put_cases():
    v3 = torch.arange(3.0)
    return [
        ("setitem_idx", lambda x, d: x.__setitem__(IDX[:3].unique(), v3.to(d))),
        ("setitem_idx_scalar", lambda x, d: x.__setitem__(IDX, 7.0)),
        ("setitem_mask", lambda x, d: x.__setitem__(MASK, -1.0)),
        ("setitem_mask_tensor", lambda x, d: x.__setitem__(MASK, v3.to(d))),
        ("setitem_mask2d", lambda x, d: x.__setitem__(MASK2, v3.to(d))),
        ("index_put_", lambda x, d: x.index_put_((torch.tensor([1, 3]),), torch.ones(4, 3, device=d))),
        ("index_put_acc", lambda x, d: x.index_put_((IDX,), torch.ones(3, device=d), accumulate=True)),
        ("index_put_two", lambda x, d: x.index_put_((IDX, torch.tensor([0, 1, 3, 2])), torch.ones(3, device=d),
                                                   accumulate=True)),
        ("index_put_cpu_0d_value", lambda x, d: x.index_put_((IDX,), torch.tensor(2.5))),
        ("index_put_cpu_0d_value_acc", lambda x, d: x.index_put_((IDX,), torch.tensor(2.5), accumulate=True)),
        ("iadd", lambda x, d: x.__setitem__(IDX[:2], x[IDX[:2]] + 1)),
        ("functional_index_put", lambda x, d: x.copy_(torch.index_put(x, (MASK,), torch.tensor(3.0, device=d)))),
    ]


@pytest.mark.parametrize("name,fn", _put_cases(), ids=[c[0] for c in _put_cases()])
def test_setitem_with_host_indices(name, fn):
    x = _x()
    want = x.clone()
    fn(want, "cpu")
    got = x.to(dev)
    fn(got, dev)
    torch.testing.assert_close(got.cpu(), want)


def test_index_backward_with_host_indices():
    x = _x()
    w = torch.randn(4, 4, 3)
    grads = []
    for d in ("cpu", dev):
        xd = x.clone().to(d).requires_grad_(True)
        (xd[IDX] * w.to(d)).sum().backward()
        m = x.clone().to(d).requires_grad_(True)
        (m[MASK] ** 2).sum().backward()
        grads.append((xd.grad.cpu(), m.grad.cpu()))
    torch.testing.assert_close(grads[1], grads[0])


# 0-dim CPU tensors as host scalars (CUDA's TensorIterator cpu-scalar rule)
SCALAR_CASES = [
    ("add", lambda x, s: x + s),
    ("rsub", lambda x, s: s - x),
    ("mul_int", lambda x, s: x * s.long()),
    ("div", lambda x, s: x / s),
    ("pow", lambda x, s: x.abs() ** s),
    ("eq", lambda x, s: x.round() == s),
    ("maximum", lambda x, s: torch.maximum(x, s)),
    ("add_", lambda x, s: x.add_(s)),
    ("masked_fill_value", lambda x, s: x.masked_fill(x > 0, s)),
    ("masked_fill_value_", lambda x, s: x.masked_fill_(x < 0, s)),
]


@pytest.mark.parametrize("name,fn", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_cpu_scalar_accepted(name, fn):
    x = _x((4, 3))
    s = torch.tensor(2.0)
    got = fn(x.to(dev), s)
    assert got.device.type == "tpu"
    torch.testing.assert_close(got.cpu(), fn(x.clone(), s))


REFUSED = [
    ("index_select", lambda x: x.index_select(0, IDX)),
    ("gather", lambda x: x.gather(0, torch.zeros(2, 4, 3, dtype=torch.long))),
    ("take", lambda x: x.take(IDX)),
    ("index_add_", lambda x: x.index_add_(0, torch.tensor([0, 1]), torch.ones(2, 4, 3, device=dev))),
    ("scatter_", lambda x: x.scatter_(0, torch.zeros(1, 4, 3, dtype=torch.long), 1.0)),
    ("masked_fill_mask", lambda x: x.masked_fill(MASK[:, None, None].expand(5, 4, 3).contiguous(), 1.0)),
    ("add_1d", lambda x: x + torch.ones(3)),
    ("index_put_cpu_values", lambda x: x.index_put_((torch.tensor([1, 3]).to(dev),), torch.ones(4, 3))),
    ("index_put_cpu_values_acc",
     lambda x: x.index_put_((torch.tensor([1, 3]).to(dev),), torch.ones(4, 3), accumulate=True)),
    ("setitem_cpu_values", lambda x: x.__setitem__(IDX[:2], torch.ones(2, 4, 3))),
]


@pytest.mark.parametrize("name,fn", REFUSED, ids=[c[0] for c in REFUSED])
def test_cpu_tensor_refused(name, fn):
    with pytest.raises(RuntimeError, match="device"):
        r = fn(_x().to(dev))
        if isinstance(r, torch.Tensor):
            r.cpu()
