/* Tests of the create lowering family: fills, ranges, eye and the random
 * fillers (create.c: distribution properties, determinism per seed), the
 * torch.distributions samplers (random_dist.c) and multinomial (random_more.c). */
#include <float.h>

#include "lower_check.h"

static void test_fill_zero(void) {
  if (!lc_new) return;
  lc_result_t r;
  tt_type_t ot = TY(TT_F32, 2, 3);
  th_arg_t a[] = {OUT(), SF(2.5)};
  TT_CHECK(lc_run(lc_new, "aten::fill_.Scalar", a, 2, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f);
  lc_free(&r);
  ot = TY(TT_I64, 3);
  a[1] = SF(-2.7); /* truncates like PyTorch */
  TT_CHECK(lc_run(lc_new, "aten::fill_.Scalar", a, 2, &ot, 1, &r));
  WANT_I64(r, 0, 3, -2, -2, -2);
  lc_free(&r);
  const float v = 7;
  th_arg_t b[] = {OUT(), lc_tensor(TY0(TT_F32), &v)};
  ot = TY(TT_BOOL, 2);
  TT_CHECK(lc_run(lc_new, "aten::fill_.Tensor", b, 2, &ot, 1, &r));
  TT_CHECK(lc_eq_bytes(r.out[0], (const uint8_t[]){1, 1}, 2));
  lc_free(&r);
  th_arg_t c[] = {OUT()};
  ot = TY(TT_F32, 4);
  TT_CHECK(lc_run(lc_new, "aten::zero_", c, 1, &ot, 1, &r));
  WANT_F32(r, 0, 4, 0, 0, 0, 0, 0);
  lc_free(&r);
}

static void check_arange(tt_pjrt_t* p) {
  lc_result_t r;
  th_arg_t a[] = {SI(1), SI(10), SI(3), OUT()};
  tt_type_t ot = TY(TT_I64, 3);
  TT_CHECK(lc_run(p, "aten::arange.start_out", a, 4, &ot, 1, &r));
  WANT_I64(r, 0, 3, 1, 4, 7);
  lc_free(&r);
  th_arg_t b[] = {SF(-1.0), SF(1.0), SF(0.1), OUT()};
  ot = TY(TT_F32, 20);
  TT_CHECK(lc_run(p, "aten::arange.start_out", b, 4, &ot, 1, &r));
  float want[20];
  /* computed in double, as on CPU's scalar path (its vector path and XLA's
   * fused multiply-add differ near 0 by a few ulps of the step) */
  for (int i = 0; i < 20; i++) want[i] = (float)(-1.0 + i * 0.1);
  TT_CHECK(lc_close_f32(r.out[0], want, 20, 1e-7, 1e-7));
  lc_free(&r);
}
static void test_arange(void) {
  if (lc_new) check_arange(lc_new);
  if (!tt__cur_failed && lc_old) check_arange(lc_old);
}

static void test_linspace_eye(void) {
  if (!lc_new) return;
  lc_result_t r;
  th_arg_t a[] = {SF(0.0), SF(1.0), INT(5), OUT()};
  tt_type_t ot = TY(TT_F32, 5);
  TT_CHECK(lc_run(lc_new, "aten::linspace.out", a, 4, &ot, 1, &r));
  WANT_F32(r, 0, 5, 0, 0, 0.25f, 0.5f, 0.75f, 1);
  lc_free(&r);
  th_arg_t b[] = {SI(0), SI(10), INT(4), OUT()};
  ot = TY(TT_I64, 4);
  TT_CHECK(lc_run(lc_new, "aten::linspace.out", b, 4, &ot, 1, &r));
  WANT_I64(r, 0, 4, 0, 3, 6, 10);
  lc_free(&r);
  th_arg_t c[] = {INT(2), INT(3), OUT()};
  ot = TY(TT_F32, 2, 3);
  TT_CHECK(lc_run(lc_new, "aten::eye.m_out", c, 3, &ot, 1, &r));
  WANT_F32(r, 0, 6, 0, 1, 0, 0, 0, 1, 0);
  lc_free(&r);
}

enum { N = 20000 };

static void stats(const float* x, int n, double* mean, double* var) {
  double s = 0, ss = 0;
  for (int i = 0; i < n; i++) s += x[i];
  *mean = s / n;
  for (int i = 0; i < n; i++) ss += (x[i] - *mean) * (x[i] - *mean);
  *var = ss / (n - 1);
}

static void check_uniform(tt_pjrt_t* p) {
  lc_result_t r, r2, r3;
  tt_type_t ot = TY(TT_F32, N);
  th_arg_t a[] = {OUT(), FLT(0), FLT(1), NONE(), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(p, "aten::uniform_", a, 5, &ot, 1, &r));
  const float* u = r.out[0];
  for (int i = 0; i < N; i++) TT_CHECK(u[i] >= 0 && u[i] < 1);
  double m, v;
  stats(u, N, &m, &v);
  TT_CHECK(fabs(m - 0.5) < 0.01 && fabs(v - 1.0 / 12) < 0.005);
  TT_CHECK(lc_run(p, "aten::uniform_", a, 5, &ot, 1, &r2));
  TT_CHECK(memcmp(r.out[0], r2.out[0], sizeof(float) * N) == 0); /* same seed, same numbers */
  a[4] = lc_rng(lc_seed_b);
  TT_CHECK(lc_run(p, "aten::uniform_", a, 5, &ot, 1, &r3));
  TT_CHECK(memcmp(r.out[0], r3.out[0], sizeof(float) * N) != 0);
  lc_free(&r);
  lc_free(&r2);
  lc_free(&r3);
}
static void test_uniform(void) {
  if (lc_new) check_uniform(lc_new);
  if (!tt__cur_failed && lc_old) check_uniform(lc_old);
  if (tt__cur_failed || !lc_new) return;
  /* bf16 in [-2, 3): never reaches 3 after rounding */
  tt_type_t ot = TY(TT_BF16, N);
  th_arg_t a[] = {OUT(), FLT(-2), FLT(3), NONE(), lc_rng(lc_seed_b)};
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::uniform_", a, 5, &ot, 1, &r));
  for (int i = 0; i < N; i++) {
    float x = lc_from_bf16(((uint16_t*)r.out[0])[i]);
    TT_CHECK(x >= -2 && x < 3);
  }
  lc_free(&r);
}

static void test_normal_exponential(void) {
  if (!lc_new) return;
  tt_type_t ot = TY(TT_F32, N);
  lc_result_t r;
  th_arg_t a[] = {OUT(), FLT(2), FLT(3), NONE(), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(lc_new, "aten::normal_", a, 5, &ot, 1, &r));
  double m, v;
  stats(r.out[0], N, &m, &v);
  TT_CHECK(fabs(m - 2) < 0.1 && fabs(v - 9) < 0.4);
  for (int i = 0; i < N; i++) TT_CHECK(isfinite(((float*)r.out[0])[i]));
  lc_free(&r);
  th_arg_t b[] = {OUT(), FLT(2), NONE(), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(lc_new, "aten::exponential_", b, 4, &ot, 1, &r));
  stats(r.out[0], N, &m, &v);
  TT_CHECK(fabs(m - 0.5) < 0.02 && fabs(v - 0.25) < 0.03);
  for (int i = 0; i < N; i++) TT_CHECK(((float*)r.out[0])[i] >= 0);
  lc_free(&r);
}

static void test_random_bernoulli(void) {
  if (!lc_new) return;
  lc_result_t r;
  tt_type_t ot = TY(TT_I64, N);
  th_arg_t a[] = {OUT(), INT(-5), INT(5), NONE(), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(lc_new, "aten::random_.from", a, 5, &ot, 1, &r));
  int seen[10] = {0};
  for (int i = 0; i < N; i++) {
    int64_t x = ((int64_t*)r.out[0])[i];
    TT_CHECK(x >= -5 && x < 5);
    seen[x + 5]++;
  }
  for (int k = 0; k < 10; k++) TT_CHECK(seen[k] > N / 10 - 300 && seen[k] < N / 10 + 300);
  lc_free(&r);
  ot = TY(TT_F32, N);
  th_arg_t b[] = {OUT(), NONE(), lc_rng(lc_seed_b)};
  TT_CHECK(lc_run(lc_new, "aten::random_", b, 3, &ot, 1, &r));
  for (int i = 0; i < N; i++) {
    float x = ((float*)r.out[0])[i];
    TT_CHECK(x >= 0 && x <= 16777216.0f && x == floorf(x));
  }
  lc_free(&r);
  th_arg_t c[] = {OUT(), FLT(0.3), NONE(), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(lc_new, "aten::bernoulli_.float", c, 4, &ot, 1, &r));
  int ones = 0;
  for (int i = 0; i < N; i++) {
    float x = ((float*)r.out[0])[i];
    TT_CHECK(x == 0 || x == 1);
    ones += x == 1;
  }
  TT_CHECK(abs(ones - 3 * N / 10) < 350);
  lc_free(&r);
}

/* The torch.distributions samplers (random_dist.c): gamma and Poisson moments,
 * CPU's edge values, one seed's numbers repeated; the gamma sample's gradient
 * at points of each of its three regimes (CPU's values). */
static void test_distributions(void) {
  if (!lc_new) return;
  static float alpha[N], lam[N];
  for (int i = 0; i < N; i++) {
    alpha[i] = i % 2 ? 2.5f : 0.4f;
    lam[i] = i % 2 ? 3.0f : 25.0f;
  }
  alpha[0] = 0.0f;
  lam[0] = 0.0f;
  tt_type_t ot = TY(TT_F32, N);
  lc_result_t r, r2;
  th_arg_t a[] = {lc_tensor(TY(TT_F32, N), alpha), NONE(), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(lc_new, "aten::_standard_gamma", a, 3, &ot, 1, &r));
  TT_CHECK(lc_run(lc_new, "aten::_standard_gamma", a, 3, &ot, 1, &r2));
  TT_CHECK(memcmp(r.out[0], r2.out[0], sizeof(float) * N) == 0);
  const float* g = r.out[0];
  TT_CHECK(g[0] == FLT_MIN); /* alpha 0: the smallest normal float, as on CPU */
  double s[2] = {0, 0}, ss[2] = {0, 0};
  for (int i = 1; i < N; i++) {
    TT_CHECK(g[i] >= FLT_MIN && isfinite(g[i]));
    s[i % 2] += g[i];
    ss[i % 2] += (double)g[i] * g[i];
  }
  int n1 = N / 2, n0 = N / 2 - 1;
  double m0 = s[0] / n0, m1 = s[1] / n1, v0 = ss[0] / n0 - m0 * m0, v1 = ss[1] / n1 - m1 * m1;
  TT_CHECK(fabs(m0 - 0.4) < 0.05 && fabs(v0 - 0.4) < 0.1 && fabs(m1 - 2.5) < 0.12 && fabs(v1 - 2.5) < 0.4);
  lc_free(&r);
  lc_free(&r2);
  th_arg_t p[] = {lc_tensor(TY(TT_F32, N), lam), NONE(), lc_rng(lc_seed_b)};
  TT_CHECK(lc_run(lc_new, "aten::poisson", p, 3, &ot, 1, &r));
  const float* k = r.out[0];
  TT_CHECK(k[0] == 0.0f);
  double ks[2] = {0, 0};
  for (int i = 1; i < N; i++) {
    TT_CHECK(k[i] >= 0 && k[i] == floorf(k[i]));
    ks[i % 2] += k[i];
  }
  TT_CHECK(fabs(ks[0] / n0 - 25.0) < 0.6 && fabs(ks[1] / n1 - 3.0) < 0.2);
  lc_free(&r);
  /* binomial: count 25 (p 0.6: BTRS on 1 - p) and 3 (inversion), from the same tensors */
  static float prob[N];
  for (int i = 0; i < N; i++) prob[i] = i % 2 ? 0.2f : 0.6f;
  th_arg_t bn[] = {lc_tensor(TY(TT_F32, N), lam), lc_tensor(TY(TT_F32, N), prob), NONE(), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(lc_new, "aten::binomial", bn, 4, &ot, 1, &r));
  k = r.out[0];
  TT_CHECK(k[0] == 0.0f); /* count 0 */
  ks[0] = ks[1] = 0;
  for (int i = 1; i < N; i++) {
    TT_CHECK(k[i] >= 0 && k[i] <= lam[i] && k[i] == floorf(k[i]));
    ks[i % 2] += k[i];
  }
  TT_CHECK(fabs(ks[0] / n0 - 15.0) < 0.3 && fabs(ks[1] / n1 - 0.6) < 0.05);
  lc_free(&r);
  /* d sample / d alpha: x < 0.8, alpha > 8 near and away from alpha, the rational fit */
  const double al[5] = {0.5, 20.0, 20.0, 3.0, 9.0}, xs[5] = {0.3, 21.0, 12.0, 2.0, 30.0};
  const double want[5] = {1.0098019827369256, 1.033152750373495, 0.7725959054368412, 0.856564023915415,
                          1.7521431295560423}; /* PyTorch CPU's */
  tt_type_t t5 = TY(TT_F64, 5);
  th_arg_t gg[] = {lc_tensor(t5, al), lc_tensor(t5, xs)};
  TT_CHECK(lc_run(lc_new, "aten::_standard_gamma_grad", gg, 2, &t5, 1, &r));
  for (int i = 0; i < 5; i++) TT_CHECK(fabs(((double*)r.out[0])[i] - want[i]) < 1e-6 * fabs(want[i]));
  lc_free(&r);
  /* the Beta / Dirichlet sample's: x near 0, near 1, both concentrations large, the rational fit */
  const double dx[4] = {0.05, 0.97, 0.45, 0.4}, da[4] = {0.5, 2.0, 10.0, 2.0}, dt[4] = {3.0, 2.3, 22.0, 5.0};
  const double dwant[4] = {0.23760990913717606, 0.5813210449822969, 0.046677584067732994,
                           0.2323200000844489}; /* PyTorch CPU's */
  tt_type_t t4 = TY(TT_F64, 4);
  th_arg_t dg[] = {lc_tensor(t4, dx), lc_tensor(t4, da), lc_tensor(t4, dt)};
  TT_CHECK(lc_run(lc_new, "aten::_dirichlet_grad", dg, 3, &t4, 1, &r));
  for (int i = 0; i < 4; i++) TT_CHECK(fabs(((double*)r.out[0])[i] - dwant[i]) < 1e-9 * fabs(dwant[i]));
  lc_free(&r);
}

/* multinomial (random_more.c) without replacement: every draw is distinct and
 * never a zero-weight category. */
static void check_multinomial(tt_pjrt_t* p) {
  lc_result_t r;
  const float w[4] = {1, 0, 2, 3};
  tt_type_t mt = TY(TT_I64, 3);
  th_arg_t b[] = {lc_tensor(TY(TT_F32, 4), w), INT(3), BOOL(0), NONE(), lc_rng(lc_seed_a)};
  TT_CHECK(lc_run(p, "aten::multinomial", b, NARGS(b), &mt, 1, &r));
  const int64_t* s = r.out[0];
  TT_CHECK(s[0] != s[1] && s[1] != s[2] && s[0] != s[2]);
  for (int i = 0; i < 3; i++) TT_CHECK(s[i] >= 0 && s[i] < 4 && s[i] != 1);
  lc_free(&r);
}
static void test_multinomial(void) {
  if (lc_new) check_multinomial(lc_new);
  if (!tt__cur_failed && lc_old) check_multinomial(lc_old);
}

int main(void) {
  lc_open();
  TT_RUN(test_fill_zero);
  TT_RUN(test_arange);
  TT_RUN(test_linspace_eye);
  TT_RUN(test_uniform);
  TT_RUN(test_normal_exponential);
  TT_RUN(test_random_bernoulli);
  TT_RUN(test_distributions);
  TT_RUN(test_multinomial);
  lc_close();
  TT_REPORT();
}
