/* _upsample_bilinear2d_aa and _upsample_bicubic2d_aa (antialiased resizes)
 * and their backward.
 *
 * CPU resizes one dim at a time (W first, then H; a dim whose size does not
 * change is skipped) with per-output windows [xmin, xmin + xsize) and
 * normalized filter weights: the triangle (bilinear, support 1) or Keys'
 * cubic with a = -0.5 (bicubic, support 2, as PIL), the support widened by
 * the scale when downsampling. The windows and weights depend only on
 * sizes and scales, so they are computed in C (resample_aa_weights.c),
 * rounding each step to the tensor's float type as CPU's scalar_t code does;
 * the program gathers one tap per window slot and adds the slots in order
 * (masked past xsize). The backward pass scatter-adds the weighted gradient
 * through the same windows (its summation order differs from CPU's by
 * rounding only). uint8 images resize in fixed point as on CPU
 * (resample_u8.c). */
#include <stdlib.h>

#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"
#include "resample_aa_weights.h"
#include "resample_u8.h"


/* Slot j of every window: input index (clamped into the window) and weight. */
static void slot(const aa_dim_t* d, int64_t j, int64_t* idx, double* w, bool* any) {
  *any = false;
  for (int64_t o = 0; o < d->out; o++) {
    int64_t n = d->xsize[o];
    idx[o] = d->xmin[o] + (j < n ? j : (n ? n - 1 : 0));
    if (idx[o] >= d->in) idx[o] = d->in - 1;
    w[o] = j < n ? d->w[o * d->width + j] : 0.0;
    if (j < n) *any = true;
  }
}

/* A (len,) vector along `dim` of v's shape, as dt. */
static tt_val_t along(tt_shlo_fn_t* f, tt_val_t vec, const tt_type_t* t, int dim) {
  return tt__sh_along(f, vec, t->rank, t->dims, dim);
}

/* Resizes v along dim with d's windows: out = sum over slots in order. */
static tt_val_t resize_dim(tt_shlo_fn_t* f, tt_val_t v, int dim, const aa_dim_t* d, tt_dtype_t dt) {
  int64_t* idx = malloc((size_t)d->out * sizeof(int64_t));
  double* w = malloc((size_t)d->out * sizeof(double));
  double* valid = malloc((size_t)d->out * sizeof(double));
  tt_val_t acc = TT_SHLO_INVALID;
  if (!idx || !w || !valid) {
    tt_shlo_fail(f, "out of memory");
    goto done;
  }
  for (int64_t j = 0; j < d->width; j++) {
    bool any;
    slot(d, j, idx, w, &any);
    if (!any && j) break;
    tt_val_t tap = tt__sh_take(f, v, dim, idx, d->out);
    tt_type_t t = tt__sh_type(f, tap);
    tt_val_t term = tt_l_binary(f, "stablehlo.multiply", tap, along(f, tt__sh_fconst(f, dt, w, d->out), &t, dim));
    if (j == 0) {
      acc = term;
      continue;
    }
    for (int64_t o = 0; o < d->out; o++) valid[o] = j < d->xsize[o];
    tt_val_t ok = tt_l_compare(f, "NE", along(f, tt__sh_fconst(f, dt, valid, d->out), &t, dim), tt_l_full(f, dt, t.rank, t.dims, 0));
    acc = tt_l_select(f, ok, tt_l_binary(f, "stablehlo.add", acc, term), acc);
  }
done:
  free(idx), free(w), free(valid);
  return acc;
}

/* The transpose of resize_dim: grad (out along dim) -> (in along dim). */
static tt_val_t resize_dim_bwd(tt_shlo_fn_t* f, tt_val_t g, int dim, const aa_dim_t* d, tt_dtype_t dt) {
  int64_t* idx = malloc((size_t)d->out * sizeof(int64_t));
  double* w = malloc((size_t)d->out * sizeof(double));
  tt_val_t acc = TT_SHLO_INVALID;
  if (!idx || !w) {
    tt_shlo_fail(f, "out of memory");
    goto done;
  }
  tt_type_t t = tt__sh_type(f, g);
  for (int64_t j = 0; j < d->width; j++) {
    bool any;
    slot(d, j, idx, w, &any);
    if (!any && j) break;
    tt_val_t term = tt_l_binary(f, "stablehlo.multiply", g, along(f, tt__sh_fconst(f, dt, w, d->out), &t, dim));
    tt_val_t put = tt__sh_put_add(f, term, dim, idx, d->in);
    acc = j ? tt_l_binary(f, "stablehlo.add", acc, put) : put;
  }
done:
  free(idx), free(w);
  return acc;
}

/* Checks the dtype and builds the H and W windows (sizes in, out). */
static tt_status_t setup(tt_lctx_t* c, tt_dtype_t dt, const int64_t* in, const int64_t* out, int ialign,
                         aa_dim_t* d) {
  if (dt != TT_F32 && dt != TT_F64)
    return tt_status_make(TT_UNIMPLEMENTED, "%s: only float32, float64 and uint8 are supported, not %s", c->op->name,
                          tt_dtype_name(dt));
  bool align = c->args[ialign].i != 0, cubic = c->op->param == 1;
  for (int k = 0; k < 2; k++)
    if (!tt__aa_weights(in[k], out[k], align, &c->args[ialign + 1 + k], dt == TT_F64, cubic, &d[k]))
      return tt_status_make(TT_RESOURCE_EXHAUSTED, "%s: out of memory", c->op->name);
  return NULL;
}

/* _upsample_{bilinear,bicubic}2d_aa(self, output_size, align_corners, scales_h?, scales_w?) */
static tt_status_t lower_aa(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_type_t xt = tt__sh_type(f, c->args[0].val);
  if (xt.rank != 4) return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a 4-d input", c->op->name);
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0));
  aa_dim_t d[2] = {{0}, {0}};
  int64_t in[2] = {xt.dims[2], xt.dims[3]}, out[2] = {ot->dims[2], ot->dims[3]};
  if (xt.dtype == TT_U8) {
    double sc[2];
    for (int k = 0; k < 2; k++) sc[k] = c->args[3 + k].kind == TT_ARG_FLOAT ? c->args[3 + k].f : 0.0;
    return tt_l_set_out(c, 0, tt__resample_u8(f, c->args[0].val, out, c->args[2].i != 0, sc, c->op->param == 1,
                                              true));
  }
  /* half types (CUDA takes them, CPU does not): computed in f32, rounded once */
  tt_dtype_t cdt = xt.dtype == TT_F16 || xt.dtype == TT_BF16 ? TT_F32 : xt.dtype;
  tt_status_t st = setup(c, cdt, in, out, 2, d);
  tt_val_t v = tt_l_convert(f, c->args[0].val, cdt);
  if (!st && in[1] != out[1]) v = resize_dim(f, v, 3, &d[1], cdt);
  if (!st && in[0] != out[0]) v = resize_dim(f, v, 2, &d[0], cdt);
  tt__aa_free(&d[0]), tt__aa_free(&d[1]);
  return st ? st : tt_l_set_out(c, 0, tt_l_convert(f, v, ot->dtype));
}

/* _upsample_{bilinear,bicubic}2d_aa_backward(grad_output, output_size, input_size, align_corners, scales_h?, scales_w?) */
static tt_status_t lower_aa_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_type_t gt = tt__sh_type(f, c->args[0].val);
  if (gt.rank != 4 || ot->rank != 4) return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected 4-d tensors", c->op->name);
  if (tt_type_numel(ot) == 0 || tt_type_numel(&gt) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0));
  aa_dim_t d[2] = {{0}, {0}};
  int64_t in[2] = {ot->dims[2], ot->dims[3]}, out[2] = {gt.dims[2], gt.dims[3]};
  tt_dtype_t cdt = gt.dtype == TT_F16 || gt.dtype == TT_BF16 ? TT_F32 : gt.dtype;
  tt_status_t st = setup(c, cdt, in, out, 3, d);
  tt_val_t v = tt_l_convert(f, c->args[0].val, cdt);
  if (!st && in[0] != out[0]) v = resize_dim_bwd(f, v, 2, &d[0], cdt);
  if (!st && in[1] != out[1]) v = resize_dim_bwd(f, v, 3, &d[1], cdt);
  tt__aa_free(&d[0]), tt__aa_free(&d[1]);
  return st ? st : tt_l_set_out(c, 0, tt_l_convert(f, v, ot->dtype));
}

const tt_lower_entry_t tt_lower_nn_more_aa[] = {
    {"aten::_upsample_bilinear2d_aa", lower_aa, 0, 0},
    {"aten::_upsample_bilinear2d_aa.out", lower_aa, 0, 0},
    {"aten::_upsample_bilinear2d_aa_backward", lower_aa_bwd, 0, 0},
    {"aten::_upsample_bilinear2d_aa_backward.grad_input", lower_aa_bwd, 0, 0},
    {"aten::_upsample_bicubic2d_aa", lower_aa, 1, 0},
    {"aten::_upsample_bicubic2d_aa.out", lower_aa, 1, 0},
    {"aten::_upsample_bicubic2d_aa_backward", lower_aa_bwd, 1, 0},
    {"aten::_upsample_bicubic2d_aa_backward.grad_input", lower_aa_bwd, 1, 0},
};
const int tt_lower_nn_more_aa_count = TT_TABLE_COUNT(tt_lower_nn_more_aa);
