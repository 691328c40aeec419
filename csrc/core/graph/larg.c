/* A call's argument as its lowering sees it (larg.h). */
#include <string.h>

#include "larg.h"

void tt_larg_attr(const tt_call_arg_t* a, tt_larg_t* l) {
  switch (a->kind) {
    case TT_ARG_INT:
    case TT_ARG_BOOL:
      l->i = a->i;
      return;
    case TT_ARG_FLOAT:
      l->f = a->f;
      return;
    case TT_ARG_INTS:
      l->ints = a->ints;
      l->n = a->n;
      return;
    case TT_ARG_STR:
      l->str = a->str;
      return;
    default:
      return;
  }
}

void tt__larg_make(tt_shlo_fn_t* f, const tt_call_arg_t* a, bool as_out, const tt_larg_src_t* src, tt_larg_t* l) {
  memset(l, 0, sizeof(*l));
  l->kind = as_out ? TT_ARG_OUT : a->kind;
  l->val = TT_SHLO_INVALID;
  switch (l->kind) {
    case TT_ARG_TENSOR:
      l->tier = a->tier;
      l->val = a->on_host ? src->scalar(src->ctx, a) : src->tensor(src->ctx, a);
      return;
    case TT_ARG_SCALAR:
      l->tier = TT_TIER_WRAPPED;
      l->val = src->scalar(src->ctx, a);
      return;
    case TT_ARG_TENSORS:
    case TT_ARG_SCALARS: {
      tt_val_t* vals = src->list(src->ctx, a->n);
      if (!vals) {
        tt_shlo_fail(f, "out of host memory (argument list)");
        return;
      }
      l->tier = TT_TIER_DIM; /* the list's tier is its first element's */
      for (int i = 0; i < a->n; i++) {
        tt_larg_t sub;
        tt__larg_make(f, &a->list[i], false, src, &sub);
        vals[i] = sub.val;
        if (i == 0) l->tier = sub.tier;
      }
      l->vals = vals;
      l->n = a->n;
      return;
    }
    default:
      tt_larg_attr(a, l);
      return;
  }
}
