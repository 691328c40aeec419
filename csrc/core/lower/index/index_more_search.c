/* Searching and counting: bucketize, searchsorted, isin, histc, histogram,
 * histogramdd.
 * Searches are unrolled binary searches (one gather per halving) with CPU's
 * exact predicates, so NaN values and NaN boundaries land where CPU puts
 * them; isin sorts the test elements and searches them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../elementwise/lower_elementwise.h"
#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"

static tt_val_t kl(tt_shlo_fn_t* f, tt_val_t like, double v) { return tt_shlo_const(f, tt_shlo_type(f, like), v); }
static tt_val_t bin(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b) { return tt_l_binary(f, op, a, b); }

/* For each value of v (B, K), the first position i in [lo, hi) (i64, B x K)
 * of the row of seq (B, M) where go_right(seq[i], v) fails, else hi;
 * go_right(s, v) = !(s dir v) when negate else (s dir v). The probes are
 * std::upper_bound's / lower_bound's (mid = lo + (hi - lo) / 2), `halvings`
 * of them, enough for the longest [lo, hi). CPU's lower bound is
 * !(s >= v), its upper bound !(s > v). */
static tt_val_t search_range(tt_shlo_fn_t* f, tt_val_t seq, tt_val_t v, tt_val_t lo, tt_val_t hi, int64_t longest,
                             const char* dir, bool negate) {
  int64_t m = tt__sh_type(f, seq).dims[1];
  if (m == 0) return lo;
  tt_type_t it = tt__sh_type(f, lo);
  tt_val_t top = tt_shlo_const_i64(f, &it, m - 1), zero = tt_shlo_const(f, &it, 0.0);
  tt_val_t one = tt_shlo_const(f, &it, 1.0), two = tt_shlo_const(f, &it, 2.0);
  for (int64_t left = longest; left > 0; left /= 2) {
    tt_val_t active = tt_l_compare(f, "LT", lo, hi);
    tt_val_t mid = bin(f, "stablehlo.divide", bin(f, "stablehlo.add", lo, hi), two);
    mid = bin(f, "stablehlo.maximum", bin(f, "stablehlo.minimum", mid, top), zero);
    tt_val_t sv = tt_lt_gather_dim(f, seq, 1, mid);
    tt_val_t go = tt_l_compare(f, dir, sv, v);
    if (negate) go = tt_l_unary(f, "stablehlo.not", go);
    tt_val_t gr = bin(f, "stablehlo.and", active, go);
    tt_val_t gl = bin(f, "stablehlo.and", active, tt_l_unary(f, "stablehlo.not", go));
    lo = tt_l_select(f, gr, bin(f, "stablehlo.add", mid, one), lo);
    hi = tt_l_select(f, gl, mid, hi);
  }
  return lo;
}

/* search_range over whole rows: [0, M) for every value. */
static tt_val_t search_rows(tt_shlo_fn_t* f, tt_val_t seq, tt_val_t v, const char* dir, bool negate) {
  int64_t m = tt__sh_type(f, seq).dims[1];
  tt_type_t it = tt__sh_type(f, v);
  it.dtype = TT_I64;
  return search_range(f, seq, v, tt_shlo_const(f, &it, 0.0), tt_shlo_const_i64(f, &it, m), m, dir, negate);
}

/* searchsorted(sorted_sequence, self, out_int32, right, side, sorter) (and
 * its Scalar forms); param 1: bucketize(self, boundaries, out_int32,
 * right) (and bucketize.Scalar). */
static tt_status_t lower_search(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  bool bucket = c->op->param == 1;
  int iseq = bucket ? 1 : 0, ival = bucket ? 0 : 1;
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t seq = c->args[iseq].val, v = c->args[ival].val;
  tt_type_t st = tt__sh_type(f, seq), vt = tt__sh_type(f, v);
  bool right = c->args[3].kind == TT_ARG_BOOL && c->args[3].i;
  if (!bucket && c->args[4].kind == TT_ARG_STR && c->args[4].str) right = !strcmp(c->args[4].str, "right");
  if (st.rank == 0) return tt_status_make(TT_INVALID_ARGUMENT, "%s: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match", c->op->name);
  if (!bucket && c->args[5].kind == TT_ARG_TENSOR && c->args[5].val != TT_SHLO_INVALID) {
    tt_val_t so = tt_lt_fix_index_checked(f, c->args[5].val, st.dims[st.rank - 1], TT_INTERNAL,
                                          "searchsorted(): sorter index out of range");
    seq = tt_lt_gather_dim(f, seq, st.rank - 1, so);
  }
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  int pi[2] = {iseq, ival};
  tt_dtype_t cdt = tt_l_promote(c, pi, 2); /* CPU compares in the common dtype */
  int64_t m = st.dims[st.rank - 1];
  int64_t b = tt_type_numel(&st) / (m ? m : 1);
  if (m == 0) b = st.rank == 1 ? 1 : tt_type_numel(&vt) / (vt.rank ? vt.dims[vt.rank - 1] : 1);
  int64_t k = tt_type_numel(&vt) / (b ? b : 1);
  int64_t s2[2] = {b, m}, v2[2] = {b, k};
  seq = tt_l_reshape(f, tt_l_convert(f, seq, cdt), 2, s2);
  v = tt_l_reshape(f, tt_l_convert(f, v, cdt), 2, v2);
  tt_val_t r = search_rows(f, seq, v, right ? "GT" : "GE", true);
  return tt_l_set_out(c, 0, tt_l_reshape(f, r, ot->rank, ot->dims));
}

/* isin(elements, test_elements, assume_unique, invert) (+ Scalar forms):
 * the test elements sorted (NaN last), each element's lower bound in them,
 * and an equality test there. */
static tt_status_t lower_isin(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  bool invert = c->args[3].kind == TT_ARG_BOOL && c->args[3].i;
  int idx[2] = {0, 1};
  tt_dtype_t cdt = tt_l_promote(c, idx, 2);
  tt_val_t e = tt_l_convert(f, c->args[0].val, cdt), t = tt_l_convert(f, c->args[1].val, cdt);
  tt_type_t et = tt__sh_type(f, e), tt = tt__sh_type(f, t);
  int64_t ne = tt_type_numel(&et), nt = tt_type_numel(&tt);
  if (ne == 0 || nt == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, invert ? 1.0 : 0.0));
  t = tt_l_reshape(f, t, 1, &nt);
  tt_type_t sv = tt_type_scalar(cdt);
  tt_type_t bt[2] = {sv, sv};
  tt_val_t a[2];
  tt_shlo_region_begin(f, bt, 2, a);
  tt_val_t lt = tt_l_compare(f, "LT", a[0], a[1]);
  if (tt_dtype_is_float(cdt)) { /* total order: NaN after everything */
    tt_val_t an = tt_l_compare(f, "NE", a[0], a[0]), bn = tt_l_compare(f, "NE", a[1], a[1]);
    lt = bin(f, "stablehlo.or", lt, bin(f, "stablehlo.and", bn, tt_l_unary(f, "stablehlo.not", an)));
  }
  char* region = tt_shlo_region_end(f, &lt, 1);
  tt_type_t t1 = tt__sh_type(f, t);
  tt_val_t sorted;
  tt_shlo_op_multi(f, "stablehlo.sort", &t, 1, &t1, 1, "dimension = 0 : i64, is_stable = false", region, &sorted);
  int64_t s2[2] = {1, nt}, v2[2] = {1, ne};
  tt_val_t seq = tt_l_reshape(f, sorted, 2, s2), v = tt_l_reshape(f, e, 2, v2);
  tt_val_t pos = search_rows(f, seq, v, "LT", false);
  pos = bin(f, "stablehlo.minimum", pos, kl(f, pos, (double)(nt - 1)));
  tt_val_t hit = tt_l_compare(f, invert ? "NE" : "EQ", tt_lt_gather_dim(f, seq, 1, pos), v);
  return tt_l_set_out(c, 0, tt_l_reshape(f, hit, ot->rank, ot->dims));
}

/* A device-side check that raises `msg` when lo or hi (0-d) is NaN or infinite
 * (CPU's histc / histogram refuse such a range, also the data's own). */
static void check_finite_range(tt_shlo_fn_t* f, tt_val_t lo, tt_val_t hi, const char* msg) {
  tt_val_t inf = kl(f, lo, INFINITY);
  tt_val_t bad = bin(f, "stablehlo.or", tt_l_compare(f, "NE", lo, lo), tt_l_compare(f, "NE", hi, hi));
  bad = bin(f, "stablehlo.or", bad, tt_l_compare(f, "EQ", tt_l_unary(f, "stablehlo.abs", lo), inf));
  bad = bin(f, "stablehlo.or", bad, tt_l_compare(f, "EQ", tt_l_unary(f, "stablehlo.abs", hi), inf));
  tt_shlo_add_check(f, bad, TT_INTERNAL, msg);
}

/* histc of an integer tensor: CPU refuses it, CUDA (and so the device)
 * computes it: min and max truncated to integers, the data's range when they
 * are equal (widened by 1 each way if still empty), the bin of x is
 * (x - min) * bins / (max - min) in 64-bit integer arithmetic (exact, no
 * rounding), elements equal to max go to the last bin, elements outside are
 * ignored; the counts have self's dtype. (Transformers' MoE layers count
 * tokens per expert this way on every device but CPU.) */
static tt_status_t lower_histc_int(tt_lctx_t* c, tt_val_t x, int64_t bins, int64_t n) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t lo = tt_lt_scalar(c, 2, TT_I64), hi = tt_lt_scalar(c, 3, TT_I64);
  if (n == 0) {
    tt_shlo_add_check(f, tt_l_compare(f, "GT", lo, hi), TT_INTERNAL, "torch.histc: max must be larger than min");
    return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  }
  tt_val_t flat = tt_l_convert(f, tt_l_reshape(f, x, 1, &n), TT_I64);
  tt_val_t same = tt_l_compare(f, "EQ", lo, hi);
  lo = tt_l_select(f, same, tt_lt_extreme(f, flat, 1u, false), lo);
  hi = tt_l_select(f, same, tt_lt_extreme(f, flat, 1u, true), hi);
  same = tt_l_compare(f, "EQ", lo, hi);
  lo = tt_l_select(f, same, bin(f, "stablehlo.subtract", lo, kl(f, lo, 1.0)), lo);
  hi = tt_l_select(f, same, bin(f, "stablehlo.add", hi, kl(f, hi, 1.0)), hi);
  tt_shlo_add_check(f, tt_l_compare(f, "GE", lo, hi), TT_INTERNAL, "torch.histc: max must be larger than min");
  tt_val_t l = tt_lt_splat(f, lo, 1, &n), r = tt_lt_splat(f, hi, 1, &n);
  tt_val_t pos = bin(f, "stablehlo.multiply", bin(f, "stablehlo.subtract", flat, l), kl(f, flat, (double)bins));
  /* the range's width is >= 1 here (a device-side check above refuses the
   * rest); max(width, 1) keeps the division defined before that check acts */
  tt_val_t w = bin(f, "stablehlo.subtract", r, l);
  w = bin(f, "stablehlo.maximum", w, kl(f, w, 1.0));
  tt_val_t p = bin(f, "stablehlo.divide", pos, w);
  p = bin(f, "stablehlo.minimum", p, kl(f, p, (double)(bins - 1)));
  tt_val_t in = bin(f, "stablehlo.and", tt_l_compare(f, "GE", flat, l), tt_l_compare(f, "LE", flat, r));
  p = tt_l_select(f, in, p, kl(f, p, (double)bins)); /* ignored elements land in slot `bins` */
  int64_t nb1 = bins + 1, id2[2] = {n, 1}, ins[1] = {0};
  tt_type_t ones = tt_type_make(TT_I64, 1, &n);
  tt_val_t h = tt_lt_scatter(f, tt_l_full(f, TT_I64, 1, &nb1, 0.0), tt_l_reshape(f, p, 2, id2),
                             tt_shlo_const(f, &ones, 1.0), NULL, 0, ins, 1, ins, 1, 1, "stablehlo.add");
  return tt_l_set_out(c, 0, tt_l_convert(f, tt_lt_slice_dim(f, h, 0, 0, bins), ot->dtype));
}

/* histc(self, bins, min, max): CPU's linear binning over [min, max] (the
 * data's range when min == max, widened by 1 each way if still empty);
 * elements outside are ignored, elements equal to max go to the last bin.
 * pos = (x - min) * bins / (max - min) is computed, rounded op by op, in
 * self's dtype as on CPU. Counts accumulate in f32 for half types (CPU sums
 * per-thread partial histograms in the half type; one long half-precision
 * sum would stall at 256 for bfloat16). */
static tt_status_t lower_histc(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t x = c->args[0].val;
  tt_type_t xt = tt__sh_type(f, x);
  tt_dtype_t dt = xt.dtype;
  if (dt == TT_BOOL || tt_dtype_is_complex(dt))
    return tt_status_make(TT_INVALID_ARGUMENT, "\"histc\" not implemented for '%s'", tt_dtype_name(dt));
  int64_t bins = c->args[1].i, n = tt_type_numel(&xt);
  if (bins <= 0) return tt_status_make(TT_INTERNAL, "torch.histc(): bins must be > 0, but got %lld for dimension 0", (long long)bins);
  if (!tt_dtype_is_float(dt)) return lower_histc_int(c, x, bins, n);
  tt_val_t lo = tt_lt_scalar(c, 2, TT_F64), hi = tt_lt_scalar(c, 3, TT_F64);
  if (n > 0) {
    tt_val_t flat = tt_l_reshape(f, x, 1, &n);
    tt_val_t dmin = tt_l_convert(f, tt_lt_extreme(f, flat, 1u, false), TT_F64);
    tt_val_t dmax = tt_l_convert(f, tt_lt_extreme(f, flat, 1u, true), TT_F64);
    tt_val_t same = tt_l_compare(f, "EQ", lo, hi);
    lo = tt_l_select(f, same, dmin, lo);
    hi = tt_l_select(f, same, dmax, hi);
  }
  tt_val_t same = tt_l_compare(f, "EQ", lo, hi);
  lo = tt_l_select(f, same, bin(f, "stablehlo.subtract", lo, kl(f, lo, 1.0)), lo);
  hi = tt_l_select(f, same, bin(f, "stablehlo.add", hi, kl(f, hi, 1.0)), hi);
  check_finite_range(f, lo, hi, "torch.histc: range of [min, max] is not finite");
  tt_shlo_add_check(f, tt_l_compare(f, "GE", lo, hi), TT_INTERNAL, "torch.histc: max must be larger than min");
  int64_t nb1 = bins + 1;
  if (n == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_val_t flat = tt_l_reshape(f, x, 1, &n);
  tt_dtype_t cdt = tt_l_opmath(dt);
  tt_val_t l = tt_lt_splat(f, tt_l_convert(f, tt_l_convert(f, lo, dt), cdt), 1, &n);
  tt_val_t r = tt_lt_splat(f, tt_l_convert(f, tt_l_convert(f, hi, dt), cdt), 1, &n);
  tt_val_t xc = tt_l_convert(f, flat, cdt);
#define RND(v) tt_l_convert(f, tt_l_convert(f, (v), dt), cdt)
  tt_val_t pos = RND(bin(f, "stablehlo.subtract", xc, l));
  pos = RND(bin(f, "stablehlo.multiply", pos, kl(f, pos, (double)bins)));
  pos = RND(bin(f, "stablehlo.divide", pos, RND(bin(f, "stablehlo.subtract", r, l))));
#undef RND
  tt_val_t p = tt_l_convert(f, pos, TT_I64);
  p = bin(f, "stablehlo.minimum", p, kl(f, p, (double)(bins - 1)));
  tt_val_t in = bin(f, "stablehlo.and", tt_l_compare(f, "GE", xc, l), tt_l_compare(f, "LE", xc, r));
  p = tt_l_select(f, in, p, kl(f, p, (double)bins)); /* ignored elements land in slot `bins` */
  int64_t id2[2] = {n, 1}, ins[1] = {0};
  tt_type_t ones = tt_type_make(cdt, 1, &n);
  tt_val_t h = tt_lt_scatter(f, tt_l_full(f, cdt, 1, &nb1, 0.0), tt_l_reshape(f, p, 2, id2), tt_shlo_const(f, &ones, 1.0),
                             NULL, 0, ins, 1, ins, 1, 1, "stablehlo.add");
  return tt_l_set_out(c, 0, tt_lt_slice_dim(f, h, 0, 0, bins));
}

/* ---- histogram / histogramdd (CPU's histogramdd kernel) ----
 * Each point counts (or adds its weight) in the bin whose edges hold it in
 * every dimension, the last bin closed on the right, points outside the edges
 * ignored; bins found as CPU's kernel finds them (bin_of). Counts and weights
 * add up in the data's dtype (f32 for half types): weighted sums equal CPU's
 * bit for bit where they are exact in any order (CPU sums per-thread partial
 * histograms, split by the host's thread count). */

/* [lo, hi] (f64 0-d) of dimension k as CPU's select_outer_bin_edges picks
 * it: the range when given (rng: 2 values), else the data's [min, max] (col:
 * n values), else [0, 1]; checked finite and ordered (device-side, CPU's
 * messages less the values), then widened by 0.5 each way when empty. */
static void outer_edges(tt_shlo_fn_t* f, int k, const tt_val_t* rng, tt_val_t col, int64_t n, tt_val_t* plo,
                        tt_val_t* phi) {
  tt_val_t lo, hi;
  if (rng) {
    lo = tt_l_convert(f, rng[0], TT_F64);
    hi = tt_l_convert(f, rng[1], TT_F64);
  } else if (n > 0) {
    lo = tt_l_convert(f, tt_lt_extreme(f, col, 1u, false), TT_F64);
    hi = tt_l_convert(f, tt_lt_extreme(f, col, 1u, true), TT_F64);
  } else { /* CPU: [0, 1] for an empty input */
    lo = tt_lt_const0(f, TT_F64, 0.0);
    hi = tt_lt_const0(f, TT_F64, 1.0);
  }
  char msg[96];
  snprintf(msg, sizeof msg, "torch.histogramdd: dimension %d's range is not finite", k);
  check_finite_range(f, lo, hi, msg);
  snprintf(msg, sizeof msg, "torch.histogramdd: min should not exceed max for dimension %d", k);
  tt_shlo_add_check(f, tt_l_compare(f, "GT", lo, hi), TT_INTERNAL, msg);
  tt_val_t same = tt_l_compare(f, "EQ", lo, hi);
  *plo = tt_l_select(f, same, bin(f, "stablehlo.subtract", lo, kl(f, lo, 0.5)), lo);
  *phi = tt_l_select(f, same, bin(f, "stablehlo.add", hi, kl(f, hi, 0.5)), hi);
}

/* ---- linspace as CPU computes it, bit for bit ----
 * CPU's linspace (RangeFactoriesKernel.cpp) steps from both ends,
 * start + step * i for i < ne / 2, else end - step * (ne - 1 - i), and its
 * compiler fuses each into one FMA: a single rounding of the exact value.
 * StableHLO has no FMA, so the exact value is rebuilt from error-free parts
 * (every product below is exact, so a backend's own FMA fusion changes
 * nothing) and rounded once, through round-to-odd (Boldo and Melquiond,
 * "Emulation of FMA and correctly rounded sums: proved algorithms using
 * rounding to odd", IEEE TC 2008). */

static tt_val_t bitcast(tt_shlo_fn_t* f, tt_val_t v, tt_dtype_t dt) {
  tt_type_t t = tt__sh_type(f, v);
  t.dtype = dt;
  return tt_shlo_op(f, "stablehlo.bitcast_convert", &v, 1, &t, NULL);
}

/* x + y = *s + *err exactly, *s = RN(x + y) (Knuth's TwoSum). */
static void two_sum(tt_shlo_fn_t* f, tt_val_t x, tt_val_t y, tt_val_t* s, tt_val_t* err) {
  *s = bin(f, "stablehlo.add", x, y);
  tt_val_t yy = bin(f, "stablehlo.subtract", *s, x), xx = bin(f, "stablehlo.subtract", *s, yy);
  *err = bin(f, "stablehlo.add", bin(f, "stablehlo.subtract", x, xx), bin(f, "stablehlo.subtract", y, yy));
}

/* x + y (f64) rounded to odd: RN(x + y) when exact, else whichever of its
 * neighbours around the exact sum has an odd last bit. */
static tt_val_t add_round_odd(tt_shlo_fn_t* f, tt_val_t x, tt_val_t y) {
  tt_val_t s, err;
  two_sum(f, x, y, &s, &err);
  tt_val_t bits = bitcast(f, s, TT_I64), zero = kl(f, s, 0.0);
  tt_val_t even = tt_l_compare(f, "EQ", bin(f, "stablehlo.and", bits, kl(f, bits, 1.0)), kl(f, bits, 0.0));
  tt_val_t fix = bin(f, "stablehlo.and", even, tt_l_compare(f, "NE", err, zero));
  /* away from zero when err has s's sign: one more unit of the magnitude */
  tt_val_t away = tt_l_compare(f, "EQ", tt_l_compare(f, "GT", s, zero), tt_l_compare(f, "GT", err, zero));
  tt_val_t moved = bin(f, "stablehlo.add", bits, tt_l_select(f, away, kl(f, bits, 1.0), kl(f, bits, -1.0)));
  return tt_l_select(f, fix, bitcast(f, moved, TT_F64), s);
}

/* Largest half of a linspace whose index times a half-width f64 step stays
 * exact (26 + 27 bits). */
#define LINSPACE_MAX_EDGES ((int64_t)1 << 27)

/* linspace(lo, hi, ne) (lo, hi: f64 0-d, converted to dt first as CPU's
 * Scalar::to does) in dt, returned in cdt. f32 / f64: CPU's fused
 * rounding; other float types: CPU's formula, rounded op by op in cdt. */
static tt_val_t linear_edges(tt_shlo_fn_t* f, tt_val_t lo, tt_val_t hi, int64_t ne, tt_dtype_t dt, tt_dtype_t cdt) {
  tt_val_t s0 = tt_l_convert(f, lo, dt), e0 = tt_l_convert(f, hi, dt);
  if (ne <= 1) {
    tt_type_t et = tt_type_make(cdt, 1, &ne);
    return ne == 0 ? tt_shlo_const(f, &et, 0.0) : tt_l_reshape(f, tt_l_convert(f, s0, cdt), 1, &ne);
  }
  if (dt != TT_F32 && dt != TT_F64) {
    s0 = tt_l_convert(f, s0, cdt);
    e0 = tt_l_convert(f, e0, cdt);
    tt_val_t step = bin(f, "stablehlo.divide", bin(f, "stablehlo.subtract", e0, s0), tt_lt_const0(f, cdt, (double)(ne - 1)));
    tt_val_t i = tt_lt_iota(f, cdt, 1, &ne, 0), stb = tt_lt_splat(f, step, 1, &ne);
    tt_val_t a = bin(f, "stablehlo.add", tt_lt_splat(f, s0, 1, &ne), bin(f, "stablehlo.multiply", stb, i));
    tt_val_t back = bin(f, "stablehlo.subtract", kl(f, i, (double)(ne - 1)), i);
    tt_val_t b = bin(f, "stablehlo.subtract", tt_lt_splat(f, e0, 1, &ne), bin(f, "stablehlo.multiply", stb, back));
    tt_val_t edges = tt_l_select(f, tt_l_compare(f, "LT", i, kl(f, i, (double)(ne / 2))), a, b);
    return tt_l_convert(f, tt_l_convert(f, edges, dt), cdt);
  }
  /* step in dt, as CPU: (end - start) / (steps - 1), a true division (XLA
   * multiplies by the reciprocal of a visible constant) */
  tt_val_t step = tt__ew_divk(f, bin(f, "stablehlo.subtract", e0, s0), (double)(ne - 1));
  tt_val_t i = tt_lt_iota(f, TT_F64, 1, &ne, 0);
  tt_val_t first = tt_l_compare(f, "LT", i, kl(f, i, (double)(ne / 2)));
  tt_val_t k = tt_l_select(f, first, i, bin(f, "stablehlo.subtract", kl(f, i, (double)(ne - 1)), i));
  tt_val_t base = tt_l_select(f, first, tt_lt_splat(f, tt_l_convert(f, s0, TT_F64), 1, &ne),
                              tt_lt_splat(f, tt_l_convert(f, e0, TT_F64), 1, &ne));
  tt_val_t sgn = tt_l_select(f, first, kl(f, i, 1.0), kl(f, i, -1.0)); /* start + or end - */
  tt_val_t step64 = tt_l_convert(f, step, TT_F64), edges;
  if (dt == TT_F32) { /* 24-bit step times a < 2^27 index: exact in f64; RO then RN is RN */
    tt_val_t p = bin(f, "stablehlo.multiply", bin(f, "stablehlo.multiply", tt_lt_splat(f, step64, 1, &ne), k), sgn);
    edges = tt_l_convert(f, add_round_odd(f, base, p), TT_F32);
  } else { /* step = hi + lo halves of 27 and 26 bits: hi * k and lo * k exact */
    tt_val_t sbits = bitcast(f, step64, TT_I64);
    tt_val_t shi = bitcast(f, bin(f, "stablehlo.and", sbits, kl(f, sbits, -67108864.0 /* ~(2^26 - 1) */)), TT_F64);
    tt_val_t slo = bin(f, "stablehlo.subtract", step64, shi);
    tt_val_t p1 = bin(f, "stablehlo.multiply", bin(f, "stablehlo.multiply", tt_lt_splat(f, shi, 1, &ne), k), sgn);
    tt_val_t p2 = bin(f, "stablehlo.multiply", bin(f, "stablehlo.multiply", tt_lt_splat(f, slo, 1, &ne), k), sgn);
    /* RN(base + p1 + p2): Boldo and Melquiond's correctly rounded sum of three */
    tt_val_t uh, ul, th, tl;
    two_sum(f, p1, p2, &uh, &ul);
    two_sum(f, base, uh, &th, &tl);
    edges = bin(f, "stablehlo.add", th, add_round_odd(f, tl, ul));
  }
  return tt_l_convert(f, edges, cdt);
}

/* ---- histogram / histogramdd binning ---- */

/* The bin (i64, n) of edges (ne >= 2, in cdt) holding each of the n values
 * of flat; *in (i1, n) is false for values outside [edges[0], edges[ne - 1]]
 * (NaN). CPU's two searches: upper_bound over all edges (bins given as
 * tensors), or, for linspace edges (linear), the bin (x - first) * nb /
 * (last - first) truncated, then upper_bound over its neighbours only
 * (LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH, computed in the data's dtype).
 * The last bin is closed on the right. */
static tt_val_t bin_of(tt_shlo_fn_t* f, tt_val_t edges, tt_val_t flat, int64_t n, int64_t ne, bool linear, tt_val_t* in) {
  int64_t nb = ne - 1, e2[2] = {1, ne}, v2[2] = {1, n};
  tt_val_t first = tt_lt_splat(f, tt_l_reshape(f, tt_lt_slice_dim(f, edges, 0, 0, 1), 0, NULL), 1, &n);
  tt_val_t last = tt_lt_splat(f, tt_l_reshape(f, tt_lt_slice_dim(f, edges, 0, nb, ne), 0, NULL), 1, &n);
  *in = bin(f, "stablehlo.and", tt_l_compare(f, "GE", flat, first), tt_l_compare(f, "LE", flat, last));
  tt_val_t seq = tt_l_reshape(f, edges, 2, e2), v = tt_l_reshape(f, flat, 2, v2), ub;
  if (linear) {
    tt_val_t x = tt_l_select(f, *in, flat, first); /* outside: any bin, dropped later */
    tt_val_t q = bin(f, "stablehlo.multiply", bin(f, "stablehlo.subtract", x, first), kl(f, x, (double)nb));
    q = bin(f, "stablehlo.divide", q, tt__ew_opaque(f, bin(f, "stablehlo.subtract", last, first)));
    q = bin(f, "stablehlo.minimum", bin(f, "stablehlo.maximum", q, kl(f, q, 0.0)), kl(f, q, (double)ne));
    tt_val_t p = tt_l_reshape(f, tt_l_convert(f, q, TT_I64), 2, v2); /* truncation, as static_cast */
    tt_val_t lo = bin(f, "stablehlo.maximum", bin(f, "stablehlo.subtract", p, kl(f, p, 1.0)), kl(f, p, 0.0));
    tt_val_t hi = bin(f, "stablehlo.minimum", bin(f, "stablehlo.add", p, kl(f, p, 2.0)), kl(f, p, (double)ne));
    ub = search_range(f, seq, v, lo, hi, 3, "GT", true);
  } else {
    ub = search_rows(f, seq, v, "GT", true);
  }
  ub = tt_l_reshape(f, ub, 1, &n);
  tt_val_t pos = bin(f, "stablehlo.subtract", ub, kl(f, ub, 1.0));
  tt_val_t top = tt_l_compare(f, "EQ", pos, kl(f, pos, (double)nb));
  return tt_l_select(f, top, kl(f, pos, (double)(nb - 1)), pos);
}

/* The histogram (cdt, rank d, dims nb[]) of the points pts (n, d) in cdt
 * over edges[d] (ne[k] = nb[k] + 1 each; linear: linspace edges), weighted by w (n values or
 * TT_SHLO_INVALID), divided by its total and then by each dimension's bin
 * widths in turn (CPU's order) when density. */
static tt_val_t histogram_nd(tt_shlo_fn_t* f, tt_val_t pts, int64_t n, int d, const tt_val_t* edges, const int64_t* nb,
                             bool linear, tt_val_t w, bool density, tt_dtype_t cdt) {
  int64_t total = 1;
  for (int k = 0; k < d; k++) total *= nb[k];
  tt_type_t ht = tt_type_make(cdt, d, nb);
  tt_val_t hist = tt_shlo_const(f, &ht, 0.0);
  if (n > 0 && d > 0 && total > 0) {
    tt_val_t idx = TT_SHLO_INVALID, in = TT_SHLO_INVALID;
    int64_t stride = 1;
    for (int k = d - 1; k >= 0; k--) {
      tt_val_t ink, col = tt_l_reshape(f, tt_lt_slice_dim(f, pts, 1, k, k + 1), 1, &n);
      tt_val_t p = bin_of(f, edges[k], col, n, nb[k] + 1, linear, &ink);
      p = bin(f, "stablehlo.multiply", p, kl(f, p, (double)stride));
      idx = k == d - 1 ? p : bin(f, "stablehlo.add", idx, p);
      in = k == d - 1 ? ink : bin(f, "stablehlo.and", in, ink);
      stride *= nb[k];
    }
    idx = tt_l_select(f, in, idx, kl(f, idx, (double)total)); /* ignored: slot total */
    tt_type_t wt = tt_type_make(cdt, 1, &n);
    if (w == TT_SHLO_INVALID) w = tt_shlo_const(f, &wt, 1.0);
    int64_t id2[2] = {n, 1}, ins[1] = {0}, t1 = total + 1;
    tt_val_t h = tt_lt_scatter(f, tt_l_full(f, cdt, 1, &t1, 0.0), tt_l_reshape(f, idx, 2, id2), w, NULL, 0, ins, 1, ins, 1,
                               1, "stablehlo.add");
    hist = tt_l_reshape(f, tt_lt_slice_dim(f, h, 0, 0, total), d, nb);
  }
  if (density) {
    /* true divisions: XLA would multiply by the reciprocal of a broadcast */
    hist = bin(f, "stablehlo.divide", hist, tt__ew_spread_divisor(f, tt_lt_sum(f, hist, (1u << d) - 1u), &ht));
    for (int k = 0; k < d; k++) {
      tt_val_t width = bin(f, "stablehlo.subtract", tt_lt_slice_dim(f, edges[k], 0, 1, nb[k] + 1),
                           tt_lt_slice_dim(f, edges[k], 0, 0, nb[k]));
      int64_t dims1[TT_MAX_RANK];
      for (int j = 0; j < d; j++) dims1[j] = j == k ? nb[k] : 1;
      hist = bin(f, "stablehlo.divide", hist, tt__ew_opaque(f, tt_l_broadcast(f, tt_l_reshape(f, width, d, dims1), d, nb)));
    }
  }
  return hist;
}

/* histogram.bins_tensor(self, bins, weight, density) / .bin_ct(self, bins,
 * range, weight, density) (param 1) -> (hist, bin_edges): histogramdd of
 * self as (n, 1). bin_ct edges: linspace over range, else the data's range,
 * in self's dtype. */
static tt_status_t lower_histogram(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = c->args[0].val;
  tt_type_t xt = tt__sh_type(f, x);
  tt_dtype_t dt = xt.dtype, cdt = tt_l_opmath(dt);
  if (!tt_dtype_is_float(dt))
    return tt_status_make(TT_INVALID_ARGUMENT, "torch.histogram: input tensor and bins tensors should have the same dtype");
  int64_t n = tt_type_numel(&xt), ne = c->out_types[1].dims[0], nb = ne - 1;
  if (ne < 2) return tt_status_make(TT_INVALID_ARGUMENT, "torch.histogram(): bins must be > 0");
  if (ne > LINSPACE_MAX_EDGES) return tt_status_make(TT_INVALID_ARGUMENT, "torch.histogram on tpu: at most 2^27 bin edges");
  tt_val_t flat = tt_l_convert(f, tt_l_reshape(f, x, 1, &n), cdt);
  tt_val_t edges;
  if (c->op->param == 0) {
    edges = tt_l_convert(f, tt_l_reshape(f, c->args[1].val, 1, &ne), cdt);
  } else {
    bool rng = c->args[2].kind == TT_ARG_SCALARS && c->args[2].n == 2;
    tt_val_t lo, hi;
    outer_edges(f, 0, rng ? c->args[2].vals : NULL, flat, n, &lo, &hi);
    edges = linear_edges(f, lo, hi, ne, dt, cdt);
  }
  int wi = 2 + (int)c->op->param;
  tt_val_t w = n > 0 && tt_lt_has(c, wi) ? tt_l_convert(f, tt_l_reshape(f, c->args[wi].val, 1, &n), cdt) : TT_SHLO_INVALID;
  int64_t p2[2] = {n, 1};
  const tt_larg_t* dens = &c->args[3 + c->op->param];
  bool linear = c->op->param == 1 && (dt == TT_F32 || dt == TT_F64);
  tt_val_t hist = histogram_nd(f, tt_l_reshape(f, flat, 2, p2), n, 1, &edges, &nb, linear, w,
                               dens->kind == TT_ARG_BOOL && dens->i, cdt);
  TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, hist));
  return tt_l_set_out(c, 1, edges);
}

/* _histogramdd_bin_edges(self, bins, range, weight, density) (param 0) ->
 * Tensor[], _histogramdd_from_bin_cts (same arguments, param 1) and
 * _histogramdd_from_bin_tensors(self, bins, weight, density) (param 2) ->
 * hist: self is (..., d) points, weight (...). Int bins: edges linspace over
 * range[2k:2k+2], else the data's range in dimension k. Output shapes from
 * the bridge's meta rule. */
static tt_status_t lower_histogramdd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = c->args[0].val;
  tt_type_t xt = tt__sh_type(f, x);
  tt_dtype_t dt = xt.dtype, cdt = tt_l_opmath(dt);
  if (dt != TT_F32 && dt != TT_F64)
    return tt_status_make(TT_INVALID_ARGUMENT, "\"histogramdd\" not implemented for '%s'", tt_dtype_name(dt));
  int64_t param = c->op->param;
  if (xt.rank < 2) return tt_status_make(TT_INVALID_ARGUMENT, "torch.histogramdd: input tensor should have at least 2 dimensions");
  int d = (int)xt.dims[xt.rank - 1];
  int nbins = c->args[1].n;
  if (d != nbins || d > TT_MAX_RANK)
    return tt_status_make(TT_INVALID_ARGUMENT, "histogramdd: The size of bins must be equal to the innermost dimension of the input.");
  int64_t n = d > 0 ? tt_type_numel(&xt) / d : 0, p2[2] = {n, d}, nb[TT_MAX_RANK];
  tt_val_t pts = tt_l_convert(f, tt_l_reshape(f, x, 2, p2), cdt), edges[TT_MAX_RANK];
  for (int k = 0; k < d; k++) {
    if (param == 2) {
      tt_type_t et = tt__sh_type(f, c->args[1].vals[k]);
      if (et.dtype != dt || et.rank != 1 || et.dims[0] < 1)
        return tt_status_make(TT_INVALID_ARGUMENT, "torch.histogramdd: bins tensors should be 1-D, non-empty, of the input's dtype");
      nb[k] = et.dims[0] - 1;
      edges[k] = tt_l_convert(f, c->args[1].vals[k], cdt);
      continue;
    }
    const tt_larg_t* r = &c->args[2];
    if (r->kind == TT_ARG_SCALARS && r->n != 2 * d)
      return tt_status_make(TT_INVALID_ARGUMENT, "torch.histogramdd: for a %d-dimensional histogram range should have %d elements, but got %d",
                            d, 2 * d, r->n);
    /* _histogramdd_bin_edges: linspace(lo, hi, bins + 1) as on CPU, which
     * accepts bins 0 and -1 (one edge, none); the histogram refuses them */
    nb[k] = c->args[1].ints[k];
    if (nb[k] < -1) return tt_status_make(TT_INVALID_ARGUMENT, "number of steps must be non-negative");
    if (param == 1 && nb[k] <= 0)
      return tt_status_make(TT_INVALID_ARGUMENT, "torch.histogram(): bins must be > 0, but got %lld for dimension %d", (long long)nb[k], k);
    if (nb[k] + 1 > LINSPACE_MAX_EDGES) return tt_status_make(TT_INVALID_ARGUMENT, "torch.histogramdd on tpu: at most 2^27 bin edges per dimension");
    tt_val_t lo, hi, col = tt_l_reshape(f, tt_lt_slice_dim(f, pts, 1, k, k + 1), 1, &n);
    outer_edges(f, k, r->kind == TT_ARG_SCALARS ? r->vals + 2 * k : NULL, col, n, &lo, &hi);
    edges[k] = linear_edges(f, lo, hi, nb[k] + 1, dt, cdt);
  }
  if (param == 0) {
    if (c->nout != d) return tt_status_make(TT_INTERNAL, "_histogramdd_bin_edges: %d outputs for %d dimensions", c->nout, d);
    for (int k = 0; k < d; k++) TT_RETURN_IF_ERROR(tt_l_set_out(c, k, tt_l_convert(f, edges[k], dt)));
    return NULL;
  }
  int wi = param == 2 ? 2 : 3;
  tt_val_t w = TT_SHLO_INVALID;
  if (n > 0 && tt_lt_has(c, wi)) {
    tt_type_t wt = tt__sh_type(f, c->args[wi].val);
    if (wt.dtype != dt || tt_type_numel(&wt) != n)
      return tt_status_make(TT_INVALID_ARGUMENT, "torch.histogramdd: weight should have the input's dtype and shape less its innermost dimension");
    w = tt_l_convert(f, tt_l_reshape(f, c->args[wi].val, 1, &n), cdt);
  }
  const tt_larg_t* dens = &c->args[wi + 1];
  tt_val_t hist = histogram_nd(f, pts, n, d, edges, nb, param != 2, w, dens->kind == TT_ARG_BOOL && dens->i, cdt);
  return tt_l_set_out(c, 0, tt_l_convert(f, hist, dt));
}

#define R(name, fn, param) {"aten::" name, fn, param, 0}

const tt_lower_entry_t tt_lower_index_more_search[] = {
    R("searchsorted.Tensor", lower_search, 0), R("searchsorted.Tensor_out", lower_search, 0),
    R("searchsorted.Scalar", lower_search, 0), R("searchsorted.Scalar_out", lower_search, 0),
    R("bucketize.Tensor", lower_search, 1), R("bucketize.Tensor_out", lower_search, 1),
    R("bucketize.Scalar", lower_search, 1),
    R("isin.Tensor_Tensor", lower_isin, 0), R("isin.Tensor_Tensor_out", lower_isin, 0),
    R("isin.Tensor_Scalar", lower_isin, 0), R("isin.Tensor_Scalar_out", lower_isin, 0),
    R("isin.Scalar_Tensor", lower_isin, 0), R("isin.Scalar_Tensor_out", lower_isin, 0),
    R("histc", lower_histc, 0), R("histc.out", lower_histc, 0),
    R("histogram.bins_tensor", lower_histogram, 0), R("histogram.bins_tensor_out", lower_histogram, 0),
    R("histogram.bin_ct", lower_histogram, 1), R("histogram.bin_ct_out", lower_histogram, 1),
    R("_histogramdd_bin_edges", lower_histogramdd, 0), R("_histogramdd_bin_edges.out", lower_histogramdd, 0),
    R("_histogramdd_from_bin_cts", lower_histogramdd, 1), R("_histogramdd_from_bin_cts.out", lower_histogramdd, 1),
    R("_histogramdd_from_bin_tensors", lower_histogramdd, 2), R("_histogramdd_from_bin_tensors.out", lower_histogramdd, 2),
};
const int tt_lower_index_more_search_count = TT_TABLE_COUNT(tt_lower_index_more_search);
