/* The loss family: pointwise losses with a reduction (none / mean / sum),
 * forward and backward: smooth_l1, huber, binary_cross_entropy,
 * binary_cross_entropy_with_logits (forward; its backward is composite),
 * soft_margin. mse_loss and nll_loss live in nn.c; l1_loss, kl_div and
 * cross_entropy decompose before reaching us.
 *
 * Formulas are those of PyTorch's CPU kernels (aten/src/ATen/native/Loss.cpp
 * and BinaryOps / PointwiseOps kernels), computed in the opmath dtype (f32 for
 * f16/bf16) and rounded once. */
#include <math.h>

#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

#define ADD(a, b) tt_l_binary(f, "stablehlo.add", a, b)
#define SUB(a, b) tt_l_binary(f, "stablehlo.subtract", a, b)
#define MUL(a, b) tt_l_binary(f, "stablehlo.multiply", a, b)
#define DIV(a, b) tt_l_binary(f, "stablehlo.divide", a, b)
#define NEG(a) tt_l_unary(f, "stablehlo.negate", a)
#define ABS(a) tt_l_unary(f, "stablehlo.abs", a)

enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };
enum { SMOOTH_L1, HUBER, BCE, BCE_LOGITS, SOFT_MARGIN };

static tt_type_t type_of(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t ? *t : tt_type_scalar(TT_F32);
}

static tt_val_t cst(tt_shlo_fn_t* f, tt_val_t like, double v) {
  tt_type_t t = type_of(f, like);
  return tt_shlo_const(f, &t, v);
}

/* log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)) */
static tt_val_t log_sigmoid(tt_shlo_fn_t* f, tt_val_t x) {
  tt_val_t e = tt_l_unary(f, "stablehlo.exponential", NEG(ABS(x)));
  return SUB(tt_l_binary(f, "stablehlo.minimum", x, cst(f, x, 0.0)), tt_l_unary(f, "stablehlo.log_plus_one", e));
}

/* The per-element loss. Arguments: self at 0 and target at 1 of `base`; p is
 * the float parameter (beta / delta); iw / ipw the weight / pos_weight args. */
static tt_val_t pointwise(tt_lctx_t* c, int base, const tt_type_t* t, double p, int iw, int ipw) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = tt_l_arg_as(c, base, t->dtype, t), y = tt_l_arg_as(c, base + 1, t->dtype, t);
  tt_val_t r;
  switch (c->op->param) {
    case SMOOTH_L1: {
      tt_val_t z = ABS(SUB(x, y));
      if (p == 0.0) return z;
      tt_val_t quad = DIV(MUL(MUL(cst(f, z, 0.5), z), z), cst(f, z, p));
      return tt_l_select(f, tt_l_compare(f, "LT", z, cst(f, z, p)), quad, SUB(z, cst(f, z, 0.5 * p)));
    }
    case HUBER: {
      tt_val_t z = ABS(SUB(x, y));
      tt_val_t quad = MUL(MUL(cst(f, z, 0.5), z), z);
      tt_val_t lin = MUL(cst(f, z, p), SUB(z, cst(f, z, 0.5 * p)));
      return tt_l_select(f, tt_l_compare(f, "LT", z, cst(f, z, p)), quad, lin);
    }
    case BCE: {
      tt_val_t lo = cst(f, x, -100.0);
      tt_val_t l1 = tt_l_binary(f, "stablehlo.maximum", tt_l_unary(f, "stablehlo.log_plus_one", NEG(x)), lo);
      tt_val_t l0 = tt_l_binary(f, "stablehlo.maximum", tt_l_unary(f, "stablehlo.log", x), lo);
      r = SUB(MUL(SUB(y, cst(f, y, 1.0)), l1), MUL(y, l0));
      break;
    }
    case BCE_LOGITS: {
      tt_val_t ls = log_sigmoid(f, x);
      if (tt_lt_has(c, ipw)) {
        tt_val_t pw = tt_l_arg_as(c, ipw, t->dtype, t);
        ls = MUL(ls, ADD(MUL(SUB(pw, cst(f, pw, 1.0)), y), cst(f, y, 1.0)));
      }
      r = SUB(MUL(SUB(cst(f, y, 1.0), y), x), ls);
      break;
    }
    default: /* SOFT_MARGIN */
      return tt_l_unary(f, "stablehlo.log_plus_one", tt_l_unary(f, "stablehlo.exponential", NEG(MUL(y, x))));
  }
  if (iw >= 0 && tt_lt_has(c, iw)) r = MUL(r, tt_l_arg_as(c, iw, t->dtype, t));
  return r;
}

/* The derivative of the loss w.r.t. self, per element (before norm * grad). */
static tt_val_t pointwise_grad(tt_lctx_t* c, int base, const tt_type_t* t, double p, int iw) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = tt_l_arg_as(c, base, t->dtype, t), y = tt_l_arg_as(c, base + 1, t->dtype, t);
  tt_val_t d = SUB(x, y), one = cst(f, x, 1.0);
  switch (c->op->param) {
    case SMOOTH_L1:
    case HUBER: { /* d < -p ? -1 : d > p ? 1 : d / beta (smooth_l1) or d (huber), times delta (huber) */
      tt_val_t mid = c->op->param == SMOOTH_L1 ? DIV(d, cst(f, d, p)) : d;
      double s = c->op->param == HUBER ? p : 1.0;
      tt_val_t r = tt_l_select(f, tt_l_compare(f, "GT", d, cst(f, d, p)), cst(f, d, s), mid);
      return tt_l_select(f, tt_l_compare(f, "LT", d, cst(f, d, -p)), cst(f, d, -s), r);
    }
    case BCE: {
      tt_val_t den = tt_l_binary(f, "stablehlo.maximum", MUL(SUB(one, x), x), cst(f, x, 1e-12));
      tt_val_t r = DIV(d, den);
      if (iw >= 0 && tt_lt_has(c, iw)) r = MUL(r, tt_l_arg_as(c, iw, t->dtype, t));
      return r;
    }
    default: { /* SOFT_MARGIN: -y * z / (1 + z), z = exp(-y * x) */
      tt_val_t z = tt_l_unary(f, "stablehlo.exponential", NEG(MUL(y, x)));
      return DIV(NEG(MUL(y, z)), ADD(one, z));
    }
  }
}

typedef struct loss_args {
  int reduction, weight, pos_weight, param; /* argument indices, -1: absent */
} loss_args_t;

static loss_args_t fwd_args(int64_t kind) {
  switch (kind) {
    case SMOOTH_L1:
    case HUBER: return (loss_args_t){2, -1, -1, 3};
    case BCE: return (loss_args_t){3, 2, -1, -1};
    case BCE_LOGITS: return (loss_args_t){4, 2, 3, -1};
    default: return (loss_args_t){2, -1, -1, -1};
  }
}

/* loss(self, target, ...) -> reduced loss */
static tt_status_t lower_loss(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  loss_args_t a = fwd_args(c->op->param);
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_type_t s = type_of(f, c->args[0].val), t = type_of(f, c->args[1].val);
  tt_type_t bt = tt_lt_broadcast_type(&s, &t, acc);
  double p = a.param >= 0 ? c->args[a.param].f : 0.0;
  tt_val_t l = pointwise(c, 0, &bt, p, a.weight, a.pos_weight);
  return tt_lt_set_reduced_loss(c, l, c->args[a.reduction].i);
}

/* loss_backward(grad_output, self, target, ...) -> grad_input */
static tt_status_t lower_loss_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  loss_args_t a = fwd_args(c->op->param);
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_type_t ot = c->out_types[0];
  ot.dtype = acc;
  double p = a.param >= 0 ? c->args[a.param + 1].f : 0.0;
  int iw = a.weight >= 0 ? a.weight + 1 : -1;
  int64_t red = c->args[a.reduction + 1].i;
  tt_val_t r = pointwise_grad(c, 1, &ot, p, iw);
  if (red == RED_MEAN) r = MUL(r, cst(f, r, 1.0 / (double)tt_type_numel(&ot)));
  return tt_l_set_out(c, 0, MUL(r, tt_l_arg_as(c, 0, acc, &ot)));
}

#define ROW(name, fn, param) {"aten::" name, fn, param, 0}

const tt_lower_entry_t tt_lower_loss[] = {
    ROW("smooth_l1_loss", lower_loss, SMOOTH_L1),
    ROW("smooth_l1_loss.out", lower_loss, SMOOTH_L1),
    ROW("smooth_l1_loss_backward", lower_loss_bwd, SMOOTH_L1),
    ROW("smooth_l1_loss_backward.grad_input", lower_loss_bwd, SMOOTH_L1),
    ROW("huber_loss", lower_loss, HUBER),
    ROW("huber_loss.out", lower_loss, HUBER),
    ROW("huber_loss_backward", lower_loss_bwd, HUBER),
    ROW("huber_loss_backward.out", lower_loss_bwd, HUBER),
    ROW("binary_cross_entropy", lower_loss, BCE),
    ROW("binary_cross_entropy.out", lower_loss, BCE),
    ROW("binary_cross_entropy_backward", lower_loss_bwd, BCE),
    ROW("binary_cross_entropy_backward.grad_input", lower_loss_bwd, BCE),
    ROW("binary_cross_entropy_with_logits", lower_loss, BCE_LOGITS),
    ROW("binary_cross_entropy_with_logits.out", lower_loss, BCE_LOGITS),
    ROW("soft_margin_loss", lower_loss, SOFT_MARGIN),
    ROW("soft_margin_loss.out", lower_loss, SOFT_MARGIN),
    ROW("soft_margin_loss_backward", lower_loss_bwd, SOFT_MARGIN),
    ROW("soft_margin_loss_backward.grad_input", lower_loss_bwd, SOFT_MARGIN),
};
const int tt_lower_loss_count = TT_TABLE_COUNT(tt_lower_loss);
