/* torch_tpu core: StableHLO text builder.
 *
 * Emits one module with one `func.func public @main`, every op in MLIR's
 * generic form ("stablehlo.add"(%a, %b) : (...) -> ...), which every
 * StableHLO parser accepts, so the text stays valid for the oldest plugin we
 * support (API 0.81). Values are SSA ids; each knows its tensor type.
 *
 * Ownership: tt_shlo_fn_create returns an owned builder (tt_shlo_fn_destroy).
 * Strings passed in are copied. Thread rules: one thread at a time.
 * Errors: builder calls never fail individually; an invalid use (bad value id,
 * allocation failure) marks the builder failed, every later call returns
 * TT_SHLO_INVALID, and tt_shlo_fn_finish reports the first problem. */
#ifndef TT_SHLO_H_
#define TT_SHLO_H_

#include "../base/tt_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tt_shlo_fn tt_shlo_fn_t;
typedef int32_t tt_val_t;
#define TT_SHLO_INVALID ((tt_val_t)-1)

tt_shlo_fn_t* tt_shlo_fn_create(void);
void tt_shlo_fn_destroy(tt_shlo_fn_t* f); /* NULL-safe */

/* Adds a parameter of @main (in call order). */
tt_val_t tt_shlo_param(tt_shlo_fn_t* f, const tt_type_t* type);
/* The same, donated to result `output` (tf.aliasing_output): the caller
 * passes a buffer it will not use again, which the result may reuse. */
tt_val_t tt_shlo_param_donated(tt_shlo_fn_t* f, const tt_type_t* type, int output);
/* The type of a value (borrowed; valid while f lives). NULL for bad ids. */
const tt_type_t* tt_shlo_type(tt_shlo_fn_t* f, tt_val_t v);
/* Marks the builder failed with a message (first one wins). */
void tt_shlo_fail(tt_shlo_fn_t* f, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
bool tt_shlo_failed(const tt_shlo_fn_t* f);
/* The failure's message (borrowed), or NULL. */
const char* tt_shlo_error(const tt_shlo_fn_t* f);

/* Generic op with one result: %r = "name"(operands) {attrs} : (in types) -> result.
 * `attrs` is the text between the braces, or NULL for none. */
tt_val_t tt_shlo_op(tt_shlo_fn_t* f, const char* name, const tt_val_t* operands, int n,
                    const tt_type_t* result, const char* attrs);
/* Same with printf-formatted attributes. */
tt_val_t tt_shlo_opf(tt_shlo_fn_t* f, const char* name, const tt_val_t* operands, int n,
                     const tt_type_t* result, const char* attrs_fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* stablehlo.slice of v over [start, limit) with `strides` (NULL: all 1);
 * the result type follows from them. */
tt_val_t tt_shlo_slice(tt_shlo_fn_t* f, tt_val_t v, const int64_t* start, const int64_t* limit,
                       const int64_t* strides);

/* stablehlo.pad of v with the 0-d `value`: lo/hi edge padding (negative
 * crops) and `interior` padding between elements (NULL: none). */
tt_val_t tt_shlo_pad(tt_shlo_fn_t* f, tt_val_t v, tt_val_t value, const int64_t* lo, const int64_t* hi,
                     const int64_t* interior);

/* Generic op with several results and an optional region (text produced by
 * tt_shlo_region_end, consumed). Writes nres values into outs. */
void tt_shlo_op_multi(tt_shlo_fn_t* f, const char* name, const tt_val_t* operands, int n,
                      const tt_type_t* results, int nres, const char* attrs, char* region,
                      tt_val_t* outs);

/* Regions (reduce, sort, scatter, select_and_scatter bodies). Between begin
 * and end, ops are emitted into the region. Regions nest. begin writes nargs
 * block-argument values into args. end returns the region text "({ ... })"
 * (owned by the caller, pass it to tt_shlo_op_multi) or NULL on failure. */
void tt_shlo_region_begin(tt_shlo_fn_t* f, const tt_type_t* arg_types, int nargs, tt_val_t* args);
char* tt_shlo_region_end(tt_shlo_fn_t* f, const tt_val_t* results, int nres);

/* Constants. A splat of `v` converted to the dtype of `type` (bools: v != 0;
 * floats are written bit-exactly, inf and nan included). */
tt_val_t tt_shlo_const(tt_shlo_fn_t* f, const tt_type_t* type, double v);
tt_val_t tt_shlo_const_i64(tt_shlo_fn_t* f, const tt_type_t* type, int64_t v);
/* A dense 1-D i64 constant (e.g. indices). */
tt_val_t tt_shlo_const_i64s(tt_shlo_fn_t* f, const int64_t* vals, int n);

/* Program assertions. `failed` is a 0-d i1 value that is true when the check
 * fails; the runtime returns it as an extra result and raises `message` (with
 * `code`, a tt_code_t) at the next sync when it is true. `message` is copied. */
void tt_shlo_add_check(tt_shlo_fn_t* f, tt_val_t failed, int code, const char* message);
int tt_shlo_check_count(const tt_shlo_fn_t* f);
tt_val_t tt_shlo_check_value(const tt_shlo_fn_t* f, int i);
int tt_shlo_check_code(const tt_shlo_fn_t* f, int i);
const char* tt_shlo_check_message(const tt_shlo_fn_t* f, int i); /* borrowed */

/* Finishes @main returning `results` and writes the whole module into out.
 * Returns the builder's failure, if any. */
tt_status_t tt_shlo_fn_finish(tt_shlo_fn_t* f, const tt_val_t* results, int nres, tt_sbuf_t* out);

/* Formats "array<i64: 1, 2>" / "[1, 2]" into a static-size buffer helper. */
void tt_shlo_fmt_i64_array(tt_sbuf_t* b, const int64_t* v, int n);  /* array<i64: ...> */
void tt_shlo_fmt_i64_list(tt_sbuf_t* b, const int64_t* v, int n);   /* [...] */

#ifdef __cplusplus
}
#endif
#endif /* TT_SHLO_H_ */
