"""The bridge caches meta-kernel results per signature (csrc/bridge/fallback.cpp).
Every call here is first made in one state, so that the cache holds its result,
then again after the state (the default dtype, a Scalar's value, the
deterministic-algorithms flag) changed: the result must match CPU's in the new
state, not the cached one."""
import pytest
import torch

import torch_tpu  # noqa: F401

dev = torch.device("tpu")


@pytest.fixture
def default_dtype():
    old = torch.get_default_dtype()
    yield
    torch.set_default_dtype(old)


def _ints(d):
    return torch.arange(1, 6, device=d)


# (name, fn(device) -> tensor): output dtypes that follow the default dtype.
# (Factory calls whose dtype Python or a composite resolves before the backend,
# e.g. torch.ones / torch.full, never reach the cache, and complex results of
# the default complex dtype wait on the complex lowerings.)
DEFAULT_DTYPE_CASES = [
    ("int_div", lambda d: _ints(d) / _ints(d)),
    ("int_true_divide_scalar", lambda d: torch.true_divide(_ints(d), 2)),
    ("uint8_plus_float", lambda d: torch.arange(4, dtype=torch.uint8, device=d) + 5.5),
    ("bool_mul_float", lambda d: torch.ones(3, dtype=torch.bool, device=d) * 0.5),
    ("sqrt_int", lambda d: torch.sqrt(_ints(d))),
    ("sin_int", lambda d: torch.sin(_ints(d))),
    ("atan2_int", lambda d: torch.atan2(_ints(d), _ints(d))),
    ("mean_int_as_float", lambda d: (_ints(d) * 1.0).mean()),
    ("arange_float", lambda d: torch.arange(0.0, 3.0, 0.5, device=d)),
    ("linspace", lambda d: torch.linspace(0, 1, 5, device=d)),
    ("empty_like_int_div", lambda d: torch.div(_ints(d), 3)),
]


@pytest.mark.parametrize("name,fn", DEFAULT_DTYPE_CASES, ids=[c[0] for c in DEFAULT_DTYPE_CASES])
@pytest.mark.parametrize("new_default", [torch.float64, torch.bfloat16])
def test_default_dtype_change(default_dtype, name, fn, new_default):
    torch.set_default_dtype(torch.float32)
    first = fn(dev)  # fills the meta cache under float32
    assert first.dtype == fn("cpu").dtype
    torch.set_default_dtype(new_default)
    want = fn("cpu")
    got = fn(dev)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    torch.testing.assert_close(got.cpu(), want)
    torch.set_default_dtype(torch.float32)
    assert fn(dev).dtype == fn("cpu").dtype  # and back


# Scalar arguments: a meta kernel checks the value, so a cached first call with
# a valid value must not let an invalid one through (CPU raises).
def test_scalar_value_checked_after_cache():
    y = torch.randn(3, 4)
    y.to(dev).renorm(2, 0, 1.0)
    with pytest.raises(RuntimeError, match="maxnorm"):
        y.cpu().renorm(2, 0, -1.0)
    with pytest.raises(RuntimeError, match="maxnorm"):
        y.to(dev).renorm(2, 0, -1.0).cpu()


def test_vector_norm_ord_on_empty_after_cache():
    e = torch.empty(0, 5)
    torch.testing.assert_close(torch.linalg.vector_norm(e.to(dev), 2).cpu(), torch.linalg.vector_norm(e, 2))
    for ord in (-1, -2, 0.0, float("inf"), -float("inf")):
        try:
            want = torch.linalg.vector_norm(e, ord)
        except RuntimeError as err:
            with pytest.raises(RuntimeError, match="does not have an identity"):
                torch.linalg.vector_norm(e.to(dev), ord).cpu()
            assert "identity" in str(err)
        else:
            torch.testing.assert_close(torch.linalg.vector_norm(e.to(dev), ord).cpu(), want)


# Deterministic algorithms change no output metadata; the few Python meta
# kernels that raise CUDA's alert for a meta tensor must not make tpu raise
# where CPU does not, whether or not the signature is already cached.
@pytest.mark.parametrize("cached_first", [False, True])
def test_deterministic_mode_matches_cpu(cached_first):
    x = torch.randn(7, 3 + cached_first)
    old = torch.are_deterministic_algorithms_enabled()
    try:
        if cached_first:
            x.to(dev).median(1)
        torch.use_deterministic_algorithms(True)
        want = x.median(1)
        got = x.to(dev).median(1)
        torch.testing.assert_close(got.values.cpu(), want.values)
        torch.testing.assert_close(got.indices.cpu(), want.indices)
        v = torch.rand(40 + cached_first)
        torch.testing.assert_close(v.to(dev).histc(5).cpu(), v.histc(5))
        assert torch.are_deterministic_algorithms_enabled()  # restored
    finally:
        torch.use_deterministic_algorithms(old)


# Pointwise and foreach ops key a Scalar by its type and class (sign, zero,
# NaN, infinity, beyond float32's range), not its value: a step size that
# changes every optimizer step must not run the (Python) meta kernel again.
def _meta_counts():
    s = torch_tpu._C._stats(-1)
    return s["meta_hits"], s["meta_misses"]


def test_changing_scalars_of_pointwise_and_foreach_ops_hit_the_cache():
    xs = [torch.randn(4, 3, device=dev) for _ in range(3)]
    a = [torch.rand(4, 3, device=dev) + 0.5 for _ in range(3)]
    xc = [x.cpu() for x in xs]
    ac = [t.cpu() for t in a]
    for step in range(1, 6):  # first call fills the cache, the rest must hit it
        if step == 2:
            _, m0 = _meta_counts()
        vals = [0.1 / step, -0.3 * step, 1.5 + step]
        torch._foreach_addcdiv_(xs, a, a, vals)
        torch._foreach_addcdiv_(xc, ac, ac, vals)
        for x in xs:
            x.mul_(1.0 - 0.01 * step).add_(a[0], alpha=0.5 / step)
        for x in xc:
            x.mul_(1.0 - 0.01 * step).add_(ac[0], alpha=0.5 / step)
    _, m1 = _meta_counts()
    assert m1 == m0, f"{m1 - m0} meta-cache misses for calls that differ only in Scalar values"
    for x, y in zip(xs, xc):
        torch.testing.assert_close(x.cpu(), y)


def test_adamw_steps_hit_the_meta_cache():
    torch.manual_seed(0)
    m = torch.nn.Linear(5, 3).to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    x = torch.randn(4, 5, device=dev)
    for i in range(4):
        if i == 2:
            _, m0 = _meta_counts()
        opt.zero_grad()
        m(x).square().mean().backward()
        opt.step()
    _, m1 = _meta_counts()
    assert m1 == m0, f"{(m1 - m0) / 2} meta-cache misses per AdamW step"


# A Scalar's class still selects the result: type promotion by kind, and the
# checks that read sign, finiteness or range raise after a cached valid call.
@pytest.mark.parametrize("name, good, bad, match", [
    ("softshrink", lambda x: torch.nn.functional.softshrink(x, 0.5),
     lambda x: torch.nn.functional.softshrink(x, -1.0), "lambda"),
    ("rrelu", lambda x: torch.ops.aten.rrelu(x, 0.1, 0.3), lambda x: torch.ops.aten.rrelu(x, float("inf"), 0.3),
     "finite"),
    ("softshrink_nan", lambda x: torch.nn.functional.softshrink(x, 0.5),
     lambda x: torch.nn.functional.softshrink(x, float("nan")), "lambda"),
])
def test_scalar_checks_after_a_cached_call(name, good, bad, match):
    x = torch.randn(6) * 3
    torch.testing.assert_close(good(x.to(dev)).cpu(), good(x))
    with pytest.raises(Exception, match=match) as cpu_err:
        bad(x)
    with pytest.raises(type(cpu_err.value), match=match):
        bad(x.to(dev)).cpu()


@pytest.mark.parametrize("first, then", [(2, 2.5), (2.5, 2), (2, True), (1.5, 1 + 2j), (-3, 4)])
def test_scalar_kind_selects_the_dtype_after_a_cached_call(first, then):
    for dt in (torch.int64, torch.uint8, torch.float16, torch.bool):
        x = torch.ones(3, dtype=dt)
        for s in (first, then):
            for f in (torch.add, torch.mul, torch.sub if dt != torch.bool else torch.mul):
                try:
                    want = f(x, s)
                except RuntimeError:
                    with pytest.raises(RuntimeError):
                        f(x.to(dev), s).cpu()
                    continue
                got = f(x.to(dev), s).cpu()
                assert got.dtype == want.dtype, (dt, s, f)
                torch.testing.assert_close(got, want)
