/* Which ops may see complex tensors. Most lowerings were written before the
 * core had complex dtypes and treat any non-float dtype as an integer (or
 * compute in f32, dropping the imaginary part): letting complex tensors reach
 * them would give silent wrong answers. So an op whose inputs or outputs are
 * complex runs only if its lowering is known to handle complex values: the
 * names below (ATen base names: every overload of the op), each checked
 * against PyTorch CPU (tests/test_complex.py). Everything else fails with a
 * clear TT_UNIMPLEMENTED. When a family learns complex, add its ops here. */
#include <string.h>

#include "internal.h"

static const char* const k_complex_ops[] = {
    /* runtime copies, creation, data movement, index / scatter / pad ops (values only move
     * or add in the tensor's dtype) */
    "tt::copy", "aten::copy", "aten::copy_", /* (functional graphs: torch.compile) */
    "aten::_to_copy", "aten::clone", "aten::fill", "aten::fill_",
    "aten::zero", "aten::zero_", "aten::cat", "aten::stack", "aten::index_select",
    "aten::flip", "aten::roll", "aten::repeat", "aten::where", "aten::constant_pad_nd",
    "aten::index", "aten::gather", "aten::slice_scatter", "aten::select_scatter", "aten::tril",
    "aten::triu", "aten::tril_", "aten::triu_", "aten::masked_fill", "aten::index_put",
    "aten::index_put_", "aten::scatter",
    "aten::diagonal_scatter", "aten::masked_fill_", "aten::trace", "aten::linalg_cross",
    "aten::reflection_pad1d", "aten::reflection_pad2d", "aten::reflection_pad3d",
    "aten::replication_pad1d", "aten::replication_pad2d", "aten::replication_pad3d",
    "aten::channel_shuffle", "aten::eye", "aten::index_add", "aten::index_add_", "aten::index_copy",
    "aten::index_copy_", "aten::index_fill", "aten::index_fill_", "aten::scatter_add",
    "aten::scatter_add_", "aten::put", "aten::put_", "aten::take", "aten::masked_scatter",
    "aten::masked_scatter_", "aten::_index_put_impl_", "aten::unfold_backward",
    "aten::reflection_pad1d_backward", "aten::reflection_pad2d_backward",
    "aten::reflection_pad3d_backward", "aten::replication_pad1d_backward",
    "aten::replication_pad2d_backward", "aten::replication_pad3d_backward",
    /* device-side assertions (index_more_misc.c: == 0 compares both parts) */
    "aten::_assert_async", "aten::_functional_assert_async",
    /* the complex / fft families (csrc/core/lower/elementwise/complex_ops.c, fft.c) */
    "aten::_conj_physical", "aten::conj_physical", "aten::conj_physical_", "aten::complex",
    "aten::polar", "aten::_fft_r2c", "aten::_fft_c2r", "aten::_fft_c2c", "tt::complex_abs",
    "tt::complex_angle", "tt::complex_sgn",
    /* abs / sgn (unary.c) and angle (special_misc.c) delegate complex inputs to the above */
    "aten::abs", "aten::sgn", "aten::angle",
    /* arithmetic and comparisons (binary.c; tt_l_promote ranks complex above float, real
     * operands and Scalars convert to (x, 0), division as c10::complex divides) */
    "aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::rsub", "aten::mul", "aten::mul_",
    "aten::div", "aten::div_", "aten::eq", "aten::eq_", "aten::ne", "aten::ne_",
    "aten::logical_and", "aten::logical_and_", "aten::logical_or", "aten::logical_or_",
    "aten::logical_xor", "aten::logical_xor_", "aten::logical_not", "aten::logical_not_",
    "aten::pow", "aten::pow_", "aten::addcmul", "aten::addcmul_", "aten::addcdiv", "aten::addcdiv_",
    "aten::lerp", "aten::lerp_", /* binary_misc.c: |w| < 0.5 picks the side, as on the CPU */
    /* unary math (unary.c delegates complex inputs to complex_math.c; nan_to_num per part) */
    "aten::nan_to_num", "aten::nan_to_num_",
    "aten::neg", "aten::neg_", "aten::isnan", "aten::isinf", "aten::exp", "aten::exp_",
    "aten::exp2", "aten::exp2_", "aten::expm1", "aten::expm1_", "aten::log", "aten::log_",
    "aten::log2", "aten::log2_", "aten::log10", "aten::log10_", "aten::log1p", "aten::log1p_",
    "aten::sqrt", "aten::sqrt_", "aten::rsqrt", "aten::rsqrt_", "aten::reciprocal",
    "aten::reciprocal_", "aten::sigmoid", "aten::sigmoid_", "aten::sin", "aten::sin_",
    "aten::cos", "aten::cos_", "aten::tan", "aten::tan_", "aten::sinh", "aten::sinh_",
    "aten::cosh", "aten::cosh_", "aten::tanh", "aten::tanh_", "aten::asin", "aten::asin_",
    "aten::acos", "aten::acos_", "aten::atan", "aten::atan_", "aten::asinh", "aten::asinh_",
    "aten::acosh", "aten::acosh_", "aten::atanh", "aten::atanh_",
    /* activations / backward ops (unary_act.c): silu, and the conjugate derivatives */
    "aten::silu", "aten::silu_", "aten::tanh_backward", "aten::sigmoid_backward",
    /* random fillers (create.c: each part drawn; normal_'s std split over the parts) */
    "aten::normal_", "aten::uniform_",
    /* reductions (reduce.c: complex accumulation; var/std and norms of |x|, real) */
    "aten::sum", "aten::mean", "aten::prod", "aten::cumsum", "aten::cumsum_", "aten::cumprod",
    "aten::cumprod_", "aten::var", "aten::std", "aten::var_mean", "aten::std_mean", "aten::any",
    "aten::all", "aten::count_nonzero", "aten::linalg_vector_norm", "aten::norm",
    /* Cholesky, triangular solves, LU and what is built on it (linalg/linalg.c,
     * linalg_lu.c: conjugate transposes, cabs1 pivots, real Cholesky diagonal) */
    "aten::linalg_cholesky_ex", "aten::cholesky", "aten::cholesky_inverse",
    "aten::_cholesky_solve_helper", "aten::triangular_solve", "aten::linalg_solve_triangular",
    "aten::linalg_lu_factor_ex", "aten::linalg_lu", "aten::lu_unpack", "aten::linalg_lu_solve",
    "aten::_linalg_det", "aten::_linalg_slogdet", "aten::linalg_inv_ex", "aten::_linalg_solve_ex",
    /* linalg_exp.c: Taylor / scaling and squaring on the 1-norm of |z| */
    "aten::linalg_matrix_exp", "aten::matrix_exp",
    /* logsumexp (reduce.c: max of the real parts), logaddexp (binary.c) with CPU's
     * complex step (complex_math.c), logcumsumexp (scan.c: CPU's steps in order, in
     * complex128), sinc (special_misc.c), linspace (create.c), renorm (index_more_misc.c:
     * norms of |x|) */
    "aten::logsumexp", "aten::logaddexp", "aten::_logcumsumexp",
    "aten::special_sinc", "aten::sinc", "aten::sinc_", "aten::linspace", "aten::renorm", "aten::renorm_",
    /* complex results of real input (linalg/linalg_eig.c; refuses complex input itself) */
    "aten::linalg_eig", "aten::_linalg_eigvals", "aten::linalg_eigvals",
    /* the QR family (linalg/linalg_decomp.c: XLA's Qr / Householder-product custom calls
     * follow zgeqrf / zlarfg; ormqr's transpose conjugates) */
    "aten::geqrf", "aten::linalg_householder_product", "aten::linalg_qr", "aten::ormqr",
    /* Hermitian eigen, SVD and least squares (linalg/linalg_decomp_*.c: XLA's Eigh custom call
     * takes Hermitian input; SVD from the Hermitian [[0, A], [A^H, 0]], phases kept by a QR
     * with a real diagonal; lstsq through it with conjugate transposes) */
    "aten::_linalg_eigh", "aten::_linalg_svd", "aten::linalg_lstsq",
    /* LDL (linalg/linalg_ldl.c: zsytf2 / zsytrs, or zhetf2 / zhetrs when hermitian) */
    "aten::linalg_ldl_factor_ex", "aten::linalg_ldl_solve",
};

/* Ops right on complex values only when every tensor is complex. */
static const char* const k_complex_only_ops[] = {
    /* matrix products (linalg/matmul.c: one dot_general in the operands' dtype; PyTorch
     * requires one dtype; vdot conjugates its first operand) */
    "aten::mm", "aten::bmm", "aten::mv", "aten::dot", "aten::vdot", "aten::addmm", "aten::addmm_",
    "aten::baddbmm", "aten::baddbmm_", "aten::addmv", "aten::addmv_", "aten::addbmm",
    "aten::addbmm_", "aten::addr", "aten::addr_",
};

static bool listed(const char* const* list, size_t n, const char* name) {
  size_t base = strcspn(name, ".");
  for (size_t i = 0; i < n; i++)
    if (strlen(list[i]) == base && !strncmp(list[i], name, base)) return true;
  return false;
}

/* every tensor complex (wrapped numbers and Scalars of any kind convert to
 * the complex compute dtype) */
static bool all_complex(const tt_call_arg_t* a) {
  switch (a->kind) {
    case TT_ARG_TENSOR:
      if (a->on_host && a->tier == TT_TIER_WRAPPED) return true;
      return tt_dtype_is_complex(a->on_host ? a->sdtype : a->view.dtype);
    case TT_ARG_TENSORS:
      for (int i = 0; i < a->n; i++)
        if (!all_complex(&a->list[i])) return false;
      return true;
    default:
      return true;
  }
}

static bool uses_complex(const tt_call_arg_t* a) {
  switch (a->kind) {
    case TT_ARG_TENSOR:
      return tt_dtype_is_complex(a->on_host ? a->sdtype : a->view.dtype);
    case TT_ARG_SCALAR:
      return tt_dtype_is_complex(a->sdtype);
    case TT_ARG_TENSORS:
    case TT_ARG_SCALARS:
      for (int i = 0; i < a->n; i++)
        if (uses_complex(&a->list[i])) return true;
      return false;
    default:
      return false;
  }
}

tt_status_t tt__complex_gate(const tt_call_t* c) {
  bool any = false;
  for (int i = 0; i < c->nargs && !any; i++) any = uses_complex(&c->args[i]);
  for (int i = 0; i < c->nout && !any; i++) any = tt_dtype_is_complex(c->out_dtypes[i]);
  if (!any) return NULL;
  const char* name = c->op->name;
#define N(a) (sizeof(a) / sizeof((a)[0]))
  if (listed(k_complex_ops, N(k_complex_ops), name)) return NULL;
  if (listed(k_complex_only_ops, N(k_complex_only_ops), name)) {
    bool ok = true;
    for (int i = 0; i < c->nargs && ok; i++) ok = all_complex(&c->args[i]);
    if (ok) return NULL;
    return tt_status_make(TT_UNIMPLEMENTED,
                          "%s: mixing complex and real tensors is not supported on the tpu device "
                          "yet (convert the real operand to the complex dtype first)",
                          name);
  }
#undef N
  return tt_status_make(TT_UNIMPLEMENTED,
                        "%s: complex tensors are not supported by this op on the tpu device yet",
                        name);
}
