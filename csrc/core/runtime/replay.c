/* Captured programs (torch.compile, DESIGN §8), the runtime's part: a
 * capture is made by recording the graph's calls as Fused Eager does (the
 * bridge runs the graph's ATen ops in Fused mode) with cuts off, and running
 * them as one program; graph/ notes that program's plan and names its
 * storages by role (graph/capture.c). Here: the capture's begin and end, and
 * its replays on the graph's next inputs without recording them again.
 *
 * A capture is refused where a replay could not reproduce it: a flush or a
 * buffer write while recording (a host read or write, an op without a
 * lowering, a resize, another thread's Strict call), an RNG state taken from
 * another generator, and what graph/ refuses. A refused capture costs
 * nothing but the recording: the caller records again on the next call. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

tt_status_t tt_capture_begin(tt_runtime_t* rt) {
  pthread_mutex_lock(&rt->mu);
  tt_status_t st = tt__fuse_flush(rt); /* the calls recorded before are not the graph's */
  if (!st) {
    rt->capture.capturing++;
    rt->capture.flushes0 = rt->fuse.flushes;
    rt->capture.writes0 = rt->stats.buffer_writes;
    rt->capture.serial0 = rt->storage_serial;
  }
  pthread_mutex_unlock(&rt->mu);
  return st;
}

void tt_capture_abort(tt_runtime_t* rt) {
  pthread_mutex_lock(&rt->mu);
  if (rt->capture.capturing > 0) rt->capture.capturing--;
  pthread_mutex_unlock(&rt->mu);
}

bool tt_capture_ready(tt_runtime_t* rt, const tt_capture_t* c) {
  if (!c->has_program) return true;
  pthread_mutex_lock(&rt->mu);
  bool ok = tt__cache_find(&rt->cache, c->key, c->key_len, c->hash) != NULL;
  pthread_mutex_unlock(&rt->mu);
  return ok;
}

tt_status_t tt_capture_end(tt_runtime_t* rt, tt_storage_t* const* inputs, int nin,
                           tt_storage_t* const* outputs, int nout, const uint64_t* host_ids, int nhost,
                           uint64_t rng_seed, uint64_t rng_begin, uint64_t rng_end, tt_capture_t** out,
                           const char** why) {
  *out = NULL;
  *why = NULL;
  tt_capture_t* c = tt_capture_create();
  pthread_mutex_lock(&rt->mu);
  if (rt->capture.capturing != 1) *why = "another capture ran at the same time";
  else if (rt->fuse.flushes != rt->capture.flushes0 || rt->stats.buffer_writes != rt->capture.writes0)
    *why = "the graph did not run as one program (a host read or write, an op without a lowering, "
           "or another thread's op inside it)";
  else if (!c) *why = "out of host memory";
  int64_t flushes1 = rt->fuse.flushes, replays1 = rt->fuse.replays;
  if (!*why) rt->capture.note = c;
  tt_status_t st = tt__fuse_flush(rt);
  rt->capture.note = NULL;
  if (rt->capture.capturing > 0) rt->capture.capturing--;
  if (!st && !*why) {
    if (rt->fuse.replays != replays1) *why = "the graph's program failed; its ops ran one by one";
    else if (rt->fuse.flushes != flushes1 && !c->has_program) *why = "the graph ran as more than one program";
    else if (c->oom) *why = "out of host memory";
  }
  for (int r = 0; c && r < c->nrng && !*why && !st; r++)
    if (c->rng[2 * r] != rng_seed || c->rng[2 * r + 1] - rng_begin >= rng_end - rng_begin)
      *why = "a random op of the graph used a generator other than the device's default";
  if (!st && !*why) {
    if (!c->has_program) c->device = -1;
    tt_capture_output_t* outs = calloc((size_t)nout + 1, sizeof(*outs));
    for (int i = 0; outs && i < nout; i++) {
      tt_storage_t* s = outputs[i];
      if (!s) continue;
      outs[i] = (tt_capture_output_t){s, s->born, s->nbytes, s->state == TT_STORAGE_EMPTY};
    }
    *why = outs ? tt_capture_assign(c, rt->capture.serial0, inputs, nin, outs, nout, host_ids, nhost)
                : "out of host memory";
    free(outs);
    for (int r = 0; r < c->nrng && !*why; r++) c->rng[2 * r + 1] -= rng_begin;
  }
  pthread_mutex_unlock(&rt->mu);
  if (st || *why) {
    tt_capture_destroy(c);
    return st;
  }
  *out = c;
  return NULL;
}

static tt_storage_t* slot_storage(const tt_capture_st_t* cs, tt_storage_t* const* inputs,
                                  tt_storage_t* const* news) {
  return cs->slot >= 0 ? inputs[cs->slot] : news[-cs->slot - 1];
}

/* Device failures become the sticky state of the results (Strict Eager's
 * rule); Debug raises them. Consumes err. */
static tt_status_t fail_results(const tt_capture_t* c, tt_storage_t* const* inputs,
                                tt_storage_t* const* news, tt_status_t err) {
  for (int r = 0; r < c->nres; r++)
    tt__storage_fail(slot_storage(&c->st[c->res[r]], inputs, news), tt_status_clone(err));
  if (tt_runtime_mode() == TT_MODE_DEBUG) return err;
  tt_status_free(err);
  return NULL;
}

/* The packed scalars of group g, with this replay's host values (rt->mu held). */
static tt_status_t group_buffer(tt_runtime_t* rt, const tt_capture_t* c, int g, const void* const* host_vals,
                                tt_pjrt_buffer_t** out, bool* owned) {
  unsigned char* scratch = NULL;
  const unsigned char* bytes = tt_capture_group_bytes(c, g, host_vals, &scratch);
  if (!bytes) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  tt_status_t st = tt__packed_buffer(rt, c->device, c->group_dt[g], bytes, c->group_n[g], out, owned);
  free(scratch);
  return st;
}

/* rt->mu held */
static tt_status_t replay_locked(tt_runtime_t* rt, const tt_capture_t* c, tt_storage_t* const* inputs,
                                 tt_storage_t* const* news, const void* const* host_vals, uint64_t rng_seed,
                                 uint64_t rng_delta, bool* stale) {
  tt_cache_entry_t* e = tt__cache_find(&rt->cache, c->key, c->key_len, c->hash);
  if (!e || e->nresults != c->nres || e->nchecks != c->nchecks) {
    *stale = true; /* the executable was dropped (cache bound, _clear_cache) */
    return NULL;
  }
  for (int i = 0; i < c->nst; i++) {
    const tt_capture_st_t* cs = &c->st[i];
    if (cs->zero && slot_storage(cs, inputs, news)->state != TT_STORAGE_EMPTY) {
      *stale = true; /* the program makes its initial value as zeros: written since */
      return NULL;
    }
    if (!cs->param) continue;
    tt_storage_t* s = slot_storage(cs, inputs, news);
    if (s->device != c->device)
      return tt_status_make(TT_INVALID_ARGUMENT,
                            "expected all tensors to be on the same device, but found tpu:%d and tpu:%d",
                            c->device, s->device);
    if (s->state == TT_STORAGE_FAILED) return fail_results(c, inputs, news, tt__storage_check(s, c->name));
    TT_RETURN_IF_ERROR(tt__storage_materialize(s, cs->param_dtype));
    if (s->buf_dtype != cs->param_dtype || s->buf_numel != cs->param_numel) {
      *stale = true; /* written in another dtype since: the program reads another type */
      return NULL;
    }
  }
  rt->stats.cache_hits++;
  e->last_use = rt->call_serial;
  size_t nargs = 0, nouts = (size_t)(c->nres + c->nchecks);
  tt_pjrt_buffer_t** args = calloc((size_t)(c->nst + c->ngroups + c->nrng) + 1, sizeof(*args));
  tt_pjrt_buffer_t** outs = calloc(nouts + 1, sizeof(*outs));
  tt_pjrt_buffer_t* gbuf[TT_DTYPE_COUNT] = {0};
  bool gown[TT_DTYPE_COUNT] = {0};
  tt_pjrt_buffer_t** rbuf = calloc((size_t)c->nrng + 1, sizeof(*rbuf));
  tt_status_t st = args && outs && rbuf ? NULL : tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  for (int i = 0; i < c->nst && !st; i++)
    if (c->st[i].param) args[nargs++] = slot_storage(&c->st[i], inputs, news)->buf;
  for (int g = 0; g < c->ngroups && !st; g++) {
    st = group_buffer(rt, c, g, host_vals, &gbuf[g], &gown[g]);
    if (!st) args[nargs++] = gbuf[g];
  }
  int64_t two = 2;
  tt_type_t rng_type = tt_type_make(TT_U64, 1, &two);
  for (int r = 0; r < c->nrng && !st; r++) {
    uint64_t v[2] = {rng_seed, c->rng[2 * r + 1] + rng_delta};
    st = tt_pjrt_buffer_from_host(rt->pjrt, c->device, v, &rng_type, &rbuf[r]);
    if (!st) args[nargs++] = rbuf[r];
  }
  bool ran = false;
  if (!st) {
    double t0 = tt__now();
    st = tt_pjrt_execute(rt->pjrt, e->exec, c->device, args, nargs, outs, nouts);
    rt->stats.execute_seconds += tt__now() - t0;
    if (st) st = fail_results(c, inputs, news, tt_status_annotate(st, "error in op %s", c->name));
    else ran = true;
  }
  for (int g = 0; g < c->ngroups; g++)
    if (gown[g]) tt_pjrt_buffer_destroy(rt->pjrt, gbuf[g]); /* PJRT keeps in-flight uses */
  for (int r = 0; rbuf && r < c->nrng; r++) tt_pjrt_buffer_destroy(rt->pjrt, rbuf[r]);
  free(rbuf);
  free(args);
  if (!ran) {
    free(outs);
    return st;
  }
  rt->stats.executions++;
  bool debug = tt_runtime_mode() == TT_MODE_DEBUG;
  tt_status_t first = NULL;
  for (int r = 0; r < c->nres; r++) {
    const tt_capture_st_t* cs = &c->st[c->res[r]];
    tt_storage_t* s = slot_storage(cs, inputs, news);
    tt__storage_set_buffer(s, outs[r], cs->res_dtype, cs->res_numel, cs->producer, true);
    if (debug && !first) first = tt__storage_await(s);
  }
  if (c->nchecks) {
    tt_status_t cst = tt__checks_push(rt, e, outs + c->nres, c->name);
    if (!cst && (debug || rt->nchecks > 4096)) cst = tt__checks_drain(rt);
    if (cst && !first) first = cst;
    else tt_status_free(cst);
  }
  free(outs);
  return first;
}

tt_status_t tt_capture_replay(tt_runtime_t* rt, const tt_capture_t* c, tt_storage_t* const* inputs,
                              int nin, tt_storage_t* const* news, const void* const* host_vals, int nhost,
                              uint64_t rng_seed, uint64_t rng_delta, bool* stale) {
  *stale = false;
  if (nin != c->nin)
    return tt_status_make(TT_INVALID_ARGUMENT, "a captured program takes %d inputs, got %d", c->nin, nin);
  if (nhost != c->nhost)
    return tt_status_make(TT_INVALID_ARGUMENT, "a captured program takes %d host values, got %d", c->nhost,
                          nhost);
  pthread_mutex_lock(&rt->mu);
  rt->call_serial++; /* pins the scalar-cache slots this run takes */
  /* the calls recorded before come first (they may read what this rewrites) */
  tt_status_t st = tt__fuse_flush(rt);
  tt_status_t st2 =
      c->has_program ? replay_locked(rt, c, inputs, news, host_vals, rng_seed, rng_delta, stale) : NULL;
  pthread_mutex_unlock(&rt->mu);
  if (!st) return st2;
  tt_status_free(st2);
  return st;
}
