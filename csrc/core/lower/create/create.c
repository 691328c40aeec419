/* Tensor creation: fill, zero, arange, linspace, eye, and the random
 * fillers (uniform_, normal_, random_, bernoulli, exponential_). Random ops
 * get a (seed, offset) state as their last argument (TT_LF_RNG) and draw
 * bits with stablehlo.rng_bit_generator; they match PyTorch CPU in
 * distribution, not in values. */
#include <math.h>

#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

static tt_type_t out_as(tt_lctx_t* c, tt_dtype_t dt) {
  tt_type_t t = c->out_types[0];
  t.dtype = dt;
  return t;
}

/* ---- fill / zero -------------------------------------------------------------- */

/* fill(.Scalar/.Tensor)(self, value); zero(self). param 1: the value is args[1] */
static tt_status_t lower_fill(tt_lctx_t* c) {
  const tt_type_t* ot = &c->out_types[0];
  if (c->op->param == 0) return tt_l_set_out(c, 0, tt_shlo_const(c->f, ot, 0.0));
  tt_val_t v = tt_lt_scalar(c, 1, ot->dtype);
  return tt_l_set_out(c, 0, tt_lt_splat(c->f, v, ot->rank, ot->dims));
}

/* ---- arange / linspace / eye ------------------------------------------------------ */

/* arange(.start_out / .out / functional): param = start index | step index << 8
 * | end index << 16, 0xff = absent. PyTorch CPU computes start + i * step in
 * double for f32/f64 outputs, in float for f16/bf16, in int64 for integers. */
static tt_status_t lower_arange(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int is = (int)(c->op->param & 0xff), ip = (int)((c->op->param >> 8) & 0xff);
  const tt_type_t* ot = &c->out_types[0];
  tt_dtype_t dt = ot->dtype;
  tt_dtype_t cdt = !tt_dtype_is_float(dt) ? TT_I64 : (dt == TT_F16 || dt == TT_BF16) ? TT_F32 : TT_F64;
  int64_t n = tt_type_numel(ot);
  tt_val_t start = is != 0xff ? tt_lt_scalar(c, is, cdt) : tt_lt_const0(f, cdt, 0.0);
  tt_val_t step = ip != 0xff ? tt_lt_scalar(c, ip, cdt) : tt_lt_const0(f, cdt, 1.0);
  tt_val_t i = tt_lt_iota(f, cdt, 1, &n, 0);
  tt_val_t r = tt_l_binary(f, "stablehlo.multiply", tt_lt_splat(f, step, 1, &n), i);
  r = tt_l_binary(f, "stablehlo.add", tt_lt_splat(f, start, 1, &n), r);
  return tt_l_set_out(c, 0, r);
}

/* linspace(start, end, steps): PyTorch's two-sided formula (start + i*step in
 * the first half, end - (steps-1-i)*step in the second); integer outputs
 * step in double and truncate. */
static tt_status_t lower_linspace(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_dtype_t dt = ot->dtype;
  int64_t n = tt_type_numel(ot);
  if (n == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  bool fl = tt_dtype_is_float(dt) || tt_dtype_is_complex(dt);
  tt_dtype_t cdt = fl ? tt_l_opmath(dt) : TT_F64;
  tt_dtype_t sdt = fl ? cdt : TT_I64; /* start/end as scalar_t */
  /* the index and its comparison are real; complex: (i, 0) in the products */
  tt_dtype_t idt = tt_dtype_is_complex(cdt) ? tt_dtype_real_part(cdt) : cdt;
  tt_val_t s = tt_l_convert(f, tt_lt_scalar(c, 0, sdt), cdt);
  tt_val_t e = tt_l_convert(f, tt_lt_scalar(c, 1, sdt), cdt);
  if (n == 1) return tt_l_set_out(c, 0, tt_lt_splat(f, s, 1, &n));
  tt_val_t step = tt_l_binary(f, "stablehlo.divide", tt_l_binary(f, "stablehlo.subtract", e, s),
                              tt_lt_const0(f, cdt, (double)(n - 1)));
  tt_type_t vt = tt_type_make(idt, 1, &n);
  tt_val_t ir = tt_lt_iota(f, idt, 1, &n, 0), i = tt_l_convert(f, ir, cdt);
  tt_val_t sb = tt_lt_splat(f, s, 1, &n), eb = tt_lt_splat(f, e, 1, &n), stb = tt_lt_splat(f, step, 1, &n);
  tt_val_t lo = tt_l_binary(f, "stablehlo.add", sb, tt_l_binary(f, "stablehlo.multiply", stb, i));
  tt_val_t back = tt_l_convert(f, tt_l_binary(f, "stablehlo.subtract", tt_shlo_const(f, &vt, (double)(n - 1)), ir), cdt);
  tt_val_t hi = tt_l_binary(f, "stablehlo.subtract", eb, tt_l_binary(f, "stablehlo.multiply", stb, back));
  tt_val_t first = tt_l_compare(f, "LT", ir, tt_shlo_const(f, &vt, (double)(n / 2)));
  return tt_l_set_out(c, 0, tt_l_select(f, first, lo, hi));
}

/* eye(n[, m]): the out type carries the shape */
static tt_status_t lower_eye(tt_lctx_t* c) {
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t a = tt_lt_iota(c->f, TT_I64, 2, ot->dims, 0), b = tt_lt_iota(c->f, TT_I64, 2, ot->dims, 1);
  return tt_l_set_out(c, 0, tt_l_compare(c->f, "EQ", a, b));
}

/* ---- random ---------------------------------------------------------------------------- */

static tt_val_t rng_state(tt_lctx_t* c) { return c->args[c->nargs - 1].val; }

static tt_status_t need_float(tt_lctx_t* c) {
  if (tt_dtype_is_float(c->out_types[0].dtype)) return NULL;
  return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a floating point tensor, got %s",
                        c->op->name, tt_dtype_name(c->out_types[0].dtype));
}

/* Complex outputs draw 2n values of the part dtype: the first n are the real
 * parts, the rest the imaginary parts (as PyTorch CPU fills a complex tensor
 * through its real view, in distribution). */
static int64_t draws(const tt_type_t* ot) {
  return tt_type_numel(ot) * (tt_dtype_is_complex(ot->dtype) ? 2 : 1);
}
static tt_status_t set_draws(tt_lctx_t* c, tt_val_t v) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  if (tt_dtype_is_complex(ot->dtype)) {
    int64_t n = tt_type_numel(ot);
    tt_val_t re = tt_l_reshape(f, tt_lt_slice_dim(f, v, 0, 0, n), ot->rank, ot->dims);
    tt_val_t im = tt_l_reshape(f, tt_lt_slice_dim(f, v, 0, n, 2 * n), ot->rank, ot->dims);
    tt_type_t rt = *ot;
    tt_val_t ops[2] = {re, im};
    return tt_l_set_out(c, 0, tt_shlo_op(f, "stablehlo.complex", ops, 2, &rt, NULL));
  }
  return tt_l_set_out(c, 0, tt_l_reshape(f, v, ot->rank, ot->dims));
}

/* uniform_(self, from, to); complex: each part uniform in [from, to) */
static tt_status_t lower_uniform(tt_lctx_t* c) {
  const tt_type_t* ot = &c->out_types[0];
  if (!tt_dtype_is_complex(ot->dtype)) TT_RETURN_IF_ERROR(need_float(c));
  tt_shlo_fn_t* f = c->f;
  int64_t m = draws(ot);
  tt_val_t u = tt_lt_uniform01(f, rng_state(c), tt_dtype_real_part(ot->dtype), 1, &m);
  tt_type_t ut = *tt_shlo_type(f, u);
  double from = c->args[1].f, to = c->args[2].f;
  tt_val_t r = tt_l_binary(f, "stablehlo.multiply", u, tt_shlo_const(f, &ut, to - from));
  r = tt_l_binary(f, "stablehlo.add", r, tt_shlo_const(f, &ut, from));
  return set_draws(c, r);
}

/* normal_(self, mean, std): Box-Muller over two uniform draws; complex: each
 * part mean + std / sqrt(2) * z, so that E|x - mean|^2 = std^2 (as CPU) */
static tt_status_t lower_normal(tt_lctx_t* c) {
  const tt_type_t* ot = &c->out_types[0];
  bool cx = tt_dtype_is_complex(ot->dtype);
  if (!cx) TT_RETURN_IF_ERROR(need_float(c));
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t pd = tt_dtype_real_part(ot->dtype);
  tt_dtype_t cdt = pd == TT_F64 ? TT_F64 : TT_F32;
  int64_t n = draws(ot), d2[2] = {2, n};
  tt_val_t u = tt_lt_uniform01(f, rng_state(c), cdt, 2, d2);
  tt_type_t vt = tt_type_make(cdt, 1, &n);
  tt_val_t u1 = tt_l_reshape(f, tt_lt_slice_dim(f, u, 0, 0, 1), 1, &n);
  tt_val_t u2 = tt_l_reshape(f, tt_lt_slice_dim(f, u, 0, 1, 2), 1, &n);
  u1 = tt_l_binary(f, "stablehlo.subtract", tt_shlo_const(f, &vt, 1.0), u1); /* (0, 1] */
  tt_val_t rad = tt_l_unary(f, "stablehlo.sqrt",
                            tt_l_binary(f, "stablehlo.multiply", tt_shlo_const(f, &vt, -2.0),
                                        tt_l_unary(f, "stablehlo.log", u1)));
  tt_val_t ang = tt_l_binary(f, "stablehlo.multiply", tt_shlo_const(f, &vt, 2.0 * M_PI), u2);
  tt_val_t z = tt_l_binary(f, "stablehlo.multiply", rad, tt_l_unary(f, "stablehlo.cosine", ang));
  double sd = cx ? c->args[2].f * M_SQRT1_2 : c->args[2].f;
  z = tt_l_binary(f, "stablehlo.multiply", z, tt_shlo_const(f, &vt, sd));
  z = tt_l_binary(f, "stablehlo.add", z, tt_shlo_const(f, &vt, c->args[1].f));
  return set_draws(c, tt_l_convert(f, z, pd));
}

/* exponential_(self, lambd): -log1p(-u) / lambd */
static tt_status_t lower_exponential(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_float(c));
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t u = tt_lt_uniform01(f, rng_state(c), ot->dtype == TT_F64 ? TT_F64 : TT_F32, ot->rank, ot->dims);
  tt_type_t ut = *tt_shlo_type(f, u);
  tt_val_t r = tt_l_unary(f, "stablehlo.log_plus_one", tt_l_unary(f, "stablehlo.negate", u));
  r = tt_l_binary(f, "stablehlo.multiply", r, tt_shlo_const(f, &ut, -1.0 / c->args[1].f));
  return tt_l_set_out(c, 0, r);
}

/* randperm.out / randperm.generator_out(n, generator?, out): the order that
 * sorts n random 64-bit keys (ties keep index order, so the result is always
 * a permutation). */
static tt_status_t lower_randperm(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  int64_t n = ot->rank == 1 ? ot->dims[0] : 0;
  if (n == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_val_t keys = tt_lt_rng_bits(f, rng_state(c), TT_U64, 1, &n);
  tt_val_t iota = tt_lt_iota(f, TT_I64, 1, &n, 0);
  tt_type_t bt[4] = {tt_type_scalar(TT_U64), tt_type_scalar(TT_U64), tt_type_scalar(TT_I64),
                     tt_type_scalar(TT_I64)};
  tt_val_t b[4];
  tt_shlo_region_begin(f, bt, 4, b);
  tt_val_t lt = tt_l_compare(f, "LT", b[0], b[1]);
  char* region = tt_shlo_region_end(f, &lt, 1);
  tt_type_t rt[2] = {tt_type_make(TT_U64, 1, &n), tt_type_make(TT_I64, 1, &n)};
  tt_val_t ops[2] = {keys, iota}, outs[2];
  tt_shlo_op_multi(f, "stablehlo.sort", ops, 2, rt, 2, "dimension = 0 : i64, is_stable = true", region, outs);
  return tt_l_set_out(c, 0, outs[1]);
}

enum { RND_DEFAULT, RND_FROM, RND_TO };

/* The bit length of |v| minus one (v != 0). */
static int top_bit(int64_t v) {
  uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  int n = 0;
  while (a >>= 1) n++;
  return n;
}

/* v rounded to `digits` significant bits, ties to even (the nearest value of
 * a float dtype with that many mantissa digits); saturates at INT64_MAX. */
static int64_t round_to_digits(int64_t v, int digits) {
  if (v == 0 || top_bit(v) < digits) return v;
  int shift = top_bit(v) - digits + 1;
  uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  uint64_t q = a >> shift, rem = a & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  if (q >= ((uint64_t)1 << (63 - shift))) return v < 0 ? INT64_MIN : INT64_MAX;
  int64_t r = (int64_t)(q << shift);
  return v < 0 ? -r : r;
}

/* As CPU, for float dtypes: from moves up where from + 1 rounds below it, to
 * moves down where to - 1 rounds to it or above, by the dtype's spacing of
 * values there, so that every drawn integer converts into [from, to). */
static int64_t float_from(int64_t from, int digits) {
  if (from == INT64_MAX) return from;
  int64_t r = round_to_digits(from + 1, digits);
  return r < from ? r + ((int64_t)1 << (top_bit(from + 1) - digits + 1)) : from;
}
static int64_t float_to(int64_t to, int digits) {
  if (to == INT64_MIN) return to;
  int64_t r = round_to_digits(to - 1, digits);
  return r >= to ? r - ((int64_t)1 << (top_bit(to - 1) - digits + 1)) : to;
}

/* random_(self), random_.from(self, from, to?), random_.to(self, to):
 * uniform integers in [lo, hi]; the default hi is 2^mantissa for floats and
 * the dtype's max for integers. */
static tt_status_t lower_random(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_dtype_t dt = ot->dtype;
  int64_t top;
  switch (dt) {
    case TT_F64: top = (int64_t)1 << 53; break;
    case TT_F32: top = (int64_t)1 << 24; break;
    case TT_F16: top = (int64_t)1 << 11; break;
    case TT_BF16: top = (int64_t)1 << 8; break;
    case TT_BOOL: top = 1; break;
    case TT_U64: top = INT64_MAX; break;
    default:
      top = tt_dtype_is_unsigned_int(dt) ? (int64_t)((1ull << (8 * tt_dtype_size(dt))) - 1)
                                         : (int64_t)((1ull << (8 * tt_dtype_size(dt) - 1)) - 1);
  }
  int digits = dt == TT_F64 ? 53 : dt == TT_F32 ? 24 : dt == TT_F16 ? 11 : dt == TT_BF16 ? 8 : 0;
  int64_t lo = 0, hi = top;
  if (c->op->param == RND_FROM) {
    lo = digits ? float_from(c->args[1].i, digits) : c->args[1].i;
    if (c->args[2].kind == TT_ARG_INT) hi = (digits ? float_to(c->args[2].i, digits) : c->args[2].i) - 1;
  } else if (c->op->param == RND_TO) {
    hi = (digits ? float_to(c->args[1].i, digits) : c->args[1].i) - 1;
  }
  if (hi < lo)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                          c->op->name, (long long)lo, (long long)hi + 1);
  uint64_t range = (uint64_t)hi - (uint64_t)lo + 1; /* 0 means 2^64 */
  tt_type_t ut = out_as(c, TT_U64);
  tt_val_t bits = tt_lt_rng_bits(f, rng_state(c), TT_U64, ot->rank, ot->dims);
  if (range) bits = tt_l_binary(f, "stablehlo.remainder", bits, tt_shlo_const_i64(f, &ut, (int64_t)range));
  bits = tt_l_binary(f, "stablehlo.add", bits, tt_shlo_const_i64(f, &ut, lo));
  tt_type_t it = out_as(c, TT_I64);
  tt_val_t r = tt_shlo_op(f, "stablehlo.bitcast_convert", &bits, 1, &it, NULL);
  return tt_l_set_out(c, 0, r);
}

enum { BERN_SELF, BERN_FLOAT, BERN_TENSOR };

/* bernoulli_(.float/.Tensor)(self, p), bernoulli(self) (self holds p),
 * bernoulli.p(self, p), bernoulli.Tensor(self, p) */
static tt_status_t lower_bernoulli(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  int kind = (int)c->op->param;
  bool wide = (kind == BERN_SELF && tt_l_arg_dtype(c, 0) == TT_F64) ||
              (kind == BERN_TENSOR && tt_l_arg_dtype(c, 1) == TT_F64);
  tt_dtype_t cdt = wide ? TT_F64 : TT_F32;
  tt_type_t ct = out_as(c, cdt);
  tt_val_t u = tt_lt_uniform01(f, rng_state(c), cdt, ot->rank, ot->dims);
  tt_val_t p = kind == BERN_FLOAT ? tt_shlo_const(f, &ct, c->args[1].f)
                                  : tt_l_arg_as(c, kind == BERN_SELF ? 0 : 1, cdt, &ct);
  if (kind != BERN_FLOAT) { /* CPU checks every p (a float p: the bridge does) */
    tt_val_t in = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "GE", p, tt_shlo_const(f, &ct, 0.0)),
                              tt_l_compare(f, "LE", p, tt_shlo_const(f, &ct, 1.0)));
    tt_val_t bad = tt_l_unary(f, "stablehlo.not", in);
    if (ot->rank) bad = tt_lt_reduce(f, bad, (1u << ot->rank) - 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0));
    tt_shlo_add_check(f, bad, TT_INTERNAL, /* CPU's RuntimeError */
                      "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                      "improved?  If so, please report an enhancement request to PyTorch.)");
  }
  return tt_l_set_out(c, 0, tt_l_compare(f, "LT", u, p));
}

#define WO TT_LF_WRITE_ONLY
#define RNG_WO (TT_LF_RNG | TT_LF_WRITE_ONLY)
#define AR(start, step) ((int64_t)(start) | ((int64_t)(step) << 8))

const tt_lower_entry_t tt_lower_create[] = {
    {"aten::fill_.Scalar", lower_fill, 1, WO},
    {"aten::fill.Scalar", lower_fill, 1, 0},
    {"aten::fill.Scalar_out", lower_fill, 1, 0},
    {"aten::fill_.Tensor", lower_fill, 1, WO},
    {"aten::fill.Tensor", lower_fill, 1, 0},
    {"aten::fill.Tensor_out", lower_fill, 1, 0},
    {"aten::zero_", lower_fill, 0, WO},
    {"aten::zero", lower_fill, 0, 0},
    {"aten::zero.out", lower_fill, 0, 0},
    {"aten::arange.start_out", lower_arange, AR(0, 2), 0},
    {"aten::arange.out", lower_arange, AR(0xff, 0xff), 0},
    {"aten::arange", lower_arange, AR(0xff, 0xff), 0},
    /* range: arange with the end included (the size is the meta kernel's) */
    {"aten::range.out", lower_arange, AR(0, 2), 0},
    {"aten::range.out_", lower_arange, AR(0, 0xff), 0},
    {"aten::range.step", lower_arange, AR(0, 2), 0},
    {"aten::range", lower_arange, AR(0, 0xff), 0},
    {"aten::arange.start", lower_arange, AR(0, 0xff), 0},
    {"aten::arange.start_step", lower_arange, AR(0, 2), 0},
    {"aten::linspace", lower_linspace, 0, 0},
    {"aten::linspace.out", lower_linspace, 0, 0},
    {"aten::linspace.Tensor_Tensor", lower_linspace, 0, 0},
    {"aten::linspace.Tensor_Tensor_out", lower_linspace, 0, 0},
    {"aten::linspace.Tensor_Scalar", lower_linspace, 0, 0},
    {"aten::linspace.Tensor_Scalar_out", lower_linspace, 0, 0},
    {"aten::linspace.Scalar_Tensor", lower_linspace, 0, 0},
    {"aten::linspace.Scalar_Tensor_out", lower_linspace, 0, 0},
    {"aten::eye", lower_eye, 0, 0},
    {"aten::eye.m", lower_eye, 0, 0},
    {"aten::eye.out", lower_eye, 0, 0},
    {"aten::eye.m_out", lower_eye, 0, 0},
    {"aten::uniform_", lower_uniform, 0, RNG_WO},
    {"aten::normal_", lower_normal, 0, RNG_WO},
    {"aten::exponential_", lower_exponential, 0, RNG_WO},
    {"aten::random_", lower_random, RND_DEFAULT, RNG_WO},
    {"aten::random_.from", lower_random, RND_FROM, RNG_WO},
    {"aten::random_.to", lower_random, RND_TO, RNG_WO},
    {"aten::randperm.out", lower_randperm, 0, RNG_WO},
    {"aten::randperm.generator_out", lower_randperm, 0, RNG_WO},
    {"aten::bernoulli_.float", lower_bernoulli, BERN_FLOAT, RNG_WO},
    {"aten::bernoulli_.Tensor", lower_bernoulli, BERN_TENSOR, RNG_WO},
    {"aten::bernoulli", lower_bernoulli, BERN_SELF, TT_LF_RNG},
    {"aten::bernoulli.out", lower_bernoulli, BERN_SELF, TT_LF_RNG},
    {"aten::bernoulli.p", lower_bernoulli, BERN_FLOAT, TT_LF_RNG},
    {"aten::bernoulli.float_out", lower_bernoulli, BERN_FLOAT, TT_LF_RNG},
    {"aten::bernoulli.Tensor", lower_bernoulli, BERN_TENSOR, TT_LF_RNG},
    {"aten::bernoulli.Tensor_out", lower_bernoulli, BERN_TENSOR, TT_LF_RNG},
};
const int tt_lower_create_count = TT_TABLE_COUNT(tt_lower_create);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_create_facts[] = {
    TT_FACT_SCALARS("aten::fill", TT_LF_COMPLEX, "value:result"),
    TT_FACT_SCALARS("aten::fill_", TT_LF_COMPLEX, "value:result"),
    TT_FACT("aten::zero", TT_LF_COMPLEX), TT_FACT("aten::zero_", TT_LF_COMPLEX),
    TT_FACT("aten::eye", TT_LF_COMPLEX), TT_FACT("aten::normal_", TT_LF_COMPLEX),
    TT_FACT("aten::uniform_", TT_LF_COMPLEX), TT_FACT("aten::linspace", TT_LF_COMPLEX),
    TT_FACT("aten::linspace", TT_LF_OUT_KEEPS_SHAPE), TT_FACT("aten::arange", TT_LF_OUT_KEEPS_SHAPE),
    TT_FACT("aten::range", TT_LF_OUT_KEEPS_SHAPE),
    /* compile-time bucketing (tt_lower_bucket_t), per overload as torch.compile's graphs call
     * them; factories without a lowering here are PyTorch's kernels over fill / empty */
    TT_FACT_BUCKET("aten::ones.default", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::zeros.default", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::full.default", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::empty.memory_format", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::empty_strided.default", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::scalar_tensor.default", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::arange.default", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::arange.start", TT_BUCKET_CREATE),
    TT_FACT_BUCKET("aten::arange.start_step", TT_BUCKET_CREATE),
};
const int tt_lower_create_facts_count = TT_TABLE_COUNT(tt_lower_create_facts);
