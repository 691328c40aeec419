/* Matrix products: mm, bmm, mv, dot and their add* forms, as one
 * stablehlo.dot_general at HIGHEST precision (TPU/GPU would otherwise use
 * reduced-precision passes). f16/bf16 multiply in f32 and round once at the
 * end, as PyTorch CPU accumulates in f32; integers multiply in their own
 * dtype (wrap-around equals PyTorch's). float8 multiplies in f32 too, and
 * so does _scaled_mm, float8's scaled product. */
#include <math.h>
#include <stdio.h>

#include "../lower_tensor_util.h"
#include "../elementwise/lower_elementwise.h"
#include "../tt_lower_tables.h"

enum mm_kind { MM, BMM, MV, DOT, ADDMM, BADDBMM, ADDMV, ADDBMM, ADDR, ADDMM_ACT };
#define MM_DTYPE 0x100 /* the schema has a ScalarType out_dtype after the tensors */
#define MM_CONJ 0x200  /* vdot: the first operand is conjugated (complex) */
#define MM_KIND(p) ((int)((p) & 0xff))

typedef struct dims_spec {
  int nb, nc;
  int64_t lb[2], rb[2], lc[2], rc[2];
} dims_spec_t;

static void put_list(tt_sbuf_t* a, const char* name, const int64_t* v, int n, bool* first) {
  if (!n) return;
  tt_sbuf_printf(a, "%s%s = ", *first ? "" : ", ", name);
  tt_shlo_fmt_i64_list(a, v, n);
  *first = false;
}

/* dot_general of a and b (same dtype) with result type rt. */
static tt_val_t dot(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b, const dims_spec_t* s,
                    const tt_type_t* rt) {
  tt_sbuf_t at;
  tt_sbuf_init(&at);
  bool first = true;
  tt_sbuf_append(&at, "dot_dimension_numbers = #stablehlo.dot<");
  put_list(&at, "lhs_batching_dimensions", s->lb, s->nb, &first);
  put_list(&at, "rhs_batching_dimensions", s->rb, s->nb, &first);
  put_list(&at, "lhs_contracting_dimensions", s->lc, s->nc, &first);
  put_list(&at, "rhs_contracting_dimensions", s->rc, s->nc, &first);
  tt_sbuf_append(&at, ">, precision_config = [#stablehlo<precision HIGHEST>, "
                      "#stablehlo<precision HIGHEST>]");
  tt_val_t ops[2] = {a, b};
  tt_val_t r = tt_shlo_op(f, "stablehlo.dot_general", ops, 2, rt, at.data);
  tt_sbuf_free(&at);
  return r;
}

/* The product term of each kind, in dtype cdt. */
static tt_val_t product(tt_lctx_t* c, int kind, tt_val_t a, tt_val_t b, tt_dtype_t cdt, int ialpha) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* at = tt_shlo_type(f, a);
  const tt_type_t* bt = tt_shlo_type(f, b);
  if (!at || !bt) return TT_SHLO_INVALID;
  dims_spec_t s = {0};
  tt_type_t rt = tt_type_scalar(cdt);
  switch (kind) {
    case MM: case ADDMM: case ADDMM_ACT:
      s = (dims_spec_t){0, 1, {0}, {0}, {1}, {0}};
      rt.rank = 2, rt.dims[0] = at->dims[0], rt.dims[1] = bt->dims[1];
      break;
    case BMM: case BADDBMM:
      s = (dims_spec_t){1, 1, {0}, {0}, {2}, {1}};
      rt.rank = 3, rt.dims[0] = at->dims[0], rt.dims[1] = at->dims[1], rt.dims[2] = bt->dims[2];
      break;
    case MV: case ADDMV:
      s = (dims_spec_t){0, 1, {0}, {0}, {1}, {0}};
      rt.rank = 1, rt.dims[0] = at->dims[0];
      break;
    case DOT:
      s = (dims_spec_t){0, 1, {0}, {0}, {0}, {0}};
      break;
    case ADDBMM:
      s = (dims_spec_t){0, 2, {0}, {0}, {0, 2}, {0, 1}};
      rt.rank = 2, rt.dims[0] = at->dims[1], rt.dims[1] = bt->dims[2];
      break;
    case ADDR: { /* outer product: (alpha * vec1) * vec2, as PyTorch orders it */
      int64_t d[2] = {at->dims[0], bt->dims[0]};
      int64_t b0[1] = {0}, b1[1] = {1};
      const char* mul = cdt == TT_BOOL ? "stablehlo.and" : "stablehlo.multiply";
      tt_val_t alpha = tt_lt_splat(f, tt_lt_scalar(c, ialpha, cdt), at->rank, at->dims);
      tt_val_t x = tt_lt_bcast_in_dim(f, tt_l_binary(f, mul, alpha, a), 2, d, b0);
      return tt_l_binary(f, mul, x, tt_lt_bcast_in_dim(f, b, 2, d, b1));
    }
    default:
      tt_shlo_fail(f, "matmul: bad kind %d", kind);
      return TT_SHLO_INVALID;
  }
  return dot(f, a, b, &s, &rt);
}

static tt_status_t lower_matmul(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int kind = MM_KIND(c->op->param);
  bool add = kind >= ADDMM;
  int ia = add ? 1 : 0, ib = ia + 1;
  int ibeta = ib + 1 + ((c->op->param & MM_DTYPE) ? 1 : 0), ialpha = ibeta + 1;
  tt_dtype_t in_dt = tt_l_arg_dtype(c, ia);
  if (in_dt != tt_l_arg_dtype(c, ib))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected both operands to have the same dtype, got %s and %s",
                          c->op->name, tt_dtype_name(in_dt), tt_dtype_name(tt_l_arg_dtype(c, ib)));
  if (in_dt == TT_BOOL && kind != ADDR)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: not implemented for 'Bool'", c->op->name);
  tt_dtype_t cdt = tt_l_opmath(in_dt); /* out_dtype variants only allow f32 for half inputs */
  tt_val_t a = tt_l_convert(f, c->args[ia].val, cdt);
  if ((c->op->param & MM_CONJ) && tt_dtype_is_complex(cdt)) {
    tt_type_t pt = *tt_shlo_type(f, a), ct = pt;
    pt.dtype = tt_dtype_real_part(cdt);
    tt_val_t parts[2] = {tt_shlo_op(f, "stablehlo.real", &a, 1, &pt, NULL),
                         tt_shlo_op(f, "stablehlo.imag", &a, 1, &pt, NULL)};
    parts[1] = tt_l_unary(f, "stablehlo.negate", parts[1]);
    a = tt_shlo_op(f, "stablehlo.complex", parts, 2, &ct, NULL);
  }
  tt_val_t b = tt_l_convert(f, c->args[ib].val, cdt);
  tt_val_t r = product(c, kind, a, b, cdt, ialpha);
  if (add) {
    const tt_type_t* rtp = tt_shlo_type(f, r);
    if (!rtp) return tt_status_make(TT_INTERNAL, "%s: product failed", c->op->name);
    tt_type_t rt = *rtp;
    const char* mul = cdt == TT_BOOL ? "stablehlo.and" : "stablehlo.multiply";
    const char* addop = cdt == TT_BOOL ? "stablehlo.or" : "stablehlo.add";
    if (kind != ADDR) { /* addr applied alpha already */
      tt_val_t alpha = tt_lt_splat(f, tt_lt_scalar(c, ialpha, cdt), rt.rank, rt.dims);
      r = tt_l_binary(f, mul, alpha, r);
    }
    /* beta == 0 ignores self entirely (NaN/inf in self do not propagate) */
    tt_val_t beta0 = tt_lt_scalar(c, ibeta, cdt);
    tt_val_t self = tt_l_arg_as(c, 0, cdt, &rt);
    tt_val_t beta = tt_lt_splat(f, beta0, rt.rank, rt.dims);
    tt_val_t term = tt_l_binary(f, mul, beta, self);
    tt_val_t zero = tt_shlo_const(f, &rt, 0.0);
    term = tt_l_select(f, tt_l_compare(f, "EQ", beta, zero), zero, term);
    r = tt_l_binary(f, addop, term, r);
    if (kind == ADDMM_ACT) {
      if (c->args[ialpha + 1].i) { /* CPU: the product rounded to the dtype, then gelu_ (erf form) */
        tt_dtype_t od = c->out_types[0].dtype, om = tt_l_opmath(od);
        tt_val_t x = tt_l_convert(f, tt_l_convert(f, r, od), om);
        tt_val_t e = tt__ew_addk(f, tt__ew_erf(f, tt__ew_mulk(f, x, M_SQRT1_2)), 1.0);
        r = tt__ew_mul(f, tt__ew_mulk(f, x, 0.5), e);
      } else {
        r = tt_lt_minmax(f, "stablehlo.maximum", r, zero); /* relu keeps NaN */
      }
    }
  }
  return tt_l_set_out(c, 0, r);
}

/* float8's scaled products as CPU computes them (Blas.cpp's emulated kernel):
 * each operand widened to f32 and multiplied by its scale (a single value,
 * or per row of self (M, 1) and per column of mat2 (1, N)), their f32
 * product, + bias (in f32), times 1 / scale_result (an f32 quotient) for a
 * float8 result, then rounded to the result's dtype. use_fast_accum picks
 * CUDA kernels only. The bridge checks the arguments as CPU does.
 * sr: scale_result, or TT_SHLO_INVALID; bias likewise. */
static tt_status_t scaled_product(tt_lctx_t* c, tt_val_t sa, tt_val_t sb, tt_val_t bias, tt_val_t sr) {
  tt_shlo_fn_t* f = c->f;
  const tt_type_t* ot = &c->out_types[0];
  if (tt_type_numel(ot) == 0) return tt_l_set_out(c, 0, tt_shlo_const(f, ot, 0.0));
  tt_val_t ab[2], sc[2] = {sa, sb};
  for (int k = 0; k < 2; k++) {
    tt_val_t x = tt_l_convert(f, c->args[k].val, TT_F32);
    const tt_type_t* xt = tt_shlo_type(f, x);
    if (!xt) return tt_status_make(TT_INTERNAL, "%s: operand failed", c->op->name);
    tt_type_t t = *xt;
    tt_val_t s = tt_l_convert(f, sc[k], TT_F32);
    const tt_type_t* st = tt_shlo_type(f, s);
    if (st && tt_type_numel(st) == 1 && st->rank != 2) s = tt_l_reshape(f, s, 0, NULL);
    ab[k] = tt_l_binary(f, "stablehlo.multiply", x, tt_l_broadcast(f, s, t.rank, t.dims));
  }
  dims_spec_t sp = {0, 1, {0}, {0}, {1}, {0}};
  tt_type_t rt = tt_type_make(TT_F32, 2, ot->dims);
  tt_val_t r = dot(f, ab[0], ab[1], &sp, &rt);
  if (bias != TT_SHLO_INVALID)
    r = tt_l_binary(f, "stablehlo.add", r, tt_l_broadcast(f, tt_l_convert(f, bias, TT_F32), 2, rt.dims));
  if ((ot->dtype == TT_F8E4M3FN || ot->dtype == TT_F8E5M2) && sr != TT_SHLO_INVALID) {
    tt_val_t s = tt_l_reshape(f, tt_l_convert(f, sr, TT_F32), 0, NULL);
    tt_type_t one = tt_type_scalar(TT_F32);
    s = tt_l_binary(f, "stablehlo.divide", tt_shlo_const(f, &one, 1.0), s);
    r = tt_l_binary(f, "stablehlo.multiply", r, tt_l_broadcast(f, s, 2, rt.dims));
  }
  return tt_l_set_out(c, 0, tt_l_convert(f, r, ot->dtype));
}

static tt_val_t opt_tensor(const tt_larg_t* a) { return a->kind == TT_ARG_TENSOR ? a->val : TT_SHLO_INVALID; }

/* _scaled_mm(self, mat2, scale_a, scale_b, bias?, scale_result?, out_dtype?, use_fast_accum) */
static tt_status_t lower_scaled_mm(tt_lctx_t* c) {
  return scaled_product(c, c->args[2].val, c->args[3].val, opt_tensor(&c->args[4]), opt_tensor(&c->args[5]));
}

/* _scaled_mm_v2(self, mat2, scale_a[], recipe_a[], swizzle_a[], scale_b[], recipe_b[], swizzle_b[],
 * bias?, out_dtype?, contraction_dim[], use_fast_accum): CPU's tensor-wise and row-wise recipes, one
 * scale per operand (F.scaled_mm). */
static tt_status_t lower_scaled_mm_v2(tt_lctx_t* c) {
  const tt_type_t* at = tt_shlo_type(c->f, c->args[0].val);
  if (at && at->dims[1] == 0) /* CPU returns zeros before reading the scales or adding the bias */
    return tt_l_set_out(c, 0, tt_shlo_const(c->f, &c->out_types[0], 0.0));
  if (c->args[2].kind != TT_ARG_TENSORS || c->args[5].kind != TT_ARG_TENSORS || c->args[2].n < 1 ||
      c->args[5].n < 1)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expected a scale for each operand", c->op->name);
  return scaled_product(c, c->args[2].vals[0], c->args[5].vals[0], opt_tensor(&c->args[8]), TT_SHLO_INVALID);
}

#define ROWS(base, kind)                                       \
  {"aten::" base, lower_matmul, kind, 0},                      \
  {"aten::" base ".out", lower_matmul, kind, 0}
#define ROWS_DT(base, kind)                                    \
  {"aten::" base ".dtype", lower_matmul, (kind) | MM_DTYPE, 0}, \
  {"aten::" base ".dtype_out", lower_matmul, (kind) | MM_DTYPE, 0}

const tt_lower_entry_t tt_lower_matmul[] = {
    ROWS("mm", MM),           ROWS_DT("mm", MM),
    ROWS("bmm", BMM),         ROWS_DT("bmm", BMM),
    ROWS("mv", MV),           ROWS("dot", DOT),
    {"aten::vdot", lower_matmul, DOT | MM_CONJ, 0}, {"aten::vdot.out", lower_matmul, DOT | MM_CONJ, 0},
    ROWS("addmm", ADDMM),     ROWS_DT("addmm", ADDMM),
    {"aten::addmm_", lower_matmul, ADDMM, 0},
    ROWS("baddbmm", BADDBMM), ROWS_DT("baddbmm", BADDBMM),
    {"aten::baddbmm_", lower_matmul, BADDBMM, 0},
    ROWS("addmv", ADDMV),     {"aten::addmv_", lower_matmul, ADDMV, 0},
    ROWS("addbmm", ADDBMM),   {"aten::addbmm_", lower_matmul, ADDBMM, 0},
    ROWS("addr", ADDR),       {"aten::addr_", lower_matmul, ADDR, 0},
    ROWS("_addmm_activation", ADDMM_ACT),
    {"aten::_scaled_mm", lower_scaled_mm, 0, 0}, {"aten::_scaled_mm.out", lower_scaled_mm, 0, 0},
    {"aten::_scaled_mm_v2", lower_scaled_mm_v2, 0, 0}, {"aten::_scaled_mm_v2.out", lower_scaled_mm_v2, 0, 0},
};
const int tt_lower_matmul_count = TT_TABLE_COUNT(tt_lower_matmul);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_matmul_facts[] = {
    TT_FACT("aten::mm", TT_LF_COMPLEX_SAME), TT_FACT("aten::bmm", TT_LF_COMPLEX_SAME),
    TT_FACT("aten::mv", TT_LF_COMPLEX_SAME), TT_FACT("aten::dot", TT_LF_COMPLEX_SAME),
    TT_FACT("aten::vdot", TT_LF_COMPLEX_SAME), TT_FACT("aten::addmm", TT_LF_COMPLEX_SAME),
    TT_FACT("aten::addmm_", TT_LF_COMPLEX_SAME), TT_FACT("aten::baddbmm", TT_LF_COMPLEX_SAME),
    TT_FACT("aten::baddbmm_", TT_LF_COMPLEX_SAME), TT_FACT("aten::addmv", TT_LF_COMPLEX_SAME),
    TT_FACT("aten::addmv_", TT_LF_COMPLEX_SAME), TT_FACT("aten::addbmm", TT_LF_COMPLEX_SAME),
    TT_FACT("aten::addbmm_", TT_LF_COMPLEX_SAME), TT_FACT("aten::addr", TT_LF_COMPLEX_SAME),
    TT_FACT("aten::addr_", TT_LF_COMPLEX_SAME),
    /* compile-time bucketing (tt_lower_bucket_t); not the .dtype overloads */
    TT_FACT_BUCKET("aten::mm.default", TT_BUCKET_MATMUL),
    TT_FACT_BUCKET("aten::bmm.default", TT_BUCKET_MATMUL),
    TT_FACT_BUCKET("aten::addmm.default", TT_BUCKET_MATMUL_BIAS),
    TT_FACT_BUCKET("aten::baddbmm.default", TT_BUCKET_MATMUL_BIAS),
};
const int tt_lower_matmul_facts_count = TT_TABLE_COUNT(tt_lower_matmul_facts);
