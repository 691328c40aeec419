/* linalg_eig / linalg_eigvals of real matrices, as LAPACK's dgeev computes
 * them (see linalg_eig_util.h for the steps before): balance, Hessenberg, real
 * Schur form T = Z^T B Z, then
 *  - eigenvalues: T's 1x1 blocks, and a +- i sqrt|b| sqrt|c| for its
 *    standardized 2x2 blocks [a b; c a] (the + one first, as LAPACK);
 *  - eigenvectors: each 2x2 block is triangularized by a unitary W (its
 *    columns: the block's eigenvector for a + i w and one orthogonal to it),
 *    giving the complex Schur form Tc = W^H T W, Zc = Z W; back-substitution
 *    (T_c - w_k I) x = 0 with x_k = 1 for all k at once, one row per step
 *    (pivots below max(ulp |w_k|, smlnum) raised to it, columns rescaled
 *    before they could overflow, as dtrevc does); v = Zc x undone from the
 *    balancing. A real eigenvalue's vector is real (its imaginary rounding
 *    dropped); geev's x_k = 1 then fixes its sign. Vectors have unit 2-norm;
 *    for a complex pair the component of largest modulus is made real and
 *    positive (geev makes it real, with a sign that depends on its
 *    internals), and the second vector of the pair is the conjugate of the
 *    first, as PyTorch builds it.
 *
 * linalg_eig raises for non-finite input (CPU checks the same); eigvals
 * returns NaN for such a matrix. Both raise when the QR iteration does not
 * converge (LAPACK's info > 0). Complex input is not supported yet. */
#include <float.h>
#include <math.h>

#include "linalg_eig_util.h"
#include "linalg_decomp_util.h"

/* (bs, n) eigenvalue parts and pair masks from the quasi-triangular t (bs, n, n). */
typedef struct evals {
  tt_val_t wr, wi, first, second, b; /* b: t(k, k+1) at the first index of a pair */
} evals_t;

static evals_t eigenvalues(tt__eig_t* e, tt_val_t t) {
  evals_t r;
  int64_t n = e->n;
  tt_val_t dg = tt__eg_diag(e, t, 0, 0, n), sb = tt__eg_diag(e, t, 0, -1, n);
  tt_val_t sp = tt__eg_diag(e, t, -1, 0, n);
  r.second = EG_CMPK("NE", sb, 0.0);
  tt_val_t sb1 = tt__eg_shift(e, sb, 1), sp1 = tt__eg_shift(e, sp, 1);
  r.first = EG_CMPK("NE", sb1, 0.0);
  tt_val_t om1 = EG_MUL(EG_SQRT(EG_ABS(sp1)), EG_SQRT(EG_ABS(sb1)));
  tt_val_t om2 = EG_MUL(EG_SQRT(EG_ABS(sp)), EG_SQRT(EG_ABS(sb)));
  r.wr = dg;
  r.wi = EG_SEL(r.first, om1, EG_SEL(r.second, EG_NEG(om2), EG_K(om1, 0.0)));
  r.b = sp1;
  return r;
}

static tt_val_t conj_t(tt__eig_t* e, tt_val_t z) { /* conjugate transpose (last two dims) */
  z = tt__la_mT(e->f, z);
  return tt__eg_cplx(e, tt__eg_re(e, z), EG_NEG(tt__eg_im(e, z)));
}

static tt_val_t cabs1(tt__eig_t* e, tt_val_t z) {
  return EG_ADD(EG_ABS(tt__eg_re(e, z)), EG_ABS(tt__eg_im(e, z)));
}

/* The unitary W (bs, n, n) triangularizing T's 2x2 blocks. */
static tt_val_t block_unitary(tt__eig_t* e, const evals_t* ev) {
  int64_t n = e->n, vd[2] = {e->bs, n}, md[3] = {e->bs, n, n};
  tt_val_t om = EG_SEL(ev->first, ev->wi, EG_K(ev->wi, 1.0));
  tt_val_t bb = EG_SEL(ev->first, ev->b, EG_K(ev->b, 0.0));
  tt_val_t nu = tt__eg_hypot(e, bb, om);
  tt_val_t cr = EG_DIV(bb, nu), ci = EG_DIV(om, nu); /* (b, i w) / nu */
  tt_val_t one = tt_l_full(e->f, e->rt, 2, vd, 1.0), zero = EG_K(one, 0.0);
  tt_val_t cd = EG_SEL(ev->first, cr, EG_SEL(ev->second, tt__eg_shift(e, cr, -1), one));
  tt_val_t wd = tt__eg_cplx(e, cd, zero);
  tt_val_t wo = tt__eg_cplx(e, zero, EG_SEL(ev->first, ci, zero));
  tt_val_t row = tt__eg_iota(e, 3, md, 1), col = tt__eg_iota(e, 3, md, 2);
  int64_t byrow[2] = {0, 1}, bycol[2] = {0, 2};
  tt_val_t fr = tt_lt_bcast_in_dim(e->f, ev->first, 3, md, byrow);
  tt_val_t fc = tt_lt_bcast_in_dim(e->f, ev->first, 3, md, bycol);
  tt_val_t sub = EG_AND(EG_CMP("EQ", row, EG_ADDK(col, 1.0)), fc);
  tt_val_t sup = EG_AND(EG_CMP("EQ", col, EG_ADDK(row, 1.0)), fr);
  tt_val_t z = tt_l_full(e->f, e->ct, 3, md, 0.0);
  tt_val_t w = EG_SEL(sup, tt_lt_bcast_in_dim(e->f, wo, 3, md, byrow), z);
  w = EG_SEL(sub, tt_lt_bcast_in_dim(e->f, wo, 3, md, bycol), w);
  return EG_SEL(EG_CMP("EQ", row, col), tt_lt_bcast_in_dim(e->f, wd, 3, md, byrow), w);
}

typedef struct bs_ctx {
  tt__eig_t* e;
  double big;
} bs_ctx_t;

/* vals: x (bs, n, n), tc, w (bs, n) complex, smin (bs, n); row i = n - 2 - it */
static void backsub_step(tt_shlo_fn_t* f, tt_val_t it, tt_val_t* vals, void* vctx) {
  bs_ctx_t* bc = vctx;
  tt__eig_t* e = bc->e;
  int64_t n = e->n, vd[2] = {e->bs, n}, md[3] = {e->bs, n, n};
  tt_val_t x = vals[0], tc = vals[1], w = vals[2], smin = vals[3];
  tt_val_t i = tt_l_binary(f, "stablehlo.subtract", tt_lt_const0(f, TT_I64, (double)(n - 2)), it);
  tt_val_t zero0 = tt_lt_const0(f, TT_I64, 0.0);
  tt_val_t row = tt_l_reshape(f, tt__eg_window(e, tc, i, zero0, 1, n), 2, vd);
  tt_val_t right = EG_CMP("GT", tt__eg_iota(e, 2, vd, 1), tt_lt_splat(f, i, 2, vd));
  tt_val_t cz = tt_l_full(f, e->ct, 2, vd, 0.0);
  row = EG_SEL(right, row, cz);
  tt_val_t r = tt__eg_vm(e, row, x); /* (bs, n): sum_j t(i, j) x(j, k) */
  tt_val_t wi = tt__eg_lead(e, tt__eg_at(e, w, i), 2, vd);
  tt_val_t d = EG_SUB(wi, w);
  tt_val_t tiny = EG_CMP("LT", cabs1(e, d), smin);
  d = EG_SEL(tiny, tt__eg_cplx(e, smin, EG_K(smin, 0.0)), d);
  /* scale column k down first where |r| / |d| would pass `big` */
  tt_val_t rn = cabs1(e, r), lim = EG_MULK(cabs1(e, d), bc->big);
  tt_val_t over = EG_AND(right, EG_CMP("GT", rn, lim));
  tt_val_t s = EG_SEL(over, EG_DIV(lim, rn), EG_K(rn, 1.0));
  tt_val_t sc = tt__eg_cplx(e, s, EG_K(s, 0.0));
  x = EG_MUL(x, tt_lt_bcast_in_dim(f, sc, 3, md, (int64_t[]){0, 2}));
  tt_val_t xi = EG_DIV(EG_NEG(EG_MUL(r, sc)), d);
  tt_val_t old = tt_l_reshape(f, tt__eg_window(e, x, i, zero0, 1, n), 2, vd);
  xi = tt_l_reshape(f, EG_SEL(right, xi, old), 3, (int64_t[]){e->bs, 1, n});
  vals[0] = tt__eg_put_window(e, x, xi, i, zero0);
}

/* Unit 2-norm columns of v (bs, n, n) complex. */
static tt_val_t unit_columns(tt__eig_t* e, tt_val_t v) {
  int64_t n = e->n, md[3] = {e->bs, n, n};
  tt_val_t a = cabs1(e, v);
  tt_val_t mx = tt_lt_reduce(e->f, a, 2u, "stablehlo.maximum", tt_lt_const0(e->f, e->rt, 0.0));
  mx = EG_SEL(EG_CMPK("EQ", mx, 0.0), EG_K(mx, 1.0), mx);
  tt_val_t mb = tt_lt_bcast_in_dim(e->f, mx, 3, md, (int64_t[]){0, 2});
  tt_val_t re = EG_DIV(tt__eg_re(e, v), mb), im = EG_DIV(tt__eg_im(e, v), mb);
  tt_val_t nrm = EG_SQRT(tt_lt_sum(e->f, EG_ADD(EG_MUL(re, re), EG_MUL(im, im)), 2u));
  nrm = EG_SEL(EG_CMPK("EQ", nrm, 0.0), EG_K(nrm, 1.0), nrm);
  tt_val_t nb = tt_lt_bcast_in_dim(e->f, nrm, 3, md, (int64_t[]){0, 2});
  return tt__eg_cplx(e, EG_DIV(re, nb), EG_DIV(im, nb));
}

/* Eigenvectors (bs, n, n) complex from t, z (bs, n, n) of the balanced
 * matrix, undone from the balancing and normalized. */
static tt_val_t eigenvectors(tt__eig_t* e, tt_val_t t, tt_val_t z, const evals_t* ev,
                             tt_val_t perm, tt_val_t scale) {
  tt_shlo_fn_t* f = e->f;
  int64_t n = e->n, vd[2] = {e->bs, n}, md[3] = {e->bs, n, n};
  tt_val_t w = tt__eg_cplx(e, ev->wr, ev->wi);
  tt_val_t W = block_unitary(e, ev);
  tt_val_t zr = tt_l_full(f, e->rt, 3, md, 0.0);
  tt_val_t tc = tt__la_matmul(f, conj_t(e, W), tt__la_matmul(f, tt__eg_cplx(e, t, zr), W));
  tt_val_t zc = tt__la_matmul(f, tt__eg_cplx(e, z, zr), W);
  /* exactly upper triangular with the eigenvalues on the diagonal */
  tt_val_t row = tt__eg_iota(e, 3, md, 1), col = tt__eg_iota(e, 3, md, 2);
  tc = EG_SEL(EG_CMP("GT", row, col), tt_l_full(f, e->ct, 3, md, 0.0), tc);
  tc = EG_SEL(EG_CMP("EQ", row, col), tt_lt_bcast_in_dim(f, w, 3, md, (int64_t[]){0, 1}), tc);
  double smlnum = e->safmin * ((double)n / e->ulp);
  tt_val_t smin = EG_MAX(EG_MULK(EG_ADD(EG_ABS(ev->wr), EG_ABS(ev->wi)), e->ulp),
                         tt_l_full(f, e->rt, 2, vd, smlnum));
  double big = (e->rt == TT_F64 ? sqrt(DBL_MAX) : sqrt(FLT_MAX)) * 1e-4;
  bs_ctx_t bc = {e, big};
  tt_val_t vals[4] = {tt_l_convert(f, EG_CMP("EQ", row, col), e->ct), tc, w, smin};
  if (n > 1) tt_l_fori(f, n - 1, vals, 4, backsub_step, &bc);
  tt_val_t v = tt__eg_unbalance(e, tt__la_matmul(f, zc, vals[0]), perm, scale);
  /* real eigenvalues: real vectors */
  tt_val_t pair = EG_OR(ev->first, ev->second);
  tt_val_t pc = tt_lt_bcast_in_dim(f, pair, 3, md, (int64_t[]){0, 2});
  v = EG_SEL(pc, v, tt__eg_cplx(e, tt__eg_re(e, v), zr));
  v = unit_columns(e, v);
  /* pairs: largest component (first of equal moduli) real and positive */
  tt_val_t re = tt__eg_re(e, v), im = tt__eg_im(e, v);
  tt_val_t mag = EG_ADD(EG_MUL(re, re), EG_MUL(im, im));
  tt_val_t mv, mi;
  tt_lt_arg_extreme(f, mag, 1, true, &mv, &mi); /* (bs, n) row index per column */
  tt_val_t hit = EG_CMP("EQ", row, tt_lt_bcast_in_dim(f, mi, 3, md, (int64_t[]){0, 2}));
  tt_val_t vre = tt_lt_sum(f, EG_SEL(hit, re, zr), 2u), vim = tt_lt_sum(f, EG_SEL(hit, im, zr), 2u);
  tt_val_t mod = tt__eg_hypot(e, vre, vim);
  tt_val_t m1 = EG_SEL(EG_CMPK("EQ", mod, 0.0), EG_K(mod, 1.0), mod);
  tt_val_t ph = tt__eg_cplx(e, EG_DIV(vre, m1), EG_NEG(EG_DIV(vim, m1)));
  ph = EG_SEL(ev->first, ph, tt_l_full(f, e->ct, 2, vd, 1.0));
  v = EG_MUL(v, tt_lt_bcast_in_dim(f, ph, 3, md, (int64_t[]){0, 2}));
  tt_val_t fc = tt_lt_bcast_in_dim(f, ev->first, 3, md, (int64_t[]){0, 2});
  tt_val_t exact = tt__eg_cplx(e, tt_lt_bcast_in_dim(f, mod, 3, md, (int64_t[]){0, 2}), zr);
  v = EG_SEL(EG_AND(fc, hit), exact, v);
  /* the second of a pair: the conjugate of the first */
  int64_t lo[3] = {0, 0, 1}, hi[3] = {0, 0, 0};
  tt_val_t prev = tt_lt_pad(f, tt_lt_slice_dim(f, v, 2, 0, n - 1), tt_lt_const0(f, e->ct, 0.0), lo, hi);
  prev = tt__eg_cplx(e, tt__eg_re(e, prev), EG_NEG(tt__eg_im(e, prev)));
  tt_val_t sc = tt_lt_bcast_in_dim(f, ev->second, 3, md, (int64_t[]){0, 2});
  return EG_SEL(sc, prev, v);
}

/* True per lane (bs,) where a (bs, N, N) has a NaN or infinity. */
static tt_val_t nonfinite(tt__eig_t* e, tt_val_t a) {
  tt_val_t ok = EG_CMPK("LT", EG_ABS(a), INFINITY);
  return tt_lt_reduce(e->f, EG_NOT(ok), 6u, "stablehlo.or", tt_lt_const0(e->f, TT_BOOL, 0.0));
}

/* param 0: linalg_eig (values, vectors); 1: eigvals (values only) */
static tt_status_t lower_eig(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  bool vectors = c->op->param == 0;
  tt_val_t a = c->args[0].val;
  tt_type_t at = tt__sh_type(f, a);
  if (tt_dtype_is_complex(at.dtype))
    return tt_status_make(TT_UNIMPLEMENTED,
                          "%s: complex input is not supported on the tpu device yet (real "
                          "float32 / float64 only)", c->op->name);
  TT_RETURN_IF_ERROR(tt__la_check_float(c, at.dtype));
  if (at.rank < 2 || at.dims[at.rank - 1] != at.dims[at.rank - 2])
    return tt_status_make(TT_INVALID_ARGUMENT, "linalg.eig: A must be batches of square matrices");
  int64_t n = at.dims[at.rank - 1], bs = 1;
  for (int d = 0; d < at.rank - 2; d++) bs *= at.dims[d];
  if (n == 0 || bs == 0) return tt__la_zero_outs(c);
  tt__eig_t ee, *e = &ee;
  tt__eg_init(e, f, at.dtype, bs, n);
  int64_t md[3] = {bs, n, n}, vd[2] = {bs, n};
  a = tt_l_reshape(f, a, 3, md);
  int64_t plo[3] = {0, 0, 0}, phi[3] = {0, e->N - n, e->N - n};
  a = tt_lt_pad(f, a, tt_lt_const0(f, e->rt, 0.0), plo, phi);
  tt_val_t bad = nonfinite(e, a);
  if (vectors)
    tt_shlo_add_check(f, tt__eg_any(e, bad), TT_FAILED_PRECONDITION,
                      "torch.linalg.eig: input tensor should not contain infs or NaNs.");
  int64_t pd[3] = {bs, e->N, e->N};
  a = EG_SEL(tt__eg_lead(e, bad, 3, pd), tt_l_full(f, e->rt, 3, pd, 0.0), a);
  tt_val_t perm, scale, ilo, ihi, info;
  tt__eg_balance(e, &a, &perm, &scale, &ilo, &ihi);
  tt_val_t q = TT_SHLO_INVALID;
  if (vectors) { /* the identity, zero in the padding */
    tt_val_t r = tt__eg_iota(e, 3, pd, 1), cc = tt__eg_iota(e, 3, pd, 2);
    q = tt_l_convert(f, EG_AND(EG_CMP("EQ", r, cc), EG_CMPK("LT", r, (double)n)), e->rt);
  }
  tt__eg_hessenberg(e, &a, vectors ? &q : NULL, ilo, ihi);
  tt__eg_hqr(e, &a, vectors ? &q : NULL, ilo, ihi, &info);
  tt_shlo_add_check(f, tt__eg_any(e, EG_CMPK("NE", info, 0.0)), TT_FAILED_PRECONDITION,
                    vectors ? "torch.linalg.eig: The algorithm failed to converge because the "
                              "input matrix is ill-conditioned or has too many repeated "
                              "eigenvalues (lahqr ran out of iterations)."
                            : "torch.linalg.eigvals: The algorithm failed to converge because "
                              "the input matrix is ill-conditioned or has too many repeated "
                              "eigenvalues (lahqr ran out of iterations).");
  int64_t lo3[3] = {0, 0, 0}, hi3[3] = {bs, n, n};
  tt_val_t t = tt_lt_slice(f, a, lo3, hi3);
  /* lahqr leaves exact zeros below the subdiagonal; make sure */
  t = tt__la_tri(f, t, false, -1);
  evals_t ev = eigenvalues(e, t);
  tt_val_t nanv = tt_l_full(f, e->rt, 2, vd, NAN);
  tt_val_t badv = tt__eg_lead(e, bad, 2, vd);
  tt_val_t w = tt__eg_cplx(e, EG_SEL(badv, nanv, ev.wr), EG_SEL(badv, nanv, ev.wi));
  const tt_type_t* wt = &c->out_types[0];
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_l_reshape(f, w, wt->rank, wt->dims)));
  if (!vectors) return NULL;
  tt_val_t z = tt_lt_slice(f, q, lo3, hi3);
  tt_val_t v = eigenvectors(e, t, z, &ev, perm, scale);
  const tt_type_t* vt = &c->out_types[1];
  return tt_l_set_out(c, 1, tt_l_reshape(f, v, vt->rank, vt->dims));
}

tt_status_t tt__ld_lower_eig(tt_lctx_t* c) { return lower_eig(c); }
