/* grid_sampler_2d / grid_sampler_3d and their backward ops (bilinear,
 * nearest, bicubic (2-d); padding zeros / border / reflection; align_corners).
 *
 * PyTorch's CPU has two implementations whose roundings differ, and we follow
 * each: 2-d runs a vectorized kernel (unnormalize as (g + 1) * (size / 2) -
 * 0.5, reflection by truncated division, NaN coordinates clipped to 0, corner
 * weights from 1 - frac), 3-d a scalar one (((g + 1) * size - 1) / 2, fmod
 * reflection, weights from (floor + 1) - x). Every sample point becomes a few
 * taps (flat input index, in-bounds mask, weight); a tap reads all channels
 * with one gather from the input laid out (N, Q, C), and the backward pass
 * scatter-adds weight * grad_output into the same places. Computation is in
 * the input dtype, also for float16 / bfloat16: CPU's kernels round every
 * step to the half type, and XLA keeps those roundings. */
#include <stdio.h>
#include <string.h>

#include "../elementwise/lower_elementwise.h"
#include "../lower_tensor_util.h"
#include "../tt_lower_tables.h"

enum { BILINEAR = 0, NEAREST = 1, BICUBIC = 2 };
enum { PAD_ZEROS = 0, PAD_BORDER = 1, PAD_REFLECT = 2 };

typedef struct gs {
  tt_shlo_fn_t* f;
  int nsp, interp, pad;
  bool align, vec; /* vec: the 2-d kernel's formulas */
  tt_dtype_t dt;
  int64_t N, C, P, Q, in[3]; /* in: input spatial sizes (D,) H, W */
  tt_type_t np;              /* (N, P) of dt */
  tt_val_t inp;              /* input as (N, Q, C) */
} gs_t;

#define F g->f
static tt_val_t K(gs_t* g, double v) { return tt_shlo_const(F, &g->np, v); }
static tt_val_t add(gs_t* g, tt_val_t a, tt_val_t b) { return tt_l_binary(F, "stablehlo.add", a, b); }
static tt_val_t sub(gs_t* g, tt_val_t a, tt_val_t b) { return tt_l_binary(F, "stablehlo.subtract", a, b); }
static tt_val_t mul(gs_t* g, tt_val_t a, tt_val_t b) { return tt_l_binary(F, "stablehlo.multiply", a, b); }
static tt_val_t un(gs_t* g, const char* op, tt_val_t a) { return tt_l_unary(F, op, a); }
static tt_val_t cmpk(gs_t* g, const char* d, tt_val_t a, double k) { return tt_l_compare(F, d, a, K(g, k)); }
static tt_val_t sel(gs_t* g, tt_val_t p, tt_val_t a, tt_val_t b) { return tt_l_select(F, p, a, b); }
static tt_val_t land(gs_t* g, tt_val_t a, tt_val_t b) { return tt_l_binary(F, "stablehlo.and", a, b); }
/* a / k with IEEE division (the plugin would multiply by 1/k) */
static tt_val_t divk(gs_t* g, tt_val_t a, double k) { return tt__ew_divk(F, a, k); }
/* (N, P) -> (N, P, C) */
static tt_val_t bc(gs_t* g, tt_val_t v) {
  int64_t d[3] = {g->N, g->P, g->C}, bd[2] = {0, 1};
  return tt_lt_bcast_in_dim(F, v, 3, d, bd);
}

/* ---- source coordinates ------------------------------------------------------------ */

static double scaling(gs_t* g, int64_t size) { return g->align ? (double)(size - 1) / 2 : (double)size / 2; }

static tt_val_t unnormalize(gs_t* g, tt_val_t x, int64_t size) {
  if (g->vec) {
    tt_val_t r = mul(g, add(g, x, K(g, 1)), K(g, scaling(g, size)));
    return g->align ? r : sub(g, r, K(g, 0.5));
  }
  if (g->align) return mul(g, mul(g, add(g, x, K(g, 1)), K(g, 0.5)), K(g, (double)(size - 1)));
  return mul(g, sub(g, mul(g, add(g, x, K(g, 1)), K(g, (double)size)), K(g, 1)), K(g, 0.5));
}

/* Clip to [0, size - 1]; grad (optional): 1 strictly inside, else 0. The
 * vectorized forward clips NaN to 0; the scalar one (std::min / std::max)
 * sends it to size - 1; the gradient versions keep it. */
static tt_val_t clip(gs_t* g, tt_val_t x, int64_t size, bool fwd, tt_val_t* grad) {
  double hi = (double)(size - 1);
  tt_val_t lo_ok = cmpk(g, "GT", x, 0), hi_ok = cmpk(g, "LT", x, hi);
  tt_val_t nan = tt__ew_isnan(F, x);
  if (grad) *grad = sel(g, tt_l_binary(F, "stablehlo.or", land(g, lo_ok, hi_ok), nan), K(g, 1), K(g, 0));
  tt_val_t r = sel(g, cmpk(g, "LT", x, 0), K(g, 0), x);
  r = sel(g, cmpk(g, "GT", r, hi), K(g, hi), r);
  if (fwd) r = sel(g, nan, K(g, g->vec ? 0 : hi), r);
  return r;
}

/* Reflect into [low, low + span]; grad (optional): +-1. */
static tt_val_t reflect(gs_t* g, tt_val_t x, int64_t size, tt_val_t* grad) {
  double twice_lo = g->align ? 0 : -1, twice_hi = g->align ? 2.0 * (double)(size - 1) : 2.0 * (double)size - 1;
  if (twice_lo == twice_hi) {
    if (grad) *grad = K(g, 0);
    return K(g, 0);
  }
  double low = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
  tt_val_t rel = twice_lo != 0 ? sub(g, x, K(g, low)) : x;
  tt_val_t neg = cmpk(g, "LT", rel, 0), a = un(g, "stablehlo.abs", rel);
  tt_val_t r, flip;
  if (g->vec) { /* trunc(|x| / 2span) whole periods off, then fold */
    double ts = 2 * span;
    tt_val_t extra = sub(g, a, mul(g, un(g, "stablehlo.floor", divk(g, a, ts)), K(g, ts)));
    tt_val_t refl = sub(g, K(g, ts), extra);
    flip = tt_l_compare(F, "GT", extra, refl);
    r = grad ? sel(g, flip, refl, extra) : tt__ew_min(F, extra, refl);
  } else { /* fmod and the parity of floor(|x| / span) */
    tt_val_t extra = tt_l_binary(F, "stablehlo.remainder", a, K(g, span));
    tt_val_t flips = un(g, "stablehlo.floor", divk(g, a, span));
    flip = cmpk(g, "NE", tt_l_binary(F, "stablehlo.remainder", flips, K(g, 2)), 0);
    r = sel(g, flip, sub(g, K(g, span), extra), extra);
  }
  if (grad) *grad = sel(g, tt_l_binary(F, "stablehlo.xor", flip, neg), K(g, -1), K(g, 1));
  return low != 0 ? add(g, r, K(g, low)) : r;
}

/* Padding applied to an unnormalized coordinate; gmul (optional) is multiplied
 * by the derivative. */
static tt_val_t pad_coord(gs_t* g, tt_val_t x, int64_t size, bool fwd, tt_val_t* gmul) {
  tt_val_t gr, gc;
  if (g->pad == PAD_BORDER) {
    x = clip(g, x, size, fwd, gmul ? &gc : NULL);
    if (gmul) *gmul = mul(g, *gmul, gc);
  } else if (g->pad == PAD_REFLECT) {
    x = reflect(g, x, size, gmul ? &gr : NULL);
    x = clip(g, x, size, fwd, gmul ? &gc : NULL);
    if (gmul) *gmul = g->vec ? sel(g, cmpk(g, "NE", gc, 0), mul(g, gr, *gmul), K(g, 0))
                             : mul(g, mul(g, *gmul, gr), gc);
  }
  return x;
}

/* Grid component `comp` (x = 0 is the last input dim) as (N, P). */
static tt_val_t grid_comp(gs_t* g, tt_val_t grid, int comp) {
  int64_t d[2] = {g->N, g->P};
  return tt_l_reshape(F, tt_lt_slice_dim(F, grid, 2, comp, comp + 1), 2, d);
}

/* ---- taps ----------------------------------------------------------------------------- */

/* A sample position per spatial dim (integer-valued floats, input order). */
typedef struct tap {
  tt_val_t idx;  /* (N, P) i64, flat in the input plane (0 where masked) */
  tt_val_t mask; /* (N, P) i1 */
} tap_t;

static tap_t make_tap(gs_t* g, const tt_val_t* pos) {
  tap_t t = {TT_SHLO_INVALID, TT_SHLO_INVALID};
  tt_type_t it = g->np;
  it.dtype = TT_I64;
  int64_t stride = 1;
  for (int s = g->nsp - 1; s >= 0; s--) {
    tt_val_t ok = land(g, cmpk(g, "GE", pos[s], 0), cmpk(g, "LT", pos[s], (double)g->in[s]));
    t.mask = s == g->nsp - 1 ? ok : land(g, t.mask, ok);
    tt_val_t p = tt_l_convert(F, sel(g, ok, pos[s], K(g, 0)), TT_I64);
    if (stride != 1) p = tt_l_binary(F, "stablehlo.multiply", p, tt_shlo_const_i64(F, &it, stride));
    t.idx = s == g->nsp - 1 ? p : tt_l_binary(F, "stablehlo.add", t.idx, p);
    stride *= g->in[s];
  }
  return t;
}

/* (N, P, 2) gather / scatter indices (n, idx) */
static tt_val_t tap_coords(gs_t* g, tt_val_t idx) {
  int64_t d3[3] = {g->N, g->P, 1};
  tt_val_t parts[2] = {tt_l_reshape(F, tt_lt_iota(F, TT_I64, 2, g->np.dims, 0), 3, d3), tt_l_reshape(F, idx, 3, d3)};
  return tt_lt_concat(F, parts, 2, 2);
}

/* Values at a tap, (N, P, C), 0 where masked. */
static tt_val_t tap_read(gs_t* g, tap_t t) {
  tt_type_t rt = tt_type_make(g->dt, 3, (const int64_t[]){g->N, g->P, g->C});
  int64_t offs[1] = {2}, coll[2] = {0, 1}, slice[3] = {1, 1, g->C};
  tt_val_t v = tt_lt_gather(F, g->inp, tap_coords(g, t.idx), &rt, offs, 1, coll, 2, coll, 2, 2, slice);
  return tt_l_select(F, bc(g, t.mask), v, tt_shlo_const(F, &rt, 0));
}

/* ---- forward ------------------------------------------------------------------------------ */

/* Coordinates of all dims (input order), padding applied (fwd) or not. */
static void coords(gs_t* g, tt_val_t grid, bool padded, tt_val_t* xs) {
  for (int s = 0; s < g->nsp; s++) {
    tt_val_t x = unnormalize(g, grid_comp(g, grid, g->nsp - 1 - s), g->in[s]);
    xs[s] = padded ? pad_coord(g, x, g->in[s], true, NULL) : x;
  }
}

/* Linear weights per dim: lo / hi weight of floor / floor + 1. */
static void lin_weights(gs_t* g, tt_val_t x, tt_val_t x0, tt_val_t* wlo, tt_val_t* whi) {
  if (g->vec) { /* w = x - x0, e = 1 - w */
    *whi = sub(g, x, x0);
    *wlo = sub(g, K(g, 1), *whi);
  } else { /* (x0 + 1) - x, x - x0 */
    *wlo = sub(g, add(g, x0, K(g, 1)), x);
    *whi = sub(g, x, x0);
  }
}

/* Corner k of 2^nsp (bit s of k, from the last dim: hi side). */
static void corner(gs_t* g, const tt_val_t* x0, int k, tt_val_t* pos) {
  for (int s = 0; s < g->nsp; s++) {
    bool hi = (k >> (g->nsp - 1 - s)) & 1;
    pos[s] = hi ? add(g, x0[s], K(g, 1)) : x0[s];
  }
}

/* Product of the per-dim weights of corner k, in CPU's order. 2-d: s * e
 * style (y weight first); 3-d: x * y * z. */
static tt_val_t corner_weight(gs_t* g, tt_val_t (*w)[2], int k) {
  int n = g->nsp;
  tt_val_t r = TT_SHLO_INVALID;
  if (g->vec) { /* (y weight) * (x weight) */
    return mul(g, w[0][(k >> 1) & 1], w[1][k & 1]);
  }
  for (int s = n - 1; s >= 0; s--) { /* x first */
    tt_val_t ws = w[s][(k >> (n - 1 - s)) & 1];
    r = s == n - 1 ? ws : mul(g, r, ws);
  }
  return r;
}

/* 3-d corner order is t/b (z) outermost, then n/s (y), then w/e (x): bit
 * order of k as built by corner(). 2-d: nw, ne, sw, se, the same. */
static tt_val_t lower_bilinear_fwd(gs_t* g, tt_val_t grid) {
  tt_val_t x[3], x0[3], w[3][2], pos[3], acc = TT_SHLO_INVALID;
  coords(g, grid, true, x);
  for (int s = 0; s < g->nsp; s++) {
    x0[s] = un(g, "stablehlo.floor", x[s]);
    lin_weights(g, x[s], x0[s], &w[s][0], &w[s][1]);
  }
  for (int k = 0; k < (1 << g->nsp); k++) {
    corner(g, x0, k, pos);
    tap_t t = make_tap(g, pos);
    tt_val_t v = tap_read(g, t), wk = bc(g, corner_weight(g, w, k));
    tt_val_t term = tt_l_binary(F, "stablehlo.multiply", v, wk);
    if (!g->vec) term = tt_l_select(F, bc(g, t.mask), term, tt__ew_k(F, term, 0)); /* skipped, not 0 * w */
    acc = k ? tt_l_binary(F, "stablehlo.add", acc, term) : term;
  }
  return acc;
}

static tt_val_t lower_nearest_fwd(gs_t* g, tt_val_t grid, tap_t* t) {
  tt_val_t x[3];
  coords(g, grid, true, x);
  for (int s = 0; s < g->nsp; s++) x[s] = un(g, "stablehlo.round_nearest_even", x[s]);
  *t = make_tap(g, x);
  return tap_read(g, *t);
}

/* Cubic convolution coefficients (A = -0.75) for the offsets -1..2 of t, and
 * their derivatives (as CPU's vectorized kernel writes them). */
static void cubic(gs_t* g, tt_val_t t, tt_val_t* c, tt_val_t* dc) {
  const double A = -0.75;
  tt_val_t x = add(g, t, K(g, 1));
  c[0] = sub(g, mul(g, add(g, mul(g, sub(g, mul(g, K(g, A), x), K(g, 5 * A)), x), K(g, 8 * A)), x), K(g, 4 * A));
  for (int i = 1; i <= 2; i++) {
    x = i == 1 ? t : sub(g, K(g, 1), t);
    c[i] = add(g, mul(g, mul(g, sub(g, mul(g, K(g, A + 2), x), K(g, A + 3)), x), x), K(g, 1));
  }
  x = sub(g, K(g, 2), t);
  c[3] = sub(g, mul(g, add(g, mul(g, sub(g, mul(g, K(g, A), x), K(g, 5 * A)), x), K(g, 8 * A)), x), K(g, 4 * A));
  if (!dc) return;
  x = sub(g, K(g, -1), t);
  dc[0] = sub(g, mul(g, sub(g, mul(g, K(g, -3 * A), x), K(g, 10 * A)), x), K(g, 8 * A));
  x = sub(g, K(g, 0), t);
  dc[1] = mul(g, sub(g, mul(g, K(g, -3 * (A + 2)), x), K(g, 2 * (A + 3))), x);
  x = sub(g, K(g, 1), t);
  dc[2] = mul(g, sub(g, mul(g, K(g, 3 * (A + 2)), x), K(g, 2 * (A + 3))), x);
  x = sub(g, K(g, 2), t);
  dc[3] = add(g, mul(g, sub(g, mul(g, K(g, 3 * A), x), K(g, 10 * A)), x), K(g, 8 * A));
}

/* The positions ix + i - 1 (and iy + j - 1) read through the padding mode;
 * they stay integers, so CPU's truncation to int changes nothing. */
static void cubic_pos(gs_t* g, tt_val_t ix, tt_val_t iy, tt_val_t* px, tt_val_t* py) {
  for (int i = 0; i < 4; i++) {
    px[i] = pad_coord(g, add(g, ix, K(g, i - 1)), g->in[1], true, NULL);
    py[i] = pad_coord(g, add(g, iy, K(g, i - 1)), g->in[0], true, NULL);
  }
}

static tap_t cubic_tap(gs_t* g, const tt_val_t* px, const tt_val_t* py, int i, int j) {
  tt_val_t pos[2] = {py[j], px[i]};
  return make_tap(g, pos);
}

static tt_val_t lower_bicubic_fwd(gs_t* g, tt_val_t grid) {
  tt_val_t x[2], cx[4], cy[4], row[4], out = TT_SHLO_INVALID;
  coords(g, grid, false, x);
  tt_val_t iy = un(g, "stablehlo.floor", x[0]), ix = un(g, "stablehlo.floor", x[1]);
  cubic(g, sub(g, x[1], ix), cx, NULL);
  cubic(g, sub(g, x[0], iy), cy, NULL);
  tt_val_t px[4], py[4];
  cubic_pos(g, ix, iy, px, py);
  for (int j = 0; j < 4; j++) {
    for (int i = 0; i < 4; i++) {
      tt_val_t term = tt_l_binary(F, "stablehlo.multiply", bc(g, cx[i]), tap_read(g, cubic_tap(g, px, py, i, j)));
      row[j] = i ? tt_l_binary(F, "stablehlo.add", row[j], term) : term;
    }
    tt_val_t term = tt_l_binary(F, "stablehlo.multiply", bc(g, cy[j]), row[j]);
    out = j ? tt_l_binary(F, "stablehlo.add", out, term) : term;
  }
  return out;
}

/* ---- backward ------------------------------------------------------------------------------ */

/* Scatter-add contributions (tap, (N, P, C) update, 0 where masked) into (N, Q, C). */
typedef struct contrib {
  tt_val_t coords[16], upd[16];
  int n;
} contrib_t;

static void contribute(gs_t* g, contrib_t* a, tap_t t, tt_val_t upd) {
  a->coords[a->n] = tap_coords(g, t.idx);
  a->upd[a->n++] = tt_l_select(F, bc(g, t.mask), upd, tt__ew_k(F, upd, 0));
}

static tt_val_t scatter_contribs(gs_t* g, contrib_t* a) {
  int64_t d[3] = {g->N, g->Q, g->C};
  tt_val_t zero = tt_l_full(F, g->dt, 3, d, 0);
  tt_val_t idx = tt_lt_concat(F, a->coords, a->n, 1), upd = tt_lt_concat(F, a->upd, a->n, 1);
  int64_t win[1] = {2}, ins[2] = {0, 1};
  return tt_lt_scatter(F, zero, idx, upd, win, 1, ins, 2, ins, 2, 2, "stablehlo.add");
}

/* Coordinates with padding and their derivative multipliers (input order). */
static void coords_grad(gs_t* g, tt_val_t grid, tt_val_t* xs, tt_val_t* gm) {
  for (int s = 0; s < g->nsp; s++) {
    gm[s] = K(g, scaling(g, g->in[s]));
    tt_val_t x = unnormalize(g, grid_comp(g, grid, g->nsp - 1 - s), g->in[s]);
    xs[s] = pad_coord(g, x, g->in[s], false, &gm[s]);
  }
}

static tt_val_t csum(gs_t* g, tt_val_t v) { return tt_lt_sum(F, v, 1u << 2); }

#define SEQ_MAX 1024 /* channel x term additions unrolled at most */

/* CPU's grid-gradient accumulator: starting from 0, for each channel c, for
 * each term k in order, acc += sign[k] * terms[k][..., c]. terms: (N, P, C).
 * Unrolled so that the sums round as CPU's do; very wide inputs fall back to
 * a reduction over channels (rounding may then differ in the last bits). */
static tt_val_t seqsum(gs_t* g, const tt_val_t* terms, const int* sign, int nt) {
  tt_val_t acc = K(g, 0);
  if (g->C * nt > SEQ_MAX) {
    tt_val_t per = TT_SHLO_INVALID;
    for (int k = 0; k < nt; k++) {
      tt_val_t t = sign[k] < 0 ? tt_l_unary(F, "stablehlo.negate", terms[k]) : terms[k];
      per = k ? tt_l_binary(F, "stablehlo.add", per, t) : t;
    }
    return add(g, acc, csum(g, per));
  }
  for (int64_t c = 0; c < g->C; c++) {
    for (int k = 0; k < nt; k++) {
      tt_val_t v = tt_l_reshape(F, tt_lt_slice_dim(F, terms[k], 2, c, c + 1), 2, g->np.dims);
      acc = sign[k] < 0 ? sub(g, acc, v) : add(g, acc, v);
    }
  }
  return acc;
}

/* Bilinear: grad_input contributions and the grid gradient per dim (input order). */
static void bilinear_bwd(gs_t* g, tt_val_t grid, tt_val_t go, contrib_t* ci, tt_val_t* gg) {
  tt_val_t x[3], gm[3], x0[3], w[3][2], pos[3], val[8];
  coords_grad(g, grid, x, gm);
  for (int s = 0; s < g->nsp; s++) {
    x0[s] = un(g, "stablehlo.floor", x[s]);
    lin_weights(g, x[s], x0[s], &w[s][0], &w[s][1]);
  }
  int nc = 1 << g->nsp;
  for (int k = 0; k < nc; k++) {
    corner(g, x0, k, pos);
    tap_t t = make_tap(g, pos);
    val[k] = tap_read(g, t);
    if (ci) contribute(g, ci, t, tt_l_binary(F, "stablehlo.multiply", bc(g, corner_weight(g, w, k)), go));
    if (!g->vec) val[k] = tt_l_select(F, bc(g, t.mask), val[k], tt__ew_k(F, val[k], 0));
  }
#define M3(a, b) tt_l_binary(F, "stablehlo.multiply", a, b)
#define S3(a, b) tt_l_binary(F, "stablehlo.subtract", a, b)
#define A3(a, b) tt_l_binary(F, "stablehlo.add", a, b)
  if (g->vec) { /* gx = ((ne - nw) s + (se - sw) n) g;  gy = ((sw - nw) e + (se - ne) w) g */
    tt_val_t e = bc(g, w[1][0]), ww = bc(g, w[1][1]), s = bc(g, w[0][0]), n = bc(g, w[0][1]);
    tt_val_t gx = M3(A3(M3(S3(val[1], val[0]), s), M3(S3(val[3], val[2]), n)), go);
    tt_val_t gy = M3(A3(M3(S3(val[2], val[0]), e), M3(S3(val[3], val[1]), ww)), go);
    int plus[1] = {1};
    gg[1] = mul(g, seqsum(g, &gx, plus, 1), gm[1]);
    gg[0] = mul(g, seqsum(g, &gy, plus, 1), gm[0]);
    return;
  }
  /* 3-d: per corner, +-(val * (other dims' weights, x..z order) * g) */
  for (int s = 0; s < g->nsp; s++) {
    tt_val_t terms[8];
    int sign[8];
    for (int k = 0; k < nc; k++) {
      tt_val_t term = val[k];
      for (int o = g->nsp - 1; o >= 0; o--)
        if (o != s) term = M3(term, bc(g, w[o][(k >> (g->nsp - 1 - o)) & 1]));
      terms[k] = M3(term, go);
      sign[k] = (k >> (g->nsp - 1 - s)) & 1 ? 1 : -1;
    }
    gg[s] = mul(g, gm[s], seqsum(g, terms, sign, nc));
  }
}

static void bicubic_bwd(gs_t* g, tt_val_t grid, tt_val_t go, contrib_t* ci, tt_val_t* gg) {
  tt_val_t x[2], cx[4], cy[4], dx[4], dy[4], tx[16], ty[16];
  int minus[16];
  coords(g, grid, false, x);
  tt_val_t iy = un(g, "stablehlo.floor", x[0]), ix = un(g, "stablehlo.floor", x[1]);
  cubic(g, sub(g, x[1], ix), cx, dx);
  cubic(g, sub(g, x[0], iy), cy, dy);
  tt_val_t px[4], py[4];
  cubic_pos(g, ix, iy, px, py);
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) {
      tap_t t = cubic_tap(g, px, py, i, j);
      if (ci) contribute(g, ci, t, M3(M3(go, bc(g, cx[i])), bc(g, cy[j])));
      tt_val_t vg = M3(tap_read(g, t), go);
      tx[i * 4 + j] = M3(M3(vg, bc(g, dx[i])), bc(g, cy[j]));
      ty[i * 4 + j] = M3(M3(vg, bc(g, dy[j])), bc(g, cx[i]));
      minus[i * 4 + j] = -1;
    }
  }
  gg[1] = mul(g, seqsum(g, tx, minus, 16), K(g, scaling(g, g->in[1])));
  gg[0] = mul(g, seqsum(g, ty, minus, 16), K(g, scaling(g, g->in[0])));
}
#undef M3
#undef S3
#undef A3

/* ---- the ops ----------------------------------------------------------------------------- */

/* Reads sizes and modes; iin / igrid / imode: argument indices. */
static tt_status_t setup(tt_lctx_t* c, gs_t* g, int iin, int igrid, int imode) {
  const tt_type_t* it = tt_lt_arg_type(c, iin);
  const tt_type_t* gt = tt_lt_arg_type(c, igrid);
  if (!it || !gt) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  memset(g, 0, sizeof *g);
  g->f = c->f;
  g->nsp = it->rank - 2;
  g->interp = (int)c->args[imode].i;
  g->pad = (int)c->args[imode + 1].i;
  g->align = c->args[imode + 2].i != 0;
  g->vec = g->nsp == 2;
  g->dt = it->dtype;
  if (!tt_dtype_is_float(g->dt))
    return tt_status_make(TT_UNIMPLEMENTED, "%s: not implemented for %s", c->op->name, tt_dtype_name(g->dt));
  if ((g->nsp != 2 && g->nsp != 3) || gt->rank != it->rank || gt->dims[gt->rank - 1] != g->nsp ||
      g->interp < 0 || g->interp > (g->nsp == 2 ? 2 : 1) || g->pad < 0 || g->pad > 2)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: unsupported input / grid shapes or modes", c->op->name);
  g->N = it->dims[0];
  g->C = it->dims[1];
  g->Q = g->P = 1;
  for (int s = 0; s < g->nsp; s++) {
    g->in[s] = it->dims[2 + s];
    g->Q *= g->in[s];
    g->P *= gt->dims[1 + s];
  }
  g->np = tt_type_make(g->dt, 2, (const int64_t[]){g->N, g->P});
  int64_t d3[3] = {g->N, g->C, g->Q}, perm[3] = {0, 2, 1};
  g->inp = tt_l_transpose(g->f, tt_l_reshape(g->f, c->args[iin].val, 3, d3), perm);
  return NULL;
}

static tt_val_t grid_np(gs_t* g, tt_lctx_t* c, int igrid) {
  int64_t d[3] = {g->N, g->P, g->nsp};
  return tt_l_reshape(F, c->args[igrid].val, 3, d);
}

/* (N, P, C) -> shaped like `t` (N, C, spatial...) */
static tt_val_t to_nc(gs_t* g, tt_val_t v, const tt_type_t* t) {
  int64_t perm[3] = {0, 2, 1};
  return tt_l_reshape(F, tt_l_transpose(F, v, perm), t->rank, t->dims);
}

/* grid_sampler_{2,3}d(input, grid, interpolation_mode, padding_mode, align_corners) */
static tt_status_t lower_grid_sampler(tt_lctx_t* c) {
  gs_t g;
  TT_RETURN_IF_ERROR(setup(c, &g, 0, 1, 2));
  if (tt_type_numel(&c->out_types[0]) == 0)
    return tt_l_set_out(c, 0, tt_shlo_const(c->f, &c->out_types[0], 0));
  if (g.Q == 0) return tt_status_make(TT_INVALID_ARGUMENT, "%s: empty input spatial dims", c->op->name);
  tt_val_t grid = grid_np(&g, c, 1), r;
  tap_t t;
  if (g.interp == BILINEAR) r = lower_bilinear_fwd(&g, grid);
  else if (g.interp == NEAREST) r = lower_nearest_fwd(&g, grid, &t);
  else r = lower_bicubic_fwd(&g, grid);
  return tt_l_set_out(c, 0, to_nc(&g, r, &c->out_types[0]));
}

/* grid_sampler_{2,3}d_backward(grad_output, input, grid, interpolation_mode,
 * padding_mode, align_corners, output_mask) -> (grad_input, grad_grid) */
static tt_status_t lower_grid_sampler_bwd(tt_lctx_t* c) {
  gs_t g;
  TT_RETURN_IF_ERROR(setup(c, &g, 1, 2, 3));
  const tt_larg_t* om = &c->args[6];
  bool want_in = om->kind != TT_ARG_INTS || om->n < 1 || om->ints[0];
  tt_shlo_fn_t* f = c->f;
  if (tt_type_numel(&c->out_types[1]) == 0 || g.Q == 0 || g.C == 0) {
    TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], 0)));
    return tt_l_set_out(c, 1, tt_shlo_const(f, &c->out_types[1], 0));
  }
  int64_t d3[3] = {g.N, g.C, g.P}, perm[3] = {0, 2, 1};
  tt_val_t go = tt_l_transpose(f, tt_l_reshape(f, tt_l_convert(f, c->args[0].val, g.dt), 3, d3), perm);
  tt_val_t grid = grid_np(&g, c, 2), gg[3];
  contrib_t ci;
  ci.n = 0;
  contrib_t* cp = want_in ? &ci : NULL;
  if (g.interp == BILINEAR) {
    bilinear_bwd(&g, grid, go, cp, gg);
  } else if (g.interp == BICUBIC) {
    bicubic_bwd(&g, grid, go, cp, gg);
  } else {
    tap_t t;
    lower_nearest_fwd(&g, grid, &t);
    if (cp) contribute(&g, cp, t, go);
    for (int s = 0; s < g.nsp; s++) gg[s] = K(&g, 0);
  }
  if (want_in) TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, to_nc(&g, scatter_contribs(&g, &ci), &c->out_types[0])));
  else TT_RETURN_IF_ERROR(tt_l_set_out(c, 0, tt_shlo_const(f, &c->out_types[0], 0)));
  tt_val_t parts[3];
  int64_t d1[3] = {g.N, g.P, 1};
  for (int k = 0; k < g.nsp; k++) parts[k] = tt_l_reshape(f, gg[g.nsp - 1 - k], 3, d1); /* x, y, z */
  tt_val_t gr = tt_lt_concat(f, parts, g.nsp, 2);
  return tt_l_set_out(c, 1, tt_l_reshape(f, gr, c->out_types[1].rank, c->out_types[1].dims));
}

#define ROW2(name, fn, out) {"aten::" name, fn, 0, 0}, {"aten::" name "." out, fn, 0, 0}

const tt_lower_entry_t tt_lower_grid_sample[] = {
    ROW2("grid_sampler_2d", lower_grid_sampler, "out"),
    ROW2("grid_sampler_3d", lower_grid_sampler, "out"),
    ROW2("grid_sampler_2d_backward", lower_grid_sampler_bwd, "out"),
    ROW2("grid_sampler_3d_backward", lower_grid_sampler_bwd, "out"),
};
const int tt_lower_grid_sample_count = TT_TABLE_COUNT(tt_lower_grid_sample);
