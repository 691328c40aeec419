/* The unary family: elementwise math on one tensor (this file) and the
 * activations with their backward ops (unary_act.c). Every row's param is a
 * tt__ew_uop_t; the per-op detail (StableHLO op or expression, accepted
 * dtypes, how integer inputs are treated) lives in the parallel table below. */
#include <math.h>
#include <string.h>

#include "lower_elementwise.h"
#include "../tt_lower_tables.h"

typedef struct ustate {
  tt_lctx_t* c;
  tt_shlo_fn_t* f;
} ustate_t;

typedef tt_val_t (*ubuild_t)(ustate_t* s, tt_val_t x);

/* How the input dtype maps to the dtype the op computes in. */
enum ukind {
  UK_FLOAT, /* a float function: ints and bools become the default float dtype; f16/bf16 compute in f32 */
  UK_SAME,  /* dtype-preserving arithmetic (ints stay ints); f16/bf16 compute in f32 */
  UK_ROUND, /* rounding: identity on ints, else like UK_SAME */
  UK_PRED,  /* a predicate on the raw input (result bool) */
  UK_RAW,   /* a selection on the raw input (same dtype) */
};

typedef struct uinfo {
  const char* shlo; /* one StableHLO/CHLO op, or NULL */
  ubuild_t build;   /* else an expression */
  unsigned char kind;
  unsigned char accept; /* TT_EW_* */
} uinfo_t;

#define F_ s->f
static tt_val_t un(ustate_t* s, const char* op, tt_val_t x) { return tt_l_unary(s->f, op, x); }
static bool is_dt(ustate_t* s, tt_val_t x, bool (*pred)(tt_dtype_t)) {
  const tt_type_t* t = tt_shlo_type(s->f, x);
  return t && pred(t->dtype);
}
static bool is_bool(tt_dtype_t dt) { return dt == TT_BOOL; }

/* abs of bool: CPU refuses it, CUDA (and the device) returns it unchanged */
static tt_val_t b_abs(ustate_t* s, tt_val_t x) {
  if (is_dt(s, x, tt_dtype_is_unsigned_int) || tt_shlo_type(s->f, x)->dtype == TT_BOOL) return x;
  return un(s, "stablehlo.abs", x);
}

static tt_val_t b_neg(ustate_t* s, tt_val_t x) {
  if (is_dt(s, x, tt_dtype_is_unsigned_int)) return tt__ew_sub(F_, tt__ew_k(F_, x, 0), x);
  return un(s, "stablehlo.negate", x);
}

static tt_val_t b_exp2(ustate_t* s, tt_val_t x) {
  return tt_l_binary(F_, "stablehlo.power", tt__ew_k(F_, x, 2.0), x);
}

/* log_b(x) = log(x) / log(b), made exact where the answer is an integer k
 * (b^k == x), as PyTorch's log2/log10 are for exact powers. */
static tt_val_t logbase(ustate_t* s, tt_val_t x, double base) {
  tt_val_t r = tt__ew_divk(F_, un(s, "stablehlo.log", x), log(base));
  tt_val_t k = un(s, "stablehlo.round_nearest_even", r);
  tt_val_t p = tt_l_binary(F_, "stablehlo.power", tt__ew_k(F_, x, base), k);
  return tt_l_select(F_, tt_l_compare(F_, "EQ", p, x), k, r);
}
static tt_val_t b_log2(ustate_t* s, tt_val_t x) { return logbase(s, x, 2.0); }
static tt_val_t b_log10(ustate_t* s, tt_val_t x) { return logbase(s, x, 10.0); }

static tt_val_t b_sigmoid(ustate_t* s, tt_val_t x) { return tt__ew_sigmoid(F_, x); }

/* atan(x) = atan2(x, 1). The API 0.115 CPU plugin miscompiles atan2 against
 * a splat constant for 64+ elements (chlo.atan expands to that too), so the
 * 1 comes from (x == x) | (x != x), which it cannot fold. */
static tt_val_t b_atan(ustate_t* s, tt_val_t x) {
  const tt_type_t* t = tt_shlo_type(F_, x);
  if (!t) return TT_SHLO_INVALID;
  tt_val_t yes = tt_l_binary(F_, "stablehlo.or", tt_l_compare(F_, "EQ", x, x), tt_l_compare(F_, "NE", x, x));
  return tt_l_binary(F_, "stablehlo.atan2", x, tt_l_convert(F_, yes, t->dtype));
}

/* chlo.erf_inv plus one Newton step (XLA's f32 erf_inv is a little off
 * PyTorch's near +-1). The residual erf(y) - x is taken as
 * sign(y) * ((1 - |x|) - erfc(|y|)) in the tails, where 1 - |x| is exact;
 * +-1 and beyond keep chlo's inf / NaN. */
static tt_val_t b_erfinv(ustate_t* s, tt_val_t x) {
  tt_val_t y = un(s, "chlo.erf_inv", x);
  tt_val_t ax = un(s, "stablehlo.abs", x), ay = un(s, "stablehlo.abs", y);
  tt_val_t tail = tt__ew_mul(F_, un(s, "stablehlo.sign", y),
                             tt__ew_sub(F_, tt__ew_sub(F_, tt__ew_k(F_, x, 1.0), ax), un(s, "chlo.erfc", ay)));
  tt_val_t res = tt_l_select(F_, tt__ew_cmpk(F_, "GT", ax, 0.5), tail, tt__ew_sub(F_, tt__ew_erf(F_, y), x));
  tt_val_t d = tt__ew_mulk(F_, un(s, "stablehlo.exponential", un(s, "stablehlo.negate", tt__ew_mul(F_, y, y))),
                           M_2_SQRTPI);
  tt_val_t ny = tt__ew_sub(F_, y, tt__ew_div(F_, res, d));
  return tt_l_select(F_, tt__ew_cmpk(F_, "LT", ax, 1.0), ny, y);
}

/* chlo.digamma gives NaN at 0; PyTorch gives copysign(inf, -x). */
static tt_val_t b_digamma(ustate_t* s, tt_val_t x) {
  tt_val_t r = un(s, "chlo.digamma", x);
  tt_val_t inf = tt_l_select(F_, tt__ew_signbit(F_, x), tt__ew_k(F_, x, INFINITY), tt__ew_k(F_, x, -INFINITY));
  return tt_l_select(F_, tt__ew_cmpk(F_, "EQ", x, 0), inf, r);
}
static tt_val_t b_erf(ustate_t* s, tt_val_t x) { return tt__ew_erf(F_, x); }

/* PyTorch: decimals > 0: nearbyint(x * 10^d) / 10^d; else nearbyint(x / 10^-d) * 10^-d. */
static tt_val_t b_round_dec(ustate_t* s, tt_val_t x) {
  int64_t d = (s->c->nargs > 1 && s->c->args[1].kind == TT_ARG_INT) ? s->c->args[1].i : 0;
  bool neg = d < 0;
  double k = pow(10.0, (double)(neg ? -d : d));
  tt_val_t p = tt__ew_k(F_, x, k);
  if (neg) return tt__ew_mul(F_, un(s, "stablehlo.round_nearest_even", tt__ew_divk(F_, x, k)), p);
  return tt__ew_divk(F_, un(s, "stablehlo.round_nearest_even", tt__ew_mul(F_, x, p)), k);
}

static tt_val_t b_trunc(ustate_t* s, tt_val_t x) {
  return tt_l_select(F_, tt__ew_cmpk(F_, "LT", x, 0), un(s, "stablehlo.ceil", x),
                     un(s, "stablehlo.floor", x));
}

static tt_val_t b_frac(ustate_t* s, tt_val_t x) { return tt__ew_sub(F_, x, b_trunc(s, x)); }

/* (0 < x) - (x < 0): 0 for NaN, as PyTorch. */
static tt_val_t b_sign(ustate_t* s, tt_val_t x) {
  const tt_type_t* t = tt_shlo_type(F_, x);
  if (!t || t->dtype == TT_BOOL) return x;
  tt_val_t pos = tt_l_convert(F_, tt__ew_cmpk(F_, "GT", x, 0), t->dtype);
  if (tt_dtype_is_unsigned_int(t->dtype)) return pos;
  tt_val_t neg = tt_l_convert(F_, tt__ew_cmpk(F_, "LT", x, 0), t->dtype);
  return tt__ew_sub(F_, pos, neg);
}

static tt_val_t b_reciprocal(ustate_t* s, tt_val_t x) { return tt__ew_div(F_, tt__ew_k(F_, x, 1.0), x); }

static tt_val_t b_logical_not(ustate_t* s, tt_val_t x) {
  if (is_dt(s, x, is_bool)) return un(s, "stablehlo.not", x);
  return tt__ew_cmpk(F_, "EQ", x, 0);
}

static tt_val_t b_isnan(ustate_t* s, tt_val_t x) { return tt__ew_isnan(F_, x); }
static tt_val_t inf_test(ustate_t* s, tt_val_t x, int which) {
  const tt_type_t* t = tt_shlo_type(F_, x);
  if (!t) return TT_SHLO_INVALID;
  if (!tt_dtype_is_float(t->dtype)) return tt_l_full(F_, TT_BOOL, t->rank, t->dims, 0);
  if (which == 0) return tt__ew_cmpk(F_, "EQ", un(s, "stablehlo.abs", x), INFINITY);
  return tt__ew_cmpk(F_, "EQ", x, which > 0 ? INFINITY : -INFINITY);
}
static tt_val_t b_isinf(ustate_t* s, tt_val_t x) { return inf_test(s, x, 0); }
static tt_val_t b_isposinf(ustate_t* s, tt_val_t x) { return inf_test(s, x, 1); }
static tt_val_t b_isneginf(ustate_t* s, tt_val_t x) { return inf_test(s, x, -1); }
static tt_val_t b_signbit(ustate_t* s, tt_val_t x) { return tt__ew_signbit(F_, x); }

/* nan_to_num(self, float? nan, float? posinf, float? neginf): defaults 0 and
 * the dtype's largest / lowest finite value. */
static tt_val_t b_nan_to_num(ustate_t* s, tt_val_t x) {
  const tt_type_t* xt = tt_shlo_type(F_, x);
  if (!xt) return TT_SHLO_INVALID;
  tt_dtype_t dt = xt->dtype;
  if (!tt_dtype_is_float(dt)) return x;
  double big = dt == TT_F64 ? 1.7976931348623157e308
               : dt == TT_F32 ? 3.4028234663852886e38
               : dt == TT_BF16 ? 3.3895313892515355e38
                               : 65504.0;
  double v[3] = {0.0, big, -big};
  for (int k = 0; k < 3; k++)
    if (s->c->nargs > 1 + k && s->c->args[1 + k].kind == TT_ARG_FLOAT) v[k] = s->c->args[1 + k].f;
  tt_val_t r = tt_l_select(F_, tt__ew_isnan(F_, x), tt__ew_k(F_, x, v[0]), x);
  r = tt_l_select(F_, tt__ew_cmpk(F_, "EQ", x, INFINITY), tt__ew_k(F_, x, v[1]), r);
  return tt_l_select(F_, tt__ew_cmpk(F_, "EQ", x, -INFINITY), tt__ew_k(F_, x, v[2]), r);
}

static tt_val_t b_deg2rad(ustate_t* s, tt_val_t x) { return tt__ew_mulk(F_, x, M_PI / 180.0); }
static tt_val_t b_rad2deg(ustate_t* s, tt_val_t x) { return tt__ew_mulk(F_, x, 180.0 / M_PI); }

#define NUM TT_EW_NUM
#define FLT TT_EW_FLOAT
#define ANY TT_EW_ANY
static const uinfo_t k_uops[] = {
    [TT_U_ABS] = {NULL, b_abs, UK_SAME, ANY},
    [TT_U_NEG] = {NULL, b_neg, UK_SAME, NUM},
    [TT_U_EXP] = {"stablehlo.exponential", NULL, UK_FLOAT, ANY},
    [TT_U_EXP2] = {NULL, b_exp2, UK_FLOAT, ANY},
    [TT_U_EXPM1] = {"stablehlo.exponential_minus_one", NULL, UK_FLOAT, ANY},
    [TT_U_LOG] = {"stablehlo.log", NULL, UK_FLOAT, ANY},
    [TT_U_LOG2] = {NULL, b_log2, UK_FLOAT, ANY},
    [TT_U_LOG10] = {NULL, b_log10, UK_FLOAT, ANY},
    [TT_U_LOG1P] = {"stablehlo.log_plus_one", NULL, UK_FLOAT, ANY},
    [TT_U_SQRT] = {"stablehlo.sqrt", NULL, UK_FLOAT, ANY},
    [TT_U_RSQRT] = {"stablehlo.rsqrt", NULL, UK_FLOAT, ANY},
    [TT_U_SIN] = {"stablehlo.sine", NULL, UK_FLOAT, ANY},
    [TT_U_COS] = {"stablehlo.cosine", NULL, UK_FLOAT, ANY},
    [TT_U_TAN] = {"stablehlo.tan", NULL, UK_FLOAT, ANY},
    [TT_U_TANH] = {"stablehlo.tanh", NULL, UK_FLOAT, ANY},
    [TT_U_SIGMOID] = {NULL, b_sigmoid, UK_FLOAT, ANY},
    [TT_U_ASIN] = {"chlo.asin", NULL, UK_FLOAT, ANY},
    [TT_U_ACOS] = {"chlo.acos", NULL, UK_FLOAT, ANY},
    [TT_U_ATAN] = {NULL, b_atan, UK_FLOAT, ANY},
    [TT_U_SINH] = {"chlo.sinh", NULL, UK_FLOAT, ANY},
    [TT_U_COSH] = {"chlo.cosh", NULL, UK_FLOAT, ANY},
    [TT_U_ASINH] = {"chlo.asinh", NULL, UK_FLOAT, ANY},
    [TT_U_ACOSH] = {"chlo.acosh", NULL, UK_FLOAT, ANY},
    [TT_U_ATANH] = {"chlo.atanh", NULL, UK_FLOAT, ANY},
    [TT_U_ERF] = {NULL, b_erf, UK_FLOAT, ANY},
    [TT_U_ERFC] = {"chlo.erfc", NULL, UK_FLOAT, ANY},
    [TT_U_ERFINV] = {NULL, b_erfinv, UK_FLOAT, ANY},
    [TT_U_LGAMMA] = {"chlo.lgamma", NULL, UK_FLOAT, ANY},
    [TT_U_DIGAMMA] = {NULL, b_digamma, UK_FLOAT, ANY},
    [TT_U_FLOOR] = {"stablehlo.floor", NULL, UK_ROUND, NUM},
    [TT_U_CEIL] = {"stablehlo.ceil", NULL, UK_ROUND, NUM},
    [TT_U_ROUND] = {"stablehlo.round_nearest_even", NULL, UK_ROUND, NUM},
    [TT_U_ROUND_DEC] = {NULL, b_round_dec, UK_SAME, FLT},
    [TT_U_TRUNC] = {NULL, b_trunc, UK_ROUND, NUM},
    [TT_U_FRAC] = {NULL, b_frac, UK_SAME, FLT},
    [TT_U_SIGN] = {NULL, b_sign, UK_SAME, ANY},
    [TT_U_RECIPROCAL] = {NULL, b_reciprocal, UK_FLOAT, ANY},
    [TT_U_LOGICAL_NOT] = {NULL, b_logical_not, UK_PRED, ANY},
    [TT_U_BITWISE_NOT] = {"stablehlo.not", NULL, UK_RAW, TT_EW_BOOL | TT_EW_INT},
    [TT_U_ISNAN] = {NULL, b_isnan, UK_PRED, ANY},
    [TT_U_ISINF] = {NULL, b_isinf, UK_PRED, ANY},
    [TT_U_ISPOSINF] = {NULL, b_isposinf, UK_PRED, ANY},
    [TT_U_ISNEGINF] = {NULL, b_isneginf, UK_PRED, ANY},
    [TT_U_SIGNBIT] = {NULL, b_signbit, UK_PRED, ANY},
    [TT_U_NAN_TO_NUM] = {NULL, b_nan_to_num, UK_RAW, ANY},
    [TT_U_DEG2RAD] = {NULL, b_deg2rad, UK_FLOAT, ANY},
    [TT_U_RAD2DEG] = {NULL, b_rad2deg, UK_FLOAT, ANY},
};
_Static_assert(sizeof(k_uops) / sizeof(k_uops[0]) == TT_U_MATH_COUNT, "one k_uops row per math uop");

tt_status_t tt__ew_lower_unary(tt_lctx_t* c) {
  int64_t p = c->op->param;
  if (p < 0 || p >= TT_U_MATH_COUNT || (!k_uops[p].shlo && !k_uops[p].build))
    return tt_status_make(TT_INTERNAL, "%s: bad unary param %lld", c->op->name, (long long)p);
  const uinfo_t* u = &k_uops[p];
  if (c->nargs < 1 || c->args[0].kind != TT_ARG_TENSOR)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a tensor", c->op->name);
  tt_dtype_t in = tt_l_arg_dtype(c, 0);
  /* complex abs / sgn: the complex family's lowerings (sign refuses complex, as on CPU) */
  if (tt_dtype_is_complex(in) && p == TT_U_ABS) return tt__cx_unary(c, TT_CX_ABS);
  if (tt_dtype_is_complex(in) && p == TT_U_SIGN && !strncmp(c->op->name, "aten::sgn", 9))
    return tt__cx_unary(c, TT_CX_SGN);
  if (tt_dtype_is_complex(in) && p == TT_U_NAN_TO_NUM) { /* each part as a real tensor */
    ustate_t s = {c, c->f};
    tt_val_t z = c->args[0].val;
    return tt_l_set_out(c, 0, tt__cx_make(c->f, b_nan_to_num(&s, tt__cx_re(c->f, z)),
                                          b_nan_to_num(&s, tt__cx_im(c->f, z))));
  }
  if (tt_dtype_is_complex(in)) return tt__cx_math(c, (int)p, u->shlo);
  TT_RETURN_IF_ERROR(tt__ew_check(c, in, u->accept));
  tt_val_t x = c->args[0].val;
  bool is_int = in == TT_BOOL || !tt_dtype_is_float(in);
  switch (u->kind) {
    case UK_FLOAT: x = tt_l_convert(c->f, x, tt__ew_float_compute(c, in)); break;
    case UK_SAME: x = tt_l_convert(c->f, x, tt_l_opmath(in)); break;
    case UK_ROUND:
      if (is_int) return tt_l_set_out(c, 0, x);
      x = tt_l_convert(c->f, x, tt_l_opmath(in));
      break;
    default: /* UK_PRED, UK_RAW: the input as is */
      break;
  }
  ustate_t s = {c, c->f};
  tt_val_t r = u->build ? u->build(&s, x) : tt_l_unary(c->f, u->shlo, x);
  /* The result is the input's float dtype, whatever an out= asks for (CPU computes in the
   * common dtype, then casts to out: sin of a float16 into a float32 out is rounded to f16). */
  if (u->kind != UK_PRED && tt_dtype_is_float(in)) r = tt_l_convert(c->f, r, in);
  return tt_l_set_out(c, 0, r);
}

/* ---- the table -------------------------------------------------------------- */
#define L tt__ew_lower_unary
#define A tt__ew_lower_act
/* functional, in-place and out= */
#define U3(fn, n, p) {"aten::" n, fn, p, 0}, {"aten::" n "_", fn, p, 0}, {"aten::" n ".out", fn, p, 0},
/* functional and out= */
#define U2(fn, n, p) {"aten::" n, fn, p, 0}, {"aten::" n ".out", fn, p, 0},
/* backward ops: functional and .grad_input */
#define UB(n, p) {"aten::" n, A, p, 0}, {"aten::" n ".grad_input", A, p, 0},

const tt_lower_entry_t tt_lower_unary[] = {
    U3(L, "abs", TT_U_ABS) U3(L, "neg", TT_U_NEG) U3(L, "exp", TT_U_EXP) U3(L, "exp2", TT_U_EXP2)
    U3(L, "expm1", TT_U_EXPM1) U3(L, "log", TT_U_LOG) U3(L, "log2", TT_U_LOG2)
    U3(L, "log10", TT_U_LOG10) U3(L, "log1p", TT_U_LOG1P) U3(L, "sqrt", TT_U_SQRT)
    U3(L, "rsqrt", TT_U_RSQRT) U3(L, "sin", TT_U_SIN) U3(L, "cos", TT_U_COS)
    U3(L, "tan", TT_U_TAN) U3(L, "tanh", TT_U_TANH) U3(L, "sigmoid", TT_U_SIGMOID)
    U3(L, "asin", TT_U_ASIN) U3(L, "acos", TT_U_ACOS) U3(L, "atan", TT_U_ATAN)
    U3(L, "sinh", TT_U_SINH) U3(L, "cosh", TT_U_COSH) U3(L, "asinh", TT_U_ASINH)
    U3(L, "acosh", TT_U_ACOSH) U3(L, "atanh", TT_U_ATANH) U3(L, "erf", TT_U_ERF)
    U3(L, "erfc", TT_U_ERFC) U3(L, "erfinv", TT_U_ERFINV) U3(L, "lgamma", TT_U_LGAMMA)
    U3(L, "digamma", TT_U_DIGAMMA) U3(L, "floor", TT_U_FLOOR) U3(L, "ceil", TT_U_CEIL)
    U3(L, "round", TT_U_ROUND) U3(L, "trunc", TT_U_TRUNC) U3(L, "frac", TT_U_FRAC)
    U3(L, "sign", TT_U_SIGN) U3(L, "sgn", TT_U_SIGN) U3(L, "reciprocal", TT_U_RECIPROCAL)
    U3(L, "logical_not", TT_U_LOGICAL_NOT) U3(L, "bitwise_not", TT_U_BITWISE_NOT)
    U3(L, "nan_to_num", TT_U_NAN_TO_NUM) U3(L, "deg2rad", TT_U_DEG2RAD)
    U3(L, "rad2deg", TT_U_RAD2DEG)
    {"aten::round.decimals", L, TT_U_ROUND_DEC, 0},
    {"aten::round_.decimals", L, TT_U_ROUND_DEC, 0},
    {"aten::round.decimals_out", L, TT_U_ROUND_DEC, 0},
    U2(L, "isnan", TT_U_ISNAN) U2(L, "isinf", TT_U_ISINF) U2(L, "isposinf", TT_U_ISPOSINF)
    U2(L, "isneginf", TT_U_ISNEGINF) U2(L, "signbit", TT_U_SIGNBIT)
    /* activations (unary_act.c) */
    U3(A, "relu", TT_U_RELU) U3(A, "gelu", TT_U_GELU) U3(A, "silu", TT_U_SILU)
    U3(A, "mish", TT_U_MISH) U2(A, "softplus", TT_U_SOFTPLUS) U3(A, "elu", TT_U_ELU)
    U3(A, "celu", TT_U_CELU) U3(A, "leaky_relu", TT_U_LEAKY_RELU)
    U3(A, "hardtanh", TT_U_HARDTANH) U3(A, "hardsigmoid", TT_U_HARDSIGMOID)
    U3(A, "hardswish", TT_U_HARDSWISH) U3(A, "threshold", TT_U_THRESHOLD)
    U2(A, "hardshrink", TT_U_HARDSHRINK) U2(A, "softshrink", TT_U_SOFTSHRINK)
    /* backward ops (unary_act.c) */
    UB("threshold_backward", TT_U_THRESHOLD_BWD) UB("gelu_backward", TT_U_GELU_BWD)
    UB("silu_backward", TT_U_SILU_BWD) UB("sigmoid_backward", TT_U_SIGMOID_BWD)
    UB("tanh_backward", TT_U_TANH_BWD) UB("elu_backward", TT_U_ELU_BWD)
    UB("leaky_relu_backward", TT_U_LEAKY_RELU_BWD) UB("hardtanh_backward", TT_U_HARDTANH_BWD)
    UB("softplus_backward", TT_U_SOFTPLUS_BWD) UB("hardsigmoid_backward", TT_U_HARDSIGMOID_BWD)
    {"aten::hardswish_backward", A, TT_U_HARDSWISH_BWD, 0},
    {"aten::hardswish_backward.out", A, TT_U_HARDSWISH_BWD, 0},
    {"aten::mish_backward", A, TT_U_MISH_BWD, 0},
    UB("hardshrink_backward", TT_U_SHRINK_BWD) UB("softshrink_backward", TT_U_SHRINK_BWD)
};
const int tt_lower_unary_count = TT_TABLE_COUNT(tt_lower_unary);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. Also the Scalar conversions and
 * the dtype an out= argument must have. */
const tt_lower_fact_t tt_lower_unary_facts[] = {
    TT_FACT("aten::abs", TT_LF_COMPLEX | TT_LF_OUT_RESIZE_CONTIGUOUS_COMPLEX), TT_FACT("aten::sgn", TT_LF_COMPLEX),
    TT_FACT("aten::logical_not", TT_LF_COMPLEX), TT_FACT("aten::logical_not_", TT_LF_COMPLEX),
    TT_FACT("aten::nan_to_num", TT_LF_COMPLEX), TT_FACT("aten::nan_to_num_", TT_LF_COMPLEX),
    TT_FACT("aten::neg", TT_LF_COMPLEX | TT_LF_OUT_SAME_DTYPE), TT_FACT("aten::neg_", TT_LF_COMPLEX),
    TT_FACT("aten::isnan", TT_LF_COMPLEX | TT_LF_OUT_RESULT_DTYPE),
    TT_FACT("aten::isinf", TT_LF_COMPLEX | TT_LF_OUT_RESULT_DTYPE),
    TT_FACT("aten::exp", TT_LF_COMPLEX), TT_FACT("aten::exp_", TT_LF_COMPLEX),
    TT_FACT("aten::exp2", TT_LF_COMPLEX), TT_FACT("aten::exp2_", TT_LF_COMPLEX),
    TT_FACT("aten::expm1", TT_LF_COMPLEX), TT_FACT("aten::expm1_", TT_LF_COMPLEX),
    TT_FACT("aten::log", TT_LF_COMPLEX), TT_FACT("aten::log_", TT_LF_COMPLEX),
    TT_FACT("aten::log2", TT_LF_COMPLEX), TT_FACT("aten::log2_", TT_LF_COMPLEX),
    TT_FACT("aten::log10", TT_LF_COMPLEX), TT_FACT("aten::log10_", TT_LF_COMPLEX),
    TT_FACT("aten::log1p", TT_LF_COMPLEX), TT_FACT("aten::log1p_", TT_LF_COMPLEX),
    TT_FACT("aten::sqrt", TT_LF_COMPLEX), TT_FACT("aten::sqrt_", TT_LF_COMPLEX),
    TT_FACT("aten::rsqrt", TT_LF_COMPLEX), TT_FACT("aten::rsqrt_", TT_LF_COMPLEX),
    TT_FACT("aten::reciprocal", TT_LF_COMPLEX), TT_FACT("aten::reciprocal_", TT_LF_COMPLEX),
    TT_FACT("aten::sigmoid", TT_LF_COMPLEX), TT_FACT("aten::sigmoid_", TT_LF_COMPLEX),
    TT_FACT("aten::sin", TT_LF_COMPLEX), TT_FACT("aten::sin_", TT_LF_COMPLEX),
    TT_FACT("aten::cos", TT_LF_COMPLEX), TT_FACT("aten::cos_", TT_LF_COMPLEX),
    TT_FACT("aten::tan", TT_LF_COMPLEX), TT_FACT("aten::tan_", TT_LF_COMPLEX),
    TT_FACT("aten::sinh", TT_LF_COMPLEX), TT_FACT("aten::sinh_", TT_LF_COMPLEX),
    TT_FACT("aten::cosh", TT_LF_COMPLEX), TT_FACT("aten::cosh_", TT_LF_COMPLEX),
    TT_FACT("aten::tanh", TT_LF_COMPLEX), TT_FACT("aten::tanh_", TT_LF_COMPLEX),
    TT_FACT("aten::asin", TT_LF_COMPLEX), TT_FACT("aten::asin_", TT_LF_COMPLEX),
    TT_FACT("aten::acos", TT_LF_COMPLEX), TT_FACT("aten::acos_", TT_LF_COMPLEX),
    TT_FACT("aten::atan", TT_LF_COMPLEX), TT_FACT("aten::atan_", TT_LF_COMPLEX),
    TT_FACT("aten::asinh", TT_LF_COMPLEX), TT_FACT("aten::asinh_", TT_LF_COMPLEX),
    TT_FACT("aten::acosh", TT_LF_COMPLEX), TT_FACT("aten::acosh_", TT_LF_COMPLEX),
    TT_FACT("aten::atanh", TT_LF_COMPLEX), TT_FACT("aten::atanh_", TT_LF_COMPLEX),
    TT_FACT("aten::silu", TT_LF_COMPLEX), TT_FACT("aten::silu_", TT_LF_COMPLEX),
    TT_FACT("aten::tanh_backward", TT_LF_COMPLEX), TT_FACT("aten::sigmoid_backward", TT_LF_COMPLEX),
    TT_FACT_SCALARS("aten::hardtanh", 0, "min_val:integral64 max_val:integral64"),
    TT_FACT_SCALARS("aten::hardtanh_", 0, "min_val:integral64 max_val:integral64"),
    TT_FACT_SCALARS("aten::threshold", 0, "threshold:opmath value:result"),
    TT_FACT_SCALARS("aten::threshold_", 0, "threshold:opmath value:result"),
    TT_FACT_SCALARS("aten::leaky_relu", 0, "negative_slope:opmath"),
    TT_FACT_SCALARS("aten::leaky_relu_", 0, "negative_slope:opmath"),
    /* the dtype CPU's out= kernel demands (TT_LF_OUT_SAME_DTYPE, TT_LF_OUT_RESULT_DTYPE) */
#define OUT_SAME(n) TT_FACT("aten::" n, TT_LF_OUT_SAME_DTYPE),
    OUT_SAME("floor") OUT_SAME("ceil") OUT_SAME("round") OUT_SAME("trunc") OUT_SAME("frac")
    OUT_SAME("sign") OUT_SAME("sgn") OUT_SAME("bitwise_not") OUT_SAME("gelu") OUT_SAME("silu") OUT_SAME("mish")
    OUT_SAME("softplus") OUT_SAME("elu") OUT_SAME("leaky_relu") OUT_SAME("hardtanh") OUT_SAME("hardsigmoid")
    OUT_SAME("hardswish") OUT_SAME("hardshrink") OUT_SAME("softshrink")
#undef OUT_SAME
    TT_FACT("aten::relu", TT_LF_OUT_RESULT_DTYPE),
};
const int tt_lower_unary_facts_count = TT_TABLE_COUNT(tt_lower_unary_facts);
