"""Tensors of high rank (up to 25 dims, the bound CUDA's kernels have; the core's
TT_MAX_RANK): copies, views, elementwise ops, reductions, indexing, cat/stack
at ranks 9..25, in Strict and in Fused Eager, against PyTorch on the CPU.

Shapes are mostly size-1 dims with a few of size 2 or 3, so every test moves a
few hundred elements and stays fast; which dims are wide varies with the rank."""
import pytest
import torch

import torch_tpu

MODES = ["strict", "fused"]
MAX_RANK = 25


def shape_of(rank, wide=4):
    """`rank` dims, `wide` of them (spread out, the last included) of size 2 or 3."""
    s = [1] * rank
    for k in range(min(wide, rank)):
        s[rank - 1 - (k * rank) // wide] = 2 + k % 2
    return s


def rand(rank, seed=0, wide=4):
    g = torch.Generator().manual_seed(seed + rank)
    return torch.randn(shape_of(rank, wide), generator=g)


def perm_of(rank):
    """A permutation that moves every wide dim: the last dim first, then the even
    dims, then the odd ones."""
    return [rank - 1] + list(range(0, rank - 1, 2)) + list(range(1, rank - 1, 2))


def check(mode, fn, *cpu_args):
    """fn on the CPU and on tpu copies of the arguments (in `mode`); the results
    and the arguments afterwards (in-place ops) must match."""
    want = fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in cpu_args])
    cpu_after = [a.clone() if isinstance(a, torch.Tensor) else a for a in cpu_args]
    fn(*cpu_after)
    dev_args = [a.to("tpu") if isinstance(a, torch.Tensor) else a for a in cpu_args]
    with torch_tpu.eager_mode(mode):
        got = fn(*dev_args)
        torch.tpu.synchronize()
    wants = want if isinstance(want, (tuple, list)) else (want,)
    gots = got if isinstance(got, (tuple, list)) else (got,)
    assert len(wants) == len(gots)
    for w, g in zip(wants, gots):
        assert g.device.type == "tpu"
        assert g.shape == w.shape and g.dtype == w.dtype
        assert g.stride() == w.stride(), (g.stride(), w.stride())
        torch.testing.assert_close(g.cpu(), w)
    for a, d in zip(cpu_after, dev_args):
        if isinstance(a, torch.Tensor):
            torch.testing.assert_close(d.cpu(), a)


# ---- copies -------------------------------------------------------------------------------
@pytest.mark.parametrize("rank", [9, 12, 16, 25])
def test_round_trip_and_strided_copies(rank):
    x = rand(rank)
    d = x.to("tpu")
    assert d.dim() == rank and d.shape == x.shape and d.stride() == x.stride()
    torch.testing.assert_close(d.cpu(), x)
    p = perm_of(rank)
    # a non-contiguous tpu view read back, a non-contiguous CPU tensor sent over
    torch.testing.assert_close(d.permute(p).cpu(), x.permute(p))
    torch.testing.assert_close(x.permute(p).to("tpu").cpu(), x.permute(p))
    # tpu -> tpu: into a permuted destination, from a permuted source
    dst = torch.zeros_like(d)
    dst.permute(p).copy_(d.permute(p) * 2)
    torch.testing.assert_close(dst.cpu(), x * 2)
    torch.testing.assert_close(d.permute(p).contiguous().cpu(), x.permute(p).contiguous())
    torch.testing.assert_close(d.permute(p).clone().cpu(), x.permute(p).clone())


@pytest.mark.parametrize("mode", MODES)
def test_views_and_writes_through_views(mode):
    def fn(x):
        r = x.dim()
        p = perm_of(r)
        v = x.permute(p)
        v.narrow(0, 0, 1).mul_(-1)            # dim 0 of v is x's last (size 2)
        x.select(r - 1, 1).add_(10)           # through a select
        x.transpose(0, r - 1)[1:].sub_(0.5)   # through a transposed slice
        flat = x.reshape(-1)
        e = x.sum(r - 1, keepdim=True).expand(x.shape)
        s = x.as_strided((2, 3), (1, 2), 1)
        return v + 1, x.unsqueeze(3).squeeze(3) * 3, flat.view(x.shape).neg(), e.clone(), s * 1

    check(mode, fn, rand(MAX_RANK - 1))
    check(mode, fn, rand(12))


# ---- elementwise, reductions ---------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [12, 25])
def test_elementwise_broadcast(mode, rank):
    def fn(a, b):
        return a * b + 1, torch.where(a > 0, a.sin(), b.expand(a.shape)), (a.exp() - b).abs().sqrt()

    a = rand(rank)
    b = rand(rank, seed=1, wide=1)  # one wide dim: broadcasts against every other
    check(mode, fn, a, b)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [12, 16, 25])
def test_reductions(mode, rank):
    def fn(x):
        r = x.dim()
        m, i = x.max(dim=r - 1)
        return (x.sum(), x.sum(dim=[0, r // 2, r - 1]), x.mean(dim=r - 1, keepdim=True), m, i,
                x.argmax(), x.argmax(dim=r // 2, keepdim=True), x.amax(dim=(1, r - 2)),
                torch.softmax(x, dim=r - 1), torch.log_softmax(x, dim=0), x.cumsum(r - 1))

    check(mode, fn, rand(rank))


@pytest.mark.parametrize("mode", MODES)
def test_reductions_of_a_permuted_view(mode):
    def fn(x):
        v = x.permute(perm_of(x.dim()))
        return v.sum(dim=0), v.amax(dim=-1), torch.softmax(v, dim=-1)

    check(mode, fn, rand(MAX_RANK))


# ---- shapes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [12, 25])
def test_cat_stack_permute_reshape_expand(mode, rank):
    def fn(a, b):
        r = a.dim()
        out = [torch.cat([a, b], dim=r - 1), torch.cat([a, b], dim=0), a.permute(perm_of(r)).contiguous(),
               a.reshape(a.shape[::-1]), a.flip(r - 1), a.roll(1, r - 1)]
        if r < MAX_RANK:
            out.append(torch.stack([a, b], dim=r // 2))  # one more dim
        else:
            out.append(torch.stack([a[..., 0], b[..., 0]], dim=r - 1))  # back to rank r
        one = a.sum(dim=r - 1, keepdim=True)
        out.append(one.expand(a.shape) - a)
        return out

    check(mode, fn, rand(rank), rand(rank, seed=7))


# ---- indexing ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [12, 25])
def test_index_and_index_put(mode, rank):
    def fn(x, i, j, v):
        r = x.dim()
        lead = (slice(None),) * (r - 1)
        got = [x[i], x[lead + (j,)], x.index_select(r - 1, j), x[..., 1]]
        x[i] = v
        x[lead + (j,)] += 1
        x.index_put_((i,), v * 2, accumulate=True)
        return got

    x = rand(rank)  # dim 0 is 1 wide unless the rank is small: index the wide dims
    i = torch.tensor([0, 0])
    j = torch.tensor([1, 0, 1])
    v = torch.full((2,) + x.shape[1:], 0.25)
    check(mode, fn, x, i, j, v)


@pytest.mark.parametrize("mode", MODES)
def test_index_tensors_of_high_rank(mode):
    """The index tensors themselves have 25 and 24 dims."""
    def fn(x1, x2, i, j, k):
        got = [x1[i], x2[:, j], x2[k, j]]
        x1.index_put_((i,), torch.ones(i.shape, device=x1.device), accumulate=True)
        x2[:, j] = -1.0
        x2[k, j] = 2.0
        return got

    g = torch.Generator().manual_seed(11)
    x1 = torch.randn(4, generator=g)
    x2 = torch.randn(4, 3, generator=g)
    i = torch.randint(-4, 4, shape_of(MAX_RANK), generator=g)  # x1[i]: 25 dims
    j = torch.randint(0, 3, shape_of(MAX_RANK - 1), generator=g)  # x2[:, j]: 1 + 24 dims
    k = torch.randint(0, 4, shape_of(MAX_RANK - 1), generator=g)
    check(mode, fn, x1, x2, i, j, k)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [12, 25])
def test_gather_scatter(mode, rank):
    def fn(x, idx, src):
        r = x.dim()
        return (x.gather(r - 1, idx), x.scatter(r - 1, idx, src), x.scatter_add(r - 1, idx, src),
                x.scatter_reduce(r - 1, idx, src, "amax"), torch.take_along_dim(x, idx, dim=r - 1))

    x = rand(rank)
    g = torch.Generator().manual_seed(3)
    idx = torch.randint(0, x.shape[-1], x.shape, generator=g)
    src = torch.randn(x.shape, generator=g)
    check(mode, fn, x, idx, src)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [12, 25])
def test_masked(mode, rank):
    def fn(x, m):
        y = x.masked_fill(m, -1.0)
        x.masked_fill_(~m, 2.0)
        z = x.clone()
        z[m] = 5.0
        return y, z, torch.where(m, x, y)

    x = rand(rank)
    m = rand(rank, seed=5) > 0
    check(mode, fn, x, m)
    # the boolean-mask read (its size comes from the data)
    xd, md = x.to("tpu"), m.to("tpu")
    with torch_tpu.eager_mode(mode):
        torch.testing.assert_close(xd[md].cpu(), x[m])
        torch.testing.assert_close(xd.masked_select(md).cpu(), x.masked_select(m))


# ---- the bound -------------------------------------------------------------------------------
def test_beyond_the_bound_is_a_clear_error():
    x = torch.zeros([1] * (MAX_RANK + 1))
    with pytest.raises(RuntimeError, match=f"at most {MAX_RANK} dimensions, got {MAX_RANK + 1}"):
        x.to("tpu")
    d = torch.zeros([1] * MAX_RANK, device="tpu")
    with pytest.raises(RuntimeError, match=f"at most {MAX_RANK} dimensions"):
        (d.unsqueeze(0) + 1).cpu()
