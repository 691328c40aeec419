/* Collectives across devices as StableHLO programs (DESIGN §9): one program
 * replicated over the group's devices (all_reduce, all_gather, reduce_scatter,
 * all_to_all; broadcast and reduce through all_reduce), compiled for the
 * group's device assignment and run by PJRT on this process's members. On a
 * plugin whose client spans processes (the GPU plugin with num_nodes > 1),
 * the data never leaves the devices; on one client with several devices (the
 * CPU plugin's cpu_device_count) the same programs run in process.
 *
 * Every member runs the same program text: it depends only on the kind, the
 * reduction, the root, the dtype, the element count and the group size, and
 * takes and gives dense 1-D buffers. Views that are not their whole storage
 * (or storages holding another dtype) go through a copy program before and
 * after, so that ranks with different layouts still agree. */
#include <stdlib.h>
#include <string.h>

#include "../shlo/tt_shlo.h"
#include "internal.h"

struct tt_coll_entry {
  unsigned char* key; /* owned: program text, then the device ids */
  size_t key_len;
  uint64_t hash;
  tt_pjrt_exec_t* exec; /* owned */
  tt_coll_entry_t* next;
};

static const char* kind_name(tt_coll_kind_t k) {
  switch (k) {
    case TT_COLL_ALL_REDUCE: return "all_reduce";
    case TT_COLL_BROADCAST: return "broadcast";
    case TT_COLL_REDUCE: return "reduce";
    case TT_COLL_ALL_GATHER: return "all_gather";
    case TT_COLL_REDUCE_SCATTER: return "reduce_scatter";
    case TT_COLL_ALL_TO_ALL: return "all_to_all";
  }
  return "?";
}

const char* tt_coll_kind_name(tt_coll_kind_t k) { return kind_name(k); }

/* Elements of a member's input and output. */
static int64_t in_numel(const tt_collective_t* c) {
  bool whole = c->kind == TT_COLL_REDUCE_SCATTER || c->kind == TT_COLL_ALL_TO_ALL;
  return whole ? c->count * c->group_size : c->count;
}
static int64_t out_numel(const tt_collective_t* c) {
  bool whole = c->kind == TT_COLL_ALL_GATHER || c->kind == TT_COLL_ALL_TO_ALL;
  return whole ? c->count * c->group_size : c->count;
}

static bool has_reduction(tt_coll_kind_t k) {
  return k == TT_COLL_ALL_REDUCE || k == TT_COLL_REDUCE || k == TT_COLL_REDUCE_SCATTER;
}

/* The reduction region of an element type: (a, b) -> a op b. */
static char* reduce_region(tt_shlo_fn_t* f, tt_dtype_t dt, tt_coll_op_t op) {
  tt_type_t s = tt_type_scalar(dt);
  tt_type_t at[2] = {s, s};
  tt_val_t a[2];
  tt_shlo_region_begin(f, at, 2, a);
  const char* name = "stablehlo.add";
  if (dt == TT_BOOL) name = (op == TT_COLL_PROD || op == TT_COLL_MIN) ? "stablehlo.and" : "stablehlo.or";
  else if (op == TT_COLL_PROD) name = "stablehlo.multiply";
  else if (op == TT_COLL_MIN) name = "stablehlo.minimum";
  else if (op == TT_COLL_MAX) name = "stablehlo.maximum";
  tt_val_t r = tt_shlo_op(f, name, a, 2, &s, NULL);
  return tt_shlo_region_end(f, &r, 1);
}

static void groups_attr(tt_sbuf_t* b, int n) {
  tt_sbuf_printf(b, "replica_groups = dense<[[");
  for (int i = 0; i < n; i++) tt_sbuf_printf(b, i ? ", %d" : "%d", i);
  tt_sbuf_printf(b, "]]> : tensor<1x%dxi64>", n);
}

static tt_val_t all_reduce(tt_shlo_fn_t* f, tt_val_t x, tt_dtype_t dt, tt_coll_op_t op, int n) {
  tt_type_t t = *tt_shlo_type(f, x);
  t.dtype = dt;
  char* region = reduce_region(f, dt, op);
  tt_sbuf_t attr;
  tt_sbuf_init(&attr);
  groups_attr(&attr, n);
  tt_val_t r = TT_SHLO_INVALID;
  if (!attr.oom) tt_shlo_op_multi(f, "stablehlo.all_reduce", &x, 1, &t, 1, attr.data, region, &r);
  else free(region);
  tt_sbuf_free(&attr);
  return r;
}

/* The unsigned integer type of a dtype's width, for exact bit moves. */
static tt_dtype_t bits_dtype(tt_dtype_t dt) {
  switch (tt_dtype_size(dt)) {
    case 1: return TT_U8;
    case 2: return TT_U16;
    case 4: return TT_U32;
    default: return TT_U64;
  }
}

/* Is this member the group's `root`? A 0-d i1. */
static tt_val_t is_root(tt_shlo_fn_t* f, int root) {
  tt_type_t u32 = tt_type_scalar(TT_U32), pred = tt_type_scalar(TT_BOOL);
  tt_val_t id = tt_shlo_op(f, "stablehlo.replica_id", NULL, 0, &u32, NULL);
  tt_val_t r = tt_shlo_const_i64(f, &u32, root);
  tt_val_t ops[2] = {id, r};
  return tt_shlo_op(f, "stablehlo.compare", ops, 2, &pred,
                    "comparison_direction = #stablehlo<comparison_direction EQ>");
}

static tt_val_t pick(tt_shlo_fn_t* f, tt_val_t pred, tt_val_t a, tt_val_t b) {
  tt_val_t ops[3] = {pred, a, b};
  return tt_shlo_op(f, "stablehlo.select", ops, 3, tt_shlo_type(f, a), NULL);
}

/* Broadcast: the root's bits, every other member contributing zeros to an
 * integer sum (exact for every dtype: NaN payloads and -0.0 included). */
static tt_val_t broadcast(tt_shlo_fn_t* f, tt_val_t x, const tt_collective_t* c) {
  tt_type_t t = *tt_shlo_type(f, x);
  tt_type_t bt = t;
  bt.dtype = bits_dtype(c->dtype);
  const char* move = c->dtype == TT_BOOL ? "stablehlo.convert" : "stablehlo.bitcast_convert";
  tt_val_t bits = tt_shlo_op(f, move, &x, 1, &bt, NULL);
  tt_val_t zero = tt_shlo_const(f, &bt, 0);
  tt_val_t mine = pick(f, is_root(f, c->root), bits, zero);
  tt_val_t sum = all_reduce(f, mine, bt.dtype, TT_COLL_SUM, c->group_size);
  return tt_shlo_op(f, move, &sum, 1, &t, NULL);
}

/* AVG: the sum divided by the group size (integers truncate, as c10d's host
 * backends do). */
static tt_val_t average(tt_shlo_fn_t* f, tt_val_t sum, int n) {
  const tt_type_t* t = tt_shlo_type(f, sum);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t tt = *t;
  tt_val_t d = tt_shlo_const(f, &tt, n);
  tt_val_t ops[2] = {sum, d};
  return tt_shlo_op(f, "stablehlo.divide", ops, 2, &tt, NULL);
}

/* The program of one member: a dense 1-D input in, a dense 1-D output out. */
tt_status_t tt__coll_program(const tt_collective_t* c, tt_sbuf_t* out) {
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  if (!f) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  int64_t ni = in_numel(c), no = out_numel(c);
  tt_type_t ti = tt_type_make(c->dtype, 1, &ni), to = tt_type_make(c->dtype, 1, &no);
  tt_val_t x = tt_shlo_param(f, &ti);
  tt_coll_op_t op = c->op == TT_COLL_AVG ? TT_COLL_SUM : c->op;
  int n = c->group_size;
  tt_val_t r = TT_SHLO_INVALID;
  tt_sbuf_t attr;
  tt_sbuf_init(&attr);
  switch (c->kind) {
    case TT_COLL_ALL_REDUCE:
    case TT_COLL_REDUCE:
      r = all_reduce(f, x, c->dtype, op, n);
      if (c->op == TT_COLL_AVG) r = average(f, r, n);
      if (c->kind == TT_COLL_REDUCE) r = pick(f, is_root(f, c->root), r, x);
      break;
    case TT_COLL_BROADCAST:
      r = broadcast(f, x, c);
      break;
    case TT_COLL_ALL_GATHER:
      tt_sbuf_printf(&attr, "all_gather_dim = 0 : i64, ");
      groups_attr(&attr, n);
      if (!attr.oom) r = tt_shlo_op(f, "stablehlo.all_gather", &x, 1, &to, attr.data);
      break;
    case TT_COLL_REDUCE_SCATTER: {
      char* region = reduce_region(f, c->dtype, op);
      tt_sbuf_printf(&attr, "scatter_dimension = 0 : i64, ");
      groups_attr(&attr, n);
      if (!attr.oom) tt_shlo_op_multi(f, "stablehlo.reduce_scatter", &x, 1, &to, 1, attr.data, region, &r);
      else free(region);
      if (c->op == TT_COLL_AVG) r = average(f, r, n);
      break;
    }
    case TT_COLL_ALL_TO_ALL:
      tt_sbuf_printf(&attr, "split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = %d : i64, ",
                     n);
      groups_attr(&attr, n);
      if (!attr.oom) r = tt_shlo_op(f, "stablehlo.all_to_all", &x, 1, &to, attr.data);
      break;
  }
  tt_sbuf_free(&attr);
  tt_status_t st = tt_shlo_fn_finish(f, &r, 1, out);
  tt_shlo_fn_destroy(f);
  return st;
}

static tt_status_t check(const tt_collective_t* c) {
  if (c->group_size < 1 || !c->group_ids)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: a group of %d devices", kind_name(c->kind), c->group_size);
  if (c->count < 0) return tt_status_make(TT_INVALID_ARGUMENT, "%s: negative count", kind_name(c->kind));
  if ((unsigned)c->dtype >= TT_DTYPE_COUNT || tt_dtype_is_complex(c->dtype))
    return tt_status_make(TT_UNIMPLEMENTED, "%s of %s on the device", kind_name(c->kind),
                          (unsigned)c->dtype < TT_DTYPE_COUNT ? tt_dtype_name(c->dtype) : "?");
  if ((c->kind == TT_COLL_BROADCAST || c->kind == TT_COLL_REDUCE) &&
      (c->root < 0 || c->root >= c->group_size))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: root %d outside a group of %d", kind_name(c->kind), c->root,
                          c->group_size);
  if (has_reduction(c->kind) && ((unsigned)c->op > TT_COLL_AVG))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: unknown reduction %d", kind_name(c->kind), (int)c->op);
  if (c->dtype == TT_BOOL && c->op == TT_COLL_AVG && has_reduction(c->kind))
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: AVG of bool", kind_name(c->kind));
  return NULL;
}

/* rt->mu held. The executable of `text` for the group (cached). */
static tt_status_t get_exec(tt_runtime_t* rt, const tt_collective_t* c, const tt_sbuf_t* text,
                            tt_pjrt_exec_t** out) {
  size_t idsz = (size_t)c->group_size * sizeof(int64_t);
  size_t len = text->len + idsz;
  unsigned char* key = malloc(len);
  if (!key) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  memcpy(key, text->data, text->len);
  memcpy(key + text->len, c->group_ids, idsz);
  uint64_t h = tt_hash_bytes(key, len, 0x636f6c6cULL);
  for (tt_coll_entry_t* e = rt->colls; e; e = e->next) {
    if (e->hash == h && e->key_len == len && !memcmp(e->key, key, len)) {
      free(key);
      rt->stats.cache_hits++;
      *out = e->exec;
      return NULL;
    }
  }
  rt->stats.cache_misses++;
  double t0 = tt__now();
  tt_pjrt_exec_t* ex = NULL;
  tt_status_t st = tt_pjrt_compile_replicated(rt->pjrt, text->data, text->len, c->group_size, c->group_ids, &ex);
  double secs = tt__now() - t0;
  tt_coll_entry_t* e = st ? NULL : calloc(1, sizeof(*e));
  if (st || !e) {
    free(key);
    tt_pjrt_exec_destroy(rt->pjrt, ex);
    return st ? st : tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  }
  rt->stats.compiles++;
  rt->stats.compile_seconds += secs;
  *e = (tt_coll_entry_t){key, len, h, ex, rt->colls};
  rt->colls = e;
  *out = ex;
  return NULL;
}

void tt__coll_cache_clear(tt_runtime_t* rt) {
  while (rt->colls) {
    tt_coll_entry_t* e = rt->colls;
    rt->colls = e->next;
    tt_pjrt_exec_destroy(rt->pjrt, e->exec);
    free(e->key);
    free(e);
  }
}

static tt_view_t dense(tt_storage_t* s, tt_dtype_t dt, int64_t numel) {
  tt_view_t v;
  memset(&v, 0, sizeof(v));
  v.storage = s;
  v.dtype = dt;
  v.rank = 1;
  v.sizes[0] = numel;
  v.strides[0] = 1;
  return v;
}

/* A dense row-major view of v's shape over all of s, holding v's values
 * (its math bits applied: none of its own). */
static tt_view_t dense_like(tt_storage_t* s, const tt_view_t* v) {
  tt_view_t d = tt__dense_view(s, v);
  d.conj = d.neg = false;
  return d;
}

/* rt->mu held. Does the view's storage hold exactly its dense buffer? */
static bool direct(const tt_view_t* v, tt_dtype_t dt, int64_t numel) {
  tt_storage_t* s = v->storage;
  return !v->conj && !v->neg && v->dtype == dt && tt__view_is_full(v) && s->state == TT_STORAGE_MATERIALIZED &&
         s->buf_dtype == dt && s->buf_numel == numel;
}

tt_status_t tt_runtime_collective(tt_runtime_t* rt, const tt_collective_t* c, const tt_view_t* in,
                                  const tt_view_t* out, int nlocal) {
  TT_RETURN_IF_ERROR(check(c));
  const char* name = kind_name(c->kind);
  if (nlocal < 1 || nlocal > c->group_size || nlocal > TT_MAX_DEVICES)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: %d local members of a group of %d", name, nlocal,
                          c->group_size);
  int64_t ni = in_numel(c), no = out_numel(c);
  int devices[TT_MAX_DEVICES];
  for (int i = 0; i < nlocal; i++) {
    if (tt_view_numel(&in[i]) != ni || tt_view_numel(&out[i]) != no || in[i].dtype != c->dtype ||
        out[i].dtype != c->dtype)
      return tt_status_make(TT_INVALID_ARGUMENT,
                            "%s of %lld %s elements: member %d passes %lld %s elements in, %lld %s out", name,
                            (long long)c->count, tt_dtype_name(c->dtype), i, (long long)tt_view_numel(&in[i]),
                            tt_dtype_name(in[i].dtype), (long long)tt_view_numel(&out[i]),
                            tt_dtype_name(out[i].dtype));
    devices[i] = tt_storage_device(in[i].storage);
    if (tt_storage_device(out[i].storage) != devices[i])
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: member %d's input and output are on different devices",
                            name, i);
    for (int j = 0; j < i; j++)
      if (devices[j] == devices[i])
        return tt_status_make(TT_INVALID_ARGUMENT, "%s: two members on tpu:%d", name, devices[i]);
    int64_t id = -1;
    TT_RETURN_IF_ERROR(tt_pjrt_device_id(rt->pjrt, devices[i], &id));
    bool member = false;
    for (int g = 0; g < c->group_size; g++) member |= c->group_ids[g] == id;
    if (!member)
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: tpu:%d (device id %lld) is not in the group", name,
                            devices[i], (long long)id);
  }
  tt_sbuf_t text;
  tt_sbuf_init(&text);
  tt_status_t st = tt__coll_program(c, &text);
  if (st) {
    tt_sbuf_free(&text);
    return tt_status_annotate(st, "building the %s program", name);
  }

  /* Inputs as dense buffers: what recorded ops write is their value. */
  tt_storage_t* tin[TT_MAX_DEVICES] = {0};
  tt_storage_t* tout[TT_MAX_DEVICES] = {0};
  tt_pjrt_buffer_t* args[TT_MAX_DEVICES];
  tt_pjrt_buffer_t* outs[TT_MAX_DEVICES] = {0};
  size_t esz = tt_dtype_size(c->dtype);
  st = tt__fuse_sync(rt);
  for (int i = 0; i < nlocal && !st; i++) {
    pthread_mutex_lock(&rt->mu);
    bool ok = direct(&in[i], c->dtype, ni);
    tt_status_t fst = tt__storage_check(in[i].storage, name);
    pthread_mutex_unlock(&rt->mu);
    if (fst) st = fst;
    else if (!ok) {
      st = tt_storage_create(rt, devices[i], (size_t)ni * esz, &tin[i]);
      tt_view_t d = dense_like(tin[i], &in[i]);
      if (!st) st = tt_runtime_copy(rt, &d, &in[i]);
    }
  }
  if (!st) st = tt__fuse_sync(rt); /* the copies, in Fused Eager */
  for (int i = 0; i < nlocal && !st; i++)
    if (out[i].conj || out[i].neg || !tt__view_is_full(&out[i]))
      st = tt_storage_create(rt, devices[i], (size_t)no * esz, &tout[i]);
  pthread_mutex_lock(&rt->mu);
  for (int i = 0; i < nlocal && !st; i++) {
    tt_view_t d = tin[i] ? dense(tin[i], c->dtype, ni) : in[i];
    if (!direct(&d, c->dtype, ni)) {
      st = tt__storage_check(d.storage, name);
      if (!st && d.storage->state == TT_STORAGE_EMPTY) st = tt__storage_materialize(d.storage, c->dtype);
      if (!st && !direct(&d, c->dtype, ni))
        st = tt_status_make(TT_INTERNAL, "%s: an input is not a dense %s buffer", name, tt_dtype_name(c->dtype));
    }
    if (!st) args[i] = d.storage->buf;
  }
  tt_pjrt_exec_t* ex = NULL;
  if (!st) st = get_exec(rt, c, &text, &ex);
  if (!st) {
    tt_pjrt_buffer_t* const* argl[TT_MAX_DEVICES];
    tt_pjrt_buffer_t** outl[TT_MAX_DEVICES];
    for (int i = 0; i < nlocal; i++) argl[i] = &args[i], outl[i] = &outs[i];
    double t0 = tt__now();
    st = tt_pjrt_execute_replicated(rt->pjrt, ex, devices, nlocal, argl, 1, outl, 1);
    rt->stats.execute_seconds += tt__now() - t0;
    if (st) st = tt_status_annotate(st, "error in %s", name);
    else rt->stats.executions++;
  }
  /* Results: straight into a storage that is the whole output, else into a
   * temporary copied into the view below. */
  bool debug = tt_runtime_mode() == TT_MODE_DEBUG;
  for (int i = 0; i < nlocal && !st; i++) {
    tt_storage_t* s = tout[i] ? tout[i] : out[i].storage;
    tt__storage_set_buffer(s, outs[i], c->dtype, no, c->producer ? c->producer : name, true);
    outs[i] = NULL;
    if (debug) st = tt__storage_await(s);
  }
  pthread_mutex_unlock(&rt->mu);
  for (int i = 0; i < nlocal; i++) tt_pjrt_buffer_destroy(rt->pjrt, outs[i]);
  for (int i = 0; i < nlocal && !st; i++) {
    if (!tout[i]) continue;
    tt_view_t d = dense_like(tout[i], &out[i]);
    st = tt_runtime_copy(rt, &out[i], &d);
  }
  for (int i = 0; i < nlocal; i++) {
    tt_storage_release(tin[i]);
    tt_storage_release(tout[i]);
  }
  tt_sbuf_free(&text);
  return st;
}

tt_status_t tt_runtime_device_global_id(tt_runtime_t* rt, int device, int64_t* id) {
  return tt_pjrt_device_id(rt->pjrt, device, id);
}
