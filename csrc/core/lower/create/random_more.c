/* More random ops: cauchy_, log_normal_, geometric_, normal with tensor
 * mean/std, multinomial. Like create.c's fillers they take a (seed, offset)
 * state as their last argument (TT_LF_RNG) and match PyTorch CPU in
 * distribution, not in values. Every op draws all its bits from the state in
 * one rng_bit_generator call (two calls on one state give the same bits). */
#include <math.h>

#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

static tt_val_t rng_state(tt_lctx_t* c) { return c->args[c->nargs - 1].val; }
static tt_dtype_t wide(tt_dtype_t dt) { return dt == TT_F64 ? TT_F64 : TT_F32; }

static tt_val_t k_like(tt_shlo_fn_t* f, tt_val_t like, double v) {
  return tt_shlo_const(f, tt_shlo_type(f, like), v);
}
static tt_val_t bin(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) { return tt_l_binary(f, op, a, b); }
static tt_val_t un(tt_shlo_fn_t* f, const char* op, tt_val_t a) { return tt_l_unary(f, op, a); }

static tt_status_t need_float(tt_lctx_t* c, const char* what) {
  if (tt_dtype_is_float(c->out_types[0].dtype)) return NULL;
  return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a floating point tensor, got %s", what,
                        tt_dtype_name(c->out_types[0].dtype));
}

/* k draws of uniform (0, 1) values (never 0 nor 1) shaped (k, n) in cdt
 * (bit centres: (bits + 1/2) * 2^-mant). */
static tt_val_t uniform_open(tt_shlo_fn_t* f, tt_val_t state, tt_dtype_t cdt, int64_t k, int64_t n) {
  int64_t d2[2] = {k, n};
  tt_val_t u = tt_lt_uniform01(f, state, cdt, 2, d2);
  return bin(f, "stablehlo.add", u, k_like(f, u, ldexp(1.0, cdt == TT_F64 ? -54 : -25)));
}

static tt_val_t row(tt_shlo_fn_t* f, tt_val_t u, int64_t i, int64_t n) {
  return tt_l_reshape(f, tt_lt_slice_dim(f, u, 0, i, i + 1), 1, &n);
}

/* n standard normal values (Box-Muller over two open uniforms) in cdt. */
static tt_val_t std_normal(tt_shlo_fn_t* f, tt_val_t state, tt_dtype_t cdt, int64_t n) {
  tt_val_t u = uniform_open(f, state, cdt, 2, n);
  tt_val_t u1 = row(f, u, 0, n), u2 = row(f, u, 1, n);
  tt_val_t rad = un(f, "stablehlo.sqrt", bin(f, "stablehlo.multiply", k_like(f, u1, -2.0), un(f, "stablehlo.log", u1)));
  tt_val_t ang = bin(f, "stablehlo.multiply", k_like(f, u2, 2.0 * M_PI), u2);
  return bin(f, "stablehlo.multiply", rad, un(f, "stablehlo.cosine", ang));
}

static tt_status_t set_flat(tt_lctx_t* c, tt_val_t v) {
  const tt_type_t* ot = &c->out_types[0];
  return tt_l_set_out(c, 0, tt_l_reshape(c->f, v, ot->rank, ot->dims));
}

/* cauchy_(self, median, sigma): median + sigma * tan(pi * (u - 1/2)) */
static tt_status_t lower_cauchy(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c, "cauchy_"));
  if (!(c->args[2].f > 0.0))
    return tt_status_make(TT_INTERNAL, "cauchy_ expects sigma > 0.0, but found sigma=%g", c->args[2].f);
  tt_shlo_fn_t* f = c->f;
  int64_t n = tt_type_numel(&c->out_types[0]);
  tt_val_t u = row(f, uniform_open(f, rng_state(c), wide(c->out_types[0].dtype), 1, n), 0, n);
  tt_val_t t = un(f, "stablehlo.tan", bin(f, "stablehlo.multiply", bin(f, "stablehlo.subtract", u, k_like(f, u, 0.5)),
                                            k_like(f, u, M_PI)));
  t = bin(f, "stablehlo.add", bin(f, "stablehlo.multiply", t, k_like(f, t, c->args[2].f)), k_like(f, t, c->args[1].f));
  return set_flat(c, t);
}

/* log_normal_(self, mean, std): exp(mean + std * z) */
static tt_status_t lower_log_normal(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c, "log_normal_"));
  if (!(c->args[2].f > 0.0))
    return tt_status_make(TT_INTERNAL, "log_normal_ expects std > 0.0, but found std=%g", c->args[2].f);
  tt_shlo_fn_t* f = c->f;
  int64_t n = tt_type_numel(&c->out_types[0]);
  tt_val_t z = std_normal(f, rng_state(c), wide(c->out_types[0].dtype), n);
  z = bin(f, "stablehlo.add", bin(f, "stablehlo.multiply", z, k_like(f, z, c->args[2].f)), k_like(f, z, c->args[1].f));
  return set_flat(c, un(f, "stablehlo.exponential", z));
}

/* geometric_(self, p): ceil(log(u) / log1p(-p)), the number of Bernoulli(p)
 * trials up to the first success (>= 1); any numeric dtype. */
static tt_status_t lower_geometric(tt_lctx_t* c) {
  double p = c->args[1].f;
  if (!(p > 0.0 && p < 1.0))
    return tt_status_make(TT_INTERNAL, "geometric_ expects p to be in (0, 1), but got p=%g", p);
  tt_shlo_fn_t* f = c->f;
  int64_t n = tt_type_numel(&c->out_types[0]);
  tt_dtype_t cdt = c->out_types[0].dtype == TT_F64 || !tt_dtype_is_float(c->out_types[0].dtype) ? TT_F64 : TT_F32;
  tt_val_t u = row(f, uniform_open(f, rng_state(c), cdt, 1, n), 0, n);
  tt_val_t g = bin(f, "stablehlo.divide", un(f, "stablehlo.log", u), k_like(f, u, log1p(-p)));
  g = bin(f, "stablehlo.maximum", un(f, "stablehlo.ceil", g), k_like(f, u, 1.0));
  return set_flat(c, g);
}

enum { NORM_TT, NORM_TF, NORM_FT };

/* normal.Tensor_Tensor(mean, std) / .Tensor_float(mean, std) /
 * .float_Tensor(mean, std): mean + std * z, broadcast to the out shape;
 * a negative std raises as on CPU. */
static tt_status_t lower_normal_t(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c, "normal"));
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  int kind = (int)c->op->param;
  tt_dtype_t cdt = tt_l_opmath(ot->dtype);
  tt_type_t ct = *ot;
  ct.dtype = cdt;
  tt_val_t mean = kind == NORM_FT ? tt_shlo_const(f, &ct, c->args[0].f) : tt_l_arg_as(c, 0, cdt, &ct);
  tt_val_t std = kind == NORM_TF ? tt_shlo_const(f, &ct, c->args[1].f) : tt_l_arg_as(c, 1, cdt, &ct);
  if (kind == NORM_TF) {
    if (!(c->args[1].f >= 0.0))
      return tt_status_make(TT_INTERNAL, "normal expects std >= 0.0, but found std %g", c->args[1].f);
  } else {
    tt_val_t neg = tt_l_compare(f, "LT", std, tt_shlo_const(f, &ct, 0.0));
    if (ct.rank) neg = tt_lt_reduce(f, neg, (1u << ct.rank) - 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0));
    tt_shlo_add_check(f, neg, TT_INTERNAL, "normal expects all elements of std >= 0.0");
  }
  int64_t n = tt_type_numel(ot);
  tt_val_t z = tt_l_reshape(f, std_normal(f, rng_state(c), wide(cdt), n), ct.rank, ct.dims);
  z = tt_l_convert(f, z, cdt);
  return tt_l_set_out(c, 0, bin(f, "stablehlo.add", mean, bin(f, "stablehlo.multiply", std, z)));
}

static tt_val_t any_true(tt_shlo_fn_t* f, tt_val_t b) {
  int rank = tt_shlo_type(f, b)->rank;
  return rank ? tt_lt_reduce(f, b, (1u << rank) - 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0)) : b;
}

/* multinomial(self, num_samples, replacement): rows of non-negative weights.
 * With replacement: inverse CDF (the number of cumulative weights <= u *
 * total, kept on a category of non-zero weight). Without: the exponential
 * race (Gumbel top-k): the num_samples smallest -log(u) / w, in order. */
static tt_status_t lower_multinomial(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* pt = tt_shlo_type(f, c->args[0].val);
  if (!pt || (pt->rank != 1 && pt->rank != 2))
    return tt_status_make(TT_INVALID_ARGUMENT, "multinomial: prob_dist must be 1 or 2 dim");
  if (!tt_dtype_is_float(pt->dtype))
    return tt_status_make(TT_INVALID_ARGUMENT, "multinomial only supports floating-point dtypes for input");
  int64_t rows = pt->rank == 2 ? pt->dims[0] : 1, n = pt->dims[pt->rank - 1], s = c->args[1].i;
  bool repl = c->args[2].i != 0;
  if (!repl && s > n)
    return tt_status_make(TT_INTERNAL, "multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  const tt_type_t* ot = &c->out_types[0];
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_dtype_t cdt = wide(pt->dtype);
  int64_t d2[2] = {rows, n}, o2[2] = {rows, s};
  tt_val_t p = tt_l_reshape(f, tt_l_convert(f, c->args[0].val, cdt), 2, d2);
  tt_val_t zero = k_like(f, p, 0.0);
  tt_val_t bad = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "LT", p, zero),
                             tt_l_compare(f, "NE", p, p));
  bad = tt_l_binary(f, "stablehlo.or", bad, tt_l_compare(f, "EQ", un(f, "stablehlo.abs", p), k_like(f, p, INFINITY)));
  tt_shlo_add_check(f, any_true(f, bad), TT_INTERNAL, "probability tensor contains either `inf`, `nan` or element < 0");
  tt_val_t total = tt_lt_sum(f, p, 2u); /* (rows) */
  tt_shlo_add_check(f, any_true(f, tt_l_compare(f, "LE", total, k_like(f, total, 0.0))), TT_INTERNAL,
                    "invalid multinomial distribution (sum of probabilities <= 0)");
  tt_val_t pos = tt_l_compare(f, "GT", p, zero);
  tt_val_t iota = tt_lt_iota(f, TT_I64, 2, d2, 1);
  if (!repl) {
    tt_val_t nz = tt_lt_sum(f, tt_l_convert(f, pos, TT_I64), 2u);
    tt_shlo_add_check(f, any_true(f, tt_l_compare(f, "LT", nz, k_like(f, nz, (double)s))), TT_INTERNAL,
                      "invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)");
    tt_val_t u = tt_l_reshape(f, uniform_open(f, rng_state(c), cdt, rows, n), 2, d2);
    tt_val_t e = un(f, "stablehlo.negate", un(f, "stablehlo.log", u));
    tt_val_t key = tt_l_select(f, pos, bin(f, "stablehlo.divide", e, tt_l_select(f, pos, p, k_like(f, p, 1.0))),
                               k_like(f, p, INFINITY));
    tt_type_t sv = tt_type_scalar(cdt), si = tt_type_scalar(TT_I64);
    tt_type_t bt[4] = {sv, sv, si, si};
    tt_val_t b[4];
    tt_shlo_region_begin(f, bt, 4, b);
    tt_val_t lt = tt_l_compare(f, "LT", b[0], b[1]);
    char* region = tt_shlo_region_end(f, &lt, 1);
    tt_type_t rt[2] = {*tt_shlo_type(f, key), *tt_shlo_type(f, iota)};
    tt_val_t ops[2] = {key, iota}, outs[2];
    tt_shlo_op_multi(f, "stablehlo.sort", ops, 2, rt, 2, "dimension = 1 : i64, is_stable = true", region, outs);
    tt_val_t idx = tt_lt_slice_dim(f, outs[1], 1, 0, s);
    return tt_l_set_out(c, 0, tt_l_reshape(f, idx, ot->rank, ot->dims));
  }
  tt_val_t cdf = tt_lt_scan(f, p, 1, "stablehlo.add");
  tt_val_t u = tt_l_reshape(f, uniform_open(f, rng_state(c), cdt, rows, s), 2, o2);
  int64_t bd0[1] = {0};
  tt_val_t t = bin(f, "stablehlo.multiply", u, tt_lt_bcast_in_dim(f, total, 2, o2, bd0));
  int64_t d3[3] = {rows, s, n}, bt_[2] = {0, 1}, bc[2] = {0, 2};
  tt_val_t le = tt_l_compare(f, "LE", tt_lt_bcast_in_dim(f, cdf, 3, d3, bc), tt_lt_bcast_in_dim(f, t, 3, d3, bt_));
  tt_val_t cnt = tt_lt_sum(f, tt_l_convert(f, le, TT_I64), 4u); /* (rows, s) */
  tt_val_t last = tt_lt_extreme(f, tt_l_select(f, pos, iota, k_like(f, iota, 0.0)), 2u, true);
  cnt = bin(f, "stablehlo.minimum", cnt, tt_lt_bcast_in_dim(f, last, 2, o2, bd0));
  return tt_l_set_out(c, 0, tt_l_reshape(f, cnt, ot->rank, ot->dims));
}

#define RNG TT_LF_RNG
/* CPU's normal out= kernels resize an out contiguous, whatever the mean's layout */
#define RNG_OUT (TT_LF_RNG | TT_LF_OUT_RESIZE_CONTIGUOUS)
#define RNG_WO (TT_LF_RNG | TT_LF_WRITE_ONLY)

const tt_lower_entry_t tt_lower_random_more[] = {
    {"aten::cauchy_", lower_cauchy, 0, RNG_WO},
    {"aten::log_normal_", lower_log_normal, 0, RNG_WO},
    {"aten::geometric_", lower_geometric, 0, RNG_WO},
    {"aten::normal.Tensor_Tensor", lower_normal_t, NORM_TT, RNG},
    {"aten::normal.Tensor_Tensor_out", lower_normal_t, NORM_TT, RNG_OUT},
    {"aten::normal.Tensor_float", lower_normal_t, NORM_TF, RNG},
    {"aten::normal.Tensor_float_out", lower_normal_t, NORM_TF, RNG_OUT},
    {"aten::normal.float_Tensor", lower_normal_t, NORM_FT, RNG},
    {"aten::normal.float_Tensor_out", lower_normal_t, NORM_FT, RNG_OUT},
    {"aten::multinomial", lower_multinomial, 0, RNG},
    {"aten::multinomial.out", lower_multinomial, 0, RNG},
};
const int tt_lower_random_more_count = TT_TABLE_COUNT(tt_lower_random_more);
