"""shape family (csrc/core/lower/shape/shape.c) against PyTorch CPU: tril / triu,
roll, repeat, repeat_interleave, trace, cross, cdist, constant /
reflection / replication / circular padding; forward and gradients."""
import pytest
import torch
import torch.nn.functional as F

from ops_util import ALL_DTYPES, check, check_grad, dev, make


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("diagonal", [0, 2, -1, -5])
def test_tril_triu(dtype, diagonal):
    x = make((2, 4, 5), dtype)
    check(lambda t: torch.tril(t, diagonal), x)
    check(lambda t: torch.triu(t, diagonal), x)
    check(lambda t: t.clone().tril_(diagonal), x)
    check(lambda t: t.clone().triu_(diagonal), x)
    check(lambda t: torch.tril(t[0].t(), diagonal), x)  # non-contiguous input


def test_tril_triu_out_and_grad():
    x = make((5, 3))

    def with_out(t):
        o = torch.empty(5, 3, device=t.device)
        torch.triu(t, -1, out=o)
        return o
    check(with_out, x)
    check_grad(lambda t: torch.tril(t, 1), x)
    check_grad(lambda t: torch.triu(t), x)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_roll(dtype):
    x = make((3, 4, 5), dtype)
    for shifts, dims in [(1, 0), (-2, 1), (7, 2), ((1, -3), (0, 2)), ((2, 2), (1, 1)), (0, 0)]:
        check(lambda t: torch.roll(t, shifts, dims), x)
    check(lambda t: torch.roll(t, 4), x)  # flattened
    check(lambda t: torch.roll(t, -13), x)
    check(lambda t: torch.roll(t, 1, 0), torch.empty(0, 3, dtype=dtype))


def test_roll_grad():
    check_grad(lambda t: torch.roll(t, (1, -2), (0, 1)), make((3, 4)))
    check_grad(lambda t: torch.roll(t, 5), make((3, 4)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_repeat(dtype):
    x = make((2, 3), dtype)
    for reps in [(1, 1), (2, 3), (3, 1, 2), (2, 1, 1, 2), (1, 0), (4,) * 2]:
        check(lambda t: t.repeat(*reps), x)
    check(lambda t: t.repeat(3, 2), torch.tensor(5).to(dtype))


def test_repeat_grad():
    check_grad(lambda t: t.repeat(2, 1, 3), make((2, 3)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_repeat_interleave(dtype):
    x = make((4, 3), dtype)
    check(lambda t: t.repeat_interleave(2, dim=0), x)
    check(lambda t: t.repeat_interleave(3), x)
    reps = torch.tensor([1, 0, 3, 2])
    check(lambda t: t.repeat_interleave(reps.to(t.device), dim=0, output_size=6), x)
    check(lambda r: torch.repeat_interleave(r, output_size=6), reps)
    check(lambda r: torch.repeat_interleave(r.int(), output_size=6), reps)


def test_repeat_interleave_grad():
    reps = torch.tensor([2, 1, 3])
    check_grad(lambda t: t.repeat_interleave(reps.to(t.device), dim=1, output_size=6), make((2, 3)))
    check_grad(lambda t: t.repeat_interleave(2, dim=0), make((2, 3)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32])
def test_trace(dtype):
    for shape in [(4, 4), (3, 5), (6, 2), (0, 3)]:
        check(torch.trace, make(shape, dtype))
    check(lambda t: torch.trace(t.t()), make((3, 5), dtype))


def test_trace_bool_computes_as_cuda():
    """CPU refuses trace of bool; CUDA (and so the device) sums the diagonal as int64."""
    x = make((3, 4), torch.bool)
    with pytest.raises(NotImplementedError):
        torch.trace(x)
    got = torch.trace(x.to(dev))
    assert got.dtype == torch.int64
    assert got.item() == int(torch.diagonal(x).sum())


def test_trace_grad():
    check_grad(torch.trace, make((4, 3)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_cross(dtype):
    a, b = make((4, 3), dtype), make((4, 3), dtype, seed=1)
    tol = {} if dtype != torch.bfloat16 else {"atol": 0.1, "rtol": 0.02}
    check(lambda x, y: torch.linalg.cross(x, y), a, b, **tol)
    check(lambda x, y: torch.cross(x, y, dim=0), make((3, 2, 4), dtype), make((3, 2, 4), dtype, seed=1), **tol)
    check(lambda x, y: torch.linalg.cross(x, y), make((2, 1, 3), dtype), make((1, 5, 3), dtype, seed=1), **tol)


def test_cross_grad():
    check_grad(lambda x, y: torch.linalg.cross(x, y), make((4, 3)), make((4, 3), seed=1))


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_cdist(p):
    a, b = make((5, 4)), make((3, 4), seed=1)
    check(lambda x, y: torch.cdist(x, y, p=p), a, b)
    check(lambda x, y: torch.cdist(x, y, p=p), make((2, 5, 3)), make((2, 4, 3), seed=1))
    check(lambda x, y: torch.cdist(x, y, p=p), make((2, 1, 5, 3)), make((3, 4, 3), seed=1))
    if p != 0.0:
        check_grad(lambda x, y: torch.cdist(x, y, p=p), a, b)
        check_grad(lambda x, y: torch.cdist(x, y, p=p), make((2, 5, 3)), make((4, 3), seed=1))
    # a zero distance (same rows): the gradient there is 0 on CPU
    c = make((3, 4))
    if p >= 1.0:
        check_grad(lambda x, y: torch.cdist(x, y, p=p), c, c.clone())


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_constant_pad(dtype):
    x = make((2, 3, 4), dtype)
    for pad in [(1, 2), (0, 0, 2, 1), (1, 1, 1, 1, 1, 1), (-1, 2), (2, -1, -1, 0)]:
        check(lambda t: F.pad(t, pad), x)
        check(lambda t: F.pad(t, pad, value=1), x)
    if dtype.is_floating_point:
        check(lambda t: F.pad(t, (1, 1), value=-2.5), x)
    check(lambda t: torch.constant_pad_nd(t, (1, 1)), torch.empty(0, 2, dtype=dtype))


def test_constant_pad_grad():
    check_grad(lambda t: F.pad(t, (1, 2, 0, 1), value=3.0), make((2, 3)))
    check_grad(lambda t: F.pad(t, (-1, 2)), make((2, 3)))


PAD_CASES = {  # mode: [(input shape, pad)]
    1: [((2, 3, 6), (2, 3)), ((3, 5), (0, 4)), ((1, 2, 6), (-1, 2))],
    2: [((2, 2, 4, 5), (1, 2, 3, 0)), ((2, 4, 4), (3, 3, 2, 2))],
    3: [((1, 2, 3, 4, 5), (1, 2, 2, 1, 1, 0)), ((2, 3, 3, 4), (0, 3, 1, 1, 2, 2))],
}


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_pad_modes(mode, k, dtype):
    for shape, pad in PAD_CASES[k]:
        if dtype == torch.int64 and mode == "reflect" and k == 3:
            continue  # PyTorch CPU: reflection_pad3d is not implemented for Long
        check(lambda t: F.pad(t, pad, mode=mode), make(shape, dtype))


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_pad_modes_grad(mode, k):
    for shape, pad in PAD_CASES[k]:
        check_grad(lambda t: F.pad(t, pad, mode=mode), make(shape))


def test_pad_circular():
    # CompositeImplicitAutograd (slices + cat): a smoke test of the composition
    check(lambda t: F.pad(t, (2, 3), mode="circular"), make((2, 3, 6)))
    check(lambda t: F.pad(t, (1, 2, 3, 0), mode="circular"), make((2, 2, 4, 5), torch.int64))
    check_grad(lambda t: F.pad(t, (1, 2, 1, 1), mode="circular"), make((1, 2, 3, 4)))


def test_pad_grad_bf16():
    # we accumulate gradients in float32; PyTorch CPU adds in bfloat16: allow its rounding
    tol = {"atol": 8e-3, "rtol": 2e-2}
    x = make((2, 3, 6), torch.bfloat16)
    check_grad(lambda t: F.pad(t, (3, 4), mode="reflect"), x, **tol)
    check_grad(lambda t: F.pad(t, (2, 3, 1, 1), mode="replicate"), make((2, 4, 4), torch.bfloat16), **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_index_fill(dtype):
    x = make((3, 5), dtype)
    idx = torch.tensor([4, 0, 4])
    check(lambda t: t.index_fill(1, idx.to(t.device), 1), x)
    check(lambda t: t.clone().index_fill_(0, torch.tensor(-1, device=t.device), 0), x)
    check(lambda t: t.index_fill(0, idx[:0].to(t.device), 1), x)
    check(lambda t: t.index_fill(1, idx.to(t.device), torch.tensor(1, dtype=dtype, device=t.device)), x)
    check_grad(lambda t: t.index_fill(1, idx.to(t.device), 2.0), make((3, 5)))
