"""Small models trained on tpu agree with the same training on CPU."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu

DEV = torch.device("tpu")


def to_cpu_tree(x):
    if isinstance(x, torch.Tensor):
        return x.detach().cpu()
    if isinstance(x, dict):
        return {k: to_cpu_tree(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(to_cpu_tree(v) for v in x)
    return x


def train(model, opt, batches, loss_fn, dev):
    losses = []
    for xb, yb in batches:
        xb, yb = xb.to(dev), yb.to(dev)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack([l.cpu() for l in losses])


def run_both(make_model, make_opt, batches, loss_fn):
    torch.manual_seed(0)
    mc = make_model()
    md = copy.deepcopy(mc).to(DEV)
    assert all(p.device.type == "tpu" for p in md.parameters())
    oc, od = make_opt(mc), make_opt(md)
    lc = train(mc, oc, batches, loss_fn, torch.device("cpu"))
    ld = train(md, od, batches, loss_fn, DEV)
    return (mc, oc, lc), (md, od, ld)


# ---- (a) MLP + AdamW -----------------------------------------------------------------------

def mlp():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))


def mlp_batches(n=20):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(8, 16, generator=g), torch.randint(0, 4, (8,), generator=g)) for _ in range(n)]


def test_mlp_adamw_matches_cpu():
    (mc, _, lc), (md, _, ld) = run_both(mlp, lambda m: torch.optim.AdamW(m.parameters(), lr=1e-2),
                                        mlp_batches(), F.cross_entropy)
    assert lc[-1] < lc[0]  # it learns
    torch.testing.assert_close(ld, lc, rtol=1e-4, atol=1e-5)
    for pc, pd in zip(mc.parameters(), md.parameters()):
        torch.testing.assert_close(pd.detach().cpu(), pc.detach(), rtol=1e-4, atol=1e-5)


# ---- (b) a small transformer (instead of a CNN: aten::convolution had no lowering yet) ---------

class ManualLayerNorm(nn.Module):
    """LayerNorm from elementwise ops and reductions (no aten::native_layer_norm)."""

    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) * torch.rsqrt(var + self.eps) * self.weight + self.bias


NORMS = {"layernorm": nn.LayerNorm, "manual_norm": ManualLayerNorm}


class Block(nn.Module):
    def __init__(self, d, heads, norm):
        super().__init__()
        self.heads = heads
        self.ln1 = norm(d)
        # no qkv bias: the key bias has an exactly-zero gradient (softmax shift invariance), and
        # Adam would turn its rounding noise into lr-sized, platform-dependent updates
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        self.ln2 = norm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x, mask):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (d // h) ** -0.5
        att = att.masked_fill(mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyLM(nn.Module):
    def __init__(self, vocab=32, d=16, heads=2, t=8, norm="layernorm"):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(t, d) * 0.1)
        self.block = Block(d, heads, NORMS[norm])
        self.ln = NORMS[norm](d)
        # causal mask, built on the CPU (moves with .to())
        self.register_buffer("mask", torch.ones(t, t, dtype=torch.bool).triu(1), persistent=False)

    def forward(self, idx):
        x = self.emb(idx) + self.pos[: idx.shape[1]]
        x = self.block(x, self.mask)
        return F.linear(self.ln(x), self.emb.weight)  # head tied to the embedding


def lm_batches(n=20, vocab=32, t=8):
    g = torch.Generator().manual_seed(2)
    out = []
    for _ in range(n):
        s = torch.randint(0, vocab, (4, t + 1), generator=g)
        out.append((s[:, :-1], s[:, 1:]))
    return out


def lm_loss(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


@pytest.mark.parametrize("norm", list(NORMS))
def test_transformer_adamw_matches_cpu(norm):
    (mc, _, lc), (md, _, ld) = run_both(
        lambda: TinyLM(norm=norm), lambda m: torch.optim.AdamW(m.parameters(), lr=3e-3, weight_decay=0.1),
        lm_batches(), lm_loss)
    assert lc[-1] < lc[0]
    torch.testing.assert_close(ld, lc, rtol=1e-4, atol=1e-5)
    for (n, pc), pd in zip(mc.named_parameters(), md.parameters()):
        torch.testing.assert_close(pd.detach().cpu(), pc.detach(), rtol=1e-4, atol=1e-5, msg=lambda m, n=n: f"{n}: {m}")


def test_module_to_keeps_parameter_identity_and_ties():
    # module.to(device) moves parameters in place (param.data = ...), as on CUDA: tied weights
    # stay tied and an optimizer made before .to() still holds the model's parameters.
    torch.manual_seed(0)
    m = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 10, bias=False))
    m[1].weight = m[0].weight
    w = m[0].weight
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    m.to(DEV)
    assert m[0].weight.device.type == "tpu"
    assert m[1].weight is m[0].weight
    assert m[0].weight is w
    assert opt.param_groups[0]["params"][0] is m[0].weight


# ---- (c) optimizers, foreach on and off --------------------------------------------------------

OPTS = {
    "sgd_momentum": lambda params, fe: torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=False,
                                                       weight_decay=1e-3, foreach=fe),
    "sgd_nesterov": lambda params, fe: torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True,
                                                       foreach=fe),
    "adamw": lambda params, fe: torch.optim.AdamW(params, lr=1e-2, weight_decay=0.05, foreach=fe),
    "adamw_amsgrad": lambda params, fe: torch.optim.AdamW(params, lr=1e-2, amsgrad=True, foreach=fe),
}


@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "for_loop"])
@pytest.mark.parametrize("opt", list(OPTS))
def test_optimizer_steps_match_cpu(opt, foreach):
    (mc, oc, lc), (md, od, ld) = run_both(mlp, lambda m: OPTS[opt](m.parameters(), foreach),
                                          mlp_batches(5), F.cross_entropy)
    torch.testing.assert_close(ld, lc, rtol=1e-4, atol=1e-5)
    for pc, pd in zip(mc.parameters(), md.parameters()):
        torch.testing.assert_close(pd.detach().cpu(), pc.detach(), rtol=1e-4, atol=1e-5)


# ---- (d) state dicts after training ----------------------------------------------------------

def test_state_dicts_after_training_match_cpu():
    (mc, oc, _), (md, od, _) = run_both(
        mlp, lambda m: torch.optim.AdamW(m.parameters(), lr=1e-2, amsgrad=True), mlp_batches(6),
        F.cross_entropy)
    sdc, sdd = mc.state_dict(), md.state_dict()
    assert list(sdd) == list(sdc)
    for k in sdc:
        assert sdd[k].device.type == "tpu"
        torch.testing.assert_close(sdd[k].cpu(), sdc[k], rtol=1e-4, atol=1e-5, msg=k)
    osc, osd = oc.state_dict(), od.state_dict()
    assert osd["param_groups"] == osc["param_groups"]
    assert sorted(osd["state"]) == sorted(osc["state"])
    for i, st in osc["state"].items():
        assert sorted(osd["state"][i]) == sorted(st)
        for k, v in st.items():
            got = osd["state"][i][k]
            if isinstance(v, torch.Tensor):
                torch.testing.assert_close(got.cpu(), v, rtol=1e-4, atol=1e-6, msg=f"{i}.{k}")
            else:
                assert got == v
    # the moved state dicts load into fresh CPU copies; training resumes identically
    xb, yb = mlp_batches(7)[6]
    m2 = mlp()
    m2.load_state_dict(to_cpu_tree(sdd))
    o2 = torch.optim.AdamW(m2.parameters(), lr=1e-2, amsgrad=True)
    o2.load_state_dict(to_cpu_tree(osd))
    l2 = train(m2, o2, [(xb, yb)], F.cross_entropy, torch.device("cpu"))
    lc = train(mc, oc, [(xb, yb)], F.cross_entropy, torch.device("cpu"))
    torch.testing.assert_close(l2, lc, rtol=1e-4, atol=1e-5)
    for pc, p2 in zip(mc.parameters(), m2.parameters()):
        torch.testing.assert_close(p2.detach(), pc.detach(), rtol=1e-4, atol=1e-5)
    # and a tpu model + optimizer resume from the CPU checkpoint
    m3 = mlp().to(DEV)
    m3.load_state_dict(mc.state_dict())
    o3 = torch.optim.AdamW(m3.parameters(), lr=1e-2, amsgrad=True)
    o3.load_state_dict(copy.deepcopy(oc.state_dict()))  # else "step" tensors are shared with oc
    assert all(v.device.type == "tpu" for st in o3.state.values() for k, v in st.items() if k != "step")
    xb, yb = mlp_batches(8)[7]
    l3 = train(m3, o3, [(xb, yb)], F.cross_entropy, DEV)
    lc = train(mc, oc, [(xb, yb)], F.cross_entropy, torch.device("cpu"))
    torch.testing.assert_close(l3, lc, rtol=1e-4, atol=1e-5)
    for pc, p3 in zip(mc.parameters(), m3.parameters()):
        torch.testing.assert_close(p3.detach().cpu(), pc.detach(), rtol=1e-4, atol=1e-5)
