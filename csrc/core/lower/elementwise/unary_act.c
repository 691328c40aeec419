/* Activations and their backward ops (rows in unary.c, params TT_U_RELU..).
 * Formulas follow PyTorch's CPU kernels operation by operation, so that
 * results round the same way; f16/bf16 compute in f32. */
#include <math.h>
#include <string.h>

#include "lower_elementwise.h"

typedef struct astate {
  tt_lctx_t* c;
  tt_shlo_fn_t* f;
  tt_dtype_t cdt;         /* compute dtype */
  const tt_type_t* shape; /* of the output */
} astate_t;

typedef tt_val_t (*afwd_t)(astate_t* s, tt_val_t x);
typedef tt_val_t (*abwd_t)(astate_t* s, tt_val_t g, tt_val_t x);

#define F_ s->f
static tt_val_t un(astate_t* s, const char* op, tt_val_t x) { return tt_l_unary(s->f, op, x); }
static tt_val_t k(astate_t* s, tt_val_t like, double v) { return tt__ew_k(s->f, like, v); }
/* Scalar argument i (or its default) in the compute dtype, output-shaped. */
static tt_val_t sarg(astate_t* s, int i, double dflt) {
  return tt__ew_arg_or(s->c, i, s->cdt, s->shape, dflt);
}
static tt_val_t sel(astate_t* s, tt_val_t p, tt_val_t a, tt_val_t b) { return tt_l_select(F_, p, a, b); }
static tt_val_t cmp(astate_t* s, const char* d, tt_val_t a, tt_val_t b) { return tt_l_compare(F_, d, a, b); }
static tt_val_t land(astate_t* s, tt_val_t a, tt_val_t b) { return tt_l_binary(F_, "stablehlo.and", a, b); }
static tt_val_t lor(astate_t* s, tt_val_t a, tt_val_t b) { return tt_l_binary(F_, "stablehlo.or", a, b); }
static tt_val_t exp_(astate_t* s, tt_val_t x) { return un(s, "stablehlo.exponential", x); }
static tt_val_t softplus1(astate_t* s, tt_val_t x) { return un(s, "stablehlo.log_plus_one", exp_(s, x)); }
static bool flag(astate_t* s, int i) { return i < s->c->nargs && s->c->args[i].kind == TT_ARG_BOOL && s->c->args[i].i; }
static bool gelu_tanh(astate_t* s, int i) {
  const char* a = tt__ew_str(s->c, i);
  return a && !strcmp(a, "tanh");
}

/* ---- forward ---------------------------------------------------------------- */
static tt_val_t f_relu(astate_t* s, tt_val_t x) { return tt__ew_max(F_, x, k(s, x, 0)); }

#define GELU_BETA (M_SQRT2 * M_2_SQRTPI * 0.5)
#define GELU_KAPPA 0.044715
static tt_val_t f_gelu(astate_t* s, tt_val_t x) {
  if (gelu_tanh(s, 1)) {
    tt_val_t cube = tt__ew_mul(F_, tt__ew_mul(F_, x, x), x);
    tt_val_t inner = tt__ew_mulk(F_, tt__ew_add(F_, x, tt__ew_mulk(F_, cube, GELU_KAPPA)), GELU_BETA);
    tt_val_t t = tt__ew_addk(F_, un(s, "stablehlo.tanh", inner), 1.0);
    return tt__ew_mul(F_, tt__ew_mulk(F_, x, 0.5), t);
  }
  tt_val_t e = tt__ew_addk(F_, tt__ew_erf(F_, tt__ew_mulk(F_, x, M_SQRT1_2)), 1.0);
  return tt__ew_mul(F_, tt__ew_mulk(F_, x, 0.5), e);
}

static tt_val_t f_silu(astate_t* s, tt_val_t x) {
  return tt__ew_div(F_, x, tt__ew_addk(F_, exp_(s, un(s, "stablehlo.negate", x)), 1.0));
}

static tt_val_t f_mish(astate_t* s, tt_val_t x) {
  return tt__ew_mul(F_, x, un(s, "stablehlo.tanh", softplus1(s, x)));
}

/* (x * beta) > threshold ? x : log1p(exp(x * beta)) / beta */
static tt_val_t f_softplus(astate_t* s, tt_val_t x) {
  tt_val_t beta = sarg(s, 1, 1.0), th = sarg(s, 2, 20.0);
  tt_val_t xb = tt__ew_mul(F_, x, beta);
  /* divided by beta as a spread scalar: IEEE division, no beta-sized buffer */
  tt_type_t t0 = {.dtype = s->cdt, .rank = 0};
  tt_val_t b0 = tt__ew_has(s->c, 1) ? tt_l_arg_as(s->c, 1, s->cdt, &t0) : tt_shlo_const(F_, &t0, 1.0);
  return sel(s, cmp(s, "GT", xb, th), x, tt__ew_div(F_, softplus1(s, xb), tt__ew_spread_divisor(F_, b0, s->shape)));
}

/* x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale */
static tt_val_t elu_core(astate_t* s, tt_val_t x, tt_val_t alpha, tt_val_t scale, tt_val_t iscale) {
  tt_val_t neg = tt__ew_mul(F_, un(s, "stablehlo.exponential_minus_one", tt__ew_mul(F_, x, iscale)),
                            tt__ew_mul(F_, alpha, scale));
  return sel(s, tt__ew_cmpk(F_, "LE", x, 0), neg, tt__ew_mul(F_, x, scale));
}
static tt_val_t f_elu(astate_t* s, tt_val_t x) {
  return elu_core(s, x, sarg(s, 1, 1.0), sarg(s, 2, 1.0), sarg(s, 3, 1.0));
}
/* celu = elu(x, alpha, 1, 1 / alpha) with 1 / alpha taken in double, as ATen. */
static tt_val_t f_celu(astate_t* s, tt_val_t x) {
  tt_val_t alpha = sarg(s, 1, 1.0), inv;
  if (tt__ew_has(s->c, 1)) {
    tt_val_t a64 = tt_l_convert(F_, s->c->args[1].val, TT_F64);
    tt_val_t i64 = tt__ew_div(F_, k(s, a64, 1.0), a64);
    inv = tt_l_broadcast(F_, tt_l_convert(F_, i64, s->cdt), s->shape->rank, s->shape->dims);
  } else {
    inv = k(s, x, 1.0);
  }
  return elu_core(s, x, alpha, k(s, x, 1.0), inv);
}

static tt_val_t f_leaky_relu(astate_t* s, tt_val_t x) {
  return sel(s, tt__ew_cmpk(F_, "GT", x, 0), x, tt__ew_mul(F_, x, sarg(s, 1, 0.01)));
}

static tt_val_t f_hardtanh(astate_t* s, tt_val_t x) {
  return tt__ew_min(F_, tt__ew_max(F_, x, sarg(s, 1, -1.0)), sarg(s, 2, 1.0));
}

static tt_val_t relu6_of_plus3(astate_t* s, tt_val_t x) {
  return tt__ew_min(F_, tt__ew_max(F_, tt__ew_addk(F_, x, 3.0), k(s, x, 0)), k(s, x, 6.0));
}
static tt_val_t f_hardsigmoid(astate_t* s, tt_val_t x) { return tt__ew_divk(F_, relu6_of_plus3(s, x), 6.0); }
static tt_val_t f_hardswish(astate_t* s, tt_val_t x) {
  return tt__ew_divk(F_, tt__ew_mul(F_, x, relu6_of_plus3(s, x)), 6.0);
}

static tt_val_t f_threshold(astate_t* s, tt_val_t x) {
  return sel(s, cmp(s, "LE", x, sarg(s, 1, 0)), sarg(s, 2, 0), x);
}

static tt_val_t f_hardshrink(astate_t* s, tt_val_t x) {
  tt_val_t l = sarg(s, 1, 0.5);
  tt_val_t in = land(s, cmp(s, "GE", x, un(s, "stablehlo.negate", l)), cmp(s, "LE", x, l));
  return sel(s, in, k(s, x, 0), x);
}

static tt_val_t f_softshrink(astate_t* s, tt_val_t x) {
  tt_val_t l = sarg(s, 1, 0.5);
  tt_val_t r = sel(s, cmp(s, "LT", x, un(s, "stablehlo.negate", l)), tt__ew_add(F_, x, l),
                   tt__ew_mulk(F_, x, 0));
  return sel(s, cmp(s, "GT", x, l), tt__ew_sub(F_, x, l), r);
}

/* ---- backward ----------------------------------------------------------------- */
static tt_val_t b_threshold(astate_t* s, tt_val_t g, tt_val_t x) {
  return sel(s, cmp(s, "LE", x, sarg(s, 2, 0)), k(s, g, 0), g);
}

static tt_val_t b_gelu(astate_t* s, tt_val_t g, tt_val_t x) {
  if (gelu_tanh(s, 2)) {
    tt_val_t xsq = tt__ew_mul(F_, x, x);
    tt_val_t cube = tt__ew_mul(F_, xsq, x);
    tt_val_t inner = tt__ew_mulk(F_, tt__ew_add(F_, x, tt__ew_mulk(F_, cube, GELU_KAPPA)), GELU_BETA);
    tt_val_t t = un(s, "stablehlo.tanh", inner);
    tt_val_t left = tt__ew_mulk(F_, x, 0.5);
    tt_val_t right = tt__ew_addk(F_, t, 1.0);
    tt_val_t left_d = tt__ew_mulk(F_, right, 0.5);
    tt_val_t right_d = tt__ew_mul(F_, left, tt__ew_sub(F_, k(s, t, 1.0), tt__ew_mul(F_, t, t)));
    tt_val_t inner_d = tt__ew_mulk(F_, tt__ew_addk(F_, tt__ew_mulk(F_, xsq, 3.0 * GELU_KAPPA), 1.0), GELU_BETA);
    return tt__ew_mul(F_, g, tt__ew_add(F_, left_d, tt__ew_mul(F_, right_d, inner_d)));
  }
  tt_val_t cdf = tt__ew_mulk(F_, tt__ew_addk(F_, tt__ew_erf(F_, tt__ew_mulk(F_, x, M_SQRT1_2)), 1.0), 0.5);
  tt_val_t pdf = tt__ew_mulk(F_, exp_(s, tt__ew_mul(F_, tt__ew_mulk(F_, x, -0.5), x)),
                             M_2_SQRTPI * M_SQRT1_2 * 0.5);
  return tt__ew_mul(F_, g, tt__ew_add(F_, cdf, tt__ew_mul(F_, x, pdf)));
}

static tt_val_t b_silu(astate_t* s, tt_val_t g, tt_val_t x) {
  tt_val_t sg = tt__ew_sigmoid(F_, x);
  tt_val_t t = tt__ew_addk(F_, tt__ew_mul(F_, x, tt__ew_sub(F_, k(s, sg, 1.0), sg)), 1.0);
  return tt__ew_mul(F_, tt__ew_mul(F_, g, sg), t);
}

/* conj(v) for complex v, else v: the complex backward ops multiply the
 * gradient by the conjugate derivative (PyTorch's convention) */
static tt_val_t conj_(astate_t* s, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(F_, v);
  if (!t || !tt_dtype_is_complex(t->dtype)) return v;
  return tt__cx_make(F_, tt__cx_re(F_, v), un(s, "stablehlo.negate", tt__cx_im(F_, v)));
}

static tt_val_t b_sigmoid(astate_t* s, tt_val_t g, tt_val_t y) {
  return tt__ew_mul(F_, g, conj_(s, tt__ew_mul(F_, tt__ew_sub(F_, k(s, y, 1.0), y), y)));
}

static tt_val_t b_tanh(astate_t* s, tt_val_t g, tt_val_t y) {
  return tt__ew_mul(F_, g, conj_(s, tt__ew_sub(F_, k(s, y, 1.0), tt__ew_mul(F_, y, y))));
}

/* elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result) */
static tt_val_t b_elu(astate_t* s, tt_val_t g, tt_val_t x) {
  tt_val_t negcoef = tt__ew_mul(F_, sarg(s, 1, 1.0), sarg(s, 2, 1.0));
  tt_val_t poscoef = sarg(s, 2, 1.0), negipt = sarg(s, 3, 1.0);
  tt_val_t neg;
  if (flag(s, 4)) /* x is the forward result */
    neg = tt__ew_mul(F_, tt__ew_mul(F_, g, negipt), tt__ew_add(F_, x, negcoef));
  else
    neg = tt__ew_mul(F_, tt__ew_mul(F_, tt__ew_mul(F_, g, negipt), negcoef),
                     exp_(s, tt__ew_mul(F_, x, negipt)));
  return sel(s, tt__ew_cmpk(F_, "LE", x, 0), neg, tt__ew_mul(F_, g, poscoef));
}

static tt_val_t b_leaky_relu(astate_t* s, tt_val_t g, tt_val_t x) {
  return sel(s, tt__ew_cmpk(F_, "GT", x, 0), g, tt__ew_mul(F_, g, sarg(s, 2, 0.01)));
}

static tt_val_t b_hardtanh(astate_t* s, tt_val_t g, tt_val_t x) {
  tt_val_t out = lor(s, cmp(s, "LE", x, sarg(s, 2, -1.0)), cmp(s, "GE", x, sarg(s, 3, 1.0)));
  return sel(s, out, k(s, g, 0), g);
}

static tt_val_t b_softplus(astate_t* s, tt_val_t g, tt_val_t x) {
  tt_val_t xb = tt__ew_mul(F_, x, sarg(s, 2, 1.0));
  tt_val_t z = exp_(s, xb);
  tt_val_t d = tt__ew_div(F_, tt__ew_mul(F_, g, z), tt__ew_addk(F_, z, 1.0));
  return sel(s, cmp(s, "GT", xb, sarg(s, 3, 20.0)), g, d);
}

static tt_val_t b_hardsigmoid(astate_t* s, tt_val_t g, tt_val_t x) {
  tt_val_t in = land(s, tt__ew_cmpk(F_, "GT", x, -3.0), tt__ew_cmpk(F_, "LT", x, 3.0));
  return sel(s, in, tt__ew_mulk(F_, g, 1.0 / 6.0), k(s, g, 0));
}

static tt_val_t b_hardswish(astate_t* s, tt_val_t g, tt_val_t x) {
  tt_val_t mid = tt__ew_mul(F_, g, tt__ew_addk(F_, tt__ew_divk(F_, x, 3.0), 0.5));
  tt_val_t r = sel(s, tt__ew_cmpk(F_, "LT", x, 3.0), mid, g);
  return sel(s, tt__ew_cmpk(F_, "LE", x, -3.0), k(s, g, 0), r);
}

static tt_val_t b_mish(astate_t* s, tt_val_t g, tt_val_t x) {
  tt_val_t sg = tt__ew_sigmoid(F_, x);
  tt_val_t ts = un(s, "stablehlo.tanh", softplus1(s, x));
  tt_val_t d = tt__ew_mul(F_, tt__ew_mul(F_, x, sg), tt__ew_sub(F_, k(s, ts, 1.0), tt__ew_mul(F_, ts, ts)));
  return tt__ew_mul(F_, g, tt__ew_add(F_, ts, d));
}

/* hardshrink_backward / softshrink_backward(grad, self, lambd): 0 inside [-l, l] */
static tt_val_t b_shrink(astate_t* s, tt_val_t g, tt_val_t x) {
  tt_val_t l = sarg(s, 2, 0.5);
  tt_val_t in = land(s, cmp(s, "GE", x, un(s, "stablehlo.negate", l)), cmp(s, "LE", x, l));
  return sel(s, in, k(s, g, 0), g);
}

/* ---- the parallel table ---------------------------------------------------------- */
typedef struct ainfo {
  afwd_t fwd;     /* forward: x = arg 0 */
  abwd_t bwd;     /* backward: grad = arg 0, x = arg xi */
  int xi;
  unsigned accept;
} ainfo_t;

#define NUM TT_EW_NUM
#define FLT TT_EW_FLOAT
#define I(u) [(u) - TT_U_MATH_COUNT]
static const ainfo_t k_acts[] = {
    I(TT_U_RELU) = {f_relu, NULL, 0, NUM},
    I(TT_U_GELU) = {f_gelu, NULL, 0, FLT},
    I(TT_U_SILU) = {f_silu, NULL, 0, FLT | TT_EW_COMPLEX},
    I(TT_U_MISH) = {f_mish, NULL, 0, FLT},
    I(TT_U_SOFTPLUS) = {f_softplus, NULL, 0, FLT},
    I(TT_U_ELU) = {f_elu, NULL, 0, FLT},
    I(TT_U_CELU) = {f_celu, NULL, 0, FLT},
    I(TT_U_LEAKY_RELU) = {f_leaky_relu, NULL, 0, FLT},
    I(TT_U_HARDTANH) = {f_hardtanh, NULL, 0, NUM},
    I(TT_U_HARDSIGMOID) = {f_hardsigmoid, NULL, 0, FLT},
    I(TT_U_HARDSWISH) = {f_hardswish, NULL, 0, FLT},
    I(TT_U_THRESHOLD) = {f_threshold, NULL, 0, NUM},
    I(TT_U_HARDSHRINK) = {f_hardshrink, NULL, 0, FLT},
    I(TT_U_SOFTSHRINK) = {f_softshrink, NULL, 0, FLT},
    I(TT_U_THRESHOLD_BWD) = {NULL, b_threshold, 1, NUM},
    I(TT_U_GELU_BWD) = {NULL, b_gelu, 1, FLT},
    I(TT_U_SILU_BWD) = {NULL, b_silu, 1, FLT},
    I(TT_U_SIGMOID_BWD) = {NULL, b_sigmoid, 1, FLT | TT_EW_COMPLEX},
    I(TT_U_TANH_BWD) = {NULL, b_tanh, 1, FLT | TT_EW_COMPLEX},
    I(TT_U_ELU_BWD) = {NULL, b_elu, 5, FLT},
    I(TT_U_LEAKY_RELU_BWD) = {NULL, b_leaky_relu, 1, FLT},
    I(TT_U_HARDTANH_BWD) = {NULL, b_hardtanh, 1, NUM},
    I(TT_U_SOFTPLUS_BWD) = {NULL, b_softplus, 1, FLT},
    I(TT_U_HARDSIGMOID_BWD) = {NULL, b_hardsigmoid, 1, FLT},
    I(TT_U_HARDSWISH_BWD) = {NULL, b_hardswish, 1, FLT},
    I(TT_U_MISH_BWD) = {NULL, b_mish, 1, FLT},
    I(TT_U_SHRINK_BWD) = {NULL, b_shrink, 1, FLT},
};
_Static_assert(sizeof(k_acts) / sizeof(k_acts[0]) == TT_U_COUNT - TT_U_MATH_COUNT,
               "one k_acts row per activation uop");

tt_status_t tt__ew_lower_act(tt_lctx_t* c) {
  int64_t p = c->op->param - TT_U_MATH_COUNT;
  if (p < 0 || p >= TT_U_COUNT - TT_U_MATH_COUNT || (!k_acts[p].fwd && !k_acts[p].bwd))
    return tt_status_make(TT_INTERNAL, "%s: bad activation param %lld", c->op->name,
                          (long long)c->op->param);
  const ainfo_t* a = &k_acts[p];
  int xi = a->fwd ? 0 : a->xi;
  if (c->nargs <= xi || c->args[0].kind != TT_ARG_TENSOR || c->args[xi].kind != TT_ARG_TENSOR)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected tensor arguments", c->op->name);
  int idx[2] = {0, xi};
  tt_dtype_t dt = tt_l_promote(c, idx, a->fwd ? 1 : 2);
  TT_RETURN_IF_ERROR(tt__ew_check(c, dt, a->accept));
  astate_t s = {c, c->f, tt_l_opmath(dt), &c->out_types[0]};
  tt_type_t shape = c->out_types[0];
  shape.dtype = s.cdt;
  s.shape = &shape;
  tt_val_t x = tt_l_arg_as(c, xi, s.cdt, &shape);
  tt_val_t r = a->fwd ? a->fwd(&s, x) : a->bwd(&s, tt_l_arg_as(c, 0, s.cdt, &shape), x);
  return tt_l_set_out(c, 0, r);
}
