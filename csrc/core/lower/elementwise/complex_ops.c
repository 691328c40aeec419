/* Complex construction and conjugation: complex(real, imag), polar(abs,
 * angle) and conj_physical. real / imag / view_as_real / view_as_complex /
 * conj are views (the bridge and the runtime's view reads handle them); these
 * are the ops that compute. Which ops may see complex tensors at all is
 * a fact beside each family's table (TT_LF_COMPLEX). */
#include "lower_elementwise.h"
#include "../tt_lower_tables.h"

static tt_status_t need_complex_out(tt_lctx_t* c) {
  if (!tt_dtype_is_complex(c->out_types[0].dtype))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: the result must be complex, not %s", c->op->name,
                          tt_dtype_name(c->out_types[0].dtype));
  return NULL;
}

/* complex(real, imag) / polar(abs, angle): args 0 and 1 are real tensors of
 * one float dtype (PyTorch checks), broadcast together. */
static tt_status_t lower_complex(tt_lctx_t* c) {
  TT_RETURN_IF_ERROR(need_complex_out(c));
  const tt_type_t* ot = &c->out_types[0];
  tt_dtype_t pd = tt_dtype_real_part(ot->dtype);
  tt_val_t a = tt_l_arg_as(c, 0, pd, ot), b = tt_l_arg_as(c, 1, pd, ot);
  if (c->op->param) { /* polar: abs * cos(angle), abs * sin(angle) */
    tt_val_t re = tt_l_binary(c->f, "stablehlo.multiply", a, tt_l_unary(c->f, "stablehlo.cosine", b));
    tt_val_t im = tt_l_binary(c->f, "stablehlo.multiply", a, tt_l_unary(c->f, "stablehlo.sine", b));
    a = re;
    b = im;
  }
  return tt_l_set_out(c, 0, tt__cx_make(c->f, a, b));
}

/* conj_physical: conj of a complex tensor, a copy of a real one. */
static tt_status_t lower_conj_physical(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t x = c->args[0].val;
  const tt_type_t* t = tt_shlo_type(f, x);
  if (!t) return tt_status_make(TT_INTERNAL, "%s: bad input", c->op->name);
  if (tt_dtype_is_complex(t->dtype)) {
    tt_type_t pt = *t;
    pt.dtype = tt_dtype_real_part(t->dtype);
    tt_val_t re = tt_shlo_op(f, "stablehlo.real", &x, 1, &pt, NULL);
    tt_val_t im = tt_shlo_op(f, "stablehlo.imag", &x, 1, &pt, NULL);
    x = tt__cx_make(f, re, tt_l_unary(f, "stablehlo.negate", im));
  }
  return tt_l_set_out(c, 0, x);
}

/* abs / angle / sgn of a complex tensor (arg 0), for the families that own
 * those ATen names (unary.c, special_misc.c): they delegate complex inputs
 * here (their facts say TT_LF_COMPLEX). abs = hypot(re,
 * im) and angle = atan2(im, re) as std::abs / std::arg; sgn = z / |z| (a
 * complex over a real), 0 at 0. */
tt_status_t tt__cx_unary(tt_lctx_t* c, int which) {
  tt_shlo_fn_t* f = c->f;
  tt_val_t z = c->args[0].val;
  const tt_type_t* t = tt_shlo_type(f, z);
  if (!t || !tt_dtype_is_complex(t->dtype))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: expects a complex input", c->op->name);
  tt_type_t pt = *t;
  pt.dtype = tt_dtype_real_part(t->dtype);
  tt_val_t mag = tt__cx_abs(f, z);
  switch (which) {
    case TT_CX_ABS:
      return tt_l_set_out(c, 0, mag);
    case TT_CX_ANGLE: {
      tt_val_t ops[2] = {tt_shlo_op(f, "stablehlo.imag", &z, 1, &pt, NULL),
                         tt_shlo_op(f, "stablehlo.real", &z, 1, &pt, NULL)};
      return tt_l_set_out(c, 0, tt_shlo_op(f, "stablehlo.atan2", ops, 2, &pt, NULL));
    }
    default: {
      tt_val_t zero = tt_l_full(f, pt.dtype, pt.rank, pt.dims, 0.0);
      tt_val_t is0 = tt_l_compare(f, "EQ", mag, zero);
      /* each part divided by the real |z|, as ATen's z / std::abs(z) */
      tt_val_t q = tt__cx_make(f, tt_l_binary(f, "stablehlo.divide", tt__cx_re(f, z), mag),
                               tt_l_binary(f, "stablehlo.divide", tt__cx_im(f, z), mag));
      tt_val_t z0 = tt_l_full(f, t->dtype, t->rank, t->dims, 0.0);
      return tt_l_set_out(c, 0, tt_l_select(f, is0, z0, q));
    }
  }
}

static tt_status_t lower_complex_unary(tt_lctx_t* c) { return tt__cx_unary(c, (int)c->op->param); }

#define R(name, fn, param) {"aten::" name, fn, param, 0}
const tt_lower_entry_t tt_lower_complex_ops[] = {
    R("complex", lower_complex, 0),
    R("complex.out", lower_complex, 0),
    R("polar", lower_complex, 1),
    R("polar.out", lower_complex, 1),
    R("_conj_physical", lower_conj_physical, 0),
    R("conj_physical.out", lower_conj_physical, 0),
    R("conj_physical_", lower_conj_physical, 0),
    {"tt::complex_abs", lower_complex_unary, TT_CX_ABS, 0},
    {"tt::complex_angle", lower_complex_unary, TT_CX_ANGLE, 0},
    {"tt::complex_sgn", lower_complex_unary, TT_CX_SGN, 0},
};
const int tt_lower_complex_ops_count = TT_TABLE_COUNT(tt_lower_complex_ops);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. */
const tt_lower_fact_t tt_lower_complex_ops_facts[] = {
    TT_FACT("aten::_conj_physical", TT_LF_COMPLEX),
    TT_FACT("aten::conj_physical", TT_LF_COMPLEX | TT_LF_OUT_SAME_DTYPE),
    TT_FACT("aten::conj_physical_", TT_LF_COMPLEX), TT_FACT("aten::complex", TT_LF_COMPLEX),
    TT_FACT("aten::polar", TT_LF_COMPLEX), TT_FACT("tt::complex_abs", TT_LF_COMPLEX),
    TT_FACT("tt::complex_angle", TT_LF_COMPLEX), TT_FACT("tt::complex_sgn", TT_LF_COMPLEX),
};
const int tt_lower_complex_ops_facts_count = TT_TABLE_COUNT(tt_lower_complex_ops_facts);
