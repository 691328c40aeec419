"""What `make test` and `make test-full` run differently.

`make test` (CI, 30 minutes on 2 cores) runs every test, each randomized sweep at a size that
covers its generators; `make test-full` (TORCH_TPU_TEST_FULL=1) runs the sweeps at their full
sizes, and its Fused pass covers every folder. A sweep's own environment variable (e.g.
TT_VIEW_FUZZ_CASES) still overrides both.
"""
import os

FULL = os.environ.get("TORCH_TPU_TEST_FULL", "0") == "1"
FUSED_PASS = os.environ.get("TORCH_TPU_DEFER_AND_FUSE", "0") == "1"  # the suite's Fused Eager pass


def sweep(quick, full):
    """The number of randomized cases (or seeds) of a sweep: `quick` in `make test`, `full` in
    `make test-full`."""
    return full if FULL else quick


def params(values, quick):
    """The values a parametrized test takes: all of `values` in `make test-full`, the subset `quick`
    in `make test` (for a grid whose other values run the same lowerings)."""
    return list(values) if FULL else list(quick)


def cases(env_var, quick, full):
    """A sweep's size from its environment variable, else sweep(quick, full)."""
    return int(os.environ.get(env_var) or sweep(quick, full))
