/* Running op calls: key the signature of a sequence of calls, find or
 * build+compile its program, run it, install the results into the output
 * storages (DESIGN §6). Strict/Debug Eager run sequences of one call; a Fused
 * Eager flush (fuse.c) runs every call recorded in the graph as one program.
 *
 * A program's parameters are: one 1-D buffer per distinct storage whose
 * value from before the program it reads (or partially writes), then the
 * runtime values in argument order (dynamic view offsets, Scalars, host 0-dim
 * tensors, RNG states). Its results are the new buffers of the storages it
 * writes (in a fused program: those PyTorch still holds), then the device-side
 * checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct extra {
  tt_type_t type;
  tt_pjrt_buffer_t* buf; /* borrowed from the scalar cache, or owned if `owned` */
  bool owned;
  /* fused plans: a slot of its dtype's packed parameter (no buffer of its own) */
  bool packed;
  int group, slot;
  unsigned char bytes[16];
  uint64_t host_id;  /* a host tensor's value (captures): its identity, else 0 */
} extra_t;

/* Per distinct storage of a program. */
typedef struct pst {
  tt_storage_t* s;
  bool param;       /* its value from before the program is read: passed in */
  bool zero;        /* its value from before the program is read, and it is empty: zeros
                       made in the program (param_dtype, param_numel), nothing uploaded */
  bool has_val;     /* pass 1: the program has written it so far */
  bool result;      /* its final value is a result */
  tt_dtype_t dtype; /* pass 1: the type of its current value */
  int64_t numel;
  tt_dtype_t param_dtype; /* param: the buffer passed in */
  int64_t param_numel;
  const char* producer; /* the op that wrote it last */
} pst_t;

typedef struct pout { /* per output of each call */
  int st;             /* storage index, -1: dropped */
  bool full;
  int extra;          /* dynamic offset param, or -1 */
} pout_t;

typedef struct plan {
  tt_runtime_t* rt;
  const tt_call_t* const* calls;
  int ncalls;
  bool fused;        /* results: only storages PyTorch still holds */
  uint64_t serial;   /* marks the storages of this plan (s->plan_serial) */
  tt_sbuf_t key;
  pst_t* st;
  int nst, capst;
  extra_t* extra;
  int nextra, capextra;
  /* decisions of pass 1, replayed by pass 2: per tensor occurrence */
  struct occ { int st, extra; /* offset param, or -1 */ } * occ;
  int nocc, capocc;
  int* call_extra0; /* per call: its first extra */
  /* Fused plans pass the runtime scalars of each dtype (Scalars, host 0-dim
   * values, view offsets) as one 1-D parameter, uploaded per run, instead of
   * one parameter each: Execute's cost grows with its argument count (a
   * chain of 100 ops with a Scalar each: 100 arguments). */
  int ngroups;
  tt_dtype_t group_dt[TT_DTYPE_COUNT];
  int group_n[TT_DTYPE_COUNT];
  int capcalls;
  pout_t* out;    /* all outputs of all calls, in order */
  int nout, capout;
  int* res_st;    /* storages with a result, in result order */
  int nres, capres;
  bool device_error; /* the failure is the device's (execution, failed input) */
  /* device-side checks of a program built by this plan (moved into its entry) */
  int nchecks;
  int* check_codes;
  char** check_msgs;
  const char** check_ops;
} plan_t;

#define GROW(p, cnt, cap, need)                                                  \
  grow_array((void**)&(p), &(cap), (need), sizeof(*(p)))
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

static void key_put(plan_t* p, const void* data, size_t n) { tt_sbuf_appendn(&p->key, data, n); }
#define KEY(p, v)                 \
  do {                            \
    __typeof__(v) k__ = (v);      \
    key_put((p), &k__, sizeof k__); \
  } while (0)

static tt_status_t oom(void) { return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory"); }

/* The plan's index of s (added on first sight); -1: out of host memory. */
static int storage_index(plan_t* p, tt_storage_t* s) {
  if (s->plan_serial == p->serial) return s->plan_idx;
  if (!GROW(p->st, p->nst, p->capst, p->nst + 1)) return -1;
  pst_t* e = &p->st[p->nst];
  memset(e, 0, sizeof(*e));
  e->s = s;
  s->plan_serial = p->serial;
  s->plan_idx = p->nst;
  return p->nst++;
}

/* Storage si as it is before the program, read by it: materialized, passed in;
 * an empty one (never written: its bytes read as zeros) is zeros made in the
 * program instead of a buffer of zeros uploaded and passed in (a fresh
 * tensor written through a strided view: the attention outputs of a step). */
static tt_status_t use_initial(plan_t* p, int si, tt_dtype_t hint, const char* op) {
  pst_t* e = &p->st[si];
  if (e->has_val || e->param || e->zero) return NULL;
  tt_storage_t* s = e->s;
  if (s->state == TT_STORAGE_FAILED) {
    p->device_error = true;
    return tt__storage_check(s, op);
  }
  if (s->state == TT_STORAGE_EMPTY) {
    e->zero = true;
    e->dtype = e->param_dtype = tt__storage_empty_type(s, hint, &e->param_numel);
    e->numel = e->param_numel;
    return NULL;
  }
  TT_RETURN_IF_ERROR(tt__storage_materialize(s, hint));
  e->param = true;
  e->dtype = e->param_dtype = s->buf_dtype;
  e->numel = e->param_numel = s->buf_numel;
  return NULL;
}

static tt_status_t add_extra(plan_t* p, int device, tt_dtype_t dt, const void* bytes, int* idx) {
  if (!GROW(p->extra, p->nextra, p->capextra, p->nextra + 1)) return oom();
  extra_t* e = &p->extra[p->nextra];
  e->host_id = 0;
  e->type = tt_type_scalar(dt);
  e->owned = false;
  e->packed = false;
  e->buf = NULL;
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
    size_t sz = tt_dtype_size(dt);
    memcpy(e->bytes, bytes, sz <= sizeof(e->bytes) ? sz : sizeof(e->bytes));
  } else {
    TT_RETURN_IF_ERROR(tt__scalar_buffer(p->rt, device, dt, bytes, &e->buf, &e->owned));
  }
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
static tt_status_t plan_tensor(plan_t* p, const tt_call_t* c, const tt_view_t* v) {
  tt_storage_t* s = v->storage;
  if (s->device != c->device)
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "expected all tensors to be on the same device, but found tpu:%d and tpu:%d",
                          c->device, s->device);
  int si = storage_index(p, s);
  if (si < 0 || !GROW(p->occ, p->nocc, p->capocc, p->nocc + 1)) return oom();
  TT_RETURN_IF_ERROR(use_initial(p, si, v->dtype, c->op->name));
  bool dyn = v->offset != 0 && tt__view_is_contiguous(v);
  int ei = -1;
  if (dyn) TT_RETURN_IF_ERROR(add_extra(p, c->device, TT_I64, &v->offset, &ei));
  p->occ[p->nocc].st = si;
  p->occ[p->nocc++].extra = ei;
  KEY(p, (int32_t)si);
  key_view(p, v, dyn);
  return NULL;
}

static tt_status_t plan_arg(plan_t* p, const tt_call_t* c, const tt_call_arg_t* a, bool as_out) {
  int32_t kind = as_out ? TT_ARG_OUT : (int32_t)a->kind;
  KEY(p, kind);
  int ei;
  switch (kind) {
    case TT_ARG_TENSOR:
      KEY(p, (int32_t)a->tier);
      KEY(p, (int32_t)a->on_host);
      if (a->on_host) {
        KEY(p, (int32_t)a->sdtype);
        TT_RETURN_IF_ERROR(add_extra(p, c->device, a->sdtype, a->scalar.bytes, &ei));
        p->extra[ei].host_id = a->host_id;
        return NULL;
      }
      return plan_tensor(p, c, &a->view);
    case TT_ARG_SCALAR:
      KEY(p, (int32_t)a->sdtype);
      return add_extra(p, c->device, a->sdtype, a->scalar.bytes, &ei);
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

static tt_status_t plan_one(plan_t* p, const tt_call_t* c) {
  KEY(p, (uintptr_t)c->op);
  KEY(p, c->nargs);
  KEY(p, c->nout);
  for (int i = 0; i < c->nargs; i++) {
    bool as_out = (i == 0 && (c->op->flags & TT_LF_WRITE_ONLY));
    TT_RETURN_IF_ERROR(plan_arg(p, c, &c->args[i], as_out));
  }
  /* extras: the arguments', the RNG state, then the partial writes' offsets */
  if (c->op->flags & TT_LF_RNG) {
    if (!GROW(p->extra, p->nextra, p->capextra, p->nextra + 1)) return oom();
    extra_t* e = &p->extra[p->nextra++];
    int64_t two = 2;
    e->type = tt_type_make(TT_U64, 1, &two);
    e->owned = true;
    e->packed = false;
    e->buf = NULL;
    TT_RETURN_IF_ERROR(tt_pjrt_buffer_from_host(p->rt->pjrt, c->device, c->rng, &e->type, &e->buf));
  }
  if (!GROW(p->out, p->nout, p->capout, p->nout + c->nout)) return oom();
  for (int i = 0; i < c->nout; i++) {
    const tt_view_t* v = &c->outs[i];
    tt_storage_t* s = v->storage;
    pout_t* o = &p->out[p->nout++];
    o->st = -1;
    o->extra = -1;
    if (!s) { /* an output the caller does not want (e.g. output_mask): computed, dropped */
      KEY(p, (int32_t)-1);
      key_view(p, v, false);
      continue;
    }
    if (s->device != c->device)
      return tt_status_make(TT_INVALID_ARGUMENT, "output on tpu:%d, op on tpu:%d", s->device, c->device);
    int si = storage_index(p, s);
    if (si < 0) return oom();
    bool full = tt__view_is_full(v);
    o->full = full;
    bool dyn = !full && v->offset != 0 && tt__view_is_contiguous(v);
    if (!full) {
      /* a partial write keeps the rest: of a failed storage, still failed */
      TT_RETURN_IF_ERROR(use_initial(p, si, v->dtype, c->op->name));
      if (dyn) TT_RETURN_IF_ERROR(add_extra(p, c->device, TT_I64, &v->offset, &o->extra));
    }
    o->st = si;
    KEY(p, (int32_t)si);
    KEY(p, (int32_t)full);
    key_view(p, v, dyn);
    /* the value's type after this write (what view_write builds) */
    pst_t* e = &p->st[si];
    if (full) {
      e->dtype = v->dtype;
      e->numel = tt_view_numel(v);
    } else if (tt_l_write_retypes(e->dtype, v->dtype)) {
      e->dtype = v->dtype; /* the buffer is rewritten in the view's dtype */
      e->numel = (int64_t)(s->nbytes / tt_dtype_size(v->dtype));
    }
    e->has_val = true;
    e->producer = c->op->name;
  }
  return NULL;
}

static tt_status_t plan_calls(plan_t* p) {
  if (!GROW(p->call_extra0, p->ncalls, p->capcalls, p->ncalls)) return oom();
  KEY(p, (int32_t)p->fused); /* fused programs take packed scalars */
  for (int k = 0; k < p->ncalls; k++) {
    p->call_extra0[k] = p->nextra;
    TT_RETURN_IF_ERROR(plan_one(p, p->calls[k]));
  }
  /* results: every written storage (fused: that PyTorch still holds) */
  for (int i = 0; i < p->nst; i++) {
    pst_t* e = &p->st[i];
    e->result = e->has_val && (!p->fused || e->s->user_alive || e->s->graph_refs > 0);
    KEY(p, (int32_t)(e->param | (e->result << 1) | (e->zero << 2)));
    if (e->param) {
      KEY(p, (int32_t)e->s->buf_dtype);
      KEY(p, e->s->buf_numel);
    } else if (e->zero) {
      KEY(p, (int32_t)e->param_dtype);
      KEY(p, e->param_numel);
    }
    if (e->result) {
      if (!GROW(p->res_st, p->nres, p->capres, p->nres + 1)) return oom();
      p->res_st[p->nres++] = i;
    }
  }
  if (p->key.oom) return oom();
  return NULL;
}

/* ---- pass 2: the program ------------------------------------------------------ */

typedef struct build {
  plan_t* p;
  tt_shlo_fn_t* f;
  tt_val_t* cur;       /* per storage: its current value */
  tt_val_t* extra_val;
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
  int si = b->p->occ[b->occ].st;
  int ei = b->p->occ[b->occ++].extra;
  if (ei >= 0) b->extra++;
  return tt__view_read(b->f, b->cur[si], v, ei >= 0 ? b->extra_val[ei] : TT_SHLO_INVALID);
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
    default:
      tt__larg_attr(a, l);
      return;
  }
}

void tt__larg_attr(const tt_call_arg_t* a, tt_larg_t* l) {
  switch (a->kind) {
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

/* One call's lowering and writes, onto b->cur. `out0`: its first output in p->out. */
static tt_status_t build_one(build_t* b, const tt_call_t* c, int out0) {
  plan_t* p = b->p;
  b->cappool = count_list_elems(c);
  b->npool = 0;
  b->pool = calloc((size_t)b->cappool + 1, sizeof(tt_val_t));
  int nl = c->nargs + ((c->op->flags & TT_LF_RNG) ? 1 : 0);
  tt_larg_t* largs = calloc((size_t)nl + 1, sizeof(tt_larg_t));
  tt_type_t* out_types = calloc((size_t)c->nout + 1, sizeof(tt_type_t));
  tt_val_t* outs = calloc((size_t)c->nout + 1, sizeof(tt_val_t));
  tt_status_t st = NULL;
  if (!b->pool || !largs || !out_types || !outs) {
    st = oom();
    goto done;
  }
  for (int i = 0; i < c->nargs; i++)
    build_arg(b, &c->args[i], i == 0 && (c->op->flags & TT_LF_WRITE_ONLY), &largs[i]);
  if (c->op->flags & TT_LF_RNG) {
    largs[c->nargs].kind = TT_ARG_RNG;
    largs[c->nargs].val = b->extra_val[b->extra++];
  }
  for (int i = 0; i < c->nout; i++) {
    out_types[i] = tt_type_make(c->out_dtypes[i], c->outs[i].rank, c->outs[i].sizes);
    outs[i] = TT_SHLO_INVALID;
  }
  tt_lctx_t lc = {b->f, c->op, largs, nl, out_types, c->nout, outs};
  if (!tt_shlo_failed(b->f)) {
    st = c->op->fn(&lc);
    if (st) goto done;
  }
  /* writes, in output order, onto the current value of each storage */
  for (int i = 0; i < c->nout && !tt_shlo_failed(b->f); i++) {
    if (outs[i] == TT_SHLO_INVALID) {
      st = tt_status_make(TT_INTERNAL, "%s: the lowering did not set output %d", c->op->name, i);
      goto done;
    }
    const pout_t* o = &p->out[out0 + i];
    if (o->st < 0) continue;
    if (o->full) {
      int64_t n = tt_view_numel(&c->outs[i]);
      b->cur[o->st] = tt_l_reshape(b->f, tt_l_convert(b->f, outs[i], c->outs[i].dtype), 1, &n);
    } else {
      b->cur[o->st] = tt__view_write(b->f, b->cur[o->st], &c->outs[i],
                                     o->extra >= 0 ? b->extra_val[o->extra] : TT_SHLO_INVALID, outs[i]);
    }
  }
done:
  free(b->pool);
  b->pool = NULL;
  free(largs);
  free(out_types);
  free(outs);
  return st ? tt_status_annotate(st, "lowering %s", c->op->name) : NULL;
}

/* Donation: a storage the program reads and writes (whole or in part) gives
 * its old buffer to its new value (same dtype and size), which may reuse it: no
 * allocation, and the old value's memory is not held until the program
 * ends. The buffer is the storage's own (no other storage or cache holds a
 * storage's buffer), and is passed to nothing after the program. The result
 * index the parameter of p->st[i] is donated to, or -1. A function of what
 * the plan key holds (param and result types), and the program text
 * (the disk key) carries the attribute. */
static int donated_result(const plan_t* p, int i) {
  const pst_t* e = &p->st[i];
  if (!p->rt->donate || !e->param || !e->result || e->s->buf_dtype != e->dtype || e->s->buf_numel != e->numel)
    return -1;
  for (int r = 0; r < p->nres; r++)
    if (p->res_st[r] == i) return r;
  return -1;
}

static tt_status_t build_program(plan_t* p, tt_sbuf_t* text) {
  build_t b;
  memset(&b, 0, sizeof(b));
  b.p = p;
  b.f = tt_shlo_fn_create();
  b.cur = calloc((size_t)p->nst + 1, sizeof(tt_val_t));
  b.extra_val = calloc((size_t)p->nextra + 1, sizeof(tt_val_t));
  int nchecks_cap = 0;
  tt_val_t* results = NULL;
  tt_status_t st = NULL;
  if (!b.f || !b.cur || !b.extra_val) {
    st = oom();
    goto done;
  }
  for (int i = 0; i < p->nst; i++) {
    b.cur[i] = TT_SHLO_INVALID;
    if (p->st[i].zero) {
      int64_t n = p->st[i].param_numel;
      b.cur[i] = tt_l_broadcast(b.f, tt_l_full(b.f, p->st[i].param_dtype, 0, NULL, 0.0), 1, &n);
      continue;
    }
    if (!p->st[i].param) continue;
    int64_t n = p->st[i].s->buf_numel;
    tt_type_t t = tt_type_make(p->st[i].s->buf_dtype, 1, &n);
    b.cur[i] = tt_shlo_param_donated(b.f, &t, donated_result(p, i));
  }
  /* parameters in run order: the packed groups, then the other extras */
  tt_val_t groups[TT_DTYPE_COUNT];
  for (int g = 0; g < p->ngroups; g++) {
    int64_t n = p->group_n[g];
    tt_type_t t = tt_type_make(p->group_dt[g], 1, &n);
    groups[g] = tt_shlo_param(b.f, &t);
  }
  for (int i = 0; i < p->nextra; i++)
    if (!p->extra[i].packed) b.extra_val[i] = tt_shlo_param(b.f, &p->extra[i].type);
  for (int i = 0; i < p->nextra; i++) {
    if (!p->extra[i].packed) continue;
    int g = p->extra[i].group;
    int64_t lo = p->extra[i].slot, hi = lo + 1;
    tt_val_t one = p->group_n[g] == 1 ? groups[g] : tt_shlo_slice(b.f, groups[g], &lo, &hi, NULL);
    b.extra_val[i] = tt_l_reshape(b.f, one, 0, NULL);
  }
  int out0 = 0;
  for (int k = 0; k < p->ncalls && !st; k++) {
    const tt_call_t* c = p->calls[k];
    b.extra = p->call_extra0[k];
    int before = tt_shlo_check_count(b.f);
    st = build_one(&b, c, out0);
    out0 += c->nout;
    if (st) break;
    int after = tt_shlo_check_count(b.f);
    if (after > before) {
      if (!grow_array((void**)&p->check_codes, &nchecks_cap, after, sizeof(int)) ||
          !(p->check_msgs = realloc(p->check_msgs, sizeof(char*) * (size_t)nchecks_cap)) ||
          !(p->check_ops = realloc(p->check_ops, sizeof(char*) * (size_t)nchecks_cap))) {
        st = oom();
        break;
      }
      for (int q = before; q < after; q++) {
        p->check_codes[q] = tt_shlo_check_code(b.f, q);
        p->check_ops[q] = c->op->name;
        p->check_msgs[q] = strdup(tt_shlo_check_message(b.f, q));
        p->nchecks = q + 1;
        if (!p->check_msgs[q]) {
          st = oom();
          break;
        }
      }
    }
  }
  if (st) goto done;
  results = calloc((size_t)(p->nres + p->nchecks) + 1, sizeof(tt_val_t));
  if (!results) {
    st = oom();
    goto done;
  }
  for (int r = 0; r < p->nres; r++) results[r] = b.cur[p->res_st[r]];
  for (int k = 0; k < p->nchecks; k++) results[p->nres + k] = tt_shlo_check_value(b.f, k);
  st = tt_shlo_fn_finish(b.f, results, p->nres + p->nchecks, text);
  if (st && p->ncalls == 1) st = tt_status_annotate(st, "lowering %s", p->calls[0]->op->name);
done:
  tt_shlo_fn_destroy(b.f);
  free(b.cur);
  free(b.extra_val);
  free(results);
  return st;
}

/* ---- the run ------------------------------------------------------------------ */

/* One plan per thread, reused (its arrays grow): calls on one thread never
 * nest. Freed when the thread exits. */
static pthread_key_t g_plan_key;
static pthread_once_t g_plan_once = PTHREAD_ONCE_INIT;

static void free_plan(void* v) {
  plan_t* p = v;
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
  free(p);
}
static void make_plan_key(void) { pthread_key_create(&g_plan_key, free_plan); }

static plan_t* acquire_plan(tt_runtime_t* rt, const tt_call_t* const* calls, int ncalls, bool fused) {
  pthread_once(&g_plan_once, make_plan_key);
  plan_t* p = pthread_getspecific(g_plan_key);
  if (!p) {
    p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    tt_sbuf_init(&p->key);
    pthread_setspecific(g_plan_key, p);
  }
  p->rt = rt;
  p->calls = calls;
  p->ncalls = ncalls;
  p->fused = fused;
  tt_sbuf_clear(&p->key);
  p->nst = p->nextra = p->nocc = p->nout = p->nres = p->nchecks = p->ngroups = 0;
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

static const char* plan_name(const plan_t* p) {
  if (p->fused && p->rt->capture_note) return "compiled graph"; /* a capture's program (capture.c) */
  return p->ncalls == 1 ? p->calls[0]->op->name : "fused program";
}

/* The packed scalar groups of a fused plan, as device buffers: borrowed from
 * the packed cache, or owned by the caller where gown[g]. */
static tt_status_t upload_groups(tt_runtime_t* rt, plan_t* p, int device, tt_pjrt_buffer_t** gbuf,
                                 bool* gown) {
  for (int g = 0; g < p->ngroups; g++) {
    size_t sz = tt_dtype_size(p->group_dt[g]);
    unsigned char* host = calloc((size_t)p->group_n[g] ? (size_t)p->group_n[g] : 1, sz);
    if (!host) return oom();
    for (int i = 0; i < p->nextra; i++)
      if (p->extra[i].packed && p->extra[i].group == g) memcpy(host + (size_t)p->extra[i].slot * sz, p->extra[i].bytes, sz);
    tt_status_t st = tt__packed_buffer(rt, device, p->group_dt[g], host, p->group_n[g], &gbuf[g], &gown[g]);
    free(host);
    TT_RETURN_IF_ERROR(st);
  }
  return NULL;
}

/* A capture (capture.c) keeps what it takes to run the plan's program again
 * on other storages: the key of its executable, its storages' roles and
 * types, its packed scalars and RNG states. On out of host memory c->oom. */
static void capture_note(plan_t* p, tt_cache_entry_t* e, uint64_t h) {
  tt_capture_t* c = p->rt->capture_note;
  c->has_program = true;
  c->device = p->calls[0]->device;
  c->serial = p->serial;
  c->name = plan_name(p);
  c->hash = h;
  c->nchecks = e->nchecks;
  c->key = malloc(p->key.len ? p->key.len : 1);
  c->st = calloc((size_t)p->nst + 1, sizeof(*c->st));
  c->res = malloc(sizeof(int) * ((size_t)p->nres + 1));
  if (!c->key || !c->st || !c->res) goto oom;
  memcpy(c->key, p->key.data, p->key.len);
  c->key_len = p->key.len;
  c->nst = p->nst;
  for (int i = 0; i < p->nst; i++) {
    const pst_t* ps = &p->st[i];
    tt_capture_st_t* cs = &c->st[i];
    cs->s = ps->s;
    cs->nbytes = ps->s->nbytes;
    cs->born = ps->s->born;
    cs->param = ps->param;
    cs->param_dtype = ps->param_dtype;
    cs->param_numel = ps->param_numel;
    cs->zero = ps->zero;
    cs->result = ps->result;
    cs->res_dtype = ps->dtype;
    cs->res_numel = ps->numel;
    cs->producer = ps->producer;
  }
  memcpy(c->res, p->res_st, sizeof(int) * (size_t)p->nres);
  c->nres = p->nres;
  c->ngroups = p->ngroups;
  for (int g = 0; g < p->ngroups; g++) {
    size_t sz = tt_dtype_size(p->group_dt[g]);
    c->group_dt[g] = p->group_dt[g];
    c->group_n[g] = p->group_n[g];
    c->group_bytes[g] = calloc((size_t)p->group_n[g] + 1, sz);
    c->group_host[g] = malloc(sizeof(int64_t) * ((size_t)p->group_n[g] + 1));
    if (!c->group_bytes[g] || !c->group_host[g]) goto oom;
    for (int i = 0; i < p->nextra; i++)
      if (p->extra[i].packed && p->extra[i].group == g) {
        memcpy(c->group_bytes[g] + (size_t)p->extra[i].slot * sz, p->extra[i].bytes, sz);
        c->group_host[g][p->extra[i].slot] = (int64_t)p->extra[i].host_id; /* an index, later */
      }
  }
  /* a fused plan packs every runtime scalar: its other parameters are the
   * RNG states, one per RNG call, in call order */
  for (int k = 0; k < p->ncalls; k++)
    if (p->calls[k]->op->flags & TT_LF_RNG) c->nrng++;
  c->rng = malloc(sizeof(uint64_t) * 2 * ((size_t)c->nrng + 1));
  if (!c->rng) goto oom;
  for (int k = 0, r = 0; k < p->ncalls; k++)
    if (p->calls[k]->op->flags & TT_LF_RNG) {
      c->rng[2 * r] = p->calls[k]->rng[0];
      c->rng[2 * r + 1] = p->calls[k]->rng[1];
      r++;
    }
  return;
oom:
  c->oom = true;
}

/* rt->mu held */
static tt_status_t run_locked(tt_runtime_t* rt, plan_t* p) {
  rt->call_serial++; /* pins the scalar-cache slots this run takes */
  p->serial = ++rt->plan_serial;
  TT_RETURN_IF_ERROR(plan_calls(p));
  int device = p->calls[0]->device;
  uint64_t h = tt_hash_bytes(p->key.data, p->key.len, 0);
  tt_cache_entry_t* e = tt__cache_find(&rt->cache, p->key.data, p->key.len, h);
  if (e) {
    rt->cache_hits++;
  } else {
    rt->cache_misses++;
    tt__cache_make_room(rt);
    tt_sbuf_t text;
    tt_sbuf_init(&text);
    tt_status_t st = build_program(p, &text);
    if (!st && rt->dump_hlo) fprintf(stderr, "[torch_tpu] %s:\n%s\n", plan_name(p), text.data);
    tt_pjrt_exec_t* ex = NULL;
    double secs = 0;
    bool built = !st;
    if (!st) st = tt__cache_compile(rt, plan_name(p), &text, &ex, &secs);
    if (st && built && !rt->dump_hlo)
      st = tt_status_annotate(st, "compiling %s (set TORCH_TPU_DUMP_HLO=1 to see the program)",
                              plan_name(p));
    tt_sbuf_free(&text);
    if (st) return st;
    st = tt__cache_insert(&rt->cache, p->key.data, p->key.len, h, ex, p->nres, secs, &e);
    if (st) {
      tt_pjrt_exec_destroy(rt->pjrt, ex);
      return st;
    }
    /* the entry owns the check messages from here on */
    st = tt__cache_set_checks(e, p->nchecks, p->check_codes, p->check_msgs, p->check_ops);
    if (st) return st;
    p->nchecks = 0;
  }
  e->last_use = rt->call_serial;
  size_t nargs = 0;
  tt_pjrt_buffer_t** args = malloc(sizeof(*args) * (size_t)(p->nst + p->nextra + 1));
  tt_pjrt_buffer_t** outs = malloc(sizeof(*outs) * (size_t)(p->nres + e->nchecks + 1));
  if (!args || !outs) {
    free(args);
    free(outs);
    return oom();
  }
  for (int i = 0; i < p->nst; i++)
    if (p->st[i].param) args[nargs++] = p->st[i].s->buf;
  tt_pjrt_buffer_t* gbuf[TT_DTYPE_COUNT] = {0};
  bool gown[TT_DTYPE_COUNT] = {0};
  tt_status_t xst = upload_groups(rt, p, device, gbuf, gown);
  for (int g = 0; g < p->ngroups; g++) args[nargs++] = gbuf[g];
  for (int i = 0; i < p->nextra; i++)
    if (!p->extra[i].packed) args[nargs++] = p->extra[i].buf;
  if (!xst) {
    double t0 = tt__now();
    xst = tt_pjrt_execute(rt->pjrt, e->exec, device, args, nargs, outs, (size_t)(p->nres + e->nchecks));
    rt->execute_seconds += tt__now() - t0;
  }
  for (int g = 0; g < p->ngroups; g++)
    if (gown[g]) tt_pjrt_buffer_destroy(rt->pjrt, gbuf[g]); /* PJRT keeps in-flight uses */
  free(args);
  if (xst) {
    /* a donated buffer may be gone with the failed run: its storage fails
     * too, rather than be read (a fused replay raises its error) */
    for (int i = 0; i < p->nst; i++)
      if (donated_result(p, i) >= 0) tt__storage_fail(p->st[i].s, tt_status_clone(xst));
    free(outs);
    p->device_error = true;
    return tt_status_annotate(xst, "error in op %s", plan_name(p));
  }
  rt->executions++;
  bool debug = tt_runtime_mode() == TT_MODE_DEBUG;
  tt_status_t first = NULL;
  for (int r = 0; r < p->nres; r++) {
    pst_t* ps = &p->st[p->res_st[r]];
    tt__storage_set_buffer(ps->s, outs[r], ps->dtype, ps->numel, ps->producer, true);
    if (debug) {
      tt_status_t st = tt__storage_await(ps->s);
      if (st && !first) first = st;
      else tt_status_free(st);
    }
  }
  if (p->fused && rt->capture_note && !rt->capture_note->has_program) capture_note(p, e, h);
  if (e->nchecks) {
    tt_status_t st = tt__checks_push(rt, e, outs + p->nres, plan_name(p));
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
  plan_t* p = acquire_plan(rt, &call, 1, false);
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
  release_plan(p);
  return st;
}

/* rt->mu held. Runs calls[0..n) as one program (a Fused Eager flush). On any
 * failure nothing was installed and the caller replays the calls one by one. */
tt_status_t tt__run_fused(tt_runtime_t* rt, const tt_call_t* const* calls, int n) {
  plan_t* p = acquire_plan(rt, calls, n, true);
  if (!p) return oom();
  tt_status_t st = run_locked(rt, p);
  release_plan(p);
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
