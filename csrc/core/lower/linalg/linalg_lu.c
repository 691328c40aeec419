/* LU with partial pivoting and what is built on it: lu_factor, lu, lu_unpack,
 * lu_solve, det, slogdet, inv, solve.
 *
 * The factorization is LAPACK's unblocked getf2 as a stablehlo.while over the
 * columns: the pivot is the first row of largest |a| at or below the
 * diagonal, the column below it is scaled by the reciprocal of the pivot (a
 * division when the pivot is subnormal), then a rank-1 update. CPU's blocked
 * getrf adds the same products in another order, so results agree to
 * rounding, not bit for bit. Row swaps pick rows with masked sums whose zero
 * is -0.0, so every moved value is bit-exact (NaN and inf included).
 *
 * Like CPU (torch 2.13), det and slogdet factor A^T: CPU does so when A is
 * contiguous, which is what the lowering assumes (it cannot see strides), so
 * their LU / pivots outputs are those of A^T (det's backward solves with them
 * accordingly). For a non-contiguous A, where CPU factors A itself, the
 * bridge passes A^T. solve and inv factor A itself, as CPU does.
 *
 * Complex matrices: the pivot is the first row of largest |re| + |im| (as
 * LAPACK's izamax), the column is divided by the pivot as c10::complex
 * divides; det and slogdet factor A itself (CPU does not transpose complex
 * A, and the bridge leaves complex inputs alone); slogdet's sign is the
 * product of diag / |diag| and the permutation's sign. */
#include <float.h>
#include <math.h>

#include "linalg_util.h"
#include "../elementwise/lower_elementwise.h"

typedef struct lu_ctx {
  int r;          /* rank of the matrices */
  tt_type_t at;   /* (batch..., m, n) */
} lu_ctx_t;

static tt_val_t bcast(tt_shlo_fn_t* f, tt_val_t v, const tt_type_t* to, const int64_t* bd) {
  return tt_lt_bcast_in_dim(f, v, to->rank, to->dims, bd);
}

/* dynamic_slice of v: a size-1 window at index i along dim, whole elsewhere,
 * reshaped to drop dim. */
static tt_val_t take_at(tt_shlo_fn_t* f, tt_val_t v, int dim, tt_val_t i) {
  tt_type_t t = tt__sh_type(f, v);
  tt_val_t ops[TT_MAX_RANK + 1];
  ops[0] = v;
  tt_val_t zero = tt_lt_const0(f, TT_I64, 0.0);
  tt_sbuf_t s;
  tt_sbuf_init(&s);
  int64_t sizes[TT_MAX_RANK], rd[TT_MAX_RANK];
  int nr = 0;
  for (int d = 0; d < t.rank; d++) {
    ops[d + 1] = d == dim ? i : zero;
    sizes[d] = d == dim ? 1 : t.dims[d];
    if (d != dim) rd[nr++] = t.dims[d];
  }
  tt_sbuf_append(&s, "slice_sizes = ");
  tt_shlo_fmt_i64_array(&s, sizes, t.rank);
  tt_type_t st = t;
  st.dims[dim] = 1;
  tt_val_t r = tt_shlo_op(f, "stablehlo.dynamic_slice", ops, t.rank + 1, &st, s.data);
  tt_sbuf_free(&s);
  return tt_l_reshape(f, r, nr, rd);
}

/* Swaps entries k (0-d i64) and p (i64, shaped like v's leading dims before
 * `dim`) along `dim` of v; later dims ride along. */
static tt_val_t swap_along(tt_shlo_fn_t* f, tt_val_t v, int dim, tt_val_t k, tt_val_t p) {
  tt_type_t t = tt__sh_type(f, v);
  tt_type_t t0 = t;
  t0.rank = 0;
  int64_t bd[TT_MAX_RANK], od[TT_MAX_RANK];
  int no = 0;
  for (int d = 0; d < t.rank; d++) {
    bd[d] = d;
    if (d != dim) od[no++] = d;
  }
  tt_val_t io = tt_lt_iota(f, TT_I64, t.rank, t.dims, dim);
  tt_val_t pv = bcast(f, p, &t, bd); /* p's dims are the batch dims 0..nb-1 */
  tt_val_t kv = tt_lt_splat(f, k, t.rank, t.dims);
  tt_val_t at_p = tt_l_compare(f, "EQ", io, pv), at_k = tt_l_compare(f, "EQ", io, kv);
  tt_val_t vk = bcast(f, take_at(f, v, dim, k), &t, od);
  tt_val_t vp = tt_lt_reduce(f, tt_l_select(f, at_p, v, tt__la_neg0(f, &t)), 1u << dim, "stablehlo.add",
                             tt__la_neg0(f, &t0));
  vp = bcast(f, vp, &t, od);
  return tt_l_select(f, at_k, vp, tt_l_select(f, at_p, vk, v));
}

/* One column step of getf2. vals: a, perm, pivots, info. */
static void lu_step(tt_shlo_fn_t* f, tt_val_t k, tt_val_t* vals, void* vctx) {
  const lu_ctx_t* x = vctx;
  int r = x->r, nb = r - 2;
  tt_type_t at = x->at;
  tt_dtype_t dt = at.dtype;
  tt_val_t a = vals[0];
  int64_t bd[TT_MAX_RANK];
  for (int i = 0; i < r; i++) bd[i] = i;
  tt_type_t ct = at; /* a column: (batch..., m) */
  ct.rank = r - 1;
  ct.dims[r - 2] = at.dims[r - 2];
  tt_type_t bt = at; /* (batch...) */
  bt.rank = nb;
  /* pivot row: first max |a[i, k]| over i >= k */
  tt_val_t col = take_at(f, a, r - 1, k);
  tt_val_t rows = tt_lt_iota(f, TT_I64, ct.rank, ct.dims, r - 2);
  tt_val_t kc = tt_lt_splat(f, k, ct.rank, ct.dims);
  bool cx = tt_dtype_is_complex(dt);
  tt_type_t rct = ct; /* real column */
  rct.dtype = tt_dtype_real_part(dt);
  tt_val_t mag = tt__la_cabs1(f, col);
  tt_val_t cand = tt_l_select(f, tt_l_compare(f, "GE", rows, kc), mag, tt_shlo_const(f, &rct, -1.0));
  tt_val_t pmax, p;
  tt_lt_arg_extreme(f, cand, r - 2, true, &pmax, &p);
  a = swap_along(f, a, r - 2, k, p);
  vals[1] = swap_along(f, vals[1], r - 2, k, p);
  /* scale the column below the pivot */
  col = take_at(f, a, r - 1, k);
  tt_val_t piv = take_at(f, col, r - 2, k); /* (batch...) */
  tt_val_t pc = bcast(f, piv, &ct, bd);
  tt_val_t nz = tt_l_compare(f, "NE", piv, tt_shlo_const(f, &bt, 0.0));
  tt_val_t l;
  if (cx) {
    l = tt__cx_div(f, col, pc);
  } else {
    tt_val_t one = tt_shlo_const(f, &ct, 1.0);
    tt_val_t recip = tt_l_binary(f, "stablehlo.multiply", col, tt_l_binary(f, "stablehlo.divide", one, pc));
    tt_val_t quot = tt_l_binary(f, "stablehlo.divide", col, tt__ew_opaque(f, pc)); /* no reciprocal rewrite */
    tt_val_t normal = tt_l_compare(f, "GE", tt_l_unary(f, "stablehlo.abs", pc),
                                   tt_shlo_const(f, &ct, dt == TT_F32 ? FLT_MIN : DBL_MIN));
    l = tt_l_select(f, normal, recip, quot);
  }
  tt_val_t below = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "GT", rows, kc), bcast(f, nz, &ct, bd));
  l = tt_l_select(f, below, l, col);
  /* write the multipliers into column k and update the trailing block */
  tt_val_t ri = tt_lt_iota(f, TT_I64, r, at.dims, r - 2), ci = tt_lt_iota(f, TT_I64, r, at.dims, r - 1);
  tt_val_t ka = tt_lt_splat(f, k, r, at.dims);
  int64_t ld[TT_MAX_RANK], ud[TT_MAX_RANK];
  for (int i = 0; i < nb; i++) ld[i] = ud[i] = i;
  ld[nb] = r - 2;
  ud[nb] = r - 1;
  tt_val_t la = tt_lt_bcast_in_dim(f, l, r, at.dims, ld);
  tt_val_t ua = tt_lt_bcast_in_dim(f, take_at(f, a, r - 2, k), r, at.dims, ud);
  a = tt_l_select(f, tt_l_compare(f, "EQ", ci, ka), la, a);
  tt_val_t trail = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "GT", ri, ka), tt_l_compare(f, "GT", ci, ka));
  tt_val_t upd = tt_l_binary(f, "stablehlo.subtract", a, tt_l_binary(f, "stablehlo.multiply", la, ua));
  vals[0] = tt_l_select(f, trail, upd, a);
  /* pivots[k] = p + 1; info = k + 1 at the first zero pivot */
  tt_type_t pt = tt__sh_type(f, vals[2]);
  tt_type_t bi = bt;
  bi.dtype = TT_I64;
  tt_val_t p1 = tt_l_convert(f, tt_l_binary(f, "stablehlo.add", p, tt_shlo_const(f, &bi, 1.0)), TT_I32);
  tt_val_t at_k = tt_l_compare(f, "EQ", tt_lt_iota(f, TT_I64, pt.rank, pt.dims, pt.rank - 1),
                               tt_lt_splat(f, k, pt.rank, pt.dims));
  vals[2] = tt_l_select(f, at_k, bcast(f, p1, &pt, bd), vals[2]);
  tt_type_t it = bt;
  it.dtype = TT_I32;
  tt_val_t k1 = tt_lt_splat(f, tt_l_convert(f, tt_l_binary(f, "stablehlo.add", k, tt_lt_const0(f, TT_I64, 1.0)), TT_I32),
                            it.rank, it.dims);
  tt_val_t first = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "EQ", vals[3], tt_shlo_const(f, &it, 0.0)),
                               tt_l_unary(f, "stablehlo.not", nz));
  vals[3] = tt_l_select(f, first, k1, vals[3]);
}

void tt__la_lu(tt_shlo_fn_t* f, tt_val_t a, tt_val_t* lu, tt_val_t* pivots, tt_val_t* perm,
               tt_val_t* info) {
  lu_ctx_t x;
  x.at = tt__sh_type(f, a);
  x.r = x.at.rank;
  int r = x.r;
  int64_t m = x.at.dims[r - 2], n = x.at.dims[r - 1], k = m < n ? m : n;
  tt_type_t pt = x.at, mt = x.at, it = x.at;
  pt.dtype = mt.dtype = it.dtype = TT_I32;
  pt.rank = mt.rank = r - 1;
  pt.dims[r - 2] = k;
  it.rank = r - 2;
  tt_val_t v[4] = {a, tt_lt_iota(f, TT_I32, mt.rank, mt.dims, r - 2), tt_shlo_const(f, &pt, 0.0),
                   tt_shlo_const(f, &it, 0.0)};
  if (!tt__la_empty(&x.at)) tt_l_fori(f, k, v, 4, lu_step, &x);
  *lu = v[0];
  *perm = v[1];
  *pivots = v[2];
  *info = v[3];
}

/* vals: perm, pivots */
static void perm_step(tt_shlo_fn_t* f, tt_val_t k, tt_val_t* vals, void* ctx) {
  tt_type_t t = tt__sh_type(f, vals[0]);
  tt_val_t p = tt_l_convert(f, take_at(f, vals[1], t.rank - 1, k), TT_I64);
  tt_type_t bt = tt__sh_type(f, p);
  p = tt_l_binary(f, "stablehlo.subtract", p, tt_shlo_const(f, &bt, 1.0));
  vals[0] = swap_along(f, vals[0], t.rank - 1, k, p);
}

tt_val_t tt__la_pivots_to_perm(tt_shlo_fn_t* f, tt_val_t pivots, int64_t m) {
  tt_type_t t = tt__sh_type(f, pivots);
  tt_type_t mt = t;
  mt.dtype = TT_I32;
  mt.dims[t.rank - 1] = m;
  tt_val_t v[2] = {tt_lt_iota(f, TT_I32, mt.rank, mt.dims, mt.rank - 1), tt_l_convert(f, pivots, TT_I32)};
  if (!tt__la_empty(&t)) tt_l_fori(f, t.dims[t.rank - 1], v, 2, perm_step, NULL);
  return v[0];
}

/* inv[perm[i]] = i */
static tt_val_t invert_perm(tt_shlo_fn_t* f, tt_val_t perm) {
  tt_type_t t = tt__sh_type(f, perm);
  int r = t.rank + 1;
  int64_t dims[TT_MAX_RANK + 1], bd[TT_MAX_RANK + 1];
  for (int i = 0; i < t.rank; i++) dims[i] = t.dims[i], bd[i] = i;
  dims[r - 1] = t.dims[t.rank - 1];
  /* (batch..., i, j): perm[i] == j */
  tt_val_t pi = tt_lt_bcast_in_dim(f, perm, r, dims, bd);
  tt_type_t ft = tt_type_make(TT_I32, r, dims);
  tt_val_t hit = tt_l_compare(f, "EQ", pi, tt_lt_iota(f, TT_I32, r, dims, r - 1));
  tt_val_t sel = tt_l_select(f, hit, tt_lt_iota(f, TT_I32, r, dims, r - 2), tt_shlo_const(f, &ft, 0.0));
  return tt_lt_sum(f, sel, 1u << (r - 2));
}

tt_val_t tt__la_lu_solve(tt_shlo_fn_t* f, tt_val_t lu, tt_val_t perm, tt_val_t b, tt__la_op_t op) {
  tt_type_t bt = tt__sh_type(f, b);
  if (tt__la_empty(&bt)) return b;
  int nb = bt.rank - 2;
  lu = tt__la_batch_to(f, lu, 2, nb, bt.dims);
  perm = tt__la_batch_to(f, perm, 1, nb, bt.dims);
  if (op == TT_LA_NOTRANS) { /* L U x = P^T b */
    tt_val_t y = tt__la_take_rows(f, b, perm);
    y = tt__la_trsolve(f, lu, y, true, true, true, TT_LA_NOTRANS);
    return tt__la_trsolve(f, lu, y, true, false, false, TT_LA_NOTRANS);
  }
  /* U^T L^T P^T x = b (or U^H L^H) */
  tt_val_t y = tt__la_trsolve(f, lu, b, true, false, false, op);
  y = tt__la_trsolve(f, lu, y, true, true, true, op);
  return tt__la_take_rows(f, y, invert_perm(f, perm));
}

/* X A = B is A^H X^H = B^H, and X A^H = B is A X^H = B^H, which is how
 * CPU's lu_solve treats left=False (for real A: A^T X^T = B^T). */
static tt_val_t lu_solve_side(tt_shlo_fn_t* f, tt_val_t lu, tt_val_t perm, tt_val_t b, bool left,
                              bool adjoint) {
  if (left) return tt__la_lu_solve(f, lu, perm, b, adjoint ? TT_LA_ADJ : TT_LA_NOTRANS);
  return tt__la_mH(f, tt__la_lu_solve(f, lu, perm, tt__la_mH(f, b), adjoint ? TT_LA_NOTRANS : TT_LA_ADJ));
}

static tt_status_t lu_errors(tt_lctx_t* c, tt_val_t info, const char* msg) {
  tt_shlo_add_check(c->f, tt__la_any_nonzero(c->f, info), TT_FAILED_PRECONDITION, msg);
  return NULL;
}

/* linalg_lu_factor_ex(A, *, pivot, check_errors) -> (LU, pivots, info) */
tt_status_t tt__la_lower_lu_factor(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  if (!c->args[1].i)
    return tt_status_make(TT_FAILED_PRECONDITION, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  tt_val_t lu, piv, perm, info;
  tt__la_lu(c->f, c->args[0].val, &lu, &piv, &perm, &info);
  if (c->args[2].i)
    lu_errors(c, info, "torch.linalg.lu_factor_ex: U[i,i] is zero and using it on lu_solve would result in a "
                       "division by zero.");
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, lu));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, piv));
  return tt_l_set_out(c, 2, info);
}

/* P, L, U of (lu, perm) into outputs 0..2; an empty output type means the
 * caller did not ask for it (lu_unpack flags). */
static tt_status_t unpack(tt_lctx_t* c, tt_val_t lu, tt_val_t perm) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = tt__sh_type(f, lu);
  int r = t.rank;
  int64_t m = t.dims[r - 2], n = t.dims[r - 1], k = m < n ? m : n;
  const tt_type_t* pt = &c->out_types[0];
  if (tt__la_empty(pt)) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_shlo_const(f, pt, 0.0)));
  } else { /* P[j, i] = perm[i] == j */
    int64_t bd[TT_MAX_RANK];
    for (int i = 0; i < r - 2; i++) bd[i] = i;
    bd[r - 2] = r - 1;
    tt_type_t it = *pt;
    it.dtype = TT_I32;
    tt_val_t pi = tt_lt_bcast_in_dim(f, perm, it.rank, it.dims, bd);
    tt_val_t hit = tt_l_compare(f, "EQ", pi, tt_lt_iota(f, TT_I32, it.rank, it.dims, r - 2));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_l_convert(f, hit, pt->dtype)));
  }
  if (tt__la_empty(&c->out_types[1]) || tt__la_empty(&c->out_types[2])) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, tt_shlo_const(f, &c->out_types[1], 0.0)));
    return tt_l_set_out(c, 2, tt_shlo_const(f, &c->out_types[2], 0.0));
  }
  tt_val_t l = tt__la_tri(f, tt_lt_slice_dim(f, lu, r - 1, 0, k), true, -1);
  tt_type_t lt = tt__sh_type(f, l);
  tt_val_t eye = tt_l_compare(f, "EQ", tt_lt_iota(f, TT_I64, r, lt.dims, r - 2),
                              tt_lt_iota(f, TT_I64, r, lt.dims, r - 1));
  l = tt_l_select(f, eye, tt_shlo_const(f, &lt, 1.0), l);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, l));
  return tt_l_set_out(c, 2, tt__la_tri(f, tt_lt_slice_dim(f, lu, r - 2, 0, k), false, 0));
}

/* linalg_lu(A, *, pivot) -> (P, L, U) */
tt_status_t tt__la_lower_lu(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  if (!c->args[1].i)
    return tt_status_make(TT_FAILED_PRECONDITION, "linalg.lu: LU without pivoting is not implemented on the CPU");
  tt_val_t lu, piv, perm, info;
  tt__la_lu(c->f, c->args[0].val, &lu, &piv, &perm, &info);
  return unpack(c, lu, perm);
}

/* lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots) -> (P, L, U) */
tt_status_t tt__la_lower_lu_unpack(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  tt_type_t t = tt__sh_type(c->f, c->args[0].val);
  tt_val_t perm = tt__la_pivots_to_perm(c->f, c->args[1].val, t.dims[t.rank - 2]);
  return unpack(c, c->args[0].val, perm);
}

/* linalg_lu_solve(LU, pivots, B, *, left, adjoint) */
tt_status_t tt__la_lower_lu_solve(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  TT_RETURN_IF_ERROR(tt__la_check_field(c, tt_l_arg_dtype(c, 0)));
  const tt_type_t* ot = &c->out_types[0];
  if (tt__la_empty(ot)) return tt__la_zero_outs(c);
  tt_type_t t = tt__sh_type(f, c->args[0].val);
  tt_val_t perm = tt__la_pivots_to_perm(f, c->args[1].val, t.dims[t.rank - 2]);
  tt_val_t b = tt__la_batch_to(f, c->args[2].val, 2, ot->rank - 2, ot->dims);
  return tt_l_set_out(c, 0, lu_solve_side(f, c->args[0].val, perm, b, c->args[3].i != 0, c->args[4].i != 0));
}

/* (-1)^(number of row exchanges), of dtype dt, shaped like the batch. */
static tt_val_t perm_sign(tt_shlo_fn_t* f, tt_val_t piv, tt_dtype_t dt) {
  tt_type_t t = tt__sh_type(f, piv);
  tt_type_t it = t;
  it.dtype = TT_I32;
  tt_val_t one = tt_l_binary(f, "stablehlo.add", tt_lt_iota(f, TT_I32, t.rank, t.dims, t.rank - 1),
                             tt_shlo_const(f, &it, 1.0));
  tt_val_t swaps = tt_lt_sum(f, tt_l_convert(f, tt_l_compare(f, "NE", piv, one), TT_I32), 1u << (t.rank - 1));
  tt_type_t bt = tt__sh_type(f, swaps);
  tt_val_t odd = tt_l_compare(f, "EQ", tt_l_binary(f, "stablehlo.and", swaps, tt_shlo_const(f, &bt, 1.0)),
                              tt_shlo_const(f, &bt, 1.0));
  tt_type_t ft = bt;
  ft.dtype = dt;
  return tt_l_select(f, odd, tt_shlo_const(f, &ft, -1.0), tt_shlo_const(f, &ft, 1.0));
}

/* z / |z| (each part divided by the real a = |z|), 0 where z is 0: as
 * ATen's sgn. */
static tt_val_t cx_sgn(tt_shlo_fn_t* f, tt_val_t z, tt_val_t a) {
  tt_type_t t = tt__sh_type(f, z), at = tt__sh_type(f, a);
  tt_val_t q = tt__cx_make(f, tt_l_binary(f, "stablehlo.divide", tt__cx_re(f, z), a),
                           tt_l_binary(f, "stablehlo.divide", tt__cx_im(f, z), a));
  return tt_l_select(f, tt_l_compare(f, "EQ", a, tt_shlo_const(f, &at, 0.0)), tt_shlo_const(f, &t, 0.0), q);
}

/* _linalg_det(A) -> (det, LU, pivots) (param 0);
 * _linalg_slogdet(A) -> (sign, logabsdet, LU, pivots) (param 1) */
tt_status_t tt__la_lower_det(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t dt = tt_l_arg_dtype(c, 0);
  TT_RETURN_IF_ERROR(tt__la_check_field(c, dt));
  bool slog = c->op->param != 0, cx = tt_dtype_is_complex(dt);
  tt_val_t lu, piv, perm, info;
  tt__la_lu(f, cx ? c->args[0].val : tt__la_mT(f, c->args[0].val), &lu, &piv, &perm, &info);
  tt_val_t d = tt__la_diag(f, lu);
  tt_type_t dtp = tt__sh_type(f, d);
  uint32_t last = 1u << (dtp.rank - 1);
  tt_val_t sgn = perm_sign(f, piv, dt);
  int o = 0;
  if (!slog) {
    tt_val_t p = tt_lt_reduce(f, d, last, "stablehlo.multiply", tt_lt_const0(f, dt, 1.0));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, o++, tt_l_binary(f, "stablehlo.multiply", sgn, p)));
  } else {
    tt_val_t ad = tt_l_cabs(f, d); /* real */
    tt_val_t sd = cx ? cx_sgn(f, d, ad) : tt_l_unary(f, "stablehlo.sign", d);
    tt_val_t s = tt_lt_reduce(f, sd, last, "stablehlo.multiply", tt_lt_const0(f, dt, 1.0));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, o++, tt_l_binary(f, "stablehlo.multiply", s, sgn)));
    tt_val_t la = tt_l_unary(f, "stablehlo.log", ad);
    TT_RETURN_IF_ERROR(tt_l_set_out(c, o++, tt_lt_sum(f, la, last)));
  }
  TT_RETURN_IF_ERROR(tt_l_set_out(c, o++, lu));
  return tt_l_set_out(c, o, piv);
}

/* linalg_inv_ex(A, *, check_errors) -> (inverse, info): solve(A, I) as CPU. */
tt_status_t tt__la_lower_inv(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t dt = tt_l_arg_dtype(c, 0);
  TT_RETURN_IF_ERROR(tt__la_check_field(c, dt));
  tt_type_t t = tt__sh_type(f, c->args[0].val);
  tt_val_t lu, piv, perm, info;
  tt__la_lu(f, c->args[0].val, &lu, &piv, &perm, &info);
  if (c->args[1].i)
    lu_errors(c, info, "linalg.inv_ex: The diagonal element is zero, the inversion could not be completed "
                       "because the input matrix is singular.");
  tt_val_t eye = tt__la_eye(f, dt, t.rank - 2, t.dims, t.dims[t.rank - 1]);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt__la_lu_solve(f, lu, perm, eye, TT_LA_NOTRANS)));
  return tt_l_set_out(c, 1, info);
}

/* _linalg_solve_ex(A, B, *, left, check_errors) -> (result, LU, pivots, info) */
tt_status_t tt__la_lower_solve(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t dt = tt_l_arg_dtype(c, 0);
  TT_RETURN_IF_ERROR(tt__la_check_field(c, dt));
  tt_type_t at = tt__sh_type(f, c->args[0].val), bt = tt__sh_type(f, c->args[1].val);
  bool left = c->args[2].i != 0;
  tt_val_t lu, piv, perm, info;
  tt__la_lu(f, c->args[0].val, &lu, &piv, &perm, &info);
  if (c->args[3].i)
    lu_errors(c, info, "torch.linalg.solve_ex: The solver failed because the input matrix is singular.");
  /* B is a vector (batch..., n) when it is 1-D or A's shape without the last dim */
  bool vec = bt.rank == 1;
  if (bt.rank == at.rank - 1) {
    vec = true;
    for (int i = 0; i < bt.rank; i++) vec = vec && bt.dims[i] == at.dims[i];
  }
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t x;
  if (tt__la_empty(ot)) {
    x = tt_shlo_const(f, ot, 0.0);
  } else {
    tt_val_t b = c->args[1].val;
    int64_t dims[TT_MAX_RANK];
    for (int i = 0; i < ot->rank; i++) dims[i] = ot->dims[i];
    int rank = ot->rank;
    if (vec) dims[rank++] = 1;
    if (vec) {
      bt.dims[bt.rank++] = 1;
      b = tt_l_reshape(f, b, bt.rank, bt.dims);
    }
    b = tt__la_batch_to(f, b, 2, rank - 2, dims);
    x = lu_solve_side(f, lu, perm, b, left, false);
  }
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, x));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, lu));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 2, piv));
  return tt_l_set_out(c, 3, info);
}
