"""resample family (csrc/core/lower/nn/resample.c) against PyTorch CPU:
F.interpolate in the nearest, nearest-exact, linear, bilinear, trilinear and
bicubic modes (sizes or scale factors, align_corners), forward and
gradients."""
import pytest
import torch
import torch.nn.functional as F

from ops_util import check, check_grad, make

# (input shape, interpolate kwargs) per spatial rank
CASES = {
    1: [((2, 3, 5), {"size": 9}), ((1, 2, 6), {"size": 4}), ((2, 1, 4), {"scale_factor": 2.5}),
        ((1, 2, 7), {"scale_factor": 0.6}), ((1, 1, 3), {"size": 3}), ((1, 1, 4), {"size": 8})],
    2: [((1, 2, 4, 5), {"size": (7, 3)}), ((2, 1, 3, 3), {"scale_factor": 1.7}),
        ((1, 2, 5, 4), {"scale_factor": (0.5, 2.0)}), ((1, 1, 3, 4), {"size": (3, 8)})],
    3: [((1, 2, 3, 4, 2), {"size": (5, 3, 4)}), ((1, 1, 2, 3, 4), {"scale_factor": (1.5, 2.0, 0.75)})],
}
MODES = {1: ["nearest", "nearest-exact", "linear"], 2: ["nearest", "nearest-exact", "bilinear", "bicubic"],
         3: ["nearest", "nearest-exact", "trilinear"]}
PARAMS = [(k, m) for k in (1, 2, 3) for m in MODES[k]]


def variants(mode, kw):
    out = [dict(kw)]
    if mode in ("linear", "bilinear", "trilinear", "bicubic"):
        out.append(dict(kw, align_corners=True))
    if "scale_factor" in kw:
        out.append(dict(kw, recompute_scale_factor=True))
    return out


@pytest.mark.parametrize("k,mode", PARAMS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_interpolate(k, mode, dtype):
    for shape, kw in CASES[k]:
        for v in variants(mode, kw):
            x = make(shape, dtype)
            check(lambda t: F.interpolate(t, mode=mode, **v), x)


@pytest.mark.parametrize("k,mode", PARAMS)
def test_interpolate_grad(k, mode):
    for shape, kw in CASES[k]:
        for v in variants(mode, kw)[:2]:
            check_grad(lambda t: F.interpolate(t, mode=mode, **v), make(shape))


def test_interpolate_float64_and_uint8():
    x = make((1, 2, 4, 5), torch.float64)
    check(lambda t: F.interpolate(t, size=(7, 3), mode="bilinear"), x)
    check(lambda t: F.interpolate(t, scale_factor=1.3, mode="bicubic", align_corners=True), x)
    check_grad(lambda t: F.interpolate(t, size=(6, 9), mode="bicubic"), x)
    u = make((1, 3, 4, 4), torch.uint8, low=0, high=255)
    check(lambda t: F.interpolate(t, size=(6, 7), mode="nearest"), u)
    check(lambda t: F.interpolate(t, size=(6, 7), mode="nearest-exact"), u)


def test_interpolate_bf16_grad():
    tol = {"atol": 2e-2, "rtol": 2e-2}
    x = make((1, 2, 4, 5), torch.bfloat16)
    check_grad(lambda t: F.interpolate(t, size=(7, 3), mode="bilinear"), x, **tol)
    check_grad(lambda t: F.interpolate(t, scale_factor=2.0, mode="nearest"), x, **tol)
