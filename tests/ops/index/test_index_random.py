"""Randomized index ops against PyTorch CPU (issue 8, item 1): random shapes, dims, value
dtypes, index dtypes (int32 / int64 where CPU takes both) and layouts (contiguous, strided
with gaps, transposed, with a storage offset) of the self, source and index tensors.

In-place ops run on a view of a larger base, and the whole base is compared afterwards, so
a write outside the view shows. Values are small integers (also in floating point), so
sums and products are exact whatever the order of accumulation; indices that CPU leaves
undefined when repeated (copy, put without accumulate, scatter) are drawn without repeats.
`TT_INDEX_CASES` sets the cases per op (default 10; 40 in `make test-full`)."""
import random

import pytest
import torch

from ops_util import dev
from suite import cases, sweep

CASES = cases("TT_INDEX_CASES", 10, 40)
VALUE_DTYPES = [torch.float32, torch.bfloat16, torch.int64, torch.int32]
LAYOUTS = ["contiguous", "strided", "transposed", "offset"]


def rand_values(rng, shape, dtype):
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    return torch.randint(-3, 4, shape, generator=g).to(dtype)


class Laid:
    """A tensor laid out as `kind` inside a larger base, the same on CPU and on tpu."""

    def __init__(self, x, kind, rng):
        self.kind = "contiguous" if (kind == "transposed" and x.dim() < 2) or \
            (kind == "strided" and x.dim() < 1) else kind
        shape = tuple(x.shape)
        if self.kind == "strided":
            big = rand_values(rng, shape[:-1] + (2 * shape[-1] + 1,), x.dtype)
            self.view = lambda t: t[..., 1::2]
        elif self.kind == "transposed":
            big = x.transpose(0, -1).contiguous()
            self.view = lambda t: t.transpose(0, -1)
        elif self.kind == "offset":
            k = rng.randrange(1, 6)
            big = rand_values(rng, (k + x.numel(),), x.dtype)
            self.view = lambda t: t[k:].view(shape)
        else:
            big = x.clone()
            self.view = lambda t: t
        self.view(big).copy_(x)
        self.cpu_base, self.dev_base = big, big.to(dev)
        self.cpu, self.dev = self.view(self.cpu_base), self.view(self.dev_base)
        assert self.cpu.shape == x.shape and torch.equal(self.cpu, x)
        assert self.dev.stride() == self.cpu.stride() and \
            self.dev.storage_offset() == self.cpu.storage_offset()


def lay(x, rng, kinds=LAYOUTS):
    return Laid(x, rng.choice(kinds), rng)


def rand_shape(rng, rank_lo=1, rank_hi=4, hi=5):
    return tuple(rng.randint(1, hi) for _ in range(rng.randint(rank_lo, rank_hi)))


def rand_index(rng, n, size, dtype, unique=False):
    """n indices in [0, size), int32 or int64; unique: without repeats."""
    if unique:
        vals = rng.sample(range(size), min(n, size))
    else:
        vals = [rng.randrange(size) for _ in range(n)]
    return torch.tensor(vals, dtype=dtype)


def index_dtype(rng):
    return rng.choice([torch.int32, torch.int64])


def compare(got, want, what):
    assert got.device.type == "tpu", what
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0, equal_nan=True,
                               msg=lambda m: f"{what}\n{m}")


def compare_inplace(laid, what):
    """The whole base: the view's values and the untouched memory around it."""
    compare(laid.dev_base, laid.cpu_base, what + " (whole base)")


def describe(**kw):
    return ", ".join(f"{k}={tuple(v.shape) if isinstance(v, torch.Tensor) else v}"
                     + (f"/{v.dtype}" if isinstance(v, torch.Tensor) else "") for k, v in kw.items())


# ---- cases: each draws its inputs from rng and checks one op ----------------------------

def case_index_select(rng):
    dt = rng.choice(VALUE_DTYPES + [torch.bool])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    dim = rng.randrange(x.cpu.dim())
    idx = lay(rand_index(rng, rng.randint(0, 6), x.cpu.shape[dim], index_dtype(rng)), rng,
              ["contiguous", "strided", "offset"])
    what = describe(x=x.cpu, dim=dim, idx=idx.cpu) + f" layout={x.kind}/{idx.kind}"
    compare(torch.index_select(x.dev, dim, idx.dev), torch.index_select(x.cpu, dim, idx.cpu), what)


def _index_src(rng, x, dim, n, dt):
    shape = list(x.cpu.shape)
    shape[dim] = n
    return lay(rand_values(rng, tuple(shape), dt), rng)


def case_index_add(rng):
    dt = rng.choice(VALUE_DTYPES)
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    dim = rng.randrange(x.cpu.dim())
    n = rng.randint(0, 6)
    idx = lay(rand_index(rng, n, x.cpu.shape[dim], index_dtype(rng)), rng, ["contiguous", "strided"])
    src = _index_src(rng, x, dim, n, dt)
    alpha = rng.choice([1, 2, -1])
    what = describe(x=x.cpu, dim=dim, idx=idx.cpu, src=src.cpu) + f" alpha={alpha} layout={x.kind}"
    x.cpu.index_add_(dim, idx.cpu, src.cpu, alpha=alpha)
    x.dev.index_add_(dim, idx.dev, src.dev, alpha=alpha)
    compare_inplace(x, what)


def case_index_copy(rng):
    dt = rng.choice(VALUE_DTYPES + [torch.bool])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    dim = rng.randrange(x.cpu.dim())
    idx = rand_index(rng, rng.randint(0, 6), x.cpu.shape[dim], torch.int64, unique=True)
    src = _index_src(rng, x, dim, idx.numel(), dt)
    what = describe(x=x.cpu, dim=dim, idx=idx, src=src.cpu) + f" layout={x.kind}/{src.kind}"
    x.cpu.index_copy_(dim, idx, src.cpu)
    x.dev.index_copy_(dim, idx.to(dev), src.dev)
    compare_inplace(x, what)


def case_index_fill(rng):
    dt = rng.choice(VALUE_DTYPES + [torch.bool])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    dim = rng.randrange(x.cpu.dim())
    idx = rand_index(rng, rng.randint(0, 6), x.cpu.shape[dim], torch.int64)
    value = True if dt == torch.bool else rng.choice([5, -2])
    what = describe(x=x.cpu, dim=dim, idx=idx) + f" layout={x.kind}"
    x.cpu.index_fill_(dim, idx, value)
    x.dev.index_fill_(dim, idx.to(dev), value)
    compare_inplace(x, what)


def case_index_reduce(rng):
    reduce = rng.choice(["prod", "mean", "amax", "amin"])
    dt = rng.choice(VALUE_DTYPES if reduce != "mean" else [torch.float32, torch.bfloat16, torch.int64])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    dim = rng.randrange(x.cpu.dim())
    n = rng.randint(0, 6)
    idx = lay(rand_index(rng, n, x.cpu.shape[dim], index_dtype(rng)), rng, ["contiguous", "strided"])
    src = _index_src(rng, x, dim, n, dt)
    include_self = rng.random() < 0.5
    what = describe(x=x.cpu, dim=dim, idx=idx.cpu, src=src.cpu) + \
        f" reduce={reduce} include_self={include_self} layout={x.kind}/{src.kind}"
    x.cpu.index_reduce_(dim, idx.cpu, src.cpu, reduce, include_self=include_self)
    x.dev.index_reduce_(dim, idx.dev, src.dev, reduce, include_self=include_self)
    compare_inplace(x, what)


def _gather_index(rng, x, dim, unique):
    """An int64 index no larger than x in every dim but `dim` (scatter/gather's rule)."""
    shape = [rng.randint(1, s) for s in x.shape]
    shape[dim] = rng.randint(1, x.shape[dim] + (0 if unique else 2))
    n = shape[dim]
    rows = []
    flat = int(torch.tensor(shape).prod()) // n
    for _ in range(flat):
        if unique:
            rows.append(rng.sample(range(x.shape[dim]), n))
        else:
            rows.append([rng.randrange(x.shape[dim]) for _ in range(n)])
    t = torch.tensor(rows, dtype=torch.int64).reshape([s for i, s in enumerate(shape) if i != dim] + [n])
    return t.movedim(-1, dim).contiguous()


def case_gather(rng):
    dt = rng.choice(VALUE_DTYPES + [torch.bool])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    dim = rng.randrange(x.cpu.dim())
    idx = lay(_gather_index(rng, x.cpu, dim, unique=False), rng)
    what = describe(x=x.cpu, dim=dim, idx=idx.cpu) + f" layout={x.kind}/{idx.kind}"
    compare(torch.gather(x.dev, dim, idx.dev), torch.gather(x.cpu, dim, idx.cpu), what)


def case_scatter(rng):
    dt = rng.choice(VALUE_DTYPES + [torch.bool])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    dim = rng.randrange(x.cpu.dim())
    idx = lay(_gather_index(rng, x.cpu, dim, unique=True), rng)
    src = lay(rand_values(rng, tuple(idx.cpu.shape), dt), rng)
    what = describe(x=x.cpu, dim=dim, idx=idx.cpu, src=src.cpu) + f" layout={x.kind}/{idx.kind}/{src.kind}"
    x.cpu.scatter_(dim, idx.cpu, src.cpu)
    x.dev.scatter_(dim, idx.dev, src.dev)
    compare_inplace(x, what)


def case_scatter_reduce(rng):
    reduce = rng.choice(["sum", "prod", "mean", "amax", "amin"])
    dt = rng.choice(VALUE_DTYPES if reduce != "mean" else [torch.float32, torch.bfloat16, torch.int64])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    dim = rng.randrange(x.cpu.dim())
    idx = lay(_gather_index(rng, x.cpu, dim, unique=False), rng)
    src = lay(rand_values(rng, tuple(idx.cpu.shape), dt), rng)
    include_self = rng.random() < 0.5
    what = describe(x=x.cpu, dim=dim, idx=idx.cpu, src=src.cpu) + \
        f" reduce={reduce} include_self={include_self} layout={x.kind}/{idx.kind}/{src.kind}"
    if reduce == "sum" and rng.random() < 0.5:
        x.cpu.scatter_add_(dim, idx.cpu, src.cpu)
        x.dev.scatter_add_(dim, idx.dev, src.dev)
    else:
        x.cpu.scatter_reduce_(dim, idx.cpu, src.cpu, reduce, include_self=include_self)
        x.dev.scatter_reduce_(dim, idx.dev, src.dev, reduce, include_self=include_self)
    compare_inplace(x, what)


def case_take_put(rng):
    dt = rng.choice(VALUE_DTYPES)
    x = lay(rand_values(rng, rand_shape(rng, 0, 4), dt), rng)
    n = rng.randint(0, 6)
    accumulate = rng.random() < 0.5
    numel = x.cpu.numel()
    flat = rand_index(rng, n, numel, torch.int64, unique=not accumulate)
    flat = torch.where(torch.rand(flat.shape) < 0.3, flat - numel, flat)  # negative indices
    idx = lay(flat.reshape(-1, 1) if rng.random() < 0.5 else flat, rng, ["contiguous", "strided", "offset"])
    what = describe(x=x.cpu, idx=idx.cpu) + f" accumulate={accumulate} layout={x.kind}/{idx.kind}"
    compare(torch.take(x.dev, idx.dev), torch.take(x.cpu, idx.cpu), "take " + what)
    src = rand_values(rng, tuple(idx.cpu.shape), dt)
    x.cpu.put_(idx.cpu, src, accumulate=accumulate)
    x.dev.put_(idx.dev, src.to(dev), accumulate=accumulate)
    compare_inplace(x, "put_ " + what)


def _advanced_indices(rng, x, unique):
    """Index tensors (int32 / int64, broadcastable) for a random run of x's dims, or a mask."""
    shape = x.shape
    if rng.random() < 0.25:
        k = rng.randint(1, len(shape))
        start = rng.randrange(len(shape) - k + 1)
        mask = torch.rand(shape[start:start + k]) < 0.5
        return (slice(None),) * start + (mask,), f"mask at {start}"
    start = rng.randrange(len(shape))
    k = rng.randint(1, len(shape) - start)
    n = rng.randint(1, 4)
    dts = [index_dtype(rng) for _ in range(k)]
    if unique:
        # distinct tuples: index a flattened run of dims without repeats
        sizes = shape[start:start + k]
        total = int(torch.tensor(sizes).prod())
        flat = torch.tensor(rng.sample(range(total), min(n, total)))
        idx = []
        for s in reversed(sizes):
            idx.append(flat % s)
            flat = flat // s
        idx = [t.to(d) for t, d in zip(reversed(idx), dts)]
    else:
        idx = [rand_index(rng, n, s, d) for s, d in zip(shape[start:start + k], dts)]
    if k >= 2 and rng.random() < 0.3 and not unique:
        idx[0] = idx[0].reshape(-1, 1)  # broadcast index tensors
    if rng.random() < 0.3:
        idx = [torch.where(t % 2 == 0, t - s, t).to(t.dtype) for t, s in zip(idx, shape[start:start + k])]
    return (slice(None),) * start + tuple(idx), f"dims {start}..{start + k - 1} {[d for d in dts]}"


def _to_dev_index(ix):
    return tuple(t.to(dev) if isinstance(t, torch.Tensor) else t for t in ix)


def case_advanced_read(rng):
    dt = rng.choice(VALUE_DTYPES + [torch.bool])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    ix, how = _advanced_indices(rng, x.cpu, unique=False)
    what = describe(x=x.cpu) + f" {how} layout={x.kind}"
    compare(x.dev[_to_dev_index(ix)], x.cpu[ix], what)


def case_advanced_write(rng):
    dt = rng.choice(VALUE_DTYPES)
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    accumulate = rng.random() < 0.5
    ix, how = _advanced_indices(rng, x.cpu, unique=not accumulate)
    out_shape = x.cpu[ix].shape
    v = rand_values(rng, out_shape if rng.random() < 0.7 else out_shape[-1:], dt)
    what = describe(x=x.cpu, v=v) + f" {how} accumulate={accumulate} layout={x.kind}"
    if accumulate or rng.random() < 0.5:
        # index_put_ with None for the leading full dims
        opt = tuple(None if isinstance(t, slice) else t for t in ix)
        torch.ops.aten.index_put_(x.cpu, list(opt), v, accumulate)
        torch.ops.aten.index_put_(x.dev, [None if t is None else t.to(dev) for t in opt], v.to(dev),
                                  accumulate)
    else:
        x.cpu[ix] = v
        x.dev[_to_dev_index(ix)] = v.to(dev)
    compare_inplace(x, what)


def case_masked(rng):
    dt = rng.choice(VALUE_DTYPES + [torch.bool])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    k = rng.randint(0, x.cpu.dim())
    mask = lay(torch.rand(x.cpu.shape[k:]) < 0.5, rng)
    what = describe(x=x.cpu, mask=mask.cpu) + f" layout={x.kind}/{mask.kind}"
    compare(torch.masked_select(x.dev, mask.dev), torch.masked_select(x.cpu, mask.cpu), "masked_select " + what)
    src = rand_values(rng, (x.cpu.numel(),), dt)
    value = True if dt == torch.bool else 7
    x.cpu.masked_fill_(mask.cpu, value)
    x.dev.masked_fill_(mask.dev, value)
    compare_inplace(x, "masked_fill_ " + what)
    x.cpu.masked_scatter_(mask.cpu, src)
    x.dev.masked_scatter_(mask.dev, src.to(dev))
    compare_inplace(x, "masked_scatter_ " + what)


def case_index_put_mask(rng):
    """x[..., mask, ...] = values (index_put with one boolean mask, accumulate or not): values
    that do not vary along the masked elements (one number, or broadcast along them) take
    the select path (no sync), the others the positions of the true elements; values that do
    not fit raise CPU's error."""
    dt = rng.choice(VALUE_DTYPES + [torch.bool])
    x = lay(rand_values(rng, rand_shape(rng), dt), rng)
    shape = tuple(x.cpu.shape)
    p = rng.randint(0, len(shape) - 1)
    mr = rng.randint(1, len(shape) - p)
    mask = lay(torch.rand(shape[p:p + mr]) < rng.choice([0.0, 0.5, 1.0]), rng)
    nnz = int(mask.cpu.sum())
    rest = shape[:p] + (1,) + shape[p + mr:]  # self[mask]'s shape, the masked count as 1
    kind = rng.choice(["0-dim", "one", "broadcast", "full", "count", "wrong"])
    if kind == "0-dim":
        vshape = ()
    elif kind == "one":
        vshape = (1,) * rng.randint(1, len(rest))
    elif kind == "broadcast":  # a suffix of rest, some dims made 1
        vshape = tuple(d if rng.random() < 0.6 else 1 for d in rest[rng.randint(0, len(rest) - 1):])
    elif kind == "full":
        vshape = rest
    elif kind == "count":  # one value per masked element
        vshape = shape[:p] + (nnz,) + shape[p + mr:]
    else:
        vshape = shape[:p] + (nnz + 2,) + shape[p + mr:]
    vals = lay(rand_values(rng, vshape, dt), rng, ["contiguous", "offset"])
    acc = rng.random() < 0.4 and dt != torch.bool
    cpu_mask = rng.random() < 0.2
    idx = [None] * p + [mask.cpu]
    idx_dev = [None] * p + [mask.cpu if cpu_mask else mask.dev]
    what = describe(x=x.cpu, mask=mask.cpu, values=vals.cpu) + \
        f" p={p} acc={acc} cpu_mask={cpu_mask} layout={x.kind}/{mask.kind}"
    try:
        torch.ops.aten.index_put_(x.cpu, idx, vals.cpu, acc)
    except (RuntimeError, IndexError) as e:
        with pytest.raises(type(e)):
            torch.ops.aten.index_put_(x.dev, idx_dev, vals.dev, acc)
            x.dev_base.cpu()
        return
    r = torch.ops.aten.index_put_(x.dev, idx_dev, vals.dev, acc)
    assert r is x.dev, what
    compare_inplace(x, "index_put_ " + what)
    out = torch.ops.aten.index_put(x.dev, idx_dev, vals.dev, acc)
    want = torch.ops.aten.index_put(x.cpu, idx, vals.cpu, acc)
    big = [d for d in range(want.dim()) if want.shape[d] > 1]  # (a size-1 dim's stride carries no layout)
    assert [out.stride(d) for d in big] == [want.stride(d) for d in big], what
    compare(out, want, "index_put " + what)


CASES_BY_OP = {name[5:]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("op", sorted(CASES_BY_OP))
def test_index_random(op, seed):
    rng = random.Random(f"{op}/{seed}")
    CASES_BY_OP[op](rng)


# ---- Python indexing: x[idx] and x[idx] = v with mixed index kinds ---------------------
ALL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16,
              torch.bfloat16, torch.float32, torch.float64]


def _rand_index(rng, shape):
    idx = []
    for n in shape:
        r = rng.random()
        if r < 0.25:
            idx.append(slice(None))
        elif r < 0.45:
            idx.append(slice(rng.randint(-n, n), rng.randint(-n, n), rng.choice([1, 2, 3])))
        elif r < 0.6:
            idx.append(rng.randint(-n, n - 1))
        elif r < 0.75:
            idx.append(torch.tensor([rng.randrange(-n, n) for _ in range(rng.choice([1, 2, 3]))]))
        elif r < 0.82:
            idx.append(None)
        elif r < 0.9:
            idx.append(torch.tensor([rng.random() < 0.5 for _ in range(n)]))
        else:
            idx.append(Ellipsis)
            break
    return tuple(idx)


def _on(idx, device):
    return tuple(i.to(device) if isinstance(i, torch.Tensor) else i for i in idx)


@pytest.mark.parametrize("seed", range(sweep(1, 3)))
def test_python_indexing_random(seed):
    """Slices with steps, ints, None, Ellipsis, integer and boolean tensors mixed; reads,
    writes of scalars and of tensors (another dtype: CPU refuses it unless one value goes
    through a mask), += and in-place ops through the indexed view. The tpu raises where CPU
    raises (mismatched index shapes: IndexError) and otherwise equals CPU exactly."""
    rng = random.Random(500 + seed)
    for _ in range(150):
        dt = rng.choice(ALL_DTYPES)
        shape = rng.choice([(5,), (4, 5), (3, 4, 5), (2, 3, 4, 2)])
        g = torch.Generator().manual_seed(rng.randrange(1 << 30))
        x = (torch.randn(shape, generator=g) * 4).round().to(dt)
        if rng.random() < 0.3 and x.dim() >= 2:
            x = x.transpose(0, -1)
        idx = _rand_index(rng, x.shape)
        kind = rng.choice(["get", "set", "set_t", "iadd", "view_inplace"])
        scalar = rng.choice([1, -2.5, True, 0])
        vdt = rng.choice(ALL_DTYPES)

        def run(t, device):
            i = _on(idx, device)
            if kind == "get":
                return t[i].clone()
            t = t.clone()
            if kind == "set":
                t[i] = scalar
            elif kind == "set_t":
                sub = t[i]
                shp = sub.shape[-1:] if sub.dim() and (len(sub.shape) % 2) else sub.shape
                t[i] = torch.arange(max(1, int(torch.Size(shp).numel()))).reshape(shp).to(vdt).to(device)
            elif kind == "iadd":
                t[i] += 1
            else:
                sub = t[i]
                sub.logical_not_() if t.dtype == torch.bool else sub.mul_(2)
            return t

        try:
            want, err = run(x, "cpu"), None
        except Exception as e:  # noqa: BLE001 - CPU's error is the reference
            want, err = None, e
        where = f"{kind} {dt} {tuple(x.shape)} {idx}"
        if err is not None:
            with pytest.raises(type(err)):
                run(x.to(dev), dev).cpu()
            continue
        got = run(x.to(dev), dev).cpu()
        assert got.dtype == want.dtype and got.shape == want.shape, where
        assert torch.equal(got, want), where
