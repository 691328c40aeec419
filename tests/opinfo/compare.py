"""Comparing a tpu result with the CPU reference (values, dtypes, shapes)."""
import math

import torch


def flatten(x):
    """The leaves of a nested output (tuples, lists, namedtuples, dicts)."""
    if isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
        return [y for e in x for y in flatten(e)]
    if isinstance(x, dict):
        return [y for k in sorted(x) for y in flatten(x[k])]
    return [x]


# ---- comparing ----------------------------------------------------------------

class Mismatch(Exception):
    """A tpu result that differs from CPU (message, max abs / rel error;
    `near`: within NEAR_TOL, i.e. likely rounding / summation order)."""

    def __init__(self, msg, max_abs=None, max_rel=None, near=False, kind="meta"):
        super().__init__(msg)
        self.max_abs, self.max_rel, self.near = max_abs, max_rel, near
        self.kind = kind  # "meta" (type/shape/dtype/device), "exact" (int/bool), "float"


# A float mismatch still inside these (rtol, atol) is reported as a near miss:
# PyTorch's own CPU-vs-accelerator check (test_ops.py test_compare_cpu) uses 1e-3.
NEAR_TOL = {torch.float32: (1e-3, 1e-3), torch.bfloat16: (6.4e-2, 4e-2),
            torch.float16: (8e-3, 4e-3), torch.complex64: (1e-3, 1e-3),
            torch.float64: (1e-6, 1e-6), torch.complex128: (1e-6, 1e-6)}


def _errors(got, want):
    """max abs / rel error between two same-shape CPU tensors (NaN-aware)."""
    if want.is_complex():
        got, want = torch.view_as_real(got), torch.view_as_real(want)
    g, w = got.double(), want.double()
    nan_g, nan_w = torch.isnan(g), torch.isnan(w)
    n_nan = int((nan_g != nan_w).sum())
    both = ~(nan_g | nan_w)
    same_inf = torch.isinf(w) & (g == w)
    ok = both & ~same_inf
    d = (g - w).abs()
    d = torch.where(ok, d, torch.zeros_like(d))
    inf_bad = int((both & (torch.isinf(g) | torch.isinf(w)) & ~same_inf).sum())
    max_abs = float(d.max()) if d.numel() else 0.0
    # relative to |want|; a difference where want == 0 is infinitely relative
    rel = torch.where(d > 0, d / w.abs(), torch.zeros_like(d))
    max_rel = float(rel.max()) if d.numel() else 0.0
    return max_abs, max_rel, n_nan, inf_bad


def compare(got, want, tol, meta_only=False, path="out", expect_tpu=True):
    """Raise Mismatch when the tpu result `got` differs from the CPU `want`
    (values within tol(output dtype) = (rtol, atol), NaN == NaN; dtypes and
    shapes exact; tensors must come back on tpu unless `expect_tpu` is false)."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            raise Mismatch(f"{path}: got {type(got).__name__}, expected a tensor")
        if expect_tpu and got.device.type != "tpu" and got.numel() > 0:
            raise Mismatch(f"{path}: output on {got.device}, expected tpu")
        # conjugate / negative views materialized (view_as_real rejects them)
        g = got.detach().cpu().resolve_conj().resolve_neg()
        w = want.detach().resolve_conj().resolve_neg()
        if g.dtype != w.dtype:
            raise Mismatch(f"{path}: dtype {g.dtype} != {w.dtype}")
        if g.shape != w.shape:
            raise Mismatch(f"{path}: shape {tuple(g.shape)} != {tuple(w.shape)}")
        if meta_only or w.layout != torch.strided:
            return
        if g.dtype == torch.bool or not (g.is_floating_point() or g.is_complex()):
            if not torch.equal(g, w):
                n = int((g != w).sum())
                max_abs, max_rel, _, _ = _errors(g.double(), w.double()) if g.dtype != torch.bool \
                    else (1.0, float("inf"), 0, 0)
                raise Mismatch(f"{path}: {n}/{w.numel()} elements differ (exact dtype {w.dtype})",
                               max_abs, max_rel, kind="exact")
            return
        rtol, atol = tol(w.dtype)
        try:
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError:
            max_abs, max_rel, n_nan, n_inf = _errors(g, w)
            bad = ~torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
            detail = f"{int(bad.sum())}/{w.numel()} elements differ"
            if n_nan:
                detail += f", {n_nan} NaN mismatches"
            if n_inf:
                detail += f", {n_inf} inf mismatches"
            nr, na = NEAR_TOL.get(w.dtype, (0.0, 0.0))
            near = not n_nan and not n_inf and bool(torch.isclose(g, w, rtol=nr, atol=na).all())
            raise Mismatch(f"{path}: {detail}; max abs {max_abs:.3g}, max rel {max_rel:.3g} "
                           f"(rtol {rtol:g}, atol {atol:g}, {w.dtype})", max_abs, max_rel,
                           near, kind="float") from None
        return
    if isinstance(want, (list, tuple)) and not isinstance(want, torch.Size):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            raise Mismatch(f"{path}: got {type(got).__name__} of len "
                           f"{len(got) if hasattr(got, '__len__') else '?'}, expected {len(want)}")
        for i, (a, b) in enumerate(zip(got, want)):
            compare(a, b, tol, meta_only, f"{path}[{i}]", expect_tpu)
        return
    if meta_only:
        return
    if isinstance(want, float) and isinstance(got, (float, int)):
        if math.isnan(want) and math.isnan(got):
            return
        rtol, atol = tol(torch.float32)
        if not math.isclose(got, want, rel_tol=max(rtol, 1e-6), abs_tol=atol):
            raise Mismatch(f"{path}: {got!r} != {want!r}", abs(got - want), None, kind="float")
        return
    if got != want:
        raise Mismatch(f"{path}: {got!r} != {want!r}")


def _EXACT(dtype):
    return 0.0, 0.0


def equal_on_cpu(a, b):
    """Two CPU results are identical (used to spot nondeterministic ops)."""
    try:
        compare(a, b, _EXACT, expect_tpu=False)
        return True
    except Mismatch:
        return False
