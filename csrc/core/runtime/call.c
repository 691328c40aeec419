/* Running programs of op calls (DESIGN §6): graph/ plans a sequence of
 * calls and builds its program (tt_program.h); here the program is found in
 * the executable cache or compiled, run on the storages' buffers and the
 * runtime values, and its results installed into the storages. Strict and
 * Debug Eager run sequences of one call; a Fused Eager flush (fuse.c) runs
 * the calls recorded in the graph as one program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static tt_status_t oom(void) { return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory"); }

/* ---- what the plan asks about storages (rt->mu held) ----------------------------- */

static int env_device(void* ctx, tt_storage_t* s) { return s->device; }
static size_t env_nbytes(void* ctx, tt_storage_t* s) { return s->nbytes; }
static bool env_wanted(void* ctx, tt_storage_t* s) { return s->user_alive || s->graph_refs > 0; }

static tt_status_t env_initial(void* ctx, tt_storage_t* s, tt_dtype_t hint, const char* op,
                               tt_plan_initial_t* out, bool* device_error) {
  if (s->state == TT_STORAGE_FAILED) {
    *device_error = true;
    return tt__storage_check(s, op);
  }
  if (s->state == TT_STORAGE_EMPTY) {
    out->zero = true;
    out->dtype = tt__storage_empty_type(s, hint, &out->numel);
    return NULL;
  }
  TT_RETURN_IF_ERROR(tt__storage_materialize(s, hint));
  out->zero = false;
  out->dtype = s->buf_dtype;
  out->numel = s->buf_numel;
  return NULL;
}

static const tt_plan_env_t g_env = {NULL, env_device, env_nbytes, env_initial, env_wanted};

static uint64_t storage_born(void* ctx, tt_storage_t* s) { return s->born; }

/* ---- the run ------------------------------------------------------------------------ */

static const char* plan_name(tt_runtime_t* rt, const tt_plan_t* p) {
  return tt_plan_name(p, rt->capture.note != NULL); /* a capture's program (replay.c) */
}

/* The runtime values of a plan as device buffers, in parameter order: the
 * packed groups (borrowed from the packed cache, or owned where own[k]),
 * then the other extras (Scalars from the scalar cache, RNG states owned). */
static tt_status_t upload_extras(tt_runtime_t* rt, tt_plan_t* p, int device, tt_pjrt_buffer_t** bufs, bool* own,
                                 size_t* n) {
  for (int g = 0; g < p->ngroups; g++) {
    size_t sz = tt_dtype_size(p->group_dt[g]);
    unsigned char* host = calloc((size_t)p->group_n[g] ? (size_t)p->group_n[g] : 1, sz);
    if (!host) return oom();
    for (int i = 0; i < p->nextra; i++)
      if (p->extra[i].packed && p->extra[i].group == g)
        memcpy(host + (size_t)p->extra[i].slot * sz, p->extra[i].bytes, sz);
    tt_status_t st = tt__packed_buffer(rt, device, p->group_dt[g], host, p->group_n[g], &bufs[*n], &own[*n]);
    free(host);
    TT_RETURN_IF_ERROR(st);
    (*n)++;
  }
  for (int i = 0; i < p->nextra; i++) {
    const tt_plan_extra_t* e = &p->extra[i];
    if (e->packed) continue;
    if (e->rng) {
      own[*n] = true;
      TT_RETURN_IF_ERROR(tt_pjrt_buffer_from_host(rt->pjrt, device, e->bytes, &e->type, &bufs[*n]));
    } else {
      TT_RETURN_IF_ERROR(tt__scalar_buffer(rt, device, e->type.dtype, e->bytes, &bufs[*n], &own[*n]));
    }
    (*n)++;
  }
  return NULL;
}

/* The executable of the plan's program: cached, else built and compiled. */
static tt_status_t find_or_compile(tt_runtime_t* rt, tt_plan_t* p, uint64_t h, tt_cache_entry_t** out) {
  tt_cache_entry_t* e = tt__cache_find(&rt->cache, p->key.data, p->key.len, h);
  if (e) {
    rt->stats.cache_hits++;
    *out = e;
    return NULL;
  }
  rt->stats.cache_misses++;
  tt__cache_make_room(rt);
  tt_sbuf_t text;
  tt_sbuf_init(&text);
  const char* name = plan_name(rt, p);
  tt_status_t st = tt_plan_build(p, &text);
  if (!st && rt->dump_hlo) fprintf(stderr, "[torch_tpu] %s:\n%s\n", name, text.data);
  tt_pjrt_exec_t* ex = NULL;
  double secs = 0;
  bool built = !st;
  if (!st) st = tt__cache_compile(rt, name, &text, &ex, &secs);
  if (st && built && !rt->dump_hlo)
    st = tt_status_annotate(st, "compiling %s (set TORCH_TPU_DUMP_HLO=1 to see the program)", name);
  tt_sbuf_free(&text);
  if (st) return st;
  st = tt__cache_insert(&rt->cache, p->key.data, p->key.len, h, ex, p->nres, secs, &e);
  if (st) {
    tt_pjrt_exec_destroy(rt->pjrt, ex);
    return st;
  }
  /* the entry owns the check messages from here on */
  TT_RETURN_IF_ERROR(tt__cache_set_checks(e, p->nchecks, p->check_codes, p->check_msgs, p->check_ops));
  p->nchecks = 0;
  *out = e;
  return NULL;
}

/* rt->mu held */
static tt_status_t run_locked(tt_runtime_t* rt, tt_plan_t* p) {
  rt->call_serial++; /* pins the scalar-cache slots this run takes */
  TT_RETURN_IF_ERROR(tt_plan_calls(p));
  int device = p->calls[0]->device;
  uint64_t h = tt_hash_bytes(p->key.data, p->key.len, 0);
  tt_cache_entry_t* e = NULL;
  TT_RETURN_IF_ERROR(find_or_compile(rt, p, h, &e));
  e->last_use = rt->call_serial;
  size_t nargs = 0, nextras = 0;
  size_t cap = (size_t)(p->nst + p->ngroups + p->nextra) + 1;
  tt_pjrt_buffer_t** args = malloc(sizeof(*args) * cap);
  bool* own = calloc(cap, sizeof(bool));
  tt_pjrt_buffer_t** outs = malloc(sizeof(*outs) * (size_t)(p->nres + e->nchecks + 1));
  tt_status_t xst = args && own && outs ? NULL : oom();
  for (int i = 0; i < p->nst && !xst; i++)
    if (p->st[i].param) args[nargs++] = p->st[i].s->buf;
  size_t first_extra = nargs;
  nextras = nargs;
  if (!xst) xst = upload_extras(rt, p, device, args, own, &nextras);
  nargs = nextras;
  if (!xst) {
    double t0 = tt__now();
    xst = tt_pjrt_execute(rt->pjrt, e->exec, device, args, nargs, outs, (size_t)(p->nres + e->nchecks));
    rt->stats.execute_seconds += tt__now() - t0;
  }
  for (size_t i = first_extra; args && own && i < nextras; i++)
    if (own[i]) tt_pjrt_buffer_destroy(rt->pjrt, args[i]); /* PJRT keeps in-flight uses */
  free(args);
  free(own);
  if (xst) {
    /* a donated buffer may be gone with the failed run: its storage fails
     * too, rather than be read (a fused replay raises its error) */
    if (outs)
      for (int i = 0; i < p->nst; i++)
        if (tt_plan_donated_result(p, i) >= 0) tt__storage_fail(p->st[i].s, tt_status_clone(xst));
    free(outs);
    p->device_error = outs != NULL;
    return outs ? tt_status_annotate(xst, "error in op %s", plan_name(rt, p)) : xst;
  }
  rt->stats.executions++;
  bool debug = tt_runtime_mode() == TT_MODE_DEBUG;
  tt_status_t first = NULL;
  for (int r = 0; r < p->nres; r++) {
    tt_plan_st_t* ps = &p->st[p->res_st[r]];
    tt__storage_set_buffer(ps->s, outs[r], ps->dtype, ps->numel, ps->producer, true);
    if (debug) {
      tt_status_t st = tt__storage_await(ps->s);
      if (st && !first) first = st;
      else tt_status_free(st);
    }
  }
  if (p->fused && rt->capture.note && !rt->capture.note->has_program)
    tt_capture_note(rt->capture.note, p, h, e->nchecks, storage_born, NULL);
  if (e->nchecks) {
    tt_status_t st = tt__checks_push(rt, e, outs + p->nres, plan_name(rt, p));
    /* Debug Eager raises at the op; Strict at the next sync (or when too many
     * checks are pending, to bound their memory). */
    if (!st && (debug || rt->nchecks > 4096)) st = tt__checks_drain(rt);
    if (st && !first) first = st;
    else tt_status_free(st);
  }
  free(outs);
  return first;
}

/* rt->mu held. Runs one call as its own program (Strict/Debug). */
tt_status_t tt__run_call(tt_runtime_t* rt, const tt_call_t* call) {
  tt_plan_t* p = tt_plan_acquire(&g_env, &call, 1, false, rt->donate);
  if (!p) return oom();
  tt_status_t st = run_locked(rt, p);
  if (st && p->device_error && tt_runtime_mode() != TT_MODE_DEBUG) {
    /* Strict Eager is asynchronous: a device failure becomes the sticky state
     * of the op's outputs and is raised at the next sync, naming the op. */
    for (int i = 0; i < call->nout; i++)
      if (call->outs[i].storage) tt__storage_fail(call->outs[i].storage, tt_status_clone(st));
    tt_status_free(st);
    st = NULL;
  }
  tt_plan_release(p);
  return st;
}

/* rt->mu held. Runs calls[0..n) as one program (a Fused Eager flush). On any
 * failure nothing was installed and the caller replays the calls one by one. */
tt_status_t tt__run_fused(tt_runtime_t* rt, const tt_call_t* const* calls, int n) {
  tt_plan_t* p = tt_plan_acquire(&g_env, calls, n, true, rt->donate);
  if (!p) return oom();
  tt_status_t st = run_locked(rt, p);
  tt_plan_release(p);
  return st;
}
