/* The binary family: elementwise ops on two operands (tensor or Scalar, in
 * either position), with PyTorch's type promotion (tt_l_promote over both
 * operands; wrapped numbers and 0-dim tensors by tier), broadcasting to the
 * output shape, and computing in the dtype each op's policy names. Ternary
 * and attribute-carrying ops of the family (div modes, where, clamp, lerp,
 * addcmul/addcdiv, masked_fill, copy) live in binary_misc.c; all rows are in
 * the table at the end of this file. */
#include <math.h>
#include <string.h>

#include "lower_elementwise.h"
#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

typedef enum bop {
  B_ADD, B_SUB, B_RSUB, B_MUL, B_DIV, B_REMAINDER, B_FMOD, B_FLOOR_DIVIDE, B_POW, B_POW_S,
  B_MAXIMUM, B_MINIMUM, B_FMAX, B_FMIN, B_ATAN2, B_HYPOT, B_COPYSIGN, B_XLOGY,
  B_AND, B_OR, B_XOR, B_LSHIFT, B_RSHIFT, B_LAND, B_LOR, B_LXOR,
  B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE, B_HEAVISIDE, B_LOGADDEXP, B_LOGADDEXP2,
  B_COUNT
} bop_t;

/* The dtype an op computes in, from the promoted operand dtype. */
enum bpolicy {
  BP_SAME,  /* promoted dtype (f16/bf16: f32) */
  BP_FLOAT, /* like BP_SAME, but ints and bools become the default float dtype */
  BP_CMP,   /* promoted dtype as is; the result is bool */
  BP_BOOL,  /* both operands as bool */
};

typedef tt_val_t (*bbuild_t)(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);

typedef struct binfo {
  const char* shlo; /* a single StableHLO op (or comparison direction for BP_CMP), or NULL */
  bbuild_t build;   /* else an expression */
  unsigned char policy;
  unsigned char accept; /* TT_EW_* over the promoted dtype */
  bool alpha;           /* arg 2 is `Scalar alpha` scaling operand b */
  bool swap;            /* operands are (arg 1, arg 0) */
  bool div_b;           /* b is a divisor: hide a broadcast b (tt__ew_opaque) */
  bool full_b;          /* a scalar / 0-dim operand b goes to the compute dtype without
                           first rounding to the promoted dtype (ATen's mul/div kernels
                           read such an operand at opmath precision; the others round it) */
} binfo_t;

static bool is_bool_val(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t && t->dtype == TT_BOOL;
}
static bool is_uint_val(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t && tt_dtype_is_unsigned_int(t->dtype);
}

static tt_val_t b_add(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  return tt_l_binary(f, is_bool_val(f, a) ? "stablehlo.or" : "stablehlo.add", a, b);
}
static tt_val_t b_mul(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  return tt_l_binary(f, is_bool_val(f, a) ? "stablehlo.and" : "stablehlo.multiply", a, b);
}

/* Python-style modulo: the result takes the sign of b. */
static tt_val_t b_remainder(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  tt_val_t m = tt_l_binary(f, "stablehlo.remainder", a, b);
  if (is_uint_val(f, a)) return m;
  tt_val_t fix = tt_l_compare(f, "NE", tt__ew_cmpk(f, "LT", b, 0), tt__ew_cmpk(f, "LT", m, 0));
  fix = tt_l_binary(f, "stablehlo.and", tt__ew_cmpk(f, "NE", m, 0), fix);
  return tt_l_select(f, fix, tt__ew_add(f, m, b), m);
}

/* Integer powers with a negative exponent follow ATen's powi: 1 for base 1,
 * +-1 for base -1, else 0. */
static tt_val_t b_pow(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (t && tt_dtype_is_complex(t->dtype)) return tt__cx_pow(f, a, b, false);
  tt_val_t r = tt_l_binary(f, "stablehlo.power", a, b);
  if (!t || !tt_dtype_is_signed_int(t->dtype)) return r;
  tt_val_t one = tt__ew_k(f, a, 1.0);
  tt_val_t odd = tt__ew_cmpk(f, "NE", tt_l_binary(f, "stablehlo.and", b, one), 0);
  tt_val_t neg1 = tt_l_select(f, odd, tt__ew_k(f, a, -1.0), one);
  tt_val_t negexp = tt_l_select(f, tt__ew_cmpk(f, "EQ", a, 1), one,
                                tt_l_select(f, tt__ew_cmpk(f, "EQ", a, -1), neg1, tt__ew_k(f, a, 0)));
  return tt_l_select(f, tt__ew_cmpk(f, "LT", b, 0), negexp, r);
}

/* pow(Tensor, Scalar): ATen takes sqrt / rsqrt for exponents 0.5 / -0.5
 * (which differ from pow at -0 and -inf), and copies / fills for 1 / 0 (so
 * bools work there). */
static tt_val_t b_pow_s(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  if (is_bool_val(f, a)) /* bool ** True = self, ** False = True (ATen special-cases 1 and 0) */
    return tt_l_binary(f, "stablehlo.or", a, tt_l_unary(f, "stablehlo.not", b));
  const tt_type_t* t = tt_shlo_type(f, a);
  if (t && tt_dtype_is_complex(t->dtype)) return tt__cx_pow(f, a, b, true);
  tt_val_t r = b_pow(f, a, b);
  if (t && tt_dtype_is_signed_int(t->dtype)) {
    /* CPU refuses a negative Scalar exponent for integer tensors. The bridge
     * refuses it at the call (scalar_checks.cpp); this device check remains for
     * callers that pass the exponent as a runtime value (compiled graphs) */
    tt_val_t neg = tt__ew_cmpk(f, "LT", b, 0);
    if (t->rank > 0)
      neg = tt_lt_reduce(f, neg, (1u << t->rank) - 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0));
    tt_shlo_add_check(f, neg, TT_INTERNAL, "Integers to negative integer powers are not allowed.");
  }
  if (!t || !tt_dtype_is_float(t->dtype)) return r;
  r = tt_l_select(f, tt__ew_cmpk(f, "EQ", b, -0.5), tt_l_unary(f, "stablehlo.rsqrt", a), r);
  return tt_l_select(f, tt__ew_cmpk(f, "EQ", b, 0.5), tt_l_unary(f, "stablehlo.sqrt", a), r);
}

/* fmax / fmin: NaN only if both are NaN. */
static tt_val_t fext(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool high) {
  tt_val_t r = high ? tt__ew_max(f, a, b) : tt__ew_min(f, a, b);
  r = tt_l_select(f, tt__ew_isnan(f, b), a, r);
  return tt_l_select(f, tt__ew_isnan(f, a), b, r);
}
static tt_val_t b_maximum(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt__ew_max(f, a, b); }
static tt_val_t b_minimum(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt__ew_min(f, a, b); }
static tt_val_t b_fmax(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return fext(f, a, b, true); }
static tt_val_t b_fmin(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return fext(f, a, b, false); }

/* hypot = m * sqrt(1 + (n / m)^2) over m = max(|a|, |b|), n = min(...); inf wins over NaN. */
static tt_val_t b_hypot(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  tt_val_t aa = tt_l_unary(f, "stablehlo.abs", a), ab = tt_l_unary(f, "stablehlo.abs", b);
  tt_val_t m = tt__ew_max(f, aa, ab), n = tt__ew_min(f, aa, ab);
  tt_val_t q = tt__ew_div(f, n, m);
  tt_val_t r = tt__ew_mul(f, m, tt_l_unary(f, "stablehlo.sqrt", tt__ew_addk(f, tt__ew_mul(f, q, q), 1.0)));
  r = tt_l_select(f, tt__ew_cmpk(f, "EQ", m, 0), m, r);
  tt_val_t inf = tt_l_binary(f, "stablehlo.or", tt__ew_cmpk(f, "EQ", aa, INFINITY),
                             tt__ew_cmpk(f, "EQ", ab, INFINITY));
  return tt_l_select(f, inf, tt__ew_k(f, a, INFINITY), r);
}

static tt_val_t b_copysign(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  tt_val_t m = tt_l_unary(f, "stablehlo.abs", a);
  return tt_l_select(f, tt__ew_signbit(f, b), tt_l_unary(f, "stablehlo.negate", m), m);
}

/* NaN if y is NaN; 0 where x == 0; else x * log(y). */
static tt_val_t b_xlogy(tt_shlo_fn_t* f, tt_val_t x, tt_val_t y) {
  tt_val_t r = tt__ew_mul(f, x, tt_l_unary(f, "stablehlo.log", y));
  r = tt_l_select(f, tt__ew_cmpk(f, "EQ", x, 0), tt__ew_k(f, x, 0), r);
  return tt_l_select(f, tt__ew_isnan(f, y), y, r);
}

/* Shifts by a negative amount or by >= the bit width: 0 (left, unsigned
 * right) or the sign fill (signed right), as ATen's lshift / rshift. */
static tt_val_t shift(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool left) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  bool sgn = tt_dtype_is_signed_int(t->dtype);
  double bits = (double)(tt_dtype_size(t->dtype) * 8);
  tt_val_t oor = tt__ew_cmpk(f, "GE", b, bits);
  if (sgn) oor = tt_l_binary(f, "stablehlo.or", oor, tt__ew_cmpk(f, "LT", b, 0));
  tt_val_t z = tt__ew_k(f, a, 0);
  if (left) return tt_l_select(f, oor, z, tt_l_binary(f, "stablehlo.shift_left", a, b));
  if (!sgn) return tt_l_select(f, oor, z, tt_l_binary(f, "stablehlo.shift_right_logical", a, b));
  tt_val_t fill = tt_l_binary(f, "stablehlo.shift_right_arithmetic", a, tt__ew_k(f, a, bits - 1));
  return tt_l_select(f, oor, fill, tt_l_binary(f, "stablehlo.shift_right_arithmetic", a, b));
}
static tt_val_t b_lshift(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return shift(f, a, b, true); }
static tt_val_t b_rshift(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return shift(f, a, b, false); }

/* heaviside(x, v) = x == 0 ? v : (x > 0) */
static tt_val_t b_heaviside(tt_shlo_fn_t* f, tt_val_t x, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, x);
  if (!t) return TT_SHLO_INVALID;
  tt_val_t pos = tt_l_convert(f, tt__ew_cmpk(f, "GT", x, 0), t->dtype);
  return tt_l_select(f, tt__ew_cmpk(f, "EQ", x, 0), v, pos);
}

/* ATen: isinf(a) && a == b ? a : max(a, b) + log1p(exp(-|a - b|)) (exp2 and / ln2 for base 2) */
static tt_val_t logaddexp(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool base2) {
  tt_val_t m = tt__ew_max(f, a, b);
  tt_val_t d = tt_l_unary(f, "stablehlo.negate", tt_l_unary(f, "stablehlo.abs", tt__ew_sub(f, a, b)));
  tt_val_t e = base2 ? tt_l_binary(f, "stablehlo.power", tt__ew_k(f, d, 2.0), d)
                     : tt_l_unary(f, "stablehlo.exponential", d);
  tt_val_t l = tt_l_unary(f, "stablehlo.log_plus_one", e);
  if (base2) l = tt__ew_mulk(f, l, 1.0 / M_LN2);
  tt_val_t r = tt__ew_add(f, m, l);
  tt_val_t same_inf = tt_l_binary(f, "stablehlo.and", tt__ew_cmpk(f, "EQ", tt_l_unary(f, "stablehlo.abs", a), INFINITY),
                                  tt_l_compare(f, "EQ", a, b));
  return tt_l_select(f, same_inf, a, r);
}
static tt_val_t b_logaddexp(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (t && tt_dtype_is_complex(t->dtype)) return tt__cx_logaddexp(f, a, b);
  return logaddexp(f, a, b, false);
}
static tt_val_t b_logaddexp2(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return logaddexp(f, a, b, true); }

#define ANY TT_EW_ANY
#define NUM TT_EW_NUM
#define INTB (TT_EW_INT | TT_EW_BOOL)
#define CX TT_EW_COMPLEX
static const binfo_t k_bops[] = {
    [B_ADD] = {NULL, b_add, BP_SAME, ANY | CX, true, false},
    [B_SUB] = {"stablehlo.subtract", NULL, BP_SAME, NUM | CX, true, false},
    [B_RSUB] = {"stablehlo.subtract", NULL, BP_SAME, NUM | CX, true, true},
    [B_MUL] = {NULL, b_mul, BP_SAME, ANY | CX, false, false, false, true},
    [B_DIV] = {NULL, tt__ew_div, BP_FLOAT, ANY | CX, false, false, true, true},
    [B_REMAINDER] = {NULL, b_remainder, BP_SAME, NUM, false, false},
    [B_FMOD] = {"stablehlo.remainder", NULL, BP_SAME, NUM, false, false},
    [B_FLOOR_DIVIDE] = {NULL, tt__ew_div_floor, BP_SAME, NUM, false, false, true, true},
    [B_POW] = {NULL, b_pow, BP_SAME, NUM | CX, false, false},
    [B_POW_S] = {NULL, b_pow_s, BP_SAME, ANY | CX, false, false},
    [B_MAXIMUM] = {NULL, b_maximum, BP_SAME, ANY, false, false},
    [B_MINIMUM] = {NULL, b_minimum, BP_SAME, ANY, false, false},
    [B_FMAX] = {NULL, b_fmax, BP_SAME, ANY, false, false},
    [B_FMIN] = {NULL, b_fmin, BP_SAME, ANY, false, false},
    [B_ATAN2] = {"stablehlo.atan2", NULL, BP_FLOAT, ANY, false, false},
    [B_HYPOT] = {NULL, b_hypot, BP_FLOAT, TT_EW_FLOAT, false, false},
    [B_COPYSIGN] = {NULL, b_copysign, BP_FLOAT, ANY, false, false},
    [B_XLOGY] = {NULL, b_xlogy, BP_FLOAT, ANY, false, false},
    [B_AND] = {"stablehlo.and", NULL, BP_SAME, INTB, false, false},
    [B_OR] = {"stablehlo.or", NULL, BP_SAME, INTB, false, false},
    [B_XOR] = {"stablehlo.xor", NULL, BP_SAME, INTB, false, false},
    [B_LSHIFT] = {NULL, b_lshift, BP_SAME, TT_EW_INT, false, false},
    [B_RSHIFT] = {NULL, b_rshift, BP_SAME, TT_EW_INT, false, false},
    [B_LAND] = {"stablehlo.and", NULL, BP_BOOL, ANY | CX, false, false},
    [B_LOR] = {"stablehlo.or", NULL, BP_BOOL, ANY | CX, false, false},
    [B_LXOR] = {"stablehlo.xor", NULL, BP_BOOL, ANY | CX, false, false},
    [B_EQ] = {"EQ", NULL, BP_CMP, ANY | CX, false, false},
    [B_NE] = {"NE", NULL, BP_CMP, ANY | CX, false, false},
    [B_LT] = {"LT", NULL, BP_CMP, ANY, false, false},
    [B_LE] = {"LE", NULL, BP_CMP, ANY, false, false},
    [B_GT] = {"GT", NULL, BP_CMP, ANY, false, false},
    [B_GE] = {"GE", NULL, BP_CMP, ANY, false, false},
    [B_HEAVISIDE] = {NULL, b_heaviside, BP_SAME, ANY, false, false},
    [B_LOGADDEXP] = {NULL, b_logaddexp, BP_FLOAT, TT_EW_FLOAT | CX, false, false},
    [B_LOGADDEXP2] = {NULL, b_logaddexp2, BP_FLOAT, TT_EW_FLOAT, false, false},
};
_Static_assert(sizeof(k_bops) / sizeof(k_bops[0]) == B_COUNT, "one k_bops row per bop");

/* Operand i in the compute dtype: rounded to the promoted dtype first (as
 * TensorIterator casts inputs to the common dtype), except a scalar-like b
 * of a full_b op. */
static tt_val_t operand_value(tt_lctx_t* c, int i, tt_dtype_t dt, const tt_type_t* shape, bool full) {
  const tt_larg_t* a = &c->args[i];
  const tt_type_t* t = tt_shlo_type(c->f, a->val);
  bool scalar_like = a->kind == TT_ARG_SCALAR || (t && t->rank == 0);
  if (dt != shape->dtype && dt != TT_BOOL && shape->dtype != TT_BOOL && !(full && scalar_like))
    return tt_l_convert(c->f, tt_l_convert(c->f, a->val, dt), shape->dtype);
  return tt_l_convert(c->f, a->val, shape->dtype);
}
static tt_val_t operand(tt_lctx_t* c, int i, tt_dtype_t dt, const tt_type_t* shape, bool full) {
  return tt_l_broadcast(c->f, operand_value(c, i, dt, shape, full), shape->rank, shape->dims);
}

static tt_status_t lower_binary(tt_lctx_t* c) {
  int64_t p = c->op->param;
  if (p < 0 || p >= B_COUNT || (!k_bops[p].shlo && !k_bops[p].build))
    return tt_status_make(TT_INTERNAL, "%s: bad binary param %lld", c->op->name, (long long)p);
  const binfo_t* o = &k_bops[p];
  if (!tt__ew_has(c, 0) || !tt__ew_has(c, 1))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected two operands", c->op->name);
  int idx[2] = {0, 1};
  tt_dtype_t dt = tt_l_promote(c, idx, 2);
  TT_RETURN_IF_ERROR(tt__ew_check(c, dt, o->accept));
  if ((p == B_SUB || p == B_RSUB) && (tt_l_arg_dtype(c, 0) == TT_BOOL || tt_l_arg_dtype(c, 1) == TT_BOOL))
    return tt_status_make(TT_FAILED_PRECONDITION, /* CPU: RuntimeError */
                          "%s: subtraction, the `-` operator, with a bool tensor is not supported", c->op->name);
  if (p == B_HEAVISIDE && tt_l_arg_dtype(c, 0) != tt_l_arg_dtype(c, 1))
    return tt_status_make(TT_FAILED_PRECONDITION, /* CPU: RuntimeError */
                          "%s: heaviside is not yet implemented for tensors with different dtypes.", c->op->name);
  tt_dtype_t cdt = o->policy == BP_FLOAT ? tt__ew_float_compute(c, dt)
                   : o->policy == BP_CMP ? dt
                   : o->policy == BP_BOOL ? TT_BOOL
                                          : tt_l_opmath(dt);
  tt_type_t shape = c->out_types[0];
  shape.dtype = cdt;
  int ia = o->swap ? 1 : 0, ib = o->swap ? 0 : 1;
  /* An op that computes integers in float: TensorIterator's common dtype is
   * then the float one, and each operand goes to it from its own dtype (-5 of
   * an int32 0-dim tensor over a uint8 tensor stays -5, not 251). */
  bool direct = o->policy == BP_FLOAT && !tt_dtype_is_float(dt) && !tt_dtype_is_complex(dt);
  tt_val_t a = operand(c, ia, direct ? cdt : dt, &shape, false);
  const tt_type_t* bt = tt_shlo_type(c->f, c->args[ib].val);
  bool bcast = !bt || bt->rank != shape.rank;
  for (int d = 0; !bcast && d < bt->rank; d++) bcast = bt->dims[d] != shape.dims[d];
  tt_val_t b = o->div_b && bcast
                   ? tt__ew_spread_divisor(c->f, operand_value(c, ib, direct ? cdt : dt, &shape, o->full_b), &shape)
                   : operand(c, ib, direct ? cdt : dt, &shape, o->full_b);
  if (o->alpha && tt__ew_has(c, 2)) {
    if (cdt != TT_BOOL && !tt_dtype_is_float(cdt) && tt_dtype_is_float(tt_l_arg_dtype(c, 2)))
      return tt_status_make(TT_INVALID_ARGUMENT,
                            "%s: for integral input tensors, argument alpha must not be a floating point number",
                            c->op->name);
    b = b_mul(c->f, b, operand(c, 2, dt, &shape, false)); /* ATen rounds alpha to dt too */
  }
  if (p == B_REMAINDER || p == B_FMOD || p == B_FLOOR_DIVIDE) tt__ew_check_int_divisor(c->f, b);
  tt_val_t r;
  if (o->policy == BP_CMP) r = tt_l_compare(c->f, o->shlo, a, b);
  else if (o->build) r = o->build(c->f, a, b);
  else r = tt_l_binary(c->f, o->shlo, a, b);
  /* The result is the promoted float dtype, whatever an out= asks for (CPU computes in the
   * common dtype of the inputs, then casts: float16 33000 + 33000 into a float64 out is inf). */
  if (o->policy != BP_CMP && o->policy != BP_BOOL && (tt_dtype_is_float(dt) || tt_dtype_is_complex(dt)))
    r = tt_l_convert(c->f, r, dt);
  return tt_l_set_out(c, 0, r);
}

/* ---- the table -------------------------------------------------------------- */
#define R(n, fn, p) {"aten::" n, fn, p, 0},
/* Tensor/Scalar overloads with their in-place and out= forms */
#define TS(n, p)                                                                          \
  R(n ".Tensor", lower_binary, p) R(n "_.Tensor", lower_binary, p) R(n ".out", lower_binary, p) \
  R(n ".Scalar", lower_binary, p) R(n "_.Scalar", lower_binary, p) R(n ".Scalar_out", lower_binary, p)
/* overload-less functional, in-place, out= */
#define P3(n, p) R(n, lower_binary, p) R(n "_", lower_binary, p) R(n ".out", lower_binary, p)
/* comparisons: Tensor and Scalar, each with in-place and out= */
#define CMP(n, p)                                                                             \
  R(n ".Tensor", lower_binary, p) R(n "_.Tensor", lower_binary, p) R(n ".Tensor_out", lower_binary, p) \
  R(n ".Scalar", lower_binary, p) R(n "_.Scalar", lower_binary, p) R(n ".Scalar_out", lower_binary, p)
/* bitwise ops: also Scalar_Tensor */
#define BIT(n, p) CMP(n, p) R(n ".Scalar_Tensor", lower_binary, p) R(n ".Scalar_Tensor_out", lower_binary, p)

const tt_lower_entry_t tt_lower_binary[] = {
    TS("add", B_ADD) TS("sub", B_SUB) TS("mul", B_MUL)
    R("rsub.Tensor", lower_binary, B_RSUB) R("rsub.Scalar", lower_binary, B_RSUB)
    R("rsub.Tensor_out", lower_binary, B_RSUB) R("rsub.Scalar_out", lower_binary, B_RSUB)
    TS("div", B_DIV)
    R("div.Tensor_mode", tt__ew_lower_div_mode, 0) R("div_.Tensor_mode", tt__ew_lower_div_mode, 0)
    R("div.out_mode", tt__ew_lower_div_mode, 0) R("div.Scalar_mode", tt__ew_lower_div_mode, 0)
    R("div_.Scalar_mode", tt__ew_lower_div_mode, 0) R("div.Scalar_mode_out", tt__ew_lower_div_mode, 0)
    CMP("remainder", B_REMAINDER)
    R("remainder.Scalar_Tensor", lower_binary, B_REMAINDER)
    R("remainder.Scalar_Tensor_out", lower_binary, B_REMAINDER)
    CMP("fmod", B_FMOD)
    R("floor_divide", lower_binary, B_FLOOR_DIVIDE) R("floor_divide_.Tensor", lower_binary, B_FLOOR_DIVIDE)
    R("floor_divide.out", lower_binary, B_FLOOR_DIVIDE) R("floor_divide.Scalar", lower_binary, B_FLOOR_DIVIDE)
    R("floor_divide_.Scalar", lower_binary, B_FLOOR_DIVIDE)
    R("floor_divide.Scalar_out", lower_binary, B_FLOOR_DIVIDE)
    R("pow.Tensor_Tensor", lower_binary, B_POW) R("pow.Tensor_Scalar", lower_binary, B_POW_S)
    R("pow.Scalar", lower_binary, B_POW) R("pow_.Tensor", lower_binary, B_POW)
    R("pow_.Scalar", lower_binary, B_POW_S) R("pow.Tensor_Tensor_out", lower_binary, B_POW)
    R("pow.Tensor_Scalar_out", lower_binary, B_POW_S) R("pow.Scalar_out", lower_binary, B_POW)
    R("maximum", lower_binary, B_MAXIMUM) R("maximum.out", lower_binary, B_MAXIMUM)
    R("minimum", lower_binary, B_MINIMUM) R("minimum.out", lower_binary, B_MINIMUM)
    R("fmax", lower_binary, B_FMAX) R("fmax.out", lower_binary, B_FMAX)
    R("fmin", lower_binary, B_FMIN) R("fmin.out", lower_binary, B_FMIN)
    P3("atan2", B_ATAN2) P3("hypot", B_HYPOT)
    R("copysign.Tensor", lower_binary, B_COPYSIGN) R("copysign_.Tensor", lower_binary, B_COPYSIGN)
    R("copysign.out", lower_binary, B_COPYSIGN) R("copysign.Scalar", lower_binary, B_COPYSIGN)
    R("copysign_.Scalar", lower_binary, B_COPYSIGN) R("copysign.Scalar_out", lower_binary, B_COPYSIGN)
    R("xlogy.Tensor", lower_binary, B_XLOGY) R("xlogy_.Tensor", lower_binary, B_XLOGY)
    R("xlogy.OutTensor", lower_binary, B_XLOGY) R("xlogy.Scalar_Other", lower_binary, B_XLOGY)
    R("xlogy_.Scalar_Other", lower_binary, B_XLOGY) R("xlogy.OutScalar_Other", lower_binary, B_XLOGY)
    R("xlogy.Scalar_Self", lower_binary, B_XLOGY) R("xlogy.OutScalar_Self", lower_binary, B_XLOGY)
    BIT("bitwise_and", B_AND) BIT("bitwise_or", B_OR) BIT("bitwise_xor", B_XOR)
    R("bitwise_left_shift.Tensor", lower_binary, B_LSHIFT) R("bitwise_left_shift_.Tensor", lower_binary, B_LSHIFT)
    R("bitwise_left_shift.Tensor_out", lower_binary, B_LSHIFT)
    R("bitwise_left_shift.Tensor_Scalar", lower_binary, B_LSHIFT)
    R("bitwise_left_shift_.Tensor_Scalar", lower_binary, B_LSHIFT)
    R("bitwise_left_shift.Tensor_Scalar_out", lower_binary, B_LSHIFT)
    R("bitwise_left_shift.Scalar_Tensor", lower_binary, B_LSHIFT)
    R("bitwise_left_shift.Scalar_Tensor_out", lower_binary, B_LSHIFT)
    R("bitwise_right_shift.Tensor", lower_binary, B_RSHIFT) R("bitwise_right_shift_.Tensor", lower_binary, B_RSHIFT)
    R("bitwise_right_shift.Tensor_out", lower_binary, B_RSHIFT)
    R("bitwise_right_shift.Tensor_Scalar", lower_binary, B_RSHIFT)
    R("bitwise_right_shift_.Tensor_Scalar", lower_binary, B_RSHIFT)
    R("bitwise_right_shift.Tensor_Scalar_out", lower_binary, B_RSHIFT)
    R("bitwise_right_shift.Scalar_Tensor", lower_binary, B_RSHIFT)
    R("bitwise_right_shift.Scalar_Tensor_out", lower_binary, B_RSHIFT)
    R("__lshift__.Tensor", lower_binary, B_LSHIFT) R("__lshift__.Scalar", lower_binary, B_LSHIFT)
    R("__lshift__.Tensor_out", lower_binary, B_LSHIFT) R("__lshift__.Scalar_out", lower_binary, B_LSHIFT)
    R("__rshift__.Tensor", lower_binary, B_RSHIFT) R("__rshift__.Scalar", lower_binary, B_RSHIFT)
    R("__rshift__.Tensor_out", lower_binary, B_RSHIFT) R("__rshift__.Scalar_out", lower_binary, B_RSHIFT)
    P3("logical_and", B_LAND) P3("logical_or", B_LOR) P3("logical_xor", B_LXOR)
    CMP("eq", B_EQ) CMP("ne", B_NE) CMP("lt", B_LT) CMP("le", B_LE) CMP("gt", B_GT) CMP("ge", B_GE)
    P3("heaviside", B_HEAVISIDE)
    R("logaddexp", lower_binary, B_LOGADDEXP) R("logaddexp.out", lower_binary, B_LOGADDEXP)
    R("logaddexp2", lower_binary, B_LOGADDEXP2) R("logaddexp2.out", lower_binary, B_LOGADDEXP2)
    /* binary_misc.c */
    R("where.self", tt__ew_lower_where, 0) R("where.self_out", tt__ew_lower_where, 0)
    R("clamp", tt__ew_lower_clamp, TT_CLAMP_BOTH) R("clamp_", tt__ew_lower_clamp, TT_CLAMP_BOTH)
    R("clamp.out", tt__ew_lower_clamp, TT_CLAMP_BOTH) R("clamp.Tensor", tt__ew_lower_clamp, TT_CLAMP_BOTH)
    R("clamp_.Tensor", tt__ew_lower_clamp, TT_CLAMP_BOTH) R("clamp.Tensor_out", tt__ew_lower_clamp, TT_CLAMP_BOTH)
    R("clamp_min", tt__ew_lower_clamp, TT_CLAMP_MIN) R("clamp_min_", tt__ew_lower_clamp, TT_CLAMP_MIN)
    R("clamp_min.out", tt__ew_lower_clamp, TT_CLAMP_MIN) R("clamp_min.Tensor", tt__ew_lower_clamp, TT_CLAMP_MIN)
    R("clamp_min_.Tensor", tt__ew_lower_clamp, TT_CLAMP_MIN)
    R("clamp_min.Tensor_out", tt__ew_lower_clamp, TT_CLAMP_MIN)
    R("clamp_max", tt__ew_lower_clamp, TT_CLAMP_MAX) R("clamp_max_", tt__ew_lower_clamp, TT_CLAMP_MAX)
    R("clamp_max.out", tt__ew_lower_clamp, TT_CLAMP_MAX) R("clamp_max.Tensor", tt__ew_lower_clamp, TT_CLAMP_MAX)
    R("clamp_max_.Tensor", tt__ew_lower_clamp, TT_CLAMP_MAX)
    R("clamp_max.Tensor_out", tt__ew_lower_clamp, TT_CLAMP_MAX)
    R("lerp.Scalar", tt__ew_lower_lerp, 0) R("lerp_.Scalar", tt__ew_lower_lerp, 0)
    R("lerp.Scalar_out", tt__ew_lower_lerp, 0) R("lerp.Tensor", tt__ew_lower_lerp, 0)
    R("lerp_.Tensor", tt__ew_lower_lerp, 0) R("lerp.Tensor_out", tt__ew_lower_lerp, 0)
    R("addcmul", tt__ew_lower_addc, 0) R("addcmul_", tt__ew_lower_addc, 0) R("addcmul.out", tt__ew_lower_addc, 0)
    R("addcdiv", tt__ew_lower_addc, 1) R("addcdiv_", tt__ew_lower_addc, 1) R("addcdiv.out", tt__ew_lower_addc, 1)
    R("masked_fill.Scalar", tt__ew_lower_masked_fill, 0) R("masked_fill_.Scalar", tt__ew_lower_masked_fill, 0)
    R("masked_fill.Scalar_out", tt__ew_lower_masked_fill, 0) R("masked_fill.Tensor", tt__ew_lower_masked_fill, 0)
    R("masked_fill_.Tensor", tt__ew_lower_masked_fill, 0)
    R("masked_fill.Tensor_out", tt__ew_lower_masked_fill, 0)
    R("copy", tt__ew_lower_copy, 0) R("copy.out", tt__ew_lower_copy, 0)
    {"aten::copy_", tt__ew_lower_copy, 0, TT_LF_WRITE_ONLY},
};
const int tt_lower_binary_count = TT_TABLE_COUNT(tt_lower_binary);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_binary_facts[] = {
    TT_FACT("aten::copy", TT_LF_COMPLEX), TT_FACT("aten::copy_", TT_LF_COMPLEX),
    TT_FACT("aten::where", TT_LF_COMPLEX),
    TT_FACT_SCALARS("aten::masked_fill", TT_LF_COMPLEX, "value:result"),
    TT_FACT_SCALARS("aten::masked_fill_", TT_LF_COMPLEX, "value:result"),
    TT_FACT_SCALARS("aten::add", TT_LF_COMPLEX, "alpha:result"),
    TT_FACT_SCALARS("aten::add_", TT_LF_COMPLEX, "alpha:result"),
    TT_FACT_SCALARS("aten::sub", TT_LF_COMPLEX, "alpha:neg_result"),
    TT_FACT_SCALARS("aten::sub_", TT_LF_COMPLEX, "alpha:neg_result"),
    TT_FACT("aten::rsub", TT_LF_COMPLEX), TT_FACT("aten::mul", TT_LF_COMPLEX),
    TT_FACT("aten::mul_", TT_LF_COMPLEX), TT_FACT("aten::div", TT_LF_COMPLEX),
    TT_FACT("aten::div_", TT_LF_COMPLEX), TT_FACT("aten::eq", TT_LF_COMPLEX),
    TT_FACT("aten::eq_", TT_LF_COMPLEX), TT_FACT("aten::ne", TT_LF_COMPLEX),
    TT_FACT("aten::ne_", TT_LF_COMPLEX), TT_FACT("aten::logical_and", TT_LF_COMPLEX),
    TT_FACT("aten::logical_and_", TT_LF_COMPLEX), TT_FACT("aten::logical_or", TT_LF_COMPLEX),
    TT_FACT("aten::logical_or_", TT_LF_COMPLEX), TT_FACT("aten::logical_xor", TT_LF_COMPLEX),
    TT_FACT("aten::logical_xor_", TT_LF_COMPLEX), TT_FACT("aten::pow", TT_LF_COMPLEX),
    TT_FACT("aten::pow_", TT_LF_COMPLEX),
    TT_FACT_SCALARS("aten::addcmul", TT_LF_COMPLEX, "value:opmath"),
    TT_FACT_SCALARS("aten::addcmul_", TT_LF_COMPLEX, "value:opmath"),
    TT_FACT_SCALARS("aten::addcdiv", TT_LF_COMPLEX, "value:opmath"),
    TT_FACT_SCALARS("aten::addcdiv_", TT_LF_COMPLEX, "value:opmath"),
    TT_FACT_SCALARS("aten::lerp", TT_LF_COMPLEX, "weight:opmath"),
    TT_FACT_SCALARS("aten::lerp_", TT_LF_COMPLEX, "weight:opmath"),
    TT_FACT("aten::logaddexp", TT_LF_COMPLEX),
    TT_FACT_SCALARS("aten::clamp", 0, "min:result max:result"),
    TT_FACT_SCALARS("aten::clamp_", 0, "min:result max:result"),
    TT_FACT_SCALARS("aten::clamp_min", 0, "min:result max:result"),
    TT_FACT_SCALARS("aten::clamp_min_", 0, "min:result max:result"),
    TT_FACT_SCALARS("aten::clamp_max", 0, "min:result max:result"),
    TT_FACT_SCALARS("aten::clamp_max_", 0, "min:result max:result"),
};
const int tt_lower_binary_facts_count = TT_TABLE_COUNT(tt_lower_binary_facts);
