"""Models trained on tpu with the same losses as on the CPU: the models of tests/model_zoo.py (a
ResNet-style CNN with BatchNorm, a GPT-style transformer, a UNet-like model, an LSTM and a GRU)."""
import copy

import pytest
import torch

from model_zoo import DEV, MODELS, _data


@pytest.mark.parametrize("name", sorted(MODELS))
def test_trains_like_cpu(name):
    torch.manual_seed(0)
    cpu = MODELS[name]()
    tpu = copy.deepcopy(cpu).to(DEV)
    x, y = _data(name)
    xd, yd = x.to(DEV), y.to(DEV)
    oc = torch.optim.AdamW(cpu.parameters(), lr=1e-2)
    ot = torch.optim.AdamW(tpu.parameters(), lr=1e-2)
    for _ in range(10):
        for m, o, a, b in ((cpu, oc, x, y), (tpu, ot, xd, yd)):
            o.zero_grad()
            loss = m(a, b)
            loss.backward()
            o.step()
            m.last = loss.detach()
        torch.testing.assert_close(tpu.last.cpu(), cpu.last, rtol=1e-4, atol=1e-5)
    for (n, p), q in zip(tpu.state_dict().items(), cpu.state_dict().values()):
        torch.testing.assert_close(p.cpu(), q, rtol=1e-3, atol=1e-4, msg=n)
