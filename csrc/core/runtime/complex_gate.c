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
    /* runtime copies, creation, data movement */
    "tt::copy", "aten::_to_copy", "aten::clone", "aten::fill", "aten::fill_",
    "aten::zero", "aten::zero_", "aten::cat", "aten::stack", "aten::index_select",
    "aten::flip", "aten::roll", "aten::repeat", "aten::where", "aten::constant_pad_nd",
    "aten::index", "aten::gather", "aten::slice_scatter", "aten::select_scatter", "aten::tril",
    "aten::triu", "aten::masked_fill", "aten::index_put", "aten::index_put_", "aten::scatter",
    "aten::diagonal_scatter",
    /* the complex / fft families (csrc/core/lower/elementwise/complex_ops.c, fft.c) */
    "aten::_conj_physical", "aten::conj_physical", "aten::conj_physical_", "aten::complex",
    "aten::polar", "aten::_fft_r2c", "aten::_fft_c2r", "aten::_fft_c2c", "tt::complex_abs",
    "tt::complex_angle", "tt::complex_sgn",
    /* abs / sgn (unary.c) and angle (special_misc.c) delegate complex inputs to the above */
    "aten::abs", "aten::sgn", "aten::angle",
    /* complex results of real input (linalg/linalg_eig.c; refuses complex input itself) */
    "aten::linalg_eig", "aten::_linalg_eigvals", "aten::linalg_eigvals",
};

/* Arithmetic that is right on complex values only when every tensor is
 * complex: the shared dtype promotion (tt_l_promote) does not rank complex
 * above float yet, so complex + float would compute in float. */
static const char* const k_complex_only_ops[] = {
    "aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::mul", "aten::mul_", "aten::neg",
    "aten::neg_", "aten::sum", "aten::mm", "aten::bmm",
};
/* Not listed yet: eq / ne (tt_l_compare gives complex operands compare_type
 * UNSIGNED, a bitwise compare: -0 == +0 and NaN != NaN come out wrong). */

static bool listed(const char* const* list, size_t n, const char* name) {
  size_t base = strcspn(name, ".");
  for (size_t i = 0; i < n; i++)
    if (strlen(list[i]) == base && !strncmp(list[i], name, base)) return true;
  return false;
}

/* every tensor complex (or a wrapped integer / bool number), no floating
 * Scalar */
static bool all_complex(const tt_call_arg_t* a) {
  switch (a->kind) {
    case TT_ARG_TENSOR:
      if (a->on_host && a->tier == TT_TIER_WRAPPED) return !tt_dtype_is_float(a->sdtype);
      return tt_dtype_is_complex(a->on_host ? a->sdtype : a->view.dtype);
    case TT_ARG_SCALAR:
      return !tt_dtype_is_float(a->sdtype);
    case TT_ARG_TENSORS:
    case TT_ARG_SCALARS:
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
