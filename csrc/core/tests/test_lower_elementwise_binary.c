/* The binary family (elementwise/binary.c, binary_misc.c) on real plugins: every lowering function and param once
 * on the API 0.115 plugin (floats against double references; integer, bool,
 * shift and rounding-mode semantics exactly as ATen defines them), dtype
 * errors, the registry rows of the elementwise families, and a handful on the
 * API 0.81 plugin. */
#include "ew_test_util.h"
#include "../lower/tt_lower_tables.h"

#define N 11

typedef double (*bref_t)(double a, double b);
static double r_add2(double a, double b) { return a + 2 * b; }
static double r_sub_half(double a, double b) { return a - 0.5 * b; }
static double r_rsub2(double a, double b) { return b - 2 * a; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_rem(double a, double b) {
  double m = fmod(a, b);
  return (m != 0 && (b < 0) != (m < 0)) ? m + b : m;
}
static double r_floordiv(double a, double b) { return floor(a / b); }
static double r_pow(double a, double b) { return pow(a, b); }
static double r_max(double a, double b) { return a > b ? a : b; }
static double r_min(double a, double b) { return a < b ? a : b; }
static double r_xlogy(double a, double b) { return a == 0 ? 0 : a * log(b); }
static double r_logaddexp(double a, double b) { return log(exp(a) + exp(b)); }
static double r_logaddexp2(double a, double b) { return log2(exp2(a) + exp2(b)); }
static double r_heaviside(double a, double b) { return a == 0 ? b : a > 0; }
static double r_eq(double a, double b) { return a == b; }
static double r_ne(double a, double b) { return a != b; }
static double r_lt(double a, double b) { return a < b; }
static double r_le(double a, double b) { return a <= b; }
static double r_gt(double a, double b) { return a > b; }
static double r_ge(double a, double b) { return a >= b; }
static double r_land(double a, double b) { return a != 0 && b != 0; }
static double r_lor(double a, double b) { return a != 0 || b != 0; }
static double r_lxor(double a, double b) { return (a != 0) != (b != 0); }

static const struct {
  const char* name;
  bref_t ref;
  int alpha;     /* pass `alpha` (value) as arg 2 */
  double av;
  bool boolean;  /* bool output */
  int absab;     /* domains: 1 = |a|, 2 = |b| */
} k_bin[] = {
    {"aten::add.Tensor", r_add2, 1, 2, false, 0}, {"aten::sub.Tensor", r_sub_half, 1, 0.5, false, 0},
    {"aten::rsub.Tensor", r_rsub2, 1, 2, false, 0}, {"aten::mul.Tensor", r_mul, 0, 0, false, 0},
    {"aten::div.Tensor", r_div, 0, 0, false, 0}, {"aten::remainder.Tensor", r_rem, 0, 0, false, 0},
    {"aten::fmod.Tensor", fmod, 0, 0, false, 0}, {"aten::floor_divide", r_floordiv, 0, 0, false, 0},
    {"aten::pow.Tensor_Tensor", r_pow, 0, 0, false, 1}, {"aten::maximum", r_max, 0, 0, false, 0},
    {"aten::minimum", r_min, 0, 0, false, 0}, {"aten::fmax", fmax, 0, 0, false, 0},
    {"aten::fmin", fmin, 0, 0, false, 0}, {"aten::atan2", atan2, 0, 0, false, 0},
    {"aten::hypot", hypot, 0, 0, false, 0}, {"aten::copysign.Tensor", copysign, 0, 0, false, 0},
    {"aten::xlogy.Tensor", r_xlogy, 0, 0, false, 2}, {"aten::logaddexp", r_logaddexp, 0, 0, false, 0},
    {"aten::logaddexp2", r_logaddexp2, 0, 0, false, 0}, {"aten::heaviside", r_heaviside, 0, 0, false, 0},
    {"aten::eq.Tensor", r_eq, 0, 0, true, 0}, {"aten::ne.Tensor", r_ne, 0, 0, true, 0},
    {"aten::lt.Tensor", r_lt, 0, 0, true, 0}, {"aten::le.Tensor", r_le, 0, 0, true, 0},
    {"aten::gt.Tensor", r_gt, 0, 0, true, 0}, {"aten::ge.Tensor", r_ge, 0, 0, true, 0},
    {"aten::logical_and", r_land, 0, 0, true, 0}, {"aten::logical_or", r_lor, 0, 0, true, 0},
    {"aten::logical_xor", r_lxor, 0, 0, true, 0},
};

static int run_bin_f32(size_t k) {
  float a[N], b[N];
  double want[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)(-3 + 0.6 * i);
    b[i] = (float)(2.5 - 0.47 * i);
    if (k_bin[k].absab & 1) a[i] = fabsf(a[i]);
    if (k_bin[k].absab & 2) b[i] = fabsf(b[i]);
  }
  a[4] = 0; /* heaviside / xlogy / logical zero */
  b[7] = a[7]; /* equality */
  th_arg_t args[3] = {ew_t1(TT_F32, N, a), ew_t1(TT_F32, N, b), EW_SF(k_bin[k].av)};
  for (int i = 0; i < N; i++) want[i] = k_bin[k].ref(a[i], b[i]);
  tt_dtype_t dt = k_bin[k].boolean ? TT_BOOL : TT_F32;
  void* got = ew_run1(k_bin[k].name, args, 2 + k_bin[k].alpha, tt_type_make(dt, 1, (int64_t[]){N}));
  if (!got) return 1;
  int bad = ew_check(k_bin[k].name, dt, got, want, N, 4e-6, 2e-6);
  free(got);
  return bad;
}

static void test_binary_f32(void) {
  int bad = 0;
  for (size_t k = 0; k < sizeof(k_bin) / sizeof(k_bin[0]); k++) bad += run_bin_f32(k);
  TT_CHECK(bad == 0);
}

/* Runs a 2-operand int64 op over the pairs (a[i], b[i]) and compares exactly. */
static int run_i64(const char* name, const int64_t* a, const int64_t* b, int n, const th_arg_t* extra,
                   int nextra, tt_dtype_t out, const double* want) {
  th_arg_t args[4] = {ew_t1(TT_I64, n, a), ew_t1(TT_I64, n, b)};
  for (int i = 0; i < nextra; i++) args[2 + i] = extra[i];
  void* got = ew_run1(name, args, 2 + nextra, tt_type_make(out, 1, (int64_t[]){n}));
  if (!got) return 1;
  int bad = ew_check(name, out, got, want, n, 0, 0);
  free(got);
  return bad;
}

static void test_binary_int(void) {
  int64_t a[8] = {7, -7, 7, -7, 0, 13, -1, 100};
  int64_t b[8] = {3, 3, -3, -3, 5, 4, 7, -9};
  int bad = 0;
  bad += run_i64("aten::remainder.Tensor", a, b, 8, NULL, 0, TT_I64, (double[]){1, 2, -2, -1, 0, 1, 6, -8});
  bad += run_i64("aten::fmod.Tensor", a, b, 8, NULL, 0, TT_I64, (double[]){1, -1, 1, -1, 0, 1, -1, 1});
  bad += run_i64("aten::floor_divide", a, b, 8, NULL, 0, TT_I64, (double[]){2, -3, -3, 2, 0, 3, -1, -12});
  th_arg_t trunc = ew_str("trunc"), floor_ = ew_str("floor");
  bad += run_i64("aten::div.Tensor_mode", a, b, 8, &trunc, 1, TT_I64, (double[]){2, -2, -2, 2, 0, 3, 0, -11});
  bad += run_i64("aten::div.Tensor_mode", a, b, 8, &floor_, 1, TT_I64, (double[]){2, -3, -3, 2, 0, 3, -1, -12});
  bad += run_i64("aten::div.Tensor", a, b, 8, NULL, 0, TT_F32,
                 (double[]){7.0f / 3, -7.0f / 3, -7.0f / 3, 7.0f / 3, 0, 13.0f / 4, -1.0f / 7, 100.0f / -9});
  bad += run_i64("aten::add.Tensor", a, b, 8, (th_arg_t[]){EW_SI(3)}, 1, TT_I64,
                 (double[]){16, 2, -2, -16, 15, 25, 20, 73});
  bad += run_i64("aten::maximum", a, b, 8, NULL, 0, TT_I64, (double[]){7, 3, 7, -3, 5, 13, 7, 100});
  bad += run_i64("aten::bitwise_and.Tensor", a, b, 8, NULL, 0, TT_I64, (double[]){3, 1, 5, -7, 0, 4, 7, 100 & -9});
  bad += run_i64("aten::bitwise_or.Tensor", a, b, 8, NULL, 0, TT_I64, (double[]){7, -5, -1, -3, 5, 13, -1, 100 | -9});
  bad += run_i64("aten::bitwise_xor.Tensor", a, b, 8, NULL, 0, TT_I64, (double[]){4, -6, -6, 4, 5, 9, -8, 100 ^ -9});
  /* powers: ATen's powi, negative exponents included */
  int64_t pa[7] = {2, -1, -1, 1, 3, 0, -2}, pb[7] = {10, -3, -2, -5, -1, 0, 3};
  bad += run_i64("aten::pow.Tensor_Tensor", pa, pb, 7, NULL, 0, TT_I64, (double[]){1024, -1, 1, 1, 0, 1, -8});
  /* shifts: out of range gives 0 (left) or the sign fill (right) */
  int64_t sa[6] = {5, -5, 5, -5, 1, -1}, sb[6] = {2, 1, 64, 70, -1, 63};
  bad += run_i64("aten::bitwise_left_shift.Tensor", sa, sb, 6, NULL, 0, TT_I64,
                 (double[]){20, -10, 0, 0, 0, (double)INT64_MIN});
  bad += run_i64("aten::bitwise_right_shift.Tensor", sa, sb, 6, NULL, 0, TT_I64, (double[]){1, -3, 0, -1, 0, -1});
  uint8_t ua[3] = {200, 7, 255}, ub[3] = {3, 9, 8};
  th_arg_t u[2] = {ew_t1(TT_U8, 3, ua), ew_t1(TT_U8, 3, ub)};
  void* got = ew_run1("aten::bitwise_right_shift.Tensor", u, 2, tt_type_make(TT_U8, 1, (int64_t[]){3}));
  TT_CHECK(got);
  bad += ew_check("rshift u8", TT_U8, got, (double[]){25, 0, 0}, 3, 0, 0);
  free(got);
  /* bools: add is or, mul is and */
  uint8_t ba[4] = {0, 0, 1, 1}, bb[4] = {0, 1, 0, 1};
  th_arg_t bo[3] = {ew_t1(TT_BOOL, 4, ba), ew_t1(TT_BOOL, 4, bb), ew_scalar(TT_BOOL, &(uint8_t){1})};
  tt_type_t tb = tt_type_make(TT_BOOL, 1, (int64_t[]){4});
  const char* bn[3] = {"aten::add.Tensor", "aten::mul.Tensor", "aten::bitwise_xor.Tensor"};
  double bw[3][4] = {{0, 1, 1, 1}, {0, 0, 0, 1}, {0, 1, 1, 0}};
  for (int k = 0; k < 3; k++) {
    got = ew_run1(bn[k], bo, k == 0 ? 3 : 2, tb);
    if (!got) { bad++; continue; }
    bad += ew_check(bn[k], TT_BOOL, got, bw[k], 4, 0, 0);
    free(got);
  }
  TT_CHECK(bad == 0);
}

/* Scalars, wrapped numbers, 0-dim tensors, broadcasting, in-place / out= rows. */
static void test_binary_scalars(void) {
  int bad = 0;
  float x[6] = {-2, -0.0f, 0.5f, 1, 4, 9};
  tt_type_t t6 = tt_type_make(TT_F32, 1, (int64_t[]){6});
  struct { const char* name; th_arg_t args[3]; int n; double want[6]; } k[] = {
      {"aten::add.Scalar", {ew_t1(TT_F32, 6, x), EW_SF(1.5), EW_SI(2)}, 3, {1, 3, 3.5, 4, 7, 12}},
      {"aten::add_.Scalar", {ew_t1(TT_F32, 6, x), EW_SF(1.5), EW_SI(2)}, 3, {1, 3, 3.5, 4, 7, 12}},
      {"aten::pow.Tensor_Scalar", {ew_t1(TT_F32, 6, x), EW_SF(0.5)}, 2, {NAN, -0.0, sqrt(0.5), 1, 2, 3}},
      {"aten::pow.Tensor_Scalar", {ew_t1(TT_F32, 6, x), EW_SF(2)}, 2, {4, 0, 0.25, 1, 16, 81}},
      {"aten::pow.Scalar", {EW_SF(2), ew_t1(TT_F32, 6, x)}, 2, {0.25, 1, M_SQRT2, 2, 16, 512}},
      {"aten::remainder.Scalar_Tensor", {EW_SF(5), ew_t1(TT_F32, 6, x)}, 2, {-1, NAN, 0, 0, 1, 5}},
      {"aten::mul.Tensor", {ew_t1(TT_F32, 6, x), ew_wrapped(TT_F64, &(double){3})}, 2, {-6, -0.0, 1.5, 3, 12, 27}},
      {"aten::div.Scalar_mode", {ew_t1(TT_F32, 6, x), EW_SF(-2), ew_str("floor")}, 3, {1, 0, -1, -1, -2, -5}},
      {"aten::copysign.Scalar", {ew_t1(TT_F32, 6, x), EW_SF(-1)}, 2, {-2, -0.0, -0.5, -1, -4, -9}},
      {"aten::xlogy.Scalar_Self", {EW_SF(2), ew_t1(TT_F32, 6, x)}, 2, {NAN, -INFINITY, 2 * log(0.5), 0, 2 * log(4), 2 * log(9)}},
  };
  for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
    void* got = ew_run1(k[i].name, k[i].args, k[i].n, t6);
    if (!got) { bad++; continue; }
    bad += ew_check(k[i].name, TT_F32, got, k[i].want, 6, 4e-6, 1e-6);
    for (int j = 0; j < 6; j++) /* signed zeros: pow(-0, 0.5) = -0 (sqrt), floor(-0 / -2) = +0 */
      if (k[i].want[j] == 0 && !signbit(k[i].want[j]) != !signbit(((float*)got)[j])) {
        fprintf(stderr, "  %s[%d]: sign of zero\n", k[i].name, j);
        bad++;
      }
    free(got);
  }
  /* int tensor + wrapped float -> float32; int tensor < 2.5 -> bool; 0-dim f64 tensor keeps f32 */
  int64_t xi[6] = {-2, 0, 1, 2, 3, 7};
  th_arg_t ai[3] = {ew_t1(TT_I64, 6, xi), ew_wrapped(TT_F64, &(double){0.5}), EW_SI(1)};
  void* got = ew_run1("aten::add.Tensor", ai, 3, t6);
  TT_CHECK(got);
  bad += ew_check("int + 0.5", TT_F32, got, (double[]){-1.5, 0.5, 1.5, 2.5, 3.5, 7.5}, 6, 0, 0);
  free(got);
  th_arg_t lt[2] = {ew_t1(TT_I64, 6, xi), EW_SF(2.5)};
  got = ew_run1("aten::lt.Scalar", lt, 2, tt_type_make(TT_BOOL, 1, (int64_t[]){6}));
  TT_CHECK(got);
  bad += ew_check("lt.Scalar", TT_BOOL, got, (double[]){1, 1, 1, 1, 0, 0}, 6, 0, 0);
  free(got);
  th_arg_t z[2] = {ew_t1(TT_F32, 6, x), ew_t(TT_F64, 0, NULL, &(double){0.25})};
  got = ew_run1("aten::mul.Tensor", z, 2, t6);
  TT_CHECK(got);
  bad += ew_check("f32 * 0-dim f64", TT_F32, got, (double[]){-0.5, -0.0, 0.125, 0.25, 1, 2.25}, 6, 0, 0);
  free(got);
  /* broadcast [2,3] + [3]; in-place eq_ writes 1.0 / 0.0 into self's dtype */
  float m[6] = {1, 2, 3, 4, 5, 6}, r[3] = {10, 2, 30};
  tt_type_t t23 = tt_type_make(TT_F32, 2, (int64_t[]){2, 3});
  th_arg_t bc[3] = {ew_t(TT_F32, 2, (int64_t[]){2, 3}, m), ew_t1(TT_F32, 3, r), EW_SI(1)};
  got = ew_run1("aten::add.out", (th_arg_t[]){bc[0], bc[1], bc[2], ew_kind(TT_ARG_OUT)}, 4, t23);
  TT_CHECK(got);
  bad += ew_check("broadcast add.out", TT_F32, got, (double[]){11, 4, 33, 14, 7, 36}, 6, 0, 0);
  free(got);
  got = ew_run1("aten::eq_.Tensor", bc, 2, t23);
  TT_CHECK(got);
  bad += ew_check("eq_", TT_F32, got, (double[]){0, 1, 0, 0, 0, 0}, 6, 0, 0);
  free(got);
  TT_CHECK(bad == 0);
}

/* Division by a one-element divisor (0-dim, [1, 1], a Scalar) is IEEE
 * division, bit for bit: XLA would turn a broadcast divisor into a
 * multiplication by its reciprocal (x / 10 and x * 0.1f differ in the last
 * bit for many x). */
static void test_binary_spread_divisor(void) {
  enum { M = 64 };
  float x[M], want[M];
  for (int i = 0; i < M; i++) x[i] = (float)(i - 20) * 0.37f + 0.1f * (float)i;
  const float d = 10.0f;
  for (int i = 0; i < M; i++) want[i] = x[i] / d;
  tt_type_t tm = tt_type_make(TT_F32, 1, (int64_t[]){M});
  th_arg_t divs[3] = {ew_t(TT_F32, 0, NULL, &d), ew_t(TT_F32, 2, (int64_t[]){1, 1}, &d), EW_SF(10.0)};
  const char* ops[3] = {"aten::div.Tensor", "aten::div.Tensor", "aten::div.Scalar"};
  int bad = 0;
  for (int k = 0; k < 3; k++) {
    float* got = ew_run1(ops[k], (th_arg_t[]){ew_t1(TT_F32, M, x), divs[k]}, 2, tm);
    TT_CHECK(got);
    if (!got) continue;
    for (int i = 0; i < M; i++) bad += memcmp(&got[i], &want[i], sizeof(float)) != 0;
    free(got);
  }
  /* floor division at near-exact quotients, CPU's values (fmod-based: 0.9f // 0.1f is 8) */
  float y[4] = {0.3f, 0.6f, 0.9f, 1.2f}, tenth = 0.1f, cpu[4] = {3, 6, 8, 12};
  float* fl = ew_run1("aten::div.Tensor_mode", (th_arg_t[]){ew_t1(TT_F32, 4, y), ew_t(TT_F32, 0, NULL, &tenth), ew_str("floor")},
                      3, tt_type_make(TT_F32, 1, (int64_t[]){4}));
  TT_CHECK(fl);
  if (fl) {
    for (int i = 0; i < 4; i++) bad += fl[i] != cpu[i];
    free(fl);
  }
  TT_CHECK(bad == 0);
}

/* where, clamp*, lerp, addcmul/addcdiv, masked_fill, copy. */
static void test_binary_misc(void) {
  int bad = 0;
  float x[6] = {-3, -0.5f, NAN, 0.25f, 2, 5}, y[6] = {1, 2, 3, 4, 5, 6}, w[6] = {0, 0.3f, 0.5f, 0.8f, 1, 1.5f};
  uint8_t mk[6] = {1, 0, 1, 0, 0, 1};
  tt_type_t t6 = tt_type_make(TT_F32, 1, (int64_t[]){6});
  th_arg_t X = ew_t1(TT_F32, 6, x), Y = ew_t1(TT_F32, 6, y), Wt = ew_t1(TT_F32, 6, w), M = ew_t1(TT_BOOL, 6, mk);
  th_arg_t none = ew_kind(TT_ARG_NONE);
  double lerp[6];
  for (int i = 0; i < 6; i++) lerp[i] = x[i] + (double)w[i] * (y[i] - x[i]);
  struct { const char* name; th_arg_t args[4]; int n; double want[6]; double tol; } k[] = {
      {"aten::where.self", {M, X, Y}, 3, {-3, 2, NAN, 4, 5, 5}, 0},
      {"aten::clamp", {X, EW_SF(-1), EW_SF(1)}, 3, {-1, -0.5, NAN, 0.25, 1, 1}, 0},
      {"aten::clamp", {X, none, EW_SF(0)}, 3, {-3, -0.5, NAN, 0, 0, 0}, 0},
      {"aten::clamp", {X, EW_SF(2), EW_SF(1)}, 3, {1, 1, NAN, 1, 1, 1}, 0},
      {"aten::clamp", {Y, EW_SF(NAN), none}, 3, {NAN, NAN, NAN, NAN, NAN, NAN}, 0},
      {"aten::clamp.Tensor", {X, Wt, Y}, 3, {0, 0.3, NAN, 0.8, 2, 5}, 1e-7},
      {"aten::clamp_min", {X, EW_SF(0)}, 2, {0, 0, NAN, 0.25, 2, 5}, 0},
      {"aten::clamp_max_.Tensor", {X, Wt}, 2, {-3, -0.5, NAN, 0.25, 1, 1.5}, 0},
      {"aten::lerp.Tensor", {X, Y, Wt}, 3, {lerp[0], lerp[1], NAN, lerp[3], lerp[4], lerp[5]}, 1e-6},
      {"aten::lerp.Scalar", {Y, X, EW_SF(0.25)}, 3, {0, 1.375, NAN, 3.0625, 4.25, 5.75}, 1e-6},
      {"aten::lerp.Scalar", {Y, X, EW_SF(0.75)}, 3, {-2, 0.125, NAN, 1.1875, 2.75, 5.25}, 1e-6},
      {"aten::addcmul", {Y, X, Wt, EW_SF(2)}, 4, {1, 1.7, NAN, 4.4, 9, 21}, 1e-6},
      {"aten::addcdiv_", {Y, X, Y, EW_SF(-1)}, 4, {4, 2.25, NAN, 3.9375, 4.6, 5 + 1.0 / 6}, 1e-6},
      {"aten::masked_fill.Scalar", {X, M, EW_SF(7)}, 3, {7, -0.5, 7, 0.25, 2, 7}, 0},
      {"aten::masked_fill_.Tensor", {X, M, ew_t(TT_F32, 0, NULL, &(float){-1})}, 3, {-1, -0.5, -1, 0.25, 2, -1}, 0},
      {"aten::div.Tensor_mode", {X, Y, ew_str("trunc")}, 3, {-3, -0.0, NAN, 0, 0, 0}, 0},
      {"aten::div.Tensor_mode", {X, Y, none}, 3, {-3, -0.25, NAN, 1.0 / 16, 0.4, 5.0 / 6}, 1e-6},
  };
  for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
    void* got = ew_run1(k[i].name, k[i].args, k[i].n, t6);
    if (!got) { bad++; continue; }
    bad += ew_check(k[i].name, TT_F32, got, k[i].want, 6, k[i].tol, k[i].tol);
    free(got);
  }
  /* copy_: self not read (TT_ARG_OUT), src converted and broadcast */
  float src[3] = {-1.7f, 2.9f, 1e3f};
  th_arg_t cp[3] = {ew_kind(TT_ARG_OUT), ew_t1(TT_F32, 3, src), ew_int(TT_ARG_BOOL, 0)};
  void* got = ew_run1("aten::copy_", cp, 3, tt_type_make(TT_I32, 2, (int64_t[]){2, 3}));
  TT_CHECK(got);
  bad += ew_check("copy_ f32->i32", TT_I32, got, (double[]){-1, 2, 1000, -1, 2, 1000}, 6, 0, 0);
  free(got);
  th_arg_t cb[3] = {X, M, ew_int(TT_ARG_BOOL, 0)};
  got = ew_run1("aten::copy", cb, 3, t6);
  TT_CHECK(got);
  bad += ew_check("copy bool->f32", TT_F32, got, (double[]){1, 0, 1, 0, 0, 1}, 6, 0, 0);
  free(got);
  TT_CHECK(bad == 0);
}

/* Where PyTorch raises for a dtype or an attribute, the lowering says so: a dtype the op
 * is not built for is TT_UNIMPLEMENTED (CPU's NotImplementedError), an attribute or a
 * combination CPU refuses TT_INVALID_ARGUMENT. */
static void test_binary_errors(void) {
  float x[2] = {1, 2};
  int64_t xi[2] = {1, 2};
  tt_type_t t2 = tt_type_make(TT_F32, 1, (int64_t[]){2});
  struct { const char* name; th_arg_t args[4]; int n; tt_code_t code; } k[] = {
      {"aten::bitwise_and.Tensor", {ew_t1(TT_F32, 2, x), ew_t1(TT_F32, 2, x)}, 2, TT_UNIMPLEMENTED},
      {"aten::bitwise_left_shift.Tensor", {ew_t1(TT_F32, 2, x), ew_t1(TT_F32, 2, x)}, 2, TT_UNIMPLEMENTED},
      {"aten::div.Tensor_mode", {ew_t1(TT_F32, 2, x), ew_t1(TT_F32, 2, x), ew_str("round")}, 3, TT_INVALID_ARGUMENT},
      {"aten::clamp", {ew_t1(TT_F32, 2, x), ew_kind(TT_ARG_NONE), ew_kind(TT_ARG_NONE)}, 3, TT_INVALID_ARGUMENT},
      {"aten::addcdiv", {ew_t1(TT_I64, 2, xi), ew_t1(TT_I64, 2, xi), ew_t1(TT_I64, 2, xi), EW_SI(1)}, 4, TT_INVALID_ARGUMENT},
      {"aten::add.Tensor", {ew_t1(TT_I64, 2, xi), ew_t1(TT_I64, 2, xi), EW_SF(0.5)}, 3, TT_INVALID_ARGUMENT},
      {"aten::neg", {ew_t1(TT_BOOL, 2, xi)}, 1, TT_UNIMPLEMENTED},
      {"aten::gelu", {ew_t1(TT_I64, 2, xi), ew_str("none")}, 2, TT_UNIMPLEMENTED},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
    void* out = NULL;
    tt_status_t st = ew_run(k[i].name, k[i].args, k[i].n, &t2, 1, &out);
    free(out);
    if (tt_status_code(st) != k[i].code) {
      fprintf(stderr, "  %s: expected code %d, got %s\n", k[i].name, (int)k[i].code, st ? tt_status_message(st) : "ok");
      bad++;
    }
    tt_status_free(st);
  }
  TT_CHECK(bad == 0);
}

/* Every row of the three elementwise tables is what the registry finds under
 * its name (no other family shadows it), and write-only rows are flagged. */
static void test_registry(void) {
  const tt_lower_entry_t* t[3] = {tt_lower_unary, tt_lower_binary, tt_lower_foreach};
  int n[3] = {tt_lower_unary_count, tt_lower_binary_count, tt_lower_foreach_count};
  int bad = 0;
  for (int f = 0; f < 3; f++)
    for (int i = 0; i < n[f]; i++) {
      const tt_lower_entry_t* e = &t[f][i];
      const tt_lower_entry_t* r = tt_lower_find(e->name);
      if (!e->fn || !r || r->fn != e->fn || r->param != e->param || (r->flags & e->flags) != e->flags ||
          strncmp(e->name, "aten::", 6)) {
        fprintf(stderr, "  row %s: not registered as itself\n", e->name);
        bad++;
      }
    }
  const char* wo[] = {"aten::copy_", "aten::_foreach_zero_", "aten::_foreach_copy_"};
  for (int i = 0; i < 3; i++) {
    const tt_lower_entry_t* e = tt_lower_find(wo[i]);
    if (!e || !(e->flags & TT_LF_WRITE_ONLY)) bad++;
  }
  TT_CHECK(bad == 0);
  TT_CHECK(n[0] > 150 && n[1] > 200 && n[2] > 180);
}

/* The facts beside the tables reach the entries the registry returns: every
 * overload of an op, nothing else; and every fact names an op of its family. */
static void test_registry_facts(void) {
  TT_CHECK_OK(tt_lower_check_facts());
  const char* cpx[] = {"aten::add.Tensor", "aten::add_.Scalar", "aten::exp", "aten::sum.dim_IntList",
                       "aten::cat", "aten::_fft_c2c", "aten::linalg_qr"};
  for (size_t i = 0; i < sizeof(cpx) / sizeof(cpx[0]); i++) {
    const tt_lower_entry_t* e = tt_lower_find(cpx[i]);
    TT_CHECK(e && (e->flags & TT_LF_COMPLEX) && !(e->flags & TT_LF_COMPLEX_SAME));
  }
  const tt_lower_entry_t* mm = tt_lower_find("aten::mm");
  TT_CHECK(mm && (mm->flags & TT_LF_COMPLEX_SAME) && !(mm->flags & TT_LF_COMPLEX));
  const char* real[] = {"aten::relu", "aten::atan2", "aten::addmv_", "aten::maximum"};
  for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
    const tt_lower_entry_t* e = tt_lower_find(real[i]);
    TT_CHECK(e && !(e->flags & TT_LF_COMPLEX));
  }
  const struct { const char* op; uint32_t flag; } bridge[] = {
      {"aten::_linalg_det", TT_LF_LU_OF_TRANSPOSE}, {"aten::_linalg_slogdet.sign", TT_LF_LU_OF_TRANSPOSE},
      {"aten::repeat_interleave.Tensor", TT_LF_HOST_SIZE}, {"aten::native_batch_norm.out", TT_LF_STATS_OUTPUTS}};
  for (size_t i = 0; i < sizeof(bridge) / sizeof(bridge[0]); i++) {
    const tt_lower_entry_t* e = tt_lower_find(bridge[i].op);
    TT_CHECK(e && (e->flags & bridge[i].flag));
  }
  const char* sub = tt_lower_scalar_rules(tt_lower_find("aten::sub_.Tensor"));
  TT_CHECK(sub && !strcmp(sub, "alpha:neg_result"));
  const char* ht = tt_lower_scalar_rules(tt_lower_find("aten::hardtanh"));
  TT_CHECK(ht && strstr(ht, "min_val:integral64") && strstr(ht, "max_val:integral64"));
  TT_CHECK(!tt_lower_scalar_rules(tt_lower_find("aten::mul.Tensor")));
  TT_CHECK(!tt_lower_scalar_rules(NULL));
  const tt_lower_entry_t* lu = tt_lower_find("aten::linalg_lu_factor_ex");
  TT_CHECK(lu && !(lu->flags & (TT_LF_LU_OF_TRANSPOSE | TT_LF_HOST_SIZE | TT_LF_STATS_OUTPUTS)));
  int with = 0;
  for (int i = 0; i < tt_lower_count(); i++) with += (tt_lower_at(i)->flags & TT_LF_COMPLEX) != 0;
  TT_CHECK(with > 250 && with < tt_lower_count() / 2);
}

static void test_old_plugin(void) {
  int bad = 0;
  for (size_t k = 0; k < sizeof(k_bin) / sizeof(k_bin[0]); k += 4) bad += run_bin_f32(k);
  TT_CHECK(bad == 0);
  test_binary_int();
  test_binary_misc();
}

int main(void) {
  ew_plugin = ew_open("TT_TEST_PLUGIN_NEW");
  if (!ew_plugin) return 0;
  TT_RUN(test_binary_f32);
  TT_RUN(test_binary_int);
  TT_RUN(test_binary_scalars);
  TT_RUN(test_binary_spread_divisor);
  TT_RUN(test_binary_misc);
  TT_RUN(test_binary_errors);
  TT_RUN(test_registry);
  TT_RUN(test_registry_facts);
  tt_pjrt_t* p_new = ew_plugin;
  ew_plugin = ew_open("TT_TEST_PLUGIN_OLD");
  if (ew_plugin) {
    TT_RUN(test_old_plugin);
    tt_pjrt_close(ew_plugin);
  }
  tt_pjrt_close(p_new);
  TT_REPORT();
}
