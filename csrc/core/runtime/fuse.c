/* Fused Eager (DESIGN §6): op calls are recorded into the runtime's graph and
 * run as one program when a value is needed. graph/ records them and says
 * where a graph is cut (tt_program.h); here the runtime holds the storages
 * the recorded calls use and runs the graph.
 *
 * A flush happens before anything that reads or replaces a buffer (host
 * reads and writes, storage copies and resizes, synchronize, a Strict or
 * Debug call), where graph/ cuts (the size limit, a repeated block, another
 * thread recording), and before a call on another device.
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

static bool hold(tt_runtime_t* rt, tt_storage_t* s) {
  if (!s) return true;
  if (rt->fuse.nrefs == rt->fuse.caprefs) {
    size_t cap = rt->fuse.caprefs ? 2 * rt->fuse.caprefs : 1024;
    tt_storage_t** n = realloc(rt->fuse.refs, sizeof(*n) * cap);
    if (!n) return false;
    rt->fuse.refs = n;
    rt->fuse.caprefs = cap;
  }
  rt->fuse.refs[rt->fuse.nrefs++] = s;
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
  if (!rt->fuse.max_ops) rt->fuse.max_ops = tt_graph_max_ops();
  return rt->fuse.max_ops;
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
  tt_graph_t* g = rt->fuse.graph;
  int n = g ? tt_graph_size(g) : 0;
  if (p <= 0 || n == 0) return NULL;
  if (p > n) p = n;
  size_t r0 = p == n ? rt->fuse.nrefs : rt->fuse.node_refs[p];
  /* the flushed calls let go of their storages first: a storage the rest of
   * the graph still uses must be a result even if PyTorch released it */
  for (size_t i = 0; i < r0; i++) rt->fuse.refs[i]->graph_refs--;
  const tt_call_t** calls = malloc(sizeof(*calls) * (size_t)p);
  tt_status_t st;
  if (!calls) {
    st = tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (graph)");
  } else {
    for (int i = 0; i < p; i++) calls[i] = tt_graph_call(g, i);
    st = tt__run_fused(rt, calls, p);
  }
  free(calls);
  rt->fuse.flushes++;
  rt->fuse.ops += p;
  if (st) {
    /* as Strict Eager: each call on its own; the first error that Strict
     * would raise at the call is raised here */
    tt_status_free(st);
    st = NULL;
    rt->fuse.replays++;
    for (int i = 0; i < p; i++) {
      tt_status_t one = tt__run_call(rt, tt_graph_call(g, i));
      if (one && !st) st = one;
      else tt_status_free(one);
    }
  }
  for (size_t i = 0; i < r0; i++) rt->fuse.refs[i]->deferred = false;
  /* the calls not run move to a fresh graph (the arena is reset wholesale) */
  if (p < n) {
    if (!rt->fuse.spare) rt->fuse.spare = tt_graph_create();
    tt_graph_t* g2 = rt->fuse.spare;
    tt_status_t ast = g2 ? NULL : tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (graph)");
    for (int i = p; i < n && !ast; i++) ast = tt_graph_append(g2, tt_graph_call(g, i));
    if (ast) { /* cannot keep them: run them now, as Strict would */
      if (g2) tt_graph_reset(g2);
      tt_status_free(ast);
      for (size_t i = r0; i < rt->fuse.nrefs; i++) rt->fuse.refs[i]->graph_refs--;
      for (int i = p; i < n; i++) {
        tt_status_t one = tt__run_call(rt, tt_graph_call(g, i));
        if (one && !st) st = one;
        else tt_status_free(one);
      }
      for (size_t i = r0; i < rt->fuse.nrefs; i++) rt->fuse.refs[i]->deferred = false;
      r0 = rt->fuse.nrefs;
      p = n;
    } else {
      rt->fuse.spare = g;
      rt->fuse.graph = g2;
    }
  }
  tt_graph_reset(p == n ? g : rt->fuse.spare);
  /* unref what the run calls held (frees what PyTorch let go) */
  /* a storage can appear several times: collect each dying one once (into
   * the slots being dropped), then free them */
  size_t ndying = 0;
  for (size_t i = 0; i < r0; i++) {
    tt_storage_t* s = rt->fuse.refs[i];
    if (s->graph_refs == 0 && !s->user_alive) {
      s->graph_refs = -1; /* marks it collected */
      rt->fuse.refs[ndying++] = s;
    }
  }
  for (size_t i = 0; i < ndying; i++) {
    rt->fuse.refs[i]->graph_refs = 0;
    tt__storage_unref(rt->fuse.refs[i]);
  }
  size_t keep = rt->fuse.nrefs - r0;
  memmove(rt->fuse.refs, rt->fuse.refs + r0, sizeof(*rt->fuse.refs) * keep);
  rt->fuse.nrefs = keep;
  if (p < n) {
    for (int i = 0; i < n - p; i++) rt->fuse.node_refs[i] = rt->fuse.node_refs[i + p] - r0;
    mark_deferred(rt->fuse.graph, 0);
  }
  return st;
}

tt_status_t tt__fuse_flush(tt_runtime_t* rt) {
  return flush_prefix(rt, rt->fuse.graph ? tt_graph_size(rt->fuse.graph) : 0);
}

tt_status_t tt__fuse_record(tt_runtime_t* rt, const tt_call_t* call) {
  if (!rt->fuse.graph) {
    rt->fuse.graph = tt_graph_create();
    if (!rt->fuse.graph) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (graph)");
  }
  tt_graph_t* g = rt->fuse.graph;
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
  if (n >= TT_GRAPH_THREAD_CUT_MIN && !rt->capture.capturing && !pthread_equal(self, rt->fuse.thread)) {
    TT_RETURN_IF_ERROR(tt__fuse_flush(rt));
    n = tt_graph_size(g);
  }
  rt->fuse.thread = self;
  if (n + 1 > rt->fuse.capnode_refs) {
    int cap = rt->fuse.capnode_refs ? 2 * rt->fuse.capnode_refs : 1024;
    size_t* nr = realloc(rt->fuse.node_refs, sizeof(*nr) * (size_t)cap);
    if (!nr) { /* no memory to record: run what is recorded, then this call */
      TT_RETURN_IF_ERROR(tt__fuse_flush(rt));
      return tt__run_call(rt, call);
    }
    rt->fuse.node_refs = nr;
    rt->fuse.capnode_refs = cap;
  }
  uint64_t h = tt_graph_call_hash(call);
  if (!tt_sigset_has(&rt->fuse.checked, h)) {
    TT_RETURN_IF_ERROR(tt_graph_check_lowering(call)); /* raised at the op, nothing recorded */
    tt_sigset_add(&rt->fuse.checked, h);
  }
  TT_RETURN_IF_ERROR(tt_graph_append_hashed(g, call, h));
  rt->fuse.node_refs[n] = rt->fuse.nrefs;
  bool ok = true;
  for (int i = 0; i < call->nargs && ok; i++) ok = hold_arg(rt, &call->args[i]);
  for (int i = 0; i < call->nout && ok; i++) {
    tt_storage_t* s = call->outs[i].storage;
    ok = hold(rt, s);
    if (s) s->deferred = true;
  }
  if (!ok) return tt__fuse_flush(rt); /* no memory to hold more: run what is recorded */
  if (rt->capture.capturing) return NULL; /* a capture is one program: no cuts */
  return flush_prefix(rt, tt_graph_cut(g, max_ops(rt)));
}

tt_status_t tt__fuse_sync(tt_runtime_t* rt) {
  pthread_mutex_lock(&rt->mu);
  tt_status_t st = tt__fuse_flush(rt);
  pthread_mutex_unlock(&rt->mu);
  return st;
}

tt_status_t tt_runtime_call(tt_runtime_t* rt, const tt_call_t* call) {
  bool any = false;
  for (int i = 0; i < call->nout; i++)
    if (tt_view_numel(&call->outs[i]) > 0) any = true;
  if (!any && call->nout > 0) return NULL; /* nothing to write */
  TT_RETURN_IF_ERROR(tt__complex_check(call));
  pthread_mutex_lock(&rt->mu);
  tt_status_t st;
  if (tt_runtime_mode() == TT_MODE_FUSED) {
    st = tt__fuse_record(rt, call);
  } else {
    st = tt__fuse_flush(rt); /* the recorded ops come first */
    tt_status_t st2 = tt__run_call(rt, call);
    if (!st) st = st2;
    else tt_status_free(st2);
  }
  pthread_mutex_unlock(&rt->mu);
  return st;
}
