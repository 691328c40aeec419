"""Sparse COO tensors on tpu against the same on the CPU: construction and
the round trip, coalesce (random duplicates), to_dense / to_sparse, dense +
sparse and sparse + sparse, mul by a scalar, mm / addmm, index_select, and
training steps of nn.Embedding / nn.EmbeddingBag with sparse=True gradients
under SGD and SparseAdam, in Strict and Fused Eager."""
import pytest
import torch

import torch_tpu
from ops_util import dev, make

TOL = {"rtol": 1e-5, "atol": 1e-5}


def _random_coo(sizes, nnz, sparse_dim=None, seed=0, dtype=torch.float32):
    """An uncoalesced CPU COO tensor with duplicate positions."""
    g = torch.Generator().manual_seed(seed)
    sd = len(sizes) if sparse_dim is None else sparse_dim
    idx = torch.stack([torch.randint(0, s, (nnz,), generator=g) for s in sizes[:sd]]) if sd else \
        torch.zeros((0, nnz), dtype=torch.long)
    vals = make((nnz,) + tuple(sizes[sd:]), dtype, seed=seed + 1)
    return torch.sparse_coo_tensor(idx, vals, sizes)


def _same_sparse(d, c, coalesced=True):
    """d (tpu) holds the same tensor as c (CPU): same layout, sizes, dims,
    and the same coalesced entries."""
    assert d.device.type == "tpu" and d.layout == torch.sparse_coo
    assert d.shape == c.shape and d.sparse_dim() == c.sparse_dim() and d.dense_dim() == c.dense_dim()
    assert d.dtype == c.dtype
    dc, cc = d.cpu().coalesce(), c.coalesce()
    torch.testing.assert_close(dc._indices(), cc._indices())
    torch.testing.assert_close(dc._values(), cc._values(), **TOL)
    if coalesced:
        assert d.is_coalesced() == c.is_coalesced()


def test_construct_round_trip():
    i = torch.tensor([[0, 1, 1, 3], [2, 0, 2, 1]])
    v = make((4,), seed=3)
    c = torch.sparse_coo_tensor(i, v, (4, 3))
    d = torch.sparse_coo_tensor(i.to(dev), v.to(dev), (4, 3))
    assert d.device.type == "tpu" and d.is_sparse
    assert d._nnz() == 4 and d.sparse_dim() == 2 and d.dense_dim() == 0 and not d.is_coalesced()
    torch.testing.assert_close(d._indices().cpu(), i)
    torch.testing.assert_close(d._values().cpu(), v)
    back = d.cpu()
    assert back.is_sparse and back.device.type == "cpu"
    torch.testing.assert_close(back.to_dense(), c.to_dense())
    moved = c.to(dev)  # a CPU sparse tensor to the device and back
    _same_sparse(moved, c)
    # device= on the constructor, hybrid (dense dims in the values), empty
    h = torch.sparse_coo_tensor(i[:1], make((4, 2), seed=4), (5, 2), device="tpu")
    hc = torch.sparse_coo_tensor(i[:1], make((4, 2), seed=4), (5, 2))
    _same_sparse(h, hc)
    e = torch.sparse_coo_tensor(torch.zeros((2, 0), dtype=torch.long), torch.zeros(0), (3, 3), device="tpu")
    assert e._nnz() == 0
    torch.testing.assert_close(e.to_dense().cpu(), torch.zeros(3, 3))
    z = torch.zeros((3, 4), layout=torch.sparse_coo, device="tpu")
    assert z.is_sparse and z._nnz() == 0
    # clone, indices()/values() of a coalesced tensor, zero_
    cd = d.coalesce()
    torch.testing.assert_close(cd.indices().cpu(), c.coalesce().indices())
    torch.testing.assert_close(cd.values().cpu(), c.coalesce().values())
    cl = d.clone()
    _same_sparse(cl, c)
    cl.zero_()
    assert cl._nnz() == 0 and cl.shape == (4, 3)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sizes,sparse_dim", [((7, 5), 2), ((6, 4, 3), 2), ((9,), 1), ((5, 3), 1), ((4,), 0)])
def test_coalesce_random_duplicates(seed, sizes, sparse_dim):
    c = _random_coo(sizes, 20, sparse_dim, seed=seed)
    d = c.to(dev)
    dc, cc = d.coalesce(), c.coalesce()
    assert dc.is_coalesced() and dc._nnz() == cc._nnz()
    torch.testing.assert_close(dc._indices().cpu(), cc._indices())
    torch.testing.assert_close(dc._values().cpu(), cc._values(), **TOL)
    assert d.coalesce().coalesce()._nnz() == cc._nnz()


def test_coalesce_integer_values():
    c = _random_coo((6, 6), 30, seed=5, dtype=torch.int64)
    dc = c.to(dev).coalesce()
    torch.testing.assert_close(dc._values().cpu(), c.coalesce()._values())


@pytest.mark.parametrize("shape,sparse_dim", [((5, 4), 2), ((5, 4), 1), ((3, 4, 2), 2)])
def test_to_dense_to_sparse(shape, sparse_dim):
    x = make(shape, seed=2)
    x[x.abs() < 1.5] = 0
    c = x.to_sparse(sparse_dim)
    d = x.to(dev).to_sparse(sparse_dim)
    _same_sparse(d, c)
    torch.testing.assert_close(d.to_dense().cpu(), x)
    s = _random_coo(shape, 15, sparse_dim, seed=7)
    torch.testing.assert_close(s.to(dev).to_dense().cpu(), s.to_dense(), **TOL)


def test_add_dense_sparse():
    s = _random_coo((6, 5), 25, seed=3)
    x = make((6, 5), seed=4)
    xd, sd = x.to(dev), s.to(dev)
    torch.testing.assert_close((xd + sd).cpu(), x + s, **TOL)
    torch.testing.assert_close(torch.add(xd, sd, alpha=-0.5).cpu(), torch.add(x, s, alpha=-0.5), **TOL)
    xd.add_(sd, alpha=2.0)
    x.add_(s, alpha=2.0)
    torch.testing.assert_close(xd.cpu(), x, **TOL)
    # hybrid: rows of a matrix (as Embedding's gradient)
    h = _random_coo((7, 3), 9, 1, seed=8)
    w = make((7, 3), seed=9)
    torch.testing.assert_close((w.to(dev) + h.to(dev)).cpu(), w + h, **TOL)
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
        sd + xd


def test_add_sparse_sparse():
    a, b = _random_coo((5, 4), 8, seed=1), _random_coo((5, 4), 11, seed=2)
    r = a.to(dev) + b.to(dev)
    _same_sparse(r, a + b, coalesced=False)
    r2 = torch.add(a.to(dev), b.to(dev), alpha=3)
    _same_sparse(r2, torch.add(a, b, alpha=3), coalesced=False)
    ad = a.to(dev)
    ad.add_(b.to(dev))
    a.add_(b)
    _same_sparse(ad, a, coalesced=False)
    torch.testing.assert_close(ad.to_dense().cpu(), a.to_dense(), **TOL)


def test_mul_scalar_sub_neg_div():
    c = _random_coo((5, 4), 9, seed=6)
    d = c.to(dev)
    _same_sparse(d * 2.5, c * 2.5, coalesced=False)
    d.mul_(-3)
    c.mul_(-3)
    _same_sparse(d, c, coalesced=False)
    _same_sparse(-d, -c)
    _same_sparse(d / 4, c / 4)
    b = _random_coo((5, 4), 6, seed=7)
    _same_sparse(d - b.to(dev), c - b, coalesced=False)
    # dense.sparse_mask(sparse): the dense values at the sparse entries (SparseAdam)
    x = make((5, 4), seed=8)
    _same_sparse(x.to(dev).sparse_mask(d.coalesce()), x.sparse_mask(c.coalesce()))
    torch.testing.assert_close(torch.sparse.sum(d).cpu(), torch.sparse.sum(c), **TOL)


@pytest.mark.parametrize("sizes,sparse_dim", [((6, 5), 2), ((6, 5, 2), 1)])
def test_mul_sparse_sparse(sizes, sparse_dim):
    a, b = _random_coo(sizes, 20, sparse_dim, seed=14), _random_coo(sizes, 15, sparse_dim, seed=15)
    # uncoalesced operands: the CPU keeps explicit zeros where the tpu keeps the common positions only
    r = a.to(dev) * b.to(dev)
    assert r.is_sparse and not r.is_coalesced()
    torch.testing.assert_close(r.to_dense().cpu(), (a * b).to_dense(), **TOL)
    a, b = a.coalesce(), b.coalesce()
    _same_sparse(a.to(dev) * b.to(dev), a * b)
    empty = torch.sparse_coo_tensor(torch.zeros((sparse_dim, 0), dtype=torch.long),
                                    torch.zeros((0,) + sizes[sparse_dim:]), sizes)
    _same_sparse(a.to(dev) * empty.to(dev), a * empty)
    ad = a.to(dev)
    ad.mul_(b.to(dev))
    _same_sparse(ad, a * b)


def test_mm_addmm():
    s = _random_coo((6, 5), 12, seed=4)
    m = make((5, 3), seed=5)
    t = make((6, 3), seed=6)
    sd, md, td = s.to(dev), m.to(dev), t.to(dev)
    torch.testing.assert_close(torch.sparse.mm(sd, md).cpu(), torch.sparse.mm(s, m), **TOL)
    torch.testing.assert_close(torch.mm(sd, md).cpu(), torch.mm(s, m), **TOL)
    torch.testing.assert_close(torch.addmm(td, sd, md, beta=0.5, alpha=2).cpu(),
                               torch.addmm(t, s, m, beta=0.5, alpha=2), **TOL)
    torch.testing.assert_close(torch.sparse.addmm(td, sd, md).cpu(), torch.sparse.addmm(t, s, m), **TOL)
    torch.testing.assert_close((sd @ md).cpu(), s @ m, **TOL)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_select(dim):
    s = _random_coo((6, 5, 3), 14, 2, seed=9)
    idx = torch.tensor([4, 0, 0, 2]) % s.shape[dim]
    r = s.to(dev).index_select(dim, idx.to(dev))
    rc = s.index_select(dim, idx)
    assert r.shape == rc.shape
    torch.testing.assert_close(r.to_dense().cpu(), rc.to_dense(), **TOL)
    _same_sparse(r, rc, coalesced=False)


def test_index_select_out_of_range():
    s = _random_coo((4, 3), 6, seed=2)
    neg = torch.tensor([-1, 0, -4])  # negative indices count from the end
    torch.testing.assert_close(s.to(dev).index_select(0, neg.to(dev)).to_dense().cpu(),
                               s.index_select(0, neg).to_dense(), **TOL)
    torch.testing.assert_close(s.to(dev).index_select(1, neg[:2].to(dev)).to_dense().cpu(),
                               s.index_select(1, neg[:2]).to_dense(), **TOL)
    for bad in (4, -5):
        with pytest.raises(IndexError, match="out of range"):
            s.index_select(0, torch.tensor([0, bad]))
        with pytest.raises(IndexError, match="out of range"):
            s.to(dev).index_select(0, torch.tensor([0, bad], device=dev))


@pytest.mark.parametrize("fn", [
    torch.abs, torch.sgn, torch.sign, torch.tanh, torch.sin, torch.relu, torch.isnan,
    lambda x: torch.sqrt(x.abs()), lambda x: x.pow(2), lambda x: torch.nan_to_num(x),
    lambda x: x.unsqueeze(1), lambda x: x.permute(1, 0, 2), lambda x: x.narrow_copy(0, 1, 3),
    lambda x: torch.cat([x, x * 2], 1)])
def test_unary_and_shape(fn):
    c = _random_coo((5, 4, 2), 12, 2, seed=11)
    r, rc = fn(c.to(dev)), fn(c)
    assert r.is_sparse and r.shape == rc.shape and r.dtype == rc.dtype
    torch.testing.assert_close(r.to_dense().cpu(), rc.to_dense(), **TOL)


def test_inplace_unary_and_mv():
    c = _random_coo((5, 4), 12, seed=12).coalesce()
    d = c.to(dev)
    d.abs_().sqrt_()
    c.abs_().sqrt_()
    _same_sparse(d, c)
    v = make((4,), seed=13)
    torch.testing.assert_close(torch.mv(d, v.to(dev)).cpu(), torch.mv(c, v), **TOL)


def _train(module_fn, opt_fn, inputs, steps=4):
    """The same module and optimizer on CPU and tpu over a few steps."""
    torch.manual_seed(0)
    mc = module_fn()
    md = module_fn()
    md.load_state_dict(mc.state_dict())
    md = md.to(dev)
    oc, od = opt_fn(mc.parameters()), opt_fn(md.parameters())
    for step in range(steps):
        for m, o, on_dev in ((mc, oc, False), (md, od, True)):
            o.zero_grad()
            args = [a.to(dev) if on_dev else a for a in inputs(step)]
            out = m(*args)
            loss = (out * torch.linspace(-1, 1, out.numel(), device=out.device).reshape(out.shape)).sum() \
                + (out ** 2).mean()
            loss.backward()
            assert next(m.parameters()).grad.is_sparse
            o.step()
    for pc, pd in zip(mc.parameters(), md.parameters()):
        torch.testing.assert_close(pd.detach().cpu(), pc.detach(), rtol=1e-4, atol=1e-5)


OPTS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "sparse_adam": lambda ps: torch.optim.SparseAdam(ps, lr=0.05),
}


@pytest.mark.parametrize("mode", ["strict", "fused"])
@pytest.mark.parametrize("opt", list(OPTS))
def test_embedding_sparse_training(mode, opt):
    def inputs(step):
        g = torch.Generator().manual_seed(step)
        return [torch.randint(0, 10, (3, 4), generator=g)]  # repeated rows: duplicate gradient entries
    with torch_tpu.eager_mode(mode):
        _train(lambda: torch.nn.Embedding(10, 3, sparse=True), OPTS[opt], inputs)


@pytest.mark.parametrize("mode", ["strict", "fused"])
@pytest.mark.parametrize("opt", list(OPTS))
@pytest.mark.parametrize("bag_mode", ["sum", "mean"])
def test_embedding_bag_sparse_training(mode, opt, bag_mode):
    def inputs(step):
        g = torch.Generator().manual_seed(10 + step)
        return [torch.randint(0, 12, (9,), generator=g), torch.tensor([0, 2, 2, 6])]
    with torch_tpu.eager_mode(mode):
        _train(lambda: torch.nn.EmbeddingBag(12, 4, mode=bag_mode, sparse=True), OPTS[opt], inputs)


@pytest.mark.parametrize("mode", ["strict", "fused"])
def test_embedding_bag_per_sample_weights(mode):
    w = make((9,), seed=21).abs() + 0.5
    def inputs(step):
        g = torch.Generator().manual_seed(30 + step)
        return [torch.randint(0, 6, (9,), generator=g), torch.tensor([0, 4, 4]), w]
    with torch_tpu.eager_mode(mode):
        _train(lambda: torch.nn.EmbeddingBag(6, 3, mode="sum", sparse=True), OPTS["sparse_adam"], inputs)


def test_sparse_grad_accumulates():
    """Two backward passes without zero_grad: the sparse gradients add (sparse + sparse)."""
    ec = torch.nn.Embedding(8, 2, sparse=True)
    ed = torch.nn.Embedding(8, 2, sparse=True).to(dev)
    ed.load_state_dict(ec.state_dict())
    for ix in ([1, 2, 2], [2, 7]):
        ec(torch.tensor(ix)).sum().backward()
        ed(torch.tensor(ix, device=dev)).sum().backward()
    assert ed.weight.grad.is_sparse
    torch.testing.assert_close(ed.weight.grad.to_dense().cpu(), ec.weight.grad.to_dense())


def _sparse_adam_info():
    from torch.testing._internal.common_optimizers import optim_db
    return next(o for o in optim_db if o.optim_cls is torch.optim.SparseAdam)


@pytest.mark.parametrize("contiguous", [True, False])
def test_sparse_adam_optim_inputs(contiguous):
    """SparseAdam over the configurations of PyTorch's own OptimizerInfo (default, lr, Tensor lr, maximize),
    with dense gradients turned sparse by to_sparse() as test_optim does, 8 steps, against the CPU."""
    info = _sparse_adam_info()
    inputs = {d: info.optim_inputs_func(device=d) for d in ("cpu", "tpu")}
    for oc_in, od_in in zip(inputs["cpu"], inputs["tpu"]):
        runs = {}
        for device, oi in (("cpu", oc_in), ("tpu", od_in)):
            g = torch.Generator().manual_seed(3)
            if contiguous:
                w0, b0 = torch.randn((10, 5), generator=g), torch.randn(10, generator=g)
            else:
                w0, b0 = torch.randn((10, 5, 2), generator=g)[..., 0], torch.randn((10, 2), generator=g)[..., 0]
            x = torch.randn(5, generator=g)
            w = torch.nn.Parameter(w0.to(device))
            b = torch.nn.Parameter(b0.to(device))
            opt = torch.optim.SparseAdam([w, b], **oi.kwargs)
            xd = x.to(device)
            for _ in range(8):
                opt.zero_grad()
                (w.mv(xd) + b).pow(2).sum().backward()
                w.grad, b.grad = w.grad.to_sparse(), b.grad.to_sparse()
                opt.step()
            runs[device] = (w.detach().cpu(), b.detach().cpu())
        for pd, pc in zip(runs["tpu"], runs["cpu"]):
            torch.testing.assert_close(pd, pc, rtol=1e-5, atol=1e-6, msg=lambda m: f"{oc_in.desc}: {m}")


def test_sparse_adam_error_inputs():
    """The construction errors of PyTorch's SparseAdam OptimizerInfo, with tpu parameters."""
    info = _sparse_adam_info()
    for ei in info.optim_error_inputs_func(device="tpu", dtype=torch.float32):
        oi = ei.optimizer_error_input
        if issubclass(ei.error_type, Warning):
            with pytest.warns(ei.error_type, match=ei.error_regex):
                torch.optim.SparseAdam(oi.params, **oi.kwargs)
        else:
            with pytest.raises(ei.error_type, match=ei.error_regex):
                torch.optim.SparseAdam(oi.params, **oi.kwargs)
