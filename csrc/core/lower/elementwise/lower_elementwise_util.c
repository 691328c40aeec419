/* Helpers shared by the elementwise families (see lower_elementwise.h). */
#include <math.h>
#include <string.h>

#include "lower_elementwise.h"
#include "../lower_tensor_util.h"

bool tt__ew_has(const tt_lctx_t* c, int i) {
  if (i < 0 || i >= c->nargs) return false;
  tt_arg_kind_t k = c->args[i].kind;
  return k == TT_ARG_TENSOR || k == TT_ARG_SCALAR;
}

tt_val_t tt__ew_arg_or(tt_lctx_t* c, int i, tt_dtype_t dt, const tt_type_t* shape, double dflt) {
  if (tt__ew_has(c, i)) return tt_l_arg_as(c, i, dt, shape);
  return tt_l_full(c->f, dt, shape->rank, shape->dims, dflt);
}

const char* tt__ew_str(const tt_lctx_t* c, int i) {
  if (i < 0 || i >= c->nargs || c->args[i].kind != TT_ARG_STR) return NULL;
  return c->args[i].str;
}

tt_status_t tt__ew_check(const tt_lctx_t* c, tt_dtype_t dt, unsigned accept) {
  unsigned cat = dt == TT_BOOL                ? TT_EW_BOOL
                 : tt_dtype_is_float(dt)     ? TT_EW_FLOAT
                 : tt_dtype_is_complex(dt)   ? TT_EW_COMPLEX
                                             : TT_EW_INT;
  if (cat & accept) return NULL;
  /* CPU's kernels raise NotImplementedError for a dtype they are not built for */
  return tt_status_make(TT_UNIMPLEMENTED, "%s: not implemented for dtype %s", c->op->name,
                        tt_dtype_name(dt));
}

tt_dtype_t tt__ew_float_compute(const tt_lctx_t* c, tt_dtype_t dt) {
  if (tt_dtype_is_float(dt) || tt_dtype_is_complex(dt)) return tt_l_opmath(dt);
  if (c->nout > 0 && tt_dtype_is_float(c->out_types[0].dtype))
    return tt_l_opmath(c->out_types[0].dtype);
  return TT_F32;
}

tt_val_t tt__ew_k(tt_shlo_fn_t* f, tt_val_t like, double v) {
  const tt_type_t* t = tt_shlo_type(f, like);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t kt = *t;
  return tt_shlo_const(f, &kt, v);
}

tt_val_t tt__ew_add(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.add", a, b); }
tt_val_t tt__ew_sub(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.subtract", a, b); }
tt_val_t tt__ew_mul(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.multiply", a, b); }
tt_val_t tt__ew_div(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (t && tt_dtype_is_complex(t->dtype)) return tt__cx_div(f, a, b);
  return tt_l_binary(f, "stablehlo.divide", a, b);
}
tt_val_t tt__ew_opaque(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t || !(tt_dtype_is_float(t->dtype) || tt_dtype_is_complex(t->dtype))) return v;
  tt_type_t rt = *t;
  return tt_shlo_op(f, "stablehlo.optimization_barrier", &v, 1, &rt, NULL);
}
tt_val_t tt__ew_spread_divisor(tt_shlo_fn_t* f, tt_val_t s, const tt_type_t* shape) {
  const tt_type_t* t = tt_shlo_type(f, s);
  if (!t) return TT_SHLO_INVALID;
  if (tt_type_numel(t) != 1 || !tt_dtype_is_float(t->dtype) || shape->rank == 0 || tt_type_numel(shape) == 0)
    return tt__ew_opaque(f, tt_l_broadcast(f, s, shape->rank, shape->dims));
  /* (XLA folds a pad of a constant into a broadcast: the scalar is opaque) */
  tt_val_t s0 = tt__ew_opaque(f, tt_l_reshape(f, s, 0, NULL));
  /* padded flat, then reshaped: XLA moves the reshape past the divide's
   * elementwise neighbours, so a program that updates a flat storage in place
   * keeps writing it in place (a pad of the view's shape made it copy) */
  int64_t one = 1, lo = 0, hi = tt_type_numel(shape) - 1;
  tt_val_t flat = tt_lt_pad(f, tt_l_reshape(f, s0, 1, &one), s0, &lo, &hi);
  return shape->rank == 1 ? flat : tt_l_reshape(f, flat, shape->rank, shape->dims);
}
tt_val_t tt__ew_divisor(tt_lctx_t* c, int i, tt_dtype_t dt, const tt_type_t* shape) {
  const tt_type_t* t = tt_shlo_type(c->f, c->args[i].val);
  bool same = t && t->rank == shape->rank;
  for (int d = 0; same && d < t->rank; d++) same = t->dims[d] == shape->dims[d];
  if (!same && t && tt_type_numel(t) == 1)
    return tt__ew_spread_divisor(c->f, tt_l_convert(c->f, c->args[i].val, dt), shape);
  tt_val_t v = tt_l_arg_as(c, i, dt, shape);
  return same ? v : tt__ew_opaque(c->f, v);
}
tt_val_t tt__ew_divk(tt_shlo_fn_t* f, tt_val_t a, double k) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t kt = *t;
  kt.rank = 0;
  return tt__ew_div(f, a, tt__ew_spread_divisor(f, tt_shlo_const(f, &kt, k), t));
}
tt_val_t tt__ew_addk(tt_shlo_fn_t* f, tt_val_t a, double k) { return tt__ew_add(f, a, tt__ew_k(f, a, k)); }
tt_val_t tt__ew_mulk(tt_shlo_fn_t* f, tt_val_t a, double k) { return tt__ew_mul(f, a, tt__ew_k(f, a, k)); }
tt_val_t tt__ew_cmpk(tt_shlo_fn_t* f, const char* dir, tt_val_t a, double k) {
  return tt_l_compare(f, dir, a, tt__ew_k(f, a, k));
}

tt_val_t tt__ew_isnan(tt_shlo_fn_t* f, tt_val_t a) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  if (!tt_dtype_is_float(t->dtype)) return tt_l_full(f, TT_BOOL, t->rank, t->dims, 0);
  return tt_l_compare(f, "NE", a, a);
}

static tt_val_t extreme(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool high) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  if (t->dtype == TT_BOOL) return tt_l_binary(f, high ? "stablehlo.or" : "stablehlo.and", a, b);
  tt_val_t r = tt_l_binary(f, high ? "stablehlo.maximum" : "stablehlo.minimum", a, b);
  if (!tt_dtype_is_float(t->dtype)) return r;
  /* PyTorch propagates NaN from either side; do not rely on the backend's choice */
  r = tt_l_select(f, tt__ew_isnan(f, b), b, r);
  return tt_l_select(f, tt__ew_isnan(f, a), a, r);
}

tt_val_t tt__ew_max(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return extreme(f, a, b, true); }
tt_val_t tt__ew_min(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return extreme(f, a, b, false); }

tt_val_t tt__ew_signbit(tt_shlo_fn_t* f, tt_val_t a) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  if (t->dtype == TT_BOOL || tt_dtype_is_unsigned_int(t->dtype))
    return tt_l_full(f, TT_BOOL, t->rank, t->dims, 0);
  if (tt_dtype_is_signed_int(t->dtype)) return tt__ew_cmpk(f, "LT", a, 0);
  tt_type_t it = *t;
  it.dtype = t->dtype == TT_F64 ? TT_I64 : t->dtype == TT_F32 ? TT_I32 : TT_I16;
  tt_val_t bits = tt_shlo_op(f, "stablehlo.bitcast_convert", &a, 1, &it, NULL);
  return tt__ew_cmpk(f, "LT", bits, 0);
}

/* chlo.erf: both plugins (API 0.115 and 0.81) accept CHLO in their MLIR
 * input and expand it (f32: XLA's rational approximation; f64: its own). */
tt_val_t tt__ew_erf(tt_shlo_fn_t* f, tt_val_t a) { return tt_l_unary(f, "chlo.erf", a); }

tt_val_t tt__ew_sigmoid(tt_shlo_fn_t* f, tt_val_t x) {
  tt_val_t one = tt__ew_k(f, x, 1.0);
  tt_val_t e = tt_l_unary(f, "stablehlo.exponential", tt_l_unary(f, "stablehlo.negate", x));
  return tt__ew_div(f, one, tt__ew_add(f, one, e));
}

tt_status_t tt__ew_lower_zero(tt_lctx_t* c) {
  const tt_type_t* t = &c->out_types[0];
  return tt_l_set_out(c, 0, tt_l_full(c->f, t->dtype, t->rank, t->dims, 0));
}

void tt__ew_check_int_divisor(tt_shlo_fn_t* f, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, b);
  if (!t || tt_dtype_is_float(t->dtype) || t->dtype == TT_BOOL) return;
  tt_val_t zero = tt__ew_cmpk(f, "EQ", b, 0);
  if (t->rank > 0)
    zero = tt_lt_reduce(f, zero, (1u << t->rank) - 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0));
  tt_shlo_add_check(f, zero, TT_INTERNAL, "ZeroDivisionError");
}

/* ---- complex parts, construction and division -------------------------------
 * Below the families (tt__ew_div divides complex values with tt__cx_div); the
 * complex ops and complex math build on these. */

/* re + i*im in dtype cdt; re and im real, already broadcast to one shape. */
static tt_val_t make_complex(tt_shlo_fn_t* f, tt_val_t re, tt_val_t im, tt_dtype_t cdt) {
  tt_dtype_t pd = tt_dtype_real_part(cdt);
  re = tt_l_convert(f, re, pd);
  im = tt_l_convert(f, im, pd);
  const tt_type_t* t = tt_shlo_type(f, re);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  rt.dtype = cdt;
  tt_val_t ops[2] = {re, im};
  return tt_shlo_op(f, "stablehlo.complex", ops, 2, &rt, NULL);
}

static tt_val_t cx_part(tt_shlo_fn_t* f, tt_val_t z, bool imag) {
  const tt_type_t* t = tt_shlo_type(f, z);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t pt = *t;
  pt.dtype = tt_dtype_real_part(t->dtype);
  return tt_shlo_op(f, imag ? "stablehlo.imag" : "stablehlo.real", &z, 1, &pt, NULL);
}

tt_val_t tt__cx_re(tt_shlo_fn_t* f, tt_val_t z) { return cx_part(f, z, false); }
tt_val_t tt__cx_im(tt_shlo_fn_t* f, tt_val_t z) { return cx_part(f, z, true); }
tt_val_t tt__cx_make(tt_shlo_fn_t* f, tt_val_t re, tt_val_t im) {
  const tt_type_t* t = tt_shlo_type(f, re);
  if (!t) return TT_SHLO_INVALID;
  return make_complex(f, re, im, tt_dtype_complex_of(t->dtype));
}

/* a / b as c10::complex divides (Smith's method: scaled by the larger part
 * of b, so that |b|^2 never overflows or underflows); 0 / 0 parts give
 * a.re / 0 and a.im / 0. */
tt_val_t tt__cx_div(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  tt_val_t ar = tt__cx_re(f, a), ai = tt__cx_im(f, a), br = tt__cx_re(f, b), bi = tt__cx_im(f, b);
  tt_val_t abr = tt_l_unary(f, "stablehlo.abs", br), abi = tt_l_unary(f, "stablehlo.abs", bi);
  tt_val_t one = tt__ew_k(f, br, 1.0);
  /* |br| >= |bi|: rat = bi / br, scl = 1 / (br + bi * rat) */
  tt_val_t rat1 = tt__ew_div(f, bi, br);
  tt_val_t scl1 = tt__ew_div(f, one, tt__ew_add(f, br, tt__ew_mul(f, bi, rat1)));
  tt_val_t re1 = tt__ew_mul(f, tt__ew_add(f, ar, tt__ew_mul(f, ai, rat1)), scl1);
  tt_val_t im1 = tt__ew_mul(f, tt__ew_sub(f, ai, tt__ew_mul(f, ar, rat1)), scl1);
  /* else: rat = br / bi, scl = 1 / (bi + br * rat) */
  tt_val_t rat2 = tt__ew_div(f, br, bi);
  tt_val_t scl2 = tt__ew_div(f, one, tt__ew_add(f, bi, tt__ew_mul(f, br, rat2)));
  tt_val_t re2 = tt__ew_mul(f, tt__ew_add(f, tt__ew_mul(f, ar, rat2), ai), scl2);
  tt_val_t im2 = tt__ew_mul(f, tt__ew_sub(f, tt__ew_mul(f, ai, rat2), ar), scl2);
  /* b == 0 */
  tt_val_t zero = tt_l_binary(f, "stablehlo.and", tt__ew_cmpk(f, "EQ", abr, 0), tt__ew_cmpk(f, "EQ", abi, 0));
  tt_val_t re0 = tt__ew_div(f, ar, abr), im0 = tt__ew_div(f, ai, abi);
  tt_val_t first = tt_l_compare(f, "GE", abr, abi);
  tt_val_t re = tt_l_select(f, zero, re0, tt_l_select(f, first, re1, re2));
  tt_val_t im = tt_l_select(f, zero, im0, tt_l_select(f, first, im1, im2));
  return tt__cx_make(f, re, im);
}
