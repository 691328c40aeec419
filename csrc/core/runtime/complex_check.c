/* Complex tensors reach a lowering only if its entry says it computes on
 * complex values (TT_LF_COMPLEX, or TT_LF_COMPLEX_SAME when every tensor is
 * complex: the facts beside each family's table in core/lower). Everything
 * else fails with a clear TT_UNIMPLEMENTED instead of a silent wrong answer. */
#include "internal.h"

/* every tensor complex (wrapped numbers and Scalars of any kind convert to
 * the complex compute dtype) */
static bool all_complex(const tt_call_arg_t* a) {
  switch (a->kind) {
    case TT_ARG_TENSOR:
      if (a->on_host && a->tier == TT_TIER_WRAPPED) return true;
      return tt_dtype_is_complex(a->on_host ? a->sdtype : a->view.dtype);
    case TT_ARG_TENSORS:
      for (int i = 0; i < a->n; i++)
        if (!all_complex(&a->list[i])) return false;
      return true;
    default:
      return true;
  }
}

static bool uses_complex(const tt_call_arg_t* a) {
  switch (a->kind) {
    case TT_ARG_TENSOR:
      return tt_dtype_is_complex(a->on_host ? a->sdtype : a->view.dtype);
    case TT_ARG_SCALAR:
      return tt_dtype_is_complex(a->sdtype);
    case TT_ARG_TENSORS:
    case TT_ARG_SCALARS:
      for (int i = 0; i < a->n; i++)
        if (uses_complex(&a->list[i])) return true;
      return false;
    default:
      return false;
  }
}

tt_status_t tt__complex_check(const tt_call_t* c) {
  bool any = false;
  for (int i = 0; i < c->nargs && !any; i++) any = uses_complex(&c->args[i]);
  for (int i = 0; i < c->nout && !any; i++) any = tt_dtype_is_complex(c->out_dtypes[i]);
  if (!any) return NULL;
  const char* name = c->op->name;
  uint32_t flags = c->op->flags;
  if (flags & TT_LF_COMPLEX) return NULL;
  if (flags & TT_LF_COMPLEX_SAME) {
    bool ok = true;
    for (int i = 0; i < c->nargs && ok; i++) ok = all_complex(&c->args[i]);
    if (ok) return NULL;
    return tt_status_make(TT_UNIMPLEMENTED,
                          "%s: mixing complex and real tensors is not supported on the tpu device "
                          "yet (convert the real operand to the complex dtype first)",
                          name);
  }
  return tt_status_make(TT_UNIMPLEMENTED,
                        "%s: complex tensors are not supported by this op on the tpu device yet",
                        name);
}
