/* The special family, orthogonal polynomials P_n(x) with a tensor degree n:
 * Chebyshev T/U/V/W (plain and shifted to [0, 1]), Hermite H / He, Laguerre
 * L and Legendre P. As PyTorch's CPU kernel: n (x's dtype) is truncated to
 * an integer, n < 0 gives 0, some points have closed forms (|x| == 1, the
 * trigonometric form of the Chebyshev kinds inside (-1, 1) for larger n),
 * else the three-term recurrence runs n - 1 steps (stopping early once the
 * value is NaN). The recurrence is one stablehlo.while over all elements,
 * each masked off when its own degree is reached; the loop ends when no
 * element is still active. */
#include <math.h>

#include "special_shorthand.h"

#define EQ(a, b) tt_l_compare(f, "EQ", a, b)

enum pfam { PF_CHEB, PF_SHIFTED, PF_HERM_H, PF_HERM_HE, PF_LAGUERRE, PF_LEGENDRE };
enum pkind { PK_T, PK_U, PK_V, PK_W, PK_NONE };

typedef struct pinfo {
  unsigned char fam, kind;
  signed char trig_n; /* the closed trigonometric form is used for n > trig_n (-1: never) */
} pinfo_t;

#define R(op) [op - TT_SP_BESSEL_END]
static const pinfo_t k_poly[] = {
    R(TT_SP_CHEB_T) = {PF_CHEB, PK_T, 6},       R(TT_SP_CHEB_U) = {PF_CHEB, PK_U, 8},
    R(TT_SP_CHEB_V) = {PF_CHEB, PK_V, 8},       R(TT_SP_CHEB_W) = {PF_CHEB, PK_W, 8},
    R(TT_SP_SCHEB_T) = {PF_SHIFTED, PK_T, 6},   R(TT_SP_SCHEB_U) = {PF_SHIFTED, PK_U, 6},
    R(TT_SP_SCHEB_V) = {PF_SHIFTED, PK_V, 6},   R(TT_SP_SCHEB_W) = {PF_SHIFTED, PK_W, 4},
    R(TT_SP_HERMITE_H) = {PF_HERM_H, PK_NONE, -1}, R(TT_SP_HERMITE_HE) = {PF_HERM_HE, PK_NONE, -1},
    R(TT_SP_LAGUERRE) = {PF_LAGUERRE, PK_NONE, -1}, R(TT_SP_LEGENDRE) = {PF_LEGENDRE, PK_NONE, -1},
};
_Static_assert(sizeof(k_poly) / sizeof(k_poly[0]) == TT_SP_POLY_END - TT_SP_BESSEL_END,
               "one k_poly row per polynomial");

typedef struct pctx {
  const pinfo_t* info;
} pctx_t;

/* State of the recurrence loop. */
enum { S_J, S_ANY, S_X, S_N, S_ACT, S_P, S_Q, S_COUNT };

/* The value after step j (p = P_{j-1}, q = P_j in the loop's numbering). */
static tt_val_t step(tt_shlo_fn_t* f, const pinfo_t* in, tt_val_t j, tt_val_t x, tt_val_t p,
                     tt_val_t q) {
  switch (in->fam) {
    case PF_CHEB: return SUB(MUL(ADD(x, x), q), p);
    case PF_SHIFTED: {
      tt_val_t y = SUB(ADD(x, x), K(x, 1.0));
      return SUB(MUL(ADD(y, y), q), p);
    }
    case PF_HERM_H: return SUB(MUL(ADD(x, x), q), MUL(ADD(j, j), p));
    case PF_HERM_HE: return SUB(MUL(x, q), MUL(j, p));
    case PF_LAGUERRE:
      return DIV(SUB(MUL(ADD(ADD(j, j), SUB(K(x, 1.0), x)), q), MUL(j, p)), ADD(j, K(j, 1.0)));
    default: /* PF_LEGENDRE */
      return DIV(SUB(MUL(MUL(ADD(ADD(j, j), K(j, 1.0)), x), q), MUL(j, p)), ADD(j, K(j, 1.0)));
  }
}

static bool stops_at_nan(const pinfo_t* in) { return in->fam != PF_HERM_H && in->fam != PF_HERM_HE; }

/* Whether an element still steps: its degree not reached, its value not NaN. */
static tt_val_t still(tt_shlo_fn_t* f, const pinfo_t* in, tt_val_t act, tt_val_t j, tt_val_t n,
                      tt_val_t q) {
  act = tt__sp_and(f, act, tt_l_compare(f, "LT", j, n));
  if (stops_at_nan(in)) act = tt__sp_and(f, act, tt__sp_not(f, tt__ew_isnan(f, q)));
  return act;
}

static tt_val_t loop_cond(tt_shlo_fn_t* f, const tt_val_t* st, void* ud) {
  (void)ud;
  return st[S_ANY];
}

static void loop_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* nx, void* ud) {
  const pinfo_t* in = ((pctx_t*)ud)->info;
  const tt_type_t* tp = tt_shlo_type(f, st[S_X]);
  if (!tp) return;
  const tt_type_t tcopy = *tp, *tx = &tcopy; /* the value table may move */
  tt_val_t j = tt_lt_splat(f, st[S_J], tx->rank, tx->dims);
  tt_val_t r = step(f, in, j, st[S_X], st[S_P], st[S_Q]);
  tt_val_t act = st[S_ACT];
  for (int i = 0; i < S_COUNT; i++) nx[i] = st[i];
  nx[S_P] = SEL(act, st[S_Q], st[S_P]);
  nx[S_Q] = SEL(act, r, st[S_Q]);
  nx[S_J] = ADD(st[S_J], K(st[S_J], 1.0));
  tt_val_t j1 = tt_lt_splat(f, nx[S_J], tx->rank, tx->dims);
  nx[S_ACT] = still(f, in, act, j1, st[S_N], nx[S_Q]);
  nx[S_ANY] = tt__sp_any(f, nx[S_ACT]);
}

static tt_val_t is_even(tt_shlo_fn_t* f, tt_val_t n) {
  tt_val_t h = tt__ew_mulk(f, n, 0.5);
  return EQ(h, UN("floor", h));
}
/* v where n is even, else -v */
static tt_val_t even_sign(tt_shlo_fn_t* f, tt_val_t n, tt_val_t v) {
  return SEL(is_even(f, n), v, UN("negate", v));
}

/* The closed form inside (-1, 1) for n > trig_n (t = the Chebyshev variable). */
static tt_val_t trig_form(tt_shlo_fn_t* f, const pinfo_t* in, tt_val_t t, tt_val_t n) {
  tt_val_t th = tt__sp_un(f, "chlo.acos", t);
  tt_val_t n1 = ADD(n, K(n, 1.0)), nh = ADD(n, K(n, 0.5)), two_n1 = ADD(ADD(n, n), K(n, 1.0));
  tt_val_t half = tt__ew_mulk(f, th, 0.5);
  switch (in->kind) {
    case PK_T: return UN("cosine", MUL(n, th));
    case PK_U: {
      tt_val_t s = UN("sine", th);
      tt_val_t a = DIV(UN("sine", MUL(n1, th)), s);
      tt_val_t b = DIV(MUL(n1, UN("cosine", MUL(n1, th))), t);
      return SEL(CMP("NE", s, 0), a, b);
    }
    case PK_V: {
      tt_val_t a = DIV(UN("cosine", MUL(nh, th)), UN("cosine", half));
      return SEL(CMP("NE", UN("sine", half), 1.0), a, even_sign(f, n, two_n1));
    }
    default: { /* PK_W */
      tt_val_t a = DIV(UN("sine", MUL(nh, th)), UN("sine", half));
      tt_val_t b = even_sign(f, n, K(n, 1.0));
      if (in->fam == PF_CHEB) b = SEL(CMP("GT", t, 0), two_n1, b);
      return SEL(CMP("NE", UN("cosine", half), 1.0), a, b);
    }
  }
}

/* P_1(x) */
static tt_val_t first(tt_shlo_fn_t* f, const pinfo_t* in, tt_val_t x) {
  tt_val_t y = in->fam == PF_SHIFTED ? SUB(ADD(x, x), K(x, 1.0)) : x;
  switch (in->fam) {
    case PF_HERM_H: return ADD(x, x);
    case PF_HERM_HE: case PF_LEGENDRE: return x;
    case PF_LAGUERRE: return SUB(K(x, 1.0), x);
    default: break;
  }
  switch (in->kind) {
    case PK_T: return y;
    case PK_U: return ADD(y, y);
    case PK_V: return SUB(ADD(y, y), K(y, 1.0));
    default: return ADD(ADD(y, y), K(y, 1.0));
  }
}

/* The closed forms at the edge points: |x| == 1 (plain Chebyshev, Legendre),
 * x == 1 and x == 0 (shifted), x == 0 (Laguerre). *where gets the mask. */
static tt_val_t edge(tt_shlo_fn_t* f, const pinfo_t* in, tt_val_t x, tt_val_t n, tt_val_t* where) {
  tt_val_t one = K(x, 1.0), n1 = ADD(n, one), two_n1 = ADD(ADD(n, n), one);
  if (in->fam == PF_LAGUERRE) {
    *where = CMP("EQ", x, 0);
    return one;
  }
  if (in->fam == PF_LEGENDRE || in->fam == PF_CHEB) {
    *where = CMP("EQ", tt__sp_abs(f, x), 1.0);
    tt_val_t pos = CMP("GT", x, 0);
    switch (in->fam == PF_LEGENDRE ? PK_T : in->kind) {
      case PK_T: return SEL(pos, one, even_sign(f, n, one));
      case PK_U: return SEL(pos, n1, even_sign(f, n, n1));
      case PK_V: return SEL(pos, one, even_sign(f, n, two_n1));
      default: return SEL(pos, two_n1, even_sign(f, n, one));
    }
  }
  /* shifted Chebyshev: x == 1 first, then x == 0 */
  tt_val_t at1 = CMP("EQ", x, 1.0);
  *where = tt__sp_or(f, at1, CMP("EQ", x, 0));
  switch (in->kind) {
    case PK_T: return SEL(at1, one, even_sign(f, n, one));
    case PK_U: return SEL(at1, n1, even_sign(f, n, n1));
    case PK_V: return SEL(at1, one, even_sign(f, n, two_n1));
    default: return SEL(at1, two_n1, even_sign(f, n, one));
  }
}

tt_status_t tt__sp_lower_poly(tt_lctx_t* c) {
  int64_t op = c->op->param;
  if (op < TT_SP_BESSEL_END || op >= TT_SP_POLY_END)
    return tt_status_make(TT_INTERNAL, "%s: bad special param %lld", c->op->name, (long long)op);
  if (!tt__ew_has(c, 0) || !tt__ew_has(c, 1))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected (x, n)", c->op->name);
  const pinfo_t* in = &k_poly[op - TT_SP_BESSEL_END];
  tt_shlo_fn_t* f = c->f;
  int idx[2] = {0, 1};
  tt_val_t v[2];
  tt__sp_float_args(c, idx, 2, v, NULL);
  tt_val_t x = v[0];
  /* static_cast<int64_t>(n): truncation; inf / NaN become INT64_MIN on x86 */
  tt_val_t n = v[1];
  tt_val_t nt = SEL(CMP("LT", n, 0), UN("ceil", n), UN("floor", n));
  n = tt__sp_where_k(f, tt__sp_not(f, tt__sp_isfinite(f, n)), -1.0, nt);
  const tt_type_t* tx_p = tt_shlo_type(f, x);
  if (!tx_p) return tt_status_make(TT_INTERNAL, "%s: bad operand", c->op->name);
  const tt_type_t tx_copy = *tx_p, *tx = &tx_copy; /* the table may move */
  bool f64 = tx->dtype == TT_F64;

  /* the recurrence, for the elements that need it */
  bool herm = in->fam == PF_HERM_H || in->fam == PF_HERM_HE, has_edge = !herm;
  tt_val_t at_edge = TT_SHLO_INVALID, ev = TT_SHLO_INVALID;
  if (has_edge) ev = edge(f, in, x, n, &at_edge);
  tt_val_t closed = has_edge ? at_edge : tt_l_full(f, TT_BOOL, tx->rank, tx->dims, 0);
  tt_val_t t = in->fam == PF_SHIFTED ? SUB(ADD(x, x), K(x, 1.0)) : x;
  tt_val_t use_trig = tt_l_full(f, TT_BOOL, tx->rank, tx->dims, 0);
  if (in->trig_n >= 0) {
    use_trig = tt__sp_and(f, CMP("GT", n, in->trig_n), CMP("LT", tt__sp_abs(f, t), 1.0));
    use_trig = tt__sp_and(f, use_trig, tt__sp_not(f, closed));
  }
  double limit = f64 ? 512.0 : 128.0;
  tt_val_t q1 = first(f, in, x);
  tt_val_t needs = tt__sp_and(f, CMP("GE", n, 2.0), tt__sp_not(f, tt__sp_or(f, closed, use_trig)));
  if (herm) needs = tt__sp_and(f, needs, CMP("LE", n, limit));
  tt_val_t st[S_COUNT];
  st[S_J] = tt_lt_const0(f, tx->dtype, 1.0);
  st[S_X] = x;
  st[S_N] = n;
  st[S_P] = K(x, 1.0);
  st[S_Q] = q1;
  st[S_ACT] = still(f, in, needs, K(x, 1.0), n, q1);
  st[S_ANY] = tt__sp_any(f, st[S_ACT]);
  pctx_t pc = {in};
  tt_l_while(f, st, S_COUNT, loop_cond, loop_body, &pc);

  tt_val_t r = st[S_Q]; /* P_n for n >= 1 (P_1 itself when the loop never ran) */
  r = tt__sp_where_k(f, CMP("EQ", n, 0), 1.0, r);
  if (herm) r = tt__sp_where_k(f, CMP("GT", n, limit), NAN, r);
  if (in->trig_n >= 0) r = SEL(use_trig, trig_form(f, in, t, n), r);
  if (has_edge) r = SEL(at_edge, ev, r);
  r = tt__sp_where_k(f, CMP("LT", n, 0), 0.0, r);
  return tt_l_set_out(c, 0, r);
}
