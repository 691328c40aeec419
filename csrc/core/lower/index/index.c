/* Indexing: index_select, index_add, cat, gather, scatter (+add, +reduce),
 * advanced indexing (index.Tensor) and index_put.
 *
 * Out-of-range indices: PyTorch raises; XLA would clamp (gather) or drop
 * (scatter) silently. Every index here is wrapped (negative + size) and then
 * clamped into range (tt_lt_fix_index), and a device-side check raises PyTorch's
 * error at the next sync. */
#include <stdio.h>
#include <string.h>

#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

static tt_type_t type_of(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t ? *t : tt_type_scalar(TT_F32);
}

static const char* add_op(tt_dtype_t dt) { return dt == TT_BOOL ? "stablehlo.or" : "stablehlo.add"; }

/* ---- index_select / gather ------------------------------------------------------- */

/* index_select(self, dim, index) */
static tt_status_t lower_index_select(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t st = type_of(f, c->args[0].val);
  tt_type_t rt = c->out_types[0];
  rt.dtype = st.dtype;
  if (st.rank == 0) return tt_l_set_out(c, 0, c->args[0].val);
  int dim = (int)tt_l_wrap_dim(c->args[1].i, st.rank);
  tt_type_t it = type_of(f, c->args[2].val);
  int64_t n = tt_type_numel(&it), id2[2] = {n, 1};
  /* no negative indices (CPU raises for them too) */
  tt_val_t idx = tt_lt_fix_index_strict(f, c->args[2].val, st.dims[dim], TT_OUT_OF_RANGE,
                                        "index out of range in self");
  idx = tt_l_reshape(f, idx, 2, id2);
  int64_t off[TT_MAX_RANK], sizes[TT_MAX_RANK], d1[1] = {dim};
  int noff = 0;
  for (int d = 0; d < st.rank; d++) {
    if (d != dim) off[noff++] = d;
    sizes[d] = d == dim ? 1 : st.dims[d];
  }
  rt.rank = st.rank;
  for (int d = 0; d < st.rank; d++) rt.dims[d] = d == dim ? n : st.dims[d];
  return tt_l_set_out(c, 0, tt_lt_gather(f, c->args[0].val, idx, &rt, off, noff, d1, 1, d1, 1, 1, sizes));
}

/* gather / scatter indices: out of range raises a RuntimeError, as on CPU */
static tt_val_t gather_index(tt_shlo_fn_t* f, tt_val_t idx, tt_type_t st, int dim) {
  int64_t size = st.rank ? st.dims[dim] : 1;
  char msg[128];
  snprintf(msg, sizeof msg, "index is out of bounds for dimension %d with size %lld", dim,
           (long long)size);
  return tt_lt_fix_index_strict(f, idx, size, TT_INTERNAL, msg);
}

/* gather(self, dim, index, sparse_grad) */
static tt_status_t lower_gather(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t st = type_of(f, c->args[0].val);
  int dim = st.rank ? (int)tt_l_wrap_dim(c->args[1].i, st.rank) : 0;
  tt_val_t idx = gather_index(f, c->args[2].val, st, dim);
  return tt_l_set_out(c, 0, tt_lt_gather_dim(f, c->args[0].val, dim, idx));
}

/* ---- index_add / scatter ----------------------------------------------------------- */

/* index_add(self, dim, index, source, alpha) */
static tt_status_t lower_index_add(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t st = type_of(f, c->args[0].val);
  tt_dtype_t dt = st.dtype;
  tt_val_t src = tt_l_convert(f, c->args[3].val, dt);
  tt_type_t srt = type_of(f, src);
  tt_val_t alpha = tt_lt_splat(f, tt_lt_scalar(c, 4, dt), srt.rank, srt.dims);
  src = tt_l_binary(f, dt == TT_BOOL ? "stablehlo.and" : "stablehlo.multiply", src, alpha);
  if (st.rank == 0)
    return tt_l_set_out(c, 0, tt_l_binary(f, add_op(dt), c->args[0].val, tt_l_reshape(f, src, 0, NULL)));
  int dim = (int)tt_l_wrap_dim(c->args[1].i, st.rank);
  tt_type_t it = type_of(f, c->args[2].val);
  int64_t n = tt_type_numel(&it), id2[2] = {n, 1};
  tt_val_t idx = tt_l_reshape(f, gather_index(f, c->args[2].val, st, dim), 2, id2);
  if (srt.rank != st.rank) { /* a 0-d source for a 1-d self */
    int64_t one = 1;
    src = tt_l_reshape(f, src, 1, &one);
  }
  int64_t win[TT_MAX_RANK], d1[1] = {dim};
  int nwin = 0;
  for (int d = 0; d < st.rank; d++)
    if (d != dim) win[nwin++] = d;
  return tt_l_set_out(c, 0, tt_lt_scatter(f, c->args[0].val, idx, src, win, nwin, d1, 1, d1, 1, 1,
                                          add_op(dt)));
}

enum { SC_SRC, SC_VALUE, SC_SRC_REDUCE, SC_VALUE_REDUCE, SC_ADD, SC_REDUCE_TWO };

/* The body op for a reduce string; NULL with *ok=false when unknown. */
static const char* reduce_op(const char* s, tt_dtype_t dt, bool* ok) {
  *ok = true;
  if (!strcmp(s, "add") || !strcmp(s, "sum") || !strcmp(s, "mean")) return add_op(dt);
  if (!strcmp(s, "multiply") || !strcmp(s, "prod"))
    return dt == TT_BOOL ? "stablehlo.and" : "stablehlo.multiply";
  if (!strcmp(s, "amax")) return "stablehlo.maximum";
  if (!strcmp(s, "amin")) return "stablehlo.minimum";
  *ok = false;
  return NULL;
}

/* scatter(.src/.value/.reduce/.value_reduce)(self, dim, index, src|value, [reduce]),
 * scatter_add(self, dim, index, src),
 * scatter_reduce.two(self, dim, index, src, reduce, include_self) */
static tt_status_t lower_scatter(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int kind = (int)c->op->param;
  tt_val_t self = c->args[0].val;
  tt_type_t st = type_of(f, self);
  tt_dtype_t dt = st.dtype;
  int dim = st.rank ? (int)tt_l_wrap_dim(c->args[1].i, st.rank) : 0;
  tt_type_t it = type_of(f, c->args[2].val);
  tt_val_t idx = gather_index(f, c->args[2].val, st, dim);
  tt_val_t upd;
  if (kind == SC_VALUE || kind == SC_VALUE_REDUCE) {
    upd = tt_lt_splat(f, tt_lt_scalar(c, 3, dt), it.rank, it.dims);
  } else { /* only the index-shaped corner of src is used */
    upd = tt_l_convert(f, c->args[3].val, dt);
    int64_t zero[TT_MAX_RANK] = {0};
    if (type_of(f, upd).rank == it.rank) upd = tt_lt_slice(f, upd, zero, it.dims);
  }
  const char* body = NULL;
  bool ok = true;
  if (kind == SC_ADD) body = add_op(dt);
  if (kind == SC_SRC_REDUCE || kind == SC_VALUE_REDUCE || kind == SC_REDUCE_TWO) {
    const char* red = c->args[4].str ? c->args[4].str : "";
    body = reduce_op(red, dt, &ok);
    if (!ok || (kind != SC_REDUCE_TWO && strcmp(red, "add") && strcmp(red, "multiply")))
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: unknown reduce '%s'", c->op->name, red);
  }
  if (tt_type_numel(&it) == 0) return tt_l_set_out(c, 0, self);
  if (kind != SC_REDUCE_TWO) return tt_l_set_out(c, 0, tt_lt_scatter_dim(f, self, dim, idx, upd, body));

  /* scatter_reduce.two: without include_self, scattered positions start from
   * the identity; mean divides by the number of contributions */
  const char* red = c->args[4].str;
  bool include_self = c->args[5].kind != TT_ARG_BOOL || c->args[5].i;
  bool mean = !strcmp(red, "mean");
  tt_val_t base = self;
  if (!include_self) {
    tt_type_t bt = st;
    bt.dtype = TT_BOOL;
    tt_type_t ibt = it;
    ibt.dtype = TT_BOOL;
    tt_val_t hit = tt_lt_scatter_dim(f, tt_shlo_const(f, &bt, 0.0), dim, idx,
                                     tt_shlo_const(f, &ibt, 1.0), NULL);
    tt_val_t ident;
    if (!strcmp(red, "amax")) ident = tt_lt_splat(f, tt_lt_limit(f, dt, false), st.rank, st.dims);
    else if (!strcmp(red, "amin")) ident = tt_lt_splat(f, tt_lt_limit(f, dt, true), st.rank, st.dims);
    else ident = tt_shlo_const(f, &st, !strcmp(red, "prod") ? 1.0 : 0.0);
    base = tt_l_select(f, hit, ident, self);
  }
  tt_val_t r = tt_lt_scatter_dim(f, base, dim, idx, upd, body);
  if (mean) {
    tt_type_t ct = st;
    tt_val_t cnt = tt_shlo_const(f, &ct, include_self ? 1.0 : 0.0);
    tt_type_t ot = it;
    ot.dtype = dt;
    cnt = tt_lt_scatter_dim(f, cnt, dim, idx, tt_shlo_const(f, &ot, 1.0), add_op(dt));
    tt_val_t zero = tt_shlo_const(f, &ct, 0.0);
    tt_val_t none = tt_l_compare(f, "EQ", cnt, zero);
    tt_val_t safe = tt_l_select(f, none, tt_shlo_const(f, &ct, 1.0), cnt);
    tt_val_t q = tt_l_binary(f, "stablehlo.divide", r, safe);
    if (!tt_dtype_is_float(dt)) { /* floor division for integers */
      tt_val_t rem = tt_l_binary(f, "stablehlo.remainder", r, safe);
      tt_val_t adj = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "NE", rem, zero),
                                 tt_l_compare(f, "NE", tt_l_compare(f, "LT", rem, zero),
                                              tt_l_compare(f, "LT", safe, zero)));
      q = tt_l_select(f, adj, tt_l_binary(f, "stablehlo.subtract", q, tt_shlo_const(f, &ct, 1.0)), q);
    }
    r = tt_l_select(f, none, r, q);
  }
  return tt_l_set_out(c, 0, r);
}

/* ---- cat ------------------------------------------------------------------------------ */

/* cat(tensors, dim): inputs promoted to the out dtype; legacy empty 1-d
 * tensors (shape [0]) are skipped, as PyTorch does. */
static tt_status_t lower_cat(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  const tt_larg_t* l = &c->args[0];
  tt_val_t parts[256];
  int n = 0;
  if (l->n > 256) return tt_status_make(TT_UNIMPLEMENTED, "%s: more than 256 tensors", c->op->name);
  for (int k = 0; k < l->n; k++) {
    tt_type_t t = type_of(f, l->vals[k]);
    if (t.rank == 1 && t.dims[0] == 0 && ot->rank != 1) continue;
    if (tt_type_numel(&t) == 0) continue; /* contributes nothing */
    parts[n++] = tt_l_convert(f, l->vals[k], ot->dtype);
  }
  if (n == 0 || tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  int dim = (int)tt_l_wrap_dim(c->args[1].i, ot->rank);
  return tt_l_set_out(c, 0, tt_lt_concat(f, parts, n, dim));
}

/* ---- advanced indexing ------------------------------------------------------------- */

typedef struct adv {
  int nd;                     /* indexed dims */
  int64_t dims[TT_MAX_RANK];  /* which (ascending) */
  tt_val_t idx[TT_MAX_RANK];  /* their fixed i64 index tensors */
  int brank;                  /* broadcast index shape */
  int64_t b[TT_MAX_RANK];
  tt_type_t res;              /* result shape (self's dtype) */
  int64_t off[TT_MAX_RANK];   /* positions in res of the non-indexed dims */
  int noff;
  /* res with its broadcast index dims (adjacent in res) flattened into one, so
   * that the coordinates take two dims whatever the index's rank: */
  tt_type_t flat;
  int64_t foff[TT_MAX_RANK];  /* positions in flat of the non-indexed dims */
} adv_t;

/* Coordinates (each of shape [k]) of the true elements of a mask, in
 * row-major order, when their count k is known. */
static void mask_coords(tt_shlo_fn_t* f, tt_val_t mask, int64_t k, tt_val_t* out) {
  tt_type_t mt = type_of(f, mask);
  int64_t len = tt_type_numel(&mt), id2[2] = {len, 1}, k1 = k + 1;
  tt_val_t flat = tt_l_reshape(f, tt_l_convert(f, mask, TT_BOOL), 1, &len);
  tt_val_t pos = tt_lt_scan(f, tt_l_convert(f, flat, TT_I64), 0, "stablehlo.add");
  tt_type_t lt = type_of(f, pos);
  pos = tt_l_binary(f, "stablehlo.subtract", pos, tt_shlo_const(f, &lt, 1.0));
  pos = tt_l_select(f, flat, pos, tt_shlo_const_i64(f, &lt, k)); /* falses land in slot k */
  int64_t ins[1] = {0};
  tt_val_t lin = tt_lt_scatter(f, tt_l_full(f, TT_I64, 1, &k1, 0.0), tt_l_reshape(f, pos, 2, id2),
                               tt_lt_iota(f, TT_I64, 1, &len, 0), NULL, 0, ins, 1, ins, 1, 1, NULL);
  lin = tt_lt_slice_dim(f, lin, 0, 0, k);
  int64_t stride = 1;
  for (int j = mt.rank - 1; j >= 0; j--) {
    tt_type_t kt = type_of(f, lin);
    tt_val_t q = tt_l_binary(f, "stablehlo.divide", lin, tt_shlo_const_i64(f, &kt, stride));
    out[j] = tt_l_binary(f, "stablehlo.remainder", q, tt_shlo_const_i64(f, &kt, mt.dims[j]));
    stride *= mt.dims[j];
  }
}

/* Plans self[indices]. mask_k: the number of true elements of a boolean
 * index (-1: unknown). */
static tt_status_t adv_plan(tt_lctx_t* c, const tt_larg_t* l, int64_t mask_k, adv_t* a) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t st = type_of(f, c->args[0].val);
  memset(a, 0, sizeof(*a));
  int p = 0;
  for (int k = 0; k < l->n; k++) {
    tt_val_t v = l->vals[k];
    if (v == TT_SHLO_INVALID) {
      p++;
      continue;
    }
    tt_type_t t = type_of(f, v);
    if (t.dtype == TT_BOOL || t.dtype == TT_U8) {
      if (mask_k < 0)
        return tt_status_make(TT_UNIMPLEMENTED, "%s: this boolean-mask index is not supported", c->op->name);
      if (p + t.rank > st.rank || t.rank == 0)
        return tt_status_make(TT_INVALID_ARGUMENT, "%s: mask does not fit the indexed tensor", c->op->name);
      tt_val_t co[TT_MAX_RANK];
      mask_coords(f, v, mask_k, co);
      for (int j = 0; j < t.rank; j++) {
        a->dims[a->nd] = p;
        a->idx[a->nd++] = tt_lt_fix_index(f, co[j], st.dims[p++]);
      }
      continue;
    }
    if (p >= st.rank) return tt_status_make(TT_INVALID_ARGUMENT, "%s: too many indices", c->op->name);
    a->dims[a->nd] = p;
    a->idx[a->nd++] = tt_lt_fix_index(f, v, st.dims[p++]);
  }
  /* broadcast shape of the index tensors */
  for (int i = 0; i < a->nd; i++) {
    tt_type_t t = type_of(f, a->idx[i]);
    if (t.rank > a->brank) {
      for (int j = a->brank - 1; j >= 0; j--) a->b[j + t.rank - a->brank] = a->b[j];
      for (int j = 0; j < t.rank - a->brank; j++) a->b[j] = 1;
      a->brank = t.rank;
    }
    for (int j = 0; j < t.rank; j++) {
      int64_t* d = &a->b[a->brank - t.rank + j];
      if (*d == 1) *d = t.dims[j];
    }
  }
  bool adjacent = true;
  for (int i = 1; i < a->nd; i++)
    if (a->dims[i] != a->dims[i - 1] + 1) adjacent = false;
  int first = a->nd ? (int)a->dims[0] : 0;
  int lead = adjacent ? first : 0; /* non-indexed dims before the index block */
  a->res = tt_type_scalar(st.dtype);
  int q = 0;
  for (int d = 0; d < st.rank; d++) {
    bool indexed = false;
    for (int i = 0; i < a->nd; i++)
      if (a->dims[i] == d) indexed = true;
    if (indexed) continue;
    a->off[a->noff++] = q < lead ? q : q + a->brank;
    q++;
  }
  a->res.rank = st.rank - a->nd + a->brank;
  if (a->res.rank > TT_MAX_RANK) return tt_status_make(TT_UNIMPLEMENTED, "%s: result rank too high", c->op->name);
  for (int j = 0; j < a->brank; j++) a->res.dims[lead + j] = a->b[j];
  q = 0;
  for (int d = 0; d < st.rank; d++) {
    bool indexed = false;
    for (int i = 0; i < a->nd; i++)
      if (a->dims[i] == d) indexed = true;
    if (!indexed) a->res.dims[a->off[q++]] = st.dims[d];
  }
  int64_t n = 1;
  for (int j = 0; j < a->brank; j++) n *= a->b[j];
  a->flat = a->res;
  a->flat.rank = a->res.rank - a->brank + 1;
  for (int d = 0; d < a->flat.rank; d++)
    a->flat.dims[d] = d < lead ? a->res.dims[d] : d == lead ? n : a->res.dims[d + a->brank - 1];
  for (int i = 0; i < a->noff; i++) a->foff[i] = a->off[i] < lead ? a->off[i] : a->off[i] - a->brank + 1;
  return NULL;
}

/* (numel of the broadcast index, nd) coordinates of the indexed dims. */
static tt_val_t adv_coords(tt_shlo_fn_t* f, const adv_t* a) {
  int64_t n = 1;
  for (int j = 0; j < a->brank; j++) n *= a->b[j];
  int64_t col[2] = {n, 1};
  tt_val_t parts[TT_MAX_RANK];
  for (int i = 0; i < a->nd; i++)
    parts[i] = tt_l_reshape(f, tt_l_broadcast(f, a->idx[i], a->brank, a->b), 2, col);
  return tt_lt_concat(f, parts, a->nd, 1);
}

/* The number of true elements of a lone boolean index, from a result shape
 * (index) or a values shape (index_put; -1 when the values broadcast along it). */
static int64_t mask_count(tt_lctx_t* c, const tt_larg_t* l, const tt_type_t* shaped, bool values) {
  tt_type_t st = type_of(c->f, c->args[0].val);
  int p = 0, nmask = 0, nidx = 0, mrank = 0, mpos = 0;
  for (int k = 0; k < l->n; k++) {
    if (l->vals[k] == TT_SHLO_INVALID) {
      p++;
      continue;
    }
    tt_type_t t = type_of(c->f, l->vals[k]);
    nidx++;
    if (t.dtype == TT_BOOL || t.dtype == TT_U8) {
      nmask++;
      mrank = t.rank;
      mpos = p;
      p += t.rank;
    } else {
      p++;
    }
  }
  if (nmask != 1 || nidx != 1) return -1;
  int want = st.rank - mrank + 1; /* rank of self[mask] */
  int pos = mpos - (want - shaped->rank);
  if (!values) return pos >= 0 && pos < shaped->rank ? shaped->dims[pos] : -1;
  if (pos < 0 || shaped->dims[pos] == 1) return -1;
  return shaped->dims[pos];
}

/* index.Tensor(self, indices) */
static tt_status_t lower_index(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_larg_t* l = &c->args[1];
  adv_t a;
  TT_RETURN_IF_ERROR(adv_plan(c, l, mask_count(c, l, &c->out_types[0], false), &a));
  if (a.nd == 0) return tt_l_set_out(c, 0, c->args[0].val);
  tt_type_t st = type_of(f, c->args[0].val);
  int64_t sizes[TT_MAX_RANK];
  for (int d = 0; d < st.rank; d++) sizes[d] = st.dims[d];
  for (int i = 0; i < a.nd; i++) sizes[a.dims[i]] = 1;
  tt_val_t r = tt_lt_gather(f, c->args[0].val, adv_coords(f, &a), &a.flat, a.foff, a.noff, a.dims,
                            a.nd, a.dims, a.nd, 1, sizes);
  return tt_l_set_out(c, 0, tt_l_reshape(f, r, a.res.rank, a.res.dims));
}

/* index_put(self, indices, values, accumulate) and _index_put_impl_ */
static tt_status_t lower_index_put(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_larg_t* l = &c->args[1];
  tt_val_t self = c->args[0].val;
  tt_type_t st = type_of(f, self);
  tt_val_t vals = tt_l_convert(f, c->args[2].val, st.dtype);
  tt_type_t vt = type_of(f, vals);
  bool acc = c->args[3].i != 0;
  const char* body = acc ? add_op(st.dtype) : NULL;
  int64_t k = mask_count(c, l, &vt, true);
  bool lone_mask = false;
  for (int i = 0; i < l->n; i++) {
    if (l->vals[i] == TT_SHLO_INVALID) continue;
    tt_dtype_t dt = type_of(f, l->vals[i]).dtype;
    if (dt == TT_BOOL || dt == TT_U8) lone_mask = true;
  }
  if (lone_mask && k < 0) {
    /* values broadcast along the masked elements: an elementwise select */
    int p = 0, mi = 0;
    while (l->vals[mi] == TT_SHLO_INVALID) mi++, p++;
    tt_type_t mt = type_of(f, l->vals[mi]);
    tt_type_t vs = st; /* self's shape with the mask dims collapsed to one */
    vs.rank = st.rank - mt.rank + 1;
    for (int d = 0; d < vs.rank; d++) vs.dims[d] = d < p ? st.dims[d] : d == p ? 1 : st.dims[d + mt.rank - 1];
    int64_t ud[TT_MAX_RANK];
    for (int d = 0; d < st.rank; d++) ud[d] = (d >= p && d < p + mt.rank) ? 1 : st.dims[d];
    tt_val_t v = tt_l_broadcast(f, tt_l_reshape(f, tt_l_broadcast(f, vals, vs.rank, vs.dims), st.rank, ud),
                       st.rank, st.dims);
    int64_t bd[TT_MAX_RANK];
    for (int j = 0; j < mt.rank; j++) bd[j] = p + j;
    tt_val_t m = tt_lt_bcast_in_dim(f, tt_l_convert(f, l->vals[mi], TT_BOOL), st.rank, st.dims, bd);
    if (acc) v = tt_l_binary(f, body, self, v);
    return tt_l_set_out(c, 0, tt_l_select(f, m, v, self));
  }
  adv_t a;
  TT_RETURN_IF_ERROR(adv_plan(c, l, k, &a));
  if (a.nd == 0) {
    tt_val_t v = tt_l_broadcast(f, vals, st.rank, st.dims);
    return tt_l_set_out(c, 0, acc ? tt_l_binary(f, body, self, v) : v);
  }
  if (tt_type_numel(&a.res) == 0) return tt_l_set_out(c, 0, self);
  tt_val_t upd = tt_l_reshape(f, tt_l_broadcast(f, vals, a.res.rank, a.res.dims), a.flat.rank, a.flat.dims);
  tt_val_t r = tt_lt_scatter(f, self, adv_coords(f, &a), upd, a.foff, a.noff, a.dims, a.nd, a.dims,
                             a.nd, 1, body);
  return tt_l_set_out(c, 0, r);
}

#define R(name, fn, param) {"aten::" name, fn, param, 0}

/* flip(self, dims): stablehlo.reverse over the (wrapped, deduplicated) dims */
static tt_status_t lower_flip(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t st = type_of(f, c->args[0].val);
  const tt_larg_t* d = &c->args[1];
  bool seen[TT_MAX_RANK] = {false};
  int64_t dims[TT_MAX_RANK];
  int n = 0;
  for (int i = 0; i < d->n; i++) {
    int64_t w = tt_l_wrap_dim(d->ints[i], st.rank);
    if (st.rank == 0 || w < 0 || w >= st.rank) continue;
    if (!seen[w]) dims[n++] = w;
    seen[w] = true;
  }
  if (n == 0) return tt_l_set_out(c, 0, c->args[0].val);
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "dimensions = ");
  tt_shlo_fmt_i64_array(&a, dims, n);
  tt_val_t r = tt_shlo_op(f, "stablehlo.reverse", &c->args[0].val, 1, &st, a.data);
  tt_sbuf_free(&a);
  return tt_l_set_out(c, 0, r);
}

const tt_lower_entry_t tt_lower_index[] = {
    R("flip", lower_flip, 0), R("flip.out", lower_flip, 0),
    R("index_select", lower_index_select, 0), R("index_select.out", lower_index_select, 0),
    R("gather", lower_gather, 0), R("gather.out", lower_gather, 0),
    R("index_add", lower_index_add, 0), R("index_add.out", lower_index_add, 0),
    R("index_add_", lower_index_add, 0),
    R("cat", lower_cat, 0), R("cat.out", lower_cat, 0),
    R("scatter.src", lower_scatter, SC_SRC), R("scatter.src_out", lower_scatter, SC_SRC),
    R("scatter_.src", lower_scatter, SC_SRC),
    R("scatter.value", lower_scatter, SC_VALUE), R("scatter.value_out", lower_scatter, SC_VALUE),
    R("scatter_.value", lower_scatter, SC_VALUE),
    R("scatter.reduce", lower_scatter, SC_SRC_REDUCE),
    R("scatter.reduce_out", lower_scatter, SC_SRC_REDUCE),
    R("scatter_.reduce", lower_scatter, SC_SRC_REDUCE),
    R("scatter.value_reduce", lower_scatter, SC_VALUE_REDUCE),
    R("scatter.value_reduce_out", lower_scatter, SC_VALUE_REDUCE),
    R("scatter_.value_reduce", lower_scatter, SC_VALUE_REDUCE),
    R("scatter_add", lower_scatter, SC_ADD), R("scatter_add.out", lower_scatter, SC_ADD),
    R("scatter_add_", lower_scatter, SC_ADD),
    R("scatter_reduce.two", lower_scatter, SC_REDUCE_TWO),
    R("scatter_reduce.two_out", lower_scatter, SC_REDUCE_TWO),
    R("scatter_reduce_.two", lower_scatter, SC_REDUCE_TWO),
    R("index.Tensor", lower_index, 0), R("index.Tensor_out", lower_index, 0),
    R("index_put", lower_index_put, 0), R("index_put.out", lower_index_put, 0),
    R("index_put_", lower_index_put, 0), R("_index_put_impl_", lower_index_put, 0),
};
const int tt_lower_index_count = TT_TABLE_COUNT(tt_lower_index);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_index_facts[] = {
    TT_FACT("aten::cat", TT_LF_COMPLEX), TT_FACT("aten::index_select", TT_LF_COMPLEX),
    TT_FACT("aten::flip", TT_LF_COMPLEX), TT_FACT("aten::index", TT_LF_COMPLEX),
    TT_FACT("aten::gather", TT_LF_COMPLEX), TT_FACT("aten::index_put", TT_LF_COMPLEX),
    TT_FACT("aten::index_put_", TT_LF_COMPLEX),
    TT_FACT_SCALARS("aten::scatter", TT_LF_COMPLEX, "value:result"),
    TT_FACT("aten::index_add", TT_LF_COMPLEX), TT_FACT("aten::index_add_", TT_LF_COMPLEX),
    TT_FACT("aten::scatter_add", TT_LF_COMPLEX), TT_FACT("aten::scatter_add_", TT_LF_COMPLEX),
    TT_FACT("aten::_index_put_impl_", TT_LF_COMPLEX),
    TT_FACT_SCALARS("aten::scatter_", TT_LF_COMPLEX, "value:result"),
    /* no lowering: the output size depends on the data, so they run on the host */
    TT_FACT("aten::masked_select", TT_LF_HOST_OP), TT_FACT("aten::nonzero", TT_LF_HOST_OP),
    TT_FACT("aten::nonzero_static", TT_LF_HOST_OP),
};
const int tt_lower_index_facts_count = TT_TABLE_COUNT(tt_lower_index_facts);
