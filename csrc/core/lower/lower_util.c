/* Helpers shared by the lowering families: promotion, conversion, broadcast,
 * small op wrappers. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tt_lower.h"

tt_dtype_t tt_l_arg_dtype(tt_lctx_t* c, int i) {
  const tt_type_t* t = tt_shlo_type(c->f, c->args[i].val);
  return t ? t->dtype : TT_F32;
}

/* 0 bool, 1 integer, 2 floating, 3 complex */
static int category(tt_dtype_t dt) {
  if (dt == TT_BOOL) return 0;
  if (tt_dtype_is_complex(dt)) return 3;
  return tt_dtype_is_float(dt) ? 2 : 1;
}

/* Promotion of two dtypes (PyTorch's promoteTypes for the dtypes we hold). */
static tt_dtype_t promote2(tt_dtype_t a, tt_dtype_t b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca == 3 || cb == 3) { /* complex: the complex dtype wide enough for both value types */
    tt_dtype_t ra = tt_dtype_real_part(a), rb = tt_dtype_real_part(b);
    return (ra == TT_F64 || rb == TT_F64) ? TT_C128 : TT_C64;
  }
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 0) return TT_BOOL;
  if (ca == 2) {
    if ((a == TT_F16 && b == TT_BF16) || (a == TT_BF16 && b == TT_F16)) return TT_F32;
    size_t sa = tt_dtype_size(a), sb = tt_dtype_size(b);
    return sa >= sb ? a : b;
  }
  /* integers */
  bool ua = tt_dtype_is_unsigned_int(a), ub = tt_dtype_is_unsigned_int(b);
  size_t sa = tt_dtype_size(a), sb = tt_dtype_size(b);
  if (ua == ub) return sa >= sb ? a : b;
  /* signed vs unsigned: the signed type if it is wider, else the next wider signed */
  tt_dtype_t s = ua ? b : a, u = ua ? a : b;
  size_t ss = tt_dtype_size(s), su = tt_dtype_size(u);
  if (ss > su) return s;
  switch (su) {
    case 1: return TT_I16;
    case 2: return TT_I32;
    case 4: return TT_I64;
    default: return TT_I64;
  }
}

/* ATen's combine_categories: the result of a higher tier (`hi`, or
 * TT_DTYPE_COUNT when that tier is empty) and a lower one. A lower tier only
 * matters when its category is higher; a complex lower tier over a floating
 * higher one keeps the floating value type (float32 + 1j -> complex64,
 * float64 + 1j -> complex128). */
static tt_dtype_t combine_tiers(tt_dtype_t hi, tt_dtype_t lo) {
  if (hi == TT_DTYPE_COUNT) return lo;
  if (lo == TT_DTYPE_COUNT) return hi;
  int ch = category(hi), cl = category(lo);
  if (ch == 3) return hi;
  if (cl == 3) return ch == 2 ? tt_dtype_complex_of(hi) : lo;
  if (ch == 2) return hi;
  if (ch == 0 || cl == 2) return promote2(hi, lo);
  return hi;
}

tt_dtype_t tt_l_promote(tt_lctx_t* c, const int* idx, int n) {
  /* per tier (TT_TIER_*): the promoted dtype, TT_DTYPE_COUNT while empty */
  tt_dtype_t tier_dt[3] = {TT_DTYPE_COUNT, TT_DTYPE_COUNT, TT_DTYPE_COUNT};
  for (int k = 0; k < n; k++) {
    const tt_larg_t* a = &c->args[idx[k]];
    if (a->kind != TT_ARG_TENSOR && a->kind != TT_ARG_SCALAR) continue;
    int tier = a->kind == TT_ARG_SCALAR ? TT_TIER_WRAPPED : (int)a->tier;
    tt_dtype_t dt = tt_l_arg_dtype(c, idx[k]);
    if (tier == TT_TIER_WRAPPED) {
      /* wrapped numbers only contribute a category, as the default dtype of
       * that category (float32 / complex64: the default dtype is float32) */
      int cat = category(dt);
      dt = cat == 3 ? TT_C64 : cat == 2 ? TT_F32 : cat == 1 ? TT_I64 : TT_BOOL;
    }
    tier_dt[tier] = tier_dt[tier] == TT_DTYPE_COUNT ? dt : promote2(tier_dt[tier], dt);
  }
  tt_dtype_t r = combine_tiers(tier_dt[TT_TIER_DIM],
                               combine_tiers(tier_dt[TT_TIER_ZERO_DIM], tier_dt[TT_TIER_WRAPPED]));
  return r == TT_DTYPE_COUNT ? TT_F32 : r;
}

tt_dtype_t tt_l_opmath(tt_dtype_t dt) {
  return (dt == TT_F16 || dt == TT_BF16 || tt_dtype_is_f8(dt)) ? TT_F32 : dt;
}

/* real / imaginary part of a complex value */
static tt_val_t part(tt_shlo_fn_t* f, tt_val_t v, const char* op) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t pt = *t;
  pt.dtype = tt_dtype_real_part(t->dtype);
  return tt_shlo_op(f, op, &v, 1, &pt, NULL);
}

/* Conversions from and to float8 as PyTorch's, through float: a float8
 * value widens exactly to float32 and goes on from there; any other value
 * becomes float32 first (float64: as c10's Float8 constructors take a
 * float), then float8 rounding to nearest even, where float8_e4m3fn
 * saturates (+-inf and values past 448 become +-448; XLA's convert gives
 * NaN) and e5m2's NaN gets PyTorch's pattern (0x7f with the sign; XLA's is
 * 0x7e). */
static tt_val_t convert_f8(tt_shlo_fn_t* f, tt_val_t v, const tt_type_t* t, tt_dtype_t dt) {
  tt_type_t ft = *t;
  ft.dtype = TT_F32;
  if (tt_dtype_is_f8(t->dtype)) {
    tt_val_t w = tt_shlo_op(f, "stablehlo.convert", &v, 1, &ft, NULL);
    bool fnuz = t->dtype == TT_F8E4M3FNUZ || t->dtype == TT_F8E5M2FNUZ;
    if (fnuz && (tt_dtype_is_signed_int(dt) || tt_dtype_is_unsigned_int(dt))) /* CPU: NaN -> 0 */
      w = tt_l_select(f, tt_l_compare(f, "NE", w, w), tt_shlo_const(f, &ft, 0.0), w);
    return tt_l_convert(f, w, dt);
  }
  tt_val_t x = tt_l_convert(f, v, TT_F32);
  tt_type_t rt = *t;
  rt.dtype = dt;
  if (dt == TT_F8E4M3FN) {
    tt_val_t hi = tt_shlo_const(f, &ft, 448.0), lo = tt_shlo_const(f, &ft, -448.0);
    x = tt_l_select(f, tt_l_compare(f, "GT", x, hi), hi, x);
    x = tt_l_select(f, tt_l_compare(f, "LT", x, lo), lo, x);
  }
  tt_val_t r = tt_shlo_op(f, "stablehlo.convert", &x, 1, &rt, NULL);
  if (dt == TT_F8E5M2) { /* NaN keeps its sign: 0x7f / 0xff */
    tt_type_t it = ft;
    it.dtype = TT_I32;
    tt_val_t neg = tt_l_compare(f, "LT", tt_shlo_op(f, "stablehlo.bitcast_convert", &x, 1, &it, NULL),
                                tt_shlo_const(f, &it, 0.0));
    /* selected as bytes: XLA's CPU compiler selects float8 values through
     * f16, which drops the NaN's sign */
    tt_type_t ut = rt;
    ut.dtype = TT_U8;
    tt_val_t nan = tt_l_select(f, neg, tt_shlo_const_i64(f, &ut, 0xff), tt_shlo_const_i64(f, &ut, 0x7f));
    tt_val_t rb = tt_shlo_op(f, "stablehlo.bitcast_convert", &r, 1, &ut, NULL);
    rb = tt_l_select(f, tt_l_compare(f, "NE", x, x), nan, rb);
    r = tt_shlo_op(f, "stablehlo.bitcast_convert", &rb, 1, &rt, NULL);
  }
  return r;
}

tt_val_t tt_l_convert(tt_shlo_fn_t* f, tt_val_t v, tt_dtype_t dt) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  if (t->dtype == dt) return v;
  tt_type_t rt = *t;
  rt.dtype = dt;
  if (tt_dtype_is_complex(t->dtype) || tt_dtype_is_complex(dt)) {
    /* complex -> bool: re != 0 or im != 0; -> real: the real part; real ->
     * complex: (x, 0); complex -> complex: each part */
    tt_dtype_t pd = tt_dtype_real_part(dt);
    tt_val_t re = v, im = TT_SHLO_INVALID;
    if (tt_dtype_is_complex(t->dtype)) {
      re = part(f, v, "stablehlo.real");
      im = part(f, v, "stablehlo.imag");
    }
    if (!tt_dtype_is_complex(dt)) {
      if (dt != TT_BOOL) return tt_l_convert(f, re, dt);
      return tt_l_binary(f, "stablehlo.or", tt_l_convert(f, re, TT_BOOL), tt_l_convert(f, im, TT_BOOL));
    }
    re = tt_l_convert(f, re, pd);
    if (im == TT_SHLO_INVALID) {
      const tt_type_t* rtp = tt_shlo_type(f, re);
      if (!rtp) return TT_SHLO_INVALID;
      im = tt_shlo_const(f, rtp, 0.0);
    } else {
      im = tt_l_convert(f, im, pd);
    }
    tt_val_t ops[2] = {re, im};
    return tt_shlo_op(f, "stablehlo.complex", ops, 2, &rt, NULL);
  }
  if (tt_dtype_is_f8(t->dtype) || tt_dtype_is_f8(dt)) return convert_f8(f, v, t, dt);
  if (dt == TT_BOOL) {
    tt_val_t z = tt_shlo_const(f, t, 0.0);
    return tt_l_compare(f, "NE", v, z);
  }
  if (tt_dtype_is_float(t->dtype) && dt != TT_BOOL && !tt_dtype_is_float(dt)) {
    /* float -> integer as CPU's x86 code does it: truncate to int32 (int64 for
     * 64-bit targets), NaN and out-of-range values giving that width's minimum
     * (cvttss2si's "integer indefinite"), then wrap to the target: -2.0 ->
     * uint8 254, 70000.0 -> int16 4464, inf -> int64 minimum. XLA saturates. */
    tt_dtype_t wide = tt_dtype_size(dt) <= 4 ? TT_I32 : TT_I64;
    double lim = wide == TT_I32 ? 2147483648.0 : 9223372036854775808.0;
    tt_val_t x = t->dtype == TT_F16 || t->dtype == TT_BF16 ? tt_l_convert(f, v, TT_F32) : v;
    const tt_type_t* xt = tt_shlo_type(f, x);
    if (!xt) return TT_SHLO_INVALID;
    tt_type_t ft = *xt, wt = *xt;
    wt.dtype = wide;
    tt_val_t ok = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "GE", x, tt_shlo_const(f, &ft, -lim)),
                              tt_l_compare(f, "LT", x, tt_shlo_const(f, &ft, lim)));
    tt_val_t w = tt_shlo_op(f, "stablehlo.convert", &x, 1, &wt, NULL);
    w = tt_l_select(f, ok, w, tt_shlo_const(f, &wt, -lim));
    return tt_l_convert(f, w, dt);
  }
  if (t->dtype == TT_BOOL && tt_dtype_is_float(dt)) {
    /* select(p, 1, 0), not convert: XLA rewrites x * convert(p) into
     * select(p, x, 0), which drops the NaN of NaN * False (CPU: NaN) */
    tt_val_t one = tt_shlo_const(f, &rt, 1.0), zero = tt_shlo_const(f, &rt, 0.0);
    return tt_l_select(f, v, one, zero);
  }
  return tt_shlo_op(f, "stablehlo.convert", &v, 1, &rt, NULL);
}

tt_val_t tt_l_hypot(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t kt = *t;
  tt_val_t aa = tt_l_unary(f, "stablehlo.abs", a), ab = tt_l_unary(f, "stablehlo.abs", b);
  tt_val_t m = tt_l_binary(f, "stablehlo.maximum", aa, ab), n = tt_l_binary(f, "stablehlo.minimum", aa, ab);
  tt_val_t q = tt_l_binary(f, "stablehlo.divide", n, m);
  tt_val_t one = tt_shlo_const(f, &kt, 1.0), zero = tt_shlo_const(f, &kt, 0.0);
  tt_val_t r = tt_l_binary(f, "stablehlo.multiply", m,
                           tt_l_unary(f, "stablehlo.sqrt", tt_l_binary(f, "stablehlo.add", one,
                                                                       tt_l_binary(f, "stablehlo.multiply", q, q))));
  r = tt_l_select(f, tt_l_compare(f, "EQ", m, zero), zero, r);
  tt_val_t nan = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "NE", a, a), tt_l_compare(f, "NE", b, b));
  r = tt_l_select(f, nan, tt_shlo_const(f, &kt, NAN), r);
  tt_val_t inf = tt_shlo_const(f, &kt, INFINITY);
  tt_val_t anyinf = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "EQ", aa, inf), tt_l_compare(f, "EQ", ab, inf));
  return tt_l_select(f, anyinf, inf, r);
}

tt_val_t tt_l_cabs(tt_shlo_fn_t* f, tt_val_t z) {
  const tt_type_t* t = tt_shlo_type(f, z);
  if (!t || !tt_dtype_is_complex(t->dtype)) return t ? tt_l_unary(f, "stablehlo.abs", z) : TT_SHLO_INVALID;
  return tt_l_hypot(f, part(f, z, "stablehlo.real"), part(f, z, "stablehlo.imag"));
}

tt_val_t tt_l_broadcast(tt_shlo_fn_t* f, tt_val_t v, int rank, const int64_t* dims) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  if (t->rank > rank) {
    tt_shlo_fail(f, "broadcast: rank %d to %d", t->rank, rank);
    return TT_SHLO_INVALID;
  }
  tt_type_t rt = tt_type_make(t->dtype, rank, dims);
  if (tt_type_equal(t, &rt)) return v;
  int64_t bdims[TT_MAX_RANK];
  int off = rank - t->rank;
  /* size-1 dims that broadcast are first reshaped away */
  int64_t kept_dims[TT_MAX_RANK];
  int nk = 0;
  bool need_reshape = false;
  for (int i = 0; i < t->rank; i++) {
    int64_t d = t->dims[i], to = dims[off + i];
    if (d == to) {
      kept_dims[nk] = d;
      bdims[nk++] = off + i;
    } else if (d == 1) {
      need_reshape = true;
    } else {
      tt_shlo_fail(f, "broadcast: dim %d of size %lld to %lld", i, (long long)d, (long long)to);
      return TT_SHLO_INVALID;
    }
  }
  if (need_reshape) v = tt_l_reshape(f, v, nk, kept_dims);
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "broadcast_dimensions = ");
  tt_shlo_fmt_i64_array(&a, bdims, nk);
  tt_val_t r = tt_shlo_op(f, "stablehlo.broadcast_in_dim", &v, 1, &rt, a.data);
  tt_sbuf_free(&a);
  return r;
}

tt_val_t tt_l_arg_as(tt_lctx_t* c, int i, tt_dtype_t dt, const tt_type_t* shape) {
  tt_val_t v = tt_l_convert(c->f, c->args[i].val, dt);
  return tt_l_broadcast(c->f, v, shape->rank, shape->dims);
}

tt_val_t tt_l_full(tt_shlo_fn_t* f, tt_dtype_t dt, int rank, const int64_t* dims, double v) {
  tt_type_t t = tt_type_make(dt, rank, dims);
  return tt_shlo_const(f, &t, v);
}

tt_val_t tt_l_unary(tt_shlo_fn_t* f, const char* op, tt_val_t a) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  return tt_shlo_op(f, op, &a, 1, &rt, NULL);
}

tt_val_t tt_l_binary(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  tt_val_t ops[2] = {a, b};
  return tt_shlo_op(f, op, ops, 2, &rt, NULL);
}

tt_val_t tt_l_compare(tt_shlo_fn_t* f, const char* dir, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  if (tt_dtype_is_complex(t->dtype)) {
    /* complex values compare by parts, as floats: equal when both parts are */
    bool eq = !strcmp(dir, "EQ");
    if (!eq && strcmp(dir, "NE")) {
      tt_shlo_fail(f, "compare %s: complex values are not ordered", dir);
      return TT_SHLO_INVALID;
    }
    tt_val_t r = tt_l_compare(f, dir, part(f, a, "stablehlo.real"), part(f, b, "stablehlo.real"));
    tt_val_t i = tt_l_compare(f, dir, part(f, a, "stablehlo.imag"), part(f, b, "stablehlo.imag"));
    return tt_l_binary(f, eq ? "stablehlo.and" : "stablehlo.or", r, i);
  }
  tt_type_t rt = *t;
  rt.dtype = TT_BOOL;
  const char* ct = tt_dtype_is_float(t->dtype) ? "FLOAT"
                   : tt_dtype_is_signed_int(t->dtype) ? "SIGNED"
                                                      : "UNSIGNED";
  tt_val_t ops[2] = {a, b};
  return tt_shlo_opf(f, "stablehlo.compare", ops, 2, &rt,
                     "comparison_direction = #stablehlo<comparison_direction %s>, "
                     "compare_type = #stablehlo<comparison_type %s>",
                     dir, ct);
}

tt_val_t tt_l_select(tt_shlo_fn_t* f, tt_val_t pred, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  tt_val_t ops[3] = {pred, a, b};
  return tt_shlo_op(f, "stablehlo.select", ops, 3, &rt, NULL);
}

tt_val_t tt_l_reshape(tt_shlo_fn_t* f, tt_val_t v, int rank, const int64_t* dims) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = tt_type_make(t->dtype, rank, dims);
  if (tt_type_equal(t, &rt)) return v;
  return tt_shlo_op(f, "stablehlo.reshape", &v, 1, &rt, NULL);
}

tt_val_t tt_l_transpose(tt_shlo_fn_t* f, tt_val_t v, const int64_t* perm) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  bool ident = true;
  for (int i = 0; i < t->rank; i++) {
    rt.dims[i] = t->dims[perm[i]];
    if (perm[i] != i) ident = false;
  }
  if (ident) return v;
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "permutation = ");
  tt_shlo_fmt_i64_array(&a, perm, t->rank);
  tt_val_t r = tt_shlo_op(f, "stablehlo.transpose", &v, 1, &rt, a.data);
  tt_sbuf_free(&a);
  return r;
}

int64_t tt_l_wrap_dim(int64_t d, int rank) {
  int r = rank == 0 ? 1 : rank;
  return d < 0 ? d + r : d;
}

tt_status_t tt_l_set_out(tt_lctx_t* c, int i, tt_val_t v) {
  if (i < 0 || i >= c->nout) return tt_status_make(TT_INTERNAL, "%s: output %d out of range", c->op->name, i);
  const tt_type_t* t = tt_shlo_type(c->f, v);
  if (!t && tt_shlo_failed(c->f))
    return tt_status_make(TT_INTERNAL, "%s: output %d: %s", c->op->name, i, tt_shlo_error(c->f));
  if (!t) return tt_status_make(TT_INTERNAL, "%s: output %d is not a value", c->op->name, i);
  const tt_type_t* want = &c->out_types[i];
  if (t->dtype != want->dtype) v = tt_l_convert(c->f, v, want->dtype);
  t = tt_shlo_type(c->f, v);
  if (t && !tt_type_equal(t, want)) {
    if (tt_type_numel(t) != tt_type_numel(want)) {
      char a[128], b[128];
      tt_type_format(t, a, sizeof a);
      tt_type_format(want, b, sizeof b);
      return tt_status_make(TT_INTERNAL, "%s: output %d is %s, expected %s", c->op->name, i, a, b);
    }
    v = tt_l_reshape(c->f, v, want->rank, want->dims);
  }
  c->outs[i] = v;
  return NULL;
}
