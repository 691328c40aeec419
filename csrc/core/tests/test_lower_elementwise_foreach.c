/* The foreach family (elementwise/foreach.c) on real plugins: every
 * per-element base (every param) over a two-tensor list of different shapes,
 * the Scalar / List / ScalarList / Tensor overload shapes, in-place / out= /
 * write-only rows, and the torch.optim Adam step's foreach calls; a handful
 * on the API 0.81 plugin. The fused optimizer steps and GradScaler's ops:
 * test_lower_optim.c. */
#include "ew_test_util.h"
#include "../lower/tt_lower_tables.h"

/* list element 0 is [3] (the first 3 values), element 1 is [2, 2] */
static const int64_t k_n[2] = {3, 4};
static float A[2][4] = {{-1.5f, 0.25f, 2}, {3, -0.5f, 0.75f, -2.5f}};
static float B[2][4] = {{0.5f, -2, 1.25f}, {-1, 2.5f, 0.75f, 0.125f}};
static float C[2][4] = {{0.5f, 1.5f, 2}, {4, 0.25f, 3, 1}}; /* positive */
static const double k_sl[2] = {2.0, -0.75};                /* a Scalar[] */

static th_arg_t elem(float (*x)[4], int i) {
  return i ? ew_t(TT_F32, 2, (int64_t[]){2, 2}, x[1]) : ew_t1(TT_F32, 3, x[0]);
}
static th_arg_t g_la[2], g_lb[2], g_lc[2], g_ls[2];
static th_arg_t list(th_arg_t* store, float (*x)[4]) {
  store[0] = elem(x, 0);
  store[1] = elem(x, 1);
  return ew_list(TT_ARG_TENSORS, store, 2);
}
#define LA list(g_la, A)
#define LB list(g_lb, B)
#define LC list(g_lc, C)
static th_arg_t scalar_list(void) {
  g_ls[0] = ew_scalar(TT_F64, &k_sl[0]);
  g_ls[1] = ew_scalar(TT_F64, &k_sl[1]);
  return ew_list(TT_ARG_SCALARS, g_ls, 2);
}

typedef double (*fe_ref_t)(int i, double a, double b, double c);

/* Runs a foreach op with two f32 outputs shaped like the list and checks
 * out[i][j] against ref(i, A, B, C). */
static int run_fe(const char* name, const th_arg_t* args, int nargs, fe_ref_t ref) {
  tt_type_t outs[2] = {tt_type_make(TT_F32, 1, (int64_t[]){3}), tt_type_make(TT_F32, 2, (int64_t[]){2, 2})};
  void* got[2] = {NULL, NULL};
  tt_status_t st = ew_run(name, args, nargs, outs, 2, got);
  if (st) {
    fprintf(stderr, "  %s: %s\n", name, tt_status_message(st));
    tt_status_free(st);
    free(got[0]);
    free(got[1]);
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < 2; i++) {
    double want[4];
    for (int j = 0; j < k_n[i]; j++) want[j] = ref(i, A[i][j], B[i][j], C[i][j]);
    bad += ew_check(name, TT_F32, got[i], want, (int)k_n[i], 4e-6, 2e-6);
    free(got[i]);
  }
  return bad;
}

/* ---- unary bases ---------------------------------------------------------------- */
#define FR(fn) \
  static double u_##fn(int i, double a, double b, double c) { return fn(c); }
FR(fabs) FR(exp) FR(expm1) FR(log) FR(log10) FR(log1p) FR(log2) FR(sqrt) FR(sin) FR(cos) FR(tan)
FR(tanh) FR(sinh) FR(cosh) FR(atan) FR(erf) FR(erfc) FR(lgamma) FR(floor) FR(ceil) FR(nearbyint)
FR(trunc)
static double u_neg(int i, double a, double b, double c) { return -c; }
static double u_recip(int i, double a, double b, double c) { return 1 / c; }
static double u_rsqrt(int i, double a, double b, double c) { return 1 / sqrt(c); }
static double u_sigmoid(int i, double a, double b, double c) { return 1 / (1 + exp(-c)); }
static double u_sign(int i, double a, double b, double c) { return (c > 0) - (c < 0); }
static double u_frac(int i, double a, double b, double c) { return c - trunc(c); }
static double u_asin(int i, double a, double b, double c) { return asin(c / 4); }
static double u_acos(int i, double a, double b, double c) { return acos(c / 4); }

static const struct { const char* op; fe_ref_t ref; bool quarter; } k_un[] = {
    {"abs", u_fabs, false}, {"exp", u_exp, false}, {"expm1", u_expm1, false}, {"log", u_log, false}, {"log10", u_log10, false},
    {"log1p", u_log1p, false}, {"log2", u_log2, false}, {"sqrt", u_sqrt, false}, {"sin", u_sin, false}, {"cos", u_cos, false},
    {"tan", u_tan, false}, {"tanh", u_tanh, false}, {"sinh", u_sinh, false}, {"cosh", u_cosh, false}, {"atan", u_atan, false},
    {"erf", u_erf, false}, {"erfc", u_erfc, false}, {"lgamma", u_lgamma, false}, {"floor", u_floor, false}, {"ceil", u_ceil, false},
    {"round", u_nearbyint, false}, {"trunc", u_trunc, false}, {"neg", u_neg, false}, {"reciprocal", u_recip, false},
    {"rsqrt", u_rsqrt, false}, {"sigmoid", u_sigmoid, false}, {"sign", u_sign, false}, {"frac", u_frac, false},
    {"asin", u_asin, true}, {"acos", u_acos, true},
};

static void test_foreach_unary(void) {
  int bad = 0, covered = 0;
  float q[2][4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++) q[i][j] = C[i][j] / 4;
  for (size_t k = 0; k < sizeof(k_un) / sizeof(k_un[0]); k++) {
    char name[64];
    snprintf(name, sizeof name, "aten::_foreach_%s", k_un[k].op);
    th_arg_t a = k_un[k].quarter ? list(g_lc, q) : LC;
    bad += run_fe(name, &a, 1, k_un[k].ref);
    covered++;
  }
  /* in-place and out= rows */
  th_arg_t io[2] = {LC, ew_kind(TT_ARG_OUT)};
  bad += run_fe("aten::_foreach_sqrt_", io, 1, u_sqrt) + run_fe("aten::_foreach_sqrt.out", io, 2, u_sqrt);
  /* every overload-less unary row of the table is one of the above */
  for (int i = 0; i < tt_lower_foreach_count; i++) {
    const char* n = tt_lower_foreach[i].name + strlen("aten::_foreach_");
    if (strchr(n, '.') || strchr(n, '_') || !strcmp(n, "zero") || !strcmp(n, "copy") || !strcmp(n, "clone"))
      continue;
    bool found = false;
    for (size_t k = 0; k < sizeof(k_un) / sizeof(k_un[0]); k++) found |= !strcmp(n, k_un[k].op);
    if (!found) {
      fprintf(stderr, "  _foreach_%s not covered by the test\n", n);
      bad++;
    }
  }
  TT_CHECK(bad == 0 && covered == 30);
}

/* ---- binary bases ---------------------------------------------------------------- */
static double r_add_s(int i, double a, double b, double c) { return a + 0.75; }
static double r_add_l(int i, double a, double b, double c) { return a + 0.5 * b; }
static double r_add_sl(int i, double a, double b, double c) { return a + k_sl[i]; }
static double r_add_t(int i, double a, double b, double c) { return a + 2 * 1.5; }
static double r_sub_l(int i, double a, double b, double c) { return a - 2 * b; }
static double r_sub_s(int i, double a, double b, double c) { return a - 0.75; }
static double r_mul_sl(int i, double a, double b, double c) { return a * k_sl[i]; }
static double r_mul_t(int i, double a, double b, double c) { return a * 1.5; }
static double r_div_l(int i, double a, double b, double c) { return a / c; }
static double r_div_sl(int i, double a, double b, double c) { return a / k_sl[i]; }
static double r_addcmul_s(int i, double a, double b, double c) { return a + 0.5 * b * c; }
static double r_addcmul_sl(int i, double a, double b, double c) { return a + k_sl[i] * b * c; }
static double r_addcdiv_sl(int i, double a, double b, double c) { return a + k_sl[i] * b / c; }
static double r_lerp_s(int i, double a, double b, double c) { return a + 0.1 * (b - a); }
static double r_lerp_l(int i, double a, double b, double c) { return a + c / 4 * (b - a); }
static double r_lerp_sl(int i, double a, double b, double c) { return a + k_sl[i] * (b - a); }
static double r_pow_l(int i, double a, double b, double c) { return pow(c, b); }
static double r_pow_s(int i, double a, double b, double c) { return pow(c, 2.5); }
static double r_pow_st(int i, double a, double b, double c) { return pow(0.9, b); }
static double r_max_l(int i, double a, double b, double c) { return fmax(a, b); }
static double r_max_s(int i, double a, double b, double c) { return fmax(a, 0.75); }
static double r_min_l(int i, double a, double b, double c) { return fmin(a, b); }
static double r_cmax_sl(int i, double a, double b, double c) { return fmin(a, k_sl[i]); }
static double r_zero(int i, double a, double b, double c) { return 0; }
static double r_copy(int i, double a, double b, double c) { return b; }
static double r_clone(int i, double a, double b, double c) { return a; }

static void test_foreach_binary(void) {
  float w[2][4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++) w[i][j] = C[i][j] / 4;
  float tsc[2] = {2.0f, -0.75f}; /* the `Tensor scalars` overloads: one value per element */
  th_arg_t T15 = ew_t(TT_F32, 0, NULL, &(float){1.5f}), TS = ew_t1(TT_F32, 2, tsc);
  th_arg_t out = ew_kind(TT_ARG_OUT), nb = ew_int(TT_ARG_BOOL, 0);
  th_arg_t lw_store[2];
  struct { const char* name; th_arg_t args[5]; int n; fe_ref_t ref; } k[] = {
      {"aten::_foreach_add.Scalar", {LA, EW_SF(0.75)}, 2, r_add_s},
      {"aten::_foreach_add.Scalar_out", {LA, EW_SF(0.75), out}, 3, r_add_s},
      {"aten::_foreach_add_.List", {LA, LB, EW_SF(0.5)}, 3, r_add_l},
      {"aten::_foreach_add.ScalarList", {LA, scalar_list()}, 2, r_add_sl},
      {"aten::_foreach_add_.Tensor", {LA, T15, EW_SI(2)}, 3, r_add_t},
      {"aten::_foreach_sub.List", {LA, LB, EW_SI(2)}, 3, r_sub_l},
      {"aten::_foreach_sub_.Scalar", {LA, EW_SF(0.75)}, 2, r_sub_s},
      {"aten::_foreach_mul_.ScalarList", {LA, scalar_list()}, 2, r_mul_sl},
      {"aten::_foreach_mul.Tensor", {LA, T15}, 2, r_mul_t},
      {"aten::_foreach_div.List", {LA, LC}, 2, r_div_l},
      {"aten::_foreach_div_.ScalarList", {LA, scalar_list()}, 2, r_div_sl},
      {"aten::_foreach_addcmul_.Scalar", {LA, LB, LC, EW_SF(0.5)}, 4, r_addcmul_s},
      {"aten::_foreach_addcmul.ScalarList", {LA, LB, LC, scalar_list()}, 4, r_addcmul_sl},
      {"aten::_foreach_addcmul.Tensor", {LA, LB, LC, TS}, 4, r_addcmul_sl},
      {"aten::_foreach_addcdiv_.ScalarList", {LA, LB, LC, scalar_list()}, 4, r_addcdiv_sl},
      {"aten::_foreach_addcdiv.Tensor", {LA, LB, LC, TS}, 4, r_addcdiv_sl},
      {"aten::_foreach_lerp_.Scalar", {LA, LB, EW_SF(0.1)}, 3, r_lerp_s},
      {"aten::_foreach_lerp.List", {LA, LB, list(lw_store, w)}, 3, r_lerp_l},
      {"aten::_foreach_lerp.ScalarList", {LA, LB, scalar_list()}, 3, r_lerp_sl},
      {"aten::_foreach_pow.List", {LC, LB}, 2, r_pow_l},
      {"aten::_foreach_pow_.Scalar", {LC, EW_SF(2.5)}, 2, r_pow_s},
      {"aten::_foreach_pow.ScalarAndTensor", {EW_SF(0.9), LB}, 2, r_pow_st},
      {"aten::_foreach_maximum_.List", {LA, LB}, 2, r_max_l},
      {"aten::_foreach_maximum.Scalar", {LA, EW_SF(0.75)}, 2, r_max_s},
      {"aten::_foreach_minimum.List", {LA, LB}, 2, r_min_l},
      {"aten::_foreach_clamp_min_.List", {LA, LB}, 2, r_max_l},
      {"aten::_foreach_clamp_max.ScalarList", {LA, scalar_list()}, 2, r_cmax_sl},
      {"aten::_foreach_clamp_max.List", {LA, LB}, 2, r_min_l},
      {"aten::_foreach_zero_", {out}, 1, r_zero},
      {"aten::_foreach_copy_", {out, LB, nb}, 3, r_copy},
      {"aten::_foreach_clone", {LA}, 1, r_clone},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) bad += run_fe(k[i].name, k[i].args, k[i].n, k[i].ref);
  TT_CHECK(bad == 0);
}

/* One Adam step (torch/optim/adam.py, foreach, not capturable) against the
 * same arithmetic done here: exp_avg.lerp_(grad, 1-b1); exp_avg_sq.mul_(b2)
 * .addcmul_(grad, grad, 1-b2); denom = sqrt(exp_avg_sq) / bc2_sqrt + eps;
 * param.addcdiv_(exp_avg, denom, step_size). */
static void test_adam_step(void) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8, lr = 1e-3;
  float p[2][4], g[2][4], m[2][4], v[2][4];
  memcpy(p, A, sizeof p);
  memcpy(g, B, sizeof g);
  memcpy(m, C, sizeof m);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++) v[i][j] = C[i][j] * 0.01f;
  th_arg_t sp[2], sg[2], sm[2], sv[2];
  tt_type_t outs[2] = {tt_type_make(TT_F32, 1, (int64_t[]){3}), tt_type_make(TT_F32, 2, (int64_t[]){2, 2})};
  void* o[2];
  int bad = 0;
#define STEP(name, ...)                                                             \
  do {                                                                              \
    th_arg_t a_[] = {__VA_ARGS__};                                                  \
    tt_status_t st_ = ew_run(name, a_, (int)(sizeof a_ / sizeof a_[0]), outs, 2, o); \
    TT_CHECK_OK(st_);                                                               \
  } while (0)
#define STORE(dst) \
  for (int i = 0; i < 2; i++) { memcpy(dst[i], o[i], (size_t)k_n[i] * 4); free(o[i]); }
  STEP("aten::_foreach_lerp_.Scalar", list(sm, m), list(sg, g), EW_SF(1 - b1));
  STORE(m);
  STEP("aten::_foreach_mul_.Scalar", list(sv, v), EW_SF(b2));
  STORE(v);
  STEP("aten::_foreach_addcmul_.Scalar", list(sv, v), list(sg, g), list(sg + 0, g), EW_SF(1 - b2));
  STORE(v);
  STEP("aten::_foreach_sqrt", list(sv, v));
  float d[2][4];
  STORE(d);
  double bc2 = sqrt(1 - b2), step = -lr / (1 - b1);
  g_ls[0] = ew_scalar(TT_F64, &bc2);
  g_ls[1] = ew_scalar(TT_F64, &bc2);
  STEP("aten::_foreach_div_.ScalarList", list(sv, d), ew_list(TT_ARG_SCALARS, g_ls, 2));
  STORE(d);
  STEP("aten::_foreach_add_.Scalar", list(sv, d), EW_SF(eps));
  STORE(d);
  th_arg_t steps[2] = {ew_scalar(TT_F64, &step), ew_scalar(TT_F64, &step)};
  STEP("aten::_foreach_addcdiv_.ScalarList", list(sp, p), list(sm, m), list(sv, d), ew_list(TT_ARG_SCALARS, steps, 2));
  for (int i = 0; i < 2; i++) {
    double want[4];
    for (int j = 0; j < k_n[i]; j++) {
      float mm = C[i][j] + (float)(1 - b1) * (B[i][j] - C[i][j]);
      float vv = C[i][j] * 0.01f * (float)b2 + (float)(1 - b2) * B[i][j] * B[i][j];
      float dd = sqrtf(vv) / (float)bc2 + (float)eps;
      want[j] = A[i][j] + (float)step * mm / dd;
    }
    bad += ew_check("adam param", TT_F32, o[i], want, (int)k_n[i], 1e-6, 1e-7);
    free(o[i]);
  }
  TT_CHECK(bad == 0);
}

static void test_foreach_errors(void) {
  th_arg_t one[1] = {elem(A, 0)};
  th_arg_t a[2] = {LA, ew_list(TT_ARG_TENSORS, one, 1)};
  tt_type_t outs[2] = {tt_type_make(TT_F32, 1, (int64_t[]){3}), tt_type_make(TT_F32, 2, (int64_t[]){2, 2})};
  void* o[2] = {NULL, NULL};
  tt_status_t st = ew_run("aten::_foreach_mul.List", a, 2, outs, 2, o);
  free(o[0]);
  free(o[1]);
  TT_CHECK(tt_status_code(st) == TT_INVALID_ARGUMENT);
  tt_status_free(st);
}

/* A complex Scalar on a float list: each element computed in complex where its
 * per-element op computes on complex values (add.Scalar: complex64 results,
 * read as (re, im) float pairs); a Scalar[] mixing a real and a complex value
 * gives a float and a complex64 element; clamp_min refuses complex values. */
static void test_foreach_complex(void) {
  const double z[2] = {0.5, 2.0};
  th_arg_t a[2] = {LA, ew_scalar(TT_C128, z)};
  tt_type_t outs[2] = {tt_type_make(TT_C64, 1, (int64_t[]){3}), tt_type_make(TT_C64, 2, (int64_t[]){2, 2})};
  void* o[2] = {NULL, NULL};
  tt_status_t st = ew_run("aten::_foreach_add.Scalar", a, 2, outs, 2, o);
  TT_CHECK_OK(st);
  int bad = 0;
  for (int i = 0; i < 2 && o[i]; i++) {
    double want[8];
    for (int j = 0; j < k_n[i]; j++) {
      want[2 * j] = A[i][j] + z[0];
      want[2 * j + 1] = z[1];
    }
    bad += ew_check("add complex Scalar", TT_F32, o[i], want, 2 * (int)k_n[i], 1e-6, 1e-7);
  }
  free(o[0]);
  free(o[1]);
  TT_CHECK(bad == 0);

  const double r = -0.75;
  th_arg_t sl[2] = {ew_scalar(TT_F64, &r), ew_scalar(TT_C128, z)};
  th_arg_t m[2] = {LA, ew_list(TT_ARG_SCALARS, sl, 2)};
  outs[0] = tt_type_make(TT_F32, 1, (int64_t[]){3});
  st = ew_run("aten::_foreach_mul.ScalarList", m, 2, outs, 2, o);
  TT_CHECK_OK(st);
  double w0[3], w1[8];
  for (int j = 0; j < 3; j++) w0[j] = A[0][j] * r;
  for (int j = 0; j < 4; j++) {
    w1[2 * j] = A[1][j] * z[0];
    w1[2 * j + 1] = A[1][j] * z[1];
  }
  bad = (o[0] ? ew_check("mul Scalar[] real", TT_F32, o[0], w0, 3, 1e-6, 1e-7) : 1) +
        (o[1] ? ew_check("mul Scalar[] complex", TT_F32, o[1], w1, 8, 1e-6, 1e-7) : 1);
  free(o[0]);
  free(o[1]);
  TT_CHECK(bad == 0);

  outs[0] = tt_type_make(TT_C64, 1, (int64_t[]){3});
  st = ew_run("aten::_foreach_clamp_min.Scalar", a, 2, outs, 2, o);
  free(o[0]);
  free(o[1]);
  TT_CHECK(tt_status_code(st) == TT_UNIMPLEMENTED);
  tt_status_free(st);
}

int main(void) {
  ew_plugin = ew_open("TT_TEST_PLUGIN_NEW");
  if (!ew_plugin) return 0;
  TT_RUN(test_foreach_unary);
  TT_RUN(test_foreach_binary);
  TT_RUN(test_adam_step);
  TT_RUN(test_foreach_errors);
  TT_RUN(test_foreach_complex);
  tt_pjrt_t* p_new = ew_plugin;
  ew_plugin = ew_open("TT_TEST_PLUGIN_OLD");
  if (ew_plugin) {
    TT_RUN(test_adam_step);
    tt_pjrt_close(ew_plugin);
  }
  tt_pjrt_close(p_new);
  TT_REPORT();
}
