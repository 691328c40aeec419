"""Host reads (.cpu(), .item(), .tolist()) of every kind of view, against CPU.

On XLA's CPU plugin the runtime reads a ready buffer at its address (device
memory is host memory) and gathers a strided view itself; elsewhere, and with
TORCH_TPU_HOST_ADDRESS_READS=0, through the plugin's ToHostBuffer and a copy
program. Both paths must give CPU's values for random strided, offset,
expanded (stride 0), transposed, conj and neg views of every dtype, in every
eager mode; and a fused loop whose scalars change every iteration must read
each iteration's values (the packed scalars are cached by content)."""
import os
import random
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_tpu
from suite import sweep

DEV = "tpu"
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
          torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128]
MODES = ["strict", "fused", "debug"]


def _base(rng, dtype, n):
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    if dtype == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dtype.is_complex:
        return torch.randn(n, dtype=dtype, generator=g)
    if dtype.is_floating_point:
        return (torch.randn(n, generator=g) * 10).to(dtype)
    lo, hi = (0, 200) if dtype == torch.uint8 else (-100, 100)
    return torch.randint(lo, hi, (n,), generator=g).to(dtype)


def _random_view(rng, n):
    """sizes, strides (>= 0, some 0), offset inside a storage of n elements."""
    rank = rng.randrange(0, 5)
    sizes = [rng.randrange(0, 4) if rng.random() < 0.1 else rng.randrange(1, 5) for _ in range(rank)]
    strides = [rng.choice([0, 1, 2, 3, 5, 7, 11]) for _ in range(rank)]
    span = sum((s - 1) * st for s, st in zip(sizes, strides) if s > 0)
    if span >= n:
        return _random_view(rng, n)
    return sizes, strides, rng.randrange(0, n - span)


def _reads(t):
    """Every host read of t, as comparable values."""
    out = [t.cpu(), t.tolist()]
    if t.numel() == 1:
        out.append(t.item())
    return out


def _check(got, want):
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            # .cpu() of a CPU tensor is itself; of a device tensor, a copy laid
            # out as empty_like (as CUDA's): strides kept when dense
            assert g.dtype == w.dtype and g.shape == w.shape
            assert g.stride() == torch.empty_like(w).stride(), (g.stride(), w.stride())
            assert torch.equal(g, w), (g, w)
        else:
            assert g == w


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(sweep(2, 6)))
def test_random_views_read_as_on_cpu(mode, seed):
    rng = random.Random(seed * 31 + MODES.index(mode))
    n = 96
    with torch_tpu.eager_mode(mode):
        for dtype in DTYPES:
            cpu = _base(rng, dtype, n)
            dev = cpu.to(DEV)
            for _ in range(6):
                sizes, strides, off = _random_view(rng, n)
                vc = cpu.as_strided(sizes, strides, off)
                vd = dev.as_strided(sizes, strides, off)
                _check(_reads(vd), _reads(vc))
                if vc.dim() >= 2:
                    _check(_reads(vd.transpose(0, -1)), _reads(vc.transpose(0, -1)))
                if dtype.is_complex:
                    _check(_reads(vd.conj()), _reads(vc.conj()))
                    _check(_reads(vd.conj().imag), _reads(vc.conj().imag))
                if dtype.is_floating_point or dtype.is_complex:
                    _check(_reads(torch._neg_view(vd)), _reads(torch._neg_view(vc)))
            # a result of device work read before and after more work on it
            yd, yc = dev[1::3], cpu[1::3]
            if dtype != torch.bool:
                yd.add_(dev[::3][: yd.numel()])
                yc.add_(cpu[::3][: yc.numel()])
            _check(_reads(yd), _reads(yc))
            _check(_reads(dev), _reads(cpu))
            # a view of another dtype than its storage's buffer
            if dtype == torch.float32:
                _check(_reads(dev.view(torch.int32)[5:40:3]), _reads(cpu.view(torch.int32)[5:40:3]))


def test_fused_loop_reads_each_iterations_scalars():
    """The packed scalars of a fused loop are cached by content: a loop whose
    scalars change must still read each iteration's values, and a loop whose
    scalars repeat must find them on the device."""
    x0 = torch.arange(-8, 8) / 4  # sums of its products with the c below are exact
    with torch_tpu.eager_mode("fused"):
        xd = x0.to(DEV)
        s0 = torch_tpu._C._stats(-1)
        for i in range(40):
            c = 1.0 + (i % 7) / 16  # repeats every 7 iterations
            got = [(xd * c + i).sum().item(), (xd * 0.5 - 2).tolist()]
            want = [(x0 * c + i).sum().item(), (x0 * 0.5 - 2).tolist()]
            assert got == want, (i, got, want)
        s1 = torch_tpu._C._stats(-1)
    assert s1["packed_hits"] > s0["packed_hits"]


def test_plugin_path_gives_the_same_reads():
    """TORCH_TPU_HOST_ADDRESS_READS=0: the same reads through ToHostBuffer."""
    code = textwrap.dedent("""
        import torch, torch_tpu
        a = torch.arange(60, dtype=torch.float32).view(3, 4, 5)
        d = a.to("tpu")
        for f in (lambda t: t, lambda t: t.transpose(0, 2), lambda t: t[1:, ::2, 3],
                  lambda t: t.expand(2, 3, 4, 5), lambda t: t[2, 3, 4], lambda t: t.view(torch.int32)[1]):
            assert torch.equal(f(d).cpu(), f(a)), f
        assert (d * 2)[1, 2, 3].item() == 66.0
        print("OK")
    """)
    env = dict(os.environ, TORCH_TPU_HOST_ADDRESS_READS="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr
