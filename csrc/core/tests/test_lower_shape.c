/* Tests of the shape lowering family (shape.c: tril / triu, roll, repeat,
 * trace, cross, cdist, padding) against values computed by hand (every check
 * runs on both plugins when they are set). */
#include "lower_check.h"

static void shape_ops(tt_pjrt_t* p) {
  lc_result_t r;
  const float n9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  tt_type_t t33 = TY(TT_F32, 3, 3);
  th_arg_t a[] = {lc_tensor(t33, n9), INT(0)};
  TT_CHECK(lc_run(p, "aten::tril", a, 2, &t33, 1, &r));
  WANT_F32(r, 0, 9, 0, 1, 0, 0, 4, 5, 0, 7, 8, 9);
  lc_free(&r);
  a[1] = INT(1);
  TT_CHECK(lc_run(p, "aten::triu_", a, 2, &t33, 1, &r));
  WANT_F32(r, 0, 9, 0, 0, 2, 3, 0, 0, 6, 0, 0, 0);
  lc_free(&r);
  /* roll along a dim, and flattened */
  tt_type_t t23 = TY(TT_F32, 2, 3);
  th_arg_t b[] = {lc_tensor(t23, n9), INTS(1), INTS(1)};
  TT_CHECK(lc_run(p, "aten::roll", b, 3, &t23, 1, &r));
  WANT_F32(r, 0, 6, 0, 3, 1, 2, 6, 4, 5);
  lc_free(&r);
  th_arg_t b2[] = {lc_tensor(t23, n9), INTS(2), INTS0()};
  TT_CHECK(lc_run(p, "aten::roll", b2, 3, &t23, 1, &r));
  WANT_F32(r, 0, 6, 0, 5, 6, 1, 2, 3, 4);
  lc_free(&r);
  /* repeat, repeat_interleave with an output size */
  tt_type_t t24 = TY(TT_F32, 2, 4);
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 2), n9), INTS(2, 2)};
  TT_CHECK(lc_run(p, "aten::repeat", c, 2, &t24, 1, &r));
  WANT_F32(r, 0, 8, 0, 1, 2, 1, 2, 1, 2, 1, 2);
  lc_free(&r);
  const int64_t reps[4] = {1, 0, 3, 2};
  tt_type_t t6 = TY(TT_I64, 6);
  th_arg_t d[] = {lc_tensor(TY(TT_I64, 4), reps), INT(6)};
  TT_CHECK(lc_run(p, "aten::repeat_interleave.Tensor", d, 2, &t6, 1, &r));
  WANT_I64(r, 0, 6, 0, 2, 2, 2, 3, 3);
  lc_free(&r);
  /* trace of an int32 3x4 matrix is int64 */
  const int32_t m34[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  tt_type_t s64 = TY0(TT_I64);
  th_arg_t e[] = {lc_tensor(TY(TT_I32, 3, 4), m34)};
  TT_CHECK(lc_run(p, "aten::trace", e, 1, &s64, 1, &r));
  WANT_I64(r, 0, 1, 15);
  lc_free(&r);
  /* linalg_cross over the last dim */
  const float ca[6] = {1, 2, 3, 1, 0, 0}, cb[6] = {4, 5, 6, 0, 1, 0};
  th_arg_t g[] = {lc_tensor(t23, ca), lc_tensor(t23, cb), INT(-1)};
  TT_CHECK(lc_run(p, "aten::linalg_cross", g, 3, &t23, 1, &r));
  WANT_F32(r, 0, 6, 0, -3, 6, -3, 0, 0, 1);
  lc_free(&r);
  /* index_fill with a scalar */
  const float z6[6] = {0, 0, 0, 0, 0, 0};
  const int64_t fi[2] = {2, 0};
  th_arg_t h[] = {lc_tensor(t23, z6), INT(1), lc_tensor(TY(TT_I64, 2), fi), SF(5)};
  TT_CHECK(lc_run(p, "aten::index_fill.int_Scalar", h, 4, &t23, 1, &r));
  WANT_F32(r, 0, 6, 0, 5, 0, 5, 5, 0, 5);
  lc_free(&r);
}

static void cdist_pad_ops(tt_pjrt_t* p) {
  lc_result_t r;
  const float x1[4] = {0, 0, 1, 1}, x2[2] = {3, 4};
  tt_type_t t21 = TY(TT_F32, 2, 1);
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 2), x1), lc_tensor(TY(TT_F32, 1, 2), x2), FLT(2.0), NONE()};
  TT_CHECK(lc_run(p, "aten::_cdist_forward", a, 4, &t21, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, 5, 3.6055513f);
  lc_free(&r);
  a[2] = FLT(1.0);
  TT_CHECK(lc_run(p, "aten::_cdist_forward", a, 4, &t21, 1, &r));
  WANT_F32(r, 0, 2, 0, 7, 5);
  lc_free(&r);
  a[2] = FLT(INFINITY);
  TT_CHECK(lc_run(p, "aten::_cdist_forward", a, 4, &t21, 1, &r));
  WANT_F32(r, 0, 2, 0, 4, 3);
  lc_free(&r);
  const float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, dist[2] = {5, 3.6055513f};
  tt_type_t t22 = TY(TT_F32, 2, 2);
  th_arg_t b[] = {lc_tensor(t21, ones), lc_tensor(TY(TT_F32, 2, 2), x1), lc_tensor(TY(TT_F32, 1, 2), x2),
                  FLT(2.0), lc_tensor(t21, dist)};
  TT_CHECK(lc_run(p, "aten::_cdist_backward", b, 5, &t22, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, -0.6f, -0.8f, -0.5547002f, -0.8320503f);
  lc_free(&r);
  /* constant_pad_nd, with a negative (cropping) pad */
  const float q[4] = {1, 2, 3, 4};
  tt_type_t t33 = TY(TT_F32, 3, 3);
  th_arg_t c[] = {lc_tensor(t22, q), INTS(1, 0, 0, 1), SF(9)};
  TT_CHECK(lc_run(p, "aten::constant_pad_nd", c, 3, &t33, 1, &r));
  WANT_F32(r, 0, 9, 0, 9, 1, 2, 9, 3, 4, 9, 9, 9);
  lc_free(&r);
  th_arg_t c2[] = {lc_tensor(t22, q), INTS(-1, 1), SF(0)};
  TT_CHECK(lc_run(p, "aten::constant_pad_nd", c2, 3, &t22, 1, &r));
  WANT_F32(r, 0, 4, 0, 2, 0, 4, 0);
  lc_free(&r);
  /* reflection_pad1d and its backward (how often each input is read) */
  tt_type_t t17 = TY(TT_F32, 1, 7), t14 = TY(TT_F32, 1, 4);
  th_arg_t d[] = {lc_tensor(t14, q), INTS(2, 1)};
  TT_CHECK(lc_run(p, "aten::reflection_pad1d", d, 2, &t17, 1, &r));
  WANT_F32(r, 0, 7, 0, 3, 2, 1, 2, 3, 4, 3);
  lc_free(&r);
  th_arg_t e[] = {lc_tensor(t17, ones), lc_tensor(t14, q), INTS(2, 1)};
  TT_CHECK(lc_run(p, "aten::reflection_pad1d_backward", e, 3, &t14, 1, &r));
  WANT_F32(r, 0, 4, 0, 1, 2, 3, 1);
  lc_free(&r);
  /* replication_pad2d: left 1, bottom 1 */
  tt_type_t t133 = TY(TT_F32, 1, 3, 3);
  th_arg_t g[] = {lc_tensor(TY(TT_F32, 1, 2, 2), q), INTS(1, 0, 0, 1)};
  TT_CHECK(lc_run(p, "aten::replication_pad2d", g, 2, &t133, 1, &r));
  WANT_F32(r, 0, 9, 0, 1, 1, 2, 3, 3, 4, 3, 3, 4);
  lc_free(&r);
}

static void run_both(void (*fn)(tt_pjrt_t*)) {
  if (lc_new) fn(lc_new);
  if (!tt__cur_failed && lc_old) fn(lc_old);
}
static void test_shape(void) { run_both(shape_ops); }
static void test_cdist_pad(void) { run_both(cdist_pad_ops); }

int main(void) {
  lc_open();
  TT_RUN(test_shape);
  TT_RUN(test_cdist_pad);
  lc_close();
  TT_REPORT();
}
