/* Tests of the index lowering family against values computed in C. */
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

int main(void) {
  for (int i = 0; i < 60; i++) X[i] = (float)i;
  lc_open();
  TT_RUN(test_index_select);
  TT_RUN(test_gather_index_add);
  TT_RUN(test_cat);
  TT_RUN(test_scatter);
  TT_RUN(test_index_tensor);
  TT_RUN(test_index_put);
  lc_close();
  TT_REPORT();
}
