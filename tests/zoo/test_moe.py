"""The zoo's mixture-of-experts families (Transformers' grouped_mm experts path: histc of
int32, torch._grouped_mm) against CPU: forward, greedy generate, an AdamW step, Fused
Eager, torch.compile."""
from . import cases, families

NAMES = [n for n, f in families.FAMILIES.items() if f.moe]
cases.define_tests(globals(), NAMES, generate=NAMES)
