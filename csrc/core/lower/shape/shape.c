/* Shape-family ops: tril / triu, roll, repeat, repeat_interleave (with a
 * known output size), trace, linalg_cross, cdist (forward and backward),
 * constant / reflection / replication padding (and their backward ops).
 *
 * Padding and other data-independent re-indexing is a gather with an index
 * map computed here (shape_util.h); its backward is the matching scatter-add.
 * diag, diag_embed, diagonal, cross, cdist, pad (circular) and argsort-like
 * wrappers are CompositeImplicitAutograd or views and need no rows. */
#include <math.h>
#include <stdlib.h>

#include "shape_util.h"
#include "../tt_lower_tables.h"

static tt_val_t sel(tt_shlo_fn_t* f, tt_val_t p, tt_val_t a, tt_val_t b) { return tt_l_select(f, p, a, b); }
static tt_val_t bin(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) { return tt_l_binary(f, op, a, b); }
static tt_val_t kof(tt_shlo_fn_t* f, tt_val_t like, double v) {
  tt_type_t t = tt__sh_type(f, like);
  return tt_shlo_const(f, &t, v);
}

/* ---- tril / triu ------------------------------------------------------------------ */

/* tril / triu (self, diagonal); param 0 tril, 1 triu */
static tt_status_t lower_tri(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = c->args[0].val;
  tt_type_t t = tt__sh_type(f, x);
  if (t.rank < 2)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: input tensor must have at least 2 dimensions",
                          c->op->name);
  tt_val_t row = tt_lt_iota(f, TT_I64, t.rank, t.dims, t.rank - 2);
  tt_val_t col = tt_lt_iota(f, TT_I64, t.rank, t.dims, t.rank - 1);
  tt_val_t d = bin(f, "stablehlo.subtract", col, row);
  tt_val_t keep = tt_l_compare(f, c->op->param ? "GE" : "LE", d, kof(f, d, (double)c->args[1].i));
  return tt_l_set_out(c, 0, sel(f, keep, x, kof(f, x, 0.0)));
}

/* ---- roll / repeat / repeat_interleave ---------------------------------------------- */

static tt_val_t roll_dim(tt_shlo_fn_t* f, tt_val_t v, int dim, int64_t shift) {
  int64_t n = tt__sh_type(f, v).dims[dim];
  if (n == 0) return v;
  int64_t s = ((shift % n) + n) % n;
  if (s == 0) return v;
  tt_val_t parts[2] = {tt_lt_slice_dim(f, v, dim, n - s, n), tt_lt_slice_dim(f, v, dim, 0, n - s)};
  return tt_lt_concat(f, parts, 2, dim);
}

/* roll(self, shifts, dims): no dims rolls the flattened tensor */
static tt_status_t lower_roll(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = c->args[0].val;
  tt_type_t t = tt__sh_type(f, x);
  const tt_larg_t* sh = &c->args[1];
  const tt_larg_t* dims = &c->args[2];
  if (dims->kind != TT_ARG_INTS || dims->n == 0) {
    int64_t n = tt_type_numel(&t);
    tt_val_t flat = tt_l_reshape(f, x, 1, &n);
    return tt_l_set_out(c, 0, tt_l_reshape(f, roll_dim(f, flat, 0, sh->n ? sh->ints[0] : 0), t.rank, t.dims));
  }
  if (dims->n != sh->n)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: shifts and dimensions must align", c->op->name);
  for (int k = 0; k < dims->n; k++)
    x = roll_dim(f, x, (int)tt_l_wrap_dim(dims->ints[k], t.rank), sh->ints[k]);
  return tt_l_set_out(c, 0, x);
}

/* repeat(self, repeats): dimension by dimension, broadcast a new axis in
 * front of it and merge the two */
static tt_status_t lower_repeat(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  const tt_larg_t* r = &c->args[1];
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_type_t t = tt__sh_type(f, c->args[0].val);
  int n = r->n, lead = n - t.rank;
  if (lead < 0 || n > TT_MAX_RANK - 1)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: unsupported number of repeats", c->op->name);
  int64_t cur[TT_MAX_RANK];
  for (int d = 0; d < n; d++) cur[d] = d < lead ? 1 : t.dims[d - lead];
  tt_val_t v = tt_l_reshape(f, c->args[0].val, n, cur);
  for (int d = 0; d < n; d++) {
    int64_t k = r->ints[d];
    if (k == 1) continue;
    int64_t big[TT_MAX_RANK], bd[TT_MAX_RANK];
    for (int j = 0; j < n; j++) bd[j] = j < d ? j : j + 1;
    for (int j = 0; j <= n; j++) big[j] = j < d ? cur[j] : j == d ? k : cur[j - 1];
    v = tt_lt_bcast_in_dim(f, v, n + 1, big, bd);
    cur[d] *= k;
    v = tt_l_reshape(f, v, n, cur);
  }
  return tt_l_set_out(c, 0, v);
}

/* repeat_interleave.Tensor(repeats, output_size): out[j] = the number of i
 * whose inclusive running sum of repeats is <= j. The output size must be
 * known (PyTorch's meta kernel refuses otherwise). */
static tt_status_t lower_repeat_interleave(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  int64_t len = ot->rank ? ot->dims[0] : 1;
  tt_type_t rt = tt__sh_type(f, c->args[0].val);
  int64_t n = rt.rank ? rt.dims[0] : 1;
  if (len == 0 || n == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_val_t rep = tt_l_reshape(f, tt_l_convert(f, c->args[0].val, TT_I64), 1, &n);
  tt_val_t cum = tt_lt_scan(f, rep, 0, "stablehlo.add");
  int64_t d2[2] = {n, len}, b0[1] = {0};
  tt_val_t cb = tt_lt_bcast_in_dim(f, cum, 2, d2, b0);
  tt_val_t j = tt_lt_iota(f, TT_I64, 2, d2, 1);
  tt_val_t le = tt_l_convert(f, tt_l_compare(f, "LE", cb, j), TT_I64);
  return tt_l_set_out(c, 0, tt_lt_sum(f, le, 1u));
}

/* index_fill(self, dim, index, value) (Tensor or Scalar value; needed by
 * trace's backward): a mask of the indexed positions along dim */
static tt_status_t lower_index_fill(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = c->args[0].val;
  tt_type_t t = tt__sh_type(f, x), it = tt__sh_type(f, c->args[2].val);
  int64_t k = tt_type_numel(&it);
  if (k == 0 || tt_type_numel(&t) == 0) return tt_l_set_out(c, 0, x);
  tt_val_t value = tt_lt_scalar(c, 3, t.dtype);
  if (t.rank == 0) return tt_l_set_out(c, 0, value);
  int dim = (int)tt_l_wrap_dim(c->args[1].i, t.rank);
  int64_t n = t.dims[dim], k2[2] = {k, 1}, ins[1] = {0};
  tt_val_t idx = tt_l_reshape(f, tt_lt_fix_index(f, c->args[2].val, n), 2, k2);
  tt_val_t hit = tt_lt_scatter(f, tt_l_full(f, TT_BOOL, 1, &n, 0.0), idx, tt_l_full(f, TT_BOOL, 1, &k, 1.0),
                               NULL, 0, ins, 1, ins, 1, 1, NULL);
  hit = tt__sh_along(f, hit, t.rank, t.dims, dim);
  return tt_l_set_out(c, 0, sel(f, hit, tt_lt_splat(f, value, t.rank, t.dims), x));
}

/* ---- trace / cross ------------------------------------------------------------------ */

/* trace(self): the sum of the diagonal in the accumulation type */
static tt_status_t lower_trace(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = tt__sh_type(f, c->args[0].val);
  if (t.rank != 2) return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a matrix", c->op->name);
  /* bool: CPU refuses it; CUDA (and the device) sums the diagonal as int64 */
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  int64_t n = t.dims[0] * t.dims[1], k = t.dims[0] < t.dims[1] ? t.dims[0] : t.dims[1];
  if (k == 0) return tt_l_set_out(c, 0, tt_lt_const0(f, acc, 0.0));
  int64_t* idx = malloc((size_t)k * sizeof(int64_t));
  if (!idx) return tt_status_make(TT_RESOURCE_EXHAUSTED, "%s: out of memory", c->op->name);
  for (int64_t i = 0; i < k; i++) idx[i] = i * (t.dims[1] + 1);
  tt_val_t flat = tt_l_reshape(f, tt_l_convert(f, c->args[0].val, acc), 1, &n);
  tt_val_t diag = tt__sh_take(f, flat, 0, idx, k);
  free(idx);
  return tt_l_set_out(c, 0, tt_lt_sum(f, diag, 1u));
}

/* linalg_cross(self, other, dim) */
static tt_status_t lower_cross(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_dtype_t cdt = tt_l_opmath(ot->dtype);
  tt_val_t a = tt_l_arg_as(c, 0, cdt, ot), b = tt_l_arg_as(c, 1, cdt, ot);
  int dim = (int)tt_l_wrap_dim(c->args[2].i, ot->rank);
  if (ot->dims[dim] != 3)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: dimension %d does not have size 3", c->op->name, dim);
  tt_val_t as[3], bs[3], r[3];
  for (int i = 0; i < 3; i++) {
    as[i] = tt_lt_slice_dim(f, a, dim, i, i + 1);
    bs[i] = tt_lt_slice_dim(f, b, dim, i, i + 1);
  }
  for (int i = 0; i < 3; i++) {
    int j = (i + 1) % 3, k = (i + 2) % 3;
    r[i] = bin(f, "stablehlo.subtract", bin(f, "stablehlo.multiply", as[j], bs[k]),
               bin(f, "stablehlo.multiply", as[k], bs[j]));
  }
  return tt_l_set_out(c, 0, tt_lt_concat(f, r, 3, dim));
}

/* ---- cdist ----------------------------------------------------------------------------- */

/* x1 (B.., P, M) and x2 (B.., R, M) broadcast to (B.., P, R, M); bdims: the
 * batch dims B (from the output), P and R. Returns x1 - x2 there. */
static tt_val_t pair_diff(tt_shlo_fn_t* f, tt_val_t x1, tt_val_t x2, int nb, const int64_t* bdims,
                          tt_dtype_t cdt, tt_type_t* full) {
  tt_type_t t1 = tt__sh_type(f, x1), t2 = tt__sh_type(f, x2);
  int64_t P = t1.dims[t1.rank - 2], R = t2.dims[t2.rank - 2], M = t1.dims[t1.rank - 1];
  int64_t d1[TT_MAX_RANK], d2[TT_MAX_RANK], b1[TT_MAX_RANK], b2[TT_MAX_RANK];
  *full = tt_type_scalar(cdt);
  for (int i = 0; i < nb; i++) full->dims[full->rank++] = d1[i] = d2[i] = bdims[i];
  full->dims[full->rank++] = P;
  full->dims[full->rank++] = R;
  full->dims[full->rank++] = M;
  d1[nb] = P, d1[nb + 1] = M, d2[nb] = R, d2[nb + 1] = M;
  for (int i = 0; i < nb; i++) b1[i] = b2[i] = i;
  b1[nb] = nb, b1[nb + 1] = nb + 2, b2[nb] = nb + 1, b2[nb + 1] = nb + 2;
  x1 = tt_l_broadcast(f, tt_l_convert(f, x1, cdt), nb + 2, d1);
  x2 = tt_l_broadcast(f, tt_l_convert(f, x2, cdt), nb + 2, d2);
  x1 = tt_lt_bcast_in_dim(f, x1, full->rank, full->dims, b1);
  x2 = tt_lt_bcast_in_dim(f, x2, full->rank, full->dims, b2);
  return bin(f, "stablehlo.subtract", x1, x2);
}

static tt_val_t sign_of(tt_shlo_fn_t* f, tt_val_t x) {
  tt_val_t z = kof(f, x, 0.0);
  return sel(f, tt_l_compare(f, "GT", x, z), kof(f, x, 1.0),
             sel(f, tt_l_compare(f, "LT", x, z), kof(f, x, -1.0), z));
}

/* _cdist_forward(x1, x2, p, compute_mode): computed directly (PyTorch CPU
 * also does for the sizes where cdist calls this op with p = 2) */
static tt_status_t lower_cdist(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  double p = c->args[2].f;
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_dtype_t cdt = tt_l_opmath(ot->dtype);
  tt_type_t full;
  tt_val_t d = pair_diff(f, c->args[0].val, c->args[1].val, ot->rank - 2, ot->dims, cdt, &full);
  uint32_t mlast = 1u << (full.rank - 1);
  tt_val_t ad = tt_l_unary(f, "stablehlo.abs", d), r;
  if (p == 0) /* CPU's min(ceil(|d|), 1): a NaN difference stays NaN */
    r = tt_lt_sum(f, sel(f, tt_l_compare(f, "NE", d, d), d,
                         tt_l_convert(f, tt_l_compare(f, "NE", d, kof(f, d, 0.0)), cdt)), mlast);
  else if (p == 1) r = tt_lt_sum(f, ad, mlast);
  else if (p == 2)
    r = tt_l_unary(f, "stablehlo.sqrt", tt_lt_sum(f, bin(f, "stablehlo.multiply", d, d), mlast));
  else if (isinf(p)) /* CPU's running max(agg, |d|) from 0 skips a NaN |d| */
    r = tt_lt_reduce(f, sel(f, tt_l_compare(f, "NE", ad, ad), kof(f, ad, 0.0), ad), mlast, "stablehlo.maximum",
                     tt_lt_const0(f, cdt, 0.0));
  else {
    r = tt_lt_sum(f, bin(f, "stablehlo.power", ad, kof(f, ad, p)), mlast);
    r = bin(f, "stablehlo.power", r, kof(f, r, 1.0 / p));
  }
  return tt_l_set_out(c, 0, r);
}

/* _cdist_backward(grad, x1, x2, p, cdist): the gradient for x1 (expanded to
 * the batch shape), with PyTorch CPU's per-p formulas */
static tt_status_t lower_cdist_backward(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  double p = c->args[3].f;
  if (tt_type_numel(ot) == 0 || p == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_dtype_t cdt = tt_l_opmath(ot->dtype);
  tt_type_t gt = tt__sh_type(f, c->args[0].val);
  tt_type_t full;
  tt_val_t d = pair_diff(f, c->args[1].val, c->args[2].val, gt.rank - 2, gt.dims, cdt, &full);
  int64_t bd[TT_MAX_RANK];
  for (int i = 0; i < gt.rank; i++) bd[i] = i;
  tt_val_t g = tt_lt_bcast_in_dim(f, tt_l_convert(f, c->args[0].val, cdt), full.rank, full.dims, bd);
  tt_val_t dist = tt_lt_bcast_in_dim(f, tt_l_convert(f, c->args[4].val, cdt), full.rank, full.dims, bd);
  tt_val_t zero = kof(f, d, 0.0), ad = tt_l_unary(f, "stablehlo.abs", d), sg = sign_of(f, d), r;
  tt_val_t dist0 = tt_l_compare(f, "EQ", dist, zero);
  const char* mul = "stablehlo.multiply";
  const char* div = "stablehlo.divide";
  const char* pw = "stablehlo.power";
  if (p == 1) {
    r = bin(f, mul, g, sg);
  } else if (p < 2) {
    tt_val_t e = kof(f, d, p - 1);
    r = bin(f, div, bin(f, mul, bin(f, mul, sg, bin(f, pw, ad, e)), g), bin(f, pw, dist, e));
    tt_val_t z = dist0;
    if (p < 1) z = bin(f, "stablehlo.or", z, tt_l_compare(f, "EQ", d, zero));
    r = sel(f, z, zero, r);
  } else if (p == 2) {
    r = sel(f, dist0, zero, bin(f, div, bin(f, mul, g, d), dist));
  } else if (isinf(p)) {
    tt_val_t hit = tt_l_convert(f, tt_l_compare(f, "EQ", ad, dist), cdt);
    r = bin(f, mul, bin(f, mul, g, sg), hit);
  } else {
    r = bin(f, div, bin(f, mul, bin(f, mul, d, bin(f, pw, ad, kof(f, d, p - 2))), g),
            bin(f, pw, dist, kof(f, d, p - 1)));
    r = sel(f, dist0, zero, r);
  }
  r = tt_lt_sum(f, r, 1u << (full.rank - 2));
  return tt_l_set_out(c, 0, tt_l_broadcast(f, r, ot->rank, ot->dims));
}

/* ---- padding -------------------------------------------------------------------------- */

/* constant_pad_nd(self, pad, value): pairs from the last dim backwards;
 * negative pads crop */
static tt_status_t lower_constant_pad(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = tt__sh_type(f, c->args[0].val);
  const tt_larg_t* pad = &c->args[1];
  if (pad->n % 2 || pad->n / 2 > t.rank)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: bad padding length %d", c->op->name, pad->n);
  const tt_type_t* ot = &c->out_types[0];
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
  for (int k = 0; k < pad->n / 2; k++) {
    lo[t.rank - 1 - k] = pad->ints[2 * k];
    hi[t.rank - 1 - k] = pad->ints[2 * k + 1];
  }
  tt_val_t value = tt_lt_has(c, 2) ? tt_lt_scalar(c, 2, t.dtype) : tt_lt_const0(f, t.dtype, 0.0);
  if (tt_type_numel(&t) == 0) return tt_l_set_out(c, 0, tt_lt_splat(f, value, ot->rank, ot->dims));
  return tt_l_set_out(c, 0, tt_lt_pad(f, c->args[0].val, value, lo, hi));
}

/* Reflection / replication padding of the last k dims: param = kind * 8 + k */
enum { PAD_REFLECT = 0, PAD_REPLICATE = 1 };

/* The source index of every output position of one padded dim (malloc'd). */
static int64_t* pad_map(int kind, int64_t n, int64_t lo, int64_t hi, int64_t* m) {
  *m = n + lo + hi;
  int64_t* idx = malloc((size_t)(*m > 0 ? *m : 1) * sizeof(int64_t));
  if (!idx) return NULL;
  for (int64_t o = 0; o < *m; o++) {
    int64_t i = o - lo;
    if (kind == PAD_REFLECT) {
      if (i < 0) i = -i;
      if (i >= n) i = 2 * (n - 1) - i;
    }
    idx[o] = i < 0 ? 0 : i >= n ? n - 1 : i;
  }
  return idx;
}

/* reflection_padNd / replication_padNd (self, padding) and, with grad,
 * their _backward(grad_output, self, padding) ops */
static tt_status_t lower_pad_common(tt_lctx_t* c, bool backward) {
  tt_shlo_fn_t* f = c->f;
  int kind = (int)(c->op->param / 8), k = (int)(c->op->param % 8);
  int si = backward ? 1 : 0;
  tt_type_t t = tt__sh_type(f, c->args[si].val);
  const tt_larg_t* pad = &c->args[si + 1];
  if (pad->n != 2 * k || t.rank < k)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: bad padding or input rank", c->op->name);
  const tt_type_t* ot = &c->out_types[0];
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_val_t v = c->args[0].val;
  tt_dtype_t cdt = tt_l_opmath(ot->dtype);
  if (backward) v = tt_l_convert(f, v, cdt);
  for (int j = 0; j < k; j++) {
    int dim = t.rank - 1 - j;
    int64_t n = t.dims[dim], m;
    if (n == 0) continue;
    int64_t* idx = pad_map(kind, n, pad->ints[2 * j], pad->ints[2 * j + 1], &m);
    if (!idx) return tt_status_make(TT_RESOURCE_EXHAUSTED, "%s: out of memory", c->op->name);
    v = backward ? tt__sh_put_add(f, v, dim, idx, n) : tt__sh_take(f, v, dim, idx, m);
    free(idx);
  }
  return tt_l_set_out(c, 0, v);
}
static tt_status_t lower_pad(tt_lctx_t* c) { return lower_pad_common(c, false); }
static tt_status_t lower_pad_backward(tt_lctx_t* c) { return lower_pad_common(c, true); }

#define R(name, fn, param) {"aten::" name, fn, param, 0}
#define PADS(kind, K, k)                                                        \
  R(kind "_pad" K "d", lower_pad, k), R(kind "_pad" K "d.out", lower_pad, k),   \
  R(kind "_pad" K "d_backward", lower_pad_backward, k),                         \
  R(kind "_pad" K "d_backward.grad_input", lower_pad_backward, k)

const tt_lower_entry_t tt_lower_shape[] = {
    R("tril", lower_tri, 0), R("tril_", lower_tri, 0), R("tril.out", lower_tri, 0),
    R("triu", lower_tri, 1), R("triu_", lower_tri, 1), R("triu.out", lower_tri, 1),
    R("roll", lower_roll, 0), R("roll.out", lower_roll, 0),
    R("repeat", lower_repeat, 0), R("repeat.out", lower_repeat, 0),
    R("repeat_interleave.Tensor", lower_repeat_interleave, 0),
    R("repeat_interleave.Tensor_out", lower_repeat_interleave, 0),
    R("index_fill.int_Tensor", lower_index_fill, 0), R("index_fill_.int_Tensor", lower_index_fill, 0),
    R("index_fill.int_Tensor_out", lower_index_fill, 0), R("index_fill.int_Scalar", lower_index_fill, 0),
    R("index_fill_.int_Scalar", lower_index_fill, 0), R("index_fill.int_Scalar_out", lower_index_fill, 0),
    R("trace", lower_trace, 0), R("trace.out", lower_trace, 0),
    R("linalg_cross", lower_cross, 0), R("linalg_cross.out", lower_cross, 0),
    R("_cdist_forward", lower_cdist, 0), R("_cdist_forward.out", lower_cdist, 0),
    R("_cdist_backward", lower_cdist_backward, 0), R("_cdist_backward.out", lower_cdist_backward, 0),
    R("constant_pad_nd", lower_constant_pad, 0), R("constant_pad_nd.out", lower_constant_pad, 0),
    PADS("reflection", "1", PAD_REFLECT * 8 + 1), PADS("reflection", "2", PAD_REFLECT * 8 + 2),
    PADS("reflection", "3", PAD_REFLECT * 8 + 3), PADS("replication", "1", PAD_REPLICATE * 8 + 1),
    PADS("replication", "2", PAD_REPLICATE * 8 + 2), PADS("replication", "3", PAD_REPLICATE * 8 + 3),
};
const int tt_lower_shape_count = TT_TABLE_COUNT(tt_lower_shape);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_shape_facts[] = {
    TT_FACT("aten::roll", TT_LF_COMPLEX), TT_FACT("aten::repeat", TT_LF_COMPLEX),
    TT_FACT("aten::constant_pad_nd", TT_LF_COMPLEX), TT_FACT("aten::tril", TT_LF_COMPLEX),
    TT_FACT("aten::triu", TT_LF_COMPLEX), TT_FACT("aten::tril_", TT_LF_COMPLEX),
    TT_FACT("aten::triu_", TT_LF_COMPLEX), TT_FACT("aten::trace", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_cross", TT_LF_COMPLEX), TT_FACT("aten::reflection_pad1d", TT_LF_COMPLEX),
    TT_FACT("aten::reflection_pad2d", TT_LF_COMPLEX),
    TT_FACT("aten::reflection_pad3d", TT_LF_COMPLEX),
    TT_FACT("aten::replication_pad1d", TT_LF_COMPLEX),
    TT_FACT("aten::replication_pad2d", TT_LF_COMPLEX),
    TT_FACT("aten::replication_pad3d", TT_LF_COMPLEX),
    TT_FACT_SCALARS("aten::index_fill", TT_LF_COMPLEX, "value:result"),
    TT_FACT_SCALARS("aten::index_fill_", TT_LF_COMPLEX, "value:result"),
    TT_FACT("aten::reflection_pad1d_backward", TT_LF_COMPLEX),
    TT_FACT("aten::reflection_pad2d_backward", TT_LF_COMPLEX),
    TT_FACT("aten::reflection_pad3d_backward", TT_LF_COMPLEX),
    TT_FACT("aten::replication_pad1d_backward", TT_LF_COMPLEX),
    TT_FACT("aten::replication_pad2d_backward", TT_LF_COMPLEX),
    TT_FACT("aten::replication_pad3d_backward", TT_LF_COMPLEX),
    TT_FACT("aten::repeat_interleave", TT_LF_HOST_SIZE),
    /* compile-time bucketing (tt_lower_bucket_t): tril / triu, and the copies, aliases, views
     * and sizes that have no lowering (the runtime's views, PyTorch's kernels), per overload
     * where overloads take other arguments (view.dtype is no view of sizes) */
    TT_FACT_BUCKET("aten::tril.default", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::triu.default", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::clone.default", TT_BUCKET_KEEP),
    TT_FACT_BUCKET("aten::alias.default", TT_BUCKET_KEEP),
    TT_FACT_BUCKET("aten::contiguous.default", TT_BUCKET_KEEP),
    TT_FACT_BUCKET("aten::lift_fresh_copy.default", TT_BUCKET_KEEP),
    TT_FACT_BUCKET("aten::_to_copy.default", TT_BUCKET_KEEP),
    TT_FACT_BUCKET("aten::detach.default", TT_BUCKET_KEEP),
    TT_FACT_BUCKET("aten::view.default", TT_BUCKET_VIEW),
    TT_FACT_BUCKET("aten::_unsafe_view.default", TT_BUCKET_VIEW),
    TT_FACT_BUCKET("aten::reshape.default", TT_BUCKET_VIEW),
    TT_FACT_BUCKET("aten::permute", TT_BUCKET_PERMUTE),
    TT_FACT_BUCKET("aten::transpose", TT_BUCKET_TRANSPOSE),
    TT_FACT_BUCKET("aten::t", TT_BUCKET_TRANSPOSE),
    TT_FACT_BUCKET("aten::unsqueeze", TT_BUCKET_UNSQUEEZE),
    TT_FACT_BUCKET("aten::expand", TT_BUCKET_EXPAND),
    TT_FACT_BUCKET("aten::select", TT_BUCKET_SELECT),
    TT_FACT_BUCKET("aten::slice", TT_BUCKET_SLICE),
    TT_FACT_BUCKET("aten::split.Tensor", TT_BUCKET_SPLIT),
    TT_FACT_BUCKET("aten::split_with_sizes.default", TT_BUCKET_SPLIT),
    TT_FACT_BUCKET("aten::sym_size.int", TT_BUCKET_SIZE),
};
const int tt_lower_shape_facts_count = TT_TABLE_COUNT(tt_lower_shape_facts);
