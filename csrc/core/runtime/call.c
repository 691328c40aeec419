/* One op call: key the signature, find or build+compile the program, run it,
 * install the results into the output storages (DESIGN §6, Strict/Debug).
 *
 * A program's parameters are: one 1-D buffer per distinct storage it reads
 * (or partially writes), then the runtime values in argument order (dynamic
 * view offsets, Scalars, host 0-dim tensors, the RNG state). Its results are
 * the new buffers of the distinct output storages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_ST 256
#define MAX_EXTRA 1024
#define MAX_OUT 256

typedef struct extra {
  tt_type_t type;
  tt_pjrt_buffer_t* buf; /* borrowed from the scalar cache, or owned if `owned` */
  bool owned;
} extra_t;

typedef struct plan {
  tt_runtime_t* rt;
  const tt_call_t* call;
  tt_sbuf_t key;
  tt_storage_t* st[MAX_ST];
  bool st_param[MAX_ST]; /* read, or partially written: passed in */
  int nst;
  extra_t extra[MAX_EXTRA];
  int nextra;
  /* decisions of pass 1, replayed by pass 2: per tensor occurrence */
  int16_t occ_st[MAX_EXTRA];
  int16_t occ_extra[MAX_EXTRA]; /* offset param, or -1 */
  int nocc;
  int out_st[MAX_OUT];
  bool out_full[MAX_OUT];
  int out_extra[MAX_OUT];
  bool device_error;   /* the failure is the device's (execution, failed input) */
  int res_st[MAX_OUT]; /* distinct output storages */
  tt_dtype_t res_dtype[MAX_OUT];
  int64_t res_numel[MAX_OUT];
  int nres;
  /* device-side checks of a program built by this call (moved into its entry) */
  int nchecks;
  int check_codes[TT_MAX_CHECKS];
  char* check_msgs[TT_MAX_CHECKS];
} plan_t;

static void key_put(plan_t* p, const void* data, size_t n) { tt_sbuf_appendn(&p->key, data, n); }
#define KEY(p, v)                 \
  do {                            \
    __typeof__(v) k__ = (v);      \
    key_put((p), &k__, sizeof k__); \
  } while (0)

static int storage_index(plan_t* p, tt_storage_t* s, bool param) {
  int i = 0;
  while (i < p->nst && p->st[i] != s) i++;
  if (i == p->nst) {
    if (p->nst == MAX_ST) return -1;
    p->st[p->nst] = s;
    p->st_param[p->nst++] = false;
  }
  if (param) p->st_param[i] = true;
  return i;
}

static tt_status_t add_extra(plan_t* p, tt_dtype_t dt, const void* bytes, int* idx) {
  if (p->nextra == MAX_EXTRA) return tt_status_make(TT_UNIMPLEMENTED, "too many op arguments");
  extra_t* e = &p->extra[p->nextra];
  e->type = tt_type_scalar(dt);
  e->owned = false;
  TT_RETURN_IF_ERROR(tt__scalar_buffer(p->rt, p->call->device, dt, bytes, &e->buf, &e->owned));
  *idx = p->nextra++;
  return NULL;
}

static void key_view(plan_t* p, const tt_view_t* v, bool dyn_offset) {
  KEY(p, (int32_t)v->dtype);
  KEY(p, v->rank);
  key_put(p, v->sizes, sizeof(int64_t) * (size_t)v->rank);
  key_put(p, v->strides, sizeof(int64_t) * (size_t)v->rank);
  KEY(p, dyn_offset ? (int64_t)-1 : v->offset);
  KEY(p, (int32_t)(v->conj | (v->neg << 1)));
}

/* pass 1 for one device tensor */
static tt_status_t plan_tensor(plan_t* p, const tt_view_t* v) {
  tt_storage_t* s = v->storage;
  if (s->device != p->call->device)
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "expected all tensors to be on the same device, but found tpu:%d and tpu:%d",
                          p->call->device, s->device);
  if (s->state == TT_STORAGE_FAILED) {
    p->device_error = true;
    return tt__storage_check(s, p->call->op->name);
  }
  TT_RETURN_IF_ERROR(tt__storage_materialize(s, v->dtype));
  int si = storage_index(p, s, true);
  if (si < 0 || p->nocc == MAX_EXTRA) return tt_status_make(TT_UNIMPLEMENTED, "too many tensors in one op");
  bool dyn = v->offset != 0 && tt__view_is_contiguous(v);
  int ei = -1;
  if (dyn) TT_RETURN_IF_ERROR(add_extra(p, TT_I64, &v->offset, &ei));
  p->occ_st[p->nocc] = (int16_t)si;
  p->occ_extra[p->nocc++] = (int16_t)ei;
  KEY(p, (int32_t)si);
  key_view(p, v, dyn);
  return NULL;
}

static tt_status_t plan_arg(plan_t* p, const tt_call_arg_t* a, bool as_out) {
  int32_t kind = as_out ? TT_ARG_OUT : (int32_t)a->kind;
  KEY(p, kind);
  int ei;
  switch (kind) {
    case TT_ARG_TENSOR:
      KEY(p, (int32_t)a->tier);
      KEY(p, (int32_t)a->on_host);
      if (a->on_host) {
        KEY(p, (int32_t)a->sdtype);
        return add_extra(p, a->sdtype, a->scalar.bytes, &ei);
      }
      return plan_tensor(p, &a->view);
    case TT_ARG_SCALAR:
      KEY(p, (int32_t)a->sdtype);
      return add_extra(p, a->sdtype, a->scalar.bytes, &ei);
    case TT_ARG_TENSORS:
    case TT_ARG_SCALARS:
      KEY(p, a->n);
      for (int i = 0; i < a->n; i++) TT_RETURN_IF_ERROR(plan_arg(p, &a->list[i], false));
      return NULL;
    case TT_ARG_INT:
    case TT_ARG_BOOL:
      KEY(p, a->i);
      return NULL;
    case TT_ARG_FLOAT:
      KEY(p, a->f);
      return NULL;
    case TT_ARG_INTS:
      KEY(p, a->n);
      key_put(p, a->ints, sizeof(int64_t) * (size_t)a->n);
      return NULL;
    case TT_ARG_STR: {
      const char* s = a->str ? a->str : "";
      key_put(p, s, strlen(s) + 1);
      return NULL;
    }
    default:
      return NULL; /* NONE, OUT */
  }
}

static tt_status_t plan_call(plan_t* p) {
  const tt_call_t* c = p->call;
  KEY(p, (uintptr_t)c->op);
  KEY(p, c->nargs);
  KEY(p, c->nout);
  for (int i = 0; i < c->nargs; i++) {
    bool as_out = (i == 0 && (c->op->flags & TT_LF_WRITE_ONLY));
    TT_RETURN_IF_ERROR(plan_arg(p, &c->args[i], as_out));
  }
  if (c->nout > MAX_OUT) return tt_status_make(TT_UNIMPLEMENTED, "too many outputs");
  for (int i = 0; i < c->nout; i++) {
    const tt_view_t* v = &c->outs[i];
    tt_storage_t* s = v->storage;
    p->out_st[i] = -1;
    if (!s) { /* an output the caller does not want (e.g. output_mask): computed, dropped */
      KEY(p, (int32_t)-1);
      key_view(p, v, false);
      continue;
    }
    if (s->device != c->device)
      return tt_status_make(TT_INVALID_ARGUMENT, "output on tpu:%d, op on tpu:%d", s->device, c->device);
    bool full = tt__view_is_full(v);
    p->out_full[i] = full;
    p->out_extra[i] = -1;
    bool dyn = !full && v->offset != 0 && tt__view_is_contiguous(v);
    if (!full) {
      if (s->state == TT_STORAGE_FAILED) {
        /* a partial write keeps the rest of a failed storage: still failed */
        p->device_error = true;
        return tt__storage_check(s, c->op->name);
      }
      TT_RETURN_IF_ERROR(tt__storage_materialize(s, v->dtype));
      if (dyn) TT_RETURN_IF_ERROR(add_extra(p, TT_I64, &v->offset, &p->out_extra[i]));
    }
    int si = storage_index(p, s, !full);
    if (si < 0) return tt_status_make(TT_UNIMPLEMENTED, "too many storages in one op");
    p->out_st[i] = si;
    KEY(p, (int32_t)si);
    KEY(p, (int32_t)full);
    key_view(p, v, dyn);
    /* result bookkeeping: the last write to a storage decides its dtype */
    int r = 0;
    while (r < p->nres && p->res_st[r] != si) r++;
    bool fresh = r == p->nres;
    if (fresh) p->nres++;
    p->res_st[r] = si;
    if (full) {
      p->res_dtype[r] = v->dtype;
      p->res_numel[r] = tt_view_numel(v);
    } else if (fresh && tt__write_retypes(s->buf_dtype, v->dtype)) {
      p->res_dtype[r] = v->dtype; /* the buffer is rewritten in the view's dtype */
      p->res_numel[r] = (int64_t)(s->nbytes / tt_dtype_size(v->dtype));
    } else if (fresh) { /* written into the base buffer: keeps its type */
      p->res_dtype[r] = s->buf_dtype;
      p->res_numel[r] = s->buf_numel;
    }
  }
  if (c->op->flags & TT_LF_RNG) {
    if (p->nextra == MAX_EXTRA) return tt_status_make(TT_UNIMPLEMENTED, "too many op arguments");
    extra_t* e = &p->extra[p->nextra++];
    int64_t two = 2;
    e->type = tt_type_make(TT_U64, 1, &two);
    e->owned = true;
    TT_RETURN_IF_ERROR(tt_pjrt_buffer_from_host(p->rt->pjrt, c->device, c->rng, &e->type, &e->buf));
  }
  /* storage buffer types are part of the signature */
  for (int i = 0; i < p->nst; i++) {
    KEY(p, (int32_t)p->st_param[i]);
    if (!p->st_param[i]) continue;
    KEY(p, (int32_t)p->st[i]->buf_dtype);
    KEY(p, p->st[i]->buf_numel);
  }
  if (p->key.oom) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  return NULL;
}

/* ---- pass 2: the program ------------------------------------------------------ */

typedef struct build {
  plan_t* p;
  tt_shlo_fn_t* f;
  tt_val_t st_val[MAX_ST];
  tt_val_t extra_val[MAX_EXTRA];
  int occ;   /* cursor into occ_* */
  int extra; /* cursor into extra */
  tt_val_t* pool; /* list values */
  int npool, cappool;
} build_t;

static tt_val_t* pool_take(build_t* b, int n) {
  if (b->npool + n > b->cappool) return NULL;
  tt_val_t* r = b->pool + b->npool;
  b->npool += n;
  return r;
}

static tt_val_t build_tensor(build_t* b, const tt_view_t* v) {
  int si = b->p->occ_st[b->occ];
  int ei = b->p->occ_extra[b->occ++];
  if (ei >= 0) b->extra++;
  return tt__view_read(b->f, b->st_val[si], v, ei >= 0 ? b->extra_val[ei] : TT_SHLO_INVALID);
}

static void build_arg(build_t* b, const tt_call_arg_t* a, bool as_out, tt_larg_t* l) {
  memset(l, 0, sizeof(*l));
  l->kind = as_out ? TT_ARG_OUT : a->kind;
  l->val = TT_SHLO_INVALID;
  switch (l->kind) {
    case TT_ARG_TENSOR:
      l->tier = a->tier;
      l->val = a->on_host ? b->extra_val[b->extra++] : build_tensor(b, &a->view);
      return;
    case TT_ARG_SCALAR:
      l->tier = TT_TIER_WRAPPED;
      l->val = b->extra_val[b->extra++];
      return;
    case TT_ARG_TENSORS:
    case TT_ARG_SCALARS: {
      tt_val_t* vals = pool_take(b, a->n);
      if (!vals) {
        tt_shlo_fail(b->f, "argument list too long");
        return;
      }
      l->tier = TT_TIER_DIM;
      for (int i = 0; i < a->n; i++) {
        tt_larg_t sub;
        build_arg(b, &a->list[i], false, &sub);
        vals[i] = sub.val;
        if (i == 0) l->tier = sub.tier;
      }
      l->vals = vals;
      l->n = a->n;
      return;
    }
    case TT_ARG_INT:
    case TT_ARG_BOOL:
      l->i = a->i;
      return;
    case TT_ARG_FLOAT:
      l->f = a->f;
      return;
    case TT_ARG_INTS:
      l->ints = a->ints;
      l->n = a->n;
      return;
    case TT_ARG_STR:
      l->str = a->str;
      return;
    default:
      return;
  }
}

static int count_list_elems(const tt_call_t* c) {
  int n = 0;
  for (int i = 0; i < c->nargs; i++)
    if (c->args[i].kind == TT_ARG_TENSORS || c->args[i].kind == TT_ARG_SCALARS) n += c->args[i].n;
  return n;
}

static tt_status_t build_program(plan_t* p, tt_sbuf_t* text) {
  const tt_call_t* c = p->call;
  build_t b;
  memset(&b, 0, sizeof(b));
  b.p = p;
  b.f = tt_shlo_fn_create();
  b.cappool = count_list_elems(c);
  b.pool = calloc((size_t)b.cappool + 1, sizeof(tt_val_t));
  int nl = c->nargs + ((c->op->flags & TT_LF_RNG) ? 1 : 0);
  tt_larg_t* largs = calloc((size_t)nl + 1, sizeof(tt_larg_t));
  tt_type_t* out_types = calloc((size_t)c->nout + 1, sizeof(tt_type_t));
  tt_val_t* outs = calloc((size_t)c->nout + 1, sizeof(tt_val_t));
  tt_status_t st = NULL;
  if (!b.f || !b.pool || !largs || !out_types || !outs) {
    st = tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
    goto done;
  }
  for (int i = 0; i < p->nst; i++) {
    b.st_val[i] = TT_SHLO_INVALID;
    if (!p->st_param[i]) continue;
    int64_t n = p->st[i]->buf_numel;
    tt_type_t t = tt_type_make(p->st[i]->buf_dtype, 1, &n);
    b.st_val[i] = tt_shlo_param(b.f, &t);
  }
  for (int i = 0; i < p->nextra; i++) b.extra_val[i] = tt_shlo_param(b.f, &p->extra[i].type);
  for (int i = 0; i < c->nargs; i++)
    build_arg(&b, &c->args[i], i == 0 && (c->op->flags & TT_LF_WRITE_ONLY), &largs[i]);
  if (c->op->flags & TT_LF_RNG) {
    largs[c->nargs].kind = TT_ARG_RNG;
    largs[c->nargs].val = b.extra_val[p->nextra - 1];
  }
  for (int i = 0; i < c->nout; i++) {
    out_types[i] = tt_type_make(c->out_dtypes[i], c->outs[i].rank, c->outs[i].sizes);
    outs[i] = TT_SHLO_INVALID;
  }
  tt_lctx_t lc = {b.f, c->op, largs, nl, out_types, c->nout, outs};
  if (!tt_shlo_failed(b.f)) {
    st = c->op->fn(&lc);
    if (st) goto done;
  }
  /* writes, in output order, onto the current value of each storage */
  tt_val_t cur[MAX_ST];
  memcpy(cur, b.st_val, sizeof(tt_val_t) * (size_t)p->nst);
  for (int i = 0; i < c->nout && !tt_shlo_failed(b.f); i++) {
    if (outs[i] == TT_SHLO_INVALID) {
      st = tt_status_make(TT_INTERNAL, "%s: the lowering did not set output %d", c->op->name, i);
      goto done;
    }
    int si = p->out_st[i];
    if (si < 0) continue;
    if (p->out_full[i]) {
      int64_t n = tt_view_numel(&c->outs[i]);
      cur[si] = tt_l_reshape(b.f, tt_l_convert(b.f, outs[i], c->outs[i].dtype), 1, &n);
    } else {
      int ei = p->out_extra[i];
      cur[si] = tt__view_write(b.f, cur[si], &c->outs[i], ei >= 0 ? b.extra_val[ei] : TT_SHLO_INVALID,
                               outs[i]);
    }
  }
  tt_val_t results[MAX_OUT + TT_MAX_CHECKS];
  for (int r = 0; r < p->nres; r++) results[r] = cur[p->res_st[r]];
  int nchecks = tt_shlo_check_count(b.f);
  if (nchecks > TT_MAX_CHECKS) {
    st = tt_status_make(TT_UNIMPLEMENTED, "%s: too many device-side checks", c->op->name);
    goto done;
  }
  for (int k = 0; k < nchecks; k++) {
    results[p->nres + k] = tt_shlo_check_value(b.f, k);
    p->check_codes[k] = tt_shlo_check_code(b.f, k);
    p->check_msgs[k] = strdup(tt_shlo_check_message(b.f, k));
    p->nchecks = k + 1;
    if (!p->check_msgs[k]) {
      st = tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
      goto done;
    }
  }
  st = tt_shlo_fn_finish(b.f, results, p->nres + nchecks, text);
done:
  tt_shlo_fn_destroy(b.f);
  free(b.pool);
  free(largs);
  free(out_types);
  free(outs);
  return st ? tt_status_annotate(st, "lowering %s", c->op->name) : NULL;
}

/* ---- the call ---------------------------------------------------------------- */

/* One plan per thread, reused: a plan is large (fixed arrays) and calls on one
 * thread never nest. Freed when the thread exits. */
static pthread_key_t g_plan_key;
static pthread_once_t g_plan_once = PTHREAD_ONCE_INIT;

static void free_plan(void* v) {
  plan_t* p = v;
  tt_sbuf_free(&p->key);
  free(p);
}
static void make_plan_key(void) { pthread_key_create(&g_plan_key, free_plan); }

static plan_t* acquire_plan(tt_runtime_t* rt, const tt_call_t* call) {
  pthread_once(&g_plan_once, make_plan_key);
  plan_t* p = pthread_getspecific(g_plan_key);
  if (!p) {
    p = malloc(sizeof(*p));
    if (!p) return NULL;
    tt_sbuf_init(&p->key);
    pthread_setspecific(g_plan_key, p);
  }
  p->rt = rt;
  p->call = call;
  tt_sbuf_clear(&p->key);
  p->nst = p->nextra = p->nocc = p->nres = p->nchecks = 0;
  p->device_error = false;
  return p;
}

static void release_plan(plan_t* p) {
  for (int k = 0; k < p->nchecks; k++) free(p->check_msgs[k]);
  p->nchecks = 0;
  for (int i = 0; i < p->nextra; i++)
    if (p->extra[i].owned) tt_pjrt_buffer_destroy(p->rt->pjrt, p->extra[i].buf);
  p->nextra = 0;
}

static tt_status_t run_locked(tt_runtime_t* rt, plan_t* p) {
  const tt_call_t* c = p->call;
  rt->call_serial++; /* pins the scalar-cache slots this call takes */
  TT_RETURN_IF_ERROR(plan_call(p));
  uint64_t h = tt_hash_bytes(p->key.data, p->key.len, 0);
  tt_cache_entry_t* e = tt__cache_find(&rt->cache, p->key.data, p->key.len, h);
  if (e) {
    rt->cache_hits++;
  } else {
    rt->cache_misses++;
    tt_sbuf_t text;
    tt_sbuf_init(&text);
    tt_status_t st = build_program(p, &text);
    if (!st && rt->dump_hlo) fprintf(stderr, "[torch_tpu] %s:\n%s\n", c->op->name, text.data);
    tt_pjrt_exec_t* ex = NULL;
    double t0 = tt__now();
    if (!st) st = tt_pjrt_compile(rt->pjrt, text.data, text.len, &ex);
    double secs = tt__now() - t0;
    if (st && text.data && !rt->dump_hlo)
      st = tt_status_annotate(st, "compiling %s (set TORCH_TPU_DUMP_HLO=1 to see the program)", c->op->name);
    tt_sbuf_free(&text);
    if (st) return st;
    rt->compile_seconds += secs;
    st = tt__cache_insert(&rt->cache, p->key.data, p->key.len, h, ex, p->nres, secs, &e);
    if (st) {
      tt_pjrt_exec_destroy(rt->pjrt, ex);
      return st;
    }
    e->nchecks = p->nchecks; /* the entry owns the messages from here on */
    for (int k = 0; k < p->nchecks; k++) {
      e->check_codes[k] = p->check_codes[k];
      e->check_msgs[k] = p->check_msgs[k];
    }
    p->nchecks = 0;
  }
  size_t nargs = 0;
  tt_pjrt_buffer_t* args[MAX_ST + MAX_EXTRA];
  for (int i = 0; i < p->nst; i++)
    if (p->st_param[i]) args[nargs++] = p->st[i]->buf;
  for (int i = 0; i < p->nextra; i++) args[nargs++] = p->extra[i].buf;
  tt_pjrt_buffer_t* outs[MAX_OUT + TT_MAX_CHECKS];
  tt_status_t xst = tt_pjrt_execute(rt->pjrt, e->exec, c->device, args, nargs, outs,
                                    (size_t)(p->nres + e->nchecks));
  if (xst) {
    p->device_error = true;
    return tt_status_annotate(xst, "error in op %s", c->op->name);
  }
  rt->executions++;
  bool debug = tt_runtime_mode() == TT_MODE_DEBUG;
  tt_status_t first = NULL;
  for (int r = 0; r < p->nres; r++) {
    tt_storage_t* s = p->st[p->res_st[r]];
    tt__storage_set_buffer(s, outs[r], p->res_dtype[r], p->res_numel[r], c->op->name, true);
    if (debug) {
      tt_status_t st = tt__storage_await(s);
      if (st && !first) first = st;
      else tt_status_free(st);
    }
  }
  if (e->nchecks) {
    tt_status_t st = tt__checks_push(rt, e, outs + p->nres, c->op->name);
    /* Debug Eager raises at the op; Strict at the next sync (or when too many
     * checks are pending, to bound their memory). */
    if (!st && (debug || rt->nchecks > 4096)) st = tt__checks_drain(rt);
    if (st && !first) first = st;
    else tt_status_free(st);
  }
  return first;
}

tt_status_t tt_runtime_call(tt_runtime_t* rt, const tt_call_t* call) {
  bool any = false;
  for (int i = 0; i < call->nout; i++)
    if (tt_view_numel(&call->outs[i]) > 0) any = true;
  if (!any && call->nout > 0) return NULL; /* nothing to write */
  TT_RETURN_IF_ERROR(tt__complex_gate(call));
  plan_t* p = acquire_plan(rt, call);
  if (!p) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  pthread_mutex_lock(&rt->mu);
  tt_status_t st = run_locked(rt, p);
  if (st && p->device_error && tt_runtime_mode() != TT_MODE_DEBUG) {
    /* Strict Eager is asynchronous: a device failure becomes the sticky state
     * of the op's outputs and is raised at the next sync, naming the op. */
    for (int i = 0; i < call->nout; i++)
      if (call->outs[i].storage) tt__storage_fail(call->outs[i].storage, tt_status_clone(st));
    tt_status_free(st);
    st = NULL;
  }
  pthread_mutex_unlock(&rt->mu);
  release_plan(p);
  return st;
}
