/* Internal to core/lower: the `special` family (special.c holds the ATen
 * table, special_util.c the shared helpers; special_bessel.c, special_poly.c,
 * special_misc.c, special_gamma.c and special_igamma.c each hold the parallel table of builders
 * for their range of tt__sp_op_t). Every row's param is a tt__sp_op_t.
 * Builders emit the same piecewise approximations PyTorch's CPU kernels use
 * (Cephes-style polynomials), evaluated in the dtype CPU evaluates in (f32
 * for f32/f16/bf16/integer inputs, f64 for f64), so results agree to a few
 * ulp. Builder failures surface at tt_shlo_fn_finish. Reentrant. */
#ifndef TT_SPECIAL_UTIL_H_
#define TT_SPECIAL_UTIL_H_

#include "../elementwise/lower_elementwise.h"
#include "../lower_loop.h"
#include "../lower_tensor_util.h"

typedef enum tt__sp_op {
  /* special_bessel.c: one float input */
  TT_SP_I0, TT_SP_I0E, TT_SP_I1, TT_SP_I1E, TT_SP_MOD_I0, TT_SP_MOD_I1, TT_SP_MOD_K0,
  TT_SP_MOD_K1, TT_SP_SCALED_K0, TT_SP_SCALED_K1, TT_SP_J0, TT_SP_J1, TT_SP_Y0, TT_SP_Y1,
  TT_SP_SPH_J0, TT_SP_AIRY_AI,
  TT_SP_BESSEL_END,
  /* special_poly.c: (x, n) */
  TT_SP_CHEB_T = TT_SP_BESSEL_END, TT_SP_CHEB_U, TT_SP_CHEB_V, TT_SP_CHEB_W, TT_SP_SCHEB_T,
  TT_SP_SCHEB_U, TT_SP_SCHEB_V, TT_SP_SCHEB_W, TT_SP_HERMITE_H, TT_SP_HERMITE_HE,
  TT_SP_LAGUERRE, TT_SP_LEGENDRE,
  TT_SP_POLY_END,
  /* special_misc.c */
  TT_SP_NDTRI = TT_SP_POLY_END, TT_SP_LOG_NDTR, TT_SP_ERFCX, TT_SP_ENTR, TT_SP_SINC,
  TT_SP_ANGLE, TT_SP_LOGIT, TT_SP_LOGIT_BWD, TT_SP_XLOG1PY, TT_SP_NEXTAFTER, TT_SP_FREXP,
  TT_SP_GCD, TT_SP_LCM,
  TT_SP_MISC_END,
  /* special_gamma.c (IGAMMA, IGAMMAC: special_igamma.c) */
  TT_SP_POLYGAMMA = TT_SP_MISC_END, TT_SP_MVLGAMMA, TT_SP_ZETA, TT_SP_IGAMMA, TT_SP_IGAMMAC,
  TT_SP_COUNT
} tt__sp_op_t;

/* The lowering of each file's range. */
tt_status_t tt__sp_lower_bessel(tt_lctx_t* c);
tt_status_t tt__sp_lower_poly(tt_lctx_t* c);
tt_status_t tt__sp_lower_misc(tt_lctx_t* c);
tt_status_t tt__sp_lower_gamma(tt_lctx_t* c);
tt_status_t tt__sp_lower_igamma(tt_lctx_t* c); /* special_igamma.c: TT_SP_IGAMMA, TT_SP_IGAMMAC */
/* special_bessel.c: the kaiser_window factories (param: which overload) */
tt_status_t tt__sp_lower_kaiser_window(tt_lctx_t* c);

/* ---- helpers (special_util.c) ----------------------------------------------- */
/* The float dtype a special function of input dtype `in` computes in: f64
 * for f64, else f32 (integers and f16/bf16 included). */
tt_dtype_t tt__sp_compute(const tt_lctx_t* c, tt_dtype_t in);
/* Arguments idx[0..n) promoted together (PyTorch's result_type), converted to
 * the compute dtype and broadcast to out_types[0]'s shape. *promoted gets the
 * promoted dtype (may be NULL). */
void tt__sp_float_args(tt_lctx_t* c, const int* idx, int n, tt_val_t* vals,
                       tt_dtype_t* promoted);
/* r = c[0]; r = r * z + c[i] for i = 1..n-1 (Horner, Cephes polevl). */
tt_val_t tt__sp_horner(tt_shlo_fn_t* f, tt_val_t z, const double* c, int n);
/* Horner with an implicit leading 1 (Cephes p1evl). */
tt_val_t tt__sp_horner1(tt_shlo_fn_t* f, tt_val_t z, const double* c, int n);
/* Clenshaw sum of a Chebyshev series (Cephes chbevl). */
tt_val_t tt__sp_chbevl(tt_shlo_fn_t* f, tt_val_t z, const double* c, int n);
/* select(pred, a, b) with a splat constant for a. */
tt_val_t tt__sp_where_k(tt_shlo_fn_t* f, tt_val_t pred, double k, tt_val_t b);
tt_val_t tt__sp_and(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
tt_val_t tt__sp_or(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
tt_val_t tt__sp_not(tt_shlo_fn_t* f, tt_val_t a);
tt_val_t tt__sp_abs(tt_shlo_fn_t* f, tt_val_t a);
tt_val_t tt__sp_un(tt_shlo_fn_t* f, const char* op, tt_val_t a);
/* True where |a| is finite (i1). */
tt_val_t tt__sp_isfinite(tt_shlo_fn_t* f, tt_val_t a);

/* Whether any element of an i1 tensor is true (0-d i1). */
tt_val_t tt__sp_any(tt_shlo_fn_t* f, tt_val_t pred);

#endif /* TT_SPECIAL_UTIL_H_ */
