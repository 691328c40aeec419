/* Tests of the fft and complex_ops lowering families against values computed
 * by hand (complex results are read as interleaved (re, im) f32 pairs). */
#include "lower_check.h"

/* rfft of [1, 2, 3, 4]: [10, -2+2i, -2]; two-sided adds conj(-2+2i). */
static void check_r2c(tt_pjrt_t* p) {
  const float x[4] = {1, 2, 3, 4};
  tt_type_t ot = TY(TT_C64, 3);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 4), x), INTS(0), INT(0), BOOL(1)};
  TT_CHECK(lc_run(p, "aten::_fft_r2c", a, NARGS(a), &ot, 1, &r));
  WANT_F32(r, 0, 6, 1e-6, 10, 0, -2, 2, -2, 0);
  lc_free(&r);
  ot = TY(TT_C64, 4); /* two-sided, normalized by 1/n */
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 4), x), INTS(0), INT(2), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::_fft_r2c", b, NARGS(b), &ot, 1, &r));
  WANT_F32(r, 0, 8, 1e-6, 2.5, 0, -0.5, 0.5, -0.5, 0, -0.5, -0.5);
  lc_free(&r);
}
static void test_r2c(void) {
  if (lc_new) check_r2c(lc_new);
  if (!tt__cur_failed && lc_old) check_r2c(lc_old);
}

/* rfft2 of [[1, 2], [3, 4]] over dims (0, 1): [[10, -2], [-4, 0]]; the same
 * over dims (1, 0) halves dim 0 instead (here also 2 -> 2). */
static void test_r2c_2d(void) {
  if (!lc_new) return;
  const float x[4] = {1, 2, 3, 4};
  tt_type_t ot = TY(TT_C64, 2, 2);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 2), x), INTS(0, 1), INT(0), BOOL(1)};
  TT_CHECK(lc_run(lc_new, "aten::_fft_r2c", a, NARGS(a), &ot, 1, &r));
  WANT_F32(r, 0, 8, 1e-6, 10, 0, -2, 0, -4, 0, 0, 0);
  lc_free(&r);
  /* 1/sqrt(n) normalization */
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2, 2), x), INTS(1, 0), INT(1), BOOL(1)};
  TT_CHECK(lc_run(lc_new, "aten::_fft_r2c", b, NARGS(b), &ot, 1, &r));
  WANT_F32(r, 0, 8, 1e-6, 5, 0, -1, 0, -2, 0, 0, 0);
  lc_free(&r);
}

/* c2c inverse (norm 1/n) of the spectrum of [1, 2, 3, 4] gives it back; the
 * forward transform of an impulse at 1 is exp(-2 pi i k / 4). */
static void test_c2c(void) {
  if (!lc_new) return;
  const float spec[8] = {10, 0, -2, 2, -2, 0, -2, -2};
  tt_type_t ot = TY(TT_C64, 4);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_C64, 4), spec), INTS(-1), INT(2), BOOL(0)};
  TT_CHECK(lc_run(lc_new, "aten::_fft_c2c", a, NARGS(a), &ot, 1, &r));
  WANT_F32(r, 0, 8, 1e-6, 1, 0, 2, 0, 3, 0, 4, 0);
  lc_free(&r);
  const float imp[8] = {0, 0, 1, 0, 0, 0, 0, 0};
  th_arg_t b[] = {lc_tensor(TY(TT_C64, 4), imp), INTS(0), INT(0), BOOL(1)};
  TT_CHECK(lc_run(lc_new, "aten::_fft_c2c", b, NARGS(b), &ot, 1, &r));
  WANT_F32(r, 0, 8, 1e-6, 1, 0, 0, -1, -1, 0, 0, 1);
  lc_free(&r);
}

/* Four dims need two chained stablehlo.fft calls: all ones of 2x2x2x2 ->
 * 16 at the origin, 0 elsewhere. */
static void test_c2c_4d(void) {
  if (!lc_new) return;
  float ones[32];
  for (int i = 0; i < 32; i++) ones[i] = (i % 2) ? 0.0f : 1.0f;
  tt_type_t ot = TY(TT_C64, 2, 2, 2, 2);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_C64, 2, 2, 2, 2), ones), INTS(0, 1, 2, 3), INT(0), BOOL(1)};
  TT_CHECK(lc_run(lc_new, "aten::_fft_c2c", a, NARGS(a), &ot, 1, &r));
  float want[32] = {16};
  TT_CHECK(lc_close_f32(r.out[0], want, 32, 1e-6, 1e-6));
  lc_free(&r);
}

/* c2r: the half spectrum of [1, 2, 3, 4] back to 4 reals (norm 1/n); a
 * longer input is cut to last_dim_size/2+1 values. */
static void check_c2r(tt_pjrt_t* p) {
  const float spec[8] = {10, 0, -2, 2, -2, 0, 99, 99};
  tt_type_t ot = TY(TT_F32, 4);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_C64, 4), spec), INTS(0), INT(2), INT(4)};
  TT_CHECK(lc_run(p, "aten::_fft_c2r", a, NARGS(a), &ot, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 1, 2, 3, 4);
  lc_free(&r);
  /* unnormalized: n times the values */
  th_arg_t b[] = {lc_tensor(TY(TT_C64, 3), spec), INTS(0), INT(0), INT(4)};
  TT_CHECK(lc_run(p, "aten::_fft_c2r", b, NARGS(b), &ot, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 4, 8, 12, 16);
  lc_free(&r);
}
static void test_c2r(void) {
  if (lc_new) check_c2r(lc_new);
  if (!tt__cur_failed && lc_old) check_c2r(lc_old);
}

static void test_complex_ops(void) {
  if (!lc_new) return;
  const float re[2] = {1, -2}, im[2] = {3, 0.5f};
  tt_type_t ot = TY(TT_C64, 2);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2), re), lc_tensor(TY(TT_F32, 2), im)};
  TT_CHECK(lc_run(lc_new, "aten::complex", a, NARGS(a), &ot, 1, &r));
  WANT_F32(r, 0, 4, 0, 1, 3, -2, 0.5);
  lc_free(&r);
  /* polar(2, pi/2) = 2i, polar(1, 0) = 1 */
  const float ab[2] = {2, 1}, an[2] = {(float)(M_PI / 2), 0};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2), ab), lc_tensor(TY(TT_F32, 2), an)};
  TT_CHECK(lc_run(lc_new, "aten::polar", b, NARGS(b), &ot, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 0, 2, 1, 0);
  lc_free(&r);
  const float z[4] = {1, 3, -2, -0.5f};
  th_arg_t c[] = {lc_tensor(TY(TT_C64, 2), z)};
  TT_CHECK(lc_run(lc_new, "aten::_conj_physical", c, NARGS(c), &ot, 1, &r));
  WANT_F32(r, 0, 4, 0, 1, -3, -2, 0.5);
  lc_free(&r);
}

/* the complex abs / angle / sgn helpers the unary families can delegate to */
static void test_complex_unary(void) {
  if (!lc_new) return;
  const float z[6] = {3, 4, 0, 1, 0, 0};
  th_arg_t a[] = {lc_tensor(TY(TT_C64, 3), z)};
  tt_type_t rt = TY(TT_F32, 3), ct = TY(TT_C64, 3);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "tt::complex_abs", a, 1, &rt, 1, &r));
  WANT_F32(r, 0, 3, 1e-6, 5, 1, 0);
  lc_free(&r);
  TT_CHECK(lc_run(lc_new, "tt::complex_angle", a, 1, &rt, 1, &r));
  WANT_F32(r, 0, 3, 1e-6, atan2(4, 3), M_PI / 2, 0);
  lc_free(&r);
  TT_CHECK(lc_run(lc_new, "tt::complex_sgn", a, 1, &ct, 1, &r));
  WANT_F32(r, 0, 6, 1e-6, 0.6, 0.8, 0, 1, 0, 0);
  lc_free(&r);
}

/* complex with real operands (promotion to complex, real -> (x, 0)), a
 * complex Scalar, eq on both parts, sqrt's branch cut at -0 */
static void test_complex_arith(void) {
  if (!lc_new) return;
  const float z[4] = {1, 3, -2, 0.5f}, x[2] = {2, -1};
  tt_type_t ct = TY(TT_C64, 2), bt = TY(TT_BOOL, 2);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_C64, 2), z), lc_tensor(TY(TT_F32, 2), x)};
  TT_CHECK(lc_run(lc_new, "aten::mul.Tensor", a, NARGS(a), &ct, 1, &r));
  WANT_F32(r, 0, 4, 0, 2, 6, 2, -0.5);
  lc_free(&r);
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2), x), lc_tensor(TY(TT_C64, 2), z)};
  TT_CHECK(lc_run(lc_new, "aten::div.Tensor", b, NARGS(b), &ct, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 0.2, -0.6, 8.0 / 17, 2.0 / 17); /* 2 / (1+3i), -1 / (-2+0.5i) */
  lc_free(&r);
  const double unit_i[2] = {0, 1};
  th_arg_t si = {.kind = TT_ARG_SCALAR, .type = tt_type_scalar(TT_C128), .data = unit_i};
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 2), x), si};
  TT_CHECK(lc_run(lc_new, "aten::mul.Tensor", c, NARGS(c), &ct, 1, &r));
  WANT_F32(r, 0, 4, 0, 0, 2, 0, -1);
  lc_free(&r);
  const float p[4] = {-0.0f, 0, NAN, 0}, q[4] = {0, -0.0f, NAN, 0};
  th_arg_t d[] = {lc_tensor(TY(TT_C64, 2), p), lc_tensor(TY(TT_C64, 2), q)};
  TT_CHECK(lc_run(lc_new, "aten::eq.Tensor", d, NARGS(d), &bt, 1, &r));
  TT_CHECK(lc_eq_bytes(r.out[0], (const uint8_t[]){1, 0}, 2));
  lc_free(&r);
  const float m[4] = {-4, -0.0f, -4, 0};
  th_arg_t e[] = {lc_tensor(TY(TT_C64, 2), m)};
  TT_CHECK(lc_run(lc_new, "aten::sqrt", e, NARGS(e), &ct, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 0, -2, 0, 2);
  lc_free(&r);
}

int main(void) {
  lc_open();
  TT_RUN(test_r2c);
  TT_RUN(test_r2c_2d);
  TT_RUN(test_c2c);
  TT_RUN(test_c2c_4d);
  TT_RUN(test_c2r);
  TT_RUN(test_complex_ops);
  TT_RUN(test_complex_unary);
  TT_RUN(test_complex_arith);
  lc_close();
  TT_REPORT();
}
