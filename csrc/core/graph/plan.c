/* Pass 1 of a program: the signature key of a sequence of calls, its
 * distinct storages and their roles (read before, written, results), its
 * runtime values, its results (tt_program.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tt_program.h"

#define GROW(p, cap, need) grow_array((void**)&(p), &(cap), (need), sizeof(*(p)))
static bool grow_array(void** arr, int* cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void* n = realloc(*arr, elem * (size_t)c);
  if (!n) return false;
  *arr = n;
  *cap = c;
  return true;
}

static void key_put(tt_plan_t* p, const void* data, size_t n) { tt_sbuf_appendn(&p->key, data, n); }
#define KEY(p, v)                   \
  do {                              \
    __typeof__(v) k__ = (v);        \
    key_put((p), &k__, sizeof k__); \
  } while (0)

static tt_status_t oom(void) { return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory"); }

/* ---- the calling thread's plan -------------------------------------------------- */

static pthread_key_t g_plan_key;
static pthread_once_t g_plan_once = PTHREAD_ONCE_INIT;

static void free_plan(void* v) {
  tt_plan_t* p = v;
  tt_plan_release(p);
  tt_sbuf_free(&p->key);
  free(p->st);
  free(p->extra);
  free(p->occ);
  free(p->call_extra0);
  free(p->out);
  free(p->res_st);
  free(p->check_codes);
  free(p->check_msgs);
  free(p->check_ops);
  free(p->map_keys);
  free(p->map_vals);
  free(p);
}
static void make_plan_key(void) { pthread_key_create(&g_plan_key, free_plan); }

tt_plan_t* tt_plan_acquire(const tt_plan_env_t* env, const tt_call_t* const* calls, int ncalls, bool fused,
                           bool donate) {
  pthread_once(&g_plan_once, make_plan_key);
  tt_plan_t* p = pthread_getspecific(g_plan_key);
  if (!p) {
    p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    tt_sbuf_init(&p->key);
    pthread_setspecific(g_plan_key, p);
  }
  p->env = env;
  p->calls = calls;
  p->ncalls = ncalls;
  p->fused = fused;
  p->donate = donate;
  tt_sbuf_clear(&p->key);
  p->nst = p->nextra = p->nocc = p->nout = p->nres = p->nchecks = p->ngroups = 0;
  p->device_error = false;
  return p;
}

void tt_plan_release(tt_plan_t* p) {
  for (int k = 0; k < p->nchecks; k++) free(p->check_msgs[k]);
  p->nchecks = 0;
}

const char* tt_plan_name(const tt_plan_t* p, bool capture) {
  if (p->fused && capture) return "compiled graph";
  return p->ncalls == 1 ? p->calls[0]->op->name : "fused program";
}

int tt_plan_donated_result(const tt_plan_t* p, int i) {
  const tt_plan_st_t* e = &p->st[i];
  if (!p->donate || !e->param || !e->result || e->param_dtype != e->dtype || e->param_numel != e->numel)
    return -1;
  for (int r = 0; r < p->nres; r++)
    if (p->res_st[r] == i) return r;
  return -1;
}

/* ---- storages --------------------------------------------------------------------- */

/* Plans of a few storages (Strict calls) look them up in order; past
 * MAP_MIN a hash map over the storage addresses. */
#define MAP_MIN 8

static size_t ptr_hash(const tt_storage_t* s, int cap) {
  uint64_t h = (uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 32) & (size_t)(cap - 1);
}

static void map_put(tt_plan_t* p, tt_storage_t* s, int idx) {
  size_t j = ptr_hash(s, p->capmap);
  while (p->map_keys[j]) j = (j + 1) & (size_t)(p->capmap - 1);
  p->map_keys[j] = s;
  p->map_vals[j] = idx;
}

/* (Re)builds the map for the plan's storages, at twice their count or more. */
static bool map_rebuild(tt_plan_t* p, int need) {
  int cap = p->capmap ? p->capmap : 64;
  while (cap < 2 * need) cap *= 2;
  if (cap != p->capmap) {
    tt_storage_t** k = realloc(p->map_keys, sizeof(*k) * (size_t)cap);
    if (k) p->map_keys = k;
    int* v = realloc(p->map_vals, sizeof(*v) * (size_t)cap);
    if (v) p->map_vals = v;
    if (!k || !v) return false;
    p->capmap = cap;
  }
  memset(p->map_keys, 0, sizeof(*p->map_keys) * (size_t)p->capmap);
  for (int i = 0; i < p->nst; i++) map_put(p, p->st[i].s, i);
  return true;
}

/* The plan's index of s (added on first sight); -1: out of host memory. */
static int storage_index(tt_plan_t* p, tt_storage_t* s) {
  if (p->nst <= MAP_MIN) {
    for (int i = 0; i < p->nst; i++)
      if (p->st[i].s == s) return i;
  } else {
    size_t j = ptr_hash(s, p->capmap);
    while (p->map_keys[j]) {
      if (p->map_keys[j] == s) return p->map_vals[j];
      j = (j + 1) & (size_t)(p->capmap - 1);
    }
  }
  if (!GROW(p->st, p->capst, p->nst + 1)) return -1;
  tt_plan_st_t* e = &p->st[p->nst];
  memset(e, 0, sizeof(*e));
  e->s = s;
  p->nst++;
  if (p->nst == MAP_MIN + 1 || (p->nst > MAP_MIN && 2 * p->nst > p->capmap)) {
    if (!map_rebuild(p, p->nst)) return -1;
  } else if (p->nst > MAP_MIN) {
    map_put(p, s, p->nst - 1);
  }
  return p->nst - 1;
}

/* Storage si as it is before the program, read by it: passed in, or (never
 * written: its bytes read as zeros) zeros made in the program instead of a
 * buffer of zeros uploaded and passed in (a fresh tensor written through a
 * strided view: the attention outputs of a step). */
static tt_status_t use_initial(tt_plan_t* p, int si, tt_dtype_t hint, const char* op) {
  tt_plan_st_t* e = &p->st[si];
  if (e->has_val || e->param || e->zero) return NULL;
  tt_plan_initial_t in;
  TT_RETURN_IF_ERROR(p->env->initial(p->env->ctx, e->s, hint, op, &in, &p->device_error));
  e->zero = in.zero;
  e->param = !in.zero;
  e->dtype = e->param_dtype = in.dtype;
  e->numel = e->param_numel = in.numel;
  return NULL;
}

/* ---- runtime values ----------------------------------------------------------------- */

static tt_plan_extra_t* new_extra(tt_plan_t* p, int* idx) {
  if (!GROW(p->extra, p->capextra, p->nextra + 1)) return NULL;
  tt_plan_extra_t* e = &p->extra[p->nextra];
  memset(e, 0, sizeof(*e));
  *idx = p->nextra++;
  return e;
}

static tt_status_t add_extra(tt_plan_t* p, tt_dtype_t dt, const void* bytes, int* idx) {
  tt_plan_extra_t* e = new_extra(p, idx);
  if (!e) return oom();
  e->type = tt_type_scalar(dt);
  size_t sz = tt_dtype_size(dt);
  memcpy(e->bytes, bytes, sz <= sizeof(e->bytes) ? sz : sizeof(e->bytes));
  if (p->fused) {
    int g = 0;
    while (g < p->ngroups && p->group_dt[g] != dt) g++;
    if (g == p->ngroups) {
      p->group_dt[g] = dt;
      p->group_n[g] = 0;
      p->ngroups++;
    }
    e->packed = true;
    e->group = g;
    e->slot = p->group_n[g]++;
  }
  return NULL;
}

/* ---- the key ------------------------------------------------------------------------ */

static void key_view(tt_plan_t* p, const tt_view_t* v, bool dyn_offset) {
  KEY(p, (int32_t)v->dtype);
  KEY(p, v->rank);
  key_put(p, v->sizes, sizeof(int64_t) * (size_t)v->rank);
  key_put(p, v->strides, sizeof(int64_t) * (size_t)v->rank);
  KEY(p, dyn_offset ? (int64_t)-1 : v->offset);
  KEY(p, (int32_t)(v->conj | (v->neg << 1)));
}

static tt_status_t wrong_device(int op_device, int device) {
  return tt_status_make(TT_INVALID_ARGUMENT,
                        "expected all tensors to be on the same device, but found tpu:%d and tpu:%d", op_device,
                        device);
}

/* one device tensor */
static tt_status_t plan_tensor(tt_plan_t* p, const tt_call_t* c, const tt_view_t* v) {
  tt_storage_t* s = v->storage;
  int dev = p->env->device(p->env->ctx, s);
  if (dev != c->device) return wrong_device(c->device, dev);
  int si = storage_index(p, s);
  if (si < 0 || !GROW(p->occ, p->capocc, p->nocc + 1)) return oom();
  TT_RETURN_IF_ERROR(use_initial(p, si, v->dtype, c->op->name));
  bool dyn = v->offset != 0; /* a runtime value for every view (lower/view: dynamic_span) */
  int ei = -1;
  if (dyn) TT_RETURN_IF_ERROR(add_extra(p, TT_I64, &v->offset, &ei));
  p->occ[p->nocc].st = si;
  p->occ[p->nocc++].extra = ei;
  KEY(p, (int32_t)si);
  key_view(p, v, dyn);
  return NULL;
}

static tt_status_t plan_arg(tt_plan_t* p, const tt_call_t* c, const tt_call_arg_t* a, bool as_out) {
  int32_t kind = as_out ? TT_ARG_OUT : (int32_t)a->kind;
  KEY(p, kind);
  int ei;
  switch (kind) {
    case TT_ARG_TENSOR:
      KEY(p, (int32_t)a->tier);
      KEY(p, (int32_t)a->on_host);
      if (a->on_host) {
        KEY(p, (int32_t)a->sdtype);
        TT_RETURN_IF_ERROR(add_extra(p, a->sdtype, a->scalar.bytes, &ei));
        p->extra[ei].host_id = a->host_id;
        return NULL;
      }
      return plan_tensor(p, c, &a->view);
    case TT_ARG_SCALAR:
      KEY(p, (int32_t)a->sdtype);
      return add_extra(p, a->sdtype, a->scalar.bytes, &ei);
    case TT_ARG_TENSORS:
    case TT_ARG_SCALARS:
      KEY(p, a->n);
      for (int i = 0; i < a->n; i++) TT_RETURN_IF_ERROR(plan_arg(p, c, &a->list[i], false));
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

static tt_status_t plan_one(tt_plan_t* p, const tt_call_t* c) {
  KEY(p, (uintptr_t)c->op);
  KEY(p, c->nargs);
  KEY(p, c->nout);
  for (int i = 0; i < c->nargs; i++) {
    bool as_out = (i == 0 && (c->op->flags & TT_LF_WRITE_ONLY));
    TT_RETURN_IF_ERROR(plan_arg(p, c, &c->args[i], as_out));
  }
  /* extras: the arguments', the RNG state, then the partial writes' offsets */
  if (c->op->flags & TT_LF_RNG) {
    int ei;
    tt_plan_extra_t* e = new_extra(p, &ei);
    if (!e) return oom();
    int64_t two = 2;
    e->type = tt_type_make(TT_U64, 1, &two);
    e->rng = true;
    memcpy(e->bytes, c->rng, sizeof(c->rng));
  }
  if (!GROW(p->out, p->capout, p->nout + c->nout)) return oom();
  for (int i = 0; i < c->nout; i++) {
    const tt_view_t* v = &c->outs[i];
    tt_storage_t* s = v->storage;
    tt_plan_out_t* o = &p->out[p->nout++];
    o->st = -1;
    o->extra = -1;
    if (!s) { /* an output the caller does not want (e.g. output_mask): computed, dropped */
      KEY(p, (int32_t)-1);
      key_view(p, v, false);
      continue;
    }
    int dev = p->env->device(p->env->ctx, s);
    if (dev != c->device)
      return tt_status_make(TT_INVALID_ARGUMENT, "output on tpu:%d, op on tpu:%d", dev, c->device);
    int si = storage_index(p, s);
    if (si < 0) return oom();
    size_t nbytes = p->env->nbytes(p->env->ctx, s);
    bool full = tt_view_covers(v, nbytes);
    o->full = full;
    bool dyn = !full && v->offset != 0;
    if (!full) {
      /* a partial write keeps the rest: of a failed storage, still failed */
      TT_RETURN_IF_ERROR(use_initial(p, si, v->dtype, c->op->name));
      if (dyn) TT_RETURN_IF_ERROR(add_extra(p, TT_I64, &v->offset, &o->extra));
    }
    o->st = si;
    KEY(p, (int32_t)si);
    KEY(p, (int32_t)full);
    key_view(p, v, dyn);
    /* the value's type after this write (what tt_view_write builds) */
    tt_plan_st_t* e = &p->st[si];
    if (full) {
      e->dtype = tt_dtype_buffer(v->dtype);
      e->numel = tt_view_numel(v) * tt_dtype_buffer_factor(v->dtype);
    } else if (tt_l_write_retypes(e->dtype, v->dtype)) {
      e->dtype = tt_dtype_buffer(v->dtype); /* the buffer is rewritten in the view's dtype */
      e->numel = (int64_t)(nbytes / tt_dtype_size(e->dtype));
    }
    e->has_val = true;
    e->producer = c->op->name;
  }
  return NULL;
}

tt_status_t tt_plan_calls(tt_plan_t* p) {
  if (!GROW(p->call_extra0, p->capcalls, p->ncalls)) return oom();
  KEY(p, (int32_t)p->fused); /* fused programs take packed scalars */
  for (int k = 0; k < p->ncalls; k++) {
    p->call_extra0[k] = p->nextra;
    TT_RETURN_IF_ERROR(plan_one(p, p->calls[k]));
  }
  /* results: every written storage (fused: whose value is still wanted) */
  for (int i = 0; i < p->nst; i++) {
    tt_plan_st_t* e = &p->st[i];
    e->result = e->has_val && (!p->fused || p->env->wanted(p->env->ctx, e->s));
    KEY(p, (int32_t)(e->param | (e->result << 1) | (e->zero << 2)));
    if (e->param || e->zero) {
      KEY(p, (int32_t)e->param_dtype);
      KEY(p, e->param_numel);
    }
    if (e->result) {
      if (!GROW(p->res_st, p->capres, p->nres + 1)) return oom();
      p->res_st[p->nres++] = i;
    }
  }
  if (p->key.oom) return oom();
  return NULL;
}
