/* Sorting and order statistics: sort (+stable), topk, kthvalue, median,
 * nanmedian, mode. All build on one stable stablehlo.sort of (values, iota)
 * whose comparator also breaks ties by index, so equal keys keep their order
 * whatever the backend does with is_stable. NaN sorts as the largest value,
 * as in PyTorch. argsort and msort are CompositeImplicitAutograd over sort.
 *
 * Tie order where PyTorch CPU is not stable (sort with stable=None on
 * integers, topk, kthvalue, mode for long rows) is implementation-defined; we
 * always return the stable order. */
#include <math.h>
#include <stdio.h>

#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"

static tt_val_t is_nan(tt_shlo_fn_t* f, tt_val_t a) { return tt_l_compare(f, "NE", a, a); }
static tt_val_t and2(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.and", a, b); }
static tt_val_t or2(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.or", a, b); }

/* Sorts v along dim (ascending, or descending); sorted values and their i64
 * source indices. */
static void sort_dim(tt_shlo_fn_t* f, tt_val_t v, int dim, bool descending, tt_val_t* vals,
                     tt_val_t* idx) {
  tt_type_t t = tt__sh_type(f, v);
  if (t.rank == 0) {
    *vals = v;
    *idx = tt_lt_const0(f, TT_I64, 0);
    return;
  }
  tt_type_t it = t;
  it.dtype = TT_I64;
  if (tt_type_numel(&t) == 0) {
    *vals = v;
    *idx = tt_shlo_const(f, &it, 0.0);
    return;
  }
  tt_val_t iota = tt_lt_iota(f, TT_I64, t.rank, t.dims, dim);
  tt_type_t sv = tt_type_scalar(t.dtype), si = tt_type_scalar(TT_I64);
  tt_type_t bt[4] = {sv, sv, si, si};
  tt_val_t b[4];
  tt_shlo_region_begin(f, bt, 4, b);
  /* first: a goes before c */
  tt_val_t a = b[0], c = b[1];
  tt_val_t first = tt_l_compare(f, descending ? "GT" : "LT", a, c);
  tt_val_t same = tt_l_compare(f, "EQ", a, c);
  if (tt_dtype_is_float(t.dtype)) {
    tt_val_t an = is_nan(f, a), cn = is_nan(f, c);
    tt_val_t nan_first = descending ? and2(f, an, tt_l_unary(f, "stablehlo.not", cn))
                                    : and2(f, cn, tt_l_unary(f, "stablehlo.not", an));
    first = or2(f, first, nan_first);
    same = or2(f, same, and2(f, an, cn));
  }
  first = or2(f, first, and2(f, same, tt_l_compare(f, "LT", b[2], b[3])));
  char* region = tt_shlo_region_end(f, &first, 1);
  tt_type_t rt[2] = {t, it};
  tt_val_t ops[2] = {v, iota};
  tt_val_t outs[2];
  char attr[64];
  snprintf(attr, sizeof attr, "dimension = %d : i64, is_stable = true", dim);
  tt_shlo_op_multi(f, "stablehlo.sort", ops, 2, rt, 2, attr, region, outs);
  *vals = outs[0];
  *idx = outs[1];
}

static int wrap(int64_t d, int rank) { return rank ? (int)tt_l_wrap_dim(d, rank) : 0; }

/* sort(self, dim, descending) / sort.stable(self, stable, dim, descending)
 * and their out= forms; param: the index of `dim` */
static tt_status_t lower_sort(tt_lctx_t* c) {
  int k = (int)c->op->param;
  tt_type_t t = tt__sh_type(c->f, c->args[0].val);
  tt_val_t v, i;
  sort_dim(c->f, c->args[0].val, wrap(c->args[k].i, t.rank), c->args[k + 1].i != 0, &v, &i);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, v));
  return tt_l_set_out(c, 1, i);
}

/* topk(self, k, dim, largest, sorted): always sorted */
static tt_status_t lower_topk(tt_lctx_t* c) {
  tt_type_t t = tt__sh_type(c->f, c->args[0].val);
  int dim = wrap(c->args[2].i, t.rank);
  tt_val_t v, i;
  sort_dim(c->f, c->args[0].val, dim, c->args[3].i != 0, &v, &i);
  if (t.rank) {
    v = tt_lt_slice_dim(c->f, v, dim, 0, c->args[1].i);
    i = tt_lt_slice_dim(c->f, i, dim, 0, c->args[1].i);
  }
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, v));
  return tt_l_set_out(c, 1, i);
}

/* kthvalue(self, k, dim, keepdim) */
static tt_status_t lower_kthvalue(tt_lctx_t* c) {
  tt_type_t t = tt__sh_type(c->f, c->args[0].val);
  int dim = wrap(c->args[2].i, t.rank);
  tt_val_t v, i;
  sort_dim(c->f, c->args[0].val, dim, false, &v, &i);
  if (t.rank) {
    int64_t k = c->args[1].i;
    v = tt_lt_slice_dim(c->f, v, dim, k - 1, k);
    i = tt_lt_slice_dim(c->f, i, dim, k - 1, k);
  }
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, v));
  return tt_l_set_out(c, 1, i);
}

/* median / nanmedian (param 1: ignore NaN). One output: the whole tensor
 * (median(self), median.out); two: median.dim(self, dim, keepdim) and
 * median.dim_values. PyTorch returns the lower median; median returns the
 * first NaN of a row that has one; nanmedian the median of the numbers. */
static tt_status_t lower_median(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  bool ignore_nan = c->op->param != 0;
  bool full = c->nout == 1;
  tt_val_t x = c->args[0].val;
  tt_type_t t = tt__sh_type(f, x);
  if (full) {
    int64_t n = tt_type_numel(&t);
    if (n == 0) return tt_l_set_out(c, 0, tt_l_full(f, c->out_types[0].dtype, 0, NULL, NAN));
    x = tt_l_reshape(f, x, 1, &n);
    t = tt__sh_type(f, x);
  }
  int dim = full ? 0 : wrap(c->args[1].i, t.rank);
  if (t.rank == 0) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, x));
    return tt_l_set_out(c, 1, tt_lt_const0(f, TT_I64, 0));
  }
  tt_val_t v, i;
  sort_dim(f, x, dim, false, &v, &i);
  /* position of the answer in each sorted row, shaped like a keepdim result */
  int64_t n = t.dims[dim];
  tt_type_t kt = t;
  kt.dtype = TT_I64;
  kt.dims[dim] = 1;
  tt_val_t pos;
  if (tt_dtype_is_float(t.dtype)) {
    tt_val_t nn = tt_lt_sum(f, tt_l_convert(f, is_nan(f, x), TT_I64), 1u << dim);
    nn = tt_l_reshape(f, nn, kt.rank, kt.dims);
    tt_val_t rest = tt_l_binary(f, "stablehlo.subtract", tt_shlo_const_i64(f, &kt, n), nn);
    if (ignore_nan) {
      tt_val_t m = tt_l_binary(f, "stablehlo.subtract", rest, tt_shlo_const_i64(f, &kt, 1));
      m = tt_l_binary(f, "stablehlo.maximum", m, tt_shlo_const_i64(f, &kt, 0));
      pos = tt_l_binary(f, "stablehlo.divide", m, tt_shlo_const_i64(f, &kt, 2));
    } else {
      tt_val_t has = tt_l_compare(f, "GT", nn, tt_shlo_const_i64(f, &kt, 0));
      pos = tt_l_select(f, has, rest, tt_shlo_const_i64(f, &kt, (n - 1) / 2));
    }
  } else {
    pos = tt_shlo_const_i64(f, &kt, (n - 1) / 2);
  }
  v = tt_lt_gather_dim(f, v, dim, pos);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, v));
  if (full) return NULL;
  return tt_l_set_out(c, 1, tt_lt_gather_dim(f, i, dim, pos));
}

/* mode(self, dim, keepdim): the most frequent value of each row (the
 * smallest such value on ties) and the index of its last occurrence, as
 * PyTorch CPU's sort-and-count gives for rows it sorts stably. */
static tt_status_t lower_mode(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = c->args[0].val;
  tt_type_t t = tt__sh_type(f, x);
  int dim = wrap(c->args[1].i, t.rank);
  if (t.rank == 0) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, x));
    return tt_l_set_out(c, 1, tt_lt_const0(f, TT_I64, 0));
  }
  int64_t n = t.dims[dim];
  if (tt_type_numel(&t) == 0 || n == 0) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], 0.0)));
    return tt_l_set_out(c, 1, tt_shlo_const(f, &c->out_types[1], 0.0));
  }
  tt_val_t v, i;
  sort_dim(f, x, dim, false, &v, &i);
  tt_type_t it = t;
  it.dtype = TT_I64;
  tt_val_t pos = tt_lt_iota(f, TT_I64, t.rank, t.dims, dim);
  /* run boundaries: start[j] = v[j] != v[j-1], end[j] = v[j] != v[j+1] */
  tt_type_t bt = t;
  bt.dtype = TT_BOOL;
  tt_val_t start = tt_shlo_const(f, &bt, 1.0), end = start;
  if (n > 1) {
    tt_val_t lo = tt_lt_slice_dim(f, v, dim, 0, n - 1), hi = tt_lt_slice_dim(f, v, dim, 1, n);
    tt_val_t diff = tt_l_compare(f, "NE", lo, hi);
    tt_type_t one = bt;
    one.dims[dim] = 1;
    tt_val_t tru = tt_shlo_const(f, &one, 1.0);
    tt_val_t parts[2] = {tru, diff};
    start = tt_lt_concat(f, parts, 2, dim);
    parts[0] = diff;
    parts[1] = tru;
    end = tt_lt_concat(f, parts, 2, dim);
  }
  /* run start position seen from each element: a running maximum */
  tt_val_t zero = tt_shlo_const(f, &it, 0.0);
  tt_val_t run0 = tt_lt_scan(f, tt_l_select(f, start, pos, zero), dim, "stablehlo.maximum");
  tt_val_t freq = tt_l_binary(f, "stablehlo.subtract", pos, run0);
  freq = tt_l_select(f, end, freq, tt_shlo_const(f, &it, -1.0));
  tt_val_t best, at;
  tt_lt_arg_extreme(f, freq, dim, true, &best, &at); /* first maximum: smallest value */
  tt_type_t kt = it;
  kt.dims[dim] = 1;
  at = tt_l_reshape(f, at, kt.rank, kt.dims);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_lt_gather_dim(f, v, dim, at)));
  return tt_l_set_out(c, 1, tt_lt_gather_dim(f, i, dim, at));
}

#define R(name, fn, param) {"aten::" name, fn, param, 0}

const tt_lower_entry_t tt_lower_sort[] = {
    R("sort", lower_sort, 1), R("sort.values", lower_sort, 1),
    R("sort.stable", lower_sort, 2), R("sort.values_stable", lower_sort, 2),
    R("topk", lower_topk, 0), R("topk.values", lower_topk, 0),
    R("kthvalue", lower_kthvalue, 0), R("kthvalue.values", lower_kthvalue, 0),
    R("median", lower_median, 0), R("median.out", lower_median, 0),
    R("median.dim", lower_median, 0), R("median.dim_values", lower_median, 0),
    R("nanmedian", lower_median, 1), R("nanmedian.out", lower_median, 1),
    R("nanmedian.dim", lower_median, 1), R("nanmedian.dim_values", lower_median, 1),
    R("mode", lower_mode, 0), R("mode.values", lower_mode, 0),
};
const int tt_lower_sort_count = TT_TABLE_COUNT(tt_lower_sort);

/* The table's facts: the unique family has no lowering: its output size depends on the
 * data, so it runs on the host. */
const tt_lower_fact_t tt_lower_sort_facts[] = {
    TT_FACT("aten::_unique", TT_LF_HOST_OP), TT_FACT("aten::_unique2", TT_LF_HOST_OP),
    TT_FACT("aten::unique_consecutive", TT_LF_HOST_OP), TT_FACT("aten::unique_dim", TT_LF_HOST_OP),
};
const int tt_lower_sort_facts_count = TT_TABLE_COUNT(tt_lower_sort_facts);
