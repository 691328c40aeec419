"""Bucketed dynamic sizes for compiled inference graphs (DESIGN §8).

With `dynamic=True` or `mark_dynamic`, a graph takes its dynamic sizes as int
inputs, and each new size would be a new program. Bucketing runs size n as the
program of its bucket (the next power of two): the inputs are padded with zeros
to the bucket along their dynamic dims and the outputs narrowed back to n.
That is exact only if no value at a valid position depends on the padded
ones. `plan` proves it for a graph, or says why not, by following each dim's
*factors* (the sizes it is made of, outer to inner) through the graph:

- elementwise ops keep positions apart (inputs' dims must line up factor for
  factor); creation ops (`arange`, `ones`, `full`, ...) and `tril`/`triu`
  give the same values at valid positions whatever the size;
- layout ops: views that merge or split dims keeping the factors in order
  ([b, s, 16] as [b*s, 16] and back), permutes, expands, clones, unsqueezes,
  splits of a static dim;
- reductions, softmaxes and norms are exact over static dims only; a matrix
  product must not contract a dynamic dim; embedding lookups are exact;
- attention (the one SDPA op) over dynamic keys only under is_causal, with
  queries of the same size: a valid query never sees a padded key;
- an output that is an input or a view of one refuses (AOTAutograd remakes it
  from the caller's unpadded tensor);
- anything else refuses (one program per size, still exact).

Outputs are narrowed back to the true sizes; where only size-1 dims precede
the narrowed ones (a batch of one) they get eager's contiguous strides, else
they keep the padded strides (same values).

Training graphs are not bucketed: a padded position's gradient could reach a
parameter's.
"""
import math
import operator

import torch
from torch._prims_common import make_contiguous_strides_for

aten = torch.ops.aten

_KEEP = {aten.clone.default, aten.alias.default, aten.contiguous.default, aten.lift_fresh_copy.default,
         aten._to_copy.default, aten.detach.default}
_CREATE = {aten.ones.default, aten.zeros.default, aten.full.default, aten.empty.memory_format,
           aten.arange.default, aten.arange.start, aten.arange.start_step, aten.scalar_tensor.default,
           aten.empty_strided.default, aten.tril.default, aten.triu.default}
_VIEWS = {aten.view.default, aten._unsafe_view.default, aten.reshape.default}
# reductions (over arg 1: an int, a list, or all dims when absent)
_REDUCE = {aten.sum.dim_IntList, aten.mean.dim, aten.amax.default, aten.amin.default,
           aten._softmax.default, aten._log_softmax.default, aten._safe_softmax.default,
           aten.var.correction, aten.std.correction, aten.logsumexp.default, aten.argmax.default,
           aten.argmin.default, aten.max.dim, aten.min.dim, aten.sum.default, aten.mean.default}
_SDPA = aten._scaled_dot_product_fused_attention_overrideable.default
_SPLITS = {aten.split.Tensor, aten.split_with_sizes.default}
_SIZE_MATH = {operator.mul, operator.add, operator.sub, operator.floordiv}


def bucket(n):
    """The bucket of size n: the next power of two."""
    return 1 if n <= 1 else 1 << math.ceil(math.log2(n))


class Plan:
    """How to bucket one graph: `pads` (input index, dim, symbol) of the tensor
    inputs, `sizes` (input index, symbol) of the int inputs, `narrows`
    (output index, dim, symbol) of the outputs."""

    def __init__(self, pads, sizes, narrows):
        self.pads, self.sizes, self.narrows = pads, sizes, narrows

    def pad(self, args):
        """args with each dynamic size in its bucket, and the sizes given."""
        true = {sym: args[i] for i, sym in self.sizes}
        out = list(args)
        for i, sym in self.sizes:
            out[i] = bucket(true[sym])
        for i, d, sym in self.pads:
            out[i] = _pad(out[i], d, bucket(true[sym]))
        return out, true

    def narrow(self, outs, true):
        outs = list(outs)
        narrowed = {}
        for i, d, sym in self.narrows:
            if outs[i].shape[d] != true[sym]:
                narrowed.setdefault(i, outs[i].is_contiguous())
                outs[i] = outs[i].narrow(d, 0, true[sym])
        for i, was_contiguous in narrowed.items():
            if was_contiguous:
                outs[i] = _restride(outs[i])
        return outs


def _restride(t):
    """A narrowed output with the strides eager gives it (contiguous) where its
    elements already lie that way: every dim of more than one element keeps
    its stride (the dims in front of the narrowed one have size 1, as in a
    batch of one). Otherwise the padded strides stay (the values are the same;
    a `view` that needs contiguity raises where CPU's would not: use
    `reshape`, or no dynamic sizes)."""
    want = make_contiguous_strides_for(t.shape)
    if t.stride() == want:
        return t
    if all(n <= 1 or s == w for n, s, w in zip(t.shape, t.stride(), want)):
        return t.as_strided(t.shape, want, t.storage_offset())
    return t


# Inputs up to this size are padded on the host (a copy there and back, no
# program): a device op over an input of the unpadded size would be compiled
# once per size, which is what bucketing saves. Larger ones are padded on the
# device.
_HOST_PAD_BYTES = 1 << 20


def _pad(t, d, size):
    extra = size - t.shape[d]
    if extra <= 0:
        return t
    shape = list(t.shape)
    shape[d] = extra
    if t.numel() * t.element_size() <= _HOST_PAD_BYTES:
        h = t.cpu()
        return torch.cat([h, h.new_zeros(shape)], d).to(t.device)
    return torch.cat([t, t.new_zeros(shape)], d)


def _expr(size):
    if isinstance(size, torch.fx.Node):
        size = size.meta.get("val")
    return size.node.expr if isinstance(size, torch.SymInt) else int(size)


def _same(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    import sympy

    return sympy.simplify(sympy.sympify(a) - sympy.sympify(b)) == 0


def _dyn(factors, syms):
    return any(not isinstance(f, int) and f.free_symbols & syms for f in factors)


def _own_dims(val, syms):
    """A fresh tensor's dims: one factor each, a dynamic one a single size."""
    dims = [(_expr(s),) for s in val.shape]
    if any(_dyn(d, syms) and not d[0].is_Symbol for d in dims):
        return None
    return dims


def _view(in_dims, out_sizes):
    """The dims of a view of `in_dims` as `out_sizes`: factors flow in order, a
    static factor may split; None when a dynamic factor would be cut."""
    flat = [f for d in in_dims for f in d if not _same(f, 1)]
    out, k = [], 0
    for size in out_sizes:
        e = _expr(size)
        if _same(e, 1):
            out.append((1,))
            continue
        take, prod = [], 1
        while not (take and _same(prod, e)):
            if k >= len(flat):
                return None
            f = flat[k]
            rest = e // prod if isinstance(e, int) and isinstance(prod, int) and e % prod == 0 else None
            if isinstance(f, int) and rest is not None and f > rest and f % rest == 0:
                take.append(rest)  # a static factor split in two
                flat[k] = f // rest
                prod *= rest
                continue
            take.append(f)
            prod = prod * f
            k += 1
        out.append(tuple(take))
    return out if k == len(flat) else None


def plan(gm):
    """A Plan for the inference graph gm, or the reason (str) it cannot be
    bucketed."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    syms, sizes, pads, state = set(), [], [], {}
    for i, n in enumerate(placeholders):
        v = n.meta.get("val")
        if isinstance(v, torch.SymInt):
            if not v.node.expr.is_Symbol:
                return "a size input is an expression"
            syms.add(v.node.expr)
            sizes.append((i, v.node.expr))
    if not syms:
        return "no dynamic sizes"
    for i, n in enumerate(placeholders):
        v = n.meta.get("val")
        if isinstance(v, torch.Tensor):
            dims = _own_dims(v, syms)
            if dims is None:
                return f"input {n.name} has a size that is an expression"
            pads += [(i, d, fs[0]) for d, fs in enumerate(dims) if _dyn(fs, syms)]
            state[n] = dims
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        why = _follow(n, state, syms)
        if why:
            return f"{n.format_node()}: {why}"
    narrows = []
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    for i, o in enumerate(out_node.args[0]):
        if not isinstance(o, torch.fx.Node):
            continue
        if isinstance(o.meta.get("val"), torch.SymInt):
            return "an output is a size"
        if _aliases_input(o):
            # AOTAutograd remakes such an output as a view of the caller's
            # (unpadded) input with the padded run's sizes and strides
            return f"output {i} is a view of an input"
        for d, fs in enumerate(state.get(o, ())):
            if _dyn(fs, syms):
                if len(fs) != 1:
                    return f"output {i} has a dim made of several sizes"
                narrows.append((i, d, fs[0]))
    return Plan(pads, sizes, narrows)


def _aliases_input(n):
    """Whether n is a graph input or a view of one (through ops whose schema
    returns an alias of their first argument)."""
    seen = set()
    while isinstance(n, torch.fx.Node) and n not in seen:
        seen.add(n)
        if n.op == "placeholder":
            return True
        if n.op != "call_function":
            return False
        if n.target is operator.getitem:
            n = n.args[0]
            continue
        schema = getattr(n.target, "_schema", None)
        if schema is None or not schema.returns or schema.returns[0].alias_info is None:
            return False
        n = n.args[0]
    return False


def _follow(n, state, syms):
    """Sets state[n] (its dims' factors; a list of those for a tuple); returns
    why n is not exact under padding, or None."""
    v = n.meta.get("val")
    t = n.target
    if n.op == "get_attr":
        if isinstance(v, torch.Tensor):
            state[n] = [(int(s),) for s in v.shape]
        return None
    if n.op != "call_function":
        return "not an op"
    schema = getattr(t, "_schema", None)
    if schema is not None and schema.is_mutable:
        return "writes in place (an input's write would go to its padded copy)"
    if isinstance(v, (torch.SymInt, int)) and not isinstance(v, bool):
        return None if t in _SIZE_MATH or t is aten.sym_size.int else "a size from a tensor"
    if t is operator.getitem:
        src = state.get(n.args[0])
        if src is not None:
            state[n] = src[n.args[1]]
        return None
    ins = [a for a in n.all_input_nodes if a in state and isinstance(state[a], list)
           and not (state[a] and isinstance(state[a][0], list))]
    dyn = any(_dyn(fs, syms) for a in ins for fs in state[a])
    sized = any(isinstance(a.meta.get("val"), torch.SymInt) for a in n.all_input_nodes)
    if not dyn and not sized:  # static positions
        if isinstance(v, torch.Tensor):
            state[n] = [(_expr(s),) for s in v.shape]
        elif isinstance(v, (list, tuple)):
            state[n] = [[(_expr(s),) for s in x.shape] for x in v if isinstance(x, torch.Tensor)]
        return None
    if not isinstance(v, torch.Tensor) and t not in {aten.native_layer_norm.default, _SDPA} | _SPLITS:
        return "an op with a dynamic input that is not a tensor op"
    packet = getattr(t, "_overloadpacket", None)
    if t in _CREATE:
        dims = _own_dims(v, syms)
        if dims is None:
            return "creates a tensor of a size that is an expression"
        state[n] = dims
        return None
    if torch.Tag.pointwise in getattr(t, "tags", ()) or t in _KEEP:
        return _elementwise(n, v, ins, state, syms)
    if t in _VIEWS:
        out = _view(state[n.args[0]], n.args[1])
        if out is None:
            return "a view that cuts a dynamic dim"
        state[n] = out
        return None
    src = state.get(n.args[0]) if isinstance(n.args[0], torch.fx.Node) else None
    if packet is aten.permute:
        state[n] = [src[d] for d in n.args[1]]
    elif packet in (aten.transpose, aten.t):
        dims = list(src)
        a, b = (n.args[1] % len(dims), n.args[2] % len(dims)) if packet is aten.transpose else (0, 1)
        dims[a], dims[b] = dims[b], dims[a]
        state[n] = dims
    elif packet is aten.unsqueeze:
        dims = list(src)
        dims.insert(n.args[1] % (len(dims) + 1), (1,))
        state[n] = dims
    elif packet is aten.expand:
        lead = len(n.args[1]) - len(src)
        out = []
        for d, size in enumerate(n.args[1]):
            e = _expr(size)
            old = src[d - lead] if d >= lead else (1,)
            if _same(e, -1) or _same(_prod(old), e):
                out.append(old)
            elif _dyn(old, syms) or (not isinstance(e, int) and not e.is_Symbol):
                return "expands a dynamic dim to another size"
            else:
                out.append((e,))
        state[n] = out
    elif packet in (aten.select, aten.slice):
        d = n.args[1] % len(src)
        if _dyn(src[d], syms) and not (packet is aten.slice and _whole(n, src[d])):
            return "selects or slices a dynamic dim"
        state[n] = [x for k, x in enumerate(src) if k != d] if packet is aten.select else \
            [x if k != d else (_expr(v.shape[d]),) for k, x in enumerate(src)]
    elif t in _REDUCE:
        rd = n.args[1] if len(n.args) > 1 else None
        rd = [rd] if isinstance(rd, int) else list(range(len(src))) if not rd else list(rd)
        if any(_dyn(src[d % len(src)], syms) for d in rd):
            return "reduces over a dynamic dim"
        keep = v.dim() == len(src)
        state[n] = [fs if d not in {x % len(src) for x in rd} else (1,) for d, fs in enumerate(src)] if keep \
            else [fs for d, fs in enumerate(src) if d not in {x % len(src) for x in rd}]
    elif t is aten.native_layer_norm.default:
        k = len(n.args[1])
        if any(_dyn(fs, syms) for fs in src[len(src) - k:]):
            return "normalizes over a dynamic dim"
        stat = [*src[:len(src) - k]] + [(1,)] * k
        state[n] = [list(src), stat, stat]
    elif t in (aten.mm.default, aten.bmm.default, aten.addmm.default, aten.baddbmm.default):
        a, b = (n.args[-2], n.args[-1]) if t in (aten.addmm.default, aten.baddbmm.default) else n.args[:2]
        a, b = state[a], state[b]
        if _dyn(a[-1], syms) or _dyn(b[-2], syms):
            return "contracts a dynamic dim"
        if t in (aten.addmm.default, aten.baddbmm.default) and _dyn_input(n.args[0], state, syms):
            return "adds a dynamic bias"
        state[n] = [*a[:-1], b[-1]]
    elif t in _SPLITS:
        d = (n.args[2] if len(n.args) > 2 else n.kwargs.get("dim", 0)) % len(src)
        if _dyn(src[d], syms):
            return "splits a dynamic dim"
        state[n] = [[x if k != d else (_expr(o.shape[d]),) for k, x in enumerate(src)] for o in v]
    elif t is _SDPA:
        return _attention(n, state, syms)
    elif t is aten.embedding.default:
        state[n] = [*state[n.args[1]], state[n.args[0]][-1]]
    else:
        return "no bucketing rule for this op"
    return None


def _attention(n, state, syms):
    """Scaled dot-product attention (q, k, v: (B, H, L|S, E|Dv)): rows (B, H,
    queries) are independent; the keys' dim S may be dynamic only under
    is_causal, as the queries' own size (a valid query i attends to keys j <= i,
    never to a padded one). No mask, no dropout."""
    args = list(n.args) + [None] * 6
    q, k, v = (state[a] for a in args[:3])
    causal = bool(args[5] or n.kwargs.get("is_causal"))
    if args[3] is not None or n.kwargs.get("attn_bias") is not None:
        return "attention with a mask"
    if (args[4] or 0) != 0:
        return "attention with dropout"
    if _dyn(q[-1], syms) or _dyn(k[-1], syms) or _dyn(v[-1], syms):
        return "attention over a dynamic head dim"
    if q[:-2] != k[:-2] or k[:-2] != v[:-2] or k[-2] != v[-2]:
        return "attention whose inputs' dims do not line up"
    if _dyn(k[-2], syms) and not (causal and q[-2] == k[-2]):
        return "attention over dynamic keys without is_causal on queries of the same size"
    out = [*q[:-1], v[-1]]
    lse = list(q[:-1])
    state[n] = [out, lse, [], [], [], [], [], [], []]
    return None


def _whole(n, factors):
    """Whether a slice takes all of its dim (start 0, step 1, to the end)."""
    args = list(n.args) + [None] * 5
    start, end, step = args[2] or 0, args[3], args[4] or 1
    if not (_same(_expr(start), 0) and _same(_expr(step), 1)):
        return False
    return end is None or (isinstance(end, int) and end >= 2**62) or _same(_expr(end), _prod(factors))


def _prod(factors):
    p = 1
    for f in factors:
        p = p * f
    return p


def _dyn_input(a, state, syms):
    return isinstance(a, torch.fx.Node) and any(_dyn(fs, syms) for fs in state.get(a, ()))


def _elementwise(n, v, ins, state, syms):
    """Output dims from the inputs' (broadcast from the right): each dynamic
    dim must be the same factors in every input that has it."""
    if any(isinstance(a.meta.get("val"), torch.SymInt) for a in n.all_input_nodes):
        return "uses a size as a value"
    out = [None] * v.dim()
    for a in ins:
        src = state[a]
        lead = len(out) - len(src)
        for k, fs in enumerate(src):
            if k + lead < 0:
                return "broadcasts a dynamic dim away"
            if _dyn(fs, syms):
                cur = out[k + lead]
                if cur is not None and cur != fs:
                    return "lines up different dynamic dims"
                out[k + lead] = fs
    for d, fs in enumerate(out):
        if fs is None:
            out[d] = fs = (_expr(v.shape[d]),)
            if _dyn(fs, syms) and not fs[0].is_Symbol:
                return "a dim that is an expression of sizes"
    state[n] = out
    return None
