/* matrix_exp as CPU computes it: Taylor approximations of degree 1, 2, 4,
 * 8, 12 and 18 evaluated with few matrix products (Bader, Blanes, Casas,
 * "Computing the matrix exponential with an optimized Taylor polynomial
 * approximation", Mathematics 2019), the degree picked per matrix from its
 * 1-norm, and for large norms degree 18 on A / 2^s followed by s squarings.
 * Every matrix of the batch gets all candidates and a select keeps the one
 * CPU would use (so the result follows CPU's choice, and a NaN norm gives
 * NaN as on CPU). The coefficients are those of the paper, rounded to the
 * compute dtype as CPU's scalar_t constants are. Complex matrices: the same
 * scheme in complex arithmetic, the 1-norm of |z| and the thresholds of the
 * real part's dtype, as on CPU. */
#include <math.h>

#include "../elementwise/lower_elementwise.h"
#include "linalg_util.h"

/* CPU's thresholds on the 1-norm: degree k is used up to theta[k]. */
static const double THETA_F32[6] = {1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                                    5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00};
static const double THETA_F64[6] = {2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                                    4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00};

static const double B12[4][4] = {
    {9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740},
    {5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989},
    {0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230},
    {-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359}};

static const double B18[5][5] = {
    {0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.},
    {0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
     -6.37898194594723280150e-04},
    {-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
     -6.98210122488052056106e-03, 3.34975017086070470649e-05},
    {-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
     2.95552570429315521194e-02, -1.39180257516060693404e-05},
    {0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05}};

static tt_val_t add(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt_l_binary(f, "stablehlo.add", a, b); }
static tt_val_t mm(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b) { return tt__la_matmul(f, a, b); }

/* sum_j coef[j] * m[j], accumulated in order j = 0.. (zero terms skipped). */
static tt_val_t lincomb(tt_shlo_fn_t* f, const tt_val_t* m, const double* coef, int n) {
  tt_val_t acc = TT_SHLO_INVALID;
  for (int j = 0; j < n; j++) {
    if (coef[j] == 0.0) continue;
    tt_type_t t = tt__sh_type(f, m[j]);
    tt_val_t term = coef[j] == 1.0 ? m[j]
                                   : tt_l_binary(f, "stablehlo.multiply", tt_shlo_const(f, &t, coef[j]), m[j]);
    acc = acc == TT_SHLO_INVALID ? term : add(f, acc, term);
  }
  return acc;
}

/* The constants of the degree-8 scheme, evaluated as CPU's constexpr
 * scalar_t expressions are (float operands promote to double, the result
 * rounds to scalar_t). */
static void t8_consts(bool f32, double* x) {
  double s177 = f32 ? (double)(float)0.1330413469565007072504e+2 : 0.1330413469565007072504e+2;
  double x3 = f32 ? (double)(float)(2. / 3.) : 2. / 3.;
  double v[7] = {x3 * ((1. + s177) / 88.), x3 * ((1. + s177) / 352.), x3,
                 (-271. + 29. * s177) / (315. * x3), (-11. + 11. * s177) / (1260. * x3),
                 (-99. + 11. * s177) / (5040. * x3), (89. - s177) / (5040. * x3)};
  for (int i = 0; i < 7; i++) x[i] = f32 ? (double)(float)v[i] : v[i];
  x[7] = f32 ? (double)(float)((857. - 58. * s177) / 630.) : (857. - 58. * s177) / 630.;
}

/* Candidates T1, T2, T4, T8, T12 of a (unscaled) into t[0..4]. */
static void low_degrees(tt_shlo_fn_t* f, tt_val_t eye, tt_val_t a, bool f32, tt_val_t* t) {
  tt_val_t a2 = mm(f, a, a), a3 = mm(f, a, a2);
  tt_val_t p[4] = {eye, a, a2, a3};
  t[0] = add(f, eye, a);
  t[1] = add(f, t[0], lincomb(f, &a2, (const double[]){0.5}, 1));
  tt_val_t m4 = mm(f, a2, lincomb(f, p, (const double[]){1 / 2.0, 1 / 6.0, 1 / 24.0}, 3));
  t[2] = add(f, t[0], m4);
  double x[8];
  t8_consts(f32, x);
  tt_val_t a4 = mm(f, a2, lincomb(f, p + 1, (const double[]){x[0], x[1]}, 2));
  tt_val_t q[4] = {eye, a, a2, a4};
  tt_val_t a8 = mm(f, lincomb(f, (const tt_val_t[]){a2, a4}, (const double[]){x[2], 1.0}, 2),
                   lincomb(f, q, (const double[]){x[3], x[4], x[5], x[6]}, 4));
  tt_val_t r8[5] = {eye, a, a2, a4, a8};
  t[3] = lincomb(f, r8, (const double[]){1.0, 1.0, x[7], 0.0, 1.0}, 5);
  tt_val_t b[4];
  for (int i = 0; i < 4; i++) b[i] = lincomb(f, p, B12[i], 4);
  tt_val_t a6 = add(f, b[2], mm(f, b[3], b[3]));
  t[4] = add(f, b[0], mm(f, add(f, b[1], a6), a6));
}

static tt_val_t degree18(tt_shlo_fn_t* f, tt_val_t eye, tt_val_t a) {
  tt_val_t a2 = mm(f, a, a), a3 = mm(f, a, a2), a6 = mm(f, a3, a3);
  tt_val_t p[5] = {eye, a, a2, a3, a6};
  tt_val_t b[5];
  for (int i = 0; i < 5; i++) b[i] = lincomb(f, p, B18[i], 5);
  tt_val_t a9 = add(f, b[3], mm(f, b[0], b[4]));
  return add(f, b[1], mm(f, add(f, b[2], a9), a9));
}

/* vals: acc, s (batch..., n, n) as i64 broadcast */
static void square_step(tt_shlo_fn_t* f, tt_val_t i, tt_val_t* vals, void* ctx) {
  tt_type_t st = tt__sh_type(f, vals[1]);
  tt_val_t more = tt_l_compare(f, "LT", tt_lt_splat(f, i, st.rank, st.dims), vals[1]);
  vals[0] = tt_l_select(f, more, mm(f, vals[0], vals[0]), vals[0]);
}

/* 2^-s for integer s in [0, max exponent] of dt, exactly (from the bits). */
static tt_val_t pow2_neg(tt_shlo_fn_t* f, tt_val_t s, tt_dtype_t dt) {
  tt_type_t t = tt__sh_type(f, s); /* i64 */
  bool f32 = dt == TT_F32;
  tt_val_t e = tt_l_binary(f, "stablehlo.subtract", tt_shlo_const(f, &t, f32 ? 127.0 : 1023.0), s);
  tt_val_t bits = tt_l_binary(f, "stablehlo.shift_left", e, tt_shlo_const(f, &t, f32 ? 23.0 : 52.0));
  if (f32) bits = tt_l_convert(f, bits, TT_I32);
  tt_type_t rt = t;
  rt.dtype = dt;
  return tt_shlo_op(f, "stablehlo.bitcast_convert", &bits, 1, &rt, NULL);
}

/* linalg_matrix_exp(self) */
tt_status_t tt__la_lower_matrix_exp(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t in = tt_l_arg_dtype(c, 0);
  bool cx = tt_dtype_is_complex(in);
  if (!tt_dtype_is_float(in) && !cx)
    return tt_status_make(TT_INVALID_ARGUMENT, "linalg.matrix_exp: Expected a floating point tensor, got %s",
                          tt_dtype_name(in));
  const tt_type_t* ot = &c->out_types[0];
  int r = ot->rank, nb = r - 2;
  int64_t n = ot->dims[r - 1];
  if (tt__la_empty(ot)) return tt__la_zero_outs(c);
  tt_dtype_t dt = tt_l_opmath(in);
  tt_val_t a = tt_l_convert(f, c->args[0].val, dt);
  if (n == 1)
    return tt_l_set_out(c, 0, cx ? tt__cx_fn(f, TT_U_EXP, a) : tt_l_unary(f, "stablehlo.exponential", a));
  tt_type_t t = tt__sh_type(f, a);
  /* CPU: float thetas and constants for float and complex64 only; the norm,
   * thresholds and scaling are real (rdt), complex values take them as (x, 0) */
  tt_dtype_t rdt = cx ? tt_dtype_real_part(dt) : dt;
  const double* th = rdt == TT_F32 ? THETA_F32 : THETA_F64;
  bool f32 = rdt == TT_F32;
  /* 1-norm: max over columns of the column sums of |a| (complex: the modulus) */
  tt_val_t norm = tt_lt_extreme(f, tt_lt_sum(f, tt_l_cabs(f, a), 1u << (r - 2)), 1u << (r - 2), true);
  tt_type_t bt = tt__sh_type(f, norm);
  int64_t bd[TT_MAX_RANK];
  for (int i = 0; i < nb; i++) bd[i] = i;
  tt_val_t eye = tt__la_eye(f, dt, nb, t.dims, n);
  tt_val_t cand[5];
  low_degrees(f, eye, a, f32, cand);
  /* degree 18 on a * 2^-s, s = max(0, ceil(log2(norm / theta18))), then s squarings */
  /* log / log(2) can be off by an ulp next to powers of two: take its
   * ceiling as a guess and correct it to the smallest k with 2^k >= q,
   * testing with exact power-of-two products */
  tt_val_t q = tt_l_binary(f, "stablehlo.divide", norm, tt_shlo_const(f, &bt, th[5]));
  tt_val_t lg = tt_l_unary(f, "stablehlo.ceil", tt_l_binary(f, "stablehlo.divide", tt_l_unary(f, "stablehlo.log", q),
                                                           tt_shlo_const(f, &bt, log(2.0))));
  tt_type_t it = bt;
  it.dtype = TT_I64;
  double maxe = f32 ? 126.0 : 1022.0;
  tt_val_t okv = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "GT", q, tt_shlo_const(f, &bt, 1.0)),
                             tt_l_compare(f, "LT", lg, tt_shlo_const(f, &bt, maxe)));
  tt_val_t si = tt_l_select(f, okv, tt_l_convert(f, lg, TT_I64), tt_shlo_const(f, &it, 0.0));
  tt_val_t hi = pow2_neg(f, si, rdt); /* 2^-si */
  tt_val_t lo_p = tt_l_binary(f, "stablehlo.multiply", q, tt_l_binary(f, "stablehlo.multiply", hi,
                                                                     tt_shlo_const(f, &bt, 2.0)));
  /* q * 2^-(si-1) <= 1 means 2^(si-1) >= q: one less */
  tt_val_t dec = tt_l_binary(f, "stablehlo.and", tt_l_compare(f, "LE", lo_p, tt_shlo_const(f, &bt, 1.0)),
                             tt_l_compare(f, "GT", si, tt_shlo_const(f, &it, 0.0)));
  tt_val_t inc = tt_l_compare(f, "GT", tt_l_binary(f, "stablehlo.multiply", q, hi), tt_shlo_const(f, &bt, 1.0));
  tt_val_t one = tt_shlo_const(f, &it, 1.0);
  si = tt_l_select(f, dec, tt_l_binary(f, "stablehlo.subtract", si, one), si);
  si = tt_l_select(f, tt_l_binary(f, "stablehlo.and", inc, okv), tt_l_binary(f, "stablehlo.add", si, one), si);
  tt_val_t scale = tt_l_convert(f, tt_lt_bcast_in_dim(f, pow2_neg(f, si, rdt), r, t.dims, bd), dt);
  tt_val_t big = degree18(f, eye, tt_l_binary(f, "stablehlo.multiply", a, scale));
  tt_val_t sb = tt_lt_bcast_in_dim(f, si, r, t.dims, bd);
  tt_val_t smax = tt_lt_extreme(f, si, nb >= 32 ? 0xffffffffu : (1u << nb) - 1u, true);
  tt_val_t v[2] = {big, sb};
  tt_l_fori_dyn(f, nb ? smax : si, v, 2, square_step, NULL);
  big = v[0];
  /* CPU's choice: degree k for theta[k-1] < norm <= theta[k], degree 18 for
   * norm >= theta12 (it wins at equality), NaN otherwise */
  tt_val_t res = tt_shlo_const(f, &t, NAN);
  for (int i = 0; i < 5; i++) {
    tt_val_t in_k = tt_l_compare(f, "LE", norm, tt_shlo_const(f, &bt, th[i]));
    if (i) in_k = tt_l_binary(f, "stablehlo.and", in_k, tt_l_compare(f, "GT", norm, tt_shlo_const(f, &bt, th[i - 1])));
    res = tt_l_select(f, tt_lt_bcast_in_dim(f, in_k, r, t.dims, bd), cand[i], res);
  }
  tt_val_t large = tt_l_compare(f, "GE", norm, tt_shlo_const(f, &bt, th[4]));
  res = tt_l_select(f, tt_lt_bcast_in_dim(f, large, r, t.dims, bd), big, res);
  return tt_l_set_out(c, 0, res);
}
