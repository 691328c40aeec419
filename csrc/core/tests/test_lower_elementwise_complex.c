/* Tests of complex values in the elementwise lowering family against values
 * computed by hand (complex results are read as interleaved (re, im) f32 pairs):
 * construction and conjugation (complex_ops.c: complex, polar, conj_physical),
 * the abs / angle / sgn helpers the unary family delegates to, and complex
 * operands of binary and unary ops (promotion, Scalars, eq, sqrt's branch cut). */
#include "lower_check.h"

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
  TT_RUN(test_complex_ops);
  TT_RUN(test_complex_unary);
  TT_RUN(test_complex_arith);
  lc_close();
  TT_REPORT();
}
