/* Scaled dot-product attention as one op: PyTorch's "overrideable" SDPA
 * backend (_scaled_dot_product_fused_attention_overrideable + backward), which
 * the bridge selects for tpu tensors without dropout. Semantics are the math
 * backend's: softmax(q k^T * scale + bias) v, a bool mask or is_causal (top
 * left) keeps positions, a row with no position kept gives 0 (_safe_softmax),
 * as do its gradients. f16/bf16 compute in f32 and round once.
 *
 * Shapes: q (..., L, E), k (..., S, E), v (..., S, Dv) with the same leading
 * dims (the bridge checks), rank 3 or 4; the mask broadcasts to (..., L, S).
 * Everything is computed as (N, L, S) with N the product of the leading dims. */
#include <math.h>
#include <stdio.h>

#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

#define ADD(a, b) tt_l_binary(f, "stablehlo.add", a, b)
#define SUB(a, b) tt_l_binary(f, "stablehlo.subtract", a, b)
#define MUL(a, b) tt_l_binary(f, "stablehlo.multiply", a, b)
#define DIV(a, b) tt_l_binary(f, "stablehlo.divide", a, b)

typedef struct sdpa {
  int rank;                 /* of q */
  int64_t lead[TT_MAX_RANK]; /* q's leading dims (rank - 2 of them) */
  int64_t n, l, s, e, dv;
  tt_dtype_t acc;
  double scale;
  tt_val_t q, k, v; /* (N, L, E) scaled by `scale`, (N, S, E), (N, S, Dv), acc */
  tt_val_t bias;    /* (N, L, S) acc, added; or TT_SHLO_INVALID */
  tt_val_t keep;    /* (N, L, S) i1; or TT_SHLO_INVALID */
} sdpa_t;

static tt_type_t type_of(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t ? *t : tt_type_scalar(TT_F32);
}

/* Batched product over dim 0 of rank-3 a and b, contracting a's dim ca with
 * b's dim cb (1 or 2): the result is (N, a's free dim, b's free dim). */
static tt_val_t bdot(tt_shlo_fn_t* f, tt_val_t a, int ca, tt_val_t b, int cb) {
  tt_type_t at = type_of(f, a), bt = type_of(f, b);
  tt_type_t rt = at;
  rt.rank = 3;
  rt.dims[1] = at.dims[3 - ca];
  rt.dims[2] = bt.dims[3 - cb];
  char attr[320];
  snprintf(attr, sizeof(attr),
           "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], "
           "rhs_batching_dimensions = [0], lhs_contracting_dimensions = [%d], "
           "rhs_contracting_dimensions = [%d]>, precision_config = "
           "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]",
           ca, cb);
  tt_val_t ops[2] = {a, b};
  return tt_shlo_op(f, "stablehlo.dot_general", ops, 2, &rt, attr);
}

/* Argument i, (..., X, Y), as (N, X, Y) in acc. */
static tt_val_t as3(tt_lctx_t* c, const sdpa_t* a, int i) {
  tt_type_t t = type_of(c->f, c->args[i].val);
  int64_t d[3] = {a->n, t.dims[t.rank - 2], t.dims[t.rank - 1]};
  return tt_l_reshape(c->f, tt_l_convert(c->f, c->args[i].val, a->acc), 3, d);
}

/* The full (..., L, S) shape of the scores. */
static tt_type_t scores_type(const sdpa_t* a, tt_dtype_t dt) {
  tt_type_t t = tt_type_scalar(dt);
  t.rank = a->rank;
  for (int d = 0; d < a->rank - 2; d++) t.dims[d] = a->lead[d];
  t.dims[a->rank - 2] = a->l;
  t.dims[a->rank - 1] = a->s;
  return t;
}

static tt_val_t flat3(tt_shlo_fn_t* f, const sdpa_t* a, tt_val_t full) {
  int64_t d[3] = {a->n, a->l, a->s};
  return tt_l_reshape(f, full, 3, d);
}

/* Reads q, k, v, the mask (arg imask), is_causal and scale. Arguments from q:
 * q, k, v, then the schema's mask, dropout_p, is_causal and scale at their
 * indices; a nonzero dropout_p is refused (the bridge never selects it). */
static tt_status_t sdpa_setup(tt_lctx_t* c, sdpa_t* a, int iq, int imask, int idrop, int icausal,
                              int iscale, tt_dtype_t out_dt) {
  tt_shlo_fn_t* f = c->f;
  if (c->args[idrop].kind == TT_ARG_FLOAT && c->args[idrop].f != 0.0)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: dropout is not lowered", c->op->name);
  tt_type_t qt = type_of(f, c->args[iq].val), kt = type_of(f, c->args[iq + 1].val);
  tt_type_t vt = type_of(f, c->args[iq + 2].val);
  a->rank = qt.rank;
  a->n = 1;
  for (int d = 0; d < qt.rank - 2; d++) a->lead[d] = qt.dims[d], a->n *= qt.dims[d];
  a->l = qt.dims[qt.rank - 2];
  a->e = qt.dims[qt.rank - 1];
  a->s = kt.dims[kt.rank - 2];
  a->dv = vt.dims[vt.rank - 1];
  a->acc = tt_l_opmath(out_dt);
  a->scale = c->args[iscale].kind == TT_ARG_FLOAT ? c->args[iscale].f : 1.0 / sqrt((double)a->e);
  tt_val_t q = as3(c, a, iq);
  tt_type_t q3 = type_of(f, q);
  a->q = MUL(q, tt_shlo_const(f, &q3, a->scale));
  a->k = as3(c, a, iq + 1);
  a->v = as3(c, a, iq + 2);
  a->bias = a->keep = TT_SHLO_INVALID;
  tt_type_t full = scores_type(a, TT_BOOL);
  if (tt_lt_has(c, imask)) {
    tt_val_t m = c->args[imask].val;
    tt_dtype_t mdt = type_of(f, m).dtype;
    if (mdt == TT_BOOL) {
      a->keep = flat3(f, a, tt_l_broadcast(f, m, full.rank, full.dims));
    } else {
      tt_val_t b = tt_l_broadcast(f, tt_l_convert(f, m, a->acc), full.rank, full.dims);
      a->bias = flat3(f, a, b);
    }
  }
  if (c->args[icausal].kind == TT_ARG_BOOL && c->args[icausal].i) {
    int64_t d[3] = {a->n, a->l, a->s};
    tt_val_t row = tt_lt_iota(f, TT_I64, 3, d, 1), col = tt_lt_iota(f, TT_I64, 3, d, 2);
    tt_val_t causal = tt_l_compare(f, "LE", col, row);
    a->keep = a->keep == TT_SHLO_INVALID ? causal : tt_l_binary(f, "stablehlo.and", a->keep, causal);
  }
  return NULL;
}

/* The attention weights P (N, L, S), and the row max m and sum z of the
 * shifted exponentials (N, L): P = exp(s - m) / z, 0 in a row that keeps no
 * position. */
static tt_val_t sdpa_probs(tt_shlo_fn_t* f, const sdpa_t* a, tt_val_t* m_out, tt_val_t* z_out) {
  tt_val_t s = bdot(f, a->q, 2, a->k, 2);
  tt_type_t st = type_of(f, s);
  if (a->bias != TT_SHLO_INVALID) s = ADD(s, a->bias);
  if (a->keep != TT_SHLO_INVALID) s = tt_l_select(f, a->keep, s, tt_shlo_const(f, &st, -INFINITY));
  uint32_t last = 1u << 2;
  tt_val_t m = tt_lt_extreme(f, s, last, true);
  tt_type_t mt = type_of(f, m);
  tt_val_t dead = tt_l_compare(f, "EQ", m, tt_shlo_const(f, &mt, -INFINITY));
  tt_val_t m0 = tt_l_select(f, dead, tt_shlo_const(f, &mt, 0.0), m);
  tt_val_t e = tt_l_unary(f, "stablehlo.exponential", SUB(s, tt_lt_expand(f, m0, &st, last)));
  tt_val_t z = tt_lt_sum(f, e, last);
  tt_val_t live = tt_l_compare(f, "GT", z, tt_shlo_const(f, &mt, 0.0));
  tt_val_t zs = tt_l_select(f, live, z, tt_shlo_const(f, &mt, 1.0));
  tt_val_t p = DIV(e, tt_lt_expand(f, zs, &st, last));
  if (m_out) *m_out = m;
  if (z_out) *z_out = z;
  return p;
}

static tt_status_t set_dummies(tt_lctx_t* c, int from) {
  for (int i = from; i < c->nout; i++)
    TT_RETURN_IF_ERROR(tt_l_set_out(c, i, tt_shlo_const(c->f, &c->out_types[i], 0.0)));
  return NULL;
}

/* Value v (N, X, Y) as output i's shape. */
static tt_status_t set_out3(tt_lctx_t* c, int i, tt_val_t v) {
  const tt_type_t* t = &c->out_types[i];
  return tt_l_set_out(c, i, tt_l_reshape(c->f, v, t->rank, t->dims));
}

/* _scaled_dot_product_fused_attention_overrideable(query, key, value,
 * attn_bias?, dropout_p, is_causal, return_debug_mask, *, scale?) -> (output,
 * logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, philox_seed, philox_offset,
 * debug_attn_mask). The undefined returns come as 0-d dummies. */
static tt_status_t lower_sdpa(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  sdpa_t a;
  TT_RETURN_IF_ERROR(sdpa_setup(c, &a, 0, 3, 4, 5, 7, c->out_types[0].dtype));
  tt_val_t m, z;
  tt_val_t p = sdpa_probs(f, &a, &m, &z);
  TT_RETURN_IF_ERROR(set_out3(c, 0, bdot(f, p, 2, a.v, 1)));
  if (c->nout > 1) { /* logsumexp: -inf in a row that keeps nothing */
    tt_type_t mt = type_of(f, m);
    tt_val_t dead = tt_l_compare(f, "EQ", m, tt_shlo_const(f, &mt, -INFINITY));
    tt_val_t lse = ADD(m, tt_l_unary(f, "stablehlo.log", z));
    lse = tt_l_select(f, dead, tt_shlo_const(f, &mt, -INFINITY), lse);
    TT_RETURN_IF_ERROR(set_out3(c, 1, tt_l_convert(f, lse, TT_F32)));
  }
  return set_dummies(c, 2);
}

static bool want(const tt_larg_t* m, int i) {
  return m->kind != TT_ARG_INTS || m->n <= i || m->ints[i] != 0;
}

/* The gradient of the (..., L, S) scores summed to output i's (bias) shape. */
static tt_status_t set_bias_grad(tt_lctx_t* c, const sdpa_t* a, int i, tt_val_t ds) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t full = scores_type(a, a->acc);
  tt_val_t g = tt_l_reshape(f, ds, full.rank, full.dims);
  const tt_type_t* bt = &c->out_types[i];
  int off = full.rank - bt->rank;
  uint32_t mask = 0;
  for (int d = 0; d < full.rank; d++)
    if (d < off || (bt->dims[d - off] == 1 && full.dims[d] != 1)) mask |= 1u << d;
  if (mask) g = tt_lt_sum(f, g, mask);
  return tt_l_set_out(c, i, tt_l_reshape(f, g, bt->rank, bt->dims));
}

/* _scaled_dot_product_fused_attention_overrideable_backward(grad_out, query,
 * key, value, attn_bias, grad_input_mask, out, logsumexp, cum_seq_q, cum_seq_k,
 * max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, *, scale?)
 * -> (grad_query, grad_key, grad_value, grad_attn_bias). P is recomputed. */
static tt_status_t lower_sdpa_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  sdpa_t a;
  TT_RETURN_IF_ERROR(sdpa_setup(c, &a, 1, 4, 12, 13, 16, c->out_types[0].dtype));
  tt_val_t p = sdpa_probs(f, &a, NULL, NULL);
  tt_type_t got = type_of(f, c->args[0].val);
  int64_t gd[3] = {a.n, a.l, got.dims[got.rank - 1]};
  tt_val_t go = tt_l_reshape(f, tt_l_convert(f, c->args[0].val, a.acc), 3, gd);
  const tt_larg_t* om = &c->args[5];
  tt_type_t pt = type_of(f, p);
  tt_val_t dp = bdot(f, go, 2, a.v, 2);
  tt_val_t row = tt_lt_sum(f, MUL(dp, p), 1u << 2);
  tt_val_t ds = MUL(p, SUB(dp, tt_lt_expand(f, row, &pt, 1u << 2)));
  for (int i = 0; i < 4 && i < c->nout; i++) {
    if (!want(om, i) || tt_type_numel(&c->out_types[i]) == 0 ||
        (i == 3 && !tt_lt_has(c, 4))) {
      TT_RETURN_IF_ERROR(tt_l_set_out(c, i, tt_shlo_const(f, &c->out_types[i], 0.0)));
      continue;
    }
    tt_val_t r;
    if (i == 0) {
      r = bdot(f, ds, 2, a.k, 1);
      tt_type_t rt = type_of(f, r);
      r = MUL(r, tt_shlo_const(f, &rt, a.scale));
    } else if (i == 1) {
      r = bdot(f, ds, 1, a.q, 1);
    } else if (i == 2) {
      r = bdot(f, p, 1, go, 1);
    } else {
      TT_RETURN_IF_ERROR(set_bias_grad(c, &a, i, ds));
      continue;
    }
    TT_RETURN_IF_ERROR(set_out3(c, i, r));
  }
  return NULL;
}

/* ---- the inference fast paths of nn.MultiheadAttention / TransformerEncoderLayer ---- */

/* _masked_softmax(self, mask, dim?, mask_type?): softmax over dim (default the
 * last) with the mask's true positions at -inf, as CPU's kernel computes it
 * (a row masked whole gives NaN there too). The mask has self's shape, or
 * (B, L) of a (B, H, L, L) self for mask_type 1 (a key padding mask), (L, L)
 * for mask_type 0 (the bridge's meta rule checks which). */
static tt_status_t lower_masked_softmax(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t acc = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t x = tt_l_convert(f, c->args[0].val, acc);
  const tt_type_t xt = *tt_shlo_type(f, x), mt = *tt_shlo_type(f, c->args[1].val);
  int64_t bd[TT_MAX_RANK];
  if (mt.rank == xt.rank) {
    for (int d = 0; d < xt.rank; d++) bd[d] = d;
  } else if (mt.rank == 2 && xt.rank == 4) {
    bool padding = c->args[3].kind == TT_ARG_INT && c->args[3].i == 1;
    bd[0] = padding ? 0 : 2;
    bd[1] = 3;
  } else {
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: mask of rank %d for an input of rank %d", c->op->name, mt.rank,
                          xt.rank);
  }
  tt_val_t m = tt_lt_bcast_in_dim(f, tt_l_convert(f, c->args[1].val, TT_BOOL), xt.rank, xt.dims, bd);
  int64_t dim = c->args[2].kind == TT_ARG_INT ? tt_l_wrap_dim(c->args[2].i, xt.rank) : xt.rank - 1;
  uint32_t mask = xt.rank ? 1u << dim : 0u;
  x = tt_l_select(f, m, tt_shlo_const(f, &xt, -INFINITY), x);
  return tt_l_set_out(c, 0, tt_lt_softmax(f, x, mask, false));
}

/* _transform_bias_rescale_qkv(qkv (B, T, 3D), qkv_bias (3D), num_heads) ->
 * q, k, v (B, H, T, D / H): the projections plus their bias, q times
 * 1 / sqrt(D / H), each op rounded in the dtype as CPU's kernel does. */
static tt_status_t lower_qkv_rescale(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t qt = *tt_shlo_type(f, c->args[0].val);
  int64_t h = c->args[2].i;
  if (qt.rank != 3 || h <= 0 || qt.dims[2] % (3 * h))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: qkv of shape [B, T, 3 * D], D divisible by num_heads", c->op->name);
  int64_t b = qt.dims[0], t = qt.dims[1], dm = qt.dims[2] / 3, dh = dm / h;
  int64_t bdims[1] = {2};
  tt_val_t x = ADD(c->args[0].val, tt_lt_bcast_in_dim(f, c->args[1].val, 3, qt.dims, bdims));
  /* CPU: scalar_t inv = 1.0 / std::sqrt(scalar_t(dh)), the root in the dtype's precision */
  double inv = qt.dtype == TT_F64 ? 1.0 / sqrt((double)dh) : 1.0 / (double)sqrtf((float)dh);
  for (int j = 0; j < 3; j++) {
    tt_val_t p = tt_lt_slice_dim(f, x, 2, j * dm, (j + 1) * dm);
    if (j == 0) p = MUL(p, tt_shlo_const(f, tt_shlo_type(f, p), inv));
    int64_t d4[4] = {b, t, h, dh}, perm[4] = {0, 2, 1, 3};
    p = tt_l_transpose(f, tt_l_reshape(f, p, 4, d4), perm);
    TT_RETURN_IF_ERROR(tt_l_set_out(c, j, p));
  }
  return NULL;
}

const tt_lower_entry_t tt_lower_attention[] = {
    {"aten::_masked_softmax", lower_masked_softmax, 0, 0},
    {"aten::_masked_softmax.out", lower_masked_softmax, 0, 0},
    {"aten::_transform_bias_rescale_qkv", lower_qkv_rescale, 0, 0},
    {"aten::_transform_bias_rescale_qkv.out", lower_qkv_rescale, 0, 0},
    {"aten::_scaled_dot_product_fused_attention_overrideable", lower_sdpa, 0, 0},
    {"aten::_scaled_dot_product_fused_attention_overrideable_backward", lower_sdpa_bwd, 0, 0},
};
const int tt_lower_attention_count = TT_TABLE_COUNT(tt_lower_attention);

/* The table's facts: compile-time bucketing (tt_lower_bucket_t). */
const tt_lower_fact_t tt_lower_attention_facts[] = {
    TT_FACT_BUCKET("aten::_scaled_dot_product_fused_attention_overrideable.default", TT_BUCKET_ATTENTION),
};
const int tt_lower_attention_facts_count = TT_TABLE_COUNT(tt_lower_attention_facts);
