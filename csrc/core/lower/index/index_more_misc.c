/* Odds and ends next to indexing: unfold_backward, renorm, tril_indices /
 * triu_indices, logspace.out, narrow_copy.out, and the device-side
 * assertions (_assert_async, _functional_assert_async, _make_dep_token). */
#include <math.h>
#include <stdlib.h>

#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"

static tt_val_t kl(tt_shlo_fn_t* f, tt_val_t like, double v) { return tt_shlo_const(f, tt_shlo_type(f, like), v); }
static tt_val_t bin(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) { return tt_l_binary(f, op, a, b); }

/* unfold_backward(grad_in, input_sizes, dim, size, step): grad_in is
 * input_sizes with dim replaced by the window count plus a trailing window
 * dim; every (window w, offset k) adds into input position w * step + k. */
static tt_status_t lower_unfold_backward(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t g = c->args[0].val;
  tt_type_t gt = tt__sh_type(f, g);
  int r = ot->rank;
  tt_dtype_t cdt = tt_l_opmath(ot->dtype);
  g = tt_l_convert(f, g, cdt);
  if (r == 0) return tt_l_set_out(c, 0, tt_lt_sum(f, g, (1u << gt.rank) - 1u));
  int dim = (int)tt_l_wrap_dim(c->args[2].i, r);
  int64_t size = c->args[3].i, step = c->args[4].i, nw = gt.dims[dim];
  /* bring the window dim next to dim and merge the two */
  int64_t perm[TT_MAX_RANK + 1], md[TT_MAX_RANK];
  int q = 0;
  for (int d = 0; d <= dim; d++) perm[q++] = d;
  perm[q++] = r;
  for (int d = dim + 1; d < r; d++) perm[q++] = d;
  g = tt_l_transpose(f, g, perm);
  for (int d = 0; d < r; d++) md[d] = d == dim ? nw * size : gt.dims[d];
  g = tt_l_reshape(f, g, r, md);
  int64_t n = nw * size;
  int64_t* idx = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
  if (!idx) return tt_status_make(TT_RESOURCE_EXHAUSTED, "unfold_backward: out of memory");
  for (int64_t j = 0; j < n; j++) idx[j] = (j / size) * step + j % size;
  tt_val_t out = tt__sh_put_add(f, g, dim, idx, ot->dims[dim]);
  free(idx);
  return tt_l_set_out(c, 0, out);
}

/* The p-norm over the dims of mask, with p a runtime value (0-d, v's
 * dtype): inf / -inf: max / min |x|, 0: count of non-zeros, 1: sum |x|,
 * 2: sqrt(sum x^2), else (sum |x|^p)^(1/p), as linalg_vector_norm. */
static tt_val_t vector_norm(tt_shlo_fn_t* f, tt_val_t v, uint32_t mask, tt_val_t p0) {
  tt_type_t t = tt__sh_type(f, v);
  tt_val_t a = tt_l_unary(f, "stablehlo.abs", v);
  tt_val_t mx = tt_lt_extreme(f, a, mask, true), mn = tt_lt_extreme(f, a, mask, false);
  tt_type_t rt = tt__sh_type(f, mx);
  tt_val_t p = tt_lt_splat(f, p0, rt.rank, rt.dims), pf = tt_lt_splat(f, p0, t.rank, t.dims);
  tt_val_t nz = tt_lt_sum(f, tt_l_convert(f, tt_l_compare(f, "NE", a, kl(f, a, 0.0)), t.dtype), mask);
  tt_val_t l1 = tt_lt_sum(f, a, mask);
  tt_val_t l2 = tt_l_unary(f, "stablehlo.sqrt", tt_lt_sum(f, bin(f, "stablehlo.multiply", a, a), mask));
  tt_val_t lp = tt_lt_sum(f, bin(f, "stablehlo.power", a, pf), mask);
  lp = bin(f, "stablehlo.power", lp, bin(f, "stablehlo.divide", kl(f, p, 1.0), p));
  tt_val_t r = lp;
  r = tt_l_select(f, tt_l_compare(f, "EQ", p, kl(f, p, 2.0)), l2, r);
  r = tt_l_select(f, tt_l_compare(f, "EQ", p, kl(f, p, 1.0)), l1, r);
  r = tt_l_select(f, tt_l_compare(f, "EQ", p, kl(f, p, 0.0)), nz, r);
  r = tt_l_select(f, tt_l_compare(f, "EQ", p, kl(f, p, INFINITY)), mx, r);
  return tt_l_select(f, tt_l_compare(f, "EQ", p, kl(f, p, -INFINITY)), mn, r);
}

/* renorm(self, p, dim, maxnorm): each slice along dim whose p-norm exceeds
 * maxnorm is scaled by maxnorm / (norm + 1e-7); the factor is computed in
 * the accumulation dtype and rounded to self's dtype, as on CPU. */
static tt_status_t lower_renorm(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = c->args[0].val;
  tt_type_t t = tt__sh_type(f, x);
  bool cx = tt_dtype_is_complex(t.dtype);
  if (!tt_dtype_is_float(t.dtype) && !cx)
    return tt_status_make(TT_INVALID_ARGUMENT, "renorm: expected a floating point tensor, got %s", tt_dtype_name(t.dtype));
  if (t.rank == 0 || tt_type_numel(&t) == 0) return tt_l_set_out(c, 0, x);
  int dim = (int)tt_l_wrap_dim(c->args[2].i, t.rank);
  /* complex: the norms of |x| (real), the real factor as (fac, 0) times x, as on CPU */
  tt_dtype_t cdt = tt_l_opmath(cx ? tt_dtype_real_part(t.dtype) : t.dtype);
  uint32_t mask = ((1u << t.rank) - 1u) & ~(1u << dim);
  tt_val_t xa = cx ? tt_l_cabs(f, x) : x;
  tt_val_t norm = vector_norm(f, tt_l_convert(f, xa, cdt), mask, tt_lt_scalar(c, 1, cdt));
  tt_val_t maxn = tt_lt_splat(f, tt_lt_scalar(c, 3, cdt), 1, &t.dims[dim]);
  tt_val_t fac = bin(f, "stablehlo.divide", maxn, bin(f, "stablehlo.add", norm, kl(f, norm, 1e-7)));
  fac = tt_l_select(f, tt_l_compare(f, "GT", norm, maxn), fac, kl(f, norm, 1.0));
  fac = tt_l_convert(f, fac, t.dtype);
  int64_t bd[1] = {dim};
  return tt_l_set_out(c, 0, bin(f, "stablehlo.multiply", x, tt_lt_bcast_in_dim(f, fac, t.rank, t.dims, bd)));
}

/* tril_indices / triu_indices(row, col, offset): the (i, j) with j - i <=
 * offset (tril, param 0) or >= offset (triu), in row-major order, as a (2, N)
 * tensor: the positions are numbered by a prefix sum of the mask and
 * scattered into place. */
static tt_status_t lower_tri_indices(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  int64_t rows = c->args[0].i, cols = c->args[1].i, off = c->args[2].i, k = ot->dims[1];
  if (k == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  int64_t n = rows * cols, k1 = k + 1, d2[2] = {rows, cols}, id2[2] = {n, 1};
  tt_val_t i = tt_lt_iota(f, TT_I64, 2, d2, 0), j = tt_lt_iota(f, TT_I64, 2, d2, 1);
  tt_val_t diff = bin(f, "stablehlo.subtract", j, i);
  tt_val_t m = tt_l_compare(f, c->op->param ? "GE" : "LE", diff, tt_shlo_const_i64(f, tt_shlo_type(f, diff), off));
  m = tt_l_reshape(f, m, 1, &n);
  tt_val_t pos = tt_lt_scan(f, tt_l_convert(f, m, TT_I64), 0, "stablehlo.add");
  pos = bin(f, "stablehlo.subtract", pos, kl(f, pos, 1.0));
  pos = tt_l_select(f, m, pos, tt_shlo_const_i64(f, tt_shlo_type(f, pos), k)); /* others land in slot k */
  int64_t ins[1] = {0};
  tt_val_t lin = tt_lt_scatter(f, tt_l_full(f, TT_I64, 1, &k1, 0.0), tt_l_reshape(f, pos, 2, id2),
                               tt_lt_iota(f, TT_I64, 1, &n, 0), NULL, 0, ins, 1, ins, 1, 1, NULL);
  lin = tt_lt_slice_dim(f, lin, 0, 0, k);
  int64_t r1[2] = {1, k};
  tt_val_t parts[2] = {tt_l_reshape(f, bin(f, "stablehlo.divide", lin, tt_shlo_const_i64(f, tt_shlo_type(f, lin), cols)), 2, r1),
                       tt_l_reshape(f, bin(f, "stablehlo.remainder", lin, tt_shlo_const_i64(f, tt_shlo_type(f, lin), cols)), 2, r1)};
  return tt_l_set_out(c, 0, tt_lt_concat(f, parts, 2, 0));
}

/* logspace.out(start, end, steps, base): CPU casts start / end to the out
 * dtype, steps the exponent in double from both ends (start + step * i in
 * the first half, end - step * (steps - 1 - i) in the second) and casts
 * base ** exponent (double) to the out dtype; one step: base ** start. */
static tt_status_t lower_logspace(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_dtype_t dt = ot->dtype;
  int64_t n = tt_type_numel(ot);
  if (n == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  double base = c->args[3].f;
  tt_type_t vt = tt_type_make(TT_F64, 1, &n);
  tt_val_t s64 = tt_lt_scalar(c, 0, TT_F64);
  if (n == 1)
    return tt_l_set_out(c, 0, bin(f, "stablehlo.power", tt_shlo_const(f, &vt, base), tt_lt_splat(f, s64, 1, &n)));
  tt_val_t s = tt_l_convert(f, tt_lt_scalar(c, 0, dt), TT_F64), e = tt_l_convert(f, tt_lt_scalar(c, 1, dt), TT_F64);
  tt_val_t step = bin(f, "stablehlo.divide", bin(f, "stablehlo.subtract", e, s), tt_lt_const0(f, TT_F64, (double)(n - 1)));
  tt_val_t i = tt_lt_iota(f, TT_F64, 1, &n, 0), stb = tt_lt_splat(f, step, 1, &n);
  tt_val_t lo = bin(f, "stablehlo.add", tt_lt_splat(f, s, 1, &n), bin(f, "stablehlo.multiply", stb, i));
  tt_val_t back = bin(f, "stablehlo.subtract", tt_shlo_const(f, &vt, (double)(n - 1)), i);
  tt_val_t hi = bin(f, "stablehlo.subtract", tt_lt_splat(f, e, 1, &n), bin(f, "stablehlo.multiply", stb, back));
  tt_val_t first = tt_l_compare(f, "LT", i, tt_shlo_const(f, &vt, (double)(n / 2)));
  tt_val_t x = tt_l_select(f, first, lo, hi);
  return tt_l_set_out(c, 0, bin(f, "stablehlo.power", tt_shlo_const(f, &vt, base), x));
}

/* narrow_copy(self, dim, start, length) */
static tt_status_t lower_narrow_copy(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = tt__sh_type(f, c->args[0].val);
  if (t.rank == 0) return tt_status_make(TT_INVALID_ARGUMENT, "narrow() cannot be applied to a 0-dim tensor.");
  int dim = (int)tt_l_wrap_dim(c->args[1].i, t.rank);
  int64_t start = c->args[2].i, len = c->args[3].i;
  if (start < 0) start += t.dims[dim];
  if (start < 0 || len < 0 || start + len > t.dims[dim])
    return tt_status_make(TT_OUT_OF_RANGE, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                          (long long)c->args[2].i, (long long)len, (long long)t.dims[dim]);
  return tt_l_set_out(c, 0, tt_lt_slice_dim(f, c->args[0].val, dim, start, start + len));
}

/* _assert_async(self[, assert_msg]) and _functional_assert_async.msg(self,
 * assert_msg, dep_token) -> a new token: a device-side check that the one
 * element of self is non-zero (as bool(self): NaN passes, a complex value
 * fails only when both parts are 0), raised with CPU's message at the next
 * sync (at the op in Debug Eager). self must hold exactly one element, a
 * static fact checked here with CPU's errors. param 1: the message is an
 * argument ("" gives CPU's default for it). */
static tt_status_t lower_assert_async(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = tt__sh_type(f, c->args[0].val);
  int64_t n = tt_type_numel(&t);
  if (n != 1)
    return tt_status_make(TT_INTERNAL, "Boolean value of Tensor with %s is ambiguous",
                          n ? "more than one value" : "no values");
  tt_val_t v = tt_l_reshape(f, c->args[0].val, 0, NULL);
  tt_val_t zero = kl(f, v, 0.0);
  tt_val_t failed = tt_l_compare(f, "EQ", v, zero);
  const char* msg = "Expected Tensor with single nonzero value, but got zero";
  if (c->op->param) {
    const tt_larg_t* m = &c->args[1];
    msg = m->kind == TT_ARG_STR && m->str && *m->str ? m->str : "Assertion is failed";
  }
  tt_shlo_add_check(f, failed, TT_INTERNAL, msg);
  if (c->nout == 1) return tt_l_set_out(c, 0, tt_l_convert(f, c->args[2].val, c->out_types[0].dtype));
  return NULL;
}

/* _make_dep_token(): the token the functional assertions thread through (a
 * 0-dim float, uninitialized on the CPU: zero here). */
static tt_status_t lower_dep_token(tt_lctx_t* c) {
  return tt_l_set_out(c, 0, tt_shlo_const(c->f, &c->out_types[0], 0.0));
}

#define R(name, fn, param) {"aten::" name, fn, param, 0}

const tt_lower_entry_t tt_lower_index_more_misc[] = {
    R("unfold_backward", lower_unfold_backward, 0), R("unfold_backward.out", lower_unfold_backward, 0),
    R("renorm", lower_renorm, 0), R("renorm.out", lower_renorm, 0), R("renorm_", lower_renorm, 0),
    R("tril_indices", lower_tri_indices, 0), R("tril_indices.out", lower_tri_indices, 0),
    R("triu_indices", lower_tri_indices, 1), R("triu_indices.out", lower_tri_indices, 1),
    R("logspace.out", lower_logspace, 0),
    R("narrow_copy.out", lower_narrow_copy, 0),
    R("_assert_async", lower_assert_async, 0), R("_assert_async.msg", lower_assert_async, 1),
    R("_functional_assert_async.msg", lower_assert_async, 1), R("_make_dep_token", lower_dep_token, 0),
};
const int tt_lower_index_more_misc_count = TT_TABLE_COUNT(tt_lower_index_more_misc);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_index_more_misc_facts[] = {
    TT_FACT("aten::unfold_backward", TT_LF_COMPLEX), TT_FACT("aten::_assert_async", TT_LF_COMPLEX),
    TT_FACT("aten::_functional_assert_async", TT_LF_COMPLEX),
    TT_FACT("aten::renorm", TT_LF_COMPLEX), TT_FACT("aten::renorm_", TT_LF_COMPLEX),
    TT_FACT("aten::logspace", TT_LF_OUT_KEEPS_SHAPE),
};
const int tt_lower_index_more_misc_facts_count = TT_TABLE_COUNT(tt_lower_index_more_misc_facts);
