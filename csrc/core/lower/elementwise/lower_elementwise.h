/* Internal to core/lower: helpers and lowering functions shared by the
 * elementwise families (unary.c, unary_act.c, binary.c, binary_misc.c,
 * foreach.c, complex_ops.c, complex_math.c). The helpers are implemented in
 * lower_elementwise_util.c, which calls no other file of the folder; each
 * lowering function in the file named beside it. Builder failures are
 * recorded in the tt_shlo_fn_t and surface at tt_shlo_fn_finish; helpers
 * return TT_SHLO_INVALID after a failure. Thread rules: reentrant. */
#ifndef TT_LOWER_ELEMENTWISE_H_
#define TT_LOWER_ELEMENTWISE_H_

#include "../tt_lower.h"

/* Which dtype categories an op accepts (bit set). */
#define TT_EW_BOOL 0x1u
#define TT_EW_INT 0x2u
#define TT_EW_FLOAT 0x4u
#define TT_EW_COMPLEX 0x8u /* complex64 / complex128 (an op lists it only if it handles them) */
#define TT_EW_ANY (TT_EW_BOOL | TT_EW_INT | TT_EW_FLOAT)
#define TT_EW_NUM (TT_EW_INT | TT_EW_FLOAT)

/* ---- arguments ------------------------------------------------------------ */
/* True if argument i exists and is a TENSOR or SCALAR (absent optionals, out=
 * arguments and arguments beyond nargs are not values). */
bool tt__ew_has(const tt_lctx_t* c, int i);
/* Argument i as `dt` broadcast to `shape`, or a splat of dflt if it is absent. */
tt_val_t tt__ew_arg_or(tt_lctx_t* c, int i, tt_dtype_t dt, const tt_type_t* shape, double dflt);
/* A STR argument, or NULL if absent. */
const char* tt__ew_str(const tt_lctx_t* c, int i);
/* TT_INVALID_ARGUMENT unless dt's category is in `accept` (complex: TT_EW_COMPLEX). */
tt_status_t tt__ew_check(const tt_lctx_t* c, tt_dtype_t dt, unsigned accept);
/* The dtype a floating function computes in: opmath(dt) if dt is floating
 * (or complex),
 * else the output dtype's opmath if that is floating, else f32 (PyTorch turns
 * integer inputs of float functions into the default float dtype). */
tt_dtype_t tt__ew_float_compute(const tt_lctx_t* c, tt_dtype_t dt);

/* ---- values ------------------------------------------------------------- */
/* Splat constant of v's type (dtype and shape). */
tt_val_t tt__ew_k(tt_shlo_fn_t* f, tt_val_t like, double v);
tt_val_t tt__ew_add(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
tt_val_t tt__ew_sub(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
tt_val_t tt__ew_mul(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
tt_val_t tt__ew_div(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
/* Divisors: the API 0.115 CPU plugin turns a float division by a broadcast
 * (and XLA in general a division by a constant) into a multiplication by the
 * reciprocal, which is not IEEE division (1 ulp off; wrong at exact integer
 * quotients for trunc / floor). tt__ew_opaque hides v behind a
 * stablehlo.optimization_barrier (floats and complex; others are returned as is);
 * tt__ew_divk divides by such an opaque constant k. */
tt_val_t tt__ew_opaque(tt_shlo_fn_t* f, tt_val_t v);
/* A one-element value s (any rank) spread to `shape`'s dims as a divisor that XLA
 * keeps a division by: an edge pad of s by itself, which XLA neither rewrites
 * into a reciprocal nor materializes (it fuses into the divide's loop), where
 * an opaque broadcast is a buffer the size of the quotient. Real float s
 * and shapes with elements; otherwise tt__ew_opaque(broadcast(s)). */
tt_val_t tt__ew_spread_divisor(tt_shlo_fn_t* f, tt_val_t s, const tt_type_t* shape);
/* Argument i as tt_l_arg_as gives it, hidden as above if it had to be
 * broadcast (spread when it has one element). */
tt_val_t tt__ew_divisor(tt_lctx_t* c, int i, tt_dtype_t dt, const tt_type_t* shape);
tt_val_t tt__ew_divk(tt_shlo_fn_t* f, tt_val_t a, double k);
/* Integer division by zero raises on CPU ("ZeroDivisionError"); XLA returns
 * a value. For an integer divisor b this adds a device-side check that
 * raises CPU's error when any element of b is 0 (no-op for floats). */
void tt__ew_check_int_divisor(tt_shlo_fn_t* f, tt_val_t b);
/* a op constant */
tt_val_t tt__ew_addk(tt_shlo_fn_t* f, tt_val_t a, double k);
tt_val_t tt__ew_mulk(tt_shlo_fn_t* f, tt_val_t a, double k);
tt_val_t tt__ew_cmpk(tt_shlo_fn_t* f, const char* dir, tt_val_t a, double k);
tt_val_t tt__ew_isnan(tt_shlo_fn_t* f, tt_val_t a);  /* i1; false for non-floats */
/* NaN-propagating maximum / minimum (PyTorch's maximum, clamp, relu). */
tt_val_t tt__ew_max(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
tt_val_t tt__ew_min(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
/* Bit test of the sign (true for -0.0 and negative NaNs); i1. */
tt_val_t tt__ew_signbit(tt_shlo_fn_t* f, tt_val_t a);
/* erf for a float value (f32 or f64). */
tt_val_t tt__ew_erf(tt_shlo_fn_t* f, tt_val_t a);
/* 1 / (1 + exp(-x)), as PyTorch computes sigmoid. */
tt_val_t tt__ew_sigmoid(tt_shlo_fn_t* f, tt_val_t x);

/* ---- unary ops ---------------------------------------------------------------
 * The param of every tt_lower_unary row. Math ops are lowered by
 * tt__ew_lower_unary (unary.c), activations and their backward ops by
 * tt__ew_lower_act (unary_act.c); each file holds the parallel table for its
 * range. */
typedef enum tt__ew_uop {
  /* unary.c: one tensor in, no attributes (except round.decimals, nan_to_num) */
  TT_U_ABS, TT_U_NEG, TT_U_EXP, TT_U_EXP2, TT_U_EXPM1, TT_U_LOG, TT_U_LOG2, TT_U_LOG10,
  TT_U_LOG1P, TT_U_SQRT, TT_U_RSQRT, TT_U_SIN, TT_U_COS, TT_U_TAN, TT_U_TANH, TT_U_SIGMOID,
  TT_U_ASIN, TT_U_ACOS, TT_U_ATAN, TT_U_SINH, TT_U_COSH, TT_U_ASINH, TT_U_ACOSH, TT_U_ATANH,
  TT_U_ERF, TT_U_ERFC, TT_U_ERFINV, TT_U_LGAMMA, TT_U_DIGAMMA, TT_U_FLOOR, TT_U_CEIL,
  TT_U_ROUND, TT_U_ROUND_DEC, TT_U_TRUNC, TT_U_FRAC, TT_U_SIGN, TT_U_RECIPROCAL,
  TT_U_LOGICAL_NOT, TT_U_BITWISE_NOT, TT_U_ISNAN, TT_U_ISINF, TT_U_ISPOSINF, TT_U_ISNEGINF,
  TT_U_SIGNBIT, TT_U_NAN_TO_NUM, TT_U_DEG2RAD, TT_U_RAD2DEG,
  TT_U_MATH_COUNT,
  /* unary_act.c: activations (attributes come as Scalar / str args) */
  TT_U_RELU = TT_U_MATH_COUNT, TT_U_GELU, TT_U_SILU, TT_U_MISH, TT_U_SOFTPLUS, TT_U_ELU,
  TT_U_CELU, TT_U_LEAKY_RELU, TT_U_HARDTANH, TT_U_HARDSIGMOID, TT_U_HARDSWISH, TT_U_THRESHOLD,
  TT_U_HARDSHRINK, TT_U_SOFTSHRINK,
  /* unary_act.c: backward ops (grad_output first) */
  TT_U_THRESHOLD_BWD, TT_U_GELU_BWD, TT_U_SILU_BWD, TT_U_SIGMOID_BWD, TT_U_TANH_BWD,
  TT_U_ELU_BWD, TT_U_LEAKY_RELU_BWD, TT_U_HARDTANH_BWD, TT_U_SOFTPLUS_BWD,
  TT_U_HARDSIGMOID_BWD, TT_U_HARDSWISH_BWD, TT_U_MISH_BWD, TT_U_SHRINK_BWD,
  TT_U_COUNT
} tt__ew_uop_t;

tt_status_t tt__ew_lower_unary(tt_lctx_t* c);
/* abs / angle / sgn of complex arg 0 (complex_ops.c), for the families that
 * own those names; which: TT_CX_ABS, TT_CX_ANGLE, TT_CX_SGN. */
enum { TT_CX_ABS, TT_CX_ANGLE, TT_CX_SGN };
tt_status_t tt__cx_unary(tt_lctx_t* c, int which);
/* Complex helpers (lower_elementwise_util.c, below tt__ew_div, which divides
 * complex values with tt__cx_div): the parts of z; re + i*im (of the
 * complex dtype of re's dtype); a / b as c10::complex divides. */
tt_val_t tt__cx_re(tt_shlo_fn_t* f, tt_val_t z);
tt_val_t tt__cx_im(tt_shlo_fn_t* f, tt_val_t z);
tt_val_t tt__cx_make(tt_shlo_fn_t* f, tt_val_t re, tt_val_t im);
tt_val_t tt__cx_div(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
/* a ** b on complex values (complex_math.c): exp(b log a), as std::pow; with
 * `scalar` (pow.Tensor_Scalar) ATen's shortcuts for the exponents 0, 1, 2, 3,
 * -2, 0.5, -0.5 and -1 (products, sqrt, reciprocal). */
tt_val_t tt__cx_pow(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, bool scalar);
/* |z| as std::abs (hypot: inf if a part is inf, else NaN if one is NaN; complex_math.c) */
tt_val_t tt__cx_abs(tt_shlo_fn_t* f, tt_val_t z);
/* A unary math op (tt__ew_uop_t) on complex arg 0 (complex_math.c); shlo is
 * the op's StableHLO op for real inputs, or NULL. Fails for the ops that
 * PyTorch does not define on complex values. */
tt_status_t tt__cx_math(tt_lctx_t* c, int uop, const char* shlo);
/* The same function as a value (TT_SHLO_INVALID for the ops it does not define),
 * for lowerings built from complex exp / log / sin (logsumexp, logaddexp, sinc). */
tt_val_t tt__cx_fn(tt_shlo_fn_t* f, int uop, tt_val_t z);
/* log(exp x + exp y) of complex x, y as CPU's logaddexp / logcumsumexp step (complex_math.c) */
tt_val_t tt__cx_logaddexp(tt_shlo_fn_t* f, tt_val_t x, tt_val_t y);
tt_status_t tt__ew_lower_act(tt_lctx_t* c);

/* ---- binary-family lowerings living outside binary.c (binary_misc.c) ------- */
tt_status_t tt__ew_lower_div_mode(tt_lctx_t* c);  /* div.*_mode: str? rounding_mode at 2 */
tt_status_t tt__ew_lower_where(tt_lctx_t* c);     /* where.self */
tt_status_t tt__ew_lower_clamp(tt_lctx_t* c);     /* param: TT_CLAMP_* */
tt_status_t tt__ew_lower_lerp(tt_lctx_t* c);
tt_status_t tt__ew_lower_addc(tt_lctx_t* c);      /* param 0 addcmul, 1 addcdiv */
tt_status_t tt__ew_lower_masked_fill(tt_lctx_t* c);
tt_status_t tt__ew_lower_copy(tt_lctx_t* c);      /* copy / copy_ / copy.out */
#define TT_CLAMP_BOTH 0 /* clamp(self, min?, max?) */
#define TT_CLAMP_MIN 1  /* clamp_min(self, min) */
#define TT_CLAMP_MAX 2  /* clamp_max(self, max) */
/* Floor division as PyTorch computes it (div rounding_mode="floor",
 * floor_divide); a and b of one dtype and shape. */
tt_val_t tt__ew_div_floor(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);

/* ---- lowerings reused across families ------------------------------------- */
/* Output 0 = zeros of out_types[0] (foreach zero). */
tt_status_t tt__ew_lower_zero(tt_lctx_t* c);

#endif /* TT_LOWER_ELEMENTWISE_H_ */
