/* Fused Eager (DESIGN §6): op calls are recorded into the runtime's graph and
 * run as one program when a value is needed.
 *
 * A flush happens before anything that reads or replaces a buffer (host
 * reads and writes, storage copies and resizes, synchronize, a Strict or
 * Debug call), when the graph reaches the size limit
 * (TORCH_TPU_FUSE_MAX_OPS), and where a repeated block ends: once the graph
 * holds TT_FUSE_CUT_MIN calls, a cut is made as soon as the newest k calls
 * repeat the k before them (2 <= k <= 128, by structural hash), so a loop
 * without host reads is cut at the same places every iteration and settles
 * on a few cached programs; and where another thread starts recording
 * (TT_FUSE_THREAD_CUT_MIN).
 *
 * The graph holds a reference on every storage its calls use: a storage
 * PyTorch releases before the flush stays until the graph has run, and is
 * not a result of the program (its value is never needed). A flush that
 * fails (a lowering or the compiler refuses the fused program, an input
 * failed, the device reports an error) runs the same calls again one by one
 * as Strict Eager would: results and errors are then exactly Strict's. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TT_FUSE_DEFAULT_MAX_OPS 2048
/* Cuts start early: the device runs the first part of a step while the host
 * records the rest (tiny GPT step, 2 cores: 6.2 -> 5.1 ms at 32 instead of
 * 256; mini 189 -> 180 ms), and a cut stays where the structure repeats, so
 * a step is cut at the same calls every time. */
#define TT_FUSE_CUT_MIN 32
/* A graph of at least this many calls is also cut where the thread that
 * records changes: a training step's forward (the caller's thread) runs while
 * autograd's device thread records the backward, and the backward while the
 * caller records the optimizer step (tiny GPT step, 2 cores: ~0.8-0.9x the
 * time without these cuts; mini ~0.9x). The places are the program's own
 * structure, the same every step. */
#define TT_FUSE_THREAD_CUT_MIN 8
#define TT_FUSE_REPEAT_MIN 2
#define TT_FUSE_REPEAT_MAX 128

static bool hold(tt_runtime_t* rt, tt_storage_t* s) {
  if (!s) return true;
  if (rt->ngraph_refs == rt->capgraph_refs) {
    size_t cap = rt->capgraph_refs ? 2 * rt->capgraph_refs : 1024;
    tt_storage_t** n = realloc(rt->graph_refs, sizeof(*n) * cap);
    if (!n) return false;
    rt->graph_refs = n;
    rt->capgraph_refs = cap;
  }
  rt->graph_refs[rt->ngraph_refs++] = s;
  s->graph_refs++;
  return true;
}

static bool hold_arg(tt_runtime_t* rt, const tt_call_arg_t* a) {
  if (a->kind == TT_ARG_TENSOR && !a->on_host) return hold(rt, a->view.storage);
  if (a->kind == TT_ARG_TENSORS)
    for (int i = 0; i < a->n; i++)
      if (!hold_arg(rt, &a->list[i])) return false;
  return true;
}

static int max_ops(tt_runtime_t* rt) {
  if (!rt->fuse_max_ops) {
    int64_t v = tt_env_int(TT_ENV_FUSE_MAX_OPS, TT_FUSE_DEFAULT_MAX_OPS);
    rt->fuse_max_ops = v < 1 ? 1 : v > 1000000 ? 1000000 : (int)v;
  }
  return rt->fuse_max_ops;
}

static void mark_deferred(tt_graph_t* g, int from) {
  for (int i = from; i < tt_graph_size(g); i++) {
    const tt_call_t* c = tt_graph_call(g, i);
    for (int k = 0; k < c->nout; k++)
      if (c->outs[k].storage) c->outs[k].storage->deferred = true;
  }
}

/* Runs the first p recorded calls as one program; the rest stay recorded. */
static tt_status_t flush_prefix(tt_runtime_t* rt, int p) {
  tt_graph_t* g = rt->graph;
  int n = g ? tt_graph_size(g) : 0;
  if (p <= 0 || n == 0) return NULL;
  if (p > n) p = n;
  size_t r0 = p == n ? rt->ngraph_refs : rt->node_refs[p];
  /* the flushed calls let go of their storages first: a storage the rest of
   * the graph still uses must be a result even if PyTorch released it */
  for (size_t i = 0; i < r0; i++) rt->graph_refs[i]->graph_refs--;
  const tt_call_t** calls = malloc(sizeof(*calls) * (size_t)p);
  tt_status_t st;
  if (!calls) {
    st = tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (graph)");
  } else {
    for (int i = 0; i < p; i++) calls[i] = tt_graph_call(g, i);
    st = tt__run_fused(rt, calls, p);
  }
  free(calls);
  rt->fused_flushes++;
  rt->fused_ops += p;
  if (st) {
    /* as Strict Eager: each call on its own; the first error that Strict
     * would raise at the call is raised here */
    tt_status_free(st);
    st = NULL;
    rt->fused_replays++;
    for (int i = 0; i < p; i++) {
      tt_status_t one = tt__run_call(rt, tt_graph_call(g, i));
      if (one && !st) st = one;
      else tt_status_free(one);
    }
  }
  for (size_t i = 0; i < r0; i++) rt->graph_refs[i]->deferred = false;
  /* the calls not run move to a fresh graph (the arena is reset wholesale) */
  if (p < n) {
    if (!rt->graph_spare) rt->graph_spare = tt_graph_create();
    tt_graph_t* g2 = rt->graph_spare;
    tt_status_t ast = g2 ? NULL : tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (graph)");
    for (int i = p; i < n && !ast; i++) ast = tt_graph_append(g2, tt_graph_call(g, i));
    if (ast) { /* cannot keep them: run them now, as Strict would */
      if (g2) tt_graph_reset(g2);
      tt_status_free(ast);
      for (size_t i = r0; i < rt->ngraph_refs; i++) rt->graph_refs[i]->graph_refs--;
      for (int i = p; i < n; i++) {
        tt_status_t one = tt__run_call(rt, tt_graph_call(g, i));
        if (one && !st) st = one;
        else tt_status_free(one);
      }
      for (size_t i = r0; i < rt->ngraph_refs; i++) rt->graph_refs[i]->deferred = false;
      r0 = rt->ngraph_refs;
      p = n;
    } else {
      rt->graph_spare = g;
      rt->graph = g2;
    }
  }
  tt_graph_reset(p == n ? g : rt->graph_spare);
  /* unref what the run calls held (frees what PyTorch let go) */
  /* a storage can appear several times: collect each dying one once (into
   * the slots being dropped), then free them */
  size_t ndying = 0;
  for (size_t i = 0; i < r0; i++) {
    tt_storage_t* s = rt->graph_refs[i];
    if (s->graph_refs == 0 && !s->user_alive) {
      s->graph_refs = -1; /* marks it collected */
      rt->graph_refs[ndying++] = s;
    }
  }
  for (size_t i = 0; i < ndying; i++) {
    rt->graph_refs[i]->graph_refs = 0;
    tt__storage_unref(rt->graph_refs[i]);
  }
  size_t keep = rt->ngraph_refs - r0;
  memmove(rt->graph_refs, rt->graph_refs + r0, sizeof(*rt->graph_refs) * keep);
  rt->ngraph_refs = keep;
  if (p < n) {
    for (int i = 0; i < n - p; i++) rt->node_refs[i] = rt->node_refs[i + p] - r0;
    mark_deferred(rt->graph, 0);
  }
  return st;
}

tt_status_t tt__fuse_flush(tt_runtime_t* rt) {
  return flush_prefix(rt, rt->graph ? tt_graph_size(rt->graph) : 0);
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

/* ---- the lowering, checked at record time ------------------------------------------
 * A lowering refuses some calls (a dtype it does not handle, an attribute out
 * of range): Strict Eager raises that at the op. So that Fused Eager raises it
 * at the same op, and never records a call its flush cannot lower, each call
 * signature's lowering is run once, at record time, on parameters of the
 * call's argument types (the program is thrown away). The structural hash
 * covers all the lowering sees: op, argument kinds, tiers, dtypes, shapes,
 * attributes and output types (Scalars and view offsets are runtime values,
 * which no lowering reads). */

/* The value arrays of list arguments, freed together. */
typedef struct lists {
  tt_val_t** v;
  int n, cap;
} lists_t;

static void check_larg(tt_shlo_fn_t* f, const tt_call_arg_t* a, bool as_out, tt_larg_t* l, lists_t* ls);

static tt_val_t* larg_list(tt_shlo_fn_t* f, const tt_call_arg_t* a, lists_t* ls) {
  if (ls->n == ls->cap) {
    int cap = ls->cap ? 2 * ls->cap : 8;
    tt_val_t** v = realloc(ls->v, sizeof(*v) * (size_t)cap);
    if (!v) return NULL;
    ls->v = v;
    ls->cap = cap;
  }
  tt_val_t* vals = calloc((size_t)a->n + 1, sizeof(tt_val_t));
  if (!vals) return NULL;
  ls->v[ls->n++] = vals;
  for (int i = 0; i < a->n; i++) {
    tt_larg_t sub;
    check_larg(f, &a->list[i], false, &sub, ls);
    vals[i] = sub.val;
  }
  return vals;
}

static void check_larg(tt_shlo_fn_t* f, const tt_call_arg_t* a, bool as_out, tt_larg_t* l, lists_t* ls) {
  memset(l, 0, sizeof(*l));
  l->kind = as_out ? TT_ARG_OUT : a->kind;
  l->val = TT_SHLO_INVALID;
  switch (l->kind) {
    case TT_ARG_TENSOR: {
      l->tier = a->tier;
      tt_type_t t = a->on_host ? tt_type_scalar(a->sdtype)
                               : tt_type_make(a->view.dtype, a->view.rank, a->view.sizes);
      l->val = tt_shlo_param(f, &t);
      return;
    }
    case TT_ARG_SCALAR: {
      tt_type_t t = tt_type_scalar(a->sdtype);
      l->tier = TT_TIER_WRAPPED;
      l->val = tt_shlo_param(f, &t);
      return;
    }
    case TT_ARG_TENSORS:
    case TT_ARG_SCALARS:
      /* as build_arg (call.c): the list's tier is its first element's */
      l->tier = a->n > 0 ? (a->list[0].kind == TT_ARG_SCALAR ? TT_TIER_WRAPPED : a->list[0].tier)
                         : TT_TIER_DIM;
      l->vals = larg_list(f, a, ls);
      if (!l->vals) tt_shlo_fail(f, "out of host memory (argument list)");
      l->n = a->n;
      return;
    default:
      tt__larg_attr(a, l);
      return;
  }
}

static tt_status_t check_lowering(const tt_call_t* c) {
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  int nl = c->nargs + ((c->op->flags & TT_LF_RNG) ? 1 : 0);
  tt_larg_t* largs = calloc((size_t)nl + 1, sizeof(tt_larg_t));
  tt_type_t* out_types = calloc((size_t)c->nout + 1, sizeof(tt_type_t));
  tt_val_t* outs = calloc((size_t)c->nout + 1, sizeof(tt_val_t));
  lists_t ls = {0};
  tt_status_t st = NULL;
  if (!f || !largs || !out_types || !outs) {
    st = tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (lowering check)");
    goto done;
  }
  for (int i = 0; i < c->nargs; i++)
    check_larg(f, &c->args[i], i == 0 && (c->op->flags & TT_LF_WRITE_ONLY), &largs[i], &ls);
  if (c->op->flags & TT_LF_RNG) {
    int64_t two = 2;
    tt_type_t t = tt_type_make(TT_U64, 1, &two);
    largs[c->nargs].kind = TT_ARG_RNG;
    largs[c->nargs].val = tt_shlo_param(f, &t);
  }
  for (int i = 0; i < c->nout; i++) {
    out_types[i] = tt_type_make(c->out_dtypes[i], c->outs[i].rank, c->outs[i].sizes);
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

/* Whether hash h is in the set of checked signatures; adds it if not. */
static bool lowered_before(tt_runtime_t* rt, uint64_t h) {
  if (h == 0) h = 1; /* 0 marks an empty slot */
  if (2 * (rt->nlowered + 1) > rt->caplowered) {
    size_t cap = rt->caplowered ? 2 * rt->caplowered : 1024;
    uint64_t* t = calloc(cap, sizeof(*t));
    if (!t) return false; /* checked again next time */
    for (size_t i = 0; i < rt->caplowered; i++) {
      uint64_t v = rt->lowered[i];
      if (!v) continue;
      size_t j = (size_t)v & (cap - 1);
      while (t[j]) j = (j + 1) & (cap - 1);
      t[j] = v;
    }
    free(rt->lowered);
    rt->lowered = t;
    rt->caplowered = cap;
  }
  if (!rt->lowered) return false;
  size_t j = (size_t)h & (rt->caplowered - 1);
  while (rt->lowered[j]) {
    if (rt->lowered[j] == h) return true;
    j = (j + 1) & (rt->caplowered - 1);
  }
  return false;
}

static void lowered_add(tt_runtime_t* rt, uint64_t h) {
  if (h == 0) h = 1;
  if (!rt->lowered || 2 * (rt->nlowered + 1) > rt->caplowered) return;
  size_t j = (size_t)h & (rt->caplowered - 1);
  while (rt->lowered[j]) j = (j + 1) & (rt->caplowered - 1);
  rt->lowered[j] = h;
  rt->nlowered++;
}

tt_status_t tt__fuse_record(tt_runtime_t* rt, const tt_call_t* call) {
  if (!rt->graph) {
    rt->graph = tt_graph_create();
    if (!rt->graph) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (graph)");
  }
  tt_graph_t* g = rt->graph;
  /* one program runs on one device */
  if (tt_graph_size(g) > 0 && tt_graph_call(g, 0)->device != call->device)
    TT_RETURN_IF_ERROR(tt__fuse_flush(rt));
  for (int i = 0; i < call->nargs; i++)
    if (call->args[i].kind == TT_ARG_TENSOR && !call->args[i].on_host &&
        call->args[i].view.storage->device != call->device)
      return tt_status_make(TT_INVALID_ARGUMENT,
                            "expected all tensors to be on the same device, but found tpu:%d and tpu:%d",
                            call->device, call->args[i].view.storage->device);
  int n = tt_graph_size(g);
  /* another thread takes over the recording (autograd's device thread
   * starts a backward, the caller's thread resumes after it): what the other
   * thread recorded runs now, while this one records the rest */
  pthread_t self = pthread_self();
  if (n >= TT_FUSE_THREAD_CUT_MIN && !rt->capturing && !pthread_equal(self, rt->graph_thread)) {
    TT_RETURN_IF_ERROR(tt__fuse_flush(rt));
    n = tt_graph_size(g);
  }
  rt->graph_thread = self;
  if (n + 1 > rt->capnode_refs) {
    int cap = rt->capnode_refs ? 2 * rt->capnode_refs : 1024;
    size_t* nr = realloc(rt->node_refs, sizeof(*nr) * (size_t)cap);
    if (!nr) { /* no memory to record: run what is recorded, then this call */
      TT_RETURN_IF_ERROR(tt__fuse_flush(rt));
      return tt__run_call(rt, call);
    }
    rt->node_refs = nr;
    rt->capnode_refs = cap;
  }
  uint64_t h = tt_graph_call_hash(call);
  if (!lowered_before(rt, h)) {
    TT_RETURN_IF_ERROR(check_lowering(call)); /* raised at the op, nothing recorded */
    lowered_add(rt, h);
  }
  TT_RETURN_IF_ERROR(tt_graph_append_hashed(g, call, h));
  rt->node_refs[n] = rt->ngraph_refs;
  bool ok = true;
  for (int i = 0; i < call->nargs && ok; i++) ok = hold_arg(rt, &call->args[i]);
  for (int i = 0; i < call->nout && ok; i++) {
    tt_storage_t* s = call->outs[i].storage;
    ok = hold(rt, s);
    if (s) s->deferred = true;
  }
  if (!ok) return tt__fuse_flush(rt); /* no memory to hold more: run what is recorded */
  n++;
  if (rt->capturing) return NULL; /* a capture is one program: no cuts */
  if (n >= max_ops(rt)) return tt__fuse_flush(rt);
  if (n >= TT_FUSE_CUT_MIN) {
    int k = tt_graph_repeat(g, TT_FUSE_REPEAT_MIN, TT_FUSE_REPEAT_MAX);
    if (k) return flush_prefix(rt, cut_point(g, k));
  }
  return NULL;
}

tt_status_t tt__fuse_sync(tt_runtime_t* rt) {
  pthread_mutex_lock(&rt->mu);
  tt_status_t st = tt__fuse_flush(rt);
  pthread_mutex_unlock(&rt->mu);
  return st;
}
