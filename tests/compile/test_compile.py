"""torch.compile(backend="tpu") (issue 10): graphs run as one captured program
each, replayed on later calls, with the results of CPU and of eager tpu."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.fx

import torch_tpu
from torch_tpu import _compile
from model_zoo import MODELS, _data

DEV = "tpu"


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def graphs_since(n0):
    return _compile.compiled_graphs(since=n0)


def n_graphs():
    return _compile.graph_serial()


def test_backend_is_registered():
    assert "tpu" in torch._dynamo.list_backends()
    from importlib.metadata import entry_points

    assert "tpu" in entry_points(group="torch_dynamo_backends").names


def test_mlp_forward_backward_replayed_and_match_cpu():
    torch.manual_seed(0)
    cpu = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    tpu = copy.deepcopy(cpu).to(DEV)
    n0 = n_graphs()
    cm = torch.compile(tpu, backend="tpu")
    oc = torch.optim.SGD(cpu.parameters(), lr=0.1)
    ot = torch.optim.SGD(tpu.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    for _ in range(5):
        x = torch.randn(5, 8, generator=g)
        ref, out = cpu(x), cm(x.to(DEV))
        torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-6)
        ref.square().sum().backward()
        out.square().sum().backward()
        for p, q in zip(tpu.parameters(), cpu.parameters()):
            torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-5, atol=1e-6)
        oc.step(), ot.step(), oc.zero_grad(), ot.zero_grad()
    gs = graphs_since(n0)
    assert sorted(x["kind"] for x in gs) == ["backward", "forward"]
    for x in gs:  # recorded once, then the captured program ran
        assert x["refused"] is None and x["recordings"] == 1 and x["replays"] == 4, x


def test_replay_runs_one_program_per_graph():
    m = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh()).to(DEV)
    cm = torch.compile(m, backend="tpu")
    x = torch.randn(4, 8, device=DEV)
    with torch.no_grad():
        cm(x), cm(x)
        torch.tpu.synchronize()
        s0 = torch_tpu._C._stats(-1)
        for _ in range(10):
            y = cm(x)
        torch.tpu.synchronize()
        s1 = torch_tpu._C._stats(-1)
    torch.testing.assert_close(y.cpu(), copy.deepcopy(m).cpu()(x.cpu()), rtol=1e-5, atol=1e-6)
    assert s1["executions"] - s0["executions"] == 10
    assert s1["compiles"] == s0["compiles"] and s1["cache_misses"] == s0["cache_misses"]


def test_inference_no_grad_matches_eager():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(4, 2)).to(DEV)
    cm = torch.compile(m, backend="tpu")
    n0 = n_graphs()
    with torch.no_grad():
        for i in range(3):
            x = torch.randn(2, 3, 8, 8, device=DEV)
            torch.testing.assert_close(cm(x).cpu(), m(x).cpu(), rtol=1e-5, atol=1e-6)
    gs = graphs_since(n0)
    assert [x["kind"] for x in gs] == ["inference"] and gs[0]["replays"] == 2


@pytest.mark.parametrize("name", sorted(MODELS))
@torch._dynamo.config.patch(allow_rnn=True)  # dynamo leaves nn.LSTM/GRU to eager by default
def test_models_train_like_cpu(name):
    torch.manual_seed(0)
    cpu = MODELS[name]()
    tpu = copy.deepcopy(cpu).to(DEV)
    ctpu = torch.compile(tpu, backend="tpu")
    x, y = _data(name)
    xd, yd = x.to(DEV), y.to(DEV)
    oc = torch.optim.AdamW(cpu.parameters(), lr=1e-2)
    ot = torch.optim.AdamW(tpu.parameters(), lr=1e-2)
    n0 = n_graphs()
    for _ in range(4):
        for m, o, a, b in ((cpu, oc, x, y), (ctpu, ot, xd, yd)):
            o.zero_grad()
            loss = m(a, b)
            loss.backward()
            o.step()
            m.last = loss.detach()
        torch.testing.assert_close(ctpu.last.cpu(), cpu.last, rtol=1e-4, atol=1e-5)
    # BatchNorm's running stats (input mutations) too
    for (n, p), q in zip(tpu.state_dict().items(), cpu.state_dict().values()):
        torch.testing.assert_close(p.cpu(), q, rtol=1e-3, atol=1e-4, msg=n)
    gs = graphs_since(n0)
    assert {x["kind"] for x in gs} == {"forward", "backward"}
    assert all(x["refused"] is None and x["replays"] >= 3 for x in gs), gs


def test_embedding_bag_trains_like_cpu():
    torch.manual_seed(0)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.bag = nn.EmbeddingBag(20, 6, mode="mean")
            self.head = nn.Linear(6, 2)

        def forward(self, idx, offsets):
            return self.head(self.bag(idx, offsets))

    cpu = M()
    tpu = copy.deepcopy(cpu).to(DEV)
    ctpu = torch.compile(tpu, backend="tpu")
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = torch.tensor([0, 3, 5])
    oc = torch.optim.SGD(cpu.parameters(), lr=0.5)
    ot = torch.optim.SGD(tpu.parameters(), lr=0.5)
    for _ in range(3):
        for m, o, a, b in ((cpu, oc, idx, offsets), (ctpu, ot, idx.to(DEV), offsets.to(DEV))):
            o.zero_grad()
            loss = m(a, b).square().mean()
            loss.backward()
            o.step()
            m.last = loss.detach()
        torch.testing.assert_close(ctpu.last.cpu(), cpu.last, rtol=1e-5, atol=1e-6)


def test_dropout_draws_fresh_masks_like_eager():
    """A replay takes new RNG offsets from the generator, as eager does: the
    same seed gives eager's masks, and no two calls share one."""

    def f(x):
        return F.dropout(x, p=0.5, training=True) * 2

    cf = torch.compile(f, backend="tpu")
    x = torch.ones(64, device=DEV)
    torch.manual_seed(7)
    eager = [f(x).cpu() for _ in range(4)]
    torch.manual_seed(7)
    comp = [cf(x).cpu() for _ in range(4)]
    for a, b in zip(eager, comp):
        torch.testing.assert_close(a, b)
    assert not torch.equal(comp[1], comp[2])


def test_graph_break_runs_both_graphs():
    def f(x):
        y = x.sin() * 2
        torch._dynamo.graph_break()
        return (y + 1).cos()

    cf = torch.compile(f, backend="tpu")
    x = torch.randn(6)
    for _ in range(3):
        torch.testing.assert_close(cf(x.to(DEV)).cpu(), f(x), rtol=1e-5, atol=1e-6)


def test_cpu_scalar_inputs_are_host_values_not_constants():
    """CPU 0-dim tensors (an input, and values the graph computes from it on
    the CPU) change between calls: each replay takes this call's values."""

    def f(x, s):
        t = s * 2 + 1  # computed on the CPU (the graph's host part)
        return x * s + t

    cf = torch.compile(f, backend="tpu")
    x = torch.randn(4)
    n0 = n_graphs()
    for v in (2.0, 3.0, -1.5, 0.25):
        s = torch.tensor(v)
        torch.testing.assert_close(cf(x.to(DEV), s).cpu(), f(x, s))
    gs = graphs_since(n0)
    assert len(gs) == 1 and gs[0]["refused"] is None and gs[0]["replays"] == 3, gs


def test_outputs_alias_like_eager():
    def f(x):
        y = x * 2
        return y, y.t(), x.view(-1)

    cf = torch.compile(f, backend="tpu")
    for _ in range(3):
        x = torch.randn(3, 4, device=DEV)
        y, yt, xv = cf(x)
        torch.testing.assert_close(y.cpu(), x.cpu() * 2)
        torch.testing.assert_close(yt.cpu(), (x.cpu() * 2).t())
        assert yt.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()
        assert xv.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        y.add_(1)  # a write through one view shows through the other
        torch.testing.assert_close(yt.cpu(), (x.cpu() * 2 + 1).t())


def test_input_mutation_in_place():
    def f(x, buf):
        buf.mul_(0.5).add_(x)
        return buf.sum()

    cf = torch.compile(f, backend="tpu")
    x = torch.randn(5)
    bc, bd = torch.zeros(5), torch.zeros(5, device=DEV)
    with torch.no_grad():
        for _ in range(4):
            torch.testing.assert_close(cf(x.to(DEV), bd).cpu(), f(x, bc))
            torch.testing.assert_close(bd.cpu(), bc)


def test_mask_writes_and_index_lists_replay():
    """`t[mask] = number` (an elementwise select: no sync for the mask's true positions) and
    an index list (a device constant of the graph, passed to the program as an input) are
    captured once and replayed, with CPU's values."""
    def f(a, m):
        t = a * 2
        t[m] = 0.0
        t[m[:, 0]] = a[0]  # values broadcast along the masked rows
        return t[:, [2, 0, 1]], a[[1, 0]] - t[0]

    cf = torch.compile(f, backend="tpu", fullgraph=True)
    n0 = n_graphs()
    g = torch.Generator().manual_seed(3)
    for _ in range(4):
        a, m = torch.randn(3, 4, generator=g), torch.rand(3, 4, generator=g) > 0.5
        for got, want in zip(cf(a.to(DEV), m.to(DEV)), f(a, m)):
            torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    gs = graphs_since(n0)
    assert len(gs) == 1 and gs[0]["refused"] is None and gs[0]["recordings"] == 1 and gs[0]["replays"] == 3, gs


def test_new_input_layout_records_again():
    def f(x):
        return x.exp() + x

    cf = torch.compile(f, backend="tpu", dynamic=False)
    base = torch.randn(4, 6)
    d = base.to(DEV)
    torch.testing.assert_close(cf(d).cpu(), f(base))
    torch.testing.assert_close(cf(d).cpu(), f(base))
    big = torch.randn(8, 6)  # same shape, a view at an offset of a larger storage
    dv = big.to(DEV)[4:]
    torch.testing.assert_close(cf(dv).cpu(), f(big[4:]))


def test_inputs_that_alias_record_again():
    """A replay checks that inputs share storages exactly as the captured ones did: a graph
    writing one input and reading another is recorded again (and right) when they alias."""
    def f(a, b):
        a.add_(1)
        return (a * 2 + b,)

    cg = _compile.CompiledGraph(torch.fx.symbolic_trace(f), "inference")
    d, o = torch.zeros(24, device=DEV), torch.zeros(24, device=DEV)
    for _ in range(3):
        cg([d.view(4, 6), o.view(6, 4).t()])
    assert (cg.recordings, cg.replays) == (1, 2)
    for _ in range(2):  # b views a's storage, at the same offset and size as before
        ref = d.cpu()
        want = f(ref.view(4, 6), ref.view(6, 4).t())[0]
        got = cg([d.view(4, 6), d.view(6, 4).t()])[0]
        torch.testing.assert_close(got.cpu(), want)
        torch.testing.assert_close(d.cpu(), ref)
    assert cg.recordings >= 2


def test_dynamic_sizes_one_capture_per_size():
    """dynamic=True: sizes are inputs of the graph; each size is recorded once,
    then replayed (no bucketing yet: one program per size)."""

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 16)
            self.lin = nn.Linear(16, 16)

        def forward(self, ids):
            x = self.emb(ids)
            return F.gelu(self.lin(x)).softmax(-1) + x.mean(1, keepdim=True)

    torch.manual_seed(0)
    cpu = M()
    tpu = copy.deepcopy(cpu).to(DEV)
    cm = torch.compile(tpu, backend="tpu", dynamic=True)
    n0 = n_graphs()
    lengths = (5, 7, 9, 5, 7, 9, 9)
    g = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for L in lengths:
            ids = torch.randint(0, 50, (2, L), generator=g)
            torch.testing.assert_close(cm(ids.to(DEV)).cpu(), cpu(ids), rtol=1e-5, atol=1e-6)
    gs = graphs_since(n0)
    assert len(gs) == 1, gs  # one graph for every length
    assert gs[0]["recordings"] == 3 and gs[0]["replays"] == 4 and gs[0]["captures"] == 3, gs


class _RowWise(nn.Module):
    """Per-position layers over a dynamic sequence (no mixing across it)."""

    def __init__(self, pool=False):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.ln = nn.LayerNorm(16)
        self.l1 = nn.Linear(16, 32)
        self.l2 = nn.Linear(32, 16)
        self.pool = pool

    def forward(self, ids):
        x = self.emb(ids)
        h = (self.l2(F.gelu(self.l1(self.ln(x)))) + x).softmax(-1)
        h = h * torch.arange(ids.shape[1], device=ids.device)[:, None]
        return h.mean(1) if self.pool else h


def _programs():
    s = torch.tpu._get_cache_stats()
    return s["misses"] + s["disk_hits"]  # programs that were not in memory


def test_dynamic_lengths_run_in_buckets():
    """An inference loop over 14 lengths compiles one program per bucket
    (4, 8, 16), with the results of each length."""
    torch.manual_seed(0)
    cpu = _RowWise()
    cm = torch.compile(copy.deepcopy(cpu).to(DEV), backend="tpu", dynamic=True)
    g = torch.Generator().manual_seed(5)
    n0 = n_graphs()
    with torch.no_grad():
        ids = torch.randint(0, 50, (2, 16), generator=g)
        cm(ids.to(DEV))  # compiles the graph and the 16 bucket
        torch.tpu.synchronize()
        p0 = _programs()
        for L in list(range(3, 17)) + [5, 11]:
            ids = torch.randint(0, 50, (2, L), generator=g)
            out = cm(ids.to(DEV))
            assert out.shape == (2, L, 16) and out.stride() == (16 * L, 16, 1)  # eager's: compacted
            torch.testing.assert_close(out.cpu(), cpu(ids), rtol=1e-5, atol=1e-5)
        torch.tpu.synchronize()
        new = _programs() - p0
    gs = graphs_since(n0)
    assert len(gs) == 1 and gs[0]["bucketed"] is True, gs
    assert gs[0]["captures"] == 3 and gs[0]["recordings"] == 3, gs  # buckets 4, 8, 16
    assert new <= 2, new  # the 4 and 8 buckets' programs


class _Causal(nn.Module):
    """One causal self-attention block over a dynamic sequence."""

    def __init__(self, causal=True):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.qkv = nn.Linear(16, 48)
        self.proj = nn.Linear(16, 16)
        self.causal = causal

    def forward(self, ids):
        b, t = ids.shape
        x = self.emb(ids)
        q, k, v = (z.view(b, t, 2, 8).transpose(1, 2) for z in self.qkv(x).split(16, -1))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.proj(a.transpose(1, 2).reshape(b, t, 16)) + x


def test_dynamic_lengths_causal_attention_runs_in_buckets():
    """Causal attention over a dynamic length is bucketed: a valid query never
    attends to a padded key. Without is_causal it is not."""
    torch.manual_seed(0)
    for causal in (True, False):
        cpu = _Causal(causal)
        cm = torch.compile(copy.deepcopy(cpu).to(DEV), backend="tpu", dynamic=True)
        g = torch.Generator().manual_seed(7)
        n0 = n_graphs()
        with torch.no_grad():
            for L in (16, 3, 4, 5, 7, 9, 12, 13, 16, 6):
                ids = torch.randint(0, 50, (2, L), generator=g)
                out = cm(ids.to(DEV))
                assert out.shape == (2, L, 16)
                torch.testing.assert_close(out.cpu(), cpu(ids), rtol=1e-5, atol=1e-5)
        gs = graphs_since(n0)
        assert len(gs) == 1, gs
        if causal:
            assert gs[0]["bucketed"] is True and gs[0]["captures"] == 3, gs  # buckets 4, 8, 16
        else:
            assert "dynamic keys" in gs[0]["bucketed"] and gs[0]["captures"] == 9, gs


def test_dynamic_lengths_not_bucketed_when_it_is_not_exact():
    """A mean over the dynamic dim would count padded positions: no bucketing,
    one program per length, CPU's results."""
    torch.manual_seed(0)
    cpu = _RowWise(pool=True)
    cm = torch.compile(copy.deepcopy(cpu).to(DEV), backend="tpu", dynamic=True)
    n0 = n_graphs()
    g = torch.Generator().manual_seed(6)
    with torch.no_grad():
        for L in (3, 5, 6, 3):
            ids = torch.randint(0, 50, (2, L), generator=g)
            torch.testing.assert_close(cm(ids.to(DEV)).cpu(), cpu(ids), rtol=1e-5, atol=1e-5)
    gs = graphs_since(n0)
    assert len(gs) == 1 and "reduces over a dynamic dim" in gs[0]["bucketed"], gs
    assert gs[0]["captures"] == 3 and gs[0]["replays"] == 1, gs


def test_dynamic_lengths_not_bucketed_when_the_graph_writes_an_input():
    """A write into a padded input would land in its padded copy: no bucketing,
    and the caller's tensor gets the write."""

    def f(x, buf):
        buf.add_(x)
        return (x * 2).sum(1)

    cf = torch.compile(f, backend="tpu")
    n0 = n_graphs()
    with torch.no_grad():
        for L in (3, 5, 6):
            x = torch.randn(L, 4)
            bc, bd, xd = torch.ones(L, 4), torch.ones(L, 4, device=DEV), x.to(DEV)
            torch._dynamo.mark_dynamic(xd, 0)
            torch._dynamo.mark_dynamic(bd, 0)
            torch.testing.assert_close(cf(xd, bd).cpu(), f(x, bc))
            torch.testing.assert_close(bd.cpu(), bc)
    gs = graphs_since(n0)
    assert len(gs) == 1 and "writes in place" in gs[0]["bucketed"], gs


@pytest.mark.parametrize("view", ["expand", "unsqueeze", "transpose", "identity"])
def test_dynamic_lengths_not_bucketed_when_an_output_views_an_input(view):
    """An output that is a view of an input is remade by AOTAutograd from the
    caller's (unpadded) tensor: no bucketing, CPU's values (a padded run's
    sizes and strides went past the input's storage)."""
    fns = {"expand": lambda x: (x.expand(2, *x.shape[1:]), x * 2),
           "unsqueeze": lambda x: (x.unsqueeze(0), x.sum(-1)),
           "transpose": lambda x: (x.transpose(1, 2), x + 1),
           "identity": lambda x: (x, x.tanh())}
    f = fns[view]
    cf = torch.compile(f, backend="tpu", dynamic=True)
    n0 = n_graphs()
    with torch.no_grad():
        for L in (3, 5, 6, 3):
            x = torch.randn(1, L, 4)
            for got, want in zip(cf(x.to(DEV)), f(x)):
                assert got.shape == want.shape and got.stride() == want.stride()
                torch.testing.assert_close(got.cpu(), want)
    gs = graphs_since(n0)
    if view != "identity":  # (AOTAutograd returns an input itself without the graph)
        assert all(g["bucketed"] is not True for g in gs), gs


def test_bucketed_output_of_a_batch_of_one_has_eager_strides():
    """A bucketed output narrowed along a dim with only size-1 dims in front
    (a batch of one) gets the contiguous strides eager gives it, for free."""
    f = lambda x: torch.tanh(x) * 2  # noqa: E731
    cf = torch.compile(f, backend="tpu", dynamic=True)
    n0 = n_graphs()
    with torch.no_grad():
        for L in (3, 5, 6, 7):
            x = torch.randn(1, L, 4)
            got, want = cf(x.to(DEV)), f(x)
            assert got.shape == want.shape and got.stride() == want.stride(), (got.stride(), want.stride())
            torch.testing.assert_close(got.cpu(), want)
            assert got.view(-1).shape == (4 * L,)
    gs = graphs_since(n0)
    assert len(gs) == 1 and gs[0]["bucketed"] is True, gs


@pytest.mark.parametrize("kind", ["plain", "transposed", "pair", "two_dynamic"])
def test_bucketed_outputs_of_a_batch_have_eager_strides(kind):
    """An output narrowed along a dim behind one of several elements (a batch
    of two) is compacted by the bucket's program itself, with the true sizes
    as host values: eager's strides (also a transposed output's), `view` works,
    two outputs that alias in eager alias here, and each bucket is still one
    program."""
    fns = {"plain": lambda x: torch.tanh(x) * 2,
           "transposed": lambda x: (x * 2).transpose(1, 2),
           "pair": lambda x: (lambda y: (y, y.transpose(1, 2)))(x + 1),
           "two_dynamic": lambda x: x.sin() + 1}
    f = fns[kind]
    cf = torch.compile(f, backend="tpu", dynamic=True)
    n0 = n_graphs()
    lengths = (3, 5, 6, 7, 3, 8)
    new = 0  # programs compiled by the compiled calls after the first two (buckets 4 and 8)
    with torch.no_grad():
        for i, L in enumerate(lengths):
            shape = (L - 1, L, 4) if kind == "two_dynamic" else (2, L, 4)
            x = torch.randn(*shape)
            want = f(x)
            xd = x.to(DEV)
            torch.tpu.synchronize()
            p0 = _programs()
            got = cf(xd)
            torch.tpu.synchronize()
            new += _programs() - p0 if i >= 2 else 0
            want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.stride() == w.stride(), (L, g.stride(), w.stride())
                assert g.storage_offset() == w.storage_offset()
                torch.testing.assert_close(g.cpu(), w)
                assert g.reshape(-1).is_contiguous() and g.contiguous().view(-1).shape == (w.numel(),)
            if kind == "pair":
                assert got[0].untyped_storage().data_ptr() == got[1].untyped_storage().data_ptr()
                got[0][0, 0, 0] = 100.0  # writes through the alias, as on CPU
                assert got[1][0, 0, 0].item() == 100.0
            if kind == "plain":
                assert got[0].view(-1).shape == (2 * L * 4,)
    gs = graphs_since(n0)
    assert len(gs) == 1 and gs[0]["bucketed"] is True, gs
    # buckets 4 and 8 (two_dynamic: the pairs (2, 4), (4, 8), (8, 8) of buckets)
    assert gs[0]["captures"] == (3 if kind == "two_dynamic" else 2), gs
    assert new == (1 if kind == "two_dynamic" else 0), new  # (8, 8) first seen at L=7


def test_compiled_optimizer_step_matches_eager():
    torch.manual_seed(0)
    cpu = nn.Linear(6, 3)
    tpu = copy.deepcopy(cpu).to(DEV)
    oc = torch.optim.AdamW(cpu.parameters(), lr=1e-2)
    ot = torch.optim.AdamW(tpu.parameters(), lr=1e-2)
    step = torch.compile(ot.step, backend="tpu")
    x = torch.randn(4, 6)
    n0, g0 = n_graphs(), len(_compile._graphs)
    for _ in range(6):
        cpu(x).square().sum().backward()
        tpu(x.to(DEV)).square().sum().backward()
        oc.step()
        step()
        oc.zero_grad(), ot.zero_grad()
    for p, q in zip(tpu.parameters(), cpu.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-5, atol=1e-6)
    # the step counts stay on the CPU and advance as eager's, through the host
    # part's C++ fast path (one call, not an FX graph of per-tensor ATen calls)
    for sc, st in zip(oc.state.values(), ot.state.values()):
        assert st["step"].device.type == "cpu" and st["step"].dtype == sc["step"].dtype
        assert torch.equal(st["step"], sc["step"])
        torch.testing.assert_close(st["exp_avg_sq"].cpu(), sc["exp_avg_sq"], rtol=1e-5, atol=1e-7)
    gs = [g for g in graphs_since(n0) if g["kind"] == "inference"]
    assert gs and all(g["refused"] is None for g in gs), gs
    assert sum(g["replays"] for g in gs) >= 3
    fns = [g.host.fn for g in _compile._graphs[g0:] if g.host.fn is not None]
    assert fns and all(getattr(f, "__name__", "") == "counts" for f in fns), fns


@pytest.mark.parametrize("seed", range(3))
def test_host_add_and_copy_scalars_match_aten(seed):
    """_host_add_scalars / _host_copy_scalars (the host fast path) against
    torch.add / copy_ on random 0-dim CPU tensors and numbers, incl. values
    where float32 rounds (2**24 + 1) and tensors they hand to ATen."""
    _C = torch_tpu._C
    g = torch.Generator().manual_seed(seed)
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8]
    numbers = [1, 2, -3, 0.1, 1e-3, 2**24 + 1, 1e30, -0.0, 7.5]
    ts, ks = [], []
    for _ in range(40):
        dt = dtypes[int(torch.randint(len(dtypes), (), generator=g))]
        k = numbers[int(torch.randint(len(numbers), (), generator=g))]
        if not dt.is_floating_point and isinstance(k, float):
            k = int(k) if abs(k) < 100 else 5
        v = float(torch.randn((), generator=g) * 1e4) if dt.is_floating_point else int(torch.randint(0, 100, (), generator=g))
        ts.append(torch.tensor(v if int(torch.randint(4, (), generator=g)) else 16777216.0 if dt.is_floating_point else v,
                               dtype=dt))
        ks.append(k)
    ts.append(torch.randn(3))  # not 0-dim: through ATen
    ks.append(1)
    for t, k in zip(ts, ks):
        got = _C._host_add_scalars([t], k)[0]
        want = torch.add(t, k)
        assert got.dtype == want.dtype and got.shape == want.shape, (t, k)
        assert torch.equal(got, want) or (got.isnan().all() and want.isnan().all()), (t, k, got, want)
    dsts = [torch.zeros((), dtype=t.dtype) if t.dim() == 0 else torch.zeros(3) for t in ts]
    versions = [d._version for d in dsts]
    _C._host_copy_scalars(dsts, ts)
    for d, t, v0 in zip(dsts, ts, versions):
        assert torch.equal(d, t) and d._version > v0
    # a view's bytes (a 0-dim element of a larger tensor) and a dtype change (through copy_)
    base = torch.zeros(4)
    _C._host_copy_scalars([base[2], base[1]], [torch.tensor(5.0), torch.tensor(3, dtype=torch.int64)])
    assert base.tolist() == [0.0, 3.0, 5.0, 0.0]
    with pytest.raises(RuntimeError):
        _C._host_copy_scalars([base[0]], [])


def test_program_dropped_from_cache_is_recorded_again():
    def f(x):
        return (x * 3).tanh()

    cf = torch.compile(f, backend="tpu")
    x = torch.randn(7)
    torch.testing.assert_close(cf(x.to(DEV)).cpu(), f(x))
    torch.tpu._clear_cache()
    torch.testing.assert_close(cf(x.to(DEV)).cpu(), f(x))
    torch.testing.assert_close(cf(x.to(DEV)).cpu(), f(x))


# An op with no lowering (CPU and Meta kernels only), as in test_modes_and_errors.
_lib = torch.library.Library("tt_test_compile", "DEF")
_lib.define("missing(Tensor self) -> Tensor")
_lib.impl("missing", lambda a: torch.atan(a) * 2, "CPU")
_lib.impl("missing", lambda a: torch.empty_like(a), "Meta")


def test_error_names_the_op_and_fx_node():
    def f(x):
        return torch.ops.tt_test_compile.missing(x.sin()) + 1

    cf = torch.compile(f, backend="tpu")
    with pytest.raises(NotImplementedError) as ei:  # eager's error type
        cf(torch.randn(4, device=DEV))
    msg = str(ei.value)
    assert "tt_test_compile::missing" in msg and "is not supported on the tpu device" in msg
    assert "FX node" in msg and "missing" in msg


def test_cpu_fallback_inside_a_graph_is_not_captured():
    def f(x):
        return torch.ops.tt_test_compile.missing(x.sin()) + 1

    cf = torch.compile(f, backend="tpu")
    n0 = n_graphs()
    torch_tpu.cpu_fallback(True)
    try:
        for _ in range(3):
            x = torch.randn(4)
            torch.testing.assert_close(cf(x.to(DEV)).cpu(), f(x))
    finally:
        torch_tpu.cpu_fallback(False)
    gs = graphs_since(n0)
    assert gs and all(g["refused"] and g["replays"] == 0 for g in gs), gs


def test_dump_dir_holds_the_compiled_graph(tmp_path):
    """TORCH_TPU_DUMP_DIR: a compiled graph's program is dumped (by its name)."""
    import os
    import subprocess
    import sys

    code = ("import torch, torch_tpu\n"
            "f = torch.compile(lambda x: (x * 2).sin().sum(), backend='tpu')\n"
            "x = torch.arange(8.0, device='tpu')\n"
            "print([round(f(x).item(), 4) for _ in range(3)])\n")
    env = dict(os.environ, TORCH_TPU_DUMP_DIR=str(tmp_path / "dump"), TORCH_TPU_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    want = round(torch.arange(8.0).mul(2).sin().sum().item(), 4)
    assert p.stdout.strip() == str([want] * 3)
    dumped = [f for f in os.listdir(tmp_path / "dump") if "compiled_graph" in f]
    assert len(dumped) == 1, os.listdir(tmp_path / "dump")
    text = (tmp_path / "dump" / dumped[0]).read_text()
    assert "stablehlo.sine" in text or "sine" in text


def test_compiled_graphs_since_a_serial_past_the_kept_256():
    """compiled_graphs keeps the newest 256 graphs; graph_serial() still names what later calls compiled
    (an index into the list would not, once it is full)."""
    from types import SimpleNamespace
    for _ in range(300):
        _compile._note(SimpleNamespace(kind="test", recordings=0, replays=0, captures=[], refused=None,
                                       bucket=None))
    n0 = n_graphs()
    c = torch.compile(lambda x: x * 3 + 1, backend="tpu", fullgraph=True)
    x = torch.rand(4)
    for _ in range(2):
        torch.testing.assert_close(c(x.to("tpu")).cpu(), x * 3 + 1)
    gs = graphs_since(n0)
    assert len(gs) == 1 and gs[0]["serial"] == n0 + 1 and gs[0]["replays"] >= 1, gs
    assert len(_compile.compiled_graphs()) == 256
