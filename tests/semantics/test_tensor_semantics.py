"""Tensor semantics of the tpu device, each checked against the same operations
on PyTorch CPU tensors: views (metadata, values, aliasing), in-place writes
through views, set_/resize_, zero-size tensors, dtypes (round trips,
conversions, item), printing, the torch.tpu module, RNG and generators."""
import gc
import math
import re

import pytest
import torch

import torch_tpu

DEV = torch.device("tpu")


def assert_same(got, want):
    """Exact equality (values, dtype, shape), NaNs equal; got may live on tpu."""
    assert got.device.type in ("tpu", "cpu")
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0, equal_nan=True)


def base_cpu():
    return torch.arange(48, dtype=torch.float32).reshape(4, 12) - 10.5


# ---- views: metadata, values, aliasing ------------------------------------------------

VIEWS = {
    "view": lambda x: x.view(6, 8),
    "view_-1": lambda x: x.view(-1),
    "reshape": lambda x: x.reshape(2, 2, 12),
    "reshape_of_t": lambda x: x.t().reshape(12, 4),  # copies on CPU too
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(),
    "permute": lambda x: x.view(2, 2, 12).permute(2, 0, 1),
    "narrow": lambda x: x.narrow(1, 3, 5),
    "select": lambda x: x.select(1, 4),
    "select_row": lambda x: x[2],
    "slice_step": lambda x: x[1:, 1:11:3],
    "slice_step_rows": lambda x: x[::2],
    "unsqueeze": lambda x: x.unsqueeze(1),
    "squeeze": lambda x: x[:1].squeeze(0),
    "expand": lambda x: x[:, :1].expand(4, 7),
    "expand_new_dim": lambda x: x[0].expand(3, 12),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: x.diagonal(offset=2),
    "unfold": lambda x: x.unfold(1, 4, 3),
    "as_strided": lambda x: x.as_strided((3, 3), (5, 2), 7),
    "chunk": lambda x: x.chunk(3, dim=1)[1],
    "split": lambda x: x.split(5, dim=1)[2],
    "flatten": lambda x: x.view(2, 2, 12).flatten(1),
    "unbind": lambda x: x.unbind(1)[7],
    "view_of_view": lambda x: x[1:3].view(2, 3, 4)[:, 1],
    "t_then_narrow": lambda x: x.t().narrow(0, 2, 3),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_view_metadata_and_values(name):
    f = VIEWS[name]
    xc = base_cpu()
    xd = xc.to(DEV)
    vc, vd = f(xc), f(xd)
    assert vd.device.type == "tpu"
    assert vd.shape == vc.shape
    assert vd.stride() == vc.stride()
    assert vd.storage_offset() == vc.storage_offset()
    assert vd.untyped_storage().nbytes() == vc.untyped_storage().nbytes()
    assert vd.is_contiguous() == vc.is_contiguous()
    shares_c = vc.untyped_storage().data_ptr() == xc.untyped_storage().data_ptr()
    shares_d = vd.untyped_storage().data_ptr() == xd.untyped_storage().data_ptr()
    assert shares_d == shares_c
    assert vd._is_view() == vc._is_view()
    assert_same(vd, vc)


def test_views_share_storage():
    x = torch.zeros(4, 6, device=DEV)
    for v in (x.view(24), x.t(), x[1:3], x[:, 2], x.unsqueeze(0), x.expand(2, 4, 6), x.diagonal(),
              x.as_strided((2, 2), (1, 1))):
        assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    y = x.clone()
    assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def test_contiguous_of_view_matches_cpu():
    xc = base_cpu()
    xd = xc.to(DEV)
    for f in (lambda x: x.t().contiguous(), lambda x: x[:, ::3].contiguous(),
              lambda x: x.as_strided((3, 3), (5, 2), 7).contiguous()):
        vc, vd = f(xc), f(xd)
        assert vd.stride() == vc.stride() and vd.storage_offset() == vc.storage_offset()
        assert vd.untyped_storage().nbytes() == vc.untyped_storage().nbytes()
        assert_same(vd, vc)


def test_ops_on_views_match_cpu():
    xc = base_cpu()
    xd = xc.to(DEV)
    for f in (lambda x: x.t() * 2 + x.t().sin(), lambda x: x[:, 1::2].sum(0),
              lambda x: x[::2].exp().mean(1), lambda x: x.diagonal() - x[0, :4],
              lambda x: x.as_strided((3, 3), (5, 2), 7).amax(-1), lambda x: x.t() @ x[:, :3]):
        torch.testing.assert_close(f(xd).cpu(), f(xc))


# ---- in-place writes through views reach the base -----------------------------------------

def _w_slice_add(x):
    x[1:3] += 1


def _w_col_mul(x):
    x[:, 0].mul_(2)


def _w_t_add(x):
    x.t().add_(1)


def _w_step_zero(x):
    x[::2].zero_()


def _w_flat_index(x):
    x.view(-1)[3] = 7


def _w_narrow_fill(x):
    x.narrow(1, 2, 4).fill_(-3.5)


def _w_copy_into_t(x):
    x[:, :4].t().copy_(torch.arange(16, dtype=x.dtype, device=x.device).view(4, 4) * 0.5)


def _w_copy_expanded_src(x):
    x[1:3].copy_(torch.arange(12, dtype=x.dtype, device=x.device).expand(2, 12))


def _w_add_expanded_src(x):
    x.add_(torch.arange(12, dtype=x.dtype, device=x.device)[None].expand(4, 12))


def _w_mul_expanded_col(x):
    x.mul_(torch.tensor([[1.0], [2.0], [-1.0], [0.5]], device=x.device).expand(4, 12))


def _w_index_scalar_row(x):
    x[2] = 5


def _w_index_scalar_col(x):
    x[:, 3] = -1


def _w_index_scalar_mask(x):
    x[x > 20] = 0


def _w_index_scalar_list(x):
    x[[0, 3]] = 9


def _w_index_scalar_2d(x):
    x[1, 4] = 123.25


def _w_diag_fill(x):
    x.diagonal().fill_(100)


def _w_unsqueeze_sub(x):
    x.unsqueeze(0)[0, 1:, 5:].sub_(0.25)


def _w_as_strided(x):
    x.as_strided((3, 3), (5, 2), 7).mul_(-1)


def _w_chained_views(x):
    v = x.view(2, 2, 12).permute(2, 0, 1)[3:6]
    v.add_(1000)


def _w_unbind(x):
    for i, r in enumerate(x.unbind(0)):
        r.add_(i * 10)


def _w_twice(x):
    x[:, 1:5].mul_(3)
    x[2:].t()[0:3].add_(-2)


WRITES = {f.__name__[3:]: f for f in (
    _w_slice_add, _w_col_mul, _w_t_add, _w_step_zero, _w_flat_index, _w_narrow_fill, _w_copy_into_t,
    _w_copy_expanded_src, _w_add_expanded_src, _w_mul_expanded_col, _w_index_scalar_row,
    _w_index_scalar_col, _w_index_scalar_mask, _w_index_scalar_list, _w_index_scalar_2d, _w_diag_fill,
    _w_unsqueeze_sub, _w_as_strided, _w_chained_views, _w_unbind, _w_twice)}


@pytest.mark.parametrize("name", list(WRITES))
def test_inplace_through_view_reaches_base(name):
    f = WRITES[name]
    xc = base_cpu()
    xd = xc.to(DEV)
    keep_c, keep_d = xc.t(), xd.t()  # another view made before the write sees it too
    ptr = xd.untyped_storage().data_ptr()
    f(xc)
    f(xd)
    assert xd.untyped_storage().data_ptr() == ptr
    assert_same(xd, xc)
    assert_same(keep_d, keep_c)


def test_inplace_on_base_visible_in_views():
    xc = base_cpu()
    xd = xc.to(DEV)
    vc, vd = xc[1:, ::2], xd[1:, ::2]
    xc.mul_(3)
    xd.mul_(3)
    assert_same(vd, vc)
    xc.copy_(torch.ones_like(xc))
    xd.copy_(torch.ones_like(xd))
    assert_same(vd, vc)


def test_out_variant_into_view():
    xc = base_cpu()
    xd = xc.to(DEV)
    torch.add(xc[0], xc[1], out=xc[3])
    torch.add(xd[0], xd[1], out=xd[3])
    assert_same(xd, xc)


# ---- set_ and resize_ -------------------------------------------------------------------

def test_set_empty():
    xc = base_cpu()
    xd = xc.to(DEV)
    xc.set_()
    xd.set_()
    assert xd.shape == xc.shape and xd.stride() == xc.stride()
    assert xd.untyped_storage().nbytes() == xc.untyped_storage().nbytes()
    assert_same(xd, xc)


def test_set_storage():
    srcc = base_cpu()
    srcd = srcc.to(DEV)
    tc = torch.empty(0)
    td = torch.empty(0, device=DEV)
    tc.set_(srcc.untyped_storage())
    td.set_(srcd.untyped_storage())
    assert td.shape == tc.shape and td.stride() == tc.stride()
    assert td.untyped_storage().data_ptr() == srcd.untyped_storage().data_ptr()
    assert_same(td, tc)
    td.mul_(2)
    tc.mul_(2)
    assert_same(srcd, srcc)


def test_set_storage_offset_size_stride():
    srcc = base_cpu()
    srcd = srcc.to(DEV)
    tc = torch.empty(0)
    td = torch.empty(0, device=DEV)
    tc.set_(srcc.untyped_storage(), 5, (3, 4), (7, 2))
    td.set_(srcd.untyped_storage(), 5, (3, 4), (7, 2))
    assert td.shape == tc.shape and td.stride() == tc.stride()
    assert td.storage_offset() == tc.storage_offset()
    assert td.untyped_storage().data_ptr() == srcd.untyped_storage().data_ptr()
    assert_same(td, tc)
    td[1].fill_(-8)
    tc[1].fill_(-8)
    assert_same(srcd, srcc)


def test_set_tensor():
    srcc = base_cpu()[1:, 2:]
    srcd = base_cpu().to(DEV)[1:, 2:]
    tc = torch.empty(0)
    td = torch.empty(0, device=DEV)
    tc.set_(srcc)
    td.set_(srcd)
    assert td.shape == tc.shape and td.stride() == tc.stride()
    assert td.storage_offset() == tc.storage_offset()
    assert td.untyped_storage().data_ptr() == srcd.untyped_storage().data_ptr()
    assert_same(td, tc)
    td.add_(1)
    tc.add_(1)
    assert_same(srcd, srcc)


def test_resize_grow_keeps_values():
    xc = torch.arange(6, dtype=torch.float32)
    xd = xc.to(DEV)
    xc.resize_(4, 5)
    xd.resize_(4, 5)
    assert xd.shape == xc.shape and xd.stride() == xc.stride()
    assert xd.untyped_storage().nbytes() == xc.untyped_storage().nbytes()
    assert_same(xd.view(-1)[:6], xc.view(-1)[:6])
    xc.view(-1)[6:].fill_(2)
    xd.view(-1)[6:].fill_(2)
    assert_same(xd, xc)
    xc += 1
    xd += 1
    assert_same(xd, xc)


def test_resize_shrink():
    xc = base_cpu()
    xd = xc.to(DEV)
    xc.resize_(3, 5)
    xd.resize_(3, 5)
    assert xd.shape == xc.shape and xd.stride() == xc.stride()
    assert xd.untyped_storage().nbytes() == xc.untyped_storage().nbytes()
    assert_same(xd, xc)
    xc.mul_(2)
    xd.mul_(2)
    assert_same(xd, xc)


def test_resize_zero_size_then_write():
    xc = torch.empty(0)
    xd = torch.empty(0, device=DEV)
    xc.resize_(3, 4)
    xd.resize_(3, 4)
    assert xd.shape == xc.shape and xd.stride() == xc.stride()
    assert xd.untyped_storage().nbytes() == xc.untyped_storage().nbytes()
    xc.fill_(1.5)
    xd.fill_(1.5)
    xc[1] = torch.arange(4.0)
    xd[1] = torch.arange(4.0, device=DEV)
    assert_same(xd, xc)


def test_resize_to_zero_and_back():
    xc = torch.arange(5.0)
    xd = xc.to(DEV)
    xc.resize_(0)
    xd.resize_(0)
    assert xd.shape == xc.shape
    assert_same(xd, xc)
    xc.resize_(5)
    xd.resize_(5)
    assert_same(xd, xc)  # storage kept its 5 elements on CPU


def test_untyped_storage_resize():
    xc = torch.arange(4.0)
    xd = xc.to(DEV)
    xc.untyped_storage().resize_(32)
    xd.untyped_storage().resize_(32)
    assert xd.untyped_storage().nbytes() == xc.untyped_storage().nbytes()
    assert_same(xd, xc)


# ---- zero-size tensors ---------------------------------------------------------------------

def test_zero_size_creation():
    for f in (lambda d: torch.zeros(0, 3, device=d), lambda d: torch.ones(2, 0, device=d),
              lambda d: torch.empty(0, device=d), lambda d: torch.full((0, 4), 7.0, device=d),
              lambda d: torch.arange(0, device=d), lambda d: torch.tensor([], device=d),
              lambda d: torch.zeros(3, 0, 2, dtype=torch.int64, device=d)):
        c, t = f("cpu"), f(DEV)
        assert t.device.type == "tpu"
        assert t.shape == c.shape and t.stride() == c.stride() and t.dtype == c.dtype
        assert t.untyped_storage().nbytes() == c.untyped_storage().nbytes()
        assert_same(t, c)


@pytest.mark.parametrize("name,fn", [
    ("add", lambda x: x + 1),
    ("mul_bcast", lambda x: x * torch.ones(3, device=x.device)),
    ("sum_all", lambda x: x.sum()),
    ("sum_dim0", lambda x: x.sum(0)),
    ("sum_dim1", lambda x: x.sum(1)),
    ("mean_all", lambda x: x.mean()),
    ("prod_all", lambda x: x.prod()),
    ("amax_dim1", lambda x: x.amax(1)),
    ("cat_empty_first", lambda x: torch.cat([x, torch.ones(2, 3, device=x.device)])),
    ("cat_empty_legacy", lambda x: torch.cat([torch.empty(0, device=x.device), torch.ones(2, device=x.device)])),
    ("cat_dim1", lambda x: torch.cat([x.t(), torch.ones(3, 1, device=x.device)], dim=1)),
    ("mm", lambda x: x.t() @ x),
    ("mm_zero_out", lambda x: torch.ones(2, 0, device=x.device) @ torch.ones(0, 5, device=x.device)),
    ("view", lambda x: x.view(3, 0)),
    ("clone", lambda x: x.clone()),
    ("exp_", lambda x: x.exp_()),
    ("to_int", lambda x: x.to(torch.int32)),
])
def test_zero_size_ops(name, fn):
    xc = torch.zeros(0, 3)
    xd = xc.to(DEV)
    want = fn(xc)
    got = fn(xd)
    assert got.device.type == "tpu"
    assert got.shape == want.shape and got.dtype == want.dtype
    assert_same(got, want)


# ---- dtypes --------------------------------------------------------------------------------

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32,
          torch.int16, torch.int8, torch.uint8, torch.bool]
FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


def _dname(d):
    return str(d).replace("torch.", "")


def sample_values(dtype):
    """A CPU tensor of interesting values of `dtype` (negatives, extremes, inf/nan)."""
    if dtype == torch.bool:
        return torch.tensor([True, False, False, True, True])
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        vals = [0.0, -0.0, 1.0, -1.5, 2.25, -3.7, 100.25, fi.max, fi.min, fi.tiny, fi.eps,
                math.inf, -math.inf, math.nan]
        return torch.tensor(vals, dtype=torch.float64).to(dtype)
    ii = torch.iinfo(dtype)
    cands = [ii.min, ii.min + 1, -129, -128, -1, 0, 1, 7, 127, 128, 255, 256, 32767, 70000, ii.max - 1, ii.max]
    return torch.tensor(sorted({v for v in cands if ii.min <= v <= ii.max}), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_dname)
def test_round_trip(dtype):
    xc = sample_values(dtype)
    xd = xc.to(DEV)
    assert xd.dtype == dtype and xd.device.type == "tpu"
    back = xd.cpu()
    assert back.dtype == dtype
    # a copy is byte-exact (keeps -0.0, nan, subnormals)
    assert torch.equal(back.view(torch.uint8), xc.view(torch.uint8))
    assert_same(back, xc)
    # non-contiguous source and 2-D shape survive too
    x2 = xc.repeat(3).view(3, -1).t()
    assert_same(x2.to(DEV), x2)


def conversion_input(src, dst):
    """CPU values of dtype src whose conversion to dst is defined behaviour in PyTorch (no
    out-of-range float->int, no nan/inf->int, no negative float->uint8)."""
    if src == torch.bool:
        return torch.tensor([True, False, True])
    if src.is_floating_point:
        vals = [-100.75, -3.7, -1.5, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.9, 100.25, 126.9, 7e4, 1e-8,
                math.inf, -math.inf, math.nan]
        vals = torch.tensor(vals, dtype=torch.float64).to(src).tolist()  # as src holds them
        if not dst.is_floating_point and dst != torch.bool:
            ii = torch.iinfo(dst)
            vals = [v for v in vals if math.isfinite(v) and ii.min <= math.trunc(v) <= ii.max
                    and (dst != torch.uint8 or v >= 0)]
        return torch.tensor(vals, dtype=torch.float64).to(src)
    return sample_values(src)


@pytest.mark.parametrize("dst", DTYPES, ids=_dname)
@pytest.mark.parametrize("src", DTYPES, ids=_dname)
def test_dtype_conversion_on_device(src, dst):
    xc = conversion_input(src, dst)
    xd = xc.to(DEV)
    got = xd.to(dst)
    assert got.device.type == "tpu" and got.dtype == dst
    assert_same(got, xc.to(dst))


def test_float_to_int_truncates_toward_zero():
    xc = torch.tensor([-2.9, -2.5, -1.1, -0.9, 0.9, 1.1, 2.5, 2.9])
    for dst in (torch.int64, torch.int32, torch.int16, torch.int8):
        assert_same(xc.to(DEV).to(dst), xc.to(dst))


def test_bool_semantics():
    xc = torch.tensor([0.0, -0.0, 0.1, -2.0, math.nan, math.inf])
    xd = xc.to(DEV)
    assert_same(xd.bool(), xc.bool())
    assert_same(xd[:4].to(torch.int8).bool(), xc[:4].to(torch.int8).bool())
    bc = torch.tensor([True, False, True])
    bd = bc.to(DEV)
    assert_same(bd + bd, bc + bc)  # bool + bool stays bool (logical or)
    assert_same(bd.sum(), bc.sum())  # promoted to int64
    assert_same(bd.float() * 3, bc.float() * 3)
    assert_same(~bd, ~bc)
    assert_same(bd & bd[[1, 2, 0]], bc & bc[[1, 2, 0]])


@pytest.mark.parametrize("pair", [(torch.float32, torch.float16), (torch.float32, torch.bfloat16),
                                  (torch.float16, torch.float64), (torch.float32, torch.int32),
                                  (torch.int64, torch.float32), (torch.int32, torch.int8),
                                  (torch.uint8, torch.int64), (torch.bool, torch.float32),
                                  (torch.float64, torch.bool), (torch.bfloat16, torch.float16)],
                         ids=lambda p: f"{_dname(p[0])}_to_{_dname(p[1])}")
def test_tpu_to_tpu_copy_across_dtypes(pair):
    src, dst = pair
    sc = conversion_input(src, dst)
    sd = sc.to(DEV)
    dc = torch.zeros(len(sc), dtype=dst)
    dd = torch.zeros(len(sc), dtype=dst, device=DEV)
    dc.copy_(sc)
    dd.copy_(sd)
    assert_same(dd, dc)
    # into a strided destination
    dc2 = torch.zeros(2 * len(sc), dtype=dst)
    dd2 = torch.zeros(2 * len(sc), dtype=dst, device=DEV)
    dc2[::2].copy_(sc)
    dd2[::2].copy_(sd)
    assert_same(dd2, dc2)
    # cpu -> tpu copy_ with a dtype change, and tpu -> cpu
    dd3 = torch.zeros(len(sc), dtype=dst, device=DEV)
    dd3.copy_(sc)
    assert_same(dd3, dc)
    dc3 = torch.zeros(len(sc), dtype=dst)
    dc3.copy_(sd)
    assert_same(dc3, dc)


@pytest.mark.parametrize("dtype", DTYPES, ids=_dname)
def test_item(dtype):
    xc = sample_values(dtype)
    xd = xc.to(DEV)
    for i in range(len(xc)):
        a, b = xd[i].item(), xc[i].item()
        assert type(a) is type(b)
        assert (a == b) or (isinstance(b, float) and math.isnan(a) and math.isnan(b)), (i, a, b)
    s = xd.sum() if dtype != torch.bool else xd.any()
    sc = xc.sum() if dtype != torch.bool else xc.any()
    if dtype.is_floating_point:
        assert math.isnan(s.item()) and math.isnan(sc.item())
    else:
        assert s.item() == sc.item()
    assert xd.tolist() == xc.tolist() or dtype.is_floating_point


# ---- printing --------------------------------------------------------------------------------

PRINT_CASES = {
    "f32_0d": lambda: torch.tensor(3.25),
    "f32_1d": lambda: torch.tensor([1.0, -2.5, math.inf, math.nan]),
    "f32_2d": lambda: torch.arange(12, dtype=torch.float32).view(3, 4) / 7,
    "f32_big": lambda: torch.linspace(-5, 5, 2000, dtype=torch.float64).float().view(40, 50),
    "f32_empty": lambda: torch.empty(0),
    "f32_empty_2d": lambda: torch.empty(0, 3),
    "f16": lambda: torch.tensor([1.5, -0.25, 65504.0], dtype=torch.float16),
    "bf16": lambda: torch.tensor([[1.5, -3.0], [0.1, 1e10]], dtype=torch.bfloat16),
    "f64": lambda: torch.tensor([1e-10, 1e10, -1.0], dtype=torch.float64),
    "i64": lambda: torch.tensor([[1, -2, 3], [2 ** 40, 0, -7]]),
    "i32_0d": lambda: torch.tensor(-5, dtype=torch.int32),
    "i8": lambda: torch.tensor([-128, 127, 0], dtype=torch.int8),
    "u8": lambda: torch.tensor([0, 255, 17], dtype=torch.uint8),
    "bool": lambda: torch.tensor([[True, False], [False, True]]),
    "bool_empty": lambda: torch.empty(2, 0, dtype=torch.bool),
    "i64_big": lambda: torch.arange(3000).view(30, 100),
    "3d": lambda: torch.arange(24, dtype=torch.float32).view(2, 3, 4),
    "transposed": lambda: torch.arange(6, dtype=torch.float32).view(2, 3).t(),
}


def _norm(s):
    return re.sub(r"\s+", " ", s)


def _strip_dev(s):
    return _norm(re.sub(r",\s*device='tpu:0'", "", s))


@pytest.mark.parametrize("name", list(PRINT_CASES))
def test_repr_matches_cpu(name):
    xc = PRINT_CASES[name]()
    xd = xc.to(DEV) if name != "transposed" else torch.arange(6, dtype=torch.float32, device=DEV).view(2, 3).t()
    r = repr(xd)
    assert "device='tpu:0'" in r
    # PyTorch adds ", device='tpu:0'" (which may move a wrap point): compare modulo whitespace
    assert _strip_dev(r) == _norm(repr(xc))
    assert _strip_dev(str(xd)) == _norm(str(xc))


def test_repr_requires_grad():
    xc = torch.tensor([1.0, 2.0], requires_grad=True)
    xd = xc.detach().to(DEV).requires_grad_(True)
    assert _strip_dev(repr(xd)) == _norm(repr(xc))
    assert _strip_dev(repr(xd * 2)) == _norm(repr(xc * 2))


# ---- torch.tpu module, accelerator, helpers -------------------------------------------------------

def test_device_module_basics():
    assert torch.tpu.device_count() >= 1
    assert torch.tpu.is_available() is True
    assert torch.tpu.current_device() == 0
    torch.tpu.set_device(0)
    assert torch.tpu.current_device() == 0
    torch.tpu.set_device("tpu:0")
    with torch.tpu.device(0):
        assert torch.tpu.current_device() == 0
        x = torch.ones(3, device="tpu")
        assert x.device == torch.device("tpu", 0)
    assert torch.tpu.current_device() == 0
    torch.tpu.synchronize()
    torch.tpu.synchronize(0)
    name = torch.tpu.get_device_name()
    assert isinstance(name, str) and name
    assert torch.tpu.get_device_name(0) == name
    props = torch.tpu.get_device_properties(0)
    assert props.name == name
    assert isinstance(props.platform_name, str) and props.platform_name


def test_tensor_on_default_device_index():
    x = torch.ones(2, device="tpu")
    assert x.device == torch.device("tpu:0")
    assert x.device.index == torch.tpu.current_device()
    assert x.is_tpu and not torch.ones(2).is_tpu


def test_api_tpu_device():
    assert torch_tpu.api.tpu_device() == torch.device("tpu", 0)
    assert torch_tpu.api.tpu_device(0) == torch.device("tpu:0")
    assert torch_tpu.tpu_device() == torch.device("tpu", 0)


def test_accelerator():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device("tpu")
    assert torch.accelerator.device_count() == torch.tpu.device_count()
    assert torch.accelerator.current_device_index() == 0
    torch.accelerator.synchronize()


def test_tensor_and_module_tpu_methods():
    xc = torch.arange(5.0)
    xd = xc.tpu()
    assert xd.is_tpu and xd.device.type == "tpu"
    assert_same(xd, xc)
    m = torch.nn.Linear(3, 2)
    want = m(torch.ones(1, 3))
    m.tpu()
    assert all(p.is_tpu for p in m.parameters())
    torch.testing.assert_close(m(torch.ones(1, 3, device="tpu")).cpu(), want.detach())


def _rand_block():
    return torch.cat([torch.rand(50, device="tpu"), torch.randn(50, device="tpu"),
                      torch.empty(30, device="tpu").uniform_(-2, 3),
                      torch.empty(30, device="tpu").normal_(1, 2)]).cpu()


def test_manual_seed_reproduces():
    torch.tpu.manual_seed(1234)
    assert torch.tpu.initial_seed() == 1234
    a = _rand_block()
    torch.tpu.manual_seed(1234)
    b = _rand_block()
    assert_same(b, a)
    torch.tpu.manual_seed(4321)
    c = _rand_block()
    assert not torch.equal(a, c)
    torch.tpu.manual_seed_all(1234)
    assert torch.tpu.initial_seed() == 1234
    assert_same(_rand_block(), a)
    torch.manual_seed(1234)  # torch.manual_seed seeds every device's generator too
    assert_same(_rand_block(), a)


def test_rng_state_restore():
    torch.tpu.manual_seed(7)
    torch.rand(10, device="tpu")
    state = torch.tpu.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    a = _rand_block()
    b = _rand_block()
    assert not torch.equal(a, b)  # the generator advances
    torch.tpu.set_rng_state(state)
    assert_same(_rand_block(), a)
    assert_same(_rand_block(), b)


def test_generator_object():
    g = torch.Generator(device="tpu")
    assert g.device.type == "tpu"

    def draw():
        return torch.cat([torch.rand(20, device="tpu", generator=g),
                          torch.randn(20, device="tpu", generator=g),
                          torch.empty(20, device="tpu").normal_(0, 3, generator=g),
                          torch.empty(20, device="tpu").uniform_(5, 6, generator=g)]).cpu()

    g.manual_seed(99)
    a = draw()
    torch.tpu.manual_seed(0)  # the default generator does not affect g
    g.manual_seed(99)
    b = draw()
    assert_same(b, a)
    g.manual_seed(100)
    assert not torch.equal(draw(), a)
    g.manual_seed(99)
    s = g.get_state()
    c = draw()
    g.set_state(s)
    assert_same(draw(), c)


def test_uniform_distribution():
    torch.tpu.manual_seed(0)
    n = 100_000
    x = torch.empty(n, device="tpu").uniform_(-2.0, 3.0).cpu()
    ref = torch.empty(n).uniform_(-2.0, 3.0)  # CPU's statistics as the reference
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - ref.mean()) < 0.05
    assert abs(x.std() - ref.std()) < 0.05
    assert abs(x.mean() - 0.5) < 0.05 and abs(x.std() - 5 / math.sqrt(12)) < 0.05
    r = torch.rand(n, device="tpu").cpu()
    assert r.min() >= 0.0 and r.max() < 1.0 and abs(r.mean() - 0.5) < 0.01
    # histogram roughly flat
    h = torch.histc(r, bins=10, min=0, max=1)
    assert (h - n / 10).abs().max() < n / 10 * 0.1
    assert len(torch.unique(r)) > n * 0.9


def test_normal_distribution():
    torch.tpu.manual_seed(0)
    n = 100_000
    x = torch.empty(n, device="tpu").normal_(1.0, 2.0).cpu()
    ref = torch.empty(n).normal_(1.0, 2.0)
    assert abs(x.mean() - ref.mean()) < 0.05
    assert abs(x.std() - ref.std()) < 0.05
    assert abs(x.mean() - 1.0) < 0.05 and abs(x.std() - 2.0) < 0.05
    z = torch.randn(n, device="tpu").cpu()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1.0) < 0.02
    assert abs((z.abs() < 1).float().mean() - 0.6827) < 0.01
    assert torch.isfinite(z).all()


def test_memory_accounting():
    torch.tpu.synchronize()
    gc.collect()
    before = torch.tpu.memory_allocated()
    x = torch.ones(256 * 1024, device="tpu")  # 1 MiB
    x.add_(1)
    torch.tpu.synchronize()
    during = torch.tpu.memory_allocated()
    assert during >= before + x.untyped_storage().nbytes()
    assert torch.tpu.max_memory_allocated() >= during
    stats = torch.tpu.memory_stats()
    for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
              "reserved_bytes.all.current", "reserved_bytes.all.peak"):
        assert k in stats
    assert stats["allocated_bytes.all.current"] == during
    del x
    gc.collect()
    torch.tpu.synchronize()
    after = torch.tpu.memory_allocated()
    assert after <= during - 256 * 1024 * 4
    assert torch.tpu.max_memory_allocated() >= during


@pytest.mark.parametrize("reentrant", [False, True])
def test_activation_checkpoint_recomputes_dropout_masks(reentrant):
    """torch.utils.checkpoint stashes the device's RNG state (it asks the device module's
    `_initialized`, as for CUDA) and recomputes the forward with it in the backward: the
    gradients equal those of the same forward without checkpointing."""
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Dropout(0.5), torch.nn.GELU(),
                            torch.nn.Linear(16, 4)).to("tpu")
    x = torch.randn(6, 8, device="tpu", requires_grad=True)
    torch.tpu.manual_seed(7)
    y = checkpoint(m, x, use_reentrant=reentrant)
    y.square().sum().backward()
    g_ckpt, w_ckpt = x.grad.cpu(), m[0].weight.grad.cpu()
    x.grad = None
    m.zero_grad()
    torch.tpu.manual_seed(7)
    y2 = m(x)
    y2.square().sum().backward()
    assert torch.equal(y.detach().cpu(), y2.detach().cpu())
    torch.testing.assert_close(g_ckpt, x.grad.cpu(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(w_ckpt, m[0].weight.grad.cpu(), rtol=1e-6, atol=1e-6)
    assert torch.tpu._initialized and len(torch.tpu.default_generators) == torch.tpu.device_count()
