/* Tests of the conv lowering family (conv.c, pool.c, nn_more_pool.c) against
 * references computed in C (direct loops over the definitions), on both plugins. */
#include "lower_check.h"

/* ---- 2-d convolution reference (1-d = height 1) ----------------------------------- */
typedef struct cgeo {
  int n, c, h, w;      /* input */
  int o, kh, kw, g;    /* weight (o, c/g, kh, kw) */
  int sh, sw, ph, pw, dh, dw;
  int oh, ow;          /* output */
} cgeo_t;

static void geo_out(cgeo_t* q) {
  q->oh = (q->h + 2 * q->ph - q->dh * (q->kh - 1) - 1) / q->sh + 1;
  q->ow = (q->w + 2 * q->pw - q->dw * (q->kw - 1) - 1) / q->sw + 1;
}

/* Visits every (input, weight, output) index triple of the forward conv. */
#define CONV_LOOP(q, XI, WI, YI, BODY)                                                       \
  for (int n = 0; n < (q)->n; n++)                                                          \
    for (int o = 0; o < (q)->o; o++)                                                        \
      for (int y = 0; y < (q)->oh; y++)                                                     \
        for (int x = 0; x < (q)->ow; x++)                                                   \
          for (int ci = 0; ci < (q)->c / (q)->g; ci++)                                      \
            for (int a = 0; a < (q)->kh; a++)                                               \
              for (int b = 0; b < (q)->kw; b++) {                                           \
                int hh = y * (q)->sh - (q)->ph + a * (q)->dh, ww = x * (q)->sw - (q)->pw + b * (q)->dw; \
                if (hh < 0 || hh >= (q)->h || ww < 0 || ww >= (q)->w) continue;             \
                int c = o / ((q)->o / (q)->g) * ((q)->c / (q)->g) + ci;                     \
                int XI = ((n * (q)->c + c) * (q)->h + hh) * (q)->w + ww;                    \
                int WI = ((o * ((q)->c / (q)->g) + ci) * (q)->kh + a) * (q)->kw + b;        \
                int YI = ((n * (q)->o + o) * (q)->oh + y) * (q)->ow + x;                    \
                BODY;                                                                       \
              }

static void fill(float* v, int n, int seed) {
  uint32_t s = 2654435761u * (uint32_t)(seed + 1);
  for (int i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    v[i] = (float)((s >> 9) % 2001) / 1000.0f - 1.0f;
  }
}

static th_arg_t t4(const cgeo_t* q, int a, int b, int c, int d, const float* data) {
  (void)q;
  return lc_tensor(TY(TT_F32, a, b, c, d), data);
}

/* conv args after the tensors: stride, padding, dilation, transposed, output_padding, groups */
#define CONV_ATTRS(q, tr, oph, opw) \
  INTS((q)->sh, (q)->sw), INTS((q)->ph, (q)->pw), INTS((q)->dh, (q)->dw), BOOL(tr), INTS(oph, opw), INT((q)->g)

static void check_conv_fwd(tt_pjrt_t* p) {
  cgeo_t q = {2, 4, 6, 7, 6, 3, 2, 2, 2, 1, 1, 0, 1, 2, 0, 0};
  geo_out(&q);
  float xs[2 * 4 * 6 * 7], ws[6 * 2 * 3 * 2], bs[6], want[2 * 6 * 3 * 5] = {0};
  fill(xs, NARGS(xs), 1), fill(ws, NARGS(ws), 2), fill(bs, 6, 3);
  TT_CHECK(q.oh == 3 && q.ow == 5);
  CONV_LOOP(&q, xi, wi, yi, want[yi] += xs[xi] * ws[wi]);
  for (int i = 0; i < NARGS(want); i++) want[i] += bs[(i / (q.oh * q.ow)) % q.o];
  th_arg_t args[] = {t4(&q, 2, 4, 6, 7, xs), t4(&q, 6, 2, 3, 2, ws), lc_tensor(TY(TT_F32, 6), bs),
                     CONV_ATTRS(&q, 0, 0, 0)};
  tt_type_t ot = TY(TT_F32, 2, 6, 3, 5);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::convolution", args, NARGS(args), &ot, 1, &r));
  if (r.nout) TT_CHECK(lc_close_f32(r.out[0], want, NARGS(want), 1e-5, 1e-5));
  lc_free(&r);
}

/* A transposed conv is the input gradient of the forward conv with the same
 * weight: (N, O, oh, ow) -> (N, C, h, w). */
static void check_conv_transposed(tt_pjrt_t* p) {
  /* forward geometry: input 1x4x7x1 (1-d, length 7 as h), weight 4x2x3x1 viewed
   * as (o=4, c/g=2): transposed input has O=4 channels, output C=4 (g=2) */
  cgeo_t q = {1, 4, 8, 1, 4, 3, 1, 2, 2, 1, 1, 0, 2, 1, 0, 0};
  geo_out(&q); /* oh = (8 + 2 - 4 - 1) / 2 + 1 = 3 */
  /* output_padding: (3-1)*2 - 2 + 2*2 + op + 1 = 7 + op -> op = 1 gives 8 */
  float xt[1 * 4 * 3], ws[4 * 2 * 3], want[1 * 4 * 8] = {0};
  fill(xt, NARGS(xt), 4), fill(ws, NARGS(ws), 5);
  CONV_LOOP(&q, xi, wi, yi, want[xi] += xt[yi] * ws[wi]);
  th_arg_t args[] = {t4(&q, 1, 4, 3, 1, xt), t4(&q, 4, 2, 3, 1, ws), NONE(), CONV_ATTRS(&q, 1, 1, 0)};
  tt_type_t ot = TY(TT_F32, 1, 4, 8, 1);
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::convolution", args, NARGS(args), &ot, 1, &r));
  if (r.nout) TT_CHECK(lc_close_f32(r.out[0], want, NARGS(want), 1e-5, 1e-5));
  lc_free(&r);
}

static void check_conv_bwd(tt_pjrt_t* p, bool transposed) {
  cgeo_t q = {2, 4, 7, 6, 6, 3, 3, 2, 2, 2, 1, 0, 1, 2, 0, 0};
  geo_out(&q); /* oh = (7+2-2-1)/2+1 = 4, ow = (6+0-4-1)/2+1 = 1 */
  float xs[2 * 4 * 7 * 6], ws[6 * 2 * 3 * 3], gy[2 * 6 * 4 * 1];
  float gi[NARGS(xs)], gw[NARGS(ws)], gb[6] = {0};
  fill(xs, NARGS(xs), 6), fill(ws, NARGS(ws), 7), fill(gy, NARGS(gy), 8);
  memset(gi, 0, sizeof gi), memset(gw, 0, sizeof gw);
  lc_result_t r;
  if (!transposed) {
    CONV_LOOP(&q, xi, wi, yi, (gi[xi] += gy[yi] * ws[wi], gw[wi] += gy[yi] * xs[xi]));
    for (int i = 0; i < NARGS(gy); i++) gb[(i / (q.oh * q.ow)) % q.o] += gy[i];
    th_arg_t args[] = {t4(&q, 2, 6, 4, 1, gy), t4(&q, 2, 4, 7, 6, xs), t4(&q, 6, 2, 3, 3, ws),
                       INTS(6), CONV_ATTRS(&q, 0, 0, 0), INTS(1, 1, 1)};
    tt_type_t ot[3] = {TY(TT_F32, 2, 4, 7, 6), TY(TT_F32, 6, 2, 3, 3), TY(TT_F32, 6)};
    TT_CHECK(lc_run(p, "aten::convolution_backward", args, NARGS(args), ot, 3, &r));
    if (r.nout) {
      TT_CHECK(lc_close_f32(r.out[0], gi, NARGS(gi), 1e-5, 1e-5));
      TT_CHECK(lc_close_f32(r.out[1], gw, NARGS(gw), 1e-5, 1e-5));
      TT_CHECK(lc_close_f32(r.out[2], gb, 6, 1e-5, 1e-5));
    }
  } else {
    /* transposed conv: input t (2, 6, 4, 1) with weight (6, 2, 3, 3) -> (2, 4, 7, 6)
     * (output_padding (0, 1) reaches width 6); its grad_output lives in the
     * forward conv's input space */
    float* gyt = xs; /* (2, 4, 7, 6) */
    float* tin = gy; /* (2, 6, 4, 1) */
    CONV_LOOP(&q, xi, wi, yi, (gi[yi] += gyt[xi] * ws[wi], gw[wi] += tin[yi] * gyt[xi]));
    th_arg_t args[] = {t4(&q, 2, 4, 7, 6, gyt), t4(&q, 2, 6, 4, 1, tin), t4(&q, 6, 2, 3, 3, ws),
                       NONE(), CONV_ATTRS(&q, 1, 0, 1), INTS(1, 1, 0)};
    tt_type_t ot[3] = {TY(TT_F32, 2, 6, 4, 1), TY(TT_F32, 6, 2, 3, 3), TY0(TT_F32)};
    TT_CHECK(lc_run(p, "aten::convolution_backward", args, NARGS(args), ot, 3, &r));
    if (r.nout) {
      TT_CHECK(lc_close_f32(r.out[0], gi, 2 * 6 * 4, 1e-5, 1e-5));
      TT_CHECK(lc_close_f32(r.out[1], gw, NARGS(gw), 1e-5, 1e-5));
      TT_CHECK(((float*)r.out[2])[0] == 0.0f); /* not requested: a zero dummy */
    }
  }
  lc_free(&r);
}

static void test_conv(void) {
  tt_pjrt_t* ps[2] = {lc_new, lc_old};
  for (int i = 0; i < 2; i++) {
    if (!ps[i]) continue;
    check_conv_fwd(ps[i]);
    check_conv_transposed(ps[i]);
    check_conv_bwd(ps[i], false);
    check_conv_bwd(ps[i], true);
  }
}

static void test_conv_ints(void) {
  if (!lc_new) return;
  /* signed integers convolve exactly, as on CPU */
  const int64_t x[4] = {1, 2, 3, 4}, w[1] = {2};
  th_arg_t args[] = {lc_tensor(TY(TT_I64, 1, 1, 4), x), lc_tensor(TY(TT_I64, 1, 1, 1), w), NONE(),
                     INTS(1), INTS(0), INTS(1), BOOL(0), INTS(0), INT(1)};
  tt_type_t ot = TY(TT_I64, 1, 1, 4);
  void* out[1] = {NULL};
  tt_status_t st = th_run(lc_new, "aten::convolution", args, NARGS(args), &ot, 1, out, NULL);
  TT_CHECK(st == NULL);
  if (!st) {
    const int64_t* y = out[0];
    for (int i = 0; i < 4; i++) TT_CHECK(y[i] == 2 * x[i]);
  }
  tt_status_free(st);
  free(out[0]);
  /* bool has no convolution on CPU either */
  const uint8_t xb[4] = {1, 0, 1, 1}, wb[1] = {1};
  th_arg_t bargs[] = {lc_tensor(TY(TT_BOOL, 1, 1, 4), xb), lc_tensor(TY(TT_BOOL, 1, 1, 1), wb), NONE(),
                      INTS(1), INTS(0), INTS(1), BOOL(0), INTS(0), INT(1)};
  tt_type_t bt = TY(TT_BOOL, 1, 1, 4);
  void* bout[1] = {NULL};
  st = th_run(lc_new, "aten::convolution", bargs, NARGS(bargs), &bt, 1, bout, NULL);
  TT_CHECK(st && tt_status_code(st) == TT_INVALID_ARGUMENT);
  tt_status_free(st);
  free(bout[0]);
}

/* ---- pooling ------------------------------------------------------------------------ */
/* One 5x5 plane; windows 3x3, stride 2, padding 1, ceil_mode: outputs 3x3. */
static const float P5[25] = {1, 5, 2, 0, 3,  4, 4, -1, 7, 2,  0, 9, 9, 1, 1,
                             -3, 2, 8, 6, 0,  5, 1, 1, 2, 4};

static void pool_window(int o, int L, int* lo, int* hi) {
  *lo = o * 2 - 1;
  *hi = *lo + 3;
}

static void check_pools(tt_pjrt_t* p) {
  float vmax[9], vavg_incl[9], vavg_excl[9];
  int64_t imax[9];
  for (int oy = 0; oy < 3; oy++)
    for (int ox = 0; ox < 3; ox++) {
      int ylo, yhi, xlo, xhi;
      pool_window(oy, 5, &ylo, &yhi);
      pool_window(ox, 5, &xlo, &xhi);
      int pool = ((yhi < 6 ? yhi : 6) - ylo) * ((xhi < 6 ? xhi : 6) - xlo);
      float m = -INFINITY, s = 0;
      int64_t mi = -1;
      int cnt = 0;
      for (int y = ylo < 0 ? 0 : ylo; y < (yhi < 5 ? yhi : 5); y++)
        for (int x = xlo < 0 ? 0 : xlo; x < (xhi < 5 ? xhi : 5); x++) {
          float v = P5[y * 5 + x];
          if (v > m) m = v, mi = y * 5 + x;
          s += v, cnt++;
        }
      vmax[oy * 3 + ox] = m, imax[oy * 3 + ox] = mi;
      vavg_incl[oy * 3 + ox] = s / (float)pool;
      vavg_excl[oy * 3 + ox] = s / (float)cnt;
    }
  lc_result_t r;
  th_arg_t margs[] = {lc_tensor(TY(TT_F32, 1, 5, 5), P5), INTS(3, 3), INTS(2, 2), INTS(1, 1),
                      INTS(1, 1), BOOL(1)};
  tt_type_t mot[2] = {TY(TT_F32, 1, 3, 3), TY(TT_I64, 1, 3, 3)};
  TT_CHECK(lc_run(p, "aten::max_pool2d_with_indices", margs, NARGS(margs), mot, 2, &r));
  if (r.nout) {
    TT_CHECK(lc_close_f32(r.out[0], vmax, 9, 0, 0));
    TT_CHECK(lc_eq_i64(r.out[1], imax, 9));
  }
  lc_free(&r);
  /* backward: scatter-add of grad_output at the indices */
  float gy[9], gi[25] = {0};
  for (int i = 0; i < 9; i++) gy[i] = (float)(i + 1), gi[imax[i]] += gy[i];
  th_arg_t bargs[] = {lc_tensor(TY(TT_F32, 1, 3, 3), gy), lc_tensor(TY(TT_F32, 1, 5, 5), P5),
                      INTS(3, 3), INTS(2, 2), INTS(1, 1), INTS(1, 1), BOOL(1),
                      lc_tensor(TY(TT_I64, 1, 3, 3), imax)};
  tt_type_t bot = TY(TT_F32, 1, 5, 5);
  TT_CHECK(lc_run(p, "aten::max_pool2d_with_indices_backward", bargs, NARGS(bargs), &bot, 1, &r));
  if (r.nout) TT_CHECK(lc_close_f32(r.out[0], gi, 25, 0, 0));
  lc_free(&r);
  for (int incl = 0; incl < 2; incl++) {
    th_arg_t aargs[] = {lc_tensor(TY(TT_F32, 1, 5, 5), P5), INTS(3, 3), INTS(2, 2), INTS(1, 1),
                        BOOL(1), BOOL(incl), NONE()};
    tt_type_t aot = TY(TT_F32, 1, 3, 3);
    TT_CHECK(lc_run(p, "aten::avg_pool2d", aargs, NARGS(aargs), &aot, 1, &r));
    if (r.nout) TT_CHECK(lc_close_f32(r.out[0], incl ? vavg_incl : vavg_excl, 9, 1e-6, 1e-6));
    lc_free(&r);
  }
}

static void test_pools(void) {
  if (lc_new) check_pools(lc_new);
  if (lc_old) check_pools(lc_old);
}

static void test_avg_pool_backward(void) {
  if (!lc_new) return;
  /* 1x1x5x5, window 3, stride 2, padding 1, count_include_pad: every window divides by 9 */
  float gy[9], want[25] = {0};
  for (int i = 0; i < 9; i++) gy[i] = (float)(i + 1);
  for (int oy = 0; oy < 3; oy++)
    for (int ox = 0; ox < 3; ox++)
      for (int y = oy * 2 - 1; y < oy * 2 + 2; y++)
        for (int x = ox * 2 - 1; x < ox * 2 + 2; x++)
          if (y >= 0 && y < 5 && x >= 0 && x < 5) want[y * 5 + x] += gy[oy * 3 + ox] / 9.0f;
  th_arg_t args[] = {lc_tensor(TY(TT_F32, 1, 1, 3, 3), gy), lc_tensor(TY(TT_F32, 1, 1, 5, 5), P5),
                     INTS(3, 3), INTS(2, 2), INTS(1, 1), BOOL(0), BOOL(1), NONE()};
  tt_type_t ot = TY(TT_F32, 1, 1, 5, 5);
  lc_result_t r;
  TT_CHECK(lc_run(lc_new, "aten::avg_pool2d_backward", args, NARGS(args), &ot, 1, &r));
  if (r.nout) TT_CHECK(lc_close_f32(r.out[0], want, 25, 1e-6, 1e-6));
  lc_free(&r);
}

static void check_adaptive(tt_pjrt_t* p) {
  /* 5x5 -> 3x2: rows [0,2) [1,4) [3,5), cols [0,3) [2,5) */
  const int rlo[3] = {0, 1, 3}, rhi[3] = {2, 4, 5}, clo[2] = {0, 2}, chi[2] = {3, 5};
  float avg[6], mx[6];
  int64_t mi[6];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) {
      float s = 0, m = -INFINITY;
      for (int y = rlo[i]; y < rhi[i]; y++)
        for (int x = clo[j]; x < chi[j]; x++) {
          float v = P5[y * 5 + x];
          s += v;
          if (v > m) m = v, mi[i * 2 + j] = y * 5 + x;
        }
      avg[i * 2 + j] = s / (float)((rhi[i] - rlo[i]) * (chi[j] - clo[j]));
      mx[i * 2 + j] = m;
    }
  lc_result_t r;
  th_arg_t args[] = {lc_tensor(TY(TT_F32, 1, 1, 5, 5), P5), INTS(3, 2)};
  tt_type_t ot = TY(TT_F32, 1, 1, 3, 2);
  TT_CHECK(lc_run(p, "aten::_adaptive_avg_pool2d", args, 2, &ot, 1, &r));
  if (r.nout) TT_CHECK(lc_close_f32(r.out[0], avg, 6, 1e-6, 1e-6));
  lc_free(&r);
  tt_type_t mot[2] = {TY(TT_F32, 1, 1, 3, 2), TY(TT_I64, 1, 1, 3, 2)};
  TT_CHECK(lc_run(p, "aten::adaptive_max_pool2d", args, 2, mot, 2, &r));
  if (r.nout) {
    TT_CHECK(lc_close_f32(r.out[0], mx, 6, 0, 0));
    TT_CHECK(lc_eq_i64(r.out[1], mi, 6));
  }
  lc_free(&r);
  /* backward of the average: each input gets gy / count of every window holding it */
  float gy[6] = {1, 2, 3, 4, 5, 6}, want[25] = {0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      for (int y = rlo[i]; y < rhi[i]; y++)
        for (int x = clo[j]; x < chi[j]; x++)
          want[y * 5 + x] += gy[i * 2 + j] / (float)((rhi[i] - rlo[i]) * (chi[j] - clo[j]));
  th_arg_t bargs[] = {lc_tensor(TY(TT_F32, 1, 1, 3, 2), gy), lc_tensor(TY(TT_F32, 1, 1, 5, 5), P5)};
  tt_type_t bot = TY(TT_F32, 1, 1, 5, 5);
  TT_CHECK(lc_run(p, "aten::_adaptive_avg_pool2d_backward", bargs, 2, &bot, 1, &r));
  if (r.nout) TT_CHECK(lc_close_f32(r.out[0], want, 25, 1e-6, 1e-6));
  lc_free(&r);
}

static void test_adaptive(void) {
  if (lc_new) check_adaptive(lc_new);
  if (lc_old) check_adaptive(lc_old);
}

/* ---- fractional max pooling (nn_more_pool.c) ------------------------------------------ */
/* fractional_max_pool2d on a 1x1x4x4 plane, kernel 2, output 2x2, samples 0:
 * alpha = 2, starts {0, 2}: the 2x2 block maxima. */
static void check_fractional_max_pool(tt_pjrt_t* p) {
  float x[16];
  for (int i = 0; i < 16; i++) x[i] = (float)((i * 7) % 16);
  const float u[2] = {0, 0};
  th_arg_t a[] = {lc_tensor(TY(TT_F32, 1, 1, 4, 4), x), INTS(2, 2), INTS(2, 2), lc_tensor(TY(TT_F32, 1, 1, 2), u)};
  tt_type_t ot[2] = {TY(TT_F32, 1, 1, 2, 2), TY(TT_I64, 1, 1, 2, 2)};
  lc_result_t r;
  TT_CHECK(lc_run(p, "aten::fractional_max_pool2d", a, 4, ot, 2, &r));
  float want[4];
  int64_t widx[4];
  for (int oh = 0; oh < 2; oh++)
    for (int ow = 0; ow < 2; ow++) {
      int best = (2 * oh) * 4 + 2 * ow;
      for (int h = 2 * oh; h < 2 * oh + 2; h++)
        for (int w = 2 * ow; w < 2 * ow + 2; w++)
          if (x[h * 4 + w] > x[best]) best = h * 4 + w;
      want[oh * 2 + ow] = x[best], widx[oh * 2 + ow] = best;
    }
  TT_CHECK(lc_close_f32(r.out[0], want, 4, 0, 0));
  TT_CHECK(lc_eq_i64(r.out[1], widx, 4));
  lc_free(&r);
}
static void test_fractional_max_pool(void) {
  if (lc_new) check_fractional_max_pool(lc_new);
  if (!tt__cur_failed && lc_old) check_fractional_max_pool(lc_old);
}

int main(void) {
  lc_open();
  TT_RUN(test_conv);
  TT_RUN(test_conv_ints);
  TT_RUN(test_pools);
  TT_RUN(test_avg_pool_backward);
  TT_RUN(test_adaptive);
  TT_RUN(test_fractional_max_pool);
  lc_close();
  TT_REPORT();
}
