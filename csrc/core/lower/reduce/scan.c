/* Scans: cummax / cummin (the _cummax_helper / _cummin_helper kernels that
 * cummax and cummin call), _logcumsumexp, segment_reduce and its backward.
 * Scans are log-step (Hillis-Steele) combinations of shifted copies, so the
 * combining rule must be associative: cummax picks the NaN-first, then
 * largest, then latest element (CPU's `x >= running max` keeps the last
 * index of equal maxima); logcumsumexp accumulates in double as CPU does.
 * Complex logcumsumexp is a sequential loop instead: CPU folds the steps in
 * order and never brings the imaginary part back to (-pi, pi], so a tree of
 * combinations would differ from it by multiples of 2 pi. */
#include <math.h>
#include <string.h>

#include "../elementwise/lower_elementwise.h"
#include "../lower_loop.h"
#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"

static tt_val_t kl(tt_shlo_fn_t* f, tt_val_t like, double v) { return tt_shlo_const(f, tt_shlo_type(f, like), v); }
static tt_val_t bin(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) { return tt_l_binary(f, op, a, b); }
static tt_val_t isnan_(tt_shlo_fn_t* f, tt_val_t a) { return tt_l_compare(f, "NE", a, a); }
static tt_val_t not_(tt_shlo_fn_t* f, tt_val_t a) { return tt_l_unary(f, "stablehlo.not", a); }
static tt_val_t or_(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return bin(f, "stablehlo.or", a, b); }
static tt_val_t and_(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return bin(f, "stablehlo.and", a, b); }

/* v shifted by k along dim, the first k positions filled with pad0 (0-d). */
static tt_val_t shift(tt_shlo_fn_t* f, tt_val_t v, int dim, int64_t k, tt_val_t pad0) {
  tt_type_t t = tt__sh_type(f, v);
  tt_val_t head = tt_lt_slice_dim(f, v, dim, 0, t.dims[dim] - k);
  int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
  lo[dim] = k;
  return tt_lt_pad(f, head, pad0, lo, hi);
}

/* _cummax_helper / _cummin_helper(self, values, indices, dim) (param 1: min):
 * outputs values and i64 indices. CPU: a NaN always takes over (later NaNs
 * too); otherwise x replaces the running extreme when x >= it (<= for min). */
static tt_status_t lower_cum_extreme(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  bool is_min = c->op->param == 1;
  tt_val_t v = c->args[0].val;
  tt_type_t t = tt__sh_type(f, v);
  if (t.rank == 0 || tt_type_numel(&t) == 0) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, v));
    tt_type_t it = t;
    it.dtype = TT_I64;
    return tt_l_set_out(c, 1, tt_shlo_const(f, &it, 0.0));
  }
  int dim = (int)tt_l_wrap_dim(c->args[3].i, t.rank);
  tt_val_t idx = tt_lt_iota(f, TT_I64, t.rank, t.dims, dim);
  tt_val_t ident = tt_lt_limit(f, t.dtype, is_min), izero = tt_lt_const0(f, TT_I64, 0.0);
  bool fl = tt_dtype_is_float(t.dtype);
  for (int64_t k = 1; k < t.dims[dim]; k *= 2) {
    tt_val_t a = shift(f, v, dim, k, ident), ia = shift(f, idx, dim, k, izero); /* earlier */
    /* keep the later element (v) when it is NaN or beats the earlier one */
    tt_val_t later = tt_l_compare(f, is_min ? "LE" : "GE", v, a);
    if (fl) later = or_(f, isnan_(f, v), and_(f, not_(f, isnan_(f, a)), later));
    v = tt_l_select(f, later, v, a);
    idx = tt_l_select(f, later, idx, ia);
  }
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, v));
  return tt_l_set_out(c, 1, idx);
}

/* log(exp(x) + exp(y)) as CPU's logcumsumexp combines: equal infinities
 * stay, NaN propagates. */
static tt_val_t log_add_exp(tt_shlo_fn_t* f, tt_val_t x, tt_val_t y) {
  tt_val_t mn = tt_lt_minmax(f, "stablehlo.minimum", x, y), mx = tt_lt_minmax(f, "stablehlo.maximum", x, y);
  tt_val_t r = bin(f, "stablehlo.add", tt_l_unary(f, "stablehlo.log_plus_one",
                                                  tt_l_unary(f, "stablehlo.exponential", bin(f, "stablehlo.subtract", mn, mx))), mx);
  tt_val_t inf_same = and_(f, tt_l_compare(f, "EQ", mn, mx),
                           tt_l_compare(f, "EQ", tt_l_unary(f, "stablehlo.abs", mn), kl(f, mn, INFINITY)));
  return tt_l_select(f, inf_same, x, r);
}

/* Row i of a (n, m) value, as (m). */
static tt_val_t row_at(tt_shlo_fn_t* f, tt_val_t v, tt_val_t i) {
  tt_type_t t = tt__sh_type(f, v), rt = t;
  rt.dims[0] = 1;
  tt_val_t ops[3] = {v, i, tt_lt_const0(f, TT_I64, 0)};
  tt_val_t r = tt_shlo_opf(f, "stablehlo.dynamic_slice", ops, 3, &rt, "slice_sizes = array<i64: 1, %lld>",
                           (long long)t.dims[1]);
  return tt_l_reshape(f, r, 1, &t.dims[1]);
}

/* One step of complex logcumsumexp: vals = {running value (m), results (n, m),
 * input (n, m)}, all complex128; CPU's step is log_add_exp(x_i, running). */
static void cx_lcse_step(tt_shlo_fn_t* f, tt_val_t i, tt_val_t* vals, void* ud) {
  (void)ud;
  tt_val_t acc = tt__cx_logaddexp(f, row_at(f, vals[2], i), vals[0]);
  tt_type_t ot = tt__sh_type(f, vals[1]);
  int64_t d[2] = {1, ot.dims[1]};
  tt_val_t ops[4] = {vals[1], tt_l_reshape(f, acc, 2, d), i, tt_lt_const0(f, TT_I64, 0)};
  vals[0] = acc;
  vals[1] = tt_shlo_op(f, "stablehlo.dynamic_update_slice", ops, 4, &ot, NULL);
}

/* Complex _logcumsumexp along dim: in complex128 (CPU's accumulator), one
 * element of the dim after the other from -inf + 0i. */
static tt_val_t cx_logcumsumexp(tt_shlo_fn_t* f, tt_val_t v, int dim) {
  tt_type_t t = tt__sh_type(f, v);
  int64_t perm[TT_MAX_RANK], inv[TT_MAX_RANK], pd[TT_MAX_RANK], n = t.dims[dim];
  perm[0] = dim;
  for (int k = 0, j = 1; k < t.rank; k++)
    if (k != dim) perm[j++] = k;
  for (int k = 0; k < t.rank; k++) {
    inv[perm[k]] = k;
    pd[k] = t.dims[perm[k]];
  }
  int64_t nm[2] = {n, tt_type_numel(&t) / n};
  tt_val_t x = tt_l_reshape(f, tt_l_convert(f, tt_l_transpose(f, v, perm), TT_C128), 2, nm);
  tt_val_t vals[3] = {tt__cx_make(f, tt_l_full(f, TT_F64, 1, &nm[1], -INFINITY), tt_l_full(f, TT_F64, 1, &nm[1], 0.0)),
                      tt_l_full(f, TT_C128, 2, nm, 0.0), x};
  tt_l_fori(f, n, vals, 3, cx_lcse_step, NULL);
  tt_val_t r = tt_l_reshape(f, tt_l_convert(f, vals[1], t.dtype), t.rank, pd);
  return tt_l_transpose(f, r, inv);
}

/* _logcumsumexp(self, dim) */
static tt_status_t lower_logcumsumexp(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t v = c->args[0].val;
  tt_type_t t = tt__sh_type(f, v);
  bool cx = tt_dtype_is_complex(t.dtype);
  if (!tt_dtype_is_float(t.dtype) && !cx)
    return tt_status_make(TT_INVALID_ARGUMENT, "logcumsumexp: expected a floating point tensor, got %s", tt_dtype_name(t.dtype));
  if (t.rank == 0 || tt_type_numel(&t) == 0) return tt_l_set_out(c, 0, v);
  int dim = (int)tt_l_wrap_dim(c->args[1].i, t.rank);
  if (cx) return tt_l_set_out(c, 0, cx_logcumsumexp(f, v, dim));
  v = tt_l_convert(f, v, TT_F64);
  tt_val_t ninf = tt_lt_const0(f, TT_F64, -INFINITY);
  for (int64_t k = 1; k < t.dims[dim]; k *= 2) v = log_add_exp(f, shift(f, v, dim, k, ninf), v);
  return tt_l_set_out(c, 0, v);
}

/* scan_segment.c */
tt_status_t tt__scan_segment_reduce(tt_lctx_t* c);
tt_status_t tt__scan_segment_reduce_backward(tt_lctx_t* c);

#define R(name, fn, param) {"aten::" name, fn, param, 0}

const tt_lower_entry_t tt_lower_scan[] = {
    R("_cummax_helper", lower_cum_extreme, 0), R("_cummin_helper", lower_cum_extreme, 1),
    R("_logcumsumexp", lower_logcumsumexp, 0), R("_logcumsumexp.out", lower_logcumsumexp, 0),
    R("segment_reduce", tt__scan_segment_reduce, 0),
    R("_segment_reduce_backward", tt__scan_segment_reduce_backward, 0),
    R("_segment_reduce_backward.out", tt__scan_segment_reduce_backward, 0),
};
const int tt_lower_scan_count = TT_TABLE_COUNT(tt_lower_scan);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_scan_facts[] = {
    TT_FACT("aten::_logcumsumexp", TT_LF_COMPLEX),
};
const int tt_lower_scan_facts_count = TT_TABLE_COUNT(tt_lower_scan_facts);
