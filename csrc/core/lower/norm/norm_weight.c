/* Weight normalization (torch.nn.utils.parametrizations.weight_norm):
 * _weight_norm_interface (w = v * (g / ||v||), the norm over every dim but
 * `dim`, returned too) and its backward, for dim 0 or the last dim as CPU's
 * fused kernels (other dims go through _weight_norm's decomposition).
 *
 * As CPU computes them: the norm and the factors in the opmath dtype (f32 for
 * f16/bf16; the norm output keeps it), a = g / norm; backward: grad_g =
 * sum(grad_w * v) / norm, b = a * grad_g / norm, grad_v = a * grad_w - b * v. */
#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

#define SUB(a, b) tt_l_binary(f, "stablehlo.subtract", a, b)
#define MUL(a, b) tt_l_binary(f, "stablehlo.multiply", a, b)
#define DIV(a, b) tt_l_binary(f, "stablehlo.divide", a, b)

/* The reduced dims (all but `dim`) of a rank-r tensor; an error for a dim
 * that is neither the first nor the last, as CPU's fused kernels refuse. */
static tt_status_t reduced(tt_lctx_t* c, int rank, int64_t dim_arg, uint32_t* mask) {
  int64_t dim = rank ? tt_l_wrap_dim(dim_arg, rank) : 0;
  if (rank && dim != 0 && dim != rank - 1)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: fused kernels can only be applied for first or last dim",
                          c->op->name);
  *mask = rank ? ((1u << rank) - 1) & ~(1u << dim) : 0;
  return NULL;
}

/* v broadcast from a keepdim value shaped like g (sizes 1 on the reduced dims) */
static tt_val_t like_v(tt_shlo_fn_t* f, tt_val_t x, const tt_type_t* vt) {
  return tt_l_broadcast(f, x, vt->rank, vt->dims);
}

tt_status_t tt__norm_weight_norm(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = c->out_types[1].dtype;
  tt_val_t v = tt_l_convert(f, c->args[0].val, acc);
  const tt_type_t vt = *tt_shlo_type(f, v);
  uint32_t mask;
  TT_RETURN_IF_ERROR(reduced(c, vt.rank, c->args[2].i, &mask));
  const tt_type_t* gt = &c->out_types[1];
  tt_val_t norm = tt_l_unary(f, "stablehlo.sqrt", tt_l_reshape(f, tt_lt_sum(f, MUL(v, v), mask), gt->rank, gt->dims));
  tt_val_t a = DIV(tt_l_convert(f, tt_l_reshape(f, c->args[1].val, gt->rank, gt->dims), acc), norm);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, MUL(v, like_v(f, a, &vt))));
  return tt_l_set_out(c, 1, norm);
}

/* _weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim) */
tt_status_t tt__norm_weight_norm_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* nt = tt_shlo_type(f, c->args[3].val);
  tt_dtype_t acc = nt->dtype;
  tt_val_t gw = tt_l_convert(f, c->args[0].val, acc), v = tt_l_convert(f, c->args[1].val, acc);
  const tt_type_t vt = *tt_shlo_type(f, v);
  uint32_t mask;
  TT_RETURN_IF_ERROR(reduced(c, vt.rank, c->args[4].i, &mask));
  tt_val_t norm = c->args[3].val;
  tt_val_t g = tt_l_convert(f, tt_l_reshape(f, c->args[2].val, nt->rank, nt->dims), acc);
  tt_val_t grad_g = DIV(tt_l_reshape(f, tt_lt_sum(f, MUL(gw, v), mask), nt->rank, nt->dims), norm);
  tt_val_t a = DIV(g, norm);
  tt_val_t b = DIV(MUL(a, grad_g), norm);
  tt_val_t gv = SUB(MUL(like_v(f, a, &vt), gw), MUL(like_v(f, b, &vt), v));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, gv));
  return tt_l_set_out(c, 1, tt_l_reshape(f, grad_g, c->out_types[1].rank, c->out_types[1].dims));
}
