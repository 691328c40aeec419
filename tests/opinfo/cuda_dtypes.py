"""The dtypes an accelerator accepts and CPU refuses.

For every OpInfo, the dtypes of `supported_dtypes("cuda")` (forward) and
`supported_backward_dtypes("cuda")` (backward) that CPU lacks: the device
accepts them and computes what CUDA computes. There is no CPU result in that
dtype to compare with, so the reference is CPU in a wider dtype (WIDER: the
half types in float32, ComplexHalf in complex64, integers and bool in
float64 / int64 / uint8 as the op takes them), its floating results rounded
to the dtype the device returns. That is CUDA's own rule for these dtypes:
compute in the wider "opmath" type, round once.

    python -m tests.opinfo.cuda_dtypes            # the table: pass / fail / error per (op, dtype)

`pairs()` lists the class; `run_pair()` runs one (op, dtype, fwd|bwd).
"""
import contextlib
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from . import harness
from .compare import Mismatch, compare, flatten

# the wider dtype CPU computes the reference in; the first that CPU's OpInfo accepts
WIDER = {
    torch.float16: (torch.float32, torch.float64),
    torch.bfloat16: (torch.float32, torch.float64),
    torch.complex32: (torch.complex64, torch.complex128),
    torch.bool: (torch.uint8, torch.int64, torch.float32),
    torch.uint8: (torch.int64, torch.float64),
    torch.int8: (torch.int64, torch.float64),
    torch.int16: (torch.int64, torch.float64),
    torch.int32: (torch.int64, torch.float64),
    torch.int64: (torch.float64,),
    torch.float32: (torch.float64,),
    torch.float64: (torch.float64,),
    torch.complex64: (torch.complex128,),
    torch.complex128: (torch.complex128,),
}

# OpInfos of CUDA-only kernels (no tpu meaning: cuDNN / flash / efficient attention
# entry points) and of results the sweep cannot compare: listed, with the reason, not swept.
NOT_DEVICE = {
    "torch.ops.aten._flash_attention_forward": "a CUDA kernel's entry point (FlashAttention)",
    "torch.ops.aten._efficient_attention_forward": "a CUDA kernel's entry point (memory-efficient attention)",
    "to_sparse": "a sparse result (the sweep compares strided ones; tests/ops/sparse covers sparse COO)",
}

MAX_SAMPLES = 3


def pairs(ops=None):
    """[(op, dtype, variant)] of the class: dtypes CUDA's OpInfo accepts and CPU's lacks."""
    out = []
    for op in harness.load_op_db():
        key = harness.op_key(op)
        if ops and key not in ops and op.name not in ops:
            continue
        try:
            cpu, cuda = set(op.supported_dtypes("cpu")), set(op.supported_dtypes("cuda"))
            bcpu = set(op.supported_backward_dtypes("cpu")) if op.supports_autograd else set()
            bcuda = set(op.supported_backward_dtypes("cuda")) if op.supports_autograd else set()
        except Exception:  # noqa: BLE001
            continue
        for d in sorted(cuda - cpu, key=str):
            out.append((op, d, "fwd"))
        for d in sorted((bcuda - bcpu) & cuda, key=str):
            if d.is_floating_point or d.is_complex:
                out.append((op, d, "bwd"))
    return out


def _wide_for(op, dtype):
    """The dtype of the CPU reference: the first wider one CPU's OpInfo lists; for an
    OpInfo that lists none on CPU (a variant named for a CUDA library, e.g.
    batch_norm without_cudnn), the dtype itself where CPU computes it, else the wider."""
    ok = set(op.supported_dtypes("cpu"))
    for w in WIDER.get(dtype, ()):
        if w in ok:
            return w
    if not ok:
        return dtype if dtype in (torch.float32, torch.float64) else WIDER[dtype][0]
    return None


def _nan_reduce(mean):
    """nansum / nanmean of complex inputs (CUDA takes them, CPU refuses them): an
    element with a NaN part counts as absent."""
    def ref(x, *args, **kwargs):
        if not x.is_complex():
            return (torch.nanmean if mean else torch.nansum)(x, *args, **kwargs)
        nan = torch.isnan(x)
        s = torch.where(nan, torch.zeros_like(x), x).sum(*args, **kwargs)
        if not mean:
            return s
        kwargs.pop("dtype", None)
        return s / (~nan).sum(*args, **kwargs).to(s.dtype)
    return ref


# CPU references for ops whose CPU kernels refuse every dtype of the class
REFERENCE = {"nansum": (_nan_reduce(False), {torch.complex32: torch.complex64}),
             "nanmean": (_nan_reduce(True), {torch.complex32: torch.complex64})}


class _Widen:
    """Copies a sample for the CPU reference: tensors of `dtype` become `wide`,
    as do `dtype=` arguments."""

    def __init__(self, dtype, wide):
        self.dtype, self.wide, self.memo = dtype, wide, {}

    def __call__(self, x):
        if isinstance(x, torch.Tensor):
            if id(x) not in self.memo:
                t = x.detach()
                t = t.to(self.wide) if t.dtype == self.dtype else t.clone()
                if x.requires_grad and (t.is_floating_point() or t.is_complex()):
                    t.requires_grad_(True)
                self.memo[id(x)] = t
            return self.memo[id(x)]
        if isinstance(x, torch.dtype):
            return self.wide if x == self.dtype else x
        if isinstance(x, torch.Size):
            return x
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*(self(e) for e in x))
        if isinstance(x, (list, tuple)):
            return type(x)(self(e) for e in x)
        if isinstance(x, dict):
            return {k: self(v) for k, v in x.items()}
        return x


class _PerOpRounding(TorchDispatchMode):
    """CUDA's rule applied op by op: where ATen runs a decomposition (a complex
    convolution as three real ones) or an autograd formula as several ops, CUDA
    rounds each op's result to the half type. Under this mode (on CPU), every
    ATen op whose floating inputs are all of `dtype` (or its real part) computes
    in `wide` and rounds its results back; mutated arguments get the rounded
    values. The second reference, where the round-once one differs."""

    def __init__(self, dtype, wide):
        super().__init__()
        self.dtype, self.wide = dtype, wide
        self.narrow_real = torch.float16 if dtype == torch.complex32 else dtype
        self.wide_real = wide.to_real() if wide.is_complex else wide

    def _narrow_input(self, t):
        return isinstance(t, torch.Tensor) and t.dtype in (self.dtype, self.narrow_real)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        leaves = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        floats = [t for t in leaves if t.is_floating_point() or t.is_complex()]
        if (func.overloadpacket in (torch.ops.aten._to_copy, torch.ops.aten.copy_)
                or not floats or not all(self._narrow_input(t) for t in floats)):
            return func(*args, **kwargs)
        wide_of = {self.dtype: self.wide, self.narrow_real: self.wide_real}
        widen = lambda t: t.to(wide_of[t.dtype]) if self._narrow_input(t) else t  # noqa: E731
        wargs, wkwargs = tree_map(widen, args), tree_map(widen, kwargs)
        out = func(*wargs, **wkwargs)
        mutated = []
        for i, a in enumerate(func._schema.arguments):
            if a.alias_info is not None and a.alias_info.is_write:
                orig = args[i] if i < len(args) else kwargs.get(a.name)
                new = wargs[i] if i < len(args) else wkwargs.get(a.name)
                if isinstance(orig, torch.Tensor) and orig is not new:
                    orig.copy_(new)
                    mutated.append((new, orig))

        def narrow(t):
            if not isinstance(t, torch.Tensor):
                return t
            for new, orig in mutated:
                if t is new:
                    return orig
            return t.to({self.wide: self.dtype, self.wide_real: self.narrow_real}.get(t.dtype, t.dtype))
        return tree_map(narrow, out)


def _round_like(want, got):
    """The wide CPU result cast, leaf by leaf, to the dtypes the device returned."""
    if isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor):
        return want.detach().to(got.dtype) if want.dtype != got.dtype else want.detach()
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)) and len(want) == len(got):
        return type(want)(_round_like(w, g) for w, g in zip(want, got)) if not hasattr(want, "_fields") \
            else type(want)(*(_round_like(w, g) for w, g in zip(want, got)))
    return want


def _parts(x):
    """complex32 results as their (re, im) float16 parts: compared part by part,
    as a complex closeness test calls (inf + 1j) and (inf + 2j) far apart."""
    if isinstance(x, torch.Tensor) and x.dtype == torch.complex32:
        return torch.view_as_real(x.detach())
    if isinstance(x, (list, tuple)):
        return type(x)(_parts(e) for e in x) if not hasattr(x, "_fields") else type(x)(*(_parts(e) for e in x))
    return x


def _tol(dtype):
    # one rounding of an opmath result in the narrow type, against CUDA's (also one
    # rounding) or a few for ops that round intermediates: a few ulps of the narrow type
    return {torch.float16: (4e-3, 2e-3), torch.bfloat16: (3.2e-2, 2e-2),
            torch.complex32: (4e-3, 2e-3)}.get(dtype, (1.3e-6, 1e-5))


def run_pair(op, dtype, variant, max_samples=MAX_SAMPLES):
    """'pass' | 'no-samples' | 'no-reference', or raises (Mismatch, the tpu error)."""
    ref_op, wide = op.op, _wide_for(op, dtype)
    if op.name in REFERENCE:
        ref_op, wides = REFERENCE[op.name]
        wide = wides.get(dtype, dtype)
    if wide is None:
        return "no-reference"
    samples = harness.get_samples(op, dtype, variant == "bwd", max_samples)
    per_op_ok = dtype in (torch.float16, torch.bfloat16, torch.complex32) and op.name not in REFERENCE

    def mode(per_op):
        return _PerOpRounding(dtype, wide) if per_op else contextlib.nullcontext()

    def tol(d):
        return _tol(dtype if d in (torch.float16, torch.bfloat16, torch.complex32) else d)

    done = 0
    for s in samples:
        if variant == "fwd":
            def reference(seed, per_op=False):
                w = _Widen(None, None) if per_op else _Widen(dtype, wide)  # per_op: copies
                torch.manual_seed(seed)
                with mode(per_op):
                    return s.output_process_fn_grad(ref_op(w(s.input), *w(tuple(s.args)), **w(dict(s.kwargs))))
            try:
                with harness._unpinned_seed(op.op):
                    want, again = reference(0), reference(1)
            except Exception:  # noqa: BLE001 - CPU refuses the sample itself: not comparable
                continue
            meta_only = not harness.equal_on_cpu(want, again)  # a random op: shapes and dtypes only
            inp, args, kwargs, m = harness.move(s, True)
            got = s.output_process_fn_grad(op.op(inp, *args, **kwargs))
            if not m.touched_tpu:
                continue
            try:
                compare(_parts(got), _parts(_round_like(want, got)), tol, meta_only)
            except Mismatch:
                if not per_op_ok:
                    raise
                with harness._unpinned_seed(op.op):
                    compare(_parts(got), _parts(_round_like(reference(0, per_op=True), got)), tol, meta_only)
            done += 1
        else:
            def reference(seed, per_op=False):
                w = _Widen(None, None) if per_op else _Widen(dtype, wide)
                inp_c, args_c, kw_c = w(s.input), w(tuple(s.args)), w(dict(s.kwargs))
                leaves_c = [t for t in flatten([inp_c, list(args_c), kw_c])
                            if isinstance(t, torch.Tensor) and t.requires_grad]
                torch.manual_seed(seed)
                with mode(per_op):
                    outs_c = [o for o in flatten(s.output_process_fn_grad(ref_op(inp_c, *args_c, **kw_c)))
                              if isinstance(o, torch.Tensor) and o.requires_grad]
                return leaves_c, outs_c

            def grads_of(leaves_c, outs_c, per_op=False):
                with mode(per_op):
                    loss = sum((torch.view_as_real(o.resolve_conj()) if o.is_complex() else o).float().mul(
                        wt.unsqueeze(-1) if o.is_complex() else wt).sum() for o, wt in zip(outs_c, weights))
                    return torch.autograd.grad(loss, leaves_c, allow_unused=True)
            try:
                with harness._unpinned_seed(op.op):
                    leaves_c, outs_c = reference(0)
                    _, outs_again = reference(1)
                if not leaves_c or not outs_c:
                    continue
                g = torch.Generator().manual_seed(1234)
                # weights 1, 2 or 4: exact in every dtype, and never smaller than 1, so a
                # value that overflows the half type inside the backward (as CUDA rounds
                # each intermediate) overflows in the reference's final rounding too
                weights = [torch.randint(0, 3, o.shape, generator=g).float().exp2() for o in outs_c]
                grads_c = grads_of(leaves_c, outs_c)
            except Exception:  # noqa: BLE001
                continue
            meta_only = not harness.equal_on_cpu([o.detach() for o in outs_c], [o.detach() for o in outs_again])
            inp, args, kwargs, m = harness.move(s, True, grad=True)
            leaves = [t for t in flatten([inp, list(args), kwargs])
                      if isinstance(t, torch.Tensor) and t.requires_grad]
            outs = [o for o in flatten(s.output_process_fn_grad(op.op(inp, *args, **kwargs)))
                    if isinstance(o, torch.Tensor) and o.requires_grad]
            loss = sum((torch.view_as_real(o.resolve_conj()) if o.is_complex() else o).float().mul(
                wt.to("tpu").unsqueeze(-1) if o.is_complex() else wt.to("tpu")).sum()
                for o, wt in zip(outs, weights))
            grads = torch.autograd.grad(loss, leaves, allow_unused=True)

            def check(grads_c):
                for i, (gd, gc) in enumerate(zip(grads, grads_c)):
                    if (gd is None) != (gc is None):
                        raise Mismatch(f"grad[{i}]: None on one side only")
                    if gc is not None:
                        compare(gd, gc.to(gd.dtype), lambda d: _tol(dtype), meta_only, path=f"grad[{i}]")
            try:
                check(grads_c)
            except Mismatch:
                if not per_op_ok:
                    raise
                with harness._unpinned_seed(op.op):
                    check(grads_of(*reference(0, per_op=True), per_op=True))
            done += 1
    return "pass" if done else "no-samples"


def sweep(ops=None, out=sys.stdout):
    rows = []
    for op, dtype, variant in pairs(ops):
        key = harness.op_key(op)
        if key in NOT_DEVICE:
            rows.append((key, dtype, variant, "not-device", NOT_DEVICE[key]))
            continue
        try:
            st, why = run_pair(op, dtype, variant), ""
        except Mismatch as e:
            st, why = "fail", harness.first_line(e, 200)
        except Exception as e:  # noqa: BLE001
            st, why = "error", harness.first_line(f"{type(e).__name__}: {e}", 200)
        rows.append((key, dtype, variant, st, why))
        print(f"{key:45s} {str(dtype)[6:]:10s} {variant} {st} {why}", file=out, flush=True)
    counts = {}
    for r in rows:
        counts[r[3]] = counts.get(r[3], 0) + 1
    print("counts:", counts, file=out)
    return rows


if __name__ == "__main__":
    sweep(sys.argv[1].split(",") if len(sys.argv) > 1 else None)
