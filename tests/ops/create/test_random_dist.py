"""The samplers behind torch.distributions on tpu (csrc/core/lower/create/random_dist.c):
_standard_gamma (Gamma, Chi2, StudentT), _sample_dirichlet (Dirichlet, Beta), poisson, and
_standard_gamma_grad (Gamma.rsample's gradient).

The device draws its own bits, so samples are compared with PyTorch CPU's in distribution:
a two-sample Kolmogorov-Smirnov statistic against CPU samples of the same parameters, below
the critical value for a one-in-a-million false alarm (the seeds are fixed, so each check is
deterministic). Edge values, errors, dtypes and layouts are compared exactly."""
import math

import pytest
import torch

import torch_tpu  # noqa: F401

DEV = "tpu"
N = 20000


def ks_stat(a, b):
    """The two-sample KS statistic sup |F_a - F_b| (ties handled: both CDFs
    evaluated at every distinct value)."""
    a, b = a.double().flatten().sort().values, b.double().flatten().sort().values
    v = torch.cat([a, b]).unique()
    fa = torch.searchsorted(a, v, right=True).double() / a.numel()
    fb = torch.searchsorted(b, v, right=True).double() / b.numel()
    return (fa - fb).abs().max().item()


def ks_critical(n, m, alpha=1e-6):
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


def same_distribution(dev_samples, cpu_samples, what):
    d = ks_stat(dev_samples.cpu(), cpu_samples)
    crit = ks_critical(dev_samples.numel(), cpu_samples.numel())
    assert d < crit, f"{what}: KS statistic {d:.4f} >= {crit:.4f} (tpu and CPU samples differ in distribution)"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("alpha", [0.05, 0.4, 1.0, 2.5, 40.0])
def test_standard_gamma_matches_cpu_in_distribution(alpha, dtype):
    torch.manual_seed(1)
    a = torch.full((N,), alpha, dtype=dtype)
    got = torch._standard_gamma(a.to(DEV))
    assert got.dtype == dtype and got.shape == a.shape and got.stride() == (1,)
    want = torch._standard_gamma(a)
    same_distribution(got, want, f"gamma({alpha}) {dtype}")
    assert bool((got.cpu() >= torch.finfo(dtype).tiny).all())


def test_standard_gamma_edges_layouts_and_generators():
    # alpha 0 gives the dtype's smallest normal number, as on CPU
    for dt in (torch.float32, torch.float64):
        a = torch.tensor([0.0, 0.0], dtype=dt)
        torch.testing.assert_close(torch._standard_gamma(a.to(DEV)).cpu(), torch._standard_gamma(a))
    # mixed shapes in one tensor, a non-contiguous input, empty and 0-d
    torch.manual_seed(2)
    a = (torch.rand(6, 4000) * 5 + 0.1).t()
    got = torch._standard_gamma(a.to(DEV))
    want = torch._standard_gamma(a)
    assert got.shape == want.shape and got.stride() == want.stride()
    for j in range(6):
        same_distribution(got[:, j] / a[:, j].to(DEV), want[:, j] / a[:, j], f"gamma column {j} (scaled)")
    assert torch._standard_gamma(torch.empty(0, 3, device=DEV)).shape == (0, 3)
    assert torch._standard_gamma(torch.tensor(2.0, device=DEV)).shape == ()
    # a generator: the same seed gives the same samples, the next call others
    g = torch.Generator(device=DEV)
    g.manual_seed(7)
    x1 = torch._standard_gamma(torch.full((64,), 1.5, device=DEV), generator=g).cpu()
    x2 = torch._standard_gamma(torch.full((64,), 1.5, device=DEV), generator=g).cpu()
    g.manual_seed(7)
    x3 = torch._standard_gamma(torch.full((64,), 1.5, device=DEV), generator=g).cpu()
    assert torch.equal(x1, x3) and not torch.equal(x1, x2)


def test_distributions_built_on_gamma():
    torch.manual_seed(3)
    cases = [
        (lambda d: torch.distributions.Gamma(torch.tensor(3.0, device=d), torch.tensor(2.0, device=d)), "Gamma"),
        (lambda d: torch.distributions.Chi2(torch.tensor(4.0, device=d)), "Chi2"),
        (lambda d: torch.distributions.StudentT(torch.tensor(5.0, device=d)), "StudentT"),
        (lambda d: torch.distributions.Beta(torch.tensor(0.5, device=d), torch.tensor(2.0, device=d)), "Beta"),
    ]
    for make, name in cases:
        same_distribution(make(DEV).sample((N,)), make("cpu").sample((N,)), name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dirichlet_matches_cpu(dtype):
    torch.manual_seed(4)
    conc = torch.tensor([[0.05, 1.0, 7.0], [2.0, 2.0, 2.0]], dtype=dtype)
    got = torch._sample_dirichlet(conc.expand(N // 2, 2, 3).to(DEV)).cpu()
    want = torch._sample_dirichlet(conc.expand(N // 2, 2, 3))
    assert got.dtype == dtype and got.shape == want.shape
    torch.testing.assert_close(got.sum(-1), torch.ones(N // 2, 2, dtype=dtype), rtol=0, atol=4 * torch.finfo(dtype).eps)
    assert bool((got >= torch.finfo(dtype).tiny).all()) and bool((got < 1).all())
    for i in range(2):
        for k in range(3):
            same_distribution(got[:, i, k], want[:, i, k], f"dirichlet {conc[i].tolist()} component {k}")
    # a one-element simplex is 1's largest value below 1, as on CPU
    one = torch.tensor([[3.0]], dtype=dtype)
    torch.testing.assert_close(torch._sample_dirichlet(one.to(DEV)).cpu(), torch._sample_dirichlet(one))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("rate", [0.0, 0.3, 4.0, 9.99, 10.0, 60.0, 1.0e4])
def test_poisson_matches_cpu_in_distribution(rate, dtype):
    torch.manual_seed(5)
    lam = torch.full((N,), rate, dtype=dtype)
    got = torch.poisson(lam.to(DEV))
    assert got.dtype == dtype and got.shape == lam.shape
    g = got.cpu()
    assert torch.equal(g, g.round()) and bool((g >= 0).all())
    want = torch.poisson(lam)
    if rate == 0.0:
        assert torch.equal(g, want)
    else:
        same_distribution(got, want, f"poisson({rate}) {dtype}")


def test_poisson_negative_rate_raises_as_cpu():
    with pytest.raises(RuntimeError) as cpu_err:
        torch.poisson(torch.tensor([1.0, -0.5]))
    with pytest.raises(RuntimeError) as tpu_err:
        torch.poisson(torch.tensor([1.0, -0.5], device=DEV)).cpu()
    assert "invalid Poisson rate, expected rate to be non-negative" in str(cpu_err.value)
    assert "invalid Poisson rate, expected rate to be non-negative" in str(tpu_err.value)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_standard_gamma_grad_equals_cpu(dtype):
    torch.manual_seed(6)
    # the three regimes: x < 0.8 (series), alpha > 8 (near and away from alpha), the rest
    alpha = torch.cat([torch.rand(400) * 0.9 + 0.05, torch.rand(400) * 7 + 1, torch.rand(400) * 100 + 8.5]).double()
    x = torch._standard_gamma(alpha)
    a, xx = alpha.to(dtype), x.to(dtype)
    want = torch._standard_gamma_grad(a, xx)
    got = torch._standard_gamma_grad(a.to(DEV), xx.to(DEV)).cpu()
    tol = 1e-12 if dtype == torch.float64 else 1e-6
    torch.testing.assert_close(got, want, rtol=tol, atol=0)


def test_gamma_rsample_gradient():
    """Gamma.rsample's gradient is CPU's formula applied to the device's samples."""
    torch.manual_seed(7)
    conc = torch.tensor([0.5, 2.0, 20.0], device=DEV, requires_grad=True)
    rate = torch.tensor([1.0, 0.5, 3.0], device=DEV, requires_grad=True)
    s = torch.distributions.Gamma(conc, rate).rsample((500,))
    (s * torch.arange(3, device=DEV)).sum().backward()
    sc = s.detach().cpu() * rate.detach().cpu()  # the standard-gamma samples
    c, r = conc.detach().cpu(), rate.detach().cpu()
    w = torch.arange(3.0)
    want_conc = (torch._standard_gamma_grad(c.expand(500, 3).contiguous(), sc) / r * w).sum(0)
    want_rate = (-sc / r**2 * w).sum(0)
    torch.testing.assert_close(conc.grad.cpu(), want_conc, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(rate.grad.cpu(), want_rate, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dirichlet_grad_equals_cpu(dtype):
    """Each regime of the Beta gradient (x near 0, near 1, both concentrations
    large, the rational fit) against CPU's. The tpu computes in float64 for every
    dtype (CPU's float kernel runs its series in float): a float32 result is
    CPU's float64 result rounded."""
    torch.manual_seed(8)
    concs = [[0.3, 0.5], [2.0, 3.0], [10.0, 12.0], [0.05, 40.0], [1.0, 1.0, 1.0, 50.0]]
    for conc in concs:
        c = torch.tensor(conc, dtype=torch.float64).expand(1500, len(conc)).contiguous()
        x = torch._sample_dirichlet(c)
        tot = c.sum(-1, True).expand_as(c).contiguous()
        want64 = torch._dirichlet_grad(x, c, tot)
        got = torch._dirichlet_grad(x.to(dtype).to(DEV), c.to(dtype).to(DEV), tot.to(dtype).to(DEV)).cpu()
        assert got.dtype == dtype and got.shape == c.shape
        if dtype == torch.float64:
            torch.testing.assert_close(got, want64, rtol=1e-10, atol=0)
        else:
            want = torch._dirichlet_grad(x.to(dtype), c.to(dtype), tot.to(dtype))
            # atol: samples below float32's smallest normal number are subnormal, which XLA
            # reads as 0 (their gradients are ~1e-36)
            torch.testing.assert_close(got, torch._dirichlet_grad(x.to(dtype).double(), c, tot).to(dtype),
                                       rtol=2e-6, atol=1e-30)
            torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-30)
    # broadcast arguments, as TensorIterator broadcasts them
    xb = torch.rand(4, 3, dtype=torch.float64) * 0.8 + 0.1
    ab, tb = torch.tensor([0.5, 2.0, 9.0], dtype=torch.float64), torch.tensor(20.0, dtype=torch.float64)
    torch.testing.assert_close(torch._dirichlet_grad(xb.to(DEV), ab.to(DEV), tb.to(DEV)).cpu(),
                               torch._dirichlet_grad(xb, ab, tb), rtol=1e-10, atol=0)


def test_dirichlet_and_beta_rsample_gradients():
    """Dirichlet.rsample (and Beta's, built on it) backpropagates CPU's formula
    through the device's samples."""
    from torch.distributions.dirichlet import _Dirichlet_backward

    torch.manual_seed(9)
    conc = torch.tensor([0.7, 2.0, 5.0], device=DEV, requires_grad=True)
    s = torch.distributions.Dirichlet(conc).rsample((400,))
    w = torch.tensor([1.0, -2.0, 0.5])
    (s * w.to(DEV)).sum().backward()
    x = s.detach().cpu()
    c = conc.detach().cpu().expand(400, 3)
    want = _Dirichlet_backward(x, c, w.expand(400, 3)).sum(0)
    torch.testing.assert_close(conc.grad.cpu(), want, rtol=1e-4, atol=1e-4)
    a = torch.tensor(2.0, device=DEV, requires_grad=True)
    b = torch.tensor(3.0, device=DEV, requires_grad=True)
    torch.distributions.Beta(a, b).rsample((300,)).sum().backward()
    assert a.grad is not None and b.grad is not None
    assert torch.isfinite(a.grad.cpu()) and torch.isfinite(b.grad.cpu())
    assert a.grad.item() > 0 > b.grad.item()  # a larger alpha moves Beta samples up, a larger beta down


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("count,prob", [(10, 0.3), (40, 0.2), (40, 0.9), (7, 0.97), (1000, 0.5), (1e6, 0.3)])
def test_binomial_matches_cpu_in_distribution(count, prob, dtype):
    torch.manual_seed(10)
    c, p = torch.full((N,), float(count), dtype=dtype), torch.full((N,), prob, dtype=dtype)
    got = torch.binomial(c.to(DEV), p.to(DEV))
    assert got.dtype == dtype and got.shape == c.shape
    g = got.cpu()
    assert torch.equal(g, g.round()) and bool((g >= 0).all()) and bool((g <= count).all())
    same_distribution(got, torch.binomial(c, p), f"binomial({count}, {prob}) {dtype}")


def test_binomial_edges_and_broadcast_probability():
    c = torch.tensor([0.0, 5.0, 5.0, -1.0, 3.0])
    p = torch.tensor([0.3, 0.0, 1.0, 0.5, float("nan")])
    torch.testing.assert_close(torch.binomial(c.to(DEV), p.to(DEV)).cpu(), torch.binomial(c, p), equal_nan=True)
    # the count's shape, a probability broadcast to it, as on CPU; Binomial's sampler
    torch.manual_seed(11)
    counts = torch.tensor([[20.0], [30.0]]).expand(2, N // 2)
    probs = torch.tensor([0.25, 0.6]).view(2, 1).expand(2, N // 2)
    got = torch.distributions.Binomial(counts.to(DEV), probs.to(DEV)).sample()
    want = torch.distributions.Binomial(counts, probs).sample()
    assert got.shape == want.shape
    for i in range(2):
        same_distribution(got[i], want[i], f"Binomial row {i}")
