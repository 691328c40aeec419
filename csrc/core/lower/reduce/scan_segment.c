/* segment_reduce and _segment_reduce_backward (listed in scan.c's table).
 * Segments are runs along `axis` given by lengths (or offsets) shaped
 * data.shape[:axis] + (S,). Each position j gets its segment id (the number
 * of cumulative lengths <= j; S past the end), and a scatter along axis
 * reduces into S + 1 slots (the last one drops the tail). Reductions run in
 * the opmath dtype; results follow CPU's kernel: an empty segment gives
 * `initial` if given, else 0 (sum), 1 (prod), -inf (max), inf (min), NaN
 * (mean); mean divides initial + sum by the length. */
#include <math.h>
#include <string.h>

#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"

tt_status_t tt__scan_segment_reduce(tt_lctx_t* c);
tt_status_t tt__scan_segment_reduce_backward(tt_lctx_t* c);

static tt_val_t kl(tt_shlo_fn_t* f, tt_val_t like, double v) { return tt_shlo_const(f, tt_shlo_type(f, like), v); }
static tt_val_t bin(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) { return tt_l_binary(f, op, a, b); }
static tt_val_t isnan_(tt_shlo_fn_t* f, tt_val_t a) { return tt_l_compare(f, "NE", a, a); }

enum { SEG_SUM, SEG_MEAN, SEG_MAX, SEG_MIN, SEG_PROD };

typedef struct seg {
  int red, axis;
  int64_t s;          /* segments */
  tt_type_t dt;       /* data type (opmath dtype) */
  tt_val_t len;       /* (B..., S) i64 lengths */
  tt_val_t id;        /* data-shaped i64 segment id of each position, S past the end */
  tt_type_t ot;       /* output type: data with axis resized to S (opmath dtype) */
} seg_t;

static int parse_reduce(const char* r) {
  if (!r) return -1;
  if (!strcmp(r, "sum")) return SEG_SUM;
  if (!strcmp(r, "mean")) return SEG_MEAN;
  if (!strcmp(r, "max")) return SEG_MAX;
  if (!strcmp(r, "min")) return SEG_MIN;
  if (!strcmp(r, "prod")) return SEG_PROD;
  return -1;
}

/* Plans the segments of data from lengths (arg il) or offsets (arg io). */
static tt_status_t seg_plan(tt_lctx_t* c, tt_val_t data, const char* reduce, int il, int io, int64_t axis_arg,
                            bool check_sum, seg_t* g) {
  tt_shlo_fn_t* f = c->f;
  memset(g, 0, sizeof(*g));
  g->red = parse_reduce(reduce);
  if (g->red < 0) return tt_status_make(TT_INVALID_ARGUMENT, "segment_reduce(): unsupported reduction '%s'", reduce ? reduce : "");
  tt_type_t dt = tt__sh_type(f, data);
  if (dt.rank == 0) return tt_status_make(TT_INVALID_ARGUMENT, "segment_reduce(): data must have at least one dimension");
  int axis = (int)tt_l_wrap_dim(axis_arg, dt.rank);
  tt_val_t len;
  if (tt_lt_has(c, il)) {
    len = tt_l_convert(f, c->args[il].val, TT_I64);
  } else if (tt_lt_has(c, io)) {
    tt_val_t off = tt_l_convert(f, c->args[io].val, TT_I64);
    tt_type_t t = tt__sh_type(f, off);
    int last = t.rank - 1;
    len = bin(f, "stablehlo.subtract", tt_lt_slice_dim(f, off, last, 1, t.dims[last]),
              tt_lt_slice_dim(f, off, last, 0, t.dims[last] - 1));
  } else {
    return tt_status_make(TT_INVALID_ARGUMENT, "segment_reduce(): Either lengths or offsets must be defined");
  }
  tt_type_t lt = tt__sh_type(f, len);
  if (lt.rank != axis + 1)
    return tt_status_make(TT_INVALID_ARGUMENT, "segment_reduce(): Expected axis to be the last dimension of lengths");
  int64_t s = lt.dims[axis], d = dt.dims[axis];
  tt_val_t cum = tt_lt_scan(f, len, axis, "stablehlo.add");
  if (check_sum) {
    tt_val_t tot = tt_lt_slice_dim(f, cum, axis, s ? s - 1 : 0, s ? s : 0);
    tt_val_t bad = s ? tt_l_compare(f, "NE", tot, kl(f, tot, (double)d)) : tt_l_compare(f, "NE", kl(f, tot, 0.0), kl(f, tot, (double)d));
    bad = tt_l_binary(f, "stablehlo.or", tt_lt_reduce(f, bad, (1u << lt.rank) - 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0)),
                      tt_lt_reduce(f, tt_l_compare(f, "LT", len, kl(f, len, 0.0)), (1u << lt.rank) - 1u, "stablehlo.or",
                                   tt_lt_const0(f, TT_BOOL, 0.0)));
    tt_shlo_add_check(f, bad, TT_INTERNAL,
                      "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe.");
  }
  /* id[b..., j] = #{k : cum[b..., k] <= j}: compare (B..., D, S) */
  int64_t cd[TT_MAX_RANK + 1], bd[TT_MAX_RANK + 1];
  for (int i = 0; i < axis; i++) cd[i] = dt.dims[i], bd[i] = i;
  cd[axis] = d;
  cd[axis + 1] = s;
  bd[axis] = axis + 1;
  tt_val_t cb = tt_lt_bcast_in_dim(f, cum, axis + 2, cd, bd);
  tt_val_t jb = tt_lt_iota(f, TT_I64, axis + 2, cd, axis);
  tt_val_t id = tt_lt_sum(f, tt_l_convert(f, tt_l_compare(f, "LE", cb, jb), TT_I64), 1u << (axis + 1)); /* (B..., D) */
  int64_t all[TT_MAX_RANK];
  for (int i = 0; i <= axis; i++) all[i] = i;
  g->id = tt_lt_bcast_in_dim(f, id, dt.rank, dt.dims, all);
  g->len = len;
  g->axis = axis;
  g->s = s;
  g->dt = dt;
  g->dt.dtype = tt_l_opmath(dt.dtype);
  g->ot = g->dt;
  g->ot.dims[axis] = s;
  return NULL;
}

/* A per-segment value (B..., S) broadcast to the output shape. */
static tt_val_t per_seg(tt_shlo_fn_t* f, const seg_t* g, tt_val_t v) {
  int64_t all[TT_MAX_RANK];
  for (int i = 0; i <= g->axis; i++) all[i] = i;
  return tt_lt_bcast_in_dim(f, v, g->ot.rank, g->ot.dims, all);
}

/* x (data-shaped) reduced into the segments from base (0-d start value). */
static tt_val_t seg_scatter(tt_shlo_fn_t* f, const seg_t* g, tt_val_t x, tt_val_t base0, const char* body) {
  tt_type_t bt = g->ot;
  bt.dtype = tt__sh_type(f, x).dtype;
  bt.dims[g->axis] = g->s + 1;
  tt_val_t base = tt_lt_splat(f, base0, bt.rank, bt.dims);
  if (tt_type_numel(&g->dt) > 0) base = tt_lt_scatter_dim(f, base, g->axis, g->id, x, body);
  return tt_lt_slice_dim(f, base, g->axis, 0, g->s);
}

/* A per-segment tensor (output-shaped) read back at every data position
 * (positions past the end read the last segment; callers mask them). */
static tt_val_t seg_gather(tt_shlo_fn_t* f, const seg_t* g, tt_val_t v) {
  tt_val_t id = bin(f, "stablehlo.minimum", g->id, kl(f, g->id, (double)(g->s ? g->s - 1 : 0)));
  return tt_lt_gather_dim(f, v, g->axis, id);
}

static const char* body_of(int red) {
  return red == SEG_MAX ? "stablehlo.maximum" : red == SEG_MIN ? "stablehlo.minimum"
                                              : red == SEG_PROD ? "stablehlo.multiply" : "stablehlo.add";
}

static tt_val_t start_value(tt_lctx_t* c, int red, int iinit, tt_dtype_t cdt) {
  if (tt_lt_has(c, iinit)) return tt_lt_scalar(c, iinit, cdt);
  double v = red == SEG_MAX ? -INFINITY : red == SEG_MIN ? INFINITY : red == SEG_PROD ? 1.0 : 0.0;
  return tt_lt_const0(c->f, cdt, v);
}

/* segment_reduce(data, reduce, lengths, indices, offsets, axis, unsafe, initial) */
tt_status_t tt__scan_segment_reduce(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  if (tt_lt_has(c, 3) && !tt_lt_has(c, 2) && !tt_lt_has(c, 4))
    return tt_status_make(TT_UNIMPLEMENTED, "segment_reduce(): indices based reduction is not supported yet.");
  bool unsafe = c->args[6].kind == TT_ARG_BOOL && c->args[6].i;
  seg_t g;
  TT_RETURN_IF_ERROR(seg_plan(c, c->args[0].val, c->args[1].str, 2, 4, c->args[5].i, !unsafe, &g));
  if (tt_type_numel(&g.ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], 0.0));
  tt_dtype_t cdt = g.dt.dtype;
  tt_val_t x = tt_l_convert(f, c->args[0].val, cdt);
  tt_val_t r = seg_scatter(f, &g, x, start_value(c, g.red, 7, cdt), body_of(g.red));
  if (g.red == SEG_MEAN) {
    tt_val_t len = per_seg(f, &g, tt_l_convert(f, g.len, cdt));
    tt_val_t empty = tt_l_compare(f, "EQ", len, kl(f, len, 0.0));
    tt_val_t q = bin(f, "stablehlo.divide", r, tt_l_select(f, empty, kl(f, len, 1.0), len));
    q = tt_l_select(f, isnan_(f, r), r, q);
    r = tt_l_select(f, empty, tt_lt_has(c, 7) ? r : kl(f, r, NAN), q);
  }
  return tt_l_set_out(c, 0, r);
}

/* _segment_reduce_backward(grad, output, data, reduce, lengths, offsets,
 * axis, initial): sum: grad of the segment; mean: / length; max / min: to
 * the elements equal to the result (or NaN), a positive gradient split
 * evenly among them (what CPU computes); prod: grad * out
 * / x, or grad times the product of the others where x is 0 or NaN. */
tt_status_t tt__scan_segment_reduce_backward(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  seg_t g;
  TT_RETURN_IF_ERROR(seg_plan(c, c->args[2].val, c->args[3].str, 4, 5, c->args[6].i, false, &g));
  tt_dtype_t cdt = g.dt.dtype;
  if (tt_type_numel(&g.dt) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], 0.0));
  tt_val_t x = tt_l_convert(f, c->args[2].val, cdt);
  tt_val_t gy = seg_gather(f, &g, tt_l_convert(f, c->args[0].val, cdt));
  tt_val_t y = seg_gather(f, &g, tt_l_convert(f, c->args[1].val, cdt));
  tt_val_t in = tt_l_compare(f, "LT", g.id, kl(f, g.id, (double)g.s));
  tt_val_t zero = kl(f, x, 0.0), one = kl(f, x, 1.0);
  tt_val_t r = gy;
  if (g.red == SEG_MEAN) {
    tt_val_t len = seg_gather(f, &g, per_seg(f, &g, tt_l_convert(f, g.len, cdt)));
    r = bin(f, "stablehlo.divide", gy, bin(f, "stablehlo.maximum", len, one));
  } else if (g.red == SEG_MAX || g.red == SEG_MIN) {
    tt_val_t hit = bin(f, "stablehlo.or", isnan_(f, x), tt_l_compare(f, "EQ", x, y));
    tt_val_t hx = tt_l_select(f, hit, one, zero);
    tt_val_t cnt = seg_gather(f, &g, seg_scatter(f, &g, hx, tt_lt_const0(f, cdt, 0.0), "stablehlo.add"));
    /* CPU (2.13) divides only positive gradients among tied elements */
    tt_val_t split = bin(f, "stablehlo.divide", gy, bin(f, "stablehlo.maximum", cnt, one));
    r = tt_l_select(f, hit, tt_l_select(f, tt_l_compare(f, "GT", gy, zero), split, gy), zero);
  } else if (g.red == SEG_PROD) {
    tt_val_t xn = isnan_(f, x);
    tt_val_t special = bin(f, "stablehlo.or", xn, tt_l_compare(f, "EQ", x, zero));
    tt_val_t pnz = seg_gather(f, &g, seg_scatter(f, &g, tt_l_select(f, special, one, x), start_value(c, SEG_PROD, 7, cdt),
                                                 "stablehlo.multiply"));
    tt_val_t ns = seg_gather(f, &g, seg_scatter(f, &g, tt_l_select(f, special, one, zero), tt_lt_const0(f, cdt, 0.0), "stablehlo.add"));
    tt_val_t nn = seg_gather(f, &g, seg_scatter(f, &g, tt_l_select(f, xn, one, zero), tt_lt_const0(f, cdt, 0.0), "stablehlo.add"));
    tt_val_t other_nan = tt_l_compare(f, "GT", bin(f, "stablehlo.subtract", nn, tt_l_select(f, xn, one, zero)), zero);
    tt_val_t excl = tt_l_select(f, tt_l_compare(f, "EQ", ns, one), pnz,
                                tt_l_select(f, other_nan, kl(f, x, NAN), bin(f, "stablehlo.multiply", zero, pnz)));
    tt_val_t plain = bin(f, "stablehlo.divide", bin(f, "stablehlo.multiply", gy, y), x);
    r = tt_l_select(f, special, bin(f, "stablehlo.multiply", gy, excl), plain);
  }
  return tt_l_set_out(c, 0, tt_l_select(f, in, r, zero));
}
