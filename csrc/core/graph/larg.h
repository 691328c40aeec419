/* Internal to core/graph: a call's argument as its lowering sees it
 * (tt_larg_t), for the program builder (build.c) and the record-time
 * lowering check (record.c), which differ only in where values come from. */
#ifndef TT_GRAPH_LARG_H_
#define TT_GRAPH_LARG_H_

#include "tt_program.h"

typedef struct tt_larg_src {
  void* ctx;
  /* the value of a device tensor argument */
  tt_val_t (*tensor)(void* ctx, const tt_call_arg_t* a);
  /* the value of a runtime value: a Scalar or a host 0-dim tensor */
  tt_val_t (*scalar)(void* ctx, const tt_call_arg_t* a);
  /* room for the n values of a list argument; NULL: none */
  tt_val_t* (*list)(void* ctx, int n);
} tt_larg_src_t;

/* Fills l for argument a (as_out: the in-place self of a write-only op);
 * a failure is the function's (tt_shlo_fail). */
void tt__larg_make(tt_shlo_fn_t* f, const tt_call_arg_t* a, bool as_out, const tt_larg_src_t* src, tt_larg_t* l);

#endif /* TT_GRAPH_LARG_H_ */
