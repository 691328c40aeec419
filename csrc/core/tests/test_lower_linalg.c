/* Tests of the linalg lowering family's linalg.c (Cholesky, triangular solves,
 * LU, det / inv / solve, matrix_exp, LDL) against values computed by hand.
 * QR, eigen and SVD: test_lower_linalg_decomp.c; matmul: test_lower_linalg_matmul.c. */
#include "lower_check.h"

static bool eq_i32(const void* got, const int32_t* want, int n) {
  const int32_t* g = got;
  for (int i = 0; i < n; i++)
    if (g[i] != want[i]) {
      fprintf(stderr, "  element %d: got %d, want %d\n", i, g[i], want[i]);
      return false;
    }
  return true;
}
#define WANT_I32(r, k, n, ...) TT_CHECK(eq_i32((r).out[k], (const int32_t[]){__VA_ARGS__}, n))

/* A = L L^T with L = [[2,0,0],[1,3,0],[-1,2,1]]; a batch of two 2x2 where
 * the second is not positive definite (leading minor of order 2). */
static void check_cholesky(tt_pjrt_t* p) {
  lc_result_t r;
  th_arg_t a[] = {T_F32(ARR(4, 2, -2, 2, 10, 5, -2, 5, 6), 3, 3), BOOL(0), BOOL(0)};
  tt_type_t ot[2] = {TY(TT_F32, 3, 3), TY0(TT_I32)};
  TT_CHECK(lc_run(p, "aten::linalg_cholesky_ex", a, 3, ot, 2, &r));
  WANT_F32(r, 0, 9, 1e-6, 2, 0, 0, 1, 3, 0, -1, 2, 1);
  WANT_I32(r, 1, 1, 0);
  lc_free(&r);
  th_arg_t u[] = {T_F32(ARR(4, 2, -2, 2, 10, 5, -2, 5, 6), 3, 3), BOOL(1), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::linalg_cholesky_ex", u, 3, ot, 2, &r));
  WANT_F32(r, 0, 9, 1e-6, 2, 1, -1, 0, 3, 2, 0, 0, 1);
  lc_free(&r);
  th_arg_t b[] = {T_F32(ARR(4, 2, 2, 5, 1, 2, 2, 1), 2, 2, 2), BOOL(0), BOOL(0)};
  tt_type_t bt[2] = {TY(TT_F32, 2, 2, 2), TY(TT_I32, 2)};
  TT_CHECK(lc_run(p, "aten::linalg_cholesky_ex", b, 3, bt, 2, &r));
  WANT_F32(r, 0, 4, 1e-6, 2, 0, 1, 2);
  WANT_I32(r, 1, 2, 0, 2);
  lc_free(&r);
}
static void test_cholesky(void) {
  if (lc_new) check_cholesky(lc_new);
  if (!tt__cur_failed && lc_old) check_cholesky(lc_old);
}

static void test_cholesky_solve_inverse(void) {
  tt_pjrt_t* p = lc_new ? lc_new : lc_old;
  if (!p) return;
  lc_result_t r;
  /* L = [[2,0],[1,2]]: A = [[4,2],[2,5]], A^-1 = [[5,-2],[-2,4]] / 16 */
  th_arg_t a[] = {T_F32(ARR(2, 0, 1, 2), 2, 2), BOOL(0)};
  tt_type_t ot = TY(TT_F32, 2, 2);
  TT_CHECK(lc_run(p, "aten::cholesky_inverse", a, 2, &ot, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 5 / 16.f, -2 / 16.f, -2 / 16.f, 4 / 16.f);
  lc_free(&r);
  /* A x = b with b = A [1, 2]^T = [8, 12] */
  th_arg_t s[] = {T_F32(ARR(8, 12), 2, 1), T_F32(ARR(2, 0, 1, 2), 2, 2), BOOL(0)};
  tt_type_t st = TY(TT_F32, 2, 1);
  TT_CHECK(lc_run(p, "aten::_cholesky_solve_helper", s, 3, &st, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, 1, 2);
  lc_free(&r);
}

static void test_triangular(void) {
  tt_pjrt_t* p = lc_old ? lc_old : lc_new;
  if (!p) return;
  lc_result_t r;
  /* lower A = [[2,0],[1,1]] (the 9 above the diagonal is never read), b = [2, 3] */
  th_arg_t a[] = {T_F32(ARR(2, 9, 1, 1), 2, 2), T_F32(ARR(2, 3), 2, 1), BOOL(0), BOOL(1), BOOL(0)};
  tt_type_t ot = TY(TT_F32, 2, 1);
  TT_CHECK(lc_run(p, "aten::linalg_solve_triangular", a, 5, &ot, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, 1, 2);
  lc_free(&r);
  /* triangular_solve(b, A, upper=True, transpose=True): A^T x = b with A upper [[2,1],[0,1]] */
  th_arg_t t[] = {T_F32(ARR(2, 3), 2, 1), T_F32(ARR(2, 1, 7, 1), 2, 2), BOOL(1), BOOL(1), BOOL(0)};
  tt_type_t tt2[2] = {TY(TT_F32, 2, 1), TY(TT_F32, 2, 2)};
  TT_CHECK(lc_run(p, "aten::triangular_solve", t, 5, tt2, 2, &r));
  WANT_F32(r, 0, 2, 1e-6, 1, 2);
  WANT_F32(r, 1, 4, 0, 2, 1, 7, 1);
  lc_free(&r);
}

/* LU of [[1,2],[3,4]]: rows swap, l = 1/3, u22 = 2 - l * 4, in float32. */
static void check_lu(tt_pjrt_t* p) {
  lc_result_t r;
  th_arg_t a[] = {T_F32(ARR(1, 2, 3, 4), 2, 2), BOOL(1), BOOL(0)};
  tt_type_t ot[3] = {TY(TT_F32, 2, 2), TY(TT_I32, 2), TY0(TT_I32)};
  TT_CHECK(lc_run(p, "aten::linalg_lu_factor_ex", a, 3, ot, 3, &r));
  float l = 1.0f * (1.0f / 3.0f);
  WANT_F32(r, 0, 4, 0, 3, 4, l, 2.0f - l * 4.0f);
  WANT_I32(r, 1, 2, 2, 2);
  WANT_I32(r, 2, 1, 0);
  lc_free(&r);
  /* a singular batch element: info = the first zero pivot */
  th_arg_t s[] = {T_F32(ARR(0, 1, 0, 2), 2, 2), BOOL(1), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::linalg_lu_factor_ex", s, 3, ot, 3, &r));
  WANT_F32(r, 0, 4, 0, 0, 1, 0, 2);
  WANT_I32(r, 1, 2, 1, 2);
  WANT_I32(r, 2, 1, 1);
  lc_free(&r);
}
static void test_lu(void) {
  if (lc_new) check_lu(lc_new);
  if (!tt__cur_failed && lc_old) check_lu(lc_old);
}

static void test_det_inv_solve(void) {
  tt_pjrt_t* p = lc_new ? lc_new : lc_old;
  if (!p) return;
  lc_result_t r;
  th_arg_t a[] = {T_F32(ARR(1, 2, 3, 4), 2, 2)};
  tt_type_t dt[3] = {TY0(TT_F32), TY(TT_F32, 2, 2), TY(TT_I32, 2)};
  TT_CHECK(lc_run(p, "aten::_linalg_det", a, 1, dt, 3, &r));
  WANT_F32(r, 0, 1, 0, -2);
  lc_free(&r);
  tt_type_t sl[4] = {TY0(TT_F32), TY0(TT_F32), TY(TT_F32, 2, 2), TY(TT_I32, 2)};
  TT_CHECK(lc_run(p, "aten::_linalg_slogdet", a, 1, sl, 4, &r));
  WANT_F32(r, 0, 1, 0, -1);
  WANT_F32(r, 1, 1, 1e-6, (float)log(2.0));
  lc_free(&r);
  th_arg_t i[] = {T_F32(ARR(4, 7, 2, 6), 2, 2), BOOL(0)};
  tt_type_t it[2] = {TY(TT_F32, 2, 2), TY0(TT_I32)};
  TT_CHECK(lc_run(p, "aten::linalg_inv_ex", i, 2, it, 2, &r));
  WANT_F32(r, 0, 4, 1e-6, 0.6f, -0.7f, -0.2f, 0.4f);
  WANT_I32(r, 1, 1, 0);
  lc_free(&r);
  /* vector right-hand side: [[4,7],[2,6]] x = [18, 14] -> x = [1, 2] */
  th_arg_t s[] = {T_F32(ARR(4, 7, 2, 6), 2, 2), T_F32(ARR(18, 14), 2), BOOL(1), BOOL(0)};
  tt_type_t so[4] = {TY(TT_F32, 2), TY(TT_F32, 2, 2), TY(TT_I32, 2), TY0(TT_I32)};
  TT_CHECK(lc_run(p, "aten::_linalg_solve_ex", s, 4, so, 4, &r));
  WANT_F32(r, 0, 2, 1e-6, 1, 2);
  lc_free(&r);
}

/* exp([[0, t], [-t, 0]]) is a rotation; t = 5 takes the scaling-and-squaring
 * branch, t = 0.1 a low degree. */
static void test_matrix_exp(void) {
  tt_pjrt_t* p = lc_new ? lc_new : lc_old;
  if (!p) return;
  lc_result_t r;
  const float a[8] = {0, 5, -5, 0, 0, 0.1f, -0.1f, 0};
  th_arg_t x[] = {lc_tensor(TY(TT_F32, 2, 2, 2), a)};
  tt_type_t ot = TY(TT_F32, 2, 2, 2);
  TT_CHECK(lc_run(p, "aten::linalg_matrix_exp", x, 1, &ot, 1, &r));
  float c5 = (float)cos(5.0), s5 = (float)sin(5.0), c1 = (float)cos(0.1), s1 = (float)sin(0.1);
  WANT_F32(r, 0, 8, 1e-5, c5, s5, -s5, c5, c1, s1, -s1, c1);
  lc_free(&r);
}

/* complex64: exp(diag(5i, 0.1 + 0.1i)) (norm |5i| = 5: scaling and squaring)
 * and a nilpotent [[0, 1 + i], [0, 0]] (exp = I + A) */
static void test_matrix_exp_complex(void) {
  tt_pjrt_t* p = lc_new ? lc_new : lc_old;
  if (!p) return;
  lc_result_t r;
  const float a[16] = {0, 5, 0, 0, 0, 0, 0.1f, 0.1f, /* 2nd: */ 0, 0, 1, 1, 0, 0, 0, 0};
  th_arg_t x[] = {lc_tensor(TY(TT_C64, 2, 2, 2), a)};
  tt_type_t ot = TY(TT_C64, 2, 2, 2);
  TT_CHECK(lc_run(p, "aten::linalg_matrix_exp", x, 1, &ot, 1, &r));
  float e = (float)exp(0.1), c1 = (float)cos(0.1), s1 = (float)sin(0.1);
  WANT_F32(r, 0, 16, 1e-5, (float)cos(5.0), (float)sin(5.0), 0.f, 0.f, 0.f, 0.f, e * c1, e * s1,
           1.f, 0.f, 1.f, 1.f, 0.f, 0.f, 1.f, 0.f);
  lc_free(&r);
}

/* Bunch-Kaufman: [[4,2],[2,3]] takes a 1x1 pivot, [[0,1],[1,0]] a 2x2 one. */
static void check_ldl(tt_pjrt_t* p) {
  lc_result_t r;
  th_arg_t a[] = {T_F32(ARR(4, 2, 2, 3, 0, 1, 1, 0), 2, 2, 2), BOOL(0), BOOL(0)};
  tt_type_t ot[3] = {TY(TT_F32, 2, 2, 2), TY(TT_I32, 2, 2), TY(TT_I32, 2)};
  TT_CHECK(lc_run(p, "aten::linalg_ldl_factor_ex", a, 3, ot, 3, &r));
  WANT_F32(r, 0, 8, 0, 4, 0, 0.5f, 2, 0, 0, 1, 0);
  WANT_I32(r, 1, 4, 1, 2, -2, -2);
  WANT_I32(r, 2, 2, 0, 0);
  lc_free(&r);
  const int32_t piv[4] = {1, 2, -2, -2};
  th_arg_t s[] = {T_F32(ARR(4, 0, 0.5f, 2, 0, 0, 1, 0), 2, 2, 2), lc_tensor(TY(TT_I32, 2, 2), piv),
                  T_F32(ARR(6, 5, 3, 7), 2, 2, 1), BOOL(0)};
  tt_type_t st = TY(TT_F32, 2, 2, 1);
  TT_CHECK(lc_run(p, "aten::linalg_ldl_solve", s, 4, &st, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 1, 1, 7, 3);
  lc_free(&r);
}
/* Hermitian LDL^H (zhetf2) of A = [[2, 1-i], [1+i, 3]]: the 5i on the
 * diagonal and the upper triangle (9+9i) are never read; |a_00| = 2 >=
 * alpha cabs1(1+i) keeps a 1x1 pivot, l = (1+i) / 2, d_1 = 3 - |1+i|^2 / 2 = 2.
 * A [1, i]^T = [3+i, 1+4i]. */
static void check_complex_ldl(tt_pjrt_t* p) {
  lc_result_t r;
  const float a[8] = {2, 5, 9, 9, 1, 1, 3, 0};
  th_arg_t c[] = {lc_tensor(TY(TT_C64, 2, 2), a), BOOL(1), BOOL(0)};
  tt_type_t ot[3] = {TY(TT_C64, 2, 2), TY(TT_I32, 2), TY0(TT_I32)};
  TT_CHECK(lc_run(p, "aten::linalg_ldl_factor_ex", c, NARGS(c), ot, 3, &r));
  WANT_F32(r, 0, 8, 1e-6, 2, 0, 0, 0, 0.5f, 0.5f, 2, 0);
  WANT_I32(r, 1, 2, 1, 2);
  WANT_I32(r, 2, 1, 0);
  lc_free(&r);
  const float ld[8] = {2, 0, 0, 0, 0.5f, 0.5f, 2, 0}, b[4] = {3, 1, 1, 4};
  const int32_t piv[2] = {1, 2};
  th_arg_t s[] = {lc_tensor(TY(TT_C64, 2, 2), ld), lc_tensor(TY(TT_I32, 2), piv), lc_tensor(TY(TT_C64, 2, 1), b),
                  BOOL(1)};
  tt_type_t st = TY(TT_C64, 2, 1);
  TT_CHECK(lc_run(p, "aten::linalg_ldl_solve", s, NARGS(s), &st, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 1, 0, 0, 1);
  lc_free(&r);
}

static void test_ldl(void) {
  if (lc_new) check_ldl(lc_new);
  if (!tt__cur_failed && lc_old) check_ldl(lc_old);
  if (!tt__cur_failed && lc_new) check_complex_ldl(lc_new);
}

/* Complex64 (read as interleaved (re, im) f32 pairs). A = L L^H with
 * L = [[2, 0], [i, 1]]: A = [[4, -2i], [2i, 2]]; the 5i on A's diagonal is
 * never read (LAPACK reads the real part). A [1, i]^T = [6, 4i]. */
static void check_complex_cholesky(tt_pjrt_t* p) {
  lc_result_t r;
  const float a[8] = {4, 0, 0, -2, 0, 2, 2, 5};
  th_arg_t c[] = {lc_tensor(TY(TT_C64, 2, 2), a), BOOL(0), BOOL(0)};
  tt_type_t ot[2] = {TY(TT_C64, 2, 2), TY0(TT_I32)};
  TT_CHECK(lc_run(p, "aten::linalg_cholesky_ex", c, NARGS(c), ot, 2, &r));
  WANT_F32(r, 0, 8, 1e-6, 2, 0, 0, 0, 0, 1, 1, 0);
  WANT_I32(r, 1, 1, 0);
  lc_free(&r);
  const float l[8] = {2, 0, 0, 0, 0, 1, 1, 0}, b[4] = {6, 0, 0, 4};
  th_arg_t s[] = {lc_tensor(TY(TT_C64, 2, 1), b), lc_tensor(TY(TT_C64, 2, 2), l), BOOL(0)};
  tt_type_t st = TY(TT_C64, 2, 1);
  TT_CHECK(lc_run(p, "aten::_cholesky_solve_helper", s, NARGS(s), &st, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 1, 0, 0, 1);
  lc_free(&r);
}

/* LU of [[2+2i, 1], [3, 2]]: |re|+|im| keeps row 0 (4 > 3; |z| would swap),
 * l = 3 / (2+2i) = 0.75-0.75i, u22 = 2 - l = 1.25+0.75i; det = 1+4i. */
static void check_complex_lu(tt_pjrt_t* p) {
  lc_result_t r;
  const float a[8] = {2, 2, 1, 0, 3, 0, 2, 0};
  th_arg_t c[] = {lc_tensor(TY(TT_C64, 2, 2), a), BOOL(1), BOOL(0)};
  tt_type_t ot[3] = {TY(TT_C64, 2, 2), TY(TT_I32, 2), TY0(TT_I32)};
  TT_CHECK(lc_run(p, "aten::linalg_lu_factor_ex", c, NARGS(c), ot, 3, &r));
  WANT_F32(r, 0, 8, 1e-6, 2, 2, 1, 0, 0.75f, -0.75f, 1.25f, 0.75f);
  WANT_I32(r, 1, 2, 1, 2);
  WANT_I32(r, 2, 1, 0);
  lc_free(&r);
  th_arg_t d[] = {lc_tensor(TY(TT_C64, 2, 2), a)};
  tt_type_t sl[4] = {TY0(TT_C64), TY0(TT_F32), TY(TT_C64, 2, 2), TY(TT_I32, 2)};
  TT_CHECK(lc_run(p, "aten::_linalg_slogdet", d, NARGS(d), sl, 4, &r));
  float m = sqrtf(17.0f);
  WANT_F32(r, 0, 2, 1e-6, 1 / m, 4 / m);
  WANT_F32(r, 1, 1, 1e-6, (float)(0.5 * log(17.0)));
  WANT_F32(r, 2, 8, 1e-6, 2, 2, 1, 0, 0.75f, -0.75f, 1.25f, 0.75f); /* the LU of A itself */
  lc_free(&r);
  tt_type_t dt[3] = {TY0(TT_C64), TY(TT_C64, 2, 2), TY(TT_I32, 2)};
  TT_CHECK(lc_run(p, "aten::_linalg_det", d, NARGS(d), dt, 3, &r));
  WANT_F32(r, 0, 2, 1e-6, 1, 4);
  lc_free(&r);
}
static void test_complex(void) {
  if (lc_new) check_complex_cholesky(lc_new), check_complex_lu(lc_new);
  if (!tt__cur_failed && lc_old) check_complex_cholesky(lc_old), check_complex_lu(lc_old);
}

int main(void) {
  lc_open();
  TT_RUN(test_cholesky);
  TT_RUN(test_cholesky_solve_inverse);
  TT_RUN(test_triangular);
  TT_RUN(test_lu);
  TT_RUN(test_det_inv_solve);
  TT_RUN(test_matrix_exp);
  TT_RUN(test_matrix_exp_complex);
  TT_RUN(test_ldl);
  TT_RUN(test_complex);
  lc_close();
  TT_REPORT();
}
