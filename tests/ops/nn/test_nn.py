"""nn family (csrc/core/lower/nn/nn.c) against PyTorch CPU."""
import pytest
import torch
import torch.nn.functional as F

from ops_util import FLOAT_DTYPES, check, check_grad, dev, make


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax(dtype, dim):
    x = make((4, 5, 6), dtype)
    check(lambda t: torch.softmax(t, dim), x)
    check(lambda t: torch.log_softmax(t, dim), x)
    check(lambda t: torch.softmax(t, dim, dtype=torch.float32), x)


def test_softmax_inf_rows():
    x = make((3, 4))
    x[0, 1] = float("-inf")
    x[1] = float("-inf")  # all -inf: NaN, as on CPU
    check(lambda t: torch.softmax(t, 1), x)
    check(lambda t: torch.log_softmax(t, 1), x)


def test_softmax_grad():
    x = make((4, 7))
    check_grad(lambda t: torch.softmax(t, 1), x)
    check_grad(lambda t: torch.log_softmax(t, 0), x)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(reduction):
    x = make((6, 5))
    t = torch.tensor([0, 4, 2, -100, 1, 4])
    w = make((5,), low=0.5, high=2, seed=3)
    check_grad(lambda a: F.cross_entropy(a, t.to(a.device), reduction=reduction), x)
    check_grad(lambda a: F.cross_entropy(a, t.to(a.device), weight=w.to(a.device), reduction=reduction), x)
    check_grad(lambda a: F.cross_entropy(a, t.to(a.device).clamp(min=0), ignore_index=4,
                                         reduction=reduction), x)


def test_cross_entropy_bf16_and_2d():
    x = make((6, 5), torch.bfloat16)
    t = torch.tensor([0, 4, 2, 3, 1, 4])
    check(lambda a: F.cross_entropy(a, t.to(a.device)), x)
    x4 = make((2, 3, 4, 5))
    t4 = make((2, 4, 5), torch.int64, low=0, high=3)
    check_grad(lambda a: F.cross_entropy(a, t4.to(a.device)), x4)
    check_grad(lambda a: F.nll_loss(torch.log_softmax(a, 1), t4.to(a.device), reduction="none"), x4)


def test_nll_loss_1d_input():
    x = make((5,))
    t = torch.tensor(3)
    check_grad(lambda a: F.nll_loss(a, t.to(a.device)), x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_layer_norm(dtype):
    x = make((3, 4, 8), dtype)
    w, b = make((8,), dtype, seed=1), make((8,), dtype, seed=2)
    check(lambda a, ww, bb: F.layer_norm(a, (8,), ww, bb), x, w, b)
    check(lambda a: F.layer_norm(a, (4, 8)), x)


def test_layer_norm_grad():
    x = make((3, 4, 8))
    w, b = make((8,), seed=1), make((8,), seed=2)
    check_grad(lambda a, ww, bb: F.layer_norm(a, (8,), ww, bb), x, w, b, rtol=1e-4, atol=1e-5)


def test_layer_norm_grad_partial_mask():
    # without weight/bias the backward's output_mask has False entries
    x, w = make((3, 4, 8)), make((8,), seed=1)
    check_grad(lambda a: F.layer_norm(a, (4, 8)), x, rtol=1e-4, atol=1e-5)
    check_grad(lambda a, ww: F.layer_norm(a, (8,), ww), x, w, rtol=1e-4, atol=1e-5)


def test_dropout():
    x = torch.ones(100, 100)
    y = F.dropout(x.to(dev), p=0.3, training=True).cpu()
    kept = (y != 0).float().mean().item()
    assert abs(kept - 0.7) < 0.03
    torch.testing.assert_close(y[y != 0], torch.full_like(y[y != 0], 1 / 0.7))
    check(lambda a: F.dropout(a, p=0.3, training=False), x)
    xd = x.to(dev).requires_grad_(True)
    out = F.dropout(xd, p=0.5)
    out.sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), (out.detach().cpu() != 0).float() * 2)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    check_grad(lambda a, b: F.mse_loss(a, b, reduction=reduction), make((4, 5)), make((4, 5), seed=1))
    check(lambda a, b: F.mse_loss(a, b, reduction=reduction),
          make((4, 5), torch.bfloat16), make((4, 5), torch.bfloat16, seed=1))


@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("scale", [False, True])
def test_embedding_backward(padding_idx, scale):
    idx = torch.tensor([[0, 2, 2], [5, 1, 2]])
    w = make((7, 4))
    check_grad(lambda ww: F.embedding(idx.to(ww.device), ww, padding_idx=padding_idx,
                                      scale_grad_by_freq=scale), w)
