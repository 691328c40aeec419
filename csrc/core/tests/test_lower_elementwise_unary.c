/* The unary family (elementwise/unary.c, unary_act.c) on real plugins: every
 * lowering function and param (every row pattern) once on the API 0.115
 * plugin against values computed here in double, integer and bool semantics
 * exactly, and a handful on the API 0.81 plugin to show the text parses there
 * too. The binary family: test_lower_elementwise_binary.c; foreach:
 * test_lower_elementwise_foreach.c; complex values:
 * test_lower_elementwise_complex.c. */
#include "ew_test_util.h"

#define N 11

/* ---- references ------------------------------------------------------------ */
typedef double (*ref_t)(double x, const double* p);
#define R1(fn) \
  static double r_##fn(double x, const double* p) { (void)p; return fn(x); }
R1(exp) R1(exp2) R1(expm1) R1(log) R1(log2) R1(log10) R1(log1p) R1(sqrt) R1(sin) R1(cos) R1(tan)
R1(tanh) R1(asin) R1(acos) R1(atan) R1(sinh) R1(cosh) R1(asinh) R1(acosh) R1(atanh) R1(erf)
R1(erfc) R1(lgamma) R1(floor) R1(ceil) R1(nearbyint) R1(trunc) R1(fabs)
static double r_neg(double x, const double* p) { return -x; }
static double r_rsqrt(double x, const double* p) { return 1 / sqrt(x); }
static double r_sigmoid(double x, const double* p) { return 1 / (1 + exp(-x)); }
static double r_frac(double x, const double* p) { return x - trunc(x); }
static double r_sign(double x, const double* p) { return (x > 0) - (x < 0); }
static double r_recip(double x, const double* p) { return 1 / x; }
static double r_deg2rad(double x, const double* p) { return x * M_PI / 180; }
static double r_rad2deg(double x, const double* p) { return x * 180 / M_PI; }
static double r_erfinv(double x, const double* p) {
  double y = 0;
  for (int i = 0; i < 60; i++) y -= (erf(y) - x) / (M_2_SQRTPI * exp(-y * y));
  return y;
}
static double r_digamma(double x, const double* p) {
  double r = 0;
  for (; x < 8; x += 1) r -= 1 / x;
  double x2 = 1 / (x * x);
  return r + log(x) - 0.5 / x - x2 * (1.0 / 12 - x2 * (1.0 / 120 - x2 * (1.0 / 252 - x2 / 240)));
}
static double r_relu(double x, const double* p) { return x > 0 ? x : 0; }
static double r_gelu(double x, const double* p) { return 0.5 * x * (1 + erf(x / M_SQRT2)); }
static double r_gelu_tanh(double x, const double* p) {
  return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
static double r_silu(double x, const double* p) { return x / (1 + exp(-x)); }
static double r_mish(double x, const double* p) { return x * tanh(log1p(exp(x))); }
static double r_softplus(double x, const double* p) { return x * p[0] > p[1] ? x : log1p(exp(x * p[0])) / p[0]; }
static double r_elu(double x, const double* p) { return x <= 0 ? expm1(x * p[2]) * p[0] * p[1] : x * p[1]; }
static double r_celu(double x, const double* p) { return x <= 0 ? expm1(x / p[0]) * p[0] : x; }
static double r_leaky(double x, const double* p) { return x > 0 ? x : x * p[0]; }
static double r_hardtanh(double x, const double* p) { return x < p[0] ? p[0] : x > p[1] ? p[1] : x; }
static double r_hsig(double x, const double* p) { return fmin(fmax(x + 3, 0), 6) / 6; }
static double r_hswish(double x, const double* p) { return x * fmin(fmax(x + 3, 0), 6) / 6; }
static double r_threshold(double x, const double* p) { return x <= p[0] ? p[1] : x; }
static double r_hardshrink(double x, const double* p) { return fabs(x) <= p[0] ? 0 : x; }
static double r_softshrink(double x, const double* p) { return x > p[0] ? x - p[0] : x < -p[0] ? x + p[0] : 0; }

typedef struct ucase {
  const char* name;
  ref_t ref;
  double lo, hi;
  int np;        /* Scalar args after self */
  double p[3];
  const char* str; /* a str arg after self (gelu) */
} ucase_t;

#define U(n, r, lo, hi) {n, r, lo, hi, 0, {0}, NULL}
#define US(n, r, lo, hi, str) {n, r, lo, hi, 0, {0}, str}
#define UP(n, r, lo, hi, np, ...) {n, r, lo, hi, np, {__VA_ARGS__}, NULL}
static const ucase_t k_unary[] = {
    U("aten::exp", r_exp, -3, 3), U("aten::exp2", r_exp2, -3, 3), U("aten::expm1", r_expm1, -1, 1),
    U("aten::log", r_log, 0.1, 9), U("aten::log2", r_log2, 0.25, 8), U("aten::log10", r_log10, 0.1, 100),
    U("aten::log1p", r_log1p, -0.5, 3), U("aten::sqrt", r_sqrt, 0, 9), U("aten::rsqrt", r_rsqrt, 0.25, 9),
    U("aten::sin", r_sin, -3, 3), U("aten::cos", r_cos, -3, 3), U("aten::tan", r_tan, -1.2, 1.2),
    U("aten::tanh", r_tanh, -3, 3), U("aten::sigmoid", r_sigmoid, -5, 5), U("aten::asin", r_asin, -0.9, 0.9),
    U("aten::acos", r_acos, -0.9, 0.9), U("aten::atan", r_atan, -5, 5), U("aten::sinh", r_sinh, -3, 3),
    U("aten::cosh", r_cosh, -3, 3), U("aten::asinh", r_asinh, -5, 5), U("aten::acosh", r_acosh, 1, 6),
    U("aten::atanh", r_atanh, -0.9, 0.9), U("aten::erf", r_erf, -2.5, 2.5), U("aten::erfc", r_erfc, -2, 2),
    U("aten::erfinv", r_erfinv, -0.9, 0.9), U("aten::lgamma", r_lgamma, 0.2, 6),
    U("aten::digamma", r_digamma, 0.3, 6), U("aten::floor", r_floor, -2.5, 2.5),
    U("aten::ceil", r_ceil, -2.5, 2.5), U("aten::round", r_nearbyint, -2.5, 2.5),
    U("aten::trunc", r_trunc, -2.5, 2.5), U("aten::frac", r_frac, -2.7, 2.7), U("aten::sign", r_sign, -2, 2),
    U("aten::sgn", r_sign, -2, 2), U("aten::reciprocal", r_recip, 0.5, 5), U("aten::abs", r_fabs, -2, 2),
    U("aten::neg", r_neg, -2, 2), U("aten::deg2rad", r_deg2rad, -180, 180),
    U("aten::rad2deg", r_rad2deg, -3, 3),
    /* activations */
    U("aten::relu", r_relu, -2, 2), US("aten::gelu", r_gelu, -3, 3, "none"),
    US("aten::gelu", r_gelu_tanh, -3, 3, "tanh"), U("aten::silu", r_silu, -4, 4),
    U("aten::mish", r_mish, -4, 4), UP("aten::softplus", r_softplus, -4, 4, 2, 2.0, 3.0),
    UP("aten::elu", r_elu, -3, 3, 3, 0.5, 1.5, 2.0), UP("aten::celu", r_celu, -3, 3, 1, 0.3),
    UP("aten::leaky_relu", r_leaky, -3, 3, 1, 0.2), UP("aten::hardtanh", r_hardtanh, -3, 3, 2, -2, 0.5),
    U("aten::hardsigmoid", r_hsig, -4, 4), U("aten::hardswish", r_hswish, -4, 4),
    UP("aten::threshold", r_threshold, -2, 2, 2, 0.5, -7), UP("aten::hardshrink", r_hardshrink, -2, 2, 1, 0.5),
    UP("aten::softshrink", r_softshrink, -2, 2, 1, 0.7),
};

static void linspace(float* x, double lo, double hi) {
  for (int i = 0; i < N; i++) x[i] = (float)(lo + (hi - lo) * i / (N - 1));
}

/* One f32 unary case: ref from the f32 inputs, f32 tolerance. */
static int run_unary(const ucase_t* u, const char* name) {
  float x[N];
  double want[N];
  linspace(x, u->lo, u->hi);
  th_arg_t args[5];
  int na = 0;
  args[na++] = ew_t1(TT_F32, N, x);
  for (int k = 0; k < u->np; k++) args[na++] = ew_scalar(TT_F64, &u->p[k]);
  if (u->str) args[na++] = ew_str(u->str);
  for (int i = 0; i < N; i++) want[i] = u->ref(x[i], u->p);
  void* got = ew_run1(name, args, na, tt_type_make(TT_F32, 1, (int64_t[]){N}));
  if (!got) return 1;
  int bad = ew_check(name, TT_F32, got, want, N, 4e-6, 2e-6);
  free(got);
  return bad;
}

static void test_unary_f32(void) {
  int bad = 0;
  for (size_t k = 0; k < sizeof(k_unary) / sizeof(k_unary[0]); k++) bad += run_unary(&k_unary[k], k_unary[k].name);
  TT_CHECK(bad == 0);
}

/* In-place and out= rows share the functional row's lowering. */
static void test_unary_variants(void) {
  int bad = run_unary(&k_unary[0], "aten::exp_") + run_unary(&k_unary[0], "aten::exp.out");
  float x[N];
  double want[N];
  linspace(x, -2.5, 2.5);
  for (int i = 0; i < N; i++) want[i] = round(x[i] * 10 * 100) / 100; /* round.decimals: 2 */
  for (int i = 0; i < N; i++) x[i] *= 10;
  th_arg_t a[2] = {ew_t1(TT_F32, N, x), ew_int(TT_ARG_INT, 2)};
  void* got = ew_run1("aten::round.decimals", a, 2, tt_type_make(TT_F32, 1, (int64_t[]){N}));
  TT_CHECK(got);
  bad += ew_check("round.decimals", TT_F32, got, want, N, 1e-6, 1e-6);
  free(got);
  TT_CHECK(bad == 0);
}

/* Integer inputs: abs/neg/sign/floor stay integer; exp turns float; predicates give bool. */
static void test_unary_int_bool(void) {
  int64_t xi[6] = {-7, -1, 0, 1, 5, 300};
  tt_type_t ti = tt_type_make(TT_I64, 1, (int64_t[]){6});
  tt_type_t tf = tt_type_make(TT_F32, 1, (int64_t[]){6});
  tt_type_t tb = tt_type_make(TT_BOOL, 1, (int64_t[]){6});
  th_arg_t a = ew_t1(TT_I64, 6, xi);
  struct { const char* name; tt_type_t* t; double want[6]; } k[] = {
      {"aten::abs", &ti, {7, 1, 0, 1, 5, 300}},
      {"aten::neg", &ti, {7, 1, 0, -1, -5, -300}},
      {"aten::sign", &ti, {-1, -1, 0, 1, 1, 1}},
      {"aten::floor", &ti, {-7, -1, 0, 1, 5, 300}},
      {"aten::bitwise_not", &ti, {6, 0, -1, -2, -6, -301}},
      {"aten::exp", &tf, {exp(-7), exp(-1), 1, exp(1), exp(5), INFINITY}},
      {"aten::logical_not", &tb, {0, 0, 1, 0, 0, 0}},
      {"aten::isnan", &tb, {0, 0, 0, 0, 0, 0}},
      {"aten::signbit", &tb, {1, 1, 0, 0, 0, 0}},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
    void* got = ew_run1(k[i].name, &a, 1, *k[i].t);
    if (!got) { bad++; continue; }
    bad += ew_check(k[i].name, k[i].t->dtype, got, k[i].want, 6, 1e-6, 0);
    free(got);
  }
  /* float predicates and nan_to_num */
  float xf[6] = {NAN, INFINITY, -INFINITY, -0.0f, 2.5f, -1.0f};
  th_arg_t af = ew_t1(TT_F32, 6, xf);
  struct { const char* name; double want[6]; } p[] = {
      {"aten::isnan", {1, 0, 0, 0, 0, 0}}, {"aten::isinf", {0, 1, 1, 0, 0, 0}},
      {"aten::isposinf", {0, 1, 0, 0, 0, 0}}, {"aten::isneginf", {0, 0, 1, 0, 0, 0}},
      {"aten::signbit", {0, 0, 1, 1, 0, 1}}, {"aten::logical_not", {0, 0, 0, 1, 0, 0}},
  };
  for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
    void* got = ew_run1(p[i].name, &af, 1, tb);
    if (!got) { bad++; continue; }
    bad += ew_check(p[i].name, TT_BOOL, got, p[i].want, 6, 0, 0);
    free(got);
  }
  th_arg_t n2n[4] = {af, ew_float(1.5), ew_kind(TT_ARG_NONE), ew_float(-9)};
  double want[6] = {1.5, 3.4028234663852886e38, -9, -0.0, 2.5, -1};
  void* got = ew_run1("aten::nan_to_num", n2n, 4, tf);
  TT_CHECK(got);
  bad += ew_check("nan_to_num", TT_F32, got, want, 6, 0, 0);
  free(got);
  /* sign(NaN) is 0 in PyTorch */
  double wsign[6] = {0, 1, -1, 0, 1, -1};
  got = ew_run1("aten::sign", &af, 1, tf);
  TT_CHECK(got);
  bad += ew_check("sign", TT_F32, got, wsign, 6, 0, 0);
  free(got);
  TT_CHECK(bad == 0);
}

/* bf16 computes in f32 and rounds once. */
static void test_unary_bf16(void) {
  uint16_t x[N];
  double want[N];
  for (int i = 0; i < N; i++) {
    x[i] = ew_to_bf16((float)(-2 + 0.37 * i));
    want[i] = ew_from_bf16(ew_to_bf16(expf(ew_from_bf16(x[i]))));
  }
  th_arg_t a = ew_t1(TT_BF16, N, x);
  void* got = ew_run1("aten::exp", &a, 1, tt_type_make(TT_BF16, 1, (int64_t[]){N}));
  TT_CHECK(got);
  int bad = ew_check("exp bf16", TT_BF16, got, want, N, 1.0 / 128, 0); /* 1 bf16 ulp */
  free(got);
  TT_CHECK(bad == 0);
}

/* ---- backward ops ------------------------------------------------------------ */
typedef double (*bref_t)(double g, double x, const double* p);
static double b_threshold(double g, double x, const double* p) { return x <= p[0] ? 0 : g; }
static double b_gelu(double g, double x, const double* p) {
  return g * (0.5 * (1 + erf(x / M_SQRT2)) + x * exp(-0.5 * x * x) / sqrt(2 * M_PI));
}
static double b_gelu_tanh(double g, double x, const double* p) {
  double k = sqrt(2 / M_PI), u = k * (x + 0.044715 * x * x * x), t = tanh(u);
  return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x));
}
static double b_silu(double g, double x, const double* p) {
  double s = 1 / (1 + exp(-x));
  return g * s * (1 + x * (1 - s));
}
static double b_sigmoid(double g, double y, const double* p) { return g * (1 - y) * y; }
static double b_tanh(double g, double y, const double* p) { return g * (1 - y * y); }
static double b_elu(double g, double x, const double* p) { return x <= 0 ? g * p[2] * p[0] * p[1] * exp(x * p[2]) : g * p[1]; }
static double b_leaky(double g, double x, const double* p) { return x > 0 ? g : g * p[0]; }
static double b_hardtanh(double g, double x, const double* p) { return x <= p[0] || x >= p[1] ? 0 : g; }
static double b_softplus(double g, double x, const double* p) {
  double z = exp(x * p[0]);
  return x * p[0] > p[1] ? g : g * z / (z + 1);
}
static double b_hsig(double g, double x, const double* p) { return x > -3 && x < 3 ? g / 6 : 0; }
static double b_hswish(double g, double x, const double* p) { return x <= -3 ? 0 : x < 3 ? g * (x / 3 + 0.5) : g; }
static double b_mish(double g, double x, const double* p) {
  double s = 1 / (1 + exp(-x)), t = tanh(log1p(exp(x)));
  return g * (t + x * s * (1 - t * t));
}
static double b_shrink(double g, double x, const double* p) { return x >= -p[0] && x <= p[0] ? 0 : g; }

enum blayout { BL_PLAIN, BL_STR, BL_ELU, BL_LEAKY };
static const struct {
  const char* name;
  bref_t ref;
  int layout, np;
  double p[3];
  const char* str;
} k_bwd[] = {
    {"aten::threshold_backward", b_threshold, BL_PLAIN, 1, {0.5}, NULL},
    {"aten::gelu_backward", b_gelu, BL_STR, 0, {0}, "none"},
    {"aten::gelu_backward", b_gelu_tanh, BL_STR, 0, {0}, "tanh"},
    {"aten::silu_backward", b_silu, BL_PLAIN, 0, {0}, NULL},
    {"aten::sigmoid_backward", b_sigmoid, BL_PLAIN, 0, {0}, NULL},
    {"aten::tanh_backward", b_tanh, BL_PLAIN, 0, {0}, NULL},
    {"aten::elu_backward", b_elu, BL_ELU, 3, {0.5, 1.5, 2.0}, NULL},
    {"aten::leaky_relu_backward", b_leaky, BL_LEAKY, 1, {0.2}, NULL},
    {"aten::hardtanh_backward", b_hardtanh, BL_PLAIN, 2, {-1, 1}, NULL},
    {"aten::softplus_backward", b_softplus, BL_PLAIN, 2, {2, 3}, NULL},
    {"aten::hardsigmoid_backward", b_hsig, BL_PLAIN, 0, {0}, NULL},
    {"aten::hardswish_backward", b_hswish, BL_PLAIN, 0, {0}, NULL},
    {"aten::mish_backward", b_mish, BL_PLAIN, 0, {0}, NULL},
    {"aten::threshold_backward.grad_input", b_threshold, BL_PLAIN, 1, {0.5}, NULL},
    {"aten::softshrink_backward", b_shrink, BL_PLAIN, 1, {0.7}, NULL},
};

static void test_backward(void) {
  int bad = 0;
  float g[N], x[N];
  linspace(x, -3.5, 3.5);
  linspace(g, 1.5, -0.5);
  for (size_t k = 0; k < sizeof(k_bwd) / sizeof(k_bwd[0]); k++) {
    th_arg_t a[8];
    int na = 0;
    a[na++] = ew_t1(TT_F32, N, g);
    if (k_bwd[k].layout == BL_ELU) {
      for (int i = 0; i < 3; i++) a[na++] = ew_scalar(TT_F64, &k_bwd[k].p[i]);
      a[na++] = ew_int(TT_ARG_BOOL, 0);
      a[na++] = ew_t1(TT_F32, N, x);
    } else {
      a[na++] = ew_t1(TT_F32, N, x);
      for (int i = 0; i < k_bwd[k].np; i++) a[na++] = ew_scalar(TT_F64, &k_bwd[k].p[i]);
      if (k_bwd[k].layout == BL_STR) a[na++] = ew_str(k_bwd[k].str);
      if (k_bwd[k].layout == BL_LEAKY) a[na++] = ew_int(TT_ARG_BOOL, 0);
    }
    if (strstr(k_bwd[k].name, ".grad_input")) a[na++] = ew_kind(TT_ARG_OUT);
    double want[N];
    for (int i = 0; i < N; i++) want[i] = k_bwd[k].ref(g[i], x[i], k_bwd[k].p);
    void* got = ew_run1(k_bwd[k].name, a, na, tt_type_make(TT_F32, 1, (int64_t[]){N}));
    if (!got) { bad++; continue; }
    bad += ew_check(k_bwd[k].name, TT_F32, got, want, N, 4e-6, 2e-6);
    free(got);
  }
  TT_CHECK(bad == 0);
}

/* A handful on the API 0.81 plugin: plain ops, CHLO, attributes, backward. */
static void test_old_plugin(void) {
  int bad = 0;
  const char* names[] = {"aten::exp", "aten::erf", "aten::atan", "aten::lgamma", "aten::gelu", "aten::elu"};
  for (size_t k = 0; k < sizeof(k_unary) / sizeof(k_unary[0]); k++)
    for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++)
      if (!strcmp(k_unary[k].name, names[j])) bad += run_unary(&k_unary[k], k_unary[k].name);
  TT_CHECK(bad == 0);
  test_backward();
}

int main(void) {
  ew_plugin = ew_open("TT_TEST_PLUGIN_NEW");
  if (!ew_plugin) return 0;
  TT_RUN(test_unary_f32);
  TT_RUN(test_unary_variants);
  TT_RUN(test_unary_int_bool);
  TT_RUN(test_unary_bf16);
  TT_RUN(test_backward);
  tt_pjrt_t* p_new = ew_plugin;
  ew_plugin = ew_open("TT_TEST_PLUGIN_OLD");
  if (ew_plugin) {
    TT_RUN(test_old_plugin);
    tt_pjrt_close(ew_plugin);
  }
  tt_pjrt_close(p_new);
  TT_REPORT();
}
