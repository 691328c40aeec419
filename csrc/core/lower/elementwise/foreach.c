/* The foreach family (_foreach_add_, _foreach_addcdiv_, ... as torch.optim's
 * foreach paths call them): each row names, through its param, the lowering
 * of the per-element op ("aten::add.Tensor", ...). The element i sub-call
 * gets the i-th tensor of every Tensor[] argument, the i-th scalar of every
 * Scalar[] argument, and every other argument (a single Scalar or Tensor, an
 * attribute) as is; its single output is output i. So a foreach op computes
 * exactly what the loop of single-tensor ops computes (ATen's slow path).
 *
 * Complex values: every foreach record says TT_LF_COMPLEX, and each element
 * is held to its per-element op's own fact instead (a float list with a
 * complex Scalar gives complex results where add.Scalar computes them, and is
 * refused where clamp_min does not), so the fact lives in one record. */
#include <string.h>

#include "lower_elementwise.h"
#include "../tt_lower_tables.h"

typedef enum fbase {
  FB_ADD_T, FB_ADD_S, FB_SUB_T, FB_SUB_S, FB_MUL_T, FB_MUL_S, FB_DIV_T, FB_DIV_S,
  FB_ADDCMUL, FB_ADDCMUL_T, FB_ADDCDIV, FB_ADDCDIV_T, FB_LERP_T, FB_LERP_S,
  FB_POW_TT, FB_POW_TS, FB_POW_ST, FB_MAXIMUM, FB_MINIMUM,
  FB_CLAMP_MIN_S, FB_CLAMP_MIN_T, FB_CLAMP_MAX_S, FB_CLAMP_MAX_T,
  FB_ZERO, FB_COPY, FB_CLONE,
  FB_ABS, FB_ACOS, FB_ASIN, FB_ATAN, FB_CEIL, FB_COS, FB_COSH, FB_ERF, FB_ERFC, FB_EXP,
  FB_EXPM1, FB_FLOOR, FB_FRAC, FB_LGAMMA, FB_LOG, FB_LOG10, FB_LOG1P, FB_LOG2, FB_NEG,
  FB_RECIPROCAL, FB_ROUND, FB_RSQRT, FB_SIGMOID, FB_SIGN, FB_SIN, FB_SINH, FB_SQRT, FB_TAN,
  FB_TANH, FB_TRUNC,
  FB_COUNT
} fbase_t;

typedef struct fbinfo {
  const char* base;   /* the per-element lowering's ATen name, or NULL: `local` */
  tt_lower_fn_t local;
  int slice_arg;      /* a Tensor argument holding one scalar per element (or -1) */
} fbinfo_t;

static tt_status_t clone_one(tt_lctx_t* c) { return tt_l_set_out(c, 0, c->args[0].val); }

#define N_(b) {"aten::" b, NULL, -1}
static const fbinfo_t k_fb[] = {
    [FB_ADD_T] = N_("add.Tensor"), [FB_ADD_S] = N_("add.Scalar"),
    [FB_SUB_T] = N_("sub.Tensor"), [FB_SUB_S] = N_("sub.Scalar"),
    [FB_MUL_T] = N_("mul.Tensor"), [FB_MUL_S] = N_("mul.Scalar"),
    [FB_DIV_T] = N_("div.Tensor"), [FB_DIV_S] = N_("div.Scalar"),
    [FB_ADDCMUL] = N_("addcmul"), [FB_ADDCMUL_T] = {"aten::addcmul", NULL, 3},
    [FB_ADDCDIV] = N_("addcdiv"), [FB_ADDCDIV_T] = {"aten::addcdiv", NULL, 3},
    [FB_LERP_T] = N_("lerp.Tensor"), [FB_LERP_S] = N_("lerp.Scalar"),
    [FB_POW_TT] = N_("pow.Tensor_Tensor"), [FB_POW_TS] = N_("pow.Tensor_Scalar"),
    [FB_POW_ST] = N_("pow.Scalar"),
    [FB_MAXIMUM] = N_("maximum"), [FB_MINIMUM] = N_("minimum"),
    [FB_CLAMP_MIN_S] = N_("clamp_min"), [FB_CLAMP_MIN_T] = N_("clamp_min.Tensor"),
    [FB_CLAMP_MAX_S] = N_("clamp_max"), [FB_CLAMP_MAX_T] = N_("clamp_max.Tensor"),
    [FB_ZERO] = {NULL, tt__ew_lower_zero, -1}, [FB_COPY] = N_("copy"),
    [FB_CLONE] = {NULL, clone_one, -1},
    [FB_ABS] = N_("abs"), [FB_ACOS] = N_("acos"), [FB_ASIN] = N_("asin"), [FB_ATAN] = N_("atan"),
    [FB_CEIL] = N_("ceil"), [FB_COS] = N_("cos"), [FB_COSH] = N_("cosh"), [FB_ERF] = N_("erf"),
    [FB_ERFC] = N_("erfc"), [FB_EXP] = N_("exp"), [FB_EXPM1] = N_("expm1"),
    [FB_FLOOR] = N_("floor"), [FB_FRAC] = N_("frac"), [FB_LGAMMA] = N_("lgamma"),
    [FB_LOG] = N_("log"), [FB_LOG10] = N_("log10"), [FB_LOG1P] = N_("log1p"),
    [FB_LOG2] = N_("log2"), [FB_NEG] = N_("neg"), [FB_RECIPROCAL] = N_("reciprocal"),
    [FB_ROUND] = N_("round"), [FB_RSQRT] = N_("rsqrt"), [FB_SIGMOID] = N_("sigmoid"),
    [FB_SIGN] = N_("sign"), [FB_SIN] = N_("sin"), [FB_SINH] = N_("sinh"), [FB_SQRT] = N_("sqrt"),
    [FB_TAN] = N_("tan"), [FB_TANH] = N_("tanh"), [FB_TRUNC] = N_("trunc"),
};
_Static_assert(sizeof(k_fb) / sizeof(k_fb[0]) == FB_COUNT, "one k_fb row per foreach base");

#define MAX_ARGS 16

/* Element i of a 1-D tensor as a 0-d Scalar value (f64 / i64 / bool, as a
 * Scalar arrives), for the `Tensor scalars` overloads. */
static tt_val_t slice_scalar(tt_shlo_fn_t* f, tt_val_t v, int64_t i) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t one = tt_type_make(t->dtype, 1, (int64_t[]){1});
  tt_val_t s = tt_shlo_opf(f, "stablehlo.slice", &v, 1, &one,
                           "start_indices = array<i64: %lld>, limit_indices = array<i64: %lld>, "
                           "strides = array<i64: 1>",
                           (long long)i, (long long)i + 1);
  s = tt_l_reshape(f, s, 0, NULL);
  tt_dtype_t dt = tt_dtype_is_float(t->dtype) ? TT_F64 : t->dtype == TT_BOOL ? TT_BOOL : TT_I64;
  return tt_l_convert(f, s, dt);
}

/* Whether a per-element call reads or writes a complex value. */
static bool uses_complex(const tt_lctx_t* sc) {
  if (tt_dtype_is_complex(sc->out_types[0].dtype)) return true;
  for (int j = 0; j < sc->nargs; j++) {
    const tt_larg_t* a = &sc->args[j];
    if (a->kind != TT_ARG_TENSOR && a->kind != TT_ARG_SCALAR) continue;
    const tt_type_t* t = tt_shlo_type(sc->f, a->val);
    if (t && tt_dtype_is_complex(t->dtype)) return true;
  }
  return false;
}

static tt_status_t lower_foreach(tt_lctx_t* c) {
  int64_t p = c->op->param;
  if (p < 0 || p >= FB_COUNT || (!k_fb[p].base && !k_fb[p].local))
    return tt_status_make(TT_INTERNAL, "%s: bad foreach param %lld", c->op->name, (long long)p);
  const fbinfo_t* fb = &k_fb[p];
  tt_lower_entry_t local = {c->op->name, fb->local, 0, TT_LF_COMPLEX}; /* any dtype */
  const tt_lower_entry_t* base = fb->base ? tt_lower_find(fb->base) : &local;
  if (!base || !base->fn)
    return tt_status_make(TT_INTERNAL, "%s: no lowering for %s", c->op->name, fb->base);
  if (c->nargs > MAX_ARGS)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: too many arguments", c->op->name);
  int n = c->nout;
  for (int j = 0; j < c->nargs; j++) {
    const tt_larg_t* a = &c->args[j];
    bool list = a->kind == TT_ARG_TENSORS || a->kind == TT_ARG_SCALARS;
    if (list && a->n != n)
      return tt_status_make(TT_INVALID_ARGUMENT,
                            "%s: argument %d has %d elements, expected %d (the number of outputs)",
                            c->op->name, j, a->n, n);
  }
  for (int i = 0; i < n; i++) {
    tt_larg_t sub[MAX_ARGS];
    for (int j = 0; j < c->nargs; j++) {
      const tt_larg_t* a = &c->args[j];
      sub[j] = *a;
      if (a->kind == TT_ARG_TENSORS) {
        const tt_type_t* t = tt_shlo_type(c->f, a->vals[i]);
        sub[j].kind = TT_ARG_TENSOR;
        sub[j].val = a->vals[i];
        sub[j].tier = t && t->rank == 0 ? TT_TIER_ZERO_DIM : TT_TIER_DIM;
      } else if (a->kind == TT_ARG_SCALARS) {
        sub[j].kind = TT_ARG_SCALAR;
        sub[j].val = a->vals[i];
        sub[j].tier = TT_TIER_WRAPPED;
      } else if (a->kind == TT_ARG_TENSOR && j == fb->slice_arg) {
        sub[j].kind = TT_ARG_SCALAR;
        sub[j].val = slice_scalar(c->f, a->val, i);
        sub[j].tier = TT_TIER_WRAPPED;
      }
      if (sub[j].kind == TT_ARG_TENSORS || sub[j].kind == TT_ARG_SCALARS) sub[j].vals = NULL;
    }
    tt_lctx_t sc = {c->f, base, sub, c->nargs, &c->out_types[i], 1, &c->outs[i]};
    const tt_type_t* ot = &c->out_types[i];
    if (tt_type_numel(ot) == 0) { /* nothing to compute (CPU runs no kernel: no refusal either) */
      TT_RETURN_IF_ERROR(tt_l_set_out(&sc, 0, tt_l_full(c->f, ot->dtype, ot->rank, ot->dims, 0)));
      continue;
    }
    if (!(base->flags & TT_LF_COMPLEX) && uses_complex(&sc))
      return tt_status_make(TT_UNIMPLEMENTED,
                            "%s: complex tensors are not supported by %s on the tpu device yet",
                            c->op->name, base->name);
    TT_RETURN_IF_ERROR_CTX(base->fn(&sc), "%s (element %d)", c->op->name, i);
  }
  return NULL;
}

/* ---- the table ---------------------------------------------------------------- */
#define L lower_foreach
/* overload `ov`: functional, in-place, out= */
#define C TT_LF_COMPLEX
#define FV(n, ov, p) {"aten::_foreach_" n "." ov, L, p, C}, {"aten::_foreach_" n "_." ov, L, p, C}, \
                     {"aten::_foreach_" n "." ov "_out", L, p, C},
/* overload-less: functional, in-place, out= */
#define FU(n, p) {"aten::_foreach_" n, L, p, C}, {"aten::_foreach_" n "_", L, p, C}, \
                 {"aten::_foreach_" n ".out", L, p, C},
/* Scalar / List / ScalarList */
#define FSLS(n, s, t) FV(n, "Scalar", s) FV(n, "List", t) FV(n, "ScalarList", s)

const tt_lower_entry_t tt_lower_foreach[] = {
    FSLS("add", FB_ADD_S, FB_ADD_T) FV("add", "Tensor", FB_ADD_T)
    FSLS("sub", FB_SUB_S, FB_SUB_T)
    FSLS("mul", FB_MUL_S, FB_MUL_T) FV("mul", "Tensor", FB_MUL_T)
    FSLS("div", FB_DIV_S, FB_DIV_T) FV("div", "Tensor", FB_DIV_T)
    FV("addcmul", "Scalar", FB_ADDCMUL) FV("addcmul", "ScalarList", FB_ADDCMUL)
    FV("addcmul", "Tensor", FB_ADDCMUL_T)
    FV("addcdiv", "Scalar", FB_ADDCDIV) FV("addcdiv", "ScalarList", FB_ADDCDIV)
    FV("addcdiv", "Tensor", FB_ADDCDIV_T)
    FV("lerp", "List", FB_LERP_T) FV("lerp", "Scalar", FB_LERP_S) FV("lerp", "ScalarList", FB_LERP_S)
    FSLS("pow", FB_POW_TS, FB_POW_TT)
    {"aten::_foreach_pow.ScalarAndTensor", L, FB_POW_ST, C},
    FSLS("maximum", FB_CLAMP_MIN_S, FB_MAXIMUM) FSLS("minimum", FB_CLAMP_MAX_S, FB_MINIMUM)
    FSLS("clamp_min", FB_CLAMP_MIN_S, FB_CLAMP_MIN_T) FSLS("clamp_max", FB_CLAMP_MAX_S, FB_CLAMP_MAX_T)
    {"aten::_foreach_zero", L, FB_ZERO, C},
    {"aten::_foreach_zero_", L, FB_ZERO, TT_LF_WRITE_ONLY | C},
    {"aten::_foreach_zero.out", L, FB_ZERO, C},
    {"aten::_foreach_copy", L, FB_COPY, C},
    {"aten::_foreach_copy_", L, FB_COPY, TT_LF_WRITE_ONLY | C},
    {"aten::_foreach_copy.out", L, FB_COPY, C},
    {"aten::_foreach_clone", L, FB_CLONE, C},
    {"aten::_foreach_clone.out", L, FB_CLONE, C},
    FU("abs", FB_ABS) FU("acos", FB_ACOS) FU("asin", FB_ASIN) FU("atan", FB_ATAN)
    FU("ceil", FB_CEIL) FU("cos", FB_COS) FU("cosh", FB_COSH) FU("erf", FB_ERF)
    FU("erfc", FB_ERFC) FU("exp", FB_EXP) FU("expm1", FB_EXPM1) FU("floor", FB_FLOOR)
    FU("frac", FB_FRAC) FU("lgamma", FB_LGAMMA) FU("log", FB_LOG) FU("log10", FB_LOG10)
    FU("log1p", FB_LOG1P) FU("log2", FB_LOG2) FU("neg", FB_NEG) FU("reciprocal", FB_RECIPROCAL)
    FU("round", FB_ROUND) FU("rsqrt", FB_RSQRT) FU("sigmoid", FB_SIGMOID) FU("sign", FB_SIGN)
    FU("sin", FB_SIN) FU("sinh", FB_SINH) FU("sqrt", FB_SQRT) FU("tan", FB_TAN)
    FU("tanh", FB_TANH) FU("trunc", FB_TRUNC)
};
const int tt_lower_foreach_count = TT_TABLE_COUNT(tt_lower_foreach);

/* The Scalars CPU's per-element kernels convert to the element type (checked for overflow by
 * the bridge, per element): lerp's weight and addcmul / addcdiv's value in the opmath type,
 * add / sub's alpha, the bound of clamp_min / clamp_max (which maximum / minimum run). A
 * Scalar[] converts its i-th value for element i; a Scalar that becomes a wrapped number
 * (add.Scalar's) converts none. */
#define FF(n, s) TT_FACT_SCALARS("aten::_foreach_" n, 0, s), TT_FACT_SCALARS("aten::_foreach_" n "_", 0, s)
const tt_lower_fact_t tt_lower_foreach_facts[] = {
    FF("lerp", "weight:opmath"),
    FF("addcmul", "value:opmath scalars:opmath"),
    FF("addcdiv", "value:opmath scalars:opmath"),
    FF("add", "alpha:result"),
    FF("sub", "alpha:neg_result"),
    FF("clamp_min", "scalar:result scalars:result"),
    FF("clamp_max", "scalar:result scalars:result"),
    FF("maximum", "scalar:result scalars:result"),
    FF("minimum", "scalar:result scalars:result"),
};
const int tt_lower_foreach_facts_count = TT_TABLE_COUNT(tt_lower_foreach_facts);
