"""loss family (csrc/core/lower/loss/loss.c) and the losses that decompose into
other families' ops, against PyTorch CPU (forward and gradients)."""
import pytest
import torch
import torch.nn.functional as F

from ops_util import FLOAT_DTYPES, check, check_grad, make, tol_for

REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_smooth_l1_and_huber(dtype, reduction):
    x, y = make((4, 5), dtype), make((4, 5), dtype, seed=1)
    tol = tol_for(dtype, rtol=1e-5, atol=1e-6)
    for beta in [1.0, 0.5, 2.5]:
        check_grad(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=beta), x, y, **tol)
        check_grad(lambda a, b: F.huber_loss(a, b, reduction=reduction, delta=beta), x, y, **tol)
    # beta = 0 is the L1 loss (its gradient is NaN where x == y on CPU: avoid ties)
    check_grad(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=0.0), x, y, **tol)


def test_smooth_l1_broadcast_target():
    x, y = make((3, 4)), make((4,), seed=1)
    with pytest.warns(UserWarning):
        check(lambda a, b: F.smooth_l1_loss(a, b), x, y)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(dtype, reduction):
    x = make((4, 5), dtype, low=0.02, high=0.98)
    y = make((4, 5), dtype, low=0, high=1, seed=1)
    w = make((5,), dtype, low=0.5, high=2, seed=2)
    tol = tol_for(dtype, rtol=1e-5, atol=1e-6)
    check_grad(lambda a: F.binary_cross_entropy(a, y.to(a.device), reduction=reduction), x, **tol)
    check_grad(lambda a: F.binary_cross_entropy(a, y.to(a.device), weight=w.to(a.device), reduction=reduction),
               x, **tol)


def test_binary_cross_entropy_clamps_log():
    x = torch.tensor([0.0, 1.0, 0.5, 1e-30])
    y = torch.tensor([1.0, 0.0, 0.5, 1.0])
    check(lambda a, b: F.binary_cross_entropy(a, b, reduction="none"), x, y)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(dtype, reduction):
    x = make((4, 5), dtype, low=-30, high=30)
    y = make((4, 5), dtype, low=0, high=1, seed=1)
    w, pw = make((5,), dtype, low=0.5, high=2, seed=2), make((5,), dtype, low=0.5, high=3, seed=3)
    # CPU evaluates the bf16 composite op by op, rounding each step; we round once
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    check_grad(lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=reduction), x, y, **tol)
    # (the target gradient with pos_weight needs aten::log_sigmoid_forward, not lowered yet)
    check_grad(lambda a: F.binary_cross_entropy_with_logits(a, y.to(a.device), weight=w.to(a.device),
                                                            pos_weight=pw.to(a.device), reduction=reduction), x, **tol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin(reduction):
    x = make((4, 5))
    y = make((4, 5), torch.int64, low=0, high=2, seed=1).float() * 2 - 1
    check_grad(lambda a: F.soft_margin_loss(a, y.to(a.device), reduction=reduction), x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
def test_composite_losses(reduction):
    """l1, kl_div: composite ops (decompose into other families)."""
    x, y = make((4, 5)), make((4, 5), seed=1)
    if reduction != "batchmean":
        check_grad(lambda a, b: F.l1_loss(a, b, reduction=reduction), x, y)
    lp = torch.log_softmax(x, 1)
    q = torch.softmax(y, 1)
    check_grad(lambda a, b: F.kl_div(a, b, reduction=reduction), lp, q, rtol=1e-5, atol=1e-6)
    check_grad(lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=True), lp, q.log(),
               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_label_smoothing(reduction, smoothing):
    x = make((6, 5))
    t = torch.tensor([0, 4, 2, -100, 1, 4])
    w = make((5,), low=0.5, high=2, seed=3)
    check_grad(lambda a: F.cross_entropy(a, t.to(a.device), reduction=reduction, label_smoothing=smoothing), x,
               rtol=1e-5, atol=1e-6)
    check_grad(lambda a: F.cross_entropy(a, t.to(a.device), weight=w.to(a.device), reduction=reduction,
                                         label_smoothing=smoothing), x, rtol=1e-5, atol=1e-6)
    t2 = t.clamp(min=0)
    check_grad(lambda a: F.cross_entropy(a, t2.to(a.device), ignore_index=4, reduction=reduction,
                                         label_smoothing=smoothing), x, rtol=1e-5, atol=1e-6)
    # class probabilities as the target
    p = torch.softmax(make((6, 5), seed=4), 1)
    check_grad(lambda a: F.cross_entropy(a, p.to(a.device), reduction=reduction, label_smoothing=smoothing), x,
               rtol=1e-5, atol=1e-6)


def test_cross_entropy_2d_smoothing():
    x = make((2, 3, 4, 5))
    t = make((2, 4, 5), torch.int64, low=0, high=3)
    t[0, 0, 0] = -100
    check_grad(lambda a: F.cross_entropy(a, t.to(a.device), label_smoothing=0.2), x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("targets,ignore", [([0, 5, -100, 2], -100), ([0, 5, -100, 2], 5), ([0, -3, 1, 2], -100)])
def test_nll_target_out_of_bounds_raises(targets, ignore):
    """A target outside [0, C) that is not ignore_index raises CPU's IndexError
    (at the next sync), for 1-d and 2-d (nll_loss2d) inputs and the backward."""
    x, t = torch.randn(4, 5), torch.tensor(targets)
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(x, t, ignore_index=ignore)
    with pytest.raises(IndexError, match="Target is out of bounds"):
        F.cross_entropy(x.to("tpu"), t.to("tpu"), ignore_index=ignore).item()
    x2, t2 = torch.randn(2, 5, 3, 3), torch.randint(0, 5, (2, 3, 3))
    t2[0, 1, 1] = 7
    with pytest.raises(IndexError, match="Target is out of bounds"):
        F.cross_entropy(x2.to("tpu"), t2.to("tpu")).item()
    ok = torch.tensor([0, 1, ignore if ignore < 0 else 2, 2])
    check_grad(lambda a, b: F.cross_entropy(a, b, ignore_index=ignore), x, ok)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_uint8_targets(reduction):
    """CPU's nll_loss takes Long or Byte targets."""
    for shape, tshape in (((4, 5), (4,)), ((5,), ())):
        x = make(shape, torch.float32)
        t = torch.randint(0, 5, tshape, dtype=torch.uint8)
        check_grad(lambda a, b: F.cross_entropy(a, b, reduction=reduction), x, t)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_huber_mixed_dtypes_keep_input_dtype(reduction):
    """CPU computes huber_loss into empty_like(input): the result has input's dtype."""
    for a, b in ((torch.float16, torch.float64), (torch.bfloat16, torch.float16), (torch.float32, torch.float64)):
        x, y = make((3, 4), a), make((3, 4), b, seed=1)
        check(lambda p, q: F.huber_loss(p, q, reduction=reduction, delta=0.5), x, y, rtol=1e-2, atol=1e-2)
