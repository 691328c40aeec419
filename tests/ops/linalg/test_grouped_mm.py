"""torch._grouped_mm (csrc/core/lower/linalg/grouped_mm.c) against PyTorch CPU:
the four forms, empty groups and offsets that end before the rows do, forward and
gradients, in Strict and Fused Eager and under torch.compile(backend="tpu"); the
offsets are runtime values (new offsets compile no program).

Where no group covers a row (column) CPU leaves the output unwritten (the
allocation's old bytes); tpu writes 0 there, and the comparisons zero those
positions of CPU's results first."""
import re

import pytest
import torch

import torch_tpu
from ops_util import dev, make

I32 = torch.int32
# (a, b, offsets): 2-D x 3-D groups rows, 3-D x 2-D columns, 2-D x 2-D the K dim; an empty
# group and offsets ending before the grouped dim ends, in each. Sizes keep CPU's 16-byte
# stride alignment for bfloat16, also of the transposed operands its backward makes.
FORMS = {
    "2d3d": ((24, 16), (4, 16, 8), [5, 5, 13, 20]),
    "3d2d": ((4, 8, 16), (16, 24), [6, 6, 14, 20]),
    "2d2d": ((8, 24), (24, 16), [6, 6, 14, 20]),
    "3d3d": ((3, 8, 16), (3, 16, 8), None),
}
DTYPES = [torch.float32, torch.bfloat16]


def gmm(a, b, offs):
    return torch._grouped_mm(a, b, offs=offs)


def last_end(offs):
    return int(offs.max()) if offs is not None and len(offs) else 0


def covered(out, a, b, offs):
    """CPU's output with the positions no group writes set to 0 (tpu's value there)."""
    out = out.detach().clone()
    if offs is not None and a.dim() == 2 and b.dim() == 3:
        out[last_end(offs):] = 0
    elif offs is not None and a.dim() == 3 and b.dim() == 2:
        out[:, last_end(offs):] = 0
    return out


def inputs(form, dtype, offs_vals=None, seed=0):
    sa, sb, o = FORMS[form]
    o = offs_vals if offs_vals is not None else o
    offs = None if o is None else torch.tensor(o, dtype=I32)
    return make(sa, dtype, seed=seed), make(sb, dtype, seed=seed + 1), offs


def to_dev(x):
    return None if x is None else x.to(dev)


def run_fwd_bwd(fn, a, b, offs, w):
    a = a.detach().clone().requires_grad_(True)
    b = b.detach().clone().requires_grad_(True)
    out = fn(a, b, offs)
    (out * w).sum().backward()
    return out, a.grad, b.grad


def compare(fn, form, dtype, offs_vals=None, seed=0):
    a, b, offs = inputs(form, dtype, offs_vals, seed)
    w = make(gmm(a, b, offs).shape, dtype, seed=seed + 7)
    want = run_fwd_bwd(gmm, a, b, offs, w)
    got = run_fwd_bwd(fn, a.to(dev), b.to(dev), to_dev(offs), w.to(dev))
    assert got[0].device.type == "tpu" and got[0].dtype == dtype
    assert got[0].shape == want[0].shape and got[0].stride() == want[0].stride()
    torch.testing.assert_close(got[0].detach().cpu(), covered(want[0], a, b, offs))
    # the gradients are grouped products too: where no group reaches (rows, columns or K past
    # the last offset) CPU leaves them unwritten, tpu gives 0 (the true gradient)
    ga = want[1].clone()
    gb = want[2].clone()
    if offs is not None and a.dim() == 2 and b.dim() == 3:
        ga[last_end(offs):] = 0
    if offs is not None and a.dim() == 3 and b.dim() == 2:
        gb[:, last_end(offs):] = 0
    if offs is not None and a.dim() == 2 and b.dim() == 2:  # K past the last offset
        ga[:, last_end(offs):] = 0
        gb[last_end(offs):] = 0
    torch.testing.assert_close(got[1].cpu(), ga)
    torch.testing.assert_close(got[2].cpu(), gb)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("form", FORMS)
def test_forward_and_grad_strict(form, dtype):
    compare(gmm, form, dtype)


@pytest.mark.parametrize("form", ["2d3d", "3d2d", "2d2d"])
def test_random_group_sizes(form):
    g = torch.Generator().manual_seed(3)
    n = {"2d3d": 24, "3d2d": 24, "2d2d": 24}[form]
    for seed in range(3):
        sizes = torch.randint(0, 9, (4,), generator=g)
        sizes[seed % 4] = 0  # an empty group in each draw
        ends = torch.cumsum(sizes, 0).clamp(max=n - 2 * seed)  # may end before the dim ends
        compare(gmm, form, torch.float32, ends.tolist(), seed=seed)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("form", FORMS)
def test_fused(form, dtype):
    with torch_tpu.eager_mode("fused"):
        compare(gmm, form, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("form", FORMS)
def test_compiled(form, dtype, fresh_dynamo):
    compare(torch.compile(gmm, backend="tpu"), form, dtype)


def test_float16_and_offsets_that_decrease():
    # float16 as CPU; decreasing offsets: an end before its start is an empty group, and
    # a later group overwrites the rows of an earlier one (CPU's loop)
    a, b = make((12, 8), torch.float16), make((3, 8, 8), torch.float16, seed=1)
    offs = torch.tensor([6, 2, 9], dtype=I32)
    want = covered(gmm(a, b, offs), a, b, offs)
    torch.testing.assert_close(gmm(a.to(dev), b.to(dev), offs.to(dev)).cpu(), want)


def test_any_strides():
    # CPU asks for 16-byte-aligned strides (CUDA's TMA limit); tpu takes any
    a, b = make((7, 5)), make((3, 5, 3), seed=1)
    offs = torch.tensor([2, 2, 6], dtype=I32)
    want = torch.zeros(7, 3)
    for g, (s, e) in enumerate([(0, 2), (2, 2), (2, 6)]):
        want[s:e] = a[s:e] @ b[g]
    with pytest.raises(RuntimeError, match="16 bytes"):
        gmm(a, b, offs)
    torch.testing.assert_close(gmm(a.to(dev), b.to(dev), offs.to(dev)).cpu(), want)


@pytest.mark.parametrize("args,kwargs", [
    (((8, 8), (2, 8, 8), [3, 8]), {"bias": torch.zeros(2, 8)}),
    (((8, 8), (2, 8, 8), [3, 8]), {"out_dtype": torch.bfloat16}),
    (((8, 8), (2, 8, 8), None), {}),
    (((2, 8, 8), (2, 8, 8), [3, 8]), {}),
    (((8, 8), (3, 8, 8), [3, 8]), {}),
    (((8, 8), (2, 4, 8), [3, 8]), {}),
], ids=["bias", "out_dtype", "no_offsets", "offsets_3d3d", "groups", "contraction"])
def test_errors_as_cpu(args, kwargs):
    sa, sb, o = args
    a, b = make(sa), make(sb, seed=1)
    offs = None if o is None else torch.tensor(o, dtype=I32)
    with pytest.raises(RuntimeError) as want:
        torch._grouped_mm(a, b, offs=offs, **kwargs)
    kw = {k: (v.to(dev) if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}
    with pytest.raises(RuntimeError, match=re.escape(str(want.value).split("\n")[0][:30])):
        torch._grouped_mm(a.to(dev), b.to(dev), offs=to_dev(offs), **kw)


def test_dtype_errors_as_cpu():
    a, b = make((8, 8), torch.float64), make((2, 8, 8), torch.float64, seed=1)
    offs = torch.tensor([3, 8], dtype=I32)
    for x, y, o in [(a, b, offs), (a.float(), b.float(), offs.long())]:
        with pytest.raises(RuntimeError) as want:
            gmm(x, y, o)
        with pytest.raises(RuntimeError, match=re.escape(str(want.value)[:20])):
            gmm(x.to(dev), y.to(dev), o.to(dev))


def programs_made():
    s = torch.tpu._get_cache_stats()
    return s["misses"] + s["disk_hits"]


@pytest.mark.parametrize("mode", ["strict", "fused"])
def test_new_offsets_compile_no_program(mode):
    a, b = make((24, 16)).to(dev), make((4, 16, 8), seed=1).to(dev)
    with torch_tpu.eager_mode(mode):
        for i in range(2):  # settle the programs (Fused Eager's cuts)
            gmm(a, b, torch.tensor([2, 9, 9, 20], dtype=I32).to(dev)).cpu()
        before = programs_made()
        for ends in ([1, 1, 1, 24], [0, 8, 16, 24], [12, 13, 14, 15]):
            o = torch.tensor(ends, dtype=I32)
            got = gmm(a, b, o.to(dev)).cpu()
            torch.testing.assert_close(got, covered(gmm(a.cpu(), b.cpu(), o), a.cpu(), b.cpu(), o))
        assert programs_made() == before


@pytest.mark.parametrize("form", ["2d3d", "2d2d"])
def test_groups_of_several_tiles(form):
    # more rows (K) than the lowering's tile (128): groups span tiles, the last tile of the
    # dim is moved back to fit; sums of up to 160 products, blocked unlike CPU's
    tol = {"rtol": 1e-5, "atol": 1e-4}
    FORMS_BIG = {"2d3d": ((300, 16), (3, 16, 8)), "2d2d": ((8, 300), (300, 16))}
    sa, sb = FORMS_BIG[form]
    a, b = make(sa), make(sb, seed=1)
    offs = torch.tensor([130, 130, 290], dtype=I32)
    w = make(gmm(a, b, offs).shape, seed=7)
    want = run_fwd_bwd(gmm, a, b, offs, w)
    got = run_fwd_bwd(gmm, a.to(dev), b.to(dev), offs.to(dev), w.to(dev))
    torch.testing.assert_close(got[0].detach().cpu(), covered(want[0], a, b, offs), **tol)
    ga, gb = want[1].clone(), want[2].clone()
    if form == "2d3d":
        ga[290:] = 0
    else:
        ga[:, 290:] = 0
        gb[290:] = 0
    torch.testing.assert_close(got[1].cpu(), ga, **tol)
    torch.testing.assert_close(got[2].cpu(), gb, **tol)
