/* Tests of the matmul lowering family (linalg/matmul.c: mm, bmm, addmm, mv, dot,
 * ...) against values computed in C. */
#include "lower_check.h"

static const float A23[6] = {1, 2, 3, -4, 5, 0.5f};           /* 2x3 */
static const float B32[6] = {0.5f, -1, 2, 3, -2.5f, 1};       /* 3x2 */

static void ref_mm(const float* a, const float* b, float* c, int m, int k, int n) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int t = 0; t < k; t++) s += (double)a[i * k + t] * b[t * n + j];
      c[i * n + j] = (float)s;
    }
}

static void check_mm(tt_pjrt_t* p) {
  th_arg_t args[] = {lc_tensor(TY(TT_F32, 2, 3), A23), lc_tensor(TY(TT_F32, 3, 2), B32)};
  tt_type_t ot = TY(TT_F32, 2, 2);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::mm", args, 2, &ot, 1, &r));
  float want[4];
  ref_mm(A23, B32, want, 2, 3, 2);
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-6));
  lc_free(&r);
}
static void test_mm(void) {
  if (lc_new) check_mm(lc_new);
  if (!tt__cur_failed && lc_old) check_mm(lc_old);
}

static void test_mm_out_and_ints(void) {
  if (!lc_new) return;
  const int64_t a[6] = {1, 2, 3, -4, 5, 6}, b[6] = {7, -8, 9, 10, 11, 12};
  th_arg_t args[] = {lc_tensor(TY(TT_I64, 2, 3), a), lc_tensor(TY(TT_I64, 3, 2), b), OUT()};
  tt_type_t ot = TY(TT_I64, 2, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::mm.out", args, 3, &ot, 1, &r));
  WANT_I64(r, 0, 4, 1 * 7 + 2 * 9 + 3 * 11, -8 + 20 + 36, -28 + 45 + 66, 32 + 50 + 72);
  lc_free(&r);
  const int32_t a32[4] = {100000, 3, -2, 7}, b32[4] = {100000, 1, 5, -1};
  th_arg_t args32[] = {lc_tensor(TY(TT_I32, 2, 2), a32), lc_tensor(TY(TT_I32, 2, 2), b32)};
  ot = TY(TT_I32, 2, 2);
  TT_CHECK(lc_run(lc_new, "aten::mm", args32, 2, &ot, 1, &r));
  const int32_t* g = r.out[0];
  /* 1e10 + 15 wraps in int32, as in PyTorch */
  TT_CHECK(g[0] == (int32_t)(uint32_t)(10000000000LL + 15) && g[1] == 100000 - 3);
  TT_CHECK(g[2] == -200000 + 35 && g[3] == -2 - 7);
  lc_free(&r);
}

static void test_mm_bf16(void) {
  if (!lc_new) return;
  float af[6] = {1.5f, 2.25f, -3, 0.1f, 7, 1}, bf[6] = {0.3f, -1, 2, 3.5f, -2.5f, 1};
  uint16_t a[6], b[6];
  for (int i = 0; i < 6; i++) {
    a[i] = lc_bf16(af[i]);
    b[i] = lc_bf16(bf[i]);
    af[i] = lc_from_bf16(a[i]);
    bf[i] = lc_from_bf16(b[i]);
  }
  float want[4];
  ref_mm(af, bf, want, 2, 3, 2);
  th_arg_t args[] = {lc_tensor(TY(TT_BF16, 2, 3), a), lc_tensor(TY(TT_BF16, 3, 2), b)};
  tt_type_t ot = TY(TT_BF16, 2, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::mm", args, 2, &ot, 1, &r));
  for (int i = 0; i < 4; i++) TT_CHECK(((uint16_t*)r.out[0])[i] == lc_bf16(want[i]));
  lc_free(&r);
  /* mm.dtype: bf16 inputs, f32 result */
  th_arg_t args2[] = {lc_tensor(TY(TT_BF16, 2, 3), a), lc_tensor(TY(TT_BF16, 3, 2), b), INT(TT_F32)};
  ot = TY(TT_F32, 2, 2);
  TT_CHECK(lc_run(lc_new, "aten::mm.dtype", args2, 3, &ot, 1, &r));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-6));
  lc_free(&r);
}

static void test_bmm(void) {
  if (!lc_new) return;
  float a[12], b[12], want[8];
  for (int i = 0; i < 12; i++) {
    a[i] = (float)(i % 5) - 1.5f;
    b[i] = (float)(i % 7) * 0.25f;
  }
  ref_mm(a, b, want, 2, 3, 2);
  ref_mm(a + 6, b + 6, want + 4, 2, 3, 2);
  th_arg_t args[] = {lc_tensor(TY(TT_F32, 2, 2, 3), a), lc_tensor(TY(TT_F32, 2, 3, 2), b)};
  tt_type_t ot = TY(TT_F32, 2, 2, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::bmm", args, 2, &ot, 1, &r));
  TT_CHECK(lc_close_f32(r.out[0], want, 8, 1e-6, 1e-6));
  lc_free(&r);
  /* baddbmm: beta * self + alpha * bmm, self broadcast from [2] */
  const float self[2] = {1, -1};
  th_arg_t args2[] = {lc_tensor(TY(TT_F32, 2), self), lc_tensor(TY(TT_F32, 2, 2, 3), a),
                      lc_tensor(TY(TT_F32, 2, 3, 2), b), SF(0.5), SI(3)};
  TT_CHECK(lc_run(lc_new, "aten::baddbmm", args2, 5, &ot, 1, &r));
  float w2[8];
  for (int i = 0; i < 8; i++) w2[i] = 0.5f * self[i % 2] + 3 * want[i];
  TT_CHECK(lc_close_f32(r.out[0], w2, 8, 1e-6, 1e-6));
  lc_free(&r);
  /* addbmm: sums the batch */
  float w3[4];
  for (int i = 0; i < 4; i++) w3[i] = self[i % 2] + want[i] + want[4 + i];
  th_arg_t args3[] = {lc_tensor(TY(TT_F32, 2), self), lc_tensor(TY(TT_F32, 2, 2, 3), a),
                      lc_tensor(TY(TT_F32, 2, 3, 2), b), SI(1), SI(1)};
  ot = TY(TT_F32, 2, 2);
  TT_CHECK(lc_run(lc_new, "aten::addbmm", args3, 5, &ot, 1, &r));
  TT_CHECK(lc_close_f32(r.out[0], w3, 4, 1e-6, 1e-6));
  lc_free(&r);
}

static void test_addmm(void) {
  if (!lc_new) return;
  float want[4];
  ref_mm(A23, B32, want, 2, 3, 2);
  const float self[4] = {1, NAN, 3, 4};
  th_arg_t args[] = {lc_tensor(TY(TT_F32, 2, 2), self), lc_tensor(TY(TT_F32, 2, 3), A23),
                     lc_tensor(TY(TT_F32, 3, 2), B32), SF(0.5), SF(2.0)};
  tt_type_t ot = TY(TT_F32, 2, 2);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::addmm", args, 5, &ot, 1, &r));
  float w[4];
  for (int i = 0; i < 4; i++) w[i] = 0.5f * self[i] + 2 * want[i];
  TT_CHECK(lc_close_f32(r.out[0], w, 4, 1e-6, 1e-6));
  lc_free(&r);
  /* beta = 0: self (with its NaN) is ignored */
  th_arg_t args0[] = {lc_tensor(TY(TT_F32, 2, 2), self), lc_tensor(TY(TT_F32, 2, 3), A23),
                      lc_tensor(TY(TT_F32, 3, 2), B32), SI(0), SI(1)};
  TT_CHECK(lc_run(lc_new, "aten::addmm_", args0, 5, &ot, 1, &r));
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 1e-6, 1e-6));
  lc_free(&r);
  /* _addmm_activation: relu */
  th_arg_t args2[] = {lc_tensor(TY(TT_F32, 2, 2), (const float[]){0, 0, 0, 0}),
                      lc_tensor(TY(TT_F32, 2, 3), A23), lc_tensor(TY(TT_F32, 3, 2), B32), SI(1), SI(1),
                      BOOL(0)};
  TT_CHECK(lc_run(lc_new, "aten::_addmm_activation", args2, 6, &ot, 1, &r));
  for (int i = 0; i < 4; i++) w[i] = want[i] > 0 ? want[i] : 0;
  TT_CHECK(lc_close_f32(r.out[0], w, 4, 1e-6, 1e-6));
  lc_free(&r);
}

static void test_mv_dot_addmv_addr(void) {
  tt_pjrt_t* p = lc_old ? lc_old : lc_new; /* these also prove the 0.81 parser */
  if (!p) return;
  const float v[3] = {2, -1, 0.5f}, u[2] = {3, -2};
  th_arg_t args[] = {lc_tensor(TY(TT_F32, 2, 3), A23), lc_tensor(TY(TT_F32, 3), v)};
  tt_type_t ot = TY(TT_F32, 2);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::mv", args, 2, &ot, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, 2 - 2 + 1.5f, -8 - 5 + 0.25f);
  lc_free(&r);
  th_arg_t args2[] = {lc_tensor(TY(TT_F32, 3), v), lc_tensor(TY(TT_F32, 3), A23)};
  ot = TY0(TT_F32);
  TT_CHECK(lc_run(p, "aten::dot", args2, 2, &ot, 1, &r));
  WANT_F32(r, 0, 1, 1e-6, 2 - 2 + 1.5f);
  lc_free(&r);
  th_arg_t args3[] = {lc_tensor(TY(TT_F32, 2), u), lc_tensor(TY(TT_F32, 2, 3), A23),
                      lc_tensor(TY(TT_F32, 3), v), SI(2), SF(-1.0)};
  ot = TY(TT_F32, 2);
  TT_CHECK(lc_run(p, "aten::addmv", args3, 5, &ot, 1, &r));
  WANT_F32(r, 0, 2, 1e-6, 6 - 1.5f, -4 + 12.75f);
  lc_free(&r);
  th_arg_t args4[] = {lc_tensor(TY(TT_F32, 2, 3), A23), lc_tensor(TY(TT_F32, 2), u),
                      lc_tensor(TY(TT_F32, 3), v), SI(1), SI(1)};
  ot = TY(TT_F32, 2, 3);
  TT_CHECK(lc_run(p, "aten::addr", args4, 5, &ot, 1, &r));
  WANT_F32(r, 0, 6, 1e-6, 1 + 6, 2 - 3, 3 + 1.5f, -4 - 4, 5 + 2, 0.5f - 1);
  lc_free(&r);
}

static void test_bool_rejected(void) {
  if (!lc_new) return;
  const uint8_t a[4] = {1, 0, 1, 1};
  th_arg_t args[] = {lc_tensor(TY(TT_BOOL, 2, 2), a), lc_tensor(TY(TT_BOOL, 2, 2), a)};
  tt_type_t ot = TY(TT_BOOL, 2, 2);
  void* out[1];
  tt_status_t st = th_run(lc_new, "aten::mm", args, 2, &ot, 1, out, NULL);
  TT_CHECK(st && tt_status_code(st) == TT_INVALID_ARGUMENT);
  tt_status_free(st);
}

/* _grouped_mm's four forms against per-group products in C: groups [offs[g-1], offs[g]), an
 * empty group, rows (columns) past the last offset 0, decreasing offsets (the later group
 * wins where they overlap). Values: small integers, exact in f32. */
static float gv(int i) { return (float)((i * 7) % 11 - 5); }

static void check_grouped(const char* what, int ra, const int64_t* da, int rb, const int64_t* db,
                          const int32_t* offs, int G, int ro, const int64_t* dout) {
  static float a[2048], b[2048], want[2048];
  memset(want, 0, sizeof(want));
  int64_t na = 1, nb = 1, no = 1;
  for (int i = 0; i < ra; i++) na *= da[i];
  for (int i = 0; i < rb; i++) nb *= db[i];
  for (int i = 0; i < ro; i++) no *= dout[i];
  for (int i = 0; i < na; i++) a[i] = gv(i);
  for (int i = 0; i < nb; i++) b[i] = gv(3 * i + 1);
  if (ra == 3 && rb == 3) { /* bmm */
    for (int64_t g = 0; g < da[0]; g++) ref_mm(a + g * da[1] * da[2], b + g * db[1] * db[2],
                                             want + g * da[1] * db[2], da[1], da[2], db[2]);
  }
  for (int g = 0, s = 0; offs && g < G; s = offs[g], g++) {
    int e = offs[g];
    if (ra == 2 && rb == 3) { /* rows s..e of a (M, K) times b[g] (K, N) */
      int K = da[1], N = db[2];
      for (int r = s; r < e; r++)
        for (int n = 0; n < N; n++) {
          double acc = 0;
          for (int k = 0; k < K; k++) acc += a[r * K + k] * b[(g * K + k) * N + n];
          want[r * N + n] = (float)acc;
        }
    } else if (ra == 3 && rb == 2) { /* a[g] (M, K) times columns s..e of b (K, N) */
      int M = da[1], K = da[2], N = db[1];
      for (int m = 0; m < M; m++)
        for (int n = s; n < e; n++) {
          double acc = 0;
          for (int k = 0; k < K; k++) acc += a[(g * M + m) * K + k] * b[k * N + n];
          want[m * N + n] = (float)acc;
        }
    } else { /* out[g] = a[:, s:e] b[s:e, :] */
      int M = da[0], K = da[1], N = db[1];
      for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
          double acc = 0;
          for (int k = s; k < e; k++) acc += a[m * K + k] * b[k * N + n];
          want[(g * M + m) * N + n] = (float)acc;
        }
    }
  }
  int64_t gd[1] = {G};
  th_arg_t args[] = {lc_tensor(tt_type_make(TT_F32, ra, da), a), lc_tensor(tt_type_make(TT_F32, rb, db), b),
                     offs ? lc_tensor(tt_type_make(TT_I32, 1, gd), offs) : NONE(), NONE(), NONE()};
  tt_type_t ot = tt_type_make(TT_F32, ro, dout);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::_grouped_mm", args, 5, &ot, 1, &r));
  if (!lc_close_f32(r.out[0], want, no, 0, 0)) {
    fprintf(stderr, "grouped_mm %s differs\n", what);
    TT_CHECK(false);
  }
  lc_free(&r);
}

static void test_grouped_mm(void) {
  if (!lc_new) return;
  const int32_t offs[3] = {2, 2, 5}, down[3] = {4, 1, 6};
  check_grouped("2d x 3d", 2, (int64_t[]){7, 3}, 3, (int64_t[]){3, 3, 4}, offs, 3, 2, (int64_t[]){7, 4});
  check_grouped("2d x 3d, decreasing", 2, (int64_t[]){7, 3}, 3, (int64_t[]){3, 3, 4}, down, 3, 2,
                (int64_t[]){7, 4});
  check_grouped("3d x 2d", 3, (int64_t[]){3, 2, 3}, 2, (int64_t[]){3, 7}, offs, 3, 2, (int64_t[]){2, 7});
  check_grouped("2d x 2d", 2, (int64_t[]){2, 7}, 2, (int64_t[]){7, 3}, offs, 3, 3, (int64_t[]){3, 2, 3});
  check_grouped("2d x 2d, decreasing", 2, (int64_t[]){2, 7}, 2, (int64_t[]){7, 3}, down, 3, 3,
                (int64_t[]){3, 2, 3});
  /* more rows (K) than a tile (128): groups of several tiles, the last tile moved back to fit */
  const int32_t long_offs[3] = {130, 130, 290};
  check_grouped("2d x 3d, tiles", 2, (int64_t[]){300, 3}, 3, (int64_t[]){3, 3, 4}, long_offs, 3, 2,
                (int64_t[]){300, 4});
  check_grouped("2d x 2d, tiles", 2, (int64_t[]){2, 300}, 2, (int64_t[]){300, 3}, long_offs, 3, 3,
                (int64_t[]){3, 2, 3});
  check_grouped("3d x 3d", 3, (int64_t[]){2, 2, 3}, 3, (int64_t[]){2, 3, 4}, NULL, 0, 3, (int64_t[]){2, 2, 4});
}

int main(void) {
  lc_open();
  TT_RUN(test_mm);
  TT_RUN(test_mm_out_and_ints);
  TT_RUN(test_mm_bf16);
  TT_RUN(test_bmm);
  TT_RUN(test_addmm);
  TT_RUN(test_mv_dot_addmv_addr);
  TT_RUN(test_bool_rejected);
  TT_RUN(test_grouped_mm);
  lc_close();
  TT_REPORT();
}
