/* Tests of the nn_more lowering families (nn_more*.c, grid_sample*.c)
 * against values computed in C. */
#include "lower_check.h"

static void check_log_sigmoid(tt_pjrt_t* p) {
  const float x[4] = {-30, -1, 0, 2.5f};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 4), x)};
  tt_type_t ot[2] = {TY(TT_F32, 4), TY(TT_F32, 4)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::log_sigmoid_forward", a, 1, ot, 2, &r));
  float want[4], buf[4];
  for (int i = 0; i < 4; i++) {
    want[i] = (float)(fmin(x[i], 0) - log1p(exp(-fabs(x[i]))));
    buf[i] = (float)exp(-fabs(x[i]));
  }
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-7));
  TT_CHECK(lc_close_f32(r.out[1], buf, 4, 1e-6, 1e-7));
  lc_free(&r);
  const float g[4] = {1, 2, -1, 0.5f};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 4), g), lc_tensor(TY(TT_F32, 4), x), lc_tensor(TY(TT_F32, 4), buf)};
  TT_CHECK(lc_run(p, "aten::log_sigmoid_backward", b, 3, ot, 1, &r));
  for (int i = 0; i < 4; i++) want[i] = (float)(g[i] / (1 + exp(x[i])));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-7));
  lc_free(&r);
}
static void test_log_sigmoid(void) {
  if (lc_new) check_log_sigmoid(lc_new);
  if (!tt__cur_failed && lc_old) check_log_sigmoid(lc_old);
}

static void test_glu_prelu(void) {
  if (!lc_new) return;
  const float x[8] = {1, -2, 3, 0.5f, 0, 1, -1, 2}; /* 2x4: halves along dim 1 */
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 4), x), INT(-1)};
  tt_type_t ot = TY(TT_F32, 2, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::glu", a, 2, &ot, 1, &r));
  float want[8];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) want[i * 2 + j] = (float)(x[i * 4 + j] / (1 + exp(-x[i * 4 + 2 + j])));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-7));
  lc_free(&r);
  const float w[4] = {0.25f, -1, 0.5f, 2};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2, 4), x), lc_tensor(TY(TT_F32, 4), w)};
  tt_type_t pt = TY(TT_F32, 2, 4);
  TT_CHECK(lc_run(lc_new, "aten::_prelu_kernel", b, 2, &pt, 1, &r));
  for (int i = 0; i < 8; i++) want[i] = x[i] > 0 ? x[i] : w[i % 4] * x[i];
  TT_CHECK(lc_close_f32(r.out[0], want, 8, 0, 0));
  lc_free(&r);
}

/* im2col of a 1x1x3x3 image, kernel 2x2, stride 1: 4 rows of 4 positions;
 * col2im of ones counts how many blocks cover each pixel. */
static void check_im2col_col2im(tt_pjrt_t* p) {
  const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 1, 1, 3, 3), x), INTS(2, 2), INTS(1, 1), INTS(0, 0), INTS(1, 1)};
  tt_type_t ot = TY(TT_F32, 1, 4, 4);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::im2col", a, 5, &ot, 1, &r));
  WANT_F32(r, 0, 16, 0, 1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9);
  lc_free(&r);
  float ones[16];
  for (int i = 0; i < 16; i++) ones[i] = 1;
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 1, 4, 4), ones), INTS(3, 3), INTS(2, 2), INTS(1, 1), INTS(0, 0), INTS(1, 1)};
  tt_type_t it = TY(TT_F32, 1, 1, 3, 3);
  TT_CHECK(lc_run(p, "aten::col2im", b, 6, &it, 1, &r));
  WANT_F32(r, 0, 9, 0, 1, 2, 1, 2, 4, 2, 1, 2, 1);
  lc_free(&r);
}
static void test_im2col_col2im(void) {
  if (lc_new) check_im2col_col2im(lc_new);
  if (!tt__cur_failed && lc_old) check_im2col_col2im(lc_old);
}

static void test_max_unpool(void) {
  if (!lc_new) return;
  const float x[4] = {5, 6, 7, 8};
  const int64_t idx[4] = {3, 0, 8, 5};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 1, 2, 1, 2), x), lc_tensor(TY(TT_I64, 1, 2, 1, 2), idx), INTS(3, 3)};
  tt_type_t ot = TY(TT_F32, 1, 2, 3, 3);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::max_unpool2d", a, 3, &ot, 1, &r));
  WANT_F32(r, 0, 18, 0, 6, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 7);
  lc_free(&r);
}

/* multi_margin_loss_backward with p = 1, margin 1, mean over 2 samples of 3
 * classes: an active hinge i gives 1/6 at i and -1/6 at the target. */
static void test_margin_bwd(void) {
  if (!lc_new) return;
  const float x[6] = {0.5f, 0.2f, 1.0f, 2.0f, -3.0f, 1.5f};
  const int64_t y[2] = {2, 0};
  const float g[1] = {2};
  th_arg_t a[] = {lc_tensor(TY0(TT_F32), g), lc_tensor(TY(TT_F32, 2, 3), x), lc_tensor(TY(TT_I64, 2), y),
                  SI(1), SF(1.0), NONE(), INT(1)};
  tt_type_t ot = TY(TT_F32, 2, 3);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::multi_margin_loss_backward", a, 7, &ot, 1, &r));
  /* sample 0: z = 1 - 1 + x_i: 0.5 and 0.2 active; sample 1: z = 1 - 2 + x_i: 1.5 - 1 = 0.5 active */
  const double k = 2.0 / 6;
  WANT_F32(r, 0, 6, 1e-6, k, k, -2 * k, -k, 0, k);
  lc_free(&r);
  /* multilabel: labels {1} of 3 classes; hinges at d = 0 (1 - 2 + 1.5 > 0) and d = 2 (1 - 2 + 0.5 = -0.5: no) */
  const float x2[3] = {1.5f, 2.0f, 0.5f}, is_t[3] = {0, 1, 0};
  const int64_t t2[3] = {1, -1, 0};
  const float g1[1] = {1};
  th_arg_t b[] = {lc_tensor(TY0(TT_F32), g1), lc_tensor(TY(TT_F32, 3), x2), lc_tensor(TY(TT_I64, 3), t2), INT(2),
                  lc_tensor(TY(TT_F32, 3), is_t)};
  tt_type_t ot2 = TY(TT_F32, 3);
  TT_CHECK(lc_run(lc_new, "aten::multilabel_margin_loss_backward", b, 5, &ot2, 1, &r));
  WANT_F32(r, 0, 3, 1e-6, 1.0 / 3, -1.0 / 3, 0);
  lc_free(&r);
}

/* grid_sampler_2d on a 2x2 image: the center with align_corners averages all
 * four pixels; nearest at (1, -1) picks the top-right one. */
static void check_grid_sampler(tt_pjrt_t* p) {
  const float img[4] = {1, 2, 3, 4}, grid[4] = {0, 0, 1, -1};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 1, 1, 2, 2), img), lc_tensor(TY(TT_F32, 1, 1, 2, 2), grid), INT(0), INT(0),
                  BOOL(1)};
  tt_type_t ot = TY(TT_F32, 1, 1, 1, 2);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::grid_sampler_2d", a, 5, &ot, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, 2.5, 2);
  lc_free(&r);
  a[2] = INT(1);
  TT_CHECK(lc_run(p, "aten::grid_sampler_2d", a, 5, &ot, 1, &r));
  WANT_F32(r, 0, 2, 0, 1, 2); /* center rounds half to even: (0.5, 0.5) -> (0, 0) */
  lc_free(&r);
}
static void test_grid_sampler(void) {
  if (lc_new) check_grid_sampler(lc_new);
  if (!tt__cur_failed && lc_old) check_grid_sampler(lc_old);
}

/* fractional_max_pool2d on a 1x1x4x4 plane, kernel 2, output 2x2, samples 0:
 * alpha = 2, starts {0, 2}: the 2x2 block maxima. */
static void check_fractional_max_pool(tt_pjrt_t* p) {
  float x[16];
  for (int i = 0; i < 16; i++) x[i] = (float)((i * 7) % 16);
  const float u[2] = {0, 0};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 1, 1, 4, 4), x), INTS(2, 2), INTS(2, 2), lc_tensor(TY(TT_F32, 1, 1, 2), u)};
  tt_type_t ot[2] = {TY(TT_F32, 1, 1, 2, 2), TY(TT_I64, 1, 1, 2, 2)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::fractional_max_pool2d", a, 4, ot, 2, &r));
  float want[4];
  int64_t widx[4];
  for (int oh = 0; oh < 2; oh++)
    for (int ow = 0; ow < 2; ow++) {
      int best = (2 * oh) * 4 + 2 * ow;
      for (int h = 2 * oh; h < 2 * oh + 2; h++)
        for (int w = 2 * ow; w < 2 * ow + 2; w++)
          if (x[h * 4 + w] > x[best]) best = h * 4 + w;
      want[oh * 2 + ow] = x[best], widx[oh * 2 + ow] = best;
    }
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 0, 0));
  TT_CHECK(lc_eq_i64(r.out[1], widx, 4));
  lc_free(&r);
}
static void test_fractional_max_pool(void) {
  if (lc_new) check_fractional_max_pool(lc_new);
  if (!tt__cur_failed && lc_old) check_fractional_max_pool(lc_old);
}

/* _ctc_loss and _ctc_loss_backward against brute force: T = 3, C = 3,
 * target {1}: every path of 3 symbols that collapses to "1". */
static bool ctc_collapses_to_1(const int* p) {
  int out[3], n = 0, prev = -1;
  for (int t = 0; t < 3; t++) {
    if (p[t] != prev && p[t] != 0) out[n++] = p[t];
    prev = p[t];
  }
  return n == 1 && out[0] == 1;
}
static void check_ctc(tt_pjrt_t* p) {
  const double raw[9] = {0.2, 1.0, -0.5, 0.7, 0.1, 0.3, -1.0, 0.4, 0.9};
  float lp[9];
  double pr[9];
  for (int t = 0; t < 3; t++) {
    double z = 0;
    for (int c = 0; c < 3; c++) z += exp(raw[t * 3 + c]);
    for (int c = 0; c < 3; c++) lp[t * 3 + c] = (float)(raw[t * 3 + c] - log(z));
  }
  for (int i = 0; i < 9; i++) pr[i] = exp((double)lp[i]);
  double Z = 0, gam[9] = {0};
  for (int k = 0; k < 27; k++) {
    int p[3] = {k / 9, (k / 3) % 3, k % 3};
    if (!ctc_collapses_to_1(p)) continue;
    double w = pr[0 * 3 + p[0]] * pr[1 * 3 + p[1]] * pr[2 * 3 + p[2]];
    Z += w;
    for (int t = 0; t < 3; t++) gam[t * 3 + p[t]] += w;
  }
  const int64_t tg[1] = {1};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 3, 1, 3), lp), lc_tensor(TY(TT_I64, 1, 1), tg), INTS(3), INTS(1), INT(0),
                  BOOL(0)};
  tt_type_t ot[2] = {TY(TT_F32, 1), TY(TT_F32, 1, 3, 3)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::_ctc_loss", a, 6, ot, 2, &r));
  float nll = ((float*)r.out[0])[0], alpha[9];
  memcpy(alpha, r.out[1], sizeof alpha);
  TT_CHECK(fabs(nll + log(Z)) < 1e-5);
  lc_free(&r);
  const float g[1] = {1};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 1), g), lc_tensor(TY(TT_F32, 3, 1, 3), lp), lc_tensor(TY(TT_I64, 1, 1), tg),
                  INTS(3), INTS(1), lc_tensor(TY(TT_F32, 1), &nll), lc_tensor(TY(TT_F32, 1, 3, 3), alpha), INT(0),
                  BOOL(0)};
  tt_type_t gt = TY(TT_F32, 3, 1, 3);
  TT_CHECK(lc_run(p, "aten::_ctc_loss_backward", b, 9, &gt, 1, &r));
  float want[9];
  for (int i = 0; i < 9; i++) want[i] = (float)(pr[i] - gam[i] / Z);
  TT_CHECK(lc_close_f32(r.out[0], want, 9, 1e-5, 1e-6));
  lc_free(&r);
}
static void test_ctc(void) {
  if (lc_new) check_ctc(lc_new);
  if (!tt__cur_failed && lc_old) check_ctc(lc_old);
}

int main(void) {
  lc_open();
  TT_RUN(test_log_sigmoid);
  TT_RUN(test_glu_prelu);
  TT_RUN(test_im2col_col2im);
  TT_RUN(test_max_unpool);
  TT_RUN(test_margin_bwd);
  TT_RUN(test_grid_sampler);
  TT_RUN(test_fractional_max_pool);
  TT_RUN(test_ctc);
  lc_close();
  TT_REPORT();
}
