/* Helpers of the general eigendecomposition (see linalg_eig_util.h): per-lane
 * picks and writes with masks, batched products, windows (loops are
 * lower_loop.h's). Picks sum a masked value whose zeros are -0.0 (the
 * additive identity), so the picked value is bit-exact. */
#include <float.h>

#include "linalg_eig_util.h"

void tt__eg_init(tt__eig_t* e, tt_shlo_fn_t* f, tt_dtype_t rt, int64_t bs, int64_t n) {
  e->f = f;
  e->rt = rt;
  e->ct = tt_dtype_complex_of(rt);
  e->bs = bs;
  e->n = n;
  e->N = n + 1 < 3 ? 3 : n + 1; /* room for the 3-line windows */
  e->ulp = rt == TT_F64 ? DBL_EPSILON : FLT_EPSILON;
  e->safmin = rt == TT_F64 ? DBL_MIN : FLT_MIN;
}

static tt_type_t ty(tt__eig_t* e, tt_val_t v) { return tt__sh_type(e->f, v); }

tt_val_t tt__eg_bin(tt__eig_t* e, const char* op, tt_val_t a, tt_val_t b) {
  return tt_l_binary(e->f, op, a, b);
}
tt_val_t tt__eg_un(tt__eig_t* e, const char* op, tt_val_t a) { return tt_l_unary(e->f, op, a); }

tt_val_t tt__eg_k(tt__eig_t* e, tt_val_t like, double v) {
  tt_type_t t = ty(e, like);
  return tt_shlo_const(e->f, &t, v);
}
tt_val_t tt__eg_bink(tt__eig_t* e, const char* op, tt_val_t a, double v) {
  return tt_l_binary(e->f, op, a, tt__eg_k(e, a, v));
}
tt_val_t tt__eg_cmpk(tt__eig_t* e, const char* dir, tt_val_t a, double v) {
  return tt_l_compare(e->f, dir, a, tt__eg_k(e, a, v));
}
tt_val_t tt__eg_cmp(tt__eig_t* e, const char* dir, tt_val_t a, tt_val_t b) {
  return tt_l_compare(e->f, dir, a, b);
}
tt_val_t tt__eg_sel(tt__eig_t* e, tt_val_t p, tt_val_t a, tt_val_t b) {
  return tt_l_select(e->f, p, a, b);
}

tt_val_t tt__eg_hypot(tt__eig_t* e, tt_val_t x, tt_val_t y) {
  tt_val_t ax = EG_ABS(x), ay = EG_ABS(y);
  tt_val_t w = EG_MAX(ax, ay), z = EG_MIN(ax, ay);
  tt_val_t w0 = EG_CMPK("EQ", w, 0.0);
  tt_val_t q = EG_DIV(z, EG_SEL(w0, EG_K(w, 1.0), w));
  tt_val_t r = EG_MUL(w, EG_SQRT(EG_ADDK(EG_MUL(q, q), 1.0)));
  return EG_SEL(EG_OR(w0, EG_CMPK("EQ", z, 0.0)), w, r);
}

tt_val_t tt__eg_sign(tt__eig_t* e, tt_val_t a, tt_val_t b) {
  tt_val_t m = EG_ABS(a);
  return EG_SEL(EG_CMPK("LT", b, 0.0), EG_NEG(m), m);
}

tt_val_t tt__eg_lead(tt__eig_t* e, tt_val_t v, int rank, const int64_t* dims) {
  tt_type_t t = ty(e, v);
  int64_t bd[TT_MAX_RANK];
  for (int i = 0; i < t.rank; i++) bd[i] = i;
  return tt_lt_bcast_in_dim(e->f, v, rank, dims, bd);
}

tt_val_t tt__eg_iota(tt__eig_t* e, int rank, const int64_t* dims, int dim) {
  return tt_lt_iota(e->f, TT_I64, rank, dims, dim);
}

static double zero_of(tt_dtype_t dt) { return tt_dtype_is_float(dt) ? -0.0 : 0.0; }

/* Sum over dim of v where mask, else the additive identity: picks one entry. */
static tt_val_t masked_pick(tt__eig_t* e, tt_val_t v, tt_val_t mask, int dim) {
  tt_type_t t = ty(e, v);
  double z = zero_of(t.dtype);
  if (tt_dtype_is_complex(t.dtype)) { /* -0.0 + -0.0i */
    tt_val_t re = masked_pick(e, tt__eg_re(e, v), mask, dim);
    tt_val_t im = masked_pick(e, tt__eg_im(e, v), mask, dim);
    return tt__eg_cplx(e, re, im);
  }
  tt_val_t s = tt_l_select(e->f, mask, v, tt_shlo_const(e->f, &t, z));
  return tt_lt_reduce(e->f, s, 1u << dim, "stablehlo.add", tt_lt_const0(e->f, t.dtype, z));
}

tt_val_t tt__eg_pick(tt__eig_t* e, tt_val_t vec, tt_val_t idx) {
  tt_type_t t = ty(e, vec);
  tt_val_t hit = EG_CMP("EQ", tt__eg_iota(e, 2, t.dims, 1), tt__eg_lead(e, idx, 2, t.dims));
  return masked_pick(e, vec, hit, 1);
}

tt_val_t tt__eg_shift(tt__eig_t* e, tt_val_t vec, int64_t s) {
  tt_type_t t = ty(e, vec);
  int64_t m = t.dims[1];
  if (s == 0) return vec;
  if (s >= m || -s >= m) return tt_shlo_const(e->f, &t, 0.0);
  int64_t lo[2] = {0, 0}, hi[2] = {0, 0};
  tt_val_t part;
  if (s > 0) {
    part = tt_lt_slice_dim(e->f, vec, 1, s, m);
    hi[1] = s;
  } else {
    part = tt_lt_slice_dim(e->f, vec, 1, 0, m + s);
    lo[1] = -s;
  }
  return tt_lt_pad(e->f, part, tt_lt_const0(e->f, t.dtype, 0.0), lo, hi);
}

tt_val_t tt__eg_line(tt__eig_t* e, tt_val_t m, int dim, tt_val_t idx) {
  tt_type_t t = ty(e, m);
  tt_val_t hit = EG_CMP("EQ", tt__eg_iota(e, 3, t.dims, dim), tt__eg_lead(e, idx, 3, t.dims));
  return masked_pick(e, m, hit, dim);
}

tt_val_t tt__eg_put_line(tt__eig_t* e, tt_val_t m, int dim, tt_val_t idx, tt_val_t v,
                         tt_val_t on) {
  tt_type_t t = ty(e, m);
  tt_val_t hit = EG_CMP("EQ", tt__eg_iota(e, 3, t.dims, dim), tt__eg_lead(e, idx, 3, t.dims));
  hit = EG_AND(hit, tt__eg_lead(e, on, 3, t.dims));
  int64_t bd[2] = {0, dim == 1 ? 2 : 1};
  tt_val_t vb = tt_lt_bcast_in_dim(e->f, v, 3, t.dims, bd);
  return EG_SEL(hit, vb, m);
}

tt_val_t tt__eg_put_at(tt__eig_t* e, tt_val_t m, tt_val_t r, tt_val_t c, tt_val_t v,
                       tt_val_t on) {
  tt_type_t t = ty(e, m);
  tt_val_t hit = EG_AND(EG_CMP("EQ", tt__eg_iota(e, 3, t.dims, 1), tt__eg_lead(e, r, 3, t.dims)),
                        EG_CMP("EQ", tt__eg_iota(e, 3, t.dims, 2), tt__eg_lead(e, c, 3, t.dims)));
  hit = EG_AND(hit, tt__eg_lead(e, on, 3, t.dims));
  return EG_SEL(hit, tt__eg_lead(e, v, 3, t.dims), m);
}

tt_val_t tt__eg_diag(tt__eig_t* e, tt_val_t m, int64_t dr, int64_t dc, int64_t len) {
  tt_type_t t = ty(e, m);
  /* entries with col - row == dc - dr, indexed by row r = k + dr */
  tt_val_t d = EG_SUB(tt__eg_iota(e, 3, t.dims, 2), tt__eg_iota(e, 3, t.dims, 1));
  tt_val_t byrow = masked_pick(e, m, EG_CMPK("EQ", d, (double)(dc - dr)), 2); /* (bs, R) */
  byrow = tt__eg_shift(e, byrow, dr);
  tt_type_t bt = ty(e, byrow);
  if (bt.dims[1] == len) return byrow;
  if (bt.dims[1] > len) return tt_lt_slice_dim(e->f, byrow, 1, 0, len);
  int64_t lo[2] = {0, 0}, hi[2] = {0, len - bt.dims[1]};
  return tt_lt_pad(e->f, byrow, tt_lt_const0(e->f, bt.dtype, 0.0), lo, hi);
}

static tt_val_t reduce1(tt__eig_t* e, tt_val_t v, const char* op, bool high) {
  tt_type_t t = ty(e, v);
  tt_val_t init = tt_lt_limit(e->f, t.dtype, high);
  return tt_lt_reduce(e->f, v, 1u << (t.rank - 1), op, init);
}
tt_val_t tt__eg_rmax(tt__eig_t* e, tt_val_t v) { return reduce1(e, v, "stablehlo.maximum", false); }
tt_val_t tt__eg_rmin(tt__eig_t* e, tt_val_t v) { return reduce1(e, v, "stablehlo.minimum", true); }
tt_val_t tt__eg_rsum(tt__eig_t* e, tt_val_t v) {
  tt_type_t t = ty(e, v);
  return tt_lt_sum(e->f, v, 1u << (t.rank - 1));
}
tt_val_t tt__eg_any(tt__eig_t* e, tt_val_t v) {
  return tt_lt_reduce(e->f, v, 1u, "stablehlo.or", tt_lt_const0(e->f, TT_BOOL, 0.0));
}

tt_val_t tt__eg_at(tt__eig_t* e, tt_val_t v, tt_val_t j) {
  tt_type_t t = ty(e, v);
  tt_val_t ops[3] = {v, tt_lt_const0(e->f, TT_I64, 0.0), j};
  tt_type_t st = t;
  st.dims[1] = 1;
  tt_val_t w = tt_shlo_opf(e->f, "stablehlo.dynamic_slice", ops, 3, &st,
                           "slice_sizes = array<i64: %lld, 1>", (long long)t.dims[0]);
  return tt_l_reshape(e->f, w, 1, t.dims);
}

tt_val_t tt__eg_pack(tt__eig_t* e, const tt_val_t* cols, int k) {
  tt_val_t parts[16];
  int64_t d[2] = {e->bs, 1};
  for (int i = 0; i < k && i < 16; i++) parts[i] = tt_l_reshape(e->f, cols[i], 2, d);
  return tt_lt_concat(e->f, parts, k, 1);
}
tt_val_t tt__eg_col(tt__eig_t* e, tt_val_t packed, int j) {
  int64_t d[1] = {e->bs};
  return tt_l_reshape(e->f, tt_lt_slice_dim(e->f, packed, 1, j, j + 1), 1, d);
}

static tt_val_t dot(tt__eig_t* e, tt_val_t a, tt_val_t b, int ca, int cb, const tt_type_t* rt) {
  tt_val_t ops[2] = {a, b};
  return tt_shlo_opf(e->f, "stablehlo.dot_general", ops, 2, rt,
                     "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], "
                     "rhs_batching_dimensions = [0], lhs_contracting_dimensions = [%d], "
                     "rhs_contracting_dimensions = [%d]>, precision_config = "
                     "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]",
                     ca, cb);
}
tt_val_t tt__eg_mv(tt__eig_t* e, tt_val_t m, tt_val_t v) {
  tt_type_t t = ty(e, m), rt = tt_type_make(t.dtype, 2, t.dims);
  return dot(e, m, v, 2, 1, &rt);
}
tt_val_t tt__eg_vm(tt__eig_t* e, tt_val_t v, tt_val_t m) {
  tt_type_t t = ty(e, m);
  int64_t d[2] = {t.dims[0], t.dims[2]};
  tt_type_t rt = tt_type_make(t.dtype, 2, d);
  return dot(e, v, m, 1, 1, &rt);
}
tt_val_t tt__eg_outer(tt__eig_t* e, tt_val_t a, tt_val_t b) {
  tt_type_t ta = ty(e, a), tb = ty(e, b);
  int64_t d[3] = {ta.dims[0], ta.dims[1], tb.dims[1]};
  int64_t ba[2] = {0, 1}, bb[2] = {0, 2};
  return EG_MUL(tt_lt_bcast_in_dim(e->f, a, 3, d, ba), tt_lt_bcast_in_dim(e->f, b, 3, d, bb));
}

tt_val_t tt__eg_window(tt__eig_t* e, tt_val_t m, tt_val_t r, tt_val_t c, int64_t nr, int64_t nc) {
  tt_type_t t = ty(e, m), wt = t;
  wt.dims[1] = nr;
  wt.dims[2] = nc;
  tt_val_t ops[4] = {m, tt_lt_const0(e->f, TT_I64, 0.0), r, c};
  return tt_shlo_opf(e->f, "stablehlo.dynamic_slice", ops, 4, &wt,
                     "slice_sizes = array<i64: %lld, %lld, %lld>", (long long)t.dims[0],
                     (long long)nr, (long long)nc);
}
tt_val_t tt__eg_put_window(tt__eig_t* e, tt_val_t m, tt_val_t w, tt_val_t r, tt_val_t c) {
  tt_type_t t = ty(e, m);
  tt_val_t ops[5] = {m, w, tt_lt_const0(e->f, TT_I64, 0.0), r, c};
  return tt_shlo_op(e->f, "stablehlo.dynamic_update_slice", ops, 5, &t, NULL);
}

tt_val_t tt__eg_cplx(tt__eig_t* e, tt_val_t re, tt_val_t im) {
  tt_type_t t = ty(e, re);
  t.dtype = tt_dtype_complex_of(t.dtype);
  tt_val_t ops[2] = {re, im};
  return tt_shlo_op(e->f, "stablehlo.complex", ops, 2, &t, NULL);
}
tt_val_t tt__eg_re(tt__eig_t* e, tt_val_t z) {
  tt_type_t t = ty(e, z);
  t.dtype = tt_dtype_real_part(t.dtype);
  return tt_shlo_op(e->f, "stablehlo.real", &z, 1, &t, NULL);
}
tt_val_t tt__eg_im(tt__eig_t* e, tt_val_t z) {
  tt_type_t t = ty(e, z);
  t.dtype = tt_dtype_real_part(t.dtype);
  return tt_shlo_op(e->f, "stablehlo.imag", &z, 1, &t, NULL);
}
