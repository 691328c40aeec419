/* _grouped_mm(self, mat2, offs?, bias?, out_dtype?): the products of
 * mixture-of-experts layers, in PyTorch's four forms (G groups):
 *   2-D x 3-D, offs: a (M, K), b (G, K, N) -> (M, N); rows of a in group g
 *                    times b[g]
 *   3-D x 2-D, offs: a (G, M, K), b (K, N) -> (M, N); columns of b in group g
 *                    times a[g]
 *   2-D x 2-D, offs: a (M, K), b (K, N) -> (G, M, N); out[g] is the product
 *                    of the columns of a and rows of b in group g
 *   3-D x 3-D:       bmm.
 * offs (int32, G) holds each group's end: group g is [offs[g-1], offs[g])
 * (the first starts at 0), as PyTorch's fallback slices it (an end before
 * its start: an empty group). Where groups overlap (offsets that decrease)
 * the fallback's later group overwrites the rows or columns of an earlier
 * one, and so does this lowering (each row takes the last group that holds
 * it). Rows (columns) in no group, past the last offset, are 0 here; PyTorch
 * leaves them unwritten (CPU: whatever the allocation held). 2-D x 2-D: the
 * groups are independent sums, so overlapping groups each take their part.
 *
 * The offsets stay runtime values (one program per shape, no host read).
 * What each form costs:
 * - 2-D x 3-D (MoE's forward, and its input gradient) and 2-D x 2-D (the
 *   weight gradient) loop over the groups and, in each, over the group's
 *   rows (K) in tiles of TILE (stablehlo.while with a runtime trip count):
 *   at most (M + G * TILE) K N multiply-adds, against M K N for the useful
 *   product, and no intermediate larger than a tile's product;
 * - 3-D x 2-D (only the gradient of 2-D x 2-D) is masked: each column's
 *   group from comparisons with the offsets, the product with every group
 *   ((G, M, N), G times the useful flops) and a select of the column's.
 * Selects, not multiplications by 0/1, so that an inf or NaN in another
 * group's values never reaches a result. f16/bf16 multiply in f32 and round
 * once, as the matmul family. */
#include "../lower_loop.h"
#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

/* dot_general at HIGHEST precision: lhs / rhs batch dims 0..nb-1,
 * contracting dim lc of a with rc of b; the result type rt. */
static tt_val_t gdot(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, int nb, int lc, int rc, const tt_type_t* rt) {
  return tt_shlo_opf(f, "stablehlo.dot_general", (tt_val_t[]){a, b}, 2, rt,
                     "dot_dimension_numbers = #stablehlo.dot<%slhs_contracting_dimensions = [%d], "
                     "rhs_contracting_dimensions = [%d]>, precision_config = "
                     "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]",
                     nb ? "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], " : "", lc, rc);
}

/* in[i, g] (i1, (n, G)): index i lies in group g, [start_g, end_g). */
static tt_val_t in_group(tt_shlo_fn_t* f, tt_val_t offs, int64_t n, int64_t G) {
  tt_val_t ends = tt_l_convert(f, offs, TT_I64);
  tt_type_t one = tt_type_make(TT_I64, 1, (int64_t[]){1});
  tt_val_t parts[2] = {tt_shlo_const_i64(f, &one, 0), tt_lt_slice_dim(f, ends, 0, 0, G - 1)};
  tt_val_t starts = G > 1 ? tt_lt_concat(f, parts, 2, 0) : parts[0];
  int64_t d[2] = {n, G}, b1[1] = {1};
  tt_val_t i = tt_lt_iota(f, TT_I64, 2, d, 0);
  tt_val_t ge = tt_l_compare(f, "GE", i, tt_lt_bcast_in_dim(f, starts, 2, d, b1));
  tt_val_t lt = tt_l_compare(f, "LT", i, tt_lt_bcast_in_dim(f, ends, 2, d, b1));
  return tt_l_binary(f, "stablehlo.and", ge, lt);
}

/* pick[i, g] (i1, (n, G)): g is the last group that holds index i (none: all
 * false), the group whose product the fallback leaves at i. */
static tt_val_t last_group(tt_shlo_fn_t* f, tt_val_t offs, int64_t n, int64_t G) {
  int64_t d[2] = {n, G}, b0[1] = {0};
  tt_val_t g = tt_lt_iota(f, TT_I64, 2, d, 1);
  tt_type_t t = tt_type_make(TT_I64, 2, d);
  tt_val_t held = tt_l_select(f, in_group(f, offs, n, G), g, tt_shlo_const_i64(f, &t, -1));
  tt_val_t gid = tt_lt_reduce(f, held, 1u << 1, "stablehlo.maximum", tt_lt_const0(f, TT_I64, -1));
  return tt_l_compare(f, "EQ", g, tt_lt_bcast_in_dim(f, gid, 2, d, b0));
}

/* sum over dim gd of select(pick, p, 0): the picked group's product (exact:
 * every other term is 0). pick: (n, G) broadcast into p's dims pdims. */
static tt_val_t keep_picked(tt_shlo_fn_t* f, tt_val_t p, tt_val_t pick, const int64_t* pdims, int gd) {
  const tt_type_t* pt = tt_shlo_type(f, p);
  if (!pt) return TT_SHLO_INVALID;
  tt_type_t t = *pt;
  tt_val_t m = tt_lt_bcast_in_dim(f, pick, 3, t.dims, pdims);
  return tt_lt_sum(f, tt_l_select(f, m, p, tt_shlo_const(f, &t, 0.0)), 1u << gd);
}


/* ---- 2-D x 3-D by row tiles --------------------------------------------------
 * A loop over the groups, and in each over the group's rows in tiles of
 * TILE rows: a tile is a dynamic_slice of a (at its start, moved back to fit
 * inside a near the end), its product with b[g], and the rows of the tile
 * that belong to the group replace out's there (select, dynamic_update_slice).
 * sum_g ceil(rows_g / TILE) tiles: at most (M + G * TILE) K N multiply-adds,
 * against G M K N for the masked form. Groups in order: a later group
 * overwrites the rows of an earlier one, as PyTorch's fallback. */
#define TILE 128

/* The sizes of a tiled loop: a (M, K), b's matrices (K, N), G groups, tiles of T. */
typedef struct rows_loop {
  int64_t M, K, N, G, T;
  tt_dtype_t dt;
} rows_loop_t;

static tt_val_t i64(tt_shlo_fn_t* f, int64_t v) { return tt_lt_const0(f, TT_I64, (double)v); }
static tt_val_t bin(tt_shlo_fn_t* f, const char* op, tt_val_t x, tt_val_t y) { return tt_l_binary(f, op, x, y); }

static tt_val_t dyn_slice(tt_shlo_fn_t* f, tt_val_t v, const tt_val_t* starts, const int64_t* sizes, int rank,
                          tt_dtype_t dt) {
  tt_val_t ops[4] = {v};
  for (int i = 0; i < rank; i++) ops[i + 1] = starts[i];
  tt_type_t t = tt_type_make(dt, rank, sizes);
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "slice_sizes = ");
  tt_shlo_fmt_i64_array(&a, sizes, rank);
  tt_val_t r = tt_shlo_op(f, "stablehlo.dynamic_slice", ops, rank + 1, &t, a.data);
  tt_sbuf_free(&a);
  return r;
}

static void group_range(tt_shlo_fn_t* f, tt_val_t ends, tt_val_t g, int64_t size, int64_t T, tt_val_t* s,
                        tt_val_t* e, tt_val_t* n);

/* vals: out (M, N), a (M, K), bg (K, N), s, e (the group's rows [s, e)) */
static void tile_step(tt_shlo_fn_t* f, tt_val_t t, tt_val_t* vals, void* ud) {
  const rows_loop_t* L = ud;
  tt_val_t r0 = bin(f, "stablehlo.add", vals[3], bin(f, "stablehlo.multiply", t, i64(f, L->T)));
  tt_val_t start = bin(f, "stablehlo.minimum", r0, i64(f, L->M - L->T));
  tt_val_t zero = i64(f, 0);
  tt_val_t at = dyn_slice(f, vals[1], (tt_val_t[]){start, zero}, (int64_t[]){L->T, L->K}, 2, L->dt);
  tt_type_t pt = tt_type_make(L->dt, 2, (int64_t[]){L->T, L->N});
  tt_val_t p = gdot(f, at, vals[2], 0, 1, 0, &pt);
  int64_t d[2] = {L->T, L->N};
  tt_val_t rows = bin(f, "stablehlo.add", tt_lt_iota(f, TT_I64, 2, d, 0), tt_lt_splat(f, start, 2, d));
  tt_val_t keep = bin(f, "stablehlo.and", tt_l_compare(f, "GE", rows, tt_lt_splat(f, r0, 2, d)),
                      tt_l_compare(f, "LT", rows, tt_lt_splat(f, vals[4], 2, d)));
  tt_val_t old = dyn_slice(f, vals[0], (tt_val_t[]){start, zero}, d, 2, L->dt);
  tt_val_t ops[4] = {vals[0], tt_l_select(f, keep, p, old), start, zero};
  tt_type_t ot = tt_type_make(L->dt, 2, (int64_t[]){L->M, L->N});
  vals[0] = tt_shlo_op(f, "stablehlo.dynamic_update_slice", ops, 4, &ot, NULL);
}

/* vals: out (M, N), a (M, K), b (G, K, N), ends (G, i64) */
static void group_step(tt_shlo_fn_t* f, tt_val_t g, tt_val_t* vals, void* ud) {
  rows_loop_t* L = ud;
  tt_val_t s, e, n, zero = i64(f, 0);
  group_range(f, vals[3], g, L->M, L->T, &s, &e, &n);
  tt_val_t bg = dyn_slice(f, vals[2], (tt_val_t[]){g, zero, zero}, (int64_t[]){1, L->K, L->N}, 3, L->dt);
  tt_val_t inner[5] = {vals[0], vals[1], tt_l_reshape(f, bg, 2, (int64_t[]){L->K, L->N}), s, e};
  tt_l_fori_dyn(f, n, inner, 5, tile_step, L);
  vals[0] = inner[0];
}

static tt_val_t rows_by_tiles(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, tt_val_t offs, int64_t M, int64_t K,
                              int64_t N, int64_t G, tt_dtype_t dt) {
  rows_loop_t L = {M, K, N, G, M < TILE ? M : TILE, dt};
  tt_type_t ot = tt_type_make(dt, 2, (int64_t[]){M, N});
  tt_val_t vals[4] = {tt_shlo_const(f, &ot, 0.0), a, b, tt_l_convert(f, offs, TT_I64)};
  tt_l_fori(f, G, vals, 4, group_step, &L);
  return vals[0];
}

/* ---- 2-D x 2-D by K tiles ----------------------------------------------------
 * The same loops over K: out[g] accumulates the products of tiles of a's
 * columns and b's rows, those outside [s, e) of the tile set to 0 by selects
 * (an inf or NaN there never reaches the sum). At most (K + G * TILE) M N
 * multiply-adds. */

/* vals: acc (M, N), a (M, K), b (K, N), s, e */
static void k_tile_step(tt_shlo_fn_t* f, tt_val_t t, tt_val_t* vals, void* ud) {
  const rows_loop_t* L = ud;
  tt_val_t r0 = bin(f, "stablehlo.add", vals[3], bin(f, "stablehlo.multiply", t, i64(f, L->T)));
  tt_val_t start = bin(f, "stablehlo.minimum", r0, i64(f, L->K - L->T));
  tt_val_t zero = i64(f, 0);
  int64_t da[2] = {L->M, L->T}, db[2] = {L->T, L->N};
  tt_val_t at = dyn_slice(f, vals[1], (tt_val_t[]){zero, start}, da, 2, L->dt);
  tt_val_t bt = dyn_slice(f, vals[2], (tt_val_t[]){start, zero}, db, 2, L->dt);
  tt_val_t ka = bin(f, "stablehlo.add", tt_lt_iota(f, TT_I64, 2, da, 1), tt_lt_splat(f, start, 2, da));
  tt_val_t kb = bin(f, "stablehlo.add", tt_lt_iota(f, TT_I64, 2, db, 0), tt_lt_splat(f, start, 2, db));
  tt_val_t ina = bin(f, "stablehlo.and", tt_l_compare(f, "GE", ka, tt_lt_splat(f, r0, 2, da)),
                     tt_l_compare(f, "LT", ka, tt_lt_splat(f, vals[4], 2, da)));
  tt_val_t inb = bin(f, "stablehlo.and", tt_l_compare(f, "GE", kb, tt_lt_splat(f, r0, 2, db)),
                     tt_l_compare(f, "LT", kb, tt_lt_splat(f, vals[4], 2, db)));
  at = tt_l_select(f, ina, at, tt_l_full(f, L->dt, 2, da, 0.0));
  bt = tt_l_select(f, inb, bt, tt_l_full(f, L->dt, 2, db, 0.0));
  tt_type_t pt = tt_type_make(L->dt, 2, (int64_t[]){L->M, L->N});
  vals[0] = bin(f, "stablehlo.add", vals[0], gdot(f, at, bt, 0, 1, 0, &pt));
}

/* The group's [s, e) of `size` from ends (G, i64), clamped, and its tile count. */
static void group_range(tt_shlo_fn_t* f, tt_val_t ends, tt_val_t g, int64_t size, int64_t T, tt_val_t* s,
                        tt_val_t* e, tt_val_t* n) {
  tt_val_t zero = i64(f, 0), m = i64(f, size);
  tt_val_t gm1 = bin(f, "stablehlo.maximum", bin(f, "stablehlo.subtract", g, i64(f, 1)), zero);
  *e = tt_l_reshape(f, dyn_slice(f, ends, &g, (int64_t[]){1}, 1, TT_I64), 0, NULL);
  *s = tt_l_reshape(f, dyn_slice(f, ends, &gm1, (int64_t[]){1}, 1, TT_I64), 0, NULL);
  *s = tt_l_select(f, tt_l_compare(f, "EQ", g, zero), zero, *s);
  *s = tt_shlo_op(f, "stablehlo.clamp", (tt_val_t[]){zero, *s, m}, 3, tt_shlo_type(f, zero), NULL);
  *e = tt_shlo_op(f, "stablehlo.clamp", (tt_val_t[]){*s, *e, m}, 3, tt_shlo_type(f, zero), NULL);
  *n = bin(f, "stablehlo.divide", bin(f, "stablehlo.add", bin(f, "stablehlo.subtract", *e, *s), i64(f, T - 1)),
           i64(f, T));
}

/* vals: out (G, M, N), a (M, K), b (K, N), ends (G, i64) */
static void k_group_step(tt_shlo_fn_t* f, tt_val_t g, tt_val_t* vals, void* ud) {
  rows_loop_t* L = ud;
  tt_val_t s, e, n, zero = i64(f, 0);
  group_range(f, vals[3], g, L->K, L->T, &s, &e, &n);
  tt_val_t inner[5] = {tt_l_full(f, L->dt, 2, (int64_t[]){L->M, L->N}, 0.0), vals[1], vals[2], s, e};
  tt_l_fori_dyn(f, n, inner, 5, k_tile_step, L);
  tt_val_t acc = tt_l_reshape(f, inner[0], 3, (int64_t[]){1, L->M, L->N});
  tt_val_t ops[5] = {vals[0], acc, g, zero, zero};
  tt_type_t ot = tt_type_make(L->dt, 3, (int64_t[]){L->G, L->M, L->N});
  vals[0] = tt_shlo_op(f, "stablehlo.dynamic_update_slice", ops, 5, &ot, NULL);
}

static tt_val_t k_by_tiles(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, tt_val_t offs, int64_t M, int64_t K,
                           int64_t N, int64_t G, tt_dtype_t dt) {
  rows_loop_t L = {M, K, N, G, K < TILE ? K : TILE, dt};
  tt_type_t ot = tt_type_make(dt, 3, (int64_t[]){G, M, N});
  if (K == 0) return tt_shlo_const(f, &ot, 0.0);
  tt_val_t vals[4] = {tt_shlo_const(f, &ot, 0.0), a, b, tt_l_convert(f, offs, TT_I64)};
  tt_l_fori(f, G, vals, 4, k_group_step, &L);
  return vals[0];
}

static tt_status_t lower_grouped_mm(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  const tt_type_t *at = tt_lt_arg_type(c, 0), *bt = tt_lt_arg_type(c, 1);
  if (!at || !bt) return tt_status_make(TT_INTERNAL, "%s: missing operand", c->op->name);
  if (at->dtype != bt->dtype || !tt_dtype_is_float(at->dtype) || tt_dtype_is_f8(at->dtype))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected two float matrices of one dtype, got %s and %s",
                          c->op->name, tt_dtype_name(at->dtype), tt_dtype_name(bt->dtype));
  if (tt_lt_has(c, 3))
    return tt_status_make(TT_UNIMPLEMENTED, "%s: bias is not supported (nor by PyTorch's kernels)", c->op->name);
  bool a2 = at->rank == 2, b2 = bt->rank == 2, offs = tt_lt_has(c, 2);
  if (offs != (a2 || b2))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: offsets are needed with a 2-D operand, and only then",
                          c->op->name);
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_dtype_t cdt = tt_l_opmath(at->dtype);
  tt_val_t a = tt_l_convert(f, c->args[0].val, cdt), b = tt_l_convert(f, c->args[1].val, cdt);
  tt_val_t o = offs ? c->args[2].val : TT_SHLO_INVALID;
  const tt_type_t* otp = offs ? tt_lt_arg_type(c, 2) : NULL;
  int64_t G = otp ? otp->dims[0] : at->dims[0];
  tt_val_t r;
  if (!a2 && !b2) { /* bmm */
    tt_type_t rt = tt_type_make(cdt, 3, (int64_t[]){at->dims[0], at->dims[1], bt->dims[2]});
    r = gdot(f, a, b, 1, 2, 1, &rt);
  } else if (G == 0) { /* no groups: nothing is written */
    tt_type_t zt = *ot;
    zt.dtype = cdt;
    r = tt_shlo_const(f, &zt, 0.0);
  } else if (a2 && !b2) { /* rows of a by group, in tiles */
    r = rows_by_tiles(f, a, b, o, at->dims[0], at->dims[1], bt->dims[2], G, cdt);
  } else if (!a2 && b2) { /* columns of b by group: (G, M, N) products, one kept per column */
    int64_t M = at->dims[1], N = bt->dims[1];
    tt_type_t pt = tt_type_make(cdt, 3, (int64_t[]){G, M, N});
    r = keep_picked(f, gdot(f, a, b, 0, 2, 0, &pt), last_group(f, o, N, G), (int64_t[]){2, 0}, 0);
  } else { /* K by group, in tiles */
    r = k_by_tiles(f, a, b, o, at->dims[0], at->dims[1], bt->dims[1], G, cdt);
  }
  return tt_l_set_out(c, 0, tt_l_convert(f, r, ot->dtype));
}

const tt_lower_entry_t tt_lower_grouped_mm[] = {
    {"aten::_grouped_mm", lower_grouped_mm, 0, 0},
};
const int tt_lower_grouped_mm_count = TT_TABLE_COUNT(tt_lower_grouped_mm);
