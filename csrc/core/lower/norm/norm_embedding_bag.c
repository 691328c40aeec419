/* embedding_bag forward and backward (listed in the norm family's table).
 *
 * Outputs as PyTorch's CPU kernel gives them, in the shapes of the meta
 * kernel: output (B, D); offset2bag (L,): the bag of each index; bag_size
 * (B,): non-padding indices per bag for modes mean and max, zeros for sum;
 * max_indices (B, D): the weight row of each maximum (mode max; 0 for an
 * empty bag). Indices outside [0, num_weights) are clamped (PyTorch raises).
 * scale_grad_by_freq divides each index's gradient by that index's count, as
 * the CUDA and sparse CPU paths do (the dense CPU kernel looks the count up at
 * the wrong position of its sorted index list). */
#include <math.h>

#include "../lower_tensor_util.h"

#define MUL(a, b) tt_l_binary(f, "stablehlo.multiply", a, b)
#define DIV(a, b) tt_l_binary(f, "stablehlo.divide", a, b)

/* prototypes: listed in norm.c's table */
tt_status_t tt__norm_embedding_bag(tt_lctx_t* c);
tt_status_t tt__norm_embedding_bag_bwd(tt_lctx_t* c);
tt_status_t tt__norm_embedding_bag_psw_bwd(tt_lctx_t* c);

enum { MODE_SUM = 0, MODE_MEAN = 1, MODE_MAX = 2 };

static tt_type_t type_of(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t ? *t : tt_type_scalar(TT_F32);
}

static tt_val_t zeros(tt_shlo_fn_t* f, tt_dtype_t dt, int rank, const int64_t* dims) {
  return tt_l_full(f, dt, rank, dims, 0.0);
}

/* bag of every index position i: (#offsets[b] <= i, b < nbags) - 1, >= 0 */
static tt_val_t offset2bag(tt_shlo_fn_t* f, tt_val_t offsets, int64_t L, int64_t nbags) {
  tt_val_t off = tt_lt_slice_dim(f, tt_l_convert(f, offsets, TT_I64), 0, 0, nbags);
  int64_t lb[2] = {L, nbags}, b1[1] = {1};
  tt_val_t le = tt_l_compare(f, "LE", tt_lt_bcast_in_dim(f, off, 2, lb, b1), tt_lt_iota(f, TT_I64, 2, lb, 0));
  tt_val_t n = tt_lt_sum(f, tt_l_convert(f, le, TT_I64), 0x2u);
  tt_type_t nt = type_of(f, n);
  return tt_l_binary(f, "stablehlo.maximum", tt_l_binary(f, "stablehlo.subtract", n, tt_shlo_const(f, &nt, 1.0)),
                     tt_shlo_const(f, &nt, 0.0));
}

/* index positions that are not padding_idx (all when padding_idx < 0) */
static tt_val_t not_padding(tt_shlo_fn_t* f, tt_val_t idx, int64_t pad) {
  tt_type_t t = type_of(f, idx);
  if (pad < 0) {
    t.dtype = TT_BOOL;
    return tt_shlo_const(f, &t, 1.0);
  }
  return tt_l_compare(f, "NE", idx, tt_shlo_const_i64(f, &t, pad));
}

/* rows of w (V, D) at idx (L,) -> (L, D) */
static tt_val_t gather_rows(tt_shlo_fn_t* f, tt_val_t w, tt_val_t idx) {
  tt_type_t wt = type_of(f, w), it = type_of(f, idx);
  int64_t L = it.dims[0], l1[2] = {L, 1};
  tt_val_t i2 = tt_lt_fix_index_strict(f, idx, wt.dims[0], TT_INTERNAL,
                                       "embedding_bag: Expected idx >= 0 && idx < num_embeddings");
  i2 = tt_l_reshape(f, i2, 2, l1);
  int64_t od[2] = {L, wt.dims[1]};
  tt_type_t rt = tt_type_make(wt.dtype, 2, od);
  int64_t off[1] = {1}, col[1] = {0}, sizes[2] = {1, wt.dims[1]};
  return tt_lt_gather(f, w, i2, &rt, off, 1, col, 1, col, 1, 1, sizes);
}

/* rows (L, D) combined into v (B, D) at rows bag (L,) with body_op */
static tt_val_t scatter_rows(tt_shlo_fn_t* f, tt_val_t v, tt_val_t bag, tt_val_t rows, const char* op) {
  int64_t L = type_of(f, bag).dims[0], l1[2] = {L, 1};
  int64_t win[1] = {1}, ins[1] = {0};
  return tt_lt_scatter(f, v, tt_l_reshape(f, bag, 2, l1), rows, win, 1, ins, 1, ins, 1, 1, op);
}

/* values (L,) combined into v (B,) at bag (L,) */
static tt_val_t scatter_vals(tt_shlo_fn_t* f, tt_val_t v, tt_val_t bag, tt_val_t vals, const char* op) {
  int64_t L = type_of(f, bag).dims[0], l1[2] = {L, 1};
  int64_t ins[1] = {0};
  return tt_lt_scatter(f, v, tt_l_reshape(f, bag, 2, l1), vals, NULL, 0, ins, 1, ins, 1, 1, op);
}

static tt_val_t bcast_rows(tt_shlo_fn_t* f, tt_val_t v, int64_t L, int64_t D) {
  int64_t ld[2] = {L, D}, b0[1] = {0};
  return tt_lt_bcast_in_dim(f, v, 2, ld, b0);
}

/* _embedding_bag / _embedding_bag_forward_only(weight, indices, offsets,
 * scale_grad_by_freq, mode, sparse, per_sample_weights?, include_last_offset,
 * padding_idx) -> (output, offset2bag, bag_size, max_indices) */
tt_status_t tt__norm_embedding_bag(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t wt = type_of(f, c->args[0].val), it = type_of(f, c->args[1].val);
  if (wt.rank != 2 || it.rank != 1)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a 2-D weight and 1-D indices", c->op->name);
  int64_t mode = c->args[4].i, pad = c->args[8].i;
  int64_t B = c->out_types[0].dims[0], D = wt.dims[1], L = it.dims[0];
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  int64_t bd[2] = {B, D};
  tt_val_t idx = tt_l_convert(f, c->args[1].val, TT_I64);
  tt_val_t bag = offset2bag(f, c->args[2].val, L, B);
  tt_val_t valid = not_padding(f, idx, pad);
  tt_val_t valid2 = bcast_rows(f, valid, L, D);
  tt_val_t rows = tt_l_convert(f, gather_rows(f, c->args[0].val, idx), acc);
  tt_type_t rt = type_of(f, rows);
  tt_val_t count = scatter_vals(f, zeros(f, TT_I64, 1, &B), bag, tt_l_convert(f, valid, TT_I64), "stablehlo.add");
  tt_val_t out, max_idx = TT_SHLO_INVALID;
  if (mode == MODE_MAX) {
    tt_val_t ninf = tt_l_full(f, acc, 2, rt.dims, -INFINITY);
    tt_val_t m = scatter_rows(f, tt_l_full(f, acc, 2, bd, -INFINITY), bag, tt_l_select(f, valid2, rows, ninf),
                              "stablehlo.maximum");
    /* first position holding each maximum (NaN matches NaN) */
    tt_val_t back = gather_rows(f, m, bag);
    tt_val_t eq = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "EQ", rows, back),
                              tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "NE", rows, rows),
                                          tt_l_compare(f, "NE", back, back)));
    eq = tt_l_binary(f, "stablehlo.and", eq, valid2);
    tt_val_t pos = tt_l_select(f, eq, tt_lt_iota(f, TT_I64, 2, rt.dims, 0), tt_l_full(f, TT_I64, 2, rt.dims, (double)L));
    pos = scatter_rows(f, tt_l_full(f, TT_I64, 2, bd, (double)L), bag, pos, "stablehlo.minimum");
    tt_val_t empty = tt_l_compare(f, "EQ", pos, tt_l_full(f, TT_I64, 2, bd, (double)L));
    out = tt_l_select(f, empty, zeros(f, acc, 2, bd), m);
    /* indices[pos] along each column */
    tt_val_t idx2 = bcast_rows(f, idx, L, D);
    tt_val_t pos_fixed = tt_l_select(f, empty, zeros(f, TT_I64, 2, bd), pos);
    max_idx = tt_l_select(f, empty, zeros(f, TT_I64, 2, bd), tt_lt_gather_dim(f, idx2, 0, pos_fixed));
  } else {
    if (mode == MODE_SUM && tt_lt_has(c, 6))
      rows = MUL(rows, bcast_rows(f, tt_l_convert(f, c->args[6].val, acc), L, D));
    rows = tt_l_select(f, valid2, rows, zeros(f, acc, 2, rt.dims));
    out = scatter_rows(f, zeros(f, acc, 2, bd), bag, rows, "stablehlo.add");
    if (mode == MODE_MEAN) {
      tt_val_t n = tt_l_convert(f, tt_l_binary(f, "stablehlo.maximum", count, tt_l_full(f, TT_I64, 1, &B, 1.0)), acc);
      out = DIV(out, bcast_rows(f, n, B, D));
    }
  }
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, out));
  for (int i = 1; i < 4 && i < c->nout; i++) {
    tt_val_t v;
    int64_t want = tt_type_numel(&c->out_types[i]);
    if (i == 1 && want == L) v = bag;
    else if (i == 2 && want >= B && mode != MODE_SUM) /* include_last_offset: one more, 0 */
      v = tt_lt_pad(f, count, tt_lt_const0(f, TT_I64, 0.0), (const int64_t[]){0}, (const int64_t[]){want - B});
    else if (i == 3 && mode == MODE_MAX && want == B * D) v = max_idx;
    else v = tt_shlo_const(f, &c->out_types[i], 0.0);
    TT_RETURN_IF_ERROR(tt_l_set_out(c, i, v));
  }
  return NULL;
}

/* _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size,
 * maximum_indices, num_weights, scale_grad_by_freq, mode, per_sample_weights?,
 * padding_idx); param 1: _embedding_bag_backward, which also has `offsets`
 * (after indices) and `sparse` (after mode). Sparse gradients are not
 * supported. */
tt_status_t tt__norm_embedding_bag_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int k = (int)c->op->param;
  if (k && c->args[9].i)
    return tt_status_make(TT_UNIMPLEMENTED, "%s: sparse gradients are not supported on the tpu device", c->op->name);
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_type_t gt = type_of(f, c->args[0].val), it = type_of(f, c->args[1].val);
  int64_t B = gt.dims[0], D = gt.dims[1], L = it.dims[0];
  int64_t nw = c->args[5 + k].i, mode = c->args[7 + k].i, pad = c->args[9 + 2 * k].i;
  bool by_freq = c->args[6 + k].i != 0;
  int ipsw = 8 + 2 * k;
  int64_t od[2] = {nw, D};
  tt_val_t g = tt_l_convert(f, c->args[0].val, acc);
  tt_val_t idx = tt_l_convert(f, c->args[1].val, TT_I64);
  /* bag_size has one entry more with include_last_offset */
  tt_val_t bag_size = tt_lt_slice_dim(f, tt_l_convert(f, c->args[3 + k].val, TT_I64), 0, 0, B);
  tt_val_t out = zeros(f, acc, 2, od);
  if (mode == MODE_MAX) {
    /* grad[b, d] goes to row max_indices[b, d], column d; empty bags skipped */
    int64_t bd[2] = {B, D}, b0[1] = {0}, bd1[3] = {B, D, 1};
    tt_val_t mi = tt_lt_fix_index(f, c->args[4 + k].val, nw);
    tt_val_t live = tt_l_compare(f, "NE", tt_lt_bcast_in_dim(f, bag_size, 2, bd, b0), zeros(f, TT_I64, 2, bd));
    g = tt_l_select(f, live, g, zeros(f, acc, 2, bd));
    tt_val_t parts[2] = {tt_l_reshape(f, mi, 3, bd1), tt_l_reshape(f, tt_lt_iota(f, TT_I64, 2, bd, 1), 3, bd1)};
    tt_val_t coords = tt_lt_concat(f, parts, 2, 2);
    int64_t all[2] = {0, 1};
    out = tt_lt_scatter(f, out, coords, g, NULL, 0, all, 2, all, 2, 2, "stablehlo.add");
    return tt_l_set_out(c, 0, out);
  }
  tt_val_t bag = k ? offset2bag(f, c->args[2].val, L, B) : tt_lt_fix_index(f, c->args[2].val, B);
  tt_val_t rows = gather_rows(f, g, bag); /* (L, D) */
  if (mode == MODE_SUM && tt_lt_has(c, ipsw))
    rows = MUL(rows, bcast_rows(f, tt_l_convert(f, c->args[ipsw].val, acc), L, D));
  if (mode == MODE_MEAN) {
    tt_val_t n = tt_lt_gather_dim(f, bag_size, 0, bag);
    n = tt_l_binary(f, "stablehlo.maximum", n, tt_l_full(f, TT_I64, 1, &L, 1.0));
    rows = DIV(rows, bcast_rows(f, tt_l_convert(f, n, acc), L, D));
  }
  tt_val_t fixed = tt_lt_fix_index(f, idx, nw);
  if (by_freq) {
    tt_val_t cnt = scatter_vals(f, zeros(f, acc, 1, &nw), fixed, tt_l_full(f, acc, 1, &L, 1.0), "stablehlo.add");
    rows = DIV(rows, bcast_rows(f, tt_lt_gather_dim(f, cnt, 0, fixed), L, D));
  }
  int64_t ld[2] = {L, D};
  rows = tt_l_select(f, bcast_rows(f, not_padding(f, idx, pad), L, D), rows, zeros(f, acc, 2, ld));
  out = scatter_rows(f, out, fixed, rows, "stablehlo.add");
  return tt_l_set_out(c, 0, out);
}

/* _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets,
 * offset2bag, mode, padding_idx): <grad[bag(i)], weight[indices[i]]> */
tt_status_t tt__norm_embedding_bag_psw_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  if (c->args[5].i != MODE_SUM)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: per_sample_weights are only supported for mode='sum'", c->op->name);
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_type_t gt = type_of(f, c->args[0].val), it = type_of(f, c->args[2].val);
  int64_t B = gt.dims[0], L = it.dims[0];
  tt_val_t idx = tt_l_convert(f, c->args[2].val, TT_I64);
  tt_val_t bag = offset2bag(f, c->args[3].val, L, B);
  tt_val_t g = gather_rows(f, tt_l_convert(f, c->args[0].val, acc), bag);
  tt_val_t w = gather_rows(f, tt_l_convert(f, c->args[1].val, acc), idx);
  tt_val_t r = tt_lt_sum(f, MUL(g, w), 0x2u);
  r = tt_l_select(f, not_padding(f, idx, c->args[6].i), r, zeros(f, acc, 1, &L));
  return tt_l_set_out(c, 0, r);
}
