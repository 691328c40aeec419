"""matmul family (csrc/core/lower/linalg/matmul.c) against PyTorch CPU."""
import pytest
import torch

from ops_util import check, check_grad, dev, make

DTYPES = [torch.float32, torch.bfloat16, torch.int64]


@pytest.mark.parametrize("dtype", DTYPES)
def test_mm_bmm_mv_dot(dtype):
    a, b = make((5, 7), dtype), make((7, 3), dtype, seed=1)
    check(torch.mm, a, b)
    check(torch.matmul, a, b)
    check(torch.bmm, make((2, 5, 7), dtype), make((2, 7, 3), dtype, seed=1))
    check(torch.mv, a, make((7,), dtype, seed=2))
    check(torch.dot, make((7,), dtype), make((7,), dtype, seed=2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_add_forms(dtype):
    beta, alpha = (2, 3) if dtype == torch.int64 else (0.5, -1.5)
    m1, m2 = make((4, 6), dtype), make((6, 5), dtype, seed=1)
    check(lambda s, x, y: torch.addmm(s, x, y, beta=beta, alpha=alpha), make((5,), dtype, seed=3), m1, m2)
    check(lambda s, x, y: torch.baddbmm(s, x, y, beta=beta, alpha=alpha),
          make((2, 4, 5), dtype, seed=3), make((2, 4, 6), dtype), make((2, 6, 5), dtype, seed=1))
    check(lambda s, x, y: torch.addbmm(s, x, y, beta=beta, alpha=alpha),
          make((4, 5), dtype, seed=3), make((2, 4, 6), dtype), make((2, 6, 5), dtype, seed=1))
    check(lambda s, x, y: torch.addmv(s, x, y, beta=beta, alpha=alpha),
          make((4,), dtype, seed=3), m1, make((6,), dtype, seed=2))
    # addr reaches the device decomposed (mul, add): bf16 rounds per op in another order
    tol = {"rtol": 2e-2, "atol": 2e-2} if dtype == torch.bfloat16 else {}
    check(lambda s, x, y: torch.addr(s, x, y, beta=beta, alpha=alpha),
          make((4, 6), dtype, seed=3), make((4,), dtype), make((6,), dtype, seed=2), **tol)


def test_addmm_beta_zero_ignores_nan():
    s = torch.full((3, 3), float("nan"))
    check(lambda s, a, b: torch.addmm(s, a, b, beta=0), s, make((3, 2)), make((2, 3)))


def test_inplace_and_out():
    a, b = make((3, 4)), make((4, 2), seed=1)
    check(lambda s, x, y: s.addmm_(x, y), make((3, 2), seed=2), a, b)
    check(lambda x, y: torch.mm(x, y, out=torch.empty(3, 2, device=x.device)), a, b)


def test_linear_and_matmul_grad():
    check_grad(torch.nn.functional.linear, make((4, 6)), make((5, 6), seed=1), make((5,), seed=2))
    check_grad(torch.matmul, make((2, 3, 4)), make((4, 5), seed=1))
    check_grad(torch.bmm, make((2, 3, 4)), make((2, 4, 5), seed=1))


def test_bf16_accumulates_in_f32():
    # f32 accumulation, one rounding: within one bf16 ulp of PyTorch CPU
    a, b = make((8, 256), torch.bfloat16), make((256, 8), torch.bfloat16, seed=1)
    got = torch.mm(a.to(dev), b.to(dev)).cpu()
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got, torch.mm(a, b), rtol=8e-3, atol=1e-2)


def test_large_f32():
    # HIGHEST precision: no reduced-precision passes
    a, b = make((128, 256)), make((256, 64), seed=1)
    check(torch.mm, a, b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("use_gelu", [False, True])
def test_addmm_activation_matches_cpu(dtype, use_gelu):
    """_addmm_activation (TransformerEncoderLayer's fast path): relu, or CPU's exact gelu of
    the product rounded to the dtype."""
    g = torch.Generator().manual_seed(0)
    b, m1, m2 = (torch.randn(s, generator=g).to(dtype) for s in ((5,), (3, 4), (4, 5)))
    want = torch._addmm_activation(b, m1, m2, beta=0.5, alpha=2.0, use_gelu=use_gelu)
    got = torch._addmm_activation(b.to("tpu"), m1.to("tpu"), m2.to("tpu"), beta=0.5, alpha=2.0, use_gelu=use_gelu)
    tol = 2e-2 if dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(got.cpu(), want, rtol=tol, atol=tol)
