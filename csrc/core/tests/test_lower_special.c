/* Tests of the special lowering family against values computed in C (libm's
 * Bessel functions, series, known constants), on both plugins. */
#include "lower_check.h"

#define XS 8
static const float X[XS] = {0.25f, 0.5f, 1.0f, 2.5f, 4.0f, 6.0f, 9.5f, 20.0f};
#define XT lc_tensor(TY(TT_F32, XS), X)

/* I0 by its power series sum (x/2)^2k / (k!)^2 */
static double i0_series(double x) {
  double t = 1, s = 1;
  for (int k = 1; k < 200; k++) {
    t *= (x / 2) * (x / 2) / ((double)k * k);
    s += t;
  }
  return s;
}

static void run_unary(tt_pjrt_t* p, const char* name, double (*ref)(double), double rtol) {
  th_arg_t a[] = {XT};
  tt_type_t ot = TY(TT_F32, XS);
  lc_result_t r;
  TT_CHECK(lc_run(p, name, a, 1, &ot, 1, &r));
  if (tt__cur_failed) return;
  float want[XS];
  for (int i = 0; i < XS; i++) want[i] = (float)ref(X[i]);
  TT_CHECK(lc_close_f32(r.out[0], want, XS, rtol, 1e-6));
  lc_free(&r);
}

static double i0e_ref(double x) { return i0_series(x) * exp(-x); }
static double erfcx_ref(double x) { return exp(x * x) * erfc(x); }
static double sinc_ref(double x) { return sin(M_PI * x) / (M_PI * x); }

static void check_unary(tt_pjrt_t* p) {
  run_unary(p, "aten::i0", i0_series, 2e-6);
  run_unary(p, "aten::special_i0e", i0e_ref, 2e-6);
  run_unary(p, "aten::special_bessel_j0", j0, 2e-6);
  run_unary(p, "aten::special_bessel_y1", y1, 2e-6);
  run_unary(p, "aten::special_erfcx", erfcx_ref, 2e-6);
  run_unary(p, "aten::sinc", sinc_ref, 2e-6);
}
static void test_unary(void) {
  if (lc_new) check_unary(lc_new);
  if (!tt__cur_failed && lc_old) check_unary(lc_old);
}

/* Chebyshev T_n(x) = cos(n acos x) inside [-1, 1]; the recurrence beyond;
 * n < 0 gives 0. Runs the while loop on both plugins. */
static void check_poly(tt_pjrt_t* p) {
  const float x[6] = {0.3f, -0.7f, 1.0f, -1.0f, 1.5f, 0.2f};
  const float n[6] = {3, 5, 4, 3, 6, -2};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 6), x), lc_tensor(TY(TT_F32, 6), n)};
  tt_type_t ot = TY(TT_F32, 6);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::special_chebyshev_polynomial_t", a, 2, &ot, 1, &r));
  if (tt__cur_failed) return;
  double t6 = 0, tp = 1, tq = 1.5; /* T_6(1.5) by the recurrence */
  for (int k = 2; k <= 6; k++) {
    t6 = 3.0 * tq - tp;
    tp = tq;
    tq = t6;
  }
  float want[6] = {(float)cos(3 * acos(0.3)), (float)cos(5 * acos(-0.7)), 1, -1, (float)t6, 0};
  TT_CHECK(lc_close_f32(r.out[0], want, 6, 2e-6, 1e-6));
  lc_free(&r);
}
static void test_poly(void) {
  if (lc_new) check_poly(lc_new);
  if (!tt__cur_failed && lc_old) check_poly(lc_old);
}

/* polygamma(1, 1) = zeta(2) = pi^2 / 6; polygamma(2, 1) = -2 zeta(3);
 * zeta(2, 2) = pi^2 / 6 - 1. */
static void test_gamma(void) {
  tt_pjrt_t* p = lc_new ? lc_new : lc_old;
  if (!p) return;
  const float one[2] = {1.0f, 2.0f};
  tt_type_t ot = TY(TT_F32, 2);
  lc_result_t r;
  const double z3 = 1.2020569031595942854;
  th_arg_t a1[] = {INT(1), lc_tensor(TY(TT_F32, 2), one)};
  TT_CHECK(lc_run(p, "aten::polygamma", a1, 2, &ot, 1, &r));
  if (tt__cur_failed) return;
  WANT_F32(r, 0, 2, 2e-6, (float)(M_PI * M_PI / 6), (float)(M_PI * M_PI / 6 - 1));
  lc_free(&r);
  th_arg_t a2[] = {INT(2), lc_tensor(TY(TT_F32, 2), one)};
  TT_CHECK(lc_run(p, "aten::polygamma", a2, 2, &ot, 1, &r));
  if (tt__cur_failed) return;
  WANT_F32(r, 0, 2, 2e-6, (float)(-2 * z3), (float)(-2 * (z3 - 1)));
  lc_free(&r);
  const float s[2] = {2.0f, 3.0f};
  th_arg_t a3[] = {lc_tensor(TY(TT_F32, 2), s), lc_tensor(TY(TT_F32, 2), one)};
  TT_CHECK(lc_run(p, "aten::special_zeta", a3, 2, &ot, 1, &r));
  if (tt__cur_failed) return;
  WANT_F32(r, 0, 2, 2e-6, (float)(M_PI * M_PI / 6), (float)(z3 - 1));
  lc_free(&r);
}

/* Q(n, x) = e^-x sum_{k<n} x^k / k! for integer n, summed in log space. */
static double q_int(int n, double x) {
  double s = 0;
  for (int k = 0; k < n; k++) s += exp(k * log(x) - x - lgamma(k + 1.0));
  return s;
}

/* igamma / igammac in f64 against closed forms, one pair per regime: P's
 * series, Q's series, Q's continued fraction, Temme's expansion (20 < a <
 * 200 and a > 200), and the boundary values. CPU's expansion uses pi
 * rounded to float (as we do), which puts it ~5e-10 off the exact value. */
#define IG 11
static void check_igamma(tt_pjrt_t* p) {
  const double a[IG] = {1.0, 0.5, 1.0, 0.5, 30.0, 300.0, 3.0, 0.0, -1.0, 2.0, INFINITY};
  const double x[IG] = {0.3, 0.1, 4.0, 2.0, 31.0, 290.0, 0.5, 1.0, 1.0, 0.0, 1.0};
  double q[IG];
  q[0] = exp(-0.3), q[1] = erfc(sqrt(0.1)), q[2] = exp(-4.0), q[3] = erfc(sqrt(2.0));
  q[4] = q_int(30, 31.0), q[5] = q_int(300, 290.0), q[6] = q_int(3, 0.5);
  q[7] = 0.0, q[8] = NAN, q[9] = 1.0, q[10] = 1.0;
  th_arg_t args[] = {lc_tensor(TY(TT_F64, IG), a), lc_tensor(TY(TT_F64, IG), x)};
  tt_type_t ot = TY(TT_F64, IG);
  for (int upper = 0; upper < 2; upper++) {
    lc_result_t r;
    TT_CHECK(lc_run(p, upper ? "aten::igammac" : "aten::igamma", args, 2, &ot, 1, &r));
    if (tt__cur_failed) return;
    const double* got = r.out[0];
    for (int i = 0; i < IG; i++) {
      double want = upper ? q[i] : 1.0 - q[i];
      double rtol = (i == 4 || i == 5) ? 2e-9 : 1e-12;
      bool ok = isnan(want) ? isnan(got[i]) : fabs(got[i] - want) <= 1e-13 + rtol * fabs(want);
      if (!ok) fprintf(stderr, "  %s(%g, %g) = %.17g, want %.17g\n", upper ? "igammac" : "igamma", a[i], x[i], got[i], want);
      TT_CHECK(ok);
    }
    lc_free(&r);
  }
}
static void test_igamma(void) {
  if (lc_new) check_igamma(lc_new);
  if (!tt__cur_failed && lc_old) check_igamma(lc_old);
}

/* gcd / lcm on int64 (Euclid's loop), frexp's two outputs. */
static void check_int(tt_pjrt_t* p) {
  const int64_t a[5] = {12, -18, 0, 7, 0}, b[5] = {8, 27, 5, -21, 0};
  th_arg_t g[] = {lc_tensor(TY(TT_I64, 5), a), lc_tensor(TY(TT_I64, 5), b)};
  tt_type_t ot = TY(TT_I64, 5);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::gcd", g, 2, &ot, 1, &r));
  if (tt__cur_failed) return;
  WANT_I64(r, 0, 5, 4, 9, 5, 7, 0);
  lc_free(&r);
  TT_CHECK(lc_run(p, "aten::lcm", g, 2, &ot, 1, &r));
  if (tt__cur_failed) return;
  WANT_I64(r, 0, 5, 24, 54, 0, 21, 0);
  lc_free(&r);
  const float x[4] = {8.0f, -0.375f, 0.0f, 1e-40f};
  th_arg_t fx[] = {lc_tensor(TY(TT_F32, 4), x)};
  tt_type_t fo[2] = {TY(TT_F32, 4), TY(TT_I32, 4)};
  TT_CHECK(lc_run(p, "aten::frexp.Tensor", fx, 1, fo, 2, &r));
  if (tt__cur_failed) return;
  int e3;
  float m3 = frexpf(1e-40f, &e3);
  WANT_F32(r, 0, 4, 0, 0.5f, -0.75f, 0.0f, m3);
  const int32_t* ex = r.out[1];
  TT_CHECK(ex[0] == 4 && ex[1] == -1 && ex[2] == 0 && ex[3] == e3);
  lc_free(&r);
}
static void test_int(void) {
  if (lc_new) check_int(lc_new);
  if (!tt__cur_failed && lc_old) check_int(lc_old);
}

int main(void) {
  lc_open();
  TT_RUN(test_unary);
  TT_RUN(test_poly);
  TT_RUN(test_gamma);
  TT_RUN(test_int);
  TT_RUN(test_igamma);
  lc_close();
  TT_REPORT();
}
