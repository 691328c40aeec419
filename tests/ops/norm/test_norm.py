"""norm family (csrc/core/lower/norm/norm.c, norm_embedding_bag.c) against PyTorch CPU:
batch norm (train / eval / running stats), group / instance / layer norm,
embedding_bag, and two small models trained on both devices."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ops_util import FLOAT_DTYPES, check, check_grad, dev, make

BN = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}
BN_SHAPES = {1: [(6, 3), (4, 3, 5)], 2: [(2, 3, 4, 5)], 3: [(2, 3, 2, 3, 4)]}


def twin(module, dtype=torch.float32):
    """The same module on CPU and on tpu (same parameters)."""
    m = module.to(dtype)
    return m, copy.deepcopy(m).to(dev)


def run_both(mc, md, x, dtype=torch.float32, **tol):
    """Forward + backward of sum(y * w) on both; compares output, input and
    parameter gradients."""
    xc = x.to(dtype).detach().clone().requires_grad_(True)
    xd = x.to(dtype).detach().to(dev).requires_grad_(True)
    yc, yd = mc(xc), md(xd)
    w = make(yc.shape, dtype, seed=7)
    (yc * w).sum().backward()
    (yd * w.to(dev)).sum().backward()
    torch.testing.assert_close(yd.detach().cpu(), yc.detach(), **tol)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, **tol)
    for (n, pc), pd in zip(mc.named_parameters(), md.parameters()):
        assert pd.grad is not None, n
        torch.testing.assert_close(pd.grad.cpu(), pc.grad, **tol)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("train", [True, False])
def test_batch_norm(nd, train):
    for shape in BN_SHAPES[nd]:
        mc, md = twin(BN[nd](3))
        with torch.no_grad():
            mc.weight.uniform_(0.5, 1.5)
            mc.bias.uniform_(-1, 1)
            mc.running_mean.uniform_(-1, 1)
            mc.running_var.uniform_(0.5, 2)
        md = copy.deepcopy(mc).to(dev)
        mc.train(train)
        md.train(train)
        run_both(mc, md, make(shape), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("affine,track", [(False, True), (True, False), (False, False)])
def test_batch_norm_options(affine, track):
    mc, md = twin(nn.BatchNorm2d(3, affine=affine, track_running_stats=track))
    x = make((2, 3, 4, 4))
    if affine:
        run_both(mc, md, x, rtol=1e-4, atol=1e-5)
    else:
        check_grad(lambda t: (mc if t.device.type == "cpu" else md)(t), x, rtol=1e-4, atol=1e-5)
    mc.eval()
    md.eval()
    check(lambda t: (mc if t.device.type == "cpu" else md)(t), x, rtol=1e-5, atol=1e-5)


def test_batch_norm_running_stats():
    """running_mean / running_var / num_batches_tracked after several steps,
    including momentum=None (cumulative average)."""
    for momentum in [0.1, None]:
        mc, md = twin(nn.BatchNorm1d(4, momentum=momentum))
        for step in range(4):
            x = make((8, 4), seed=step) * (step + 1)
            mc(x)
            md(x.to(dev))
        torch.testing.assert_close(md.running_mean.cpu(), mc.running_mean, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(md.running_var.cpu(), mc.running_var, rtol=1e-5, atol=1e-6)
        assert md.num_batches_tracked.item() == mc.num_batches_tracked.item() == 4


def test_batch_norm_bf16():
    mc, md = twin(nn.BatchNorm2d(3), torch.bfloat16)
    run_both(mc, md, make((2, 3, 4, 4)), torch.bfloat16, rtol=2e-2, atol=2e-2)
    # bf16 input with f32 parameters (autocast-style): functional form
    x = make((4, 3, 5), torch.bfloat16)
    rm, rv, w, b = make((3,), seed=1), make((3,), low=0.5, high=2, seed=2), make((3,), seed=3), make((3,), seed=4)
    check(lambda t, m, v, ww, bb: F.batch_norm(t, m, v, ww, bb, training=False), x, rm, rv, w, b)


def test_native_batch_norm_ops():
    """The ATen ops directly (save_mean / save_invstd as CPU returns them)."""
    x = make((4, 3, 5))
    w, b = make((3,), seed=1), make((3,), seed=2)
    A = torch.ops.aten
    for fn in [lambda t, ww, bb: A.native_batch_norm(t, ww, bb, None, None, True, 0.1, 1e-5),
               lambda t, ww, bb: A._native_batch_norm_legit(t, ww, bb, True, 0.1, 1e-5),
               lambda t, ww, bb: A._native_batch_norm_legit_functional(
                   t, ww, bb, torch.zeros(3, device=t.device), torch.ones(3, device=t.device), True, 0.2, 1e-3)]:
        check(fn, x, w, b, rtol=1e-5, atol=1e-5)
    rm, rv = make((3,), seed=3), make((3,), low=0.5, high=2, seed=4)
    got = A._native_batch_norm_legit_no_training(x.to(dev), w.to(dev), b.to(dev), rm.to(dev), rv.to(dev), 0.1, 1e-5)
    want = A._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.1, 1e-5)
    torch.testing.assert_close(got[0].cpu(), want[0])


_BN_VARIANTS = {
    "native_batch_norm": lambda A, x, w, b, rm, rv, tr: A.native_batch_norm(x, w, b, rm, rv, tr, 0.1, 1e-5),
    "legit": lambda A, x, w, b, rm, rv, tr: A._native_batch_norm_legit(x, w, b, rm, rv, tr, 0.1, 1e-5),
    "legit_no_stats": lambda A, x, w, b, rm, rv, tr: A._native_batch_norm_legit(x, w, b, tr, 0.1, 1e-5),
    "legit_functional": lambda A, x, w, b, rm, rv, tr: A._native_batch_norm_legit_functional(
        x, w, b, rm, rv, tr, 0.1, 1e-5),
    "legit_no_training": lambda A, x, w, b, rm, rv, tr: A._native_batch_norm_legit_no_training(
        x, w, b, rm, rv, 0.1, 1e-5),
    "with_update": lambda A, x, w, b, rm, rv, tr: A._batch_norm_with_update(x, w, b, rm, rv, 0.1, 1e-5),
    "no_update": lambda A, x, w, b, rm, rv, tr: A._batch_norm_no_update(x, w, b, rm, rv, 0.1, 1e-5),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("variant", sorted(_BN_VARIANTS))
def test_batch_norm_variants_return_cpu_metadata(variant, training, dtype):
    """Every batch-norm ATen variant, training or not: each output (saved
    statistics: empty in eval on CPU, in the input's dtype for half types;
    the functional variant's new running stats) has CPU's shape, dtype and
    strides, and its values. (torch.compile gives AOTAutograd's
    _native_batch_norm_legit_functional in eval mode: found by the OpInfo
    sweep under torch.compile.)"""
    A = torch.ops.aten
    fn = _BN_VARIANTS[variant]
    x, w, b = make((4, 3, 5), dtype), make((3,), dtype, seed=1), make((3,), dtype, seed=2)
    rm, rv = make((3,), dtype, seed=3), make((3,), dtype, low=0.5, high=2, seed=4)
    if variant == "legit_no_stats" and not training:  # (CPU's kernel crashes on this)
        with pytest.raises((RuntimeError, AssertionError), match="must not be None in eval mode"):
            fn(A, x.to(dev), w.to(dev), b.to(dev), None, None, training)
        return
    want = fn(A, x, w, b, rm.clone(), rv.clone(), training)
    got = fn(A, *(t.to(dev) for t in (x, w, b, rm.clone(), rv.clone())), training)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    assert len(got) == len(want)
    for g, c in zip(got, want):
        assert (g.shape, g.dtype, g.stride()) == (c.shape, c.dtype, c.stride()), (g.shape, c.shape, g.dtype, c.dtype)
        torch.testing.assert_close(g.cpu(), c, **tol)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("groups,affine", [(1, True), (2, True), (4, False)])
def test_group_norm(dtype, groups, affine):
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-2, atol=5e-2)
    mc, md = twin(nn.GroupNorm(groups, 4, affine=affine), dtype)
    for shape in [(2, 4, 3), (3, 4, 2, 3)]:
        if affine:
            run_both(mc, md, make(shape), dtype, **tol)
        else:
            check_grad(lambda t: (mc if t.device.type == "cpu" else md)(t), make(shape, dtype), **tol)


def test_group_norm_functional():
    x, w, b = make((2, 6, 5)), make((6,), seed=1), make((6,), seed=2)
    check_grad(lambda t, ww, bb: F.group_norm(t, 3, ww, bb, eps=1e-3), x, w, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("affine,track", [(False, False), (True, True)])
def test_instance_norm(affine, track):
    mc, md = twin(nn.InstanceNorm2d(3, affine=affine, track_running_stats=track))
    x = make((2, 3, 4, 4))
    if affine:
        run_both(mc, md, x, rtol=1e-4, atol=1e-5)
    else:
        check_grad(lambda t: (mc if t.device.type == "cpu" else md)(t), x, rtol=1e-4, atol=1e-5)
    if track:
        torch.testing.assert_close(md.running_mean.cpu(), mc.running_mean)
        torch.testing.assert_close(md.running_var.cpu(), mc.running_var)


def test_layer_norm_module():
    mc, md = twin(nn.LayerNorm([4, 5]))
    run_both(mc, md, make((3, 4, 5)), rtol=1e-4, atol=1e-5)


# ---- embedding_bag ------------------------------------------------------------------

IDX = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 7])
OFF = torch.tensor([0, 4, 4, 7])  # bag 1 is empty


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("last,pad", [(False, None), (True, None), (False, 2)])
def test_embedding_bag(mode, last, pad):
    w = make((10, 3))
    off = torch.cat([OFF, torch.tensor([len(IDX)])]) if last else OFF
    check_grad(lambda ww: F.embedding_bag(IDX.to(ww.device), ww, off.to(ww.device), mode=mode,
                                          include_last_offset=last, padding_idx=pad), w)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_aten_outputs(mode):
    """offset2bag / bag_size / max_indices as CPU gives them where it fills them."""
    w = make((10, 3))
    m = {"sum": 0, "mean": 1, "max": 2}[mode]
    got = torch.ops.aten._embedding_bag(w.to(dev), IDX.to(dev), OFF.to(dev), False, m, False, None, False, 2)
    want = torch.ops.aten._embedding_bag(w, IDX, OFF, False, m, False, None, False, 2)
    torch.testing.assert_close(got[0].cpu(), want[0])
    torch.testing.assert_close(got[2].cpu(), want[2])
    if mode != "sum":
        torch.testing.assert_close(got[1].cpu(), want[1])
    if mode == "max":
        torch.testing.assert_close(got[3].cpu(), want[3])


def test_embedding_bag_2d_and_weights():
    w = make((10, 4))
    idx2 = torch.tensor([[1, 2, 3], [4, 4, 9]])
    check_grad(lambda ww: F.embedding_bag(idx2.to(ww.device), ww, mode="mean"), w)
    psw = make((len(IDX),), seed=5)
    check_grad(lambda ww, p: F.embedding_bag(IDX.to(ww.device), ww, OFF.to(ww.device), mode="sum",
                                             per_sample_weights=p), w, psw)
    check_grad(lambda ww, p: F.embedding_bag(IDX.to(ww.device), ww, OFF.to(ww.device), mode="sum",
                                             per_sample_weights=p, padding_idx=4), w, psw)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(mode):
    """CPU's dense kernel scales by the count of the wrong index (it reads
    counts[sorted[i]] for the i-th unique index) and its sparse path refuses
    the option; the reference is the unscaled CPU gradient over the index
    counts, which is what CUDA and the documentation give."""
    w = make((10, 3))
    wd = w.to(dev).requires_grad_(True)
    wc = w.clone().requires_grad_(True)
    g = make((len(OFF), 3), seed=9)
    F.embedding_bag(IDX.to(dev), wd, OFF.to(dev), mode=mode, scale_grad_by_freq=True).backward(g.to(dev))
    F.embedding_bag(IDX, wc, OFF, mode=mode).backward(g)
    counts = torch.bincount(IDX, minlength=10).clamp(min=1).unsqueeze(1)
    torch.testing.assert_close(wd.grad.cpu(), wc.grad / counts)


def test_embedding_bag_bf16():
    w = make((10, 3), torch.bfloat16)
    check(lambda ww: F.embedding_bag(IDX.to(ww.device), ww, OFF.to(ww.device), mode="mean"), w)


# ---- models --------------------------------------------------------------------------

class NormNet(nn.Module):
    def __init__(self):
        super().__init__()
        # no bias before the batch norm: its true gradient is 0, and AdamW
        # would turn the rounding noise of that 0 into lr-sized steps
        self.fc1 = nn.Linear(6, 16, bias=False)
        self.bn = nn.BatchNorm1d(16)
        self.gn = nn.GroupNorm(2, 4)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        h = F.relu(self.bn(self.fc1(x)))
        h = self.gn(h.reshape(-1, 4, 4)).reshape(-1, 16)
        return self.fc2(h)


def train(model, data, steps=10):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        x, y = data(step)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_train_norm_net():
    torch.manual_seed(0)
    mc = NormNet()
    md = copy.deepcopy(mc).to(dev)
    xs = [make((8, 6), seed=s) for s in range(10)]
    ys = [make((8,), torch.int64, low=0, high=3, seed=100 + s) for s in range(10)]
    lc = train(mc, lambda s: (xs[s], ys[s]))
    ld = train(md, lambda s: (xs[s].to(dev), ys[s].to(dev)))
    torch.testing.assert_close(torch.tensor(ld), torch.tensor(lc), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(md.bn.running_mean.cpu(), mc.bn.running_mean, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(md.bn.running_var.cpu(), mc.bn.running_var, rtol=1e-4, atol=1e-5)
    mc.eval()
    md.eval()
    torch.testing.assert_close(md(xs[0].to(dev)).detach().cpu(), mc(xs[0]).detach(), rtol=1e-4, atol=1e-5)


class BagNet(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.bag = nn.EmbeddingBag(20, 8, mode=mode)
        self.fc = nn.Linear(8, 2)

    def forward(self, idx, off):
        return self.fc(self.bag(idx, off))


@pytest.mark.parametrize("mode", ["mean", "sum"])
def test_train_embedding_bag(mode):
    torch.manual_seed(1)
    mc = BagNet(mode)
    md = copy.deepcopy(mc).to(dev)
    idx = [make((12,), torch.int64, low=0, high=20, seed=s) for s in range(10)]
    off = torch.tensor([0, 3, 3, 8])
    ys = [make((4,), torch.int64, low=0, high=2, seed=50 + s) for s in range(10)]

    def run(m, to):
        opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
        out = []
        for s in range(10):
            opt.zero_grad()
            loss = F.cross_entropy(m(to(idx[s]), to(off)), to(ys[s]))
            loss.backward()
            opt.step()
            out.append(loss.item())
        return out

    lc = run(mc, lambda t: t)
    ld = run(md, lambda t: t.to(dev))
    torch.testing.assert_close(torch.tensor(ld), torch.tensor(lc), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(md.bag.weight.detach().cpu(), mc.bag.weight.detach(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("training", [True, False])
def test_saved_statistics_match_cpu_metadata(dtype, training):
    """CPU keeps half-type saved stats in the input dtype and saves none in eval mode (meta says otherwise)."""
    x = torch.randn(2, 3, 4, dtype=dtype)
    w, b = torch.ones(3, dtype=dtype), torch.zeros(3, dtype=dtype)
    rm, rv = torch.zeros(3, dtype=dtype), torch.ones(3, dtype=dtype)
    ref = torch.ops.aten.native_batch_norm(x, w, b, rm.clone(), rv.clone(), training, 0.1, 1e-5)
    got = torch.ops.aten.native_batch_norm(*(t.to("tpu") for t in (x, w, b, rm, rv)), training, 0.1, 1e-5)
    for r, g in zip(ref, got):
        assert g.shape == r.shape and g.dtype == r.dtype
        torch.testing.assert_close(g.cpu(), r, rtol=2e-2, atol=2e-2)
    ref = torch.ops.aten.native_layer_norm(x, [4], None, None, 1e-5)
    got = torch.ops.aten.native_layer_norm(x.to("tpu"), [4], None, None, 1e-5)
    for r, g in zip(ref, got):
        assert g.shape == r.shape and g.dtype == r.dtype
        torch.testing.assert_close(g.cpu(), r, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("dim", [0, -1, 1])
def test_weight_norm_matches_cpu(dtype, dim):
    """torch._weight_norm (weight_norm's parametrization): dims 0 and -1 take the fused
    _weight_norm_interface and its backward (lowered), others the decomposition; w and the
    gradients of v and g as on CPU."""
    g = torch.Generator().manual_seed(0)
    v = torch.randn(4, 3, 5, generator=g).to(dtype)
    shape = [1, 1, 1]
    shape[dim] = v.shape[dim]
    gain = torch.randn(shape, generator=g).to(dtype)
    vc, gc = v.clone().requires_grad_(True), gain.clone().requires_grad_(True)
    vt, gt = v.to("tpu").requires_grad_(True), gain.to("tpu").requires_grad_(True)
    w, wt = torch._weight_norm(vc, gc, dim), torch._weight_norm(vt, gt, dim)
    grad = torch.randn(w.shape, generator=g).to(dtype)
    w.backward(grad)
    wt.backward(grad.to("tpu"))
    tol = {torch.float32: 1e-6, torch.bfloat16: 1e-2, torch.float64: 1e-12}[dtype]
    for a, b in ((wt, w), (vt.grad, vc.grad), (gt.grad, gc.grad)):
        assert a.dtype == b.dtype and a.shape == b.shape
        torch.testing.assert_close(a.detach().cpu(), b.detach(), rtol=tol, atol=tol)


def test_weight_norm_module_trains_like_cpu():
    torch.manual_seed(0)
    m = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(5, 4))
    mt = copy.deepcopy(m).to("tpu")
    oc, ot = torch.optim.SGD(m.parameters(), lr=0.1), torch.optim.SGD(mt.parameters(), lr=0.1)
    for s in range(3):
        x = torch.randn(3, 5, generator=torch.Generator().manual_seed(s))
        for mod, o, xx in ((m, oc, x), (mt, ot, x.to("tpu"))):
            o.zero_grad()
            mod(xx).square().sum().backward()
            o.step()
    for p, q in zip(mt.parameters(), m.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-5, atol=1e-6)
