/* _ctc_loss (forward, with log_alpha) and _ctc_loss_backward.
 *
 * Lengths come as int[] (static): the extended label sequence l' (blanks
 * between the targets) has a static layout per batch entry, and only the
 * label values are read at run time. The alpha (beta) recursion over time is
 * a stablehlo.while whose step works on all (batch, s) positions at once with
 * shifted copies along s; every value the step needs is carried, so the body
 * captures nothing. Formulas follow CPU's ctc_loss_cpu_template: the
 * log-sum-exp of up to three terms with their maximum (0 when all are -inf).
 * Entries CPU leaves unwritten (t >= input length, s >= 2 * target length + 1)
 * are -inf here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lower_loop.h"
#include "../elementwise/lower_elementwise.h"
#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"

typedef struct ctc {
  int64_t T, N, C, S; /* S: 2 * max target length + 1 */
  const int64_t *il, *tl;
  tt_dtype_t dt;
  tt_val_t lpp;    /* (T, N, S): log_probs at l'(s) */
  tt_val_t skip;   /* (N, S) i1: the s - 2 transition is allowed */
  tt_val_t valid;  /* (N, S) i1: s < 2 * tl + 1 */
  tt_val_t lab;    /* (N, S) i64 */
} ctc_t;

#define NEGINF (-INFINITY)

static tt_val_t full(tt_shlo_fn_t* f, tt_dtype_t dt, int r, const int64_t* d, double v) { return tt_l_full(f, dt, r, d, v); }

/* v shifted by k along dim 1 of (N, S), filled with fill. */
static tt_val_t shift(tt_shlo_fn_t* f, tt_val_t v, int64_t k, double fill, const ctc_t* x) {
  tt_type_t t = tt__sh_type(f, v);
  int64_t lo[2] = {0, k > 0 ? k : 0}, hi[2] = {0, k < 0 ? -k : 0};
  tt_val_t p = tt_lt_pad(f, v, tt_lt_const0(f, t.dtype, fill), lo, hi);
  return k > 0 ? tt_lt_slice_dim(f, p, 1, 0, x->S) : tt_lt_slice_dim(f, p, 1, -k, -k + x->S);
}

/* log(exp(a - m) + exp(b - m) + exp(c - m)) + m, m = max (0 if -inf) */
static tt_val_t lse3(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, tt_val_t c) {
  tt_val_t m = a;
  m = tt_l_select(f, tt_l_compare(f, "GT", b, m), b, m);
  m = tt_l_select(f, tt_l_compare(f, "GT", c, m), c, m);
  m = tt_l_select(f, tt__ew_cmpk(f, "EQ", m, NEGINF), tt__ew_k(f, m, 0), m);
  tt_val_t s = tt__ew_add(f, tt__ew_add(f, tt_l_unary(f, "stablehlo.exponential", tt__ew_sub(f, a, m)),
                                        tt_l_unary(f, "stablehlo.exponential", tt__ew_sub(f, b, m))),
                          tt_l_unary(f, "stablehlo.exponential", tt__ew_sub(f, c, m)));
  return tt__ew_add(f, tt_l_unary(f, "stablehlo.log", s), m);
}

/* Row t of a (T, N, S) value, as (N, S). */
static tt_val_t row(tt_shlo_fn_t* f, tt_val_t v, tt_val_t t, const ctc_t* x) {
  tt_type_t vt = tt__sh_type(f, v), st = vt;
  st.dims[0] = 1;
  tt_val_t zero = tt_lt_const0(f, TT_I64, 0);
  tt_val_t ops[4] = {v, t, zero, zero};
  tt_val_t r = tt_shlo_opf(f, "stablehlo.dynamic_slice", ops, 4, &st, "slice_sizes = array<i64: 1, %lld, %lld>",
                           (long long)x->N, (long long)x->S);
  int64_t d[2] = {x->N, x->S};
  return tt_l_reshape(f, r, 2, d);
}

static tt_val_t put_row(tt_shlo_fn_t* f, tt_val_t hist, tt_val_t r, tt_val_t t, const ctc_t* x) {
  tt_type_t ht = tt__sh_type(f, hist);
  int64_t d[3] = {1, x->N, x->S};
  tt_val_t zero = tt_lt_const0(f, TT_I64, 0);
  tt_val_t ops[5] = {hist, tt_l_reshape(f, r, 3, d), t, zero, zero};
  return tt_shlo_op(f, "stablehlo.dynamic_update_slice", ops, 5, &ht, NULL);
}

/* (N, S) i1: t < input length of each batch entry (t a 0-d i64). */
static tt_val_t live(tt_shlo_fn_t* f, tt_val_t t, const ctc_t* x) {
  int64_t d[2] = {x->N, x->S}, b0[1] = {0};
  tt_val_t L = tt_lt_bcast_in_dim(f, tt_shlo_const_i64s(f, x->il, (int)x->N), 2, d, b0);
  return tt_l_compare(f, "LT", tt_lt_splat(f, t, 2, d), L);
}

/* Loop state: t, prev (N, S), hist (T, N, S), lpp, skip, valid. */
enum { L_T, L_PREV, L_HIST, L_LPP, L_SKIP, L_VALID, L_N };

/* One stablehlo.while from t0 stepping by dir while 0 <= t < T; step(prev) -> next. */
typedef tt_val_t (*step_fn_t)(tt_shlo_fn_t* f, const tt_val_t* a, const ctc_t* x);

typedef struct run {
  step_fn_t step;
  int dir;
  ctc_t* x;
} run_t;

static tt_val_t run_cond(tt_shlo_fn_t* f, const tt_val_t* a, void* ud) {
  const run_t* r = ud;
  return r->dir > 0 ? tt_l_compare(f, "LT", a[L_T], tt_lt_const0(f, TT_I64, (double)r->x->T))
                    : tt_l_compare(f, "GE", a[L_T], tt_lt_const0(f, TT_I64, 0));
}

static void run_body(tt_shlo_fn_t* f, const tt_val_t* a, tt_val_t* next, void* ud) {
  const run_t* u = ud;
  const ctc_t* x = u->x;
  tt_val_t r = u->step(f, a, x);
  /* rows past the input length stay -inf (and are not carried on) */
  tt_val_t ok = tt_l_binary(f, "stablehlo.and", live(f, a[L_T], x), a[L_VALID]);
  int64_t d2[2] = {x->N, x->S};
  r = tt_l_select(f, ok, r, full(f, x->dt, 2, d2, NEGINF));
  next[L_PREV] = tt_l_select(f, live(f, a[L_T], x), r, a[L_PREV]);
  next[L_HIST] = put_row(f, a[L_HIST], r, a[L_T], x);
  next[L_T] = tt_l_binary(f, "stablehlo.add", a[L_T], tt_lt_const0(f, TT_I64, (double)u->dir));
}

static tt_val_t run_loop(tt_shlo_fn_t* f, tt_val_t first, tt_val_t hist, int64_t t0, int dir, step_fn_t step,
                         ctc_t* x) {
  tt_val_t st[L_N] = {tt_lt_const0(f, TT_I64, (double)t0), first, hist, x->lpp, x->skip, x->valid};
  run_t u = {step, dir, x};
  tt_l_while(f, st, L_N, run_cond, run_body, &u);
  return st[L_HIST];
}

static tt_val_t alpha_step(tt_shlo_fn_t* f, const tt_val_t* a, const ctc_t* x) {
  tt_val_t p = a[L_PREV];
  tt_val_t la2 = shift(f, p, 1, NEGINF, x);
  tt_val_t la3 = tt_l_select(f, a[L_SKIP], shift(f, p, 2, NEGINF, x), tt__ew_k(f, p, NEGINF));
  return tt__ew_add(f, lse3(f, p, la2, la3), row(f, a[L_LPP], a[L_T], x));
}

/* Builds l', lpp and the masks. Arguments: log_probs, targets at ilp, ilp + 1. */
static tt_status_t ctc_setup(tt_lctx_t* c, int ilp, int iblank, int64_t S, ctc_t* x) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t lt = tt__sh_type(f, c->args[ilp].val), tt = tt__sh_type(f, c->args[ilp + 1].val);
  const tt_larg_t *ia = &c->args[ilp + 2], *ta = &c->args[ilp + 3];
  if (lt.rank != 3 || ia->kind != TT_ARG_INTS || ta->kind != TT_ARG_INTS || ia->n != lt.dims[1] || ta->n != lt.dims[1])
    return tt_status_make(TT_UNIMPLEMENTED, "%s: expected (T, N, C) log_probs and int lengths", c->op->name);
  memset(x, 0, sizeof *x);
  x->T = lt.dims[0], x->N = lt.dims[1], x->C = lt.dims[2], x->S = S, x->dt = lt.dtype;
  x->il = ia->ints, x->tl = ta->ints;
  int64_t blank = c->args[iblank].i, N = x->N;
  int64_t* src = malloc((size_t)(N * S) * sizeof(int64_t));
  double* isl = malloc((size_t)(N * S) * sizeof(double));
  double* vl = malloc((size_t)(N * S) * sizeof(double));
  if (!src || !isl || !vl) {
    free(src), free(isl), free(vl);
    return tt_status_make(TT_RESOURCE_EXHAUSTED, "%s: out of memory", c->op->name);
  }
  int64_t off = 0, tnum = tt_type_numel(&tt);
  for (int64_t b = 0; b < N; b++) {
    if (x->il[b] < 0 || x->il[b] > x->T || x->tl[b] < 0 || 2 * x->tl[b] + 1 > S) {
      free(src), free(isl), free(vl);
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: bad input or target length for batch %lld", c->op->name,
                            (long long)b);
    }
    int64_t base = tt.rank == 1 ? off : b * (tt.rank == 2 ? tt.dims[1] : 0);
    for (int64_t s = 0; s < S; s++) {
      bool is_t = (s & 1) && (s - 1) / 2 < x->tl[b];
      int64_t k = base + (s - 1) / 2;
      src[b * S + s] = is_t && k < tnum ? k : 0;
      isl[b * S + s] = is_t;
      vl[b * S + s] = s < 2 * x->tl[b] + 1;
    }
    off += x->tl[b];
  }
  int64_t d2[2] = {N, S}, one = 1;
  tt_val_t tflat = tt_l_reshape(f, tt_l_convert(f, c->args[ilp + 1].val, TT_I64), 1, &tnum);
  if (tnum == 0) tflat = tt_l_full(f, TT_I64, 1, &one, 0), tnum = 1;
  tt_val_t got = tt_l_reshape(f, tt__sh_take(f, tflat, 0, src, N * S), 2, d2);
  tt_val_t is_t = tt_l_compare(f, "NE", tt_l_reshape(f, tt__sh_fconst(f, TT_F32, isl, N * S), 2, d2), full(f, TT_F32, 2, d2, 0));
  x->valid = tt_l_compare(f, "NE", tt_l_reshape(f, tt__sh_fconst(f, TT_F32, vl, N * S), 2, d2), full(f, TT_F32, 2, d2, 0));
  free(src), free(isl), free(vl);
  x->lab = tt_l_select(f, is_t, got, full(f, TT_I64, 2, d2, (double)blank));
  /* s - 2 is allowed when l'(s - 2) != l'(s) (s >= 2) */
  x->skip = tt_l_compare(f, "NE", shift(f, x->lab, 2, -1, x), x->lab);
  int64_t d3[3] = {x->T, N, S}, b12[2] = {1, 2};
  tt_val_t idx = tt_lt_bcast_in_dim(f, x->lab, 3, d3, b12);
  x->lpp = tt_lt_gather_dim(f, c->args[ilp].val, 2, idx);
  return NULL;
}

/* Value of (T, N, S) hist at (t_b, b, s_b) per batch entry, (N,). */
static tt_val_t pick(tt_shlo_fn_t* f, tt_val_t hist, const int64_t* t, const int64_t* s, const ctc_t* x) {
  int64_t n = x->T * x->N * x->S;
  int64_t* idx = malloc((size_t)x->N * sizeof(int64_t));
  if (!idx) {
    tt_shlo_fail(f, "out of memory");
    return TT_SHLO_INVALID;
  }
  for (int64_t b = 0; b < x->N; b++) idx[b] = (t[b] * x->N + b) * x->S + s[b];
  tt_val_t r = tt__sh_take(f, tt_l_reshape(f, hist, 1, &n), 0, idx, x->N);
  free(idx);
  return r;
}

/* _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
 * -> (neg_log_likelihood, log_alpha) */
static tt_status_t lower_ctc(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* at = &c->out_types[1];
  if (at->rank != 3) return tt_status_make(TT_UNIMPLEMENTED, "%s: expected a batched log_alpha", c->op->name);
  ctc_t x;
  TT_RETURN_IF_ERROR(ctc_setup(c, 0, 4, at->dims[2], &x));
  if (x.T == 0 || x.N == 0) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], INFINITY)));
    return tt_l_set_out(c, 1, tt_shlo_const(f, at, NEGINF));
  }
  int64_t d2[2] = {x.N, x.S};
  tt_val_t s = tt_lt_iota(f, TT_I64, 2, d2, 1);
  tt_val_t lp0 = row(f, x.lpp, tt_lt_const0(f, TT_I64, 0), &x);
  tt_val_t first = tt_l_select(f, tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "LE", s, full(f, TT_I64, 2, d2, 1)), x.valid),
                               lp0, full(f, x.dt, 2, d2, NEGINF));
  int64_t d1[1] = {x.N}, b0[1] = {0};
  tt_val_t has_input = tt_l_compare(f, "GT", tt_lt_bcast_in_dim(f, tt_shlo_const_i64s(f, x.il, (int)x.N), 2, d2, b0),
                                    full(f, TT_I64, 2, d2, 0));
  first = tt_l_select(f, has_input, first, full(f, x.dt, 2, d2, NEGINF));
  int64_t d3[3] = {x.T, x.N, x.S};
  tt_val_t hist0 = put_row(f, full(f, x.dt, 3, d3, NEGINF), first, tt_lt_const0(f, TT_I64, 0), &x);
  tt_val_t hist = run_loop(f, first, hist0, 1, 1, alpha_step, &x);
  /* the last row of each entry: l'(2 tl) and, with targets, l'(2 tl - 1) */
  int64_t* buf = calloc((size_t)(3 * x.N), sizeof(int64_t));
  double* has2 = calloc((size_t)x.N, sizeof(double));
  if (!buf || !has2) {
    free(buf), free(has2);
    return tt_status_make(TT_RESOURCE_EXHAUSTED, "%s: out of memory", c->op->name);
  }
  int64_t *tlast = buf, *s1 = buf + x.N, *s2 = buf + 2 * x.N;
  for (int64_t b = 0; b < x.N; b++) {
    tlast[b] = x.il[b] > 0 ? x.il[b] - 1 : 0;
    s1[b] = 2 * x.tl[b];
    s2[b] = x.tl[b] > 0 ? 2 * x.tl[b] - 1 : 0;
    has2[b] = x.tl[b] > 0 && x.il[b] > 0;
  }
  tt_val_t l1 = pick(f, hist, tlast, s1, &x), l2 = pick(f, hist, tlast, s2, &x);
  tt_val_t use2 = tt_l_compare(f, "NE", tt__sh_fconst(f, TT_F32, has2, x.N), full(f, TT_F32, 1, d1, 0));
  free(buf), free(has2);
  l2 = tt_l_select(f, use2, l2, full(f, x.dt, 1, d1, NEGINF));
  tt_val_t nll = tt_l_unary(f, "stablehlo.negate", lse3(f, l1, l2, full(f, x.dt, 1, d1, NEGINF)));
  int64_t perm[3] = {1, 0, 2};
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_l_reshape(f, nll, c->out_types[0].rank, c->out_types[0].dims)));
  return tt_l_set_out(c, 1, tt_l_transpose(f, hist, perm));
}


/* (N, S) i1 from a static per-(b, s) predicate table */
static tt_val_t static_mask(tt_shlo_fn_t* f, const ctc_t* x, bool (*pred)(const ctc_t*, int64_t, int64_t)) {
  int64_t n = x->N * x->S, d2[2] = {x->N, x->S};
  double* v = malloc((size_t)n * sizeof(double));
  if (!v) {
    tt_shlo_fail(f, "out of memory");
    return TT_SHLO_INVALID;
  }
  for (int64_t b = 0; b < x->N; b++)
    for (int64_t s = 0; s < x->S; s++) v[b * x->S + s] = pred(x, b, s);
  tt_val_t r = tt_l_compare(f, "NE", tt_l_reshape(f, tt__sh_fconst(f, TT_F32, v, n), 2, d2), full(f, TT_F32, 2, d2, 0));
  free(v);
  return r;
}
/* the last row's nonzero betas: s = 2 tl and s = 2 tl - 1 (tl > 0) */
static bool beta_start(const ctc_t* x, int64_t b, int64_t s) {
  return s == 2 * x->tl[b] || (x->tl[b] > 0 && s == 2 * x->tl[b] - 1);
}

static tt_val_t beta_step(tt_shlo_fn_t* f, const tt_val_t* a, const ctc_t* x) {
  tt_val_t p = a[L_PREV], lp = row(f, a[L_LPP], a[L_T], x);
  tt_val_t lb2 = shift(f, p, -1, NEGINF, x);
  tt_val_t lb3 = tt_l_select(f, a[L_SKIP], shift(f, p, -2, NEGINF, x), tt__ew_k(f, p, NEGINF));
  tt_val_t rec = tt__ew_add(f, lse3(f, p, lb2, lb3), lp);
  int64_t d2[2] = {x->N, x->S}, b0[1] = {0};
  int64_t* last = malloc((size_t)x->N * sizeof(int64_t));
  if (!last) {
    tt_shlo_fail(f, "out of memory");
    return TT_SHLO_INVALID;
  }
  for (int64_t b = 0; b < x->N; b++) last[b] = x->il[b] - 1;
  tt_val_t is_last = tt_l_compare(f, "EQ", tt_lt_splat(f, a[L_T], 2, d2),
                                  tt_lt_bcast_in_dim(f, tt_shlo_const_i64s(f, last, (int)x->N), 2, d2, b0));
  free(last);
  tt_val_t start = tt_l_select(f, static_mask(f, x, beta_start), lp, full(f, x->dt, 2, d2, NEGINF));
  return tt_l_select(f, is_last, start, rec);
}

/* One step of the per-class log-sum-exp: i counts s down from S - 1;
 * vals = {acc (T, N, C), alpha + beta (T, N, S), labels (N, S)}. */
static void class_lse_step(tt_shlo_fn_t* f, tt_val_t i, tt_val_t* vals, void* ctx) {
  const ctc_t* x = ctx;
  tt_val_t acc = vals[0];
  tt_val_t s = tt_l_binary(f, "stablehlo.subtract", tt_lt_const0(f, TT_I64, (double)(x->S - 1)), i);
  tt_val_t zero = tt_lt_const0(f, TT_I64, 0);
  tt_type_t abt = tt__sh_type(f, vals[1]), lt = tt__sh_type(f, vals[2]);
  abt.dims[2] = 1;
  lt.dims[1] = 1;
  tt_val_t ops3[4] = {vals[1], zero, zero, s}, ops2[3] = {vals[2], zero, s};
  tt_val_t col = tt_shlo_opf(f, "stablehlo.dynamic_slice", ops3, 4, &abt, "slice_sizes = array<i64: %lld, %lld, 1>",
                             (long long)x->T, (long long)x->N);
  tt_val_t lab = tt_shlo_opf(f, "stablehlo.dynamic_slice", ops2, 3, &lt, "slice_sizes = array<i64: %lld, 1>",
                             (long long)x->N);
  int64_t dc[3] = {x->T, x->N, x->C}, dt1[2] = {x->T, x->N}, d1[1] = {x->N}, b01[2] = {0, 1}, b1[1] = {1};
  tt_val_t v = tt_lt_bcast_in_dim(f, tt_l_reshape(f, col, 2, dt1), 3, dc, b01);
  tt_val_t hit = tt_l_compare(f, "EQ", tt_lt_iota(f, TT_I64, 3, dc, 2),
                              tt_lt_bcast_in_dim(f, tt_l_reshape(f, lab, 1, d1), 3, dc, b1));
  tt_val_t m = tt_l_select(f, tt_l_compare(f, "GT", v, acc), v, acc);
  tt_val_t l2 = tt__ew_add(f, tt_l_unary(f, "stablehlo.log", tt__ew_add(f, tt_l_unary(f, "stablehlo.exponential", tt__ew_sub(f, acc, m)),
                                                                   tt_l_unary(f, "stablehlo.exponential", tt__ew_sub(f, v, m)))), m);
  tt_val_t upd = tt_l_select(f, tt__ew_cmpk(f, "EQ", acc, NEGINF), v, l2);
  vals[0] = tt_l_select(f, hit, upd, acc);
}

/* _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths,
 * neg_log_likelihood, log_alpha, blank, zero_infinity) -> grad wrt log_probs */
static tt_status_t lower_ctc_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_type_t at = tt__sh_type(f, c->args[6].val);
  if (at.rank != 3) return tt_status_make(TT_UNIMPLEMENTED, "%s: expected a batched log_alpha", c->op->name);
  ctc_t x;
  TT_RETURN_IF_ERROR(ctc_setup(c, 1, 7, at.dims[2], &x));
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0));
  int64_t d2[2] = {x.N, x.S}, d3[3] = {x.T, x.N, x.S}, perm[3] = {1, 0, 2};
  /* beta: t from T - 1 down; the s + 2 transition needs l'(s + 2) != l'(s) */
  x.skip = tt_l_compare(f, "NE", shift(f, x.lab, -2, -1, &x), x.lab);
  tt_val_t none = full(f, x.dt, 2, d2, NEGINF);
  tt_val_t beta = run_loop(f, none, full(f, x.dt, 3, d3, NEGINF), x.T - 1, -1, beta_step, &x);
  tt_val_t ab = tt__ew_add(f, tt_l_transpose(f, tt_l_convert(f, c->args[6].val, x.dt), perm), beta);
  /* per class: log-sum-exp over s (descending, as CPU accumulates) of alpha
   * + beta, as a loop over s (unrolled, XLA's fusion of the chain blows up) */
  int64_t dc[3] = {x.T, x.N, x.C}, b1[1] = {1};
  tt_val_t lv[3] = {full(f, x.dt, 3, dc, NEGINF), ab, x.lab};
  tt_l_fori(f, x.S, lv, 3, class_lse_step, &x);
  tt_val_t acc = lv[0];
  tt_val_t lp = tt_l_convert(f, c->args[1].val, x.dt);
  tt_val_t nll = tt_lt_bcast_in_dim(f, tt_l_convert(f, c->args[5].val, x.dt), 3, dc, b1);
  tt_val_t gr = tt_lt_bcast_in_dim(f, tt_l_convert(f, c->args[0].val, x.dt), 3, dc, b1);
  tt_val_t g = tt__ew_sub(f, tt_l_unary(f, "stablehlo.exponential", lp),
                          tt_l_unary(f, "stablehlo.exponential", tt__ew_sub(f, tt__ew_add(f, acc, nll), lp)));
  g = tt__ew_mul(f, g, gr);
  /* zero for t >= input length, and (zero_infinity) where the loss is infinite */
  int64_t b0[1] = {1};
  tt_val_t L = tt_lt_bcast_in_dim(f, tt_shlo_const_i64s(f, x.il, (int)x.N), 3, dc, b0);
  tt_val_t keep = tt_l_compare(f, "LT", tt_lt_iota(f, TT_I64, 3, dc, 0), L);
  if (c->args[8].kind == TT_ARG_BOOL && c->args[8].i)
    keep = tt_l_binary(f, "stablehlo.and", keep, tt__ew_cmpk(f, "NE", nll, INFINITY));
  g = tt_l_select(f, keep, g, tt__ew_k(f, g, 0));
  return tt_l_set_out(c, 0, g);
}

const tt_lower_entry_t tt_lower_nn_more_ctc[] = {
    {"aten::_ctc_loss", lower_ctc, 0, 0},
    {"aten::_ctc_loss.out", lower_ctc, 0, 0},
    {"aten::_ctc_loss_backward", lower_ctc_bwd, 0, 0},
    {"aten::_ctc_loss_backward.out", lower_ctc_bwd, 0, 0},
};
const int tt_lower_nn_more_ctc_count = TT_TABLE_COUNT(tt_lower_nn_more_ctc);
