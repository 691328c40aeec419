/* The samplers behind torch.distributions (family random_dist):
 * _standard_gamma (Gamma, Chi2, StudentT, Beta), _sample_dirichlet
 * (Dirichlet, Beta), poisson; and _standard_gamma_grad, the reparameterized
 * gradient of a gamma sample (Gamma.rsample).
 *
 * They match PyTorch CPU in distribution, not in values (the device draws its
 * own bits), with CPU's algorithms: Marsaglia and Tsang's rejection method
 * for gamma, with shape alpha < 1 boosted to alpha + 1 by u^(1 / alpha);
 * for Poisson, the product of uniforms below rate 10 and Hormann's
 * transformed rejection (PTRS) from 10; and CPU's edge values (a gamma
 * sample is at least the dtype's smallest normal number; alpha 0 gives that
 * number; rate 0 gives 0; a negative rate raises CPU's error).
 *
 * A rejection loop is one stablehlo.while over the whole tensor: each round
 * draws fresh bits for every element and an element keeps its first accepted
 * value. The rounds draw from a THREE_FRY stream keyed by bits of the op's
 * (seed, offset) state, so however many rounds run, no other op's bits are
 * reused. f64 computes in f64, other dtypes in f32. */
#include <float.h>
#include <math.h>

#include "../lower_loop.h"
#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

#define MAX_ROUNDS 100000 /* bounds a loop that could not end (a NaN that slipped through) */

static tt_val_t k_like(tt_shlo_fn_t* f, tt_val_t like, double v) {
  return tt_shlo_const(f, tt_shlo_type(f, like), v);
}
static tt_val_t bin(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) { return tt_l_binary(f, op, a, b); }
static tt_val_t un(tt_shlo_fn_t* f, const char* op, tt_val_t a) { return tt_l_unary(f, op, a); }
static tt_val_t mul(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return bin(f, "stablehlo.multiply", a, b); }
static tt_val_t add(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return bin(f, "stablehlo.add", a, b); }
static tt_val_t sub(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return bin(f, "stablehlo.subtract", a, b); }
static tt_val_t divide(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return bin(f, "stablehlo.divide", a, b); }
static tt_val_t and_(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return bin(f, "stablehlo.and", a, b); }
static tt_val_t or_(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return bin(f, "stablehlo.or", a, b); }
static tt_val_t not_(tt_shlo_fn_t* f, tt_val_t a) { return un(f, "stablehlo.not", a); }
static tt_val_t cmp(tt_shlo_fn_t* f, const char* dir, tt_val_t a, tt_val_t b) { return tt_l_compare(f, dir, a, b); }
static tt_val_t cmpk(tt_shlo_fn_t* f, const char* dir, tt_val_t a, double k) { return cmp(f, dir, a, k_like(f, a, k)); }

static tt_val_t any_true(tt_shlo_fn_t* f, tt_val_t b) {
  int rank = tt_shlo_type(f, b)->rank;
  return rank ? tt_lt_reduce(f, b, (1u << rank) - 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0)) : b;
}

static tt_dtype_t compute_dt(tt_dtype_t dt) { return dt == TT_F64 ? TT_F64 : TT_F32; }

/* The smallest positive normal number of dt (CPU's numeric_limits::min). */
static double min_normal(tt_dtype_t dt) {
  switch (dt) {
    case TT_F64: return DBL_MIN;
    case TT_F16: return ldexp(1.0, -14);
    default: return FLT_MIN; /* f32, bf16 */
  }
}

/* A fresh stream for this op: two 64-bit words of the op's state's own bits. */
static tt_val_t stream(tt_shlo_fn_t* f, tt_val_t op_state) {
  int64_t two = 2;
  return tt_lt_rng_bits(f, op_state, TT_U64, 1, &two);
}

/* k rows of n uniform values in the open interval (0, 1), in cdt; *state
 * advances past the bits used. */
static tt_val_t draw(tt_shlo_fn_t* f, tt_val_t* state, tt_dtype_t cdt, int64_t k, int64_t n) {
  bool wide = cdt == TT_F64;
  tt_dtype_t bdt = wide ? TT_U64 : TT_U32;
  int mant = wide ? 53 : 24;
  int64_t d2[2] = {k, n};
  tt_type_t rt[2] = {*tt_shlo_type(f, *state), tt_type_make(bdt, 2, d2)};
  tt_val_t outs[2];
  tt_shlo_op_multi(f, "stablehlo.rng_bit_generator", state, 1, rt, 2,
                   "rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>", NULL, outs);
  *state = outs[0];
  tt_val_t bits = bin(f, "stablehlo.shift_right_logical", outs[1], tt_shlo_const_i64(f, &rt[1], (wide ? 64 : 32) - mant));
  tt_val_t u = tt_l_convert(f, bits, cdt);
  return mul(f, add(f, u, k_like(f, u, 0.5)), k_like(f, u, ldexp(1.0, -mant)));
}

static tt_val_t row(tt_shlo_fn_t* f, tt_val_t u, int64_t i, int64_t n) {
  return tt_l_reshape(f, tt_lt_slice_dim(f, u, 0, i, i + 1), 1, &n);
}

/* Every rejection loop carries its stream, which elements are done and the
 * round number first, then its own values (from L_FIRST on). */
enum { L_STATE, L_DONE, L_ROUND, L_FIRST };

/* while some element is not done (and fewer than MAX_ROUNDS rounds ran) */
static tt_val_t rounds_cond(tt_shlo_fn_t* f, const tt_val_t* st, void* ud) {
  (void)ud;
  return and_(f, any_true(f, not_(f, st[L_DONE])), cmpk(f, "LT", st[L_ROUND], (double)MAX_ROUNDS));
}

/* A round's k rows of n uniforms; advances the stream and the round number. */
static tt_val_t round_draw(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* next, tt_dtype_t cdt, int64_t k, int64_t n) {
  tt_val_t state = st[L_STATE];
  tt_val_t u = draw(f, &state, cdt, k, n);
  next[L_STATE] = state;
  next[L_ROUND] = add(f, st[L_ROUND], k_like(f, st[L_ROUND], 1.0));
  return u;
}

/* The first values of a loop's carry: the op's stream, done, round 0. */
static void loop_begin(tt_shlo_fn_t* f, tt_val_t* st, tt_val_t op_state, tt_val_t done) {
  st[L_STATE] = stream(f, op_state);
  st[L_DONE] = done;
  st[L_ROUND] = tt_lt_const0(f, TT_I64, 0.0);
}

/* ---- gamma ------------------------------------------------------------------------ */

enum { G_D = L_FIRST, G_C, G_DV, G_COUNT };

/* One round of Marsaglia-Tsang: x normal, y = 1 + c x > 0, v = y^3, u
 * uniform; accepted where u < 1 - 0.0331 x^4 or log u < x^2 / 2 + d (1 - v +
 * log v); the sample (before the boost) is d v. */
static void gamma_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* next, void* ud) {
  (void)ud;
  tt_val_t d = st[G_D], c = st[G_C];
  const tt_type_t* t = tt_shlo_type(f, d);
  int64_t n = t->dims[0];
  tt_val_t u = round_draw(f, st, next, t->dtype, 3, n);
  tt_val_t u0 = row(f, u, 0, n), u1 = row(f, u, 1, n), uu = row(f, u, 2, n);
  tt_val_t rad = un(f, "stablehlo.sqrt", mul(f, k_like(f, u0, -2.0), un(f, "stablehlo.log", u0)));
  tt_val_t x = mul(f, rad, un(f, "stablehlo.cosine", mul(f, k_like(f, u1, 2.0 * M_PI), u1)));
  tt_val_t y = add(f, k_like(f, x, 1.0), mul(f, c, x));
  tt_val_t v = mul(f, mul(f, y, y), y);
  tt_val_t xx = mul(f, x, x);
  tt_val_t sq = cmp(f, "LT", uu, sub(f, k_like(f, xx, 1.0), mul(f, k_like(f, xx, 0.0331), mul(f, xx, xx))));
  tt_val_t lg = cmp(f, "LT", un(f, "stablehlo.log", uu),
                    add(f, mul(f, k_like(f, xx, 0.5), xx),
                        mul(f, d, add(f, sub(f, k_like(f, v, 1.0), v), un(f, "stablehlo.log", v)))));
  tt_val_t ok = and_(f, and_(f, not_(f, st[L_DONE]), cmpk(f, "GT", y, 0.0)), or_(f, sq, lg));
  next[G_DV] = tt_l_select(f, ok, mul(f, d, v), st[G_DV]);
  next[L_DONE] = or_(f, st[L_DONE], ok);
}

/* Gamma(alpha, 1) samples of a flat alpha (n, cdt) drawn from `state`: *dv
 * the accepted d v and *log_scale the log of the boost (0 where alpha >= 1),
 * so that the sample is dv * exp(log_scale). alpha == 0 gives dv 0; a
 * negative or NaN alpha gives NaN. */
static void gamma_parts(tt_shlo_fn_t* f, tt_val_t state, tt_val_t alpha, tt_val_t* dv, tt_val_t* log_scale) {
  const tt_type_t* t = tt_shlo_type(f, alpha);
  int64_t n = t->dims[0];
  tt_val_t small = cmpk(f, "LT", alpha, 1.0);
  tt_val_t ub = row(f, draw(f, &state, t->dtype, 1, n), 0, n);
  *log_scale = tt_l_select(f, small, divide(f, un(f, "stablehlo.log", ub), alpha), k_like(f, alpha, 0.0));
  tt_val_t a = tt_l_select(f, small, add(f, alpha, k_like(f, alpha, 1.0)), alpha);
  tt_val_t d = sub(f, a, k_like(f, a, 1.0 / 3.0));
  tt_val_t c = divide(f, k_like(f, d, 1.0), un(f, "stablehlo.sqrt", mul(f, k_like(f, d, 9.0), d)));
  tt_val_t zero = cmpk(f, "EQ", alpha, 0.0);
  tt_val_t bad = not_(f, cmpk(f, "GE", alpha, 0.0)); /* negative or NaN */
  tt_val_t st[G_COUNT];
  st[L_STATE] = state; /* the stream, already drawn from for the boost */
  st[L_DONE] = or_(f, zero, bad);
  st[L_ROUND] = tt_lt_const0(f, TT_I64, 0.0);
  st[G_D] = d;
  st[G_C] = c;
  st[G_DV] = tt_l_select(f, zero, k_like(f, alpha, 0.0), k_like(f, alpha, NAN));
  tt_l_while(f, st, G_COUNT, rounds_cond, gamma_body, NULL);
  *dv = st[G_DV];
}

static tt_val_t rng_state(tt_lctx_t* c) { return c->args[c->nargs - 1].val; }

static tt_status_t need_float(tt_lctx_t* c, const char* what) {
  if (tt_dtype_is_float(c->out_types[0].dtype)) return NULL;
  return tt_status_make(TT_INVALID_ARGUMENT, "\"%s\" not implemented for '%s'", what,
                        tt_dtype_name(c->out_types[0].dtype));
}

static tt_val_t flat_arg(tt_lctx_t* c, int i, tt_dtype_t cdt, int64_t n) {
  return tt_l_reshape(c->f, tt_l_convert(c->f, c->args[i].val, cdt), 1, &n);
}

/* _standard_gamma(self): max(dtype's smallest normal, the sample) */
static tt_status_t lower_standard_gamma(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c, "gamma"));
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  int64_t n = tt_type_numel(ot);
  if (n == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_dtype_t cdt = compute_dt(ot->dtype);
  tt_val_t dv, ls;
  gamma_parts(f, stream(f, rng_state(c)), flat_arg(c, 0, cdt, n), &dv, &ls);
  tt_val_t s = tt_l_convert(f, mul(f, dv, un(f, "stablehlo.exponential", ls)), ot->dtype);
  s = bin(f, "stablehlo.maximum", s, k_like(f, s, min_normal(ot->dtype)));
  return tt_l_set_out(c, 0, tt_l_reshape(f, s, ot->rank, ot->dims));
}

/* _sample_dirichlet(alpha (..., K)): gamma samples normalized over the last
 * dim, in log space (log-sum-exp), each gamma sample at least the smallest
 * normal double as on CPU; the result clamped to [smallest normal, the
 * largest value below 1] of the dtype. */
static tt_status_t lower_sample_dirichlet(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c, "dirichlet"));
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  int64_t n = tt_type_numel(ot);
  if (n == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  if (ot->rank == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, nextafter(1.0, 0.0)));
  tt_dtype_t cdt = compute_dt(ot->dtype);
  tt_val_t dv, ls;
  gamma_parts(f, stream(f, rng_state(c)), flat_arg(c, 0, cdt, n), &dv, &ls);
  tt_val_t lg = add(f, un(f, "stablehlo.log", dv), ls);
  lg = bin(f, "stablehlo.maximum", lg, k_like(f, lg, log(DBL_MIN)));
  tt_type_t ct = *ot;
  ct.dtype = cdt;
  lg = tt_l_reshape(f, lg, ct.rank, ct.dims);
  uint32_t last = 1u << (ct.rank - 1);
  tt_val_t m = tt_lt_expand(f, tt_lt_extreme(f, lg, last, true), &ct, last);
  tt_val_t e = un(f, "stablehlo.exponential", sub(f, lg, m));
  tt_val_t x = tt_l_convert(f, divide(f, e, tt_lt_expand(f, tt_lt_sum(f, e, last), &ct, last)), ot->dtype);
  double below1 = ot->dtype == TT_F64 ? nextafter(1.0, 0.0)
                  : ot->dtype == TT_F16 ? 1.0 - ldexp(1.0, -11)
                  : ot->dtype == TT_BF16 ? 1.0 - ldexp(1.0, -8)
                  : (double)nextafterf(1.0f, 0.0f);
  x = bin(f, "stablehlo.maximum", x, k_like(f, x, min_normal(ot->dtype)));
  x = bin(f, "stablehlo.minimum", x, k_like(f, x, below1));
  return tt_l_set_out(c, 0, x);
}

/* ---- Poisson ---------------------------------------------------------------------- */

enum { P_LAM = L_FIRST, P_K, P_PROD, P_COUNT };

/* One round for every element: below rate 10 the running product of
 * uniforms takes one more factor (the count grows while the product stays
 * above e^-lambda); from 10 one PTRS candidate k (uniforms U - 1/2 and V). */
static void poisson_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* next, void* ud) {
  (void)ud;
  tt_val_t lam = st[P_LAM], done = st[L_DONE];
  const tt_type_t* t = tt_shlo_type(f, lam);
  int64_t n = t->dims[0];
  tt_val_t u = round_draw(f, st, next, t->dtype, 2, n);
  tt_val_t u0 = row(f, u, 0, n), v = row(f, u, 1, n);
  tt_val_t big = cmpk(f, "GE", lam, 10.0), live = not_(f, done);
  /* product method */
  tt_val_t prod = mul(f, st[P_PROD], u0);
  tt_val_t more = cmp(f, "GT", prod, un(f, "stablehlo.exponential", un(f, "stablehlo.negate", lam)));
  tt_val_t small_live = and_(f, live, not_(f, big));
  tt_val_t k_small = tt_l_select(f, and_(f, small_live, more), add(f, st[P_K], k_like(f, lam, 1.0)), st[P_K]);
  tt_val_t small_done = and_(f, small_live, not_(f, more));
  /* transformed rejection */
  tt_val_t slam = un(f, "stablehlo.sqrt", lam), loglam = un(f, "stablehlo.log", lam);
  tt_val_t b = add(f, k_like(f, lam, 0.931), mul(f, k_like(f, lam, 2.53), slam));
  tt_val_t a = add(f, k_like(f, b, -0.059), mul(f, k_like(f, b, 0.02483), b));
  tt_val_t invalpha = add(f, k_like(f, b, 1.1239), divide(f, k_like(f, b, 1.1328), sub(f, b, k_like(f, b, 3.4))));
  tt_val_t vr = sub(f, k_like(f, b, 0.9277), divide(f, k_like(f, b, 3.6224), sub(f, b, k_like(f, b, 2.0))));
  tt_val_t uh = sub(f, u0, k_like(f, u0, 0.5));
  tt_val_t us = sub(f, k_like(f, uh, 0.5), un(f, "stablehlo.abs", uh));
  tt_val_t kk = un(f, "stablehlo.floor",
                   add(f, mul(f, add(f, divide(f, mul(f, k_like(f, a, 2.0), a), us), b), uh),
                       add(f, lam, k_like(f, lam, 0.43))));
  tt_val_t box = and_(f, cmpk(f, "GE", us, 0.07), cmp(f, "LE", v, vr));
  tt_val_t rej = or_(f, cmpk(f, "LT", kk, 0.0), and_(f, cmpk(f, "LT", us, 0.013), cmp(f, "GT", v, us)));
  tt_val_t lhs = sub(f, add(f, un(f, "stablehlo.log", v), un(f, "stablehlo.log", invalpha)),
                     un(f, "stablehlo.log", add(f, divide(f, a, mul(f, us, us)), b)));
  tt_val_t rhs = sub(f, sub(f, mul(f, kk, loglam), lam),
                     un(f, "chlo.lgamma", add(f, kk, k_like(f, kk, 1.0))));
  tt_val_t acc = or_(f, box, and_(f, not_(f, rej), cmp(f, "LE", lhs, rhs)));
  tt_val_t big_done = and_(f, and_(f, live, big), acc);
  next[P_K] = tt_l_select(f, big_done, kk, k_small);
  next[P_PROD] = tt_l_select(f, small_live, prod, st[P_PROD]);
  next[L_DONE] = or_(f, done, or_(f, small_done, big_done));
}

/* poisson(self): rates >= 0 (CPU's error otherwise); 0 gives 0. */
static tt_status_t lower_poisson(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c, "poisson"));
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  int64_t n = tt_type_numel(ot);
  if (n == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_dtype_t cdt = compute_dt(ot->dtype);
  tt_val_t lam = flat_arg(c, 0, cdt, n);
  tt_val_t bad = not_(f, cmpk(f, "GE", lam, 0.0));
  tt_shlo_add_check(f, any_true(f, bad), TT_INTERNAL, /* CPU's RuntimeError */
                    "invalid Poisson rate, expected rate to be non-negative");
  tt_val_t st[P_COUNT];
  loop_begin(f, st, rng_state(c), or_(f, bad, cmpk(f, "EQ", lam, 0.0)));
  st[P_LAM] = lam;
  st[P_K] = tt_l_select(f, bad, k_like(f, lam, NAN), k_like(f, lam, 0.0));
  st[P_PROD] = k_like(f, lam, 1.0);
  tt_l_while(f, st, P_COUNT, rounds_cond, poisson_body, NULL);
  return tt_l_set_out(c, 0, tt_l_reshape(f, tt_l_convert(f, st[P_K], ot->dtype), ot->rank, ot->dims));
}

/* ---- binomial --------------------------------------------------------------------- */

enum { B_N = L_FIRST, B_P, B_K, B_GSUM, B_COUNT };

/* Stirling's series tail of log k! (CPU's table below 10). */
static tt_val_t stirling_tail(tt_shlo_fn_t* f, tt_val_t k) {
  static const double tail[10] = {0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                                  0.00833056343336287};
  tt_val_t one = k_like(f, k, 1.0);
  tt_val_t k1 = add(f, k, one), k1sq = mul(f, k1, k1);
  tt_val_t r = divide(f, sub(f, k_like(f, k, 1.0 / 12), divide(f, sub(f, k_like(f, k, 1.0 / 360),
                                                                        divide(f, k_like(f, k, 1.0 / 1260), k1sq)),
                                                                 k1sq)),
                      k1);
  tt_val_t fk = un(f, "stablehlo.floor", k);
  for (int i = 0; i < 10; i++) r = tt_l_select(f, cmpk(f, "EQ", fk, (double)i), k_like(f, k, tail[i]), r);
  return r;
}

/* One round for every element of count n and probability p <= 1/2: below n p
 * = 10 one more geometric gap (the count of successes grows while the gaps'
 * sum stays within n), from 10 one BTRS candidate. */
static void binomial_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* next, void* ud) {
  (void)ud;
  tt_val_t cnt = st[B_N], p = st[B_P], done = st[L_DONE];
  const tt_type_t* t = tt_shlo_type(f, p);
  int64_t n = t->dims[0];
  tt_val_t uv = round_draw(f, st, next, t->dtype, 2, n);
  tt_val_t u0 = row(f, uv, 0, n), v = row(f, uv, 1, n);
  tt_val_t one = k_like(f, p, 1.0), live = not_(f, done);
  tt_val_t big = cmpk(f, "GE", mul(f, cnt, p), 10.0);
  /* inversion: geometric gaps */
  tt_val_t geom = un(f, "stablehlo.ceil", divide(f, un(f, "stablehlo.log", u0), un(f, "stablehlo.log_plus_one", un(f, "stablehlo.negate", p))));
  tt_val_t gsum = add(f, st[B_GSUM], geom);
  tt_val_t inv_live = and_(f, live, not_(f, big));
  tt_val_t over = cmp(f, "GT", gsum, cnt);
  tt_val_t k_inv = tt_l_select(f, and_(f, inv_live, not_(f, over)), add(f, st[B_K], one), st[B_K]);
  tt_val_t inv_done = and_(f, inv_live, over);
  /* BTRS */
  tt_val_t q = sub(f, one, p);
  tt_val_t sd = un(f, "stablehlo.sqrt", mul(f, mul(f, cnt, p), q));
  tt_val_t b = add(f, k_like(f, p, 1.15), mul(f, k_like(f, p, 2.53), sd));
  tt_val_t a = add(f, add(f, k_like(f, p, -0.0873), mul(f, k_like(f, p, 0.0248), b)), mul(f, k_like(f, p, 0.01), p));
  tt_val_t cc = add(f, mul(f, cnt, p), k_like(f, p, 0.5));
  tt_val_t vr = sub(f, k_like(f, p, 0.92), divide(f, k_like(f, p, 4.2), b));
  tt_val_t r = divide(f, p, q);
  tt_val_t alpha = mul(f, add(f, k_like(f, p, 2.83), divide(f, k_like(f, p, 5.1), b)), sd);
  tt_val_t m = un(f, "stablehlo.floor", mul(f, add(f, cnt, one), p));
  tt_val_t uh = sub(f, u0, k_like(f, u0, 0.5));
  tt_val_t us = sub(f, k_like(f, uh, 0.5), un(f, "stablehlo.abs", uh));
  tt_val_t k = un(f, "stablehlo.floor", add(f, mul(f, add(f, divide(f, mul(f, k_like(f, a, 2.0), a), us), b), uh), cc));
  tt_val_t in_range = and_(f, cmpk(f, "GE", k, 0.0), cmp(f, "LE", k, cnt));
  tt_val_t box = and_(f, cmpk(f, "GE", us, 0.07), cmp(f, "LE", v, vr));
  tt_val_t lv = un(f, "stablehlo.log", divide(f, mul(f, v, alpha), add(f, divide(f, a, mul(f, us, us)), b)));
  tt_val_t nm1 = add(f, sub(f, cnt, m), one), nk1 = add(f, sub(f, cnt, k), one);
  tt_val_t ub = add(f, mul(f, add(f, m, k_like(f, m, 0.5)), un(f, "stablehlo.log", divide(f, add(f, m, one), mul(f, r, nm1)))),
                    mul(f, add(f, cnt, one), un(f, "stablehlo.log", divide(f, nm1, nk1))));
  ub = add(f, ub, mul(f, add(f, k, k_like(f, k, 0.5)), un(f, "stablehlo.log", divide(f, mul(f, r, nk1), add(f, k, one)))));
  ub = add(f, ub, sub(f, add(f, stirling_tail(f, m), stirling_tail(f, sub(f, cnt, m))),
                      add(f, stirling_tail(f, k), stirling_tail(f, sub(f, cnt, k)))));
  tt_val_t acc = and_(f, in_range, or_(f, box, cmp(f, "LE", lv, ub)));
  tt_val_t bt_done = and_(f, and_(f, live, big), acc);
  next[B_K] = tt_l_select(f, bt_done, k, k_inv);
  next[B_GSUM] = tt_l_select(f, inv_live, gsum, st[B_GSUM]);
  next[L_DONE] = or_(f, done, or_(f, inv_done, bt_done));
}

/* binomial(count, prob): count <= 0 or prob <= 0 give 0, prob >= 1 gives
 * count, NaN prob NaN; prob > 1/2 samples count - Binomial(count, 1 - prob). */
static tt_status_t lower_binomial(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c, "binomial"));
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  int64_t n = tt_type_numel(ot);
  if (n == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_dtype_t cdt = compute_dt(ot->dtype);
  tt_type_t ct = *ot;
  ct.dtype = cdt;
  tt_val_t cnt = tt_l_reshape(f, tt_l_arg_as(c, 0, cdt, &ct), 1, &n);
  tt_val_t prob = tt_l_reshape(f, tt_l_arg_as(c, 1, cdt, &ct), 1, &n);
  tt_val_t zero = or_(f, cmpk(f, "LE", cnt, 0.0), cmpk(f, "LE", prob, 0.0));
  tt_val_t all = and_(f, not_(f, zero), cmpk(f, "GE", prob, 1.0));
  tt_val_t nan = cmp(f, "NE", prob, prob);
  tt_val_t special = or_(f, or_(f, zero, all), nan);
  tt_val_t flip = cmpk(f, "GT", prob, 0.5);
  tt_val_t st[B_COUNT];
  loop_begin(f, st, rng_state(c), special);
  st[B_N] = cnt;
  st[B_P] = tt_l_select(f, flip, sub(f, k_like(f, prob, 1.0), prob), prob);
  st[B_K] = k_like(f, cnt, 0.0);
  st[B_GSUM] = k_like(f, cnt, 0.0);
  tt_l_while(f, st, B_COUNT, rounds_cond, binomial_body, NULL);
  tt_val_t k = tt_l_select(f, flip, sub(f, cnt, st[B_K]), st[B_K]);
  tt_val_t sv = tt_l_select(f, nan, k_like(f, cnt, NAN), tt_l_select(f, all, cnt, k_like(f, cnt, 0.0)));
  k = tt_l_select(f, special, sv, k);
  return tt_l_set_out(c, 0, tt_l_reshape(f, tt_l_convert(f, k, ot->dtype), ot->rank, ot->dims));
}

/* ---- the reparameterized gradient of a gamma sample ----------------------------------- */

static tt_val_t kd(tt_shlo_fn_t* f, tt_val_t like, double v) { return k_like(f, like, v); }

/* d sample / d alpha for x ~ Gamma(alpha, 1), as CPU computes it (in f64):
 * a 6-term series below x = 0.8, Rice's saddle-point expansion above alpha
 * = 8, a bivariate rational approximation in (log(x / alpha), log alpha)
 * otherwise. */
static tt_val_t gamma_grad(tt_shlo_fn_t* f, tt_val_t alpha, tt_val_t x) {
  tt_val_t one = kd(f, x, 1.0);
  /* small x: the series of the incomplete gamma function and its alpha derivative */
  tt_val_t numer = one, denom = alpha;
  tt_val_t s1 = divide(f, numer, denom), s2 = divide(f, numer, mul(f, denom, denom));
  for (int i = 1; i <= 5; i++) {
    numer = mul(f, numer, divide(f, un(f, "stablehlo.negate", x), kd(f, x, (double)i)));
    denom = add(f, denom, one);
    s1 = add(f, s1, divide(f, numer, denom));
    s2 = add(f, s2, divide(f, numer, mul(f, denom, denom)));
  }
  tt_val_t logx = un(f, "stablehlo.log", x);
  tt_val_t pxa = bin(f, "stablehlo.power", x, alpha);
  tt_val_t pdf = mul(f, bin(f, "stablehlo.power", x, sub(f, alpha, one)), un(f, "stablehlo.exponential", un(f, "stablehlo.negate", x)));
  tt_val_t cdf = mul(f, pxa, s1);
  tt_val_t cdf_a = sub(f, mul(f, sub(f, logx, un(f, "chlo.digamma", alpha)), cdf), mul(f, pxa, s2));
  tt_val_t r_small = un(f, "stablehlo.negate", divide(f, cdf_a, pdf));
  r_small = tt_l_select(f, cmp(f, "NE", r_small, r_small), kd(f, x, 0.0), r_small);
  /* large alpha, x near alpha */
  tt_val_t a2 = mul(f, alpha, alpha);
  tt_val_t n1 = add(f, one, mul(f, mul(f, kd(f, x, 24.0), alpha), add(f, one, mul(f, kd(f, x, 12.0), alpha))));
  tt_val_t n2 = add(f, add(f, mul(f, kd(f, x, 1440.0), a2), mul(f, mul(f, kd(f, x, 6.0), x), sub(f, kd(f, x, 53.0), mul(f, kd(f, x, 120.0), x)))),
                    sub(f, mul(f, alpha, add(f, kd(f, x, 107.0), mul(f, kd(f, x, 3600.0), x))),
                        divide(f, mul(f, kd(f, x, 65.0), mul(f, x, x)), alpha)));
  tt_val_t r_near = divide(f, mul(f, n1, n2), mul(f, kd(f, x, 1244160.0), mul(f, a2, a2)));
  /* large alpha, x away from alpha */
  tt_val_t den = un(f, "stablehlo.sqrt", mul(f, kd(f, x, 8.0), alpha));
  tt_val_t amx = sub(f, alpha, x);
  tt_val_t lxa = un(f, "stablehlo.log", divide(f, x, alpha));
  tt_val_t t2 = divide(f, den, amx);
  tt_val_t t3 = bin(f, "stablehlo.power", sub(f, sub(f, x, alpha), mul(f, alpha, lxa)), kd(f, x, -1.5));
  tt_val_t t23 = tt_l_select(f, cmp(f, "LT", x, alpha), sub(f, t2, t3), add(f, t2, t3));
  tt_val_t t1 = sub(f, mul(f, lxa, t23),
                    divide(f, mul(f, un(f, "stablehlo.sqrt", divide(f, kd(f, x, 2.0), alpha)), add(f, alpha, x)), mul(f, amx, amx)));
  tt_val_t inv12 = divide(f, one, mul(f, kd(f, x, 12.0), alpha)), inv24 = divide(f, one, mul(f, kd(f, x, 24.0), alpha));
  tt_val_t stirling = add(f, one, mul(f, inv12, add(f, one, inv24)));
  tt_val_t r_far = un(f, "stablehlo.negate", divide(f, mul(f, stirling, mul(f, x, t1)), den));
  tt_val_t near = and_(f, cmp(f, "LE", mul(f, kd(f, x, 0.9), alpha), x), cmp(f, "LE", x, mul(f, kd(f, x, 1.1), alpha)));
  tt_val_t r_big = tt_l_select(f, near, r_near, r_far);
  /* otherwise: exp(p(u, v) / q(u, v)) */
  static const double cuv[3][8] = {
      {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084},
      {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623},
      {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
       -1.5247877e-07},
  };
  tt_val_t u = lxa, v = un(f, "stablehlo.log", alpha), cv[8];
  for (int i = 0; i < 8; i++)
    cv[i] = add(f, kd(f, x, cuv[0][i]), mul(f, u, add(f, kd(f, x, cuv[1][i]), mul(f, u, kd(f, x, cuv[2][i])))));
  tt_val_t p = add(f, cv[0], mul(f, v, add(f, cv[1], mul(f, v, add(f, cv[2], mul(f, v, cv[3]))))));
  tt_val_t q = add(f, cv[4], mul(f, v, add(f, cv[5], mul(f, v, add(f, cv[6], mul(f, v, cv[7]))))));
  tt_val_t r_mid = un(f, "stablehlo.exponential", divide(f, p, q));
  tt_val_t r = tt_l_select(f, cmpk(f, "GT", alpha, 8.0), r_big, r_mid);
  return tt_l_select(f, cmpk(f, "LT", x, 0.8), r_small, r);
}

/* _standard_gamma_grad(self = alpha, output = the sample) */
static tt_status_t lower_standard_gamma_grad(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c, "_standard_gamma_grad"));
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_type_t ct = *ot;
  ct.dtype = TT_F64;
  tt_val_t alpha = tt_l_arg_as(c, 0, TT_F64, &ct), x = tt_l_arg_as(c, 1, TT_F64, &ct);
  return tt_l_set_out(c, 0, tt_l_convert(f, gamma_grad(f, alpha, x), ot->dtype));
}

/* ---- the reparameterized gradient of a Dirichlet (Beta) sample --------------------------- */

static tt_val_t nan_to_zero(tt_shlo_fn_t* f, tt_val_t v) { return tt_l_select(f, cmp(f, "NE", v, v), kd(f, v, 0.0), v); }
static tt_val_t digamma(tt_shlo_fn_t* f, tt_val_t v) { return un(f, "chlo.digamma", v); }
static tt_val_t powk(tt_shlo_fn_t* f, tt_val_t v, double k) { return bin(f, "stablehlo.power", v, kd(f, v, k)); }

/* d x / d alpha of x ~ Beta(alpha, beta), x near 0 (a Taylor series). */
static tt_val_t beta_grad_alpha_small(tt_shlo_fn_t* f, tt_val_t x, tt_val_t alpha, tt_val_t beta) {
  tt_val_t one = kd(f, x, 1.0);
  tt_val_t factor = sub(f, sub(f, digamma(f, alpha), digamma(f, add(f, alpha, beta))), un(f, "stablehlo.log", x));
  tt_val_t numer = one;
  tt_val_t series = mul(f, divide(f, numer, alpha), add(f, factor, divide(f, one, alpha)));
  for (int i = 1; i <= 10; i++) {
    tt_val_t ci = kd(f, x, (double)i);
    numer = mul(f, numer, divide(f, mul(f, sub(f, ci, beta), x), ci));
    tt_val_t denom = add(f, alpha, ci);
    series = add(f, series, mul(f, divide(f, numer, denom), add(f, factor, divide(f, one, denom))));
  }
  tt_val_t r = mul(f, mul(f, x, bin(f, "stablehlo.power", sub(f, one, x), un(f, "stablehlo.negate", beta))), series);
  return nan_to_zero(f, r);
}

/* d x / d beta of x ~ Beta(alpha, beta), x near 0 (a Taylor series). */
static tt_val_t beta_grad_beta_small(tt_shlo_fn_t* f, tt_val_t x, tt_val_t alpha, tt_val_t beta) {
  tt_val_t one = kd(f, x, 1.0);
  tt_val_t factor = sub(f, digamma(f, add(f, alpha, beta)), digamma(f, beta));
  tt_val_t numer = one, betas = one, dbetas = kd(f, x, 0.0), series = divide(f, factor, alpha);
  for (int i = 1; i <= 8; i++) {
    tt_val_t ci = kd(f, x, (double)i);
    numer = mul(f, numer, divide(f, un(f, "stablehlo.negate", x), ci));
    tt_val_t bmi = sub(f, beta, ci);
    dbetas = add(f, mul(f, dbetas, bmi), betas);
    betas = mul(f, betas, bmi);
    series = add(f, series, mul(f, divide(f, numer, add(f, alpha, ci)), add(f, dbetas, mul(f, factor, betas))));
  }
  tt_val_t r = un(f, "stablehlo.negate", mul(f, bin(f, "stablehlo.power", sub(f, one, x), sub(f, one, beta)), series));
  return nan_to_zero(f, r);
}

/* d x / d alpha of x ~ Beta(alpha, beta), alpha and beta both large (Rice's
 * saddle-point expansion, a polynomial near the mean). */
static tt_val_t beta_grad_alpha_mid(tt_shlo_fn_t* f, tt_val_t x, tt_val_t alpha, tt_val_t beta) {
  tt_val_t one = kd(f, x, 1.0);
  tt_val_t total = add(f, alpha, beta);
  tt_val_t mean = divide(f, alpha, total);
  tt_val_t sd = divide(f, un(f, "stablehlo.sqrt", divide(f, mul(f, alpha, beta), add(f, total, one))), total);
  tt_val_t near = and_(f, cmp(f, "LE", sub(f, mean, mul(f, kd(f, x, 0.1), sd)), x),
                       cmp(f, "LE", x, add(f, mean, mul(f, kd(f, x, 0.1), sd))));
  tt_val_t b2 = mul(f, beta, beta), omx = sub(f, one, x);
  /* poly = 47 x b^4 + a((43 + 20(16 + 27b)x) b^3 + a(3(59 + 180b - 90x) b^2 + a((453 + 1620 b(1-x) - 455x) b
   *        + a(8(1-x)(135b - 11))))) */
  tt_val_t in4 = mul(f, mul(f, kd(f, x, 8.0), omx), sub(f, mul(f, kd(f, x, 135.0), beta), kd(f, x, 11.0)));
  tt_val_t in3 = add(f, mul(f, sub(f, add(f, kd(f, x, 453.0), mul(f, mul(f, kd(f, x, 1620.0), beta), omx)),
                                   mul(f, kd(f, x, 455.0), x)), beta),
                     mul(f, alpha, in4));
  tt_val_t in2 = add(f, mul(f, mul(f, kd(f, x, 3.0), sub(f, add(f, kd(f, x, 59.0), mul(f, kd(f, x, 180.0), beta)),
                                                        mul(f, kd(f, x, 90.0), x))), b2),
                     mul(f, alpha, in3));
  tt_val_t in1 = add(f, mul(f, mul(f, add(f, kd(f, x, 43.0), mul(f, mul(f, kd(f, x, 20.0),
                                                                      add(f, kd(f, x, 16.0), mul(f, kd(f, x, 27.0), beta))), x)),
                                   b2), beta),
                     mul(f, alpha, in2));
  tt_val_t poly = add(f, mul(f, mul(f, kd(f, x, 47.0), x), mul(f, b2, b2)), mul(f, alpha, in1));
  tt_val_t pre_num = divide(f, mul(f, add(f, one, mul(f, kd(f, x, 12.0), alpha)), add(f, one, mul(f, kd(f, x, 12.0), beta))),
                            mul(f, total, total));
  tt_val_t pre_den = mul(f, mul(f, mul(f, kd(f, x, 12960.0), mul(f, mul(f, alpha, alpha), alpha)), b2),
                         add(f, one, mul(f, kd(f, x, 12.0), total)));
  tt_val_t r_near = divide(f, mul(f, divide(f, pre_num, omx), poly), pre_den);
  tt_val_t prefactor = divide(f, un(f, "stablehlo.negate", x),
                              un(f, "stablehlo.sqrt", divide(f, mul(f, mul(f, kd(f, x, 2.0), alpha), beta), total)));
#define ST(v) add(f, add(f, one, divide(f, one, mul(f, kd(f, x, 12.0), v))), divide(f, one, mul(f, kd(f, x, 288.0), mul(f, v, v))))
  tt_val_t stirling = divide(f, mul(f, ST(alpha), ST(beta)), ST(total));
#undef ST
  tt_val_t xm1 = sub(f, x, one);
  tt_val_t t1n = sub(f, add(f, mul(f, mul(f, kd(f, x, 2.0), mul(f, alpha, alpha)), xm1), mul(f, mul(f, alpha, beta), xm1)),
                     mul(f, x, b2));
  tt_val_t axbx = add(f, mul(f, alpha, xm1), mul(f, beta, x));
  tt_val_t t1d = mul(f, mul(f, un(f, "stablehlo.sqrt", divide(f, mul(f, kd(f, x, 2.0), alpha), beta)), powk(f, total, 1.5)),
                     mul(f, axbx, axbx));
  tt_val_t t1 = divide(f, t1n, t1d);
  tt_val_t t2 = mul(f, kd(f, x, 0.5), un(f, "stablehlo.log", divide(f, alpha, mul(f, total, x))));
  tt_val_t t3 = divide(f, un(f, "stablehlo.sqrt", divide(f, mul(f, mul(f, kd(f, x, 8.0), alpha), beta), total)), axbx);
  tt_val_t t4b = add(f, mul(f, beta, un(f, "stablehlo.log", divide(f, beta, mul(f, total, omx)))),
                     mul(f, alpha, un(f, "stablehlo.log", divide(f, alpha, mul(f, total, x)))));
  tt_val_t t4 = powk(f, t4b, -1.5);
  tt_val_t t34 = add(f, t3, tt_l_select(f, cmp(f, "LT", x, mean), t4, un(f, "stablehlo.negate", t4)));
  tt_val_t r_far = mul(f, mul(f, stirling, prefactor), add(f, t1, mul(f, t2, t34)));
  return tt_l_select(f, near, r_near, r_far);
}

/* CPU's -(d/dalpha cdf(x; alpha, beta)) / pdf(x; alpha, beta) / (1 - x),
 * beta = total - alpha: a series near 0 and near 1, the saddle-point
 * expansion for large alpha and beta, else a rational correction of an
 * analytic approximation. */
static tt_val_t dirichlet_grad(tt_shlo_fn_t* f, tt_val_t x, tt_val_t alpha, tt_val_t total) {
  tt_val_t one = kd(f, x, 1.0);
  tt_val_t beta = sub(f, total, alpha);
  tt_val_t boundary = mul(f, mul(f, total, x), sub(f, one, x));
  static const double cf[2][3][3][4] = {
      {{{1.003668233, -0.01061107488, -0.0657888334, 0.01201642863},
        {0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033},
        {-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013}},
       {{0.221950385, -0.3187676331, 0.01799915743, 0.01074823814},
        {-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057},
        {0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05}},
       {{-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565},
        {0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181},
        {0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05}}},
      {{{1, -0.02924021934, -0.04438342661, 0.007285809825},
        {0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521},
        {-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149}},
       {{0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273},
        {0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956},
        {-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05}},
       {{0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05},
        {0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05},
        {-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06}}},
  };
  tt_val_t u = un(f, "stablehlo.log", x);
  tt_val_t a = sub(f, un(f, "stablehlo.log", alpha), u);
  tt_val_t b = sub(f, un(f, "stablehlo.log", total), a);
  tt_val_t pu[3] = {one, u, mul(f, u, u)}, pa[3] = {one, a, mul(f, a, a)};
  tt_val_t pq[2];
  for (int k = 0; k < 2; k++) {
    pq[k] = kd(f, x, 0.0);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        const double* cc = cf[k][i][j];
        tt_val_t h = add(f, kd(f, x, cc[0]), mul(f, b, add(f, kd(f, x, cc[1]), mul(f, b, add(f, kd(f, x, cc[2]), mul(f, b, kd(f, x, cc[3])))))));
        pq[k] = add(f, pq[k], mul(f, mul(f, pu[i], pa[j]), h));
      }
  }
  tt_val_t approx = divide(f, mul(f, x, sub(f, digamma(f, total), digamma(f, alpha))), beta);
  tt_val_t r = mul(f, divide(f, pq[0], pq[1]), approx);
  r = tt_l_select(f, and_(f, cmpk(f, "GT", alpha, 6.0), cmpk(f, "GT", beta, 6.0)), beta_grad_alpha_mid(f, x, alpha, beta), r);
  tt_val_t near1 = and_(f, cmpk(f, "GE", x, 0.5), cmpk(f, "LT", boundary, 0.75));
  r = tt_l_select(f, near1, un(f, "stablehlo.negate", beta_grad_beta_small(f, sub(f, one, x), beta, alpha)), r);
  tt_val_t near0 = and_(f, cmpk(f, "LE", x, 0.5), cmpk(f, "LT", boundary, 2.5));
  return tt_l_select(f, near0, beta_grad_alpha_small(f, x, alpha, beta), r);
}

/* _dirichlet_grad(x, alpha, total), broadcast together */
static tt_status_t lower_dirichlet_grad(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c, "_dirichlet_grad"));
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_type_t ct = *ot;
  ct.dtype = TT_F64;
  tt_val_t x = tt_l_arg_as(c, 0, TT_F64, &ct), alpha = tt_l_arg_as(c, 1, TT_F64, &ct);
  tt_val_t total = tt_l_arg_as(c, 2, TT_F64, &ct);
  return tt_l_set_out(c, 0, tt_l_convert(f, dirichlet_grad(f, x, alpha, total), ot->dtype));
}

#define RNG TT_LF_RNG

const tt_lower_entry_t tt_lower_random_dist[] = {
    {"aten::_standard_gamma", lower_standard_gamma, 0, RNG},
    {"aten::_standard_gamma.out", lower_standard_gamma, 0, RNG},
    {"aten::_sample_dirichlet", lower_sample_dirichlet, 0, RNG},
    {"aten::_sample_dirichlet.out", lower_sample_dirichlet, 0, RNG},
    {"aten::poisson", lower_poisson, 0, RNG},
    {"aten::poisson.out", lower_poisson, 0, RNG},
    {"aten::binomial", lower_binomial, 0, RNG},
    {"aten::binomial.out", lower_binomial, 0, RNG},
    {"aten::_standard_gamma_grad", lower_standard_gamma_grad, 0, 0},
    {"aten::_standard_gamma_grad.out", lower_standard_gamma_grad, 0, 0},
    {"aten::_dirichlet_grad", lower_dirichlet_grad, 0, 0},
    {"aten::_dirichlet_grad.out", lower_dirichlet_grad, 0, 0},
};
const int tt_lower_random_dist_count = TT_TABLE_COUNT(tt_lower_random_dist);
