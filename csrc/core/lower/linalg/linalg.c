/* Linear algebra (float32/float64 matrices, and complex64/complex128 where
 * a lowering checks with tt__la_check_field; leading dims are batch dims):
 * Cholesky factorization, inverse and solve, triangular solves (this file,
 * on stablehlo.cholesky / stablehlo.triangular_solve), LU and what is built
 * on it (linalg_lu.c), matrix_exp (linalg_exp.c). The composite ATen
 * ops (linalg.cholesky, linalg.inv, linalg.solve, det, ...) reach these
 * through the overloads in the table below. Errors that CPU raises from the
 * LAPACK info (check_errors=True, torch.cholesky) become device-side checks;
 * their messages cannot name the failing minor / batch element. */
#include <math.h>

#include "linalg_util.h"
#include "../tt_lower_tables.h"
#include "../elementwise/lower_elementwise.h"

/* One column step of a right-looking potf2 on the lower triangle.
 * vals: a (batch..., n, n), info (batch...) i32. Column j is final after
 * the steps before it; only entries on or below the diagonal are read.
 * Complex a (A = L L^H): as LAPACK's zpotf2, only the real part of the
 * diagonal is read, the factor's diagonal is real, and the update
 * subtracts l[i] conj(l[k]). */
static void chol_step(tt_shlo_fn_t* f, tt_val_t j, tt_val_t* vals, void* ctx) {
  tt_val_t a = vals[0];
  tt_type_t t = tt__sh_type(f, a);
  int r = t.rank, nb = r - 2;
  tt_type_t ct = t; /* a column (batch..., n) */
  ct.rank = r - 1;
  tt_type_t bt = t; /* (batch...) */
  bt.rank = nb;
  tt_val_t ops[TT_MAX_RANK + 1];
  tt_val_t zero = tt_lt_const0(f, TT_I64, 0.0);
  int64_t sizes[TT_MAX_RANK];
  for (int d = 0; d < r; d++) {
    ops[d + 1] = d == r - 1 ? j : zero;
    sizes[d] = d == r - 1 ? 1 : t.dims[d];
  }
  ops[0] = a;
  tt_sbuf_t sz;
  tt_sbuf_init(&sz);
  tt_sbuf_append(&sz, "slice_sizes = ");
  tt_shlo_fmt_i64_array(&sz, sizes, r);
  tt_type_t st = t;
  st.dims[r - 1] = 1;
  tt_val_t col = tt_l_reshape(f, tt_shlo_op(f, "stablehlo.dynamic_slice", ops, r + 1, &st, sz.data), ct.rank, ct.dims);
  tt_sbuf_free(&sz);
  /* d = a[j, j] */
  tt_val_t rows = tt_lt_iota(f, TT_I64, ct.rank, ct.dims, r - 2);
  tt_val_t jc = tt_lt_splat(f, j, ct.rank, ct.dims);
  tt_val_t at_j = tt_l_compare(f, "EQ", rows, jc);
  bool cx = tt_dtype_is_complex(t.dtype);
  tt_type_t ct0 = ct;
  ct0.rank = 0;
  tt_val_t d = tt_lt_reduce(f, tt_l_select(f, at_j, col, tt__la_neg0(f, &ct)), 1u << (r - 2), "stablehlo.add",
                            tt__la_neg0(f, &ct0));
  if (cx) d = tt__cx_re(f, d);
  tt_type_t rbt = bt;
  rbt.dtype = tt_dtype_real_part(t.dtype);
  tt_val_t ok = tt_l_compare(f, "GT", d, tt_shlo_const(f, &rbt, 0.0)); /* false for NaN */
  int64_t bd[TT_MAX_RANK];
  for (int i = 0; i < r; i++) bd[i] = i;
  tt_val_t sd = tt_l_unary(f, "stablehlo.sqrt", d);
  if (cx) sd = tt_l_convert(f, sd, t.dtype); /* (sqrt(d), 0) */
  tt_val_t dc = tt_lt_bcast_in_dim(f, sd, ct.rank, ct.dims, bd);
  /* column j: sqrt(d) on the diagonal, a[i, j] * (1 / sqrt(d)) below */
  tt_val_t inv = tt_l_binary(f, "stablehlo.divide", tt_shlo_const(f, &ct, 1.0), dc);
  tt_val_t l = tt_l_select(f, tt_l_compare(f, "GT", rows, jc), tt_l_binary(f, "stablehlo.multiply", col, inv),
                           tt_l_select(f, at_j, dc, col));
  tt_val_t ri = tt_lt_iota(f, TT_I64, r, t.dims, r - 2), ci = tt_lt_iota(f, TT_I64, r, t.dims, r - 1);
  tt_val_t ja = tt_lt_splat(f, j, r, t.dims);
  int64_t ld[TT_MAX_RANK], ud[TT_MAX_RANK];
  for (int i = 0; i < nb; i++) ld[i] = ud[i] = i;
  ld[nb] = r - 2;
  ud[nb] = r - 1;
  tt_val_t li = tt_lt_bcast_in_dim(f, l, r, t.dims, ld);
  tt_val_t lk = tt_lt_bcast_in_dim(f, tt__la_conj(f, l), r, t.dims, ud);
  a = tt_l_select(f, tt_l_compare(f, "EQ", ci, ja), li, a);
  tt_val_t trail = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "GT", ri, ja), tt_l_compare(f, "GT", ci, ja));
  tt_val_t upd = tt_l_binary(f, "stablehlo.subtract", a, tt_l_binary(f, "stablehlo.multiply", li, lk));
  vals[0] = tt_l_select(f, trail, upd, a);
  /* info = j + 1 at the first minor that is not positive definite */
  tt_type_t it = bt;
  it.dtype = TT_I32;
  tt_val_t j1 = tt_l_convert(f, tt_l_binary(f, "stablehlo.add", j, tt_lt_const0(f, TT_I64, 1.0)), TT_I32);
  tt_val_t first = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "EQ", vals[1], tt_shlo_const(f, &it, 0.0)),
                               tt_l_unary(f, "stablehlo.not", ok));
  vals[1] = tt_l_select(f, first, tt_lt_splat(f, j1, it.rank, it.dims), vals[1]);
}

/* The Cholesky factor (upper: U with A = U^H U, from A's upper triangle)
 * with the other triangle zeroed, and LAPACK's info: the 1-based order of
 * the first leading minor that is not positive definite, else 0.
 * (stablehlo.cholesky cannot give the info: XLA fills the whole result with
 * NaN when the input is not positive definite.) */
static void cholesky(tt_shlo_fn_t* f, tt_val_t a, bool upper, tt_val_t* l, tt_val_t* info) {
  tt_type_t t = tt__sh_type(f, a);
  tt_type_t it = t;
  it.dtype = TT_I32;
  it.rank = t.rank - 2;
  tt_val_t v[2] = {upper ? tt__la_mH(f, a) : a, tt_shlo_const(f, &it, 0.0)};
  tt_l_fori(f, t.dims[t.rank - 1], v, 2, chol_step, NULL);
  *info = v[1];
  *l = tt__la_tri(f, upper ? tt__la_mH(f, v[0]) : v[0], !upper, 0);
}

/* linalg_cholesky_ex(self, *, upper, check_errors) -> (L, info);
 * cholesky(self, upper) -> L (raises when not positive definite). */
static tt_status_t lower_cholesky(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  bool ex = c->op->param != 0;
  if (tt__la_empty(&c->out_types[0])) return tt__la_zero_outs(c);
  tt_val_t l, info;
  cholesky(f, c->args[0].val, c->args[1].i != 0, &l, &info);
  if (!ex || c->args[2].i)
    tt_shlo_add_check(f, tt__la_any_nonzero(f, info), TT_FAILED_PRECONDITION,
                      ex ? "linalg.cholesky_ex: The factorization could not be completed because the "
                           "input is not positive-definite."
                         : "cholesky: The factorization could not be completed because the input is "
                           "not positive-definite.");
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, l));
  return ex ? tt_l_set_out(c, 1, info) : NULL;
}

/* cholesky_inverse(L, upper): (L L^H)^-1 = L^-H L^-1 (upper: U^-1 U^-H), as
 * LAPACK's potri forms it (triangular inverse, then the product). */
static tt_status_t lower_cholesky_inverse(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  if (tt__la_empty(&c->out_types[0])) return tt__la_zero_outs(c);
  tt_val_t l = c->args[0].val;
  bool upper = c->args[1].i != 0;
  tt_type_t t = tt__sh_type(f, l);
  tt_val_t eye = tt__la_eye(f, t.dtype, t.rank - 2, t.dims, t.dims[t.rank - 1]);
  tt_val_t li = tt__la_tri(f, tt__la_trsolve(f, l, eye, true, !upper, false, TT_LA_NOTRANS), !upper, 0);
  tt_val_t r = upper ? tt__la_matmul(f, li, tt__la_mH(f, li)) : tt__la_matmul(f, tt__la_mH(f, li), li);
  return tt_l_set_out(c, 0, r);
}

/* _cholesky_solve_helper(self=B, A=L, upper): A X = B with A = L L^H
 * (upper: U^H U); the composite broadcast the batch dims already. */
static tt_status_t lower_cholesky_solve(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  if (tt__la_empty(&c->out_types[0])) return tt__la_zero_outs(c);
  const tt_type_t* ot = &c->out_types[0];
  int nb = ot->rank - 2;
  tt_val_t b = tt__la_batch_to(f, c->args[0].val, 2, nb, ot->dims);
  tt_val_t l = tt__la_batch_to(f, c->args[1].val, 2, nb, ot->dims);
  bool upper = c->args[2].i != 0;
  tt_val_t y = tt__la_trsolve(f, l, b, true, !upper, false, upper ? TT_LA_ADJ : TT_LA_NOTRANS);
  return tt_l_set_out(c, 0, tt__la_trsolve(f, l, y, true, !upper, false, upper ? TT_LA_NOTRANS : TT_LA_ADJ));
}

/* triangular_solve(self=B, A, upper, transpose, unitriangular)
 *   -> (solution, cloned_coefficient); `transpose` solves A^T X = B, the
 * plain transpose for complex A too, as CPU (torch 2.13) does. */
static tt_status_t lower_triangular_solve(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  const tt_type_t* ot = &c->out_types[0];
  int nb = ot->rank - 2;
  tt_val_t a = tt__la_batch_to(f, c->args[1].val, 2, nb, ot->dims);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, tt__la_batch_to(f, c->args[1].val, 2,
                                                        c->out_types[1].rank - 2, c->out_types[1].dims)));
  if (tt__la_empty(ot)) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_val_t b = tt__la_batch_to(f, c->args[0].val, 2, nb, ot->dims);
  tt_val_t x = tt__la_trsolve(f, a, b, true, c->args[2].i == 0, c->args[4].i != 0,
                              c->args[3].i != 0 ? TT_LA_TRANS : TT_LA_NOTRANS);
  return tt_l_set_out(c, 0, x);
}

/* linalg_solve_triangular(self=A, B, *, upper, left, unitriangular) */
static tt_status_t lower_solve_triangular(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  const tt_type_t* ot = &c->out_types[0];
  if (tt__la_empty(ot)) return tt__la_zero_outs(c);
  int nb = ot->rank - 2;
  tt_val_t a = tt__la_batch_to(f, c->args[0].val, 2, nb, ot->dims);
  tt_val_t b = tt__la_batch_to(f, c->args[1].val, 2, nb, ot->dims);
  tt_val_t x = tt__la_trsolve(f, a, b, c->args[3].i != 0, c->args[2].i == 0, c->args[4].i != 0, TT_LA_NOTRANS);
  return tt_l_set_out(c, 0, x);
}

#define R(name, fn, param) {"aten::" name, fn, param, 0}

const tt_lower_entry_t tt_lower_linalg[] = {
    R("linalg_cholesky_ex", lower_cholesky, 1), R("linalg_cholesky_ex.L", lower_cholesky, 1),
    R("cholesky", lower_cholesky, 0), R("cholesky.out", lower_cholesky, 0),
    R("cholesky_inverse", lower_cholesky_inverse, 0), R("cholesky_inverse.out", lower_cholesky_inverse, 0),
    R("_cholesky_solve_helper", lower_cholesky_solve, 0),
    R("_cholesky_solve_helper.out", lower_cholesky_solve, 0),
    R("triangular_solve", lower_triangular_solve, 0), R("triangular_solve.X", lower_triangular_solve, 0),
    R("linalg_solve_triangular", lower_solve_triangular, 0),
    R("linalg_solve_triangular.out", lower_solve_triangular, 0),
    R("linalg_lu_factor_ex", tt__la_lower_lu_factor, 0),
    R("linalg_lu_factor_ex.out", tt__la_lower_lu_factor, 0),
    R("linalg_lu", tt__la_lower_lu, 0), R("linalg_lu.out", tt__la_lower_lu, 0),
    R("lu_unpack", tt__la_lower_lu_unpack, 0), R("lu_unpack.out", tt__la_lower_lu_unpack, 0),
    R("linalg_lu_solve", tt__la_lower_lu_solve, 0), R("linalg_lu_solve.out", tt__la_lower_lu_solve, 0),
    R("_linalg_det", tt__la_lower_det, 0), R("_linalg_det.result", tt__la_lower_det, 0),
    R("_linalg_slogdet", tt__la_lower_det, 1), R("_linalg_slogdet.sign", tt__la_lower_det, 1),
    R("linalg_inv_ex", tt__la_lower_inv, 0), R("linalg_inv_ex.inverse", tt__la_lower_inv, 0),
    R("_linalg_solve_ex", tt__la_lower_solve, 0), R("_linalg_solve_ex.result", tt__la_lower_solve, 0),
    R("linalg_matrix_exp", tt__la_lower_matrix_exp, 0),
    R("linalg_matrix_exp.out", tt__la_lower_matrix_exp, 0),
    R("linalg_ldl_factor_ex", tt__la_lower_ldl_factor, 0),
    R("linalg_ldl_factor_ex.out", tt__la_lower_ldl_factor, 0),
    R("linalg_ldl_solve", tt__la_lower_ldl_solve, 0), R("linalg_ldl_solve.out", tt__la_lower_ldl_solve, 0),
};
const int tt_lower_linalg_count = TT_TABLE_COUNT(tt_lower_linalg);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_linalg_facts[] = {
    TT_FACT("aten::linalg_cholesky_ex", TT_LF_COMPLEX), TT_FACT("aten::cholesky", TT_LF_COMPLEX | TT_LF_OUT_RESIZE_CONTIGUOUS),
    TT_FACT("aten::cholesky_inverse", TT_LF_COMPLEX),
    TT_FACT("aten::_cholesky_solve_helper", TT_LF_COMPLEX),
    TT_FACT("aten::triangular_solve", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_solve_triangular", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_lu_factor_ex", TT_LF_COMPLEX), TT_FACT("aten::linalg_lu", TT_LF_COMPLEX),
    TT_FACT("aten::lu_unpack", TT_LF_COMPLEX), TT_FACT("aten::linalg_lu_solve", TT_LF_COMPLEX),
    TT_FACT("aten::_linalg_det", TT_LF_COMPLEX | TT_LF_LU_OF_TRANSPOSE),
    TT_FACT("aten::_linalg_slogdet", TT_LF_COMPLEX | TT_LF_LU_OF_TRANSPOSE),
    TT_FACT("aten::linalg_inv_ex", TT_LF_COMPLEX), TT_FACT("aten::_linalg_solve_ex", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_matrix_exp", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_ldl_factor_ex", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_ldl_solve", TT_LF_COMPLEX),
};
const int tt_lower_linalg_facts_count = TT_TABLE_COUNT(tt_lower_linalg_facts);
