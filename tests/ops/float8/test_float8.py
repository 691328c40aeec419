"""float8 tensors (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
float8_e5m2fnuz) against PyTorch CPU, bit for bit: conversions from and to
every dtype (all 256 float8 patterns; random float32 / float64 values over
the whole exponent range with the special values, overflow, underflow and
ties), the ops CPU runs on float8, and torch._scaled_mm (tensor-wise and
row-wise scales, bias, scale_result, every output dtype)."""
import re

import pytest
import torch

from ops_util import dev

F8 = [torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz]
OTHER = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
         torch.int8, torch.uint8, torch.bool, torch.complex64]


def bits(t):
    """A float8 tensor's bytes (NaN patterns compared too), else the tensor."""
    return t.view(torch.uint8) if t.dtype in F8 else t


def same(got, want):
    assert got.device.type == "tpu"
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype in F8 or not (got.is_floating_point() or got.is_complex()):
        assert torch.equal(bits(got), bits(want)), (bits(got), bits(want))
    else:
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def random_floats(n, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    mag = torch.exp(torch.empty(n, dtype=torch.float64).uniform_(-30, 30, generator=g))
    x = torch.randn(n, dtype=torch.float64, generator=g) * mag
    # the float8 grids' ties, their largest values and the values just past them
    edges = [448, 449, 464, 465, 470, 479, 480, 481, 500, 240, 241, 247, 248, 249, 256, 57344, 57345, 61439,
             61440, 61441, 65535, 65536, 2.0 ** -9, 2.0 ** -10, 1.5 * 2.0 ** -10, 2.0 ** -11, 2.0 ** -16,
             1.5 * 2.0 ** -17, 2.0 ** -18, 2.0 ** -19, 1.0625, 1.1875, 3.25, 0.0, -0.0, float("inf"),
             float("nan"), 1e30, 1e-30]
    e = torch.tensor(edges, dtype=torch.float64)
    return torch.cat([x, e, -e]).to(dtype)


@pytest.mark.parametrize("f8", F8, ids=str)
def test_from_float8(f8):
    x = torch.arange(256, dtype=torch.uint8).view(f8)
    for dt in OTHER + F8:
        same(x.to(dev).to(dt), x.to(dt))


@pytest.mark.parametrize("f8", F8, ids=str)
@pytest.mark.parametrize("src", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_to_float8(f8, src):
    x = random_floats(4000, seed=10 * F8.index(f8) + [torch.float32, torch.float64, torch.float16,
                                                        torch.bfloat16].index(src), dtype=src)
    same(x.to(dev).to(f8), x.to(f8))
    # through a view (strided), and copy_ into a float8 tensor
    v = x[::3]
    same(v.to(dev).to(f8), v.to(f8))
    out = torch.empty(v.shape, dtype=f8)
    d = out.to(dev)
    d.copy_(v.to(dev))
    same(d, out.copy_(v))


@pytest.mark.parametrize("f8", F8, ids=str)
def test_integers_and_bool_to_float8(f8):
    g = torch.Generator().manual_seed(0)
    for dt in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        info = torch.iinfo(dt)
        x = torch.cat([torch.randint(max(info.min, -100000), min(info.max, 100000), (500,), generator=g, dtype=dt),
                       torch.tensor([info.min, info.max, 0, 1, 447, 449, 464, 57344, 61440], dtype=torch.int64)
                       .clamp(info.min, info.max).to(dt)])
        same(x.to(dev).to(f8), x.to(f8))
    b = torch.tensor([True, False, True])
    same(b.to(dev).to(f8), b.to(f8))


# the ops PyTorch CPU runs on float8 (it refuses add, sum, sort, ... on float8)
def _ops(dt):
    i = torch.tensor([0, 2])
    return {
        "mul": lambda x, y, b: x * y,
        "abs": lambda x, y, b: x.abs(),
        "eq": lambda x, y, b: x == y,
        "ne": lambda x, y, b: x != y,
        "eq_scalar": lambda x, y, b: x == 1.0,
        "cat": lambda x, y, b: torch.cat([x, y]),
        "stack": lambda x, y, b: torch.stack([x, y]),
        "fill": lambda x, y, b: x.clone().fill_(1.7),
        "zero": lambda x, y, b: x.clone().zero_(),
        "contiguous": lambda x, y, b: x.t().contiguous(),
        "where": lambda x, y, b: torch.where(x.float() > 0, x, y),
        "index": lambda x, y, b: x[i.to(x.device)],
        "index_put": lambda x, y, b: x.clone().index_put_((i[:1].to(x.device),), y[0]),
        "index_select": lambda x, y, b: x.index_select(0, i.to(x.device)),
        "masked_select": lambda x, y, b: x.masked_select(x.float() > 0),
        "matmul": lambda x, y, b: x @ b,
        "flip": lambda x, y, b: x.flip(0),
        "isnan": lambda x, y, b: x.isnan(),
        "copy_from_f32": lambda x, y, b: x.clone().copy_(y.float() * 3.3),
        "full": lambda x, y, b: torch.full((2, 3), 1.5, dtype=dt, device=x.device),
        "ones": lambda x, y, b: torch.ones(2, dtype=dt, device=x.device),
        "view_uint8": lambda x, y, b: x.view(torch.uint8),
        "view_as_float8": lambda x, y, b: x.view(torch.uint8).flip(0).view(dt),
        "repeat": lambda x, y, b: x.repeat(2, 1),
        "expand": lambda x, y, b: x[:1].expand(3, 3).contiguous(),
        "pad": lambda x, y, b: torch.nn.functional.pad(x, (1, 1)),
        "roll": lambda x, y, b: x.roll(1),
        "any": lambda x, y, b: x.any(),
    }


@pytest.mark.parametrize("f8", F8, ids=str)
def test_float8_ops(f8):
    g = torch.Generator().manual_seed(1)
    x, y = ((torch.randn(4, 3, generator=g) * 4).to(f8) for _ in range(2))
    b = torch.randn(3, 4, generator=g).to(f8)
    x[0, 0] = float("nan") if f8 != torch.float8_e4m3fnuz else 0.0
    ran = 0
    for name, fn in _ops(f8).items():
        try:
            want = fn(x, y, b)
        except (RuntimeError, NotImplementedError):
            continue  # CPU does not run it on this float8 type either
        same(fn(x.to(dev), y.to(dev), b.to(dev)), want)
        ran += 1
    assert ran >= 20
    assert x[1, 1].to(dev).item() == x[1, 1].item()
    flat = x.flatten()
    assert flat.to(dev).tolist() == pytest.approx(flat.tolist(), nan_ok=True)


def _scaled_cases():
    g = torch.Generator().manual_seed(2)
    for fa, fb in ((torch.float8_e4m3fn, torch.float8_e4m3fn), (torch.float8_e4m3fn, torch.float8_e5m2),
                   (torch.float8_e5m2, torch.float8_e4m3fn)):
        for m, k, n in ((4, 3, 5), (16, 32, 8), (1, 7, 1), (3, 0, 2)):
            a = (torch.randn(m, k, generator=g) * 8).to(fa)
            b = (torch.randn(n, k, generator=g) * 8).to(fb).t()  # column-major, as cuBLAS wants
            yield a, b, torch.tensor(0.75), torch.tensor(1.5), {}
            yield a, b.contiguous(), torch.tensor([2.0]), torch.tensor(0.5), {"out_dtype": torch.bfloat16}
            yield a, b, torch.rand(m, 1, generator=g) + 0.5, torch.rand(1, n, generator=g) + 0.5, \
                {"out_dtype": torch.float32, "bias": torch.randn(n, generator=g)}
            yield a, b, torch.tensor(0.25), torch.tensor(4.0), \
                {"out_dtype": torch.float16, "bias": torch.randn(n, generator=g).to(torch.bfloat16)}
            yield a, b, torch.tensor(1.0), torch.tensor(1.0), \
                {"out_dtype": torch.float8_e4m3fn, "scale_result": torch.tensor(0.3)}
            yield a, b, torch.tensor(3.0), torch.tensor(1.0), \
                {"out_dtype": torch.float8_e5m2, "scale_result": torch.tensor(2.0)}


def test_scaled_mm():
    for a, b, sa, sb, kw in _scaled_cases():
        want = torch._scaled_mm(a, b, sa, sb, **kw)
        dkw = {k: v.to(dev) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
        got = torch._scaled_mm(a.to(dev), b.to(dev), sa.to(dev), sb.to(dev), **dkw).cpu()
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype in F8:
            # an f32 product's summation order may move a value across a rounding boundary
            ulp = (bits(got).int() - bits(want).int()).abs()
            assert ulp.numel() == 0 or int(ulp.max()) <= 1, (got, want)
        else:
            torch.testing.assert_close(got.float(), want.float(), rtol=1e-2 if want.dtype != torch.float32 else 1e-5,
                                       atol=1e-4)


def test_scaled_mm_bad_input_raises_as_cpu():
    a = torch.randn(4, 3).to(torch.float8_e4m3fn)
    b = torch.randn(3, 5).to(torch.float8_e4m3fn)
    bad = [(a, b, torch.ones(4), torch.tensor(1.0), {}),                       # neither scaling
           (a, b, torch.tensor(1.0, dtype=torch.float64), torch.tensor(1.0), {}),  # float64 scale
           (a.float(), b, torch.tensor(1.0), torch.tensor(1.0), {}),           # not float8
           (a, b[:2], torch.tensor(1.0), torch.tensor(1.0), {}),               # sizes
           (a, b, torch.tensor(1.0), torch.tensor(1.0), {"bias": torch.ones(4)})]
    for x, y, sa, sb, kw in bad:
        with pytest.raises((RuntimeError, ValueError)) as cpu:
            torch._scaled_mm(x, y, sa, sb, **kw)
        dkw = {k: v.to(dev) for k, v in kw.items()}
        with pytest.raises(type(cpu.value)):
            torch._scaled_mm(x.to(dev), y.to(dev), sa.to(dev), sb.to(dev), **dkw).cpu()


def test_float8_promotion_as_cpu():
    # CPU refuses to promote float8 with any other dtype (no silent float8 result of
    # float8 * float32); a 0-dim tensor or a Python number does not promote a float8 tensor
    x = torch.tensor([1.0, 2.0, -3.0]).to(torch.float8_e4m3fn)
    others = [torch.ones(3), torch.ones(3, dtype=torch.float8_e5m2), torch.ones(3, dtype=torch.bfloat16),
              torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.bool), torch.tensor(2.0), 2.0]
    ops = [lambda a, b: a * b, lambda a, b: a == b, lambda a, b: torch.where(a.float() > 0, a, b),
           lambda a, b: torch.cat([a, b]) if isinstance(b, torch.Tensor) and b.dim() else a * b]
    refused = 0
    for other in others:
        for op in ops:
            try:
                want = op(x, other)
            except RuntimeError as e:
                if "Promotion for Float8" in str(e):
                    with pytest.raises(RuntimeError, match="Promotion for Float8"):
                        op(x.to(dev), other.to(dev) if isinstance(other, torch.Tensor) else other)
                    refused += 1
                # else CPU lacks the kernel (float8 with a 0-dim float32: "mul_cpu_reduced_float")
                continue
            same(op(x.to(dev), other.to(dev) if isinstance(other, torch.Tensor) else other), want)
    assert refused >= 12


def test_float8_under_torch_compile():
    # torchao-style float8 linear: cast with saturation, scaled product, in one compiled program
    def f(x, w, sx, sw):
        xq = (x / sx).to(torch.float8_e4m3fn)
        wq = (w / sw).to(torch.float8_e4m3fn)
        return torch._scaled_mm(xq, wq.t(), sx, sw, out_dtype=torch.bfloat16)

    g = torch.compile(f, backend="tpu")
    gen = torch.Generator().manual_seed(3)
    for m, k, n in ((16, 32, 16), (4, 3, 5)):
        x, w = torch.randn(m, k, generator=gen) * 500, torch.randn(n, k, generator=gen)
        sx, sw = torch.tensor(0.5), torch.tensor(0.01)
        want = f(x, w, sx, sw)
        got = g(x.to(dev), w.to(dev), sx.to(dev), sw.to(dev))
        assert got.dtype == torch.bfloat16
        torch.testing.assert_close(got.cpu().float(), want.float(), rtol=1e-2, atol=1e-2)


def test_other_float8_types_say_so():
    with pytest.raises(NotImplementedError, match="not supported on the tpu device"):
        torch.zeros(2, dtype=torch.float8_e8m0fnu).to(dev)


def test_functional_scaled_mm():
    # F.scaled_mm (aten::_scaled_mm_v2): CPU's tensor-wise and row-wise recipes
    import torch.nn.functional as F
    S = F.ScalingType
    g = torch.Generator().manual_seed(4)
    for m, k, n in ((4, 3, 5), (8, 16, 8), (0, 4, 3), (3, 0, 2)):
        a = (torch.randn(m, k, generator=g) * 8).to(torch.float8_e4m3fn)
        b = (torch.randn(n, k, generator=g) * 8).to(torch.float8_e4m3fn).t()
        cases = [(torch.tensor(0.5), S.TensorWise, torch.tensor(3.0), S.TensorWise, {}),
                 (torch.rand(m, 1, generator=g) + 0.5, S.RowWise, torch.rand(1, n, generator=g) + 0.5, S.RowWise,
                  {"bias": torch.randn(n, generator=g), "output_dtype": torch.float32}),
                 (torch.tensor(2.0), S.TensorWise, torch.tensor(0.25), S.TensorWise,
                  {"output_dtype": torch.float8_e5m2})]
        for sa, ra, sb, rb, kw in cases:
            want = F.scaled_mm(a, b, sa, ra, sb, rb, **kw)
            dkw = {k2: v.to(dev) if isinstance(v, torch.Tensor) else v for k2, v in kw.items()}
            got = F.scaled_mm(a.to(dev), b.to(dev), sa.to(dev), ra, sb.to(dev), rb, **dkw).cpu()
            assert got.dtype == want.dtype and got.shape == want.shape
            if want.dtype in F8:
                assert want.numel() == 0 or int((bits(got).int() - bits(want).int()).abs().max()) <= 1
            else:
                torch.testing.assert_close(got.float(), want.float(), rtol=1e-2, atol=1e-3)
    a = torch.randn(4, 3).to(torch.float8_e4m3fn)
    b = torch.randn(3, 5).to(torch.float8_e4m3fn)
    bad = [(torch.ones(4, 1), S.TensorWise, torch.ones(1, 5), S.TensorWise),
           (torch.ones(4), S.RowWise, torch.ones(5), S.RowWise),
           (torch.ones(4, 1), S.RowWise, torch.ones(1, 4), S.RowWise),
           (torch.ones(4, 1), S.RowWise, torch.ones(1), S.TensorWise),
           (torch.ones(1, dtype=torch.float64), S.TensorWise, torch.ones(1), S.TensorWise)]
    for sa, ra, sb, rb in bad:
        with pytest.raises(Exception) as cpu:
            F.scaled_mm(a, b, sa, ra, sb, rb)
        with pytest.raises(type(cpu.value), match=re.escape(str(cpu.value).split("\n")[0][:30])):
            F.scaled_mm(a.to(dev), b.to(dev), sa.to(dev), ra, sb.to(dev), rb).cpu()
