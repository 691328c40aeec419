"""The checks the zoo runs on every family (tests/zoo/families.py), each against the
same model on CPU: the forward's logits, greedy generation, one AdamW training step
(the loss, every gradient, every weight after the step), the forward in Fused Eager
and under torch.compile(backend="tpu")."""
import copy

import torch

import torch_tpu

import suite  # tests/suite.py (pytest puts tests/, the first folder without __init__.py, on sys.path)
from . import families

DEV = "tpu"
FWD_TOL = dict(rtol=1e-4, atol=1e-5)
# the training step's gradients and weights: a whole backward in float32, summed in
# another order than CPU's
GRAD_TOL = dict(rtol=1e-3, atol=1e-5)
NEW_TOKENS = 4


def to_dev(batch):
    return {k: v.to(DEV) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


def models(name, train=False):
    """(family, CPU model, its copy on tpu), seeded."""
    fam = families.FAMILIES[name]
    torch.manual_seed(0)
    cpu = fam.build()
    cpu.train(train)
    return fam, cpu, copy.deepcopy(cpu).to(DEV)


def batch(fam, seed=1):
    return fam.batch(torch.Generator().manual_seed(seed))


def close(got, want, tol, what):
    torch.testing.assert_close(got.detach().cpu(), want.detach(), **tol, msg=lambda m: f"{what}: {m}")


def check_forward(name, mode=None):
    fam, cpu, tpu = models(name)
    b = batch(fam)
    with torch.no_grad():
        want = fam.logits(families.call(cpu, fam, b))
        if mode == "compiled":
            got = fam.logits(families.call(torch.compile(tpu, backend="tpu"), fam, to_dev(b)))
        elif mode == "fused":
            with torch_tpu.eager_mode("fused"):
                got = fam.logits(families.call(tpu, fam, to_dev(b)))
        else:
            got = fam.logits(families.call(tpu, fam, to_dev(b)))
    assert got.device.type == DEV
    close(got, want, FWD_TOL, f"{name} logits ({mode or 'strict'})")


def check_generate(name):
    fam, cpu, tpu = models(name)
    b = batch(fam)
    kw = dict(max_new_tokens=NEW_TOKENS, do_sample=False, min_new_tokens=NEW_TOKENS)
    inputs = {k: v for k, v in b.items() if k in ("input_ids", "input_features")}
    with torch.no_grad():
        want = cpu.generate(**inputs, **kw)
        got = tpu.generate(**to_dev(inputs), **kw)
    assert got.device.type == DEV
    assert want.shape[1] >= NEW_TOKENS
    assert torch.equal(got.cpu(), want), f"{name}: tokens {got.cpu().tolist()} != CPU {want.tolist()}"


def check_train_step(name):
    fam, cpu, tpu = models(name, train=True)
    b = batch(fam)
    # eps 1e-3: a parameter whose gradient is zero on CPU and rounding noise on tpu (a key
    # bias under softmax) moves by ~noise/eps, not by lr as Adam's default eps would make it
    opt_c = torch.optim.AdamW(cpu.parameters(), lr=1e-2, eps=1e-3)
    opt_t = torch.optim.AdamW(tpu.parameters(), lr=1e-2, eps=1e-3)
    loss_c = fam.loss(families.call(cpu, fam, b), b)
    loss_c.backward()
    loss_t = fam.loss(families.call(tpu, fam, to_dev(b)), to_dev(b))
    loss_t.backward()
    close(loss_t, loss_c, FWD_TOL, f"{name} loss")
    pc, pt = dict(cpu.named_parameters()), dict(tpu.named_parameters())
    assert pc.keys() == pt.keys()
    n = 0
    for k in pc:
        if pc[k].grad is None:
            assert pt[k].grad is None, f"{name}: {k} has a gradient on tpu only"
            continue
        scale = pc[k].grad.abs().max().item()
        close(pt[k].grad, pc[k].grad, dict(rtol=GRAD_TOL["rtol"], atol=max(GRAD_TOL["atol"], 1e-4 * scale)),
              f"{name} grad {k}")
        n += 1
    assert n > 0
    opt_c.step()
    opt_t.step()
    for k in pc:
        close(pt[k], pc[k], GRAD_TOL, f"{name} weight {k} after AdamW")


# one family of each kind outside the MoE group: decoders (with and without sliding windows),
# state space, encoder-decoders of text and audio, vision-text, and Diffusers' transformer and UNet
QUICK = {"llama", "gemma3", "mamba", "t5", "whisper", "clip", "flux", "unet"}


def define_tests(ns, names, generate=(), flow_matching=False):
    """The zoo's tests over `names` in a test module's namespace `ns` (one module per group,
    so pytest-xdist spreads the groups): forward, generate (for `generate`), the training
    step, Fused, compiled; and the flow-matching loop."""
    import pytest

    over = pytest.mark.parametrize("name", names)
    # Fused, compiled and generate: every family in `make test-full`; in `make test` (30 minutes
    # on 2 cores) the MoE families and one of each other kind (QUICK)
    heavy = names if suite.FULL else [n for n in names if families.FAMILIES[n].moe or n in QUICK]
    over_heavy = pytest.mark.parametrize("name", heavy)
    generate = [n for n in generate if n in heavy]

    @over
    def test_forward(name):
        check_forward(name)

    @pytest.mark.parametrize("name", list(generate))
    def test_generate(name):
        check_generate(name)

    @over
    def test_train_step(name):
        check_train_step(name)

    @over_heavy
    def test_forward_fused(name):
        check_forward(name, "fused")

    @over_heavy
    def test_forward_compiled(name):
        check_forward(name, "compiled")

    def test_flow_matching_denoising_loop():
        fam, cpu, tpu = models("flux")
        b = batch(fam)
        with torch.no_grad():
            want = families.flow_matching(cpu, b)
            got = families.flow_matching(tpu, to_dev(b))
        assert got.device.type == DEV
        close(got, want, FWD_TOL, "flux latents after 3 flow-matching steps")

    tests = [test_forward, test_train_step, test_forward_fused, test_forward_compiled]
    if generate:
        tests.append(test_generate)
    if flow_matching:
        tests.append(test_flow_matching_denoising_loop)
    for t in tests:
        ns[t.__name__] = t
    ns["pytestmark"] = pytest.mark.usefixtures("fresh_dynamo")
