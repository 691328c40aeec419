"""The zoo's Diffusers models (the Flux and Wan transformers, a UNet, a VAE) against CPU:
forward, an AdamW step, Fused Eager, torch.compile; and a 3-step flow-matching denoising
loop with Flux."""
from . import cases, families

NAMES = [n for n, f in families.FAMILIES.items() if f.kind == "diffusers"]
cases.define_tests(globals(), NAMES, flow_matching=True)
