/* Binary-family ops with attributes or a third operand (rows in binary.c):
 * div with rounding_mode (and floor division, floor_divide's too), where,
 * clamp*, lerp, addcmul/addcdiv, masked_fill, copy. Same conventions as
 * binary.c: promote over the operands, compute in opmath, broadcast to the
 * output shape, let tt_l_set_out round. */
#include <string.h>

#include "lower_elementwise.h"

static tt_type_t shape_as(const tt_lctx_t* c, tt_dtype_t dt) {
  tt_type_t t = c->out_types[0];
  t.dtype = dt;
  return t;
}

static tt_status_t need(const tt_lctx_t* c, int n) {
  for (int i = 0; i < n; i++)
    if (!tt__ew_has(c, i))
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: argument %d must be a tensor or scalar",
                            c->op->name, i);
  return NULL;
}

/* Floor division: div's "floor" mode below, and floor_divide's builder in
 * binary.c's table. */
tt_val_t tt__ew_div_floor(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_val_t q = tt__ew_div(f, a, b);
  if (tt_dtype_is_unsigned_int(t->dtype)) return q;
  tt_val_t mod = tt_l_binary(f, "stablehlo.remainder", a, b);
  tt_val_t mod_nz = tt__ew_cmpk(f, "NE", mod, 0);
  tt_val_t one = tt__ew_k(f, a, 1.0);
  if (!tt_dtype_is_float(t->dtype)) { /* ints: trunc quotient, minus 1 if signs differ and rem != 0 */
    tt_val_t differ = tt_l_compare(f, "NE", tt__ew_cmpk(f, "LT", a, 0), tt__ew_cmpk(f, "LT", b, 0));
    tt_val_t adj = tt_l_binary(f, "stablehlo.and", differ, mod_nz);
    return tt_l_select(f, adj, tt__ew_sub(f, q, one), q);
  }
  /* floats: ATen's div_floor_floating step by step */
  tt_val_t div = tt__ew_div(f, tt__ew_sub(f, a, mod), b);
  tt_val_t differ = tt_l_compare(f, "NE", tt__ew_cmpk(f, "LT", b, 0), tt__ew_cmpk(f, "LT", mod, 0));
  div = tt_l_select(f, tt_l_binary(f, "stablehlo.and", mod_nz, differ), tt__ew_sub(f, div, one), div);
  tt_val_t fl = tt_l_unary(f, "stablehlo.floor", div);
  tt_val_t up = tt_l_compare(f, "GT", tt__ew_sub(f, div, fl), tt__ew_k(f, a, 0.5));
  fl = tt_l_select(f, up, tt__ew_add(f, fl, one), fl);
  tt_val_t z = tt__ew_k(f, a, 0.0);
  tt_val_t signed_zero = tt_l_select(f, tt__ew_signbit(f, q), tt_l_unary(f, "stablehlo.negate", z), z);
  tt_val_t r = tt_l_select(f, tt__ew_cmpk(f, "NE", div, 0), fl, signed_zero);
  return tt_l_select(f, tt__ew_cmpk(f, "EQ", b, 0), q, r);
}

/* div(self, other, *, str? rounding_mode): None = true division, "trunc",
 * "floor" (integers stay integers for the last two). */
tt_status_t tt__ew_lower_div_mode(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need(c, 2));
  const char* mode = tt__ew_str(c, 2);
  int idx[2] = {0, 1};
  tt_dtype_t dt = tt_l_promote(c, idx, 2);
  tt_shlo_fn_t* f = c->f;
  if (!mode) {
    tt_type_t sh = shape_as(c, tt__ew_float_compute(c, dt));
    return tt_l_set_out(c, 0, tt__ew_div(f, tt_l_arg_as(c, 0, sh.dtype, &sh), tt__ew_divisor(c, 1, sh.dtype, &sh)));
  }
  bool trunc = !strcmp(mode, "trunc");
  if (!trunc && strcmp(mode, "floor"))
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "%s: expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'",
                          c->op->name, mode);
  TT_RETURN_IF_ERROR(tt__ew_check(c, dt, TT_EW_NUM));
  tt_type_t sh = shape_as(c, tt_l_opmath(dt));
  tt_val_t a = tt_l_arg_as(c, 0, sh.dtype, &sh), b = tt__ew_divisor(c, 1, sh.dtype, &sh);
  tt__ew_check_int_divisor(f, b);
  if (!trunc) return tt_l_set_out(c, 0, tt__ew_div_floor(f, a, b));
  tt_val_t q = tt__ew_div(f, a, b);
  if (tt_dtype_is_float(sh.dtype))
    q = tt_l_select(f, tt__ew_cmpk(f, "LT", q, 0), tt_l_unary(f, "stablehlo.ceil", q),
                    tt_l_unary(f, "stablehlo.floor", q));
  return tt_l_set_out(c, 0, q);
}

/* where(condition, self, other) */
tt_status_t tt__ew_lower_where(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need(c, 3));
  int idx[2] = {1, 2};
  tt_type_t sh = shape_as(c, tt_l_promote(c, idx, 2));
  tt_val_t cond = tt_l_arg_as(c, 0, TT_BOOL, &sh);
  return tt_l_set_out(c, 0, tt_l_select(c->f, cond, tt_l_arg_as(c, 1, sh.dtype, &sh),
                                        tt_l_arg_as(c, 2, sh.dtype, &sh)));
}

/* clamp(self, min?, max?), clamp_min(self, min), clamp_max(self, max), with
 * Scalar or Tensor bounds: min(max(x, lo), hi), NaN anywhere propagating. */
tt_status_t tt__ew_lower_clamp(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need(c, 1));
  int lo = -1, hi = -1;
  switch (c->op->param) {
    case TT_CLAMP_MIN: lo = 1; break;
    case TT_CLAMP_MAX: hi = 1; break;
    default: lo = 1; hi = 2; break;
  }
  if (lo >= 0 && !tt__ew_has(c, lo)) lo = -1;
  if (hi >= 0 && !tt__ew_has(c, hi)) hi = -1;
  if (lo < 0 && hi < 0)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: at least one of 'min' or 'max' must not be None",
                          c->op->name);
  int idx[3] = {0}, n = 1;
  if (lo >= 0) idx[n++] = lo;
  if (hi >= 0) idx[n++] = hi;
  tt_dtype_t dt = tt_l_promote(c, idx, n);
  /* clamp_min / clamp_max of bools are or / and on CPU; clamp refuses bool */
  TT_RETURN_IF_ERROR(tt__ew_check(c, dt, c->op->param == TT_CLAMP_BOTH ? TT_EW_NUM : TT_EW_ANY));
  tt_type_t sh = shape_as(c, dt);
  tt_val_t r = tt_l_arg_as(c, 0, dt, &sh);
  if (dt == TT_BOOL)
    return tt_l_set_out(c, 0, tt_l_binary(c->f, lo >= 0 ? "stablehlo.or" : "stablehlo.and", r,
                                          tt_l_arg_as(c, lo >= 0 ? lo : hi, dt, &sh)));
  if (lo >= 0) r = tt__ew_max(c->f, r, tt_l_arg_as(c, lo, dt, &sh));
  if (hi >= 0) r = tt__ew_min(c->f, r, tt_l_arg_as(c, hi, dt, &sh));
  return tt_l_set_out(c, 0, r);
}

/* lerp(self, end, weight): |w| < 0.5 ? self + w * (end - self)
 *                                    : end - (end - self) * (1 - w) */
tt_status_t tt__ew_lower_lerp(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need(c, 3));
  int idx[2] = {0, 1};
  tt_dtype_t dt = tt_l_promote(c, idx, 2);
  TT_RETURN_IF_ERROR(tt__ew_check(c, dt, TT_EW_FLOAT | TT_EW_COMPLEX));
  tt_shlo_fn_t* f = c->f;
  tt_type_t sh = shape_as(c, tt_l_opmath(dt));
  tt_val_t s = tt_l_arg_as(c, 0, sh.dtype, &sh), e = tt_l_arg_as(c, 1, sh.dtype, &sh);
  tt_val_t w = tt_l_arg_as(c, 2, sh.dtype, &sh);
  tt_val_t d = tt__ew_sub(f, e, s);
  /* complex: |w| < 0.5 picks the side, as PyTorch's kernel does */
  tt_val_t aw = tt_dtype_is_complex(sh.dtype) ? tt__cx_abs(f, w) : tt_l_unary(f, "stablehlo.abs", w);
  tt_val_t small = tt__ew_cmpk(f, "LT", aw, 0.5);
  tt_val_t lo = tt__ew_add(f, s, tt__ew_mul(f, w, d));
  tt_val_t hi = tt__ew_sub(f, e, tt__ew_mul(f, d, tt__ew_sub(f, tt__ew_k(f, w, 1.0), w)));
  return tt_l_set_out(c, 0, tt_l_select(f, small, lo, hi));
}

/* addcmul: self + value * t1 * t2; addcdiv: self + value * t1 / t2 (left to right) */
tt_status_t tt__ew_lower_addc(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need(c, 3));
  int idx[3] = {0, 1, 2};
  tt_dtype_t dt = tt_l_promote(c, idx, 3);
  bool div = c->op->param == 1;
  if (div && !tt_dtype_is_float(dt) && !tt_dtype_is_complex(dt))
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "%s: integer division with addcdiv is no longer supported", c->op->name);
  TT_RETURN_IF_ERROR(tt__ew_check(c, dt, TT_EW_NUM | TT_EW_COMPLEX));
  tt_shlo_fn_t* f = c->f;
  tt_type_t sh = shape_as(c, tt_l_opmath(dt));
  tt_val_t v = tt__ew_arg_or(c, 3, sh.dtype, &sh, 1.0);
  tt_val_t t = tt__ew_mul(f, v, tt_l_arg_as(c, 1, sh.dtype, &sh));
  tt_val_t t2 = div ? tt__ew_divisor(c, 2, sh.dtype, &sh) : tt_l_arg_as(c, 2, sh.dtype, &sh);
  t = div ? tt__ew_div(f, t, t2) : tt__ew_mul(f, t, t2);
  return tt_l_set_out(c, 0, tt__ew_add(f, tt_l_arg_as(c, 0, sh.dtype, &sh), t));
}

/* masked_fill(self, mask, value): value converted to self's dtype */
tt_status_t tt__ew_lower_masked_fill(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need(c, 3));
  tt_type_t sh = c->out_types[0];
  tt_val_t m = tt_l_arg_as(c, 1, TT_BOOL, &sh);
  return tt_l_set_out(c, 0, tt_l_select(c->f, m, tt_l_arg_as(c, 2, sh.dtype, &sh),
                                        tt_l_arg_as(c, 0, sh.dtype, &sh)));
}

/* copy(self, src, non_blocking): src converted to self's dtype and broadcast
 * to its shape; self is never read (copy_ is TT_LF_WRITE_ONLY). */
tt_status_t tt__ew_lower_copy(tt_lctx_t* c) {
  if (c->nargs < 2 || c->args[1].kind != TT_ARG_TENSOR)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: src must be a tensor", c->op->name);
  tt_type_t sh = c->out_types[0];
  return tt_l_set_out(c, 0, tt_l_arg_as(c, 1, sh.dtype, &sh));
}
