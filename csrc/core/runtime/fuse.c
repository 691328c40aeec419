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
 * on a few cached programs.
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
#define TT_FUSE_CUT_MIN 256
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
 * call of the newest block with the smallest hash (the first such), so that
 * the next graph starts at the same call of the loop's body every time. */
static int cut_point(const tt_graph_t* g, int k) {
  int n = tt_graph_size(g), best = n - k;
  for (int i = n - k + 1; i < n; i++)
    if (tt_graph_node_hash(g, i) < tt_graph_node_hash(g, best)) best = i;
  return best;
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
  TT_RETURN_IF_ERROR(tt_graph_append(g, call));
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
