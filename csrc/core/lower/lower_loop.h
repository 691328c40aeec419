/* Internal to core/lower: loops as stablehlo.while, shared by every family
 * (linalg's factorizations, the special functions' series, CTC's time
 * recursion). Implemented in lower_loop.c. Builder failures are recorded in
 * the tt_shlo_fn_t and surface at tt_shlo_fn_finish; after one, the carried
 * values are TT_SHLO_INVALID. Reentrant; callbacks run synchronously on the
 * calling thread, each exactly once, inside the loop's regions.
 *
 * Regions capture nothing: the condition and the body may use only the
 * carried values they are handed and values they create themselves. Put
 * anything else the loop reads into the carried values. */
#ifndef TT_LOWER_LOOP_H_
#define TT_LOWER_LOOP_H_

#include "tt_lower.h"

/* The most values one loop carries (a counted loop carries 2 of its own). */
#define TT_L_LOOP_MAX 16

/* Condition: returns a 0-d i1 from the carried values st[0..n). */
typedef tt_val_t (*tt_l_cond_fn)(tt_shlo_fn_t* f, const tt_val_t* st, void* ud);
/* Body: writes the next carried values into next[0..n), which holds st on
 * entry (a body writes only what changes); same types as st. */
typedef void (*tt_l_body_fn)(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* next, void* ud);

/* while cond(state): state = body(state). state[0..n) holds the initial
 * values and receives the results. */
void tt_l_while(tt_shlo_fn_t* f, tt_val_t* state, int n, tt_l_cond_fn cond, tt_l_body_fn body,
                void* ud);

/* Counted loop: for i in [0, n): step(f, i, vals, ud) replaces vals[0..nvals)
 * with their next values in place (same types; i is a 0-d i64). Carries
 * (i, n, vals...), so at most TT_L_LOOP_MAX - 2 values. */
typedef void (*tt_l_step_fn)(tt_shlo_fn_t* f, tt_val_t i, tt_val_t* vals, void* ud);
void tt_l_fori(tt_shlo_fn_t* f, int64_t n, tt_val_t* vals, int nvals, tt_l_step_fn step, void* ud);
/* The same with a trip count known only at run time (n: a 0-d i64 value). */
void tt_l_fori_dyn(tt_shlo_fn_t* f, tt_val_t n, tt_val_t* vals, int nvals, tt_l_step_fn step,
                   void* ud);

#endif /* TT_LOWER_LOOP_H_ */
