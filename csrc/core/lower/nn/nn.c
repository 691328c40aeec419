/* Neural-network kernels: softmax / log_softmax (+ backward), nll_loss(2d)
 * (+ backward), layer norm (+ backward), dropout (+ backward), mse_loss
 * (+ backward), embedding backward. f16/bf16 compute in f32 and round once. */
#include <math.h>

#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

static tt_type_t type_of(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t ? *t : tt_type_scalar(TT_F32);
}

static tt_val_t cst(tt_shlo_fn_t* f, tt_val_t like, double v) {
  tt_type_t t = type_of(f, like);
  return tt_shlo_const(f, &t, v);
}

#define ADD(a, b) tt_l_binary(f, "stablehlo.add", a, b)
#define SUB(a, b) tt_l_binary(f, "stablehlo.subtract", a, b)
#define MUL(a, b) tt_l_binary(f, "stablehlo.multiply", a, b)
#define DIV(a, b) tt_l_binary(f, "stablehlo.divide", a, b)

static uint32_t one_dim(int64_t dim, int rank) {
  return rank ? 1u << tt_l_wrap_dim(dim, rank) : 0u;
}

/* ---- softmax ------------------------------------------------------------------ */
enum { SOFTMAX, LOG_SOFTMAX };

/* _softmax / _log_softmax(self, dim, half_to_float) */
static tt_status_t lower_softmax(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t x = tt_l_convert(f, c->args[0].val, acc);
  uint32_t mask = one_dim(c->args[1].i, type_of(f, x).rank);
  return tt_l_set_out(c, 0, tt_lt_softmax(f, x, mask, c->op->param == LOG_SOFTMAX));
}

/* _softmax_backward_data / _log_softmax_backward_data(grad, output, dim, input_dtype) */
static tt_status_t lower_softmax_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t g = tt_l_convert(f, c->args[0].val, acc);
  tt_val_t y = tt_l_convert(f, c->args[1].val, acc);
  tt_type_t gt = type_of(f, g);
  uint32_t mask = one_dim(c->args[2].i, gt.rank);
  tt_val_t r;
  if (c->op->param == SOFTMAX) {
    tt_val_t s = tt_lt_expand(f, tt_lt_sum(f, MUL(g, y), mask), &gt, mask);
    r = MUL(y, SUB(g, s));
  } else {
    tt_val_t s = tt_lt_expand(f, tt_lt_sum(f, g, mask), &gt, mask);
    r = SUB(g, MUL(tt_l_unary(f, "stablehlo.exponential", y), s));
  }
  return tt_l_set_out(c, 0, r);
}

/* ---- nll_loss ------------------------------------------------------------------ */
enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };

typedef struct nll {
  tt_val_t onehot; /* bool, self's shape: class == target */
  tt_val_t w;      /* acc dtype, target's shape: weight[target], 0 where ignored */
  tt_val_t valid;  /* bool, target's shape: target != ignore_index */
  uint32_t cmask;  /* the class dim */
} nll_t;

/* Shared by forward and backward. A target outside [0, C) that is not
 * ignore_index raises CPU's IndexError at the next sync (a device check; the
 * value is not in the message) and selects nothing. */
static void nll_setup(tt_lctx_t* c, int iself, int itarget, int iweight, int iignore,
                      tt_dtype_t acc, nll_t* o) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t st = type_of(f, c->args[iself].val);
  int cdim = st.rank == 1 ? 0 : 1;
  o->cmask = 1u << cdim;
  tt_val_t tgt = tt_l_convert(f, c->args[itarget].val, TT_I64);
  tt_type_t it = st;
  it.dtype = TT_I64;
  tt_val_t iota = tt_lt_iota(f, TT_I64, st.rank, st.dims, cdim);
  o->onehot = tt_l_compare(f, "EQ", iota, tt_lt_expand(f, tgt, &it, o->cmask));
  tt_type_t tt = type_of(f, tgt);
  tt_val_t valid = tt_l_compare(f, "NE", tgt, tt_shlo_const_i64(f, &tt, c->args[iignore].i));
  o->valid = valid;
  tt_val_t out = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "LT", tgt, tt_shlo_const_i64(f, &tt, 0)),
                             tt_l_compare(f, "GE", tgt, tt_shlo_const_i64(f, &tt, st.rank ? st.dims[cdim] : 1)));
  tt_val_t bad = tt_l_binary(f, "stablehlo.and", valid, out);
  if (tt.rank > 0) bad = tt_lt_reduce(f, bad, (1u << tt.rank) - 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0));
  tt_shlo_add_check(f, bad, TT_OUT_OF_RANGE, "Target is out of bounds.");
  tt_type_t wt = tt;
  wt.dtype = acc;
  tt_val_t w = tt_shlo_const(f, &wt, 1.0);
  if (tt_lt_has(c, iweight)) {
    tt_type_t full = st;
    full.dtype = acc;
    tt_val_t wb = tt_lt_expand(f, tt_l_convert(f, c->args[iweight].val, acc), &full,
                               ~o->cmask & ((1u << st.rank) - 1u));
    w = tt_lt_sum(f, tt_l_select(f, o->onehot, wb, tt_shlo_const(f, &full, 0.0)), o->cmask);
  }
  o->w = tt_l_select(f, valid, w, tt_shlo_const(f, &wt, 0.0));
}

/* nll_loss_forward / nll_loss2d_forward(self, target, weight?, reduction, ignore_index) */
static tt_status_t lower_nll(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  nll_t n;
  nll_setup(c, 0, 1, 2, 4, acc, &n);
  tt_val_t x = tt_l_convert(f, c->args[0].val, acc);
  tt_val_t picked = tt_lt_sum(f, tt_l_select(f, n.onehot, x, cst(f, x, 0.0)), n.cmask);
  /* ignored targets contribute nothing, as CPU skips them (not 0 * x: x may be
   * infinite) */
  tt_val_t loss = tt_l_unary(f, "stablehlo.negate", MUL(picked, n.w));
  loss = tt_l_select(f, n.valid, loss, cst(f, loss, 0.0));
  int64_t red = c->args[3].i;
  if (red == RED_NONE) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, loss));
    return tt_l_set_out(c, 1, tt_lt_const0(f, acc, 0.0));
  }
  uint32_t all = (1u << type_of(f, loss).rank) - 1u;
  tt_val_t total = tt_lt_sum(f, loss, all), tw = tt_lt_sum(f, n.w, all);
  if (red == RED_MEAN) total = DIV(total, tw);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, total));
  return tt_l_set_out(c, 1, tw);
}

/* nll_loss_backward / nll_loss2d_backward(grad, self, target, weight?, reduction,
 * ignore_index, total_weight) */
static tt_status_t lower_nll_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  nll_t n;
  nll_setup(c, 1, 2, 3, 5, acc, &n);
  tt_type_t wt = type_of(f, n.w);
  tt_val_t g = tt_l_convert(f, c->args[0].val, acc);
  if (c->args[4].i == RED_MEAN) g = DIV(g, tt_l_convert(f, c->args[6].val, acc));
  if (c->args[4].i == RED_NONE) g = tt_l_reshape(f, g, wt.rank, wt.dims);
  else g = tt_lt_splat(f, tt_l_reshape(f, g, 0, NULL), wt.rank, wt.dims);
  /* CPU writes -w * g only at targets that are not ignored: where every target
   * is ignored, g = grad / 0 is not finite and the gradient is still zeros */
  tt_val_t per = MUL(tt_l_unary(f, "stablehlo.negate", g), n.w);
  per = tt_l_select(f, n.valid, per, tt_shlo_const(f, &wt, 0.0));
  tt_type_t st = c->out_types[0];
  st.dtype = acc;
  tt_val_t full = tt_lt_expand(f, per, &st, n.cmask);
  return tt_l_set_out(c, 0, tt_l_select(f, n.onehot, full, tt_shlo_const(f, &st, 0.0)));
}

/* ---- layer norm ------------------------------------------------------------------ */

/* native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd) */
static tt_status_t lower_layer_norm(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t x = tt_l_convert(f, c->args[0].val, acc);
  tt_type_t xt = type_of(f, x);
  int axis = xt.rank - c->args[1].n;
  uint32_t mask = ((1u << xt.rank) - 1u) & ~((1u << axis) - 1u);
  double n = 1;
  for (int d = axis; d < xt.rank; d++) n *= (double)xt.dims[d];
  tt_val_t mean = tt_lt_sum(f, x, mask);
  mean = DIV(mean, cst(f, mean, n));
  tt_val_t d = SUB(x, tt_lt_expand(f, mean, &xt, mask));
  tt_val_t var = tt_lt_sum(f, MUL(d, d), mask);
  var = DIV(var, cst(f, var, n));
  tt_val_t rstd = tt_l_unary(f, "stablehlo.rsqrt", ADD(var, cst(f, var, c->args[4].f)));
  tt_val_t y = MUL(d, tt_lt_expand(f, rstd, &xt, mask));
  if (tt_lt_has(c, 2)) y = MUL(y, tt_l_arg_as(c, 2, acc, &xt));
  if (tt_lt_has(c, 3)) y = ADD(y, tt_l_arg_as(c, 3, acc, &xt));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, y));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, mean));
  return tt_l_set_out(c, 2, rstd);
}

static bool mask_bit(const tt_larg_t* a, int i) {
  if (a->kind == TT_ARG_INTS && a->n > i) return a->ints[i] != 0;
  return true;
}

/* native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
 * weight?, bias?, output_mask) -> (grad_input, grad_weight, grad_bias) */
static tt_status_t lower_layer_norm_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t go = tt_l_convert(f, c->args[0].val, acc);
  tt_val_t x = tt_l_convert(f, c->args[1].val, acc);
  tt_type_t xt = type_of(f, x);
  int axis = xt.rank - c->args[2].n;
  uint32_t all = (1u << xt.rank) - 1u;
  uint32_t inner = all & ~((1u << axis) - 1u), outer = all & ~inner;
  double n = 1;
  for (int d = axis; d < xt.rank; d++) n *= (double)xt.dims[d];
  tt_val_t mean = tt_lt_expand(f, tt_l_convert(f, c->args[3].val, acc), &xt, inner);
  tt_val_t rstd = tt_lt_expand(f, tt_l_convert(f, c->args[4].val, acc), &xt, inner);
  tt_val_t xhat = MUL(SUB(x, mean), rstd);
  const tt_larg_t* om = &c->args[7];
  for (int i = 0; i < 3 && i < c->nout; i++) {
    tt_val_t r;
    if (!mask_bit(om, i) || tt_type_numel(&c->out_types[i]) == 0) {
      r = tt_shlo_const(f, &c->out_types[i], 0.0);
    } else if (i == 0) {
      tt_val_t g = tt_lt_has(c, 5) ? MUL(go, tt_l_arg_as(c, 5, acc, &xt)) : go;
      tt_val_t inv_n = cst(f, g, 1.0 / n);
      tt_val_t mg = MUL(tt_lt_expand(f, tt_lt_sum(f, g, inner), &xt, inner), inv_n);
      tt_val_t mgx = MUL(tt_lt_expand(f, tt_lt_sum(f, MUL(g, xhat), inner), &xt, inner), inv_n);
      r = MUL(rstd, SUB(SUB(g, mg), MUL(xhat, mgx)));
    } else {
      r = tt_lt_sum(f, i == 1 ? MUL(go, xhat) : go, outer);
    }
    TT_RETURN_IF_ERROR(tt_l_set_out(c, i, r));
  }
  return NULL;
}

/* ---- dropout ---------------------------------------------------------------------- */

/* native_dropout(input, p, train?) -> (output, mask); the RNG state is last */
static tt_status_t lower_dropout(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t x = tt_l_convert(f, c->args[0].val, acc);
  tt_type_t xt = type_of(f, x);
  bool train = c->args[2].kind != TT_ARG_BOOL || c->args[2].i;
  if (!train) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, x));
    return tt_l_set_out(c, 1, tt_shlo_const(f, &c->out_types[1], 1.0));
  }
  double p1m = 1.0 - c->args[1].f;
  double scale = p1m == 0.0 ? 0.0 : 1.0 / p1m;
  tt_val_t u = tt_lt_uniform01(f, c->args[c->nargs - 1].val, TT_F32, xt.rank, xt.dims);
  tt_val_t keep = tt_l_compare(f, "LT", u, cst(f, u, p1m));
  tt_val_t y = MUL(MUL(x, tt_l_convert(f, keep, acc)), cst(f, x, scale));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, y));
  return tt_l_set_out(c, 1, keep);
}

/* native_dropout_backward(grad_output, mask, scale) */
static tt_status_t lower_dropout_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t g = tt_l_convert(f, c->args[0].val, acc);
  tt_type_t gt = type_of(f, g);
  tt_val_t m = tt_l_arg_as(c, 1, acc, &gt);
  return tt_l_set_out(c, 0, MUL(MUL(g, m), cst(f, g, c->args[2].f)));
}

/* ---- mse_loss ---------------------------------------------------------------------- */

/* mse_loss(self, target, reduction) */
static tt_status_t lower_mse(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_type_t a = type_of(f, c->args[0].val), b = type_of(f, c->args[1].val);
  tt_type_t bt = tt_lt_broadcast_type(&a, &b, acc);
  tt_val_t d = SUB(tt_l_arg_as(c, 0, acc, &bt), tt_l_arg_as(c, 1, acc, &bt));
  tt_val_t sq = MUL(d, d);
  return tt_lt_set_reduced_loss(c, sq, c->args[2].i);
}

/* mse_loss_backward(grad_output, self, target, reduction) */
static tt_status_t lower_mse_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_type_t ot = c->out_types[0];
  ot.dtype = acc;
  double norm = c->args[3].i == RED_MEAN ? 2.0 / (double)tt_type_numel(&ot) : 2.0;
  tt_val_t d = SUB(tt_l_arg_as(c, 1, acc, &ot), tt_l_arg_as(c, 2, acc, &ot));
  tt_val_t r = MUL(MUL(tt_shlo_const(f, &ot, norm), d), tt_l_arg_as(c, 0, acc, &ot));
  return tt_l_set_out(c, 0, r);
}

/* ---- embedding ----------------------------------------------------------------------- */

/* embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
 * scale_grad_by_freq): a scatter-add of the gradient rows into the table. */
static tt_status_t lower_embedding_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_type_t gt = type_of(f, c->args[0].val), it = type_of(f, c->args[1].val);
  int64_t nw = c->args[2].i, pad = c->args[3].i;
  int64_t n = tt_type_numel(&it), dd = gt.rank ? gt.dims[gt.rank - 1] : 1;
  int64_t gd[2] = {n, dd}, od[2] = {nw, dd};
  tt_val_t g = tt_l_reshape(f, tt_l_convert(f, c->args[0].val, acc), 2, gd);
  tt_val_t idx = tt_l_reshape(f, tt_l_convert(f, c->args[1].val, TT_I64), 1, &n);
  tt_val_t keep = tt_l_compare(f, "NE", idx, cst(f, idx, (double)pad));
  tt_type_t g2 = type_of(f, g);
  int64_t b0[1] = {0};
  g = tt_l_select(f, tt_lt_bcast_in_dim(f, keep, 2, gd, b0), g, tt_shlo_const(f, &g2, 0.0));
  idx = tt_lt_fix_index(f, idx, nw);
  int64_t id2[2] = {n, 1};
  tt_val_t idx2 = tt_l_reshape(f, idx, 2, id2);
  int64_t win[1] = {1}, ins[1] = {0};
  if (c->args[4].i) { /* scale_grad_by_freq: each row is divided by its index's count */
    tt_val_t counts = tt_l_full(f, acc, 1, &nw, 0.0);
    counts = tt_lt_scatter(f, counts, idx2, tt_l_full(f, acc, 1, &n, 1.0), NULL, 0, ins, 1, ins, 1, 1,
                           "stablehlo.add");
    tt_val_t cg = tt_lt_gather_dim(f, counts, 0, idx);
    g = DIV(g, tt_lt_bcast_in_dim(f, cg, 2, gd, b0));
  }
  tt_val_t out = tt_l_full(f, acc, 2, od, 0.0);
  out = tt_lt_scatter(f, out, idx2, g, win, 1, ins, 1, ins, 1, 1, "stablehlo.add");
  return tt_l_set_out(c, 0, out);
}

#define ROW2(name, fn, param, flags) \
  {"aten::" name, fn, param, flags}, {"aten::" name ".out", fn, param, flags}

const tt_lower_entry_t tt_lower_nn[] = {
    ROW2("_softmax", lower_softmax, SOFTMAX, 0),
    ROW2("_log_softmax", lower_softmax, LOG_SOFTMAX, 0),
    ROW2("_softmax_backward_data", lower_softmax_bwd, SOFTMAX, 0),
    ROW2("_log_softmax_backward_data", lower_softmax_bwd, LOG_SOFTMAX, 0),
    {"aten::nll_loss_forward", lower_nll, 0, 0},
    {"aten::nll_loss_forward.output", lower_nll, 0, 0},
    {"aten::nll_loss2d_forward", lower_nll, 0, 0},
    {"aten::nll_loss2d_forward.output", lower_nll, 0, 0},
    {"aten::nll_loss_backward", lower_nll_bwd, 0, 0},
    {"aten::nll_loss_backward.grad_input", lower_nll_bwd, 0, 0},
    {"aten::nll_loss2d_backward", lower_nll_bwd, 0, 0},
    {"aten::nll_loss2d_backward.grad_input", lower_nll_bwd, 0, 0},
    ROW2("native_layer_norm", lower_layer_norm, 0, 0),
    ROW2("native_layer_norm_backward", lower_layer_norm_bwd, 0, 0),
    ROW2("native_dropout", lower_dropout, 0, TT_LF_RNG),
    ROW2("native_dropout_backward", lower_dropout_bwd, 0, 0),
    ROW2("mse_loss", lower_mse, 0, 0),
    {"aten::mse_loss_backward", lower_mse_bwd, 0, 0},
    {"aten::mse_loss_backward.grad_input", lower_mse_bwd, 0, 0},
    ROW2("embedding_dense_backward", lower_embedding_bwd, 0, 0),
};
const int tt_lower_nn_count = TT_TABLE_COUNT(tt_lower_nn);

/* The table's facts: compile-time bucketing (tt_lower_bucket_t); _safe_softmax and embedding
 * have no lowering (PyTorch's kernels over ops that do). */
const tt_lower_fact_t tt_lower_nn_facts[] = {
    TT_FACT_BUCKET("aten::_softmax.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::_log_softmax.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::_safe_softmax.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::native_layer_norm.default", TT_BUCKET_LAYER_NORM),
    TT_FACT_BUCKET("aten::embedding.default", TT_BUCKET_EMBEDDING),
};
const int tt_lower_nn_facts_count = TT_TABLE_COUNT(tt_lower_nn_facts);
