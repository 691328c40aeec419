"""Reductions without an identity on empty inputs: tpu raises CPU's error
(same exception type, same message) where CPU raises, and gives CPU's result
where CPU gives one (an empty reduced dim is refused also when the other dims
are not empty; a non-empty reduced dim of an empty input is fine)."""
import re

import pytest
import torch

import torch_tpu  # noqa: F401

dev = torch.device("tpu")

NO_DIM = {
    "max": lambda x: x.max(),
    "min": lambda x: x.min(),
    "amax": lambda x: x.amax(),
    "amin": lambda x: x.amin(),
    "argmax": lambda x: x.argmax(),
    "argmin": lambda x: x.argmin(),
    "aminmax": lambda x: torch.aminmax(x),
    "max_int": lambda x: x.long().max(),
    "min_bool": lambda x: (x > 0).min(),
}

WITH_DIM = {
    "max": lambda x, d: x.max(d),
    "min": lambda x, d: x.min(d),
    "max_keepdim": lambda x, d: x.max(d, keepdim=True),
    "max_out": lambda x, d: torch.max(x, d, out=(x.new_empty(0), x.new_empty(0, dtype=torch.long))),
    "amax": lambda x, d: x.amax(d),
    "amin": lambda x, d: x.amin(d),
    "amax_pair": lambda x, d: x.amax((d, 0)) if d not in (0, -x.dim()) else x.amax(d),
    "amin_int": lambda x, d: x.int().amin(d),
    "argmax": lambda x, d: x.argmax(d),
    "argmin": lambda x, d: x.argmin(d, keepdim=True),
    "aminmax": lambda x, d: torch.aminmax(x, dim=d),
    "kthvalue": lambda x, d: x.kthvalue(1, d),
    "median": lambda x, d: x.median(d),
    "nanmedian": lambda x, d: x.nanmedian(d),
    "mode": lambda x, d: x.mode(d),
}

SHAPES = [(0,), (0, 3), (3, 0), (2, 0, 4), (2, 3, 0)]


def _run(fn, *a):
    try:
        r = fn(*a)
    except Exception as e:  # noqa: BLE001 - compared against CPU below
        return e
    return [t.cpu() for t in (r if isinstance(r, tuple) else (r,))]


def _same(got, want):
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"CPU raises {type(want).__name__}: {want}; tpu returned {got}"
        assert type(got) is type(want), (type(got), type(want), str(got))
        msg = str(want).split("\n")[0]
        assert re.search(re.escape(msg), str(got)), (msg, str(got))
    else:
        assert not isinstance(got, Exception), f"tpu raised {got!r}, CPU returned {want}"
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            torch.testing.assert_close(g, w, equal_nan=True)


# (median / nanmedian over all elements of an empty input give NaN, and
# cummax / cummin give empty outputs, on CPU and tpu alike: not listed.)


@pytest.mark.parametrize("name", sorted(NO_DIM))
def test_no_dim_on_empty(name):
    for shape in SHAPES:
        x = torch.randn(shape)
        _same(_run(NO_DIM[name], x.to(dev)), _run(NO_DIM[name], x))


@pytest.mark.parametrize("name", sorted(WITH_DIM))
def test_with_dim_on_empty(name):
    for shape in SHAPES:
        x = torch.randn(shape)
        for d in list(range(len(shape))) + [-1]:
            _same(_run(WITH_DIM[name], x.to(dev), d), _run(WITH_DIM[name], x, d))


def test_issue_repro_and_device_still_works():
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        torch.empty(0, device=dev).max()
    with pytest.raises(RuntimeError, match=r"min\(\): Expected reduction dim to be specified"):
        torch.empty(0, device=dev).min()
    with pytest.raises(IndexError, match=r"mode\(\): Expected reduction dim 1 to have non-zero size"):
        torch.empty(4, 0, device=dev).mode(1)
    x = torch.randn(4, 5)
    torch.testing.assert_close(x.to(dev).max().cpu(), x.max())


# The rest of the audit: reductions whose empty result CPU defines (an identity,
# NaN, an empty output) or refuses in its own meta check; tpu must agree.
AUDIT = {
    "vector_norm_inf": lambda x: torch.linalg.vector_norm(x, float("inf")),
    "vector_norm_-inf": lambda x: torch.linalg.vector_norm(x, -float("inf")),
    "norm_inf": lambda x: x.norm(float("inf")),
    "matrix_norm_inf": lambda x: torch.linalg.matrix_norm(x.reshape(0, 0), float("inf")),
    "quantile": lambda x: torch.quantile(x, 0.5),
    "nanquantile": lambda x: torch.nanquantile(x, 0.5),
    "logsumexp": lambda x: torch.logsumexp(x, 0),
    "cummax": lambda x: torch.cummax(x, 0),
    "max_pool1d": lambda x: torch.nn.functional.max_pool1d(x.reshape(1, 1, 0), 1),
    "median": lambda x: x.median(),
    "nanmedian": lambda x: x.nanmedian(),
    "std": lambda x: x.std(),
    "var_mean": lambda x: torch.var_mean(x, correction=0),
    "prod": lambda x: x.prod(),
    "sum": lambda x: x.sum(),
    "mean": lambda x: x.mean(),
    "nanmean": lambda x: x.nanmean(),
    "all": lambda x: x.all(),
    "any": lambda x: x.any(),
    "histc": lambda x: torch.histc(x),
    "sort": lambda x: x.sort(),
    "amax_empty_dims": lambda x: x.amax(()),
}


@pytest.mark.parametrize("name", sorted(AUDIT))
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_audit_matches_cpu(name):
    for shape in [(0,), (2, 0)]:
        x = torch.randn(shape)
        _same(_run(AUDIT[name], x.to(dev)), _run(AUDIT[name], x))


def test_topk_beyond_empty_dim_raises():
    with pytest.raises(RuntimeError):
        torch.topk(torch.empty(0), 1)
    with pytest.raises(RuntimeError):
        torch.topk(torch.empty(0, device=dev), 1)
