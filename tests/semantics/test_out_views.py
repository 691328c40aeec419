"""out= tensors that are views into a larger base, with as many elements as the result but
another shape or other strides (a 2x2 narrow of a 2x3 tensor, a column, a transposed block):
every factory and every OpInfo op with an out= variant leaves the whole base as CPU leaves it
(the elements outside the view included) and the out's shape and strides as CPU's.

CPU's out= kernels differ: most resize an out of another shape (resize_output: the view
becomes contiguous from its offset, with a warning), the range factories (arange, range,
linspace, logspace) resize only when the numel differs and write the view's elements in
row-major order (TT_LF_OUT_KEEPS_SHAPE).

    PYTHONPATH=tests python tests/semantics/test_out_views.py    # the out= layouts CPU and tpu differ on
"""
import random
import warnings

import pytest
import torch

import suite
import torch_tpu  # noqa: F401

DEV = "tpu"


def _views(n):
    """(name, make(device, dtype)) of out views of n elements into larger zero bases."""
    vs = [("column", lambda d, t: torch.zeros(n, 3, dtype=t, device=d)[:, 1]),
          ("row_at_offset", lambda d, t: torch.zeros(3, n, dtype=t, device=d)[1])]
    if n % 2 == 0:
        h = n // 2
        vs += [("narrow_2d", lambda d, t: torch.zeros(2, h + 1, dtype=t, device=d).narrow(1, 1, h)),
               ("transposed", lambda d, t: torch.zeros(h, 2, dtype=t, device=d).t())]
    return vs


def _base(v):
    """The tensor a view was made from (its whole storage, as a flat tensor)."""
    return torch.empty(0, dtype=v.dtype, device=v.device).set_(v.untyped_storage())


def _run(fn, d, make_out):
    out = make_out(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CPU's resize warnings (the same on both)
        ret = fn(out)
    return ret, out


def _check(fn, make_out, random_values=False):
    extent = _base(make_out("cpu")).numel()  # what the base held before: a grown storage's tail
    ret_c, out_c = _run(fn, "cpu", make_out)  # outside the out is uninitialized memory on CPU
    ret_d, out_d = _run(fn, DEV, make_out)
    assert (out_d.shape, out_d.stride(), out_d.storage_offset()) == \
        (out_c.shape, out_c.stride(), out_c.storage_offset())
    if isinstance(ret_c, torch.Tensor):
        assert ret_d.shape == ret_c.shape and ret_d.stride() == ret_c.stride()
    base_c, base_d = _base(out_c), _base(out_d).cpu()
    if random_values:  # the values are the generator's: the rest of the base must be untouched
        out_c.zero_()
        base_d = base_d.clone()
        torch.empty(0, dtype=base_d.dtype).set_(base_d.untyped_storage(), out_c.storage_offset(),
                                                 out_c.shape, out_c.stride()).zero_()
    assert base_d.numel() == base_c.numel()
    torch.testing.assert_close(base_d[:extent], base_c[:extent], equal_nan=True, rtol=1e-4, atol=1e-5)
    if not random_values:  # the out's own elements, also where the storage grew
        torch.testing.assert_close(out_d.cpu(), out_c, equal_nan=True, rtol=1e-4, atol=1e-5)


FACTORIES = {  # (fn of out, numel, dtype)
    "arange_end": (lambda o: torch.arange(4, out=o), 4, torch.float32),
    "arange_start": (lambda o: torch.arange(1, 5, out=o), 4, torch.float32),
    "arange_step": (lambda o: torch.arange(0, 3, 0.5, out=o), 6, torch.float32),
    "arange_int": (lambda o: torch.arange(2, 8, out=o), 6, torch.int64),
    "range": (lambda o: torch.range(1, 4, out=o), 4, torch.float32),
    "linspace": (lambda o: torch.linspace(1, 4, 4, out=o), 4, torch.float32),
    "linspace_int": (lambda o: torch.linspace(0, 10, 6, out=o), 6, torch.int64),
    "logspace": (lambda o: torch.logspace(0, 3, 4, base=2, out=o), 4, torch.float32),
    "zeros": (lambda o: torch.zeros(4, out=o), 4, torch.float32),
    "ones": (lambda o: torch.ones(2, 2, out=o), 4, torch.float32),
    "full": (lambda o: torch.full((4,), 2.5, out=o), 4, torch.float32),
    "eye": (lambda o: torch.eye(2, out=o), 4, torch.float32),
    "fftfreq": (lambda o: torch.fft.fftfreq(4, out=o), 4, torch.float32),
    "rfftfreq": (lambda o: torch.fft.rfftfreq(6, out=o), 4, torch.float32),
    "tril_indices": (lambda o: torch.ops.aten.tril_indices.out(3, 3, 0, out=o), 12, torch.int64),
}
RANDOM = {
    "randn": (lambda o: torch.randn(4, out=o), 4, torch.float32),
    "rand": (lambda o: torch.rand(2, 2, out=o), 4, torch.float32),
    "randint": (lambda o: torch.randint(0, 9, (4,), out=o), 4, torch.int64),
    "randperm": (lambda o: torch.randperm(4, out=o), 4, torch.int64),
    "normal": (lambda o: torch.normal(0.0, 1.0, (4,), out=o), 4, torch.float32),
}


def _factory_cases(table):
    return [(name, vname, mk) for name, (fn, n, dt) in sorted(table.items()) for vname, mk in _views(n)]


@pytest.mark.parametrize("name,view,mk", _factory_cases(FACTORIES), ids=lambda x: x if isinstance(x, str) else "")
def test_factory_into_a_view(name, view, mk):
    fn, _, dt = FACTORIES[name]
    _check(fn, lambda d: mk(d, dt))


@pytest.mark.parametrize("name,view,mk", _factory_cases(RANDOM), ids=lambda x: x if isinstance(x, str) else "")
def test_random_factory_into_a_view(name, view, mk):
    fn, _, dt = RANDOM[name]
    _check(fn, lambda d: mk(d, dt), random_values=True)


# ---- every OpInfo op with an out= variant --------------------------------------------------

def _moved(x, d):
    if isinstance(x, torch.Tensor):
        return x.detach().clone() if d == "cpu" else x.detach().to(d)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_moved(e, d) for e in x)
    if isinstance(x, dict):
        return {k: _moved(v, d) for k, v in x.items()}
    if isinstance(x, torch.device) or (isinstance(x, str) and x == "cpu"):  # a factory's device= argument
        return torch.device(d)
    return x


# out= tensors the op resizes take CPU's layout except here: CPU's kernels give these a layout
# of their own (LAPACK's column-major results through structured kernels' restriding, the FFTs'
# permuted layouts), PyTorch's out= meta kernels (and so the device) a contiguous one. Expected
# to fail until the device models each kernel's layout; a pass fails the test (strict).
OUT_LAYOUT_DIFFERS = set()
# results unique up to each column's sign: CPU's LAPACK signs depend on the layout it writes
SIGN_FREE = {"linalg.eigh"}


def _out_ops(differs, quick_share=3):
    """Every OpInfo with an out= variant and float32 on CPU (1 / quick_share of them in make test);
    those named in differs are expected to fail."""
    from torch.testing._internal.common_methods_invocations import op_db
    ops = [op for op in op_db if op.supports_out and torch.float32 in op.supported_dtypes("cpu")
           and not op.name.startswith("sparse.")]  # sparse layouts are not on the device
    ops.sort(key=lambda op: (op.name, op.variant_test_name))
    if not suite.FULL:
        ops = random.Random(7).sample(ops, len(ops) // quick_share)
    return [pytest.param(op, id=op.name + ("." + op.variant_test_name if op.variant_test_name else ""),
                         marks=[pytest.mark.xfail(strict=True, reason="CPU's out= layout")]
                         if op.name in differs else [])
            for op in ops]


def _alloc_like(x, d):
    if isinstance(x, torch.Tensor):
        return torch.full_like(x, 7, device=d) if x.dtype != torch.bool else torch.ones_like(x, device=d)
    return type(x)(_alloc_like(e, d) for e in x)


@pytest.mark.parametrize("op", _out_ops(OUT_LAYOUT_DIFFERS))
def test_opinfo_out_into_a_view(op):
    """The first float32 sample CPU computes: a one-tensor result goes into out views of its
    numel (every view of _views); other results into fresh outs of their shapes."""
    torch.manual_seed(0)
    for sample in op.sample_inputs("cpu", torch.float32):
        def fn(o, sample=sample):
            d = (o[0] if isinstance(o, (tuple, list)) else o).device.type
            r = op.op(_moved(sample.input, d), *_moved(tuple(sample.args), d), out=o,
                      **_moved(dict(sample.kwargs), d))
            return r

        def cpu_result(seed):
            torch.manual_seed(seed)
            return op.op(_moved(sample.input, "cpu"), *_moved(tuple(sample.args), "cpu"),
                         **_moved(dict(sample.kwargs), "cpu"))

        try:
            want, again = cpu_result(0), cpu_result(1)
        except Exception:  # noqa: BLE001 - CPU refuses this sample: the next one
            continue
        # a sampler (OpInfo seeds it inside its op: wrapper_set_seed): all but its values
        random_values = "wrapper_set_seed" in getattr(getattr(op.op, "__code__", None), "co_names", ()) or not all(
            isinstance(t, torch.Tensor) and torch.equal(t, a)
            for t, a in zip(*(w if isinstance(w, tuple) else (w,) for w in (want, again))))
        if isinstance(want, torch.Tensor) and want.numel() >= 2:
            for _, mk in _views(want.numel()):
                try:
                    _run(fn, "cpu", lambda d: mk(d, want.dtype))
                except Exception:  # noqa: BLE001 - CPU refuses this out: the tpu refuses it too
                    with pytest.raises(Exception):  # noqa: B017
                        _run(fn, DEV, lambda d: mk(d, want.dtype))[1].cpu()
                    continue
                _check(fn, lambda d: mk(d, want.dtype), random_values=random_values)
            return
        # several results (or one of fewer than 2 elements): fresh outs of their shapes
        try:
            outs_c = _alloc_like(want, "cpu")
            fn(outs_c)
        except Exception:  # noqa: BLE001 - CPU refuses these outs: so does the tpu
            with pytest.raises(Exception):  # noqa: B017
                fn(_alloc_like(want, DEV))
            return
        outs_d = _alloc_like(want, DEV)
        fn(outs_d)
        for c, d in zip(outs_c if isinstance(outs_c, tuple) else (outs_c,),
                        outs_d if isinstance(outs_d, tuple) else (outs_d,)):
            assert d.shape == c.shape and d.dtype == c.dtype
            if op.name in SIGN_FREE:
                c, d = c.abs(), d.abs()
            if not random_values:
                torch.testing.assert_close(d.cpu(), c, equal_nan=True, rtol=1e-4, atol=1e-5)
        return
    pytest.fail("CPU computes none of the OpInfo's float32 samples")


# ---- the layout a resized out= gets: CPU's (the functional form's strides, or contiguous) ----

def _reversed(x):
    """x with the same shape and values and its strides reversed (column-major): the inputs'
    layout is what a resized out= of an elementwise op takes on CPU."""
    if isinstance(x, torch.Tensor):
        if x.dim() < 2:
            return x
        rev = tuple(range(x.dim() - 1, -1, -1))
        return x.permute(rev).contiguous().permute(rev)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_reversed(e) for e in x)
    if isinstance(x, dict):
        return {k: _reversed(v) for k, v in x.items()}
    return x


def layout(op, sample, want, d, transform=lambda x: x):
    """The (shape, strides) of each empty out= after the op on device d, or None if it raises."""
    outs = tuple(torch.empty(0, dtype=t.dtype, device=d) for t in (want if isinstance(want, tuple) else (want,)))
    try:
        op.op(transform(_moved(sample.input, d)), *transform(_moved(tuple(sample.args), d)),
              out=outs if isinstance(want, tuple) else outs[0], **transform(_moved(dict(sample.kwargs), d)))
    except Exception:  # noqa: BLE001 - refused: not a layout question
        return None
    return tuple((tuple(t.shape), t.stride()) for t in outs)


def layout_differences(op, dtype, samples=3):
    """[(sample, inputs' layout, cpu, tpu)] where an empty out= gets another layout on tpu."""
    found = []
    for n, s in enumerate(op.sample_inputs("cpu", dtype)):
        if n >= samples:
            break
        try:
            want = op.op(_moved(s.input, "cpu"), *_moved(tuple(s.args), "cpu"), **_moved(dict(s.kwargs), "cpu"))
        except Exception:  # noqa: BLE001 - CPU refuses the sample
            continue
        if not all(isinstance(t, torch.Tensor) for t in (want if isinstance(want, tuple) else (want,))):
            continue
        for tname, tf in (("as given", lambda x: x), ("reversed strides", _reversed)):
            cpu, tpu = layout(op, s, want, "cpu", tf), layout(op, s, want, DEV, tf)
            if cpu is not None and tpu is not None and cpu != tpu:
                found.append((n, tname, cpu, tpu))
    return found


# CPU's out= kernel gives these a layout the device does not model (see docs/semantics.md).
RESIZED_LAYOUT_DIFFERS = {"nonzero"}  # a (0, 0) result: CPU's out kernel strides it (1, 0), its functional form (1, 1)


@pytest.mark.parametrize("op", _out_ops(RESIZED_LAYOUT_DIFFERS, quick_share=16 if suite.FUSED_PASS else 6))
def test_opinfo_resized_out_layout(op):
    """An empty out= gets CPU's shape and strides: the functional form's for CPU's structured and
    TensorIterator kernels (LAPACK's column-major results, the inputs' permutation), contiguous
    where CPU's kernel resizes it so (TT_LF_OUT_RESIZE_CONTIGUOUS); with the samples as given and
    with every input's strides reversed."""
    warnings.simplefilter("ignore")
    diffs = layout_differences(op, torch.float32)
    assert not diffs, diffs


def probe_layouts():
    """Every op_db op with out=, float32 and complex64: where tpu's resized out= layout differs."""
    from torch.testing._internal.common_methods_invocations import op_db
    warnings.simplefilter("ignore")
    n = 0
    for op in op_db:
        if not op.supports_out or op.name.startswith("sparse."):
            continue
        for dt in (torch.float32, torch.complex64):
            if dt not in op.supported_dtypes("cpu"):
                continue
            diffs = layout_differences(op, dt, samples=4)
            if diffs:
                n += 1
                print(f"{op.name} {op.variant_test_name} ({str(dt)[6:]}): {diffs[0]}", flush=True)
                break
    print(f"{n} ops differ")


if __name__ == "__main__":
    probe_layouts()
