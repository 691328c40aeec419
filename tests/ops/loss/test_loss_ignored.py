"""Losses whose targets are all (or partly) ignore_index: the gradient is
CPU's (zeros where every target is ignored, not NaN), with and without class
weights, any upstream gradient, 1-d and 2-d (nll_loss2d) targets, every
reduction; the forward matches too (CPU's NaN for a mean over nothing)."""
import itertools

import pytest
import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401

dev = torch.device("tpu")


def _case(shape, c, frac_ignored, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape[0], c, *shape[1:], generator=g, dtype=torch.float64)
    t = torch.randint(0, c, shape, generator=g)
    ign = torch.rand(shape, generator=g) < frac_ignored
    t[ign] = 1  # ignore_index below
    return x, t


def _both(fn, x, t, w, up):
    out = {}
    for d in ("cpu", dev):
        xx = x.detach().clone().to(d).requires_grad_()
        loss = fn(xx, t.to(d), None if w is None else w.to(d))
        loss.backward(up.to(d) if up.dim() else up.to(d).expand_as(loss))
        out[str(d)] = (loss.detach().cpu(), xx.grad.cpu())
    return out["cpu"], out["tpu"]


LOSSES = {
    "cross_entropy": lambda r: lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=1, reduction=r),
    "cross_entropy_smooth": lambda r: lambda x, t, w: F.cross_entropy(
        x, t, weight=w, ignore_index=1, reduction=r, label_smoothing=0.1),
    "nll_loss": lambda r: lambda x, t, w: F.nll_loss(F.log_softmax(x, 1), t, weight=w, ignore_index=1, reduction=r),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ignored_targets_match_cpu(name, reduction):
    fn = LOSSES[name](reduction)
    for (shape, frac, weighted, upv), seed in zip(
        itertools.product([(6,), (2, 3, 4)], [1.0, 0.5], [False, True], [1.0, 0.0, -2.5]), range(100)
    ):
        x, t = _case(shape, 5, frac, seed)
        w = torch.rand(5, dtype=torch.float64) + 0.5 if weighted else None
        want, got = _both(fn, x, t, w, torch.tensor(upv, dtype=torch.float64))
        ctx = (name, reduction, shape, frac, weighted, upv)
        torch.testing.assert_close(got[0], want[0], equal_nan=True, msg=lambda m: f"{ctx} loss: {m}")
        torch.testing.assert_close(got[1], want[1], equal_nan=True, msg=lambda m: f"{ctx} grad: {m}")
        if frac == 1.0 and "smooth" not in name:
            assert torch.all(got[1] == 0), ctx  # CPU's zeros, not NaN


def test_issue_repro_float32():
    x = torch.randn(4, 3)
    t = torch.ones(4, dtype=torch.long)
    for w in (None, torch.tensor([1.0, 2.0, 3.0])):
        xd = x.to(dev).requires_grad_()
        F.cross_entropy(xd, t.to(dev), weight=None if w is None else w.to(dev), ignore_index=1).backward()
        assert torch.equal(xd.grad.cpu(), torch.zeros(4, 3))


def test_ignored_target_with_infinite_logit():
    # CPU skips ignored targets: an infinite input there does not reach the loss
    x = torch.tensor([[0.0, -float("inf"), 1.0], [0.5, 0.2, 0.1]], dtype=torch.float64)
    t = torch.tensor([1, 0])
    for r in ("none", "sum", "mean"):
        want = F.nll_loss(x, t, ignore_index=1, reduction=r)
        got = F.nll_loss(x.to(dev), t.to(dev), ignore_index=1, reduction=r).cpu()
        torch.testing.assert_close(got, want, equal_nan=True)
