/* fractional_max_pool{2,3}d (+ backward), deterministic given random_samples.
 *
 * Window starts follow CPU's interval formula per (N, C) plane and dim:
 * start[i] = int((i + u) * alpha) - int(u * alpha), alpha = (in - k) / (out - 1),
 * the last start in - k; computed in the input dtype like CPU's scalar_t
 * (half types round every step). The window's elements are read with one
 * gather per window offset and reduced in CPU's loop order: a later element
 * wins if it is greater or NaN; the first element's index is the default.
 * Backward scatter-adds grad_output at the saved indices. */
#include "../lower_tensor_util.h"
#include "../shape/shape_util.h"
#include "../elementwise/lower_elementwise.h"
#include "../tt_lower_tables.h"



/* Window starts along spatial dim s, (N, C, out) i64. u: (N, C) samples in dt. */
static tt_val_t starts(tt_shlo_fn_t* f, tt_val_t u, tt_dtype_t dt, int64_t in, int64_t k, int64_t out) {
  tt_type_t ut = tt__sh_type(f, u);
  int64_t d[3] = {ut.dims[0], ut.dims[1], out}, b01[2] = {0, 1};
  tt_type_t it = tt_type_make(TT_I64, 3, d);
  tt_val_t last = tt_shlo_const_i64(f, &it, in - k);
  if (out <= 1) return last;
  tt_val_t a = tt_l_binary(f, "stablehlo.divide", tt_lt_const0(f, dt, (double)(in - k)),
                           tt__ew_opaque(f, tt_lt_const0(f, dt, (double)(out - 1))));
  tt_val_t alpha = tt_lt_splat(f, a, 3, d);
  tt_val_t u3 = tt_lt_bcast_in_dim(f, u, 3, d, b01);
  tt_val_t i = tt_l_convert(f, tt_lt_iota(f, TT_I64, 3, d, 2), dt);
  tt_val_t hi = tt_l_convert(f, tt_l_binary(f, "stablehlo.multiply", tt_l_binary(f, "stablehlo.add", i, u3), alpha), TT_I64);
  tt_val_t lo = tt_l_convert(f, tt_l_binary(f, "stablehlo.multiply", u3, alpha), TT_I64);
  tt_val_t s = tt_l_binary(f, "stablehlo.subtract", hi, lo);
  return tt_l_select(f, tt_l_compare(f, "EQ", tt_lt_iota(f, TT_I64, 3, d, 2), tt_shlo_const_i64(f, &it, out - 1)), last, s);
}

/* fractional_max_pool{2,3}d(self, kernel_size, output_size, random_samples) -> (output, indices) */
static tt_status_t lower_fmp(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int nsp = (int)c->op->param;
  tt_val_t x = tt__sh_batched(f, c->args[0].val, nsp + 2);
  tt_type_t xt = tt__sh_type(f, x);
  const tt_larg_t *ka = &c->args[1], *oa = &c->args[2];
  if (ka->kind != TT_ARG_INTS || oa->kind != TT_ARG_INTS || ka->n != nsp || oa->n != nsp)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: kernel_size and output_size need %d values", c->op->name, nsp);
  int64_t N = xt.dims[0], C = xt.dims[1], Q = 1, P = 1, in[3], out[3], k[3];
  for (int s = 0; s < nsp; s++) {
    in[s] = xt.dims[2 + s], k[s] = ka->ints[s], out[s] = oa->ints[s];
    if (k[s] <= 0 || out[s] < 0 || (out[s] > 0 && out[s] + k[s] - 1 > in[s]))
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: pool size %lld too large for input size %lld and output "
                            "size %lld", c->op->name, (long long)k[s], (long long)in[s], (long long)out[s]);
    Q *= in[s], P *= out[s];
  }
  if (N * C * P == 0) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], 0)));
    return tt_l_set_out(c, 1, tt_shlo_const(f, &c->out_types[1], 0));
  }
  tt_dtype_t dt = xt.dtype;
  int64_t sd[3] = {N, C, nsp}, od[5] = {N, C};
  tt_val_t smp = tt_l_reshape(f, tt_l_convert(f, c->args[3].val, dt), 3, sd);
  for (int s = 0; s < nsp; s++) od[2 + s] = out[s];
  int r = nsp + 2;
  tt_val_t st[3];
  for (int s = 0; s < nsp; s++) {
    /* sample component: 2-d (W, H) = (0, 1); 3-d (T, H, W) = (0, 1, 2) */
    int comp = nsp == 2 ? 1 - s : s;
    int64_t d2[2] = {N, C};
    tt_val_t u = tt_l_reshape(f, tt_lt_slice_dim(f, smp, 2, comp, comp + 1), 2, d2);
    int64_t bd[3] = {0, 1, 2 + s};
    st[s] = tt_lt_bcast_in_dim(f, starts(f, u, dt, in[s], k[s], out[s]), r, od, bd);
  }
  tt_type_t it = tt_type_make(TT_I64, r, od);
  int64_t flat3[3] = {N, C, Q}, pd3[3] = {N, C, P};
  tt_val_t xf = tt_l_reshape(f, x, 3, flat3);
  tt_val_t best = TT_SHLO_INVALID, bidx = TT_SHLO_INVALID;
  int64_t nwin = 1;
  for (int s = 0; s < nsp; s++) nwin *= k[s];
  for (int64_t w = 0; w < nwin; w++) { /* window offsets in row-major order */
    tt_val_t idx = TT_SHLO_INVALID;
    int64_t rem = w, stride = 1, off[3];
    for (int s = nsp - 1; s >= 0; s--) off[s] = rem % k[s], rem /= k[s];
    for (int s = nsp - 1; s >= 0; s--) {
      tt_val_t p = tt_l_binary(f, "stablehlo.add", st[s], tt_shlo_const_i64(f, &it, off[s]));
      if (stride != 1) p = tt_l_binary(f, "stablehlo.multiply", p, tt_shlo_const_i64(f, &it, stride));
      idx = idx == TT_SHLO_INVALID ? p : tt_l_binary(f, "stablehlo.add", idx, p);
      stride *= in[s];
    }
    idx = tt_l_reshape(f, idx, 3, pd3);
    tt_val_t v = tt_lt_gather_dim(f, xf, 2, idx);
    if (w == 0) { /* against -inf: taken unless it is -inf; the index is the first anyway */
      best = v, bidx = idx;
      continue;
    }
    tt_val_t take = tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "GT", v, best), tt__ew_isnan(f, v));
    best = tt_l_select(f, take, v, best);
    bidx = tt_l_select(f, take, idx, bidx);
  }
  const tt_type_t *o0 = &c->out_types[0], *o1 = &c->out_types[1];
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_l_reshape(f, best, o0->rank, o0->dims)));
  return tt_l_set_out(c, 1, tt_l_reshape(f, bidx, o1->rank, o1->dims));
}

/* fractional_max_pool{2,3}d_backward(grad_output, self, kernel_size, output_size, indices) */
static tt_status_t lower_fmp_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int nsp = (int)c->op->param;
  const tt_type_t* ot = &c->out_types[0];
  tt_type_t gt = tt__sh_type(f, c->args[0].val);
  int64_t plane_out = 1, plane_in = 1;
  for (int s = 0; s < nsp; s++) plane_out *= gt.dims[gt.rank - nsp + s], plane_in *= ot->dims[ot->rank - nsp + s];
  int64_t planes = plane_in ? tt_type_numel(ot) / plane_in : 0;
  if (tt_type_numel(ot) == 0 || plane_out == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0));
  int64_t gd[2] = {planes, plane_out}, id[2] = {planes, plane_in};
  tt_val_t g = tt_l_reshape(f, c->args[0].val, 2, gd);
  tt_val_t idx = tt_l_reshape(f, tt_l_convert(f, c->args[4].val, TT_I64), 2, gd);
  idx = tt_lt_fix_index_checked(f, idx, plane_in, TT_INTERNAL, "fractional_max_pool backward: index out of range");
  /* CPU accumulates in the tensor dtype */
  tt_val_t r = tt_lt_scatter_dim(f, tt_l_full(f, ot->dtype, 2, id, 0), 1, idx, tt_l_convert(f, g, ot->dtype),
                                 "stablehlo.add");
  return tt_l_set_out(c, 0, tt_l_reshape(f, r, ot->rank, ot->dims));
}

#define ROW2(name, fn, nsp, out) {"aten::" name, fn, nsp, 0}, {"aten::" name "." out, fn, nsp, 0}

const tt_lower_entry_t tt_lower_nn_more_pool[] = {
    ROW2("fractional_max_pool2d", lower_fmp, 2, "output"),
    ROW2("fractional_max_pool3d", lower_fmp, 3, "output"),
    ROW2("fractional_max_pool2d_backward", lower_fmp_bwd, 2, "grad_input"),
    ROW2("fractional_max_pool3d_backward", lower_fmp_bwd, 3, "grad_input"),
};
const int tt_lower_nn_more_pool_count = TT_TABLE_COUNT(tt_lower_nn_more_pool);
