/* Recording Fused Eager's calls (DESIGN §6): where the graph is cut, and
 * the lowering of each call signature checked once, at record time.
 *
 * Cuts start early: the device runs the first part of a step while the host
 * records the rest (tiny GPT step, 2 cores: 6.2 -> 5.1 ms at 32 instead of
 * 256; mini 189 -> 180 ms), and a cut stays where the structure repeats, so
 * a step is cut at the same calls every time. A graph of at least
 * TT_GRAPH_THREAD_CUT_MIN calls is also cut where the thread that records
 * changes (the runtime asks): a training step's forward (the caller's
 * thread) runs while autograd's device thread records the backward, and the
 * backward while the caller records the optimizer step (tiny GPT step, 2
 * cores: ~0.8-0.9x the time without these cuts; mini ~0.9x). The places are
 * the program's own structure, the same every step. */
#include <stdlib.h>
#include <string.h>

#include "larg.h"

#define DEFAULT_MAX_OPS 2048
#define REPEAT_MIN 2
#define REPEAT_MAX 128

int tt_graph_max_ops(void) {
  int64_t v = tt_env_int(TT_ENV_FUSE_MAX_OPS, DEFAULT_MAX_OPS);
  return v < 1 ? 1 : v > 1000000 ? 1000000 : (int)v;
}

/* Where to cut once the newest k calls repeat the k before them: before the
 * call of the newest block with the smallest hash, so that the next graph
 * starts at the same call of the loop's body every time; of several such
 * calls (a block made of shorter repeats), the last, so that the program
 * takes all it can and the next graph starts short. */
static int cut_point(const tt_graph_t* g, int k) {
  int n = tt_graph_size(g), best = n - k;
  for (int i = n - k + 1; i < n; i++)
    if (tt_graph_node_hash(g, i) <= tt_graph_node_hash(g, best)) best = i;
  return best;
}

int tt_graph_cut(const tt_graph_t* g, int max_ops) {
  int n = tt_graph_size(g);
  if (n >= max_ops) return n;
  if (n >= TT_GRAPH_CUT_MIN) {
    int k = tt_graph_repeat(g, REPEAT_MIN, REPEAT_MAX);
    if (k) return cut_point(g, k);
  }
  return 0;
}

/* ---- the lowering, checked at record time ------------------------------------------
 * A lowering refuses some calls (a dtype it does not handle, an attribute out
 * of range): Strict Eager raises that at the op. So that Fused Eager raises it
 * at the same op, and never records a call its flush cannot lower, each call
 * signature's lowering is run once, at record time, on parameters of the
 * call's argument types. The structural hash covers all the lowering sees:
 * op, argument kinds, tiers, dtypes, shapes, attributes and output types
 * (Scalars and view offsets are runtime values, which no lowering reads). */

/* Parameters of the argument types, and the value arrays of list
 * arguments (freed together). */
typedef struct lists {
  tt_shlo_fn_t* f;
  tt_val_t** v;
  int n, cap;
} lists_t;

static tt_val_t param_tensor(void* ctx, const tt_call_arg_t* a) {
  lists_t* ls = ctx;
  tt_type_t t = tt_type_make(tt_dtype_compute(a->view.dtype), a->view.rank, a->view.sizes);
  return tt_shlo_param(ls->f, &t);
}

static tt_val_t param_scalar(void* ctx, const tt_call_arg_t* a) {
  lists_t* ls = ctx;
  tt_type_t t = tt_type_scalar(a->sdtype);
  return tt_shlo_param(ls->f, &t);
}

static tt_val_t* list_vals(void* ctx, int n) {
  lists_t* ls = ctx;
  if (ls->n == ls->cap) {
    int cap = ls->cap ? 2 * ls->cap : 8;
    tt_val_t** v = realloc(ls->v, sizeof(*v) * (size_t)cap);
    if (!v) return NULL;
    ls->v = v;
    ls->cap = cap;
  }
  tt_val_t* vals = calloc((size_t)n + 1, sizeof(tt_val_t));
  if (vals) ls->v[ls->n++] = vals;
  return vals;
}

tt_status_t tt_graph_check_lowering(const tt_call_t* c) {
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  int nl = c->nargs + ((c->op->flags & TT_LF_RNG) ? 1 : 0);
  tt_larg_t* largs = calloc((size_t)nl + 1, sizeof(tt_larg_t));
  tt_type_t* out_types = calloc((size_t)c->nout + 1, sizeof(tt_type_t));
  tt_val_t* outs = calloc((size_t)c->nout + 1, sizeof(tt_val_t));
  lists_t ls = {f, NULL, 0, 0};
  tt_larg_src_t src = {&ls, param_tensor, param_scalar, list_vals};
  tt_status_t st = NULL;
  if (!f || !largs || !out_types || !outs) {
    st = tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (lowering check)");
    goto done;
  }
  for (int i = 0; i < c->nargs; i++)
    tt__larg_make(f, &c->args[i], i == 0 && (c->op->flags & TT_LF_WRITE_ONLY), &src, &largs[i]);
  if (c->op->flags & TT_LF_RNG) {
    int64_t two = 2;
    tt_type_t t = tt_type_make(TT_U64, 1, &two);
    largs[c->nargs].kind = TT_ARG_RNG;
    largs[c->nargs].val = tt_shlo_param(f, &t);
  }
  for (int i = 0; i < c->nout; i++) {
    out_types[i] = tt_type_make(tt_dtype_compute(c->out_dtypes[i]), c->outs[i].rank, c->outs[i].sizes);
    outs[i] = TT_SHLO_INVALID;
  }
  tt_lctx_t lc = {f, c->op, largs, nl, out_types, c->nout, outs};
  if (!tt_shlo_failed(f)) st = c->op->fn(&lc);
  for (int i = 0; i < c->nout && !st && !tt_shlo_failed(f); i++)
    if (outs[i] == TT_SHLO_INVALID)
      st = tt_status_make(TT_INTERNAL, "%s: the lowering did not set output %d", c->op->name, i);
  if (!st) { /* the builder's own refusals (types, ranks) */
    tt_sbuf_t text;
    tt_sbuf_init(&text);
    st = tt_shlo_fn_finish(f, outs, c->nout, &text);
    tt_sbuf_free(&text);
  }
done:
  for (int i = 0; i < ls.n; i++) free(ls.v[i]);
  free(ls.v);
  tt_shlo_fn_destroy(f);
  free(largs);
  free(out_types);
  free(outs);
  return st ? tt_status_annotate(st, "lowering %s", c->op->name) : NULL;
}

/* ---- the set of checked signatures ----------------------------------------------- */

bool tt_sigset_has(tt_sigset_t* s, uint64_t h) {
  if (h == 0) h = 1; /* 0 marks an empty slot */
  if (!s->slots) return false;
  size_t j = (size_t)h & (s->cap - 1);
  while (s->slots[j]) {
    if (s->slots[j] == h) return true;
    j = (j + 1) & (s->cap - 1);
  }
  return false;
}

void tt_sigset_add(tt_sigset_t* s, uint64_t h) {
  if (h == 0) h = 1;
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 1024;
    uint64_t* t = calloc(cap, sizeof(*t));
    if (!t) return; /* checked again next time */
    for (size_t i = 0; i < s->cap; i++) {
      uint64_t v = s->slots[i];
      if (!v) continue;
      size_t j = (size_t)v & (cap - 1);
      while (t[j]) j = (j + 1) & (cap - 1);
      t[j] = v;
    }
    free(s->slots);
    s->slots = t;
    s->cap = cap;
  }
  size_t j = (size_t)h & (s->cap - 1);
  while (s->slots[j]) j = (j + 1) & (s->cap - 1);
  s->slots[j] = h;
  s->n++;
}

void tt_sigset_free(tt_sigset_t* s) {
  free(s->slots);
  memset(s, 0, sizeof(*s));
}
