"""nn_more families (csrc/core/lower/nn/nn_more*.c, grid_sample*.c) against
PyTorch CPU: forward and gradients."""
import pytest
import torch
import torch.nn.functional as F

from ops_util import FLOAT_DTYPES, check, check_grad, dev, make, tol_for


# ---- activations (nn_more.c) --------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_logsigmoid(dtype):
    x = make((4, 6), dtype, low=-40, high=40)
    x[0, :3] = torch.tensor([0.0, float("inf"), float("-inf")])
    check(F.logsigmoid, x)
    check_grad(F.logsigmoid, make((4, 6), dtype, low=-8, high=8), **tol_for(dtype))
    out, buf = torch.empty(0, dtype=dtype, device=dev), torch.empty(0, dtype=dtype, device=dev)
    torch.ops.aten.log_sigmoid_forward.output(x.to(dev), output=out, buffer=buf)
    torch.testing.assert_close(out.cpu(), F.logsigmoid(x))


def test_multilabel_soft_margin_loss():
    x, y = make((3, 5)), make((3, 5), low=0, high=2, dtype=torch.int64).float()
    check_grad(lambda a: F.multilabel_soft_margin_loss(a, y.to(a.device)), x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu(dtype, dim):
    x = make((4, 6, 2), dtype)
    # CPU rounds bf16 intermediates of glu_backward; we round once (closer to float64)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=4e-2, atol=1e-2)
    check_grad(lambda t: F.glu(t, dim), x, **tol)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_prelu(dtype):
    x = make((2, 3, 4), dtype)
    for w in [make((1,), dtype, low=0.1, high=0.5, seed=1), make((3,), dtype, low=-1, high=1, seed=2)]:
        check_grad(F.prelu, x, w, **tol_for(dtype, rtol=1e-5, atol=1e-5))


def test_rrelu_eval():
    x = make((3, 7))
    check_grad(lambda t: F.rrelu(t, 0.1, 0.4, training=False), x)


def test_rrelu_training_noise():
    x = make((5, 40)).to(dev).requires_grad_(True)
    noise = torch.empty(5, 40, device=dev)
    y = torch.ops.aten.rrelu_with_noise(x, noise, 0.2, 0.3, True)
    xc, nc, yc = x.detach().cpu(), noise.cpu(), y.detach().cpu()
    neg = xc <= 0
    assert ((nc[neg] >= 0.2) & (nc[neg] <= 0.3)).all() and (nc[~neg] == 1).all()
    torch.testing.assert_close(yc, xc * nc)
    assert nc[neg].unique().numel() > 10  # really random
    # the functional form: gradient is the noise
    y = F.rrelu(x, 0.2, 0.3, training=True)
    y.sum().backward()
    g = x.grad.cpu()
    assert ((g[neg] >= 0.2) & (g[neg] <= 0.3)).all() and (g[~neg] == 1).all()
    # in-place and out=
    z = x.detach().clone()
    F.rrelu_(z, 0.2, 0.3, training=True)
    assert (z.cpu()[~neg] == xc[~neg]).all()
    out, n2 = torch.empty(0, device=dev), torch.empty(5, 40, device=dev)
    torch.ops.aten.rrelu_with_noise.out(x.detach(), n2, 0.2, 0.3, True, out=out)
    torch.testing.assert_close(out.cpu(), xc * n2.cpu())


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_channel_shuffle(dtype):
    x = make((2, 6, 3, 2), dtype)
    check(lambda t: F.channel_shuffle(t, 3), x)
    check(lambda t: F.channel_shuffle(t, 2), make((1, 4, 5), dtype))


# ---- fold / unfold, max_unpool (nn_more_fold.c) --------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unfold_fold(dtype):
    x = make((2, 3, 7, 6), dtype)
    tol = tol_for(dtype, rtol=1e-5, atol=1e-5)
    for k, d, p, s in [((2, 3), 1, 0, 1), (3, (2, 1), 1, 2), ((1, 2), 1, (2, 0), (3, 1))]:
        check_grad(lambda t: F.unfold(t, k, d, p, s), x, **tol)
        cols = F.unfold(x, k, d, p, s)
        check_grad(lambda t: F.fold(t, (7, 6), k, d, p, s), cols, **tol)
    check(lambda t: F.unfold(t, 2), make((3, 4, 4), dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_max_unpool(dtype):
    x = make((2, 3, 8, 8), dtype)
    y, i = F.max_pool2d(x, 2, return_indices=True)
    check_grad(lambda t: F.max_unpool2d(t, i.to(t.device), 2), y)
    check(lambda t: F.max_unpool2d(t, i.to(t.device), 2, output_size=(9, 9)), y)
    y1, i1 = F.max_pool1d(make((2, 3, 9), dtype), 3, return_indices=True)
    check_grad(lambda t: F.max_unpool1d(t, i1.to(t.device), 3), y1)
    y3, i3 = F.max_pool3d(make((1, 2, 4, 4, 6), dtype), 2, return_indices=True)
    check_grad(lambda t: F.max_unpool3d(t, i3.to(t.device), 2), y3)
    check(lambda t: F.max_unpool3d(t, i3[0].to(t.device), 2), y3[0])


def test_max_unpool_bad_index():
    y = torch.ones(1, 1, 2, 2, device=dev)
    i = torch.tensor([[[[0, 1], [2, 99]]]], device=dev)
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(y, i, 2).cpu()


# ---- grid_sample (grid_sample.c) ------------------------------------------------------------

def _grid(shape, seed):
    g = make(shape, low=-1.3, high=1.3, seed=seed)
    g.view(-1)[:4] = torch.tensor([1.0, -1.0, 0.0, 0.5])  # exact corners and centers
    return g


GRID_CASES = [(2, "bilinear", "zeros", False), (2, "bilinear", "reflection", True),
              (2, "bilinear", "border", False), (2, "nearest", "reflection", False),
              (2, "bicubic", "reflection", False),
              (3, "bilinear", "zeros", True), (3, "bilinear", "reflection", False),
              (3, "nearest", "border", False)]


@pytest.mark.parametrize("nsp,mode,pad,align", GRID_CASES)
def test_grid_sample(nsp, mode, pad, align):
    x = make((2, 3) + ((4, 5) if nsp == 2 else (3, 4, 5)))
    g = _grid((2,) + ((3, 4) if nsp == 2 else (2, 3, 2)) + (nsp,), seed=1)
    fn = lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=pad, align_corners=align)
    # gradients: the summation order over channels differs from CPU's loop
    check_grad(fn, x, g, rtol=1e-5, atol=1e-5)
    # CPU rounds every step to the half type; so do we
    check(fn, x.to(torch.bfloat16), g.to(torch.bfloat16), rtol=0, atol=0)


# ---- margin losses, pdist (nn_more_loss.c) ----------------------------------------------------

@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_losses(reduction):
    x = make((4, 5))
    t = torch.tensor([[3, 0, -1, 1, 2], [1, 1, 2, -1, 0], [-1, 0, 0, 0, 0], [0, 1, 2, 3, 4]])
    check(lambda a, b: F.multilabel_margin_loss(a, b, reduction=reduction), x, t)
    y, w = torch.tensor([3, 0, 4, 1]), make((5,), low=0.5, high=2, seed=3)
    for p in (1, 2):
        check(lambda a, b, c: F.multi_margin_loss(a, b, p=p, margin=0.7, weight=c, reduction=reduction), x, y, w)


# PyTorch has no Meta kernel for these backward ops: the bridge's own shape rules size them.
@pytest.mark.parametrize("loss", ["multi_margin", "multilabel_margin"])
def test_margin_loss_grads(loss):
    x = make((4, 5))
    if loss == "multi_margin":
        y = torch.tensor([3, 0, 4, 1])
        check_grad(lambda a: F.multi_margin_loss(a, y.to(a.device), p=2, margin=0.7), x)
    else:
        t = torch.tensor([[3, 0, -1, 1, 2], [1, 1, 2, -1, 0], [-1, 0, 0, 0, 0], [0, 1, 2, 3, 4]])
        check_grad(lambda a: F.multilabel_margin_loss(a, t.to(a.device)), x)


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
def test_pdist(p):
    x = make((6, 4))
    x[3] = x[1]  # a zero distance
    check(lambda a: F.pdist(a, p), x)
    if p != 0:
        check_grad(lambda a: F.pdist(a, p), x, rtol=1e-5, atol=1e-5)


# ---- fractional max pooling (nn_more_pool.c) --------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fractional_max_pool(dtype):
    x = make((2, 3, 9, 11), dtype)
    x[0, 0, 1, 1] = float("nan")
    u = torch.rand(2, 3, 2, generator=torch.Generator().manual_seed(0)).to(dtype)
    for k, o in [((2, 3), (4, 5)), (3, (7, 9))]:
        check(lambda a, b: F.fractional_max_pool2d(a, k, output_size=o, return_indices=True, _random_samples=b), x, u)
    x3 = make((2, 2, 5, 6, 7), dtype)
    u3 = torch.rand(2, 2, 3, generator=torch.Generator().manual_seed(1)).to(dtype)
    check(lambda a, b: F.fractional_max_pool3d(a, (2, 2, 3), output_size=(3, 4, 4), return_indices=True,
                                               _random_samples=b), x3, u3)
    if dtype == torch.float32:
        check_grad(lambda a: F.fractional_max_pool2d(a, 3, output_size=(5, 6), _random_samples=u.to(a.device)),
                   make((2, 3, 9, 11)))


# ---- antialiased bilinear and bicubic resizes (nn_more_aa.c) -------------------------------------------------

@pytest.mark.parametrize("size,align", [((4, 5), False), ((9, 20), True), ((13, 7), False)])
def test_upsample_bilinear2d_aa(size, align):
    x = make((2, 3, 9, 11))
    # windows and weights as CPU computes them; sums may differ by an ulp (CPU may fuse multiply-adds)
    check_grad(lambda a: F.interpolate(a, size=size, mode="bilinear", antialias=True, align_corners=align), x,
               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("size,align", [((4, 5), False), ((9, 20), True), ((13, 7), False), ((23, 31), False)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_upsample_bicubic2d_aa(size, align, dtype):
    """Keys' cubic (a = -0.5, as PIL) over the same windows, support 2 widened by the scale."""
    x = make((2, 3, 9, 11)).to(dtype)
    # the forward as CPU computes it up to an ulp of the sums; the backward's scatter-adds sum in
    # another order (an upsampled input pixel collects up to ~16 contributions)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-13)
    check_grad(lambda a: F.interpolate(a, size=size, mode="bicubic", antialias=True, align_corners=align), x, **tol)


# ---- CTC loss (nn_more_ctc.c) ---------------------------------------------------------------------

def _ctc_case():
    g = torch.Generator().manual_seed(0)
    lp = torch.randn(12, 3, 5, generator=g).log_softmax(2)
    tg = torch.randint(1, 5, (3, 4), generator=g)
    tg[1, 1] = tg[1, 0]  # a repeated label: no skip transition
    return lp, tg, [12, 9, 10], [4, 2, 0]


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_ctc_loss(reduction):
    lp, tg, il, tl = _ctc_case()
    check(lambda a, b: F.ctc_loss(a, b, il, tl, reduction=reduction), lp, tg)
    flat = torch.cat([tg[0, :4], tg[1, :2]])  # concatenated targets, lengths as tensors
    check(lambda a, b: F.ctc_loss(a, b, torch.tensor(il), torch.tensor(tl), reduction=reduction), lp, flat)
    check(lambda a, b: F.ctc_loss(a, b, [3, 9, 10], tl, reduction=reduction), lp, tg)  # infeasible: inf
    nll_c, alpha_c = torch.ops.aten._ctc_loss(lp, tg, il, tl)
    nll_d, alpha_d = torch.ops.aten._ctc_loss(lp.to(dev), tg.to(dev), il, tl)
    fin = torch.isfinite(alpha_d.cpu())  # CPU leaves the rest of log_alpha unwritten
    torch.testing.assert_close(alpha_d.cpu()[fin], alpha_c[fin])


# _ctc_loss_backward has no Meta kernel: sized by the bridge's rule
def test_ctc_loss_grad():
    lp, tg, il, tl = _ctc_case()
    check_grad(lambda a: F.ctc_loss(a.log_softmax(2), tg.to(a.device), il, tl), lp, rtol=1e-5, atol=1e-6)
