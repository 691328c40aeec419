/* Tests of the linalg_decomp lowering family (QR, eigh, SVD, lstsq, general
 * eig) against values computed in C: factor identities (Q R = A, U S Vh = A,
 * orthonormal factors), LAPACK's sign conventions where they are defined
 * (geqrf's R diagonal and taus, geev's eigenvalue order and normalization),
 * closed-form eigenvalues and eigenvectors, and the normal equations. */
#include "lower_check.h"

/* A 3x2 full-rank matrix, row-major. */
static const float A32[6] = {2, -1, 1, 3, -2, 1};

static double a32(int i, int j) { return A32[i * 2 + j]; }

/* max |(X Y)_ij - Z_ij| for X (m x k), Y (k x n), row-major floats */
static double prod_err(const float* x, const float* y, const float* z, int m, int k, int n) {
  double e = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < k; l++) s += (double)x[i * k + l] * y[l * n + j];
      e = fmax(e, fabs(s - z[i * n + j]));
    }
  return e;
}

/* max |Q^T Q - I| over the n columns of Q (m x n) */
static double ortho_err(const float* q, int m, int n) {
  double e = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < m; l++) s += (double)q[l * n + i] * q[l * n + j];
      e = fmax(e, fabs(s - (i == j)));
    }
  return e;
}

static void check_qr(tt_pjrt_t* p) {
  /* geqrf: the first reflector maps column 0 to beta e_0 with beta =
   * -sign(a00) |col 0| and tau = (beta - a00) / beta (LAPACK's dlarfg) */
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 3, 2), A32)};
  tt_type_t gt[2] = {TY(TT_F32, 3, 2), TY(TT_F32, 2)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::geqrf", a, 1, gt, 2, &r));
  if (r.nout) {
    double norm0 = sqrt(a32(0, 0) * a32(0, 0) + a32(1, 0) * a32(1, 0) + a32(2, 0) * a32(2, 0));
    double beta = -norm0; /* a00 > 0 */
    const float* fac = r.out[0];
    const float* tau = r.out[1];
    TT_CHECK(fabs(fac[0] - beta) < 1e-5);
    TT_CHECK(fabs(tau[0] - (beta - a32(0, 0)) / beta) < 1e-6);
    TT_CHECK(fabs(fac[2] - a32(1, 0) / (a32(0, 0) - beta)) < 1e-6); /* v_1 = x_1 / (a00 - beta) */
    lc_free(&r);
  }
  /* linalg_qr reduced: Q R = A, Q^T Q = I, R upper triangular with geqrf's diagonal */
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 3, 2), A32), lc_str("reduced")};
  tt_type_t qt[2] = {TY(TT_F32, 3, 2), TY(TT_F32, 2, 2)};
  TT_CHECK(lc_run(p, "aten::linalg_qr", b, 2, qt, 2, &r));
  if (r.nout) {
    const float* q = r.out[0];
    const float* rr = r.out[1];
    TT_CHECK(prod_err(q, rr, A32, 3, 2, 2) < 1e-5);
    TT_CHECK(ortho_err(q, 3, 2) < 1e-6);
    TT_CHECK(rr[2] == 0.0f && rr[0] < 0);
    lc_free(&r);
  }
}
static void test_qr(void) {
  if (lc_new) check_qr(lc_new);
  if (!tt__cur_failed && lc_old) check_qr(lc_old);
}

static void test_ormqr_householder(void) {
  tt_pjrt_t* p = lc_new ? lc_new : lc_old;
  if (!p) return;
  /* Q from householder_product, then ormqr(Q^T-side) applied to Q itself:
   * Q^T Q = I for the 3x2 thin factor */
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 3, 2), A32)};
  tt_type_t gt[2] = {TY(TT_F32, 3, 2), TY(TT_F32, 2)};
  lc_result_t g, q, o;
  TT_CHECK(lc_run(p, "aten::geqrf", a, 1, gt, 2, &g));
  if (!g.nout) return;
  th_arg_t h[] = {lc_tensor(gt[0], g.out[0]), lc_tensor(gt[1], g.out[1])};
  TT_CHECK(lc_run(p, "aten::linalg_householder_product", h, 2, &gt[0], 1, &q));
  if (q.nout) {
    TT_CHECK(ortho_err(q.out[0], 3, 2) < 1e-6);
    th_arg_t m[] = {lc_tensor(gt[0], g.out[0]), lc_tensor(gt[1], g.out[1]),
                    lc_tensor(gt[0], q.out[0]), BOOL(1), BOOL(1)};
    TT_CHECK(lc_run(p, "aten::ormqr", m, 5, &gt[0], 1, &o));
    if (o.nout) { /* Q_full^T Q_thin = [I; 0] */
      const float* x = o.out[0];
      const float want[6] = {1, 0, 0, 1, 0, 0};
      TT_CHECK(lc_close_f32(x, want, 6, 0, 1e-6));
      lc_free(&o);
    }
    lc_free(&q);
  }
  lc_free(&g);
}

/* Complex64 QR (interleaved (re, im) f32 pairs) of the column A = [1+i, 1]^T,
 * by zlarfg: beta = -|A| = -sqrt 3 (real), tau = (beta - a0) / beta =
 * 1 + 1/sqrt 3 + i/sqrt 3, v_1 = 1 / (a0 - beta) = (1 + sqrt 3 - i) / (5 + 2 sqrt 3);
 * Q = A / beta; ormqr with transpose applies Q^H (not Q^T): Q^H A = [beta, 0]. */
static void check_complex_qr(tt_pjrt_t* p) {
  const float a[4] = {1, 1, 1, 0};
  float s3 = sqrtf(3.0f), den = 5 + 2 * s3;
  tt_type_t gt[2] = {TY(TT_C64, 2, 1), TY(TT_C64, 1)};
  th_arg_t g[] = {lc_tensor(gt[0], a)};
  lc_result_t r, q, o;
  TT_CHECK(lc_run(p, "aten::geqrf", g, NARGS(g), gt, 2, &r));
  if (!r.nout) return;
  WANT_F32(r, 0, 4, 1e-6, -s3, 0, (1 + s3) / den, -1 / den);
  WANT_F32(r, 1, 2, 1e-6, 1 + 1 / s3, 1 / s3);
  th_arg_t h[] = {lc_tensor(gt[0], r.out[0]), lc_tensor(gt[1], r.out[1])};
  TT_CHECK(lc_run(p, "aten::linalg_householder_product", h, NARGS(h), &gt[0], 1, &q));
  if (q.nout) {
    WANT_F32(q, 0, 4, 1e-6, -1 / s3, -1 / s3, -1 / s3, 0);
    lc_free(&q);
  }
  th_arg_t m[] = {lc_tensor(gt[0], r.out[0]), lc_tensor(gt[1], r.out[1]), lc_tensor(gt[0], a),
                  BOOL(1), BOOL(1)};
  TT_CHECK(lc_run(p, "aten::ormqr", m, NARGS(m), &gt[0], 1, &o));
  if (o.nout) {
    WANT_F32(o, 0, 4, 1e-6, -s3, 0, 0, 0);
    lc_free(&o);
  }
  lc_free(&r);
}
static void test_complex_qr(void) {
  if (lc_new) check_complex_qr(lc_new);
  if (!tt__cur_failed && lc_old) check_complex_qr(lc_old);
}

static void check_eigh(tt_pjrt_t* p) {
  /* [[2, 1], [1, 2]] read from the upper triangle (the lower holds junk):
   * eigenvalues 1, 3; eigenvectors (1, -1) / sqrt 2, (1, 1) / sqrt 2 */
  const float s[4] = {2, 1, 100, 2};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 2), s), lc_str("U"), BOOL(1)};
  tt_type_t ot[2] = {TY(TT_F32, 2), TY(TT_F32, 2, 2)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::_linalg_eigh", a, 3, ot, 2, &r));
  if (!r.nout) return;
  WANT_F32(r, 0, 2, 1e-6, 1, 3);
  const float* v = r.out[1];
  float h = (float)sqrt(0.5);
  const float av[4] = {fabsf(v[0]), fabsf(v[1]), fabsf(v[2]), fabsf(v[3])};
  const float want[4] = {h, h, h, h};
  TT_CHECK(lc_close_f32(av, want, 4, 1e-6, 1e-6));
  TT_CHECK(v[0] * v[2] < 0 && v[1] * v[3] > 0); /* (1, -1) and (1, 1) up to sign */
  lc_free(&r);
}
static void test_eigh(void) {
  if (lc_new) check_eigh(lc_new);
  if (!tt__cur_failed && lc_old) check_eigh(lc_old);
}

/* complex Hermitian [[2, i], [-i, 2]] (the lower triangle holds junk, the
 * diagonal an imaginary part LAPACK ignores): eigenvalues 1, 3; |v| all
 * 1/sqrt 2, and (A - w) v = 0 for each column */
static void check_complex_eigh(tt_pjrt_t* p) {
  const float s[8] = {2, 0.5f, 0, 1, 7, 7, 2, -3}; /* (re, im) pairs, row-major */
  th_arg_t a[] = {lc_tensor(TY(TT_C64, 2, 2), s), lc_str("U"), BOOL(1)};
  tt_type_t ot[2] = {TY(TT_F32, 2), TY(TT_C64, 2, 2)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::_linalg_eigh", a, 3, ot, 2, &r));
  if (!r.nout) return;
  WANT_F32(r, 0, 2, 1e-6, 1, 3);
  const float* v = r.out[1];
  const float* w = r.out[0];
  for (int j = 0; j < 2; j++) {
    /* column j: (v0, v1) = (v[2*(0*2+j)], ...) */
    float v0r = v[2 * j], v0i = v[2 * j + 1], v1r = v[2 * (2 + j)], v1i = v[2 * (2 + j) + 1];
    TT_CHECK(fabsf(hypotf(v0r, v0i) - (float)sqrt(0.5)) < 1e-6f);
    TT_CHECK(fabsf(hypotf(v1r, v1i) - (float)sqrt(0.5)) < 1e-6f);
    /* row 0 of (A - w) v: (2 - w) v0 + i v1 */
    float rr = (2 - w[j]) * v0r - v1i, ri = (2 - w[j]) * v0i + v1r;
    TT_CHECK(hypotf(rr, ri) < 1e-6f);
  }
  lc_free(&r);
}
static void test_complex_eigh(void) {
  if (lc_new) check_complex_eigh(lc_new);
  if (!tt__cur_failed && lc_old) check_complex_eigh(lc_old);
}

static void check_eig(tt_pjrt_t* p) {
  /* a batch of two real 3x3 matrices, row-major:
   *  [[1, 2, 0], [-1, 1, 0], [0, 0, 2]]: 1 + i sqrt 2, its conjugate (a 2x2
   *    Schur block already standard), then 2; vectors (sqrt 2, i, 0) / sqrt 3
   *    (the largest component real and positive), its conjugate, e_3
   *  [[2, 1, 0], [0, 3, 1], [0, 0, 5]] (triangular, balancing isolates every
   *    row): 2, 3, 5 in diagonal order; vectors e_1, (1, 1, 0) / sqrt 2 and
   *    (1/6, 1/2, 1) / |.| with geev's signs (x_k = 1) */
  const float a[18] = {1, 2, 0, -1, 1, 0, 0, 0, 2, 2, 1, 0, 0, 3, 1, 0, 0, 5};
  th_arg_t args[] = {lc_tensor(TY(TT_F32, 2, 3, 3), a)};
  tt_type_t ot[2] = {TY(TT_C64, 2, 3), TY(TT_C64, 2, 3, 3)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::linalg_eig", args, 1, ot, 2, &r));
  if (!r.nout) return;
  /* (re, im) pairs */
  float s2 = (float)sqrt(2.0), c2 = (float)sqrt(2.0 / 3), c1 = (float)sqrt(1.0 / 3);
  WANT_F32(r, 0, 12, 1e-6, 1, s2, 1, -s2, 2, 0, 2, 0, 3, 0, 5, 0);
  float h = (float)sqrt(0.5), nz = (float)sqrt(1.0 / 36 + 0.25 + 1.0);
  const float want[36] = {c2, 0, c2, 0, 0, 0,   0, c1, 0, -c1, 0, 0,   0, 0, 0, 0, 1, 0,
                          1, 0, h, 0, 1 / (6 * nz), 0,   0, 0, h, 0, 0.5f / nz, 0,
                          0, 0, 0, 0, 1 / nz, 0};
  TT_CHECK(lc_close_f32(r.out[1], want, 36, 1e-5, 1e-6));
  lc_free(&r);
}
static void test_eig(void) {
  if (lc_new) check_eig(lc_new);
  if (!tt__cur_failed && lc_old) check_eig(lc_old);
}

static void check_svd(tt_pjrt_t* p) {
  /* singular values: square roots of the eigenvalues of the 2x2 A^T A */
  double g00 = 0, g01 = 0, g11 = 0;
  for (int i = 0; i < 3; i++) {
    g00 += a32(i, 0) * a32(i, 0);
    g01 += a32(i, 0) * a32(i, 1);
    g11 += a32(i, 1) * a32(i, 1);
  }
  double mid = (g00 + g11) / 2, rad = sqrt((g00 - g11) * (g00 - g11) / 4 + g01 * g01);
  float s0 = (float)sqrt(mid + rad), s1 = (float)sqrt(mid - rad);
  for (int full = 0; full < 2; full++) {
    th_arg_t a[] = {lc_tensor(TY(TT_F32, 3, 2), A32), BOOL(full), BOOL(1), NONE()};
    int uc = full ? 3 : 2;
    tt_type_t ot[3] = {TY(TT_F32, 3, uc), TY(TT_F32, 2), TY(TT_F32, 2, 2)};
    lc_result_t r;
    TT_CHECK(lc_run(p, "aten::_linalg_svd", a, 4, ot, 3, &r));
    if (!r.nout) return;
    WANT_F32(r, 1, 2, 2e-6, s0, s1);
    const float* u = r.out[0];
    const float* sv = r.out[1];
    const float* vh = r.out[2];
    TT_CHECK(ortho_err(u, 3, uc) < 1e-6);
    TT_CHECK(ortho_err(vh, 2, 2) < 1e-6);
    float us[6]; /* U[:, :2] diag(S) */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) us[i * 2 + j] = u[i * uc + j] * sv[j];
    TT_CHECK(prod_err(us, vh, A32, 3, 2, 2) < 1e-5);
    lc_free(&r);
  }
}
static void test_svd(void) {
  if (lc_new) check_svd(lc_new);
  if (!tt__cur_failed && lc_old) check_svd(lc_old);
}

static void test_lstsq(void) {
  tt_pjrt_t* p = lc_new ? lc_new : lc_old;
  if (!p) return;
  /* x = (A^T A)^-1 A^T b, residual |A x - b|^2, rank 2 (driver gelsd) */
  const float b[3] = {1, 2, 3};
  double g00 = 0, g01 = 0, g11 = 0, c0 = 0, c1 = 0;
  for (int i = 0; i < 3; i++) {
    g00 += a32(i, 0) * a32(i, 0);
    g01 += a32(i, 0) * a32(i, 1);
    g11 += a32(i, 1) * a32(i, 1);
    c0 += a32(i, 0) * b[i];
    c1 += a32(i, 1) * b[i];
  }
  double det = g00 * g11 - g01 * g01;
  double x0 = (g11 * c0 - g01 * c1) / det, x1 = (g00 * c1 - g01 * c0) / det, res = 0;
  for (int i = 0; i < 3; i++) {
    double e = a32(i, 0) * x0 + a32(i, 1) * x1 - b[i];
    res += e * e;
  }
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 3, 2), A32), lc_tensor(TY(TT_F32, 3, 1), b), NONE(),
                  lc_str("gelsd")};
  tt_type_t ot[4] = {TY(TT_F32, 2, 1), TY(TT_F32, 1), TY0(TT_I64), TY(TT_F32, 2)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::linalg_lstsq", a, 4, ot, 4, &r));
  if (!r.nout) return;
  WANT_F32(r, 0, 2, 1e-5, (float)x0, (float)x1);
  WANT_F32(r, 1, 1, 1e-5, (float)res);
  WANT_I64(r, 2, 1, 2);
  lc_free(&r);
}

int main(void) {
  lc_open();
  TT_RUN(test_qr);
  TT_RUN(test_ormqr_householder);
  TT_RUN(test_complex_qr);
  TT_RUN(test_eigh);
  TT_RUN(test_complex_eigh);
  TT_RUN(test_eig);
  TT_RUN(test_svd);
  TT_RUN(test_lstsq);
  lc_close();
  TT_REPORT();
}
