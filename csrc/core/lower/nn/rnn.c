/* The fused RNN cells that nn.LSTM / nn.GRU (and LSTMCell / GRUCell) call on
 * non-CPU devices: _thnn_fused_lstm_cell, _thnn_fused_gru_cell and their
 * backward ops. The gate pre-activations come computed (two matmuls done by
 * the caller); a cell adds the biases, applies the activations and keeps the
 * activated gates in a `workspace` output that its backward op reads.
 *
 * Gate order along the last dim, as PyTorch lays out its weights:
 *   LSTM (4H): input i, forget f, cell g, output o; workspace = [i f g o]
 *   GRU  (3H): reset r, update z, new n;  workspace (5H) = [r z n hx hn]
 *              where hn is the hidden part of the new gate (with its bias).
 * f16/bf16 compute in f32 and round once. */
#include "../elementwise/lower_elementwise.h"
#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

typedef struct rnn {
  tt_shlo_fn_t* f;
  int rank, gd; /* rank of the states; gd = the gate dim (last) */
  int64_t h;    /* hidden size */
  tt_dtype_t dt;
} rnn_t;

static tt_val_t chunk(rnn_t* r, tt_val_t v, int k) {
  return tt_lt_slice_dim(r->f, v, r->gd, k * r->h, (k + 1) * r->h);
}
static tt_val_t one_minus(tt_shlo_fn_t* f, tt_val_t v) { return tt__ew_sub(f, tt__ew_k(f, v, 1.0), v); }
static tt_val_t tanh_(tt_shlo_fn_t* f, tt_val_t v) { return tt_l_unary(f, "stablehlo.tanh", v); }

/* An output the caller did not request (an undefined bias gradient). */
static tt_status_t no_bias(tt_lctx_t* c, int k) {
  return tt_l_set_out(c, k, tt_shlo_const(c->f, &c->out_types[k], 0.0));
}

/* Argument i (gates or states) in the compute dtype. */
static tt_val_t in(tt_lctx_t* c, rnn_t* r, int i) { return tt_l_convert(r->f, c->args[i].val, r->dt); }

/* gates = input_gates + hidden_gates (+ input_bias + hidden_bias), or each
 * side with its own bias when the caller needs them apart (GRU). */
static tt_val_t with_bias(tt_lctx_t* c, rnn_t* r, int gates, int bias) {
  tt_val_t g = in(c, r, gates);
  if (!tt_lt_has(c, bias)) return g;
  const tt_type_t* t = tt_shlo_type(r->f, g);
  return tt__ew_add(r->f, g, tt_l_broadcast(r->f, in(c, r, bias), t->rank, t->dims));
}

static tt_status_t setup(tt_lctx_t* c, rnn_t* r, int state_arg) {
  const tt_type_t* st = tt_lt_arg_type(c, state_arg);
  if (!st || st->rank < 1)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: the state must have a hidden dim", c->op->name);
  r->f = c->f;
  r->rank = st->rank;
  r->gd = st->rank - 1;
  r->h = st->dims[r->gd];
  r->dt = tt_l_opmath(st->dtype);
  return NULL;
}

/* _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias?, hidden_bias?)
 *   -> (hy, cy, workspace) */
static tt_status_t lower_lstm_cell(tt_lctx_t* c) {
  rnn_t r;
  TT_RETURN_IF_ERROR(setup(c, &r, 2));
  tt_shlo_fn_t* f = c->f;
  tt_val_t g = tt__ew_add(f, with_bias(c, &r, 0, 3), with_bias(c, &r, 1, 4));
  tt_val_t i = tt__ew_sigmoid(f, chunk(&r, g, 0)), fg = tt__ew_sigmoid(f, chunk(&r, g, 1));
  tt_val_t cg = tanh_(f, chunk(&r, g, 2)), o = tt__ew_sigmoid(f, chunk(&r, g, 3));
  tt_val_t cy = tt__ew_add(f, tt__ew_mul(f, fg, in(c, &r, 2)), tt__ew_mul(f, i, cg));
  tt_val_t hy = tt__ew_mul(f, o, tanh_(f, cy));
  tt_val_t parts[4] = {i, fg, cg, o};
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, hy));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, cy));
  return tt_l_set_out(c, 2, tt_lt_concat(f, parts, 4, r.gd));
}

/* _thnn_fused_lstm_cell_backward_impl(grad_hy?, grad_cy?, cx, cy, workspace,
 * has_bias) -> (grad_gates, grad_cx, grad_bias?) */
static tt_status_t lower_lstm_cell_bwd(tt_lctx_t* c) {
  rnn_t r;
  TT_RETURN_IF_ERROR(setup(c, &r, 2));
  tt_shlo_fn_t* f = c->f;
  tt_val_t cx = in(c, &r, 2), cy = in(c, &r, 3), ws = in(c, &r, 4);
  tt_val_t zero = tt__ew_k(f, cx, 0.0);
  tt_val_t ghy = tt_lt_has(c, 0) ? in(c, &r, 0) : zero;
  tt_val_t gcy = tt_lt_has(c, 1) ? in(c, &r, 1) : zero;
  tt_val_t i = chunk(&r, ws, 0), fg = chunk(&r, ws, 1), cg = chunk(&r, ws, 2), o = chunk(&r, ws, 3);
  tt_val_t tcy = tanh_(f, cy);
  tt_val_t go = tt__ew_mul(f, ghy, tcy);
  /* d cy = grad_cy + grad_hy * o * (1 - tanh(cy)^2) */
  tt_val_t gc = tt__ew_add(f, tt__ew_mul(f, tt__ew_mul(f, ghy, o), one_minus(f, tt__ew_mul(f, tcy, tcy))), gcy);
  tt_val_t di = tt__ew_mul(f, tt__ew_mul(f, gc, cg), tt__ew_mul(f, one_minus(f, i), i));
  tt_val_t df = tt__ew_mul(f, tt__ew_mul(f, gc, cx), tt__ew_mul(f, one_minus(f, fg), fg));
  tt_val_t dg = tt__ew_mul(f, tt__ew_mul(f, gc, i), one_minus(f, tt__ew_mul(f, cg, cg)));
  tt_val_t dout = tt__ew_mul(f, go, tt__ew_mul(f, one_minus(f, o), o));
  tt_val_t parts[4] = {di, df, dg, dout};
  tt_val_t gg = tt_lt_concat(f, parts, 4, r.gd);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, gg));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, tt__ew_mul(f, gc, fg)));
  if (c->nout < 3) return NULL;
  if (!c->args[5].i) return no_bias(c, 2); /* has_bias false: grad_bias undefined */
  uint32_t batch = ((1u << r.rank) - 1u) & ~(1u << r.gd);
  return tt_l_set_out(c, 2, tt_lt_sum(f, gg, batch));
}

/* _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias?, hidden_bias?)
 *   -> (hy, workspace) */
static tt_status_t lower_gru_cell(tt_lctx_t* c) {
  rnn_t r;
  TT_RETURN_IF_ERROR(setup(c, &r, 2));
  tt_shlo_fn_t* f = c->f;
  tt_val_t ig = with_bias(c, &r, 0, 3), hg = with_bias(c, &r, 1, 4), hx = in(c, &r, 2);
  tt_val_t rg = tt__ew_sigmoid(f, tt__ew_add(f, chunk(&r, ig, 0), chunk(&r, hg, 0)));
  tt_val_t zg = tt__ew_sigmoid(f, tt__ew_add(f, chunk(&r, ig, 1), chunk(&r, hg, 1)));
  tt_val_t hn = chunk(&r, hg, 2);
  tt_val_t ng = tanh_(f, tt__ew_add(f, chunk(&r, ig, 2), tt__ew_mul(f, rg, hn)));
  tt_val_t hy = tt__ew_add(f, ng, tt__ew_mul(f, zg, tt__ew_sub(f, hx, ng)));
  tt_val_t parts[5] = {rg, zg, ng, hx, hn};
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, hy));
  return tt_l_set_out(c, 1, tt_lt_concat(f, parts, 5, r.gd));
}

/* _thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias)
 *   -> (grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias?, grad_hidden_bias?) */
static tt_status_t lower_gru_cell_bwd(tt_lctx_t* c) {
  rnn_t r;
  TT_RETURN_IF_ERROR(setup(c, &r, 0));
  tt_shlo_fn_t* f = c->f;
  tt_val_t ghy = in(c, &r, 0), ws = in(c, &r, 1);
  tt_val_t rg = chunk(&r, ws, 0), zg = chunk(&r, ws, 1), ng = chunk(&r, ws, 2);
  tt_val_t hx = chunk(&r, ws, 3), hn = chunk(&r, ws, 4);
  tt_val_t dz = tt__ew_mul(f, tt__ew_mul(f, ghy, tt__ew_sub(f, hx, ng)), tt__ew_mul(f, one_minus(f, zg), zg));
  tt_val_t dhx = tt__ew_mul(f, ghy, zg);
  tt_val_t dn = tt__ew_mul(f, tt__ew_mul(f, ghy, one_minus(f, zg)), one_minus(f, tt__ew_mul(f, ng, ng)));
  tt_val_t dhn = tt__ew_mul(f, dn, rg);
  tt_val_t dr = tt__ew_mul(f, tt__ew_mul(f, dn, hn), tt__ew_mul(f, one_minus(f, rg), rg));
  tt_val_t pi[3] = {dr, dz, dn}, ph[3] = {dr, dz, dhn};
  tt_val_t gi = tt_lt_concat(f, pi, 3, r.gd), gh = tt_lt_concat(f, ph, 3, r.gd);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, gi));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, gh));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 2, dhx));
  if (c->nout < 5) return NULL;
  if (!c->args[2].i) {
    TT_RETURN_IF_ERROR(no_bias(c, 3));
    return no_bias(c, 4);
  }
  uint32_t batch = ((1u << r.rank) - 1u) & ~(1u << r.gd);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 3, tt_lt_sum(f, gi, batch)));
  return tt_l_set_out(c, 4, tt_lt_sum(f, gh, batch));
}

#define R(name, fn) {"aten::" name, fn, 0, 0}

const tt_lower_entry_t tt_lower_rnn[] = {
    R("_thnn_fused_lstm_cell", lower_lstm_cell),
    R("_thnn_fused_lstm_cell.out", lower_lstm_cell),
    R("_thnn_fused_lstm_cell_backward_impl", lower_lstm_cell_bwd),
    R("_thnn_fused_lstm_cell_backward_impl.out", lower_lstm_cell_bwd),
    R("_thnn_fused_gru_cell", lower_gru_cell),
    R("_thnn_fused_gru_cell.out", lower_gru_cell),
    R("_thnn_fused_gru_cell_backward", lower_gru_cell_bwd),
    R("_thnn_fused_gru_cell_backward.out", lower_gru_cell_bwd),
};
const int tt_lower_rnn_count = TT_TABLE_COUNT(tt_lower_rnn);
