/* Matrix decompositions (family linalg_decomp): QR (geqrf,
 * linalg_householder_product, linalg_qr, ormqr) here; symmetric eigen and
 * SVD in linalg_decomp_svd.c, least squares in linalg_decomp_lstsq.c.
 *
 * QR uses XLA's "Qr" custom call (QrExpander: Householder reflections with
 * LAPACK's dlarfg conventions, so R's signs and the taus equal geqrf's) and
 * "ProductOfElementaryHouseholderReflectors" (orgqr). Both take complex
 * values too, with zgeqrf / zlarfg's conventions (complex taus, real beta on
 * R's diagonal; checked against CPU in tests/ops/linalg/test_linalg_complex.py), so the
 * complex QR family is these same programs. f16/bf16 compute in
 * f32 (CPU has no half kernels for these; kept for completeness). Empty
 * matrices never reach the custom calls. */
#include <string.h>

#include "linalg_decomp_util.h"
#include "linalg_util.h"
#include "../tt_lower_tables.h"

/* Argument i converted to the compute dtype of output `o`. */
static tt_val_t arg_c(tt_lctx_t* c, int i, int o) {
  return tt_l_convert(c->f, c->args[i].val, tt_l_opmath(c->out_types[o].dtype));
}

/* Zeros for every output (empty inputs: all outputs are empty or zero). */
static tt_status_t zeros_out(tt_lctx_t* c) {
  for (int i = 0; i < c->nout; i++)
    TT_RETURN_IF_ERROR(tt_l_set_out(c, i, tt_shlo_const(c->f, &c->out_types[i], 0.0)));
  return NULL;
}

/* geqrf(self) -> (a, tau) */
static tt_status_t lower_geqrf(tt_lctx_t* c) {
  tt_val_t a = arg_c(c, 0, 0);
  tt_type_t t = tt__ld_type(c->f, a);
  if (tt_type_numel(&t) == 0) return zeros_out(c);
  tt_val_t fac, taus;
  tt__ld_geqrf(c->f, a, &fac, &taus);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, fac));
  return tt_l_set_out(c, 1, taus);
}

/* linalg_householder_product(input (*, m, n), tau (*, k)) -> (*, m, n) */
static tt_status_t lower_householder_product(tt_lctx_t* c) {
  tt_val_t a = arg_c(c, 0, 0);
  tt_type_t t = tt__ld_type(c->f, a);
  if (tt_type_numel(&t) == 0) return zeros_out(c);
  return tt_l_set_out(c, 0, tt__ld_orgqr(c->f, a, arg_c(c, 1, 0)));
}

/* Q (m x qcols) of the packed factorization (fac, taus) of an m x n matrix. */
static tt_val_t q_of(tt_shlo_fn_t* f, tt_val_t fac, tt_val_t taus, int64_t qcols) {
  tt_type_t t = tt__ld_type(f, fac);
  int64_t m = t.dims[t.rank - 2], n = t.dims[t.rank - 1], k = m < n ? m : n;
  return tt__ld_orgqr(f, tt__ld_pad_to(f, tt__ld_block(f, fac, 0, m, 0, k), m, qcols), taus);
}

/* linalg_qr(A, mode) -> (Q, R); modes "reduced", "complete", "r" (Q empty) */
static tt_status_t lower_linalg_qr(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const char* mode = c->args[1].kind == TT_ARG_STR ? c->args[1].str : "reduced";
  bool complete = strcmp(mode, "complete") == 0, r_only = strcmp(mode, "r") == 0;
  if (!complete && !r_only && strcmp(mode, "reduced") != 0)
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "qr received unrecognized mode '%s' but expected one of 'reduced' "
                          "(default), 'r', or 'complete'", mode);
  tt_val_t a = arg_c(c, 0, 1);
  tt_type_t t = tt__ld_type(f, a);
  int r = t.rank;
  int64_t m = t.dims[r - 2], n = t.dims[r - 1], k = m < n ? m : n;
  tt_dtype_t cdt = t.dtype;
  if (tt_type_numel(&t) == 0 || r_only) {
    /* R below; Q: empty ("r"), or the identity columns for k == 0 */
    tt_type_t qt = c->out_types[0];
    bool q_eye = !r_only && tt_type_numel(&qt) > 0;
    if (tt_type_numel(&t) == 0) {
      TT_RETURN_IF_ERROR(tt_l_set_out(
          c, 0, q_eye ? tt__ld_eye(f, &qt, cdt, m, qt.dims[r - 1]) : tt_shlo_const(f, &qt, 0.0)));
      return tt_l_set_out(c, 1, tt_shlo_const(f, &c->out_types[1], 0.0));
    }
  }
  tt_val_t fac, taus;
  tt__ld_geqrf(f, a, &fac, &taus);
  tt_val_t rr = tt__ld_triu(f, complete ? fac : tt__ld_block(f, fac, 0, k, 0, n), 0);
  tt_val_t q = r_only ? tt_shlo_const(f, &c->out_types[0], 0.0)
                      : q_of(f, fac, taus, complete ? m : k);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, q));
  return tt_l_set_out(c, 1, rr);
}

/* ormqr(input (*, mn, k), tau (*, t), other (*, m, n), left, transpose):
 * op(Q) @ other (left) or other @ op(Q), Q = H_1 ... H_t (mn x mn), formed
 * explicitly; op(Q) = Q^H when transposing (LAPACK's zunmqr 'C'). */
static tt_status_t lower_ormqr(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  bool left = c->args[3].i != 0, trans = c->args[4].i != 0;
  tt_val_t a = arg_c(c, 0, 0), taus = arg_c(c, 1, 0), other = arg_c(c, 2, 0);
  tt_type_t at = tt__ld_type(f, a), tt = tt__ld_type(f, taus), ot = tt__ld_type(f, other);
  int r = at.rank;
  int64_t mn = at.dims[r - 2], nt = tt.dims[tt.rank - 1];
  int64_t od = ot.dims[left ? r - 2 : r - 1], want = od < at.dims[r - 1] ? od : at.dims[r - 1];
  if (nt != want) /* CPU's check (LAPACK itself would take fewer reflectors) */
    return tt_status_make(TT_FAILED_PRECONDITION,
                          "torch.ormqr: tau.shape[-1] must be equal to min(other.shape[%d], "
                          "input.shape[-1])", left ? -2 : -1);
  if (tt_type_numel(&ot) == 0) return zeros_out(c);
  tt_val_t q;
  if (nt == 0 || tt_type_numel(&at) == 0) {
    q = tt__ld_eye(f, &at, at.dtype, mn, mn);
  } else {
    q = tt__ld_orgqr(f, tt__ld_pad_to(f, tt__ld_block(f, a, 0, mn, 0, nt), mn, mn), taus);
  }
  if (trans) q = tt__la_conj(f, q); /* complex: the conjugate transpose (real: q) */
  tt_val_t out = left ? tt__la_matmul_tr(f, q, other, trans, false)
                      : tt__la_matmul_tr(f, other, q, false, trans);
  return tt_l_set_out(c, 0, out);
}

#define R(name, fn) {"aten::" name, fn, 0, 0}

const tt_lower_entry_t tt_lower_linalg_decomp[] = {
    R("geqrf", lower_geqrf), R("geqrf.a", lower_geqrf),
    R("linalg_householder_product", lower_householder_product),
    R("linalg_householder_product.out", lower_householder_product),
    R("linalg_qr", lower_linalg_qr), R("linalg_qr.out", lower_linalg_qr),
    R("ormqr", lower_ormqr), R("ormqr.out", lower_ormqr),
    R("_linalg_eigh", tt__ld_lower_eigh), R("_linalg_eigh.eigenvalues", tt__ld_lower_eigh),
    R("_linalg_svd", tt__ld_lower_svd), R("_linalg_svd.U", tt__ld_lower_svd),
    R("linalg_lstsq", tt__ld_lower_lstsq), R("linalg_lstsq.out", tt__ld_lower_lstsq),
    /* general eigendecomposition (linalg_eig*.c): param 0 values and vectors, 1 values */
    R("linalg_eig", tt__ld_lower_eig), R("linalg_eig.out", tt__ld_lower_eig),
    {"aten::_linalg_eigvals", tt__ld_lower_eig, 1, 0},
    {"aten::linalg_eigvals.out", tt__ld_lower_eig, 1, 0},
};
const int tt_lower_linalg_decomp_count = TT_TABLE_COUNT(tt_lower_linalg_decomp);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_linalg_decomp_facts[] = {
    TT_FACT("aten::linalg_eig", TT_LF_COMPLEX | TT_LF_OUT_RESTRIDE_IF_EMPTY),
    TT_FACT("aten::_linalg_eigvals", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_eigvals", TT_LF_COMPLEX), TT_FACT("aten::geqrf", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_householder_product", TT_LF_COMPLEX | TT_LF_OUT_RESTRIDE_IF_EMPTY),
    TT_FACT("aten::linalg_qr", TT_LF_COMPLEX), TT_FACT("aten::ormqr", TT_LF_COMPLEX | TT_LF_OUT_RESTRIDE_IF_EMPTY),
    TT_FACT("aten::_linalg_eigh", TT_LF_COMPLEX), TT_FACT("aten::_linalg_svd", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_lstsq", TT_LF_COMPLEX),
};
const int tt_lower_linalg_decomp_facts_count = TT_TABLE_COUNT(tt_lower_linalg_decomp_facts);
