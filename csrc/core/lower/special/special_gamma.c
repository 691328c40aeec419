/* The special family, gamma-related functions: polygamma (digamma for n = 0,
 * trigamma for n = 1, n! zeta(n + 1, x) beyond), the Hurwitz zeta function
 * and mvlgamma. As PyTorch's CPU kernels: zeta runs in double for float and
 * double inputs (Euler-Maclaurin summation: direct terms until they are
 * negligible or a > 9, then up to 12 Bernoulli correction terms); trigamma
 * runs in the input's float dtype (reflection below 0.5, six recurrence steps,
 * then the asymptotic series). */
#include <math.h>

#include "special_shorthand.h"

#define AND(a, b) tt__sp_and(f, a, b)
#define OR(a, b) tt__sp_or(f, a, b)
#define NOT(a) tt__sp_not(f, a)

static const double k_machep = 1.11022302462515654042E-16;
/* Bernoulli-number denominators of the Euler-Maclaurin tail, (2k)! / B_2k */
static const double k_zeta_a[] = {
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
    -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
    1.8152105401943546773e17, -7.1661652561756670113e18};

/* ---- Hurwitz zeta, in f64 ---------------------------------------------------- */
enum { Z_I, Z_ANY, Z_X, Z_A, Z_B, Z_S, Z_LIVE, Z_DONE, Z_COUNT };

static tt_val_t pow_neg(tt_shlo_fn_t* f, tt_val_t a, tt_val_t x) {
  return tt_l_binary(f, "stablehlo.power", a, UN("negate", x));
}
/* converged: -eps s < b < eps s */
static tt_val_t small_term(tt_shlo_fn_t* f, tt_val_t b, tt_val_t s) {
  tt_val_t e = tt__ew_mulk(f, s, k_machep);
  return AND(tt_l_compare(f, "LT", UN("negate", e), b), tt_l_compare(f, "LT", b, e));
}
static tt_val_t zeta_cond(tt_shlo_fn_t* f, const tt_val_t* st, void* ud) { return st[Z_ANY]; }
static void zeta_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* nx, void* ud) {
  for (int i = 0; i < Z_COUNT; i++) nx[i] = st[i];
  tt_val_t live = st[Z_LIVE];
  tt_val_t a = ADD(st[Z_A], K(st[Z_A], 1.0));
  tt_val_t b = pow_neg(f, a, st[Z_X]);
  tt_val_t s = ADD(st[Z_S], b);
  nx[Z_A] = SEL(live, a, st[Z_A]);
  nx[Z_B] = SEL(live, b, st[Z_B]);
  nx[Z_S] = SEL(live, s, st[Z_S]);
  nx[Z_I] = ADD(st[Z_I], K(st[Z_I], 1.0));
  tt_val_t conv = AND(live, small_term(f, b, s));
  nx[Z_DONE] = OR(st[Z_DONE], conv);
  const tt_type_t* tp = tt_shlo_type(f, a);
  if (!tp) return;
  tt_type_t t = *tp; /* the value table may move as ops are added */
  tt_val_t early = tt__ew_cmpk(f, "LT", nx[Z_I], 9.0);
  tt_val_t more = tt_lt_splat(f, early, t.rank, t.dims);
  more = OR(more, CMP("LE", a, 9.0));
  nx[Z_LIVE] = AND(AND(live, NOT(conv)), more);
  nx[Z_ANY] = tt__sp_any(f, nx[Z_LIVE]);
}

/* zeta(x, q) for f64 x, q of one shape. */
static tt_val_t zeta_f64(tt_shlo_fn_t* f, tt_val_t x, tt_val_t q) {
  const tt_type_t* t_p = tt_shlo_type(f, x);
  if (!t_p) return TT_SHLO_INVALID;
  const tt_type_t t_copy = *t_p, *t = &t_copy; /* the table may move */
  /* the special values, decided before any summation */
  tt_val_t qint = tt_l_compare(f, "EQ", q, UN("floor", q));
  tt_val_t xint = tt_l_compare(f, "EQ", x, UN("floor", x));
  tt_val_t qneg = CMP("LE", q, 0);
  /* Cephes' order: x == 1, x < 1, then q <= 0 (a NaN x reaches the last: inf
   * for an integer q) */
  tt_val_t ge1 = NOT(CMP("LT", x, 1.0));
  tt_val_t is_inf = OR(CMP("EQ", x, 1.0), AND(AND(ge1, qneg), qint));
  tt_val_t is_nan = OR(CMP("LT", x, 1.0), AND(AND(AND(ge1, qneg), NOT(qint)), NOT(xint)));
  is_nan = OR(is_nan, AND(tt__ew_isnan(f, x), tt__sp_not(f, is_inf)));
  tt_val_t special = OR(is_inf, is_nan);

  tt_val_t st[Z_COUNT];
  st[Z_I] = tt_lt_const0(f, TT_F64, 0.0);
  st[Z_X] = x;
  st[Z_A] = q;
  st[Z_B] = K(x, 0.0);
  st[Z_S] = pow_neg(f, q, x);
  st[Z_LIVE] = NOT(special);
  st[Z_DONE] = tt_l_full(f, TT_BOOL, t->rank, t->dims, 0);
  st[Z_ANY] = tt__sp_any(f, st[Z_LIVE]);
  tt_l_while(f, st, Z_COUNT, zeta_cond, zeta_body, NULL);

  /* the Euler-Maclaurin tail for the elements that did not converge */
  tt_val_t done = st[Z_DONE], s = st[Z_S], b = st[Z_B], w = st[Z_A];
  tt_val_t one = K(x, 1.0);
  s = ADD(s, DIV(MUL(b, w), SUB(x, one)));
  s = SUB(s, tt__ew_mulk(f, b, 0.5));
  tt_val_t a = one, k = K(x, 0.0);
  for (int i = 0; i < 12; i++) {
    a = MUL(a, ADD(x, k));
    b = DIV(b, w);
    tt_val_t term = tt__ew_divk(f, MUL(a, b), k_zeta_a[i]);
    tt_val_t ns = ADD(s, term);
    s = SEL(done, s, ns);
    tt_val_t rel = tt__sp_abs(f, DIV(term, ns));
    done = OR(done, CMP("LT", rel, k_machep));
    k = ADD(k, one);
    a = MUL(a, ADD(x, k));
    b = DIV(b, w);
    k = ADD(k, one);
  }
  tt_val_t r = SEL(st[Z_DONE], st[Z_S], s);
  r = tt__sp_where_k(f, is_nan, NAN, r);
  return tt__sp_where_k(f, is_inf, INFINITY, r);
}

/* ---- polygamma ------------------------------------------------------------------ */
/* digamma as the unary family lowers it: chlo.digamma, with copysign(inf, -x) at 0 */
static tt_val_t digamma(tt_shlo_fn_t* f, tt_val_t x) {
  tt_val_t r = tt__sp_un(f, "chlo.digamma", x);
  tt_val_t inf = SEL(tt__ew_signbit(f, x), K(x, INFINITY), K(x, -INFINITY));
  return SEL(CMP("EQ", x, 0), inf, r);
}

static tt_val_t trigamma(tt_shlo_fn_t* f, tt_val_t x, bool f64) {
  double pi2 = f64 ? M_PI * M_PI : (double)((float)M_PI * (float)M_PI);
  tt_val_t refl = CMP("LT", x, 0.5);
  tt_val_t sp = UN("sine", tt__ew_mulk(f, x, M_PI));
  tt_val_t result = SEL(refl, UN("negate", tt__ew_div(f, K(x, pi2), MUL(sp, sp))), K(x, 0.0));
  x = SEL(refl, SUB(K(x, 1.0), x), x);
  for (int i = 0; i < 6; i++) {
    result = ADD(result, DIV(K(x, 1.0), MUL(x, x)));
    x = ADD(x, K(x, 1.0));
  }
  tt_val_t ixx = DIV(K(x, 1.0), MUL(x, x));
  double c6 = f64 ? 1.0 / 6 : (double)(1.f / 6), c30 = f64 ? 1.0 / 30 : (double)(1.f / 30);
  double c42 = f64 ? 1.0 / 42 : (double)(1.f / 42);
  tt_val_t poly = MUL(ixx, SUB(K(x, c6), MUL(ixx, SUB(K(x, c30), MUL(ixx, K(x, c42))))));
  tt_val_t tail = DIV(ADD(ADD(K(x, 1.0), DIV(K(x, 1.0), ADD(x, x))), poly), x);
  result = ADD(result, tail);
  return SEL(refl, UN("negate", result), result);
}

static tt_status_t lower_polygamma(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  /* polygamma(int n, Tensor self) / polygamma_(Tensor self, int n) */
  int ti = c->args[0].kind == TT_ARG_INT ? 1 : 0, ni = 1 - ti;
  if (c->args[ni].kind != TT_ARG_INT || !tt__ew_has(c, ti))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected (n, self)", c->op->name);
  int64_t n = c->args[ni].i;
  if (n < 0)
    return tt_status_make(TT_FAILED_PRECONDITION, "%s: polygamma(n, x) does not support negative n.",
                          c->op->name);
  tt_val_t x;
  tt__sp_float_args(c, &ti, 1, &x, NULL);
  const tt_type_t* t_p = tt_shlo_type(f, x);
  if (!t_p) return tt_status_make(TT_INTERNAL, "%s: bad operand", c->op->name);
  const tt_type_t t_copy = *t_p, *t = &t_copy; /* the table may move */
  bool f64 = t->dtype == TT_F64;
  if (n == 0) return tt_l_set_out(c, 0, digamma(f, x));
  if (n == 1) return tt_l_set_out(c, 0, trigamma(f, x, f64));
  /* (-1)^(n+1) exp(lgamma(n + 1)) zeta(n + 1, x), the factor in the input's dtype */
  double fact = f64 ? exp(lgamma((double)n + 1.0)) : (double)expf(lgammaf((float)n + 1.0f));
  double sign = (n % 2) ? 1.0 : -1.0;
  tt_val_t xd = tt_l_convert(f, x, TT_F64);
  tt_val_t z = tt_l_convert(f, zeta_f64(f, tt__ew_k(f, xd, (double)(n + 1)), xd), t->dtype);
  return tt_l_set_out(c, 0, MUL(K(x, sign * fact), z));
}

static tt_status_t lower_zeta(tt_lctx_t* c) {
  int idx[2] = {0, 1};
  if (!tt__ew_has(c, 0) || !tt__ew_has(c, 1))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected (x, q)", c->op->name);
  tt_val_t v[2];
  tt__sp_float_args(c, idx, 2, v, NULL);
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* t_p = tt_shlo_type(f, v[0]);
  if (!t_p) return tt_status_make(TT_INTERNAL, "%s: bad operand", c->op->name);
  const tt_type_t t_copy = *t_p, *t = &t_copy; /* the table may move */
  tt_val_t z = zeta_f64(f, tt_l_convert(f, v[0], TT_F64), tt_l_convert(f, v[1], TT_F64));
  return tt_l_set_out(c, 0, tt_l_convert(f, z, t->dtype));
}

/* mvlgamma(x, p) = sum_{j < p} lgamma(x - j / 2) + p (p - 1) / 4 log(pi), the
 * terms summed from j = p - 1 down as CPU's arange + sum does; every element
 * must exceed (p - 1) / 2 (checked on the device, raised at the next sync). */
static tt_status_t lower_mvlgamma(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  if (c->nargs < 2 || c->args[1].kind != TT_ARG_INT || !tt__ew_has(c, 0))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected (self, p)", c->op->name);
  int64_t p = c->args[1].i;
  if (p < 1) /* CPU raises these as RuntimeError */
    return tt_status_make(TT_FAILED_PRECONDITION, "%s: p has to be greater than or equal to 1",
                          c->op->name);
  int idx = 0;
  tt_val_t x;
  tt__sp_float_args(c, &idx, 1, &x, NULL);
  tt_val_t bad = tt__sp_any(f, NOT(CMP("GT", x, 0.5 * (double)(p - 1))));
  tt_shlo_add_check(f, bad, TT_FAILED_PRECONDITION, "All elements must be greater than (p-1)/2");
  tt_val_t sum = TT_SHLO_INVALID;
  for (int64_t j = p - 1; j >= 0; j--) {
    tt_val_t term = tt__sp_un(f, "chlo.lgamma", tt__ew_addk(f, x, -0.5 * (double)j));
    sum = j == p - 1 ? term : ADD(sum, term);
  }
  sum = tt__ew_addk(f, sum, (double)(p * (p - 1)) * log(M_PI) / 4.0);
  return tt_l_set_out(c, 0, sum);
}

tt_status_t tt__sp_lower_gamma(tt_lctx_t* c) {
  switch (c->op->param) {
    case TT_SP_POLYGAMMA: return lower_polygamma(c);
    case TT_SP_ZETA: return lower_zeta(c);
    case TT_SP_MVLGAMMA: return lower_mvlgamma(c);
    default:
      return tt_status_make(TT_INTERNAL, "%s: bad special param %lld", c->op->name,
                            (long long)c->op->param);
  }
}
