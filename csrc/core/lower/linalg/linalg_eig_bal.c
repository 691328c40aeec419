/* Balancing of the general eigendecomposition (see linalg_eig_util.h), after
 * LAPACK's dgebal('B') (3.12): rows whose off-diagonal entries (in columns
 * [0, L]) are all zero are swapped to the bottom, then columns whose
 * off-diagonal entries (in rows [K, L]) are zero to the left; each swap
 * isolates an eigenvalue, in the order LAPACK finds them. The rows and
 * columns of the rest, [ilo, ihi] = [K, L], are then scaled by powers of 2
 * (exact) until their 2-norms are within a factor of 2 of each other.
 *
 * One stablehlo.while step per lane: a lane examines one row (phase 0), one
 * column (phase 1) or scales one row/column pair (phase 2), and goes through
 * its phases at its own pace; phase 3 is done. */
#include "linalg_eig_util.h"

enum { PH_ROWS, PH_COLS, PH_SCALE, PH_DONE };
/* S (bs, 5) i64 = (phase, I, L, K, noconv) */
enum { B_PH, B_I, B_L, B_K, B_NC, B_COUNT };

typedef struct bal_ctx {
  tt__eig_t* e;
  double max_steps;
} bal_ctx_t;

static tt_val_t bal_cond(tt_shlo_fn_t* f, const tt_val_t* vals, void* vctx) {
  const bal_ctx_t* bc = vctx;
  tt__eig_t* e = bc->e;
  (void)f;
  tt_val_t busy = EG_CMPK("NE", tt__eg_col(e, vals[3], B_PH), (double)PH_DONE);
  return EG_AND(tt__eg_any(e, busy), EG_CMPK("LT", vals[4], bc->max_steps));
}

/* Swaps rows and columns i and j of a (bs, N, N) and entries i, j of perm
 * (bs, n) where `on`. */
static void swap_ij(tt__eig_t* e, tt_val_t* a, tt_val_t* perm, tt_val_t i, tt_val_t j,
                    tt_val_t on) {
  tt_val_t ri = tt__eg_line(e, *a, 1, i), rj = tt__eg_line(e, *a, 1, j);
  tt_val_t m = tt__eg_put_line(e, *a, 1, i, rj, on);
  m = tt__eg_put_line(e, m, 1, j, ri, on);
  tt_val_t ci = tt__eg_line(e, m, 2, i), cj = tt__eg_line(e, m, 2, j);
  m = tt__eg_put_line(e, m, 2, i, cj, on);
  *a = tt__eg_put_line(e, m, 2, j, ci, on);
  tt_val_t pi = tt__eg_pick(e, *perm, i), pj = tt__eg_pick(e, *perm, j);
  int64_t pd[2] = {e->bs, e->n};
  tt_val_t K = tt__eg_iota(e, 2, pd, 1);
  tt_val_t at_i = EG_AND(EG_CMP("EQ", K, tt__eg_lead(e, i, 2, pd)), tt__eg_lead(e, on, 2, pd));
  tt_val_t at_j = EG_AND(EG_CMP("EQ", K, tt__eg_lead(e, j, 2, pd)), tt__eg_lead(e, on, 2, pd));
  *perm = EG_SEL(at_i, tt__eg_lead(e, pj, 2, pd),
                 EG_SEL(at_j, tt__eg_lead(e, pi, 2, pd), *perm));
}

/* True where line x (bs, N) has a nonzero entry at an index in [lo, hi]
 * other than `skip` (all (bs,) i64). */
static tt_val_t any_off(tt__eig_t* e, tt_val_t x, tt_val_t lo, tt_val_t hi, tt_val_t skip) {
  int64_t vd[2] = {e->bs, e->N};
  tt_val_t K = tt__eg_iota(e, 2, vd, 1);
  tt_val_t in = EG_AND(EG_CMP("GE", K, tt__eg_lead(e, lo, 2, vd)),
                       EG_CMP("LE", K, tt__eg_lead(e, hi, 2, vd)));
  in = EG_AND(in, EG_CMP("NE", K, tt__eg_lead(e, skip, 2, vd)));
  tt_val_t nz = EG_AND(in, EG_CMPK("NE", x, 0.0));
  return tt_lt_reduce(e->f, nz, 2u, "stablehlo.or", tt_lt_const0(e->f, TT_BOOL, 0.0));
}

/* 2-norm of x (bs, N) over the indices in [lo, hi], without overflow. */
static tt_val_t nrm2(tt__eig_t* e, tt_val_t x, tt_val_t lo, tt_val_t hi) {
  int64_t vd[2] = {e->bs, e->N};
  tt_val_t K = tt__eg_iota(e, 2, vd, 1);
  tt_val_t in = EG_AND(EG_CMP("GE", K, tt__eg_lead(e, lo, 2, vd)),
                       EG_CMP("LE", K, tt__eg_lead(e, hi, 2, vd)));
  tt_val_t ax = EG_SEL(in, EG_ABS(x), EG_K(x, 0.0));
  tt_val_t mx = tt__eg_rmax(e, ax);
  tt_val_t m0 = EG_CMPK("EQ", mx, 0.0);
  tt_val_t d = EG_SEL(m0, EG_K(mx, 1.0), mx);
  tt_val_t q = EG_DIV(ax, tt__eg_lead(e, d, 2, vd));
  return EG_SEL(m0, EG_K(mx, 0.0), EG_MUL(d, EG_SQRT(tt__eg_rsum(e, EG_MUL(q, q)))));
}

/* max |x| over [lo, hi] */
static tt_val_t amax(tt__eig_t* e, tt_val_t x, tt_val_t lo, tt_val_t hi) {
  int64_t vd[2] = {e->bs, e->N};
  tt_val_t K = tt__eg_iota(e, 2, vd, 1);
  tt_val_t in = EG_AND(EG_CMP("GE", K, tt__eg_lead(e, lo, 2, vd)),
                       EG_CMP("LE", K, tt__eg_lead(e, hi, 2, vd)));
  return tt__eg_rmax(e, EG_SEL(in, EG_ABS(x), EG_K(x, 0.0)));
}

/* The two power-of-2 loops of dgebal on (f, c, ca, r, g, ra), per lane. */
typedef struct fl_ctx {
  tt__eig_t* e;
  double sfmin2, sfmax2;
  bool up;
} fl_ctx_t;

static tt_val_t fl_go(const tt_val_t* v, const fl_ctx_t* fc) {
  tt__eig_t* e = fc->e;
  tt_val_t f = v[0], c = v[1], ca = v[2], r = v[3], g = v[4], ra = v[5];
  if (fc->up) /* c < g, max(f, c, ca) < sfmax2, min(r, g, ra) > sfmin2 */
    return EG_AND(EG_AND(v[6], EG_CMP("LT", c, g)),
                  EG_AND(EG_CMPK("LT", EG_MAX(f, EG_MAX(c, ca)), fc->sfmax2),
                         EG_CMPK("GT", EG_MIN(r, EG_MIN(g, ra)), fc->sfmin2)));
  /* g >= r, max(r, ra) < sfmax2, min(f, c, g, ca) > sfmin2 */
  return EG_AND(EG_AND(v[6], EG_CMP("GE", g, r)),
                EG_AND(EG_CMPK("LT", EG_MAX(r, ra), fc->sfmax2),
                       EG_CMPK("GT", EG_MIN(EG_MIN(f, c), EG_MIN(g, ca)), fc->sfmin2)));
}
static tt_val_t fl_cond(tt_shlo_fn_t* f, const tt_val_t* v, void* vctx) {
  const fl_ctx_t* fc = vctx;
  (void)f;
  return tt__eg_any(fc->e, fl_go(v, fc));
}
static void fl_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* v, void* vctx) {
  const fl_ctx_t* fc = vctx;
  tt__eig_t* e = fc->e;
  (void)f;
  (void)st; /* v holds st on entry */
  tt_val_t go = fl_go(v, fc);
  /* up: f, c, ca doubled, r, g, ra halved; down: f, c, ca and g halved,
   * r, ra doubled (g follows c there: g = c / 2) */
  static const double k_up[6] = {2.0, 2.0, 2.0, 0.5, 0.5, 0.5};
  static const double k_dn[6] = {0.5, 0.5, 0.5, 2.0, 0.5, 2.0};
  const double* k = fc->up ? k_up : k_dn;
  for (int i = 0; i < 6; i++) v[i] = EG_SEL(go, EG_MULK(v[i], k[i]), v[i]);
}

/* One dgebal step per lane. vals (st on entry): a, perm, scale, S, count */
static void bal_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* vals, void* vctx) {
  tt__eig_t* e = ((const bal_ctx_t*)vctx)->e;
  (void)f;
  (void)st;
  tt_val_t a = vals[0], perm = vals[1], scale = vals[2], S = vals[3];
  tt_val_t ph = tt__eg_col(e, S, B_PH), I = tt__eg_col(e, S, B_I);
  tt_val_t L = tt__eg_col(e, S, B_L), K = tt__eg_col(e, S, B_K), nc = tt__eg_col(e, S, B_NC);
  tt_val_t zero = EG_K(I, 0.0), one = EG_K(I, 1.0);
  tt_val_t p0 = EG_CMPK("EQ", ph, PH_ROWS), p1 = EG_CMPK("EQ", ph, PH_COLS);
  tt_val_t p2 = EG_CMPK("EQ", ph, PH_SCALE);
  /* phase 0: row I isolates an eigenvalue -> swap it with row L */
  tt_val_t row = tt__eg_line(e, a, 1, I);
  tt_val_t s0 = EG_AND(p0, EG_NOT(any_off(e, row, zero, L, I)));
  swap_ij(e, &a, &perm, I, L, s0);
  tt_val_t last = EG_AND(s0, EG_CMPK("EQ", L, 0.0)); /* everything isolated */
  tt_val_t L0 = EG_SEL(EG_AND(s0, EG_NOT(last)), EG_ADDK(L, -1.0), L);
  tt_val_t nc0 = EG_SEL(s0, one, nc);
  tt_val_t I0 = EG_ADDK(I, -1.0);
  tt_val_t end0 = EG_CMPK("LT", I0, 0.0);
  /* phase 1: column I isolates an eigenvalue -> swap it with column K */
  tt_val_t col = tt__eg_line(e, a, 2, I);
  tt_val_t s1 = EG_AND(p1, EG_NOT(any_off(e, col, K, L, I)));
  swap_ij(e, &a, &perm, I, K, s1);
  tt_val_t K1 = EG_SEL(s1, EG_ADDK(K, 1.0), K);
  tt_val_t nc1 = EG_SEL(s1, one, nc);
  tt_val_t I1 = EG_ADDK(I, 1.0);
  tt_val_t end1 = EG_CMP("GT", I1, L);
  /* phase 2: scale row / column I (dgebal's loop body) */
  double sfmin1 = e->safmin / e->ulp, sfmax1 = 1.0 / sfmin1;
  double sfmin2 = sfmin1 * 2.0, sfmax2 = 1.0 / sfmin2;
  tt_val_t crow = tt__eg_line(e, a, 2, I), rrow = tt__eg_line(e, a, 1, I);
  tt_val_t c = nrm2(e, crow, K, L), r = nrm2(e, rrow, K, L);
  tt_val_t ca = amax(e, crow, zero, L), ra = amax(e, rrow, K, EG_K(K, (double)(e->n - 1)));
  tt_val_t live = EG_AND(p2, EG_AND(EG_CMPK("NE", c, 0.0), EG_CMPK("NE", r, 0.0)));
  tt_val_t fv[7] = {EG_K(c, 1.0), c, ca, r, EG_MULK(r, 0.5), ra, live};
  tt_val_t s_before = EG_ADD(c, r);
  fl_ctx_t up = {e, sfmin2, sfmax2, true}, dn = {e, sfmin2, sfmax2, false};
  tt_l_while(e->f, fv, 7, fl_cond, fl_body, &up);
  fv[4] = EG_MULK(fv[1], 0.5); /* g = c / 2 */
  tt_l_while(e->f, fv, 7, fl_cond, fl_body, &dn);
  tt_val_t fs = fv[0], sci = tt__eg_pick(e, scale, I);
  tt_val_t skip = EG_CMP("GE", EG_ADD(fv[1], fv[3]), EG_MULK(s_before, 0.95));
  tt_val_t lo = EG_AND(EG_AND(EG_CMPK("LT", fs, 1.0), EG_CMPK("LT", sci, 1.0)),
                       EG_CMPK("LE", EG_MUL(fs, sci), sfmin1));
  tt_val_t hi = EG_AND(EG_AND(EG_CMPK("GT", fs, 1.0), EG_CMPK("GT", sci, 1.0)),
                       EG_CMP("GE", sci, EG_DIV(EG_K(fs, sfmax1), fs)));
  tt_val_t s2 = EG_AND(live, EG_NOT(EG_OR(skip, EG_OR(lo, hi))));
  int64_t sd[2] = {e->bs, e->n};
  tt_val_t at = EG_AND(EG_CMP("EQ", tt__eg_iota(e, 2, sd, 1), tt__eg_lead(e, I, 2, sd)),
                       tt__eg_lead(e, s2, 2, sd));
  scale = EG_SEL(at, tt__eg_lead(e, EG_MUL(sci, fs), 2, sd), scale);
  tt_val_t gs = EG_DIV(EG_K(fs, 1.0), fs);
  int64_t vd[2] = {e->bs, e->N};
  a = tt__eg_put_line(e, a, 1, I, EG_MUL(rrow, tt__eg_lead(e, gs, 2, vd)), s2);
  tt_val_t ccol = tt__eg_line(e, a, 2, I); /* the diagonal entry scaled by g */
  a = tt__eg_put_line(e, a, 2, I, EG_MUL(ccol, tt__eg_lead(e, fs, 2, vd)), s2);
  tt_val_t nc2 = EG_SEL(s2, one, nc);
  tt_val_t end2 = EG_CMP("GT", I1, L);
  /* next state per phase */
  tt_val_t nS[B_COUNT];
  tt_val_t ph0 = EG_SEL(last, EG_K(ph, PH_DONE),
                        EG_SEL(EG_AND(end0, EG_CMPK("EQ", nc0, 0.0)), EG_K(ph, PH_COLS), ph));
  tt_val_t i0n = EG_SEL(last, zero, EG_SEL(end0, EG_SEL(EG_CMPK("EQ", nc0, 0.0), K, L0), I0));
  tt_val_t nc0n = EG_SEL(end0, zero, nc0);
  tt_val_t ph1 = EG_SEL(EG_AND(end1, EG_CMPK("EQ", nc1, 0.0)), EG_K(ph, PH_SCALE), ph);
  tt_val_t i1n = EG_SEL(end1, K1, I1);
  tt_val_t nc1n = EG_SEL(end1, zero, nc1);
  tt_val_t ph2 = EG_SEL(EG_AND(end2, EG_CMPK("EQ", nc2, 0.0)), EG_K(ph, PH_DONE), ph);
  tt_val_t i2n = EG_SEL(end2, K, I1);
  tt_val_t nc2n = EG_SEL(end2, zero, nc2);
  nS[B_PH] = EG_SEL(p0, ph0, EG_SEL(p1, ph1, EG_SEL(p2, ph2, ph)));
  nS[B_I] = EG_SEL(p0, i0n, EG_SEL(p1, i1n, EG_SEL(p2, i2n, I)));
  nS[B_L] = EG_SEL(p0, L0, L);
  nS[B_K] = EG_SEL(p1, K1, K);
  nS[B_NC] = EG_SEL(p0, nc0n, EG_SEL(p1, nc1n, EG_SEL(p2, nc2n, nc)));
  vals[0] = a;
  vals[1] = perm;
  vals[2] = scale;
  vals[3] = tt__eg_pack(e, nS, B_COUNT);
  vals[4] = EG_ADDK(vals[4], 1.0);
}

void tt__eg_balance(tt__eig_t* e, tt_val_t* a, tt_val_t* perm, tt_val_t* scale, tt_val_t* ilo,
                    tt_val_t* ihi) {
  tt_shlo_fn_t* f = e->f;
  int64_t pd[2] = {e->bs, e->n}, bd[1] = {e->bs};
  double n = (double)e->n;
  tt_val_t L = tt_l_full(f, TT_I64, 1, bd, n - 1), z = tt_l_full(f, TT_I64, 1, bd, 0.0);
  tt_val_t S[B_COUNT] = {z, L, L, z, z};
  tt_val_t vals[5] = {*a, tt__eg_iota(e, 2, pd, 1), tt_l_full(f, e->rt, 2, pd, 1.0),
                      tt__eg_pack(e, S, B_COUNT), tt_lt_const0(f, TT_I64, 0.0)};
  /* (n + 1) passes of <= n rows, as many of columns, then scaling passes:
   * each doubles or halves some scale, 200 passes are far more than needed */
  bal_ctx_t bc = {e, 2.0 * (n + 1.0) * (n + 1.0) + 200.0 * (n + 1.0)};
  tt_l_while(f, vals, 5, bal_cond, bal_body, &bc);
  *a = vals[0];
  *perm = vals[1];
  *scale = vals[2];
  *ilo = tt__eg_col(e, vals[3], B_K);
  *ihi = tt__eg_col(e, vals[3], B_L);
}

tt_val_t tt__eg_unbalance(tt__eig_t* e, tt_val_t v, tt_val_t perm, tt_val_t scale) {
  tt_type_t t = tt__sh_type(e->f, v);
  int64_t n = e->n, md[3] = {e->bs, n, n};
  /* rows scaled (D v), then row r moved to perm[r] */
  tt_val_t sc = tt_l_convert(e->f, scale, t.dtype);
  v = EG_MUL(v, tt__eg_lead(e, sc, 3, t.dims));
  /* inv[q] = the r with perm[r] == q */
  tt_val_t hit = EG_CMP("EQ", tt_lt_bcast_in_dim(e->f, perm, 3, md, (int64_t[]){0, 2}),
                        tt__eg_iota(e, 3, md, 1));
  tt_val_t inv = tt_lt_sum(e->f, EG_SEL(hit, tt__eg_iota(e, 3, md, 2), tt_l_full(e->f, TT_I64, 3, md, 0.0)), 4u);
  return tt__la_take_rows(e->f, v, inv);
}
