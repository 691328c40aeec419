"""Fake tensors of tpu tensors (what dynamo and AOTAutograd trace with under
torch.compile) take the bridge's output-metadata rule for the ops whose
Python meta kernel states another backend's limits (csrc/bridge/aten/
meta_rules.cpp: meta_rules_for_fake; _grouped_mm's asks for CUDA's bfloat16).
The rule is the one eager calls use, so a graph traces as its eager run
computes. Other devices' fake tensors, and symbolic sizes, keep PyTorch's
meta kernel."""
import torch

from . import _C


def _tpu_device(args, kwargs):
    for a in torch.utils._pytree.tree_leaves((args, kwargs)):
        if isinstance(a, torch.Tensor) and a.device.type == "tpu":
            return a.device
    return None


def _symbolic(args, kwargs):
    for a in torch.utils._pytree.tree_leaves((args, kwargs)):
        if isinstance(a, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in (*a.shape, *a.stride())):
            return True
    return False


def _fake_impl(fake_mode, func, *args, **kwargs):
    device = _tpu_device(args, kwargs)
    if device is None or _symbolic(args, kwargs):
        return NotImplemented
    outs = _C._fake_meta(func._schema.name, func._schema.overload_name, args, **kwargs)
    if outs is None:
        return NotImplemented
    with fake_mode:
        res = [torch.empty_strided(s, st, dtype=dt, device=device) for s, st, dt in outs]
    return res[0] if len(res) == 1 else tuple(res)


def install():
    from torch._subclasses import fake_impls

    names = frozenset(_C._fake_meta_ops())
    fake_impls.register_op_impl(lambda func: func._schema.name in names)(_fake_impl)
