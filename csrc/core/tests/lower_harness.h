/* Test helper: runs one lowering on a PJRT plugin with host data.
 * Header-only, for the C unit tests of the lowering families. */
#ifndef TT_LOWER_HARNESS_H_
#define TT_LOWER_HARNESS_H_

#include <stdlib.h>
#include <string.h>

#include "../lower/tt_lower.h"
#include "../pjrt/tt_pjrt.h"

typedef struct th_arg {
  tt_arg_kind_t kind;
  tt_tier_t tier;     /* TENSOR */
  tt_type_t type;     /* TENSOR / SCALAR (0-d f64, i64 or bool) / RNG (2xui64) */
  const void* data;   /* TENSOR / SCALAR / RNG host data, dense */
  int64_t i;          /* INT / BOOL */
  double f;           /* FLOAT */
  const int64_t* ints;
  int n;              /* INTS count; TENSORS count (then `list` is used) */
  const char* str;
  const struct th_arg* list; /* TENSORS / SCALARS: n entries of kind TENSOR/SCALAR */
} th_arg_t;

/* Builds @main(params for every tensor/scalar) -> outputs of the lowering e,
 * compiles, runs on device 0 and copies each output into a malloc'd buffer
 * (out_data[i], caller frees). If `text` is non-NULL the program text is
 * left there. Tests of lowering helpers pass an entry of their own. */
static inline tt_status_t th_run_entry(tt_pjrt_t* p, const tt_lower_entry_t* e, const th_arg_t* args,
                                       int nargs, const tt_type_t* out_types, int nout,
                                       void** out_data, tt_sbuf_t* text) {
  const char* name = e->name;
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  tt_larg_t largs[64];
  tt_val_t lists[64][32];
  const void* host[256];
  tt_type_t host_t[256];
  int nhost = 0;
  memset(largs, 0, sizeof(largs));
  for (int i = 0; i < nargs; i++) {
    const th_arg_t* a = &args[i];
    tt_larg_t* l = &largs[i];
    l->kind = a->kind;
    l->tier = a->kind == TT_ARG_SCALAR ? TT_TIER_WRAPPED : a->tier;
    switch (a->kind) {
      case TT_ARG_TENSOR:
      case TT_ARG_SCALAR:
      case TT_ARG_RNG:
        l->val = tt_shlo_param(f, &a->type);
        host[nhost] = a->data;
        host_t[nhost++] = a->type;
        break;
      case TT_ARG_TENSORS:
      case TT_ARG_SCALARS:
        for (int k = 0; k < a->n; k++) {
          if (a->list[k].kind == TT_ARG_NONE) { /* a hole in a Tensor?[] */
            lists[i][k] = TT_SHLO_INVALID;
            continue;
          }
          lists[i][k] = tt_shlo_param(f, &a->list[k].type);
          host[nhost] = a->list[k].data;
          host_t[nhost++] = a->list[k].type;
        }
        l->vals = lists[i];
        l->n = a->n;
        l->tier = a->n ? a->list[0].tier : TT_TIER_DIM;
        break;
      case TT_ARG_INTS:
        l->ints = a->ints;
        l->n = a->n;
        break;
      default:
        l->i = a->i;
        l->f = a->f;
        l->str = a->str;
        break;
    }
  }
  tt_val_t outs[64];
  tt_lctx_t c = {f, e, largs, nargs, out_types, nout, outs};
  for (int i = 0; i < nout; i++) outs[i] = TT_SHLO_INVALID;
  tt_status_t st = e->fn(&c);
  tt_sbuf_t prog;
  tt_sbuf_init(&prog);
  if (!st) st = tt_shlo_fn_finish(f, outs, nout, &prog);
  tt_shlo_fn_destroy(f);
  if (text && prog.data) {
    tt_sbuf_clear(text);
    tt_sbuf_append(text, prog.data);
  }
  if (st) {
    tt_sbuf_free(&prog);
    return tt_status_annotate(st, "lowering %s", name);
  }
  tt_pjrt_exec_t* ex = NULL;
  st = tt_pjrt_compile(p, prog.data, prog.len, &ex);
  if (st) {
    st = tt_status_annotate(st, "compiling %s:\n%s", name, prog.data);
    tt_sbuf_free(&prog);
    return st;
  }
  tt_sbuf_free(&prog);
  tt_pjrt_buffer_t* in[256];
  tt_pjrt_buffer_t* out[64];
  int made = 0;
  for (; made < nhost && !st; made++)
    st = tt_pjrt_buffer_from_host(p, 0, host[made], &host_t[made], &in[made]);
  if (st) made--;
  if (!st) st = tt_pjrt_execute(p, ex, 0, in, (size_t)nhost, out, (size_t)nout);
  if (!st) {
    for (int i = 0; i < nout; i++) {
      size_t nb = (size_t)tt_type_numel(&out_types[i]) * tt_dtype_size(out_types[i].dtype);
      out_data[i] = malloc(nb ? nb : 1);
      if (!st) st = tt_pjrt_buffer_to_host(p, out[i], out_data[i], nb);
      tt_pjrt_buffer_destroy(p, out[i]);
    }
  }
  for (int i = 0; i < made; i++) tt_pjrt_buffer_destroy(p, in[i]);
  tt_pjrt_exec_destroy(p, ex);
  return st;
}

/* th_run_entry for the lowering registered as `name`. */
static inline tt_status_t th_run(tt_pjrt_t* p, const char* name, const th_arg_t* args, int nargs,
                                 const tt_type_t* out_types, int nout, void** out_data,
                                 tt_sbuf_t* text) {
  const tt_lower_entry_t* e = tt_lower_find(name);
  if (!e) return tt_status_make(TT_NOT_FOUND, "no lowering named %s", name);
  return th_run_entry(p, e, args, nargs, out_types, nout, out_data, text);
}

/* Opens the plugin named by env var `env` (set by the Makefile). A missing
 * variable or a plugin that does not open fails the test binary: a test that
 * cannot run must not pass. */
static inline tt_pjrt_t* th_open_plugin(const char* env) {
  const char* path = getenv(env);
  if (!path || !*path) {
    printf("FAILED: %s is not set (run the C tests through make test-c)\n", env);
    exit(1);
  }
  tt_pjrt_t* p = NULL;
  tt_status_t st = tt_pjrt_open(path, 1, &p);
  if (st) {
    printf("FAILED: cannot open %s: %s\n", path, tt_status_message(st));
    tt_status_free(st);
    exit(1);
  }
  return p;
}

#endif /* TT_LOWER_HARNESS_H_ */
