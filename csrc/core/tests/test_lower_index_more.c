/* Tests of the index_more, index_more_misc, index_more_search, scan and
 * random_more lowering families against values computed in C. */
#include "lower_check.h"

/* Each check runs on both plugins (API 0.115 and 0.81) where present. */
#define BOTH(name)                                   \
  static void name(void) {                           \
    if (lc_new) check_##name(lc_new);                \
    if (!tt__cur_failed && lc_old) check_##name(lc_old); \
  }

static void check_test_index_reduce_masked_scatter_take(tt_pjrt_t* p) {
  const float self[6] = {1, 2, 3, 4, 5, 6}; /* 3x2 */
  const int64_t idx[3] = {0, 2, 0};
  const float src[6] = {2, 3, 4, 5, 6, 7};
  tt_type_t ot = TY(TT_F32, 3, 2);
  lc_result_t r;
  /* prod without self: row 0 = 2*6, 3*7; row 2 = 4, 5; row 1 kept */
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 3, 2), self), INT(0), lc_tensor(TY(TT_I64, 3), idx),
                  lc_tensor(TY(TT_F32, 3, 2), src), lc_str("prod"), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::index_reduce", a, NARGS(a), &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 12, 21, 3, 4, 4, 5);
  lc_free(&r);
  /* masked_scatter: true positions take source elements in order */
  const uint8_t m[6] = {0, 1, 1, 0, 0, 1};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 3, 2), self), lc_tensor(TY(TT_BOOL, 3, 2), m), lc_tensor(TY(TT_F32, 6), src)};
  TT_CHECK(lc_run(p, "aten::masked_scatter", b, NARGS(b), &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 1, 2, 3, 4, 5, 4);
  lc_free(&r);
  /* take with a negative index */
  const int64_t ti[2] = {-1, 2};
  tt_type_t t2 = TY(TT_F32, 2);
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 3, 2), self), lc_tensor(TY(TT_I64, 2), ti)};
  TT_CHECK(lc_run(p, "aten::take", c, NARGS(c), &t2, 1, &r));
  WANT_F32(r, 0, 2, 0, 6, 3);
  lc_free(&r);
}

static void check_test_search_histc(tt_pjrt_t* p) {
  const float seq[4] = {1, 3, 3, 5}, v[5] = {0, 3, 4, 6, NAN};
  tt_type_t ot = TY(TT_I64, 5);
  lc_result_t r;
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 4), seq), lc_tensor(TY(TT_F32, 5), v), BOOL(0), BOOL(1), NONE(), NONE()};
  TT_CHECK(lc_run(p, "aten::searchsorted.Tensor", a, NARGS(a), &ot, 1, &r));
  WANT_I64(r, 0, 5, 0, 3, 3, 4, 4); /* right side; NaN goes to the end as on CPU */
  lc_free(&r);
  /* histc over [0, 4] with 4 bins: 4.0 lands in the last bin, 5 and NaN are ignored */
  const float h[7] = {0, 0.5, 1, 3.99f, 4, 5, NAN};
  tt_type_t hot = TY(TT_F32, 4);
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 7), h), INT(4), SF(0), SF(4)};
  TT_CHECK(lc_run(p, "aten::histc", b, NARGS(b), &hot, 1, &r));
  WANT_F32(r, 0, 4, 0, 2, 1, 0, 2);
  lc_free(&r);
}

/* histogramdd: bins from linspace edges (a linear guess, then CPU's search of
 * its neighbours), bins from edge tensors (binary search), and the edges
 * themselves, bit for bit: CPU's linspace rounds start + step * i (or
 * end - step * (ne - 1 - i) in the second half) once, as an FMA. */
static void check_test_histogramdd(tt_pjrt_t* p) {
  lc_result_t r;
  /* 4 points in 2-D, 2x2 bins over the data's range [0, 1] in each
   * dimension: points on the right edge land in the last (closed) bin */
  const float pts[8] = {0, 0, 1, 1, 0.5f, 0, 1, 0};
  tt_type_t hot = TY(TT_F32, 2, 2);
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 4, 2), pts), INTS(2, 2), NONE(), NONE(), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::_histogramdd_from_bin_cts", a, NARGS(a), &hot, 1, &r));
  WANT_F32(r, 0, 4, 0, 1, 0, 2, 1);
  lc_free(&r);
  /* the same points over edge tensors {0, 0.5, 1} and {-1, 0, 2}: 0.5 opens
   * the second bin of dimension 0; weights 1, 2, 4, 8 */
  const float e0[3] = {0, 0.5f, 1}, e1[3] = {-1, 0, 2}, w[4] = {1, 2, 4, 8};
  th_arg_t items[2] = {lc_tensor(TY(TT_F32, 3), e0), lc_tensor(TY(TT_F32, 3), e1)};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 4, 2), pts), lc_list(items, 2), lc_tensor(TY(TT_F32, 4), w), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::_histogramdd_from_bin_tensors", b, NARGS(b), &hot, 1, &r));
  WANT_F32(r, 0, 4, 0, 0, 1, 0, 14);
  lc_free(&r);
  /* edges over the data's ranges [0.3, 7.9] (19 bins) and [1, 2] (3 bins),
   * f32 then f64; an unfused start + step * i is 1 ulp off at i = 7 */
  const float pf[4] = {0.3f, 1, 7.9f, 2};
  tt_type_t eot[2] = {TY(TT_F32, 20), TY(TT_F32, 4)};
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 2, 2), pf), INTS(19, 3), NONE(), NONE(), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::_histogramdd_bin_edges", c, NARGS(c), eot, 2, &r));
  for (int k = 0; k < 2 && !tt__cur_failed; k++) {
    int ne = k ? 4 : 20;
    float s = pf[k], e = pf[2 + k], step = (e - s) / (float)(ne - 1);
    const float* got = r.out[k];
    for (int i = 0; i < ne; i++) {
      float want = i < ne / 2 ? fmaf(step, (float)i, s) : fmaf(-step, (float)(ne - 1 - i), e);
      if (memcmp(&got[i], &want, 4)) {
        fprintf(stderr, "  f32 edge %d of dimension %d: got %a, want %a\n", i, k, got[i], want);
        TT_CHECK(false);
        break;
      }
    }
  }
  lc_free(&r);
  const double pd[4] = {0.1, -3, 0.7, 1e-3};
  tt_type_t dot[2] = {TY(TT_F64, 34), TY(TT_F64, 8)};
  th_arg_t d[] = {lc_tensor(TY(TT_F64, 2, 2), pd), INTS(33, 7), NONE(), NONE(), BOOL(0)};
  TT_CHECK(lc_run(p, "aten::_histogramdd_bin_edges", d, NARGS(d), dot, 2, &r));
  for (int k = 0; k < 2 && !tt__cur_failed; k++) {
    int ne = k ? 8 : 34;
    double s = pd[k], e = pd[2 + k], step = (e - s) / (double)(ne - 1);
    const double* got = r.out[k];
    for (int i = 0; i < ne; i++) {
      double want = i < ne / 2 ? fma(step, (double)i, s) : fma(-step, (double)(ne - 1 - i), e);
      if (memcmp(&got[i], &want, 8)) {
        fprintf(stderr, "  f64 edge %d of dimension %d: got %a, want %a\n", i, k, got[i], want);
        TT_CHECK(false);
        break;
      }
    }
  }
  lc_free(&r);
}

static void check_test_scans(tt_pjrt_t* p) {
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

static void check_test_tri_indices_multinomial(tt_pjrt_t* p) {
  tt_type_t ot = TY(TT_I64, 2, 6);
  lc_result_t r;
  th_arg_t a[] = {INT(3), INT(3), INT(0), NONE(), NONE(), NONE(), NONE()};
  TT_CHECK(lc_run(p, "aten::triu_indices", a, NARGS(a), &ot, 1, &r));
  WANT_I64(r, 0, 12, 0, 0, 0, 1, 1, 2, 0, 1, 2, 1, 2, 2); /* rows, then columns */
  lc_free(&r);
  /* without replacement every draw is distinct and never a zero-weight category */
  const float w[4] = {1, 0, 2, 3};
  tt_type_t mt = TY(TT_I64, 3);
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 4), w), INT(3), BOOL(0), NONE(), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(p, "aten::multinomial", b, NARGS(b), &mt, 1, &r));
  const int64_t* s = r.out[0];
  TT_CHECK(s[0] != s[1] && s[1] != s[2] && s[0] != s[2]);
  for (int i = 0; i < 3; i++) TT_CHECK(s[i] >= 0 && s[i] < 4 && s[i] != 1);
  lc_free(&r);
}

/* The device-side assertions add one check (with CPU's message) and no
 * output; more or fewer than one element is refused at lowering time. The
 * check's run is tested through the runtime (tests/semantics/test_assert_async.py). */
static const char* assert_lowering(const char* name, tt_dtype_t dt, int64_t n, const char* msg, int* nchecks,
                                   tt_status_t* st) {
  static char got[128];
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  tt_type_t t = n == 1 ? tt_type_make(dt, 0, NULL) : tt_type_make(dt, 1, &n);
  tt_larg_t a[2];
  memset(a, 0, sizeof a);
  a[0].kind = TT_ARG_TENSOR;
  a[0].tier = TT_TIER_ZERO_DIM;
  a[0].val = tt_shlo_param(f, &t);
  a[1].kind = TT_ARG_STR;
  a[1].str = msg;
  tt_lctx_t c = {f, tt_lower_find(name), a, msg ? 2 : 1, NULL, 0, NULL};
  *st = c.op ? c.op->fn(&c) : tt_status_make(TT_NOT_FOUND, "%s", name);
  *nchecks = tt_shlo_check_count(f);
  snprintf(got, sizeof got, "%s", *nchecks ? tt_shlo_check_message(f, 0) : "");
  tt_shlo_fn_destroy(f);
  return got;
}

static void test_assert_async(void) {
  int nc;
  tt_status_t st;
  const char* m = assert_lowering("aten::_assert_async", TT_F32, 1, NULL, &nc, &st);
  TT_CHECK(!st && nc == 1 && strcmp(m, "Expected Tensor with single nonzero value, but got zero") == 0);
  m = assert_lowering("aten::_assert_async.msg", TT_C64, 1, "mine", &nc, &st);
  TT_CHECK(!st && nc == 1 && strcmp(m, "mine") == 0);
  m = assert_lowering("aten::_assert_async.msg", TT_BOOL, 1, "", &nc, &st);
  TT_CHECK(!st && nc == 1 && strcmp(m, "Assertion is failed") == 0);
  assert_lowering("aten::_assert_async", TT_I64, 2, NULL, &nc, &st);
  TT_CHECK(st && nc == 0 && strstr(tt_status_message(st), "more than one value"));
  tt_status_free(st);
  assert_lowering("aten::_assert_async", TT_F32, 0, NULL, &nc, &st);
  TT_CHECK(st && nc == 0 && strstr(tt_status_message(st), "no values"));
  tt_status_free(st);
}

BOTH(test_index_reduce_masked_scatter_take)
BOTH(test_search_histc)
BOTH(test_histogramdd)
BOTH(test_scans)
BOTH(test_tri_indices_multinomial)

int main(void) {
  lc_open();
  TT_RUN(test_index_reduce_masked_scatter_take);
  TT_RUN(test_search_histc);
  TT_RUN(test_histogramdd);
  TT_RUN(test_scans);
  TT_RUN(test_tri_indices_multinomial);
  TT_RUN(test_assert_async);
  lc_close();
  TT_REPORT();
}
