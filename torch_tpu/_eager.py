"""Eager-mode selection and the CPU-fallback switch."""
import contextlib

from . import _C

_MODES = {"strict": 0, "debug": 1, "fused": 2}
_NAMES = {v: k for k, v in _MODES.items()}


def current_eager_mode():
    """The eager mode ops of this thread run in: "strict", "debug" or "fused"."""
    return _NAMES[_C._get_mode()]


@contextlib.contextmanager
def eager_mode(mode):
    """Run the block in an eager mode (overrides the env default).

    "debug": every op waits for its result, errors are raised at the op.
    "strict" (default): asynchronous, one cached program per op signature.
    "fused": ops are recorded and run as one program when a value is needed
    (a host read such as .item() or .cpu(), torch.tpu.synchronize(), an op
    without a lowering, the graph-size limit, the end of a repeated block).

    The mode holds for this thread and for the threads that run its ops
    without a mode of their own: autograd's device threads (so the backward
    of a step written inside the block runs in the same mode) and other
    helper threads. On leaving, the previous modes come back (ops recorded
    in the block run when their values are needed, as always).
    """
    if mode not in _MODES:
        raise ValueError(f"eager mode must be one of {sorted(_MODES)}, got {mode!r}")
    old_thread, old_process = _C._thread_mode(), _C._process_mode()
    _C._set_thread_mode(_MODES[mode])
    _C._set_process_mode(_MODES[mode])
    try:
        yield
    finally:
        _C._set_thread_mode(old_thread)
        _C._set_process_mode(old_process)


def cpu_fallback(enabled=True):
    """Run ops the tpu device lacks on the CPU (with a warning once per op)."""
    _C._set_cpu_fallback(bool(enabled))
