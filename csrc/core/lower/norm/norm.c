/* The norm family: batch norm (every ATen variant, forward and backward,
 * running statistics) and group norm (+ backward). Layer norm lives in nn.c;
 * instance norm decomposes into batch norm. The embedding_bag and weight norm
 * rows are listed here too (their functions are in norm_embedding_bag.c and
 * norm_weight.c).
 *
 * Numerics follow PyTorch's CPU kernels: statistics in the opmath dtype (f32
 * for f16/bf16), two-pass variance, `1 / sqrt(var + eps)`, the output as
 * `x * alpha + beta` with alpha = invstd * weight, beta = bias - mean * alpha,
 * the running variance updated with the unbiased variance (n / (n - 1)). */
#include <math.h>

#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

/* norm_embedding_bag.c */
tt_status_t tt__norm_embedding_bag(tt_lctx_t* c);
tt_status_t tt__norm_embedding_bag_bwd(tt_lctx_t* c);
tt_status_t tt__norm_embedding_bag_psw_bwd(tt_lctx_t* c);
/* norm_weight.c */
tt_status_t tt__norm_weight_norm(tt_lctx_t* c);
tt_status_t tt__norm_weight_norm_bwd(tt_lctx_t* c);

#define ADD(a, b) tt_l_binary(f, "stablehlo.add", a, b)
#define SUB(a, b) tt_l_binary(f, "stablehlo.subtract", a, b)
#define MUL(a, b) tt_l_binary(f, "stablehlo.multiply", a, b)
#define DIV(a, b) tt_l_binary(f, "stablehlo.divide", a, b)

static tt_type_t type_of(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t ? *t : tt_type_scalar(TT_F32);
}

static tt_val_t cst(tt_shlo_fn_t* f, tt_val_t like, double v) {
  tt_type_t t = type_of(f, like);
  return tt_shlo_const(f, &t, v);
}

/* 1 / sqrt(v + eps), as the CPU kernels compute it (not rsqrt). */
static tt_val_t inv_std(tt_shlo_fn_t* f, tt_val_t var, double eps) {
  tt_val_t s = tt_l_unary(f, "stablehlo.sqrt", ADD(var, cst(f, var, eps)));
  return DIV(cst(f, s, 1.0), s);
}

/* Output i is requested (a bool[3] output_mask) and has elements. */
static bool wanted(tt_lctx_t* c, int mask_arg, int i) {
  const tt_larg_t* m = &c->args[mask_arg];
  if (m->kind == TT_ARG_INTS && m->n > i && !m->ints[i]) return false;
  return i < c->nout && tt_type_numel(&c->out_types[i]) > 0;
}

static tt_status_t set_zero(tt_lctx_t* c, int i) {
  return tt_l_set_out(c, i, tt_shlo_const(c->f, &c->out_types[i], 0.0));
}

/* ---- batch norm ----------------------------------------------------------------- */

/* Argument layouts of the forward variants (all start input, weight?, bias?). */
enum {
  BN_TRAIN_ARG, /* (.., running_mean?, running_var?, bool training, momentum, eps) */
  BN_NO_STATS,  /* (.., bool training, momentum, eps) */
  BN_EVAL,      /* (.., running_mean?, running_var?, momentum, eps): train iff no stats */
  BN_UPDATE,    /* (.., running_mean, running_var, momentum, eps): always train */
};
#define BN_STATS_FIRST 0x10 /* outputs: running_mean, running_var, then the returns */
#define BN_RESERVE 0x20     /* a 0-byte `reserve` return follows save_invstd */

typedef struct bn_slots {
  int y, mean, invstd, reserve, rm, rv; /* output indices, -1: absent */
} bn_slots_t;

/* Where each result goes. Functional ops: the returns, then (when the
 * runtime passes them, as for _native_batch_norm_legit_functional) the new
 * running stats. .out variants of ops that mutate the running stats: the
 * mutated arguments in order (running stats first). Two outputs only: the
 * mutated running stats. */
static bn_slots_t bn_slots(tt_lctx_t* c, int64_t param) {
  bn_slots_t s = {-1, -1, -1, -1, -1, -1};
  bool reserve = (param & BN_RESERVE) != 0;
  if (c->nout == 2) {
    s.rm = 0;
    s.rv = 1;
  } else if (param & BN_STATS_FIRST) {
    s.rm = 0, s.rv = 1, s.y = 2, s.mean = 3, s.invstd = 4;
    if (reserve) s.reserve = 5;
  } else {
    s.y = 0, s.mean = 1, s.invstd = 2;
    int k = 3;
    if (reserve) s.reserve = k++;
    if (c->nout >= k + 2) s.rm = k, s.rv = k + 1;
  }
  return s;
}

static tt_status_t lower_batch_norm(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int64_t layout = c->op->param & 0xf;
  int irm = layout == BN_NO_STATS ? -1 : 3, irv = irm < 0 ? -1 : 4;
  int imom = layout == BN_TRAIN_ARG ? 6 : layout == BN_NO_STATS ? 4 : 5;
  bool has_stats = irm >= 0 && tt_lt_has(c, irm) && tt_lt_has(c, irv);
  bool train = layout == BN_TRAIN_ARG ? c->args[5].i != 0
             : layout == BN_NO_STATS  ? c->args[3].i != 0
             : layout == BN_UPDATE    ? true
                                      : !has_stats;
  double momentum = c->args[imom].f, eps = c->args[imom + 1].f;
  bn_slots_t s = bn_slots(c, c->op->param);

  tt_type_t in_t = type_of(f, c->args[0].val);
  tt_dtype_t acc = tt_l_opmath(in_t.dtype);
  tt_val_t x = tt_l_convert(f, c->args[0].val, acc);
  tt_type_t xt = type_of(f, x);
  if (xt.rank < 2) return tt_status_make(TT_INVALID_ARGUMENT, "%s: input must have at least 2 dims", c->op->name);
  uint32_t red = ((1u << xt.rank) - 1u) & ~2u; /* every dim but the channels */
  double n = (double)tt_type_numel(&xt) / (double)xt.dims[1];

  tt_val_t mean, invstd, var = TT_SHLO_INVALID;
  if (train) {
    mean = tt_lt_sum(f, x, red);
    mean = DIV(mean, cst(f, mean, n));
    tt_val_t d = SUB(x, tt_lt_expand(f, mean, &xt, red));
    var = tt_lt_sum(f, MUL(d, d), red); /* the sum of squares for now */
    invstd = inv_std(f, DIV(var, cst(f, var, n)), eps);
  } else {
    if (!has_stats)
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: running_mean and running_var must be defined in evaluation mode", c->op->name);
    mean = tt_l_convert(f, c->args[irm].val, acc);
    invstd = inv_std(f, tt_l_convert(f, c->args[irv].val, acc), eps);
  }
  if (s.y >= 0) {
    tt_val_t alpha = invstd, beta;
    if (tt_lt_has(c, 1)) alpha = MUL(alpha, tt_l_convert(f, c->args[1].val, acc));
    beta = tt_l_unary(f, "stablehlo.negate", MUL(mean, alpha));
    if (tt_lt_has(c, 2)) beta = ADD(tt_l_convert(f, c->args[2].val, acc), beta);
    tt_val_t y = ADD(MUL(x, tt_lt_expand(f, alpha, &xt, red)), tt_lt_expand(f, beta, &xt, red));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, s.y, y));
    /* eval mode on CPU saves no statistics: 0-element outputs */
    bool none = s.mean < c->nout && tt_type_numel(&c->out_types[s.mean]) == 0;
    TT_RETURN_IF_ERROR(none ? set_zero(c, s.mean) : tt_l_set_out(c, s.mean, mean));
    TT_RETURN_IF_ERROR(none ? set_zero(c, s.invstd) : tt_l_set_out(c, s.invstd, invstd));
    if (s.reserve >= 0) TT_RETURN_IF_ERROR(set_zero(c, s.reserve));
  }
  if (s.rm >= 0) {
    tt_val_t rm = c->args[irm].val, rv = c->args[irv].val;
    if (train && has_stats) {
      tt_dtype_t sacc = tt_l_opmath(type_of(f, rm).dtype);
      if (sacc != TT_F64) sacc = acc;
      tt_val_t m = tt_l_convert(f, mean, sacc), v = tt_l_convert(f, var, sacc);
      tt_val_t mom = cst(f, m, momentum), keep = cst(f, m, 1.0 - momentum);
      /* unbiased variance: the sum of squares over n - 1 */
      tt_val_t unb = DIV(v, cst(f, v, n - 1.0));
      rm = ADD(MUL(mom, m), MUL(keep, tt_l_convert(f, rm, sacc)));
      rv = ADD(MUL(mom, unb), MUL(keep, tt_l_convert(f, rv, sacc)));
    }
    TT_RETURN_IF_ERROR(tt_l_set_out(c, s.rm, rm));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, s.rv, rv));
  }
  return NULL;
}

/* native_batch_norm_backward / batch_norm_backward(grad_out, input, weight?,
 * running_mean?, running_var?, save_mean?, save_invstd?, train, eps,
 * output_mask[, reserve]) -> (grad_input, grad_weight, grad_bias) */
static tt_status_t lower_batch_norm_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(type_of(f, c->args[1].val).dtype);
  tt_val_t dy = tt_l_convert(f, c->args[0].val, acc);
  tt_val_t x = tt_l_convert(f, c->args[1].val, acc);
  tt_type_t xt = type_of(f, x);
  if (xt.rank < 2) return tt_status_make(TT_INVALID_ARGUMENT, "%s: input must have at least 2 dims", c->op->name);
  bool train = c->args[7].i != 0;
  double eps = c->args[8].f;
  uint32_t red = ((1u << xt.rank) - 1u) & ~2u;
  double n = (double)tt_type_numel(&xt) / (double)xt.dims[1];
  tt_val_t mean, invstd;
  if (train) {
    if (!tt_lt_has(c, 5) || !tt_lt_has(c, 6))
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: save_mean and save_invstd are required in training mode", c->op->name);
    mean = tt_l_convert(f, c->args[5].val, acc);
    invstd = tt_l_convert(f, c->args[6].val, acc);
  } else {
    if (!tt_lt_has(c, 3) || !tt_lt_has(c, 4))
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: running_mean and running_var are required in evaluation mode", c->op->name);
    mean = tt_l_convert(f, c->args[3].val, acc);
    invstd = inv_std(f, tt_l_convert(f, c->args[4].val, acc), eps);
  }
  tt_val_t w = tt_lt_has(c, 2) ? tt_l_convert(f, c->args[2].val, acc) : cst(f, invstd, 1.0);
  tt_val_t sum_dy = tt_lt_sum(f, dy, red);
  tt_val_t xm = SUB(x, tt_lt_expand(f, mean, &xt, red));
  tt_val_t dot = tt_lt_sum(f, MUL(xm, dy), red);
  if (wanted(c, 9, 0)) {
    tt_val_t dx;
    tt_val_t scale = tt_lt_expand(f, MUL(invstd, w), &xt, red);
    if (train) {
      tt_val_t inv_n = cst(f, dot, 1.0 / n);
      tt_val_t k = MUL(MUL(MUL(dot, invstd), invstd), inv_n);
      tt_val_t mdy = MUL(sum_dy, inv_n);
      dx = SUB(SUB(dy, tt_lt_expand(f, mdy, &xt, red)), MUL(xm, tt_lt_expand(f, k, &xt, red)));
      dx = MUL(dx, scale);
    } else {
      dx = MUL(dy, scale);
    }
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, dx));
  } else {
    TT_RETURN_IF_ERROR(set_zero(c, 0));
  }
  if (c->nout > 1) TT_RETURN_IF_ERROR(wanted(c, 9, 1) ? tt_l_set_out(c, 1, MUL(dot, invstd)) : set_zero(c, 1));
  if (c->nout > 2) TT_RETURN_IF_ERROR(wanted(c, 9, 2) ? tt_l_set_out(c, 2, sum_dy) : set_zero(c, 2));
  return NULL;
}

/* ---- group norm ---------------------------------------------------------------- */

typedef struct gn_shape {
  int64_t N, C, HW, G, D; /* D = C / G channels per group */
} gn_shape_t;

static tt_status_t gn_shape(tt_lctx_t* c, int first, gn_shape_t* g) {
  g->N = c->args[first].i, g->C = c->args[first + 1].i, g->HW = c->args[first + 2].i;
  g->G = c->args[first + 3].i;
  if (g->G <= 0 || g->C % g->G)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: C (%lld) must be divisible by group (%lld)", c->op->name,
                          (long long)g->C, (long long)g->G);
  g->D = g->C / g->G;
  return NULL;
}

/* a per-channel (C,) value as (N, G, D, HW) */
static tt_val_t gn_channel(tt_shlo_fn_t* f, tt_val_t v, const gn_shape_t* g) {
  int64_t gd[2] = {g->G, g->D}, full[4] = {g->N, g->G, g->D, g->HW}, bd[2] = {1, 2};
  return tt_lt_bcast_in_dim(f, tt_l_reshape(f, v, 2, gd), 4, full, bd);
}

/* a per-(sample, group) (N, G) value as (N, G, D, HW) */
static tt_val_t gn_group(tt_shlo_fn_t* f, tt_val_t v, const gn_shape_t* g) {
  int64_t ng[2] = {g->N, g->G}, full[4] = {g->N, g->G, g->D, g->HW}, bd[2] = {0, 1};
  return tt_lt_bcast_in_dim(f, tt_l_reshape(f, v, 2, ng), 4, full, bd);
}

/* native_group_norm(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd) */
static tt_status_t lower_group_norm(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  gn_shape_t g;
  TT_RETURN_IF_ERROR(gn_shape(c, 3, &g));
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  int64_t full[4] = {g.N, g.G, g.D, g.HW};
  tt_val_t x = tt_l_reshape(f, tt_l_convert(f, c->args[0].val, acc), 4, full);
  tt_type_t xt = type_of(f, x);
  double n = (double)(g.D * g.HW);
  uint32_t red = 0xcu; /* D, HW */
  tt_val_t mean = tt_lt_sum(f, x, red);
  mean = DIV(mean, cst(f, mean, n));
  tt_val_t d = SUB(x, tt_lt_expand(f, mean, &xt, red));
  tt_val_t var = tt_lt_sum(f, MUL(d, d), red);
  tt_val_t rstd = inv_std(f, DIV(var, cst(f, var, n)), c->args[7].f);
  tt_val_t scale = gn_group(f, rstd, &g), bias;
  if (tt_lt_has(c, 1)) scale = MUL(scale, gn_channel(f, tt_l_convert(f, c->args[1].val, acc), &g));
  bias = tt_l_unary(f, "stablehlo.negate", MUL(scale, gn_group(f, mean, &g)));
  if (tt_lt_has(c, 2)) bias = ADD(bias, gn_channel(f, tt_l_convert(f, c->args[2].val, acc), &g));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, ADD(MUL(x, scale), bias)));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, mean));
  return tt_l_set_out(c, 2, rstd);
}

/* native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW,
 * group, output_mask) -> (grad_input, grad_weight, grad_bias), as the CPU
 * kernel: ds/db per (n, c), then per-group coefficients. */
static tt_status_t lower_group_norm_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  gn_shape_t g;
  TT_RETURN_IF_ERROR(gn_shape(c, 5, &g));
  tt_dtype_t acc = tt_l_opmath(type_of(f, c->args[1].val).dtype);
  int64_t full[4] = {g.N, g.G, g.D, g.HW};
  tt_val_t dy = tt_l_reshape(f, tt_l_convert(f, c->args[0].val, acc), 4, full);
  tt_val_t x = tt_l_reshape(f, tt_l_convert(f, c->args[1].val, acc), 4, full);
  int64_t ng[2] = {g.N, g.G};
  tt_val_t mean = tt_l_reshape(f, tt_l_convert(f, c->args[2].val, acc), 2, ng);
  tt_val_t rstd = tt_l_reshape(f, tt_l_convert(f, c->args[3].val, acc), 2, ng);
  bool has_w = tt_lt_has(c, 4);
  tt_val_t ds = tt_lt_sum(f, MUL(dy, x), 0x8u), db = tt_lt_sum(f, dy, 0x8u); /* (N, G, D) */
  tt_type_t ngd = type_of(f, ds);
  if (wanted(c, 9, 0)) {
    tt_val_t wfull = TT_SHLO_INVALID, dsg = ds, dbg = db;
    if (has_w) {
      tt_val_t w = tt_l_convert(f, c->args[4].val, acc);
      int64_t gd[2] = {g.G, g.D}, b12[2] = {1, 2};
      tt_val_t w3 = tt_lt_bcast_in_dim(f, tt_l_reshape(f, w, 2, gd), 3, ngd.dims, b12);
      dsg = MUL(ds, w3), dbg = MUL(db, w3);
      wfull = gn_channel(f, w, &g);
    }
    dsg = tt_lt_sum(f, dsg, 0x4u), dbg = tt_lt_sum(f, dbg, 0x4u); /* (N, G) */
    tt_val_t s = cst(f, mean, 1.0 / (double)(g.D * g.HW));
    tt_val_t r3 = MUL(MUL(rstd, rstd), rstd);
    tt_val_t b = MUL(MUL(SUB(MUL(dbg, mean), dsg), r3), s);
    tt_val_t cc = SUB(tt_l_unary(f, "stablehlo.negate", MUL(b, mean)), MUL(MUL(dbg, rstd), s));
    tt_val_t a = gn_group(f, rstd, &g);
    if (has_w) a = MUL(a, wfull);
    tt_val_t dx = ADD(ADD(MUL(a, dy), MUL(gn_group(f, b, &g), x)), gn_group(f, cc, &g));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, dx));
  } else {
    TT_RETURN_IF_ERROR(set_zero(c, 0));
  }
  if (c->nout > 1) {
    if (wanted(c, 9, 1)) {
      int64_t b01[2] = {0, 1};
      tt_val_t m3 = tt_lt_bcast_in_dim(f, mean, 3, ngd.dims, b01);
      tt_val_t r3 = tt_lt_bcast_in_dim(f, rstd, 3, ngd.dims, b01);
      tt_val_t dw = tt_lt_sum(f, MUL(SUB(ds, MUL(db, m3)), r3), 0x1u); /* (G, D) */
      TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, dw));
    } else {
      TT_RETURN_IF_ERROR(set_zero(c, 1));
    }
  }
  if (c->nout > 2) TT_RETURN_IF_ERROR(wanted(c, 9, 2) ? tt_l_set_out(c, 2, tt_lt_sum(f, db, 0x1u)) : set_zero(c, 2));
  return NULL;
}

#define ROW(name, fn, param) {"aten::" name, fn, param, 0}

const tt_lower_entry_t tt_lower_norm[] = {
    ROW("native_batch_norm", lower_batch_norm, BN_TRAIN_ARG),
    ROW("native_batch_norm.out", lower_batch_norm, BN_TRAIN_ARG),
    ROW("_native_batch_norm_legit", lower_batch_norm, BN_TRAIN_ARG),
    ROW("_native_batch_norm_legit.out", lower_batch_norm, BN_TRAIN_ARG | BN_STATS_FIRST),
    ROW("_native_batch_norm_legit.no_stats", lower_batch_norm, BN_NO_STATS),
    ROW("_native_batch_norm_legit.no_stats_out", lower_batch_norm, BN_NO_STATS),
    ROW("_native_batch_norm_legit_no_training", lower_batch_norm, BN_EVAL),
    ROW("_native_batch_norm_legit_no_training.out", lower_batch_norm, BN_EVAL),
    ROW("_native_batch_norm_legit_functional", lower_batch_norm, BN_TRAIN_ARG),
    ROW("_batch_norm_with_update", lower_batch_norm, BN_UPDATE | BN_RESERVE),
    ROW("_batch_norm_with_update.out", lower_batch_norm, BN_UPDATE | BN_RESERVE | BN_STATS_FIRST),
    ROW("_batch_norm_no_update", lower_batch_norm, BN_EVAL | BN_RESERVE),
    ROW("_batch_norm_no_update.out", lower_batch_norm, BN_EVAL | BN_RESERVE),
    ROW("native_batch_norm_backward", lower_batch_norm_bwd, 0),
    ROW("native_batch_norm_backward.out", lower_batch_norm_bwd, 0),
    ROW("batch_norm_backward", lower_batch_norm_bwd, 0),
    ROW("native_group_norm", lower_group_norm, 0),
    ROW("native_group_norm.out", lower_group_norm, 0),
    ROW("native_group_norm_backward", lower_group_norm_bwd, 0),
    ROW("native_group_norm_backward.out", lower_group_norm_bwd, 0),
    ROW("_weight_norm_interface", tt__norm_weight_norm, 0),
    ROW("_weight_norm_interface.out", tt__norm_weight_norm, 0),
    ROW("_weight_norm_interface_backward", tt__norm_weight_norm_bwd, 0),
    ROW("_weight_norm_interface_backward.out", tt__norm_weight_norm_bwd, 0),
    ROW("_embedding_bag", tt__norm_embedding_bag, 0),
    ROW("_embedding_bag.out", tt__norm_embedding_bag, 0),
    ROW("_embedding_bag_forward_only", tt__norm_embedding_bag, 0),
    ROW("_embedding_bag_forward_only.out", tt__norm_embedding_bag, 0),
    ROW("_embedding_bag_backward", tt__norm_embedding_bag_bwd, 1),
    ROW("_embedding_bag_dense_backward", tt__norm_embedding_bag_bwd, 0),
    ROW("_embedding_bag_dense_backward.out", tt__norm_embedding_bag_bwd, 0),
    ROW("_embedding_bag_per_sample_weights_backward", tt__norm_embedding_bag_psw_bwd, 0),
    ROW("_embedding_bag_per_sample_weights_backward.out", tt__norm_embedding_bag_psw_bwd, 0),
};
const int tt_lower_norm_count = TT_TABLE_COUNT(tt_lower_norm);

/* The table's facts (every overload of each op). CPU's batch norm out= kernels resize the
 * output contiguous, whatever the input's layout. */
const tt_lower_fact_t tt_lower_norm_facts[] = {
    TT_FACT("aten::native_batch_norm", TT_LF_STATS_OUTPUTS | TT_LF_OUT_RESIZE_CONTIGUOUS),
    TT_FACT("aten::_native_batch_norm_legit", TT_LF_OUT_RESIZE_CONTIGUOUS),
};
const int tt_lower_norm_facts_count = TT_TABLE_COUNT(tt_lower_norm_facts);
