/* More indexing: index_reduce, index_copy, masked_scatter, take, put and
 * embedding_renorm_. Indices are wrapped and clamped into range and a
 * device-side check raises CPU's error (IndexError) for out-of-range ones. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../lower_tensor_util.h"
#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"


static tt_type_t with_dtype(tt_type_t t, tt_dtype_t dt) {
  t.dtype = dt;
  return t;
}

static int wrap_dim(int64_t d, int rank) { return rank ? (int)tt_l_wrap_dim(d, rank) : 0; }

/* A flat (n, 1) i64 index into `size` entries, checked with CPU's message. */
static tt_val_t flat_index(tt_shlo_fn_t* f, tt_val_t idx, int64_t size, const char* msg) {
  tt_type_t it = tt__sh_type(f, idx);
  int64_t n = tt_type_numel(&it), d2[2] = {n, 1};
  return tt_l_reshape(f, tt_lt_fix_index_checked(f, idx, size, TT_OUT_OF_RANGE, msg), 2, d2);
}

/* self with src scattered along `dim` at the (n, 1) index idx2: src is
 * self's shape with dim resized to n (0-d src: a 0-d or 1-d self). */
static tt_val_t scatter_along(tt_shlo_fn_t* f, tt_val_t self, int dim, tt_val_t idx2, tt_val_t src,
                              const char* body) {
  tt_type_t st = tt__sh_type(f, self);
  if (st.rank == 0) {
    tt_val_t u = tt_l_reshape(f, src, 0, NULL);
    return body ? tt_l_binary(f, body, self, u) : u;
  }
  if (tt__sh_type(f, src).rank != st.rank) {
    int64_t d[TT_MAX_RANK];
    for (int i = 0; i < st.rank; i++) d[i] = i == dim ? tt__sh_type(f, idx2).dims[0] : st.dims[i];
    src = tt_l_reshape(f, src, st.rank, d);
  }
  int64_t win[TT_MAX_RANK], d1[1] = {dim};
  int nwin = 0;
  for (int d = 0; d < st.rank; d++)
    if (d != dim) win[nwin++] = d;
  return tt_lt_scatter(f, self, idx2, src, win, nwin, d1, 1, d1, 1, 1, body);
}

/* ---- index_reduce / index_copy ------------------------------------------------------ */

/* index_reduce(self, dim, index, source, reduce, include_self): without
 * include_self, reduced positions start from the identity; mean divides by
 * the number of contributions (floor division for integers), as CPU does. */
static tt_status_t lower_index_reduce(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t self = c->args[0].val;
  tt_type_t st = tt__sh_type(f, self);
  tt_dtype_t dt = st.dtype;
  int dim = wrap_dim(c->args[1].i, st.rank);
  const char* red = c->args[4].str ? c->args[4].str : "";
  bool include_self = c->args[5].kind != TT_ARG_BOOL || c->args[5].i;
  const char* body = "stablehlo.add";
  bool mean = !strcmp(red, "mean");
  tt_val_t ident;
  if (!strcmp(red, "prod")) {
    body = "stablehlo.multiply";
    ident = tt_lt_const0(f, dt, 1.0);
  } else if (!strcmp(red, "amax")) {
    body = "stablehlo.maximum";
    ident = tt_lt_limit(f, dt, false);
  } else if (!strcmp(red, "amin")) {
    body = "stablehlo.minimum";
    ident = tt_lt_limit(f, dt, true);
  } else if (mean) {
    ident = tt_lt_const0(f, dt, 0.0);
  } else {
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "index_reduce(): Expected reduce to be one of prod, mean, amax or amin.");
  }
  tt_val_t idx = flat_index(f, c->args[2].val, st.rank ? st.dims[dim] : 1, "index out of bounds");
  int64_t n = tt__sh_type(f, idx).dims[0];
  if (n == 0 || tt_type_numel(&st) == 0) return tt_l_set_out(c, 0, self);
  tt_val_t src = tt_l_convert(f, c->args[3].val, dt);
  tt_type_t srt = tt__sh_type(f, src);
  tt_val_t base = self;
  if (!include_self) {
    tt_type_t bt = with_dtype(st, TT_BOOL), bs = with_dtype(srt, TT_BOOL);
    tt_val_t hit = scatter_along(f, tt_shlo_const(f, &bt, 0.0), dim, idx, tt_shlo_const(f, &bs, 1.0), NULL);
    base = tt_l_select(f, hit, tt_lt_splat(f, ident, st.rank, st.dims), self);
  }
  tt_val_t r = scatter_along(f, base, dim, idx, src, body);
  if (mean) {
    tt_val_t cnt = scatter_along(f, tt_shlo_const(f, &st, include_self ? 1.0 : 0.0), dim, idx,
                                 tt_shlo_const(f, &srt, 1.0), "stablehlo.add");
    tt_val_t zero = tt_shlo_const(f, &st, 0.0);
    cnt = tt_l_select(f, tt_l_compare(f, "EQ", cnt, zero), tt_shlo_const(f, &st, 1.0), cnt);
    tt_val_t q = tt_l_binary(f, "stablehlo.divide", r, cnt);
    if (!tt_dtype_is_float(dt)) { /* floor division (counts are positive) */
      tt_val_t rem = tt_l_binary(f, "stablehlo.remainder", r, cnt);
      tt_val_t adj = tt_l_compare(f, "LT", rem, zero);
      q = tt_l_select(f, adj, tt_l_binary(f, "stablehlo.subtract", q, tt_shlo_const(f, &st, 1.0)), q);
    }
    r = q;
  }
  return tt_l_set_out(c, 0, r);
}

/* index_copy(self, dim, index, source) */
static tt_status_t lower_index_copy(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t self = c->args[0].val;
  tt_type_t st = tt__sh_type(f, self);
  int dim = wrap_dim(c->args[1].i, st.rank);
  char msg[128];
  snprintf(msg, sizeof msg, "index_copy_(): index is out of bounds for dimension %d with size %lld", dim,
           (long long)(st.rank ? st.dims[dim] : 1));
  tt_val_t idx = flat_index(f, c->args[2].val, st.rank ? st.dims[dim] : 1, msg);
  if (tt__sh_type(f, idx).dims[0] == 0 || tt_type_numel(&st) == 0) return tt_l_set_out(c, 0, self);
  tt_val_t src = tt_l_convert(f, c->args[3].val, st.dtype);
  return tt_l_set_out(c, 0, scatter_along(f, self, dim, idx, src, NULL));
}

/* ---- masked_scatter ----------------------------------------------------------------- */

/* masked_scatter(self, mask, source): the k-th true position of the
 * (broadcast) mask, in row-major order, takes source.flatten()[k]: a prefix
 * sum of the mask numbers the true positions, a gather fetches them. */
static tt_status_t lower_masked_scatter(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t self = tt_l_broadcast(f, c->args[0].val, ot->rank, ot->dims);
  tt_val_t mask = tt_l_broadcast(f, tt_l_convert(f, c->args[1].val, TT_BOOL), ot->rank, ot->dims);
  tt_type_t srt = tt__sh_type(f, c->args[2].val);
  int64_t n = tt_type_numel(ot), ns = tt_type_numel(&srt);
  if (n == 0) return tt_l_set_out(c, 0, self);
  tt_val_t flat = tt_l_reshape(f, mask, 1, &n);
  tt_val_t pos = tt_lt_scan(f, tt_l_convert(f, flat, TT_I64), 0, "stablehlo.add");
  tt_type_t pt = tt__sh_type(f, pos);
  tt_val_t total = tt_l_reshape(f, tt_lt_slice_dim(f, pos, 0, n - 1, n), 0, NULL);
  tt_shlo_add_check(f, tt_l_compare(f, "GT", total, tt_lt_const0(f, TT_I64, (double)ns)), TT_INTERNAL,
                    "masked_scatter: Number of elements of source < number of ones in mask");
  if (ns == 0) return tt_l_set_out(c, 0, self);
  pos = tt_l_binary(f, "stablehlo.subtract", pos, tt_shlo_const(f, &pt, 1.0));
  pos = tt_l_binary(f, "stablehlo.maximum", pos, tt_shlo_const(f, &pt, 0.0));
  pos = tt_l_binary(f, "stablehlo.minimum", pos, tt_shlo_const_i64(f, &pt, ns - 1));
  tt_val_t src = tt_l_reshape(f, tt_l_convert(f, c->args[2].val, ot->dtype), 1, &ns);
  tt_val_t g = tt_lt_gather_dim(f, src, 0, pos);
  g = tt_l_reshape(f, g, ot->rank, ot->dims);
  return tt_l_set_out(c, 0, tt_l_select(f, mask, g, tt_l_convert(f, self, ot->dtype)));
}

/* ---- take / put --------------------------------------------------------------------------- */

/* take(self, index): self.flatten()[index] */
static tt_status_t lower_take(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_type_t st = tt__sh_type(f, c->args[0].val);
  int64_t n = tt_type_numel(&st);
  char msg[128];
  snprintf(msg, sizeof msg, "out of range: tried to access index on a tensor of %lld elements.", (long long)n);
  tt_val_t idx = tt_lt_fix_index_checked(f, c->args[1].val, n, TT_OUT_OF_RANGE, msg);
  if (n == 0 || tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_val_t flat = tt_l_reshape(f, c->args[0].val, 1, &n);
  int64_t k = tt_type_numel(ot);
  tt_val_t g = tt_lt_gather_dim(f, flat, 0, tt_l_reshape(f, idx, 1, &k));
  return tt_l_set_out(c, 0, tt_l_reshape(f, g, ot->rank, ot->dims));
}

/* put_(self, index, source, accumulate): self.flatten()[index] = source
 * (+= with accumulate) */
static tt_status_t lower_put(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t self = c->args[0].val;
  tt_type_t st = tt__sh_type(f, self);
  int64_t n = tt_type_numel(&st);
  char msg[128];
  snprintf(msg, sizeof msg, "out of range: tried to access index on a tensor of %lld elements.", (long long)n);
  tt_val_t idx = flat_index(f, c->args[1].val, n, msg);
  int64_t k = tt__sh_type(f, idx).dims[0];
  if (n == 0 || k == 0) return tt_l_set_out(c, 0, self);
  bool acc = c->args[3].kind == TT_ARG_BOOL && c->args[3].i;
  const char* body = acc ? (st.dtype == TT_BOOL ? "stablehlo.or" : "stablehlo.add") : NULL;
  tt_val_t src = tt_l_reshape(f, tt_l_convert(f, c->args[2].val, st.dtype), 1, &k);
  tt_val_t r = scatter_along(f, tt_l_reshape(f, self, 1, &n), 0, idx, src, body);
  return tt_l_set_out(c, 0, tt_l_reshape(f, r, st.rank, st.dims));
}

/* ---- embedding_renorm_ ------------------------------------------------------------------ */

/* The p-norm of each row of a 2-d x (float dtype), as linalg_vector_norm. */
static tt_val_t row_norm(tt_shlo_fn_t* f, tt_val_t x, double p) {
  tt_type_t t = tt__sh_type(f, x);
  tt_val_t a = tt_l_unary(f, "stablehlo.abs", x);
  if (isinf(p)) return tt_lt_extreme(f, a, 2u, p > 0);
  if (p == 0) return tt_lt_sum(f, tt_l_convert(f, tt_l_compare(f, "NE", a, tt_shlo_const(f, &t, 0.0)), t.dtype), 2u);
  if (p == 1) return tt_lt_sum(f, a, 2u);
  if (p == 2) return tt_l_unary(f, "stablehlo.sqrt", tt_lt_sum(f, tt_l_binary(f, "stablehlo.multiply", a, a), 2u));
  tt_val_t s = tt_lt_sum(f, tt_l_binary(f, "stablehlo.power", a, tt_shlo_const(f, &t, p)), 2u);
  tt_type_t rt = tt__sh_type(f, s);
  return tt_l_binary(f, "stablehlo.power", s, tt_shlo_const(f, &rt, 1.0 / p));
}

/* embedding_renorm_(self, indices, max_norm, norm_type): each row named by
 * indices whose norm exceeds max_norm is scaled by max_norm / (norm + 1e-7)
 * (the scale in double, as CPU computes it). */
static tt_status_t lower_embedding_renorm(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t self = c->args[0].val;
  tt_type_t st = tt__sh_type(f, self);
  if (st.rank != 2) return tt_status_make(TT_INVALID_ARGUMENT, "embedding_renorm_: self must be 2-D");
  if (!tt_dtype_is_float(st.dtype))
    return tt_status_make(TT_INVALID_ARGUMENT, "embedding_renorm_: expected a floating point tensor");
  tt_val_t idx = flat_index(f, c->args[1].val, st.dims[0], "index out of range in self");
  if (tt__sh_type(f, idx).dims[0] == 0 || tt_type_numel(&st) == 0) return tt_l_set_out(c, 0, self);
  double max_norm = c->args[2].f, p = c->args[3].f;
  tt_dtype_t cdt = tt_l_opmath(st.dtype);
  tt_val_t norm = tt_l_convert(f, row_norm(f, tt_l_convert(f, self, cdt), p), TT_F64);
  tt_type_t nt = tt__sh_type(f, norm); /* (rows) */
  tt_val_t scale = tt_l_binary(f, "stablehlo.divide", tt_shlo_const(f, &nt, max_norm),
                               tt_l_binary(f, "stablehlo.add", norm, tt_shlo_const(f, &nt, 1e-7)));
  tt_type_t bt = with_dtype(nt, TT_BOOL);
  int64_t k = tt__sh_type(f, idx).dims[0];
  tt_type_t kt = tt_type_make(TT_BOOL, 1, &k);
  tt_val_t hit = scatter_along(f, tt_shlo_const(f, &bt, 0.0), 0, idx, tt_shlo_const(f, &kt, 1.0), NULL);
  hit = tt_l_binary(f, "stablehlo.and", hit, tt_l_compare(f, "GT", norm, tt_shlo_const(f, &nt, max_norm)));
  scale = tt_l_convert(f, tt_l_select(f, hit, scale, tt_shlo_const(f, &nt, 1.0)), st.dtype);
  int64_t bd[1] = {0};
  scale = tt_lt_bcast_in_dim(f, scale, 2, st.dims, bd);
  return tt_l_set_out(c, 0, tt_l_binary(f, "stablehlo.multiply", self, scale));
}

#define R(name, fn, param) {"aten::" name, fn, param, 0}

const tt_lower_entry_t tt_lower_index_more[] = {
    R("index_reduce", lower_index_reduce, 0), R("index_reduce.out", lower_index_reduce, 0),
    R("index_reduce_", lower_index_reduce, 0),
    R("index_copy", lower_index_copy, 0), R("index_copy.out", lower_index_copy, 0),
    R("index_copy_", lower_index_copy, 0),
    R("masked_scatter", lower_masked_scatter, 0), R("masked_scatter.out", lower_masked_scatter, 0),
    R("masked_scatter_", lower_masked_scatter, 0),
    R("take", lower_take, 0), R("take.out", lower_take, 0),
    R("put", lower_put, 0), R("put.out", lower_put, 0), R("put_", lower_put, 0),
    R("embedding_renorm_", lower_embedding_renorm, 0),
};
const int tt_lower_index_more_count = TT_TABLE_COUNT(tt_lower_index_more);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_index_more_facts[] = {
    TT_FACT("aten::index_copy", TT_LF_COMPLEX), TT_FACT("aten::index_copy_", TT_LF_COMPLEX),
    TT_FACT("aten::put", TT_LF_COMPLEX), TT_FACT("aten::put_", TT_LF_COMPLEX),
    TT_FACT("aten::take", TT_LF_COMPLEX), TT_FACT("aten::masked_scatter", TT_LF_COMPLEX),
    TT_FACT("aten::masked_scatter_", TT_LF_COMPLEX),
};
const int tt_lower_index_more_facts_count = TT_TABLE_COUNT(tt_lower_index_more_facts);
