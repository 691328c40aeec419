"""Eager-mode selection and the CPU-fallback switch."""
import contextlib

from . import _C

_MODES = {"strict": 0, "debug": 1, "fused": 2}
_NAMES = {v: k for k, v in _MODES.items()}


def current_eager_mode():
    """The eager mode of this thread: "strict", "debug" or "fused"."""
    return _NAMES[_C._get_mode()]


@contextlib.contextmanager
def eager_mode(mode):
    """Run the block in an eager mode (thread-local; overrides the env default).

    "debug": every op waits for its result, errors are raised at the op.
    "strict" (default): asynchronous, one cached program per op signature.
    "fused": ops are deferred and fused (not yet built: behaves as "strict").
    """
    if mode not in _MODES:
        raise ValueError(f"eager mode must be one of {sorted(_MODES)}, got {mode!r}")
    old = _C._get_mode()
    _C._set_mode(_MODES[mode])
    try:
        yield
    finally:
        _C._set_mode(old)


def cpu_fallback(enabled=True):
    """Run ops the tpu device lacks on the CPU (with a warning once per op)."""
    _C._set_cpu_fallback(bool(enabled))
