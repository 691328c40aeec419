/* Hessenberg reduction and the double-shift QR algorithm of the general
 * eigendecomposition (see linalg_eig_util.h), after LAPACK's dgehd2 and dlahqr:
 * the same reflectors (dlarfg's signs), deflation tests (Ahues & Kressner),
 * shifts (exceptional ones every 10 sweeps), bulge start (two consecutive
 * small subdiagonals), 2x2 standardization (dlanv2) and iteration limit
 * (30 max(10, nh) sweeps per deflation), so that the Schur form, and with it
 * the order of the eigenvalues, is LAPACK's up to rounding.
 *
 * One stablehlo.while step per lane and iteration: a lane either deflates a
 * 1x1 / 2x2 block at its bottom row i, or runs one bulge-chasing sweep over
 * rows [m, i]. The sweep is an inner loop over k shared by the lanes
 * (3-row / 3-column windows at k, identity where a lane's sweep does not
 * cover k). Rotations and reflectors act on whole rows / columns (wantt):
 * outside the window they meet exact zeros (the padding row and column make
 * the 3-row window at k = n - 2 valid). */
#include "linalg_eig_util.h"

/* ---- Householder reflector (dlarfg) ------------------------------------------ */

/* H = I - tau (1, u2, u3)(1, u2, u3)^T maps (v1, v2, v3) to (beta, 0, 0). */
typedef struct refl {
  tt_val_t beta, tau, u2, u3;
} refl_t;

static refl_t dlarfg3(tt__eig_t* e, tt_val_t v1, tt_val_t v2, tt_val_t v3) {
  refl_t r;
  tt_val_t xnorm = tt__eg_hypot(e, v2, v3);
  tt_val_t beta = EG_NEG(tt__eg_sign(e, tt__eg_hypot(e, v1, xnorm), v1));
  tt_val_t x0 = EG_CMPK("EQ", xnorm, 0.0);
  tt_val_t tau = EG_DIV(EG_SUB(beta, v1), beta);
  tt_val_t sc = EG_DIV(EG_K(v1, 1.0), EG_SUB(v1, beta));
  r.beta = EG_SEL(x0, v1, beta);
  r.tau = EG_SEL(x0, EG_K(v1, 0.0), tau);
  r.u2 = EG_SEL(x0, v2, EG_MUL(v2, sc));
  r.u3 = EG_SEL(x0, v3, EG_MUL(v3, sc));
  return r;
}

/* ---- gehd2 ------------------------------------------------------------------------ */

typedef struct hess_ctx {
  tt__eig_t* e;
  bool want_q;
} hess_ctx_t;

/* vals: h, ilo/ihi packed (bs, 2), [q] */
static void hess_step(tt_shlo_fn_t* f, tt_val_t j, tt_val_t* vals, void* vctx) {
  hess_ctx_t* hc = vctx;
  tt__eig_t* e = hc->e;
  (void)f;
  tt_val_t h = vals[0];
  tt_val_t ilo = tt__eg_col(e, vals[1], 0), ihi = tt__eg_col(e, vals[1], 1);
  int64_t N = e->N, vd[2] = {e->bs, N}, md[3] = {e->bs, N, N};
  tt_val_t jv = tt_lt_splat(f, j, 1, vd); /* (bs,) of j */
  tt_val_t act = EG_AND(EG_CMP("LE", ilo, jv), EG_CMP("LE", jv, EG_ADDK(ihi, -2.0)));
  tt_val_t col = tt__eg_line(e, h, 2, jv);           /* (bs, N) column j */
  tt_val_t j1 = EG_ADDK(jv, 1.0);
  tt_val_t alpha = tt__eg_pick(e, col, j1);
  tt_val_t rows = tt__eg_iota(e, 2, vd, 1);
  tt_val_t xm = EG_AND(EG_CMP("GT", rows, tt__eg_lead(e, j1, 2, vd)),
                       EG_CMP("LE", rows, tt__eg_lead(e, ihi, 2, vd)));
  tt_val_t x = EG_SEL(xm, col, EG_K(col, 0.0));
  /* dnrm2 without overflow: scale by the largest |x| */
  tt_val_t xmax = tt__eg_rmax(e, EG_ABS(x));
  tt_val_t xm0 = EG_CMPK("EQ", xmax, 0.0);
  tt_val_t xs = EG_SEL(xm0, EG_K(xmax, 1.0), xmax);
  tt_val_t xq = EG_DIV(x, tt__eg_lead(e, xs, 2, vd));
  tt_val_t xnorm = EG_MUL(xs, EG_SQRT(tt__eg_rsum(e, EG_MUL(xq, xq))));
  xnorm = EG_SEL(xm0, EG_K(xnorm, 0.0), xnorm);
  tt_val_t beta = EG_NEG(tt__eg_sign(e, tt__eg_hypot(e, alpha, xnorm), alpha));
  tt_val_t ok = EG_AND(act, EG_NOT(EG_CMPK("EQ", xnorm, 0.0)));
  tt_val_t tau = EG_SEL(ok, EG_DIV(EG_SUB(beta, alpha), beta), EG_K(beta, 0.0));
  tt_val_t sc = EG_DIV(EG_K(alpha, 1.0), EG_SUB(alpha, beta));
  tt_val_t v = EG_MUL(x, tt__eg_lead(e, sc, 2, vd));
  v = EG_SEL(EG_CMP("EQ", rows, tt__eg_lead(e, j1, 2, vd)), EG_K(v, 1.0), v);
  v = EG_SEL(tt__eg_lead(e, ok, 2, vd), v, EG_K(v, 0.0));
  tt_val_t tv = EG_MUL(v, tt__eg_lead(e, tau, 2, vd));
  /* right: h (I - tau v v^T); left: (I - tau v v^T) h */
  h = EG_SUB(h, tt__eg_outer(e, tt__eg_mv(e, h, v), tv));
  h = EG_SUB(h, tt__eg_outer(e, tv, tt__eg_vm(e, v, h)));
  /* column j becomes (.., beta, 0, ..) exactly */
  tt_val_t cj = EG_AND(EG_CMP("EQ", tt__eg_iota(e, 3, md, 2), tt__eg_lead(e, jv, 3, md)),
                       tt__eg_lead(e, ok, 3, md));
  tt_val_t rj = EG_CMP("EQ", tt__eg_iota(e, 3, md, 1), tt__eg_lead(e, j1, 3, md));
  tt_val_t below = EG_AND(cj, tt_lt_bcast_in_dim(f, xm, 3, md, (int64_t[]){0, 1}));
  h = EG_SEL(EG_AND(cj, rj), tt__eg_lead(e, beta, 3, md), EG_SEL(below, EG_K(h, 0.0), h));
  vals[0] = h;
  if (hc->want_q) vals[2] = EG_SUB(vals[2], tt__eg_outer(e, tt__eg_mv(e, vals[2], v), tv));
}

void tt__eg_hessenberg(tt__eig_t* e, tt_val_t* h, tt_val_t* q, tt_val_t ilo, tt_val_t ihi) {
  if (e->n < 3) return;
  hess_ctx_t hc = {e, q != NULL};
  tt_val_t lh[2] = {ilo, ihi};
  tt_val_t vals[3] = {*h, tt__eg_pack(e, lh, 2), q ? *q : TT_SHLO_INVALID};
  tt_l_fori(e->f, e->n - 2, vals, q ? 3 : 2, hess_step, &hc);
  *h = vals[0];
  if (q) *q = vals[2];
}

/* ---- dlanv2: Schur factorization of a real 2x2 block ----------------------------- */

typedef struct nv2 {
  tt_val_t a, b, c, d, cs, sn;
} nv2_t;

static nv2_t dlanv2(tt__eig_t* e, tt_val_t a, tt_val_t b, tt_val_t c, tt_val_t d) {
  tt_val_t one = EG_K(a, 1.0), zero = EG_K(a, 0.0);
  tt_val_t sb = tt__eg_sign(e, one, b), sc = tt__eg_sign(e, one, c);
  tt_val_t c0 = EG_CMPK("EQ", c, 0.0);
  tt_val_t b0 = EG_AND(EG_NOT(c0), EG_CMPK("EQ", b, 0.0));
  tt_val_t eqs = EG_AND(EG_AND(EG_NOT(c0), EG_NOT(b0)),
                        EG_AND(EG_CMPK("EQ", EG_SUB(a, d), 0.0), EG_CMP("NE", sb, sc)));
  /* general case */
  tt_val_t temp = EG_SUB(a, d), p = EG_MULK(temp, 0.5);
  tt_val_t bcmax = EG_MAX(EG_ABS(b), EG_ABS(c));
  tt_val_t bcmis = EG_MUL(EG_MUL(EG_MIN(EG_ABS(b), EG_ABS(c)), sb), sc);
  tt_val_t scale = EG_MAX(EG_ABS(p), bcmax);
  tt_val_t z = EG_ADD(EG_MUL(EG_DIV(p, scale), p), EG_MUL(EG_DIV(bcmax, scale), bcmis));
  tt_val_t realev = EG_CMPK("GE", z, 4.0 * e->ulp);
  /* real eigenvalues */
  tt_val_t zr = EG_ADD(p, tt__eg_sign(e, EG_MUL(EG_SQRT(scale), EG_SQRT(z)), p));
  tt_val_t ar = EG_ADD(d, zr);
  tt_val_t dr = EG_SUB(d, EG_MUL(EG_DIV(bcmax, zr), bcmis));
  tt_val_t taur = tt__eg_hypot(e, c, zr);
  tt_val_t csr = EG_DIV(zr, taur), snr = EG_DIV(c, taur), br = EG_SUB(b, c);
  /* complex or nearly equal eigenvalues: make the diagonal equal */
  tt_val_t sigma = EG_ADD(b, c);
  tt_val_t tau = tt__eg_hypot(e, sigma, temp);
  tt_val_t cs = EG_SQRT(EG_MULK(EG_ADDK(EG_DIV(EG_ABS(sigma), tau), 1.0), 0.5));
  tt_val_t sn = EG_MUL(EG_NEG(EG_DIV(p, EG_MUL(tau, cs))), tt__eg_sign(e, one, sigma));
  tt_val_t aa = EG_ADD(EG_MUL(a, cs), EG_MUL(b, sn)), bb = EG_ADD(EG_MUL(EG_NEG(a), sn), EG_MUL(b, cs));
  tt_val_t cc = EG_ADD(EG_MUL(c, cs), EG_MUL(d, sn)), dd = EG_ADD(EG_MUL(EG_NEG(c), sn), EG_MUL(d, cs));
  tt_val_t B = EG_ADD(EG_MUL(bb, cs), EG_MUL(dd, sn));
  tt_val_t C = EG_ADD(EG_MUL(EG_NEG(aa), sn), EG_MUL(cc, cs));
  tt_val_t A = EG_ADD(EG_MUL(aa, cs), EG_MUL(cc, sn));
  tt_val_t D = EG_ADD(EG_MUL(EG_NEG(bb), sn), EG_MUL(dd, cs));
  tt_val_t t2 = EG_MULK(EG_ADD(A, D), 0.5);
  tt_val_t Cnz = EG_NOT(EG_CMPK("EQ", C, 0.0)), Bnz = EG_NOT(EG_CMPK("EQ", B, 0.0));
  tt_val_t same = EG_CMP("EQ", tt__eg_sign(e, one, B), tt__eg_sign(e, one, C));
  tt_val_t splitr = EG_AND(EG_AND(Cnz, Bnz), same); /* real after all: triangularize */
  tt_val_t flip = EG_AND(Cnz, EG_NOT(Bnz));         /* b = 0: swap */
  tt_val_t sab = EG_SQRT(EG_ABS(B)), sac = EG_SQRT(EG_ABS(C));
  tt_val_t P = tt__eg_sign(e, EG_MUL(sab, sac), C);
  tt_val_t tau2 = EG_DIV(one, EG_SQRT(EG_ABS(EG_ADD(B, C))));
  tt_val_t cs1 = EG_MUL(sab, tau2), sn1 = EG_MUL(sac, tau2);
  tt_val_t cs_s = EG_SUB(EG_MUL(cs, cs1), EG_MUL(sn, sn1));
  tt_val_t sn_s = EG_ADD(EG_MUL(cs, sn1), EG_MUL(sn, cs1));
  nv2_t x; /* complex branch results */
  x.a = EG_SEL(splitr, EG_ADD(t2, P), t2);
  x.d = EG_SEL(splitr, EG_SUB(t2, P), t2);
  x.b = EG_SEL(splitr, EG_SUB(B, C), EG_SEL(flip, EG_NEG(C), B));
  x.c = EG_SEL(EG_OR(splitr, flip), zero, C);
  x.cs = EG_SEL(splitr, cs_s, EG_SEL(flip, EG_NEG(sn), cs));
  x.sn = EG_SEL(splitr, sn_s, EG_SEL(flip, cs, sn));
  /* pick the case */
  tt_val_t gen = EG_AND(EG_AND(EG_NOT(c0), EG_NOT(b0)), EG_NOT(eqs));
  tt_val_t gr = EG_AND(gen, realev), gc = EG_AND(gen, EG_NOT(realev));
  nv2_t r;
  r.a = EG_SEL(gr, ar, EG_SEL(gc, x.a, EG_SEL(b0, d, a)));
  r.d = EG_SEL(gr, dr, EG_SEL(gc, x.d, EG_SEL(b0, a, d)));
  r.b = EG_SEL(gr, br, EG_SEL(gc, x.b, EG_SEL(b0, EG_NEG(c), b)));
  r.c = EG_SEL(gr, zero, EG_SEL(gc, x.c, EG_SEL(b0, zero, c)));
  r.cs = EG_SEL(gr, csr, EG_SEL(gc, x.cs, EG_SEL(b0, zero, one)));
  r.sn = EG_SEL(gr, snr, EG_SEL(gc, x.sn, EG_SEL(b0, one, zero)));
  return r;
}

/* Rotates lines i0 and i0 + 1 (rows: dim 1, columns: dim 2) of m by
 * (cs, sn) as drot does, on the lanes where `on`. */
static tt_val_t rot_lines(tt__eig_t* e, tt_val_t m, int dim, tt_val_t i0, tt_val_t cs,
                          tt_val_t sn, tt_val_t on) {
  tt_type_t t = tt__sh_type(e->f, m);
  int64_t vd[2] = {t.dims[0], t.dims[dim == 1 ? 2 : 1]};
  tt_val_t i1 = EG_ADDK(i0, 1.0);
  tt_val_t x = tt__eg_line(e, m, dim, i0), y = tt__eg_line(e, m, dim, i1);
  tt_val_t c = tt__eg_lead(e, cs, 2, vd), s = tt__eg_lead(e, sn, 2, vd);
  tt_val_t nx = EG_ADD(EG_MUL(c, x), EG_MUL(s, y)), ny = EG_SUB(EG_MUL(c, y), EG_MUL(s, x));
  m = tt__eg_put_line(e, m, dim, i0, nx, on);
  return tt__eg_put_line(e, m, dim, i1, ny, on);
}

/* ---- one bulge-chasing sweep ----------------------------------------------------- */

typedef struct sweep_ctx {
  tt__eig_t* e;
  bool want_z;
} sweep_ctx_t;

/* Applies the reflector (t1, t2, t3; u2, u3) to the 3 lines of a window
 * (bs, 3, C) (dim 1) or (bs, R, 3) (dim 2). */
static tt_val_t refl_apply(tt__eig_t* e, tt_val_t w, int dim, tt_val_t u2, tt_val_t u3,
                           const tt_val_t* t) {
  tt_type_t wt = tt__sh_type(e->f, w);
  int64_t len = wt.dims[dim == 1 ? 2 : 1], vd[2] = {e->bs, len}, ld[3];
  tt_val_t line[3];
  for (int i = 0; i < 3; i++) {
    tt_val_t s = tt_lt_slice_dim(e->f, w, dim, i, i + 1);
    line[i] = tt_l_reshape(e->f, s, 2, vd);
  }
  tt_val_t sum = EG_ADD(line[0], EG_ADD(EG_MUL(tt__eg_lead(e, u2, 2, vd), line[1]),
                                        EG_MUL(tt__eg_lead(e, u3, 2, vd), line[2])));
  ld[0] = e->bs;
  ld[1] = dim == 1 ? 1 : len;
  ld[2] = dim == 1 ? len : 1;
  tt_val_t out[3];
  for (int i = 0; i < 3; i++)
    out[i] = tt_l_reshape(e->f, EG_SUB(line[i], EG_MUL(sum, tt__eg_lead(e, t[i], 2, vd))), 3, ld);
  return tt_lt_concat(e->f, out, 3, dim);
}

/* vals: h, P (bs, 4) i64 = (m, i, sweeping, kmin), V0 (bs, 3), [z] */
static void sweep_step(tt_shlo_fn_t* f, tt_val_t it, tt_val_t* vals, void* vctx) {
  sweep_ctx_t* sc = vctx;
  tt__eig_t* e = sc->e;
  tt_val_t h = vals[0], P = vals[1], V0 = vals[2];
  int64_t N = e->N, bd[1] = {e->bs};
  tt_val_t m = tt__eg_col(e, P, 0), i = tt__eg_col(e, P, 1);
  tt_val_t sw = EG_CMPK("NE", tt__eg_col(e, P, 2), 0.0);
  tt_val_t kmin = tt_l_reshape(f, tt_lt_slice(f, P, (int64_t[]){0, 3}, (int64_t[]){1, 4}), 0, NULL);
  tt_val_t k0 = tt_l_binary(f, "stablehlo.add", kmin, it); /* 0-d */
  tt_val_t k = tt_lt_splat(f, k0, 1, bd);
  tt_val_t im1 = EG_ADDK(i, -1.0);
  tt_val_t act = EG_AND(sw, EG_AND(EG_CMP("LE", m, k), EG_CMP("LE", k, im1)));
  tt_val_t nr3 = EG_CMP("LT", k, im1);
  tt_val_t zero0 = tt_lt_const0(f, TT_I64, 0.0);
  tt_val_t R = tt__eg_window(e, h, k0, zero0, 3, N);
  tt_val_t km1 = tt_l_binary(f, "stablehlo.maximum", tt_l_binary(f, "stablehlo.subtract", k0,
                                                                   tt_lt_const0(f, TT_I64, 1.0)),
                             zero0);
  tt_val_t vk = tt_l_reshape(f, tt__eg_window(e, R, zero0, km1, 3, 1), 2, (int64_t[]){e->bs, 3});
  tt_val_t first = EG_CMP("EQ", k, m);
  tt_val_t v[3];
  for (int c = 0; c < 3; c++)
    v[c] = EG_SEL(first, tt__eg_col(e, V0, c), tt__eg_col(e, vk, c));
  v[2] = EG_SEL(nr3, v[2], EG_K(v[2], 0.0));
  refl_t r = dlarfg3(e, v[0], v[1], v[2]);
  tt_val_t tau = EG_SEL(act, r.tau, EG_K(r.tau, 0.0));
  tt_val_t t[3] = {tau, EG_MUL(tau, r.u2), EG_MUL(tau, r.u3)};
  /* rows k..k+2; then column k-1 of those rows as lahqr sets it */
  tt_val_t Rn = refl_apply(e, R, 1, r.u2, r.u3, t);
  int64_t rd[3] = {e->bs, 3, N};
  tt_val_t colk1 = EG_CMP("EQ", tt__eg_iota(e, 3, rd, 2), tt_lt_splat(f, EG_ADDK(k0, -1.0), 3, rd));
  tt_val_t fix = EG_AND(colk1, tt__eg_lead(e, act, 3, rd));
  tt_val_t row0 = EG_CMPK("EQ", tt__eg_iota(e, 3, rd, 1), 0.0);
  tt_val_t h0 = EG_SEL(EG_CMP("GT", k, m), r.beta,
                       EG_MUL(tt__eg_col(e, vk, 0), EG_SUB(EG_K(tau, 1.0), tau)));
  Rn = EG_SEL(fix, EG_SEL(row0, tt__eg_lead(e, h0, 3, rd), EG_K(Rn, 0.0)), Rn);
  Rn = EG_SEL(tt__eg_lead(e, act, 3, rd), Rn, R);
  h = tt__eg_put_window(e, h, Rn, k0, zero0);
  /* columns k..k+2 */
  tt_val_t C = tt__eg_window(e, h, zero0, k0, N, 3);
  tt_val_t Cn = refl_apply(e, C, 2, r.u2, r.u3, t);
  int64_t cw[3] = {e->bs, N, 3};
  Cn = EG_SEL(tt__eg_lead(e, act, 3, cw), Cn, C);
  vals[0] = tt__eg_put_window(e, h, Cn, zero0, k0);
  if (sc->want_z) {
    tt_val_t Zw = tt__eg_window(e, vals[3], zero0, k0, N, 3);
    tt_val_t Zn = refl_apply(e, Zw, 2, r.u2, r.u3, t);
    Zn = EG_SEL(tt__eg_lead(e, act, 3, cw), Zn, Zw);
    vals[3] = tt__eg_put_window(e, vals[3], Zn, zero0, k0);
  }
}

/* ---- lahqr ------------------------------------------------------------------------- */

typedef struct hqr_ctx {
  tt__eig_t* e;
  bool want_z;
  double max_steps;
} hqr_ctx_t;

/* S (bs, 5) i64 = (i, its, info, ilo, ihi) */
enum { S_I, S_ITS, S_INFO, S_ILO, S_IHI, S_COUNT };

static tt_val_t hqr_active(tt__eig_t* e, tt_val_t S) {
  tt_val_t i = tt__eg_col(e, S, S_I), ilo = tt__eg_col(e, S, S_ILO);
  return EG_AND(EG_CMP("GE", i, ilo), EG_CMPK("EQ", tt__eg_col(e, S, S_INFO), 0.0));
}

static tt_val_t hqr_cond(tt_shlo_fn_t* f, const tt_val_t* vals, void* vctx) {
  const hqr_ctx_t* hc = vctx;
  tt__eig_t* e = hc->e;
  (void)f;
  tt_val_t S = vals[1], cnt = vals[2];
  tt_val_t go = tt__eg_any(e, hqr_active(e, S));
  return EG_AND(go, EG_CMPK("LT", cnt, hc->max_steps));
}

/* vals: st on entry, the next state on return */
static void hqr_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* vals, void* vctx) {
  const hqr_ctx_t* hc = vctx;
  tt__eig_t* e = hc->e;
  (void)st;
  tt_val_t h = vals[0], S = vals[1];
  tt_val_t z = hc->want_z ? vals[3] : TT_SHLO_INVALID;
  int64_t n = e->n, vd[2] = {e->bs, n};
  tt_val_t i = tt__eg_col(e, S, S_I), its = tt__eg_col(e, S, S_ITS);
  tt_val_t info = tt__eg_col(e, S, S_INFO);
  tt_val_t ilo = tt__eg_col(e, S, S_ILO), ihi = tt__eg_col(e, S, S_IHI);
  tt_val_t active = hqr_active(e, S);
  tt_val_t nh = tt_l_convert(f, EG_ADDK(EG_SUB(ihi, ilo), 1.0), e->rt);
  tt_val_t smlnum = EG_MULK(nh, e->safmin / e->ulp); /* (bs,) */
  tt_val_t itmax = EG_MULK(EG_MAX(EG_ADDK(EG_SUB(ihi, ilo), 1.0), EG_K(ihi, 10.0)), 30.0); /* i64 */
  /* diagonals: dg[k] = h(k,k), sb[k] = h(k,k-1), sp[k] = h(k-1,k) */
  tt_val_t dg = tt__eg_diag(e, h, 0, 0, n), sb = tt__eg_diag(e, h, 0, -1, n);
  tt_val_t sp = tt__eg_diag(e, h, -1, 0, n);
  tt_val_t K = tt__eg_iota(e, 2, vd, 1);
  tt_val_t iloV = tt__eg_lead(e, ilo, 2, vd), ihiV = tt__eg_lead(e, ihi, 2, vd);
  tt_val_t iV = tt__eg_lead(e, i, 2, vd), sml = tt__eg_lead(e, smlnum, 2, vd);
  /* small subdiagonals (dlahqr's scan, all k at once) */
  tt_val_t hk = EG_ABS(sb), dgm1 = tt__eg_shift(e, dg, -1);
  tt_val_t tst = EG_ADD(EG_ABS(dgm1), EG_ABS(dg));
  tt_val_t zero = EG_K(tst, 0.0);
  tt_val_t t1 = EG_SEL(EG_CMP("GE", EG_ADDK(K, -2.0), iloV), EG_ABS(tt__eg_shift(e, sb, -1)), zero);
  tt_val_t t2 = EG_SEL(EG_CMP("LE", EG_ADDK(K, 1.0), ihiV), EG_ABS(tt__eg_shift(e, sb, 1)), zero);
  tst = EG_SEL(EG_CMPK("EQ", tst, 0.0), EG_ADD(EG_ADD(tst, t1), t2), tst);
  tt_val_t spa = EG_ABS(sp), ddf = EG_ABS(EG_SUB(dgm1, dg)), dga = EG_ABS(dg);
  tt_val_t ab = EG_MAX(hk, spa), ba = EG_MIN(hk, spa);
  tt_val_t aa = EG_MAX(dga, ddf), bb = EG_MIN(dga, ddf), s = EG_ADD(aa, ab);
  tt_val_t ulpv = EG_K(tst, e->ulp);
  tt_val_t c2 = EG_AND(EG_CMP("LE", hk, EG_MUL(ulpv, tst)),
                       EG_CMP("LE", EG_MUL(ba, EG_DIV(ab, s)),
                              EG_MAX(sml, EG_MUL(ulpv, EG_MUL(bb, EG_DIV(aa, s))))));
  tt_val_t small = EG_OR(EG_CMP("LE", hk, sml), c2);
  tt_val_t cand = EG_AND(small, EG_AND(EG_CMP("GT", K, iloV), EG_CMP("LE", K, iV)));
  tt_val_t l = EG_MAX(ilo, tt__eg_rmax(e, EG_SEL(cand, K, EG_K(K, -1.0))));
  /* lahqr gives up after itmax + 1 sweeps without a deflation */
  tt_val_t fail = EG_AND(active, EG_CMP("GT", its, itmax));
  tt_val_t act = EG_AND(active, EG_NOT(fail));
  info = EG_SEL(fail, EG_ADDK(i, 1.0), info);
  h = tt__eg_put_at(e, h, l, EG_ADDK(l, -1.0), EG_K(smlnum, 0.0), EG_AND(act, EG_CMP("GT", l, ilo)));
  tt_val_t conv = EG_CMP("GE", l, EG_ADDK(i, -1.0));
  tt_val_t d2 = EG_AND(act, EG_AND(conv, EG_CMP("EQ", l, EG_ADDK(i, -1.0))));
  tt_val_t sw = EG_AND(act, EG_NOT(conv));
  /* shifts (the exceptional ones at kdefl = its + 1 = 10, 20, ...) */
  tt_val_t kdefl = EG_ADDK(its, 1.0);
  tt_val_t rem = tt_l_binary(f, "stablehlo.remainder", kdefl, EG_K(kdefl, 20.0));
  tt_val_t ex20 = EG_CMPK("EQ", rem, 0.0);
  tt_val_t ex10 = EG_AND(EG_NOT(ex20), EG_CMPK("EQ", tt_l_binary(f, "stablehlo.remainder", kdefl,
                                                                  EG_K(kdefl, 10.0)), 0.0));
  tt_val_t im1 = EG_ADDK(i, -1.0), im2 = EG_ADDK(i, -2.0);
  tt_val_t dgi = tt__eg_pick(e, dg, i), dgi1 = tt__eg_pick(e, dg, im1);
  tt_val_t sbi = tt__eg_pick(e, sb, i), sbi1 = tt__eg_pick(e, sb, im1), spi = tt__eg_pick(e, sp, i);
  tt_val_t sbl1 = tt__eg_pick(e, sb, EG_ADDK(l, 1.0)), sbl2 = tt__eg_pick(e, sb, EG_ADDK(l, 2.0));
  tt_val_t dgl = tt__eg_pick(e, dg, l);
  tt_val_t sx = EG_SEL(ex20, EG_ADD(EG_ABS(sbi), EG_ABS(sbi1)), EG_ADD(EG_ABS(sbl1), EG_ABS(sbl2)));
  tt_val_t h11x = EG_ADD(EG_MULK(sx, 0.75), EG_SEL(ex20, dgi, dgl));
  tt_val_t ex = EG_OR(ex20, ex10);
  tt_val_t h11 = EG_SEL(ex, h11x, dgi1), h22 = EG_SEL(ex, h11x, dgi);
  tt_val_t h12 = EG_SEL(ex, EG_MULK(sx, -0.4375), spi), h21 = EG_SEL(ex, sx, sbi);
  tt_val_t ss = EG_ADD(EG_ADD(EG_ABS(h11), EG_ABS(h12)), EG_ADD(EG_ABS(h21), EG_ABS(h22)));
  tt_val_t s0 = EG_CMPK("EQ", ss, 0.0);
  tt_val_t sd = EG_SEL(s0, EG_K(ss, 1.0), ss);
  h11 = EG_DIV(h11, sd);
  h21 = EG_DIV(h21, sd);
  h12 = EG_DIV(h12, sd);
  h22 = EG_DIV(h22, sd);
  tt_val_t tr = EG_MULK(EG_ADD(h11, h22), 0.5);
  tt_val_t det = EG_SUB(EG_MUL(EG_SUB(h11, tr), EG_SUB(h22, tr)), EG_MUL(h12, h21));
  tt_val_t rtdisc = EG_SQRT(EG_ABS(det));
  tt_val_t cpx = EG_CMPK("GE", det, 0.0);
  tt_val_t r1 = EG_ADD(tr, rtdisc), r2 = EG_SUB(tr, rtdisc);
  tt_val_t use1 = EG_CMP("LE", EG_ABS(EG_SUB(r1, h22)), EG_ABS(EG_SUB(r2, h22)));
  tt_val_t rtr = EG_SEL(cpx, EG_MUL(tr, ss), EG_MUL(EG_SEL(use1, r1, r2), ss));
  tt_val_t rti = EG_SEL(cpx, EG_MUL(rtdisc, ss), EG_K(ss, 0.0));
  rtr = EG_SEL(s0, EG_K(ss, 0.0), rtr);
  rti = EG_SEL(s0, EG_K(ss, 0.0), rti);
  /* bulge start m: two consecutive small subdiagonals (all m at once);
   * both shifts share the real part rtr, imaginary parts +-rti */
  tt_val_t R1 = tt__eg_lead(e, rtr, 2, vd), I1 = tt__eg_lead(e, rti, 2, vd);
  tt_val_t I2 = EG_NEG(I1);
  tt_val_t hmm = dg, h21m = tt__eg_shift(e, sb, 1), hmm1 = tt__eg_shift(e, sp, 1);
  tt_val_t hm1 = tt__eg_shift(e, dg, 1), hm2 = tt__eg_shift(e, sb, 2);
  tt_val_t sm = EG_ADD(EG_ADD(EG_ABS(EG_SUB(hmm, R1)), EG_ABS(I2)), EG_ABS(h21m));
  tt_val_t h21s = EG_DIV(h21m, sm);
  tt_val_t v1 = EG_SUB(EG_ADD(EG_MUL(h21s, hmm1), EG_MUL(EG_SUB(hmm, R1), EG_DIV(EG_SUB(hmm, R1), sm))),
                       EG_MUL(I1, EG_DIV(I2, sm)));
  tt_val_t v2 = EG_MUL(h21s, EG_SUB(EG_SUB(EG_ADD(hmm, hm1), R1), R1));
  tt_val_t v3 = EG_MUL(h21s, hm2);
  tt_val_t s2 = EG_ADD(EG_ADD(EG_ABS(v1), EG_ABS(v2)), EG_ABS(v3));
  v1 = EG_DIV(v1, s2);
  v2 = EG_DIV(v2, s2);
  v3 = EG_DIV(v3, s2);
  tt_val_t h00 = EG_MUL(EG_ABS(sb), EG_ADD(EG_ABS(v2), EG_ABS(v3)));
  tt_val_t h01 = EG_MUL(EG_ABS(v1), EG_ADD(EG_ADD(EG_ABS(dgm1), EG_ABS(hmm)), EG_ABS(hm1)));
  tt_val_t lV = tt__eg_lead(e, l, 2, vd);
  tt_val_t okm = EG_OR(EG_CMP("EQ", K, lV), EG_CMP("LE", h00, EG_MUL(ulpv, h01)));
  tt_val_t mc = EG_AND(okm, EG_AND(EG_CMP("GE", K, lV), EG_CMP("LE", K, tt__eg_lead(e, im2, 2, vd))));
  tt_val_t m = tt__eg_rmax(e, EG_SEL(mc, K, EG_K(K, -1.0)));
  tt_val_t V0[3] = {tt__eg_pick(e, v1, m), tt__eg_pick(e, v2, m), tt__eg_pick(e, v3, m)};
  /* the sweep over k in [min m, max i - 1] of the sweeping lanes */
  tt_val_t kmin = tt__eg_rmin(e, EG_SEL(sw, m, EG_K(m, (double)n)));
  tt_val_t kmax = tt__eg_rmax(e, EG_SEL(sw, im1, EG_K(m, -1.0)));
  int64_t bd[1] = {e->bs};
  tt_val_t kminv = tt_lt_splat(f, kmin, 1, bd);
  tt_val_t P[4] = {m, i, tt_l_convert(f, sw, TT_I64), kminv};
  tt_val_t trips = tt_l_binary(f, "stablehlo.maximum",
                               tt_l_binary(f, "stablehlo.add", tt_l_binary(f, "stablehlo.subtract", kmax, kmin),
                                           tt_lt_const0(f, TT_I64, 1.0)),
                               tt_lt_const0(f, TT_I64, 0.0));
  sweep_ctx_t sc = {e, hc->want_z};
  tt_val_t sv[4] = {h, tt__eg_pack(e, P, 4), tt__eg_pack(e, V0, 3), z};
  tt_l_fori_dyn(f, trips, sv, hc->want_z ? 4 : 3, sweep_step, &sc);
  h = sv[0];
  if (hc->want_z) z = sv[3];
  /* 2x2 deflation: standardize the block at rows i-1, i */
  nv2_t q = dlanv2(e, dgi1, spi, sbi, dgi);
  h = rot_lines(e, h, 1, im1, q.cs, q.sn, d2);
  h = rot_lines(e, h, 2, im1, q.cs, q.sn, d2);
  h = tt__eg_put_at(e, h, im1, im1, q.a, d2);
  h = tt__eg_put_at(e, h, im1, i, q.b, d2);
  h = tt__eg_put_at(e, h, i, im1, q.c, d2);
  h = tt__eg_put_at(e, h, i, i, q.d, d2);
  if (hc->want_z) z = rot_lines(e, z, 2, im1, q.cs, q.sn, d2);
  /* next state */
  tt_val_t dc = EG_AND(act, conv);
  tt_val_t S2[S_COUNT];
  S2[S_I] = EG_SEL(dc, EG_ADDK(l, -1.0), i);
  S2[S_ITS] = EG_SEL(dc, EG_K(its, 0.0), EG_SEL(sw, EG_ADDK(its, 1.0), its));
  S2[S_INFO] = info;
  S2[S_ILO] = ilo;
  S2[S_IHI] = ihi;
  vals[0] = h;
  vals[1] = tt__eg_pack(e, S2, S_COUNT);
  vals[2] = EG_ADDK(vals[2], 1.0);
  if (hc->want_z) vals[3] = z;
}

void tt__eg_hqr(tt__eig_t* e, tt_val_t* h, tt_val_t* z, tt_val_t ilo, tt_val_t ihi,
                tt_val_t* info) {
  tt_val_t S[S_COUNT] = {ihi, EG_K(ihi, 0.0), EG_K(ihi, 0.0), ilo, ihi};
  /* every lane deflates at least one row per 30 max(10, n) + 2 steps */
  double n = (double)e->n;
  hqr_ctx_t hc = {e, z != NULL, n * (30.0 * (n > 10 ? n : 10) + 3.0) + 1.0};
  tt_val_t vals[4] = {*h, tt__eg_pack(e, S, S_COUNT), tt_lt_const0(e->f, TT_I64, 0.0),
                      z ? *z : TT_SHLO_INVALID};
  tt_l_while(e->f, vals, z ? 4 : 3, hqr_cond, hqr_body, &hc);
  *h = vals[0];
  if (z) *z = vals[3];
  *info = tt__eg_col(e, vals[1], S_INFO);
}
