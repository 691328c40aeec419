/* Tests of the index lowering family against values computed in C: index.c
 * (index_select, gather, cat, scatter, index.Tensor, index_put), index_more.c,
 * index_more_search.c and index_more_misc.c. */
#include "lower_check.h"

static float X[60]; /* 3x4x5, X[i] = i */
#define X345 lc_tensor(TY(TT_F32, 3, 4, 5), X)
static float at3(int a, int b, int c) { return X[(a * 4 + b) * 5 + c]; }

static void check_index_select(tt_pjrt_t* p) {
  const int64_t idx[3] = {2, 3, 0}; /* index_select takes no negative index (CPU raises) */
  th_arg_t a[] = {X345, INT(1), lc_tensor(TY(TT_I64, 3), idx)};
  tt_type_t ot = TY(TT_F32, 3, 3, 5);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::index_select", a, 3, &ot, 1, &r));
  const float* g = r.out[0];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 5; k++) TT_CHECK(g[(i * 3 + j) * 5 + k] == at3(i, j == 0 ? 2 : j == 1 ? 3 : 0, k));
  lc_free(&r);
}
static void test_index_select(void) {
  if (lc_new) check_index_select(lc_new);
  if (!tt__cur_failed && lc_old) check_index_select(lc_old);
}

static void test_gather_index_add(void) {
  if (!lc_new) return;
  const float v[6] = {1, 2, 3, 4, 5, 6}; /* 2x3 */
  const int64_t gi[4] = {2, 0, 1, 1};    /* 2x2 */
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 3), v), INT(1), lc_tensor(TY(TT_I64, 2, 2), gi), BOOL(0)};
  tt_type_t ot = TY(TT_F32, 2, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::gather", a, 4, &ot, 1, &r));
  WANT_F32(r, 0, 4, 0, 3, 1, 5, 5);
  lc_free(&r);
  /* index_add along dim 0 with duplicates and alpha */
  const int64_t ii[3] = {1, 0, 1};
  const float src[9] = {1, 1, 1, 2, 2, 2, 10, 20, 30};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2, 3), v), INT(0), lc_tensor(TY(TT_I64, 3), ii),
                  lc_tensor(TY(TT_F32, 3, 3), src), SF(0.5)};
  ot = TY(TT_F32, 2, 3);
  TT_CHECK(lc_run(lc_new, "aten::index_add", b, 5, &ot, 1, &r));
  WANT_F32(r, 0, 6, 1e-6, 1 + 1, 2 + 1, 3 + 1, 4 + 0.5f + 5, 5 + 0.5f + 10, 6 + 0.5f + 15);
  lc_free(&r);
}

static void test_cat(void) {
  tt_pjrt_t* p = lc_old ? lc_old : lc_new;
  if (!p) return;
  const float a[4] = {1, 2, 3, 4};
  const int32_t b[2] = {7, 8};
  th_arg_t items[] = {lc_tensor(TY(TT_F32, 2, 2), a), lc_tensor(TY(TT_F32, 0), a),
                      lc_tensor(TY(TT_I32, 2, 1), b)};
  th_arg_t args[] = {lc_list(items, 3), INT(-1)};
  tt_type_t ot = TY(TT_F32, 2, 3);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::cat", args, 2, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 1, 2, 7, 3, 4, 8);
  lc_free(&r);
}

static const float SRC[6] = {1, 2, 3, 4, 5, 6}; /* 2x3: only the 2x2 corner is used */
static const int64_t SIDX[4] = {1, 2, 0, 0};     /* 2x2 */

static void check_scatter_add(tt_pjrt_t* p) {
  const float self[6] = {0, 0, 0, 0, 0, 0}; /* 2x3 */
  lc_result_t r;
  tt_type_t ot = TY(TT_F32, 2, 3);
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 3), self), INT(1), lc_tensor(TY(TT_I64, 2, 2), SIDX),
                  lc_tensor(TY(TT_F32, 2, 3), SRC)};
  TT_CHECK(lc_run(p, "aten::scatter_add", a, 4, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 0, 1, 2, 4 + 5, 0, 0);
  lc_free(&r);
}

static void test_scatter(void) {
  if (lc_new) check_scatter_add(lc_new);
  if (!tt__cur_failed && lc_old) check_scatter_add(lc_old);
  if (tt__cur_failed || !lc_new) return;
  const int64_t* idx = SIDX;
  const float* src = SRC;
  lc_result_t r;
  tt_type_t ot = TY(TT_F32, 2, 3);
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2, 3), src), INT(1), lc_tensor(TY(TT_I64, 2, 2), idx), SF(-1.0)};
  TT_CHECK(lc_run(lc_new, "aten::scatter.value", b, 4, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 1, -1, -1, -1, 5, 6);
  lc_free(&r);
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 2, 3), src), INT(1), lc_tensor(TY(TT_I64, 2, 2), idx),
                  lc_tensor(TY(TT_F32, 2, 3), src), lc_str("multiply")};
  TT_CHECK(lc_run(lc_new, "aten::scatter.reduce", c, 5, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 1, 2 * 1, 3 * 2, 4 * 4 * 5, 5, 6);
  lc_free(&r);
  /* scatter_reduce amax without self; mean with self */
  th_arg_t d[] = {lc_tensor(TY(TT_F32, 2, 3), src), INT(1), lc_tensor(TY(TT_I64, 2, 2), idx),
                  lc_tensor(TY(TT_F32, 2, 3), src), lc_str("amax"), BOOL(0)};
  TT_CHECK(lc_run(lc_new, "aten::scatter_reduce.two", d, 6, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 1, 1, 2, 5, 5, 6);
  lc_free(&r);
  d[4] = lc_str("mean");
  d[5] = BOOL(1);
  TT_CHECK(lc_run(lc_new, "aten::scatter_reduce.two", d, 6, &ot, 1, &r));
  WANT_F32(r, 0, 6, 1e-6, 1, 1.5f, 2.5f, (4 + 4 + 5) / 3.0f, 5, 6);
  lc_free(&r);
}

static void check_index(tt_pjrt_t* p) {
  lc_result_t r;
  /* x[i0, :, i2] with i0=[2,0], i2=[-1,1]: non-adjacent -> (2, 4) */
  const int64_t i0[2] = {2, 0}, i2[2] = {-1, 1};
  th_arg_t items[] = {lc_tensor(TY(TT_I64, 2), i0), NONE(), lc_tensor(TY(TT_I64, 2), i2)};
  th_arg_t a[] = {X345, lc_list(items, 3)};
  tt_type_t ot = TY(TT_F32, 2, 4);
  TT_CHECK(lc_run(p, "aten::index.Tensor", a, 2, &ot, 1, &r));
  const float* g = r.out[0];
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 4; j++) TT_CHECK(g[k * 4 + j] == at3(k ? 0 : 2, j, k ? 1 : 4));
  lc_free(&r);
}

static void test_index_tensor(void) {
  if (lc_new) check_index(lc_new);
  if (!tt__cur_failed && lc_old) check_index(lc_old);
  if (tt__cur_failed || !lc_new) return;
  /* x[:, i1, i2] with i1 (2,1), i2 (3,): adjacent -> (3, 2, 3, ...) = (3,2,3) */
  const int64_t i1[2] = {3, 1}, i2[3] = {0, 4, 2};
  th_arg_t items[] = {NONE(), lc_tensor(TY(TT_I64, 2, 1), i1), lc_tensor(TY(TT_I64, 3), i2)};
  th_arg_t a[] = {X345, lc_list(items, 3)};
  tt_type_t ot = TY(TT_F32, 3, 2, 3);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::index.Tensor", a, 2, &ot, 1, &r));
  const float* g = r.out[0];
  for (int a0 = 0; a0 < 3; a0++)
    for (int u = 0; u < 2; u++)
      for (int v = 0; v < 3; v++) TT_CHECK(g[(a0 * 2 + u) * 3 + v] == at3(a0, (int)i1[u], (int)i2[v]));
  lc_free(&r);
  /* boolean mask over the first two dims; the out type gives the count */
  uint8_t m[12] = {0};
  m[1] = m[6] = m[11] = 1;
  th_arg_t mi[] = {lc_tensor(TY(TT_BOOL, 3, 4), m)};
  th_arg_t b[] = {X345, lc_list(mi, 1)};
  ot = TY(TT_F32, 3, 5);
  TT_CHECK(lc_run(lc_new, "aten::index.Tensor", b, 2, &ot, 1, &r));
  g = r.out[0];
  for (int k = 0; k < 5; k++)
    TT_CHECK(g[k] == at3(0, 1, k) && g[5 + k] == at3(1, 2, k) && g[10 + k] == at3(2, 3, k));
  lc_free(&r);
}

static void test_index_put(void) {
  if (!lc_new) return;
  const float self[6] = {1, 2, 3, 4, 5, 6}; /* 2x3 */
  const int64_t r0[3] = {0, 1, 0}, c0[3] = {2, 2, 2};
  const float vals[3] = {10, 20, 30};
  th_arg_t items[] = {lc_tensor(TY(TT_I64, 3), r0), lc_tensor(TY(TT_I64, 3), c0)};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 2, 3), self), lc_list(items, 2), lc_tensor(TY(TT_F32, 3), vals),
                  BOOL(1)};
  tt_type_t ot = TY(TT_F32, 2, 3);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::index_put_", a, 4, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 1, 2, 3 + 10 + 30, 4, 5, 6 + 20);
  lc_free(&r);
  /* x[mask] = scalar */
  const uint8_t m[6] = {1, 0, 0, 1, 1, 0};
  const float v1 = -1;
  th_arg_t mi[] = {lc_tensor(TY(TT_BOOL, 2, 3), m)};
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 2, 3), self), lc_list(mi, 1), lc_tensor(TY0(TT_F32), &v1), BOOL(0)};
  TT_CHECK(lc_run(lc_new, "aten::index_put", b, 4, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, -1, 2, 3, -1, -1, 6);
  lc_free(&r);
  /* x[mask] = values (one per true element) */
  th_arg_t c[] = {lc_tensor(TY(TT_F32, 2, 3), self), lc_list(mi, 1), lc_tensor(TY(TT_F32, 3), vals),
                  BOOL(0)};
  TT_CHECK(lc_run(lc_new, "aten::index_put", c, 4, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 10, 2, 3, 20, 30, 6);
  lc_free(&r);
  /* a row mask with row values: x[rowmask] = [7, 8, 9] */
  const uint8_t rm[2] = {0, 1};
  const float rv[3] = {7, 8, 9};
  th_arg_t ri[] = {lc_tensor(TY(TT_BOOL, 2), rm)};
  th_arg_t d[] = {lc_tensor(TY(TT_F32, 2, 3), self), lc_list(ri, 1), lc_tensor(TY(TT_F32, 3), rv), BOOL(0)};
  TT_CHECK(lc_run(lc_new, "aten::index_put", d, 4, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 1, 2, 3, 7, 8, 9);
  lc_free(&r);
}

/* ---- index_more.c, index_more_search.c, index_more_misc.c --------------------------- */

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

static void check_test_triu_indices(tt_pjrt_t* p) {
  tt_type_t ot = TY(TT_I64, 2, 6);
  lc_result_t r;
  th_arg_t a[] = {INT(3), INT(3), INT(0), NONE(), NONE(), NONE(), NONE()};
  TT_CHECK(lc_run(p, "aten::triu_indices", a, NARGS(a), &ot, 1, &r));
  WANT_I64(r, 0, 12, 0, 0, 0, 1, 1, 2, 0, 1, 2, 1, 2, 2); /* rows, then columns */
  lc_free(&r);
  /* without replacement every draw is distinct and never a zero-weight category */
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
BOTH(test_triu_indices)

int main(void) {
  for (int i = 0; i < 60; i++) X[i] = (float)i;
  lc_open();
  TT_RUN(test_index_select);
  TT_RUN(test_gather_index_add);
  TT_RUN(test_cat);
  TT_RUN(test_scatter);
  TT_RUN(test_index_tensor);
  TT_RUN(test_index_put);
  TT_RUN(test_index_reduce_masked_scatter_take);
  TT_RUN(test_search_histc);
  TT_RUN(test_histogramdd);
  TT_RUN(test_triu_indices);
  TT_RUN(test_assert_async);
  lc_close();
  TT_REPORT();
}
