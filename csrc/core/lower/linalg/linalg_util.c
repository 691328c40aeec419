/* Helpers of the linalg family: batched matrix shapes, products, triangles,
 * diagonals and triangular solves. They call no other file of the folder (the
 * decomposition helpers build on them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg_util.h"
#include "../elementwise/lower_elementwise.h"

tt_status_t tt__la_check_float(const tt_lctx_t* c, tt_dtype_t dt) {
  if (dt == TT_F32 || dt == TT_F64) return NULL;
  return tt_status_make(TT_UNIMPLEMENTED, "%s: not implemented for '%s' (float32 and float64 only)",
                        c->op->name, tt_dtype_name(dt));
}

tt_status_t tt__la_check_field(const tt_lctx_t* c, tt_dtype_t dt) {
  if (dt == TT_F32 || dt == TT_F64 || dt == TT_C64 || dt == TT_C128) return NULL;
  return tt_status_make(TT_UNIMPLEMENTED,
                        "%s: not implemented for '%s' (float32, float64, complex64 and complex128 only)",
                        c->op->name, tt_dtype_name(dt));
}

bool tt__la_empty(const tt_type_t* t) { return tt_type_numel(t) == 0; }

tt_status_t tt__la_zero_outs(tt_lctx_t* c) {
  for (int i = 0; i < c->nout; i++)
    TT_RETURN_IF_ERROR(tt_l_set_out(c, i, tt_shlo_const(c->f, &c->out_types[i], 0.0)));
  return NULL;
}

tt_val_t tt__la_mT(tt_shlo_fn_t* f, tt_val_t v) {
  tt_type_t t = tt__sh_type(f, v);
  if (t.rank < 2) return v;
  int64_t perm[TT_MAX_RANK];
  for (int i = 0; i < t.rank; i++) perm[i] = i;
  perm[t.rank - 2] = t.rank - 1;
  perm[t.rank - 1] = t.rank - 2;
  return tt_l_transpose(f, v, perm);
}

tt_val_t tt__la_neg0(tt_shlo_fn_t* f, const tt_type_t* t) {
  if (!tt_dtype_is_complex(t->dtype)) return tt_shlo_const(f, t, tt_dtype_is_float(t->dtype) ? -0.0 : 0.0);
  tt_type_t pt = *t;
  pt.dtype = tt_dtype_real_part(t->dtype);
  tt_val_t z = tt_shlo_const(f, &pt, -0.0);
  return tt__cx_make(f, z, z);
}

bool tt__la_is_complex(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t && tt_dtype_is_complex(t->dtype);
}

tt_val_t tt__la_cabs1(tt_shlo_fn_t* f, tt_val_t v) {
  if (!tt__la_is_complex(f, v)) return tt_l_unary(f, "stablehlo.abs", v);
  return tt_l_binary(f, "stablehlo.add", tt_l_unary(f, "stablehlo.abs", tt__cx_re(f, v)),
                     tt_l_unary(f, "stablehlo.abs", tt__cx_im(f, v)));
}

tt_val_t tt__la_conj(tt_shlo_fn_t* f, tt_val_t v) {
  if (!tt__la_is_complex(f, v)) return v;
  return tt__cx_make(f, tt__cx_re(f, v), tt_l_unary(f, "stablehlo.negate", tt__cx_im(f, v)));
}

tt_val_t tt__la_mH(tt_shlo_fn_t* f, tt_val_t v) { return tt__la_conj(f, tt__la_mT(f, v)); }

tt_val_t tt__la_batch_to(tt_shlo_fn_t* f, tt_val_t v, int keep, int nb, const int64_t* batch) {
  tt_type_t t = tt__sh_type(f, v);
  int64_t dims[TT_MAX_RANK];
  if (nb + keep > TT_MAX_RANK || keep > t.rank) {
    tt_shlo_fail(f, "linalg: rank too large");
    return TT_SHLO_INVALID;
  }
  for (int i = 0; i < nb; i++) dims[i] = batch[i];
  for (int i = 0; i < keep; i++) dims[nb + i] = t.dims[t.rank - keep + i];
  return tt_l_broadcast(f, v, nb + keep, dims);
}

tt_val_t tt__la_matmul_tr(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool ta, bool tb) {
  tt_type_t at = tt__sh_type(f, a), bt = tt__sh_type(f, b);
  int r = at.rank, nb = r - 2;
  tt_type_t rt = at;
  rt.dims[r - 2] = at.dims[ta ? r - 1 : r - 2];
  rt.dims[r - 1] = bt.dims[tb ? r - 2 : r - 1];
  tt_sbuf_t s;
  tt_sbuf_init(&s);
  tt_sbuf_append(&s, "dot_dimension_numbers = #stablehlo.dot<");
  if (nb > 0) {
    int64_t bd[TT_MAX_RANK];
    for (int i = 0; i < nb; i++) bd[i] = i;
    tt_sbuf_append(&s, "lhs_batching_dimensions = ");
    tt_shlo_fmt_i64_list(&s, bd, nb);
    tt_sbuf_append(&s, ", rhs_batching_dimensions = ");
    tt_shlo_fmt_i64_list(&s, bd, nb);
    tt_sbuf_append(&s, ", ");
  }
  tt_sbuf_printf(&s,
                 "lhs_contracting_dimensions = [%d], rhs_contracting_dimensions = [%d]>, "
                 "precision_config = [#stablehlo<precision HIGHEST>, "
                 "#stablehlo<precision HIGHEST>]",
                 ta ? r - 2 : r - 1, tb ? r - 1 : r - 2);
  tt_val_t ops[2] = {a, b};
  tt_val_t out = tt_shlo_op(f, "stablehlo.dot_general", ops, 2, &rt, s.oom ? NULL : s.data);
  if (s.oom) tt_shlo_fail(f, "out of memory formatting dot_general");
  tt_sbuf_free(&s);
  return out;
}

tt_val_t tt__la_matmul(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  return tt__la_matmul_tr(f, a, b, false, false);
}

tt_val_t tt__la_eye(tt_shlo_fn_t* f, tt_dtype_t dt, int nb, const int64_t* batch, int64_t n) {
  int64_t dims[TT_MAX_RANK];
  for (int i = 0; i < nb; i++) dims[i] = batch[i];
  dims[nb] = dims[nb + 1] = n;
  int r = nb + 2;
  tt_val_t eq = tt_l_compare(f, "EQ", tt_lt_iota(f, TT_I64, r, dims, r - 2),
                             tt_lt_iota(f, TT_I64, r, dims, r - 1));
  return tt_l_convert(f, eq, dt);
}

tt_val_t tt__la_tri(tt_shlo_fn_t* f, tt_val_t v, bool lower, int64_t k) {
  tt_type_t t = tt__sh_type(f, v);
  int r = t.rank;
  tt_type_t it = t;
  it.dtype = TT_I64;
  /* keep (col - row) <= k (lower) or >= k (upper) */
  tt_val_t d = tt_l_binary(f, "stablehlo.subtract", tt_lt_iota(f, TT_I64, r, t.dims, r - 1),
                           tt_lt_iota(f, TT_I64, r, t.dims, r - 2));
  tt_val_t keep = tt_l_compare(f, lower ? "LE" : "GE", d, tt_shlo_const_i64(f, &it, k));
  return tt_l_select(f, keep, v, tt_shlo_const(f, &t, 0.0));
}

/* Sum of v over `dim` after zeroing (with -0.0, the additive identity that
 * keeps every value bit-exact) where mask is false: picks one element. */
static tt_val_t pick_sum(tt_shlo_fn_t* f, tt_val_t v, tt_val_t mask, int dim) {
  tt_type_t t = tt__sh_type(f, v);
  tt_type_t t0 = t;
  t0.rank = 0;
  return tt_lt_reduce(f, tt_l_select(f, mask, v, tt__la_neg0(f, &t)), 1u << dim, "stablehlo.add",
                      tt__la_neg0(f, &t0));
}

tt_val_t tt__la_diag(tt_shlo_fn_t* f, tt_val_t v) {
  tt_type_t t = tt__sh_type(f, v);
  int r = t.rank;
  int64_t m = t.dims[r - 2], n = t.dims[r - 1], k = m < n ? m : n;
  if (m != k) v = tt_lt_slice_dim(f, v, r - 2, 0, k);
  if (n != k) v = tt_lt_slice_dim(f, v, r - 1, 0, k);
  t = tt__sh_type(f, v);
  tt_val_t eq = tt_l_compare(f, "EQ", tt_lt_iota(f, TT_I64, r, t.dims, r - 2),
                             tt_lt_iota(f, TT_I64, r, t.dims, r - 1));
  return pick_sum(f, v, eq, r - 1);
}

tt_val_t tt__la_take_rows(tt_shlo_fn_t* f, tt_val_t v, tt_val_t idx) {
  tt_type_t t = tt__sh_type(f, v), it = tt__sh_type(f, idx);
  int r = t.rank;
  int64_t dims[TT_MAX_RANK], bd[TT_MAX_RANK];
  for (int i = 0; i < r; i++) dims[i] = t.dims[i], bd[i] = i;
  dims[r - 2] = it.dims[it.rank - 1];
  tt_val_t ix = tt_lt_bcast_in_dim(f, tt_l_convert(f, idx, TT_I64), r, dims, bd);
  return tt_lt_gather_dim(f, v, r - 2, ix);
}

tt_val_t tt__la_trsolve(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool left, bool lower,
                        bool unit, tt__la_op_t op) {
  tt_type_t bt = tt__sh_type(f, b);
  if (tt__la_empty(&bt)) return b;
  /* (real a: the adjoint is the transpose, spelled so) */
  const char* tr = op == TT_LA_NOTRANS                        ? "NO_TRANSPOSE"
                   : op == TT_LA_ADJ && tt__la_is_complex(f, a) ? "ADJOINT"
                                                                : "TRANSPOSE";
  tt_val_t ops[2] = {a, b};
  return tt_shlo_opf(f, "stablehlo.triangular_solve", ops, 2, &bt,
                     "left_side = %s, lower = %s, unit_diagonal = %s, "
                     "transpose_a = #stablehlo<transpose %s>",
                     left ? "true" : "false", lower ? "true" : "false", unit ? "true" : "false", tr);
}

tt_val_t tt__la_any_nonzero(tt_shlo_fn_t* f, tt_val_t v) {
  tt_type_t t = tt__sh_type(f, v);
  tt_val_t nz = tt_l_compare(f, "NE", v, tt_shlo_const(f, &t, 0.0));
  uint32_t all = t.rank >= 32 ? 0xffffffffu : (1u << t.rank) - 1u;
  return tt_lt_reduce(f, nz, all, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0));
}
