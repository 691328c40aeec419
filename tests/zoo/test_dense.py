"""The zoo's dense, encoder, vision, audio and state-space families against CPU: forward,
greedy generate (decoders, encoder-decoders), an AdamW step, Fused Eager, torch.compile."""
from . import cases, families

NAMES = [n for n, f in families.FAMILIES.items() if not f.moe and f.kind != "diffusers"]
cases.define_tests(globals(), NAMES, generate=[n for n in NAMES if families.FAMILIES[n].generate])
