/* The special family: elementwise special functions (Bessel functions,
 * orthogonal polynomials, gamma-related functions and small numeric helpers).
 * This file holds the ATen table (the builder files' shared helpers are in
 * special_util.c, see special_util.h); every row's param is a tt__sp_op_t and
 * each range of params is lowered by the file that holds its builders. */
#include "special_util.h"
#include "../tt_lower_tables.h"

/* ---- the table ------------------------------------------------------------------ */
#define B tt__sp_lower_bessel
#define P tt__sp_lower_poly
#define M tt__sp_lower_misc
#define G tt__sp_lower_gamma
#define I tt__sp_lower_igamma
/* functional and out= */
#define S2(fn, n, p) {"aten::" n, fn, p, 0}, {"aten::" n ".out", fn, p, 0},
/* functional, in-place and out= */
#define S3(fn, n, p) S2(fn, n, p) {"aten::" n "_", fn, p, 0},
/* binary ops with Scalar overloads (orthogonal polynomials, xlog1py, zeta) */
#define SX(fn, n, a, b, p)                                                               \
  S2(fn, n, p){"aten::" n "." a "_scalar", fn, p, 0}, {"aten::" n "." a "_scalar_out", fn, p, 0}, \
      {"aten::" n "." b "_scalar", fn, p, 0}, {"aten::" n "." b "_scalar_out", fn, p, 0},
#define SP(n, p) SX(P, "special_" n, "x", "n", p)

const tt_lower_entry_t tt_lower_special[] = {
    S3(B, "i0", TT_SP_I0) S2(B, "special_i0e", TT_SP_I0E) S2(B, "special_i1", TT_SP_I1)
    S2(B, "special_i1e", TT_SP_I1E) S2(B, "special_modified_bessel_i0", TT_SP_MOD_I0)
    S2(B, "special_modified_bessel_i1", TT_SP_MOD_I1)
    S2(B, "special_modified_bessel_k0", TT_SP_MOD_K0)
    S2(B, "special_modified_bessel_k1", TT_SP_MOD_K1)
    S2(B, "special_scaled_modified_bessel_k0", TT_SP_SCALED_K0)
    S2(B, "special_scaled_modified_bessel_k1", TT_SP_SCALED_K1)
    S2(B, "special_bessel_j0", TT_SP_J0) S2(B, "special_bessel_j1", TT_SP_J1)
    S2(B, "special_bessel_y0", TT_SP_Y0) S2(B, "special_bessel_y1", TT_SP_Y1)
    S2(B, "special_spherical_bessel_j0", TT_SP_SPH_J0) S2(B, "special_airy_ai", TT_SP_AIRY_AI)
    SP("chebyshev_polynomial_t", TT_SP_CHEB_T) SP("chebyshev_polynomial_u", TT_SP_CHEB_U)
    SP("chebyshev_polynomial_v", TT_SP_CHEB_V) SP("chebyshev_polynomial_w", TT_SP_CHEB_W)
    SP("shifted_chebyshev_polynomial_t", TT_SP_SCHEB_T)
    SP("shifted_chebyshev_polynomial_u", TT_SP_SCHEB_U)
    SP("shifted_chebyshev_polynomial_v", TT_SP_SCHEB_V)
    SP("shifted_chebyshev_polynomial_w", TT_SP_SCHEB_W)
    SP("hermite_polynomial_h", TT_SP_HERMITE_H) SP("hermite_polynomial_he", TT_SP_HERMITE_HE)
    SP("laguerre_polynomial_l", TT_SP_LAGUERRE) SP("legendre_polynomial_p", TT_SP_LEGENDRE)
    S2(M, "special_ndtri", TT_SP_NDTRI) S2(M, "special_log_ndtr", TT_SP_LOG_NDTR)
    S2(M, "special_erfcx", TT_SP_ERFCX) S2(M, "special_entr", TT_SP_ENTR)
    S3(M, "sinc", TT_SP_SINC) S2(M, "angle", TT_SP_ANGLE) S3(M, "logit", TT_SP_LOGIT)
    {"aten::logit_backward", M, TT_SP_LOGIT_BWD, 0},
    {"aten::logit_backward.grad_input", M, TT_SP_LOGIT_BWD, 0},
    SX(M, "special_xlog1py", "self", "other", TT_SP_XLOG1PY)
    S3(M, "nextafter", TT_SP_NEXTAFTER)
    {"aten::frexp.Tensor", M, TT_SP_FREXP, 0},
    {"aten::frexp.Tensor_out", M, TT_SP_FREXP, 0},
    S3(M, "gcd", TT_SP_GCD) S3(M, "lcm", TT_SP_LCM)
    S3(G, "polygamma", TT_SP_POLYGAMMA) S3(G, "mvlgamma", TT_SP_MVLGAMMA)
    SX(G, "special_zeta", "self", "other", TT_SP_ZETA)
    S3(I, "igamma", TT_SP_IGAMMA) S3(I, "igammac", TT_SP_IGAMMAC)
    /* factories whose ATen kernel is a device stub (kaiser_window_stub); param: the overload */
    {"aten::kaiser_window", tt__sp_lower_kaiser_window, 0, 0},
    {"aten::kaiser_window.periodic", tt__sp_lower_kaiser_window, 1, 0},
    {"aten::kaiser_window.beta", tt__sp_lower_kaiser_window, 2, 0},
};
const int tt_lower_special_count = TT_TABLE_COUNT(tt_lower_special);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_special_facts[] = {
    TT_FACT("aten::angle", TT_LF_COMPLEX | TT_LF_OUT_RESIZE_CONTIGUOUS_COMPLEX), TT_FACT("aten::sinc", TT_LF_COMPLEX),
    TT_FACT("aten::sinc_", TT_LF_COMPLEX),
};
const int tt_lower_special_facts_count = TT_TABLE_COUNT(tt_lower_special_facts);
