/* Internal to core/lower: helpers and lowering functions shared by the
 * linalg_decomp family (QR, symmetric eigen, SVD, least squares):
 * linalg_decomp.c (QR ops and the family table), linalg_decomp_svd.c
 * (eigh, svd), linalg_decomp_lstsq.c (lstsq), linalg_eig.c (general eigen,
 * see linalg_eig_util.h), linalg_decomp_util.c (these helpers, built on
 * linalg_util.h's and calling no other decomp file).
 *
 * Matrices are (batch..., rows, cols) values; helpers keep the batch dims.
 * The decompositions use XLA's portable custom calls "Qr" (QrExpander:
 * geqrf-style packed Householder vectors and taus, LAPACK's signs),
 * "ProductOfElementaryHouseholderReflectors" (orgqr) and "Eigh"
 * (EighExpander: Jacobi; results (vectors, values ascending)). Callers never
 * pass them empty matrices. Builder failures are recorded in the
 * tt_shlo_fn_t (helpers then return TT_SHLO_INVALID). Reentrant. */
#ifndef TT_LINALG_DECOMP_UTIL_H_
#define TT_LINALG_DECOMP_UTIL_H_

#include "../lower_tensor_util.h"
#include "linalg_util.h"

/* The type of a value (a scalar f32 type after a builder failure). */
tt_type_t tt__ld_type(tt_shlo_fn_t* f, tt_val_t v);
/* Swaps the last two dims. */
tt_val_t tt__ld_mT(tt_shlo_fn_t* f, tt_val_t a);
/* Entries below diagonal `k` (col - row < k) set to 0: torch.triu(a, k). */
tt_val_t tt__ld_triu(tt_shlo_fn_t* f, tt_val_t a, int64_t k);
/* The first `cols` columns of the rows x rows identity, batched like
 * (rank-2 batch dims of) `batch` type, dtype dt. */
tt_val_t tt__ld_eye(tt_shlo_fn_t* f, const tt_type_t* batch, tt_dtype_t dt, int64_t rows,
                    int64_t cols);
/* Raises `message` at the next sync when a (batch..., r, c) has a NaN or
 * infinity; tri > 0: only in the upper triangle, < 0: the lower one (the
 * triangle a symmetric routine reads), 0: anywhere. LAPACK's eigen / SVD
 * drivers fail on such input, and CPU reports it. */
void tt__ld_check_finite(tt_shlo_fn_t* f, tt_val_t a, int tri, const char* message);
/* Slice of the last two dims: rows [r0, r1), cols [c0, c1). */
tt_val_t tt__ld_block(tt_shlo_fn_t* f, tt_val_t a, int64_t r0, int64_t r1, int64_t c0,
                      int64_t c1);
/* Pads the last two dims with zeros at the end to rows x cols. */
tt_val_t tt__ld_pad_to(tt_shlo_fn_t* f, tt_val_t a, int64_t rows, int64_t cols);
/* Reverses the given dim. */
tt_val_t tt__ld_reverse(tt_shlo_fn_t* f, tt_val_t a, int dim);

/* geqrf of a (batch..., m, n), m, n > 0: packed factors and taus (batch..., min(m, n)). */
void tt__ld_geqrf(tt_shlo_fn_t* f, tt_val_t a, tt_val_t* factored, tt_val_t* taus);
/* orgqr: the first n columns of H_1 ... H_k for a (batch..., m, n) holding
 * the Householder vectors below its diagonal and taus (batch..., k), k <= n.
 * k == 0 gives the identity columns. */
tt_val_t tt__ld_orgqr(tt_shlo_fn_t* f, tt_val_t a, tt_val_t taus);
/* Symmetric eigendecomposition of a (batch..., n, n), n > 0, reading the
 * lower (or upper) triangle: eigenvalues ascending and eigenvectors as
 * columns. */
void tt__ld_eigh(tt_shlo_fn_t* f, tt_val_t a, bool lower, tt_val_t* values, tt_val_t* vectors);
/* Thin SVD of a (batch..., m, n), m, n > 0, k = min(m, n): s (batch..., k)
 * descending; u (batch..., m, full ? m : k), vh (batch..., full ? n : k, n)
 * when u / vh are non-NULL. */
void tt__ld_svd(tt_shlo_fn_t* f, tt_val_t a, bool full, tt_val_t* u, tt_val_t* s, tt_val_t* vh);

/* Lowerings of the other family files (the table is in linalg_decomp.c). */
tt_status_t tt__ld_lower_eigh(tt_lctx_t* c);
tt_status_t tt__ld_lower_svd(tt_lctx_t* c);
tt_status_t tt__ld_lower_lstsq(tt_lctx_t* c);
/* linalg_eig / _linalg_eigvals (linalg_eig.c; param 0: with vectors) */
tt_status_t tt__ld_lower_eig(tt_lctx_t* c);

#endif /* TT_LINALG_DECOMP_UTIL_H_ */
