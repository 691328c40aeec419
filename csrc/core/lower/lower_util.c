/* Helpers shared by the lowering families: promotion, conversion, broadcast,
 * small op wrappers. */
#include <stdio.h>
#include <string.h>

#include "tt_lower.h"

tt_dtype_t tt_l_arg_dtype(tt_lctx_t* c, int i) {
  const tt_type_t* t = tt_shlo_type(c->f, c->args[i].val);
  return t ? t->dtype : TT_F32;
}

/* 0 bool, 1 integer, 2 floating */
static int category(tt_dtype_t dt) {
  if (dt == TT_BOOL) return 0;
  return tt_dtype_is_float(dt) ? 2 : 1;
}

/* Promotion of two dtypes (PyTorch's promoteTypes for the dtypes we hold). */
static tt_dtype_t promote2(tt_dtype_t a, tt_dtype_t b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 0) return TT_BOOL;
  if (ca == 2) {
    if ((a == TT_F16 && b == TT_BF16) || (a == TT_BF16 && b == TT_F16)) return TT_F32;
    size_t sa = tt_dtype_size(a), sb = tt_dtype_size(b);
    return sa >= sb ? a : b;
  }
  /* integers */
  bool ua = tt_dtype_is_unsigned_int(a), ub = tt_dtype_is_unsigned_int(b);
  size_t sa = tt_dtype_size(a), sb = tt_dtype_size(b);
  if (ua == ub) return sa >= sb ? a : b;
  /* signed vs unsigned: the signed type if it is wider, else the next wider signed */
  tt_dtype_t s = ua ? b : a, u = ua ? a : b;
  size_t ss = tt_dtype_size(s), su = tt_dtype_size(u);
  if (ss > su) return s;
  switch (su) {
    case 1: return TT_I16;
    case 2: return TT_I32;
    case 4: return TT_I64;
    default: return TT_I64;
  }
}

tt_dtype_t tt_l_promote(tt_lctx_t* c, const int* idx, int n) {
  bool have[3] = {false, false, false};
  tt_dtype_t tier_dt[3] = {TT_BOOL, TT_BOOL, TT_BOOL};
  for (int k = 0; k < n; k++) {
    const tt_larg_t* a = &c->args[idx[k]];
    if (a->kind != TT_ARG_TENSOR && a->kind != TT_ARG_SCALAR) continue;
    int tier = a->kind == TT_ARG_SCALAR ? TT_TIER_WRAPPED : (int)a->tier;
    tt_dtype_t dt = tt_l_arg_dtype(c, idx[k]);
    if (tier == TT_TIER_WRAPPED) {
      /* wrapped numbers only contribute a category */
      dt = category(dt) == 2 ? TT_F64 : category(dt) == 1 ? TT_I64 : TT_BOOL;
    }
    tier_dt[tier] = have[tier] ? promote2(tier_dt[tier], dt) : dt;
    have[tier] = true;
  }
  tt_dtype_t r = TT_F32;
  bool any = false;
  for (int tier = TT_TIER_DIM; tier >= TT_TIER_ZERO_DIM; tier--) {
    if (!have[tier]) continue;
    if (!any) {
      r = tier_dt[tier];
      any = true;
    } else if (category(tier_dt[tier]) > category(r)) {
      r = tier_dt[tier];
    }
  }
  if (have[TT_TIER_WRAPPED]) {
    tt_dtype_t w = tier_dt[TT_TIER_WRAPPED];
    if (!any) {
      r = category(w) == 2 ? TT_F32 : w; /* default dtype for float scalars */
      any = true;
    } else if (category(w) > category(r)) {
      r = category(w) == 2 ? TT_F32 : TT_I64;
    }
  }
  return any ? r : TT_F32;
}

tt_dtype_t tt_l_opmath(tt_dtype_t dt) { return (dt == TT_F16 || dt == TT_BF16) ? TT_F32 : dt; }

tt_val_t tt_l_convert(tt_shlo_fn_t* f, tt_val_t v, tt_dtype_t dt) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  if (t->dtype == dt) return v;
  tt_type_t rt = *t;
  rt.dtype = dt;
  if (dt == TT_BOOL) {
    tt_val_t z = tt_shlo_const(f, t, 0.0);
    return tt_l_compare(f, "NE", v, z);
  }
  return tt_shlo_op(f, "stablehlo.convert", &v, 1, &rt, NULL);
}

tt_val_t tt_l_broadcast(tt_shlo_fn_t* f, tt_val_t v, int rank, const int64_t* dims) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  if (t->rank > rank) {
    tt_shlo_fail(f, "broadcast: rank %d to %d", t->rank, rank);
    return TT_SHLO_INVALID;
  }
  tt_type_t rt = tt_type_make(t->dtype, rank, dims);
  if (tt_type_equal(t, &rt)) return v;
  int64_t bdims[TT_MAX_RANK];
  int off = rank - t->rank;
  /* size-1 dims that broadcast are first reshaped away */
  int64_t kept_dims[TT_MAX_RANK];
  int nk = 0;
  bool need_reshape = false;
  for (int i = 0; i < t->rank; i++) {
    int64_t d = t->dims[i], to = dims[off + i];
    if (d == to) {
      kept_dims[nk] = d;
      bdims[nk++] = off + i;
    } else if (d == 1) {
      need_reshape = true;
    } else {
      tt_shlo_fail(f, "broadcast: dim %d of size %lld to %lld", i, (long long)d, (long long)to);
      return TT_SHLO_INVALID;
    }
  }
  if (need_reshape) v = tt_l_reshape(f, v, nk, kept_dims);
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "broadcast_dimensions = ");
  tt_shlo_fmt_i64_array(&a, bdims, nk);
  tt_val_t r = tt_shlo_op(f, "stablehlo.broadcast_in_dim", &v, 1, &rt, a.data);
  tt_sbuf_free(&a);
  return r;
}

tt_val_t tt_l_arg_as(tt_lctx_t* c, int i, tt_dtype_t dt, const tt_type_t* shape) {
  tt_val_t v = tt_l_convert(c->f, c->args[i].val, dt);
  return tt_l_broadcast(c->f, v, shape->rank, shape->dims);
}

tt_val_t tt_l_full(tt_shlo_fn_t* f, tt_dtype_t dt, int rank, const int64_t* dims, double v) {
  tt_type_t t = tt_type_make(dt, rank, dims);
  return tt_shlo_const(f, &t, v);
}

tt_val_t tt_l_unary(tt_shlo_fn_t* f, const char* op, tt_val_t a) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  return tt_shlo_op(f, op, &a, 1, &rt, NULL);
}

tt_val_t tt_l_binary(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  tt_val_t ops[2] = {a, b};
  return tt_shlo_op(f, op, ops, 2, &rt, NULL);
}

tt_val_t tt_l_compare(tt_shlo_fn_t* f, const char* dir, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  rt.dtype = TT_BOOL;
  const char* ct = tt_dtype_is_float(t->dtype) ? "FLOAT"
                   : tt_dtype_is_signed_int(t->dtype) ? "SIGNED"
                                                      : "UNSIGNED";
  tt_val_t ops[2] = {a, b};
  return tt_shlo_opf(f, "stablehlo.compare", ops, 2, &rt,
                     "comparison_direction = #stablehlo<comparison_direction %s>, "
                     "compare_type = #stablehlo<comparison_type %s>",
                     dir, ct);
}

tt_val_t tt_l_select(tt_shlo_fn_t* f, tt_val_t pred, tt_val_t a, tt_val_t b) {
  const tt_type_t* t = tt_shlo_type(f, a);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  tt_val_t ops[3] = {pred, a, b};
  return tt_shlo_op(f, "stablehlo.select", ops, 3, &rt, NULL);
}

tt_val_t tt_l_reshape(tt_shlo_fn_t* f, tt_val_t v, int rank, const int64_t* dims) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = tt_type_make(t->dtype, rank, dims);
  if (tt_type_equal(t, &rt)) return v;
  return tt_shlo_op(f, "stablehlo.reshape", &v, 1, &rt, NULL);
}

tt_val_t tt_l_transpose(tt_shlo_fn_t* f, tt_val_t v, const int64_t* perm) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  bool ident = true;
  for (int i = 0; i < t->rank; i++) {
    rt.dims[i] = t->dims[perm[i]];
    if (perm[i] != i) ident = false;
  }
  if (ident) return v;
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "permutation = ");
  tt_shlo_fmt_i64_array(&a, perm, t->rank);
  tt_val_t r = tt_shlo_op(f, "stablehlo.transpose", &v, 1, &rt, a.data);
  tt_sbuf_free(&a);
  return r;
}

int64_t tt_l_wrap_dim(int64_t d, int rank) {
  int r = rank == 0 ? 1 : rank;
  return d < 0 ? d + r : d;
}

tt_status_t tt_l_set_out(tt_lctx_t* c, int i, tt_val_t v) {
  if (i < 0 || i >= c->nout) return tt_status_make(TT_INTERNAL, "%s: output %d out of range", c->op->name, i);
  const tt_type_t* t = tt_shlo_type(c->f, v);
  if (!t) return tt_status_make(TT_INTERNAL, "%s: output %d is not a value", c->op->name, i);
  const tt_type_t* want = &c->out_types[i];
  if (t->dtype != want->dtype) v = tt_l_convert(c->f, v, want->dtype);
  t = tt_shlo_type(c->f, v);
  if (t && !tt_type_equal(t, want)) {
    if (tt_type_numel(t) != tt_type_numel(want)) {
      char a[128], b[128];
      tt_type_format(t, a, sizeof a);
      tt_type_format(want, b, sizeof b);
      return tt_status_make(TT_INTERNAL, "%s: output %d is %s, expected %s", c->op->name, i, a, b);
    }
    v = tt_l_reshape(c->f, v, want->rank, want->dims);
  }
  c->outs[i] = v;
  return NULL;
}
