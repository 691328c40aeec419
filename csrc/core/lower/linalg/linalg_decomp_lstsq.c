/* Least squares (linalg_lstsq) of the linalg_decomp family.
 *
 * Every driver is computed from the SVD (the minimum-norm solution with
 * singular values <= rcond * s_max dropped), which for full-rank inputs is
 * the unique solution LAPACK's gels / gelsy / gelsd / gelss return, and for
 * rank-deficient ones the minimum-norm solution gelsy / gelsd / gelss return
 * (gelsy decides the rank from a pivoted QR instead, which agrees except
 * for singular values right at the threshold). The outputs follow CPU:
 * residuals (squared norms of A x - b per column) when m > n and the driver
 * is not gelsy, the rank unless the driver is gels, the singular values for
 * gelsd / gelss; absent outputs are empty (their types say so). gelsd /
 * gelss return no residuals for a rank-deficient input, a shape that depends
 * on the values: that case raises at the next sync instead. */
#include <ctype.h>
#include <string.h>

#include "linalg_decomp_util.h"
#include "../elementwise/lower_elementwise.h"
#include "linalg_util.h"

/* Broadcasts the batch dims of x (batch..., r, c) to those of `to`. */
static tt_val_t batch_to(tt_shlo_fn_t* f, tt_val_t x, const tt_type_t* to) {
  tt_type_t t = tt__ld_type(f, x);
  tt_type_t rt = *to;
  rt.dims[rt.rank - 2] = t.dims[t.rank - 2];
  rt.dims[rt.rank - 1] = t.dims[t.rank - 1];
  int64_t bd[TT_MAX_RANK];
  for (int i = 0; i < t.rank; i++) bd[i] = rt.rank - t.rank + i;
  return tt_lt_bcast_in_dim(f, x, rt.rank, rt.dims, bd);
}

tt_status_t tt__ld_lower_lstsq(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  /* the driver name, lower-cased as PyTorch reads it; CPU's default */
  char driver[8] = "gelsy";
  if (c->args[3].kind == TT_ARG_STR) {
    size_t len = strlen(c->args[3].str);
    for (size_t i = 0; i < sizeof driver; i++)
      driver[i] = i < len && len < sizeof driver ? (char)tolower((unsigned char)c->args[3].str[i]) : 0;
  }
  bool gels = strcmp(driver, "gels") == 0, gelsy = strcmp(driver, "gelsy") == 0;
  bool svd_driver = strcmp(driver, "gelsd") == 0 || strcmp(driver, "gelss") == 0;
  if (!gels && !gelsy && !svd_driver)
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "torch.linalg.lstsq: parameter `driver` should be one of "
                          "(gels, gelsy, gelsd, gelss)");
  tt_dtype_t cdt = tt_l_opmath(c->out_types[0].dtype);
  tt_val_t a = tt_l_convert(f, c->args[0].val, cdt), b = tt_l_convert(f, c->args[1].val, cdt);
  tt_type_t at = tt__ld_type(f, a), bt = tt__ld_type(f, b);
  int64_t m = at.dims[at.rank - 2], n = at.dims[at.rank - 1], k = m < n ? m : n;
  if (bt.rank == at.rank - 1) { /* a vector (batch..., m): one column */
    bt.dims[bt.rank] = 1;
    bt.rank++;
    b = tt_l_reshape(f, b, bt.rank, bt.dims);
  }
  /* the common batch: that of the solution (batch..., n, cols) */
  tt_type_t st = c->out_types[0];
  if (st.rank == at.rank - 1) st.dims[st.rank++] = 1;
  st.dtype = cdt;
  int r = st.rank;
  a = batch_to(f, a, &st);
  b = batch_to(f, b, &st);
  tt_type_t bat = st; /* (batch...) */
  bat.rank -= 2;
  tt_val_t x, s = TT_SHLO_INVALID, rank = TT_SHLO_INVALID;
  if (tt_type_numel(&st) == 0 || k == 0) {
    x = tt_shlo_const(f, &st, 0.0);
    tt_type_t it = bat;
    it.dtype = TT_I64;
    rank = tt_shlo_const(f, &it, 0.0);
  } else {
    tt__ld_check_finite(f, a, 0,
                        "torch.linalg.lstsq: the input matrix contains non-finite values "
                        "(LAPACK rejects it on CPU)");
    tt_val_t u, vh;
    tt__ld_svd(f, a, false, &u, &s, &vh);
    /* rcond: given, else eps * max(m, n) (PyTorch's default); LAPACK
     * treats a negative rcond as eps */
    double eps = tt_dtype_real_part(cdt) == TT_F64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
    double rc = c->args[2].kind == TT_ARG_FLOAT ? c->args[2].f : eps * (double)(m > n ? m : n);
    if (rc < 0) rc = eps;
    tt_type_t svt = tt__ld_type(f, s);
    tt_val_t smax = tt_lt_slice_dim(f, s, r - 2, 0, 1); /* descending: the first */
    int64_t bd[TT_MAX_RANK];
    for (int i = 0; i < r - 1; i++) bd[i] = i;
    smax = tt_lt_bcast_in_dim(f, smax, svt.rank, svt.dims, bd);
    tt_val_t keep = tt_l_compare(f, "GT", s, tt_l_binary(f, "stablehlo.multiply", smax,
                                                          tt_shlo_const(f, &svt, rc)));
    rank = tt_lt_sum(f, tt_l_convert(f, keep, TT_I64), 1u << (r - 2));
    /* gels assumes full rank: no singular value is dropped */
    tt_val_t sinv = tt_l_binary(f, "stablehlo.divide", tt_shlo_const(f, &svt, 1.0), s);
    if (!gels) sinv = tt_l_select(f, keep, sinv, tt_shlo_const(f, &svt, 0.0));
    /* x = V diag(sinv) U^H b (U^T, V = Vh^T for real inputs) */
    tt_val_t utb = tt__la_matmul_tr(f, tt__la_conj(f, u), b, true, false); /* (batch..., k, cols) */
    tt_type_t ut = tt__ld_type(f, utb);
    for (int i = 0; i < r - 1; i++) bd[i] = i;
    sinv = tt_l_convert(f, sinv, cdt);
    utb = tt_l_binary(f, "stablehlo.multiply", utb, tt_lt_bcast_in_dim(f, sinv, r, ut.dims, bd));
    x = tt__la_matmul_tr(f, tt__la_conj(f, vh), utb, true, false);
  }
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, x));
  /* residuals */
  if (tt_type_numel(&c->out_types[1]) > 0) {
    tt_val_t res = tt_l_binary(f, "stablehlo.subtract", tt__la_matmul_tr(f, a, x, false, false), b);
    res = tt_l_binary(f, "stablehlo.multiply", res, tt__la_conj(f, res)); /* |res|^2 */
    if (tt_dtype_is_complex(cdt)) res = tt__cx_re(f, res);
    res = tt_lt_sum(f, res, 1u << (r - 2));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, res));
    if (svd_driver && k > 0 && tt_type_numel(&st) > 0) { /* CPU's residuals need rank == n */
      tt_type_t it = tt__ld_type(f, rank);
      tt_val_t def = tt_l_compare(f, "LT", rank, tt_shlo_const_i64(f, &it, n));
      tt_shlo_add_check(f, tt_lt_reduce(f, def, (1u << it.rank) - 1, "stablehlo.or",
                                        tt_lt_const0(f, TT_BOOL, 0.0)),
                        TT_UNIMPLEMENTED,
                        "torch.linalg.lstsq: residuals of a rank-deficient input (driver "
                        "gelsd/gelss) have a value-dependent shape; not supported on the tpu "
                        "device");
    }
  } else {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, tt_shlo_const(f, &c->out_types[1], 0.0)));
  }
  TT_RETURN_IF_ERROR(tt_l_set_out(
      c, 2, gels ? tt_shlo_const(f, &c->out_types[2], 0.0) : rank));
  if (svd_driver && k > 0 && tt_type_numel(&st) > 0) return tt_l_set_out(c, 3, s);
  return tt_l_set_out(c, 3, tt_shlo_const(f, &c->out_types[3], 0.0));
}
