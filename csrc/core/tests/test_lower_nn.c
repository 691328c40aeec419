/* Tests of the nn lowering family against values computed in C: nn.c (softmax,
 * nll_loss, layer norm, dropout, mse_loss, embedding backward), attention.c
 * (SDPA), nn_more.c (activations), nn_more_fold.c (im2col / col2im, max_unpool),
 * grid_sample.c and resample.c (upsampling). */
#include "lower_check.h"

static const float S6[6] = {1, 2, 3, -1, 0.5f, -INFINITY}; /* 2x3 */

static void ref_softmax_rows(const float* x, int rows, int cols, bool logsm, float* out) {
  for (int r = 0; r < rows; r++) {
    double m = -INFINITY, s = 0;
    for (int j = 0; j < cols; j++) m = fmax(m, x[r * cols + j]);
    for (int j = 0; j < cols; j++) s += exp(x[r * cols + j] - m);
    for (int j = 0; j < cols; j++) {
      double d = x[r * cols + j] - m;
      out[r * cols + j] = (float)(logsm ? d - log(s) : exp(d) / s);
    }
  }
}

static void check_softmax(tt_pjrt_t* p) {
  float want[6];
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 3), S6), INT(-1), BOOL(0)};
  tt_type_t ot = TY(TT_F32, 2, 3);
  TT_CHECK(lc_run(p, "aten::_softmax", a, 3, &ot, 1, &r));
  ref_softmax_rows(S6, 2, 3, false, want);
  TT_CHECK(lc_close_f32(r.out[0], want, 6, 1e-6, 1e-7));
  lc_free(&r);
  TT_CHECK(lc_run(p, "aten::_log_softmax", a, 3, &ot, 1, &r));
  ref_softmax_rows(S6, 2, 3, true, want);
  TT_CHECK(lc_close_f32(r.out[0], want, 6, 1e-6, 1e-6));
  lc_free(&r);
}
static void test_softmax(void) {
  if (lc_new) check_softmax(lc_new);
  if (!tt__cur_failed && lc_old) check_softmax(lc_old);
}

static void test_softmax_half_to_float_and_bwd(void) {
  if (!lc_new) return;
  uint16_t h[6];
  float hf[6] = {1, 2, 3, -1, 0.5f, 4};
  for (int i = 0; i < 6; i++) h[i] = lc_bf16(hf[i]);
  th_arg_t a[] = {lc_tensor(TY(TT_BF16, 2, 3), h), INT(1), BOOL(1)};
  tt_type_t ot = TY(TT_F32, 2, 3);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::_softmax", a, 3, &ot, 1, &r));
  float y[6], want[6];
  ref_softmax_rows(hf, 2, 3, false, y);
  TT_CHECK(lc_close_f32(r.out[0], y, 6, 1e-6, 1e-7));
  lc_free(&r);
  const float g[6] = {0.5f, -1, 2, 1, 1, -3};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2, 3), g), lc_tensor(TY(TT_F32, 2, 3), y), INT(1), INT(TT_F32)};
  TT_CHECK(lc_run(lc_new, "aten::_softmax_backward_data", b, 4, &ot, 1, &r));
  for (int row = 0; row < 2; row++) {
    double s = 0;
    for (int j = 0; j < 3; j++) s += g[row * 3 + j] * y[row * 3 + j];
    for (int j = 0; j < 3; j++) want[row * 3 + j] = (float)(y[row * 3 + j] * (g[row * 3 + j] - s));
  }
  TT_CHECK(lc_close_f32(r.out[0], want, 6, 1e-5, 1e-6));
  lc_free(&r);
  float ly[6];
  ref_softmax_rows(hf, 2, 3, true, ly);
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 2, 3), g), lc_tensor(TY(TT_F32, 2, 3), ly), INT(1), INT(TT_F32)};
  TT_CHECK(lc_run(lc_new, "aten::_log_softmax_backward_data", c, 4, &ot, 1, &r));
  for (int row = 0; row < 2; row++) {
    double s = g[row * 3] + g[row * 3 + 1] + g[row * 3 + 2];
    for (int j = 0; j < 3; j++) want[row * 3 + j] = (float)(g[row * 3 + j] - exp(ly[row * 3 + j]) * s);
  }
  TT_CHECK(lc_close_f32(r.out[0], want, 6, 1e-5, 1e-6));
  lc_free(&r);
}

/* 3 samples, 4 classes; target 2 is ignored (-100) */
static const float NX[12] = {-1, -2, -3, -4, -0.5f, -1.5f, -2.5f, -3.5f, -9, -8, -7, -6};
static const int64_t NT[3] = {1, 3, -100};
static const float NW[4] = {1, 2, 0.5f, 4};

static void check_nll(tt_pjrt_t* p) {
  lc_result_t r;
  tt_type_t ot[2] = {TY(TT_F32, 3), TY0(TT_F32)};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 3, 4), NX), lc_tensor(TY(TT_I64, 3), NT),
                  lc_tensor(TY(TT_F32, 4), NW), INT(0), INT(-100)};
  TT_CHECK(lc_run(p, "aten::nll_loss_forward", a, 5, ot, 2, &r));
  WANT_F32(r, 0, 3, 1e-6, 2 * 2.0f, 4 * 3.5f, 0);
  lc_free(&r);
  ot[0] = TY0(TT_F32);
  a[3] = INT(1);
  TT_CHECK(lc_run(p, "aten::nll_loss_forward", a, 5, ot, 2, &r));
  WANT_F32(r, 0, 1, 1e-6, (4 + 14) / 6.0f);
  WANT_F32(r, 1, 1, 1e-6, 6);
  lc_free(&r);
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 3, 4), NX), lc_tensor(TY(TT_I64, 3), NT), NONE(), INT(2),
                  INT(-100)};
  TT_CHECK(lc_run(p, "aten::nll_loss_forward", b, 5, ot, 2, &r));
  WANT_F32(r, 0, 1, 1e-6, 2 + 3.5f);
  WANT_F32(r, 1, 1, 1e-6, 2);
  lc_free(&r);
}
static void test_nll(void) {
  if (lc_new) check_nll(lc_new);
  if (!tt__cur_failed && lc_old) check_nll(lc_old);
}

static void test_nll_bwd_and_2d(void) {
  if (!lc_new) return;
  lc_result_t r;
  const float g0 = 3;
  const float tw = 6;
  th_arg_t a[] = {lc_tensor(TY0(TT_F32), &g0), lc_tensor(TY(TT_F32, 3, 4), NX),
                  lc_tensor(TY(TT_I64, 3), NT), lc_tensor(TY(TT_F32, 4), NW), INT(1), INT(-100),
                  lc_tensor(TY0(TT_F32), &tw)};
  tt_type_t ot = TY(TT_F32, 3, 4);
  TT_CHECK(lc_run(lc_new, "aten::nll_loss_backward", a, 7, &ot, 1, &r));
  WANT_F32(r, 0, 12, 1e-6, 0, -2 * 0.5f, 0, 0, 0, 0, 0, -4 * 0.5f, 0, 0, 0, 0);
  lc_free(&r);
  /* 2d: N=1, C=2, H=1, W=3, no weight, mean */
  const float x[6] = {-1, -2, -3, -4, -5, -6};
  const int64_t t[3] = {0, 1, 1};
  tt_type_t o2[2] = {TY0(TT_F32), TY0(TT_F32)};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 1, 2, 1, 3), x), lc_tensor(TY(TT_I64, 1, 1, 3), t), NONE(),
                  INT(1), INT(-100)};
  TT_CHECK(lc_run(lc_new, "aten::nll_loss2d_forward", b, 5, o2, 2, &r));
  WANT_F32(r, 0, 1, 1e-6, (1 + 5 + 6) / 3.0f);
  lc_free(&r);
}

static void test_layer_norm(void) {
  if (!lc_new) return;
  const float x[6] = {1, 2, 4, -3, 0, 9};
  const float w[3] = {1, 2, -1}, b[3] = {0, 0.5f, 1};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 3), x), INTS(3), lc_tensor(TY(TT_F32, 3), w),
                  lc_tensor(TY(TT_F32, 3), b), FLT(1e-5)};
  tt_type_t ot[3] = {TY(TT_F32, 2, 3), TY(TT_F32, 2, 1), TY(TT_F32, 2, 1)};
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::native_layer_norm", a, 5, ot, 3, &r));
  float want[6], mean[2], rstd[2];
  for (int row = 0; row < 2; row++) {
    double m = (x[row * 3] + x[row * 3 + 1] + x[row * 3 + 2]) / 3, v = 0;
    for (int j = 0; j < 3; j++) v += (x[row * 3 + j] - m) * (x[row * 3 + j] - m);
    double rs = 1 / sqrt(v / 3 + 1e-5);
    mean[row] = (float)m;
    rstd[row] = (float)rs;
    for (int j = 0; j < 3; j++) want[row * 3 + j] = (float)((x[row * 3 + j] - m) * rs * w[j] + b[j]);
  }
  TT_CHECK(lc_close_f32(r.out[0], want, 6, 1e-5, 1e-6));
  TT_CHECK(lc_close_f32(r.out[1], mean, 2, 1e-6, 1e-6));
  TT_CHECK(lc_close_f32(r.out[2], rstd, 2, 1e-5, 1e-6));
  lc_free(&r);
  /* backward against the closed form */
  const float go[6] = {1, -1, 0.5f, 2, 0, -2};
  th_arg_t bb[] = {lc_tensor(TY(TT_F32, 2, 3), go), lc_tensor(TY(TT_F32, 2, 3), x), INTS(3),
                   lc_tensor(TY(TT_F32, 2, 1), mean), lc_tensor(TY(TT_F32, 2, 1), rstd),
                   lc_tensor(TY(TT_F32, 3), w), lc_tensor(TY(TT_F32, 3), b), INTS(1, 1, 1)};
  tt_type_t bo[3] = {TY(TT_F32, 2, 3), TY(TT_F32, 3), TY(TT_F32, 3)};
  TT_CHECK(lc_run(lc_new, "aten::native_layer_norm_backward", bb, 8, bo, 3, &r));
  float dx[6], dw[3] = {0}, db[3] = {0};
  for (int row = 0; row < 2; row++) {
    double xh[3], g[3], sg = 0, sgx = 0;
    for (int j = 0; j < 3; j++) {
      xh[j] = (x[row * 3 + j] - mean[row]) * rstd[row];
      g[j] = go[row * 3 + j] * w[j];
      sg += g[j];
      sgx += g[j] * xh[j];
      dw[j] += (float)(go[row * 3 + j] * xh[j]);
      db[j] += go[row * 3 + j];
    }
    for (int j = 0; j < 3; j++) dx[row * 3 + j] = (float)(rstd[row] * (g[j] - sg / 3 - xh[j] * sgx / 3));
  }
  TT_CHECK(lc_close_f32(r.out[0], dx, 6, 1e-5, 1e-5));
  TT_CHECK(lc_close_f32(r.out[1], dw, 3, 1e-5, 1e-5));
  TT_CHECK(lc_close_f32(r.out[2], db, 3, 1e-6, 1e-6));
  lc_free(&r);
}

static void test_dropout(void) {
  if (!lc_new) return;
  enum { N = 4000 };
  static float x[N];
  for (int i = 0; i < N; i++) x[i] = 1.0f + (float)(i % 3);
  th_arg_t a[] = {lc_tensor(TY(TT_F32, N), x), FLT(0.25), NONE(), lc_rng(lc_seed_a)};
  tt_type_t ot[2] = {TY(TT_F32, N), TY(TT_BOOL, N)};
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::native_dropout", a, 4, ot, 2, &r));
  const float* y = r.out[0];
  const uint8_t* m = r.out[1];
  int kept = 0;
  for (int i = 0; i < N; i++) {
    kept += m[i];
    TT_CHECK(m[i] <= 1);
    TT_CHECK(fabsf(y[i] - (m[i] ? x[i] / 0.75f : 0)) <= 1e-6f * fabsf(x[i] / 0.75f));
  }
  TT_CHECK(abs(kept - 3 * N / 4) < 150); /* ~5.5 sigma */
  lc_free(&r);
  /* train=False: identity, mask all true */
  th_arg_t b[] = {lc_tensor(TY(TT_F32, N), x), FLT(0.25), BOOL(0), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(lc_new, "aten::native_dropout", b, 4, ot, 2, &r));
  TT_CHECK(memcmp(r.out[0], x, sizeof x) == 0);
  for (int i = 0; i < N; i++) TT_CHECK(((uint8_t*)r.out[1])[i] == 1);
  lc_free(&r);
  const uint8_t mk[3] = {1, 0, 1};
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 3), x), lc_tensor(TY(TT_BOOL, 3), mk), FLT(2.0)};
  tt_type_t o1 = TY(TT_F32, 3);
  TT_CHECK(lc_run(lc_new, "aten::native_dropout_backward", c, 3, &o1, 1, &r));
  WANT_F32(r, 0, 3, 0, 2 * x[0], 0, 2 * x[2]);
  lc_free(&r);
}

static void test_mse(void) {
  if (!lc_new) return;
  const float x[4] = {1, 2, 3, 4}, t[4] = {0, 2, 5, 3.5f};
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 4), x), lc_tensor(TY(TT_F32, 4), t), INT(1)};
  tt_type_t ot = TY0(TT_F32);
  TT_CHECK(lc_run(lc_new, "aten::mse_loss", a, 3, &ot, 1, &r));
  WANT_F32(r, 0, 1, 1e-6, (1 + 0 + 4 + 0.25f) / 4);
  lc_free(&r);
  a[2] = INT(0);
  ot = TY(TT_F32, 4);
  TT_CHECK(lc_run(lc_new, "aten::mse_loss", a, 3, &ot, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 1, 0, 4, 0.25f);
  lc_free(&r);
  const float g = 2;
  th_arg_t b[] = {lc_tensor(TY0(TT_F32), &g), lc_tensor(TY(TT_F32, 4), x), lc_tensor(TY(TT_F32, 4), t),
                  INT(1)};
  TT_CHECK(lc_run(lc_new, "aten::mse_loss_backward", b, 4, &ot, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 2 * 0.5f * 1, 0, 2 * 0.5f * -2, 2 * 0.5f * 0.5f);
  lc_free(&r);
}

static void test_embedding_bwd(void) {
  if (!lc_new) return;
  const int64_t idx[4] = {0, 2, 2, 1};
  float g[8];
  for (int i = 0; i < 8; i++) g[i] = (float)(i + 1);
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 2, 2), g), lc_tensor(TY(TT_I64, 2, 2), idx), INT(4), INT(1),
                  BOOL(0)};
  tt_type_t ot = TY(TT_F32, 4, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::embedding_dense_backward", a, 5, &ot, 1, &r));
  WANT_F32(r, 0, 8, 0, 1, 2, 0, 0, 3 + 5, 4 + 6, 0, 0);
  lc_free(&r);
  a[3] = INT(-1);
  a[4] = BOOL(1);
  TT_CHECK(lc_run(lc_new, "aten::embedding_dense_backward", a, 5, &ot, 1, &r));
  WANT_F32(r, 0, 8, 1e-6, 1, 2, 7, 8, 4, 5, 0, 0);
  lc_free(&r);
}


/* SDPA, one batch and head, L = S = 2, E = Dv = 1: is_causal keeps key 0 for
 * query 0; a bool mask that keeps nothing in a row gives 0 there. */
static void test_sdpa(void) {
  if (!lc_new) return;
  const float q[2] = {1, 2}, k[2] = {1, -1}, v[2] = {3, 5};
  tt_type_t t4 = TY(TT_F32, 1, 1, 2, 1);
  tt_type_t ot[7] = {t4, TY(TT_F32, 1, 1, 2), TY0(TT_F32), TY0(TT_F32), TY0(TT_I64), TY0(TT_I64), TY0(TT_F32)};
  th_arg_t a[] = {lc_tensor(t4, q), lc_tensor(t4, k), lc_tensor(t4, v), NONE(), FLT(0), BOOL(1), BOOL(0), NONE()};
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::_scaled_dot_product_fused_attention_overrideable", a, 8, ot, 7, &r));
  double p0 = 1 / (1 + exp(-4.0)); /* softmax(2, -2)[0] */
  WANT_F32(r, 0, 2, 1e-6, 3.0f, (float)(3 * p0 + 5 * (1 - p0)));
  WANT_F32(r, 1, 2, 1e-6, 1.0f, (float)(2 + log(1 + exp(-4.0))));
  lc_free(&r);
  const uint8_t m[4] = {0, 0, 1, 1};
  th_arg_t b[] = {lc_tensor(t4, q), lc_tensor(t4, k), lc_tensor(t4, v), lc_tensor(TY(TT_BOOL, 2, 2), m),
                  FLT(0), BOOL(0), BOOL(0), FLT(0.5)};
  TT_CHECK(lc_run(lc_new, "aten::_scaled_dot_product_fused_attention_overrideable", b, 8, ot, 7, &r));
  double p1 = 1 / (1 + exp(-2.0)); /* softmax(1, -1)[0]: scale 0.5 */
  WANT_F32(r, 0, 2, 1e-6, 0.0f, (float)(3 * p1 + 5 * (1 - p1)));
  lc_free(&r);
  /* backward, causal: dV = P^T dO, dQ row 0 = 0 (one key) */
  const float go[2] = {1, 1};
  th_arg_t c[] = {lc_tensor(t4, go), lc_tensor(t4, q), lc_tensor(t4, k), lc_tensor(t4, v), NONE(),
                  INTS(1, 1, 1, 0), lc_tensor(t4, v), lc_tensor(TY(TT_F32, 1, 1, 2), v), NONE(), NONE(),
                  INT(2), INT(2), FLT(0), BOOL(1), NONE(), NONE(), NONE()};
  tt_type_t bo[4] = {t4, t4, t4, TY0(TT_F32)};
  TT_CHECK(lc_run(lc_new, "aten::_scaled_dot_product_fused_attention_overrideable_backward", c, 17, bo, 4, &r));
  WANT_F32(r, 2, 2, 1e-6, (float)(1 + p0), (float)(1 - p0));
  double ds1 = p0 * (1 - p0) * (3 - 5); /* dS[1][0] = P (dP - sum dP P) */
  WANT_F32(r, 0, 2, 1e-5, 0.0f, (float)(ds1 * 1 + -ds1 * -1));
  lc_free(&r);
}

/* ---- nn_more.c: activations ----------------------------------------------------------- */

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

/* ---- nn_more_fold.c ------------------------------------------------------------------- */

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

/* ---- grid_sample.c -------------------------------------------------------------------- */

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

/* ---- resample.c ----------------------------------------------------------------------- */
static void check_resample(tt_pjrt_t* p) {
  lc_result_t r;
  const float q[4] = {1, 2, 3, 4}, ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  tt_type_t in = TY(TT_F32, 1, 1, 2, 2), out = TY(TT_F32, 1, 1, 3, 3);
  /* nearest 2x2 -> 3x3: source rows / cols 0, 0, 1 */
  th_arg_t a[] = {lc_tensor(in, q), INTS(3, 3), NONE(), NONE()};
  TT_CHECK(lc_run(p, "aten::upsample_nearest2d", a, 4, &out, 1, &r));
  WANT_F32(r, 0, 9, 0, 1, 1, 2, 1, 1, 2, 3, 3, 4);
  lc_free(&r);
  th_arg_t b[] = {lc_tensor(out, ones), INTS(3, 3), INTS(1, 1, 2, 2), NONE(), NONE()};
  TT_CHECK(lc_run(p, "aten::upsample_nearest2d_backward", b, 5, &in, 1, &r));
  WANT_F32(r, 0, 4, 0, 4, 2, 2, 1);
  lc_free(&r);
  /* bilinear with align_corners */
  const float q0[4] = {0, 1, 2, 3};
  th_arg_t c[] = {lc_tensor(in, q0), INTS(3, 3), BOOL(1), NONE(), NONE()};
  TT_CHECK(lc_run(p, "aten::upsample_bilinear2d", c, 5, &out, 1, &r));
  WANT_F32(r, 0, 9, 1e-6, 0, 0.5f, 1, 1, 1.5f, 2, 2, 2.5f, 3);
  lc_free(&r);
  /* linear 2 -> 4 (half-pixel, clamped) and its backward */
  tt_type_t l2 = TY(TT_F32, 1, 1, 2), l4 = TY(TT_F32, 1, 1, 4);
  th_arg_t d[] = {lc_tensor(l2, q0), INTS(4), BOOL(0), NONE()};
  TT_CHECK(lc_run(p, "aten::upsample_linear1d", d, 4, &l4, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 0, 0.25f, 0.75f, 1);
  lc_free(&r);
  th_arg_t e[] = {lc_tensor(l4, ones), INTS(4), INTS(1, 1, 2), BOOL(0), NONE()};
  TT_CHECK(lc_run(p, "aten::upsample_linear1d_backward", e, 5, &l2, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, 2, 2);
  lc_free(&r);
  /* bicubic (A = -0.75, borders clamped) 1x4 -> 1x7 with align_corners */
  tt_type_t c4 = TY(TT_F32, 1, 1, 1, 4), c7 = TY(TT_F32, 1, 1, 1, 7);
  th_arg_t g[] = {lc_tensor(c4, q0), INTS(1, 7), BOOL(1), NONE(), NONE()};
  TT_CHECK(lc_run(p, "aten::upsample_bicubic2d", g, 5, &c7, 1, &r));
  WANT_F32(r, 0, 7, 1e-6, 0, 0.40625f, 1, 1.5f, 2, 2.59375f, 3);
  lc_free(&r);
}
static void test_resample(void) {
  if (lc_new) check_resample(lc_new);
  if (!tt__cur_failed && lc_old) check_resample(lc_old);
}

int main(void) {
  lc_open();
  TT_RUN(test_softmax);
  TT_RUN(test_softmax_half_to_float_and_bwd);
  TT_RUN(test_nll);
  TT_RUN(test_nll_bwd_and_2d);
  TT_RUN(test_layer_norm);
  TT_RUN(test_dropout);
  TT_RUN(test_mse);
  TT_RUN(test_embedding_bwd);
  TT_RUN(test_sdpa);
  TT_RUN(test_log_sigmoid);
  TT_RUN(test_glu_prelu);
  TT_RUN(test_im2col_col2im);
  TT_RUN(test_max_unpool);
  TT_RUN(test_grid_sampler);
  TT_RUN(test_resample);
  lc_close();
  TT_REPORT();
}
