"""Fused Eager: ops recorded and run as one program, against CPU and Strict.

Randomized programs (views, in-place ops through views, released
intermediates, host reads in the middle) must give CPU's results; each flush
trigger must run the recorded ops; a training step with its backward must
run as one program; a loop without host reads must settle on a few cached
programs."""
import io
import os
import random
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_tpu

DEV = "tpu"


def stats():
    return torch_tpu._C._stats(-1)


def pending():
    return stats()["pending_ops"]


# ---- randomized programs ---------------------------------------------------------


def _rand_view(rng, t):
    """A random view of t (both devices get the same one)."""
    k = rng.randrange(6)
    if t.dim() == 0:
        return lambda x: x
    if k == 0:
        return lambda x: x
    if k == 1 and t.dim() >= 2:
        return lambda x: x.t() if x.dim() == 2 else x.transpose(0, -1)
    if k == 2 and t.shape[0] > 1:
        s = rng.randrange(t.shape[0] - 1)
        return lambda x: x[s:]
    if k == 3 and t.shape[-1] > 2:
        return lambda x: x[..., ::2]
    if k == 4 and t.shape[0] > 0:
        i = rng.randrange(t.shape[0])
        return lambda x: x[i]
    return lambda x: x.view(-1) if x.is_contiguous() else x


def _step(rng, pool):
    """One random op on the pool: returns fn(list of tensors) applied to both."""
    n = len(pool)
    i, j = rng.randrange(n), rng.randrange(n)
    k = rng.randrange(11)
    a_shape = pool[i].shape
    v = _rand_view(rng, pool[i])
    if k == 0:
        c = rng.choice([0.5, -2.0, 3.0])
        return lambda p: p.append(p[i] * c + p[j].sum())
    if k == 1:
        return lambda p: p.append(torch.tanh(p[i]) - p[i].mean(dim=0, keepdim=True))
    if k == 2:  # in place through a view
        c = rng.choice([1.0, -0.5])
        return lambda p: v(p[i]).add_(c)
    if k == 3:
        return lambda p: v(p[i]).mul_(p[j].amax())
    if k == 4 and len(a_shape) == 2:
        return lambda p: p.append(p[i] @ p[i].t())
    if k == 5:
        return lambda p: p.__setitem__(i, p[i].clone())
    if k == 6:  # release: the value is dropped before the flush
        return lambda p: p.pop(i) if len(p) > 2 else None
    if k == 7 and len(a_shape) >= 1 and a_shape[0] > 1:
        idx = [rng.randrange(a_shape[0]) for _ in range(3)]

        def put(p):
            ix = torch.tensor(idx, device=p[i].device)
            p[i].index_put_((ix,), torch.ones((), device=p[i].device), accumulate=True)

        return put
    if k == 8:
        return lambda p: v(p[i]).copy_(v(p[j]) if p[j].shape == p[i].shape else v(p[i]).flip(0) if v(p[i]).dim() else v(p[i]))
    if k == 9:
        return lambda p: p.append(torch.where(p[i] > 0, p[i], p[i] * 0.1).cumsum(-1) if p[i].dim() else p[i] + 1)
    return lambda p: p.append(p[i].exp().clamp(max=50.0))


@pytest.mark.parametrize("seed", range(24))
def test_random_programs_match_cpu(seed):
    rng = random.Random(seed)
    base = [torch.randn(4, 6, generator=torch.Generator().manual_seed(seed * 7 + q)) for q in range(3)]
    cpu = [t.clone() for t in base]
    with torch_tpu.eager_mode("fused"):
        dev = [t.to(DEV) for t in base]
        for _ in range(rng.randrange(10, 40)):
            op = _step(rng, cpu)
            op(cpu)
            op(dev)
            if rng.random() < 0.1:  # a host read in the middle: a flush
                torch.testing.assert_close(dev[-1].cpu(), cpu[-1], rtol=1e-4, atol=1e-4)
                assert pending() == 0
        assert len(dev) == len(cpu)
        for d, c in zip(dev, cpu):
            assert d.shape == c.shape and d.stride() == c.stride() and d.dtype == c.dtype
            torch.testing.assert_close(d.cpu(), c, rtol=1e-4, atol=1e-4, equal_nan=True)


# ---- flush triggers ------------------------------------------------------------


def _recorded():
    a = torch.arange(6.0, device=DEV)
    b = a * 3 + 1
    assert pending() >= 2, "the ops should be recorded, not run"
    return b


TRIGGERS = {
    "item": lambda b: b.sum().item() == 51.0,
    "cpu": lambda b: b.cpu().tolist() == [1.0, 4.0, 7.0, 10.0, 13.0, 16.0],
    "tolist": lambda b: b.tolist() == [1.0, 4.0, 7.0, 10.0, 13.0, 16.0],
    "repr": lambda b: "16." in repr(b),
    "save": lambda b: torch.save(b, io.BytesIO()) is None,
    "synchronize": lambda b: torch.tpu.synchronize() is None,
    "data-dependent": lambda b: bool((b > 5).any()),
    "nonzero": lambda b: b.nonzero().shape == (6, 1),
}


@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_flush_triggers(trigger):
    with torch_tpu.eager_mode("fused"):
        b = _recorded()
        f0 = stats()["fused_flushes"]
        assert TRIGGERS[trigger](b)
        assert pending() == 0
        assert stats()["fused_flushes"] > f0


def test_mask_writes_of_one_value_do_not_flush():
    """x[mask] = v where v does not vary along the masked elements is a select: it stays in
    the graph (no wait for the mask's true positions), and gives CPU's values."""
    g = torch.Generator().manual_seed(5)
    a, m = torch.randn(4, 5, generator=g), torch.rand(4, 5, generator=g) > 0.5

    def f(a, m):
        b = a * 2
        b[m] = 0.5
        b[m[:, 0]] = a[0]
        b[:, m[0]] += torch.ones(1, dtype=a.dtype, device=a.device)  # (a read of b[:, mask]: flushes)
        return b

    with torch_tpu.eager_mode("fused"):
        at, mt = a.to("tpu"), m.to("tpu")
        torch.tpu.synchronize()
        f0 = stats()["fused_flushes"]
        b = at * 2
        b[mt] = 0.5
        b[mt[:, 0]] = at[0]
        assert stats()["fused_flushes"] == f0 and pending() > 0
        got = f(at, mt)
    torch.testing.assert_close(got.cpu(), f(a, m), rtol=0, atol=0)
    want = a * 2
    want[m] = 0.5
    want[m[:, 0]] = a[0]
    torch.testing.assert_close(b.cpu(), want, rtol=0, atol=0)


def test_strict_op_after_fused_ops_sees_their_results():
    with torch_tpu.eager_mode("fused"):
        b = _recorded()
    with torch_tpu.eager_mode("strict"):
        c = b + 1  # Strict: runs the recorded ops first
    assert pending() == 0
    assert c.cpu().tolist() == [2.0, 5.0, 8.0, 11.0, 14.0, 17.0]


def test_host_write_into_a_recorded_input():
    with torch_tpu.eager_mode("fused"):
        a = torch.zeros(4, device=DEV)
        b = a + 1  # reads a's current value
        a.copy_(torch.full((4,), 5.0))  # host write: b must not see it
        torch.testing.assert_close(b.cpu(), torch.ones(4))
        torch.testing.assert_close(a.cpu(), torch.full((4,), 5.0))


# ---- training steps ------------------------------------------------------------


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                               torch.nn.Linear(16, 4))


def _fused_forward_backward(mc):
    """A fused forward and backward of a copy of CPU module mc on tpu (grads
    checked against CPU's): programs run by the time the backward returned,
    calls still recorded then, programs in all."""
    import copy

    m = copy.deepcopy(mc).to(DEV)
    x = torch.randn(5, 8)
    xd = x.to(DEV)
    torch.tpu.synchronize()
    with torch_tpu.eager_mode("fused"):
        e0 = stats()["executions"]
        loss = m(xd).square().mean()
        assert stats()["executions"] == e0
        loss.backward()  # on autograd's device thread: recorded too
        after_backward, still_recorded = stats()["executions"] - e0, pending()
        got = [p.grad.cpu() for p in m.parameters()]
        n = stats()["executions"] - e0
    mc(x).square().mean().backward()
    for g, p in zip(got, mc.parameters()):
        torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-5)
    return after_backward, still_recorded, n


def test_forward_backward_step_is_one_program():
    """A forward of fewer than 8 calls is not cut where the backward starts."""
    _, _, n = _fused_forward_backward(_model())
    assert n == 1, f"forward + backward ran as {n} programs"


def test_backward_starts_a_program_for_the_forward():
    """Where autograd's device thread takes over the recording, the forward
    recorded so far runs as one program while the backward is recorded; the
    backward is one program of its own."""
    torch.manual_seed(0)
    mc = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh()) for _ in range(6)])
    after_backward, still_recorded, n = _fused_forward_backward(mc)
    assert after_backward == 1, f"the forward ran as {after_backward} programs"
    assert still_recorded > 0
    assert n == 2, f"forward + backward ran as {n} programs"


def test_training_loop_settles_on_cached_programs():
    """50 AdamW steps without host reads: the repeated-block detector cuts the
    graph at the same places every step, so the programs compiled stay few."""
    m = _model().to(DEV)
    mc = _model()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2, foreach=False)
    optc = torch.optim.AdamW(mc.parameters(), lr=1e-2, foreach=False)
    x = torch.randn(5, 8)
    xd = x.to(DEV)
    torch.tpu.synchronize()
    s0 = stats()
    with torch_tpu.eager_mode("fused"):
        for _ in range(50):
            opt.zero_grad()
            m(xd).square().mean().backward()
            opt.step()
        torch.tpu.synchronize()
    s1 = stats()
    for _ in range(50):
        optc.zero_grad()
        mc(x).square().mean().backward()
        optc.step()
    for p, q in zip(m.parameters(), mc.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-3, atol=1e-4)
    compiled = s1["cache_misses"] - s0["cache_misses"]
    flushes = s1["fused_flushes"] - s0["fused_flushes"]
    assert flushes >= 2
    assert s1["fused_replays"] == s0["fused_replays"]
    assert compiled <= 12, f"{compiled} programs compiled for 50 identical steps ({flushes} flushes)"


def test_loop_memory_stays_bounded():
    """Intermediates released before a flush are never materialized."""
    with torch_tpu.eager_mode("fused"):
        x = torch.randn(256, 256, device=DEV)
        torch.tpu.synchronize()
        base = torch.tpu.memory_allocated()
        for _ in range(300):
            x = torch.tanh(x * 1.01 + 0.01)
        torch.tpu.synchronize()
        assert torch.tpu.memory_allocated() <= base + 256 * 256 * 4
    torch.testing.assert_close(x.abs().max().cpu(), x.cpu().abs().max())


# ---- errors --------------------------------------------------------------------


def test_device_check_names_the_op():
    with torch_tpu.eager_mode("fused"):
        a = torch.arange(4.0, device=DEV)
        b = a.index_select(0, torch.tensor([0, 7], device=DEV))
        c = b * 2
        with pytest.raises(Exception, match="index_select"):
            c.cpu()
    torch.tpu.synchronize()


@pytest.mark.parametrize("case", ["mvlgamma_p0", "histc_bool", "eig_complex"])
def test_lowering_refusal_raises_at_the_op(case):
    """A call its lowering refuses raises at the op, as in Strict Eager, and is
    not recorded: the ops before it and after it still run."""
    with torch_tpu.eager_mode("fused"):
        a = torch.arange(1.0, 10.0, device=DEV).view(3, 3)
        b = a * 2
        arg = {"mvlgamma_p0": a + 3, "histc_bool": a > 2, "eig_complex": a.to(torch.complex64)}[case]
        n0 = pending()
        assert n0 >= 2  # a's fill, b, arg are recorded, not run
        with pytest.raises((RuntimeError, ValueError, NotImplementedError)) as err:
            {"mvlgamma_p0": lambda: torch.mvlgamma(arg, 0), "histc_bool": lambda: torch.histc(arg, 4),
             "eig_complex": lambda: torch.linalg.eigvals(arg)}[case]()
        assert {"mvlgamma_p0": "mvlgamma", "histc_bool": "histc", "eig_complex": "eig"}[case] in str(err.value)
        assert pending() == n0  # nothing of the refused op was recorded, nothing ran
        c = b + 1
        torch.testing.assert_close(c.cpu(), torch.arange(1.0, 10.0).view(3, 3) * 2 + 1)


def test_graph_size_limit_and_env_mode():
    code = textwrap.dedent("""
        import torch, torch_tpu
        s = torch_tpu._C._stats
        x = torch.zeros(8, device="tpu")
        for i in range(100):
            x = x + 1
        assert s(-1)["pending_ops"] < 10, s(-1)
        assert s(-1)["fused_flushes"] >= 10, s(-1)
        assert x.sum().item() == 800.0
        print("OK")
    """)
    env = dict(os.environ, TORCH_TPU_DEFER_AND_FUSE="1", TORCH_TPU_FUSE_MAX_OPS="10")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr


def test_scalars_of_every_kind_in_one_program():
    """A fused program takes its runtime scalars packed by dtype (Scalars of each
    kind, 0-dim host tensors, dynamic view offsets): each must reach its op."""
    def work(dev):
        x = torch.arange(12.0, device=dev).view(3, 4)
        i = torch.arange(12, device=dev).view(3, 4)
        z = torch.zeros(3, 4, dtype=torch.complex64, device=dev)
        outs = []
        for k in range(5):
            x = x * (1.0 + k / 8) + k - 0.25          # float Scalars
            i = i * (k + 2) - k                        # int Scalars
            b = (i > 3 * k) & True                     # bool Scalar
            z = z + (k - 1j * k / 2)                   # complex Scalars
            h = x * torch.tensor(0.5 + k) + torch.tensor(k, dtype=torch.int64)  # 0-dim host tensors
            v = x.view(-1)[k:k + 4] * (2.0 - k)        # a view at an offset
            outs += [h, v, b]
        return [t.cpu() for t in outs + [x, i, z]]

    want = work("cpu")
    with torch_tpu.eager_mode("fused"):
        e0 = stats()["executions"]
        got = work(DEV)
        n = stats()["executions"] - e0
    assert n <= 3, n
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w)


# ---- XLA's algebraic rewrites across ops ------------------------------------------

_REWRITTEN = {
    # XLA's simplifier rewrites each of these when the ops share a program
    # (A / (B / C) -> A * C / B, A / sqrt(B) -> A * rsqrt(B), log(exp(A)) -> A,
    # ...): the builder hides the inner op behind a barrier (shlo.c)
    "a/(b/c)": lambda a, b, c: a / (b / c),
    "(a/b)/c": lambda a, b, c: (a / b) / c,
    "a/sqrt(b)": lambda a, b, c: a / torch.sqrt(b.abs()),
    "a/rsqrt(b)": lambda a, b, c: a / torch.rsqrt(b.abs()),
    "a/exp(b)": lambda a, b, c: a / torch.exp(b.clamp(-100, 100)),
    "a/pow(b,c)": lambda a, b, c: a / torch.pow(b.abs(), c.clamp(-3, 3)),
    "exp(a)*exp(b)": lambda a, b, c: torch.exp(a.clamp(-100, 100)) * torch.exp(b.clamp(-100, 100)),
    "log(exp(a))": lambda a, b, c: torch.log(torch.exp(a)),
    "b/((a*b)/b)": lambda a, b, c: b / ((a * b) / b),
}


def _extreme(g, n):
    mags = torch.tensor([1e-38, 1e-30, 1e-20, 1e-3, 0.3, 1.0, 7.0, 89.0, 100.0, 1e20, 1e30, 3e38])
    pick = mags[torch.randint(len(mags), (n,), generator=g)]
    sign = torch.where(torch.rand(n, generator=g) < 0.3, -1.0, 1.0)
    return pick * sign * (1 + torch.rand(n, generator=g))


@pytest.mark.parametrize("name", sorted(_REWRITTEN))
def test_fused_and_compiled_compute_as_the_ops_one_by_one(name):
    """A program of several ops gives Strict Eager's results (one program
    per op) bit for bit, also where XLA's rewrite would overflow (log(exp(100.))
    is inf) or round differently."""
    f = _REWRITTEN[name]
    g = torch.Generator().manual_seed(len(name))
    a, b, c = (_extreme(g, 64) for _ in range(3))
    strict = f(a.to(DEV), b.to(DEV), c.to(DEV)).cpu()
    with torch_tpu.eager_mode("fused"):
        fused = f(a.to(DEV), b.to(DEV), c.to(DEV)).cpu()
    compiled = torch.compile(f, backend="tpu")(a.to(DEV), b.to(DEV), c.to(DEV)).cpu()
    for got in (fused, compiled):
        same = (got == strict) | (got.isnan() & strict.isnan())
        assert bool(same.all()), (name, a[~same], b[~same], c[~same], got[~same], strict[~same])


def test_log_of_exp_overflows_as_op_by_op():
    x = torch.tensor([100.0, 89.0, 1.0])
    with torch_tpu.eager_mode("fused"):
        fused = torch.log(torch.exp(x.to(DEV))).cpu()
    compiled = torch.compile(lambda t: torch.log(torch.exp(t)), backend="tpu")(x.to(DEV)).cpu()
    for got in (fused, compiled):
        assert got[:2].isinf().all() and abs(float(got[2]) - 1.0) < 1e-6, got  # CPU: inf, inf, 1


# ---- writes whose source reads the tensor they write --------------------------------------


def _shift_case(seed):
    """A random shape with unit dims, a dim, a shift and a producer of the
    written tensor: c = producer(x); c[shifted window] = f(c[window])."""
    rng = random.Random(seed)
    rank = rng.randrange(1, 4)
    shape = [1] * rank
    dim = rng.randrange(rank)
    shape[dim] = rng.randrange(4, 9)
    if rank > 1 and rng.random() < 0.4:  # one more non-unit dim
        other = (dim + 1) % rank
        shape[other] = rng.randrange(2, 4)
    k = rng.randrange(1, shape[dim] - 1)
    producer = rng.choice(["exp", "pad", "clone", "mul"])
    fn = rng.choice(["mul", "add", "neg"])
    return tuple(shape), dim, k, producer, fn


def _shift(x, dim, k, producer, fn):
    if producer == "exp":
        c = torch.exp(x)
    elif producer == "pad":
        c = torch.nn.functional.pad(x, (1, 1), value=0.5)
    elif producer == "clone":
        c = x.clone()
    else:
        c = x * 3.0
    n = c.shape[dim]
    src = c.narrow(dim, 0, n - k)
    val = src * 2 if fn == "mul" else src + 1 if fn == "add" else -src
    c.narrow(dim, k, n - k).copy_(val)
    return c


@pytest.mark.parametrize("seed", range(16))
def test_write_whose_source_reads_the_written_tensor(seed):
    """`c[..., k:] = f(c[..., :-k])` in one program equals CPU's (XLA's CPU
    compiler ran such an in-place update as a recurrence when the written
    tensor was a reshape dropping unit dims: each element became f of the
    element just written)."""
    shape, dim, k, producer, fn = _shift_case(seed)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    want = _shift(x, dim, k, producer, fn)
    with torch_tpu.eager_mode("fused"):
        fused = _shift(x.to(DEV), dim, k, producer, fn).cpu()
    compiled = torch.compile(lambda t: _shift(t, dim, k, producer, fn), backend="tpu")(x.to(DEV)).cpu()
    for got in (fused, compiled):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
