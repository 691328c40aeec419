"""Probe: for every op_db OpInfo with an out= variant (float32 and complex64, its first four samples), the layout
an empty out= tensor gets on CPU and on tpu; prints the ops where they differ (shapes and strides of each out).

    PYTHONPATH=. python tools/out_layouts.py
"""
import warnings

import torch

import torch_tpu  # noqa: F401  (registers the tpu device)


def moved(x, d):
    if isinstance(x, torch.Tensor):
        return x.detach().clone() if d == "cpu" else x.detach().to(d)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(moved(e, d) for e in x)
    if isinstance(x, dict):
        return {k: moved(v, d) for k, v in x.items()}
    if isinstance(x, torch.device) or (isinstance(x, str) and x == "cpu"):
        return torch.device(d)
    return x


def layout(op, sample, want, d):
    """The (shape, strides) of each empty out= after the op on device d, or None if it raises."""
    outs = tuple(torch.empty(0, dtype=t.dtype, device=d) for t in (want if isinstance(want, tuple) else (want,)))
    try:
        op.op(moved(sample.input, d), *moved(tuple(sample.args), d),
              out=outs if isinstance(want, tuple) else outs[0], **moved(dict(sample.kwargs), d))
    except Exception:  # noqa: BLE001 - refused: not a layout question
        return None
    return tuple((tuple(t.shape), t.stride()) for t in outs)


def main():
    from torch.testing._internal.common_methods_invocations import op_db
    warnings.simplefilter("ignore")
    differ = {}
    for op in op_db:
        if not op.supports_out or op.name.startswith("sparse."):
            continue
        for dt in (torch.float32, torch.complex64):
            if dt not in op.supported_dtypes("cpu"):
                continue
            for n, s in enumerate(op.sample_inputs("cpu", dt)):
                if n >= 4:
                    break
                try:
                    want = op.op(moved(s.input, "cpu"), *moved(tuple(s.args), "cpu"), **moved(dict(s.kwargs), "cpu"))
                except Exception:  # noqa: BLE001 - CPU refuses the sample
                    continue
                if not all(isinstance(t, torch.Tensor) for t in (want if isinstance(want, tuple) else (want,))):
                    continue
                cpu, tpu = layout(op, s, want, "cpu"), layout(op, s, want, "tpu")
                if cpu is not None and tpu is not None and cpu != tpu:
                    differ.setdefault(op.name, (str(dt)[6:], cpu, tpu))
    for name, (dt, cpu, tpu) in sorted(differ.items()):
        print(f"{name} ({dt}): cpu {cpu}  tpu {tpu}")
    print(f"{len(differ)} ops differ")


if __name__ == "__main__":
    main()
