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

Which of these rules applies to an op (its bucket class: "keep", "create",
"view", "reduce", ...) is a fact beside the op's lowering in the core
(tt_lower_bucket_t, csrc/core/lower/tt_lower.h), read through
torch_tpu._C._lower_facts(); only PyTorch's `pointwise` tag is read here.

Outputs come back at their true sizes with eager's sizes, strides and
offsets (from their fake values' expressions): where the true elements of
their storage (the tensor they view, laid out densely by eager) are a prefix
of the padded buffer (a batch of one) by a restride, free; otherwise the
program itself compacts that storage (`_compact`: a gather indexed by the
true sizes, which reach the program as host values, so one program still
serves every size of its bucket). Outputs viewing one storage still alias.
An output whose storage eager does not lay out densely from its start is
narrowed, keeping the padded strides.

Training graphs are not bucketed: a padded position's gradient could reach a
parameter's.
"""
import copy
import math
import operator

import torch
from torch._prims_common import make_contiguous_strides_for

aten = torch.ops.aten

_SIZE_MATH = {operator.mul, operator.add, operator.sub, operator.floordiv}
_MULTI_OUTPUT = {"layer_norm", "attention", "split"}  # rules of ops that return several tensors
_RULES = None


def _rules():
    """What bucketing may assume about each op that has a rule: its bucket
    class ("reduce", "view", ...), a fact beside the op's lowering in the core
    (csrc/core/lower/tt_lower.h, tt_lower_bucket_t), by torch.ops.aten overload
    (a fact about one overload) or overload packet (a fact about every
    overload). Read from the core once."""
    global _RULES
    if _RULES is None:
        from torch_tpu import _C

        rules = {}
        for name, (_flags, cls) in _C._lower_facts().items():
            ns, _, op = name.partition("::")
            if cls is None or ns != "aten":
                continue
            base, _, overload = op.partition(".")
            target = getattr(aten, base, None)
            if target is not None and overload:
                target = getattr(target, overload, None)
            if target is not None:
                rules[target] = cls
        _RULES = rules
    return _RULES


def _rule(t):
    """The bucket class of the call target t (its overload's, else its
    packet's), or None."""
    rules = _rules()
    try:
        cls = rules.get(t)
    except TypeError:  # an unhashable target: no op of ours
        return None
    return cls if cls is not None else rules.get(getattr(t, "_overloadpacket", None))


def bucket(n):
    """The bucket of size n: the next power of two."""
    return 1 if n <= 1 else 1 << math.ceil(math.log2(n))


class Plan:
    """How to bucket one graph: `pads` (input index, dim, symbol) of the tensor
    inputs, `sizes` (input index, symbol) of the int inputs, `narrows`
    (output index, dim, symbol) of the outputs, `layouts` (output index:
    _Layout) of the narrowed outputs whose storage eager lays out densely:
    they get eager's sizes, strides and offsets. The program compacts those
    storages whose true elements are not a prefix of the padded buffer
    (`compacting`), over the true sizes of `compact_syms`."""

    def __init__(self, pads, sizes, narrows, layouts=None):
        self.pads, self.sizes, self.narrows = pads, sizes, narrows
        self.layouts = layouts or {}
        self.compact_syms = sorted({d for lay in self.layouts.values() if lay.compact
                                    for d in lay.root_dims if not isinstance(d, int)}, key=str)

    def pad(self, args):
        """args with each dynamic size in its bucket, and the sizes given (the
        compacting graph's true sizes last, as CPU 0-dim tensors)."""
        true = {sym: args[i] for i, sym in self.sizes}
        out = list(args)
        for i, sym in self.sizes:
            out[i] = bucket(true[sym])
        for i, d, sym in self.pads:
            out[i] = _pad(out[i], d, bucket(true[sym]))
        out += [torch.tensor(true[sym], dtype=torch.int64) for sym in self.compact_syms]
        return out, true

    def narrow(self, outs, true):
        """The outputs at their true sizes, laid out as eager lays them out
        (else, where eager's layout has gaps, with the padded buffer's
        strides)."""
        outs, done = list(outs), set()
        padded = None
        for i, lay in self.layouts.items():
            t = outs[i]
            if not lay.compact:  # the true elements lead the padded buffer, if it is eager's layout
                padded = padded or {sym: bucket(n) for sym, n in true.items()}
                if (list(t.shape), list(t.stride()), t.storage_offset()) != lay.at(padded):
                    continue
            outs[i] = t.as_strided(*lay.at(true))
            done.add(i)
        for i, d, sym in self.narrows:
            if i not in done and outs[i].shape[d] != true[sym]:
                outs[i] = outs[i].narrow(d, 0, true[sym])
        return outs

    def compacting(self, gm):
        """gm, or a copy of it whose outputs with compacted storages are the
        flat `_compact`ed storage (their base), taking the true sizes of
        `compact_syms` as CPU 0-dim int64 inputs (last)."""
        if not self.compact_syms:
            return gm
        gm = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
        g = gm.graph
        by_name = {n.name: n for n in g.nodes}
        last = [n for n in g.nodes if n.op == "placeholder"][-1]
        trues = []
        with g.inserting_after(last):
            for sym in reversed(self.compact_syms):
                p = g.placeholder(f"true_{sym}")
                p.meta["val"] = torch.empty((), dtype=torch.int64)
                trues.insert(0, p)
        index = {sym: k for k, sym in enumerate(self.compact_syms)}
        out_node = next(n for n in g.nodes if n.op == "output")
        outs, done = list(out_node.args[0]), {}
        with g.inserting_before(out_node):
            for i, lay in self.layouts.items():
                if not lay.compact:
                    continue
                if lay.root not in done:
                    spec = tuple(-1 if isinstance(d, int) else index[d] for d in lay.root_dims)
                    done[lay.root] = g.call_function(_compact, (by_name[lay.root], lay.order, spec, *trues))
                outs[i] = done[lay.root]
        out_node.args = (type(out_node.args[0])(outs),)
        gm.recompile()
        return gm


class _Layout:
    """A narrowed output whose storage (the tensor `root` it views, named)
    eager lays out densely: the output's eager `sizes`, `strides` and
    `offset` as expressions of the dynamic sizes; the root's `root_dims` (a
    static size or a symbol per dim) and `order` (its dims outer to inner in
    memory, size-1 dims first); `compact`: whether a dim outside a dynamic
    one in that order may hold more than one element (then the true elements
    are not a prefix of the padded buffer: the program compacts the root)."""

    def __init__(self, v, root, root_dims, order, compact):
        self.sizes = [_expr(x) for x in v.shape]
        self.strides = [_expr(x) for x in v.stride()]
        self.offset = _expr(v.storage_offset())
        self.root, self.root_dims, self.order, self.compact = root, root_dims, order, compact
        self._at = {}

    def at(self, sizes):
        """[sizes], [strides], offset of the output at these dynamic sizes
        (symbol: int), as eager's."""
        key = tuple(sorted((str(k), v) for k, v in sizes.items()))
        got = self._at.get(key)
        if got is None:
            ev = [e if isinstance(e, int) else int(e.xreplace(sizes)) for e in
                  self.sizes + self.strides + [self.offset]]
            n = len(self.sizes)
            got = self._at[key] = (ev[:n], ev[n:2 * n], ev[2 * n])
            if len(self._at) > 256:
                self._at.pop(next(iter(self._at)))
        return got


def _root(n):
    """The node whose storage n views (n itself if it is not a view): through
    ops whose schema returns an alias of their first argument, and items of
    such ops' lists (split)."""
    while n.op == "call_function":
        m = n.args[0] if n.target is operator.getitem else n
        schema = getattr(m.target, "_schema", None) if isinstance(m, torch.fx.Node) else None
        if schema is None or not schema.returns or schema.returns[0].alias_info is None \
                or not isinstance(m.args[0], torch.fx.Node):
            break
        n = m.args[0]
    return n


def _layout(o, state, syms):
    """The _Layout of the narrowed output node o, or None where its storage is
    not one eager lays out densely from offset 0, in dims of one size each."""
    from torch.fx.experimental.symbolic_shapes import optimization_hint as hint

    r = _root(o)
    v, rv, dims = o.meta.get("val"), r.meta.get("val"), state.get(r)
    if not isinstance(v, torch.Tensor) or not isinstance(rv, torch.Tensor) or not isinstance(dims, list) \
            or len(dims) != rv.dim() or any(_dyn(fs, syms) and len(fs) != 1 for fs in dims):
        return None
    try:
        if hint(rv.storage_offset()) != 0:
            return None
        sizes = [hint(x) for x in rv.shape]
        strides = [hint(x) for x in rv.stride()]
    except Exception:  # noqa: BLE001
        return None
    big = sorted((d for d in range(len(sizes)) if sizes[d] != 1), key=lambda d: -strides[d])
    step = 1
    for d in reversed(big):
        if strides[d] != step:
            return None
        step *= sizes[d]
    order = tuple([d for d in range(len(sizes)) if sizes[d] == 1] + big)
    dyn = [k for k, d in enumerate(order) if _dyn(dims[d], syms)]
    if not dyn:
        return None
    compact = any(_dyn(dims[d], syms) or _prod(dims[d]) != 1 for d in order[:dyn[-1]])
    root_dims = [dims[d][0] if _dyn(dims[d], syms) else int(_prod(dims[d])) for d in range(len(dims))]
    return _Layout(v, r.name, root_dims, order, compact)


def _compact(x, order, spec, *trues):
    """The bucket-sized output x as a flat tensor of its size whose first
    elements are x's true part (x[:t0, :t1, ...]) in the memory order `order`
    (outer to inner). spec: per dim, -1 (a static size) or the index in trues
    of its true size (CPU 0-dim tensors: host values of the program, so that
    one program serves every size of the bucket). Device ops only: a gather
    from x at indices computed from the true sizes."""
    x = x.permute(order)
    spec = [spec[d] for d in order]
    flat = x.reshape(-1)
    rem = torch.arange(flat.numel(), device=x.device)
    src, stride = None, 1
    for d in reversed(range(x.dim())):
        size = x.shape[d] if spec[d] < 0 else trues[spec[d]]
        if not isinstance(size, int) or size != 1:
            term = torch.remainder(rem, size) * stride
            rem = torch.div(rem, size, rounding_mode="floor")
            src = term if src is None else src + term
        stride *= x.shape[d]
    if src is None:
        return flat
    return flat[torch.where(rem == 0, src, 0)]  # past the true elements: any index in range


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


def _sym_value(a, syms):
    """Whether the argument a (an int, SymInt or fx Node of one) depends on a dynamic size."""
    if isinstance(a, torch.fx.Node):
        a = a.meta.get("val")
    if isinstance(a, torch.SymInt):
        return bool(a.node.expr.free_symbols & syms)
    return False


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
    narrows, layouts = [], {}
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
        dims = state.get(o, ())
        mine = []
        for d, fs in enumerate(dims):
            if _dyn(fs, syms):
                if len(fs) != 1:
                    return f"output {i} has a dim made of several sizes"
                mine.append((i, d, fs[0]))
        narrows += mine
        lay = _layout(o, state, syms) if mine else None
        if lay is not None:
            layouts[i] = lay
    return Plan(pads, sizes, narrows, layouts)


def _aliases_input(n):
    """Whether n is a graph input or a view of one."""
    return _root(n).op == "placeholder"


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
    rule = _rule(t)
    if isinstance(v, (torch.SymInt, int)) and not isinstance(v, bool):
        return None if t in _SIZE_MATH or rule == "size" else "a size from a tensor"
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
    if not isinstance(v, torch.Tensor) and rule not in _MULTI_OUTPUT:
        return "an op with a dynamic input that is not a tensor op"
    if rule == "create":
        dims = _own_dims(v, syms)
        if dims is None:
            return "creates a tensor of a size that is an expression"
        state[n] = dims
        return None
    if torch.Tag.pointwise in getattr(t, "tags", ()) or rule == "keep":
        return _elementwise(n, v, ins, state, syms)
    if rule == "view":
        out = _view(state[n.args[0]], n.args[1])
        if out is None:
            return "a view that cuts a dynamic dim"
        state[n] = out
        return None
    src = state.get(n.args[0]) if isinstance(n.args[0], torch.fx.Node) else None
    if rule == "permute":
        state[n] = [src[d] for d in n.args[1]]
    elif rule == "transpose":
        dims = list(src)
        a, b = (n.args[1] % len(dims), n.args[2] % len(dims)) if len(schema.arguments) > 1 else (0, 1)  # t: 0, 1
        dims[a], dims[b] = dims[b], dims[a]
        state[n] = dims
    elif rule == "unsqueeze":
        dims = list(src)
        dims.insert(n.args[1] % (len(dims) + 1), (1,))
        state[n] = dims
    elif rule == "expand":
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
    elif rule in ("select", "slice"):
        d = n.args[1] % len(src)
        if any(_sym_value(a, syms) for a in n.args[2:]):
            # x.narrow(1, i, 3), x[:, i]: a dynamic int as a start or index is a value,
            # not a size (padding it would move the view)
            return "a dynamic int used as an index or a start"
        if _dyn(src[d], syms) and not (rule == "slice" and _whole(n, src[d])):
            return "selects or slices a dynamic dim"
        state[n] = [x for k, x in enumerate(src) if k != d] if rule == "select" else \
            [x if k != d else (_expr(v.shape[d]),) for k, x in enumerate(src)]
    elif rule == "reduce":
        rd = n.args[1] if len(n.args) > 1 else None
        rd = [rd] if isinstance(rd, int) else list(range(len(src))) if not rd else list(rd)
        if any(_dyn(src[d % len(src)], syms) for d in rd):
            return "reduces over a dynamic dim"
        keep = v.dim() == len(src)
        state[n] = [fs if d not in {x % len(src) for x in rd} else (1,) for d, fs in enumerate(src)] if keep \
            else [fs for d, fs in enumerate(src) if d not in {x % len(src) for x in rd}]
    elif rule == "layer_norm":
        k = len(n.args[1])
        if any(_dyn(fs, syms) for fs in src[len(src) - k:]):
            return "normalizes over a dynamic dim"
        stat = [*src[:len(src) - k]] + [(1,)] * k
        state[n] = [list(src), stat, stat]
    elif rule in ("matmul", "matmul_bias"):
        a, b = (n.args[-2], n.args[-1]) if rule == "matmul_bias" else n.args[:2]
        a, b = state[a], state[b]
        if _dyn(a[-1], syms) or _dyn(b[-2], syms):
            return "contracts a dynamic dim"
        if rule == "matmul_bias" and _dyn_input(n.args[0], state, syms):
            return "adds a dynamic bias"
        state[n] = [*a[:-1], b[-1]]
    elif rule == "split":
        d = (n.args[2] if len(n.args) > 2 else n.kwargs.get("dim", 0)) % len(src)
        if _dyn(src[d], syms):
            return "splits a dynamic dim"
        state[n] = [[x if k != d else (_expr(o.shape[d]),) for k, x in enumerate(src)] for o in v]
    elif rule == "attention":
        return _attention(n, state, syms)
    elif rule == "embedding":
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
