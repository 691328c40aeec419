/* uint8 bilinear / bicubic resizes (antialiased or not), as PyTorch CPU
 * computes them for uint8 images: in integers, one dim at a time (W first,
 * then H; a dim whose size does not change is skipped), the intermediate
 * image rounded back to uint8.
 *
 * Per dim, each output position o reads a window [xmin, xmin + xsize) of
 * the input with weights computed in double (the triangle filter, or the
 * cubic convolution with a = -0.75, or -0.5 with antialias, as PIL) and
 * then turned into fixed point: the precision p is the largest (< 22) with
 * round(max weight * 2^(p+1)) < 2^15, each weight becomes round-half-away(
 * w * 2^p) (an int16). The output is clamp((2^(p-1) + sum x * w) >> p, 0,
 * 255), the shift an arithmetic one (floor): round(sum x * w) up to the
 * weights' quantization, exact in int32 here as on CPU.
 *
 * Without antialias the window is the interpolation's 2 (or 4) taps
 * starting one (two) before floor(source index), cut at the borders, where
 * the taps that fall outside are added into the first (last) kept one
 * (UpSampleKernel.cpp's _compute_indices_min_size_weights; the running
 * maximum of those sums is the "max weight" above). With antialias the
 * windows are the support scaled by the downsampling factor, normalized:
 * the float resizes' own (tt__aa_weights, resample_aa_weights.c, in double).
 *
 * Found while testing: PyTorch CPU's generic uint8 kernel (C > 4 channels)
 * resizes H wrongly when the output width is 1 (it repeats the first input
 * row); its AVX2 kernel (C <= 4) does not. The lowering computes the
 * correct result, the AVX2 kernel's, for every C. */
#include <math.h>
#include <stdlib.h>

#include "../shape/shape_util.h"
#include "resample_aa_weights.h"
#include "resample_u8.h"

typedef struct u8_axis {
  int64_t n, m, width; /* input size, output size, window slots */
  int64_t* xmin;       /* m */
  int64_t* xsize;      /* m */
  double* w;           /* m x width (double weights, then their fixed-point values) */
  int prec;
} u8_axis_t;

static void u8_axis_free(u8_axis_t* a) {
  free(a->xmin), free(a->xsize), free(a->w);
  a->xmin = a->xsize = NULL, a->w = NULL;
}

/* The triangle, or the cubic convolution with a = -0.75 (OpenCV's, as CPU's
 * non-antialiased uint8 path) */
static double plain_filter(double x, bool cubic) {
  const double a = -0.75;
  x = fabs(x);
  if (!cubic) return x < 1.0 ? 1.0 - x : 0.0;
  if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

/* Window of output i without antialias; returns the running maximum of the
 * accumulated weights. */
static double window_plain(const u8_axis_t* a, int64_t i, double scale, bool align, bool cubic, double* w,
                           int64_t* xmin, int64_t* xsize) {
  double src = align ? scale * (double)i : scale * ((double)i + 0.5) - 0.5;
  if (!align && !cubic && src < 0) src = 0;
  int64_t idx = (int64_t)floorf((float)src);
  if (idx > a->n - 1) idx = a->n - 1;
  double lambda = src - (double)idx;
  lambda = lambda < 0 ? 0 : lambda > 1 ? 1 : lambda;
  int64_t support = a->width / 2;
  int64_t umin = idx - support + 1, umax = idx + support + 1;
  *xmin = umin > 0 ? umin : 0;
  int64_t size = (umax < a->n ? umax : a->n) - *xmin;
  *xsize = size < 0 ? 0 : size > a->width ? a->width : size;
  double wmax = 0;
  int64_t k = 0;
  for (int64_t j = 0; j < a->width; j++) {
    double v = plain_filter((double)(j + 1 - support) - lambda, cubic);
    if (umin + j <= 0) k = 0;
    else if (umin + j >= a->n - 1) k = *xsize - 1;
    if (k >= 0 && k < a->width) {
      w[k] += v;
      if (w[k] > wmax) wmax = w[k];
    }
    k++;
  }
  return wmax;
}

/* Windows and fixed-point weights of one dim (n -> m); false on OOM. */
static bool u8_axis_make(u8_axis_t* a, int64_t n, int64_t m, bool align, double given, bool cubic, bool aa) {
  a->n = n, a->m = m;
  double wmax = 0;
  if (aa) { /* the float resizes' windows, computed in double */
    tt_larg_t sc = {.kind = given > 0 ? TT_ARG_FLOAT : TT_ARG_NONE, .f = given};
    aa_dim_t d = {0};
    bool ok = tt__aa_weights(n, m, align, &sc, true, cubic, &d);
    a->width = d.width, a->xmin = d.xmin, a->xsize = d.xsize, a->w = d.w;
    if (!ok) return false;
    for (int64_t i = 0; i < m * a->width; i++) wmax = a->w[i] > wmax ? a->w[i] : wmax;
  } else {
    double scale = align ? (m > 1 ? (double)(n - 1) / (double)(m - 1) : 0.0)
                         : given > 0 ? 1.0 / given : (double)n / (double)m;
    a->width = cubic ? 4 : 2;
    size_t cnt = (size_t)(m ? m : 1);
    a->xmin = malloc(cnt * sizeof(int64_t));
    a->xsize = malloc(cnt * sizeof(int64_t));
    a->w = calloc(cnt * (size_t)a->width, sizeof(double));
    if (!a->xmin || !a->xsize || !a->w) return false;
    for (int64_t i = 0; i < m; i++) {
      double wm = window_plain(a, i, scale, align, cubic, a->w + i * a->width, &a->xmin[i], &a->xsize[i]);
      if (wm > wmax) wmax = wm;
    }
  }
  int p = 0;
  while (p < 22 && (int)(0.5 + wmax * (double)(1 << (p + 1))) < (1 << 15)) p++;
  a->prec = p;
  for (int64_t i = 0; i < m * a->width; i++) {
    double v = a->w[i] * (double)(1 << p);
    a->w[i] = (double)(int16_t)(v < 0 ? (int)(-0.5 + v) : (int)(0.5 + v));
  }
  return true;
}

/* One dim's pass over v (int32 values of uint8 pixels) along dim. */
static tt_val_t u8_pass(tt_shlo_fn_t* f, tt_val_t v, int dim, const u8_axis_t* a) {
  int64_t m = a->m;
  int64_t* idx = malloc((size_t)(m ? m : 1) * sizeof(int64_t));
  int64_t* wk = malloc((size_t)(m ? m : 1) * sizeof(int64_t));
  tt_val_t acc = TT_SHLO_INVALID;
  if (!idx || !wk) {
    tt_shlo_fail(f, "out of memory");
    goto done;
  }
  tt_type_t vt = tt__sh_type(f, v);
  vt.dims[dim] = m;
  acc = tt_l_full(f, TT_I32, vt.rank, vt.dims, (double)(1 << (a->prec > 0 ? a->prec - 1 : 0)));
  for (int64_t j = 0; j < a->width; j++) {
    bool any = false;
    for (int64_t o = 0; o < m; o++) {
      int64_t sz = a->xsize[o];
      int64_t k = a->xmin[o] + (j < sz ? j : 0);
      idx[o] = k < a->n ? k : a->n - 1;
      wk[o] = j < sz ? (int64_t)a->w[o * a->width + j] : 0;
      any = any || (j < sz && wk[o] != 0);
    }
    if (!any) continue;
    tt_val_t wv = tt_shlo_const_i64s(f, wk, (int)m);
    tt_type_t wt = tt_type_make(TT_I32, 1, &m);
    wv = tt_shlo_op(f, "stablehlo.convert", &wv, 1, &wt, NULL);
    tt_val_t tap = tt__sh_take(f, v, dim, idx, m);
    tap = tt_l_binary(f, "stablehlo.multiply", tap, tt__sh_along(f, wv, vt.rank, vt.dims, dim));
    acc = tt_l_binary(f, "stablehlo.add", acc, tap);
  }
  acc = tt_l_binary(f, "stablehlo.shift_right_arithmetic", acc, tt_l_full(f, TT_I32, vt.rank, vt.dims, a->prec));
  acc = tt_l_binary(f, "stablehlo.maximum", acc, tt_l_full(f, TT_I32, vt.rank, vt.dims, 0));
  acc = tt_l_binary(f, "stablehlo.minimum", acc, tt_l_full(f, TT_I32, vt.rank, vt.dims, 255));
done:
  free(idx), free(wk);
  return acc;
}

tt_val_t tt__resample_u8(tt_shlo_fn_t* f, tt_val_t x, const int64_t out_hw[2], bool align,
                         const double scales[2], bool cubic, bool antialias) {
  tt_type_t xt = tt__sh_type(f, x);
  if (xt.rank != 4) {
    tt_shlo_fail(f, "uint8 resize: expected a 4-d input");
    return TT_SHLO_INVALID;
  }
  tt_type_t ot = xt;
  ot.dims[2] = out_hw[0], ot.dims[3] = out_hw[1];
  if (tt_type_numel(&ot) == 0 || tt_type_numel(&xt) == 0) return tt_shlo_const(f, &ot, 0);
  tt_val_t v = tt_l_convert(f, x, TT_I32);
  for (int k = 1; k >= 0; k--) { /* W, then H */
    int dim = 2 + k;
    if (xt.dims[dim] == out_hw[k]) continue;
    u8_axis_t a = {0};
    bool ok = u8_axis_make(&a, xt.dims[dim], out_hw[k], align, scales[k], cubic, antialias);
    if (ok) {
      v = u8_pass(f, v, dim, &a);
    } else {
      tt_shlo_fail(f, "out of memory");
      v = TT_SHLO_INVALID;
    }
    u8_axis_free(&a);
    if (!ok) return v;
  }
  return tt_l_convert(f, v, TT_U8);
}
