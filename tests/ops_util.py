"""Helpers shared by the per-family op tests: make inputs on the CPU, run the
same function on CPU and on `tpu`, compare (forward and autograd)."""
import torch

import torch_tpu  # noqa: F401  (registers the device)

dev = torch.device("tpu")

FLOAT_DTYPES = [torch.float32, torch.bfloat16]
ALL_DTYPES = [torch.float32, torch.bfloat16, torch.int64, torch.bool]


def make(shape, dtype=torch.float32, low=-3, high=3, seed=0):
    """A CPU tensor with reproducible values (integers in [low, high))."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
    return torch.randint(low, high, shape, generator=g, dtype=dtype)


def to_dev(x):
    if isinstance(x, torch.Tensor):
        return x.to(dev)
    if isinstance(x, (list, tuple)):
        return type(x)(to_dev(e) for e in x)
    return x


def to_cpu(x):
    if isinstance(x, torch.Tensor):
        return x.cpu()
    if isinstance(x, (list, tuple)):
        return type(x)(to_cpu(e) for e in x)
    return x


def clone(x):
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(clone(e) for e in x)
    return x


def check(fn, *args, **tol):
    """fn(*args) on CPU and on tpu give the same values, dtypes and shapes
    (in-place functions get fresh copies of the inputs on each side)."""
    got = fn(*to_dev(args))
    want = fn(*clone(args))
    if isinstance(got, torch.Tensor):
        assert got.device.type == "tpu"
    torch.testing.assert_close(to_cpu(got), want, equal_nan=True, **tol)


def check_grad(fn, *args, **tol):
    """The gradients of sum(fn(*args) * w) w.r.t. the floating-point tensor
    args agree between CPU and tpu (w: a fixed random weight)."""
    cpu_args = [a.detach().clone().requires_grad_(True)
                if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
    dev_args = [a.detach().to(dev).requires_grad_(True)
                if isinstance(a, torch.Tensor) and a.is_floating_point() else to_dev(a) for a in args]
    out_c = fn(*cpu_args)
    out_d = fn(*dev_args)
    w = make(out_c.shape, out_c.dtype, seed=123)
    (out_c * w).sum().backward()
    (out_d * w.to(dev)).sum().backward()
    torch.testing.assert_close(out_d.detach().cpu(), out_c.detach(), equal_nan=True, **tol)
    for a, b in zip(cpu_args, dev_args):
        if isinstance(a, torch.Tensor) and a.requires_grad:
            assert b.grad is not None, "no gradient reached the tpu input"
            torch.testing.assert_close(b.grad.cpu(), a.grad, **tol)


def tol_for(dtype, **float32):
    """Tolerances: the defaults for bf16, `float32` overrides for f32."""
    return float32 if dtype == torch.float32 else {}
