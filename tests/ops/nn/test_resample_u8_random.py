"""uint8 image resizes (csrc/core/lower/nn/resample_u8.c) against PyTorch
CPU, exactly: F.interpolate bilinear / bicubic with and without antialias on
random uint8 images, sizes and scale factors (up and down), align_corners,
channels-last and non-contiguous inputs, 1..7 channels.

PyTorch CPU runs uint8 resizes in fixed point in two kernels: AVX2 for
C <= 4 channels and a generic one otherwise. They agree except where the
generic one is wrong (H resized with an output width of 1: it repeats the
first input row). There the reference is the C <= 4 kernel run on the
channels in groups of at most 4 (tpu results do not depend on C)."""
import random

import pytest
import torch
import torch.nn.functional as F

from ops_util import dev
from suite import sweep


def cpu_reference(x, **kw):
    if x.shape[1] <= 4:
        return F.interpolate(x, **kw)
    return torch.cat([F.interpolate(p, **kw) for p in x.split(4, dim=1)], dim=1)


def random_case(rng):
    c = rng.choice([1, 2, 3, 4, 5, 7])
    h, w = rng.randint(1, 13), rng.randint(1, 13)
    kw = {"mode": rng.choice(["bilinear", "bicubic"]), "antialias": rng.random() < 0.5,
          "align_corners": rng.random() < 0.3}
    if rng.random() < 0.5:
        sf = (rng.choice([0.3, 0.5, 0.7, 1.0, 1.3, 2.0, 2.5]), rng.choice([0.4, 1.0, 1.7, 3.0]))
        if int(h * sf[0]) < 1 or int(w * sf[1]) < 1:
            sf = (2.0, 2.0)
        kw["scale_factor"] = sf
        kw["recompute_scale_factor"] = rng.random() < 0.3
    else:
        kw["size"] = (rng.randint(1, 16), rng.randint(1, 16))
    return (rng.randint(1, 2), c, h, w), kw


@pytest.mark.parametrize("seed", range(sweep(2, 8)))
def test_uint8_resize_random(seed):
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(seed)
    for _ in range(40):
        shape, kw = random_case(rng)
        x = torch.randint(0, 256, shape, dtype=torch.uint8, generator=g)
        layout = rng.choice(["contiguous", "channels_last", "strided"])
        if layout == "channels_last":
            x = x.contiguous(memory_format=torch.channels_last)
        elif layout == "strided":
            x = torch.randint(0, 256, shape[:3] + (2 * shape[3],), dtype=torch.uint8, generator=g)[..., ::2]
        want = cpu_reference(x, **kw)
        got = F.interpolate(x.to(dev), **kw)
        assert got.device.type == "tpu" and got.dtype == torch.uint8
        assert torch.equal(got.cpu(), want), (shape, kw, layout)


def test_uint8_resize_extremes():
    # all-255 and all-0 images stay saturated; bicubic overshoot clamps to 0..255
    for fill in (0, 255):
        x = torch.full((1, 3, 5, 6), fill, dtype=torch.uint8)
        for mode in ("bilinear", "bicubic"):
            for aa in (False, True):
                kw = {"size": (9, 4), "mode": mode, "antialias": aa}
                assert torch.equal(F.interpolate(x.to(dev), **kw).cpu(), F.interpolate(x, **kw))
    x = torch.zeros(1, 1, 6, 6, dtype=torch.uint8)
    x[..., ::2, ::2] = 255  # a checkerboard: bicubic rings past both ends
    for aa in (False, True):
        kw = {"size": (11, 13), "mode": "bicubic", "antialias": aa}
        assert torch.equal(F.interpolate(x.to(dev), **kw).cpu(), F.interpolate(x, **kw))
    # a large downscale (wide antialias windows) and an unchanged size
    x = torch.randint(0, 256, (1, 3, 64, 80), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    for kw in ({"size": (5, 7), "mode": "bilinear", "antialias": True},
               {"size": (5, 7), "mode": "bicubic", "antialias": True},
               {"size": (64, 80), "mode": "bilinear", "antialias": True}):
        assert torch.equal(F.interpolate(x.to(dev), **kw).cpu(), F.interpolate(x, **kw))
    # zero-size batch
    x = torch.zeros(0, 3, 4, 4, dtype=torch.uint8)
    assert F.interpolate(x.to(dev), size=(6, 6), mode="bilinear").shape == (0, 3, 6, 6)


def test_integer_resize_unsupported_names_itself():
    # CPU has no integer linear / cubic resize but uint8 2-d bilinear / bicubic
    for dtype, mode, shape in ((torch.int8, "bilinear", (1, 2, 3, 3)), (torch.uint8, "linear", (1, 2, 3)),
                               (torch.int32, "bicubic", (1, 1, 3, 3)), (torch.uint8, "trilinear", (1, 1, 2, 2, 2))):
        x = torch.zeros(shape, dtype=dtype)
        with pytest.raises((RuntimeError, NotImplementedError)):
            F.interpolate(x, scale_factor=2, mode=mode)
        with pytest.raises((RuntimeError, NotImplementedError), match="upsample"):
            F.interpolate(x.to(dev), scale_factor=2, mode=mode).cpu()
