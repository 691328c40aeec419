/* Reductions and scans: sum, mean, prod, amax/amin, max/min (+indices),
 * argmax/argmin, any/all, var/std (+mean), logsumexp, norms, count_nonzero,
 * cumsum/cumprod. The output types (from PyTorch's meta kernels) carry the
 * result dtype (sum of ints -> int64, dtype= arguments) and the keepdim shape
 * (tt_l_set_out reshapes a reduction's dropped dims into it). f16/bf16
 * accumulate in f32 and round once. */
#include <math.h>

#include "../lower_tensor_util.h"
#include "../elementwise/lower_elementwise.h"
#include "../tt_lower_tables.h"

enum red_kind {
  R_SUM, R_NANSUM, R_MEAN, R_PROD, R_AMAX, R_AMIN, R_ANY, R_ALL, R_COUNT_NZ,
  R_ARGMAX, R_ARGMIN, R_MAX_DIM, R_MIN_DIM, R_AMINMAX,
  R_VAR, R_STD, R_VAR_MEAN, R_STD_MEAN, R_LOGSUMEXP, R_NORM, R_CUMSUM, R_CUMPROD,
};
/* param = kind | dim argument index << 8 (0: no dim argument, reduce all)
 *       | R_EMPTY_NONE (an empty dim list reduces nothing: any.dims / all.dims) */
#define P(kind, dim_idx) ((int64_t)(kind) | ((int64_t)(dim_idx) << 8))
#define R_EMPTY_NONE 0x10000
#define KIND(c) ((int)((c)->op->param & 0xff))
#define DIM_IDX(c) ((int)(((c)->op->param >> 8) & 0xff))

static const tt_type_t* self_type(tt_lctx_t* c) { return tt_shlo_type(c->f, c->args[0].val); }

/* The reduction mask of this call. */
static uint32_t red_mask(tt_lctx_t* c) {
  const tt_type_t* t = self_type(c);
  int di = DIM_IDX(c);
  if (!t) return 0;
  if (di == 0) return t->rank >= 32 ? 0xffffffffu : (1u << t->rank) - 1u;
  return tt_lt_dim_mask(&c->args[di], t->rank, !(c->op->param & R_EMPTY_NONE));
}

static int64_t red_count(const tt_type_t* t, uint32_t mask) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++)
    if (mask & (1u << d)) n *= t->dims[d];
  return n;
}

/* sum/nansum/mean/prod/count_nonzero/any/all/amax/amin */
static tt_status_t lower_simple(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int kind = KIND(c);
  uint32_t mask = red_mask(c);
  const tt_type_t* st = self_type(c);
  if (!st) return tt_status_make(TT_INTERNAL, "%s: no input", c->op->name);
  tt_type_t in = *st;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t x = c->args[0].val, r;
  switch (kind) {
    case R_SUM:
    case R_NANSUM:
    case R_MEAN:
      x = tt_l_convert(f, x, acc);
      if (kind == R_NANSUM && (tt_dtype_is_float(acc) || tt_dtype_is_complex(acc))) {
        /* complex (CUDA takes it, CPU refuses it): an element with a NaN part is absent */
        const tt_type_t* xt = tt_shlo_type(f, x);
        tt_type_t z = *xt;
        x = tt_l_select(f, tt_l_compare(f, "NE", x, x), tt_shlo_const(f, &z, 0.0), x);
      }
      r = tt_lt_sum(f, x, mask);
      if (kind == R_MEAN) {
        const tt_type_t* rt = tt_shlo_type(f, r);
        if (!rt) break;
        tt_type_t t = *rt;
        r = tt_l_binary(f, "stablehlo.divide", r, tt_shlo_const(f, &t, (double)red_count(&in, mask)));
      }
      break;
    case R_PROD:
      x = tt_l_convert(f, x, acc);
      r = tt_lt_reduce(f, x, mask, acc == TT_BOOL ? "stablehlo.and" : "stablehlo.multiply",
                       tt_lt_const0(f, acc, 1.0));
      break;
    case R_COUNT_NZ:
      x = tt_l_convert(f, tt_l_convert(f, x, TT_BOOL), TT_I64);
      r = tt_lt_sum(f, x, mask);
      break;
    case R_ANY:
    case R_ALL:
      x = tt_l_convert(f, x, TT_BOOL);
      r = tt_lt_reduce(f, x, mask, kind == R_ANY ? "stablehlo.or" : "stablehlo.and",
                       tt_lt_const0(f, TT_BOOL, kind == R_ALL));
      break;
    case R_AMAX:
    case R_AMIN:
      r = tt_lt_extreme(f, x, mask, kind == R_AMAX);
      break;
    default:
      return tt_status_make(TT_INTERNAL, "%s: bad reduction kind", c->op->name);
  }
  return tt_l_set_out(c, 0, r);
}

/* argmax/argmin (dim optional: flattened), max.dim/min.dim (values, indices) */
static tt_status_t lower_arg(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int kind = KIND(c);
  const tt_type_t* st = self_type(c);
  if (!st) return tt_status_make(TT_INTERNAL, "%s: no input", c->op->name);
  tt_type_t in = *st;
  tt_val_t x = c->args[0].val;
  int dim = 0;
  if (c->args[1].kind == TT_ARG_INT) {
    dim = (int)tt_l_wrap_dim(c->args[1].i, in.rank);
    if (in.rank == 0) dim = 0;
  } else if (in.rank != 1) {
    int64_t n = tt_type_numel(&in);
    x = tt_l_reshape(f, x, 1, &n);
  }
  if (in.rank > 0 && tt_type_numel(&in) == 0)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: cannot reduce an empty dimension", c->op->name);
  bool high = kind == R_ARGMAX || kind == R_MAX_DIM;
  tt_val_t v, i;
  tt_lt_arg_extreme(f, x, dim, high, &v, &i);
  if (kind == R_ARGMAX || kind == R_ARGMIN) return tt_l_set_out(c, 0, i);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, v));
  return tt_l_set_out(c, 1, i);
}

/* aminmax(self, *, dim?, keepdim) -> (min, max) */
static tt_status_t lower_aminmax(tt_lctx_t* c) {
  uint32_t mask = red_mask(c);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_lt_extreme(c->f, c->args[0].val, mask, false)));
  return tt_l_set_out(c, 1, tt_lt_extreme(c->f, c->args[0].val, mask, true));
}

/* var/std(.correction)(self, dim?, *, correction?, keepdim) and the _mean forms */
static tt_status_t lower_var(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int kind = KIND(c);
  uint32_t mask = red_mask(c);
  const tt_type_t* st = self_type(c);
  if (!st) return tt_status_make(TT_INTERNAL, "%s: no input", c->op->name);
  tt_type_t in = *st;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  /* complex input: the mean is complex, the variance real (mean of |x - mean|^2) */
  bool cx = tt_dtype_is_complex(in.dtype);
  tt_val_t x = tt_l_convert(f, c->args[0].val, cx ? tt_dtype_complex_of(acc) : acc);
  tt_type_t xt = in;
  xt.dtype = cx ? tt_dtype_complex_of(acc) : acc;
  double n = (double)red_count(&in, mask);
  tt_val_t sum = tt_lt_sum(f, x, mask);
  const tt_type_t* rtp = tt_shlo_type(f, sum);
  if (!rtp) return tt_status_make(TT_INTERNAL, "%s: reduction failed", c->op->name);
  tt_type_t rt = *rtp;
  tt_val_t mean = tt_l_binary(f, "stablehlo.divide", sum, tt_shlo_const(f, &rt, n));
  tt_val_t d = tt_l_binary(f, "stablehlo.subtract", x, tt_lt_expand(f, mean, &xt, mask));
  tt_val_t sq;
  if (cx) {
    tt_type_t pt = xt;
    pt.dtype = acc;
    tt_val_t re = tt_shlo_op(f, "stablehlo.real", &d, 1, &pt, NULL);
    tt_val_t im = tt_shlo_op(f, "stablehlo.imag", &d, 1, &pt, NULL);
    sq = tt_l_binary(f, "stablehlo.add", tt_l_binary(f, "stablehlo.multiply", re, re),
                     tt_l_binary(f, "stablehlo.multiply", im, im));
  } else {
    sq = tt_l_binary(f, "stablehlo.multiply", d, d);
  }
  tt_val_t ss = tt_lt_sum(f, sq, mask);
  /* divisor = max(N - correction, 0); correction defaults to 1 */
  tt_val_t corr = tt_lt_has(c, 2) ? tt_lt_scalar(c, 2, acc) : tt_lt_const0(f, acc, 1.0);
  tt_val_t div = tt_l_binary(f, "stablehlo.subtract", tt_lt_const0(f, acc, n), corr);
  div = tt_l_binary(f, "stablehlo.maximum", div, tt_lt_const0(f, acc, 0.0));
  tt_val_t var = tt_l_binary(f, "stablehlo.divide", ss, tt_lt_splat(f, div, rt.rank, rt.dims));
  if (kind == R_STD || kind == R_STD_MEAN) var = tt_l_unary(f, "stablehlo.sqrt", var);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, var));
  if (kind == R_VAR_MEAN || kind == R_STD_MEAN) return tt_l_set_out(c, 1, mean);
  return NULL;
}

/* logsumexp(self, dim[], keepdim): the max is subtracted for stability and
 * replaced by 0 where it is infinite (PyTorch's formulation; complex: the
 * max of the real parts, as CPU). */
static tt_status_t lower_logsumexp(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  uint32_t mask = red_mask(c);
  const tt_type_t* st = self_type(c);
  if (!st) return tt_status_make(TT_INTERNAL, "%s: no input", c->op->name);
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_type_t xt = *st;
  xt.dtype = acc;
  tt_val_t x = tt_l_convert(f, c->args[0].val, acc);
  bool cx = tt_dtype_is_complex(acc);
  tt_val_t m = tt_lt_extreme(f, cx ? tt__cx_re(f, x) : x, mask, true);
  const tt_type_t* mtp = tt_shlo_type(f, m);
  if (!mtp) return tt_status_make(TT_INTERNAL, "%s: reduction failed", c->op->name);
  tt_type_t mt = *mtp;
  tt_val_t inf = tt_shlo_const(f, &mt, INFINITY);
  tt_val_t isinf = tt_l_compare(f, "EQ", tt_l_unary(f, "stablehlo.abs", m), inf);
  m = tt_l_select(f, isinf, tt_shlo_const(f, &mt, 0.0), m);
  if (cx) { /* the max of the real parts; C99 exp / log of the complex values */
    tt_val_t mc = tt__cx_make(f, m, tt_shlo_const(f, &mt, 0.0));
    tt_val_t e = tt__cx_fn(f, TT_U_EXP, tt__ew_sub(f, x, tt_lt_expand(f, mc, &xt, mask)));
    return tt_l_set_out(c, 0, tt__ew_add(f, tt__cx_fn(f, TT_U_LOG, tt_lt_sum(f, e, mask)), mc));
  }
  tt_val_t e = tt_l_unary(f, "stablehlo.exponential",
                          tt_l_binary(f, "stablehlo.subtract", x, tt_lt_expand(f, m, &xt, mask)));
  tt_val_t r = tt_l_unary(f, "stablehlo.log", tt_lt_sum(f, e, mask));
  return tt_l_set_out(c, 0, tt_l_binary(f, "stablehlo.add", r, m));
}

/* linalg_vector_norm / norm: ord is a runtime Scalar, so the special orders
 * (2, 1, 0, inf, -inf) are selected at run time around one sum and one max. */
static tt_status_t lower_norm(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  uint32_t mask = red_mask(c);
  const tt_type_t* st = self_type(c);
  if (!st) return tt_status_make(TT_INTERNAL, "%s: no input", c->op->name);
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  if (!tt_dtype_is_float(acc))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a floating point result, got %s",
                          c->op->name, tt_dtype_name(acc));
  tt_type_t xt = *st;
  xt.dtype = acc;
  /* |x|; complex: the modulus (hypot of the parts) */
  bool cx = tt_dtype_is_complex(st->dtype);
  tt_val_t x = tt_l_cabs(f, tt_l_convert(f, c->args[0].val, cx ? tt_dtype_complex_of(acc) : acc));
  tt_val_t p0 = tt_lt_has(c, 1) ? tt_lt_scalar(c, 1, acc) : tt_lt_const0(f, acc, 2.0);
  tt_val_t p = tt_lt_splat(f, p0, xt.rank, xt.dims);
#define XC(v) tt_shlo_const(f, &xt, v)
  tt_val_t is2 = tt_l_compare(f, "EQ", p, XC(2.0)), is1 = tt_l_compare(f, "EQ", p, XC(1.0));
  tt_val_t is0 = tt_l_compare(f, "EQ", p, XC(0.0));
  tt_val_t nz = tt_l_convert(f, tt_l_compare(f, "NE", x, XC(0.0)), acc);
  tt_val_t t = tt_l_binary(f, "stablehlo.power", x, p);
  t = tt_l_select(f, is0, nz, t);
  t = tt_l_select(f, is1, x, t);
  t = tt_l_select(f, is2, tt_l_binary(f, "stablehlo.multiply", x, x), t);
  /* one max reduction serves both infinities: min|x| = -max(-|x|) */
  tt_val_t neg = tt_l_compare(f, "EQ", p, XC(-INFINITY));
  tt_val_t mx = tt_lt_extreme(f, tt_l_select(f, neg, tt_l_unary(f, "stablehlo.negate", x), x), mask, true);
#undef XC
  tt_val_t s = tt_lt_sum(f, t, mask);
  const tt_type_t* rtp = tt_shlo_type(f, s);
  if (!rtp) return tt_status_make(TT_INTERNAL, "%s: reduction failed", c->op->name);
  tt_type_t rt = *rtp;
#define RC(v) tt_shlo_const(f, &rt, v)
  tt_val_t pr = tt_lt_splat(f, p0, rt.rank, rt.dims);
  tt_val_t r = tt_l_binary(f, "stablehlo.power", s, tt_l_binary(f, "stablehlo.divide", RC(1.0), pr));
  tt_val_t lin = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "EQ", pr, RC(1.0)),
                             tt_l_compare(f, "EQ", pr, RC(0.0)));
  r = tt_l_select(f, lin, s, r);
  r = tt_l_select(f, tt_l_compare(f, "EQ", pr, RC(2.0)), tt_l_unary(f, "stablehlo.sqrt", s), r);
  r = tt_l_select(f, tt_l_compare(f, "EQ", pr, RC(INFINITY)), mx, r);
  r = tt_l_select(f, tt_l_compare(f, "EQ", pr, RC(-INFINITY)), tt_l_unary(f, "stablehlo.negate", mx), r);
#undef RC
  return tt_l_set_out(c, 0, r);
}

/* cumsum/cumprod(self, dim, *, dtype?): scan in the accumulation dtype */
static tt_status_t lower_scan(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* st = self_type(c);
  if (!st) return tt_status_make(TT_INTERNAL, "%s: no input", c->op->name);
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  int dim = st->rank ? (int)tt_l_wrap_dim(c->args[1].i, st->rank) : 0;
  tt_val_t x = tt_l_convert(f, c->args[0].val, acc);
  const char* op = KIND(c) == R_CUMSUM ? "stablehlo.add" : "stablehlo.multiply";
  if (acc == TT_BOOL) op = KIND(c) == R_CUMSUM ? "stablehlo.or" : "stablehlo.and";
  return tt_l_set_out(c, 0, tt_lt_scan(f, x, dim, op));
}

/* hash_tensor(self, dim=[], keepdim, mode=0): mode 0 xor-reduces the 64-bit
 * patterns of the elements widened as CPU does (floats to f64, integers and
 * bool sign-extended to int64), giving uint64. */
static tt_status_t lower_hash_tensor(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* st = self_type(c);
  if (!st) return tt_status_make(TT_INTERNAL, "%s: no input", c->op->name);
  if (c->args[3].i != 0)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: mode %lld is not supported (only 0, xor_sum)",
                          c->op->name, (long long)c->args[3].i);
  bool fl = tt_dtype_is_float(st->dtype);
  tt_val_t x = tt_l_convert(f, c->args[0].val, fl ? TT_F64 : TT_I64);
  tt_type_t ut = *st;
  ut.dtype = TT_U64;
  x = tt_shlo_op(f, "stablehlo.bitcast_convert", &x, 1, &ut, NULL);
  uint32_t mask = tt_lt_dim_mask(&c->args[1], st->rank, true);
  return tt_l_set_out(c, 0, tt_lt_reduce(f, x, mask, "stablehlo.xor", tt_lt_const0(f, TT_U64, 0)));
}

#define S(name, kind, di) {"aten::" name, lower_simple, P(kind, di), 0}
#define A(name, kind, di) {"aten::" name, lower_arg, P(kind, di), 0}
#define V(name, kind) {"aten::" name, lower_var, P(kind, 1), 0}

const tt_lower_entry_t tt_lower_reduce[] = {
    S("sum", R_SUM, 0), S("sum.out", R_SUM, 0),
    S("sum.dim_IntList", R_SUM, 1), S("sum.IntList_out", R_SUM, 1),
    S("nansum", R_NANSUM, 1), S("nansum.out", R_NANSUM, 1),
    S("mean", R_MEAN, 0), S("mean.dtype_out", R_MEAN, 0),
    S("mean.dim", R_MEAN, 1), S("mean.out", R_MEAN, 1),
    S("prod", R_PROD, 0), S("prod.out", R_PROD, 0),
    S("prod.dim_int", R_PROD, 1), S("prod.int_out", R_PROD, 1),
    S("amax", R_AMAX, 1), S("amax.out", R_AMAX, 1),
    S("amin", R_AMIN, 1), S("amin.out", R_AMIN, 1),
    S("max", R_AMAX, 0), S("max.unary_out", R_AMAX, 0),
    S("min", R_AMIN, 0), S("min.unary_out", R_AMIN, 0),
    S("any", R_ANY, 0), S("any.all_out", R_ANY, 0),
    S("any.dim", R_ANY, 1), S("any.out", R_ANY, 1),
    {"aten::any.dims", lower_simple, P(R_ANY, 1) | R_EMPTY_NONE, 0},
    {"aten::any.dims_out", lower_simple, P(R_ANY, 1) | R_EMPTY_NONE, 0},
    S("all", R_ALL, 0), S("all.all_out", R_ALL, 0),
    S("all.dim", R_ALL, 1), S("all.out", R_ALL, 1),
    {"aten::all.dims", lower_simple, P(R_ALL, 1) | R_EMPTY_NONE, 0},
    {"aten::all.dims_out", lower_simple, P(R_ALL, 1) | R_EMPTY_NONE, 0},
    S("count_nonzero", R_COUNT_NZ, 1), S("count_nonzero.out", R_COUNT_NZ, 1),
    S("count_nonzero.dim_IntList", R_COUNT_NZ, 1), S("count_nonzero.dim_IntList_out", R_COUNT_NZ, 1),
    A("argmax", R_ARGMAX, 1), A("argmax.out", R_ARGMAX, 1),
    A("argmin", R_ARGMIN, 1), A("argmin.out", R_ARGMIN, 1),
    A("max.dim", R_MAX_DIM, 1), A("max.dim_max", R_MAX_DIM, 1),
    A("min.dim", R_MIN_DIM, 1), A("min.dim_min", R_MIN_DIM, 1),
    {"aten::aminmax", lower_aminmax, P(R_AMINMAX, 1), 0},
    {"aten::aminmax.out", lower_aminmax, P(R_AMINMAX, 1), 0},
    V("var.correction", R_VAR), V("var.correction_out", R_VAR),
    V("std.correction", R_STD), V("std.correction_out", R_STD),
    V("var_mean.correction", R_VAR_MEAN), V("var_mean.correction_out", R_VAR_MEAN),
    V("std_mean.correction", R_STD_MEAN), V("std_mean.correction_out", R_STD_MEAN),
    {"aten::logsumexp", lower_logsumexp, P(R_LOGSUMEXP, 1), 0},
    {"aten::logsumexp.out", lower_logsumexp, P(R_LOGSUMEXP, 1), 0},
    {"aten::linalg_vector_norm", lower_norm, P(R_NORM, 2), 0},
    {"aten::linalg_vector_norm.out", lower_norm, P(R_NORM, 2), 0},
    {"aten::norm.Scalar", lower_norm, P(R_NORM, 0), 0},
    {"aten::norm.Scalar_out", lower_norm, P(R_NORM, 0), 0},
    {"aten::norm.ScalarOpt_dim", lower_norm, P(R_NORM, 2), 0},
    {"aten::norm.out", lower_norm, P(R_NORM, 2), 0},
    {"aten::norm.ScalarOpt_dim_dtype", lower_norm, P(R_NORM, 2), 0},
    {"aten::norm.dtype_out", lower_norm, P(R_NORM, 2), 0},
    {"aten::norm.ScalarOpt_dtype", lower_norm, P(R_NORM, 0), 0},
    {"aten::norm.ScalarOpt_dtype_out", lower_norm, P(R_NORM, 0), 0},
    {"aten::cumsum", lower_scan, P(R_CUMSUM, 0), 0},
    {"aten::cumsum.out", lower_scan, P(R_CUMSUM, 0), 0},
    {"aten::cumsum_", lower_scan, P(R_CUMSUM, 0), 0},
    {"aten::cumprod", lower_scan, P(R_CUMPROD, 0), 0},
    {"aten::cumprod.out", lower_scan, P(R_CUMPROD, 0), 0},
    {"aten::cumprod_", lower_scan, P(R_CUMPROD, 0), 0},
    {"aten::hash_tensor", lower_hash_tensor, 0, 0},
    {"aten::hash_tensor.out", lower_hash_tensor, 0, 0},
};
const int tt_lower_reduce_count = TT_TABLE_COUNT(tt_lower_reduce);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_reduce_facts[] = {
    TT_FACT("aten::sum", TT_LF_COMPLEX), TT_FACT("aten::mean", TT_LF_COMPLEX),
    TT_FACT("aten::prod", TT_LF_COMPLEX), TT_FACT("aten::cumsum", TT_LF_COMPLEX),
    TT_FACT("aten::cumsum_", TT_LF_COMPLEX), TT_FACT("aten::cumprod", TT_LF_COMPLEX),
    TT_FACT("aten::cumprod_", TT_LF_COMPLEX), TT_FACT("aten::var", TT_LF_COMPLEX),
    TT_FACT("aten::std", TT_LF_COMPLEX), TT_FACT("aten::var_mean", TT_LF_COMPLEX),
    TT_FACT("aten::std_mean", TT_LF_COMPLEX), TT_FACT("aten::any", TT_LF_COMPLEX),
    TT_FACT("aten::all", TT_LF_COMPLEX), TT_FACT("aten::count_nonzero", TT_LF_COMPLEX),
    TT_FACT("aten::linalg_vector_norm", TT_LF_COMPLEX), TT_FACT("aten::norm", TT_LF_COMPLEX),
    TT_FACT("aten::logsumexp", TT_LF_COMPLEX), TT_FACT("aten::nansum", TT_LF_COMPLEX),
    /* compile-time bucketing (tt_lower_bucket_t): the overloads whose arg 1 is the dims (or
     * absent): not var.default (arg 1: unbiased), max.other (a binary op) */
    TT_FACT_BUCKET("aten::sum.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::sum.dim_IntList", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::mean.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::mean.dim", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::amax.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::amin.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::var.correction", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::std.correction", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::logsumexp.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::argmax.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::argmin.default", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::max.dim", TT_BUCKET_REDUCE),
    TT_FACT_BUCKET("aten::min.dim", TT_BUCKET_REDUCE),
};
const int tt_lower_reduce_facts_count = TT_TABLE_COUNT(tt_lower_reduce_facts);
