/* Tests of the optim lowering family (optim.c) against values computed in C:
 * the fused optimizer steps (_fused_adam_, _fused_adamw_, _fused_sgd_,
 * _fused_adagrad_, with a Tensor lr, grad_scale and found_inf) over a list of
 * two tensors of different shapes, and torch.amp.GradScaler's two ops. The
 * references follow PyTorch CPU's fused kernels, computed in double. */
#include "lower_check.h"

/* list element 0 is [3], element 1 is [2, 2] (4 values) */
static const int64_t k_n[2] = {3, 4};
static const float P[2][4] = {{0.5f, -1.25f, 2}, {1, -0.5f, 0.75f, -2}};
static const float G[2][4] = {{0.1f, -0.4f, 0.25f}, {-1.5f, 0.05f, 0.3f, -0.2f}};
static const float M[2][4] = {{0.01f, 0.02f, -0.03f}, {0.2f, -0.1f, 0, 0.05f}};
static const float V[2][4] = {{0.001f, 0.004f, 0.002f}, {0.5f, 0.01f, 0.03f, 0.02f}};
static const float VMAX[2][4] = {{0.002f, 0.001f, 0.002f}, {0.1f, 0.5f, 0.03f, 0.01f}};
static const float STEP[2] = {1, 3}; /* each tensor's step count, after this step */

static tt_type_t elem_type(int i) { return i ? TY(TT_F32, 2, 2) : TY(TT_F32, 3); }
static th_arg_t elem(const float (*x)[4], int i) { return lc_tensor(elem_type(i), x[i]); }

/* A tensor list of the two elements of x (store: 2 entries that outlive the call). */
static th_arg_t list2(th_arg_t* store, const float (*x)[4]) {
  store[0] = elem(x, 0);
  store[1] = elem(x, 1);
  return lc_list(store, 2);
}
static th_arg_t steps(th_arg_t* store) {
  store[0] = lc_tensor(TY0(TT_F32), &STEP[0]);
  store[1] = lc_tensor(TY0(TT_F32), &STEP[1]);
  return lc_list(store, 2);
}

/* Runs `name` with up to 16 outputs; on success out[i] are malloc'd. */
#define MAXOUT 16
static bool run_n(tt_pjrt_t* p, const char* name, const th_arg_t* args, int nargs, const tt_type_t* outs, int nout,
                  void** out) {
  memset(out, 0, sizeof(void*) * MAXOUT);
  tt_status_t st = th_run(p, name, args, nargs, outs, nout, out, NULL);
  if (st) {
    fprintf(stderr, "  %s: %s\n", name, tt_status_message(st));
    tt_status_free(st);
    for (int i = 0; i < nout; i++) free(out[i]);
    memset(out, 0, sizeof(void*) * MAXOUT);
  }
  return st == NULL;
}
static void free_n(void** out) {
  for (int i = 0; i < MAXOUT; i++) free(out[i]);
  memset(out, 0, sizeof(void*) * MAXOUT);
}
/* The output types of `groups` groups of the two list elements. */
static void list_outs(tt_type_t* outs, int groups) {
  for (int g = 0; g < groups; g++) outs[2 * g] = elem_type(0), outs[2 * g + 1] = elem_type(1);
}
/* out[2 * group + i] against want[i] for both elements */
static bool close_group(void* const* out, int group, const double (*want)[4], double rtol, double atol,
                        const char* what) {
  for (int i = 0; i < 2; i++) {
    float w[4];
    for (int j = 0; j < k_n[i]; j++) w[j] = (float)want[i][j];
    if (!lc_close_f32(out[2 * group + i], w, k_n[i], rtol, atol)) {
      fprintf(stderr, "  %s, tensor %d\n", what, i);
      return false;
    }
  }
  return true;
}

/* ---- Adam / AdamW --------------------------------------------------------------------- */
typedef struct adam_cfg {
  bool adamw, amsgrad, maximize, tensor_lr;
  double lr, beta1, beta2, wd, eps, grad_scale; /* grad_scale 0: none */
} adam_cfg_t;

/* CPU's fused step for tensor i: new p, g (unscaled), m, v, max_v. */
static void ref_adam(const adam_cfg_t* c, int i, double* p, double* g, double* m, double* v, double* vmax) {
  double bc1 = 1 - pow(c->beta1, STEP[i]), bc2 = 1 - pow(c->beta2, STEP[i]);
  for (int j = 0; j < k_n[i]; j++) {
    double pj = P[i][j], gj = G[i][j];
    if (c->grad_scale) gj /= c->grad_scale;
    g[j] = gj;
    if (c->maximize) gj = -gj;
    if (c->wd != 0) {
      if (c->adamw) pj *= 1 - c->lr * c->wd;
      else gj += c->wd * pj;
    }
    m[j] = M[i][j] + (1 - c->beta1) * (gj - M[i][j]);
    v[j] = V[i][j] * c->beta2 + (1 - c->beta2) * gj * gj;
    double vv = c->amsgrad ? fmax(VMAX[i][j], v[j]) : v[j];
    vmax[j] = c->amsgrad ? vv : VMAX[i][j];
    p[j] = pj - (c->lr / bc1) * m[j] / (sqrt(vv) / sqrt(bc2) + c->eps);
  }
}

static void check_adam(tt_pjrt_t* pl, const adam_cfg_t* c) {
  th_arg_t sp[2], sg[2], sm[2], sv[2], sx[2], ss[2];
  const float lr32 = (float)c->lr, scale32 = (float)c->grad_scale;
  th_arg_t args[15] = {list2(sp, P), list2(sg, G), list2(sm, M), list2(sv, V),
                       c->amsgrad ? list2(sx, VMAX) : lc_list(NULL, 0), steps(ss),
                       c->tensor_lr ? lc_tensor(TY0(TT_F32), &lr32) : FLT(c->lr), FLT(c->beta1), FLT(c->beta2),
                       FLT(c->wd), FLT(c->eps), BOOL(c->amsgrad), BOOL(c->maximize),
                       c->grad_scale ? lc_tensor(TY0(TT_F32), &scale32) : NONE(), NONE()};
  const char* name = c->adamw ? (c->tensor_lr ? "aten::_fused_adamw_.tensor_lr" : "aten::_fused_adamw_")
                              : (c->tensor_lr ? "aten::_fused_adam_.tensor_lr" : "aten::_fused_adam_");
  int groups = c->amsgrad ? 5 : 4;
  tt_type_t outs[MAXOUT];
  list_outs(outs, groups);
  void* out[MAXOUT];
  TT_CHECK(run_n(pl, name, args, 15, outs, 2 * groups, out));
  double want[5][2][4];
  for (int i = 0; i < 2; i++) ref_adam(c, i, want[0][i], want[1][i], want[2][i], want[3][i], want[4][i]);
  static const char* what[5] = {"param", "grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  bool ok = true;
  for (int gi = 0; gi < groups && ok; gi++) ok = close_group(out, gi, want[gi], 1e-5, 1e-8, what[gi]);
  free_n(out);
  TT_CHECK(ok);
}

static void test_fused_adam(void) {
  adam_cfg_t c = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .wd = 0.1, .eps = 1e-8};
  if (lc_new) check_adam(lc_new, &c);
  if (!tt__cur_failed && lc_old) check_adam(lc_old, &c);
}

/* AdamW's decoupled decay, amsgrad (the running max is an output), maximize,
 * a Tensor lr and a grad_scale (the grads come back unscaled). */
static void test_fused_adamw(void) {
  if (!lc_new) return;
  adam_cfg_t c = {.adamw = true, .lr = 0.05, .beta1 = 0.8, .beta2 = 0.99, .wd = 0.02, .eps = 1e-6};
  check_adam(lc_new, &c);
  adam_cfg_t d = {.adamw = true, .amsgrad = true, .maximize = true, .tensor_lr = true, .lr = 0.05, .beta1 = 0.8,
                  .beta2 = 0.99, .wd = 0.02, .eps = 1e-6, .grad_scale = 4};
  if (!tt__cur_failed) check_adam(lc_new, &d);
}

/* ---- SGD ---------------------------------------------------------------------------------- */
/* _fused_sgd_(self[], grads[], momentum_buffer_list[], weight_decay, momentum, lr,
 * dampening, nesterov, maximize, is_first_step, grad_scale?, found_inf?) */
static void check_sgd(tt_pjrt_t* pl, double wd, double mom, double damp, bool nesterov, bool first) {
  const double lr = 0.1;
  th_arg_t sp[2], sg[2], sb[2];
  th_arg_t args[12] = {list2(sp, P), list2(sg, G), list2(sb, M), FLT(wd), FLT(mom), FLT(lr), FLT(damp),
                       BOOL(nesterov), BOOL(0), BOOL(first), NONE(), NONE()};
  tt_type_t outs[MAXOUT];
  list_outs(outs, 3);
  void* out[MAXOUT];
  TT_CHECK(run_n(pl, "aten::_fused_sgd_", args, 12, outs, 6, out));
  double want[3][2][4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < k_n[i]; j++) {
      double p = P[i][j], g = G[i][j] + wd * P[i][j], b = M[i][j];
      if (mom != 0) {
        b = first ? g : b * mom + g * (1 - damp);
        g = nesterov ? g + b * mom : b;
      }
      want[0][i][j] = p - lr * g, want[1][i][j] = G[i][j], want[2][i][j] = b;
    }
  bool ok = close_group(out, 0, want[0], 1e-6, 1e-7, "param") && close_group(out, 1, want[1], 0, 0, "grad") &&
            close_group(out, 2, want[2], 1e-6, 1e-7, "momentum buffer");
  free_n(out);
  if (!ok) fprintf(stderr, "  sgd: wd %g, momentum %g, dampening %g, nesterov %d, first %d\n", wd, mom, damp,
                   nesterov, first);
  TT_CHECK(ok);
}

static void test_fused_sgd(void) {
  if (!lc_new) return;
  check_sgd(lc_new, 0.01, 0.9, 0.1, false, false);
  if (!tt__cur_failed) check_sgd(lc_new, 0.01, 0.9, 0.1, false, true); /* the buffer starts as the grad */
  if (!tt__cur_failed) check_sgd(lc_new, 0, 0.5, 0, true, false);
  if (!tt__cur_failed) check_sgd(lc_new, 0.05, 0, 0, false, false); /* no momentum: buffers unchanged */
  if (!tt__cur_failed && lc_old) check_sgd(lc_old, 0.01, 0.9, 0.1, true, false);
}

/* found_inf != 0 leaves every output as it was; 0 lets the step happen. */
static void test_found_inf(void) {
  if (!lc_new) return;
  for (int fi = 0; fi < 2 && !tt__cur_failed; fi++) {
    const float found = (float)fi, lr = 0.1f;
    th_arg_t sp[2], sg[2], sb[2];
    th_arg_t args[12] = {list2(sp, P), list2(sg, G), list2(sb, M), FLT(0), FLT(0.9), lc_tensor(TY0(TT_F32), &lr),
                         FLT(0), BOOL(0), BOOL(0), BOOL(0), NONE(), lc_tensor(TY0(TT_F32), &found)};
    tt_type_t outs[MAXOUT];
    list_outs(outs, 3);
    void* out[MAXOUT];
    TT_CHECK(run_n(lc_new, "aten::_fused_sgd_.tensor_lr", args, 12, outs, 6, out));
    double want[3][2][4];
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < k_n[i]; j++) {
        double b = M[i][j] * 0.9 + G[i][j];
        want[0][i][j] = fi ? P[i][j] : P[i][j] - (double)lr * b;
        want[1][i][j] = G[i][j];
        want[2][i][j] = fi ? M[i][j] : b;
      }
    bool ok = close_group(out, 0, want[0], 1e-6, 1e-7, "param") && close_group(out, 1, want[1], 0, 0, "grad") &&
              close_group(out, 2, want[2], 1e-6, 1e-7, "momentum buffer");
    free_n(out);
    if (!ok) fprintf(stderr, "  found_inf %d\n", fi);
    TT_CHECK(ok);
  }
}

/* ---- Adagrad ------------------------------------------------------------------------------- */
/* _fused_adagrad_(self[], grads[], state_sums[], state_steps[], lr, lr_decay,
 * weight_decay, eps, maximize, grad_scale?, found_inf?): outputs params,
 * grads, state_sums. */
static void test_fused_adagrad(void) {
  if (!lc_new) return;
  const double lr = 0.1, lr_decay = 0.01, wd = 0.05, eps = 1e-10;
  th_arg_t sp[2], sg[2], ss[2], st[2];
  th_arg_t args[11] = {list2(sp, P), list2(sg, G), list2(ss, V), steps(st), FLT(lr), FLT(lr_decay), FLT(wd),
                       FLT(eps), BOOL(0), NONE(), NONE()};
  tt_type_t outs[MAXOUT];
  list_outs(outs, 3);
  void* out[MAXOUT];
  TT_CHECK(run_n(lc_new, "aten::_fused_adagrad_", args, 11, outs, 6, out));
  double want[3][2][4];
  for (int i = 0; i < 2; i++) {
    double clr = lr / (1 + (STEP[i] - 1) * lr_decay);
    for (int j = 0; j < k_n[i]; j++) {
      double g = G[i][j] + wd * P[i][j], s = V[i][j] + g * g;
      want[0][i][j] = P[i][j] - clr * g / (sqrt(s) + eps);
      want[1][i][j] = G[i][j];
      want[2][i][j] = s;
    }
  }
  bool ok = close_group(out, 0, want[0], 1e-6, 1e-7, "param") && close_group(out, 1, want[1], 0, 0, "grad") &&
            close_group(out, 2, want[2], 1e-6, 1e-9, "state_sum");
  free_n(out);
  TT_CHECK(ok);
}

/* Lists of different lengths are refused when lowering. */
static void test_list_mismatch(void) {
  if (!lc_new) return;
  th_arg_t sp[2], sb[2], one[1] = {elem(G, 0)};
  th_arg_t args[12] = {list2(sp, P), lc_list(one, 1), list2(sb, M), FLT(0), FLT(0.9), FLT(0.1), FLT(0), BOOL(0),
                       BOOL(0), BOOL(0), NONE(), NONE()};
  tt_type_t outs[MAXOUT];
  list_outs(outs, 3);
  void* out[MAXOUT] = {NULL};
  tt_status_t st = th_run(lc_new, "aten::_fused_sgd_", args, 12, outs, 6, out, NULL);
  free_n(out);
  TT_CHECK(st && tt_status_code(st) == TT_INVALID_ARGUMENT && strstr(tt_status_message(st), "tensor list"));
  tt_status_free(st);
}

/* ---- torch.amp.GradScaler ------------------------------------------------------------------ */
/* Unscale (found_inf set by an inf in the second tensor only, values times
 * inv_scale), then the scale's update. */
static void test_grad_scaler_ops(void) {
  if (!lc_new) return;
  const float a[3] = {1, 2, 4}, b[4] = {8, INFINITY, -2, 0.5f}, fi = 0, inv = 0.25f;
  th_arg_t ts[2] = {lc_tensor(TY(TT_F32, 3), a), lc_tensor(TY(TT_F32, 2, 2), b)};
  th_arg_t args[3] = {lc_list(ts, 2), lc_tensor(TY(TT_F32, 1), &fi), lc_tensor(TY(TT_F32, 1), &inv)};
  tt_type_t outs[3] = {TY(TT_F32, 3), TY(TT_F32, 2, 2), TY(TT_F32, 1)};
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::_amp_foreach_non_finite_check_and_unscale_", args, 3, outs, 3, &r));
  const float *x = r.out[0], *y = r.out[1], *f = r.out[2];
  bool ok = x[0] == 0.25f && x[1] == 0.5f && x[2] == 1.0f && y[0] == 2.0f && isinf(y[1]) && y[2] == -0.5f &&
            y[3] == 0.125f && f[0] == 1.0f;
  lc_free(&r);
  TT_CHECK(ok);
  /* no inf: found_inf keeps its value (0) */
  th_arg_t args1[3] = {lc_list(ts, 1), lc_tensor(TY(TT_F32, 1), &fi), lc_tensor(TY(TT_F32, 1), &inv)};
  tt_type_t outs1[2] = {outs[0], outs[2]};
  TT_CHECK(lc_run(lc_new, "aten::_amp_foreach_non_finite_check_and_unscale_", args1, 3, outs1, 2, &r));
  ok = ((const float*)r.out[1])[0] == 0.0f;
  lc_free(&r);
  TT_CHECK(ok);
  /* update: (found, tracker) -> (scale, tracker); growth 2, backoff 0.5, interval 2 */
  static const struct { float found; int32_t tracker; float scale; float want_scale; int32_t want_tracker; } k[] = {
      {0, 0, 1024, 1024, 1}, {0, 1, 1024, 2048, 0}, {1, 1, 1024, 512, 0}, {0, 1, 3e38f, 3e38f, 0}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    th_arg_t u[6] = {lc_tensor(TY(TT_F32, 1), &k[i].scale), lc_tensor(TY(TT_I32, 1), &k[i].tracker),
                     lc_tensor(TY(TT_F32, 1), &k[i].found), FLT(2.0), FLT(0.5), INT(2)};
    tt_type_t uo[2] = {TY(TT_F32, 1), TY(TT_I32, 1)};
    TT_CHECK(lc_run(lc_new, "aten::_amp_update_scale_", u, 6, uo, 2, &r));
    ok = ((const float*)r.out[0])[0] == k[i].want_scale && ((const int32_t*)r.out[1])[0] == k[i].want_tracker;
    lc_free(&r);
    if (!ok) fprintf(stderr, "  _amp_update_scale_ case %zu\n", i);
    TT_CHECK(ok);
  }
}

int main(void) {
  lc_open();
  TT_RUN(test_fused_adam);
  TT_RUN(test_fused_adamw);
  TT_RUN(test_fused_sgd);
  TT_RUN(test_found_inf);
  TT_RUN(test_fused_adagrad);
  TT_RUN(test_list_mismatch);
  TT_RUN(test_grad_scaler_ops);
  lc_close();
  TT_REPORT();
}
