"""Convolution and pooling on tpu against PyTorch CPU: forward values and the
gradients of input, weight and bias (aten::convolution / convolution_backward,
max/avg/adaptive pools and their backward ops), plus a tiny CNN trained with
AdamW."""
import copy
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ops_util import check, dev, make
from suite import params


def cases(table, bf16_every=3):
    """Every case in float32, every bf16_every-th also in bfloat16 (compiles dominate the time)."""
    out = [pytest.param(c, torch.float32, id=f"f32-{i}") for i, c in enumerate(table)]
    out += [pytest.param(c, torch.bfloat16, id=f"bf16-{i}") for i, c in enumerate(table) if i % bf16_every == 0]
    return out


def check_grad(fn, *args, **tol):
    """fn's value and the gradients of its floating-point tensor args (for a
    fixed random grad_output) agree between CPU and tpu."""
    cpu = [a.detach().clone().requires_grad_(True) if isinstance(a, torch.Tensor) else a for a in args]
    dv = [a.detach().to(dev).requires_grad_(True) if isinstance(a, torch.Tensor) else a for a in args]
    yc, yd = fn(*cpu), fn(*dv)
    gy = make(yc.shape, yc.dtype, seed=123)
    want = torch.autograd.grad(yc, [a for a in cpu if isinstance(a, torch.Tensor)], gy)
    got = torch.autograd.grad(yd, [a for a in dv if isinstance(a, torch.Tensor)], gy.to(dev))
    torch.testing.assert_close(yd.detach().cpu(), yc.detach(), equal_nan=True, **tol)
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu(), w, **tol)


def tol(dtype):
    # f32: sums run in another order than CPU's kernels; bf16: one rounding of
    # a sum of many products (CPU's bf16 paths round at other points)
    return dict(rtol=1e-5, atol=2e-5) if dtype == torch.float32 else dict(rtol=3e-2, atol=6e-2)


# ---- convolution ------------------------------------------------------------------------

# (spatial dims, batch, cin, cout, spatial size, kernel, stride, padding, dilation, groups, bias)
CONV = [
    (1, 2, 4, 6, 9, 3, 1, 0, 1, 1, True),
    (1, 1, 4, 4, 10, 3, 2, 1, 2, 2, False),
    (1, 2, 3, 6, 7, 1, 3, 0, 1, 3, True),            # depthwise 1x1, stride 3
    (2, 2, 3, 5, 7, 3, 1, 1, 1, 1, True),
    (2, 1, 4, 6, 8, 3, 2, 1, 1, 2, True),
    (2, 2, 4, 4, 9, 3, (1, 2), (2, 0), 2, 4, False),  # depthwise, asymmetric
    (2, 1, 2, 8, 8, 3, 1, 1, 1, 2, True),             # depthwise multiplier 4
    (2, 2, 3, 2, 10, (4, 2), 3, 0, 1, 1, True),       # stride drops the tail
    (2, 1, 3, 4, 6, 1, 1, 0, 1, 1, False),
    (2, 1, 2, 3, 5, 5, 1, 2, 1, 1, True),             # kernel as large as the input
    (3, 1, 2, 3, 5, 2, 1, 0, 1, 1, True),
    (3, 2, 4, 4, 6, 3, 2, 1, (1, 2, 1), 2, False),
]


def conv_case(nsp, n, cin, cout, size, k, stride, pad, dil, groups, bias, dtype, transposed=False):
    ks = (k,) * nsp if isinstance(k, int) else k
    x = make((n, cin) + (size,) * nsp, dtype, seed=1)
    wshape = (cin, cout // groups) if transposed else (cout, cin // groups)
    w = make(wshape + ks, dtype, low=-1, high=1, seed=2)
    b = make((cout,), dtype, seed=3) if bias else None
    return x, w, b


def conv_fn(nsp):
    return (F.conv1d, F.conv2d, F.conv3d)[nsp - 1]


def convt_fn(nsp):
    return (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nsp - 1]


@pytest.mark.parametrize("case,dtype", cases(CONV))
def test_conv(case, dtype):
    nsp, n, cin, cout, size, k, stride, pad, dil, groups, bias = case
    x, w, b = conv_case(*case, dtype)
    fn = conv_fn(nsp)
    args = (x, w, b) if bias else (x, w)
    check_grad(lambda x, w, b=None: fn(x, w, b, stride=stride, padding=pad, dilation=dil, groups=groups),
               *args, **tol(dtype))


# (spatial dims, batch, cin, cout, size, kernel, stride, padding, output_padding, dilation, groups, bias)
CONVT = [
    (1, 2, 4, 3, 5, 3, 2, 1, 1, 1, 1, True),
    (1, 1, 4, 6, 6, 2, 3, 0, 2, 1, 2, False),
    (2, 2, 3, 4, 4, 3, 1, 0, 0, 1, 1, True),
    (2, 1, 4, 6, 5, 3, 2, 1, 1, 1, 2, True),
    (2, 2, 4, 4, 4, 3, (2, 3), (1, 2), (0, 2), (2, 1), 4, False),  # depthwise
    (2, 1, 2, 3, 4, 1, 3, 1, 0, 1, 1, True),   # padding beyond the kernel: negative low pad
    (2, 1, 2, 2, 3, 4, 2, 1, 1, 2, 1, True),
    (2, 1, 2, 2, 4, 3, 1, 1, 1, 2, 1, False),  # output_padding >= stride (allowed: < dilation)
    (3, 1, 2, 4, 3, 2, 2, 0, 1, 1, 2, True),
    (3, 1, 2, 2, 3, 3, 1, 1, 0, (1, 2, 1), 1, False),
]


@pytest.mark.parametrize("case,dtype", cases(CONVT))
def test_conv_transpose(case, dtype):
    nsp, n, cin, cout, size, k, stride, pad, opad, dil, groups, bias = case
    x, w, b = conv_case(nsp, n, cin, cout, size, k, stride, pad, dil, groups, bias, dtype, transposed=True)
    fn = convt_fn(nsp)
    args = (x, w, b) if bias else (x, w)
    check_grad(lambda x, w, b=None: fn(x, w, b, stride=stride, padding=pad, output_padding=opad,
                                       groups=groups, dilation=dil), *args, **tol(dtype))


def test_conv_modules_and_unbatched():
    torch.manual_seed(0)
    for m in (nn.Conv2d(3, 4, 3, padding="same", bias=False), nn.Conv1d(2, 4, 3, padding="same"),
              nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)):
        x = make((2, m.in_channels) + (6,) * (m.weight.dim() - 2), seed=4)
        md = copy.deepcopy(m).to(dev)
        check(lambda x: (m if x.device.type == "cpu" else md)(x).detach(), x, rtol=1e-5, atol=1e-5)
    w = make((4, 3, 3, 3), seed=5)
    check(lambda x, w: F.conv2d(x, w, padding=1), make((3, 5, 5), seed=6), w, rtol=1e-5, atol=1e-5)
    x64, w64 = make((1, 2, 5, 5), torch.float64, seed=7), make((4, 1, 2, 3), torch.float64, seed=8)
    check_grad(lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=2), x64, w64)


def test_conv_backward_output_mask():
    """convolution_backward with only some outputs requested (input-only grad)."""
    x, w, b = make((2, 4, 6, 6), seed=1), make((6, 2, 3, 3), seed=2), make((6,), seed=3)
    for need in [(True, False, False), (False, True, True), (False, False, True)]:
        xs = [x.clone(), w.clone(), b.clone()]
        xd = [t.to(dev) for t in xs]
        for t, r in zip(xs + xd, need + need):
            t.requires_grad_(r)
        gy = make((2, 6, 3, 3), seed=7)
        outs = []
        for (xi, wi, bi), g in ((xs, gy), (xd, gy.to(dev))):
            y = F.conv2d(xi, wi, bi, stride=2, padding=1, groups=2)
            outs.append(torch.autograd.grad(y, [t for t in (xi, wi, bi) if t.requires_grad], g))
        for a, e in zip(outs[1], outs[0]):
            torch.testing.assert_close(a.cpu(), e, rtol=1e-5, atol=2e-5)


# ---- pooling ---------------------------------------------------------------------------------

def pool_input(nsp, size, dtype, seed=0, n=2, c=3):
    return make((n, c) + ((size,) * nsp if isinstance(size, int) else size), dtype, seed=seed)


MAXP = [  # (spatial dims, size, kernel, stride, padding, dilation, ceil_mode)
    (1, 9, 3, 2, 1, 1, False),
    (1, 8, 2, 3, 0, 2, True),
    (2, 7, 2, None, 0, 1, False),
    (2, 7, 3, 2, 1, 1, True),
    (2, (6, 9), (2, 3), (1, 2), (1, 0), (2, 1), False),
    (2, 8, 3, 3, 1, 2, True),
    (3, 5, 2, None, 0, 1, True),
    (3, 6, 3, 2, 1, (1, 2, 1), False),
]


def maxpool_fn(nsp):
    return (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nsp - 1]


@pytest.mark.parametrize("case,dtype", cases(MAXP))
def test_max_pool(case, dtype):
    nsp, size, k, s, p, d, ceil = case
    fn = maxpool_fn(nsp)
    x = pool_input(nsp, size, dtype)
    check(lambda x: fn(x, k, s, p, d, ceil_mode=ceil, return_indices=True)[1], x)
    check_grad(lambda x: fn(x, k, s, p, d, ceil_mode=ceil), x, **tol(dtype))


def test_max_pool_ties_nan_inf():
    x = torch.randint(-2, 2, (2, 2, 6, 6)).float()  # many ties: the first wins
    x[0, 0, 1, 1] = float("nan")
    x[0, 0, 0, 0] = float("nan")                     # two NaNs in one window: the last wins
    x[1, 1] = float("-inf")                          # an all -inf plane
    x[1, 0, 2, 3] = float("inf")
    for ceil in (False, True):
        check(lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=ceil, return_indices=True), x)
        check(lambda x: F.adaptive_max_pool2d(x, (4, 3), return_indices=True), x)
    xf = x.nan_to_num(nan=1.0)
    check_grad(lambda x: F.max_pool2d(x, 3, 1, 1), xf)
    check_grad(lambda x: F.adaptive_max_pool2d(x, (4, 5)), xf)


AVGP = [  # (spatial dims, size, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    (1, 9, 3, 2, 1, False, True, None),
    (1, 8, 3, 2, 1, True, False, None),
    (2, 7, 2, None, 0, False, True, None),
    (2, 7, 3, 2, 1, True, True, None),
    (2, 7, 3, 2, 1, True, False, None),
    (2, (6, 9), (2, 3), (1, 2), (1, 0), False, False, None),
    (2, 8, 3, 3, 1, False, True, 5),
    (2, 5, 4, 2, 2, True, True, None),
    (3, 5, 2, None, 0, True, True, None),
    (3, 6, 3, 2, 1, False, False, None),
    (3, 5, 3, 2, 1, True, True, 7),
]


# CPU has no bf16 avg_pool3d: those cases run in float32 only
@pytest.mark.parametrize("case,dtype", [c for c in cases(AVGP) if not (c.values[0][0] == 3 and c.values[1] == torch.bfloat16)])
def test_avg_pool(case, dtype):
    nsp, size, k, s, p, ceil, incl, div = case
    x = pool_input(nsp, size, dtype)
    if nsp == 1:  # avg_pool1d has no divisor_override
        f = lambda x: F.avg_pool1d(x, k, s, p, ceil, incl)  # noqa: E731
    else:
        fn = F.avg_pool2d if nsp == 2 else F.avg_pool3d
        f = lambda x: fn(x, k, s, p, ceil, incl, div)  # noqa: E731
    check_grad(f, x, **tol(dtype))


ADAPT = [  # (spatial dims, input size, output size)
    (1, 9, 4), (1, 5, 7), (2, 7, (3, 4)), (2, (6, 9), (6, 2)), (2, 5, (8, 5)), (3, (4, 5, 6), (2, 3, 4)),
]


@pytest.mark.parametrize("case,dtype", cases(ADAPT))
def test_adaptive_pools(case, dtype):
    nsp, size, out = case
    x = pool_input(nsp, size, dtype, seed=3)
    avg = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[nsp - 1]
    mx = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[nsp - 1]
    check_grad(lambda x: avg(x, out), x, **tol(dtype))
    check(lambda x: mx(x, out, return_indices=True)[1], x)
    check_grad(lambda x: mx(x, out), x, **tol(dtype))


def test_pools_unbatched_and_inf():
    x = make((3, 6, 7), seed=8)
    check(lambda x: F.max_pool2d(x, 2, return_indices=True), x)
    check_grad(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), x)
    check_grad(lambda x: F.adaptive_avg_pool2d(x, (4, 3)), x)
    y = make((1, 2, 6, 6), seed=9)
    y[0, 0, 0, 0] = float("inf")  # stays inside its own windows
    check(lambda y: F.adaptive_avg_pool2d(y, (4, 4)), y)
    check(lambda y: F.avg_pool2d(y, 2), y)


# ---- a tiny CNN trained with AdamW --------------------------------------------------------

def test_tiny_cnn_adamw_matches_cpu():
    torch.manual_seed(0)
    mc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                       nn.Conv2d(8, 16, 3, groups=2), nn.ReLU(), nn.AdaptiveAvgPool2d((2, 2)),
                       nn.Flatten(), nn.Linear(64, 5))
    md = copy.deepcopy(mc).to(dev)
    oc = torch.optim.AdamW(mc.parameters(), lr=1e-2)
    od = torch.optim.AdamW(md.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(4, 3, 10, 10, generator=g), torch.randint(0, 5, (4,), generator=g))] * 5
    lc, ld = [], []
    for model, opt, losses, d in ((mc, oc, lc, torch.device("cpu")), (md, od, ld, dev)):
        for xb, yb in batches:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(xb.to(d)), yb.to(d))
            loss.backward()
            opt.step()
            losses.append(loss.detach().cpu())
    lc, ld = torch.stack(lc), torch.stack(ld)
    assert lc[-1] < lc[0]
    torch.testing.assert_close(ld, lc, rtol=1e-4, atol=1e-5)
    for pc, pd in zip(mc.parameters(), md.parameters()):
        torch.testing.assert_close(pd.detach().cpu(), pc.detach(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_integer_convolution_is_exact(dtype):
    x = make((2, 3, 7, 6), dtype, low=-4, high=4)
    w = make((4, 3, 3, 2), dtype, low=-3, high=3, seed=1)
    if dtype == torch.int32:  # CPU has no int32 convolution kernel: compare with int64's
        got = torch.nn.functional.conv2d(x.to(dev), w.to(dev), padding=1).cpu()
        torch.testing.assert_close(got, torch.nn.functional.conv2d(x.long(), w.long(), padding=1).int())
        return
    check(lambda a, b: torch.nn.functional.conv2d(a, b, padding=1, stride=(2, 1)), x, w)
    check(lambda a, b: torch.nn.functional.conv1d(a, b), x[..., 0], w[..., 0])


def test_conv_mixed_dtypes_raise_like_cpu():
    """CPU refuses a weight or bias of another dtype than the input's; so does the tpu."""
    x, w = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3, dtype=torch.float64)
    b = torch.randn(3, dtype=torch.float64)
    cases = [lambda d: F.conv2d(x.to(d), w.to(d)), lambda d: F.conv2d(x.double().to(d), w.float().to(d)),
             lambda d: F.conv2d(x.to(d), w.float().to(d), b.to(d)),
             lambda d: F.conv1d(x[:, :, 0].to(d), w[:, :, 0].to(d)),
             lambda d: F.conv_transpose2d(x.to(d), w.transpose(0, 1).contiguous().to(d))]
    for fn in cases:
        with pytest.raises(RuntimeError) as cpu:
            fn("cpu")
        with pytest.raises(RuntimeError, match=re.escape(str(cpu.value))):
            fn("tpu")


@pytest.mark.parametrize("nd", params([2, 3], [2]))
def test_conv_output_memory_format_follows_cpu(nd):
    """A channels-last input or weight gives a channels-last output on CPU (oneDNN and its
    float64 2-d kernel; its float64 3-d kernel gives a contiguous one): the same strides
    on tpu, for convolutions and transposed ones, grouped, with and without bias; the
    gradients' strides too."""
    import itertools

    import torch.nn.functional as F
    cl = torch.channels_last if nd == 2 else torch.channels_last_3d
    n = 0
    for dt, xin, win, tr, groups in itertools.product([torch.float32, torch.float64, torch.bfloat16],
                                                      [False, True], [False, True], [False, True], [1, 3]):
        g = torch.Generator().manual_seed(n)
        wshape = ((3, 4 if groups == 1 else 1) if tr else (6 if groups == 3 else 4, 3 // groups)) + (3,) * nd
        x = torch.randn((2, 3) + (5,) * nd, generator=g).to(dt)
        w = torch.randn(wshape, generator=g).to(dt)
        b = torch.randn(wshape[1] * groups if tr else wshape[0], generator=g).to(dt)
        if xin:
            x = x.to(memory_format=cl)
        if win:
            w = w.to(memory_format=cl)
        conv = (F.conv_transpose2d if nd == 2 else F.conv_transpose3d) if tr else (F.conv2d if nd == 2 else F.conv3d)
        xc, wc = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
        xt, wt = x.to(dev).requires_grad_(True), w.to(dev).requires_grad_(True)
        y, yt = conv(xc, wc, b, groups=groups), conv(xt, wt, b.to(dev), groups=groups)
        what = (dt, xin, win, tr, groups)
        assert yt.stride() == y.stride(), (what, yt.stride(), y.stride())
        tol = 5e-2 if dt == torch.bfloat16 else 1e-4
        torch.testing.assert_close(yt.detach().cpu(), y.detach(), rtol=tol, atol=tol)
        y.backward(torch.ones_like(y))
        yt.backward(torch.ones_like(yt))
        for a, c in ((xt.grad, xc.grad), (wt.grad, wc.grad)):  # (a size-1 dim's stride carries no layout)
            assert [a.stride(d) for d in range(a.dim()) if a.shape[d] > 1] == \
                [c.stride(d) for d in range(c.dim()) if c.shape[d] > 1], (what, a.stride(), c.stride())
        n += 1
