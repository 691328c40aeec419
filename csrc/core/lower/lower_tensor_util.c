/* Helpers shared by the matmul, reduce, nn, index and create families. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lower_tensor_util.h"

/* ---- arguments -------------------------------------------------------------- */

const tt_type_t* tt_lt_arg_type(tt_lctx_t* c, int i) {
  if (i < 0 || i >= c->nargs) return NULL;
  const tt_larg_t* a = &c->args[i];
  if (a->kind != TT_ARG_TENSOR && a->kind != TT_ARG_SCALAR && a->kind != TT_ARG_RNG) return NULL;
  return tt_shlo_type(c->f, a->val);
}

bool tt_lt_has(tt_lctx_t* c, int i) {
  if (i < 0 || i >= c->nargs) return false;
  const tt_larg_t* a = &c->args[i];
  if (a->kind == TT_ARG_NONE || a->kind == TT_ARG_OUT) return false;
  if (a->kind == TT_ARG_TENSOR || a->kind == TT_ARG_SCALAR) return a->val != TT_SHLO_INVALID;
  return true;
}

tt_val_t tt_lt_scalar(tt_lctx_t* c, int i, tt_dtype_t dt) {
  tt_val_t v = tt_l_convert(c->f, c->args[i].val, dt);
  const tt_type_t* t = tt_shlo_type(c->f, v);
  if (t && t->rank != 0) v = tt_l_reshape(c->f, v, 0, NULL);
  return v;
}

tt_val_t tt_lt_splat(tt_shlo_fn_t* f, tt_val_t v0d, int rank, const int64_t* dims) {
  return tt_l_broadcast(f, v0d, rank, dims);
}

/* ---- dimension lists -------------------------------------------------------- */

uint32_t tt_lt_dim_mask(const tt_larg_t* a, int rank, bool empty_is_all) {
  uint32_t all = rank >= 32 ? 0xffffffffu : ((1u << rank) - 1u);
  if (a->kind == TT_ARG_INT) return rank ? 1u << tt_l_wrap_dim(a->i, rank) : 0;
  if (a->kind != TT_ARG_INTS) return all;
  if (a->n == 0) return empty_is_all ? all : 0;
  uint32_t m = 0;
  for (int k = 0; k < a->n; k++) {
    if (rank == 0) continue;
    int64_t d = tt_l_wrap_dim(a->ints[k], rank);
    if (d >= 0 && d < rank) m |= 1u << d;
  }
  return m;
}

int tt_lt_mask_dims(uint32_t mask, int rank, int64_t* dims) {
  int n = 0;
  for (int d = 0; d < rank; d++)
    if (mask & (1u << d)) dims[n++] = d;
  return n;
}

/* ---- constants and shapes ----------------------------------------------------- */

tt_val_t tt_lt_const0(tt_shlo_fn_t* f, tt_dtype_t dt, double v) {
  tt_type_t t = tt_type_scalar(dt);
  return tt_shlo_const(f, &t, v);
}

tt_val_t tt_lt_limit(tt_shlo_fn_t* f, tt_dtype_t dt, bool high) {
  tt_type_t t = tt_type_scalar(dt);
  if (tt_dtype_is_float(dt)) return tt_shlo_const(f, &t, high ? INFINITY : -INFINITY);
  if (dt == TT_BOOL) return tt_shlo_const(f, &t, high ? 1.0 : 0.0);
  if (tt_dtype_is_unsigned_int(dt)) {
    if (!high) return tt_shlo_const_i64(f, &t, 0);
    /* all ones: the builder prints unsigned values with %llu */
    uint64_t m = dt == TT_U64 ? UINT64_MAX : ((uint64_t)1 << (8 * tt_dtype_size(dt))) - 1;
    return tt_shlo_const_i64(f, &t, (int64_t)m);
  }
  int bits = 8 * (int)tt_dtype_size(dt);
  int64_t mx = bits == 64 ? INT64_MAX : (((int64_t)1 << (bits - 1)) - 1);
  return tt_shlo_const_i64(f, &t, high ? mx : -mx - 1);
}

tt_val_t tt_lt_iota(tt_shlo_fn_t* f, tt_dtype_t dt, int rank, const int64_t* dims, int dim) {
  tt_type_t t = tt_type_make(dt, rank, dims);
  if (rank == 0) return tt_shlo_const(f, &t, 0.0);
  return tt_shlo_opf(f, "stablehlo.iota", NULL, 0, &t, "iota_dimension = %d : i64", dim);
}

tt_val_t tt_lt_bcast_in_dim(tt_shlo_fn_t* f, tt_val_t v, int rank, const int64_t* dims,
                            const int64_t* bdims) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = tt_type_make(t->dtype, rank, dims);
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "broadcast_dimensions = ");
  tt_shlo_fmt_i64_array(&a, bdims, t->rank);
  tt_val_t r = tt_shlo_op(f, "stablehlo.broadcast_in_dim", &v, 1, &rt, a.data);
  tt_sbuf_free(&a);
  return r;
}

tt_val_t tt_lt_expand(tt_shlo_fn_t* f, tt_val_t v, const tt_type_t* full, uint32_t mask) {
  int64_t bd[TT_MAX_RANK];
  int n = 0;
  for (int d = 0; d < full->rank; d++)
    if (!(mask & (1u << d))) bd[n++] = d;
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  if (t->rank != n) { /* keepdim form: drop the unit dims first */
    int64_t kd[TT_MAX_RANK];
    for (int i = 0; i < n; i++) kd[i] = full->dims[bd[i]];
    v = tt_l_reshape(f, v, n, kd);
  }
  return tt_lt_bcast_in_dim(f, v, full->rank, full->dims, bd);
}

tt_val_t tt_lt_slice(tt_shlo_fn_t* f, tt_val_t v, const int64_t* start, const int64_t* limit) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  bool ident = true;
  for (int i = 0; i < t->rank; i++)
    if (start[i] != 0 || limit[i] != t->dims[i]) ident = false;
  return ident ? v : tt_shlo_slice(f, v, start, limit, NULL);
}

tt_val_t tt_lt_slice_dim(tt_shlo_fn_t* f, tt_val_t v, int dim, int64_t lo, int64_t hi) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  int64_t s[TT_MAX_RANK] = {0}, l[TT_MAX_RANK];
  for (int i = 0; i < t->rank; i++) l[i] = t->dims[i];
  s[dim] = lo;
  l[dim] = hi;
  return tt_lt_slice(f, v, s, l);
}

tt_val_t tt_lt_pad(tt_shlo_fn_t* f, tt_val_t v, tt_val_t pad0d, const int64_t* lo,
                   const int64_t* hi) {
  return tt_shlo_pad(f, v, pad0d, lo, hi, NULL);
}

tt_val_t tt_lt_concat(tt_shlo_fn_t* f, const tt_val_t* vals, int n, int dim) {
  if (n == 1) return vals[0];
  const tt_type_t* t = tt_shlo_type(f, vals[0]);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  rt.dims[dim] = 0;
  for (int i = 0; i < n; i++) {
    const tt_type_t* ti = tt_shlo_type(f, vals[i]);
    if (!ti) return TT_SHLO_INVALID;
    rt.dims[dim] += ti->dims[dim];
  }
  return tt_shlo_opf(f, "stablehlo.concatenate", vals, n, &rt, "dimension = %d : i64", dim);
}

/* ---- reductions ------------------------------------------------------------------ */

tt_val_t tt_lt_minmax(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  bool high = strstr(op, "maximum") != NULL;
  if (!t || !tt_dtype_is_float(t->dtype)) return tt_l_binary(f, op, a, b);
  /* a stablehlo.maximum/minimum reduction body drops NaN on XLA CPU (measured);
   * PyTorch propagates it */
  tt_val_t pick = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, high ? "GT" : "LT", a, b),
                              tt_l_compare(f, "NE", a, a));
  return tt_l_select(f, pick, a, b);
}

/* A reduction / scatter body op; max and min propagate NaN. */
static tt_val_t body_binary(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) {
  if (strstr(op, "maximum") || strstr(op, "minimum")) return tt_lt_minmax(f, op, a, b);
  return tt_l_binary(f, op, a, b);
}

tt_val_t tt_lt_reduce(tt_shlo_fn_t* f, tt_val_t v, uint32_t mask, const char* body_op,
                      tt_val_t init) {
  const tt_type_t* tp = tt_shlo_type(f, v);
  if (!tp) return TT_SHLO_INVALID;
  tt_type_t t = *tp;
  if (!mask) return v;
  int64_t dims[TT_MAX_RANK];
  int nd = tt_lt_mask_dims(mask, t.rank, dims);
  tt_type_t rt = tt_type_scalar(t.dtype);
  for (int i = 0; i < t.rank; i++)
    if (!(mask & (1u << i))) rt.dims[rt.rank++] = t.dims[i];
  tt_type_t st = tt_type_scalar(t.dtype);
  tt_type_t bt[2] = {st, st};
  tt_val_t ba[2];
  tt_shlo_region_begin(f, bt, 2, ba);
  tt_val_t r = body_binary(f, body_op, ba[0], ba[1]);
  char* region = tt_shlo_region_end(f, &r, 1);
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "dimensions = ");
  tt_shlo_fmt_i64_array(&a, dims, nd);
  tt_val_t ops[2] = {v, init};
  tt_val_t out;
  tt_shlo_op_multi(f, "stablehlo.reduce", ops, 2, &rt, 1, a.data, region, &out);
  tt_sbuf_free(&a);
  return out;
}

tt_val_t tt_lt_sum(tt_shlo_fn_t* f, tt_val_t v, uint32_t mask) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  const char* op = t->dtype == TT_BOOL ? "stablehlo.or" : "stablehlo.add";
  return tt_lt_reduce(f, v, mask, op, tt_lt_const0(f, t->dtype, 0.0));
}

tt_val_t tt_lt_extreme(tt_shlo_fn_t* f, tt_val_t v, uint32_t mask, bool high) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_dtype_t dt = t->dtype;
  return tt_lt_reduce(f, v, mask, high ? "stablehlo.maximum" : "stablehlo.minimum",
                      tt_lt_limit(f, dt, !high));
}

tt_val_t tt_lt_softmax(tt_shlo_fn_t* f, tt_val_t x, uint32_t mask, bool log) {
  const tt_type_t* tp = tt_shlo_type(f, x);
  if (!tp) return TT_SHLO_INVALID;
  tt_type_t xt = *tp;
  tt_val_t d = tt_l_binary(f, "stablehlo.subtract", x, tt_lt_expand(f, tt_lt_extreme(f, x, mask, true), &xt, mask));
  tt_val_t e = tt_l_unary(f, "stablehlo.exponential", d);
  tt_val_t s = tt_lt_expand(f, tt_lt_sum(f, e, mask), &xt, mask);
  return log ? tt_l_binary(f, "stablehlo.subtract", d, tt_l_unary(f, "stablehlo.log", s))
             : tt_l_binary(f, "stablehlo.divide", e, s);
}

void tt_lt_arg_extreme(tt_shlo_fn_t* f, tt_val_t v, int dim, bool high, tt_val_t* value,
                       tt_val_t* index) {
  *value = *index = TT_SHLO_INVALID;
  const tt_type_t* tp = tt_shlo_type(f, v);
  if (!tp) return;
  if (tp->rank == 0) { /* a 0-d tensor is its own extreme, at index 0 */
    *value = v;
    *index = tt_lt_const0(f, TT_I64, 0);
    return;
  }
  tt_type_t t = *tp;
  bool fl = tt_dtype_is_float(t.dtype);
  tt_val_t iota = tt_lt_iota(f, TT_I64, t.rank, t.dims, dim);
  tt_type_t sv = tt_type_scalar(t.dtype), si = tt_type_scalar(TT_I64);
  tt_type_t bt[4] = {sv, si, sv, si};
  tt_val_t b[4];
  tt_shlo_region_begin(f, bt, 4, b);
  /* pick a if a beats b, or ties with a smaller index; NaN beats numbers */
  tt_val_t beats = tt_l_compare(f, high ? "GT" : "LT", b[0], b[2]);
  tt_val_t eq = tt_l_compare(f, "EQ", b[0], b[2]);
  if (fl) {
    tt_val_t an = tt_l_compare(f, "NE", b[0], b[0]);
    tt_val_t bn = tt_l_compare(f, "NE", b[2], b[2]);
    tt_val_t nbn = tt_l_unary(f, "stablehlo.not", bn);
    beats = tt_l_binary(f, "stablehlo.or", beats, tt_l_binary(f, "stablehlo.and", an, nbn));
    eq = tt_l_binary(f, "stablehlo.or", eq, tt_l_binary(f, "stablehlo.and", an, bn));
  }
  tt_val_t lower = tt_l_compare(f, "LT", b[1], b[3]);
  tt_val_t pick = tt_l_binary(f, "stablehlo.or", beats, tt_l_binary(f, "stablehlo.and", eq, lower));
  tt_val_t res[2] = {tt_l_select(f, pick, b[0], b[2]), tt_l_select(f, pick, b[1], b[3])};
  char* region = tt_shlo_region_end(f, res, 2);
  tt_type_t rt[2];
  rt[0] = tt_type_scalar(t.dtype);
  for (int i = 0; i < t.rank; i++)
    if (i != dim) rt[0].dims[rt[0].rank++] = t.dims[i];
  rt[1] = rt[0];
  rt[1].dtype = TT_I64;
  tt_val_t ops[4] = {v, iota, tt_lt_limit(f, t.dtype, !high), tt_lt_const0(f, TT_I64, 0)};
  tt_val_t outs[2];
  char attr[64];
  snprintf(attr, sizeof attr, "dimensions = array<i64: %d>", dim);
  tt_shlo_op_multi(f, "stablehlo.reduce", ops, 4, rt, 2, attr, region, outs);
  *value = outs[0];
  *index = outs[1];
}

tt_val_t tt_lt_scan(tt_shlo_fn_t* f, tt_val_t v, int dim, const char* body_op) {
  const tt_type_t* tp = tt_shlo_type(f, v);
  if (!tp) return TT_SHLO_INVALID;
  tt_type_t t = *tp;
  if (t.rank == 0) return v;
  int64_t n = t.dims[dim];
  bool mul = strstr(body_op, "multiply") != NULL;
  tt_val_t ident = tt_lt_const0(f, t.dtype, mul ? 1.0 : 0.0);
  /* Hillis-Steele: after step k every element holds the combination of the
   * 2^k elements ending at it. */
  for (int64_t k = 1; k < n; k *= 2) {
    tt_val_t head = tt_lt_slice_dim(f, v, dim, 0, n - k);
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
    lo[dim] = k;
    tt_val_t shifted = tt_lt_pad(f, head, ident, lo, hi);
    v = tt_l_binary(f, body_op, v, shifted);
  }
  return v;
}

/* ---- gather / scatter ---------------------------------------------------------- */

tt_val_t tt_lt_fix_index(tt_shlo_fn_t* f, tt_val_t idx, int64_t size) {
  return tt_lt_fix_index_checked(f, idx, size, TT_OUT_OF_RANGE, "index out of range in self");
}

/* Wraps negatives (when allowed) and clamps into [0, size-1]; a device-side
 * check raises `message` when any index is outside the accepted range:
 * [-size, size) with negatives allowed, else [0, size). */
static tt_val_t fix_index(tt_shlo_fn_t* f, tt_val_t idx, int64_t size, int code, const char* message,
                          bool allow_negative) {
  idx = tt_l_convert(f, idx, TT_I64);
  const tt_type_t* tp = tt_shlo_type(f, idx);
  if (!tp) return TT_SHLO_INVALID;
  tt_type_t t = *tp;
  tt_val_t zero = tt_shlo_const(f, &t, 0.0);
  tt_val_t sz = tt_shlo_const_i64(f, &t, size);
  tt_val_t neg = tt_l_compare(f, "LT", idx, zero);
  tt_val_t bad = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "GE", idx, sz),
                             tt_l_compare(f, "LT", idx, allow_negative ? tt_shlo_const_i64(f, &t, -size) : zero));
  if (t.rank > 0) {
    uint32_t all = (1u << t.rank) - 1u;
    bad = tt_lt_reduce(f, bad, all, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0));
  }
  tt_shlo_add_check(f, bad, code, message);
  if (allow_negative) idx = tt_l_select(f, neg, tt_l_binary(f, "stablehlo.add", idx, sz), idx);
  tt_val_t top = tt_shlo_const_i64(f, &t, size > 0 ? size - 1 : 0);
  idx = tt_l_binary(f, "stablehlo.maximum", idx, zero);
  return tt_l_binary(f, "stablehlo.minimum", idx, top);
}

tt_val_t tt_lt_fix_index_checked(tt_shlo_fn_t* f, tt_val_t idx, int64_t size, int code,
                                 const char* message) {
  return fix_index(f, idx, size, code, message, true);
}

tt_val_t tt_lt_fix_index_strict(tt_shlo_fn_t* f, tt_val_t idx, int64_t size, int code,
                                const char* message) {
  return fix_index(f, idx, size, code, message, false);
}

static void put_list(tt_sbuf_t* a, const char* name, const int64_t* v, int n, bool* first) {
  if (n == 0) return; /* empty lists are omitted, as the printers do */
  tt_sbuf_printf(a, "%s%s = ", *first ? "" : ", ", name);
  tt_shlo_fmt_i64_list(a, v, n);
  *first = false;
}

tt_val_t tt_lt_gather(tt_shlo_fn_t* f, tt_val_t v, tt_val_t indices, const tt_type_t* result,
                      const int64_t* offset_dims, int noff, const int64_t* collapsed, int ncol,
                      const int64_t* start_map, int nstart, int64_t index_vector_dim,
                      const int64_t* slice_sizes) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  int rank = t->rank;
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  bool first = true;
  tt_sbuf_append(&a, "dimension_numbers = #stablehlo.gather<");
  put_list(&a, "offset_dims", offset_dims, noff, &first);
  put_list(&a, "collapsed_slice_dims", collapsed, ncol, &first);
  put_list(&a, "start_index_map", start_map, nstart, &first);
  tt_sbuf_printf(&a, "%sindex_vector_dim = %lld>, indices_are_sorted = false, slice_sizes = ",
                 first ? "" : ", ", (long long)index_vector_dim);
  tt_shlo_fmt_i64_array(&a, slice_sizes, rank);
  tt_val_t ops[2] = {v, indices};
  tt_val_t r = tt_shlo_op(f, "stablehlo.gather", ops, 2, result, a.data);
  tt_sbuf_free(&a);
  return r;
}

tt_val_t tt_lt_scatter(tt_shlo_fn_t* f, tt_val_t v, tt_val_t indices, tt_val_t updates,
                       const int64_t* window_dims, int nwin, const int64_t* inserted, int nins,
                       const int64_t* sd2od, int nsd, int64_t index_vector_dim,
                       const char* body_op) {
  const tt_type_t* tp = tt_shlo_type(f, v);
  if (!tp) return TT_SHLO_INVALID;
  tt_type_t t = *tp;
  tt_type_t st = tt_type_scalar(t.dtype);
  tt_type_t bt[2] = {st, st};
  tt_val_t ba[2];
  tt_shlo_region_begin(f, bt, 2, ba);
  tt_val_t r = body_op ? body_binary(f, body_op, ba[0], ba[1]) : ba[1];
  char* region = tt_shlo_region_end(f, &r, 1);
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  bool first = true;
  tt_sbuf_append(&a, "indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<");
  put_list(&a, "update_window_dims", window_dims, nwin, &first);
  put_list(&a, "inserted_window_dims", inserted, nins, &first);
  put_list(&a, "scatter_dims_to_operand_dims", sd2od, nsd, &first);
  tt_sbuf_printf(&a, "%sindex_vector_dim = %lld>, unique_indices = false", first ? "" : ", ",
                 (long long)index_vector_dim);
  tt_val_t ops[3] = {v, indices, updates};
  tt_val_t out;
  tt_shlo_op_multi(f, "stablehlo.scatter", ops, 3, &t, 1, a.data, region, &out);
  tt_sbuf_free(&a);
  return out;
}

/* (numel, rank) coordinates of the index's elements in row-major order:
 * index along dim, iota elsewhere. Flat, so that the coordinates of an index
 * of any rank (up to TT_MAX_RANK) take two dims. */
static tt_val_t full_coords(tt_shlo_fn_t* f, int rank, int dim, tt_val_t index) {
  const tt_type_t* tp = tt_shlo_type(f, index);
  if (!tp) return TT_SHLO_INVALID;
  tt_type_t it = *tp;
  int64_t col[2] = {tt_type_numel(&it), 1};
  tt_val_t parts[TT_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    tt_val_t p = d == dim ? index : tt_lt_iota(f, TT_I64, it.rank, it.dims, d);
    parts[d] = tt_l_reshape(f, p, 2, col);
  }
  return tt_lt_concat(f, parts, rank, 1);
}

tt_val_t tt_lt_gather_dim(tt_shlo_fn_t* f, tt_val_t v, int dim, tt_val_t index) {
  const tt_type_t* vt = tt_shlo_type(f, v);
  const tt_type_t* itp = tt_shlo_type(f, index);
  if (!vt || !itp) return TT_SHLO_INVALID;
  int rank = vt->rank;
  tt_type_t rt = *itp;
  rt.dtype = vt->dtype;
  if (rank == 0) return tt_l_reshape(f, v, rt.rank, rt.dims);
  tt_val_t coords = full_coords(f, rank, dim, index);
  int64_t all[TT_MAX_RANK], ones[TT_MAX_RANK], n = tt_type_numel(&rt);
  for (int i = 0; i < rank; i++) {
    all[i] = i;
    ones[i] = 1;
  }
  tt_type_t flat = tt_type_make(rt.dtype, 1, &n);
  tt_val_t r = tt_lt_gather(f, v, coords, &flat, NULL, 0, all, rank, all, rank, 1, ones);
  return tt_l_reshape(f, r, rt.rank, rt.dims);
}

tt_val_t tt_lt_scatter_dim(tt_shlo_fn_t* f, tt_val_t v, int dim, tt_val_t index,
                           tt_val_t updates, const char* body_op) {
  const tt_type_t* vt = tt_shlo_type(f, v);
  if (!vt) return TT_SHLO_INVALID;
  int rank = vt->rank;
  if (rank == 0) {
    tt_val_t u = tt_l_reshape(f, updates, 0, NULL);
    return body_op ? tt_l_binary(f, body_op, v, u) : u;
  }
  tt_val_t coords = full_coords(f, rank, dim, index);
  const tt_type_t* ut = tt_shlo_type(f, updates);
  if (!ut) return TT_SHLO_INVALID;
  int64_t all[TT_MAX_RANK], n = tt_type_numel(ut);
  for (int i = 0; i < rank; i++) all[i] = i;
  tt_val_t flat = tt_l_reshape(f, updates, 1, &n);
  return tt_lt_scatter(f, v, coords, flat, NULL, 0, all, rank, all, rank, 1, body_op);
}

/* ---- random bits --------------------------------------------------------------- */

tt_val_t tt_lt_rng_bits(tt_shlo_fn_t* f, tt_val_t state, tt_dtype_t bits_dt, int rank,
                        const int64_t* dims) {
  const tt_type_t* st = tt_shlo_type(f, state);
  if (!st) return TT_SHLO_INVALID;
  tt_type_t rt[2] = {*st, tt_type_make(bits_dt, rank, dims)};
  tt_val_t outs[2];
  tt_shlo_op_multi(f, "stablehlo.rng_bit_generator", &state, 1, rt, 2,
                   "rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>", NULL, outs);
  return outs[1];
}

tt_val_t tt_lt_uniform01(tt_shlo_fn_t* f, tt_val_t state, tt_dtype_t out_dt, int rank,
                         const int64_t* dims) {
  bool wide = out_dt == TT_F64;
  tt_dtype_t bdt = wide ? TT_U64 : TT_U32;
  tt_dtype_t cdt = wide ? TT_F64 : TT_F32;
  int mant = out_dt == TT_F64 ? 53 : out_dt == TT_F16 ? 11 : out_dt == TT_BF16 ? 8 : 24;
  tt_val_t bits = tt_lt_rng_bits(f, state, bdt, rank, dims);
  tt_type_t bt = tt_type_make(bdt, rank, dims);
  tt_val_t sh = tt_shlo_const_i64(f, &bt, (wide ? 64 : 32) - mant);
  bits = tt_l_binary(f, "stablehlo.shift_right_logical", bits, sh);
  tt_val_t u = tt_l_convert(f, bits, cdt);
  tt_type_t ct = tt_type_make(cdt, rank, dims);
  return tt_l_binary(f, "stablehlo.multiply", u, tt_shlo_const(f, &ct, ldexp(1.0, -mant)));
}

tt_type_t tt_lt_broadcast_type(const tt_type_t* a, const tt_type_t* b, tt_dtype_t dt) {
  const tt_type_t* big = a->rank >= b->rank ? a : b;
  tt_type_t r = *big;
  r.dtype = dt;
  for (int i = 0; i < r.rank; i++) {
    int ia = i - (r.rank - a->rank), ib = i - (r.rank - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    r.dims[i] = da == 1 ? db : da;
  }
  return r;
}

tt_status_t tt_lt_set_reduced_loss(tt_lctx_t* c, tt_val_t l, int64_t reduction) {
  if (reduction == 0) return tt_l_set_out(c, 0, l); /* none */
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* t = tt_shlo_type(f, l);
  if (!t) return tt_status_make(TT_INTERNAL, "%s: bad loss value", c->op->name);
  tt_type_t lt = *t;
  tt_val_t s = tt_lt_sum(f, l, lt.rank ? (1u << lt.rank) - 1u : 0u);
  if (reduction == 1) { /* mean */
    tt_type_t st = *tt_shlo_type(f, s);
    s = tt_l_binary(f, "stablehlo.divide", s, tt_shlo_const(f, &st, (double)tt_type_numel(&lt)));
  }
  return tt_l_set_out(c, 0, s);
}
