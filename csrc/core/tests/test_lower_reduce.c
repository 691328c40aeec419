/* Tests of the reduce lowering family against values computed in C: reductions
 * (reduce.c), scans (scan.c) and sorting (sort.c). */
#include "lower_check.h"

static float X[24]; /* 2x3x4 */
static void init_x(void) {
  for (int i = 0; i < 24; i++) X[i] = (float)((i * 7) % 11) - 4.5f + 0.25f * (float)(i % 3);
}
#define XARG lc_tensor(TY(TT_F32, 2, 3, 4), X)

/* reference reduction of X over a dim mask with op: 's' sum, 'p' prod, 'M' max, 'm' min */
static void ref_reduce(uint32_t mask, char op, float* out) {
  int64_t dims[3] = {2, 3, 4};
  int64_t od[3];
  for (int d = 0; d < 3; d++) od[d] = (mask & (1u << d)) ? 1 : dims[d];
  int64_t on = od[0] * od[1] * od[2];
  double acc[24];
  for (int64_t i = 0; i < on; i++) acc[i] = op == 's' ? 0 : op == 'p' ? 1 : op == 'M' ? -INFINITY : INFINITY;
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < 4; c++) {
        int64_t oa = (mask & 1) ? 0 : a, ob = (mask & 2) ? 0 : b, oc = (mask & 4) ? 0 : c;
        int64_t o = (oa * od[1] + ob) * od[2] + oc;
        double v = X[(a * 3 + b) * 4 + c];
        if (op == 's') acc[o] += v;
        else if (op == 'p') acc[o] *= v;
        else if (op == 'M') acc[o] = v > acc[o] ? v : acc[o];
        else acc[o] = v < acc[o] ? v : acc[o];
      }
  for (int64_t i = 0; i < on; i++) out[i] = (float)acc[i];
}

static void check_sum(tt_pjrt_t* p) {
  float want[24];
  lc_result_t r;
  th_arg_t a1[] = {XARG, NONE()};
  tt_type_t ot = TY0(TT_F32);
  TT_CHECK(lc_run(p, "aten::sum", a1, 2, &ot, 1, &r));
  ref_reduce(7, 's', want);
  TT_CHECK(lc_close_f32(r.out[0], want, 1, 1e-6, 1e-5));
  lc_free(&r);
  th_arg_t a2[] = {XARG, INTS(-1, 0), BOOL(1), NONE()};
  ot = TY(TT_F32, 1, 3, 1);
  TT_CHECK(lc_run(p, "aten::sum.dim_IntList", a2, 4, &ot, 1, &r));
  ref_reduce(5, 's', want);
  TT_CHECK(lc_close_f32(r.out[0], want, 3, 1e-6, 1e-5));
  lc_free(&r);
}
static void test_sum(void) {
  if (lc_new) check_sum(lc_new);
  if (!tt__cur_failed && lc_old) check_sum(lc_old);
}

static void test_sum_ints_bool_mean_prod(void) {
  if (!lc_new) return;
  const uint8_t b[6] = {1, 0, 1, 1, 1, 0};
  th_arg_t a1[] = {lc_tensor(TY(TT_BOOL, 2, 3), b), INTS(1), BOOL(0), NONE()};
  tt_type_t ot = TY(TT_I64, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::sum.dim_IntList", a1, 4, &ot, 1, &r));
  WANT_I64(r, 0, 2, 2, 2);
  lc_free(&r);
  const int32_t iv[6] = {3, -4, 5, 2, 2, 7};
  th_arg_t a2[] = {lc_tensor(TY(TT_I32, 2, 3), iv), INT(0), BOOL(0), NONE()};
  TT_CHECK(lc_run(lc_new, "aten::prod.dim_int", a2, 4, (tt_type_t[]){TY(TT_I64, 3)}, 1, &r));
  WANT_I64(r, 0, 3, 6, -8, 35);
  lc_free(&r);
  th_arg_t a3[] = {XARG, INTS(1), BOOL(0), NONE()};
  ot = TY(TT_F32, 2, 4);
  TT_CHECK(lc_run(lc_new, "aten::mean.dim", a3, 4, &ot, 1, &r));
  float want[8];
  ref_reduce(2, 's', want);
  for (int i = 0; i < 8; i++) want[i] /= 3;
  TT_CHECK(lc_close_f32(r.out[0], want, 8, 1e-6, 1e-6));
  lc_free(&r);
  /* nansum skips NaN */
  const float nv[4] = {1, NAN, 2, NAN};
  th_arg_t a4[] = {lc_tensor(TY(TT_F32, 4), nv), NONE(), BOOL(0), NONE()};
  TT_CHECK(lc_run(lc_new, "aten::nansum", a4, 4, (tt_type_t[]){TY0(TT_F32)}, 1, &r));
  WANT_F32(r, 0, 1, 0, 3);
  lc_free(&r);
}

static void test_amax_nan(void) {
  if (!lc_new) return;
  const float v[6] = {1, NAN, 3, -1, -2, -3};
  th_arg_t a1[] = {lc_tensor(TY(TT_F32, 2, 3), v), INTS(1), BOOL(0)};
  tt_type_t ot = TY(TT_F32, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::amax", a1, 3, &ot, 1, &r));
  float* g = r.out[0];
  if (!(isnan(g[0]) && g[1] == -1)) fprintf(stderr, "  got %g %g\n", g[0], g[1]);
  TT_CHECK(isnan(g[0]) && g[1] == -1);
  lc_free(&r);
  TT_CHECK(lc_run(lc_new, "aten::amin", a1, 3, &ot, 1, &r));
  g = r.out[0];
  TT_CHECK(isnan(g[0]) && g[1] == -3);
  lc_free(&r);
  const int64_t iv[4] = {5, -9, 12, 0};
  th_arg_t a2[] = {lc_tensor(TY(TT_I64, 4), iv)};
  TT_CHECK(lc_run(lc_new, "aten::min", a2, 1, (tt_type_t[]){TY0(TT_I64)}, 1, &r));
  WANT_I64(r, 0, 1, -9);
  lc_free(&r);
}

static void check_arg(tt_pjrt_t* p) {
  /* ties pick the first index; NaN is the extreme for both max and min */
  const float v[8] = {3, 1, 3, 0, 2, NAN, 5, NAN};
  th_arg_t a1[] = {lc_tensor(TY(TT_F32, 2, 4), v), INT(1), BOOL(0)};
  tt_type_t ot[2] = {TY(TT_F32, 2), TY(TT_I64, 2)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::max.dim", a1, 3, ot, 2, &r));
  float* g = r.out[0];
  TT_CHECK(g[0] == 3 && isnan(g[1]));
  WANT_I64(r, 1, 2, 0, 1);
  lc_free(&r);
  TT_CHECK(lc_run(p, "aten::min.dim", a1, 3, ot, 2, &r));
  WANT_I64(r, 1, 2, 3, 1);
  lc_free(&r);
  th_arg_t a2[] = {lc_tensor(TY(TT_F32, 2, 4), v), NONE(), BOOL(1)};
  tt_type_t o1 = TY(TT_I64, 1, 1);
  TT_CHECK(lc_run(p, "aten::argmax", a2, 3, &o1, 1, &r));
  WANT_I64(r, 0, 1, 5);
  lc_free(&r);
  const int32_t iv[6] = {4, 4, -1, 9, 9, 9};
  th_arg_t a3[] = {lc_tensor(TY(TT_I32, 2, 3), iv), INT(0), BOOL(1)};
  o1 = TY(TT_I64, 1, 3);
  TT_CHECK(lc_run(p, "aten::argmin", a3, 3, &o1, 1, &r));
  WANT_I64(r, 0, 3, 0, 0, 0);
  lc_free(&r);
}
static void test_argmax(void) {
  if (lc_new) check_arg(lc_new);
  if (!tt__cur_failed && lc_old) check_arg(lc_old);
}

static void test_any_all_count(void) {
  if (!lc_new) return;
  const float v[6] = {0, 0, 1, 2, 3, -1};
  lc_result_t r;
  th_arg_t a1[] = {lc_tensor(TY(TT_F32, 2, 3), v), INT(1), BOOL(0)};
  tt_type_t ot = TY(TT_BOOL, 2);
  TT_CHECK(lc_run(lc_new, "aten::any.dim", a1, 3, &ot, 1, &r));
  TT_CHECK(lc_eq_bytes(r.out[0], (const uint8_t[]){1, 1}, 2));
  lc_free(&r);
  TT_CHECK(lc_run(lc_new, "aten::all.dim", a1, 3, &ot, 1, &r));
  TT_CHECK(lc_eq_bytes(r.out[0], (const uint8_t[]){0, 1}, 2));
  lc_free(&r);
  /* any.dims with an empty list reduces nothing */
  th_arg_t a2[] = {lc_tensor(TY(TT_F32, 2, 3), v), INTS0(), BOOL(0)};
  ot = TY(TT_BOOL, 2, 3);
  TT_CHECK(lc_run(lc_new, "aten::any.dims", a2, 3, &ot, 1, &r));
  TT_CHECK(lc_eq_bytes(r.out[0], (const uint8_t[]){0, 0, 1, 1, 1, 1}, 6));
  lc_free(&r);
  const uint8_t u8[3] = {0, 7, 1};
  th_arg_t a3[] = {lc_tensor(TY(TT_U8, 3), u8)};
  ot = TY0(TT_U8);
  TT_CHECK(lc_run(lc_new, "aten::all", a3, 1, &ot, 1, &r));
  TT_CHECK(((uint8_t*)r.out[0])[0] == 0);
  lc_free(&r);
  th_arg_t a4[] = {lc_tensor(TY(TT_F32, 2, 3), v), INTS0()};
  ot = TY0(TT_I64);
  TT_CHECK(lc_run(lc_new, "aten::count_nonzero.dim_IntList", a4, 2, &ot, 1, &r));
  WANT_I64(r, 0, 1, 4);
  lc_free(&r);
}

static void test_var_std(void) {
  if (!lc_new) return;
  const float v[8] = {1, 2, 3, 4, -1, 5, 2, 10};
  double m0 = 2.5, m1 = 4, ss0 = 5, ss1 = 25 + 1 + 4 + 36;
  lc_result_t r;
  th_arg_t a1[] = {lc_tensor(TY(TT_F32, 2, 4), v), INTS(1), NONE(), BOOL(0)};
  tt_type_t ot = TY(TT_F32, 2);
  TT_CHECK(lc_run(lc_new, "aten::var.correction", a1, 4, &ot, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, (float)(ss0 / 3), (float)(ss1 / 3));
  lc_free(&r);
  th_arg_t a2[] = {lc_tensor(TY(TT_F32, 2, 4), v), INTS(1), SI(0), BOOL(1)};
  tt_type_t o2[2] = {TY(TT_F32, 2, 1), TY(TT_F32, 2, 1)};
  TT_CHECK(lc_run(lc_new, "aten::std_mean.correction", a2, 4, o2, 2, &r));
  WANT_F32(r, 0, 2, 1e-6, (float)sqrt(ss0 / 4), (float)sqrt(ss1 / 4));
  WANT_F32(r, 1, 2, 1e-6, (float)m0, (float)m1);
  lc_free(&r);
  /* correction larger than N: divisor clamps at 0 -> inf */
  th_arg_t a3[] = {lc_tensor(TY(TT_F32, 2, 4), v), NONE(), SF(9.0), BOOL(0)};
  ot = TY0(TT_F32);
  TT_CHECK(lc_run(lc_new, "aten::var.correction", a3, 4, &ot, 1, &r));
  TT_CHECK(isinf(((float*)r.out[0])[0]));
  lc_free(&r);
}

static void test_logsumexp(void) {
  if (!lc_new) return;
  const float v[6] = {1, 2, 3, -INFINITY, -INFINITY, -INFINITY};
  th_arg_t a1[] = {lc_tensor(TY(TT_F32, 2, 3), v), INTS(1), BOOL(0)};
  tt_type_t ot = TY(TT_F32, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::logsumexp", a1, 3, &ot, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, (float)log(exp(1) + exp(2) + exp(3)), -INFINITY);
  lc_free(&r);
}

/* complex64: the max of the real parts; row 1 has re = +inf: (inf, pi/4) as on CPU */
static void test_logsumexp_complex(void) {
  if (!lc_new) return;
  const float v[8] = {1, 2, 0.5f, -1, /* row 1: */ 1, 2, INFINITY, 1};
  th_arg_t a1[] = {lc_tensor(TY(TT_C64, 2, 2), v), INTS(1), BOOL(0)};
  tt_type_t ot = TY(TT_C64, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::logsumexp", a1, 3, &ot, 1, &r));
  double complex_re = exp(1) * cos(2) + exp(0.5) * cos(-1), complex_im = exp(1) * sin(2) + exp(0.5) * sin(-1);
  const float* o = r.out[0];
  TT_CHECK(fabs(o[0] - 0.5 * log(complex_re * complex_re + complex_im * complex_im)) < 1e-5);
  TT_CHECK(fabs(o[1] - atan2(complex_im, complex_re)) < 1e-5);
  TT_CHECK(isinf(o[2]) && o[2] > 0 && fabs(o[3] - M_PI / 4) < 1e-6);
  lc_free(&r);
}

static void test_norm(void) {
  if (!lc_new) return;
  const float v[4] = {3, -4, 0, 1};
  struct { double ord; double want; } cases[] = {
      {2, sqrt(26)}, {1, 8}, {INFINITY, 4}, {-INFINITY, 0}, {0, 3}, {3, cbrt(27 + 64 + 1)},
      {0.5, pow(sqrt(3) + 2 + 1, 2)},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    th_arg_t a[] = {lc_tensor(TY(TT_F32, 4), v), SF(cases[k].ord), NONE(), BOOL(0), NONE()};
    tt_type_t ot = TY0(TT_F32);
    lc_result_t r;
    TT_CHECK(lc_run(lc_new, "aten::linalg_vector_norm", a, 5, &ot, 1, &r));
    if (!lc_close_f32(r.out[0], (const float[]){(float)cases[k].want}, 1, 1e-5, 1e-6))
      fprintf(stderr, "  ord %g\n", cases[k].ord);
    TT_CHECK(lc_close_f32(r.out[0], (const float[]){(float)cases[k].want}, 1, 1e-5, 1e-6));
    lc_free(&r);
  }
  /* integer ord, norm.ScalarOpt_dim with p absent (2) */
  th_arg_t a2[] = {lc_tensor(TY(TT_F32, 2, 2), v), NONE(), INTS(1), BOOL(0)};
  tt_type_t ot = TY(TT_F32, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::norm.ScalarOpt_dim", a2, 4, &ot, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, 5, 1);
  lc_free(&r);
}

static void test_cumsum(void) {
  if (!lc_new) return;
  float v[14];
  for (int i = 0; i < 14; i++) v[i] = (float)(i % 4) - 1;
  th_arg_t a1[] = {lc_tensor(TY(TT_F32, 2, 7), v), INT(1), NONE()};
  tt_type_t ot = TY(TT_F32, 2, 7);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::cumsum", a1, 3, &ot, 1, &r));
  float want[14];
  for (int row = 0; row < 2; row++) {
    float s = 0;
    for (int j = 0; j < 7; j++) want[row * 7 + j] = (s += v[row * 7 + j]);
  }
  TT_CHECK(lc_close_f32(r.out[0], want, 14, 0, 0));
  lc_free(&r);
  const uint8_t b[5] = {1, 0, 1, 1, 0};
  th_arg_t a2[] = {lc_tensor(TY(TT_BOOL, 5), b), INT(0), NONE()};
  ot = TY(TT_I64, 5);
  TT_CHECK(lc_run(lc_new, "aten::cumsum", a2, 3, &ot, 1, &r));
  WANT_I64(r, 0, 5, 1, 1, 2, 3, 3);
  lc_free(&r);
  const int64_t iv[5] = {2, -3, 1, 4, 2};
  th_arg_t a3[] = {lc_tensor(TY(TT_I64, 5), iv), INT(-1), NONE()};
  TT_CHECK(lc_run(lc_new, "aten::cumprod", a3, 3, &ot, 1, &r));
  WANT_I64(r, 0, 5, 2, -6, -6, -24, -48);
  lc_free(&r);
}

static void test_aminmax(void) {
  if (!lc_new) return;
  th_arg_t a1[] = {XARG, INT(2), BOOL(0)};
  tt_type_t ot[2] = {TY(TT_F32, 2, 3), TY(TT_F32, 2, 3)};
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::aminmax", a1, 3, ot, 2, &r));
  float wmin[6], wmax[6];
  ref_reduce(4, 'm', wmin);
  ref_reduce(4, 'M', wmax);
  TT_CHECK(lc_close_f32(r.out[0], wmin, 6, 0, 0));
  TT_CHECK(lc_close_f32(r.out[1], wmax, 6, 0, 0));
  lc_free(&r);
}

/* ---- scan.c ------------------------------------------------------------------------ */
static void check_scans(tt_pjrt_t* p) {
  const float x[6] = {1, 3, 3, 2, NAN, 5};
  tt_type_t ot[2] = {TY(TT_F32, 6), TY(TT_I64, 6)};
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 6), x), OUT(), OUT(), INT(0)};
  TT_CHECK(lc_run(p, "aten::_cummax_helper", a, NARGS(a), ot, 2, &r));
  const float* v = r.out[0];
  TT_CHECK(v[0] == 1 && v[1] == 3 && v[2] == 3 && v[3] == 3 && isnan(v[4]) && isnan(v[5]));
  WANT_I64(r, 1, 6, 0, 1, 2, 2, 4, 4); /* ties: the last index; NaN sticks */
  lc_free(&r);
  const float y[4] = {0, 0, -INFINITY, 1};
  tt_type_t lt = TY(TT_F32, 4);
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 4), y), INT(0)};
  TT_CHECK(lc_run(p, "aten::_logcumsumexp", b, NARGS(b), &lt, 1, &r));
  WANT_F32(r, 0, 4, 1e-6, 0, (float)log(2.0), (float)log(2.0), (float)log(2.0 + exp(1.0)));
  lc_free(&r);
  /* segment_reduce mean over lengths {2, 0, 2}: the empty segment is NaN */
  const float d[4] = {1, 2, 3, 5};
  const int64_t len[3] = {2, 0, 2};
  tt_type_t st = TY(TT_F32, 3);
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 4), d), lc_str("mean"), lc_tensor(TY(TT_I64, 3), len), NONE(), NONE(),
                  INT(0), BOOL(0), NONE()};
  TT_CHECK(lc_run(p, "aten::segment_reduce", c, NARGS(c), &st, 1, &r));
  const float* s = r.out[0];
  TT_CHECK(s[0] == 1.5f && isnan(s[1]) && s[2] == 4.0f);
  lc_free(&r);
}
static void test_scans(void) {
  if (lc_new) check_scans(lc_new);
  if (!tt__cur_failed && lc_old) check_scans(lc_old);
}

/* ---- sort.c ------------------------------------------------------------------------ */
#define NAN_F ((float)NAN)

static void check_sort(tt_pjrt_t* p) {
  lc_result_t r;
  /* stable sort with NaN (largest) and ties, both directions */
  const float x[5] = {3, NAN_F, -1, 2, -1};
  tt_type_t o2[2] = {TY(TT_F32, 5), TY(TT_I64, 5)};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 5), x), BOOL(1), INT(-1), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::sort.stable", a, 4, o2, 2, &r));
  WANT_F32(r, 0, 5, 0, -1, -1, 2, 3, NAN_F);
  WANT_I64(r, 1, 5, 2, 4, 3, 0, 1);
  lc_free(&r);
  a[3] = BOOL(1);
  TT_CHECK(lc_run(p, "aten::sort.stable", a, 4, o2, 2, &r));
  WANT_F32(r, 0, 5, 0, NAN_F, 3, 2, -1, -1);
  WANT_I64(r, 1, 5, 1, 0, 3, 2, 4);
  lc_free(&r);
  /* topk on int64, largest and smallest */
  const int64_t y[8] = {5, 1, 7, 3, 0, 9, 2, 8};
  tt_type_t t2[2] = {TY(TT_I64, 2, 2), TY(TT_I64, 2, 2)};
  th_arg_t b[] = {lc_tensor(TY(TT_I64, 2, 4), y), INT(2), INT(1), BOOL(1), BOOL(1)};
  TT_CHECK(lc_run(p, "aten::topk", b, 5, t2, 2, &r));
  WANT_I64(r, 0, 4, 7, 5, 9, 8);
  WANT_I64(r, 1, 4, 2, 0, 1, 3);
  lc_free(&r);
  b[3] = BOOL(0);
  TT_CHECK(lc_run(p, "aten::topk", b, 5, t2, 2, &r));
  WANT_I64(r, 0, 4, 1, 3, 0, 2);
  WANT_I64(r, 1, 4, 1, 3, 0, 2);
  lc_free(&r);
  /* median.dim: a row with NaN gives its first NaN; nanmedian skips NaN */
  const float m[8] = {4, 1, NAN_F, 2, 3, 1, 2, 0};
  tt_type_t m2[2] = {TY(TT_F32, 2), TY(TT_I64, 2)};
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 2, 4), m), INT(1), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::median.dim", c, 3, m2, 2, &r));
  WANT_F32(r, 0, 2, 0, NAN_F, 1);
  WANT_I64(r, 1, 2, 2, 1);
  lc_free(&r);
  TT_CHECK(lc_run(p, "aten::nanmedian.dim", c, 3, m2, 2, &r));
  WANT_F32(r, 0, 2, 0, 2, 1);
  WANT_I64(r, 1, 2, 3, 1);
  lc_free(&r);
  /* mode: the smallest most frequent value, its last index */
  const int64_t md[6] = {1, 2, 2, 1, 3, 3};
  tt_type_t mo[2] = {TY(TT_I64, 1), TY(TT_I64, 1)};
  th_arg_t d[] = {lc_tensor(TY(TT_I64, 1, 6), md), INT(1), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::mode", d, 3, mo, 2, &r));
  WANT_I64(r, 0, 1, 1);
  WANT_I64(r, 1, 1, 3);
  lc_free(&r);
}
static void test_sort(void) {
  if (lc_new) check_sort(lc_new);
  if (!tt__cur_failed && lc_old) check_sort(lc_old);
}

int main(void) {
  init_x();
  lc_open();
  TT_RUN(test_sum);
  TT_RUN(test_sum_ints_bool_mean_prod);
  TT_RUN(test_amax_nan);
  TT_RUN(test_argmax);
  TT_RUN(test_any_all_count);
  TT_RUN(test_var_std);
  TT_RUN(test_logsumexp);
  TT_RUN(test_logsumexp_complex);
  TT_RUN(test_norm);
  TT_RUN(test_cumsum);
  TT_RUN(test_aminmax);
  TT_RUN(test_scans);
  TT_RUN(test_sort);
  lc_close();
  TT_REPORT();
}
