/* Helpers shared by the special family's builder files (see special_util.h):
 * the compute dtype, argument promotion, polynomial and Chebyshev series
 * evaluation, and short forms of elementwise StableHLO. Calls no other file
 * of the folder. */
#include <math.h>

#include "special_util.h"

tt_dtype_t tt__sp_compute(const tt_lctx_t* c, tt_dtype_t in) {
  (void)c;
  return in == TT_F64 ? TT_F64 : TT_F32;
}

void tt__sp_float_args(tt_lctx_t* c, const int* idx, int n, tt_val_t* vals,
                       tt_dtype_t* promoted) {
  tt_dtype_t p = tt_l_promote(c, idx, n);
  if (promoted) *promoted = p;
  tt_dtype_t cd = tt__sp_compute(c, p);
  for (int k = 0; k < n; k++) vals[k] = tt_l_arg_as(c, idx[k], cd, &c->out_types[0]);
}

tt_val_t tt__sp_horner(tt_shlo_fn_t* f, tt_val_t z, const double* c, int n) {
  tt_val_t r = tt__ew_k(f, z, c[0]);
  for (int i = 1; i < n; i++) r = tt__ew_add(f, tt__ew_mul(f, r, z), tt__ew_k(f, z, c[i]));
  return r;
}

tt_val_t tt__sp_horner1(tt_shlo_fn_t* f, tt_val_t z, const double* c, int n) {
  tt_val_t r = tt__ew_add(f, z, tt__ew_k(f, z, c[0]));
  for (int i = 1; i < n; i++) r = tt__ew_add(f, tt__ew_mul(f, r, z), tt__ew_k(f, z, c[i]));
  return r;
}

tt_val_t tt__sp_chbevl(tt_shlo_fn_t* f, tt_val_t z, const double* c, int n) {
  tt_val_t b0 = tt__ew_k(f, z, c[0]), b1 = tt__ew_k(f, z, 0.0), b2 = b1;
  for (int i = 1; i < n; i++) {
    b2 = b1;
    b1 = b0;
    b0 = tt__ew_add(f, tt__ew_sub(f, tt__ew_mul(f, z, b1), b2), tt__ew_k(f, z, c[i]));
  }
  return tt__ew_mulk(f, tt__ew_sub(f, b0, b2), 0.5);
}

tt_val_t tt__sp_where_k(tt_shlo_fn_t* f, tt_val_t pred, double k, tt_val_t b) {
  return tt_l_select(f, pred, tt__ew_k(f, b, k), b);
}
tt_val_t tt__sp_and(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.and", a, b); }
tt_val_t tt__sp_or(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.or", a, b); }
tt_val_t tt__sp_not(tt_shlo_fn_t* f, tt_val_t a) { return tt_l_unary(f, "stablehlo.not", a); }
tt_val_t tt__sp_abs(tt_shlo_fn_t* f, tt_val_t a) { return tt_l_unary(f, "stablehlo.abs", a); }
tt_val_t tt__sp_un(tt_shlo_fn_t* f, const char* op, tt_val_t a) { return tt_l_unary(f, op, a); }
tt_val_t tt__sp_isfinite(tt_shlo_fn_t* f, tt_val_t a) {
  return tt__ew_cmpk(f, "LT", tt__sp_abs(f, a), INFINITY);
}

tt_val_t tt__sp_any(tt_shlo_fn_t* f, tt_val_t pred) {
  const tt_type_t* t = tt_shlo_type(f, pred);
  if (!t) return TT_SHLO_INVALID;
  uint32_t mask = t->rank ? (uint32_t)((1ull << t->rank) - 1) : 0;
  return tt_lt_reduce(f, pred, mask, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0));
}
