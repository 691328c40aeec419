/* Captured programs (torch.compile, DESIGN §8): the one program a compiled
 * graph's calls ran as, replayed on the graph's next inputs without
 * recording them again.
 *
 * A capture is made by recording the graph's calls as Fused Eager does (the
 * bridge runs the graph's ATen ops in Fused mode) with cuts off, and running
 * them as one program. call.c notes that program's plan (capture_note); this
 * file names each of its storages by role (an input of the caller's, or a
 * storage the calls created) and refuses what a replay could not reproduce:
 * a flush or a buffer write while recording (a host read or write, an op
 * without a lowering, a resize, another thread's Strict call), a storage
 * that is neither an input nor new, an RNG state taken from another
 * generator. A refused capture costs nothing but the recording: the caller
 * records again on the next call. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

tt_status_t tt_capture_begin(tt_runtime_t* rt) {
  pthread_mutex_lock(&rt->mu);
  tt_status_t st = tt__fuse_flush(rt); /* the calls recorded before are not the graph's */
  if (!st) {
    rt->capturing++;
    rt->capture_flushes0 = rt->fused_flushes;
    rt->capture_writes0 = rt->buffer_writes;
    rt->capture_serial0 = rt->storage_serial;
  }
  pthread_mutex_unlock(&rt->mu);
  return st;
}

void tt_capture_abort(tt_runtime_t* rt) {
  pthread_mutex_lock(&rt->mu);
  if (rt->capturing > 0) rt->capturing--;
  pthread_mutex_unlock(&rt->mu);
}

void tt_capture_destroy(tt_capture_t* c) {
  if (!c) return;
  free(c->key);
  free(c->st);
  free(c->res);
  for (int g = 0; g < c->ngroups; g++) {
    free(c->group_bytes[g]);
    free(c->group_host[g]);
  }
  free(c->rng);
  free(c->new_nbytes);
  free(c->out_slot);
  free(c);
}

bool tt_capture_ready(tt_runtime_t* rt, const tt_capture_t* c) {
  if (!c->has_program) return true;
  pthread_mutex_lock(&rt->mu);
  bool ok = tt__cache_find(&rt->cache, c->key, c->key_len, c->hash) != NULL;
  pthread_mutex_unlock(&rt->mu);
  return ok;
}

int tt_capture_device(const tt_capture_t* c) { return c->device; }
int tt_capture_new_count(const tt_capture_t* c) { return c->nnew; }
size_t tt_capture_new_nbytes(const tt_capture_t* c, int j) { return c->new_nbytes[j]; }
int tt_capture_output_slot(const tt_capture_t* c, int i) { return c->out_slot[i]; }
bool tt_capture_uses_rng(const tt_capture_t* c) { return c->nrng > 0; }

/* The slot of a storage the calls created: numbered on first sight. */
static int new_slot(tt_capture_t* c, const tt_storage_t* s, size_t nbytes, const tt_storage_t*** seen,
                    int* cap) {
  for (int j = 0; j < c->nnew; j++)
    if ((*seen)[j] == s) return -j - 1;
  if (c->nnew == *cap) {
    int n = *cap ? 2 * *cap : 16;
    const tt_storage_t** a = realloc(*seen, sizeof(*a) * (size_t)n);
    size_t* b = realloc(c->new_nbytes, sizeof(*b) * (size_t)n);
    if (a) *seen = a;
    if (b) c->new_nbytes = b;
    if (!a || !b) return TT_CAPTURE_NONE;
    *cap = n;
  }
  (*seen)[c->nnew] = s;
  c->new_nbytes[c->nnew] = nbytes;
  c->nnew++;
  return -c->nnew;
}

static int input_slot(tt_storage_t* const* inputs, int nin, const tt_storage_t* s) {
  for (int k = 0; k < nin; k++)
    if (inputs[k] == s) return k;
  return -1;
}

/* Names every storage of the noted program and every output by role.
 * Returns NULL, or why the capture cannot be replayed. */
static const char* assign_slots(tt_capture_t* c, uint64_t serial0, tt_storage_t* const* inputs, int nin,
                                tt_storage_t* const* outputs, int nout) {
  const tt_storage_t** seen = NULL;
  int cap = 0;
  const char* why = NULL;
  for (int i = 0; i < c->nst && !why; i++) {
    tt_capture_st_t* cs = &c->st[i];
    if (!cs->param && !cs->zero && !cs->result) continue; /* an intermediate (freed by now) */
    int k = input_slot(inputs, nin, cs->s);
    if (k >= 0) cs->slot = k;
    else if (cs->born > serial0) cs->slot = new_slot(c, cs->s, cs->nbytes, &seen, &cap);
    else why = "the graph uses a tensor that is not one of its inputs";
    if (cs->slot == TT_CAPTURE_NONE) why = "out of host memory";
  }
  c->out_slot = malloc(sizeof(int) * ((size_t)nout + 1));
  if (!c->out_slot && !why) why = "out of host memory";
  c->nout = nout;
  for (int i = 0; i < nout && !why; i++) {
    tt_storage_t* s = outputs[i];
    int slot = TT_CAPTURE_NONE;
    if (s) {
      int k = input_slot(inputs, nin, s);
      if (k >= 0) slot = k;
      else if (s->born > serial0 && (s->state == TT_STORAGE_EMPTY || (s->plan_serial == c->serial &&
                                                                          c->has_program)))
        slot = new_slot(c, s, s->nbytes, &seen, &cap); /* written by the program, or never written */
      else why = "an output of the graph is neither an input nor made by the graph";
      if (!why && slot == TT_CAPTURE_NONE) why = "out of host memory";
    }
    c->out_slot[i] = slot;
  }
  /* a new storage the program reads before writing it was empty when made:
   * a fresh one is empty too */
  for (int i = 0; i < c->nst; i++) c->st[i].s = NULL;
  free(seen);
  return why;
}

/* Host tensors' values in packed slots: each slot that took one of the
 * caller's host values takes it again at replay (by index). A host tensor
 * that is not one of them (a temporary the caller cannot name) refuses the
 * capture: its value might change. Python numbers (no identity) are
 * constants. */
static const char* map_host_values(tt_capture_t* c, const uint64_t* host_ids, int nhost) {
  c->nhost = nhost;
  for (int g = 0; g < c->ngroups; g++)
    for (int k = 0; k < c->group_n[g]; k++) {
      uint64_t id = (uint64_t)c->group_host[g][k];
      int64_t idx = -1;
      for (int h = 0; id && h < nhost && idx < 0; h++)
        if (host_ids[h] == id) idx = h;
      if (id && idx < 0) return "a device op of the graph took a CPU tensor that is not one of its host values";
      c->group_host[g][k] = idx;
      if (idx >= 0) c->has_host = true;
    }
  return NULL;
}

tt_status_t tt_capture_end(tt_runtime_t* rt, tt_storage_t* const* inputs, int nin,
                           tt_storage_t* const* outputs, int nout, const uint64_t* host_ids, int nhost,
                           uint64_t rng_seed, uint64_t rng_begin, uint64_t rng_end, tt_capture_t** out,
                           const char** why) {
  *out = NULL;
  *why = NULL;
  tt_capture_t* c = calloc(1, sizeof(*c));
  pthread_mutex_lock(&rt->mu);
  if (rt->capturing != 1) *why = "another capture ran at the same time";
  else if (rt->fused_flushes != rt->capture_flushes0 || rt->buffer_writes != rt->capture_writes0)
    *why = "the graph did not run as one program (a host read or write, an op without a lowering, "
           "or another thread's op inside it)";
  else if (!c) *why = "out of host memory";
  int64_t flushes1 = rt->fused_flushes, replays1 = rt->fused_replays;
  if (!*why) rt->capture_note = c;
  tt_status_t st = tt__fuse_flush(rt);
  rt->capture_note = NULL;
  if (rt->capturing > 0) rt->capturing--;
  if (!st && !*why) {
    if (rt->fused_replays != replays1) *why = "the graph's program failed; its ops ran one by one";
    else if (rt->fused_flushes != flushes1 && !c->has_program) *why = "the graph ran as more than one program";
    else if (c->oom) *why = "out of host memory";
  }
  for (int r = 0; c && r < c->nrng && !*why && !st; r++)
    if (c->rng[2 * r] != rng_seed || c->rng[2 * r + 1] - rng_begin >= rng_end - rng_begin)
      *why = "a random op of the graph used a generator other than the device's default";
  if (!st && !*why) {
    c->nin = nin;
    if (!c->has_program) c->device = -1;
    *why = assign_slots(c, rt->capture_serial0, inputs, nin, outputs, nout);
    for (int r = 0; r < c->nrng && !*why; r++) c->rng[2 * r + 1] -= rng_begin;
    if (!*why) *why = map_host_values(c, host_ids, nhost);
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
  const unsigned char* bytes = c->group_bytes[g];
  unsigned char* patched = NULL;
  size_t sz = tt_dtype_size(c->group_dt[g]);
  if (c->has_host) {
    for (int k = 0; k < c->group_n[g]; k++) {
      int64_t h = c->group_host[g][k];
      if (h < 0) continue;
      if (!patched) {
        patched = malloc((size_t)c->group_n[g] * sz + 1);
        if (!patched) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
        memcpy(patched, bytes, (size_t)c->group_n[g] * sz);
      }
      memcpy(patched + (size_t)k * sz, host_vals[h], sz);
    }
  }
  tt_status_t st = tt__packed_buffer(rt, c->device, c->group_dt[g], patched ? patched : bytes, c->group_n[g],
                                     out, owned);
  free(patched);
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
  rt->cache_hits++;
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
    rt->execute_seconds += tt__now() - t0;
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
  rt->executions++;
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
