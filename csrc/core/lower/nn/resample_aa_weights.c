/* The antialiased resizes' windows and weights (see resample_aa_weights.h),
 * computed in C from sizes and scales: no StableHLO here. */
#include <math.h>
#include <stdlib.h>

#include "resample_aa_weights.h"

void tt__aa_free(aa_dim_t* d) {
  free(d->xmin), free(d->xsize), free(d->w);
  d->xmin = d->xsize = NULL, d->w = NULL;
}

/* x rounded to the compute type (float unless f64). */
static double rnd(double x, bool f64) { return f64 ? x : (double)(float)x; }

/* The filter at x, in the compute type: the triangle, or Keys' cubic
 * convolution with a = -0.5. */
static double aa_filter(double x, bool cubic, bool f64) {
  x = fabs(x);
  if (!cubic) return x < 1.0 ? rnd(1.0 - x, f64) : 0.0;
  const double a = -0.5;
  if (x < 1.0) return rnd(rnd(rnd(rnd(rnd((a + 2) * x, f64) - (a + 3), f64) * x, f64) * x, f64) + 1.0, f64);
  if (x < 2.0)
    return rnd(rnd(rnd(rnd(rnd(rnd(a * x, f64) - 5 * a, f64) * x, f64) + 8 * a, f64) * x, f64) - 4 * a, f64);
  return 0.0;
}

bool tt__aa_weights(int64_t in, int64_t out, bool align, const tt_larg_t* sc, bool f64, bool cubic, aa_dim_t* d) {
  double scale;
  if (align) scale = out > 1 ? rnd(rnd((double)(in - 1), f64) / rnd((double)(out - 1), f64), f64) : 0;
  else if (sc->kind == TT_ARG_FLOAT && sc->f > 0) scale = rnd(1.0 / sc->f, f64);
  else scale = rnd(rnd((double)in, f64) / rnd((double)out, f64), f64);
  double half = cubic ? 2.0 : 1.0; /* interp_size / 2 */
  double support = scale >= 1.0 ? rnd(half * scale, f64) : half;
  d->in = in, d->out = out, d->width = (int64_t)ceil(support) * 2 + 1;
  d->xmin = malloc((size_t)(out ? out : 1) * sizeof(int64_t));
  d->xsize = malloc((size_t)(out ? out : 1) * sizeof(int64_t));
  d->w = calloc((size_t)((out ? out : 1) * d->width), sizeof(double));
  if (!d->xmin || !d->xsize || !d->w) return false;
  double invscale = scale >= 1.0 ? rnd(1.0 / scale, f64) : 1.0;
  for (int64_t i = 0; i < out; i++) {
    double center = rnd(scale * ((double)i + 0.5), f64);
    int64_t xmin = (int64_t)(rnd(center - support, f64) + 0.5);
    if (xmin < 0) xmin = 0;
    int64_t hi = (int64_t)(rnd(center + support, f64) + 0.5);
    int64_t xsize = (hi < in ? hi : in) - xmin;
    if (xsize < 0) xsize = 0;
    if (xsize > d->width) xsize = d->width;
    double* w = d->w + i * d->width;
    double total = 0;
    for (int64_t j = 0; j < xsize; j++) {
      w[j] = aa_filter(rnd((rnd(rnd((double)(j + xmin), f64) - center, f64) + 0.5) * invscale, f64), cubic, f64);
      total = rnd(total + w[j], f64);
    }
    if (total != 0.0)
      for (int64_t j = 0; j < xsize; j++) w[j] = rnd(w[j] / total, f64);
    d->xmin[i] = xmin, d->xsize[i] = xsize;
  }
  return true;
}
