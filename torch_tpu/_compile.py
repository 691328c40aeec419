"""torch.compile(model, backend="tpu") (DESIGN §8).

Dynamo captures the graph; AOTAutograd turns it into functional ATen graphs
(forward, backward, inference). Each graph becomes one program through the
same machinery as Fused Eager: its ATen ops run through the device's kernels
in Fused mode, with cuts off, and run as one program (the lowerings are the
eager ones, so the two paths cannot drift apart). That first run is also a
*capture* (csrc/core/runtime/capture.c): the program, its inputs and outputs
by role. Later calls whose inputs are laid out as the captured ones replay
the program directly: one Execute, no op-by-op host work. A graph the core
cannot replay exactly (a host read inside it, an op without a lowering run
on the CPU, ...) is recorded again on every call, which is still one program
per call wherever Fused Eager makes one.

A graph's host part (nodes computed on the CPU: an optimizer's step counts
and bias corrections when its state lives on the CPU) runs in Python before
each replay; the CPU 0-dim values its device ops take reach the program as
host values, and its writes into CPU inputs (the graph's `copy_`s) are made
once the program is replayed.
"""
import operator

import torch
import torch.fx
import torch.fx.passes.split_module

from . import _C, _buckets

_BACKEND = "tpu"
_MAX_CAPTURES = 64  # per graph (one per set of dynamic sizes)


class _Interpreter(torch.fx.Interpreter):
    """Runs the graph's nodes, naming the FX node an op fails in, and keeps
    the values of `keep` nodes (alive, so that their identities stay theirs)."""

    def __init__(self, gm, keep):
        super().__init__(gm)
        self.keep, self.kept = keep, {}

    def run_node(self, n):
        try:
            v = super().run_node(n)
        except Exception as e:
            if getattr(e, "_tt_fx_node", False):
                raise
            raise _naming_node(e, n) from e
        if n in self.keep:
            self.kept[n] = v
        return v


def _naming_node(e, n):
    """e again (its type, so that callers' except clauses still match), with
    the FX node it came from in its message."""
    msg = f"{e}\n(in FX node {n.name!r}: {n.format_node()})"
    try:
        new = type(e)(msg)
    except Exception:
        new = RuntimeError(f"{type(e).__name__}: {msg}")
    new._tt_fx_node = True
    return new


def _cpu_tensor(v):
    return isinstance(v, torch.Tensor) and v.device.type == "cpu"


def _cpu_value(v):
    if isinstance(v, (list, tuple)):
        return len(v) > 0 and all(_cpu_tensor(x) for x in v)
    return _cpu_tensor(v)


class _HostPart:
    """The graph's nodes computed on the CPU, as a function of the graph's
    inputs: `values` (the host values, in order) and `writes` (placeholder
    index, host value index) for the copies into CPU inputs."""

    def __init__(self, gm, device_nodes=frozenset()):
        host, values, writes, self.ok = set(), [], [], True
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        for n in gm.graph.nodes:
            v = n.meta.get("val")
            if n.op == "placeholder":
                if _cpu_tensor(v):
                    host.add(n)
                    values.append(n)
            elif n.op == "get_attr":
                if _cpu_tensor(getattr(gm, n.target, None)):
                    host.add(n)
                    values.append(n)
            elif n.op == "call_function" and _cpu_value(v) and n not in device_nodes:
                if not all(a in host for a in n.all_input_nodes):
                    self.ok = False  # a CPU value made from device values: a host read
                    continue
                host.add(n)
                if n.target is torch.ops.aten.copy_.default and n.args[0].op == "placeholder":
                    writes.append((placeholders.index(n.args[0]), n.args[1]))
                elif any(isinstance(u, torch.fx.Node) and u.op == "placeholder" and _aliases(n, u)
                         for u in n.all_input_nodes):
                    self.ok = False  # another in-place op on an input
                elif isinstance(v, torch.Tensor):
                    values.append(n)
            elif n.op == "call_function" and n.target is torch.ops.aten.copy_.default and _cpu_tensor(
                    n.args[0].meta.get("val") if isinstance(n.args[0], torch.fx.Node) else None):
                self.ok = False  # a device value copied into a CPU tensor: a host read
        self.nodes, self.values = host, values
        index = {n: i for i, n in enumerate(values)}
        self.writes = []
        for ph, src in writes:
            if src not in index:
                values.append(src)
                index[src] = len(values) - 1
            self.writes.append((ph, index[src]))
        self.fn = None
        if self.ok and values:
            self.fn = self._counts(placeholders) or self._build(gm, placeholders)

    def _counts(self, placeholders):
        """The usual host part, an optimizer's step counts (one
        `_foreach_add(inputs, number)` and its items), as one C++ call instead
        of an FX graph of per-tensor ATen calls; None for any other graph."""
        calls = [n for n in self.nodes if n.op == "call_function" and n.target is not torch.ops.aten.copy_.default]
        foreach = [n for n in calls if n.target is torch.ops.aten._foreach_add.Scalar]
        if len(foreach) != 1:
            return None
        f = foreach[0]
        ins, k = f.args[0], f.args[1] if len(f.args) > 1 else f.kwargs.get("scalar")
        if f.kwargs.keys() - {"scalar"} or not isinstance(k, (int, float)) or isinstance(k, bool) or \
                not all(isinstance(a, torch.fx.Node) and a.op == "placeholder" for a in ins):
            return None
        items = {}
        for n in calls:
            if n is f:
                continue
            if n.target is not operator.getitem or n.args[0] is not f or not isinstance(n.args[1], int):
                return None
            items[n] = n.args[1]
        where = {ph: i for i, ph in enumerate(placeholders)}
        srcs = [where[a] for a in ins]
        plan = []  # (True, item) or (False, placeholder index) per host value
        for v in self.values:
            if v in items:
                plan.append((True, items[v]))
            elif v.op == "placeholder":
                plan.append((False, where[v]))
            else:
                return None
        add = _C._host_add_scalars

        def counts(*args):
            new = add([args[i] for i in srcs], k)
            return tuple(new[j] if item else args[j] for item, j in plan)

        return counts

    def _build(self, gm, placeholders):
        g = torch.fx.Graph()
        env = {}
        for n in gm.graph.nodes:
            if n.op == "placeholder":
                env[n] = g.placeholder(n.name)
            elif n in self.nodes and not (n.target is torch.ops.aten.copy_.default):
                env[n] = g.node_copy(n, lambda x: env[x])
        g.output(tuple(env[n] for n in self.values))
        return torch.fx.GraphModule(gm, g)


def _scalar_math_to_device(gm, device):
    """A copy of gm whose CPU nodes that only feed device ops run on the device
    (an optimizer's bias corrections from its CPU step counts): their CPU
    inputs are uploaded by an op the program takes them in (a multiplication
    by 1, exact), so that only what the graph writes back into CPU inputs (the
    step counts) is computed on the CPU before each replay. Returns (the copy,
    the moved and added nodes), or None when there is nothing to move."""
    part = _HostPart(gm)
    if not part.ok or not part.writes:
        return None
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    sources = [n.args[1] for n in gm.graph.nodes
               if n.op == "call_function" and n.target is torch.ops.aten.copy_.default and n in part.nodes]
    needed, stack = set(), list(sources)
    while stack:  # what the writes need
        n = stack.pop()
        if n in needed or n not in part.nodes:
            continue
        needed.add(n)
        stack.extend(n.all_input_nodes)
    feed = {n for n in part.nodes if n.op == "call_function" and n not in needed
            and n.target is not torch.ops.aten.copy_.default}
    if not feed:
        return None
    g = torch.fx.Graph()
    env, moved, uploads, ones = {}, set(), {}, {}
    first = None
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            env[n] = g.placeholder(n.name)
            env[n].meta = dict(n.meta)
            continue
        if first is None:
            first = n

        def arg(a, n=n):
            if n in feed and a in part.nodes and a not in feed:
                if a not in uploads:  # a CPU value a moved node takes: uploaded by the program
                    dt = a.meta["val"].dtype
                    if dt not in ones:
                        ones[dt] = g.call_function(torch.ops.aten.full.default, ([], 1),
                                                   {"dtype": dt, "device": device})
                        moved.add(ones[dt])
                    uploads[a] = g.call_function(torch.ops.aten.mul.Tensor, (ones[dt], env[a]))
                    moved.add(uploads[a])
                return uploads[a]
            return env[a]

        env[n] = g.node_copy(n, arg)
        env[n].meta = dict(n.meta)
        if n in feed:
            moved.add(env[n])
    del placeholders, first
    return torch.fx.GraphModule(gm, g), frozenset(moved)


def _aliases(node, inp):
    """Whether `node` writes its input `inp` (an in-place or out= schema)."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return False
    for a, v in zip(schema.arguments, node.args):
        if v is inp and a.alias_info is not None and a.alias_info.is_write:
            return True
    return False


def _device_constants(gm):
    """The device tensors the graph holds as attributes (what dynamo made of
    `x[:, [2, 0]]`'s index list, ...), which a replay passes to the program
    after the graph's inputs, in this order. Empty when an output is such a
    tensor itself (each call must give it anew: those graphs record again)."""
    nodes = [n for n in gm.graph.nodes if n.op == "get_attr"]
    ts = [getattr(gm, n.target, None) for n in nodes]
    out = next((n for n in gm.graph.nodes if n.op == "output"), None)
    returned = set(out.all_input_nodes) if out is not None else set()
    if any(n in returned for n in nodes):
        return []
    return [t for t in ts if isinstance(t, torch.Tensor) and t.device.type == "tpu"]


def _graph_device(gm):
    for n in gm.graph.nodes:
        v = n.meta.get("val")
        if n.op == "placeholder" and isinstance(v, torch.Tensor) and v.device.type == "tpu":
            return v.device
    return torch.device("tpu", _C._current_device())


def _device_of(args):
    for a in args:
        if isinstance(a, torch.Tensor) and a.device.type == "tpu":
            return a.device.index or 0
    return _C._current_device()


class CompiledGraph:
    """A boxed callable over real tpu tensors for one AOTAutograd graph."""

    def __init__(self, gm, kind):
        self._boxed_call = True  # an instance attribute: wrappers copy __dict__
        self.gm = self.original = gm
        self.kind = kind
        # dynamic sizes (ints among the inputs): one capture per set of values
        self.int_pos = [i for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")
                        if isinstance(n.meta.get("val"), (int, torch.SymInt))]
        self.captures = {}
        # inference graphs with dynamic sizes: run each size in its bucket (_buckets.py)
        self.bucket = _buckets.plan(gm) if self.int_pos and kind == "inference" else "not an inference graph" \
            if self.int_pos else None
        moved = _scalar_math_to_device(gm, _graph_device(gm))
        if moved is not None:
            self.gm = moved[0]
        elif isinstance(self.bucket, _buckets.Plan):  # (a bucketed graph writes nothing: nothing moved)
            self.gm = self.original = self.bucket.compacting(gm)
        self.host = _HostPart(self.gm, moved[1] if moved else frozenset())
        self.consts = _device_constants(self.gm)
        self.refused = None  # why the last recording could not be captured
        self.recordings = 0
        self.replays = 0

    def _key(self, args):
        return tuple(args[i] for i in self.int_pos) if self.int_pos else None

    def __call__(self, args):
        if isinstance(self.bucket, _buckets.Plan):
            padded, sizes = self.bucket.pad(args)
            args.clear()
            return self.bucket.narrow(self._run(padded), sizes)
        return self._run(args)

    def _run(self, args):
        cap = self.captures.get(self._key(args))
        if cap is not None:
            host = self.host
            full = args + self.consts if self.consts else args
            if host.fn is None:
                out = _C._replay(cap, full, ())
            elif _C._replay_ready(cap, full):
                values = host.fn(*args)
                out = _C._replay(cap, full, values, True)
                if out is None:  # the program was dropped meanwhile: record again
                    raise RuntimeError("torch_tpu: a compiled graph's program was dropped while it ran")
                _C._host_copy_scalars([args[ph] for ph, _ in host.writes], [values[k] for _, k in host.writes])
            else:
                out = None
            if out is not None:
                self.replays += 1
                args.clear()
                return out
        return self._record(args)

    def _record(self, args):
        device = _device_of(args)
        host = self.host
        old, seed, offset = _C._capture_begin(device)
        try:
            with torch.no_grad():
                interp = _Interpreter(self.gm, host.nodes)
                out = interp.run(*args)
        except BaseException as e:
            _C._capture_abort(old)
            if self.gm is self.original or not isinstance(e, Exception):
                raise
            # the scalar math moved to the device did not run there: as it was
            self.gm, self.host = self.original, _HostPart(self.original)
            self.consts = _device_constants(self.gm)
            return self._record(args)
        if not isinstance(out, (list, tuple)):
            out = (out,)
        if not host.ok:
            values, why = (), "the graph reads a device value on the host"
        else:
            values, why = [interp.kept[n] for n in host.values], None
        key = self._key(args)
        # the graph's device constants (an index list's tensor) are inputs of the program
        res = _C._capture_end(args + self.consts if self.consts else args, out, values, device, seed, offset,
                              old)
        self.recordings += 1
        if why is None and not isinstance(res, str):
            if len(self.captures) >= _MAX_CAPTURES:
                self.captures.pop(next(iter(self.captures)))
            self.captures[key], self.refused = res, None
        else:
            self.captures.pop(key, None)
            self.refused = why or res
        args.clear()
        return list(out)


_graphs = []  # the compiled graphs of this process, newest last (for tests and stats)
_serial = 0  # graphs noted so far: each one's serial (the list keeps the newest 256)


def _note(g):
    global _serial
    _serial += 1
    g.serial = _serial
    _graphs.append(g)
    if len(_graphs) > 256:
        del _graphs[0]
    return g


def _is_collective(n):
    return n.op == "call_function" and getattr(n.target, "namespace", None) == "_c10d_functional"


class _Segment(torch.nn.Module):
    """A part of a split graph, captured as its own CompiledGraph."""

    def __init__(self, cg, single):
        super().__init__()
        self.cg, self.single = cg, single

    def forward(self, *args):
        out = self.cg(list(args))
        return out[0] if self.single else tuple(out)


class SplitGraph:
    """A graph with functional collectives (DTensor, funcol): a collective
    reads and writes the host on the CPU plugins, so one program cannot hold
    it. The graph is split there: the collectives run eagerly, each part
    between them is captured and replayed as its own program."""

    def __init__(self, gm, kind):
        self._boxed_call = True
        seg, part = [0], {}

        def split(n):
            if _is_collective(n):
                seg[0] += 1
                part[n] = seg[0]
                seg[0] += 1
                return part[n]
            return seg[0]

        self.split = torch.fx.passes.split_module.split_module(gm, gm, split, keep_original_order=True)
        meta = {n.name: n.meta for n in gm.graph.nodes}
        collective_parts = set(part.values())
        for name, sub in list(self.split.named_children()):
            idx = int(name.rsplit("_", 1)[1])
            if idx in collective_parts:
                continue
            for n in sub.graph.nodes:  # the original nodes' metadata (values, sizes)
                if n.op == "placeholder" and n.name in meta:
                    n.meta = dict(meta[n.name])
            out = next(n for n in sub.graph.nodes if n.op == "output").args[0]
            single = not isinstance(out, (tuple, list))
            setattr(self.split, name, _Segment(_note(CompiledGraph(sub, kind)), single))

    def __call__(self, args):
        out = self.split(*args)
        args.clear()
        return list(out) if isinstance(out, (tuple, list)) else [out]


def _compiler(kind):
    def compile_graph(gm, example_inputs):
        if any(_is_collective(n) for n in gm.graph.nodes):
            return SplitGraph(gm, kind)
        return _note(CompiledGraph(gm, kind))

    return compile_graph


def _make_backend():
    from torch._dynamo.backends.common import aot_autograd

    return aot_autograd(
        fw_compiler=_compiler("forward"),
        bw_compiler=_compiler("backward"),
        inference_compiler=_compiler("inference"),
        keep_inference_input_mutations=True,
    )


_aot = None


def backend(gm, example_inputs, **kwargs):
    """The `tpu` backend for torch.compile (also the `torch_dynamo_backends`
    entry point)."""
    global _aot
    if _aot is None:
        _aot = _make_backend()
    return _aot(gm, example_inputs, **kwargs)


def install():
    from torch._dynamo.backends.registry import _COMPILER_FNS, register_backend

    if _BACKEND not in _COMPILER_FNS:
        register_backend(backend, name=_BACKEND)


def graph_serial():
    """The serial of the newest graph compiled in this process (0: none yet)."""
    return _serial


def compiled_graphs(since=0):
    """The graphs compiled in this process (newest last; the newest 256), with
    a serial greater than `since` (graph_serial() before some calls: the
    graphs they compiled): serial, kind, how often they
    were recorded and replayed, how many captures they keep (one per set of
    dynamic sizes, or of buckets), why the last recording could not be
    captured (None if it was), and whether dynamic sizes are bucketed (True,
    why not, or None without dynamic sizes)."""
    return [
        {"serial": g.serial, "kind": g.kind, "recordings": g.recordings, "replays": g.replays, "captures": len(g.captures),
         "refused": g.refused,
         "bucketed": True if isinstance(g.bucket, _buckets.Plan) else g.bucket}
        for g in _graphs if g.serial > since
    ]
