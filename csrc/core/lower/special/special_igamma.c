/* The special family: the regularized incomplete gamma functions
 * igamma(a, x) = P(a, x) and igammac(a, x) = Q(a, x) = 1 - P(a, x), as
 * PyTorch's CPU kernels compute them (Cephes' igam / igamc with the
 * asymptotic regime of DiDonato and Morris and Temme):
 *  - boundary values first (a or x negative: NaN; a = 0; x = 0; a or x inf);
 *  - a > 20 with x near a (|x - a| / a < 0.3 for a < 200, < 4.5 / sqrt(a)
 *    beyond): Temme's uniform expansion (DLMF 8.12.3/8.12.4), its series in
 *    1/a summed until it stops decreasing or becomes negligible;
 *  - else the power series of P (DLMF 8.11.4), the series of Q for small x
 *    (DLMF 8.7.3) or the continued fraction of Q (DLMF 8.9.2), each iterated
 *    until its term is negligible (at most 2000 steps), the other function as
 *    1 minus it, chosen by the same tests on a and x as CPU;
 *  - the prefactor x^a e^-x / Gamma(a) through the Lanczos sum when x is
 *    near a (no cancellation between a log x and lgamma a).
 * Every element evaluates every regime it may need: the three iterations are
 * stablehlo.while loops over the elements that chose them (a loop ends when
 * its last element converges). Computed in f64 for f64, else in f32; where
 * CPU's f32 kernel mixes in double literals (thresholds such as x > 1.1,
 * the asymptotic correction term) the same steps run in f64 here, so that
 * both take the same branch. */
#include <math.h>
#include <string.h>

#include "special_igamma_coef.h"
#include "special_shorthand.h"

#define AND(a, b) tt__sp_and(f, a, b)
#define OR(a, b) tt__sp_or(f, a, b)
#define NOT(a) tt__sp_not(f, a)
#define ABS(a) tt__sp_abs(f, a)
#define NEG(a) UN("negate", a)

enum { MAXITER = 2000 };
static const double k_lanczos_g = 6.024680040776729583740234375;
/* Lanczos sum scaled by exp(-g) (13 terms): numerator, and the denominator
 * x (x + 1) ... (x + 11), both from the highest power of x down. */
static const double k_lz_num[13] = {
    0.006061842346248906525783753964555936883222, 0.5098416655656676188125178644804694509993,
    19.51992788247617482847860966235652136208,   449.9445569063168119446858607650988409623,
    6955.999602515376140356310115515198987526,   75999.29304014542649875303443598909137092,
    601859.6171681098786670226533699352302507,   3481712.15498064590882071018964774556468,
    14605578.08768506808414169982791359218571,   43338889.32467613834773723740590533316085,
    86363131.28813859145546927288977868422342,   103794043.1163445451906271053616070238554,
    56906521.91347156388090791033559122686859};
static const double k_lz_den[13] = {1.,        66.,        1925.,       32670.,      357423.,
                                    2637558.,  13339535.,  45995730.,   105258076.,  150917976.,
                                    120543840., 39916800., 0.};

/* The per-dtype constants of CPU's kernels. */
typedef struct ig {
  tt_type_t t; /* the elements' type (compute dtype) */
  bool f64;
  double eps, maxlog, big, biginv;
} ig_t;

static void ig_init(ig_t* g, const tt_type_t* t) {
  g->t = *t;
  g->f64 = t->dtype == TT_F64;
  g->eps = g->f64 ? 1.11022302462515654042E-16 : 5.9604644775390625E-8;
  g->maxlog = g->f64 ? 7.09782712893383996843E2 : 88.72283905206835;
  g->big = g->f64 ? 4.503599627370496e15 : 16777216.;
  g->biginv = g->f64 ? 2.22044604925031308085e-16 : 5.9604644775390625E-8;
}

static tt_val_t splat(tt_shlo_fn_t* f, tt_val_t v0d, const tt_type_t* t) {
  return tt_lt_splat(f, v0d, t->rank, t->dims);
}
static tt_val_t to64(tt_shlo_fn_t* f, tt_val_t v) { return tt_l_convert(f, v, TT_F64); }
/* a <dir> k, compared in f64 (CPU's f32 kernel compares against double literals) */
static tt_val_t cmp64k(tt_shlo_fn_t* f, const char* dir, tt_val_t a, double k) {
  return CMP(dir, to64(f, a), k);
}
/* 0-d i1: counter + 1 < limit */
static tt_val_t below(tt_shlo_fn_t* f, tt_val_t i1, int64_t limit) {
  return tt_l_compare(f, "LT", i1, tt_lt_const0(f, TT_I64, (double)limit));
}
static tt_val_t inc(tt_shlo_fn_t* f, tt_val_t i) {
  return tt_l_binary(f, "stablehlo.add", i, tt_lt_const0(f, TT_I64, 1.0));
}
static const tt_type_t* type_of(tt_shlo_fn_t* f, tt_val_t v, tt_type_t* keep) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return NULL;
  *keep = *t; /* the value table may move as ops are added */
  return keep;
}

/* ---- lgamma without chlo.lgamma's absolute error near its zeros ----------------------- */
/* lgamma(2 + e) for |e| <= 1/2, by its Taylor series */
static tt_val_t lgamma2(tt_shlo_fn_t* f, tt_val_t e) {
  double c[TT__SP_LGAMMA2_N];
  for (int i = 0; i < TT__SP_LGAMMA2_N; i++) c[i] = tt__sp_lgamma2[TT__SP_LGAMMA2_N - 1 - i];
  return MUL(e, tt__sp_horner(f, e, c, TT__SP_LGAMMA2_N));
}

/* lgamma(z) for z > 0. chlo.lgamma is off by up to ~2e-6 (f32) / ~2e-15
 * (f64) absolutely near z = 1 and 2, where lgamma is 0; below 2.5 the
 * recurrence moves z next to 2 for the series. */
static tt_val_t lgamma_pos(tt_shlo_fn_t* f, tt_val_t z) {
  /* z as rounded (CPU's lgamma(1 + a) sees the rounded 1 + a): XLA would
   * otherwise fold (a + 1) - 1 into a */
  z = tt__ew_opaque(f, z);
  tt_val_t lo = SUB(SUB(lgamma2(f, z), UN("log_plus_one", z)), UN("log", z));
  tt_val_t e1 = tt__ew_addk(f, z, -1.0); /* exact here; log1p(e1) pairs with it */
  tt_val_t mid = SUB(lgamma2(f, e1), UN("log_plus_one", e1));
  tt_val_t hi = lgamma2(f, tt__ew_addk(f, z, -2.0));
  tt_val_t r = SEL(CMP("LT", z, 2.5), hi, tt__sp_un(f, "chlo.lgamma", z));
  r = SEL(CMP("LT", z, 1.5), mid, r);
  return SEL(CMP("LT", z, 0.5), lo, r);
}

/* ---- the prefactor x^a e^-x / Gamma(a) ---------------------------------------------- */
/* The Lanczos rational function at a > 0: in powers of 1/a above 1. */
static tt_val_t lanczos(tt_shlo_fn_t* f, tt_val_t a) {
  double nr[13], dr[13];
  for (int i = 0; i < 13; i++) nr[i] = k_lz_num[12 - i], dr[i] = k_lz_den[12 - i];
  tt_val_t ia = DIV(K(a, 1.0), a);
  tt_val_t lo = DIV(tt__sp_horner(f, a, k_lz_num, 13), tt__sp_horner(f, a, k_lz_den, 13));
  tt_val_t hi = DIV(tt__sp_horner(f, ia, nr, 13), tt__sp_horner(f, ia, dr, 13));
  return SEL(CMP("GT", ABS(a), 1.0), hi, lo);
}

static tt_val_t prefactor(tt_shlo_fn_t* f, tt_val_t a, tt_val_t x, const ig_t* g) {
  /* far from a: exp(a log x - x - lgamma a), 0 below -MAXLOG */
  tt_val_t ax = SUB(SUB(MUL(a, UN("log", x)), x), lgamma_pos(f, a));
  tt_val_t far_v = SEL(CMP("LT", ax, -g->maxlog), K(a, 0.0), UN("exponential", ax));
  tt_val_t far = tt_l_compare(f, "GT", to64(f, ABS(SUB(a, x))), tt__ew_mulk(f, to64(f, ABS(a)), 0.4));
  /* near: sqrt(fac / e) / lanczos(a) times the remaining power */
  tt_val_t fac = tt__ew_addk(f, tt__ew_addk(f, a, k_lanczos_g), -0.5);
  tt_val_t res = DIV(UN("sqrt", tt__ew_divk(f, fac, 2.718281828459045)), lanczos(f, a));
  tt_val_t small_v = MUL(res, MUL(UN("exponential", SUB(a, x)),
                                  tt_l_binary(f, "stablehlo.power", DIV(x, fac), a)));
  tt_val_t num = tt__ew_addk(f, tt__ew_addk(f, SUB(x, a), -k_lanczos_g), 0.5);
  tt_val_t nf = DIV(num, fac);
  tt_val_t e1 = to64(f, MUL(a, SUB(UN("log_plus_one", nf), nf)));
  tt_val_t e2 = DIV(tt__ew_mulk(f, to64(f, x), 0.5 - (g->f64 ? k_lanczos_g : (double)(float)k_lanczos_g)),
                    to64(f, fac));
  tt_val_t large_v = tt_l_convert(f, MUL(to64(f, res), UN("exponential", ADD(e1, e2))), g->t.dtype);
  tt_val_t near_v = SEL(AND(CMP("LT", a, 200.0), CMP("LT", x, 200.0)), small_v, large_v);
  return SEL(far, far_v, near_v);
}

/* ---- the series of P: sum x^n / (a + 1) ... (a + n) ---------------------------------- */
enum { PS_I, PS_ANY, PS_LIVE, PS_R, PS_C, PS_ANS, PS_X, PS_N };

static tt_val_t live_next(tt_shlo_fn_t* f, tt_val_t live, tt_val_t conv, tt_val_t more) {
  tt_type_t t;
  if (!type_of(f, live, &t)) return TT_SHLO_INVALID;
  return AND(AND(live, NOT(conv)), splat(f, more, &t));
}
static tt_val_t any_cond(tt_shlo_fn_t* f, const tt_val_t* st, void* ud) {
  (void)ud;
  return st[1]; /* every loop here carries (counter, any, live, ...) */
}

static void pser_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* nx, void* ud) {
  const ig_t* g = ud;
  tt_val_t live = st[PS_LIVE];
  tt_val_t r = tt__ew_addk(f, st[PS_R], 1.0);
  tt_val_t c = MUL(st[PS_C], DIV(st[PS_X], r));
  tt_val_t ans = ADD(st[PS_ANS], c);
  nx[PS_R] = SEL(live, r, st[PS_R]);
  nx[PS_C] = SEL(live, c, st[PS_C]);
  nx[PS_ANS] = SEL(live, ans, st[PS_ANS]);
  nx[PS_I] = inc(f, st[PS_I]);
  tt_val_t conv = tt_l_compare(f, "LE", c, tt__ew_mulk(f, ans, g->eps));
  nx[PS_LIVE] = live_next(f, live, conv, below(f, nx[PS_I], MAXITER));
  nx[PS_ANY] = tt__sp_any(f, nx[PS_LIVE]);
}

/* P(a, x) by its series where `need`; ax the prefactor. */
static tt_val_t p_series(tt_shlo_fn_t* f, tt_val_t a, tt_val_t x, tt_val_t ax, tt_val_t need,
                         const ig_t* g) {
  tt_val_t zero = CMP("EQ", ax, 0.0);
  tt_val_t st[PS_N];
  st[PS_I] = tt_lt_const0(f, TT_I64, 0.0);
  st[PS_LIVE] = AND(need, NOT(zero));
  st[PS_ANY] = tt__sp_any(f, st[PS_LIVE]);
  st[PS_R] = a;
  st[PS_C] = K(a, 1.0);
  st[PS_ANS] = K(a, 1.0);
  st[PS_X] = x;
  tt_l_while(f, st, PS_N, any_cond, pser_body, (void*)g);
  return SEL(zero, K(a, 0.0), DIV(MUL(st[PS_ANS], ax), a));
}

/* ---- the series of Q for small x: sum (-x)^n / (n! (a + n)) ---------------------------- */
enum { QS_I, QS_ANY, QS_LIVE, QS_FAC, QS_SUM, QS_X, QS_A, QS_N };

static void qser_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* nx, void* ud) {
  const ig_t* g = ud;
  tt_type_t t;
  if (!type_of(f, st[QS_X], &t)) return;
  tt_val_t live = st[QS_LIVE];
  nx[QS_I] = inc(f, st[QS_I]); /* n = 1, 2, ... */
  tt_val_t n = splat(f, tt_l_convert(f, nx[QS_I], t.dtype), &t);
  tt_val_t fac = MUL(st[QS_FAC], DIV(NEG(st[QS_X]), n));
  tt_val_t term = DIV(fac, ADD(st[QS_A], n));
  tt_val_t sum = ADD(st[QS_SUM], term);
  nx[QS_FAC] = SEL(live, fac, st[QS_FAC]);
  nx[QS_SUM] = SEL(live, sum, st[QS_SUM]);
  tt_val_t conv = tt_l_compare(f, "LE", ABS(term), tt__ew_mulk(f, ABS(sum), g->eps));
  nx[QS_LIVE] = live_next(f, live, conv, below(f, inc(f, nx[QS_I]), MAXITER));
  nx[QS_ANY] = tt__sp_any(f, nx[QS_LIVE]);
}

static tt_val_t q_series(tt_shlo_fn_t* f, tt_val_t a, tt_val_t x, tt_val_t need, const ig_t* g) {
  tt_val_t st[QS_N];
  st[QS_I] = tt_lt_const0(f, TT_I64, 0.0);
  st[QS_LIVE] = need;
  st[QS_ANY] = tt__sp_any(f, need);
  st[QS_FAC] = K(a, 1.0);
  st[QS_SUM] = K(a, 0.0);
  st[QS_X] = x;
  st[QS_A] = a;
  tt_l_while(f, st, QS_N, any_cond, qser_body, (void*)g);
  tt_val_t lx = UN("log", x);
  tt_val_t alx = MUL(a, lx);
  tt_val_t term = NEG(UN("exponential_minus_one",
                         SUB(alx, lgamma_pos(f, tt__ew_addk(f, a, 1.0)))));
  tt_val_t e = UN("exponential", SUB(alx, lgamma_pos(f, a)));
  return SUB(term, MUL(e, st[QS_SUM]));
}

/* ---- the continued fraction of Q --------------------------------------------------- */
enum { CF_I, CF_ANY, CF_LIVE, CF_C, CF_Y, CF_Z, CF_ANS, CF_PKM1, CF_PKM2, CF_QKM1, CF_QKM2, CF_N };

static void cf_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* nx, void* ud) {
  const ig_t* g = ud;
  tt_val_t live = st[CF_LIVE];
  tt_val_t c = tt__ew_addk(f, st[CF_C], 1.0);
  tt_val_t y = tt__ew_addk(f, st[CF_Y], 1.0);
  tt_val_t z = tt__ew_addk(f, st[CF_Z], 2.0);
  tt_val_t yc = MUL(y, c);
  tt_val_t pk = SUB(MUL(st[CF_PKM1], z), MUL(st[CF_PKM2], yc));
  tt_val_t qk = SUB(MUL(st[CF_QKM1], z), MUL(st[CF_QKM2], yc));
  tt_val_t nz = CMP("NE", qk, 0.0);
  tt_val_t r = DIV(pk, qk);
  tt_val_t t = SEL(nz, ABS(DIV(SUB(st[CF_ANS], r), r)), K(r, 1.0));
  tt_val_t ans = SEL(nz, r, st[CF_ANS]);
  tt_val_t p[4] = {pk, st[CF_PKM1], qk, st[CF_QKM1]}; /* pkm1, pkm2, qkm1, qkm2 */
  tt_val_t big = CMP("GT", ABS(pk), g->big);
  const int slot[4] = {CF_PKM1, CF_PKM2, CF_QKM1, CF_QKM2};
  for (int i = 0; i < 4; i++) {
    tt_val_t v = SEL(big, tt__ew_mulk(f, p[i], g->biginv), p[i]);
    nx[slot[i]] = SEL(live, v, st[slot[i]]);
  }
  nx[CF_C] = SEL(live, c, st[CF_C]);
  nx[CF_Y] = SEL(live, y, st[CF_Y]);
  nx[CF_Z] = SEL(live, z, st[CF_Z]);
  nx[CF_ANS] = SEL(live, ans, st[CF_ANS]);
  nx[CF_I] = inc(f, st[CF_I]);
  nx[CF_LIVE] = live_next(f, live, CMP("LE", t, g->eps), below(f, nx[CF_I], MAXITER));
  nx[CF_ANY] = tt__sp_any(f, nx[CF_LIVE]);
}

static tt_val_t q_fraction(tt_shlo_fn_t* f, tt_val_t a, tt_val_t x, tt_val_t ax, tt_val_t need,
                           const ig_t* g) {
  tt_val_t zero = CMP("EQ", ax, 0.0);
  tt_val_t st[CF_N];
  tt_val_t y = SUB(K(a, 1.0), a);
  tt_val_t z = tt__ew_addk(f, ADD(x, y), 1.0);
  st[CF_I] = tt_lt_const0(f, TT_I64, 0.0);
  st[CF_LIVE] = AND(need, NOT(zero));
  st[CF_ANY] = tt__sp_any(f, st[CF_LIVE]);
  st[CF_C] = K(a, 0.0);
  st[CF_Y] = y;
  st[CF_Z] = z;
  st[CF_PKM2] = K(a, 1.0);
  st[CF_QKM2] = x;
  st[CF_PKM1] = tt__ew_addk(f, x, 1.0);
  st[CF_QKM1] = MUL(z, x);
  st[CF_ANS] = DIV(st[CF_PKM1], st[CF_QKM1]);
  tt_l_while(f, st, CF_N, any_cond, cf_body, (void*)g);
  return SEL(zero, K(a, 0.0), MUL(st[CF_ANS], ax));
}

/* ---- Temme's expansion for large a, x near a ------------------------------------------ */
enum { AS_K, AS_ANY, AS_LIVE, AS_ETA, AS_A, AS_SUM, AS_OLD, AS_AFAC, AS_TAB, AS_N };

/* d[k][n] as a 0-d value from the (K, N) table. */
static tt_val_t coef(tt_shlo_fn_t* f, tt_val_t tab, tt_val_t k, int n, tt_dtype_t dt) {
  tt_val_t ops[3] = {tab, k, tt_lt_const0(f, TT_I64, (double)n)};
  int64_t one[2] = {1, 1};
  tt_type_t t = tt_type_make(dt, 2, one);
  tt_val_t r = tt_shlo_op(f, "stablehlo.dynamic_slice", ops, 3, &t, "slice_sizes = array<i64: 1, 1>");
  return tt_l_reshape(f, r, 0, NULL);
}

static void asym_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* nx, void* ud) {
  const ig_t* g = ud;
  tt_type_t t;
  if (!type_of(f, st[AS_ETA], &t)) return;
  tt_val_t live = st[AS_LIVE], eta = st[AS_ETA], k = st[AS_K];
  /* c_k(eta), its terms added until one is negligible */
  tt_val_t ck = splat(f, coef(f, st[AS_TAB], k, 0, t.dtype), &t);
  tt_val_t ep = K(eta, 1.0), stop = tt_l_full(f, TT_BOOL, t.rank, t.dims, 0);
  for (int n = 1; n < TT__SP_TEMME_N; n++) {
    ep = MUL(ep, eta);
    tt_val_t term = MUL(splat(f, coef(f, st[AS_TAB], k, n, t.dtype), &t), ep);
    tt_val_t nck = ADD(ck, term);
    ck = SEL(stop, ck, nck);
    stop = OR(stop, tt_l_compare(f, "LT", ABS(term), tt__ew_mulk(f, ABS(nck), g->eps)));
  }
  tt_val_t term = MUL(ck, st[AS_AFAC]);
  tt_val_t aterm = ABS(term);
  tt_val_t grows = tt_l_compare(f, "GT", aterm, st[AS_OLD]); /* the series diverges from here */
  tt_val_t sum = ADD(st[AS_SUM], term);
  tt_val_t add = AND(live, NOT(grows));
  nx[AS_SUM] = SEL(add, sum, st[AS_SUM]);
  tt_val_t tiny = tt_l_compare(f, "LT", aterm, tt__ew_mulk(f, ABS(sum), g->eps));
  nx[AS_OLD] = SEL(live, aterm, st[AS_OLD]);
  nx[AS_AFAC] = SEL(live, DIV(st[AS_AFAC], st[AS_A]), st[AS_AFAC]);
  nx[AS_K] = inc(f, k);
  nx[AS_LIVE] = live_next(f, live, OR(grows, tiny), below(f, nx[AS_K], TT__SP_TEMME_K));
  nx[AS_ANY] = tt__sp_any(f, nx[AS_LIVE]);
}

/* The table in the compute dtype, bit-exact: its bit patterns as integers. */
static tt_val_t temme_table(tt_shlo_fn_t* f, tt_dtype_t dt) {
  enum { NT = TT__SP_TEMME_K * TT__SP_TEMME_N };
  int64_t bits[NT];
  for (int i = 0; i < NT; i++) {
    double d = tt__sp_temme[i / TT__SP_TEMME_N][i % TT__SP_TEMME_N];
    if (dt == TT_F64) {
      memcpy(&bits[i], &d, sizeof d);
    } else {
      float s = (float)d;
      int32_t b;
      memcpy(&b, &s, sizeof s);
      bits[i] = b;
    }
  }
  tt_val_t v = tt_shlo_const_i64s(f, bits, NT);
  if (dt != TT_F64) v = tt_l_convert(f, v, TT_I32);
  int64_t d1[1] = {NT}, d2[2] = {TT__SP_TEMME_K, TT__SP_TEMME_N};
  tt_type_t ft = tt_type_make(dt, 1, d1);
  v = tt_shlo_op(f, "stablehlo.bitcast_convert", &v, 1, &ft, NULL);
  return tt_l_reshape(f, v, 2, d2);
}

/* P (igam) or Q where `need`: erfc(-+eta sqrt(a/2)) / 2 -+ R. */
static tt_val_t asymptotic(tt_shlo_fn_t* f, tt_val_t a, tt_val_t x, tt_val_t need, bool igam,
                           const ig_t* g) {
  tt_val_t lambda = DIV(x, a), sigma = DIV(SUB(x, a), a);
  tt_val_t e = UN("sqrt", tt__ew_mulk(f, SUB(UN("log_plus_one", sigma), sigma), -2.0));
  tt_val_t eta = SEL(CMP("GT", lambda, 1.0), e, SEL(CMP("LT", lambda, 1.0), NEG(e), K(e, 0.0)));
  double sgn = igam ? -1.0 : 1.0;
  tt_val_t res = tt__ew_mulk(f, tt__sp_un(f, "chlo.erfc", MUL(tt__ew_mulk(f, eta, sgn),
                                                             UN("sqrt", tt__ew_divk(f, a, 2.0)))),
                             0.5);
  tt_val_t st[AS_N];
  st[AS_K] = tt_lt_const0(f, TT_I64, 0.0);
  st[AS_LIVE] = need;
  st[AS_ANY] = tt__sp_any(f, need);
  st[AS_ETA] = eta;
  st[AS_A] = a;
  st[AS_SUM] = K(a, 0.0);
  st[AS_OLD] = K(a, INFINITY);
  st[AS_AFAC] = K(a, 1.0);
  st[AS_TAB] = temme_table(f, g->t.dtype);
  tt_l_while(f, st, AS_N, any_cond, asym_body, (void*)g);
  /* CPU adds this term in double, with pi rounded to float: sqrt(2 pi a) in
   * the compute dtype, the rest in double */
  double two_pi_f = 2.0 * (double)(float)M_PI;
  tt_val_t a64 = to64(f, a), eta64 = to64(f, eta);
  tt_val_t ex = UN("exponential", MUL(MUL(tt__ew_mulk(f, a64, -0.5), eta64), eta64));
  tt_val_t den = to64(f, UN("sqrt", tt__ew_mulk(f, a, two_pi_f)));
  tt_val_t corr = DIV(MUL(tt__ew_mulk(f, ex, sgn), to64(f, st[AS_SUM])), den);
  return tt_l_convert(f, ADD(to64(f, res), corr), g->t.dtype);
}

/* ---- the lowering -------------------------------------------------------------------- */
static tt_status_t lower_igamma(tt_lctx_t* c, bool upper) {
  tt_shlo_fn_t* f = c->f;
  int idx[2] = {0, 1};
  if (!tt__ew_has(c, 0) || !tt__ew_has(c, 1))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected (self, other)", c->op->name);
  tt_val_t v[2];
  tt__sp_float_args(c, idx, 2, v, NULL);
  tt_val_t a = v[0], x = v[1];
  tt_type_t t;
  if (!type_of(f, a, &t)) return tt_status_make(TT_INTERNAL, "%s: bad operand", c->op->name);
  ig_t g;
  ig_init(&g, &t);

  /* the boundary values, in CPU's order (a later rule yields to an earlier one) */
  tt_val_t neg = OR(CMP("LT", x, 0.0), CMP("LT", a, 0.0));
  tt_val_t a0 = CMP("EQ", a, 0.0), x0 = CMP("EQ", x, 0.0);
  tt_val_t ainf = CMP("EQ", a, INFINITY), xinf = CMP("EQ", x, INFINITY);
  tt_val_t nan_in = OR(tt__ew_isnan(f, a), tt__ew_isnan(f, x));
  tt_val_t regular = NOT(OR(OR(OR(neg, a0), OR(x0, ainf)), OR(xinf, nan_in)));

  /* the regime of each regular element */
  tt_val_t rel = DIV(ABS(SUB(x, a)), a);
  tt_val_t asym1 = AND(AND(CMP("GT", a, 20.0), CMP("LT", a, 200.0)), CMP("LT", rel, 0.3));
  tt_val_t asym2 = AND(CMP("GT", a, 200.0),
                       tt_l_compare(f, "LT", rel, DIV(K(a, 4.5), UN("sqrt", a))));
  tt_val_t asym = AND(regular, OR(asym1, asym2));
  tt_val_t rest = AND(regular, NOT(asym));
  /* Q's choice (x > 1.1: P's series below a, else the fraction; x <= 0.5:
   * P's series for a > -0.4 / log x, else Q's series; between: P's series
   * for a > 1.1 x, else Q's series) */
  tt_val_t gt11 = cmp64k(f, "GT", x, 1.1), le05 = cmp64k(f, "LE", x, 0.5);
  tt_val_t a64 = to64(f, a), x64 = to64(f, x);
  tt_val_t by_log = tt_l_compare(f, "LT", DIV(K(x64, -0.4), to64(f, UN("log", x))), a64);
  tt_val_t by_ratio = tt_l_compare(f, "LT", tt__ew_mulk(f, x64, 1.1), a64);
  tt_val_t q_use_p = SEL(gt11, tt_l_compare(f, "LT", x, a), SEL(le05, by_log, by_ratio));
  tt_val_t q_use_cf = AND(gt11, NOT(q_use_p));
  tt_val_t use_p, use_cf, use_qs, flip; /* flip: the result is 1 minus the one computed */
  if (upper) {
    use_p = AND(rest, q_use_p);
    use_cf = AND(rest, q_use_cf);
    use_qs = AND(rest, NOT(OR(q_use_p, q_use_cf)));
    flip = use_p;
  } else {
    /* P: 1 - Q for x > 1 and x > a (then Q takes the fraction above 1.1,
     * else its series), P's series otherwise */
    tt_val_t via_q = AND(rest, AND(CMP("GT", x, 1.0), tt_l_compare(f, "GT", x, a)));
    use_cf = AND(via_q, gt11);
    use_qs = AND(via_q, NOT(gt11));
    use_p = AND(rest, NOT(via_q));
    flip = via_q;
  }
  tt_val_t ax = prefactor(f, a, x, &g);
  tt_val_t r = asymptotic(f, a, x, asym, !upper, &g);
  r = SEL(use_p, p_series(f, a, x, ax, use_p, &g), r);
  r = SEL(use_cf, q_fraction(f, a, x, ax, use_cf, &g), r);
  r = SEL(use_qs, q_series(f, a, x, use_qs, &g), r);
  r = SEL(flip, SUB(K(r, 1.0), r), r);

  double at_a0 = upper ? 0.0 : 1.0, at_x0 = upper ? 1.0 : 0.0;
  r = tt__sp_where_k(f, nan_in, NAN, r);
  r = tt__sp_where_k(f, xinf, at_a0, r);
  r = SEL(ainf, SEL(xinf, K(r, NAN), K(r, at_x0)), r);
  r = tt__sp_where_k(f, x0, at_x0, r);
  r = SEL(a0, SEL(CMP("GT", x, 0.0), K(r, at_a0), K(r, NAN)), r);
  r = tt__sp_where_k(f, neg, NAN, r);
  return tt_l_set_out(c, 0, r);
}

tt_status_t tt__sp_lower_igamma(tt_lctx_t* c) {
  switch (c->op->param) {
    case TT_SP_IGAMMA: return lower_igamma(c, false);
    case TT_SP_IGAMMAC: return lower_igamma(c, true);
    default:
      return tt_status_make(TT_INTERNAL, "%s: bad special param %lld", c->op->name,
                            (long long)c->op->param);
  }
}
