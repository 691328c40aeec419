/* Resampling: upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d,
 * upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d,
 * upsample_bicubic2d and their backward ops.
 *
 * Every mode is separable: per spatial axis, each output position reads a
 * few input positions (taps) with weights. The index and weight tables are
 * computed here, in C, with PyTorch CPU's formulas and arithmetic types
 * (UpSample.h: float scales for nearest; the opmath type - float, or double
 * for float64 - for linear and cubic weights), and become constants. The
 * forward is one gather per tap and axis, the last axis first (as PyTorch's
 * nested interpolation), accumulated as t0*w0 + t1*w1 + ... in opmath; half
 * types round once at the end, and their weights are first rounded to the
 * half type where PyTorch CPU stores them so (F_HALF_W). The backward is one
 * scatter-add per axis, accumulated in opmath (PyTorch CPU uses a float
 * buffer for half types). The .vec overloads are CompositeImplicitAutograd.
 * uint8 bilinear2d / bicubic2d compute in fixed point as CPU does
 * (resample_u8.c); CPU has no other integer linear / cubic resize, nor do we.
 * The antialiased resizes are in nn_more_aa.c. */
#include <math.h>
#include <stdlib.h>

#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"
#include "resample_u8.h"

enum { M_NEAREST, M_EXACT, M_LINEAR, M_CUBIC };
/* PyTorch CPU keeps half-type weights in the half type, except in its
 * bilinear2d kernel (measured) */
#define F_HALF_W 64
#define PARAM(mode, k) ((mode) * 8 + (k))

typedef struct axis {
  int taps;
  int64_t m;       /* output size */
  int64_t* idx;    /* idx[t * m + o] */
  double* w;       /* w[t * m + o]; NULL for nearest */
} axis_t;

static void axis_free(axis_t* a) {
  free(a->idx);
  free(a->w);
}

/* scale: a FLOAT argument, or absent */
typedef struct opt_scale {
  bool has;
  double v;
} opt_scale_t;

static float scales_value_f(opt_scale_t s, int64_t n, int64_t m) {
  return (s.has && s.v > 0.) ? (float)(1.0 / s.v) : ((float)n / m);
}

/* area_pixel_compute_scale / area_pixel_compute_source_index /
 * guard_index_and_lambda in the opmath type T (float or double) */
#define DEFINE_INTERP(T, SUF)                                                                \
  static T scale_##SUF(int64_t n, int64_t m, bool align, opt_scale_t s) {                   \
    if (align) return m > 1 ? (T)(n - 1) / (m - 1) : (T)0;                                   \
    return (s.has && s.v > 0.) ? (T)(1.0 / s.v) : ((T)n / m);                                \
  }                                                                                          \
  static T source_##SUF(T scale, int64_t o, bool align, bool cubic) {                        \
    if (align) return scale * o;                                                             \
    T src = scale * (o + (T)0.5) - (T)0.5;                                                   \
    return (!cubic && src < (T)0) ? (T)0 : src;                                              \
  }                                                                                          \
  static void guard_##SUF(T real, int64_t n, int64_t* i, T* lambda) {                        \
    int64_t f = (int64_t)floorf((float)real);                                                \
    *i = f < n - 1 ? f : n - 1;                                                              \
    T l = real - *i;                                                                         \
    *lambda = l < (T)0 ? (T)0 : l > (T)1 ? (T)1 : l;                                         \
  }                                                                                          \
  static T cc1_##SUF(T x, T A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }               \
  static T cc2_##SUF(T x, T A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }         \
  static void fill_##SUF(axis_t* a, int mode, int64_t n, bool align, opt_scale_t s) {        \
    int64_t m = a->m;                                                                        \
    T scale = scale_##SUF(n, m, align, s);                                                   \
    for (int64_t o = 0; o < m; o++) {                                                        \
      if (mode == M_LINEAR) {                                                                \
        int64_t i0 = o, i1 = o;                                                              \
        T l0 = 1, l1 = 0;                                                                    \
        if (m != n) {                                                                        \
          guard_##SUF(source_##SUF(scale, o, align, false), n, &i0, &l1);                    \
          i1 = i0 + (i0 < n - 1 ? 1 : 0);                                                    \
          l0 = (T)1 - l1;                                                                    \
        }                                                                                    \
        a->idx[o] = i0, a->idx[m + o] = i1;                                                  \
        a->w[o] = l0, a->w[m + o] = l1;                                                      \
      } else {                                                                               \
        int64_t i;                                                                           \
        T t, A = (T)-0.75;                                                                   \
        guard_##SUF(source_##SUF(scale, o, align, true), n, &i, &t);                         \
        T x1 = t, x2 = (T)(1.0 - t);                                                         \
        T cf[4] = {cc2_##SUF((T)(x1 + 1.0), A), cc1_##SUF(x1, A), cc1_##SUF(x2, A),          \
                   cc2_##SUF((T)(x2 + 1.0), A)};                                             \
        for (int j = 0; j < 4; j++) {                                                        \
          int64_t k = i - 1 + j;                                                             \
          a->idx[j * m + o] = k < 0 ? 0 : k > n - 1 ? n - 1 : k;                            \
          a->w[j * m + o] = cf[j];                                                           \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }
DEFINE_INTERP(float, f)
DEFINE_INTERP(double, d)

/* The taps of one axis (n input, m output positions); false on OOM. */
static bool axis_make(axis_t* a, int mode, int64_t n, int64_t m, bool align, opt_scale_t s,
                      bool wide) {
  a->taps = mode == M_LINEAR ? 2 : mode == M_CUBIC ? 4 : 1;
  a->m = m;
  size_t cnt = (size_t)(a->taps * (m ? m : 1));
  a->idx = malloc(cnt * sizeof(int64_t));
  a->w = a->taps > 1 ? malloc(cnt * sizeof(double)) : NULL;
  if (!a->idx || (a->taps > 1 && !a->w)) return false;
  if (mode == M_NEAREST || mode == M_EXACT) {
    float scale = scales_value_f(s, n, m);
    for (int64_t o = 0; o < m; o++) {
      int64_t i;
      if (mode == M_EXACT) i = (int64_t)floorf((float)((o + 0.5) * scale));
      else if (m == n) i = o;
      else if (m == 2 * n) i = o >> 1;
      else i = (int64_t)floorf(o * scale);
      a->idx[o] = i < n - 1 ? i : n - 1;
    }
  } else if (wide) {
    fill_d(a, mode, n, align, s);
  } else {
    fill_f(a, mode, n, align, s);
  }
  return true;
}

/* Weights of tap t as a value of cdt broadcast along dim of (rank, dims).
 * round_dt: a half type to round them through (linear: w0 = 1 - rounded w1,
 * in the half type), or cdt. */
static tt_val_t tap_weight(tt_shlo_fn_t* f, const axis_t* a, int t, tt_dtype_t cdt,
                           tt_dtype_t round_dt, int rank, const int64_t* dims, int dim) {
  int64_t m = a->m;
  bool half = round_dt == TT_BF16 || round_dt == TT_F16;
  tt_val_t w;
  if (half && a->taps == 2 && t == 0) {
    w = tt__sh_fconst(f, cdt, a->w + m, m);
    w = tt_l_convert(f, tt_l_convert(f, w, round_dt), cdt);
    tt_type_t wt = tt__sh_type(f, w);
    w = tt_l_binary(f, "stablehlo.subtract", tt_shlo_const(f, &wt, 1.0), w);
  } else {
    w = tt__sh_fconst(f, cdt, a->w + t * m, m);
  }
  if (half) w = tt_l_convert(f, tt_l_convert(f, w, round_dt), cdt);
  return tt__sh_along(f, w, rank, dims, dim);
}

/* The scale argument at i (FLOAT or NONE). */
static opt_scale_t scale_arg(tt_lctx_t* c, int i) {
  opt_scale_t s = {false, 0.0};
  if (i < c->nargs && c->args[i].kind == TT_ARG_FLOAT) {
    s.has = true;
    s.v = c->args[i].f;
  }
  return s;
}

/* Shared by forward (self, output_size, [align_corners,] scales...) and
 * backward (grad_output, output_size, input_size, [align_corners,] scales...). */
static tt_status_t lower_upsample_common(tt_lctx_t* c, bool backward) {
  tt_shlo_fn_t* f = c->f;
  int mode = (int)(c->op->param % F_HALF_W / 8), k = (int)(c->op->param % 8);
  bool interp = mode == M_LINEAR || mode == M_CUBIC;
  int ai = backward ? 3 : 2; /* align_corners, or the first scale */
  bool align = interp && c->args[ai].i != 0;
  int si = interp ? ai + 1 : ai;
  const tt_type_t* ot = &c->out_types[0];
  tt_type_t xt = tt__sh_type(f, c->args[0].val);
  if (xt.rank != ot->rank || xt.rank < k + 1)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: unexpected input rank %d", c->op->name, xt.rank);
  if (tt_type_numel(ot) == 0 || tt_type_numel(&xt) == 0)
    return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  if (interp && !backward && (tt_dtype_is_signed_int(xt.dtype) || tt_dtype_is_unsigned_int(xt.dtype) || xt.dtype == TT_BOOL)) {
    if (xt.dtype != TT_U8 || k != 2)
      return tt_status_make(TT_UNIMPLEMENTED, "%s: not implemented for %s (PyTorch CPU resizes only uint8 "
                            "among integer types, and only bilinear and bicubic in 2-d)", c->op->name,
                            tt_dtype_name(xt.dtype));
    int64_t hw[2] = {ot->dims[xt.rank - 2], ot->dims[xt.rank - 1]};
    opt_scale_t sh = scale_arg(c, si), sw = scale_arg(c, si + 1);
    double sc[2] = {sh.has ? sh.v : 0.0, sw.has ? sw.v : 0.0};
    return tt_l_set_out(c, 0, tt__resample_u8(f, c->args[0].val, hw, align, sc, mode == M_CUBIC, false));
  }
  tt_dtype_t cdt = tt_l_opmath(ot->dtype);
  bool wide = cdt == TT_F64;
  tt_dtype_t round_dt = (c->op->param & F_HALF_W) ? ot->dtype : cdt;
  tt_val_t v = c->args[0].val;
  if (interp || backward) v = tt_l_convert(f, v, cdt);
  /* the last axis first */
  for (int j = k - 1; j >= 0; j--) {
    int dim = xt.rank - k + j;
    int64_t n = backward ? ot->dims[dim] : xt.dims[dim]; /* input size */
    int64_t m = backward ? xt.dims[dim] : ot->dims[dim]; /* output size */
    axis_t a = {0, 0, NULL, NULL};
    if (!axis_make(&a, mode, n, m, align, scale_arg(c, si + j), wide)) {
      axis_free(&a);
      return tt_status_make(TT_RESOURCE_EXHAUSTED, "%s: out of memory", c->op->name);
    }
    tt_type_t vt = tt__sh_type(f, v);
    if (!backward) {
      tt_val_t acc = TT_SHLO_INVALID;
      for (int t = 0; t < a.taps; t++) {
        tt_val_t g = tt__sh_take(f, v, dim, a.idx + t * m, m);
        if (a.w) {
          tt_type_t gt = tt__sh_type(f, g);
          g = tt_l_binary(f, "stablehlo.multiply", g,
                          tap_weight(f, &a, t, cdt, round_dt, gt.rank, gt.dims, dim));
        }
        acc = t == 0 ? g : tt_l_binary(f, "stablehlo.add", acc, g);
      }
      v = acc;
    } else if (!a.w) {
      v = tt__sh_put_add(f, v, dim, a.idx, n);
    } else { /* one scatter of every tap's weighted gradient */
      tt_val_t parts[4];
      for (int t = 0; t < a.taps; t++)
        parts[t] = tt_l_binary(f, "stablehlo.multiply", v,
                               tap_weight(f, &a, t, cdt, cdt, vt.rank, vt.dims, dim));
      v = tt__sh_put_add(f, tt_lt_concat(f, parts, a.taps, dim), dim, a.idx, n);
    }
    axis_free(&a);
  }
  return tt_l_set_out(c, 0, v);
}
static tt_status_t lower_upsample(tt_lctx_t* c) { return lower_upsample_common(c, false); }
static tt_status_t lower_upsample_backward(tt_lctx_t* c) { return lower_upsample_common(c, true); }

#define R(name, fn, param) {"aten::" name, fn, param, 0}
#define UP(name, mode, k)                                                                    \
  R(name, lower_upsample, PARAM(mode, k)), R(name ".out", lower_upsample, PARAM(mode, k)),   \
  R(name "_backward", lower_upsample_backward, PARAM(mode, k)),                              \
  R(name "_backward.grad_input", lower_upsample_backward, PARAM(mode, k))

const tt_lower_entry_t tt_lower_resample[] = {
    UP("upsample_nearest1d", M_NEAREST, 1),
    UP("upsample_nearest2d", M_NEAREST, 2),
    UP("upsample_nearest3d", M_NEAREST, 3),
    UP("_upsample_nearest_exact1d", M_EXACT, 1),
    UP("_upsample_nearest_exact2d", M_EXACT, 2),
    UP("_upsample_nearest_exact3d", M_EXACT, 3),
    UP("upsample_linear1d", M_LINEAR, 1 + F_HALF_W),
    UP("upsample_bilinear2d", M_LINEAR, 2),
    UP("upsample_trilinear3d", M_LINEAR, 3 + F_HALF_W),
    UP("upsample_bicubic2d", M_CUBIC, 2 + F_HALF_W),
};
const int tt_lower_resample_count = TT_TABLE_COUNT(tt_lower_resample);
