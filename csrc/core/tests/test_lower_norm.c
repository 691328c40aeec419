/* Tests of the norm lowering family (batch norm, group norm, embedding_bag,
 * weight norm) against values computed in C. */
#include "lower_check.h"

/* x: N=2, C=2, L=3 */
static const float BX[12] = {1, 2, 4, -1, 0, 3, 0.5f, -2, 5, 2, 2, -4};
static const float BW[2] = {1.5f, -0.5f}, BB[2] = {0.25f, 1};
static const float RM[2] = {0.1f, -0.2f}, RV[2] = {1, 2};

/* per-channel batch statistics of BX: mean, biased var */
static void bn_stats(double* mean, double* var) {
  for (int ch = 0; ch < 2; ch++) {
    double s = 0, q = 0;
    for (int n = 0; n < 2; n++)
      for (int l = 0; l < 3; l++) s += BX[n * 6 + ch * 3 + l];
    mean[ch] = s / 6;
    for (int n = 0; n < 2; n++)
      for (int l = 0; l < 3; l++) q += pow(BX[n * 6 + ch * 3 + l] - mean[ch], 2);
    var[ch] = q / 6;
  }
}

/* lc_run keeps at most LC_MAXOUT outputs: the batch-norm ops have five */
typedef struct big_result {
  void* out[6];
  int nout;
} big_result_t;
static bool run_big(tt_pjrt_t* p, const char* name, const th_arg_t* args, int nargs, const tt_type_t* outs,
                    int nout, big_result_t* r) {
  memset(r, 0, sizeof(*r));
  tt_status_t st = th_run(p, name, args, nargs, outs, nout, r->out, NULL);
  r->nout = nout;
  if (st) {
    fprintf(stderr, "  %s: %s\n", name, tt_status_message(st));
    tt_status_free(st);
  }
  return st == NULL;
}
static void free_big(big_result_t* r) {
  for (int i = 0; i < r->nout; i++) free(r->out[i]);
  memset(r, 0, sizeof(*r));
}

static void check_bn_train(tt_pjrt_t* p) {
  /* five outputs: the runtime passes the running stats as outputs 3 and 4 */
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 2, 3), BX), lc_tensor(TY(TT_F32, 2), BW), lc_tensor(TY(TT_F32, 2), BB),
                  lc_tensor(TY(TT_F32, 2), RM), lc_tensor(TY(TT_F32, 2), RV), BOOL(1), FLT(0.1), FLT(1e-5)};
  tt_type_t ot[5] = {TY(TT_F32, 2, 2, 3), TY(TT_F32, 2), TY(TT_F32, 2), TY(TT_F32, 2), TY(TT_F32, 2)};
  big_result_t r;
  TT_CHECK(run_big(p, "aten::native_batch_norm", a, 8, ot, 5, &r));
  double mean[2], var[2];
  bn_stats(mean, var);
  float y[12], m[2], is[2], rm[2], rv[2];
  for (int ch = 0; ch < 2; ch++) {
    is[ch] = (float)(1 / sqrt(var[ch] + 1e-5));
    m[ch] = (float)mean[ch];
    rm[ch] = (float)(0.1 * mean[ch] + 0.9 * RM[ch]);
    rv[ch] = (float)(0.1 * var[ch] * 6 / 5 + 0.9 * RV[ch]);
    for (int n = 0; n < 2; n++)
      for (int l = 0; l < 3; l++) {
        int i = n * 6 + ch * 3 + l;
        y[i] = (float)((BX[i] - mean[ch]) * is[ch] * BW[ch] + BB[ch]);
      }
  }
  TT_CHECK(lc_close_f32(r.out[0], y, 12, 1e-5, 1e-6));
  TT_CHECK(lc_close_f32(r.out[1], m, 2, 1e-6, 1e-6));
  TT_CHECK(lc_close_f32(r.out[2], is, 2, 1e-5, 1e-6));
  TT_CHECK(lc_close_f32(r.out[3], rm, 2, 1e-6, 1e-6));
  TT_CHECK(lc_close_f32(r.out[4], rv, 2, 1e-6, 1e-6));
  free_big(&r);
  /* the .out form of _native_batch_norm_legit: running stats come first */
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2, 2, 3), BX), NONE(), NONE(), lc_tensor(TY(TT_F32, 2), RM),
                  lc_tensor(TY(TT_F32, 2), RV), BOOL(1), FLT(0.1), FLT(1e-5), OUT(), OUT(), OUT()};
  tt_type_t ob[5] = {TY(TT_F32, 2), TY(TT_F32, 2), TY(TT_F32, 2, 2, 3), TY(TT_F32, 2), TY(TT_F32, 2)};
  TT_CHECK(run_big(p, "aten::_native_batch_norm_legit.out", b, 11, ob, 5, &r));
  TT_CHECK(lc_close_f32(r.out[0], rm, 2, 1e-6, 1e-6));
  TT_CHECK(lc_close_f32(r.out[1], rv, 2, 1e-6, 1e-6));
  for (int i = 0; i < 12; i++) y[i] = (float)((BX[i] - mean[i / 3 % 2]) * is[i / 3 % 2]);
  TT_CHECK(lc_close_f32(r.out[2], y, 12, 1e-5, 1e-6));
  free_big(&r);
}
static void test_bn_train(void) {
  if (lc_new) check_bn_train(lc_new);
  if (!tt__cur_failed && lc_old) check_bn_train(lc_old);
}

static void test_bn_eval_and_bwd(void) {
  if (!lc_new) return;
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 2, 3), BX), lc_tensor(TY(TT_F32, 2), BW), NONE(),
                  lc_tensor(TY(TT_F32, 2), RM), lc_tensor(TY(TT_F32, 2), RV), FLT(0.1), FLT(1e-5)};
  tt_type_t ot[3] = {TY(TT_F32, 2, 2, 3), TY(TT_F32, 2), TY(TT_F32, 2)};
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::_native_batch_norm_legit_no_training", a, 7, ot, 3, &r));
  float y[12];
  for (int i = 0; i < 12; i++) {
    int ch = i / 3 % 2;
    y[i] = (float)((BX[i] - RM[ch]) / sqrt(RV[ch] + 1e-5) * BW[ch]);
  }
  TT_CHECK(lc_close_f32(r.out[0], y, 12, 1e-5, 1e-6));
  lc_free(&r);
  /* training backward against the closed form; grad_bias not requested */
  double mean[2], var[2];
  bn_stats(mean, var);
  float sm[2], si[2];
  for (int ch = 0; ch < 2; ch++) sm[ch] = (float)mean[ch], si[ch] = (float)(1 / sqrt(var[ch] + 1e-5));
  const float g[12] = {1, -1, 0.5f, 2, 0, -2, 1, 1, -3, 0.25f, 4, 1};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2, 2, 3), g), lc_tensor(TY(TT_F32, 2, 2, 3), BX), lc_tensor(TY(TT_F32, 2), BW),
                  lc_tensor(TY(TT_F32, 2), RM), lc_tensor(TY(TT_F32, 2), RV), lc_tensor(TY(TT_F32, 2), sm),
                  lc_tensor(TY(TT_F32, 2), si), BOOL(1), FLT(1e-5), INTS(1, 1, 0)};
  tt_type_t ob[3] = {TY(TT_F32, 2, 2, 3), TY(TT_F32, 2), TY0(TT_F32)};
  TT_CHECK(lc_run(lc_new, "aten::native_batch_norm_backward", b, 10, ob, 3, &r));
  float dx[12], dw[2];
  for (int ch = 0; ch < 2; ch++) {
    double sg = 0, sgx = 0;
    for (int n = 0; n < 2; n++)
      for (int l = 0; l < 3; l++) {
        int i = n * 6 + ch * 3 + l;
        sg += g[i];
        sgx += g[i] * (BX[i] - mean[ch]) * si[ch];
      }
    dw[ch] = (float)sgx;
    for (int n = 0; n < 2; n++)
      for (int l = 0; l < 3; l++) {
        int i = n * 6 + ch * 3 + l;
        double xh = (BX[i] - mean[ch]) * si[ch];
        dx[i] = (float)(BW[ch] * si[ch] * (g[i] - sg / 6 - xh * sgx / 6));
      }
  }
  TT_CHECK(lc_close_f32(r.out[0], dx, 12, 1e-4, 1e-5));
  TT_CHECK(lc_close_f32(r.out[1], dw, 2, 1e-5, 1e-5));
  TT_CHECK(((float*)r.out[2])[0] == 0);
  lc_free(&r);
}

/* group norm: N=2, C=4, HxW=2, 2 groups */
static void check_group_norm(tt_pjrt_t* p) {
  const float x[16] = {1, 2, 3, 5, -1, 0, 2, 2, 4, 4, 1, -3, 0.5f, 1.5f, 2.5f, -6};
  const float w[4] = {1, 2, -1, 0.5f}, b[4] = {0, 1, 0, -1};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 4, 2), x), lc_tensor(TY(TT_F32, 4), w), lc_tensor(TY(TT_F32, 4), b),
                  INT(2), INT(4), INT(2), INT(2), FLT(1e-5)};
  tt_type_t ot[3] = {TY(TT_F32, 2, 4, 2), TY(TT_F32, 2, 2), TY(TT_F32, 2, 2)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::native_group_norm", a, 8, ot, 3, &r));
  float y[16], mean[4], rstd[4];
  for (int ng = 0; ng < 4; ng++) {
    double s = 0, q = 0;
    for (int k = 0; k < 4; k++) s += x[ng * 4 + k];
    s /= 4;
    for (int k = 0; k < 4; k++) q += pow(x[ng * 4 + k] - s, 2);
    mean[ng] = (float)s;
    rstd[ng] = (float)(1 / sqrt(q / 4 + 1e-5));
    for (int k = 0; k < 4; k++) {
      int ch = (ng % 2) * 2 + k / 2;
      y[ng * 4 + k] = (float)((x[ng * 4 + k] - s) * rstd[ng] * w[ch] + b[ch]);
    }
  }
  TT_CHECK(lc_close_f32(r.out[0], y, 16, 1e-5, 1e-5));
  TT_CHECK(lc_close_f32(r.out[1], mean, 4, 1e-6, 1e-6));
  TT_CHECK(lc_close_f32(r.out[2], rstd, 4, 1e-5, 1e-6));
  lc_free(&r);
  /* backward of sum(y * g) */
  const float g[16] = {1, 0, -1, 2, 0.5f, 0.5f, 3, -2, 1, 1, 1, 1, -1, 2, 0, 0.25f};
  th_arg_t bb[] = {lc_tensor(TY(TT_F32, 2, 4, 2), g), lc_tensor(TY(TT_F32, 2, 4, 2), x),
                   lc_tensor(TY(TT_F32, 2, 2), mean), lc_tensor(TY(TT_F32, 2, 2), rstd), lc_tensor(TY(TT_F32, 4), w),
                   INT(2), INT(4), INT(2), INT(2), INTS(1, 1, 1)};
  tt_type_t bo[3] = {TY(TT_F32, 2, 4, 2), TY(TT_F32, 4), TY(TT_F32, 4)};
  TT_CHECK(lc_run(p, "aten::native_group_norm_backward", bb, 10, bo, 3, &r));
  float dx[16], dw[4] = {0}, db[4] = {0};
  for (int ng = 0; ng < 4; ng++) {
    double gw[4], xh[4], sg = 0, sgx = 0;
    for (int k = 0; k < 4; k++) {
      int ch = (ng % 2) * 2 + k / 2;
      xh[k] = (x[ng * 4 + k] - mean[ng]) * rstd[ng];
      gw[k] = g[ng * 4 + k] * w[ch];
      sg += gw[k];
      sgx += gw[k] * xh[k];
      dw[ch] += (float)(g[ng * 4 + k] * xh[k]);
      db[ch] += g[ng * 4 + k];
    }
    for (int k = 0; k < 4; k++) dx[ng * 4 + k] = (float)(rstd[ng] * (gw[k] - sg / 4 - xh[k] * sgx / 4));
  }
  TT_CHECK(lc_close_f32(r.out[0], dx, 16, 1e-4, 1e-5));
  TT_CHECK(lc_close_f32(r.out[1], dw, 4, 1e-5, 1e-5));
  TT_CHECK(lc_close_f32(r.out[2], db, 4, 1e-6, 1e-6));
  lc_free(&r);
}
static void test_group_norm(void) {
  if (lc_new) check_group_norm(lc_new);
  if (!tt__cur_failed && lc_old) check_group_norm(lc_old);
}

/* weight 5x2, indices {1, 2, 4, 1, 3}, offsets {0, 3, 3}: bags {1,2,4}, {}, {1,3} */
static const float EW[10] = {0, 1, 10, 11, 20, -21, 30, 31, 40, 41};
static const int64_t EI[5] = {1, 2, 4, 1, 3}, EO[3] = {0, 3, 3};

static void check_embedding_bag(tt_pjrt_t* p, int64_t mode) {
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 5, 2), EW), lc_tensor(TY(TT_I64, 5), EI), lc_tensor(TY(TT_I64, 3), EO),
                  BOOL(0), INT(mode), BOOL(0), NONE(), BOOL(0), INT(-1)};
  tt_type_t ot[4] = {TY(TT_F32, 3, 2), TY(TT_I64, 5), TY(TT_I64, 3), mode == 2 ? TY(TT_I64, 3, 2) : TY(TT_I64, 0)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::_embedding_bag", a, 9, ot, 4, &r));
  if (mode == 0) WANT_F32(r, 0, 6, 1e-6, 70, 31, 0, 0, 40, 42);
  if (mode == 1) WANT_F32(r, 0, 6, 1e-6, 70 / 3.0f, 31 / 3.0f, 0, 0, 20, 21);
  if (mode == 2) WANT_F32(r, 0, 6, 1e-6, 40, 41, 0, 0, 30, 31);
  WANT_I64(r, 1, 5, 0, 0, 0, 2, 2);
  if (mode == 0) WANT_I64(r, 2, 3, 0, 0, 0);
  else WANT_I64(r, 2, 3, 3, 0, 2);
  if (mode == 2) WANT_I64(r, 3, 6, 4, 4, 0, 0, 3, 3);
  const float g[6] = {1, 2, 3, 4, 5, 6};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 3, 2), g), lc_tensor(TY(TT_I64, 5), EI), lc_tensor(TY(TT_I64, 5), r.out[1]),
                  lc_tensor(TY(TT_I64, 3), r.out[2]), lc_tensor(ot[3], r.out[3]), INT(5), BOOL(0), INT(mode),
                  NONE(), INT(-1)};
  tt_type_t bo = TY(TT_F32, 5, 2);
  lc_result_t rb;
  bool ok = lc_run(p, "aten::_embedding_bag_dense_backward", b, 10, &bo, 1, &rb);
  lc_free(&r);
  TT_CHECK(ok);
  if (mode == 0) WANT_F32(rb, 0, 10, 1e-6, 0, 0, 6, 8, 1, 2, 5, 6, 1, 2);
  if (mode == 1) WANT_F32(rb, 0, 10, 1e-6, 0, 0, 1 / 3.0f + 2.5f, 2 / 3.0f + 3, 1 / 3.0f, 2 / 3.0f, 2.5f, 3, 1 / 3.0f, 2 / 3.0f);
  if (mode == 2) WANT_F32(rb, 0, 10, 1e-6, 0, 0, 0, 0, 0, 0, 5, 6, 1, 2);
  lc_free(&rb);
}
static void test_embedding_bag(void) {
  for (int64_t mode = 0; mode < 3 && !tt__cur_failed; mode++) {
    if (lc_new) check_embedding_bag(lc_new, mode);
    if (!tt__cur_failed && lc_old && mode == 2) check_embedding_bag(lc_old, mode);
  }
}

/* weight norm over dim 0 of v = [[3, 4], [0, -2]], g = [[2], [1]]: norms 5, 2;
 * w = v * g / norm; backward with grad_w = [[1, 1], [1, 0]] */
static void check_weight_norm(tt_pjrt_t* p) {
  const float v[4] = {3, 4, 0, -2}, g[2] = {2, 1}, gw[4] = {1, 1, 1, 0};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 2), v), lc_tensor(TY(TT_F32, 2, 1), g), INT(0)};
  tt_type_t ot[2] = {TY(TT_F32, 2, 2), TY(TT_F32, 2, 1)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::_weight_norm_interface", a, 3, ot, 2, &r));
  WANT_F32(r, 0, 4, 1e-6, 1.2f, 1.6f, 0, -1);
  WANT_F32(r, 1, 2, 1e-6, 5, 2);
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2, 2), gw), lc_tensor(TY(TT_F32, 2, 2), v), lc_tensor(TY(TT_F32, 2, 1), g),
                  lc_tensor(TY(TT_F32, 2, 1), r.out[1]), INT(0)};
  lc_result_t rb;
  bool ok = lc_run(p, "aten::_weight_norm_interface_backward", b, 5, ot, 2, &rb);
  lc_free(&r);
  TT_CHECK(ok);
  /* grad_g = sum(gw * v) / norm: 7 / 5, 0 / 2; grad_v = a * gw - (a * grad_g / norm) * v */
  WANT_F32(rb, 0, 4, 1e-6, 0.4f - 0.112f * 3, 0.4f - 0.112f * 4, 0.5f, 0);
  WANT_F32(rb, 1, 2, 1e-6, 1.4f, 0);
  lc_free(&rb);
  th_arg_t mid[] = {lc_tensor(TY(TT_F32, 2, 2, 2), (const float[8]){0}), lc_tensor(TY(TT_F32, 1, 2, 1), g), INT(1)};
  tt_type_t mo[2] = {TY(TT_F32, 2, 2, 2), TY(TT_F32, 1, 2, 1)};
  void* none[2] = {NULL, NULL};
  tt_status_t st = th_run(p, "aten::_weight_norm_interface", mid, 3, mo, 2, none, NULL);
  TT_CHECK(st && strstr(tt_status_message(st), "first or last dim"));
  tt_status_free(st);
  free(none[0]);
  free(none[1]);
}

static void test_weight_norm(void) {
  if (lc_new) check_weight_norm(lc_new);
  if (!tt__cur_failed && lc_old) check_weight_norm(lc_old);
}

int main(void) {
  lc_open();
  TT_RUN(test_bn_train);
  TT_RUN(test_bn_eval_and_bwd);
  TT_RUN(test_group_norm);
  TT_RUN(test_embedding_bag);
  TT_RUN(test_weight_norm);
  lc_close();
  TT_REPORT();
}
