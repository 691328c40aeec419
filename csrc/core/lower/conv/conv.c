/* Convolutions, forward and backward, for 1-3 spatial dims: aten::convolution
 * (and _convolution / convolution_overrideable, which share its leading
 * arguments) and convolution_backward (+ _overrideable, which lacks
 * bias_sizes). Everything is one stablehlo.convolution at HIGHEST precision:
 *
 *   forward          [b,f,sp]x[o,i,sp]->[b,f,sp], feature_group_count = groups
 *   transposed       the adjoint of a forward conv: lhs_dilation = stride,
 *                    the kernel regrouped to (out, in/g) and reversed
 *   grad of weight   [f,b,sp]x[i,o,sp]->[f,b,sp]: the batch is contracted,
 *                    channels are the batch, groups become batch_group_count
 *
 * A transposed conv is the input-gradient of a forward conv with the same
 * weight, so its backward swaps the two roles. f16/bf16 compute in f32 and
 * round once, as PyTorch CPU accumulates in f32. Output shapes come from
 * PyTorch; the convolution's own result shape is derived here and must agree. */
#include <stdio.h>
#include <string.h>

#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

#define CONV_BWD 0x1         /* convolution_backward */
#define CONV_NO_BIAS_SIZES 0x2 /* convolution_backward_overrideable: no bias_sizes argument */

typedef struct conv_p {
  int nsp; /* spatial dims */
  int64_t stride[3], pad[3], dil[3], opad[3], groups;
  bool transposed;
} conv_p_t;

/* An int[] argument expanded to nsp entries (a single value repeats). */
static tt_status_t expand(tt_lctx_t* c, int i, int nsp, int64_t dflt, int64_t* out) {
  const tt_larg_t* a = &c->args[i];
  int n = a->kind == TT_ARG_INTS ? a->n : 0;
  if (n != 0 && n != 1 && n != nsp)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected %d values in argument %d, got %d",
                          c->op->name, nsp, i, n);
  for (int d = 0; d < nsp; d++) out[d] = n == 0 ? dflt : a->ints[n == 1 ? 0 : d];
  return NULL;
}

static tt_status_t parse(tt_lctx_t* c, int first, int nsp, conv_p_t* p) {
  memset(p, 0, sizeof *p);
  p->nsp = nsp;
  tt_status_t st = NULL;
  if (!st) st = expand(c, first, nsp, 1, p->stride);
  if (!st) st = expand(c, first + 1, nsp, 0, p->pad);
  if (!st) st = expand(c, first + 2, nsp, 1, p->dil);
  if (!st) st = expand(c, first + 4, nsp, 0, p->opad);
  if (st) return st;
  p->transposed = c->args[first + 3].i != 0;
  p->groups = c->args[first + 5].i;
  if (p->groups < 1) return tt_status_make(TT_INVALID_ARGUMENT, "%s: non-positive groups is not supported", c->op->name);
  return NULL;
}

static void spec(tt_sbuf_t* a, const char* two, int nsp) {
  tt_sbuf_printf(a, "[%c, %c", two[0], two[1]);
  for (int d = 0; d < nsp; d++) tt_sbuf_printf(a, ", %d", d);
  tt_sbuf_append(a, "]");
}

typedef struct conv_call {
  const char *lhs, *rhs, *out;  /* two-letter specs of dims 0 and 1 */
  const int64_t *strides, *lo, *hi, *lhs_dil, *rhs_dil;
  int64_t fgc, bgc;
} conv_call_t;

static int spec_pos(const char* two, char ch) { return two[0] == ch ? 0 : 1; }

/* One stablehlo.convolution; the result type follows the StableHLO shape rules. */
static tt_val_t conv(tt_shlo_fn_t* f, tt_val_t lhs, tt_val_t rhs, int nsp, const conv_call_t* k) {
  const tt_type_t* lt = tt_shlo_type(f, lhs);
  const tt_type_t* rt = tt_shlo_type(f, rhs);
  if (!lt || !rt) return TT_SHLO_INVALID;
  tt_type_t out = tt_type_scalar(lt->dtype);
  out.rank = nsp + 2;
  out.dims[spec_pos(k->out, 'b')] = lt->dims[spec_pos(k->lhs, 'b')] / k->bgc;
  out.dims[spec_pos(k->out, 'f')] = rt->dims[spec_pos(k->rhs, 'o')];
  for (int d = 0; d < nsp; d++) {
    int64_t in = (lt->dims[2 + d] - 1) * k->lhs_dil[d] + 1 + k->lo[d] + k->hi[d];
    int64_t win = (rt->dims[2 + d] - 1) * k->rhs_dil[d] + 1;
    int64_t o = in < win ? 0 : (in - win) / k->strides[d] + 1;
    out.dims[2 + d] = o;
  }
  int64_t ones[3] = {1, 1, 1};
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_printf(&a, "batch_group_count = %lld : i64, dimension_numbers = #stablehlo.conv<",
                 (long long)k->bgc);
  spec(&a, k->lhs, nsp);
  tt_sbuf_append(&a, "x");
  spec(&a, k->rhs, nsp);
  tt_sbuf_append(&a, "->");
  spec(&a, k->out, nsp);
  tt_sbuf_printf(&a, ">, feature_group_count = %lld : i64, lhs_dilation = ", (long long)k->fgc);
  tt_shlo_fmt_i64_array(&a, k->lhs_dil ? k->lhs_dil : ones, nsp);
  tt_sbuf_append(&a, ", padding = dense<[");
  for (int d = 0; d < nsp; d++)
    tt_sbuf_printf(&a, "%s[%lld, %lld]", d ? ", " : "", (long long)k->lo[d], (long long)k->hi[d]);
  tt_sbuf_printf(&a, "]> : tensor<%dx2xi64>, precision_config = [#stablehlo<precision HIGHEST>, "
                     "#stablehlo<precision HIGHEST>], rhs_dilation = ", nsp);
  tt_shlo_fmt_i64_array(&a, k->rhs_dil, nsp);
  tt_sbuf_append(&a, ", window_strides = ");
  tt_shlo_fmt_i64_array(&a, k->strides, nsp);
  tt_val_t ops[2] = {lhs, rhs};
  tt_val_t r = tt_shlo_op(f, "stablehlo.convolution", ops, 2, &out, a.data);
  tt_sbuf_free(&a);
  return r;
}

/* Forward conv: x (N, C, L...), w (O, C/g, k...) -> (N, O, out...). */
static tt_val_t conv_fwd(tt_shlo_fn_t* f, tt_val_t x, tt_val_t w, const conv_p_t* p) {
  int64_t ones[3] = {1, 1, 1};
  conv_call_t k = {"bf", "oi", "bf", p->stride, p->pad, p->pad, ones, p->dil, p->groups, 1};
  return conv(f, x, w, p->nsp, &k);
}

/* The adjoint of conv_fwd with weight w (A, B/g, k...): x (N, A, o...) ->
 * (N, B, target...), i.e. a transposed conv whose output size is target. */
static tt_val_t conv_adj(tt_shlo_fn_t* f, tt_val_t x, tt_val_t w, const conv_p_t* p,
                         const int64_t* target) {
  const tt_type_t* wtp = tt_shlo_type(f, w);
  const tt_type_t* xtp = tt_shlo_type(f, x);
  if (!wtp || !xtp) return TT_SHLO_INVALID;
  tt_type_t wt = *wtp;
  int nsp = p->nsp, r = wt.rank;
  int64_t g = p->groups, ag = wt.dims[0] / g, bg = wt.dims[1];
  /* (A, B/g, k) -> (g, A/g, B/g, k) -> (g, B/g, A/g, k) -> (B, A/g, k), reversed */
  int64_t d5[TT_MAX_RANK] = {g, ag, bg}, perm[TT_MAX_RANK] = {0, 2, 1}, d4[TT_MAX_RANK] = {g * bg, ag};
  int64_t rev[3];
  for (int d = 0; d < nsp; d++) {
    d5[3 + d] = wt.dims[2 + d];
    perm[3 + d] = 3 + d;
    d4[2 + d] = wt.dims[2 + d];
    rev[d] = 2 + d;
  }
  tt_val_t wr = tt_l_reshape(f, w, r + 1, d5);
  wr = tt_l_reshape(f, tt_l_transpose(f, wr, perm), r, d4);
  tt_type_t rt = wt;
  rt.dims[0] = d4[0], rt.dims[1] = d4[1];
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "dimensions = ");
  tt_shlo_fmt_i64_array(&a, rev, nsp);
  wr = tt_shlo_op(f, "stablehlo.reverse", &wr, 1, &rt, a.data);
  tt_sbuf_free(&a);
  int64_t lo[3], hi[3], ones[3] = {1, 1, 1};
  for (int d = 0; d < nsp; d++) {
    int64_t ext = p->dil[d] * (wt.dims[2 + d] - 1);
    lo[d] = ext - p->pad[d];
    hi[d] = target[d] + p->pad[d] - (xtp->dims[2 + d] - 1) * p->stride[d] - 1;
  }
  conv_call_t k = {"bf", "oi", "bf", ones, lo, hi, p->stride, p->dil, g, 1};
  return conv(f, x, wr, nsp, &k);
}

/* Gradient of conv_fwd's weight: u (N, C, L...), gy (N, O, o...) -> (O, C/g, k...). */
static tt_val_t conv_wgrad(tt_shlo_fn_t* f, tt_val_t u, tt_val_t gy, const conv_p_t* p,
                           const int64_t* ksize) {
  const tt_type_t* ut = tt_shlo_type(f, u);
  const tt_type_t* gt = tt_shlo_type(f, gy);
  if (!ut || !gt) return TT_SHLO_INVALID;
  int64_t lo[3], hi[3], ones[3] = {1, 1, 1};
  for (int d = 0; d < p->nsp; d++) {
    lo[d] = p->pad[d];
    hi[d] = (gt->dims[2 + d] - 1) * p->stride[d] + 1 - ut->dims[2 + d] +
            p->dil[d] * (ksize[d] - 1) - p->pad[d];
  }
  conv_call_t k = {"fb", "io", "fb", p->dil, lo, hi, ones, p->stride, 1, p->groups};
  return conv(f, u, gy, p->nsp, &k);
}

/* Cuts dims 2.. of v down to want (a transposed conv's input gradient can be longer). */
static tt_val_t fit(tt_shlo_fn_t* f, tt_val_t v, const int64_t* want, int nsp) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  int64_t s[TT_MAX_RANK] = {0}, l[TT_MAX_RANK];
  for (int d = 0; d < t->rank; d++) l[d] = t->dims[d];
  for (int d = 0; d < nsp; d++) l[2 + d] = want[d] < l[2 + d] ? want[d] : l[2 + d];
  return tt_lt_slice(f, v, s, l);
}

/* Argument i in compute dtype cdt, with a unit batch dim added when unbatched. */
static tt_val_t operand(tt_lctx_t* c, int i, tt_dtype_t cdt, int rank) {
  tt_val_t v = tt_l_convert(c->f, c->args[i].val, cdt);
  const tt_type_t* t = tt_shlo_type(c->f, v);
  if (!t || t->rank == rank) return v;
  int64_t d[TT_MAX_RANK] = {1};
  for (int k = 0; k < t->rank; k++) d[k + 1] = t->dims[k];
  return tt_l_reshape(c->f, v, t->rank + 1, d);
}

static tt_status_t check_dtype(tt_lctx_t* c, tt_dtype_t dt) {
  /* integer convolutions are exact (CPU runs them on its slow path too) */
  if (tt_dtype_is_float(dt) || tt_dtype_is_signed_int(dt)) return NULL;
  return tt_status_make(TT_INVALID_ARGUMENT, "%s: not implemented for '%s'", c->op->name,
                        tt_dtype_name(dt));
}

static tt_status_t lower_conv(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* wt = tt_lt_arg_type(c, 1);
  if (!wt || wt->rank < 3 || wt->rank > 5)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a 3-d to 5-d weight", c->op->name);
  tt_dtype_t dt = tt_l_arg_dtype(c, 0);
  tt_status_t st = check_dtype(c, dt);
  conv_p_t p;
  if (!st) st = parse(c, 3, wt->rank - 2, &p);
  if (st) return st;
  tt_dtype_t cdt = tt_l_opmath(dt);
  tt_val_t x = operand(c, 0, cdt, wt->rank), w = operand(c, 1, cdt, wt->rank);
  tt_val_t y;
  if (!p.transposed) {
    y = conv_fwd(f, x, w, &p);
  } else {
    const tt_type_t* xt = tt_shlo_type(f, x);
    if (!xt) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
    int64_t target[3];
    for (int d = 0; d < p.nsp; d++)
      target[d] = (xt->dims[2 + d] - 1) * p.stride[d] - 2 * p.pad[d] +
                  p.dil[d] * (wt->dims[2 + d] - 1) + p.opad[d] + 1;
    y = conv_adj(f, x, w, &p, target);
  }
  if (tt_lt_has(c, 2)) {
    const tt_type_t* yt = tt_shlo_type(f, y);
    if (!yt) return tt_status_make(TT_INTERNAL, "%s: convolution failed", c->op->name);
    int64_t bd[1] = {1};
    tt_val_t b = tt_l_convert(f, c->args[2].val, cdt);
    y = tt_l_binary(f, "stablehlo.add", y, tt_lt_bcast_in_dim(f, b, yt->rank, yt->dims, bd));
  }
  if (tt_shlo_failed(f)) return NULL; /* the builder reports its failure */
  return tt_l_set_out(c, 0, y);
}

static tt_status_t lower_conv_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int first = (c->op->param & CONV_NO_BIAS_SIZES) ? 3 : 4;
  const tt_type_t* wt = tt_lt_arg_type(c, 2);
  const tt_type_t* xt0 = tt_lt_arg_type(c, 1);
  const tt_larg_t* mask = &c->args[first + 6];
  if (!wt || !xt0 || wt->rank < 3 || wt->rank > 5 || mask->kind != TT_ARG_INTS || mask->n != 3 ||
      c->nout != 3)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: bad arguments", c->op->name);
  tt_dtype_t dt = tt_l_arg_dtype(c, 1);
  tt_status_t st = check_dtype(c, dt);
  conv_p_t p;
  if (!st) st = parse(c, first, wt->rank - 2, &p);
  if (st) return st;
  tt_dtype_t cdt = tt_l_opmath(dt);
  int rank = wt->rank;
  tt_val_t gy = operand(c, 0, cdt, rank), x = operand(c, 1, cdt, rank), w = operand(c, 2, cdt, rank);
  const tt_type_t* xt = tt_shlo_type(f, x);
  if (!xt) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  int64_t in_sp[3], k_sp[3];
  for (int d = 0; d < p.nsp; d++) in_sp[d] = xt->dims[2 + d], k_sp[d] = wt->dims[2 + d];
  tt_val_t r[3] = {TT_SHLO_INVALID, TT_SHLO_INVALID, TT_SHLO_INVALID};
  if (mask->ints[0])
    r[0] = p.transposed ? fit(f, conv_fwd(f, gy, w, &p), in_sp, p.nsp) : conv_adj(f, gy, w, &p, in_sp);
  if (mask->ints[1]) r[1] = p.transposed ? conv_wgrad(f, gy, x, &p, k_sp) : conv_wgrad(f, x, gy, &p, k_sp);
  if (mask->ints[2]) {
    uint32_t m = 0;
    for (int d = 0; d < rank; d++)
      if (d != 1) m |= 1u << d;
    r[2] = tt_lt_sum(f, gy, m);
  }
  if (tt_shlo_failed(f)) return NULL;
  for (int i = 0; i < 3 && !st; i++) {
    if (mask->ints[i]) st = tt_l_set_out(c, i, r[i]);
    else c->outs[i] = tt_shlo_const(f, &c->out_types[i], 0.0); /* not requested: a dummy */
  }
  return st;
}

const tt_lower_entry_t tt_lower_conv[] = {
    {"aten::convolution", lower_conv, 0, 0},
    {"aten::convolution.out", lower_conv, 0, 0},
    {"aten::_convolution", lower_conv, 0, 0},
    {"aten::convolution_overrideable", lower_conv, 0, 0},
    {"aten::convolution_backward", lower_conv_bwd, CONV_BWD, 0},
    {"aten::convolution_backward.out", lower_conv_bwd, CONV_BWD, 0},
    {"aten::convolution_backward_overrideable", lower_conv_bwd, CONV_BWD | CONV_NO_BIAS_SIZES, 0},
};
const int tt_lower_conv_count = TT_TABLE_COUNT(tt_lower_conv);
