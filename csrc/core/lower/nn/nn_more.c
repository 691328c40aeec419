/* More activations and their backward ops: log_sigmoid (forward with its
 * buffer), glu, prelu (_prelu_kernel), rrelu (rrelu_with_noise) and
 * channel_shuffle. Formulas follow PyTorch's CPU kernels, computed in the
 * opmath dtype (f32 for f16/bf16) and rounded once. */
#include "../elementwise/lower_elementwise.h"
#include "../lower_tensor_util.h"
#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"


/* out_types[i] with the opmath dtype. */
static tt_type_t acc_type(tt_lctx_t* c, int i) {
  tt_type_t t = c->out_types[i];
  t.dtype = tt_l_opmath(t.dtype);
  return t;
}

#define K(like, v) tt__ew_k(f, like, v)
#define NEG(a) tt_l_unary(f, "stablehlo.negate", a)

/* ---- log_sigmoid -------------------------------------------------------------- */

/* log_sigmoid_forward(self) -> (output, buffer): output = min(x, 0) -
 * log1p(exp(-|x|)); buffer = exp(-|x|) (what CPU saves). */
static tt_status_t lower_log_sigmoid(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = acc_type(c, 0);
  tt_val_t x = tt_l_arg_as(c, 0, t.dtype, &t);
  tt_val_t z = tt_l_unary(f, "stablehlo.exponential", NEG(tt_l_unary(f, "stablehlo.abs", x)));
  tt_val_t y = tt__ew_sub(f, tt_l_binary(f, "stablehlo.minimum", x, K(x, 0.0)),
                          tt_l_unary(f, "stablehlo.log_plus_one", z));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, y));
  return tt_l_set_out(c, 1, z);
}

/* log_sigmoid_backward(grad_output, self, buffer) = grad * sigmoid(-x),
 * written as CPU writes it with z = exp(-|x|): x < 0 ? 1 - z / (1 + z) : z / (1 + z).
 * z is recomputed from self (the buffer's layout is CPU's business). */
static tt_status_t lower_log_sigmoid_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = acc_type(c, 0);
  tt_val_t g = tt_l_arg_as(c, 0, t.dtype, &t), x = tt_l_arg_as(c, 1, t.dtype, &t);
  tt_val_t z = tt_l_unary(f, "stablehlo.exponential", NEG(tt_l_unary(f, "stablehlo.abs", x)));
  tt_val_t q = tt__ew_div(f, z, tt__ew_addk(f, z, 1.0));
  tt_val_t neg = tt__ew_cmpk(f, "LT", x, 0.0);
  tt_val_t d = tt_l_select(f, neg, tt__ew_sub(f, K(q, 1.0), q), q);
  return tt_l_set_out(c, 0, tt__ew_mul(f, d, g));
}

/* ---- glu --------------------------------------------------------------------------- */

/* The halves a, b of argument i along dim (wrapped), in dtype dt. */
static void glu_halves(tt_lctx_t* c, int i, int64_t dim, tt_dtype_t dt, tt_val_t* a, tt_val_t* b,
                       int* d) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = tt_l_convert(f, c->args[i].val, dt);
  tt_type_t xt = tt__sh_type(f, x);
  *d = (int)tt_l_wrap_dim(dim, xt.rank);
  int64_t h = xt.dims[*d] / 2;
  *a = tt_lt_slice_dim(f, x, *d, 0, h);
  *b = tt_lt_slice_dim(f, x, *d, h, 2 * h);
}

/* glu(self, dim) = a * sigmoid(b) */
static tt_status_t lower_glu(tt_lctx_t* c) {
  tt_val_t a, b;
  int d;
  glu_halves(c, 0, c->args[1].i, tt_l_opmath(c->out_types[0].dtype), &a, &b, &d);
  return tt_l_set_out(c, 0, tt__ew_mul(c->f, a, tt__ew_sigmoid(c->f, b)));
}

/* glu_backward(grad_output, self, dim): [g * s, g * a * s * (1 - s)], s = sigmoid(b) */
static tt_status_t lower_glu_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t a, b;
  int d;
  glu_halves(c, 1, c->args[2].i, acc, &a, &b, &d);
  tt_val_t g = tt_l_convert(f, c->args[0].val, acc);
  tt_val_t s = tt__ew_sigmoid(f, b);
  tt_val_t ga = tt__ew_mul(f, s, g);
  tt_val_t gb = tt__ew_mul(f, tt__ew_mul(f, tt__ew_mul(f, tt__ew_sub(f, K(s, 1.0), s), s), a), g);
  tt_val_t both[2] = {ga, gb};
  return tt_l_set_out(c, 0, tt_lt_concat(f, both, 2, d));
}

/* ---- prelu --------------------------------------------------------------------------- */

/* _prelu_kernel(self, weight) (weight already broadcastable): x > 0 ? x : w * x */
static tt_status_t lower_prelu(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = acc_type(c, 0);
  tt_val_t x = tt_l_arg_as(c, 0, t.dtype, &t), w = tt_l_arg_as(c, 1, t.dtype, &t);
  return tt_l_set_out(c, 0, tt_l_select(f, tt__ew_cmpk(f, "GT", x, 0.0), x, tt__ew_mul(f, w, x)));
}

/* _prelu_kernel_backward(grad, self, weight) -> (grad_self, grad_weight), both
 * broadcast-shaped (autograd sums grad_weight down to weight's shape). */
static tt_status_t lower_prelu_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = acc_type(c, 0);
  tt_val_t g = tt_l_arg_as(c, 0, t.dtype, &t), x = tt_l_arg_as(c, 1, t.dtype, &t);
  tt_val_t w = tt_l_arg_as(c, 2, t.dtype, &t);
  tt_val_t pos = tt__ew_cmpk(f, "GT", x, 0.0);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_l_select(f, pos, g, tt__ew_mul(f, w, g))));
  return tt_l_set_out(c, 1, tt_l_select(f, pos, K(g, 0.0), tt__ew_mul(f, x, g)));
}

/* ---- rrelu ---------------------------------------------------------------------------- */

enum { RR_FUNCTIONAL, RR_OUT }; /* where the result and the noise go among the outputs */

/* (lower + upper) / 2 as a 0-d value of dt (lower at argument ilo, upper next). */
static tt_val_t rr_slope(tt_lctx_t* c, int ilo, tt_dtype_t dt) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t lo = tt_lt_scalar(c, ilo, TT_F64), hi = tt_lt_scalar(c, ilo + 1, TT_F64);
  tt_val_t m = tt_l_binary(f, "stablehlo.divide", tt_l_binary(f, "stablehlo.add", lo, hi),
                           tt_lt_const0(f, TT_F64, 2.0));
  return tt_l_convert(f, m, dt);
}

/* rrelu_with_noise(self, noise(b!), lower, upper, training, generator) and
 * its .out / in-place forms. Training: where x <= 0, r ~ U[lower, upper),
 * out = x * r, noise = r; elsewhere out = x, noise = 1. Eval: leaky_relu with
 * slope (lower + upper) / 2, noise untouched. Outputs: functional and
 * in-place (result, noise); .out (noise, out) (mutated arguments in order). */
static tt_status_t lower_rrelu(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int ires = c->op->param == RR_OUT ? 1 : 0, inoise = 1 - ires;
  tt_type_t t = acc_type(c, ires);
  tt_val_t x = tt_l_arg_as(c, 0, t.dtype, &t);
  bool training = c->args[4].kind == TT_ARG_BOOL && c->args[4].i;
  tt_val_t neg = tt__ew_cmpk(f, "LE", x, 0.0);
  if (!training) {
    tt_val_t s = tt_lt_splat(f, rr_slope(c, 2, t.dtype), t.rank, t.dims);
    tt_val_t y = tt_l_select(f, tt__ew_cmpk(f, "GT", x, 0.0), x, tt__ew_mul(f, x, s));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, ires, y));
    return tt_l_set_out(c, inoise, c->args[1].val);
  }
  tt_val_t u = tt_lt_uniform01(f, c->args[c->nargs - 1].val, t.dtype == TT_F64 ? TT_F64 : TT_F32, t.rank,
                               t.dims);
  tt_dtype_t udt = tt__sh_type(f, u).dtype;
  tt_val_t lo = tt_lt_splat(f, tt_lt_scalar(c, 2, udt), t.rank, t.dims);
  tt_val_t hi = tt_lt_splat(f, tt_lt_scalar(c, 3, udt), t.rank, t.dims);
  tt_val_t r = tt_l_convert(f, tt__ew_add(f, lo, tt__ew_mul(f, u, tt__ew_sub(f, hi, lo))), t.dtype);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, ires, tt_l_select(f, neg, tt__ew_mul(f, x, r), x)));
  return tt_l_set_out(c, inoise, tt_l_select(f, neg, r, K(r, 1.0)));
}

/* rrelu_with_noise_backward(grad, self, noise, lower, upper, training,
 * self_is_result): grad * noise when training with upper - lower > 1e-6,
 * else leaky_relu_backward with slope (lower + upper) / 2. */
static tt_status_t lower_rrelu_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = acc_type(c, 0);
  tt_val_t g = tt_l_arg_as(c, 0, t.dtype, &t), x = tt_l_arg_as(c, 1, t.dtype, &t);
  tt_val_t s = tt_lt_splat(f, rr_slope(c, 3, t.dtype), t.rank, t.dims);
  tt_val_t leaky = tt_l_select(f, tt__ew_cmpk(f, "GT", x, 0.0), g, tt__ew_mul(f, g, s));
  bool training = c->args[5].kind == TT_ARG_BOOL && c->args[5].i;
  if (!training) return tt_l_set_out(c, 0, leaky);
  tt_val_t width = tt_l_binary(f, "stablehlo.subtract", tt_lt_scalar(c, 4, TT_F64), tt_lt_scalar(c, 3, TT_F64));
  tt_val_t wide = tt_l_compare(f, "GT", width, tt_lt_const0(f, TT_F64, 1e-6));
  tt_val_t noisy = tt__ew_mul(f, g, tt_l_arg_as(c, 2, t.dtype, &t));
  return tt_l_set_out(c, 0, tt_l_select(f, tt_lt_splat(f, wide, t.rank, t.dims), noisy, leaky));
}

/* ---- channel_shuffle ---------------------------------------------------------------- */

/* channel_shuffle(self, groups): (N, g, C/g, *) -> (N, C/g, g, *) */
static tt_status_t lower_channel_shuffle(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = tt__sh_type(f, c->args[0].val);
  int64_t g = c->args[1].i;
  if (t.rank < 3 || g <= 0 || t.dims[1] % g)
    return tt_status_make(TT_INVALID_ARGUMENT, "channel_shuffle: expected at least 3 dims and channels "
                          "divisible by groups (got %d dims, groups %lld)", t.rank, (long long)g);
  if (t.rank + 1 > TT_MAX_RANK)
    return tt_status_make(TT_UNIMPLEMENTED, "channel_shuffle: rank %d is too large", t.rank);
  int64_t d[TT_MAX_RANK], perm[TT_MAX_RANK];
  d[0] = t.dims[0], d[1] = g, d[2] = t.dims[1] / g;
  for (int k = 2; k < t.rank; k++) d[k + 1] = t.dims[k];
  for (int k = 0; k <= t.rank; k++) perm[k] = k;
  perm[1] = 2, perm[2] = 1;
  tt_val_t v = tt_l_transpose(f, tt_l_reshape(f, c->args[0].val, t.rank + 1, d), perm);
  return tt_l_set_out(c, 0, tt_l_reshape(f, v, t.rank, t.dims));
}

#define ROW(name, fn, param, flags) {"aten::" name, fn, param, flags}

const tt_lower_entry_t tt_lower_nn_more[] = {
    ROW("log_sigmoid_forward", lower_log_sigmoid, 0, 0),
    ROW("log_sigmoid_forward.output", lower_log_sigmoid, 0, 0),
    ROW("log_sigmoid_backward", lower_log_sigmoid_bwd, 0, 0),
    ROW("log_sigmoid_backward.grad_input", lower_log_sigmoid_bwd, 0, 0),
    ROW("glu", lower_glu, 0, 0),
    ROW("glu.out", lower_glu, 0, 0),
    ROW("glu_backward", lower_glu_bwd, 0, 0),
    ROW("glu_backward.grad_input", lower_glu_bwd, 0, 0),
    ROW("_prelu_kernel", lower_prelu, 0, 0),
    ROW("_prelu_kernel_backward", lower_prelu_bwd, 0, 0),
    ROW("rrelu_with_noise", lower_rrelu, RR_FUNCTIONAL, TT_LF_RNG),
    ROW("rrelu_with_noise_", lower_rrelu, RR_FUNCTIONAL, TT_LF_RNG),
    ROW("rrelu_with_noise.out", lower_rrelu, RR_OUT, TT_LF_RNG),
    ROW("rrelu_with_noise_backward", lower_rrelu_bwd, 0, 0),
    ROW("rrelu_with_noise_backward.out", lower_rrelu_bwd, 0, 0),
    ROW("channel_shuffle", lower_channel_shuffle, 0, 0),
    ROW("channel_shuffle.out", lower_channel_shuffle, 0, 0),
};
const int tt_lower_nn_more_count = TT_TABLE_COUNT(tt_lower_nn_more);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_nn_more_facts[] = {
    TT_FACT("aten::channel_shuffle", TT_LF_COMPLEX),
};
const int tt_lower_nn_more_facts_count = TT_TABLE_COUNT(tt_lower_nn_more_facts);
