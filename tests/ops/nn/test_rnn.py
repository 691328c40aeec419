"""The fused LSTM / GRU cells (what nn.LSTM, nn.GRU, LSTMCell and GRUCell run
on a non-CPU device) against PyTorch CPU's unfused cells: outputs, states and
gradients of inputs and parameters."""
import copy

import pytest
import torch
import torch.nn as nn

from ops_util import dev, make


def _compare(mod, *inputs, tol=None):
    tol = tol or {"rtol": 1e-5, "atol": 1e-5}
    torch.manual_seed(0)
    cpu = copy.deepcopy(mod)
    tpu = copy.deepcopy(mod).to(dev)
    xs_c = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    xs_d = [x.detach().to(dev).requires_grad_(x.is_floating_point()) for x in inputs]
    out_c, out_d = cpu(*xs_c), tpu(*xs_d)
    flat_c = [t for t in torch.utils._pytree.tree_leaves(out_c)]
    flat_d = [t for t in torch.utils._pytree.tree_leaves(out_d)]
    loss_c = sum((t * make(t.shape, seed=i)).sum() for i, t in enumerate(flat_c))
    loss_d = sum((t * make(t.shape, seed=i).to(dev)).sum() for i, t in enumerate(flat_d))
    loss_c.backward()
    loss_d.backward()
    for a, b in zip(flat_c, flat_d):
        torch.testing.assert_close(b.detach().cpu(), a.detach(), **tol)
    for a, b in zip(xs_c, xs_d):
        if a.requires_grad:
            torch.testing.assert_close(b.grad.cpu(), a.grad, **tol)
    for (n, p), q in zip(cpu.named_parameters(), tpu.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, msg=n, **tol)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("cell", [nn.LSTMCell, nn.GRUCell])
def test_cells(cell, bias):
    torch.manual_seed(0)
    m = cell(5, 7, bias=bias)
    _compare(m, make((3, 5)))
    h = make((3, 7), seed=1)
    if cell is nn.LSTMCell:
        _compare(_WithState(m, lstm=True), make((3, 5)), h, make((3, 7), seed=2))
    else:
        _compare(_WithState(m, lstm=False), make((3, 5)), h)


class _WithState(nn.Module):
    def __init__(self, m, lstm):
        super().__init__()
        self.m, self.lstm = m, lstm

    def forward(self, x, h, c=None):
        return self.m(x, (h, c)) if self.lstm else self.m(x, h)


@pytest.mark.parametrize("kind", [nn.LSTM, nn.GRU])
@pytest.mark.parametrize("cfg", [dict(num_layers=2, bidirectional=True), dict(bias=False),
                                 dict(batch_first=True, num_layers=1)])
def test_rnn_modules(kind, cfg):
    torch.manual_seed(0)
    m = kind(4, 6, **cfg)
    x = make((5, 3, 4))  # (T, B, F), or (B, T, F) for batch_first
    _compare(m, x)


def test_unbatched_lstm():
    torch.manual_seed(0)
    _compare(nn.LSTM(4, 6), make((5, 4)))
