"""Op-specific rules of the sweep, each with its reason.

- KEEP_ON_CPU: sample arguments that PyTorch requires on the CPU (moving them
  to tpu would be the harness's mistake, not the device's).
- Tie-ambiguous index outputs: sort / topk / kthvalue / mode / median return
  indices whose order among equal values PyTorch does not specify (unless
  sort's stable=True). When such an index output differs, it is accepted if
  it selects the same values (and, for sort, is a permutation).
- f64_errors: on a float mismatch, the distance of each side from a float64
  CPU result, to tell "tpu is wrong" from "CPU rounds differently".
"""
import torch

from .compare import compare, equal_on_cpu, flatten


def _arg(sample, pos, name, default):
    if len(sample.args) > pos:
        return sample.args[pos]
    return sample.kwargs.get(name, default)


# op name -> f(sample) -> the tensors to leave on CPU
KEEP_ON_CPU = {
    # tensor_split(input, tensor_indices_or_sections): "expected ... to be on cpu"
    "tensor_split": lambda s: [a for a in s.args[:1] if isinstance(a, torch.Tensor)],
}


def keep_on_cpu(op_name, sample):
    f = KEEP_ON_CPU.get(op_name)
    return {id(t) for t in f(sample)} if f else set()


# op name -> f(sample) -> (position of the index output or None when the whole
# output is the index, dim, keepdim, kind) or None when indices are exact.
TIE_INDEX_OPS = {
    "sort": lambda s: None if s.kwargs.get("stable") else
    (1, _arg(s, 0, "dim", -1), True, "perm"),
    "argsort": lambda s: None if s.kwargs.get("stable") else
    (None, _arg(s, 0, "dim", -1), True, "perm"),
    "topk": lambda s: (1, _arg(s, 1, "dim", -1), True, "unique"),
    "kthvalue": lambda s: (1, _arg(s, 1, "dim", -1), _arg(s, 2, "keepdim", False), ""),
    "mode": lambda s: (1, _arg(s, 0, "dim", -1), _arg(s, 1, "keepdim", False), ""),
    "median": lambda s: None if _arg(s, 0, "dim", None) is None else
    (1, _arg(s, 0, "dim", None), _arg(s, 1, "keepdim", False), ""),
    "nanmedian": lambda s: None if _arg(s, 0, "dim", None) is None else
    (1, _arg(s, 0, "dim", None), _arg(s, 1, "keepdim", False), ""),
}


def tie_equivalent(op_name, sample, got, want, tol):
    """True when `got` differs from `want` only by the order chosen among equal
    values in a tie-ambiguous index output (see TIE_INDEX_OPS)."""
    spec = TIE_INDEX_OPS.get(op_name)
    spec = spec(sample) if spec else None
    inp = sample.input
    if spec is None or not isinstance(inp, torch.Tensor):
        return False
    pos, dim, keepdim, kind = spec
    if pos is None:
        g_idx, w_idx = got, want
    else:
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return False
        for i, (a, b) in enumerate(zip(got, want)):
            if i != pos:
                compare(a, b, tol)  # values must agree (raises Mismatch)
        g_idx, w_idx = got[pos], want[pos]
    compare(g_idx, w_idx, tol, meta_only=True)  # dtype and shape
    g, w, x = g_idx.cpu(), w_idx, inp.detach()
    if x.dim() == 0:
        return torch.equal(g, w)
    if not keepdim:
        g, w = g.unsqueeze(dim), w.unsqueeze(dim)
    if g.numel() and (g.min() < 0 or g.max() >= x.shape[dim]):
        return False
    if not equal_on_cpu(x.gather(dim, g), x.gather(dim, w)):
        return False
    if kind == "perm":
        return torch.equal(g.sort(dim).values, w.sort(dim).values)
    if kind == "unique" and g.shape[dim] > 1:
        srt = g.sort(dim).values
        return not bool((srt.narrow(dim, 1, srt.shape[dim] - 1)
                         == srt.narrow(dim, 0, srt.shape[dim] - 1)).any())
    return True


def _to_f64(x):
    if isinstance(x, torch.Tensor):
        t = x.detach().clone()
        if t.is_complex():
            return t.to(torch.complex128)
        return t.double() if t.is_floating_point() else t
    if isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
        return type(x)(_to_f64(e) for e in x)
    if isinstance(x, dict):
        return {k: _to_f64(v) for k, v in x.items()}
    return x


def f64_errors(op, sample, got, want):
    """(max |tpu - f64|, max |cpu - f64|) over the float outputs, from the op
    run on CPU in float64; None when that run fails or shapes differ."""
    try:
        ref = sample.output_process_fn_grad(
            op.op(_to_f64(sample.input), *_to_f64(tuple(sample.args)), **_to_f64(sample.kwargs)))
    except Exception:  # noqa: BLE001
        return None
    e_tpu = e_cpu = 0.0
    trios = list(zip(flatten(got), flatten(want), flatten(ref)))
    if len(trios) != len(flatten(want)):
        return None
    for g, w, r in trios:
        if not (isinstance(w, torch.Tensor) and (w.is_floating_point() or w.is_complex())
                and isinstance(r, torch.Tensor) and isinstance(g, torch.Tensor)
                and g.shape == w.shape == r.shape):
            continue
        if w.is_complex():  # both parts, as reals
            g, w = torch.view_as_real(g.detach().cpu().resolve_conj()), torch.view_as_real(w.detach().resolve_conj())
            r = torch.view_as_real(r.detach().resolve_conj().to(torch.complex128))
        r = r.double()
        ok = torch.isfinite(r)
        if not ok.any():
            continue
        dg = (g.detach().cpu().double() - r).abs()[ok]
        dw = (w.detach().double() - r).abs()[ok]
        e_tpu = max(e_tpu, float(torch.nan_to_num(dg, nan=float("inf"), posinf=float("inf")).max()))
        e_cpu = max(e_cpu, float(torch.nan_to_num(dw, nan=float("inf"), posinf=float("inf")).max()))
    return e_tpu, e_cpu
