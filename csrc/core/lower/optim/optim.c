/* Fused optimizer steps (torch.optim's fused=True paths): _fused_adam_,
 * _fused_adamw_ and _fused_sgd_, also with a Tensor lr. One program updates
 * every parameter of the group.
 *
 * Outputs follow the mutated lists in schema order: params, grads (unscaled
 * when grad_scale is given, as CUDA/CPU store them back), then the state
 * lists (exp_avgs, exp_avg_sqs, max_exp_avg_sqs / momentum buffers; an empty
 * list has no outputs). With found_inf != 0 nothing changes. Math in the
 * opmath dtype (f32 for f16/bf16); the bias corrections from each tensor's
 * step, as PyTorch's kernels compute them. */
#include <math.h>

#include "../elementwise/lower_elementwise.h"
#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

enum { ADAM = 0, ADAMW = 1 };

typedef struct ostate {
  tt_lctx_t* c;
  tt_shlo_fn_t* f;
  int next; /* next output index */
} ostate_t;

static tt_val_t k(tt_shlo_fn_t* f, tt_val_t like, double v) { return tt__ew_k(f, like, v); }

/* A 0-d value of argument i (a FLOAT or a TENSOR) in dtype dt, broadcast like x. */
static tt_val_t arg_like(tt_lctx_t* c, int i, tt_val_t x) {
  const tt_type_t* t = tt_shlo_type(c->f, x);
  if (c->args[i].kind == TT_ARG_FLOAT) return tt__ew_k(c->f, x, c->args[i].f);
  tt_val_t v = tt_l_convert(c->f, tt_l_reshape(c->f, c->args[i].val, 0, NULL), t->dtype);
  return tt_lt_splat(c->f, v, t->rank, t->dims);
}

/* Output `o->next` = v (the new value) unless found_inf is set, then old. */
static tt_status_t emit(ostate_t* o, tt_val_t old, tt_val_t v, int found_inf_arg) {
  tt_lctx_t* c = o->c;
  if (o->next >= c->nout) return tt_status_make(TT_INTERNAL, "%s: too few outputs", c->op->name);
  const tt_type_t* ot = &c->out_types[o->next];
  v = tt_l_convert(o->f, v, ot->dtype);
  if (tt_lt_has(c, found_inf_arg)) {
    tt_val_t fi = tt_l_convert(o->f, tt_l_reshape(o->f, c->args[found_inf_arg].val, 0, NULL), TT_F32);
    tt_val_t skip = tt_lt_splat(o->f, tt_l_compare(o->f, "NE", fi, tt_lt_const0(o->f, TT_F32, 0.0)),
                                ot->rank, ot->dims);
    v = tt_l_select(o->f, skip, old, v);
  }
  return tt_l_set_out(c, o->next++, v);
}

static tt_status_t check_lists(tt_lctx_t* c, const int* lists, int n, int need) {
  for (int i = 0; i < n; i++) {
    const tt_larg_t* a = &c->args[lists[i]];
    if (a->kind != TT_ARG_TENSORS || (a->n != need && a->n != 0))
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: tensor list %d must hold %d tensors", c->op->name,
                            lists[i], need);
  }
  return NULL;
}

/* A 0-d f64 value of argument i (a FLOAT or a 0-d TENSOR). */
static tt_val_t arg_f64(tt_lctx_t* c, int i) {
  if (c->args[i].kind == TT_ARG_FLOAT) return tt_lt_const0(c->f, TT_F64, c->args[i].f);
  return tt_l_convert(c->f, tt_l_reshape(c->f, c->args[i].val, 0, NULL), TT_F64);
}

/* A 0-d f64 value v as dtype dt, broadcast like x. */
static tt_val_t splat_as(tt_shlo_fn_t* f, tt_val_t v, tt_dtype_t dt, tt_val_t x) {
  const tt_type_t* t = tt_shlo_type(f, x);
  return tt_lt_splat(f, tt_l_convert(f, v, dt), t->rank, t->dims);
}

/* _fused_adam(w)_(self[], grads[], exp_avgs[], exp_avg_sqs[], max_exp_avg_sqs[],
 * state_steps[], lr, beta1, beta2, weight_decay, eps, amsgrad, maximize,
 * grad_scale?, found_inf?)
 *
 * As CPU's fused kernel computes it: the bias corrections, their square
 * root, the step size lr / bc1 and AdamW's decay factor 1 - lr * wd in f64
 * from each tensor's step (CPU reads the step on the host; f32 powers of
 * beta2 near 1 lose ~1e-5 of bc2 after a few steps), each then rounded once
 * to the opmath dtype; exp_avg as lerp(exp_avg, grad, 1 - beta1); then
 * p + (-step_size * m) / (sqrt(v) / sqrt(bc2) + eps). CPU's vectorized loop
 * rounds its lerp's a * b + c once (FMA), the device twice: <= 1 ulp. */
static tt_status_t lower_adam(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int n = c->args[0].n, lists[5] = {1, 2, 3, 4, 5};
  TT_RETURN_IF_ERROR(check_lists(c, lists, 5, n));
  double beta1 = c->args[7].f, beta2 = c->args[8].f, wd = c->args[9].f, eps = c->args[10].f;
  bool amsgrad = c->args[11].i, maximize = c->args[12].i;
  if (amsgrad && c->args[4].n != n)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: amsgrad needs max_exp_avg_sqs", c->op->name);
  tt_val_t np[64], ng[64], nm[64], nv[64], nmax[64];
  if (n > 64) return tt_status_make(TT_UNIMPLEMENTED, "%s: more than 64 tensors in one call", c->op->name);
  tt_val_t lr64 = arg_f64(c, 6), one = tt_lt_const0(f, TT_F64, 1.0);
  for (int i = 0; i < n; i++) {
    const tt_type_t* pt = tt_shlo_type(f, c->args[0].vals[i]);
    tt_dtype_t dt = tt_l_opmath(pt->dtype);
    tt_val_t p = tt_l_convert(f, c->args[0].vals[i], dt), g = tt_l_convert(f, c->args[1].vals[i], dt);
    tt_val_t m = tt_l_convert(f, c->args[2].vals[i], dt), v = tt_l_convert(f, c->args[3].vals[i], dt);
    if (tt_lt_has(c, 13)) g = tt__ew_div(f, g, arg_like(c, 13, g));
    ng[i] = g;
    if (maximize) g = tt_l_unary(f, "stablehlo.negate", g);
    /* the step's scalars, in f64 */
    tt_val_t step = tt_l_convert(f, tt_l_reshape(f, c->args[5].vals[i], 0, NULL), TT_F64);
    tt_val_t bc1 = tt__ew_sub(f, one, tt_l_binary(f, "stablehlo.power", tt_lt_const0(f, TT_F64, beta1), step));
    tt_val_t bc2 = tt__ew_sub(f, one, tt_l_binary(f, "stablehlo.power", tt_lt_const0(f, TT_F64, beta2), step));
    tt_val_t neg_step_size = splat_as(f, tt_l_unary(f, "stablehlo.negate", tt__ew_div(f, lr64, bc1)), dt, p);
    tt_val_t bc2_sqrt = splat_as(f, tt_l_unary(f, "stablehlo.sqrt", bc2), dt, p);
    if (wd != 0.0) {
      if (c->op->param == ADAMW) p = tt__ew_mul(f, p, splat_as(f, tt__ew_sub(f, one, tt__ew_mulk(f, lr64, wd)), dt, p));
      else g = tt__ew_add(f, g, tt__ew_mulk(f, p, wd));
    }
    /* exp_avg.lerp_(grad, 1 - beta1): the weight is a constant, so is its side */
    tt_val_t w = k(f, p, 1.0 - beta1), d = tt__ew_sub(f, g, m);
    if (fabs((double)(float)(1.0 - beta1)) < 0.5) m = tt__ew_add(f, m, tt__ew_mul(f, w, d));
    else m = tt__ew_sub(f, g, tt__ew_mul(f, d, tt__ew_sub(f, k(f, p, 1.0), w)));
    v = tt__ew_add(f, tt__ew_mulk(f, v, beta2), tt__ew_mul(f, tt__ew_mul(f, k(f, p, 1.0 - beta2), g), g));
    tt_val_t vv = v;
    if (amsgrad) {
      tt_val_t mx = tt_l_convert(f, c->args[4].vals[i], dt);
      vv = tt__ew_max(f, mx, v);
      nmax[i] = vv;
    }
    tt_val_t denom = tt__ew_add(f, tt__ew_div(f, tt_l_unary(f, "stablehlo.sqrt", vv), bc2_sqrt), k(f, p, eps));
    p = tt__ew_add(f, p, tt__ew_div(f, tt__ew_mul(f, neg_step_size, m), denom));
    np[i] = p, nm[i] = m, nv[i] = v;
  }
  ostate_t o = {c, f, 0};
  for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[0].vals[i], np[i], 14));
  for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[1].vals[i], ng[i], 14));
  for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[2].vals[i], nm[i], 14));
  for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[3].vals[i], nv[i], 14));
  for (int i = 0; i < c->args[4].n; i++)
    TT_RETURN_IF_ERROR(emit(&o, c->args[4].vals[i], amsgrad ? nmax[i] : c->args[4].vals[i], 14));
  return NULL;
}

/* _fused_sgd_(self[], grads[], momentum_buffer_list[], weight_decay, momentum,
 * lr, dampening, nesterov, maximize, is_first_step, grad_scale?, found_inf?) */
static tt_status_t lower_sgd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int n = c->args[0].n, lists[2] = {1, 2};
  TT_RETURN_IF_ERROR(check_lists(c, lists, 2, n));
  double wd = c->args[3].f, mom = c->args[4].f, damp = c->args[6].f;
  bool nesterov = c->args[7].i, maximize = c->args[8].i, first = c->args[9].i;
  bool bufs = c->args[2].n == n && mom != 0.0;
  tt_val_t np[64], ng[64], nb[64];
  if (n > 64) return tt_status_make(TT_UNIMPLEMENTED, "%s: more than 64 tensors in one call", c->op->name);
  for (int i = 0; i < n; i++) {
    const tt_type_t* pt = tt_shlo_type(f, c->args[0].vals[i]);
    tt_dtype_t dt = tt_l_opmath(pt->dtype);
    tt_val_t p = tt_l_convert(f, c->args[0].vals[i], dt), g = tt_l_convert(f, c->args[1].vals[i], dt);
    if (tt_lt_has(c, 10)) g = tt__ew_div(f, g, arg_like(c, 10, g));
    ng[i] = g;
    if (maximize) g = tt_l_unary(f, "stablehlo.negate", g);
    if (wd != 0.0) g = tt__ew_add(f, g, tt__ew_mulk(f, p, wd));
    if (bufs) {
      tt_val_t b = tt_l_convert(f, c->args[2].vals[i], dt);
      b = first ? g : tt__ew_add(f, tt__ew_mulk(f, b, mom), tt__ew_mulk(f, g, 1.0 - damp));
      nb[i] = b;
      g = nesterov ? tt__ew_add(f, g, tt__ew_mulk(f, b, mom)) : b;
    }
    np[i] = tt__ew_sub(f, p, tt__ew_mul(f, arg_like(c, 5, p), g));
  }
  ostate_t o = {c, f, 0};
  for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[0].vals[i], np[i], 11));
  for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[1].vals[i], ng[i], 11));
  for (int i = 0; i < c->args[2].n; i++)
    TT_RETURN_IF_ERROR(emit(&o, c->args[2].vals[i], bufs ? nb[i] : c->args[2].vals[i], 11));
  return NULL;
}

/* _fused_adagrad_(self[], grads[], state_sums[], state_steps[], lr, lr_decay,
 * weight_decay, eps, maximize, grad_scale?, found_inf?) and .tensor_lr.
 * As CPU's fused kernel: clr = lr / (1 + (step - 1) * lr_decay) in f64 from
 * each tensor's step; sum += g * g; p -= clr * g / (sqrt(sum) + eps), in the
 * opmath dtype with the constants rounded to the parameter's dtype first (as
 * CPU's kernel rounds them for float16 / bfloat16). Outputs: params, grads,
 * state_sums, then the steps when the schema marks them written (unchanged). */
static tt_status_t lower_adagrad(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int n = c->args[0].n, lists[3] = {1, 2, 3};
  TT_RETURN_IF_ERROR(check_lists(c, lists, 3, n));
  if (c->nout != 3 * n && c->nout != 4 * n)
    return tt_status_make(TT_INTERNAL, "%s: %d outputs for %d tensors", c->op->name, c->nout, n);
  double lr_decay = c->args[5].f, wd = c->args[6].f, eps = c->args[7].f;
  bool maximize = c->args[8].i;
  tt_val_t np[64], ng[64], ns[64];
  if (n > 64) return tt_status_make(TT_UNIMPLEMENTED, "%s: more than 64 tensors in one call", c->op->name);
  tt_val_t lr64 = arg_f64(c, 4), one = tt_lt_const0(f, TT_F64, 1.0);
  for (int i = 0; i < n; i++) {
    tt_val_t p0 = c->args[0].vals[i];
    tt_dtype_t dt = tt_l_opmath(tt_shlo_type(f, p0)->dtype);
    /* a constant rounded to the parameter's dtype, then in opmath */
#define KQ(v) tt_l_convert(f, tt__ew_k(f, p0, (v)), dt)
    tt_val_t p = tt_l_convert(f, p0, dt), g = tt_l_convert(f, c->args[1].vals[i], dt);
    tt_val_t sum = tt_l_convert(f, c->args[2].vals[i], dt);
    if (tt_lt_has(c, 9)) g = tt__ew_div(f, g, arg_like(c, 9, g));
    ng[i] = g;
    if (maximize) g = tt_l_unary(f, "stablehlo.negate", g);
    if (wd != 0.0) g = tt__ew_add(f, g, tt__ew_mul(f, p, KQ(wd)));
    sum = tt__ew_add(f, sum, tt__ew_mul(f, g, g));
    tt_val_t step = tt_l_convert(f, tt_l_reshape(f, c->args[3].vals[i], 0, NULL), TT_F64);
    tt_val_t clr = tt__ew_div(f, lr64, tt__ew_add(f, one, tt__ew_mulk(f, tt__ew_sub(f, step, one), lr_decay)));
    const tt_type_t* pt = tt_shlo_type(f, p0);
    tt_val_t clr_q = tt_l_convert(f, tt_lt_splat(f, tt_l_convert(f, clr, pt->dtype), pt->rank, pt->dims), dt);
    tt_val_t std = tt__ew_add(f, tt_l_unary(f, "stablehlo.sqrt", sum), KQ(eps));
    np[i] = tt__ew_sub(f, p, tt__ew_div(f, tt__ew_mul(f, clr_q, g), std));
    ns[i] = sum;
#undef KQ
  }
  ostate_t o = {c, f, 0};
  for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[0].vals[i], np[i], 10));
  for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[1].vals[i], ng[i], 10));
  for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[2].vals[i], ns[i], 10));
  if (c->nout == 4 * n)
    for (int i = 0; i < n; i++) TT_RETURN_IF_ERROR(emit(&o, c->args[3].vals[i], c->args[3].vals[i], 10));
  return NULL;
}

/* ---- torch.amp.GradScaler ------------------------------------------------------------ */

/* _amp_foreach_non_finite_check_and_unscale_(self[], found_inf, inv_scale):
 * each tensor times inv_scale (in its opmath dtype; exact when inv_scale is
 * 1, as CPU's skip of the product), found_inf set to 1 when any element of any
 * tensor is inf or NaN (left as it was otherwise). Outputs: the tensors, then
 * found_inf. */
static tt_status_t lower_amp_unscale(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_larg_t* ts = &c->args[0];
  if (ts->kind != TT_ARG_TENSORS || c->nout != ts->n + 1)
    return tt_status_make(TT_INTERNAL, "%s: %d outputs for %d tensors", c->op->name, c->nout, ts->n);
  tt_val_t inv = tt_l_reshape(f, c->args[2].val, 0, NULL), found = tt_lt_const0(f, TT_BOOL, 0.0);
  for (int i = 0; i < ts->n; i++) {
    const tt_type_t* t = tt_shlo_type(f, ts->vals[i]);
    if (!tt_dtype_is_float(t->dtype))
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: gradients must be floating point, got %s", c->op->name,
                            tt_dtype_name(t->dtype));
    tt_dtype_t dt = tt_l_opmath(t->dtype);
    tt_val_t x = tt_l_convert(f, ts->vals[i], dt);
    tt_val_t bad = tt_l_unary(f, "stablehlo.not", tt__ew_cmpk(f, "LT", tt_l_unary(f, "stablehlo.abs", x), INFINITY));
    uint32_t all = t->rank ? (1u << t->rank) - 1 : 0;
    found = tt_l_binary(f, "stablehlo.or", found, tt_lt_reduce(f, bad, all, "stablehlo.or",
                                                                  tt_lt_const0(f, TT_BOOL, 0.0)));
    tt_val_t y = tt__ew_mul(f, x, tt_lt_splat(f, tt_l_convert(f, inv, dt), t->rank, t->dims));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, i, tt_l_convert(f, y, c->out_types[i].dtype)));
  }
  const tt_type_t* ft = &c->out_types[ts->n];
  tt_val_t old = tt_l_convert(f, c->args[1].val, ft->dtype);
  tt_val_t one = tt_lt_splat(f, tt_lt_const0(f, ft->dtype, 1.0), ft->rank, ft->dims);
  return tt_l_set_out(c, ts->n, tt_l_select(f, tt_lt_splat(f, found, ft->rank, ft->dims), one, old));
}

/* _amp_update_scale_(self, growth_tracker, found_inf, growth_factor,
 * backoff_factor, growth_interval): CPU's rule. found_inf != 0: scale *
 * backoff (the product in f64, rounded to f32), tracker 0; else tracker + 1,
 * and at growth_interval the scale times growth (unless that is not finite)
 * and tracker 0. Outputs: scale, tracker. */
static tt_status_t lower_amp_update_scale(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  if (c->nout != 2) return tt_status_make(TT_INTERNAL, "%s: expected 2 outputs", c->op->name);
  const tt_type_t *st = &c->out_types[0], *gt = &c->out_types[1];
  double growth = c->args[3].f, backoff = c->args[4].f;
  int64_t interval = c->args[5].i;
  tt_val_t scale = tt_l_reshape(f, c->args[0].val, 0, NULL);
  tt_val_t tracker = tt_l_reshape(f, c->args[1].val, 0, NULL);
  tt_val_t found = tt__ew_cmpk(f, "NE", tt_l_convert(f, tt_l_reshape(f, c->args[2].val, 0, NULL), TT_F32), 0.0);
  tt_val_t s64 = tt_l_convert(f, scale, TT_F64);
  tt_val_t backed = tt_l_convert(f, tt__ew_mulk(f, s64, backoff), st->dtype);
  tt_val_t grown = tt_l_convert(f, tt__ew_mulk(f, s64, growth), st->dtype);
  tt_val_t grown_ok = tt__ew_cmpk(f, "LT", tt_l_unary(f, "stablehlo.abs", grown), INFINITY);
  tt_val_t succ = tt__ew_add(f, tracker, tt__ew_k(f, tracker, 1.0));
  tt_val_t at_interval = tt__ew_cmpk(f, "EQ", succ, (double)interval);
  tt_val_t zero = tt__ew_k(f, tracker, 0.0);
  tt_val_t ns = tt_l_select(f, found, backed,
                            tt_l_select(f, tt_l_binary(f, "stablehlo.and", at_interval, grown_ok), grown,
                                        tt_l_convert(f, scale, st->dtype)));
  tt_val_t nt = tt_l_select(f, found, zero, tt_l_select(f, at_interval, zero, succ));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_l_reshape(f, ns, st->rank, st->dims)));
  return tt_l_set_out(c, 1, tt_l_reshape(f, tt_l_convert(f, nt, gt->dtype), gt->rank, gt->dims));
}

const tt_lower_entry_t tt_lower_optim[] = {
    {"aten::_amp_foreach_non_finite_check_and_unscale_", lower_amp_unscale, 0, 0},
    {"aten::_amp_update_scale_", lower_amp_update_scale, 0, 0},
    {"aten::_fused_adam_", lower_adam, ADAM, 0},
    {"aten::_fused_adam_.tensor_lr", lower_adam, ADAM, 0},
    {"aten::_fused_adamw_", lower_adam, ADAMW, 0},
    {"aten::_fused_adamw_.tensor_lr", lower_adam, ADAMW, 0},
    {"aten::_fused_adagrad_", lower_adagrad, 0, 0},
    {"aten::_fused_adagrad_.tensor_lr", lower_adagrad, 0, 0},
    {"aten::_fused_sgd_", lower_sgd, 0, 0},
    {"aten::_fused_sgd_.tensor_lr", lower_sgd, 0, 0},
};
const int tt_lower_optim_count = TT_TABLE_COUNT(tt_lower_optim);
