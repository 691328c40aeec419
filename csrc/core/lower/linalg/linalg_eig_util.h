/* Internal to core/lower: the general (non-symmetric) eigendecomposition,
 * linalg_eig / linalg_eigvals, built in StableHLO as LAPACK's geev builds it
 * (the XLA plugins have no eigen custom call for general matrices):
 *   linalg_eig_bal.c   balancing (gebal: permutations isolating eigenvalues,
 *                      then scaling by powers of 2) and its undoing (gebak);
 *   linalg_eig_hqr.c   Householder reduction to Hessenberg form (gehd2) with
 *                      the accumulated Q, and the double-shift QR algorithm
 *                      of lahqr (real Schur form T, Schur vectors Z);
 *   linalg_eig_util.c  the helpers declared first below;
 *   linalg_eig.c       eigenvalues from T, eigenvectors by back-substitution
 *                      in the complex Schur form, geev's normalization, and
 *                      the lowering (tt__ld_lower_eig, in linalg_decomp.c's
 *                      table).
 * Calls go one way: linalg_eig.c calls the steps, the steps call the
 * helpers, the helpers call no other file of the folder.
 * Following LAPACK step by step gives the eigenvalues in LAPACK's order (the
 * order of T's diagonal), which PyTorch does not promise but users compare.
 *
 * Batches: every matrix is one lane of a (bs, N, N) value, N = max(n + 1, 3)
 * (zero rows and columns of padding, so that the 3-row windows of the QR
 * sweep never leave the array). Per-matrix scalars are (bs,) values; a step that
 * does not apply to a lane leaves it unchanged (masks, never data-dependent
 * shapes), so one program serves the whole batch.
 *
 * Builder failures are recorded in the tt_shlo_fn_t (helpers then return
 * TT_SHLO_INVALID). Reentrant. */
#ifndef TT_LINALG_EIG_UTIL_H_
#define TT_LINALG_EIG_UTIL_H_

#include "linalg_util.h"
#include "../lower_loop.h"

typedef struct tt__eig {
  tt_shlo_fn_t* f;
  tt_dtype_t rt;     /* the real dtype computed in (f32 / f64) */
  tt_dtype_t ct;     /* its complex dtype */
  int64_t bs, n, N;  /* batch lanes, matrix order, padded order max(n + 1, 3) */
  double ulp;        /* LAPACK's dlamch('P'): 2^-23 / 2^-52 */
  double safmin;     /* dlamch('S'): the smallest normal number */
} tt__eig_t;

void tt__eg_init(tt__eig_t* e, tt_shlo_fn_t* f, tt_dtype_t rt, int64_t bs, int64_t n);

/* ---- elementwise (same-typed operands) -------------------------------------- */
tt_val_t tt__eg_bin(tt__eig_t* e, const char* op, tt_val_t a, tt_val_t b);
tt_val_t tt__eg_un(tt__eig_t* e, const char* op, tt_val_t a);
/* A splat of v typed like `like` (its dtype and shape). */
tt_val_t tt__eg_k(tt__eig_t* e, tt_val_t like, double v);
/* op(a, splat v): "stablehlo.add" etc., and comparisons (dir) with a constant. */
tt_val_t tt__eg_bink(tt__eig_t* e, const char* op, tt_val_t a, double v);
tt_val_t tt__eg_cmpk(tt__eig_t* e, const char* dir, tt_val_t a, double v);
tt_val_t tt__eg_cmp(tt__eig_t* e, const char* dir, tt_val_t a, tt_val_t b);
tt_val_t tt__eg_sel(tt__eig_t* e, tt_val_t p, tt_val_t a, tt_val_t b);
/* sqrt(x^2 + y^2) without overflow (LAPACK's dlapy2; 0 when both are 0). */
tt_val_t tt__eg_hypot(tt__eig_t* e, tt_val_t x, tt_val_t y);
/* Fortran SIGN(a, b): |a| with the sign of b (b >= 0, -0 included, gives +). */
tt_val_t tt__eg_sign(tt__eig_t* e, tt_val_t a, tt_val_t b);

#define EG_ADD(a, b) tt__eg_bin(e, "stablehlo.add", a, b)
#define EG_SUB(a, b) tt__eg_bin(e, "stablehlo.subtract", a, b)
#define EG_MUL(a, b) tt__eg_bin(e, "stablehlo.multiply", a, b)
#define EG_DIV(a, b) tt__eg_bin(e, "stablehlo.divide", a, b)
#define EG_MAX(a, b) tt__eg_bin(e, "stablehlo.maximum", a, b)
#define EG_MIN(a, b) tt__eg_bin(e, "stablehlo.minimum", a, b)
#define EG_AND(a, b) tt__eg_bin(e, "stablehlo.and", a, b)
#define EG_OR(a, b) tt__eg_bin(e, "stablehlo.or", a, b)
#define EG_NOT(a) tt__eg_un(e, "stablehlo.not", a)
#define EG_ABS(a) tt__eg_un(e, "stablehlo.abs", a)
#define EG_NEG(a) tt__eg_un(e, "stablehlo.negate", a)
#define EG_SQRT(a) tt__eg_un(e, "stablehlo.sqrt", a)
#define EG_SEL(p, a, b) tt__eg_sel(e, p, a, b)
#define EG_K(like, v) tt__eg_k(e, like, v)
#define EG_ADDK(a, v) tt__eg_bink(e, "stablehlo.add", a, v)
#define EG_MULK(a, v) tt__eg_bink(e, "stablehlo.multiply", a, v)
#define EG_CMP(dir, a, b) tt__eg_cmp(e, dir, a, b)
#define EG_CMPK(dir, a, v) tt__eg_cmpk(e, dir, a, v)

/* ---- per-lane values ------------------------------------------------------------ */
/* v of shape (bs, d1..dk) broadcast to (bs, dims...) (rank >= k + 1), v's
 * dims leading. */
tt_val_t tt__eg_lead(tt__eig_t* e, tt_val_t v, int rank, const int64_t* dims);
/* (bs, m) iota along dim 1, i64. */
tt_val_t tt__eg_iota(tt__eig_t* e, int rank, const int64_t* dims, int dim);
/* vec (bs, m)[idx] per lane (idx (bs,) i64, clamped to [0, m)), exactly. */
tt_val_t tt__eg_pick(tt__eig_t* e, tt_val_t vec, tt_val_t idx);
/* out[:, k] = vec[:, k + s], 0 where k + s is outside. */
tt_val_t tt__eg_shift(tt__eig_t* e, tt_val_t vec, int64_t s);
/* Row (dim 1) or column (dim 2) idx (bs,) of m (bs, R, C), exactly. */
tt_val_t tt__eg_line(tt__eig_t* e, tt_val_t m, int dim, tt_val_t idx);
/* m with line idx along dim (1 rows, 2 columns) replaced by v where the
 * lane's `on` (bs,) i1 is set. */
tt_val_t tt__eg_put_line(tt__eig_t* e, tt_val_t m, int dim, tt_val_t idx, tt_val_t v,
                         tt_val_t on);
/* m with the entry (r, c) (both (bs,) i64) set to v (bs,) where `on`. */
tt_val_t tt__eg_put_at(tt__eig_t* e, tt_val_t m, tt_val_t r, tt_val_t c, tt_val_t v,
                       tt_val_t on);
/* out[:, k] = m[:, k + dr, k + dc] for k in [0, len) (0 outside m). */
tt_val_t tt__eg_diag(tt__eig_t* e, tt_val_t m, int64_t dr, int64_t dc, int64_t len);
/* Reductions over dim 1 of (bs, m) (dim 0 of (bs,) for the *_all forms). */
tt_val_t tt__eg_rmax(tt__eig_t* e, tt_val_t v);
tt_val_t tt__eg_rmin(tt__eig_t* e, tt_val_t v);
tt_val_t tt__eg_rsum(tt__eig_t* e, tt_val_t v);
/* 0-d i1: any lane of a (bs,) i1 is set. */
tt_val_t tt__eg_any(tt__eig_t* e, tt_val_t v);
/* Column j (0-d i64) of a (bs, m) value as (bs,). */
tt_val_t tt__eg_at(tt__eig_t* e, tt_val_t v, tt_val_t j);
/* Lane values (bs,) packed as the columns of (bs, k), and column j back. */
tt_val_t tt__eg_pack(tt__eig_t* e, const tt_val_t* cols, int k);
tt_val_t tt__eg_col(tt__eig_t* e, tt_val_t packed, int j);
/* Batched m (bs, R, C) @ v (bs, C) -> (bs, R); v (bs, R) @ m -> (bs, C);
 * a (bs, R) outer b (bs, C) -> (bs, R, C). */
tt_val_t tt__eg_mv(tt__eig_t* e, tt_val_t m, tt_val_t v);
tt_val_t tt__eg_vm(tt__eig_t* e, tt_val_t v, tt_val_t m);
tt_val_t tt__eg_outer(tt__eig_t* e, tt_val_t a, tt_val_t b);
/* Window of a (bs, R, C) value: rows [r, r + nr), columns [c, c + nc) with r,
 * c 0-d i64 (in range), and its write-back. */
tt_val_t tt__eg_window(tt__eig_t* e, tt_val_t m, tt_val_t r, tt_val_t c, int64_t nr, int64_t nc);
tt_val_t tt__eg_put_window(tt__eig_t* e, tt_val_t m, tt_val_t w, tt_val_t r, tt_val_t c);

/* ---- complex ---------------------------------------------------------------- */
tt_val_t tt__eg_cplx(tt__eig_t* e, tt_val_t re, tt_val_t im);
tt_val_t tt__eg_re(tt__eig_t* e, tt_val_t z);
tt_val_t tt__eg_im(tt__eig_t* e, tt_val_t z);

/* ---- the steps (linalg_eig_bal.c, linalg_eig_hqr.c) ---------------------------- */
/* gebal('B') of a (bs, N, N) in place: *perm (bs, n) i64 (row j of the
 * balanced matrix is row perm[j] of the scaled a), *scale (bs, n) (rt; 1
 * outside [ilo, ihi]), *ilo, *ihi (bs,) i64. */
void tt__eg_balance(tt__eig_t* e, tt_val_t* a, tt_val_t* perm, tt_val_t* scale, tt_val_t* ilo,
                    tt_val_t* ihi);
/* gebak: the rows of vectors (bs, n, n) (any dtype) of the balanced matrix
 * back to those of the input. */
tt_val_t tt__eg_unbalance(tt__eig_t* e, tt_val_t v, tt_val_t perm, tt_val_t scale);
/* gehd2 on rows / columns [ilo, ihi] of h (bs, N, N); *q (if non-NULL) the
 * orthogonal factor, padded like h. */
void tt__eg_hessenberg(tt__eig_t* e, tt_val_t* h, tt_val_t* q, tt_val_t ilo, tt_val_t ihi);
/* lahqr (wantt; wantz when z is non-NULL): h (bs, N, N) Hessenberg becomes
 * the real Schur form, z is updated with the transformations. *info (bs,)
 * i64: 0, or i + 1 (1-based row) where lahqr ran out of iterations. */
void tt__eg_hqr(tt__eig_t* e, tt_val_t* h, tt_val_t* z, tt_val_t ilo, tt_val_t ihi,
                tt_val_t* info);

#endif /* TT_LINALG_EIG_UTIL_H_ */
