"""Fused optimizer steps (torch.optim's fused=True: _fused_adam_, _fused_adamw_, _fused_adagrad_,
_fused_sgd_) on tpu against the same optimizers on the CPU, over several
steps, with weight decay, amsgrad, maximize, nesterov, Tensor lr and
grad_scale / found_inf as GradScaler passes them."""
import copy

import pytest
import torch

from ops_util import dev, make

TOL = {"rtol": 1e-5, "atol": 1e-6}


def _params(dtype=torch.float32):
    return [make((4, 3), dtype, seed=1), make((5,), dtype, seed=2), make((), dtype, seed=3)]


def _run(opt_cls, kwargs, steps=4, dtype=torch.float32, cpu_kwargs=None):
    ps_c = [p.clone().requires_grad_(True) for p in _params(dtype)]
    ps_d = [p.detach().to(dev).requires_grad_(True) for p in _params(dtype)]
    oc = opt_cls(ps_c, **(cpu_kwargs or kwargs))
    od = opt_cls(ps_d, **kwargs)
    for s in range(steps):
        for ps, o in ((ps_c, oc), (ps_d, od)):
            o.zero_grad()
            loss = sum((p.float() * make(p.shape, seed=10 + s + i).to(p.device)).sum() ** 2
                       for i, p in enumerate(ps))
            loss.backward()
            o.step()
    for a, b in zip(ps_c, ps_d):
        torch.testing.assert_close(b.detach().cpu(), a.detach(), **TOL)
    return oc, od


@pytest.mark.parametrize("opt", [torch.optim.Adam, torch.optim.AdamW])
@pytest.mark.parametrize("cfg", [{}, {"weight_decay": 0.1}, {"amsgrad": True, "weight_decay": 0.05},
                                 {"maximize": True}])
def test_fused_adam_matches_cpu(opt, cfg):
    kw = dict(lr=0.01, fused=True, **cfg)
    oc, od = _run(opt, kw)
    for sc, sd in zip(oc.state.values(), od.state.values()):
        for key in sc:
            torch.testing.assert_close(sd[key].cpu(), sc[key], **TOL)


@pytest.mark.parametrize("opt,cfg", [(torch.optim.AdamW, {}), (torch.optim.Adam, {"weight_decay": 0.1}),
                                     (torch.optim.AdamW, {"lr": torch.tensor(0.1), "amsgrad": True})])
def test_fused_adam_long_run_follows_cpu_fused(opt, cfg):
    """30 steps with beta2 = 0.999 against CPU's fused kernel: the bias corrections are
    computed in f64 from the step, as CPU does (in f32, 1 - 0.999 ** step loses ~1e-5 of
    itself: the results drift ~10x further than this tolerance); what is left is CPU's
    FMA in its vectorized loop, about an ulp per step."""
    w = torch.randn(40, 40, generator=torch.Generator().manual_seed(0))
    out = {}
    for d in ("cpu", dev):
        p = w.clone().to(d).requires_grad_(True)
        o = opt([p], fused=True, **{"lr": 0.1, **cfg})
        for i in range(30):
            p.grad = torch.randn(40, 40, generator=torch.Generator().manual_seed(i)).to(d)
            o.step()
        out[d] = p.detach().cpu()
    torch.testing.assert_close(out[dev], out["cpu"], rtol=0, atol=3e-6)


def test_fused_adam_tensor_lr():
    _run(torch.optim.Adam, dict(lr=torch.tensor(0.01), fused=True))


@pytest.mark.parametrize("cfg", [{"momentum": 0.9}, {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
                                 {"momentum": 0.0}, {"momentum": 0.5, "dampening": 0.1, "maximize": True}])
def test_fused_sgd_matches_cpu(cfg):
    _run(torch.optim.SGD, dict(lr=0.05, fused=True, **cfg))


def test_fused_adam_grad_scale_and_found_inf():
    p_c = make((6,)).requires_grad_(True)
    p_d = p_c.detach().to(dev).requires_grad_(True)
    for p, found in ((p_c, 0.0), (p_d, 0.0)):
        p.grad = make((6,), seed=5).to(p.device) * 4
    st = {}
    for p in (p_c, p_d):
        d = p.device
        exp_avg, exp_avg_sq = torch.zeros_like(p), torch.zeros_like(p)
        step = torch.tensor(1.0, device=d)
        torch._fused_adam_([p.data], [p.grad], [exp_avg], [exp_avg_sq], [], [step], lr=0.1, beta1=0.9,
                           beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False,
                           grad_scale=torch.tensor(4.0, device=d), found_inf=torch.tensor(0.0, device=d))
        st[d.type] = (p.detach().clone(), p.grad.clone(), exp_avg)
        before = p.detach().clone()
        torch._fused_adam_([p.data], [p.grad], [exp_avg], [exp_avg_sq], [], [step], lr=0.1, beta1=0.9,
                           beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False,
                           grad_scale=torch.tensor(4.0, device=d), found_inf=torch.tensor(1.0, device=d))
        torch.testing.assert_close(p.detach().cpu(), before.cpu())  # skipped step
    for a, b in zip(st["cpu"], st["tpu"]):
        torch.testing.assert_close(b.cpu(), a, **TOL)


@pytest.mark.parametrize("fused", [False, True])
def test_grad_scaler_training_matches_cpu(fused):
    """torch.amp.GradScaler("tpu") with float16 autocast: _amp_foreach_non_finite_check_and_unscale_
    and _amp_update_scale_ as on the CPU. A huge initial scale overflows the float16 gradients
    first (steps skipped, the scale backed off), then training proceeds and the scale grows
    every growth_interval steps; weights, scale and growth tracker equal CPU's."""
    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    tpu = copy.deepcopy(cpu).to(dev)
    runs = []
    for m, d in ((cpu, "cpu"), (tpu, "tpu")):
        opt = torch.optim.Adam(m.parameters(), lr=0.01, fused=fused)
        scaler = torch.amp.GradScaler(d, init_scale=2.0 ** 40, growth_interval=3)
        scales = []
        for s in range(12):
            x = torch.randn(5, 6, generator=torch.Generator().manual_seed(s)).to(d)
            with torch.autocast(d, dtype=torch.float16):
                loss = m(x).float().square().mean()
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
        runs.append((scales, [p.detach().cpu() for p in m.parameters()], scaler._growth_tracker.item()))
    (sc, pc, gc), (st, pt, gt) = runs
    assert st == sc and gt == gc
    assert sc[0] < 2.0 ** 40 and max(sc[5:]) > min(sc[5:])  # backed off, then grew
    for a, b in zip(pt, pc):
        torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cfg", [{}, {"weight_decay": 0.1, "lr_decay": 0.01}, {"maximize": True, "lr": torch.tensor(0.05)},
                                 {"initial_accumulator_value": 0.1}])
def test_fused_adagrad_equals_cpu(dtype, cfg):
    """_fused_adagrad_ (and .tensor_lr) as CPU's fused kernel computes it, bit for bit: the
    step's lr in f64, constants rounded to the parameter's dtype (float16 / bfloat16)."""
    w = torch.randn(33, 17, generator=torch.Generator().manual_seed(0)).to(dtype)
    out = {}
    for d in ("cpu", dev):
        p = w.clone().to(d).requires_grad_(True)
        o = torch.optim.Adagrad([p], fused=True, **{"lr": 0.1, **cfg})
        for i in range(8):
            p.grad = torch.randn(33, 17, generator=torch.Generator().manual_seed(i)).to(dtype).to(d)
            o.step()
        out[d] = (p.detach().cpu(), o.state[p]["sum"].cpu())
    for a, b in zip(out[dev], out["cpu"]):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
