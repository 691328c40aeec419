/* The special family, small numeric functions: entr, sinc, angle, logit (and
 * its backward), xlog1py, nextafter, frexp, gcd / lcm, ndtri, log_ndtr and
 * erfcx. Each row of k_misc says how the arguments are prepared; the builder
 * then follows PyTorch's CPU kernel expression by expression. */
#include <math.h>

#include "special_util.h"

#define F_ c->f
#define K(like, v) tt__ew_k(F_, like, v)

/* How the leading `arity` tensor/scalar arguments are prepared. */
enum mkind {
  MK_FLOAT, /* promoted, then computed in f32 (f64 for f64) */
  MK_RAW,   /* promoted, kept in that dtype (must be floating) */
  MK_INT,   /* promoted, kept in that dtype (must be an integer type) */
};

typedef tt_val_t (*mbuild_t)(tt_lctx_t* c, const tt_val_t* v);

typedef struct minfo {
  mbuild_t build;
  unsigned char arity;
  unsigned char kind;
} minfo_t;

/* eps of logit / logit_backward (argument i): negative when None. */
static double eps_arg(tt_lctx_t* c, int i) {
  return (i < c->nargs && c->args[i].kind == TT_ARG_FLOAT) ? c->args[i].f : -1.0;
}

/* x > 0: -x log x; 0: 0; < 0: -inf; NaN stays NaN. */
static tt_val_t b_entr(tt_lctx_t* c, const tt_val_t* v) {
  tt_val_t x = v[0];
  tt_val_t r = tt__ew_mul(F_, tt__sp_un(F_, "stablehlo.negate", x), tt__sp_un(F_, "stablehlo.log", x));
  r = tt__sp_where_k(F_, tt__ew_cmpk(F_, "EQ", x, 0), 0.0, r);
  r = tt__sp_where_k(F_, tt__ew_cmpk(F_, "LT", x, 0), -INFINITY, r);
  return tt_l_select(F_, tt__ew_isnan(F_, x), x, r);
}

/* sin(pi x) / (pi x), 1 at 0. */
static tt_val_t b_sinc(tt_lctx_t* c, const tt_val_t* v) {
  tt_val_t p = tt__ew_mulk(F_, v[0], M_PI);
  tt_val_t r = tt__ew_div(F_, tt__sp_un(F_, "stablehlo.sine", p), p);
  return tt__sp_where_k(F_, tt__ew_cmpk(F_, "EQ", v[0], 0), 1.0, r);
}

/* Complex sinc as CPU computes it: 1 at 0, else sin(pi z) / (pi z) with
 * pi z a complex product ((pi + 0i) z: NaN parts where z has an infinite
 * part, as on the CPU), C99 sin and c10's division. */
static tt_status_t cx_sinc(tt_lctx_t* c) {
  tt_val_t z = tt_l_arg_as(c, 0, c->out_types[0].dtype, &c->out_types[0]);
  tt_val_t p = tt__ew_mul(F_, z, tt__ew_k(F_, z, M_PI));
  tt_val_t r = tt__cx_div(F_, tt__cx_fn(F_, TT_U_SIN, p), p);
  return tt_l_set_out(c, 0, tt_l_select(F_, tt__ew_cmpk(F_, "EQ", z, 0), tt__ew_k(F_, z, 1.0), r));
}

/* Real inputs: pi for x < 0, else 0; NaN propagates. */
static tt_val_t b_angle(tt_lctx_t* c, const tt_val_t* v) {
  tt_val_t x = v[0];
  tt_val_t r = tt_l_select(F_, tt__ew_cmpk(F_, "LT", x, 0), K(x, M_PI), K(x, 0.0));
  return tt_l_select(F_, tt__ew_isnan(F_, x), x, r);
}

/* log(x / (1 - x)) with x clamped to [eps, 1 - eps] when eps >= 0; inf at 1. */
static tt_val_t b_logit(tt_lctx_t* c, const tt_val_t* v) {
  tt_val_t x = v[0];
  double eps = eps_arg(c, 1);
  if (eps >= 0) {
    /* CPU's bounds are scalar_t: eps and 1 - eps rounded to the input's dtype
     * (1 - 1e-3 is 1.0 in bfloat16, so logit(1) stays inf there) */
    tt_dtype_t in = c->out_types[0].dtype;
    const tt_type_t* xt = tt_shlo_type(F_, x);
    tt_dtype_t cd = xt ? xt->dtype : in;
    tt_val_t lo = tt_l_convert(F_, tt_l_convert(F_, K(x, eps), in), cd);
    tt_val_t hi = tt_l_convert(F_, tt_l_convert(F_, tt__ew_sub(F_, K(x, 1.0), lo), in), cd);
    x = tt_l_select(F_, tt_l_compare(F_, "LT", x, lo), lo, x);
    x = tt_l_select(F_, tt_l_compare(F_, "GT", x, hi), hi, x);
  }
  tt_val_t r = tt__sp_un(F_, "stablehlo.log", tt__ew_div(F_, x, tt__ew_sub(F_, K(x, 1.0), x)));
  return tt__sp_where_k(F_, tt__ew_cmpk(F_, "EQ", x, 1.0), INFINITY, r);
}

/* (grad, x, eps): grad / (x (1 - x)); outside [0, 1] NaN (no eps) or 0
 * (outside [eps, 1 - eps]); at 0 and 1 without eps grad * inf. */
static tt_val_t b_logit_bwd(tt_lctx_t* c, const tt_val_t* v) {
  tt_val_t g = v[0], x = v[1];
  double eps = eps_arg(c, 2);
  tt_val_t r = tt__ew_div(F_, g, tt__ew_mul(F_, x, tt__ew_sub(F_, K(x, 1.0), x)));
  if (eps >= 0) {
    tt_val_t out = tt__sp_or(F_, tt__ew_cmpk(F_, "LT", x, eps), tt__ew_cmpk(F_, "GT", x, 1.0 - eps));
    return tt__sp_where_k(F_, out, 0.0, r);
  }
  tt_val_t edge = tt__sp_or(F_, tt__ew_cmpk(F_, "EQ", x, 0), tt__ew_cmpk(F_, "EQ", x, 1.0));
  r = tt_l_select(F_, edge, tt__ew_mulk(F_, g, INFINITY), r);
  tt_val_t out = tt__sp_or(F_, tt__ew_cmpk(F_, "LT", x, 0), tt__ew_cmpk(F_, "GT", x, 1.0));
  return tt__sp_where_k(F_, out, NAN, r);
}

/* NaN if y is NaN, 0 if x == 0, else x log1p(y). */
static tt_val_t b_xlog1py(tt_lctx_t* c, const tt_val_t* v) {
  tt_val_t x = v[0], y = v[1];
  tt_val_t r = tt__ew_mul(F_, x, tt__sp_un(F_, "stablehlo.log_plus_one", y));
  r = tt__sp_where_k(F_, tt__ew_cmpk(F_, "EQ", x, 0), 0.0, r);
  return tt__sp_where_k(F_, tt__ew_isnan(F_, y), NAN, r);
}

/* The integer type of a float's bit pattern. */
static tt_dtype_t bits_dtype(tt_dtype_t dt) {
  return dt == TT_F64 ? TT_I64 : dt == TT_F32 ? TT_I32 : TT_I16;
}
static tt_val_t bitcast(tt_shlo_fn_t* f, tt_val_t v, tt_dtype_t dt) {
  const tt_type_t* t_p = tt_shlo_type(f, v);
  if (!t_p) return TT_SHLO_INVALID;
  const tt_type_t t_copy = *t_p, *t = &t_copy; /* the table may move */
  tt_type_t rt = *t;
  rt.dtype = dt;
  return tt_shlo_op(f, "stablehlo.bitcast_convert", &v, 1, &rt, NULL);
}

/* C nextafter on the bit pattern: one step of the integer representation
 * toward y (away from zero when |y| > |x| on x's side), the smallest
 * subnormal with y's sign from zero, y when equal, NaN when either is. */
static tt_val_t b_nextafter(tt_lctx_t* c, const tt_val_t* v) {
  tt_val_t x = v[0], y = v[1];
  const tt_type_t* t_p = tt_shlo_type(F_, x);
  if (!t_p) return TT_SHLO_INVALID;
  const tt_type_t t_copy = *t_p, *t = &t_copy; /* the table may move */
  tt_dtype_t dt = t->dtype, it = bits_dtype(dt);
  tt_val_t bx = bitcast(F_, x, it);
  tt_val_t up = tt__sp_not(F_, tt_l_compare(F_, "EQ", tt_l_compare(F_, "LT", x, y), tt__ew_cmpk(F_, "GT", x, 0)));
  /* away from zero (bits + 1) when moving toward y increases |x| */
  tt_val_t step = tt_l_select(F_, up, K(bx, -1), K(bx, 1));
  tt_val_t r = bitcast(F_, tt__ew_add(F_, bx, step), dt);
  tt_val_t tiny = bitcast(F_, K(bx, 1), dt);
  tt_val_t from0 = tt_l_select(F_, tt__ew_signbit(F_, y), tt__sp_un(F_, "stablehlo.negate", tiny), tiny);
  r = tt_l_select(F_, tt__ew_cmpk(F_, "EQ", x, 0), from0, r);
  r = tt_l_select(F_, tt_l_compare(F_, "EQ", x, y), y, r);
  tt_val_t nan = tt__sp_or(F_, tt__ew_isnan(F_, x), tt__ew_isnan(F_, y));
  return tt_l_select(F_, nan, tt__ew_add(F_, x, y), r);
}

/* std::frexp: mantissa in [0.5, 1) with x's sign and an int32 exponent; 0,
 * inf and NaN give (x, 0). Done on the bit pattern only: XLA's CPU backend
 * flushes subnormal floats to zero in arithmetic and comparisons, so
 * subnormals are normalized with a leading-zero count instead. */
static tt_val_t b_frexp(tt_lctx_t* c, const tt_val_t* v) {
  tt_val_t x = v[0];
  const tt_type_t* t_p = tt_shlo_type(F_, x);
  if (!t_p) return TT_SHLO_INVALID;
  if (t_p->dtype == TT_BF16) {
    /* widen through the bits: a convert would flush bf16 subnormals */
    tt_val_t w = tt_l_convert(F_, bitcast(F_, x, TT_I16), TT_I32);
    w = tt_l_binary(F_, "stablehlo.and", w, K(w, 65535.0));
    x = bitcast(F_, tt_l_binary(F_, "stablehlo.shift_left", w, K(w, 16.0)), TT_F32);
  } else if (t_p->dtype == TT_F16) {
    x = tt_l_convert(F_, x, TT_F32);
  }
  tt_dtype_t dt = t_p->dtype == TT_F64 ? TT_F64 : TT_F32;
  bool d = dt == TT_F64;
  tt_dtype_t it = d ? TT_I64 : TT_I32;
  int mbits = d ? 52 : 23, width = d ? 64 : 32, bias = d ? 1022 : 126;
  double emask = d ? 2047.0 : 255.0;
  tt_val_t bx = bitcast(F_, x, it);
#define SHL(a, b) tt_l_binary(F_, "stablehlo.shift_left", a, b)
#define SHR(a, b) tt_l_binary(F_, "stablehlo.shift_right_logical", a, b)
#define BAND(a, b) tt_l_binary(F_, "stablehlo.and", a, b)
#define BOR(a, b) tt_l_binary(F_, "stablehlo.or", a, b)
  tt_val_t fmask = tt__ew_sub(F_, SHL(K(bx, 1), K(bx, mbits)), K(bx, 1));
  tt_val_t frac = BAND(bx, fmask);
  tt_val_t e = BAND(SHR(bx, K(bx, mbits)), K(bx, emask));
  tt_val_t sign = BAND(bx, tt__sp_un(F_, "stablehlo.not", SHR(tt__sp_un(F_, "stablehlo.not", K(bx, 0)), K(bx, 1))));
  /* normal: exponent e - bias, fraction kept */
  tt_val_t ex = tt__ew_sub(F_, e, K(e, bias));
  /* subnormal: the top set bit p of frac becomes the implicit one */
  tt_val_t clz = tt__sp_un(F_, "stablehlo.count_leading_zeros", frac);
  tt_val_t p = tt__ew_sub(F_, K(clz, width - 1), clz);
  tt_val_t sub_ex = tt__ew_sub(F_, p, K(p, bias + mbits - 1));
  tt_val_t sub_frac = BAND(SHL(frac, tt__ew_sub(F_, K(p, mbits), p)), fmask);
  tt_val_t is_sub = tt__ew_cmpk(F_, "EQ", e, 0);
  tt_val_t is_zero = tt__sp_and(F_, is_sub, tt__ew_cmpk(F_, "EQ", frac, 0));
  ex = tt_l_select(F_, is_sub, sub_ex, ex);
  frac = tt_l_select(F_, is_sub, sub_frac, frac);
  tt_val_t m = bitcast(F_, BOR(BOR(sign, frac), SHL(K(bx, bias), K(bx, mbits))), dt);
  /* zero (either sign), inf and NaN: (x, 0) */
  tt_val_t special = tt__sp_or(F_, is_zero, tt__ew_cmpk(F_, "EQ", e, emask));
  m = tt_l_select(F_, special, x, m);
  ex = tt_l_select(F_, special, K(ex, 0), ex);
#undef SHL
#undef SHR
#undef BAND
#undef BOR
  tt_status_t st = tt_l_set_out(c, 1, tt_l_convert(F_, ex, TT_I32));
  if (st) {
    tt_shlo_fail(F_, "%s", tt_status_message(st));
    tt_status_free(st);
  }
  return m;
}

/* ---- gcd / lcm: Euclid's loop, elementwise, until every pair is done ------- */
static tt_val_t gcd_cond(tt_shlo_fn_t* f, const tt_val_t* st, void* ud) {
  (void)ud;
  return tt__sp_any(f, tt__ew_cmpk(f, "NE", st[0], 0));
}
static void gcd_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* next, void* ud) {
  (void)ud;
  tt_val_t a = st[0], b = st[1];
  tt_val_t live = tt__ew_cmpk(f, "NE", a, 0);
  tt_val_t safe = tt_l_select(f, live, a, tt__ew_k(f, a, 1));
  next[0] = tt_l_select(f, live, tt_l_binary(f, "stablehlo.remainder", b, safe), a);
  next[1] = tt_l_select(f, live, a, b);
}
static tt_val_t iabs(tt_shlo_fn_t* f, tt_val_t a) {
  const tt_type_t* t = tt_shlo_type(f, a);
  return (t && tt_dtype_is_unsigned_int(t->dtype)) ? a : tt__sp_abs(f, a);
}
static tt_val_t gcd_of(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  tt_val_t st[2] = {iabs(f, a), iabs(f, b)};
  tt_l_while(f, st, 2, gcd_cond, gcd_body, NULL);
  return st[1];
}
static tt_val_t b_gcd(tt_lctx_t* c, const tt_val_t* v) { return gcd_of(F_, v[0], v[1]); }
/* |a / g * b|, 0 when g == 0. 8- and 16-bit integers compute a / g * b and
 * its abs in int32 and wrap once at the end, as C's integer promotion does
 * in CPU's kernel (lcm(-127, -126) of int8 is -126 there). */
static tt_val_t b_lcm(tt_lctx_t* c, const tt_val_t* v) {
  tt_val_t g = gcd_of(F_, v[0], v[1]);
  tt_val_t z = tt__ew_cmpk(F_, "EQ", g, 0);
  tt_val_t safe = tt_l_select(F_, z, K(g, 1), g);
  const tt_type_t* t = tt_shlo_type(F_, g);
  tt_dtype_t dt = t ? t->dtype : TT_I64;
  bool narrow = tt_dtype_size(dt) < 4;
  tt_val_t a = v[0], b = v[1];
  if (narrow) a = tt_l_convert(F_, a, TT_I32), b = tt_l_convert(F_, b, TT_I32), safe = tt_l_convert(F_, safe, TT_I32);
  tt_val_t r = tt__ew_mul(F_, tt__ew_div(F_, a, safe), b);
  r = narrow ? tt_l_convert(F_, tt__sp_abs(F_, r), dt) : iabs(F_, r);
  return tt_l_select(F_, z, K(g, 0), r);
}

/* ---- ndtri, erfcx, log_ndtr --------------------------------------------------- */
/* Cephes ndtri: a rational function of (y - 1/2) in the middle, else of
 * 1 / sqrt(-2 log y) (two ranges), on the smaller tail (y or 1 - y). */
static const double k_nd_p0[] = {-5.99633501014107895267E1, 9.80010754185999661536E1,
                                 -5.66762857469070293439E1, 1.39312609387279679503E1,
                                 -1.23916583867381258016E0};
static const double k_nd_q0[] = {1.0, 1.95448858338141759834E0, 4.67627912898881538453E0,
                                 8.63602421390890590575E1, -2.25462687854119370527E2,
                                 2.00260212380060660359E2, -8.20372256168333339912E1,
                                 1.59056225126211695515E1, -1.18331621121330003142E0};
static const double k_nd_p1[] = {4.05544892305962419923E0, 3.15251094599893866154E1,
                                 5.71628192246421288162E1, 4.40805073893200834700E1,
                                 1.46849561928858024014E1, 2.18663306850790267539E0,
                                 -1.40256079171354495875E-1, -3.50424626827848203418E-2,
                                 -8.57456785154685413611E-4};
static const double k_nd_q1[] = {1.0, 1.57799883256466749731E1, 4.53907635128879210584E1,
                                 4.13172038254672030440E1, 1.50425385692907503408E1,
                                 2.50464946208309415979E0, -1.42182922854787788574E-1,
                                 -3.80806407691578277194E-2, -9.33259480895457427372E-4};
static const double k_nd_p2[] = {3.23774891776946035970E0, 6.91522889068984211695E0,
                                 3.93881025292474443415E0, 1.33303460815807542389E0,
                                 2.01485389549179081538E-1, 1.23716634817820021358E-2,
                                 3.01581553508235416007E-4, 2.65806974686737550832E-6,
                                 6.23974539184983293730E-9};
static const double k_nd_q2[] = {1.0, 6.02427039364742014255E0, 3.67983563856160859403E0,
                                 1.37702099489081330271E0, 2.16236993594496635890E-1,
                                 1.34204006088543189037E-2, 3.28014464682127739104E-4,
                                 2.89247864745380683936E-6, 6.79019408009981274425E-9};
#define NC(a) (int)(sizeof(a) / sizeof((a)[0]))

static tt_val_t b_ndtri(tt_lctx_t* c, const tt_val_t* v) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t y0 = v[0], one = tt__ew_k(f, y0, 1.0);
  const double e2 = 0.13533528323661269189; /* exp(-2) */
  bool d = tt_shlo_type(f, y0) && tt_shlo_type(f, y0)->dtype == TT_F64;
  double hi = d ? 1.0 - e2 : (double)(1.0f - (float)e2);
  tt_val_t upper = tt__ew_cmpk(f, "GT", y0, hi);
  tt_val_t y = tt_l_select(f, upper, tt__ew_sub(f, one, y0), y0);
  /* middle */
  tt_val_t ym = tt__ew_sub(f, y, tt__ew_k(f, y, 0.5)), y2 = tt__ew_mul(f, ym, ym);
  tt_val_t rat = tt__ew_div(f, tt__ew_mul(f, y2, tt__sp_horner(f, y2, k_nd_p0, NC(k_nd_p0))),
                            tt__sp_horner(f, y2, k_nd_q0, NC(k_nd_q0)));
  tt_val_t mid = tt__ew_mulk(f, tt__ew_add(f, ym, tt__ew_mul(f, ym, rat)), 2.50662827463100050242E0);
  /* tails */
  tt_val_t x = tt__sp_un(f, "stablehlo.sqrt", tt__ew_mulk(f, tt__sp_un(f, "stablehlo.log", y), -2.0));
  tt_val_t x0 = tt__ew_sub(f, x, tt__ew_div(f, tt__sp_un(f, "stablehlo.log", x), x));
  tt_val_t z = tt__ew_div(f, one, x);
  tt_val_t r1 = tt__ew_div(f, tt__ew_mul(f, z, tt__sp_horner(f, z, k_nd_p1, NC(k_nd_p1))),
                           tt__sp_horner(f, z, k_nd_q1, NC(k_nd_q1)));
  tt_val_t r2 = tt__ew_div(f, tt__ew_mul(f, z, tt__sp_horner(f, z, k_nd_p2, NC(k_nd_p2))),
                           tt__sp_horner(f, z, k_nd_q2, NC(k_nd_q2)));
  tt_val_t tail = tt__ew_sub(f, x0, tt_l_select(f, tt__ew_cmpk(f, "LT", x, 8.0), r1, r2));
  tail = tt_l_select(f, upper, tail, tt__sp_un(f, "stablehlo.negate", tail));
  tt_val_t r = tt_l_select(f, tt__ew_cmpk(f, "GT", y, e2), mid, tail);
  r = tt__sp_where_k(f, tt__sp_or(f, tt__ew_cmpk(f, "LT", y0, 0), tt__ew_cmpk(f, "GT", y0, 1.0)), NAN, r);
  r = tt__sp_where_k(f, tt__ew_cmpk(f, "EQ", y0, 1.0), INFINITY, r);
  return tt__sp_where_k(f, tt__ew_cmpk(f, "EQ", y0, 0), -INFINITY, r);
}

/* erfcx(x) = exp(x^2) erfc(x) for x >= 0, accurate in f64: the product
 * below 12 (erfc does not underflow yet), the asymptotic series
 * 1 / (x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k up to 50. */
static tt_val_t erfcx_pos_f64(tt_shlo_fn_t* f, tt_val_t x) {
  tt_val_t prod = tt__ew_mul(f, tt__sp_un(f, "stablehlo.exponential", tt__ew_mul(f, x, x)),
                             tt__sp_un(f, "chlo.erfc", x));
  tt_val_t inv = tt__ew_div(f, tt__ew_k(f, x, 1.0), tt__ew_mulk(f, tt__ew_mul(f, x, x), 2.0));
  tt_val_t sum = tt__ew_k(f, x, 0.0);
  for (int k = 12; k >= 1; k--) /* Horner in 1 / (2 x^2) */
    sum = tt__ew_mul(f, tt__ew_mulk(f, inv, -(2.0 * k - 1)), tt__ew_addk(f, sum, 1.0));
  tt_val_t asym = tt__ew_div(f, tt__ew_addk(f, sum, 1.0), tt__ew_mulk(f, x, sqrt(M_PI)));
  return tt_l_select(f, tt__ew_cmpk(f, "LT", x, 12.0), prod, asym);
}

/* PyTorch's piecewise erfcx: the same branch points and, where CPU's formula
 * is evaluated in the input dtype (x > 50, x < 0: 2 exp(x^2) - ...), the
 * same expression in that dtype; the smooth part in f64, rounded. */
static tt_val_t erfcx_of(tt_shlo_fn_t* f, tt_val_t x) {
  const tt_type_t* tp = tt_shlo_type(f, x);
  if (!tp) return TT_SHLO_INVALID;
  tt_dtype_t dt = tp->dtype;
  const double ispi = 0.56418958354775628694807945156;
  tt_val_t xd = tt_l_convert(f, x, TT_F64);
  tt_val_t mid = tt_l_convert(f, erfcx_pos_f64(f, tt__sp_abs(f, xd)), dt);
  tt_val_t x2 = tt__ew_mul(f, x, x);
  tt_val_t num = tt__ew_addk(f, tt__ew_mul(f, x2, tt__ew_addk(f, x2, 4.5)), 2.0);
  tt_val_t den = tt__ew_mul(f, x, tt__ew_addk(f, tt__ew_mul(f, x2, tt__ew_addk(f, x2, 5.0)), 3.75));
  tt_val_t cf = tt__ew_div(f, tt__ew_mulk(f, num, ispi), den);
  cf = tt_l_select(f, tt__ew_cmpk(f, "GT", x, 5e7), tt__ew_div(f, tt__ew_k(f, x, ispi), x), cf);
  tt_val_t pos = tt_l_select(f, tt__ew_cmpk(f, "GT", x, 50.0), cf, mid);
  tt_val_t e2 = tt__ew_mulk(f, tt__sp_un(f, "stablehlo.exponential", x2), 2.0);
  tt_val_t neg = tt_l_select(f, tt__ew_cmpk(f, "LT", x, -6.1), e2, tt__ew_sub(f, e2, mid));
  neg = tt__sp_where_k(f, tt__ew_cmpk(f, "LT", x, -26.7), INFINITY, neg);
  tt_val_t r = tt_l_select(f, tt__ew_cmpk(f, "GE", x, 0), pos, neg);
  return tt_l_select(f, tt__ew_isnan(f, x), x, r);
}
static tt_val_t b_erfcx(tt_lctx_t* c, const tt_val_t* v) { return erfcx_of(c->f, v[0]); }

/* log Phi(x): log(erfcx(-t) / 2) - t^2 below -1, else log1p(-erfc(t) / 2); t = x / sqrt 2 */
static tt_val_t b_log_ndtr(tt_lctx_t* c, const tt_val_t* v) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = v[0], t = tt__ew_mulk(f, x, M_SQRT1_2);
  tt_val_t lo = tt__ew_sub(f, tt__sp_un(f, "stablehlo.log", tt__ew_divk(f, erfcx_of(f, tt__sp_un(f, "stablehlo.negate", t)), 2.0)),
                           tt__ew_mul(f, t, t));
  tt_val_t hi = tt__sp_un(f, "stablehlo.log_plus_one",
                          tt__sp_un(f, "stablehlo.negate", tt__ew_divk(f, tt__sp_un(f, "chlo.erfc", t), 2.0)));
  return tt_l_select(f, tt__ew_cmpk(f, "LT", x, -1.0), lo, hi);
}

#define R(op) [op - TT_SP_POLY_END]
static const minfo_t k_misc[] = {
    R(TT_SP_NDTRI) = {b_ndtri, 1, MK_FLOAT},
    R(TT_SP_LOG_NDTR) = {b_log_ndtr, 1, MK_FLOAT},
    R(TT_SP_ERFCX) = {b_erfcx, 1, MK_FLOAT},
    R(TT_SP_ENTR) = {b_entr, 1, MK_FLOAT},
    R(TT_SP_SINC) = {b_sinc, 1, MK_FLOAT},
    R(TT_SP_ANGLE) = {b_angle, 1, MK_FLOAT},
    R(TT_SP_LOGIT) = {b_logit, 1, MK_FLOAT},
    R(TT_SP_LOGIT_BWD) = {b_logit_bwd, 2, MK_FLOAT},
    R(TT_SP_XLOG1PY) = {b_xlog1py, 2, MK_FLOAT},
    R(TT_SP_NEXTAFTER) = {b_nextafter, 2, MK_RAW},
    R(TT_SP_FREXP) = {b_frexp, 1, MK_RAW},
    R(TT_SP_GCD) = {b_gcd, 2, MK_INT},
    R(TT_SP_LCM) = {b_lcm, 2, MK_INT},
};
_Static_assert(sizeof(k_misc) / sizeof(k_misc[0]) == TT_SP_MISC_END - TT_SP_POLY_END,
               "one k_misc row per misc op");

tt_status_t tt__sp_lower_misc(tt_lctx_t* c) {
  int64_t p = c->op->param;
  if (p < TT_SP_POLY_END || p >= TT_SP_MISC_END || !k_misc[p - TT_SP_POLY_END].build)
    return tt_status_make(TT_INTERNAL, "%s: bad special param %lld", c->op->name, (long long)p);
  const minfo_t* m = &k_misc[p - TT_SP_POLY_END];
  int idx[2] = {0, 1};
  for (int i = 0; i < m->arity; i++)
    if (!tt__ew_has(c, i))
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a tensor or scalar argument %d",
                            c->op->name, i);
  tt_dtype_t pd = tt_l_promote(c, idx, m->arity);
  tt_val_t v[2];
  if (m->kind == MK_FLOAT) {
    if (p == TT_SP_ANGLE && tt_dtype_is_complex(pd)) return tt__cx_unary(c, TT_CX_ANGLE);
    if (p == TT_SP_SINC && tt_dtype_is_complex(pd)) return cx_sinc(c);
    tt__sp_float_args(c, idx, m->arity, v, NULL);
  } else {
    TT_RETURN_IF_ERROR(tt__ew_check(c, pd, m->kind == MK_RAW ? TT_EW_FLOAT : TT_EW_INT));
    for (int i = 0; i < m->arity; i++) v[i] = tt_l_arg_as(c, idx[i], pd, &c->out_types[0]);
  }
  return tt_l_set_out(c, 0, m->build(c, v));
}
