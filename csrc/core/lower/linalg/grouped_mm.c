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
 * The offsets stay runtime values (one program per shape, no host read):
 * each row's group comes from comparisons with the offsets, and the product
 * is masked. What it costs: 2-D x 3-D and 3-D x 2-D compute the product of
 * every row with every group's matrix (G times the flops of the useful
 * product; an (M, G, N) f32 intermediate) and keep one group's by a select;
 * 2-D x 2-D contracts all of K for each group (G times the flops) over
 * masked copies of a and b ((G, M, K) and (G, K, N)). Selects, not
 * multiplications by 0/1, so that an inf or NaN in another group's values
 * never reaches a result. f16/bf16 multiply in f32 and round once, as the
 * matmul family. */
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
  } else if (a2 && !b2) { /* rows of a by group: (M, G, N) products, one kept per row */
    int64_t M = at->dims[0], N = bt->dims[2];
    tt_type_t pt = tt_type_make(cdt, 3, (int64_t[]){M, G, N});
    r = keep_picked(f, gdot(f, a, b, 0, 1, 1, &pt), last_group(f, o, M, G), (int64_t[]){0, 1}, 1);
  } else if (!a2 && b2) { /* columns of b by group: (G, M, N) products, one kept per column */
    int64_t M = at->dims[1], N = bt->dims[1];
    tt_type_t pt = tt_type_make(cdt, 3, (int64_t[]){G, M, N});
    r = keep_picked(f, gdot(f, a, b, 0, 2, 0, &pt), last_group(f, o, N, G), (int64_t[]){2, 0}, 0);
  } else { /* K by group: masked copies of a and b, one product per group */
    int64_t M = at->dims[0], K = at->dims[1], N = bt->dims[1];
    tt_val_t in = in_group(f, o, K, G); /* (K, G) */
    int64_t ad[3] = {G, M, K}, bd[3] = {G, K, N};
    tt_type_t a3 = tt_type_make(cdt, 3, ad), b3 = tt_type_make(cdt, 3, bd);
    tt_val_t am = tt_l_select(f, tt_lt_bcast_in_dim(f, in, 3, ad, (int64_t[]){2, 0}),
                              tt_lt_bcast_in_dim(f, a, 3, ad, (int64_t[]){1, 2}), tt_shlo_const(f, &a3, 0.0));
    tt_val_t bm = tt_l_select(f, tt_lt_bcast_in_dim(f, in, 3, bd, (int64_t[]){1, 0}),
                              tt_lt_bcast_in_dim(f, b, 3, bd, (int64_t[]){1, 2}), tt_shlo_const(f, &b3, 0.0));
    tt_type_t rt = tt_type_make(cdt, 3, (int64_t[]){G, M, N});
    r = gdot(f, am, bm, 1, 2, 1, &rt);
  }
  return tt_l_set_out(c, 0, tt_l_convert(f, r, ot->dtype));
}

const tt_lower_entry_t tt_lower_grouped_mm[] = {
    {"aten::_grouped_mm", lower_grouped_mm, 0, 0},
};
const int tt_lower_grouped_mm_count = TT_TABLE_COUNT(tt_lower_grouped_mm);
