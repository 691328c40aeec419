/* Sliding-window rearrangements: im2col / col2im (nn.functional.unfold /
 * fold) and max_unpool{2,3}d.
 *
 * im2col takes one strided slice of the zero-padded input per kernel offset
 * (kh * kw slices, concatenated); col2im is its transpose: each offset's
 * block is placed with interior padding (stride - 1) and the blocks are added
 * in CPU's order (kernel offsets ascending), so the sums round as CPU's do.
 * max_unpool scatters each (N, C) plane's values to their flat indices;
 * out-of-range indices raise at the next sync, as CPU raises. */
#include <stdio.h>

#include "../lower_tensor_util.h"
#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"



/* ---- im2col / col2im ------------------------------------------------------------------ */

typedef struct win2 {
  int64_t k[2], dil[2], pad[2], s[2]; /* kernel, dilation, padding, stride (h, w) */
  int64_t in[2], out[2];              /* image size, number of block positions */
} win2_t;

static tt_status_t parse_win2(tt_lctx_t* c, int ik, const int64_t* image, win2_t* w) {
  for (int a = 0; a < 4; a++) {
    const tt_larg_t* x = &c->args[ik + a];
    if (x->kind != TT_ARG_INTS || x->n != 2)
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected 2 values in argument %d", c->op->name, ik + a);
  }
  for (int d = 0; d < 2; d++) {
    w->k[d] = c->args[ik].ints[d];
    w->dil[d] = c->args[ik + 1].ints[d];
    w->pad[d] = c->args[ik + 2].ints[d];
    w->s[d] = c->args[ik + 3].ints[d];
    w->in[d] = image[d];
    if (w->k[d] <= 0 || w->dil[d] <= 0 || w->s[d] <= 0 || w->pad[d] < 0)
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: invalid kernel, dilation, padding or stride", c->op->name);
    w->out[d] = (w->in[d] + 2 * w->pad[d] - (w->dil[d] * (w->k[d] - 1) + 1)) / w->s[d] + 1;
    if (w->out[d] <= 0)
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: the kernel does not fit the padded input", c->op->name);
  }
  return NULL;
}

/* im2col(self, kernel_size, dilation, padding, stride) -> (N, C*kh*kw, L) */
static tt_status_t lower_im2col(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = tt__sh_batched(f, c->args[0].val, 4);
  tt_type_t xt = tt__sh_type(f, x);
  win2_t w;
  TT_RETURN_IF_ERROR(parse_win2(c, 1, xt.dims + 2, &w));
  if (tt_type_numel(&c->out_types[0]) == 0)
    return tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], 0.0));
  int64_t lo[4] = {0, 0, w.pad[0], w.pad[1]};
  x = tt_lt_pad(f, x, tt_lt_const0(f, xt.dtype, 0.0), lo, lo);
  int64_t nk = w.k[0] * w.k[1], L = w.out[0] * w.out[1];
  int64_t one[4] = {xt.dims[0], xt.dims[1], 1, L};
  tt_val_t parts[64], acc = TT_SHLO_INVALID;
  int np = 0;
  for (int64_t i = 0; i < w.k[0]; i++) {
    for (int64_t j = 0; j < w.k[1]; j++) {
      int64_t st[4] = {0, 0, i * w.dil[0], j * w.dil[1]};
      int64_t lim[4] = {xt.dims[0], xt.dims[1], st[2] + (w.out[0] - 1) * w.s[0] + 1,
                        st[3] + (w.out[1] - 1) * w.s[1] + 1};
      int64_t str[4] = {1, 1, w.s[0], w.s[1]};
      parts[np++] = tt_l_reshape(f, tt_shlo_slice(f, x, st, lim, str), 4, one);
      if (np == 64 || (i == w.k[0] - 1 && j == w.k[1] - 1)) { /* concat in chunks */
        tt_val_t cat = tt_lt_concat(f, parts, np, 2);
        tt_val_t two[2] = {acc, cat};
        acc = acc == TT_SHLO_INVALID ? cat : tt_lt_concat(f, two, 2, 2);
        np = 0;
      }
    }
  }
  int64_t od[3] = {xt.dims[0], xt.dims[1] * nk, L};
  return tt_l_set_out(c, 0, tt_l_reshape(f, acc, c->out_types[0].rank == 3 ? 3 : 2,
                                         c->out_types[0].rank == 3 ? od : od + 1));
}

/* col2im(self, output_size, kernel_size, dilation, padding, stride) -> (N, C, H, W) */
static tt_status_t lower_col2im(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_larg_t* os = &c->args[1];
  if (os->kind != TT_ARG_INTS || os->n != 2)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: output_size must have 2 values", c->op->name);
  win2_t w;
  TT_RETURN_IF_ERROR(parse_win2(c, 2, os->ints, &w));
  /* CPU accumulates in the tensor dtype (f16/bf16 sums round at every add) */
  tt_dtype_t acc_dt = c->out_types[0].dtype;
  tt_val_t x = tt__sh_batched(f, tt_l_convert(f, c->args[0].val, acc_dt), 3);
  tt_type_t xt = tt__sh_type(f, x);
  int64_t nk = w.k[0] * w.k[1], N = xt.dims[0], C = nk ? xt.dims[1] / nk : 0;
  if (tt_type_numel(&c->out_types[0]) == 0 || tt_type_numel(&xt) == 0)
    return tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], 0.0));
  int64_t bd[5] = {N, C, nk, w.out[0], w.out[1]};
  x = tt_l_reshape(f, x, 5, bd);
  int64_t hp = w.in[0] + 2 * w.pad[0], wp = w.in[1] + 2 * w.pad[1];
  int64_t full[4] = {N, C, hp, wp};
  tt_val_t acc = tt_l_full(f, acc_dt, 4, full, 0.0);
  int64_t blk[4] = {N, C, w.out[0], w.out[1]}, in[4] = {0, 0, w.s[0] - 1, w.s[1] - 1};
  tt_val_t zero = tt_lt_const0(f, acc_dt, 0.0);
  for (int64_t i = 0; i < w.k[0]; i++) {
    for (int64_t j = 0; j < w.k[1]; j++) {
      tt_val_t b = tt_l_reshape(f, tt_lt_slice_dim(f, x, 2, i * w.k[1] + j, i * w.k[1] + j + 1), 4, blk);
      int64_t lo[4] = {0, 0, i * w.dil[0], j * w.dil[1]};
      int64_t hi[4] = {0, 0, hp - (lo[2] + (w.out[0] - 1) * w.s[0] + 1), wp - (lo[3] + (w.out[1] - 1) * w.s[1] + 1)};
      acc = tt_l_binary(f, "stablehlo.add", acc, tt_shlo_pad(f, b, zero, lo, hi, in));
    }
  }
  acc = tt_lt_slice_dim(f, acc, 2, w.pad[0], w.pad[0] + w.in[0]);
  acc = tt_lt_slice_dim(f, acc, 3, w.pad[1], w.pad[1] + w.in[1]);
  const tt_type_t* ot = &c->out_types[0];
  return tt_l_set_out(c, 0, tt_l_reshape(f, acc, ot->rank, ot->dims));
}

/* ---- max_unpool ------------------------------------------------------------------------- */

/* max_unpool2d(self, indices, output_size) / max_unpool3d(self, indices,
 * output_size, stride, padding): out[n, c, indices[n, c, i]] = self[n, c, i],
 * zeros elsewhere. Indices are flat within the output plane. */
static tt_status_t lower_max_unpool(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int nsp = (int)c->op->param;
  const tt_type_t* ot = &c->out_types[0];
  tt_type_t xt = tt__sh_type(f, c->args[0].val);
  int64_t plane = 1;
  for (int d = ot->rank - nsp; d < ot->rank; d++) plane *= ot->dims[d];
  int64_t nplanes = plane ? tt_type_numel(ot) / plane : 0;
  int64_t in_plane = nplanes ? tt_type_numel(&xt) / nplanes : 0;
  if (tt_type_numel(ot) == 0 || in_plane == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  int64_t d2[2] = {nplanes, in_plane}, o2[2] = {nplanes, plane};
  tt_val_t x = tt_l_reshape(f, c->args[0].val, 2, d2);
  tt_val_t idx = tt_l_reshape(f, tt_l_convert(f, c->args[1].val, TT_I64), 2, d2);
  tt_type_t it = tt__sh_type(f, idx);
  tt_val_t bad = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "LT", idx, tt_shlo_const_i64(f, &it, 0)),
                             tt_l_compare(f, "GE", idx, tt_shlo_const_i64(f, &it, plane)));
  char msg[160];
  snprintf(msg, sizeof msg, "%s: found an invalid max index (output volumes are of size %lld)", c->op->name,
           (long long)plane);
  tt_shlo_add_check(f, tt_lt_reduce(f, bad, 3u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0)), TT_INTERNAL, msg);
  tt_val_t r = tt_lt_scatter_dim(f, tt_l_full(f, xt.dtype, 2, o2, 0.0), 1, idx, x, NULL);
  return tt_l_set_out(c, 0, tt_l_reshape(f, r, ot->rank, ot->dims));
}

#define ROW2(name, fn, param, out) {"aten::" name, fn, param, 0}, {"aten::" name "." out, fn, param, 0}

const tt_lower_entry_t tt_lower_nn_more_fold[] = {
    ROW2("im2col", lower_im2col, 0, "out"),
    ROW2("col2im", lower_col2im, 0, "out"),
    ROW2("max_unpool2d", lower_max_unpool, 2, "out"),
    ROW2("max_unpool3d", lower_max_unpool, 3, "out"),
};
const int tt_lower_nn_more_fold_count = TT_TABLE_COUNT(tt_lower_nn_more_fold);
