/* Loops as stablehlo.while (see lower_loop.h). */
#include <stdlib.h>
#include <string.h>

#include "lower_loop.h"
#include "lower_tensor_util.h"

static void invalidate(tt_val_t* v, int n) {
  for (int i = 0; i < n; i++) v[i] = TT_SHLO_INVALID;
}

void tt_l_while(tt_shlo_fn_t* f, tt_val_t* state, int n, tt_l_cond_fn cond, tt_l_body_fn body,
                void* ud) {
  if (n < 1 || n > TT_L_LOOP_MAX) {
    tt_shlo_fail(f, "while loop with %d carried values (1..%d)", n, TT_L_LOOP_MAX);
    invalidate(state, n > 0 ? n : 0);
    return;
  }
  tt_type_t types[TT_L_LOOP_MAX];
  for (int i = 0; i < n; i++) {
    const tt_type_t* t = tt_shlo_type(f, state[i]);
    if (!t) { /* an earlier failure (recorded) */
      invalidate(state, n);
      return;
    }
    types[i] = *t; /* copied: the value table may move as ops are added */
  }
  tt_val_t args[TT_L_LOOP_MAX], next[TT_L_LOOP_MAX], outs[TT_L_LOOP_MAX];
  tt_shlo_region_begin(f, types, n, args);
  tt_val_t pred = cond(f, args, ud);
  char* rc = tt_shlo_region_end(f, &pred, 1);
  tt_shlo_region_begin(f, types, n, args);
  for (int i = 0; i < n; i++) next[i] = args[i];
  body(f, args, next, ud);
  char* rb = tt_shlo_region_end(f, next, n);
  size_t lc = rc ? strlen(rc) : 0, lb = rb ? strlen(rb) : 0;
  /* each region prints as "({...})": "({c})" + "({b})" -> "({c}, {b})" */
  char* both = rc && rb && lc >= 2 && lb >= 2 ? malloc(lc + lb + 1) : NULL;
  if (both) {
    memcpy(both, rc, lc - 1);
    memcpy(both + lc - 1, ", ", 2);
    memcpy(both + lc + 1, rb + 1, lb - 1);
    both[lc + lb] = '\0';
  } else if (rc && rb) {
    tt_shlo_fail(f, "out of memory");
  }
  free(rc);
  free(rb);
  if (!both) {
    invalidate(state, n);
    return;
  }
  tt_shlo_op_multi(f, "stablehlo.while", state, n, types, n, NULL, both, outs);
  for (int i = 0; i < n; i++) state[i] = outs[i];
}

/* ---- counted loops: carries (i, n, vals...) -------------------------------------- */
typedef struct fori {
  tt_l_step_fn step;
  void* ud;
} fori_t;

static tt_val_t fori_cond(tt_shlo_fn_t* f, const tt_val_t* st, void* ud) {
  (void)ud;
  return tt_l_compare(f, "LT", st[0], st[1]);
}

static void fori_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* next, void* ud) {
  const fori_t* x = ud;
  x->step(f, st[0], next + 2, x->ud);
  next[0] = tt_l_binary(f, "stablehlo.add", st[0], tt_lt_const0(f, TT_I64, 1.0));
}

void tt_l_fori_dyn(tt_shlo_fn_t* f, tt_val_t n, tt_val_t* vals, int nvals, tt_l_step_fn step,
                   void* ud) {
  if (nvals < 0 || nvals > TT_L_LOOP_MAX - 2) {
    tt_shlo_fail(f, "counted loop with %d carried values (at most %d)", nvals, TT_L_LOOP_MAX - 2);
    invalidate(vals, nvals > 0 ? nvals : 0);
    return;
  }
  tt_val_t st[TT_L_LOOP_MAX];
  st[0] = tt_lt_const0(f, TT_I64, 0.0);
  st[1] = n;
  for (int i = 0; i < nvals; i++) st[i + 2] = vals[i];
  fori_t x = {step, ud};
  tt_l_while(f, st, nvals + 2, fori_cond, fori_body, &x);
  for (int i = 0; i < nvals; i++) vals[i] = st[i + 2];
}

void tt_l_fori(tt_shlo_fn_t* f, int64_t n, tt_val_t* vals, int nvals, tt_l_step_fn step, void* ud) {
  tt_l_fori_dyn(f, tt_lt_const0(f, TT_I64, (double)n), vals, nvals, step, ud);
}
