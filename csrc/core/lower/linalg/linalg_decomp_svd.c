/* Symmetric eigendecomposition (_linalg_eigh) and SVD (_linalg_svd) of the
 * linalg_decomp family; the algorithms are in linalg_decomp_util.c.
 *
 * Eigenvectors and singular vectors are unique only up to sign (and within
 * repeated values); ours are orthonormal but may differ in sign from
 * LAPACK's. Eigenvalues ascend and singular values descend, as LAPACK's. */
#include <string.h>

#include "linalg_decomp_util.h"
#include "../elementwise/lower_elementwise.h"
#include "../tt_lower_tables.h"

/* Output i as an identity (square outputs) or zeros when it has elements. */
static tt_status_t eye_or_zero(tt_lctx_t* c, int i) {
  const tt_type_t* t = &c->out_types[i];
  if (t->rank >= 2 && tt_type_numel(t) > 0)
    return tt_l_set_out(c, i, tt__ld_eye(c->f, t, t->dtype, t->dims[t->rank - 2],
                                         t->dims[t->rank - 1]));
  return tt_l_set_out(c, i, tt_shlo_const(c->f, t, 0.0));
}

/* _linalg_eigh(A, UPLO, compute_v) -> (eigenvalues, eigenvectors) */
tt_status_t tt__ld_lower_eigh(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const char* uplo = c->args[1].kind == TT_ARG_STR ? c->args[1].str : "L";
  bool lower = strcmp(uplo, "L") == 0 || strcmp(uplo, "l") == 0;
  if (!lower && strcmp(uplo, "U") != 0 && strcmp(uplo, "u") != 0)
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "Expected UPLO argument to be 'L' or 'U', but got %s", uplo);
  bool compute_v = c->args[2].i != 0;
  /* in the vectors' dtype (complex for a Hermitian input; the values are real) */
  tt_val_t a = tt_l_convert(f, c->args[0].val, tt_l_opmath(c->out_types[1].dtype));
  tt_type_t t = tt__ld_type(f, a);
  if (tt_type_numel(&t) == 0) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], 0.0)));
    return tt_l_set_out(c, 1, tt_shlo_const(f, &c->out_types[1], 0.0));
  }
  tt__ld_check_finite(f, a, lower ? -1 : 1,
                      "linalg.eigh: The algorithm failed to converge because the input matrix "
                      "is ill-conditioned or has too many repeated eigenvalues (the input "
                      "contains non-finite values).");
  if (tt_dtype_is_complex(t.dtype)) { /* LAPACK reads only the real part of the diagonal */
    tt_type_t rt = t;
    rt.dtype = tt_dtype_real_part(t.dtype);
    tt_val_t off = tt_l_binary(f, "stablehlo.subtract", tt_shlo_const(f, &rt, 1.0),
                               tt__ld_eye(f, &rt, rt.dtype, t.dims[t.rank - 2], t.dims[t.rank - 1]));
    tt_val_t im = tt_l_binary(f, "stablehlo.multiply", tt__cx_im(f, a), off);
    a = tt__cx_make(f, tt__cx_re(f, a), im);
  }
  tt_val_t vals, vecs;
  tt__ld_eigh(f, a, lower, &vals, &vecs);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, vals));
  return tt_l_set_out(c, 1, compute_v ? vecs : tt_shlo_const(f, &c->out_types[1], 0.0));
}

/* _linalg_svd(A, full_matrices, compute_uv, driver) -> (U, S, Vh); without
 * compute_uv, U and Vh are the empty tensors the meta kernel describes. The
 * driver (a cuSOLVER choice) does not change the result. */
tt_status_t tt__ld_lower_svd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  bool full = c->args[1].i != 0, uv = c->args[2].i != 0;
  /* in U's dtype (complex for a complex input; S is real) */
  tt_val_t a = tt_l_convert(f, c->args[0].val, tt_l_opmath(c->out_types[0].dtype));
  tt_type_t t = tt__ld_type(f, a);
  if (tt_type_numel(&t) == 0) {
    /* k == 0: no singular values; full factors are identities */
    TT_RETURN_IF_ERROR(eye_or_zero(c, 0));
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, tt_shlo_const(f, &c->out_types[1], 0.0)));
    return eye_or_zero(c, 2);
  }
  tt__ld_check_finite(f, a, 0,
                      "linalg.svd: The algorithm failed to converge because the input matrix "
                      "contained non-finite values.");
  tt_val_t u = TT_SHLO_INVALID, s, vh = TT_SHLO_INVALID;
  tt__ld_svd(f, a, full, uv ? &u : NULL, &s, uv ? &vh : NULL);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, uv ? u : tt_shlo_const(f, &c->out_types[0], 0.0)));
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 1, s));
  return tt_l_set_out(c, 2, uv ? vh : tt_shlo_const(f, &c->out_types[2], 0.0));
}
