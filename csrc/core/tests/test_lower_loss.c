/* Tests of the loss lowering family against values computed in C: the
 * pointwise losses (loss.c: smooth_l1, huber, binary_cross_entropy (with
 * logits), soft_margin; forward in each reduction, backward, bfloat16), the
 * margin losses and pairwise distances (nn_more_loss.c: multi_margin,
 * multilabel_margin, _pdist) and CTC (nn_more_ctc.c). mse_loss and nll_loss
 * are in nn.c (test_lower_nn.c). */
#include "lower_check.h"

/* ---- loss.c ------------------------------------------------------------------------ */
static const float LX[4] = {0.2f, 0.9f, 0.5f, 0.05f}, LY[4] = {0, 1, 1, 0.5f};

static void check_losses(tt_pjrt_t* p) {
  tt_type_t o0 = TY0(TT_F32), o4 = TY(TT_F32, 4);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(o4, LX), lc_tensor(o4, LY), INT(2), FLT(0.5)};
  TT_CHECK(lc_run(p, "aten::smooth_l1_loss", a, 4, &o0, 1, &r));
  WANT_F32(r, 0, 1, 1e-6, 0.04f + 0.01f + 0.25f + 0.2025f);
  lc_free(&r);
  TT_CHECK(lc_run(p, "aten::huber_loss", a, 4, &o0, 1, &r));
  WANT_F32(r, 0, 1, 1e-6, 0.02f + 0.005f + 0.125f + 0.10125f);
  lc_free(&r);
  const float w[4] = {1, 2, 0.5f, 1};
  th_arg_t b[] = {lc_tensor(o4, LX), lc_tensor(o4, LY), lc_tensor(o4, w), INT(0)};
  TT_CHECK(lc_run(p, "aten::binary_cross_entropy", b, 4, &o4, 1, &r));
  float want[4];
  for (int i = 0; i < 4; i++) want[i] = (float)(-w[i] * (LY[i] * log(LX[i]) + (1 - LY[i]) * log1p(-LX[i])));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-5, 1e-6));
  lc_free(&r);
}

static void test_losses(void) {
  if (lc_new) check_losses(lc_new);
  if (!tt__cur_failed && lc_old) check_losses(lc_old);
}

static void test_loss_logits_and_bwd(void) {
  if (!lc_new) return;
  tt_type_t o0 = TY0(TT_F32), o4 = TY(TT_F32, 4);
  lc_result_t r;
  const float x[4] = {-2, 0.5f, 3, -40}, pw[4] = {2, 1, 0.5f, 3};
  th_arg_t a[] = {lc_tensor(o4, x), lc_tensor(o4, LY), NONE(), lc_tensor(o4, pw), INT(1)};
  TT_CHECK(lc_run(lc_new, "aten::binary_cross_entropy_with_logits", a, 5, &o0, 1, &r));
  double s = 0;
  for (int i = 0; i < 4; i++) {
    double ls = fmin(x[i], 0) - log1p(exp(-fabs(x[i])));
    s += (1 - LY[i]) * x[i] - ls * ((pw[i] - 1) * LY[i] + 1);
  }
  WANT_F32(r, 0, 1, 1e-6, (float)(s / 4));
  lc_free(&r);
  TT_CHECK(lc_run(lc_new, "aten::soft_margin_loss", (th_arg_t[]){lc_tensor(o4, x), lc_tensor(o4, LY), INT(0)}, 3, &o4, 1, &r));
  float want[4];
  for (int i = 0; i < 4; i++) want[i] = (float)log1p(exp(-LY[i] * x[i]));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-7));
  lc_free(&r);
  /* backward, mean reduction: smooth_l1 (beta 0.5) and bce */
  const float g = 2;
  th_arg_t b[] = {lc_tensor(o0, &g), lc_tensor(o4, LX), lc_tensor(o4, LY), INT(1), FLT(0.5)};
  TT_CHECK(lc_run(lc_new, "aten::smooth_l1_loss_backward", b, 5, &o4, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 0.5f * 0.4f, -0.5f * 0.2f, -0.5f, -0.5f * 0.9f);
  lc_free(&r);
  TT_CHECK(lc_run(lc_new, "aten::huber_loss_backward", b, 5, &o4, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 0.5f * 0.2f, -0.5f * 0.1f, -0.25f, -0.225f);
  lc_free(&r);
  th_arg_t c[] = {lc_tensor(o0, &g), lc_tensor(o4, LX), lc_tensor(o4, LY), NONE(), INT(1)};
  TT_CHECK(lc_run(lc_new, "aten::binary_cross_entropy_backward", c, 5, &o4, 1, &r));
  for (int i = 0; i < 4; i++) want[i] = (float)(0.5 * (LX[i] - LY[i]) / ((1 - LX[i]) * LX[i]));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-5, 1e-6));
  lc_free(&r);
}

/* ---- references for the new checks (double, PyTorch CPU's formulas) ---------------------- */
enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };

static double ref_smooth_l1(double x, double y, double beta) {
  double z = fabs(x - y);
  return beta == 0 ? z : z < beta ? 0.5 * z * z / beta : z - 0.5 * beta;
}
static double ref_huber(double x, double y, double delta) {
  double z = fabs(x - y);
  return z < delta ? 0.5 * z * z : delta * (z - 0.5 * delta);
}
/* log(sigmoid(x)), stable for large |x| */
static double ref_log_sigmoid(double x) { return fmin(x, 0) - log1p(exp(-fabs(x))); }

/* Reduces n per-element values as `red` says into out (n values or 1). */
static void ref_reduce(const double* v, int n, int red, float* out) {
  if (red == RED_NONE) {
    for (int i = 0; i < n; i++) out[i] = (float)v[i];
    return;
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i];
  out[0] = (float)(red == RED_MEAN ? s / n : s);
}

/* smooth_l1 with beta 0 (plain L1) and huber with delta 0.25 (two elements on
 * each branch), in each reduction. */
static void check_loss_reductions(tt_pjrt_t* p) {
  tt_type_t o4 = TY(TT_F32, 4), o0 = TY0(TT_F32);
  for (int red = RED_NONE; red <= RED_SUM && !tt__cur_failed; red++) {
    const tt_type_t* ot = red == RED_NONE ? &o4 : &o0;
    int n = red == RED_NONE ? 4 : 1;
    static const struct { const char* name; double param; } k[] = {{"aten::smooth_l1_loss", 0.0},
                                                                     {"aten::huber_loss", 0.25}};
    for (int j = 0; j < 2 && !tt__cur_failed; j++) {
      double v[4];
      float want[4];
      for (int i = 0; i < 4; i++)
        v[i] = j ? ref_huber(LX[i], LY[i], k[j].param) : ref_smooth_l1(LX[i], LY[i], k[j].param);
      ref_reduce(v, 4, red, want);
      th_arg_t a[] = {lc_tensor(o4, LX), lc_tensor(o4, LY), INT(red), FLT(k[j].param)};
      lc_result_t r;
      TT_CHECK(lc_run(p, k[j].name, a, NARGS(a), ot, 1, &r));
      bool ok = lc_close_f32(r.out[0], want, n, 1e-6, 1e-7);
      if (!ok) fprintf(stderr, "  %s, reduction %d\n", k[j].name, red);
      lc_free(&r);
      TT_CHECK(ok);
    }
  }
}
static void test_loss_reductions(void) {
  if (lc_new) check_loss_reductions(lc_new);
  if (!tt__cur_failed && lc_old) check_loss_reductions(lc_old);
}

/* binary_cross_entropy_with_logits with a weight and no pos_weight:
 * w * ((1 - y) x - log_sigmoid(x)), per element and summed. */
static void test_bce_logits_weight(void) {
  if (!lc_new) return;
  const float x[4] = {-2, 0.5f, 3, -40}, w[4] = {0.5f, 2, 1, 0.25f};
  tt_type_t o4 = TY(TT_F32, 4), o0 = TY0(TT_F32);
  double v[4];
  for (int i = 0; i < 4; i++) v[i] = w[i] * ((1 - LY[i]) * x[i] - ref_log_sigmoid(x[i]));
  float want[4], sum[1];
  ref_reduce(v, 4, RED_NONE, want);
  ref_reduce(v, 4, RED_SUM, sum);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(o4, x), lc_tensor(o4, LY), lc_tensor(o4, w), NONE(), INT(RED_NONE)};
  TT_CHECK(lc_run(lc_new, "aten::binary_cross_entropy_with_logits", a, NARGS(a), &o4, 1, &r));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-7));
  lc_free(&r);
  a[4] = INT(RED_SUM);
  TT_CHECK(lc_run(lc_new, "aten::binary_cross_entropy_with_logits", a, NARGS(a), &o0, 1, &r));
  TT_CHECK(lc_close_f32(r.out[0], sum, 1, 1e-6, 1e-7));
  lc_free(&r);
}

/* soft_margin_loss_backward: d/dx log1p(exp(-y x)) = -y z / (1 + z), z =
 * exp(-y x), times grad: per element (reduction none, a grad tensor) and
 * with a 0-d grad for sum. */
static void test_soft_margin_bwd(void) {
  if (!lc_new) return;
  const float x[4] = {-2, 0.5f, 3, -1}, y[4] = {1, -1, -1, 1}, g[4] = {1, 0.5f, -2, 3}, g0 = 1.5f;
  tt_type_t o4 = TY(TT_F32, 4), o0 = TY0(TT_F32);
  float want[4];
  for (int i = 0; i < 4; i++) {
    double z = exp(-y[i] * (double)x[i]);
    want[i] = (float)(g[i] * (-y[i] * z / (1 + z)));
  }
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(o4, g), lc_tensor(o4, x), lc_tensor(o4, y), INT(RED_NONE)};
  TT_CHECK(lc_run(lc_new, "aten::soft_margin_loss_backward", a, NARGS(a), &o4, 1, &r));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-7));
  lc_free(&r);
  for (int i = 0; i < 4; i++) {
    double z = exp(-y[i] * (double)x[i]);
    want[i] = (float)(g0 * (-y[i] * z / (1 + z)));
  }
  th_arg_t b[] = {lc_tensor(o0, &g0), lc_tensor(o4, x), lc_tensor(o4, y), INT(RED_SUM)};
  TT_CHECK(lc_run(lc_new, "aten::soft_margin_loss_backward", b, NARGS(b), &o4, 1, &r));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-7));
  lc_free(&r);
}

/* bfloat16 inputs: computed in f32 and rounded once to bfloat16. */
static void test_loss_bf16(void) {
  if (!lc_new) return;
  const float xf[4] = {0.3f, -1.7f, 2.25f, 0.01f}, yf[4] = {0.1f, 0.4f, -0.5f, 0.02f};
  uint16_t x[4], y[4];
  float want[4];
  for (int i = 0; i < 4; i++) {
    x[i] = lc_bf16(xf[i]), y[i] = lc_bf16(yf[i]);
    want[i] = lc_from_bf16(lc_bf16((float)ref_smooth_l1(lc_from_bf16(x[i]), lc_from_bf16(y[i]), 1.0)));
  }
  tt_type_t t = TY(TT_BF16, 4);
  th_arg_t a[] = {lc_tensor(t, x), lc_tensor(t, y), INT(RED_NONE), FLT(1.0)};
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::smooth_l1_loss", a, NARGS(a), &t, 1, &r));
  float got[4];
  for (int i = 0; i < 4; i++) got[i] = lc_from_bf16(((const uint16_t*)r.out[0])[i]);
  lc_free(&r);
  TT_CHECK(lc_close_f32(got, want, 4, 4e-3, 0)); /* one bfloat16 ulp */
}

/* ---- nn_more_loss.c ---------------------------------------------------------------- */

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

/* multi_margin_loss(self, target, p, margin, weight?, reduction): per sample,
 * the sum over i != y of w[y] * max(0, margin - x[y] + x[i])^p, over C. */
static double ref_multi_margin(const float* x, int nc, int64_t y, int p, double margin, const float* w) {
  double s = 0;
  for (int i = 0; i < nc; i++) {
    if (i == y) continue;
    double z = margin - x[y] + x[i];
    if (z > 0) s += (p == 1 ? z : z * z) * (w ? w[y] : 1.0);
  }
  return s / nc;
}
static void check_multi_margin(tt_pjrt_t* p) {
  const float x[6] = {0.5f, 0.2f, 1.0f, 2.0f, -3.0f, 1.5f}, w[3] = {1, 2, 0.5f};
  const int64_t y[2] = {2, 0};
  static const struct { int p; double margin; bool weight; int red; } k[] = {
      {1, 1.0, false, RED_NONE}, {2, 1.0, true, RED_NONE}, {2, 0.5, false, RED_MEAN}, {1, 2.0, true, RED_SUM}};
  for (size_t j = 0; j < sizeof k / sizeof k[0] && !tt__cur_failed; j++) {
    double v[2];
    for (int s = 0; s < 2; s++)
      v[s] = ref_multi_margin(x + 3 * s, 3, y[s], k[j].p, k[j].margin, k[j].weight ? w : NULL);
    float want[2];
    ref_reduce(v, 2, k[j].red, want);
    th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 3), x), lc_tensor(TY(TT_I64, 2), y), SI(k[j].p), SF(k[j].margin),
                    k[j].weight ? lc_tensor(TY(TT_F32, 3), w) : NONE(), INT(k[j].red)};
    tt_type_t ot = k[j].red == RED_NONE ? TY(TT_F32, 2) : TY0(TT_F32);
    lc_result_t r;
    TT_CHECK(lc_run(p, "aten::multi_margin_loss", a, NARGS(a), &ot, 1, &r));
    bool ok = lc_close_f32(r.out[0], want, k[j].red == RED_NONE ? 2 : 1, 1e-6, 1e-7);
    if (!ok) fprintf(stderr, "  case %zu (p %d, margin %g)\n", j, k[j].p, k[j].margin);
    lc_free(&r);
    TT_CHECK(ok);
  }
}
static void test_multi_margin(void) {
  if (lc_new) check_multi_margin(lc_new);
  if (!tt__cur_failed && lc_old) check_multi_margin(lc_old);
}

/* multilabel_margin_loss_forward(self, target, reduction) -> (loss, is_target):
 * a sample's labels are its targets up to the first -1; the loss sums
 * max(0, 1 - (x[label] - x[i])) over labels and non-label classes i, over C. */
static void test_multilabel_margin(void) {
  if (!lc_new) return;
  const float x[8] = {0.1f, 0.8f, -0.4f, 0.6f, 1.2f, -0.3f, 0.5f, 0.9f};
  const int64_t t[8] = {3, 0, -1, 1, 1, 2, 3, -1}; /* labels {3, 0} and {1, 2, 3} */
  double v[2];
  float is_t[8] = {0};
  for (int s = 0; s < 2; s++) {
    const float* xs = x + 4 * s;
    const int64_t* ts = t + 4 * s;
    int nl = 0;
    while (nl < 4 && ts[nl] >= 0) is_t[4 * s + ts[nl++]] = 1;
    double sum = 0;
    for (int j = 0; j < nl; j++)
      for (int i = 0; i < 4; i++)
        if (!is_t[4 * s + i]) sum += fmax(0, 1 - (xs[ts[j]] - xs[i]));
    v[s] = sum / 4;
  }
  for (int red = RED_NONE; red <= RED_MEAN && !tt__cur_failed; red++) {
    float want[2];
    ref_reduce(v, 2, red, want);
    th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 4), x), lc_tensor(TY(TT_I64, 2, 4), t), INT(red)};
    tt_type_t ot[2] = {red == RED_NONE ? TY(TT_F32, 2) : TY0(TT_F32), TY(TT_F32, 2, 4)};
    lc_result_t r;
    TT_CHECK(lc_run(lc_new, "aten::multilabel_margin_loss_forward", a, NARGS(a), ot, 2, &r));
    bool ok = lc_close_f32(r.out[0], want, red == RED_NONE ? 2 : 1, 1e-6, 1e-7) &&
              lc_close_f32(r.out[1], is_t, 8, 0, 0);
    lc_free(&r);
    TT_CHECK(ok);
  }
}

/* _pdist_forward(self, p) over the rows' pairs (i < j, in order) and
 * _pdist_backward(grad, self, p, pdist): the gradient of each distance
 * with respect to both of its rows. */
#define PD_N 4
#define PD_M 3
#define PD_PAIRS (PD_N * (PD_N - 1) / 2)
static const float PDX[PD_N * PD_M] = {0, 1, 2, 1.5f, -1, 0.5f, 3, 3, -2, -0.5f, 0.25f, 1};

static double ref_dist(int i, int j, double p) {
  double s = 0, mx = 0;
  for (int k = 0; k < PD_M; k++) {
    double d = fabs((double)PDX[i * PD_M + k] - PDX[j * PD_M + k]);
    s += pow(d, p);
    mx = fmax(mx, d);
  }
  return isinf(p) ? mx : pow(s, 1 / p);
}
/* d dist_ij / d x_i[k] */
static double ref_ddist(int i, int j, int k, double p, double dist) {
  double d = (double)PDX[i * PD_M + k] - PDX[j * PD_M + k];
  double sg = (d > 0) - (d < 0);
  if (p == 1) return sg;
  if (dist == 0) return 0;
  return sg * pow(fabs(d), p - 1) / pow(dist, p - 1);
}

static void check_pdist(tt_pjrt_t* pl) {
  const double ps[4] = {1, 2, 3, INFINITY};
  const float g[PD_PAIRS] = {1, -0.5f, 2, 0.25f, 1.5f, -1};
  tt_type_t xt = TY(TT_F32, PD_N, PD_M), dt = TY(TT_F32, PD_PAIRS);
  for (int q = 0; q < 4 && !tt__cur_failed; q++) {
    double p = ps[q];
    float want[PD_PAIRS], dist[PD_PAIRS];
    for (int i = 0, k = 0; i < PD_N; i++)
      for (int j = i + 1; j < PD_N; j++, k++) want[k] = (float)ref_dist(i, j, p);
    th_arg_t a[] = {lc_tensor(xt, PDX), FLT(p)};
    lc_result_t r;
    TT_CHECK(lc_run(pl, "aten::_pdist_forward", a, NARGS(a), &dt, 1, &r));
    bool ok = lc_close_f32(r.out[0], want, PD_PAIRS, 1e-6, 1e-6);
    memcpy(dist, r.out[0], sizeof dist);
    lc_free(&r);
    if (!ok) fprintf(stderr, "  _pdist_forward, p = %g\n", p);
    TT_CHECK(ok);
    if (isinf(p)) continue; /* backward: p = 1, 2 and the general rule (3) */
    float gw[PD_N * PD_M] = {0};
    for (int i = 0, k = 0; i < PD_N; i++)
      for (int j = i + 1; j < PD_N; j++, k++)
        for (int m = 0; m < PD_M; m++) {
          gw[i * PD_M + m] += (float)(g[k] * ref_ddist(i, j, m, p, dist[k]));
          gw[j * PD_M + m] += (float)(g[k] * ref_ddist(j, i, m, p, dist[k]));
        }
    th_arg_t b[] = {lc_tensor(dt, g), lc_tensor(xt, PDX), FLT(p), lc_tensor(dt, dist)};
    TT_CHECK(lc_run(pl, "aten::_pdist_backward", b, NARGS(b), &xt, 1, &r));
    ok = lc_close_f32(r.out[0], gw, PD_N * PD_M, 1e-5, 1e-6);
    lc_free(&r);
    if (!ok) fprintf(stderr, "  _pdist_backward, p = %g\n", p);
    TT_CHECK(ok);
  }
}
static void test_pdist(void) {
  if (lc_new) check_pdist(lc_new);
  if (!tt__cur_failed && lc_old) check_pdist(lc_old);
}

/* ---- nn_more_ctc.c ----------------------------------------------------------------- */

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
  TT_RUN(test_losses);
  TT_RUN(test_loss_logits_and_bwd);
  TT_RUN(test_loss_reductions);
  TT_RUN(test_bce_logits_weight);
  TT_RUN(test_soft_margin_bwd);
  TT_RUN(test_loss_bf16);
  TT_RUN(test_margin_bwd);
  TT_RUN(test_multi_margin);
  TT_RUN(test_multilabel_margin);
  TT_RUN(test_pdist);
  TT_RUN(test_ctc);
  lc_close();
  TT_REPORT();
}
