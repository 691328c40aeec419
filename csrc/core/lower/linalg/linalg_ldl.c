/* LDL^T with Bunch-Kaufman pivoting as LAPACK's sytf2 (lower triangle), and
 * the matching solve (sytrs): linalg_ldl_factor_ex and linalg_ldl_solve.
 * Complex matrices follow zsytf2 / zsytrs (complex symmetric: hermitian=False)
 * or zhetf2 / zhetrs (hermitian=True: L D L^H, D real on its diagonal, the
 * input diagonal's imaginary part ignored, conjugates where LAPACK takes
 * them); pivots compare |re| + |im| (LAPACK's CABS1), a Hermitian diagonal
 * by |re|.
 *
 * Each batch element advances by a 1x1 or a 2x2 pivot, so the column k is
 * a per-batch value: the loops run n steps and every access to row/column
 * k goes through masks (picks are sums whose zero is -0.0, so bit-exact).
 * Interchanges are symmetric permutations of the trailing block only, as in
 * LAPACK (earlier columns of L are not permuted: the factor is in LAPACK's
 * product form, which is what the pivots describe); a Hermitian matrix is
 * permuted whole (its upper triangle the conjugate of the lower), which
 * conjugates the entries LAPACK's zhetf2 conjugates. CPU's sytrf switches to
 * the blocked lasyf for large n (LAPACK's block size, 64 in the reference),
 * so for such sizes results agree to rounding only. */
#include <math.h>

#include "linalg_util.h"
#include "../elementwise/lower_elementwise.h"

typedef struct mats {
  tt_type_t at, vt, bt; /* (batch..., n, n), (batch..., n), (batch...) */
  int r, nb;
  int64_t n;
  int64_t bd[TT_MAX_RANK]; /* 0, 1, ... */
  tt_val_t ri, ci;         /* row / column iotas of at */
} mats_t;

static void mats_init(tt_shlo_fn_t* f, mats_t* m, const tt_type_t* at) {
  m->at = *at;
  m->r = at->rank;
  m->nb = m->r - 2;
  m->n = at->dims[m->r - 1];
  m->vt = *at;
  m->vt.rank = m->r - 1;
  m->bt = *at;
  m->bt.rank = m->nb;
  for (int i = 0; i < TT_MAX_RANK; i++) m->bd[i] = i;
  m->ri = tt_lt_iota(f, TT_I64, m->r, at->dims, m->r - 2);
  m->ci = tt_lt_iota(f, TT_I64, m->r, at->dims, m->r - 1);
}

static tt_val_t and2(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.and", a, b); }
static tt_val_t or2(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.or", a, b); }
static tt_val_t not1(tt_shlo_fn_t* f, tt_val_t a) { return tt_l_unary(f, "stablehlo.not", a); }
static tt_val_t sub(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.subtract", a, b); }
static tt_val_t mul(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.multiply", a, b); }
static tt_val_t div2(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.divide", a, b); }
static tt_val_t cmp(tt_shlo_fn_t* f, const char* d, tt_val_t a, tt_val_t b) { return tt_l_compare(f, d, a, b); }
static tt_val_t absv(tt_shlo_fn_t* f, tt_val_t a) { return tt_l_unary(f, "stablehlo.abs", a); }

/* A (batch...) value broadcast to the full shape t (batch dims leading). */
static tt_val_t bb(tt_shlo_fn_t* f, const mats_t* m, tt_val_t v, const tt_type_t* t) {
  return tt_lt_bcast_in_dim(f, v, t->rank, t->dims, m->bd);
}
/* A (batch..., n) vector as x[i] (along rows) or x[j] (along columns) of at. */
static tt_val_t along(tt_shlo_fn_t* f, const mats_t* m, tt_val_t v, bool rows) {
  int64_t d[TT_MAX_RANK];
  for (int i = 0; i < m->nb; i++) d[i] = i;
  d[m->nb] = rows ? m->r - 2 : m->r - 1;
  return tt_lt_bcast_in_dim(f, v, m->r, m->at.dims, d);
}
/* Sum over `dims` (mask) of v where sel, else -0.0 / 0. */
static tt_val_t pick(tt_shlo_fn_t* f, tt_val_t v, tt_val_t sel, uint32_t dims) {
  tt_type_t t = tt__sh_type(f, v), t0 = t;
  t0.rank = 0;
  return tt_lt_reduce(f, tt_l_select(f, sel, v, tt__la_neg0(f, &t)), dims, "stablehlo.add", tt__la_neg0(f, &t0));
}
/* Column j (per batch) of a matrix shaped like m->at: (batch..., n). */
static tt_val_t column(tt_shlo_fn_t* f, const mats_t* m, tt_val_t a, tt_val_t j) {
  return pick(f, a, cmp(f, "EQ", m->ci, bb(f, m, j, &m->at)), 1u << (m->r - 1));
}
/* Entry v[j] (per batch) of a (batch..., n) vector. */
static tt_val_t entry(tt_shlo_fn_t* f, const mats_t* m, tt_val_t v, tt_val_t j) {
  tt_type_t t = tt__sh_type(f, v);
  tt_val_t io = tt_lt_iota(f, TT_I64, t.rank, t.dims, t.rank - 1);
  return pick(f, v, cmp(f, "EQ", io, bb(f, m, j, &t)), 1u << (t.rank - 1));
}
/* The permutation of (batch..., n) indices exchanging a and b (per batch). */
static tt_val_t swap_perm(tt_shlo_fn_t* f, const mats_t* m, tt_val_t a, tt_val_t b) {
  tt_type_t t = m->vt;
  t.dtype = TT_I64;
  tt_val_t io = tt_lt_iota(f, TT_I64, t.rank, t.dims, t.rank - 1);
  tt_val_t av = bb(f, m, a, &t), bv = bb(f, m, b, &t);
  return tt_l_select(f, cmp(f, "EQ", io, av), bv, tt_l_select(f, cmp(f, "EQ", io, bv), av, io));
}
static tt_val_t k64(tt_shlo_fn_t* f, const tt_type_t* t, double v) {
  tt_type_t i = *t;
  i.dtype = TT_I64;
  return tt_shlo_const(f, &i, v);
}

/* What the loops' steps know beyond the types. */
typedef struct ldl_ctx {
  tt_type_t at; /* the factor's type (batch..., n, n) */
  bool herm;    /* complex and Hermitian (zhetf2 / zhetrs) */
} ldl_ctx_t;

static tt_type_t real_type(const tt_type_t* t) {
  tt_type_t r = *t;
  if (tt_dtype_is_complex(r.dtype)) r.dtype = tt_dtype_real_part(r.dtype);
  return r;
}
static tt_val_t re_part(tt_shlo_fn_t* f, tt_val_t v) { return tt__la_is_complex(f, v) ? tt__cx_re(f, v) : v; }
/* A real value converted to t's dtype ((v, 0) for a complex t). */
static tt_val_t as_type(tt_shlo_fn_t* f, tt_val_t v, const tt_type_t* t) { return tt_l_convert(f, v, t->dtype); }
/* a with the imaginary part of its diagonal dropped (zhetf2's DBLE(A(K,K))). */
static tt_val_t real_diag(tt_shlo_fn_t* f, const mats_t* m, tt_val_t a) {
  return tt_l_select(f, cmp(f, "EQ", m->ri, m->ci), as_type(f, re_part(f, a), &m->at), a);
}

/* One pivot step of sytf2 / hetf2. vals: a, ipiv (batch..., n) i32, info
 * (batch...) i32, k (batch...) i64. */
static void ldl_step(tt_shlo_fn_t* f, tt_val_t it, tt_val_t* vals, void* ctx) {
  const ldl_ctx_t* x = ctx;
  mats_t m;
  mats_init(f, &m, &x->at);
  tt_val_t a = vals[0], k = vals[3];
  const tt_type_t* at = &m.at;
  tt_type_t bt = m.bt, vt = m.vt;
  tt_type_t rbt = real_type(&bt), rvt = real_type(&vt), rat = real_type(at);
  uint32_t both = (1u << (m.r - 2)) | (1u << (m.r - 1));
  tt_val_t act = cmp(f, "LT", k, k64(f, &bt, (double)m.n));
  tt_val_t kc = tt_l_select(f, act, k, k64(f, &bt, (double)(m.n - 1)));
  tt_val_t kr = bb(f, &m, kc, at);
  tt_val_t rows = tt_lt_iota(f, TT_I64, vt.rank, vt.dims, vt.rank - 1);
  tt_type_t vi = vt;
  vi.dtype = TT_I64;
  tt_val_t kv = bb(f, &m, kc, &vi);
  /* pivot choice (a Hermitian diagonal entry counts by |re|) */
  tt_val_t colk = column(f, &m, a, kc);
  tt_val_t akk0 = entry(f, &m, colk, kc);
  tt_val_t absakk = x->herm ? absv(f, re_part(f, akk0)) : tt__la_cabs1(f, akk0);
  tt_val_t cand = tt_l_select(f, cmp(f, "GT", rows, kv), tt__la_cabs1(f, colk), tt_shlo_const(f, &rvt, -1.0));
  tt_val_t cmax, imax;
  tt_lt_arg_extreme(f, cand, vt.rank - 1, true, &cmax, &imax);
  tt_val_t zb = tt_shlo_const(f, &rbt, 0.0);
  tt_val_t colmax = tt_l_select(f, cmp(f, "GT", cmax, zb), cmax, zb);
  tt_val_t zero_piv = or2(f, and2(f, cmp(f, "EQ", absakk, zb), cmp(f, "EQ", colmax, zb)),
                          cmp(f, "NE", absakk, absakk));
  tt_val_t ir = bb(f, &m, imax, at);
  tt_val_t m1 = and2(f, and2(f, cmp(f, "EQ", m.ri, ir), cmp(f, "GE", m.ci, kr)), cmp(f, "LT", m.ci, ir));
  tt_val_t m2 = and2(f, cmp(f, "EQ", m.ci, ir), cmp(f, "GT", m.ri, ir));
  tt_val_t rowmax = tt_lt_reduce(f, tt_l_select(f, or2(f, m1, m2), tt__la_cabs1(f, a), tt_shlo_const(f, &rat, 0.0)),
                                 both, "stablehlo.maximum", tt_lt_const0(f, rat.dtype, 0.0));
  tt_val_t aii0 = pick(f, a, and2(f, cmp(f, "EQ", m.ri, ir), cmp(f, "EQ", m.ci, ir)), both);
  tt_val_t aii = x->herm ? absv(f, re_part(f, aii0)) : tt__la_cabs1(f, aii0);
  tt_val_t alpha = tt_shlo_const(f, &rbt, (1.0 + sqrt(17.0)) / 8.0);
  tt_val_t ac = mul(f, alpha, colmax);
  tt_val_t keep = or2(f, cmp(f, "GE", absakk, ac), cmp(f, "GE", absakk, mul(f, ac, div2(f, colmax, rowmax))));
  tt_val_t two = and2(f, not1(f, keep), not1(f, cmp(f, "GE", aii, mul(f, alpha, rowmax))));
  keep = or2(f, keep, zero_piv);
  two = and2(f, two, not1(f, zero_piv));
  tt_val_t kp = tt_l_select(f, keep, kc, imax);
  tt_val_t kk = tt_l_select(f, two, tt_l_binary(f, "stablehlo.add", kc, k64(f, &bt, 1.0)), kc);
  /* symmetric interchange of kk and kp in the trailing block */
  tt_val_t lower = cmp(f, "GE", m.ri, m.ci);
  tt_val_t full = tt_l_select(f, lower, a, x->herm ? tt__la_mH(f, a) : tt__la_mT(f, a));
  tt_val_t p = swap_perm(f, &m, kk, kp);
  tt_val_t pf = tt__la_mT(f, tt__la_take_rows(f, tt__la_mT(f, tt__la_take_rows(f, full, p)), p));
  tt_val_t actb = bb(f, &m, act, at);
  tt_val_t trail = and2(f, and2(f, cmp(f, "GE", m.ri, kr), cmp(f, "GE", m.ci, kr)), lower);
  a = tt_l_select(f, and2(f, and2(f, trail, actb), not1(f, bb(f, &m, zero_piv, at))), pf, a);
  /* 1x1 update: A -= x d11 x^T (x^H), column k scaled by d11 (real for Hermitian) */
  colk = column(f, &m, a, kc);
  tt_val_t k1 = tt_l_select(f, cmp(f, "LT", kc, k64(f, &bt, (double)(m.n - 1))),
                            tt_l_binary(f, "stablehlo.add", kc, k64(f, &bt, 1.0)), kc);
  tt_val_t colk1 = column(f, &m, a, k1);
  tt_val_t akk = entry(f, &m, colk, kc);
  tt_val_t d11 = x->herm ? as_type(f, div2(f, tt_shlo_const(f, &rbt, 1.0), re_part(f, akk)), &bt)
                         : div2(f, tt_shlo_const(f, &bt, 1.0), akk);
  tt_val_t xi = along(f, &m, colk, true), xj = along(f, &m, x->herm ? tt__la_conj(f, colk) : colk, false);
  tt_val_t upd1 = sub(f, a, mul(f, xi, mul(f, bb(f, &m, d11, at), xj)));
  tt_val_t sc1 = mul(f, xi, bb(f, &m, d11, at));
  /* 2x2 update */
  tt_val_t d21 = entry(f, &m, colk, k1), a22 = entry(f, &m, colk1, k1);
  tt_val_t wk, wkp1, upd2;
  if (x->herm) { /* zhetf2: d = |a21|, d11 = re a22 / d, d22 = re akk / d, d21 = a21 / d */
    tt_val_t d = tt_l_hypot(f, tt__cx_re(f, d21), tt__cx_im(f, d21));
    tt_val_t h11 = div2(f, re_part(f, a22), d), h22 = div2(f, re_part(f, akk), d);
    tt_val_t tt = div2(f, tt_shlo_const(f, &rbt, 1.0), sub(f, mul(f, h11, h22), tt_shlo_const(f, &rbt, 1.0)));
    tt_val_t h21 = div2(f, d21, as_type(f, d, &bt));
    tt_val_t dd = bb(f, &m, as_type(f, div2(f, tt, d), &bt), &vt);
    tt_val_t h11v = bb(f, &m, as_type(f, h11, &bt), &vt), h22v = bb(f, &m, as_type(f, h22, &bt), &vt);
    tt_val_t h21v = bb(f, &m, h21, &vt);
    wk = mul(f, dd, sub(f, mul(f, h11v, colk), mul(f, h21v, colk1)));
    wkp1 = mul(f, dd, sub(f, mul(f, h22v, colk1), mul(f, tt__la_conj(f, h21v), colk)));
    upd2 = sub(f, sub(f, a, mul(f, xi, along(f, &m, tt__la_conj(f, wk), false))),
               mul(f, along(f, &m, colk1, true), along(f, &m, tt__la_conj(f, wkp1), false)));
  } else {
    tt_val_t e11 = div2(f, a22, d21), e22 = div2(f, akk, d21);
    tt_val_t t = div2(f, tt_shlo_const(f, &bt, 1.0), sub(f, mul(f, e11, e22), tt_shlo_const(f, &bt, 1.0)));
    tt_val_t e21 = div2(f, t, d21);
    tt_val_t e21v = bb(f, &m, e21, &vt), e11v = bb(f, &m, e11, &vt), e22v = bb(f, &m, e22, &vt);
    wk = mul(f, e21v, sub(f, mul(f, e11v, colk), colk1));
    wkp1 = mul(f, e21v, sub(f, mul(f, e22v, colk1), colk));
    upd2 = sub(f, sub(f, a, mul(f, xi, along(f, &m, wk, false))),
               mul(f, along(f, &m, colk1, true), along(f, &m, wkp1, false)));
  }
  tt_val_t go = and2(f, act, not1(f, zero_piv));
  tt_val_t do1 = bb(f, &m, and2(f, go, not1(f, two)), at), do2 = bb(f, &m, and2(f, go, two), at);
  tt_val_t kr2 = tt_l_binary(f, "stablehlo.add", kr, k64(f, at, 2.0));
  tt_val_t below1 = cmp(f, "GT", m.ri, kr), below2 = cmp(f, "GE", m.ri, kr2);
  tt_val_t r1 = and2(f, and2(f, below1, cmp(f, "GT", m.ci, kr)), lower);
  tt_val_t r2 = and2(f, and2(f, below2, cmp(f, "GE", m.ci, kr2)), lower);
  tt_val_t ck = cmp(f, "EQ", m.ci, kr), ck1 = cmp(f, "EQ", m.ci, bb(f, &m, k1, at));
  a = tt_l_select(f, and2(f, do1, r1), upd1, a);
  a = tt_l_select(f, and2(f, do1, and2(f, ck, below1)), sc1, a);
  a = tt_l_select(f, and2(f, do2, r2), upd2, a);
  a = tt_l_select(f, and2(f, do2, and2(f, ck, below2)), along(f, &m, wk, true), a);
  a = tt_l_select(f, and2(f, do2, and2(f, ck1, below2)), along(f, &m, wkp1, true), a);
  vals[0] = x->herm ? real_diag(f, &m, a) : a; /* zher / zhetf2 keep the diagonal real */
  /* pivots: kp + 1, or -(kp + 1) at k and k + 1 for a 2x2 block */
  tt_type_t pt = tt__sh_type(f, vals[1]);
  tt_type_t b32 = bt;
  b32.dtype = TT_I32;
  tt_val_t kp1 = tt_l_convert(f, tt_l_binary(f, "stablehlo.add", kp, k64(f, &bt, 1.0)), TT_I32);
  tt_val_t pv = tt_l_select(f, two, tt_l_unary(f, "stablehlo.negate", kp1), kp1);
  tt_val_t pio = tt_lt_iota(f, TT_I64, pt.rank, pt.dims, pt.rank - 1);
  tt_type_t pti = pt;
  pti.dtype = TT_I64;
  tt_val_t hit = or2(f, cmp(f, "EQ", pio, bb(f, &m, kc, &pti)),
                     and2(f, bb(f, &m, two, &pti), cmp(f, "EQ", pio, bb(f, &m, k1, &pti))));
  vals[1] = tt_l_select(f, and2(f, hit, bb(f, &m, act, &pti)), bb(f, &m, pv, &pt), vals[1]);
  tt_val_t first = and2(f, and2(f, act, zero_piv), cmp(f, "EQ", vals[2], tt_shlo_const(f, &b32, 0.0)));
  vals[2] = tt_l_select(f, first, tt_l_convert(f, tt_l_binary(f, "stablehlo.add", kc, k64(f, &bt, 1.0)), TT_I32),
                        vals[2]);
  tt_val_t step = tt_l_select(f, two, k64(f, &bt, 2.0), k64(f, &bt, 1.0));
  vals[3] = tt_l_select(f, act, tt_l_binary(f, "stablehlo.add", k, step), k);
}

/* linalg_ldl_factor_ex(self, *, hermitian, check_errors) -> (LD, pivots, info) */
tt_status_t tt__la_lower_ldl_factor(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  tt_type_t at = tt__sh_type(f, c->args[0].val);
  ldl_ctx_t x = {at, tt_dtype_is_complex(at.dtype) && c->args[1].i};
  if (tt__la_empty(&at)) return tt__la_zero_outs(c);
  int r = at.rank;
  tt_type_t pt = at, it = at;
  pt.dtype = it.dtype = TT_I32;
  pt.rank = r - 1;
  it.rank = r - 2;
  tt_type_t kt = it;
  kt.dtype = TT_I64;
  /* CPU factors tril(A): the strict upper triangle of LD is zero */
  tt_val_t a0 = tt__la_tri(f, c->args[0].val, true, 0);
  if (x.herm) { /* zhetf2 reads only the real part of the diagonal */
    mats_t m;
    mats_init(f, &m, &at);
    a0 = real_diag(f, &m, a0);
  }
  tt_val_t v[4] = {a0, tt_shlo_const(f, &pt, 0.0), tt_shlo_const(f, &it, 0.0), tt_shlo_const(f, &kt, 0.0)};
  tt_l_fori(f, at.dims[r - 1], v, 4, ldl_step, &x);
  if (c->args[2].i)
    tt_shlo_add_check(f, tt__la_any_nonzero(f, v[2]), TT_FAILED_PRECONDITION,
                      "torch.linalg.ldl_factor_ex: the factorization could not be completed: D is singular "
                      "(an exactly zero diagonal block).");
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, v[0]));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, v[1]));
  return tt_l_set_out(c, 2, v[2]);
}

typedef struct solve_ctx {
  tt_type_t at; /* (batch..., n, n) */
  tt_type_t xt; /* (batch..., n, nrhs) */
  bool herm;    /* complex Hermitian: zhetrs */
} solve_ctx_t;

/* Row j (per batch) of x (batch..., n, nrhs) -> (batch..., nrhs). */
static tt_val_t row_of(tt_shlo_fn_t* f, const mats_t* m, tt_val_t x, tt_val_t j) {
  tt_type_t t = tt__sh_type(f, x);
  tt_val_t io = tt_lt_iota(f, TT_I64, t.rank, t.dims, t.rank - 2);
  return pick(f, x, cmp(f, "EQ", io, bb(f, m, j, &t)), 1u << (t.rank - 2));
}
/* r (batch..., nrhs) as every row of x's shape */
static tt_val_t rows_of(tt_shlo_fn_t* f, const mats_t* m, tt_val_t r, const tt_type_t* xt) {
  int64_t d[TT_MAX_RANK];
  for (int i = 0; i < m->nb; i++) d[i] = i;
  d[m->nb] = xt->rank - 1;
  return tt_lt_bcast_in_dim(f, r, xt->rank, xt->dims, d);
}
/* v (batch..., n) as every column of x's shape */
static tt_val_t cols_of(tt_shlo_fn_t* f, const mats_t* m, tt_val_t v, const tt_type_t* xt) {
  int64_t d[TT_MAX_RANK];
  for (int i = 0; i < m->nb; i++) d[i] = i;
  d[m->nb] = xt->rank - 2;
  return tt_lt_bcast_in_dim(f, v, xt->rank, xt->dims, d);
}

/* Forward sweep of sytrs (L D y = P b). vals: x, k (batch...) i64, ld, piv. */
static void fwd_step(tt_shlo_fn_t* f, tt_val_t it, tt_val_t* vals, void* ctx) {
  const solve_ctx_t* s = ctx;
  mats_t m;
  mats_init(f, &m, &s->at);
  tt_val_t x = vals[0], k = vals[1], a = vals[2];
  tt_type_t bt = m.bt, xt = s->xt;
  tt_val_t act = cmp(f, "LT", k, k64(f, &bt, (double)m.n));
  tt_val_t kc = tt_l_select(f, act, k, k64(f, &bt, (double)(m.n - 1)));
  tt_val_t p = tt_l_convert(f, entry(f, &m, vals[3], kc), TT_I64);
  tt_val_t two = cmp(f, "LT", p, k64(f, &bt, 0.0));
  tt_val_t kp = tt_l_select(f, two, sub(f, k64(f, &bt, -1.0), p), sub(f, p, k64(f, &bt, 1.0)));
  tt_val_t k1 = tt_l_select(f, cmp(f, "LT", kc, k64(f, &bt, (double)(m.n - 1))),
                            tt_l_binary(f, "stablehlo.add", kc, k64(f, &bt, 1.0)), kc);
  tt_val_t kk = tt_l_select(f, two, k1, kc);
  tt_val_t xs = tt__la_take_rows(f, x, swap_perm(f, &m, kk, kp));
  tt_val_t actx = bb(f, &m, act, &xt);
  x = tt_l_select(f, actx, xs, x);
  tt_val_t colk = column(f, &m, a, kc), colk1 = column(f, &m, a, k1);
  tt_val_t xk = row_of(f, &m, x, kc), xk1 = row_of(f, &m, x, k1);
  tt_val_t xio = tt_lt_iota(f, TT_I64, xt.rank, xt.dims, xt.rank - 2);
  tt_val_t kx = bb(f, &m, kc, &xt);
  tt_val_t below1 = cmp(f, "GT", xio, kx), below2 = cmp(f, "GE", xio, tt_l_binary(f, "stablehlo.add", kx, k64(f, &xt, 2.0)));
  tt_val_t xkr = rows_of(f, &m, xk, &xt), xk1r = rows_of(f, &m, xk1, &xt);
  tt_val_t ck = cols_of(f, &m, colk, &xt), ck1 = cols_of(f, &m, colk1, &xt);
  /* 1x1: x[i] -= L[i,k] x[k] below k, then x[k] *= 1 / D[k] */
  tt_val_t akk = entry(f, &m, colk, kc);
  tt_val_t u1 = sub(f, x, mul(f, ck, xkr));
  tt_type_t rt = tt__sh_type(f, xk), rbt = real_type(&bt);
  tt_val_t d11 = s->herm ? as_type(f, div2(f, tt_shlo_const(f, &rbt, 1.0), re_part(f, akk)), &bt)
                         : div2(f, tt_shlo_const(f, &bt, 1.0), akk);
  tt_val_t sk1 = rows_of(f, &m, mul(f, xk, bb(f, &m, d11, &rt)), &xt);
  /* 2x2 (zhetrs divides the first row by conj(e), e = D[k+1, k]) */
  tt_val_t u2 = sub(f, sub(f, x, mul(f, ck, xkr)), mul(f, ck1, xk1r));
  tt_val_t akm1k = entry(f, &m, colk, k1);
  tt_val_t akm1kc = s->herm ? tt__la_conj(f, akm1k) : akm1k;
  tt_val_t akm1 = div2(f, akk, akm1kc), ak = div2(f, entry(f, &m, colk1, k1), akm1k);
  tt_val_t den = sub(f, mul(f, akm1, ak), tt_shlo_const(f, &bt, 1.0));
  tt_val_t dv = tt__ew_opaque(f, bb(f, &m, akm1k, &rt)), denv = tt__ew_opaque(f, bb(f, &m, den, &rt));
  tt_val_t dvc = s->herm ? tt__ew_opaque(f, bb(f, &m, akm1kc, &rt)) : dv;
  tt_val_t bkm1 = div2(f, xk, dvc), bk = div2(f, xk1, dv);
  tt_val_t akm1v = bb(f, &m, akm1, &rt), akv = bb(f, &m, ak, &rt);
  tt_val_t nk = div2(f, sub(f, mul(f, akv, bkm1), bk), denv), nk1 = div2(f, sub(f, mul(f, akm1v, bk), bkm1), denv);
  tt_val_t one = and2(f, act, not1(f, two)), dbl = and2(f, act, two);
  tt_val_t o1 = bb(f, &m, one, &xt), o2 = bb(f, &m, dbl, &xt);
  tt_val_t atk = cmp(f, "EQ", xio, kx), atk1 = cmp(f, "EQ", xio, bb(f, &m, k1, &xt));
  x = tt_l_select(f, and2(f, o1, below1), u1, x);
  x = tt_l_select(f, and2(f, o1, atk), sk1, x);
  x = tt_l_select(f, and2(f, o2, below2), u2, x);
  x = tt_l_select(f, and2(f, o2, atk), rows_of(f, &m, nk, &xt), x);
  x = tt_l_select(f, and2(f, o2, atk1), rows_of(f, &m, nk1, &xt), x);
  vals[0] = x;
  tt_val_t step = tt_l_select(f, two, k64(f, &bt, 2.0), k64(f, &bt, 1.0));
  vals[1] = tt_l_select(f, act, tt_l_binary(f, "stablehlo.add", k, step), k);
}

/* Backward sweep of sytrs (L^T P^T x = y), k from n - 1 down.
 * vals: x, k (batch...) i64, ld, piv. */
static void bwd_step(tt_shlo_fn_t* f, tt_val_t it, tt_val_t* vals, void* ctx) {
  const solve_ctx_t* s = ctx;
  mats_t m;
  mats_init(f, &m, &s->at);
  tt_val_t x = vals[0], k = vals[1], a = vals[2];
  tt_type_t bt = m.bt, xt = s->xt;
  tt_val_t act = cmp(f, "GE", k, k64(f, &bt, 0.0));
  tt_val_t kc = tt_l_select(f, act, k, k64(f, &bt, 0.0));
  tt_val_t p = tt_l_convert(f, entry(f, &m, vals[3], kc), TT_I64);
  tt_val_t two = cmp(f, "LT", p, k64(f, &bt, 0.0));
  tt_val_t kp = tt_l_select(f, two, sub(f, k64(f, &bt, -1.0), p), sub(f, p, k64(f, &bt, 1.0)));
  tt_val_t km1 = tt_l_select(f, cmp(f, "GT", kc, k64(f, &bt, 0.0)), sub(f, kc, k64(f, &bt, 1.0)), kc);
  /* x[k] -= sum_{i > k} L[i,k] x[i] (and x[k-1] with L[i,k-1] for a 2x2 block) */
  tt_val_t xio = tt_lt_iota(f, TT_I64, xt.rank, xt.dims, xt.rank - 2);
  tt_val_t kx = bb(f, &m, kc, &xt);
  tt_val_t below = cmp(f, "GT", xio, kx);
  tt_val_t zx = tt_shlo_const(f, &xt, 0.0);
  uint32_t rowdim = 1u << (xt.rank - 2);
  tt_val_t lk = column(f, &m, a, kc), lkm1 = column(f, &m, a, km1); /* L^H for zhetrs */
  if (s->herm) lk = tt__la_conj(f, lk), lkm1 = tt__la_conj(f, lkm1);
  tt_val_t sk = tt_lt_sum(f, tt_l_select(f, below, mul(f, cols_of(f, &m, lk, &xt), x), zx), rowdim);
  tt_val_t skm1 = tt_lt_sum(f, tt_l_select(f, below, mul(f, cols_of(f, &m, lkm1, &xt), x), zx), rowdim);
  tt_val_t nk = sub(f, row_of(f, &m, x, kc), sk), nkm1 = sub(f, row_of(f, &m, x, km1), skm1);
  tt_val_t ax = bb(f, &m, act, &xt);
  tt_val_t atk = cmp(f, "EQ", xio, kx), atkm1 = cmp(f, "EQ", xio, bb(f, &m, km1, &xt));
  x = tt_l_select(f, and2(f, ax, atk), rows_of(f, &m, nk, &xt), x);
  x = tt_l_select(f, and2(f, and2(f, ax, bb(f, &m, two, &xt)), atkm1), rows_of(f, &m, nkm1, &xt), x);
  /* then exchange rows k and kp */
  x = tt_l_select(f, ax, tt__la_take_rows(f, x, swap_perm(f, &m, kc, kp)), x);
  vals[0] = x;
  tt_val_t step = tt_l_select(f, two, k64(f, &bt, 2.0), k64(f, &bt, 1.0));
  vals[1] = tt_l_select(f, act, sub(f, k, step), k);
}

/* linalg_ldl_solve(LD, pivots, B, *, hermitian) */
tt_status_t tt__la_lower_ldl_solve(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  const tt_type_t* ot = &c->out_types[0];
  if (tt__la_empty(ot)) return tt__la_zero_outs(c);
  int nb = ot->rank - 2;
  solve_ctx_t s;
  s.xt = *ot;
  s.herm = tt_dtype_is_complex(ot->dtype) && c->args[3].i;
  tt_val_t ld = tt__la_batch_to(f, c->args[0].val, 2, nb, ot->dims);
  tt_val_t piv = tt__la_batch_to(f, c->args[1].val, 1, nb, ot->dims);
  tt_val_t x = tt__la_batch_to(f, c->args[2].val, 2, nb, ot->dims);
  s.at = tt__sh_type(f, ld);
  int64_t n = s.at.dims[s.at.rank - 1];
  tt_type_t kt = s.at;
  kt.dtype = TT_I64;
  kt.rank = nb;
  tt_val_t v[4] = {x, tt_shlo_const(f, &kt, 0.0), ld, piv};
  tt_l_fori(f, n, v, 4, fwd_step, &s);
  v[1] = tt_shlo_const(f, &kt, (double)(n - 1));
  tt_l_fori(f, n, v, 4, bwd_step, &s);
  return tt_l_set_out(c, 0, v[0]);
}
