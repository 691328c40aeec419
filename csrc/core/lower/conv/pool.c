/* Pooling, 2-d and 3-d (1-d pools reach us as 2-d ones), forward and backward:
 * max_pool{2,3}d_with_indices, avg_pool{2,3}d, _adaptive_avg_pool{2,3}d,
 * adaptive_max_pool{2,3}d.
 *
 * Regular windows use stablehlo.reduce_window, whose padding is filled with
 * the init value: max pools reduce (value, flat index) pairs with PyTorch's
 * rule (the last NaN wins, else the first maximum; padding never wins), avg
 * pools sum and divide by a compile-time divisor (count_include_pad, ceil_mode
 * clipping and divisor_override as PyTorch's kernels compute it). Adaptive
 * windows have varying sizes, so each spatial dim gathers its windows through
 * a compile-time (window, offset) table padded to the widest window, and
 * invalid slots are masked before the reduction. Max backward is a scatter-add
 * of grad_output at the saved indices; avg backward is the transposed window
 * sum (interior padding by stride - 1, then a window sum). f16/bf16 sums
 * compute in f32; max values stay in their dtype (exact). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lower_tensor_util.h"
#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"

enum pool_kind { MAXP, MAXP_BWD, AVGP, AVGP_BWD, AAVG, AAVG_BWD, AMAX, AMAX_BWD };
#define POOL(kind, nsp) ((kind) | ((nsp) << 8))
#define POOL_KIND(p) ((int)((p) & 0xff))
#define POOL_NSP(p) ((int)((p) >> 8))
#define MAX_WIN (1 << 20) /* entries of one adaptive window table */

typedef struct pool_p {
  int nsp;
  int64_t k[3], s[3], pad[3], dil[3], in[3], out[3];
  bool ceil;
} pool_p_t;

/* int[] argument i expanded to nsp values; an empty list gives dflt (or k when dflt < 0). */
static tt_status_t expand(tt_lctx_t* c, int i, const pool_p_t* p, int64_t dflt, int64_t* out) {
  const tt_larg_t* a = &c->args[i];
  int n = a->kind == TT_ARG_INTS ? a->n : 0;
  if (n != 0 && n != 1 && n != p->nsp)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected %d values in argument %d, got %d",
                          c->op->name, p->nsp, i, n);
  for (int d = 0; d < p->nsp; d++) out[d] = n ? a->ints[n == 1 ? 0 : d] : dflt < 0 ? p->k[d] : dflt;
  return NULL;
}

/* Input spatial sizes from `in`, output ones from `out` (their last nsp dims). */
static void sizes(pool_p_t* p, const tt_type_t* in, const tt_type_t* out) {
  for (int d = 0; d < p->nsp; d++) {
    p->in[d] = in->dims[in->rank - p->nsp + d];
    p->out[d] = out->dims[out->rank - p->nsp + d];
  }
}

/* v with a unit batch dim in front when it has only (C, spatial...). */
static tt_val_t batched(tt_shlo_fn_t* f, tt_val_t v, int nsp) { return tt__sh_batched(f, v, nsp + 2); }

static tt_dtype_t sum_dtype(tt_dtype_t dt) { return tt_dtype_is_float(dt) ? tt_l_opmath(dt) : dt; }

/* ---- building blocks ------------------------------------------------------------- */

/* Region over (a_val, a_idx, b_val, b_idx) choosing PyTorch's max: a NaN wins
 * (the later index among NaNs), else the larger value, ties to the smaller index. */
static char* argmax_region(tt_shlo_fn_t* f, tt_dtype_t dt) {
  tt_type_t sv = tt_type_scalar(dt), si = tt_type_scalar(TT_I64);
  tt_type_t bt[4] = {sv, si, sv, si};
  tt_val_t b[4];
  tt_shlo_region_begin(f, bt, 4, b);
  tt_val_t gt = tt_l_compare(f, "GT", b[0], b[2]);
  tt_val_t tie = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "EQ", b[0], b[2]),
                             tt_l_compare(f, "LT", b[1], b[3]));
  tt_val_t pick = tt_l_binary(f, "stablehlo.or", gt, tie);
  if (tt_dtype_is_float(dt)) {
    tt_val_t an = tt_l_compare(f, "NE", b[0], b[0]), bn = tt_l_compare(f, "NE", b[2], b[2]);
    tt_val_t later = tt_l_compare(f, "GT", b[1], b[3]);
    tt_val_t nan_pick = tt_l_binary(f, "stablehlo.and", an,
                                    tt_l_binary(f, "stablehlo.or", tt_l_unary(f, "stablehlo.not", bn), later));
    tt_val_t any = tt_l_binary(f, "stablehlo.or", an, bn);
    pick = tt_l_select(f, any, nan_pick, pick);
  }
  tt_val_t r[2] = {tt_l_select(f, pick, b[0], b[2]), tt_l_select(f, pick, b[1], b[3])};
  return tt_shlo_region_end(f, r, 2);
}

static char* sum_region(tt_shlo_fn_t* f, tt_dtype_t dt) {
  tt_type_t st = tt_type_scalar(dt);
  tt_type_t bt[2] = {st, st};
  tt_val_t b[2];
  tt_shlo_region_begin(f, bt, 2, b);
  tt_val_t r = tt_l_binary(f, "stablehlo.add", b[0], b[1]);
  return tt_shlo_region_end(f, &r, 1);
}

/* reduce_window over the spatial dims of n operands (+ n inits); padding
 * lo/hi per spatial dim (filled with the init values). */
static void reduce_window(tt_shlo_fn_t* f, const tt_val_t* vals, const tt_val_t* inits, int n,
                          char* region, const pool_p_t* p, const int64_t* win, const int64_t* stride,
                          const int64_t* wdil, const int64_t* lo, const int64_t* hi, tt_val_t* outs) {
  const tt_type_t* t = tt_shlo_type(f, vals[0]);
  if (!t || !region) {
    free(region);
    for (int i = 0; i < n; i++) outs[i] = TT_SHLO_INVALID;
    return;
  }
  int r = t->rank, b = r - p->nsp;
  int64_t wd[TT_MAX_RANK], ws[TT_MAX_RANK], wl[TT_MAX_RANK];
  tt_type_t rt[2];
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "padding = dense<[");
  for (int d = 0; d < r; d++) {
    int s = d - b;
    wd[d] = s < 0 ? 1 : win[s];
    ws[d] = s < 0 ? 1 : stride[s];
    wl[d] = s < 0 || !wdil ? 1 : wdil[s];
    int64_t plo = s < 0 ? 0 : lo[s], phi = s < 0 ? 0 : hi[s];
    tt_sbuf_printf(&a, "%s[%lld, %lld]", d ? ", " : "", (long long)plo, (long long)phi);
  }
  tt_sbuf_printf(&a, "]> : tensor<%dx2xi64>, window_dilations = ", r);
  tt_shlo_fmt_i64_array(&a, wl, r);
  tt_sbuf_append(&a, ", window_dimensions = ");
  tt_shlo_fmt_i64_array(&a, wd, r);
  tt_sbuf_append(&a, ", window_strides = ");
  tt_shlo_fmt_i64_array(&a, ws, r);
  tt_val_t ops[4];
  for (int i = 0; i < n; i++) {
    const tt_type_t* ti = tt_shlo_type(f, vals[i]);
    rt[i] = ti ? *ti : *t;
    for (int d = 0; d < r; d++) {
      int s = d - b;
      if (s < 0) continue;
      int64_t len = rt[i].dims[d] + lo[s] + hi[s], ext = wl[d] * (wd[d] - 1) + 1;
      rt[i].dims[d] = len < ext ? 0 : (len - ext) / ws[d] + 1;
    }
    ops[i] = vals[i];
    ops[n + i] = inits[i];
  }
  tt_shlo_op_multi(f, "stablehlo.reduce_window", ops, 2 * n, rt, n, a.data, region, outs);
  tt_sbuf_free(&a);
}

/* Flat index of each element within its spatial plane (i64, shaped like t). */
static tt_val_t flat_index(tt_shlo_fn_t* f, const tt_type_t* t, int nsp) {
  tt_type_t it = *t;
  it.dtype = TT_I64;
  tt_val_t acc = TT_SHLO_INVALID;
  int64_t mul = 1;
  for (int d = nsp - 1; d >= 0; d--) {
    int dim = t->rank - nsp + d;
    tt_val_t io = tt_lt_iota(f, TT_I64, t->rank, t->dims, dim);
    if (mul != 1) io = tt_l_binary(f, "stablehlo.multiply", io, tt_shlo_const_i64(f, &it, mul));
    acc = acc == TT_SHLO_INVALID ? io : tt_l_binary(f, "stablehlo.add", acc, io);
    mul *= t->dims[dim];
  }
  return acc;
}

/* Size of the window of output o along spatial dim d. */
typedef int64_t (*count_fn_t)(const pool_p_t* p, int d, int64_t o, const void* ctx);

/* Product over spatial dims of count(d, o_d), as a compile-time dtype-dt
 * tensor shaped like `shape` (whose last nsp dims are p->out[]). */
static tt_val_t dim_product(tt_shlo_fn_t* f, count_fn_t count, const void* ctx, const pool_p_t* p,
                            const tt_type_t* shape, tt_dtype_t dt) {
  tt_val_t acc = TT_SHLO_INVALID;
  for (int d = 0; d < p->nsp; d++) {
    int64_t* vec = malloc((size_t)(p->out[d] ? p->out[d] : 1) * sizeof(int64_t));
    if (!vec) {
      tt_shlo_fail(f, "out of memory");
      return TT_SHLO_INVALID;
    }
    for (int64_t o = 0; o < p->out[d]; o++) vec[o] = count(p, d, o, ctx);
    int64_t bd[1] = {shape->rank - p->nsp + d};
    tt_val_t v = tt_l_convert(f, tt_shlo_const_i64s(f, vec, (int)p->out[d]), dt);
    free(vec);
    v = tt_lt_bcast_in_dim(f, v, shape->rank, shape->dims, bd);
    acc = d ? tt_l_binary(f, "stablehlo.multiply", acc, v) : v;
  }
  return acc;
}

/* ---- max_pool{2,3}d_with_indices ------------------------------------------------ */

static tt_status_t parse_window(tt_lctx_t* c, int ik, bool has_dil, pool_p_t* p) {
  tt_status_t st = expand(c, ik, p, 1, p->k);
  if (!st) st = expand(c, ik + 1, p, -1, p->s);
  if (!st) st = expand(c, ik + 2, p, 0, p->pad);
  if (!st) st = has_dil ? expand(c, ik + 3, p, 1, p->dil) : NULL;
  if (!has_dil)
    for (int d = 0; d < p->nsp; d++) p->dil[d] = 1;
  p->ceil = c->args[ik + (has_dil ? 4 : 3)].i != 0;
  return st;
}

/* High padding so that out windows fit; when negative, x is cut instead. */
static tt_val_t fit_high(tt_shlo_fn_t* f, tt_val_t x, const pool_p_t* p, int64_t* hi) {
  const tt_type_t* t = tt_shlo_type(f, x);
  if (!t) return TT_SHLO_INVALID;
  for (int d = 0; d < p->nsp; d++) {
    hi[d] = (p->out[d] - 1) * p->s[d] + p->dil[d] * (p->k[d] - 1) + 1 - p->in[d] - p->pad[d];
    if (hi[d] < 0) {
      x = tt_lt_slice_dim(f, x, t->rank - p->nsp + d, 0, p->in[d] + hi[d]);
      hi[d] = 0;
    }
  }
  return x;
}

static tt_status_t lower_max_pool(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  pool_p_t p = {.nsp = POOL_NSP(c->op->param)};
  tt_status_t st = parse_window(c, 1, true, &p);
  if (st) return st;
  tt_val_t x = batched(f, c->args[0].val, p.nsp);
  const tt_type_t* xt = tt_shlo_type(f, x);
  if (!xt) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  tt_type_t t = *xt;
  sizes(&p, &t, &c->out_types[0]);
  tt_val_t vals[2] = {x, flat_index(f, &t, p.nsp)};
  int64_t hi[3];
  vals[0] = fit_high(f, vals[0], &p, hi);
  vals[1] = fit_high(f, vals[1], &p, hi);
  tt_val_t inits[2] = {tt_lt_limit(f, t.dtype, false), tt_lt_limit(f, TT_I64, true)}, r[2];
  reduce_window(f, vals, inits, 2, argmax_region(f, t.dtype), &p, p.k, p.s, p.dil, p.pad, hi, r);
  if (tt_shlo_failed(f)) return NULL;
  st = tt_l_set_out(c, 0, r[0]);
  return st ? st : tt_l_set_out(c, 1, r[1]);
}

/* max_pool / adaptive_max_pool backward: scatter-add at the saved indices. */
static tt_status_t lower_max_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int nsp = POOL_NSP(c->op->param), iidx = POOL_KIND(c->op->param) == MAXP_BWD ? 7 : 2;
  tt_dtype_t cdt = sum_dtype(tt_l_arg_dtype(c, 1));
  tt_val_t gy = batched(f, tt_l_convert(f, c->args[0].val, cdt), nsp);
  tt_val_t idx = batched(f, c->args[iidx].val, nsp);
  tt_val_t x = batched(f, c->args[1].val, nsp);
  const tt_type_t* gt = tt_shlo_type(f, gy);
  const tt_type_t* xt = tt_shlo_type(f, x);
  if (!gt || !xt) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  tt_type_t g = *gt, xs = *xt;
  int64_t od[3] = {g.dims[0], g.dims[1], 1}, id[3] = {xs.dims[0], xs.dims[1], 1};
  for (int d = 2; d < g.rank; d++) od[2] *= g.dims[d], id[2] *= xs.dims[d];
  tt_val_t zeros = tt_l_full(f, cdt, 3, id, 0.0);
  tt_val_t r = tt_lt_scatter_dim(f, zeros, 2, tt_l_reshape(f, tt_l_convert(f, idx, TT_I64), 3, od),
                                 tt_l_reshape(f, gy, 3, od), "stablehlo.add");
  if (tt_shlo_failed(f)) return NULL;
  return tt_l_set_out(c, 0, tt_l_reshape(f, r, xs.rank, xs.dims));
}

/* ---- avg_pool{2,3}d ---------------------------------------------------------------- */

/* PyTorch's avg divisor along dim d (ctx: count_include_pad). */
static int64_t avg_count(const pool_p_t* p, int d, int64_t o, const void* ctx) {
  int64_t lo = o * p->s[d] - p->pad[d], hi = lo + p->k[d];
  if (hi > p->in[d] + p->pad[d]) hi = p->in[d] + p->pad[d];
  int64_t pool = hi - lo;
  if (lo < 0) lo = 0;
  if (hi > p->in[d]) hi = p->in[d];
  return *(const bool*)ctx ? pool : hi - lo;
}

static tt_val_t avg_divisor(tt_lctx_t* c, const pool_p_t* p, bool include_pad, int iover,
                            const tt_type_t* shape, tt_dtype_t dt) {
  if (tt_lt_has(c, iover)) return tt_l_full(c->f, dt, shape->rank, shape->dims, (double)c->args[iover].i);
  return dim_product(c->f, avg_count, &include_pad, p, shape, dt);
}

static tt_status_t lower_avg_pool(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  pool_p_t p = {.nsp = POOL_NSP(c->op->param)};
  tt_status_t st = parse_window(c, 1, false, &p);
  if (st) return st;
  tt_dtype_t cdt = sum_dtype(tt_l_arg_dtype(c, 0));
  tt_val_t x = batched(f, tt_l_convert(f, c->args[0].val, cdt), p.nsp);
  const tt_type_t* xt = tt_shlo_type(f, x);
  if (!xt) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  sizes(&p, xt, &c->out_types[0]);
  int64_t hi[3];
  x = fit_high(f, x, &p, hi);
  tt_val_t init = tt_lt_const0(f, cdt, 0.0), sum;
  reduce_window(f, &x, &init, 1, sum_region(f, cdt), &p, p.k, p.s, NULL, p.pad, hi, &sum);
  const tt_type_t* stp = tt_shlo_type(f, sum);
  if (!stp) return NULL;
  tt_type_t s = *stp;
  tt_val_t div = avg_divisor(c, &p, c->args[5].i != 0, 6, &s, cdt);
  if (tt_shlo_failed(f)) return NULL;
  return tt_l_set_out(c, 0, tt_l_binary(f, "stablehlo.divide", sum, div));
}

static tt_status_t lower_avg_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  pool_p_t p = {.nsp = POOL_NSP(c->op->param)};
  tt_status_t st = parse_window(c, 2, false, &p);
  if (st) return st;
  tt_dtype_t cdt = sum_dtype(tt_l_arg_dtype(c, 1));
  tt_val_t g = batched(f, tt_l_convert(f, c->args[0].val, cdt), p.nsp);
  const tt_type_t* gtp = tt_shlo_type(f, g);
  const tt_type_t* xtp = tt_lt_arg_type(c, 1);
  if (!gtp || !xtp) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  tt_type_t gt = *gtp;
  sizes(&p, xtp, &gt);
  g = tt_l_binary(f, "stablehlo.divide", g, avg_divisor(c, &p, c->args[6].i != 0, 7, &gt, cdt));
  /* dilate by the stride, pad k-1 in front, sum windows of k: position t of
   * the padded input gets every output whose window covers it */
  int r = gt.rank, b = r - p.nsp;
  int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0}, in[TT_MAX_RANK] = {0}, one[3] = {1, 1, 1};
  int64_t zero[3] = {0, 0, 0};
  for (int d = 0; d < p.nsp; d++) {
    lo[b + d] = p.k[d] - 1;
    in[b + d] = p.s[d] - 1;
    hi[b + d] = p.pad[d] + p.in[d] - ((p.out[d] - 1) * p.s[d] + 1);
  }
  tt_val_t gp = tt_shlo_pad(f, g, tt_lt_const0(f, cdt, 0.0), lo, hi, in);
  tt_val_t init = tt_lt_const0(f, cdt, 0.0), sum;
  reduce_window(f, &gp, &init, 1, sum_region(f, cdt), &p, p.k, one, NULL, zero, zero, &sum);
  for (int d = 0; d < p.nsp; d++) sum = tt_lt_slice_dim(f, sum, b + d, p.pad[d], p.pad[d] + p.in[d]);
  if (tt_shlo_failed(f)) return NULL;
  return tt_l_set_out(c, 0, sum);
}

/* ---- adaptive pools ----------------------------------------------------------------- */

static int64_t ad_start(int64_t o, int64_t L, int64_t O) { return o * L / O; }
static int64_t ad_end(int64_t o, int64_t L, int64_t O) { return ((o + 1) * L + O - 1) / O; }

/* Window table of one dim (malloc'd, n x *w): entry (m, j) = input position
 * start(m) + j, or -1 past the window's end. The backward table (bwd) maps
 * each input position to the outputs whose window holds it. NULL when too large. */
static int64_t* adaptive_table(int64_t L, int64_t O, bool bwd, int64_t* w) {
  int64_t n = bwd ? L : O, width = 0, olo = 0, ohi = 0;
  for (int pass = 0; pass < 2; pass++) {
    int64_t* tab = pass ? malloc((size_t)(n * width) * sizeof(int64_t)) : NULL;
    if (pass && !tab) return NULL;
    olo = ohi = 0;
    for (int64_t m = 0; m < n; m++) {
      int64_t lo, hi;
      if (!bwd) {
        lo = ad_start(m, L, O), hi = ad_end(m, L, O);
      } else { /* start and end grow with o: two pointers */
        while (olo < O && ad_end(olo, L, O) <= m) olo++;
        while (ohi < O && ad_start(ohi, L, O) <= m) ohi++;
        lo = olo, hi = ohi;
      }
      if (!pass && hi - lo > width) width = hi - lo;
      if (pass)
        for (int64_t j = 0; j < width; j++) tab[m * width + j] = lo + j < hi ? lo + j : -1;
    }
    if (!pass && (width == 0 || n * width > MAX_WIN)) return NULL;
    if (pass) {
      *w = width;
      return tab;
    }
  }
  return NULL;
}

/* Gathers v along dim with an (n, w) table: dim becomes (n, w); invalid slots
 * read position 0. Writes the (n, w) validity mask (i1). */
static tt_val_t table_gather(tt_shlo_fn_t* f, tt_val_t v, int dim, const int64_t* tab, int64_t n,
                             int64_t w, tt_val_t* valid) {
  const tt_type_t* tp = tt_shlo_type(f, v);
  if (!tp) return TT_SHLO_INVALID;
  tt_type_t t = *tp;
  int64_t* fixed = malloc((size_t)(n * w) * sizeof(int64_t));
  if (!fixed) {
    tt_shlo_fail(f, "out of memory");
    return TT_SHLO_INVALID;
  }
  for (int64_t i = 0; i < n * w; i++) fixed[i] = tab[i] < 0 ? 0 : tab[i];
  int64_t id[2] = {n * w, 1};
  tt_val_t idx = tt_l_reshape(f, tt_shlo_const_i64s(f, fixed, (int)(n * w)), 2, id);
  tt_val_t raw = tt_shlo_const_i64s(f, tab, (int)(n * w));
  free(fixed);
  tt_type_t gt = t;
  gt.dims[dim] = n * w;
  int64_t offs[TT_MAX_RANK], coll[1] = {dim}, slice[TT_MAX_RANK];
  int no = 0;
  for (int d = 0; d < t.rank; d++) {
    if (d != dim) offs[no++] = d;
    slice[d] = d == dim ? 1 : t.dims[d];
  }
  tt_val_t g = tt_lt_gather(f, v, idx, &gt, offs, no, coll, 1, coll, 1, 1, slice);
  int64_t sd[TT_MAX_RANK + 1];
  for (int d = 0, k = 0; d < t.rank; d++) {
    if (d == dim) sd[k++] = n, sd[k++] = w;
    else sd[k++] = t.dims[d];
  }
  g = tt_l_reshape(f, g, t.rank + 1, sd);
  int64_t nw[2] = {n, w};
  *valid = tt_l_compare(f, "GE", tt_l_reshape(f, raw, 2, nw), tt_l_full(f, TT_I64, 2, nw, 0.0));
  return g;
}

/* Window size of the adaptive average along dim d. */
static int64_t adaptive_count(const pool_p_t* p, int d, int64_t o, const void* ctx) {
  return ad_end(o, p->in[d], p->out[d]) - ad_start(o, p->in[d], p->out[d]);
}

/* Sums windows along each spatial dim in turn (forward: inputs -> outputs;
 * bwd: outputs -> inputs). */
static tt_val_t adaptive_sum(tt_lctx_t* c, tt_val_t v, const pool_p_t* p, bool bwd) {
  tt_shlo_fn_t* f = c->f;
  for (int d = 0; d < p->nsp; d++) {
    const tt_type_t* t = tt_shlo_type(f, v);
    if (!t) return TT_SHLO_INVALID;
    int dim = t->rank - p->nsp + d;
    int64_t n = bwd ? p->in[d] : p->out[d], w = 0;
    int64_t* tab = adaptive_table(p->in[d], p->out[d], bwd, &w);
    if (!tab) {
      tt_shlo_fail(f, "%s: adaptive pooling window table too large", c->op->name);
      return TT_SHLO_INVALID;
    }
    tt_val_t valid, g = table_gather(f, v, dim, tab, n, w, &valid);
    free(tab);
    const tt_type_t* gt = tt_shlo_type(f, g);
    if (!gt) return TT_SHLO_INVALID;
    int64_t bd[2] = {dim, dim + 1};
    valid = tt_lt_bcast_in_dim(f, valid, gt->rank, gt->dims, bd);
    g = tt_l_select(f, valid, g, tt_l_full(f, gt->dtype, gt->rank, gt->dims, 0.0));
    v = tt_lt_sum(f, g, 1u << (dim + 1));
  }
  return v;
}

static tt_status_t lower_adaptive_avg(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  bool bwd = POOL_KIND(c->op->param) == AAVG_BWD;
  pool_p_t p = {.nsp = POOL_NSP(c->op->param)};
  tt_dtype_t cdt = sum_dtype(tt_l_arg_dtype(c, bwd ? 1 : 0));
  tt_val_t v = batched(f, tt_l_convert(f, c->args[0].val, cdt), p.nsp);
  const tt_type_t* vt = tt_shlo_type(f, v);
  const tt_type_t* xt = tt_lt_arg_type(c, bwd ? 1 : 0);
  if (!vt || !xt) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  tt_type_t t = *vt;
  sizes(&p, xt, bwd ? &t : &c->out_types[0]);
  if (bwd) {
    v = tt_l_binary(f, "stablehlo.divide", v, dim_product(f, adaptive_count, NULL, &p, &t, cdt));
    v = adaptive_sum(c, v, &p, true);
  } else {
    v = adaptive_sum(c, v, &p, false);
    const tt_type_t* st = tt_shlo_type(f, v);
    if (!st) return NULL;
    tt_type_t s = *st;
    v = tt_l_binary(f, "stablehlo.divide", v, dim_product(f, adaptive_count, NULL, &p, &s, cdt));
  }
  if (tt_shlo_failed(f)) return NULL;
  return tt_l_set_out(c, 0, v);
}

static tt_status_t lower_adaptive_max(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  pool_p_t p = {.nsp = POOL_NSP(c->op->param)};
  tt_val_t x = batched(f, c->args[0].val, p.nsp);
  const tt_type_t* xtp = tt_shlo_type(f, x);
  if (!xtp) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  tt_type_t xt = *xtp;
  sizes(&p, &xt, &c->out_types[0]);
  tt_val_t vals[2] = {x, flat_index(f, &xt, p.nsp)}, masks[3];
  int64_t red[3];
  for (int d = 0; d < p.nsp; d++) {
    int dim = 2 + 2 * d; /* earlier dims became (out, w) pairs */
    int64_t w = 0;
    int64_t* tab = adaptive_table(p.in[d], p.out[d], false, &w);
    if (!tab) return tt_status_make(TT_UNIMPLEMENTED, "%s: adaptive pooling window table too large", c->op->name);
    for (int i = 0; i < 2; i++) vals[i] = table_gather(f, vals[i], dim, tab, p.out[d], w, &masks[d]);
    free(tab);
    red[d] = dim + 1;
  }
  const tt_type_t* gtp = tt_shlo_type(f, vals[0]);
  if (!gtp) return NULL;
  tt_type_t gt = *gtp;
  tt_val_t valid = TT_SHLO_INVALID;
  for (int d = 0; d < p.nsp; d++) {
    int64_t bd[2] = {2 + 2 * d, 3 + 2 * d};
    tt_val_t m = tt_lt_bcast_in_dim(f, masks[d], gt.rank, gt.dims, bd);
    valid = d ? tt_l_binary(f, "stablehlo.and", valid, m) : m;
  }
  tt_val_t inits[2] = {tt_lt_limit(f, xt.dtype, false), tt_lt_limit(f, TT_I64, true)};
  for (int i = 0; i < 2; i++)
    vals[i] = tt_l_select(f, valid, vals[i], tt_lt_splat(f, inits[i], gt.rank, gt.dims));
  tt_type_t rt[2];
  rt[0] = tt_type_scalar(xt.dtype);
  for (int k = 0; k < gt.rank; k++)
    if (k < 2 || (k % 2) == 0) rt[0].dims[rt[0].rank++] = gt.dims[k];
  rt[1] = rt[0];
  rt[1].dtype = TT_I64;
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "dimensions = ");
  tt_shlo_fmt_i64_array(&a, red, p.nsp);
  tt_val_t ops[4] = {vals[0], vals[1], inits[0], inits[1]}, r[2];
  tt_shlo_op_multi(f, "stablehlo.reduce", ops, 4, rt, 2, a.data, argmax_region(f, xt.dtype), r);
  tt_sbuf_free(&a);
  if (tt_shlo_failed(f)) return NULL;
  tt_status_t st = tt_l_set_out(c, 0, r[0]);
  return st ? st : tt_l_set_out(c, 1, r[1]);
}

#define ROW2(name, fn, kind, nsp, out)                 \
  {"aten::" name, fn, POOL(kind, nsp), 0},             \
  {"aten::" name "." out, fn, POOL(kind, nsp), 0}

const tt_lower_entry_t tt_lower_pool[] = {
    ROW2("max_pool2d_with_indices", lower_max_pool, MAXP, 2, "out"),
    ROW2("max_pool3d_with_indices", lower_max_pool, MAXP, 3, "out"),
    ROW2("max_pool2d_with_indices_backward", lower_max_bwd, MAXP_BWD, 2, "grad_input"),
    ROW2("max_pool3d_with_indices_backward", lower_max_bwd, MAXP_BWD, 3, "grad_input"),
    ROW2("avg_pool2d", lower_avg_pool, AVGP, 2, "out"),
    ROW2("avg_pool3d", lower_avg_pool, AVGP, 3, "out"),
    ROW2("avg_pool2d_backward", lower_avg_bwd, AVGP_BWD, 2, "grad_input"),
    ROW2("avg_pool3d_backward", lower_avg_bwd, AVGP_BWD, 3, "grad_input"),
    ROW2("_adaptive_avg_pool2d", lower_adaptive_avg, AAVG, 2, "out"),
    ROW2("_adaptive_avg_pool3d", lower_adaptive_avg, AAVG, 3, "out"),
    ROW2("_adaptive_avg_pool2d_backward", lower_adaptive_avg, AAVG_BWD, 2, "out"),
    ROW2("_adaptive_avg_pool3d_backward", lower_adaptive_avg, AAVG_BWD, 3, "out"),
    ROW2("adaptive_max_pool2d", lower_adaptive_max, AMAX, 2, "out"),
    ROW2("adaptive_max_pool3d", lower_adaptive_max, AMAX, 3, "out"),
    ROW2("adaptive_max_pool2d_backward", lower_max_bwd, AMAX_BWD, 2, "grad_input"),
    ROW2("adaptive_max_pool3d_backward", lower_max_bwd, AMAX_BWD, 3, "grad_input"),
};
const int tt_lower_pool_count = TT_TABLE_COUNT(tt_lower_pool);
