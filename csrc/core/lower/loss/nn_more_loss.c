/* Margin losses and pairwise distances: multi_margin_loss,
 * multilabel_margin_loss (forward with is_target), _pdist (+ backward ops).
 *
 * Inputs are (N, C) or (C,) (a single sample); both are handled as (N, C).
 * The per-sample loops of CPU's kernels become masked (N, C) (or (N, T, C))
 * tensors reduced over the class dim, in the opmath dtype, rounded once. */
#include <math.h>
#include <stdlib.h>

#include "../elementwise/lower_elementwise.h"
#include "../lower_tensor_util.h"
#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"

enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };


#define ADD(a, b) tt_l_binary(f, "stablehlo.add", a, b)
#define SUB(a, b) tt_l_binary(f, "stablehlo.subtract", a, b)
#define MUL(a, b) tt_l_binary(f, "stablehlo.multiply", a, b)
#define K(like, v) tt__ew_k(f, like, v)

/* Argument i as (N, C) in dt (a (C,) sample gets N = 1). */
static tt_val_t as_nc(tt_lctx_t* c, int i, tt_dtype_t dt, int64_t* n, int64_t* nc) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t = tt__sh_type(f, c->args[i].val);
  *nc = t.rank ? t.dims[t.rank - 1] : 1;
  *n = t.rank == 2 ? t.dims[0] : 1;
  int64_t d[2] = {*n, *nc};
  return tt_l_reshape(f, tt_l_convert(f, c->args[i].val, dt), 2, d);
}

/* Raises `msg` at the next sync if any of bad (i1) is set. */
static void check_any(tt_shlo_fn_t* f, tt_val_t bad, const char* msg) {
  tt_type_t t = tt__sh_type(f, bad);
  if (t.rank) bad = tt_lt_reduce(f, bad, (1u << t.rank) - 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0));
  tt_shlo_add_check(f, bad, TT_INTERNAL, msg);
}

/* Per-sample values (N,) reduced as `reduction` says into output `oi`. */
static tt_status_t set_reduced(tt_lctx_t* c, int oi, tt_val_t per, int64_t red) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[oi];
  if (red == RED_NONE) return tt_l_set_out(c, oi, tt_l_reshape(f, per, ot->rank, ot->dims));
  tt_type_t pt = tt__sh_type(f, per);
  tt_val_t s = tt_lt_sum(f, per, 1u);
  if (red == RED_MEAN) s = tt__ew_divk(f, s, (double)pt.dims[0]);
  return tt_l_set_out(c, oi, s);
}

/* grad_output as a (N, 1)-broadcastable factor: per sample (none) or one value. */
static tt_val_t grad_factor(tt_lctx_t* c, int64_t red, tt_dtype_t dt, int64_t n, int64_t nc) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t g = tt_l_convert(f, c->args[0].val, dt);
  int64_t d[2] = {n, nc};
  tt_type_t gt = tt__sh_type(f, g);
  if (red == RED_NONE && gt.rank > 0) {
    int64_t b0[1] = {0}, d1[1] = {n};
    return tt_lt_bcast_in_dim(f, tt_l_reshape(f, g, 1, d1), 2, d, b0);
  }
  return tt_lt_splat(f, tt_l_reshape(f, g, 0, NULL), 2, d);
}

/* ---- multi_margin_loss ------------------------------------------------------------------ */

typedef struct mm {
  tt_val_t x, onehot, z, pos, w; /* (N, C); w: weight[target] or NULL-ish (INVALID) */
  tt_val_t p1;                   /* (N, C) i1: p == 1 */
  int64_t n, nc;
} mm_t;

/* Shared setup (base: index of self; self, target, p, margin, weight follow). */
static void mm_setup(tt_lctx_t* c, int base, tt_dtype_t dt, mm_t* m) {
  tt_shlo_fn_t* f = c->f;
  m->x = as_nc(c, base, dt, &m->n, &m->nc);
  int64_t d[2] = {m->n, m->nc}, d1[1] = {m->n}, b0[1] = {0};
  tt_val_t tgt = tt_l_reshape(f, tt_l_convert(f, c->args[base + 1].val, TT_I64), 1, d1);
  tt_type_t tt = tt__sh_type(f, tgt);
  check_any(f, tt_l_binary(f, "stablehlo.or", tt_l_compare(f, "LT", tgt, tt_shlo_const(f, &tt, 0)),
                           tt_l_compare(f, "GE", tgt, tt_shlo_const(f, &tt, (double)m->nc))),
            "multi_margin_loss: target out of range");
  m->onehot = tt_l_compare(f, "EQ", tt_lt_iota(f, TT_I64, 2, d, 1), tt_lt_bcast_in_dim(f, tgt, 2, d, b0));
  tt_val_t xy = tt_lt_sum(f, tt_l_select(f, m->onehot, m->x, K(m->x, 0)), 2u);
  tt_val_t margin = tt_lt_splat(f, tt_lt_scalar(c, base + 3, dt), 2, d);
  m->z = ADD(SUB(margin, tt_lt_bcast_in_dim(f, xy, 2, d, b0)), m->x);
  m->pos = tt_l_binary(f, "stablehlo.and", tt__ew_cmpk(f, "GT", m->z, 0),
                       tt_l_unary(f, "stablehlo.not", m->onehot));
  tt_val_t p = tt_lt_scalar(c, base + 2, TT_F64);
  m->p1 = tt_lt_splat(f, tt_l_compare(f, "EQ", p, tt_lt_const0(f, TT_F64, 1)), 2, d);
  m->w = TT_SHLO_INVALID;
  if (tt_lt_has(c, base + 4)) {
    tt_type_t wt = tt__sh_type(f, c->args[base + 4].val);
    tt_val_t wv = tt_l_convert(f, c->args[base + 4].val, dt);
    tt_val_t wfull = tt_lt_bcast_in_dim(f, tt_l_reshape(f, wv, 1, &wt.dims[0]), 2, d, (int64_t[]){1});
    tt_val_t wy = tt_lt_sum(f, tt_l_select(f, m->onehot, wfull, K(wfull, 0)), 2u);
    m->w = tt_lt_bcast_in_dim(f, wy, 2, d, b0);
  }
}

/* multi_margin_loss(self, target, p, margin, weight?, reduction):
 * sum over i != y of max(0, margin - x[y] + x[i])^p * w[y], over C. */
static tt_status_t lower_multi_margin(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t dt = tt_l_opmath(c->out_types[0].dtype);
  mm_t m;
  mm_setup(c, 0, dt, &m);
  tt_val_t h = tt_l_select(f, m.p1, m.z, MUL(m.z, m.z));
  if (m.w != TT_SHLO_INVALID) h = MUL(h, m.w);
  h = tt_l_select(f, m.pos, h, K(h, 0));
  tt_val_t per = tt__ew_divk(f, tt_lt_sum(f, h, 2u), (double)m.nc);
  return set_reduced(c, 0, per, c->args[5].i);
}

/* multi_margin_loss_backward(grad_output, self, target, p, margin, weight?, reduction) */
static tt_status_t lower_multi_margin_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t dt = tt_l_opmath(c->out_types[0].dtype);
  mm_t m;
  mm_setup(c, 1, dt, &m);
  int64_t red = c->args[6].i;
  double g = red == RED_MEAN ? 1.0 / ((double)m.n * (double)m.nc) : 1.0 / (double)m.nc;
  tt_val_t gk = K(m.z, g);
  tt_val_t h = tt_l_select(f, m.p1, gk, MUL(MUL(K(m.z, 2), gk), m.z));
  if (m.w != TT_SHLO_INVALID) h = MUL(h, m.w);
  h = tt_l_select(f, m.pos, h, K(h, 0));
  int64_t d[2] = {m.n, m.nc}, b0[1] = {0};
  tt_val_t tsum = tt_lt_bcast_in_dim(f, tt_lt_sum(f, h, 2u), 2, d, b0);
  tt_val_t gi = tt_l_select(f, m.onehot, tt_l_unary(f, "stablehlo.negate", tsum), h);
  gi = MUL(gi, grad_factor(c, red, dt, m.n, m.nc));
  const tt_type_t* ot = &c->out_types[0];
  return tt_l_set_out(c, 0, tt_l_reshape(f, gi, ot->rank, ot->dims));
}

/* ---- multilabel_margin_loss ---------------------------------------------------------------- */

typedef struct ml {
  tt_val_t x, hit;   /* (N, C); hit: i1 is_target */
  tt_val_t onehot;   /* (N, T, C) i1: valid label t == class */
  tt_val_t m;        /* (N, T, C) i1: the hinge is active */
  tt_val_t z;        /* (N, T, C) */
  int64_t n, nc;
} ml_t;

/* Labels are target[n, t] up to the first negative one. */
static void ml_setup(tt_lctx_t* c, int base, int iis_target, tt_dtype_t dt, ml_t* s) {
  tt_shlo_fn_t* f = c->f;
  s->x = as_nc(c, base, dt, &s->n, &s->nc);
  int64_t n = s->n, nc = s->nc, dn, dc;
  tt_val_t tgt = as_nc(c, base + 1, TT_I64, &dn, &dc);
  int64_t d2[2] = {n, nc}, d3[3] = {n, nc, nc}, b01[2] = {0, 1}, b02[2] = {0, 2};
  tt_val_t nonneg = tt_l_convert(f, tt_l_compare(f, "GE", tgt, tt_l_full(f, TT_I64, 2, d2, 0)), TT_I64);
  tt_val_t valid = tt_l_compare(f, "NE", tt_lt_scan(f, nonneg, 1, "stablehlo.multiply"), tt_l_full(f, TT_I64, 2, d2, 0));
  check_any(f, tt_l_binary(f, "stablehlo.and", valid, tt_l_compare(f, "GE", tgt, tt_l_full(f, TT_I64, 2, d2, (double)nc))),
            "multilabel_margin_loss: target index out of range");
  tt_val_t eq = tt_l_compare(f, "EQ", tt_lt_bcast_in_dim(f, tgt, 3, d3, b01), tt_lt_iota(f, TT_I64, 3, d3, 2));
  tt_val_t v3 = tt_lt_bcast_in_dim(f, valid, 3, d3, b01);
  s->onehot = tt_l_binary(f, "stablehlo.and", eq, v3);
  if (iis_target >= 0) {
    s->hit = tt_l_compare(f, "NE", as_nc(c, iis_target, dt, &dn, &dc), tt_l_full(f, dt, 2, d2, 0));
  } else {
    s->hit = tt_lt_reduce(f, s->onehot, 2u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0));
  }
  tt_val_t x3 = tt_lt_bcast_in_dim(f, s->x, 3, d3, b02);
  tt_val_t xt = tt_lt_sum(f, tt_l_select(f, eq, x3, tt_l_full(f, dt, 3, d3, 0)), 4u); /* x[target[t]] */
  s->z = ADD(SUB(tt_l_full(f, dt, 3, d3, 1), tt_lt_bcast_in_dim(f, xt, 3, d3, b01)), x3);
  tt_val_t free3 = tt_l_unary(f, "stablehlo.not", tt_lt_bcast_in_dim(f, s->hit, 3, d3, b02));
  s->m = tt_l_binary(f, "stablehlo.and", tt_l_binary(f, "stablehlo.and", v3, free3), tt__ew_cmpk(f, "GT", s->z, 0));
}

/* multilabel_margin_loss_forward(self, target, reduction) -> (output, is_target) */
static tt_status_t lower_multilabel_margin(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t dt = tt_l_opmath(c->out_types[0].dtype);
  ml_t s;
  ml_setup(c, 0, -1, dt, &s);
  tt_val_t l = tt_l_select(f, s.m, s.z, K(s.z, 0));
  tt_val_t per = tt__ew_divk(f, tt_lt_sum(f, tt_lt_sum(f, l, 4u), 2u), (double)s.nc);
  TT_RETURN_IF_ERROR(set_reduced(c, 0, per, c->args[2].i));
  const tt_type_t* it = &c->out_types[1];
  return tt_l_set_out(c, 1, tt_l_reshape(f, tt_l_convert(f, s.hit, it->dtype), it->rank, it->dims));
}

/* multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target):
 * each active hinge (t, d) adds g at d and takes g from target[t]. */
static tt_status_t lower_multilabel_margin_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t dt = tt_l_opmath(c->out_types[0].dtype);
  ml_t s;
  ml_setup(c, 1, 4, dt, &s);
  int64_t red = c->args[3].i, d3[3] = {s.n, s.nc, s.nc}, b01[2] = {0, 1};
  double g = red == RED_MEAN ? 1.0 / ((double)s.n * (double)s.nc) : 1.0 / (double)s.nc;
  tt_val_t mf = tt_l_convert(f, s.m, dt);
  tt_val_t plus = tt_lt_sum(f, mf, 2u);                                     /* (N, C): over t */
  tt_val_t per_t = tt_lt_bcast_in_dim(f, tt_lt_sum(f, mf, 4u), 3, d3, b01); /* actives of label t */
  tt_val_t minus = tt_lt_sum(f, tt_l_select(f, s.onehot, per_t, tt_l_full(f, dt, 3, d3, 0)), 2u);
  tt_val_t gi = MUL(SUB(plus, minus), K(plus, g));
  gi = MUL(gi, grad_factor(c, red, dt, s.n, s.nc));
  const tt_type_t* ot = &c->out_types[0];
  return tt_l_set_out(c, 0, tt_l_reshape(f, gi, ot->rank, ot->dims));
}

/* ---- _pdist ------------------------------------------------------------------------------------ */

/* Row indices (i, j), i < j, in CPU's order; n x (n - 1) / 2 pairs (malloc'd). */
static int64_t pairs(int64_t n, int64_t** pi, int64_t** pj) {
  int64_t np = n * (n - 1) / 2, k = 0;
  *pi = malloc((size_t)(np ? np : 1) * sizeof(int64_t));
  *pj = malloc((size_t)(np ? np : 1) * sizeof(int64_t));
  if (!*pi || !*pj) return -1;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) (*pi)[k] = i, (*pj)[k++] = j;
  return np;
}

/* _pdist_forward(self, p) */
static tt_status_t lower_pdist(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t dt = tt_l_opmath(c->out_types[0].dtype);
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t x = tt_l_convert(f, c->args[0].val, dt);
  tt_type_t xt = tt__sh_type(f, x);
  double p = c->args[1].f;
  if (tt_type_numel(ot) == 0 || xt.rank != 2) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0));
  int64_t *pi, *pj, np = pairs(xt.dims[0], &pi, &pj);
  if (np < 0) {
    free(pi), free(pj);
    return tt_status_make(TT_RESOURCE_EXHAUSTED, "%s: out of memory", c->op->name);
  }
  tt_val_t a = tt_l_unary(f, "stablehlo.abs", SUB(tt__sh_take(f, x, 0, pi, np), tt__sh_take(f, x, 0, pj, np)));
  free(pi), free(pj);
  tt_val_t r;
  if (p == 0) {
    /* CPU's min(ceil(|d|), 1): a NaN difference stays NaN */
    r = tt_lt_sum(f, tt_l_select(f, tt_l_compare(f, "NE", a, a), a, tt_l_convert(f, tt__ew_cmpk(f, "NE", a, 0), dt)), 2u);
  } else if (p == 1) {
    r = tt_lt_sum(f, a, 2u);
  } else if (p == 2) {
    r = tt_l_unary(f, "stablehlo.sqrt", tt_lt_sum(f, MUL(a, a), 2u));
  } else if (isinf(p)) {
    r = tt_lt_extreme(f, a, 2u, true);
    if (xt.dims[1] == 0) r = tt_l_full(f, dt, 1, &np, 0);
  } else {
    tt_val_t s = tt_lt_sum(f, tt_l_binary(f, "stablehlo.power", a, K(a, p)), 2u);
    r = tt_l_binary(f, "stablehlo.power", s, K(s, dt == TT_F32 ? (double)(1.0f / (float)p) : 1.0 / p));
  }
  return tt_l_set_out(c, 0, r);
}

/* _pdist_backward(grad, self, p, pdist): dense over (i, j): grad_i = sum over
 * j != i of grad_ij * d(dist_ij)/d(x_i). */
static tt_status_t lower_pdist_bwd(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_dtype_t dt = tt_l_opmath(c->out_types[0].dtype);
  const tt_type_t* ot = &c->out_types[0];
  tt_val_t x = tt_l_convert(f, c->args[1].val, dt);
  tt_type_t xt = tt__sh_type(f, x);
  double p = c->args[2].f;
  int64_t n = xt.rank == 2 ? xt.dims[0] : 0, mcols = xt.rank == 2 ? xt.dims[1] : 0, np = n * (n - 1) / 2;
  if (tt_type_numel(ot) == 0 || np == 0 || p == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0));
  /* (n, n) maps of pair values: entry np (a 0 appended) on the diagonal */
  int64_t* map = malloc((size_t)(n * n) * sizeof(int64_t));
  if (!map) return tt_status_make(TT_RESOURCE_EXHAUSTED, "%s: out of memory", c->op->name);
  for (int64_t i = 0, k = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++, k++) map[i * n + j] = map[j * n + i] = k;
  for (int64_t i = 0; i < n; i++) map[i * n + i] = np;
  int64_t one = 1, nn = n * n, d2[2] = {n, n}, d3[3] = {n, n, mcols}, b01[2] = {0, 1};
  tt_val_t zero1 = tt_l_full(f, dt, 1, &one, 0);
  tt_val_t gv[2] = {tt_l_convert(f, c->args[0].val, dt), zero1}, dv[2] = {tt_l_convert(f, c->args[3].val, dt), zero1};
  tt_val_t G = tt_l_reshape(f, tt__sh_take(f, tt_lt_concat(f, gv, 2, 0), 0, map, nn), 2, d2);
  tt_val_t D = tt_l_reshape(f, tt__sh_take(f, tt_lt_concat(f, dv, 2, 0), 0, map, nn), 2, d2);
  free(map);
  int64_t bi[2] = {0, 2}, bj[2] = {1, 2};
  tt_val_t diff = SUB(tt_lt_bcast_in_dim(f, x, 3, d3, bi), tt_lt_bcast_in_dim(f, x, 3, d3, bj));
  tt_val_t g3 = tt_lt_bcast_in_dim(f, G, 3, d3, b01), dist = tt_lt_bcast_in_dim(f, D, 3, d3, b01);
  tt_val_t a = tt_l_unary(f, "stablehlo.abs", diff), sg = tt_l_unary(f, "stablehlo.sign", diff);
  tt_val_t zero = K(diff, 0), dz = tt__ew_cmpk(f, "EQ", dist, 0), r;
  if (p == 1) {
    r = MUL(g3, sg);
  } else if (p == 2) {
    r = tt_l_select(f, dz, zero, tt_l_binary(f, "stablehlo.divide", MUL(g3, diff), dist));
  } else if (isinf(p)) {
    r = MUL(MUL(g3, sg), tt_l_convert(f, tt_l_compare(f, "EQ", a, dist), dt));
  } else if (p < 2) {
    tt_val_t num = MUL(MUL(sg, tt_l_binary(f, "stablehlo.power", a, K(a, p - 1))), g3);
    r = tt_l_binary(f, "stablehlo.divide", num, tt_l_binary(f, "stablehlo.power", dist, K(dist, p - 1)));
    tt_val_t skip = dz;
    if (p < 1) skip = tt_l_binary(f, "stablehlo.or", skip, tt__ew_cmpk(f, "EQ", diff, 0));
    r = tt_l_select(f, skip, zero, r);
  } else {
    tt_val_t num = MUL(MUL(diff, tt_l_binary(f, "stablehlo.power", a, K(a, p - 2))), g3);
    r = tt_l_binary(f, "stablehlo.divide", num, tt_l_binary(f, "stablehlo.power", dist, K(dist, p - 1)));
    r = tt_l_select(f, dz, zero, r);
  }
  tt_val_t diag = tt_lt_bcast_in_dim(f, tt_l_compare(f, "EQ", tt_lt_iota(f, TT_I64, 2, d2, 0), tt_lt_iota(f, TT_I64, 2, d2, 1)), 3, d3, b01);
  r = tt_l_select(f, diag, zero, r);
  return tt_l_set_out(c, 0, tt_lt_sum(f, r, 2u));
}

#define ROW(name, fn) {"aten::" name, fn, 0, 0}

const tt_lower_entry_t tt_lower_nn_more_loss[] = {
    ROW("multi_margin_loss", lower_multi_margin),
    ROW("multi_margin_loss.out", lower_multi_margin),
    ROW("multi_margin_loss_backward", lower_multi_margin_bwd),
    ROW("multi_margin_loss_backward.grad_input", lower_multi_margin_bwd),
    ROW("multilabel_margin_loss_forward", lower_multilabel_margin),
    ROW("multilabel_margin_loss_forward.output", lower_multilabel_margin),
    ROW("multilabel_margin_loss_backward", lower_multilabel_margin_bwd),
    ROW("multilabel_margin_loss_backward.grad_input", lower_multilabel_margin_bwd),
    ROW("_pdist_forward", lower_pdist),
    ROW("_pdist_forward.out", lower_pdist),
    ROW("_pdist_backward", lower_pdist_bwd),
    ROW("_pdist_backward.out", lower_pdist_bwd),
};
const int tt_lower_nn_more_loss_count = TT_TABLE_COUNT(tt_lower_nn_more_loss);
