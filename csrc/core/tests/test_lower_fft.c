/* Tests of the fft lowering family (fft.c: _fft_r2c, _fft_c2c, _fft_c2r) against
 * values computed by hand (complex results are read as interleaved (re, im) f32
 * pairs). */
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

int main(void) {
  lc_open();
  TT_RUN(test_r2c);
  TT_RUN(test_r2c_2d);
  TT_RUN(test_c2c);
  TT_RUN(test_c2c_4d);
  TT_RUN(test_c2r);
  lc_close();
  TT_REPORT();
}
