/* Helpers of the linalg_decomp family (see linalg_decomp_util.h): batched matrix
 * plumbing and the decompositions built on XLA's Qr / Householder-product /
 * Eigh custom calls.
 *
 * SVD: the Hermitian (m+n)x(m+n) matrix [[0, A], [A^H, 0]] has eigenvalues
 * +-s_i (and |m-n| zeros) with eigenvectors [u_i; +-v_i] / sqrt(2), so one
 * Eigh gives the singular triplets without squaring the condition number (an
 * eigh of A^T A would lose half the digits of the small singular values).
 * The u and v halves are then made exactly orthonormal by a Householder QR
 * whose column signs follow the halves (so u_i and v_i keep the sign they
 * share); that also completes them to full square factors, and gives
 * well-defined (arbitrary) singular vectors of zero singular values. */
#include <math.h>
#include <stdio.h>

#include "linalg_decomp_util.h"
#include "../elementwise/lower_elementwise.h"
#include "linalg_util.h"

tt_type_t tt__ld_type(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t ? *t : tt_type_scalar(TT_F32);
}

tt_val_t tt__ld_mT(tt_shlo_fn_t* f, tt_val_t a) { return tt__la_mT(f, a); }

/* i1 mask of (batch..., rows, cols): col - row >= k (ge) / == k (!ge). */
static tt_val_t diag_mask(tt_shlo_fn_t* f, const tt_type_t* t, int64_t k, bool ge) {
  int r = t->rank;
  tt_val_t row = tt_lt_iota(f, TT_I64, r, t->dims, r - 2);
  tt_val_t col = tt_lt_iota(f, TT_I64, r, t->dims, r - 1);
  tt_type_t it = tt_type_make(TT_I64, r, t->dims);
  tt_val_t d = tt_l_binary(f, "stablehlo.subtract", col, row);
  return tt_l_compare(f, ge ? "GE" : "EQ", d, tt_shlo_const_i64(f, &it, k));
}

tt_val_t tt__ld_triu(tt_shlo_fn_t* f, tt_val_t a, int64_t k) {
  tt_type_t t = tt__ld_type(f, a);
  return tt_l_select(f, diag_mask(f, &t, k, true), a, tt_shlo_const(f, &t, 0.0));
}

tt_val_t tt__ld_eye(tt_shlo_fn_t* f, const tt_type_t* batch, tt_dtype_t dt, int64_t rows,
                    int64_t cols) {
  tt_type_t t = *batch;
  t.dtype = dt;
  t.dims[t.rank - 2] = rows;
  t.dims[t.rank - 1] = cols;
  return tt_l_convert(f, diag_mask(f, &t, 0, false), dt);
}

void tt__ld_check_finite(tt_shlo_fn_t* f, tt_val_t a, int tri, const char* message) {
  /* |re| + |im| for complex a: inf if a part is, NaN if one is */
  tt_val_t mag = tt_dtype_is_complex(tt__ld_type(f, a).dtype)
                     ? tt_l_binary(f, "stablehlo.add", tt_l_unary(f, "stablehlo.abs", tt__cx_re(f, a)),
                                   tt_l_unary(f, "stablehlo.abs", tt__cx_im(f, a)))
                     : tt_l_unary(f, "stablehlo.abs", a);
  tt_type_t t = tt__ld_type(f, mag);
  tt_val_t bad = tt_l_compare(f, "LT", mag, tt_shlo_const(f, &t, INFINITY));
  bad = tt_l_unary(f, "stablehlo.not", bad);
  if (tri) { /* only the triangle that is read counts */
    tt_val_t in = diag_mask(f, &t, 0, true); /* upper incl. diagonal */
    if (tri < 0) in = tt_l_unary(f, "stablehlo.not", diag_mask(f, &t, 1, true));
    bad = tt_l_binary(f, "stablehlo.and", bad, in);
  }
  tt_val_t any = tt_lt_reduce(f, bad, (1u << t.rank) - 1, "stablehlo.or",
                              tt_lt_const0(f, TT_BOOL, 0.0));
  tt_shlo_add_check(f, any, TT_FAILED_PRECONDITION, message);
}

tt_val_t tt__ld_block(tt_shlo_fn_t* f, tt_val_t a, int64_t r0, int64_t r1, int64_t c0,
                      int64_t c1) {
  tt_type_t t = tt__ld_type(f, a);
  int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK];
  for (int i = 0; i < t.rank; i++) hi[i] = t.dims[i];
  lo[t.rank - 2] = r0, hi[t.rank - 2] = r1;
  lo[t.rank - 1] = c0, hi[t.rank - 1] = c1;
  return tt_lt_slice(f, a, lo, hi);
}

tt_val_t tt__ld_pad_to(tt_shlo_fn_t* f, tt_val_t a, int64_t rows, int64_t cols) {
  tt_type_t t = tt__ld_type(f, a);
  int r = t.rank;
  if (t.dims[r - 2] == rows && t.dims[r - 1] == cols) return a;
  int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
  hi[r - 2] = rows - t.dims[r - 2];
  hi[r - 1] = cols - t.dims[r - 1];
  return tt_lt_pad(f, a, tt_lt_const0(f, t.dtype, 0.0), lo, hi);
}

tt_val_t tt__ld_reverse(tt_shlo_fn_t* f, tt_val_t a, int dim) {
  tt_type_t t = tt__ld_type(f, a);
  return tt_shlo_opf(f, "stablehlo.reverse", &a, 1, &t, "dimensions = array<i64: %d>", dim);
}

void tt__ld_geqrf(tt_shlo_fn_t* f, tt_val_t a, tt_val_t* factored, tt_val_t* taus) {
  tt_type_t t = tt__ld_type(f, a);
  tt_type_t rt[2] = {t, t};
  int r = t.rank;
  rt[1].rank = r - 1;
  rt[1].dims[r - 2] = t.dims[r - 2] < t.dims[r - 1] ? t.dims[r - 2] : t.dims[r - 1];
  tt_val_t outs[2];
  tt_shlo_op_multi(f, "stablehlo.custom_call", &a, 1, rt, 2, "call_target_name = \"Qr\"", NULL,
                   outs);
  *factored = outs[0];
  *taus = outs[1];
}

tt_val_t tt__ld_orgqr(tt_shlo_fn_t* f, tt_val_t a, tt_val_t taus) {
  tt_type_t t = tt__ld_type(f, a), tt = tt__ld_type(f, taus);
  int r = t.rank;
  if (tt.dims[tt.rank - 1] == 0) return tt__ld_eye(f, &t, t.dtype, t.dims[r - 2], t.dims[r - 1]);
  tt_val_t ops[2] = {a, taus};
  return tt_shlo_op(f, "stablehlo.custom_call", ops, 2, &t,
                    "call_target_name = \"ProductOfElementaryHouseholderReflectors\"");
}

static tt_val_t orthonormalize(tt_shlo_fn_t* f, tt_val_t x, int64_t cols);

/* The Hermitian matrix the triangle of a that Eigh reads stands for. */
static tt_val_t hermitian_of(tt_shlo_fn_t* f, tt_val_t a, bool lower) {
  tt_val_t tri = lower ? tt__la_mH(f, a) : a; /* the read triangle, as the upper one */
  tt_val_t up = tt__ld_triu(f, tri, 0), strict = tt__ld_triu(f, tri, 1);
  tt_val_t h = tt_l_binary(f, "stablehlo.add", up, tt__la_mH(f, strict));
  if (!tt_dtype_is_complex(tt__ld_type(f, a).dtype)) return h;
  /* the diagonal's imaginary part is not read */
  tt_type_t t = tt__ld_type(f, h), rt = t;
  rt.dtype = tt_dtype_real_part(t.dtype);
  tt_val_t off = tt_l_binary(f, "stablehlo.subtract", tt_shlo_const(f, &rt, 1.0),
                             tt__ld_eye(f, &rt, rt.dtype, t.dims[t.rank - 2], t.dims[t.rank - 1]));
  return tt__cx_make(f, tt__cx_re(f, h), tt_l_binary(f, "stablehlo.multiply", tt__cx_im(f, h), off));
}

/* One first-order step on eigenvectors v (columns) of the Hermitian matrix a
 * reads with eigenvalues w: E = V^H A V, V <- V (I + X) with X_ij = E_ij /
 * (w_j - w_i), then orthonormalized with each column's direction kept. Pairs
 * whose gap is not well above E_ij (a cluster: any basis of it will do) are
 * left as they are. */
static tt_val_t refine_vectors(tt_shlo_fn_t* f, tt_val_t a, bool lower, tt_val_t v, tt_val_t w) {
  tt_type_t vt = tt__ld_type(f, v), wt = tt__ld_type(f, w);
  int r = vt.rank;
  int64_t n = vt.dims[r - 1];
  tt_val_t e = tt__la_matmul_tr(f, tt__la_conj(f, v),
                                tt__la_matmul_tr(f, hermitian_of(f, a, lower), v, false, false), true, false);
  tt_type_t rt = vt; /* (batch..., n, n) real */
  rt.dtype = wt.dtype;
  int64_t bi[TT_MAX_RANK], bj[TT_MAX_RANK];
  for (int i = 0; i < r - 2; i++) bi[i] = bj[i] = i;
  bi[r - 2] = r - 2; /* w_i down the rows */
  bj[r - 2] = r - 1; /* w_j across the columns */
  tt_val_t wi = tt_lt_bcast_in_dim(f, w, r, rt.dims, bi), wj = tt_lt_bcast_in_dim(f, w, r, rt.dims, bj);
  tt_val_t gap = tt_l_binary(f, "stablehlo.subtract", wj, wi);
  tt_val_t mag = tt_dtype_is_complex(vt.dtype) ? tt_l_unary(f, "stablehlo.abs", tt__cx_re(f, e)) : tt_l_unary(f, "stablehlo.abs", e);
  if (tt_dtype_is_complex(vt.dtype))
    mag = tt_l_binary(f, "stablehlo.add", mag, tt_l_unary(f, "stablehlo.abs", tt__cx_im(f, e)));
  /* |gap| > 1e3 |E_ij| (the correction below 1e-3) and off the diagonal */
  tt_val_t ok = tt_l_compare(f, "GT", tt_l_unary(f, "stablehlo.abs", gap),
                             tt_l_binary(f, "stablehlo.multiply", mag, tt_shlo_const(f, &rt, 1e3)));
  ok = tt_l_binary(f, "stablehlo.and", ok,
                   tt_l_compare(f, "NE", tt__ld_eye(f, &rt, rt.dtype, n, n), tt_shlo_const(f, &rt, 1.0)));
  tt_val_t safe = tt_l_select(f, ok, gap, tt_shlo_const(f, &rt, 1.0));
  tt_val_t x = tt_l_binary(f, "stablehlo.divide", e, tt_l_convert(f, safe, vt.dtype));
  x = tt_l_select(f, ok, x, tt_shlo_const(f, &vt, 0.0));
  tt_val_t v2 = tt_l_binary(f, "stablehlo.add", v, tt__la_matmul_tr(f, v, x, false, false));
  return orthonormalize(f, v2, n);
}

/* The Rayleigh quotients diag(V^H A V) of refined vectors v, ascending: exact
 * for a repeated eigenvalue (any basis of its eigenspace gives it), where the
 * Jacobi's own values are still ~sqrt(eps) off. */
static tt_val_t rayleigh_values(tt_shlo_fn_t* f, tt_val_t a, bool lower, tt_val_t v, tt_val_t w) {
  tt_type_t vt = tt__ld_type(f, v), wt = tt__ld_type(f, w);
  int r = vt.rank;
  tt_val_t av = tt__la_matmul_tr(f, hermitian_of(f, a, lower), v, false, false);
  tt_val_t q = tt_lt_sum(f, tt_l_binary(f, "stablehlo.multiply", tt__la_conj(f, v), av), 1u << (r - 2));
  if (tt_dtype_is_complex(vt.dtype)) q = tt__cx_re(f, q);
  tt_type_t sv = tt_type_scalar(wt.dtype), bt[2] = {sv, sv};
  tt_val_t args[2];
  tt_shlo_region_begin(f, bt, 2, args);
  tt_val_t lt = tt_l_compare(f, "LT", args[0], args[1]);
  char* region = tt_shlo_region_end(f, &lt, 1);
  char attr[64];
  snprintf(attr, sizeof attr, "dimension = %d : i64, is_stable = true", wt.rank - 1);
  tt_val_t sorted;
  tt_shlo_op_multi(f, "stablehlo.sort", &q, 1, &wt, 1, attr, region, &sorted);
  return sorted;
}

void tt__ld_eigh(tt_shlo_fn_t* f, tt_val_t a, bool lower, tt_val_t* values, tt_val_t* vectors) {
  tt_type_t t = tt__ld_type(f, a);
  tt_type_t rt[2] = {t, t};
  rt[1].rank = t.rank - 1;
  rt[1].dtype = tt_dtype_real_part(t.dtype); /* Hermitian: real eigenvalues */
  /* backend_config "lower,sort_eigenvalues,max_iter,tol": Jacobi sweeps until
   * the off-diagonal norm is below tol (relative); ~2 ulp of the dtype */
  char attr[160];
  snprintf(attr, sizeof attr, "call_target_name = \"Eigh\", backend_config = \"%d,1,100,%s\"",
           lower ? 1 : 0, tt_dtype_real_part(t.dtype) == TT_F64 ? "1.0e-15" : "1.0e-07");
  tt_val_t outs[2];
  tt_shlo_op_multi(f, "stablehlo.custom_call", &a, 1, rt, 2, attr, NULL, outs);
  *vectors = outs[0];
  *values = outs[1];
  /* the expander stops with off-diagonal entries of V^H A V near sqrt(eps) *
   * |A| in double precision (tol is floored there): vectors 1e-8 off where
   * LAPACK's are 1e-15; one perturbation step brings them to ~eps */
  if (tt_dtype_real_part(t.dtype) == TT_F64) {
    *vectors = refine_vectors(f, a, lower, outs[0], outs[1]);
    *values = rayleigh_values(f, a, lower, *vectors, outs[1]);
  }
}

/* x (batch..., rows, k) with nearly orthogonal columns -> the first `cols`
 * (>= k) columns of an orthonormal basis whose column j (< k) points like
 * x's column j. Complex x too: R's diagonal is real (zgeqrf), so column j of
 * the result keeps x's column j's phase. */
static tt_val_t orthonormalize(tt_shlo_fn_t* f, tt_val_t x, int64_t cols) {
  tt_type_t t = tt__ld_type(f, x);
  int r = t.rank;
  int64_t k = t.dims[r - 1];
  tt_val_t fac, taus;
  tt__ld_geqrf(f, x, &fac, &taus);
  tt_val_t q = tt__ld_orgqr(f, tt__ld_pad_to(f, fac, t.dims[r - 2], cols), taus);
  /* x_j = sum_i q_i r_ij with r_jj the diagonal of fac: flip where r_jj < 0 */
  tt_val_t d = tt__ld_block(f, fac, 0, k, 0, k);
  tt_type_t dt = tt__ld_type(f, d);
  d = tt_lt_sum(f, tt_l_select(f, diag_mask(f, &dt, 0, false), d, tt_shlo_const(f, &dt, 0.0)),
                1u << (r - 2)); /* (batch..., k) */
  if (tt_dtype_is_complex(t.dtype)) d = tt__cx_re(f, d);
  tt_type_t st = tt__ld_type(f, d);
  tt_val_t sign = tt_l_select(f, tt_l_compare(f, "LT", d, tt_shlo_const(f, &st, 0.0)),
                              tt_shlo_const(f, &st, -1.0), tt_shlo_const(f, &st, 1.0));
  sign = tt_l_convert(f, sign, t.dtype);
  if (cols > k) {
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
    hi[st.rank - 1] = cols - k;
    sign = tt_lt_pad(f, sign, tt_lt_const0(f, t.dtype, 1.0), lo, hi);
  }
  tt_type_t qt = tt__ld_type(f, q);
  int64_t bd[TT_MAX_RANK];
  for (int i = 0; i < r - 2; i++) bd[i] = i;
  bd[r - 2] = r - 1;
  return tt_l_binary(f, "stablehlo.multiply", q, tt_lt_bcast_in_dim(f, sign, r, qt.dims, bd));
}

void tt__ld_svd(tt_shlo_fn_t* f, tt_val_t a, bool full, tt_val_t* u, tt_val_t* s, tt_val_t* vh) {
  tt_type_t t = tt__ld_type(f, a);
  int r = t.rank;
  int64_t m = t.dims[r - 2], n = t.dims[r - 1], k = m < n ? m : n, N = m + n;
  /* [[0, A], [A^H, 0]] */
  int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
  lo[r - 1] = m;
  tt_val_t zero = tt_lt_const0(f, t.dtype, 0.0);
  tt_val_t top = tt_lt_pad(f, a, zero, lo, hi);
  lo[r - 1] = 0;
  hi[r - 1] = n;
  tt_val_t bottom = tt_lt_pad(f, tt__la_mH(f, a), zero, lo, hi);
  tt_val_t rows[2] = {top, bottom};
  tt_val_t big = tt_lt_concat(f, rows, 2, r - 2);
  tt_val_t vals, vecs;
  tt__ld_eigh(f, big, true, &vals, &vecs);
  /* the k largest eigenvalues, descending; |.| because a zero singular value
   * may come out as a tiny negative eigenvalue */
  vals = tt__ld_reverse(f, tt_lt_slice_dim(f, vals, r - 2, N - k, N), r - 2);
  *s = tt_l_unary(f, "stablehlo.abs", vals);
  if (!u && !vh) return;
  vecs = tt__ld_reverse(f, tt__ld_block(f, vecs, 0, N, N - k, N), r - 1);
  if (u) *u = orthonormalize(f, tt__ld_block(f, vecs, 0, m, 0, k), full ? m : k);
  if (vh) *vh = tt__la_mH(f, orthonormalize(f, tt__ld_block(f, vecs, m, N, 0, k), full ? n : k));
}
