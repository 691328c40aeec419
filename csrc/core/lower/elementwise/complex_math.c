/* Unary math on complex values: the unary family (unary.c) delegates complex
 * inputs here. PyTorch CPU computes these with c10::complex / std:: complex
 * functions, which follow C99 Annex G: branch cuts take the sign of a zero
 * part (sqrt(-1 - 0i) = -i), and infinities / NaNs have defined results.
 * StableHLO's complex ops agree with it on finite values away from the cuts
 * (checked against PyTorch CPU) but treat -0 as +0 on the cuts, lose small
 * imaginary parts (sin(1e-8i)) and differ at infinities, so: sqrt, exp and
 * the trigonometric / hyperbolic functions are built from their real parts;
 * log and the inverse functions take the StableHLO result and fix the signs
 * (each inverse function is odd or conjugate-symmetric, so the sign of each
 * part of the result follows a part of z) and the exact zero parts. */
#include <math.h>

#include "lower_elementwise.h"

typedef struct cx {
  tt_shlo_fn_t* f;
  tt_val_t x, y;   /* real and imaginary part */
  bool f64;        /* complex128 */
} cx_t;

#define F_ s->f
static tt_val_t un(cx_t* s, const char* op, tt_val_t v) { return tt_l_unary(F_, op, v); }
static tt_val_t k(cx_t* s, double v) { return tt__ew_k(F_, s->x, v); }
static tt_val_t sel(cx_t* s, tt_val_t p, tt_val_t a, tt_val_t b) { return tt_l_select(F_, p, a, b); }
static tt_val_t and_(cx_t* s, tt_val_t a, tt_val_t b) { return tt_l_binary(F_, "stablehlo.and", a, b); }
static tt_val_t or_(cx_t* s, tt_val_t a, tt_val_t b) { return tt_l_binary(F_, "stablehlo.or", a, b); }
static tt_val_t not_(cx_t* s, tt_val_t a) { return un(s, "stablehlo.not", a); }
static tt_val_t is0(cx_t* s, tt_val_t v) { return tt__ew_cmpk(F_, "EQ", v, 0); }
static tt_val_t isinf_(cx_t* s, tt_val_t v) { return tt__ew_cmpk(F_, "EQ", un(s, "stablehlo.abs", v), INFINITY); }
static tt_val_t isfin(cx_t* s, tt_val_t v) { return tt__ew_cmpk(F_, "LT", un(s, "stablehlo.abs", v), INFINITY); }
/* |a| with the sign of b (b's sign bit: -0 and negative NaNs count) */
static tt_val_t copysign_(cx_t* s, tt_val_t a, tt_val_t b) {
  tt_val_t m = un(s, "stablehlo.abs", a);
  return sel(s, tt__ew_signbit(F_, b), un(s, "stablehlo.negate", m), m);
}
static tt_val_t mk(cx_t* s, tt_val_t re, tt_val_t im) { return tt__cx_make(F_, re, im); }
static tt_val_t mul(cx_t* s, tt_val_t a, tt_val_t b) { return tt__ew_mul(F_, a, b); }
static tt_val_t re_of(cx_t* s, tt_val_t z) { return tt__cx_re(F_, z); }
static tt_val_t im_of(cx_t* s, tt_val_t z) { return tt__cx_im(F_, z); }

/* exp(x) * (cos y + i sin y); exact for real z; C99 at infinities. Past the
 * overflow threshold of exp, exp(x/2)^2 keeps products that are finite. */
static tt_val_t cx_exp(cx_t* s) {
  tt_val_t x = s->x, y = s->y;
  tt_val_t big = tt__ew_cmpk(F_, "GT", x, s->f64 ? 700.0 : 85.0);
  tt_val_t e = un(s, "stablehlo.exponential", x);
  tt_val_t h = un(s, "stablehlo.exponential", tt__ew_mulk(F_, x, 0.5));
  tt_val_t c = un(s, "stablehlo.cosine", y), sn = un(s, "stablehlo.sine", y);
  tt_val_t re = sel(s, big, mul(s, mul(s, h, c), h), mul(s, e, c));
  tt_val_t im = sel(s, big, mul(s, mul(s, h, sn), h), mul(s, e, sn));
  tt_val_t y0 = is0(s, y), ynf = not_(s, isfin(s, y));
  re = sel(s, y0, e, re);
  im = sel(s, y0, y, im);
  /* exp(+inf + i(inf|nan)) = inf + i nan; exp(-inf + i(inf|nan)) = 0 + i0 */
  tt_val_t pinf = and_(s, tt__ew_cmpk(F_, "EQ", x, INFINITY), ynf);
  tt_val_t ninf = and_(s, tt__ew_cmpk(F_, "EQ", x, -INFINITY), ynf);
  re = sel(s, pinf, k(s, INFINITY), sel(s, ninf, k(s, 0), re));
  im = sel(s, pinf, k(s, NAN), sel(s, ninf, sel(s, isinf_(s, y), copysign_(s, k(s, 0), y), k(s, 0)), im));
  return mk(s, re, im);
}

/* c10's expm1: expm1(x) cos y - 2 sin^2(y/2) + i exp(x) sin y */
static tt_val_t cx_expm1(cx_t* s) {
  tt_val_t a = un(s, "stablehlo.sine", tt__ew_mulk(F_, s->y, 0.5));
  tt_val_t re = tt__ew_sub(F_, mul(s, un(s, "stablehlo.exponential_minus_one", s->x), un(s, "stablehlo.cosine", s->y)),
                           tt__ew_mulk(F_, mul(s, a, a), 2.0));
  tt_val_t im = mul(s, un(s, "stablehlo.exponential", s->x), un(s, "stablehlo.sine", s->y));
  return mk(s, re, im);
}

/* hypot as std::hypot (lower_util.c) */
static tt_val_t hypot_(cx_t* s, tt_val_t a, tt_val_t b) { return tt_l_hypot(F_, a, b); }

tt_val_t tt__cx_abs(tt_shlo_fn_t* f, tt_val_t z) { return tt_l_cabs(f, z); }

/* C99 csqrt: t = sqrt((|x| + |z|) / 2); x >= 0: t + i y / 2t, else
 * |y| / 2t + i copysign(t, y). Large parts are scaled by 1/4 (t by 2). */
static tt_val_t cx_sqrt(cx_t* s, tt_val_t z) {
  tt_val_t x = s->x, y = s->y;
  tt_val_t ax = un(s, "stablehlo.abs", x), ay = un(s, "stablehlo.abs", y);
  tt_val_t big = or_(s, tt__ew_cmpk(F_, "GT", ax, s->f64 ? 1e300 : 1e37), tt__ew_cmpk(F_, "GT", ay, s->f64 ? 1e300 : 1e37));
  tt_val_t sc = sel(s, big, k(s, 0.25), k(s, 1.0));
  tt_val_t xs = mul(s, x, sc), ys = mul(s, y, sc);
  tt_val_t m = hypot_(s, xs, ys);
  tt_val_t t = un(s, "stablehlo.sqrt", tt__ew_mulk(F_, tt__ew_add(F_, un(s, "stablehlo.abs", xs), m), 0.5));
  tt_val_t t2 = tt__ew_mulk(F_, t, 2.0);
  tt_val_t q = tt__ew_div(F_, ys, t2); /* y / 2t at the scale of t */
  tt_val_t tu = sel(s, big, tt__ew_mulk(F_, t, 2.0), t);
  tt_val_t qu = sel(s, big, tt__ew_mulk(F_, q, 2.0), q);
  tt_val_t pos = not_(s, tt__ew_signbit(F_, x));
  tt_val_t re = sel(s, pos, tu, un(s, "stablehlo.abs", qu));
  tt_val_t im = sel(s, pos, qu, copysign_(s, tu, y));
  /* z == 0: +0 + i y */
  tt_val_t z0 = and_(s, is0(s, x), is0(s, y));
  re = sel(s, z0, k(s, 0), re);
  im = sel(s, z0, y, im);
  /* infinities: y = +-inf -> inf + i y; x = -inf -> 0 + i copysign(inf, y)
   * (NaN + i inf for y NaN); x = +inf -> inf + i copysign(0, y) (inf + i NaN) */
  tt_val_t ynan = tt__ew_isnan(F_, y);
  tt_val_t xpinf = tt__ew_cmpk(F_, "EQ", x, INFINITY), xninf = tt__ew_cmpk(F_, "EQ", x, -INFINITY);
  re = sel(s, xninf, sel(s, ynan, k(s, NAN), k(s, 0)), re);
  im = sel(s, xninf, copysign_(s, k(s, INFINITY), y), im);
  re = sel(s, xpinf, k(s, INFINITY), re);
  im = sel(s, xpinf, sel(s, ynan, y, copysign_(s, k(s, 0), y)), im);
  tt_val_t yinf = isinf_(s, y);
  re = sel(s, yinf, k(s, INFINITY), re);
  im = sel(s, yinf, y, im);
  return mk(s, re, im);
}

static tt_val_t atan2_(cx_t* s, tt_val_t y, tt_val_t x) {
  tt_val_t ops[2] = {y, x};
  return tt_shlo_op(F_, "stablehlo.atan2", ops, 2, tt_shlo_type(F_, x), NULL);
}

/* log|z| + i atan2(y, x): StableHLO's log (accurate near |z| = 1) with
 * C99's NaN / inf real part */
static tt_val_t cx_log(cx_t* s, tt_val_t z) {
  tt_val_t l = un(s, "stablehlo.log", z);
  tt_val_t anyinf = or_(s, isinf_(s, s->x), isinf_(s, s->y));
  tt_val_t anynan = or_(s, tt__ew_isnan(F_, s->x), tt__ew_isnan(F_, s->y));
  tt_val_t re = sel(s, anyinf, k(s, INFINITY), sel(s, anynan, k(s, NAN), re_of(s, l)));
  return mk(s, re, atan2_(s, s->y, s->x));
}

/* c10's log1p: theta = atan2(y, 1 + x); |z| < 0.5: 0.5 log1p(x (2 + x) + y^2)
 * (x itself when that underflows to 0), else log(hypot(1 + x, y)). (CPU's
 * vectorized kernel gives NaN + i NaN where a part is infinite; this gives
 * C99's clog(1 + z) there.) */
static tt_val_t cx_log1p(cx_t* s, tt_val_t z) {
  tt_val_t x1 = tt__ew_addk(F_, s->x, 1.0);
  tt_val_t theta = atan2_(s, s->y, x1);
  tt_val_t r = tt__ew_add(F_, mul(s, s->x, tt__ew_addk(F_, s->x, 2.0)), mul(s, s->y, s->y));
  tt_val_t small = sel(s, is0(s, r), s->x, tt__ew_mulk(F_, un(s, "stablehlo.log_plus_one", r), 0.5));
  /* log hypot(1 + x, y) = log m + log1p((n/m)^2) / 2 over m = max(|1 + x|, |y|),
   * n = min(...): no overflow where |1 + z| is past the largest finite value */
  tt_val_t a1 = un(s, "stablehlo.abs", x1), ay = un(s, "stablehlo.abs", s->y);
  tt_val_t m = tt__ew_max(F_, a1, ay), q = tt__ew_div(F_, tt__ew_min(F_, a1, ay), m);
  tt_val_t lm = un(s, "stablehlo.log", m);
  tt_val_t large = sel(s, is0(s, m), lm, tt__ew_add(F_, lm, tt__ew_mulk(F_, un(s, "stablehlo.log_plus_one", mul(s, q, q)), 0.5)));
  large = sel(s, or_(s, isinf_(s, a1), isinf_(s, ay)), k(s, INFINITY), large);
  return mk(s, sel(s, tt__ew_cmpk(F_, "LT", hypot_(s, s->x, s->y), 0.5), small, large), theta);
}

/* atanh z: re = 0.25 log1p(4|x| / ((1 - |x|)^2 + y^2)) with x's sign, or for
 * 0.5 <= |x|, |y| <= 1 (where y^2 may underflow next to (1 - |x|)^2)
 * 0.5 (log hypot(1 + |x|, y) - log hypot(1 - |x|, y)); im = 0.5 atan2(y,
 * ((1 - x)(1 + x) - y^2) / 2), which takes the branch cuts from the sign of y.
 * C99 at infinities: +-0 + i(+-pi/2). */
static tt_val_t cx_atanh(cx_t* s) {
  tt_val_t x = s->x, y = s->y, ax = un(s, "stablehlo.abs", x);
  tt_val_t one = k(s, 1.0);
  tt_val_t omx = tt__ew_sub(F_, one, ax);
  tt_val_t den = tt__ew_add(F_, mul(s, omx, omx), mul(s, y, y));
  tt_val_t ra = tt__ew_mulk(F_, un(s, "stablehlo.log_plus_one", tt__ew_mulk(F_, tt__ew_div(F_, ax, den), 4.0)), 0.25);
  tt_val_t rb = tt__ew_mulk(F_, tt__ew_sub(F_, un(s, "stablehlo.log", hypot_(s, tt__ew_add(F_, one, ax), y)),
                                          un(s, "stablehlo.log", hypot_(s, omx, y))), 0.5);
  tt_val_t useb = and_(s, tt__ew_cmpk(F_, "GE", ax, 0.5), tt__ew_cmpk(F_, "LE", un(s, "stablehlo.abs", y), 1.0));
  tt_val_t re = copysign_(s, sel(s, useb, rb, ra), x);
  tt_val_t d = tt__ew_sub(F_, mul(s, tt__ew_sub(F_, one, x), tt__ew_add(F_, one, x)), mul(s, y, y));
  tt_val_t im = tt__ew_mulk(F_, atan2_(s, y, tt__ew_mulk(F_, d, 0.5)), 0.5);
  tt_val_t anyinf = or_(s, isinf_(s, x), isinf_(s, y));
  re = sel(s, anyinf, copysign_(s, k(s, 0), x), sel(s, is0(s, x), x, re));
  im = sel(s, anyinf, sel(s, tt__ew_isnan(F_, y), y, copysign_(s, k(s, M_PI_2), y)), im);
  return mk(s, re, im);
}

/* sin z = sin x cosh y + i cos x sinh y;  cos z = cos x cosh y - i sin x sinh y;
 * sinh z = sinh x cos y + i cosh x sin y;  cosh z = cosh x cos y + i sinh x sin y.
 * A zero part of z gives the exact result of the real function. */
static tt_val_t cx_trig(cx_t* s, int uop) {
  bool hyp = uop == TT_U_SINH || uop == TT_U_COSH;
  bool odd = uop == TT_U_SIN || uop == TT_U_SINH;
  /* the circular part u and the hyperbolic part v: sin/cos(u) and sinh/cosh(v) */
  tt_val_t u = hyp ? s->y : s->x, v = hyp ? s->x : s->y;
  tt_val_t su = un(s, "stablehlo.sine", u), cu = un(s, "stablehlo.cosine", u);
  tt_val_t sv = un(s, "chlo.sinh", v), cv = un(s, "chlo.cosh", v);
  tt_val_t a, b; /* the part carrying u's function of v's even / odd function */
  if (odd) {
    a = mul(s, su, cv); /* sin: re; sinh: im */
    b = mul(s, cu, sv); /* sin: im; sinh: re */
  } else {
    a = mul(s, cu, cv);                             /* cos: re; cosh: re */
    b = mul(s, su, sv);                             /* cos: -im; cosh: im */
    if (!hyp) b = un(s, "stablehlo.negate", b);
  }
  tt_val_t u0 = is0(s, u), v0 = is0(s, v);
  tt_val_t re, im;
  if (odd) {
    /* u == 0: the u-part is u itself; v == 0: the v-part is v itself */
    a = sel(s, u0, u, a);
    b = sel(s, v0, sel(s, isfin(s, u), mul(s, cu, v), v), b);
    re = hyp ? b : a;
    im = hyp ? a : b;
  } else {
    /* the odd part is 0 (signed as sin(u) * sinh(v)) when u or v is 0 */
    tt_val_t zb = mul(s, sel(s, u0, u, copysign_(s, k(s, 1), su)), sel(s, v0, v, copysign_(s, k(s, 1), sv)));
    if (!hyp) zb = un(s, "stablehlo.negate", zb);
    tt_val_t any0 = or_(s, u0, v0);
    b = sel(s, any0, sel(s, or_(s, and_(s, u0, isfin(s, v)), and_(s, v0, isfin(s, u))), zb, k(s, 0)), b);
    re = a;
    im = b;
  }
  /* v infinite and u not finite: C99's inf / NaN pairs (sinh, cosh, cos: inf + i NaN;
   * sin: NaN + i inf) */
  tt_val_t sp = and_(s, isinf_(s, v), not_(s, isfin(s, u)));
  bool sin_ = uop == TT_U_SIN;
  re = sel(s, sp, k(s, sin_ ? NAN : INFINITY), re);
  im = sel(s, sp, k(s, sin_ ? INFINITY : NAN), im);
  return mk(s, re, im);
}

/* tanh (StableHLO's) with tanh(+-0 + iy) = +-0 + i tan(y) */
static tt_val_t cx_tanh(cx_t* s, tt_val_t z) {
  tt_val_t t = un(s, "stablehlo.tanh", z);
  tt_val_t re = sel(s, is0(s, s->x), s->x, re_of(s, t));
  tt_val_t im = sel(s, is0(s, s->y), s->y, im_of(s, t));
  return mk(s, re, im);
}

/* The inverse functions: StableHLO / CHLO's value with the signs of its
 * parts set from z's parts (rs / is: the sign source of the real / imaginary
 * part: 'x', 'y', '-y', or 0 for a non-negative part). */
static tt_val_t fix_signs(cx_t* s, tt_val_t w, const char* rs, const char* is) {
  tt_val_t re = re_of(s, w), im = im_of(s, w);
  /* a NaN part with no infinite part: NaN + i NaN (the exact zero parts are
   * set by the callers) */
  tt_val_t nn = and_(s, or_(s, tt__ew_isnan(F_, s->x), tt__ew_isnan(F_, s->y)),
                     not_(s, or_(s, isinf_(s, s->x), isinf_(s, s->y))));
  re = sel(s, nn, k(s, NAN), re);
  im = sel(s, nn, k(s, NAN), im);
  tt_val_t p[2] = {re, im};
  const char* src[2] = {rs, is};
  for (int i = 0; i < 2; i++) {
    if (!src[i]) continue;
    tt_val_t from = src[i][0] == 'x' ? s->x : src[i][1] == 'y' ? un(s, "stablehlo.negate", s->y) : s->y;
    p[i] = copysign_(s, p[i], from);
  }
  return mk(s, p[0], p[1]);
}

static cx_t cx_of(tt_shlo_fn_t* f, tt_val_t z) {
  const tt_type_t* t = tt_shlo_type(f, z);
  cx_t st = {f, tt__cx_re(f, z), tt__cx_im(f, z), t && t->dtype == TT_C128};
  return st;
}

tt_val_t tt__cx_pow(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool scalar) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (t && t->dtype == TT_C64) { /* exp(b log a) in complex128: exp amplifies the rounding
                                    of b log a by |b log a| (glibc's cpowf works in double too) */
    tt_val_t r = tt__cx_pow(f, tt_l_convert(f, a, TT_C128), tt_l_convert(f, b, TT_C128), scalar);
    return tt_l_convert(f, r, TT_C64);
  }
  cx_t sa = cx_of(f, a);
  cx_t* s = &sa;
  cx_t se = cx_of(f, tt__ew_mul(f, b, cx_log(s, a)));
  tt_val_t r = cx_exp(&se);
  if (!scalar) return r;
  tt_val_t one = tt__ew_k(f, a, 1.0), aa = tt__ew_mul(f, a, a);
  tt_val_t sq = cx_sqrt(s, a);
  struct { double e; tt_val_t v; } sp[] = {
      {2.0, aa}, {3.0, tt__ew_mul(f, aa, a)}, {-2.0, tt__cx_div(f, one, aa)}, {0.5, sq},
      {-0.5, tt__cx_div(f, one, sq)}, {-1.0, tt__cx_div(f, one, a)}, {1.0, a}, {0.0, one},
  };
  for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
    r = sel(s, tt_l_compare(f, "EQ", b, tt__ew_k(f, b, sp[i].e)), sp[i].v, r);
  return r;
}

tt_val_t tt__cx_fn(tt_shlo_fn_t* f, int uop, tt_val_t z) {
  const tt_type_t* t = tt_shlo_type(f, z);
  if (!t) return TT_SHLO_INVALID;
  cx_t st = {f, tt__cx_re(f, z), tt__cx_im(f, z), t->dtype == TT_C128};
  cx_t* s = &st;
  tt_val_t r, one = tt__ew_k(f, z, 1.0);
  switch (uop) {
    case TT_U_NEG: r = un(s, "stablehlo.negate", z); break;
    case TT_U_ISNAN: r = or_(s, tt__ew_isnan(f, s->x), tt__ew_isnan(f, s->y)); break;
    case TT_U_ISINF: r = or_(s, isinf_(s, s->x), isinf_(s, s->y)); break;
    case TT_U_LOGICAL_NOT: r = not_(s, tt_l_convert(f, z, TT_BOOL)); break;
    case TT_U_EXP: r = cx_exp(s); break;
    case TT_U_EXP2: { /* exp(z ln 2) */
      cx_t s2 = {f, tt__ew_mulk(f, s->x, M_LN2), tt__ew_mulk(f, s->y, M_LN2), st.f64};
      r = cx_exp(&s2);
      break;
    }
    case TT_U_EXPM1: r = cx_expm1(s); break;
    case TT_U_LOG: r = cx_log(s, z); break;
    case TT_U_LOG2:
    case TT_U_LOG10: { /* log(z) / ln(base), part by part */
      tt_val_t l = cx_log(s, z);
      double kk = uop == TT_U_LOG2 ? M_LN2 : M_LN10;
      r = mk(s, tt__ew_divk(f, re_of(s, l), kk), tt__ew_divk(f, im_of(s, l), kk));
      break;
    }
    case TT_U_LOG1P: r = cx_log1p(s, z); break;
    case TT_U_SQRT: r = cx_sqrt(s, z); break;
    case TT_U_RSQRT: r = tt__cx_div(f, one, cx_sqrt(s, z)); break;
    case TT_U_RECIPROCAL: r = tt__cx_div(f, one, z); break;
    case TT_U_SIGMOID: {
      cx_t sn = {f, un(s, "stablehlo.negate", s->x), un(s, "stablehlo.negate", s->y), st.f64};
      r = tt__cx_div(f, one, tt__ew_add(f, one, cx_exp(&sn)));
      break;
    }
    case TT_U_SIN:
    case TT_U_COS:
    case TT_U_SINH:
    case TT_U_COSH: r = cx_trig(s, uop); break;
    case TT_U_TANH: r = cx_tanh(s, z); break;
    case TT_U_TAN: { /* tan z = -i tanh(iz) */
      cx_t si = {f, un(s, "stablehlo.negate", s->y), s->x, st.f64};
      tt_val_t w = cx_tanh(&si, mk(s, si.x, si.y));
      r = mk(s, im_of(s, w), un(s, "stablehlo.negate", re_of(s, w)));
      break;
    }
    case TT_U_ASIN: /* re: sign of x, 0 for x == 0; im: sign of y */
      r = fix_signs(s, un(s, "chlo.asin", z), "x", "y");
      r = mk(s, sel(s, is0(s, s->x), s->x, re_of(s, r)), im_of(s, r));
      break;
    case TT_U_ACOS: /* re >= 0, pi/2 for x == 0; im: sign of -y */
      r = fix_signs(s, un(s, "chlo.acos", z), NULL, "-y");
      r = mk(s, sel(s, is0(s, s->x), k(s, M_PI_2), re_of(s, r)), im_of(s, r));
      break;
    case TT_U_ASINH: /* re: sign of x; im: sign of y, 0 for y == 0 */
      r = fix_signs(s, un(s, "chlo.asinh", z), "x", "y");
      r = mk(s, re_of(s, r), sel(s, is0(s, s->y), s->y, im_of(s, r)));
      break;
    case TT_U_ACOSH: /* re >= 0; im: sign of y, +-pi/2 for x == 0 */
      r = fix_signs(s, un(s, "chlo.acosh", z), NULL, "y");
      r = mk(s, re_of(s, r), sel(s, is0(s, s->x), copysign_(s, k(s, M_PI_2), s->y), im_of(s, r)));
      break;
    case TT_U_ATANH: r = cx_atanh(s); break;
    case TT_U_ATAN: { /* atan z = -i atanh(iz); im = 0 for y == 0 */
      cx_t si = {f, un(s, "stablehlo.negate", s->y), s->x, st.f64};
      tt_val_t w = cx_atanh(&si);
      r = mk(s, im_of(s, w), sel(s, is0(s, s->y), s->y, un(s, "stablehlo.negate", re_of(s, w))));
      break;
    }
    default: return TT_SHLO_INVALID;
  }
  return r;
}

tt_status_t tt__cx_math(tt_lctx_t* c, int uop, const char* shlo) {
  (void)shlo;
  tt_val_t z = c->args[0].val;
  const tt_type_t* t = tt_shlo_type(c->f, z);
  if (!t) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  tt_val_t r = tt__cx_fn(c->f, uop, z);
  if (r == TT_SHLO_INVALID)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: not implemented for dtype %s", c->op->name,
                          tt_dtype_name(t->dtype));
  return tt_l_set_out(c, 0, r);
}

/* log(exp x + exp y) as CPU combines complex values (logaddexp, and each
 * step of logcumsumexp): a NaN part anywhere gives NaN + i NaN; min is x when
 * re x < re y, else y; equal infinite real parts give min (-inf) or
 * log(exp min + exp max) (+inf); otherwise log1p(exp(min - max)) + max. */
tt_val_t tt__cx_logaddexp(tt_shlo_fn_t* f, tt_val_t x, tt_val_t y) {
  tt_val_t xr = tt__cx_re(f, x), yr = tt__cx_re(f, y);
  tt_val_t lt = tt_l_compare(f, "LT", xr, yr);
  tt_val_t mn = tt_l_select(f, lt, x, y), mx = tt_l_select(f, lt, y, x);
  tt_val_t mnr = tt_l_select(f, lt, xr, yr), mxr = tt_l_select(f, lt, yr, xr);
  tt_val_t nan = tt_l_binary(f, "stablehlo.or",
                             tt_l_binary(f, "stablehlo.or", tt__ew_isnan(f, xr), tt__ew_isnan(f, tt__cx_im(f, x))),
                             tt_l_binary(f, "stablehlo.or", tt__ew_isnan(f, yr), tt__ew_isnan(f, tt__cx_im(f, y))));
  tt_val_t gen = tt__ew_add(f, tt__cx_fn(f, TT_U_LOG1P, tt__cx_fn(f, TT_U_EXP, tt__ew_sub(f, mn, mx))), mx);
  tt_val_t pinf = tt__cx_fn(f, TT_U_LOG, tt__ew_add(f, tt__cx_fn(f, TT_U_EXP, mn), tt__cx_fn(f, TT_U_EXP, mx)));
  tt_val_t eqinf = tt_l_binary(f, "stablehlo.and", tt__ew_cmpk(f, "EQ", tt_l_unary(f, "stablehlo.abs", mnr), INFINITY),
                               tt_l_compare(f, "EQ", mnr, mxr));
  tt_val_t r = tt_l_select(f, eqinf, tt_l_select(f, tt__ew_cmpk(f, "LT", mnr, 0), mn, pinf), gen);
  tt_val_t qn = tt__ew_k(f, xr, NAN);
  return tt_l_select(f, nan, tt__cx_make(f, qn, qn), r);
}
