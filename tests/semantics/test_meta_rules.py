"""Ops PyTorch has no meta kernel for (or one that describes other backends):
the bridge's own output-metadata rules (csrc/bridge/aten/meta_rules.cpp) must give
CPU's shapes, strides and dtypes, and PyTorch's errors for bad input."""
import pytest
import torch
import torch.nn.functional as F

DEV = torch.device("tpu")


def layout(x):
    if isinstance(x, torch.Tensor):
        return [(tuple(x.shape), x.stride(), x.dtype)]
    return [e for y in x for e in layout(y)]


def same_layout(fn, *args):
    want = fn(*args)
    got = fn(*[a.to(DEV) for a in args])
    assert layout(got) == layout(want)
    gs = [got] if isinstance(got, torch.Tensor) else list(got)
    ws = [want] if isinstance(want, torch.Tensor) else list(want)
    return gs, ws


@pytest.mark.parametrize("a,b", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 5, 3), (1, 5, 2)),
                                 ((5, 3), (5,)), ((2, 5, 3), (2, 5)), ((4, 4), (4, 3))])
@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_layout(a, b, driver):
    g = torch.Generator().manual_seed(0)
    A, B = torch.randn(a, generator=g), torch.randn(b, generator=g)
    gs, ws = same_layout(lambda x, y: tuple(torch.linalg.lstsq(x, y, driver=driver)), A, B)
    torch.testing.assert_close(gs[0].cpu(), ws[0], rtol=1e-4, atol=1e-4)


def test_lstsq_errors():
    a, b = torch.randn(5, 3, device=DEV), torch.randn(4, 2, device=DEV)
    with pytest.raises(RuntimeError, match="should match other.size"):
        torch.linalg.lstsq(a, b)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.linalg.lstsq(a, torch.randn(5, 2, device=DEV).double())
    with pytest.raises(RuntimeError, match="driver"):
        torch.linalg.lstsq(a, torch.randn(5, 2, device=DEV), driver="bogus")


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 3)])
def test_geqrf_layout(shape):
    same_layout(lambda x: tuple(torch.geqrf(x)), torch.randn(shape))


def test_logcumsumexp_and_histogram_layout():
    x = torch.randn(4, 5)
    same_layout(lambda t: torch.logcumsumexp(t.t(), 0), x)
    same_layout(lambda t: tuple(torch.histogram(t, 6)), x.flatten())
    same_layout(lambda t, b: tuple(torch.histogram(t, b)), x.flatten(), torch.tensor([-1.0, 0.0, 2.0]))
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        torch.histogram(x.to(DEV), 0)


def test_multilabel_margin_one_sample_is_0d():
    x, t = torch.randn(5), torch.tensor([2, 1, -1, 0, 0])
    gs, ws = same_layout(lambda a, b: F.multilabel_margin_loss(a, b, reduction="none"), x, t)
    torch.testing.assert_close(gs[0].cpu(), ws[0])
