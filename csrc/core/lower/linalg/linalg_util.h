/* Internal to core/lower: helpers shared by the linalg family files
 * (linalg.c: Cholesky and triangular solves, and the family table;
 * linalg_util.c: these helpers, which call no other file of the folder (the
 * decompositions' helpers, linalg_decomp_util.h and linalg_eig_util.h, build
 * on them); linalg_lu.c: LU and what is built on it; linalg_exp.c:
 * matrix_exp; linalg_ldl.c: LDL^T). Matrices are the last two dims of a
 * value; the dims before them are batch dims. Builder failures are recorded in the
 * tt_shlo_fn_t (helpers then return TT_SHLO_INVALID). Reentrant. */
#ifndef TT_LINALG_UTIL_H_
#define TT_LINALG_UTIL_H_

#include "../lower_loop.h"
#include "../shape/shape_util.h"

/* TT_INVALID_ARGUMENT unless dt is float32 or float64 (what CPU's LAPACK
 * kernels take; complex is not supported here). */
tt_status_t tt__la_check_float(const tt_lctx_t* c, tt_dtype_t dt);
/* TT_UNIMPLEMENTED unless dt is float32, float64, complex64 or complex128
 * (for the lowerings that handle complex matrices too). */
tt_status_t tt__la_check_field(const tt_lctx_t* c, tt_dtype_t dt);
/* True if the type has no elements. */
bool tt__la_empty(const tt_type_t* t);
/* Every output set to zeros of its type (empty results). */
tt_status_t tt__la_zero_outs(tt_lctx_t* c);

/* The transpose of the last two dims. */
tt_val_t tt__la_mT(tt_shlo_fn_t* f, tt_val_t v);
/* The elementwise conjugate of a complex value; v itself when it is real. */
tt_val_t tt__la_conj(tt_shlo_fn_t* f, tt_val_t v);
/* The conjugate transpose of the last two dims (tt__la_mT for real values). */
tt_val_t tt__la_mH(tt_shlo_fn_t* f, tt_val_t v);
/* A constant of type t whose elements are -0.0 (complex: both parts; 0 for
 * integers): the additive identity that keeps every value bit-exact. */
tt_val_t tt__la_neg0(tt_shlo_fn_t* f, const tt_type_t* t);
/* True if v's element type is complex. */
bool tt__la_is_complex(tt_shlo_fn_t* f, tt_val_t v);
/* LAPACK's pivot magnitude, elementwise and real: |v|, or |re v| + |im v|
 * (CABS1) for complex v. */
tt_val_t tt__la_cabs1(tt_shlo_fn_t* f, tt_val_t v);
/* v broadcast (right-aligned) to batch dims (nb, batch) followed by its own
 * last `keep` dims. */
tt_val_t tt__la_batch_to(tt_shlo_fn_t* f, tt_val_t v, int keep, int nb, const int64_t* batch);
/* a @ b over the last two dims, same batch dims, HIGHEST precision. */
tt_val_t tt__la_matmul(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
/* op(a) @ op(b), likewise; op transposes the last two dims when ta / tb (no
 * conjugation). */
tt_val_t tt__la_matmul_tr(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool ta, bool tb);
/* Batched identity (batch..., n, n) of dt. */
tt_val_t tt__la_eye(tt_shlo_fn_t* f, tt_dtype_t dt, int nb, const int64_t* batch, int64_t n);
/* Keeps the triangle on and below (lower) or above diagonal k of the last
 * two dims (tril(v, k) / triu(v, k)); the rest becomes 0. */
tt_val_t tt__la_tri(tt_shlo_fn_t* f, tt_val_t v, bool lower, int64_t k);
/* The main diagonal of the last two dims, (batch..., min(m, n)), exactly. */
tt_val_t tt__la_diag(tt_shlo_fn_t* f, tt_val_t v);
/* out[..., i, :] = v[..., idx[..., i], :]: rows gathered by an integer index
 * of shape (batch..., m'). */
tt_val_t tt__la_take_rows(tt_shlo_fn_t* f, tt_val_t v, tt_val_t idx);
/* op(a) in a triangular solve: a, a^T, a^H (the same as a^T for real a). */
typedef enum tt__la_op { TT_LA_NOTRANS, TT_LA_TRANS, TT_LA_ADJ } tt__la_op_t;
/* stablehlo.triangular_solve: op(a) x = b (left) or x op(a) = b; a and b
 * have the same batch dims. Only a's `lower` triangle is read. */
tt_val_t tt__la_trsolve(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool left, bool lower,
                        bool unit, tt__la_op_t op);
/* 0-d i1: any element of an integer value is nonzero. */
tt_val_t tt__la_any_nonzero(tt_shlo_fn_t* f, tt_val_t v);

/* Loops: tt_l_fori / tt_l_fori_dyn (../lower_loop.h). */

/* ---- LU (linalg_lu.c) ---------------------------------------------------------- */
/* LU with partial pivoting of a (batch..., m, n) as LAPACK's getrf: lu (L
 * below the diagonal, unit diagonal implied; U on and above), pivots
 * (batch..., min(m, n)) i32 1-based, perm (batch..., m) i32 (row i of L U is
 * row perm[i] of a), info (batch...) i32 (first zero pivot, 1-based, or 0). */
void tt__la_lu(tt_shlo_fn_t* f, tt_val_t a, tt_val_t* lu, tt_val_t* pivots, tt_val_t* perm,
               tt_val_t* info);
/* The row permutation (batch..., m) i32 that LAPACK pivots describe. */
tt_val_t tt__la_pivots_to_perm(tt_shlo_fn_t* f, tt_val_t pivots, int64_t m);
/* Solves op(A) X = B (A, A^T or A^H) for A = P L U given as (lu, perm),
 * left-hand B (batch..., n, k); lu and perm are broadcast to B's batch. */
tt_val_t tt__la_lu_solve(tt_shlo_fn_t* f, tt_val_t lu, tt_val_t perm, tt_val_t b, tt__la_op_t op);

/* Lowerings defined outside linalg.c (its table lists them). */
tt_status_t tt__la_lower_lu_factor(tt_lctx_t* c); /* linalg_lu_factor_ex */
tt_status_t tt__la_lower_lu(tt_lctx_t* c);        /* linalg_lu */
tt_status_t tt__la_lower_lu_unpack(tt_lctx_t* c); /* lu_unpack */
tt_status_t tt__la_lower_lu_solve(tt_lctx_t* c);  /* linalg_lu_solve */
tt_status_t tt__la_lower_det(tt_lctx_t* c);       /* param 0: _linalg_det, 1: _linalg_slogdet */
tt_status_t tt__la_lower_inv(tt_lctx_t* c);       /* linalg_inv_ex */
tt_status_t tt__la_lower_solve(tt_lctx_t* c);     /* _linalg_solve_ex */
tt_status_t tt__la_lower_matrix_exp(tt_lctx_t* c);
tt_status_t tt__la_lower_ldl_factor(tt_lctx_t* c);
tt_status_t tt__la_lower_ldl_solve(tt_lctx_t* c);

#endif /* TT_LINALG_UTIL_H_ */
