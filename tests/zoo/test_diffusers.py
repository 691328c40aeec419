"""The zoo's Diffusers models (Flux and Wan transformers, a UNet, a VAE) against CPU: forward,
an AdamW step, Fused Eager, torch.compile; and a 3-step flow-matching denoising loop."""
import pytest
import torch

from . import cases, families

NAMES = [n for n, f in families.FAMILIES.items() if f.kind == "diffusers"]
pytestmark = pytest.mark.usefixtures("fresh_dynamo")


@pytest.mark.parametrize("name", NAMES)
def test_forward(name):
    cases.check_forward(name)


@pytest.mark.parametrize("name", NAMES)
def test_train_step(name):
    cases.check_train_step(name)


@pytest.mark.parametrize("name", NAMES)
def test_forward_fused(name):
    cases.check_forward(name, "fused")


@pytest.mark.parametrize("name", NAMES)
def test_forward_compiled(name):
    cases.check_forward(name, "compiled")


def test_flow_matching_denoising_loop():
    fam, cpu, tpu = cases.models("flux")
    b = cases.batch(fam)
    with torch.no_grad():
        want = families.flow_matching(cpu, b)
        got = families.flow_matching(tpu, cases.to_dev(b))
    assert got.device.type == "tpu"
    cases.close(got, want, cases.FWD_TOL, "flux latents after 3 flow-matching steps")
