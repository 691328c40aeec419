"""The zoo's dense, encoder, vision, audio and state-space families
against CPU: forward, greedy generate (decoders, encoder-decoders), an AdamW step, Fused
Eager, torch.compile."""
import pytest

from . import cases, families

NAMES = [n for n, f in families.FAMILIES.items() if not f.moe and f.kind != "diffusers"]
pytestmark = pytest.mark.usefixtures("fresh_dynamo")


@pytest.mark.parametrize("name", NAMES)
def test_forward(name):
    cases.check_forward(name)


@pytest.mark.parametrize("name", [n for n in NAMES if families.FAMILIES[n].generate])
def test_generate(name):
    cases.check_generate(name)


@pytest.mark.parametrize("name", NAMES)
def test_train_step(name):
    cases.check_train_step(name)


@pytest.mark.parametrize("name", NAMES)
def test_forward_fused(name):
    cases.check_forward(name, "fused")


@pytest.mark.parametrize("name", NAMES)
def test_forward_compiled(name):
    cases.check_forward(name, "compiled")
