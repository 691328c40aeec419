/* Runtime lifetime, modes, synchronization, statistics, host transfers. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static _Thread_local int t_mode = -1;

void tt_runtime_set_mode(tt_mode_t mode) { t_mode = (int)mode; }

tt_mode_t tt_runtime_mode(void) {
  if (t_mode < 0) {
    if (tt_env_flag(TT_ENV_LAUNCH_BLOCKING)) t_mode = TT_MODE_DEBUG;
    else if (tt_env_flag(TT_ENV_DEFER_AND_FUSE)) t_mode = TT_MODE_FUSED;
    else t_mode = TT_MODE_STRICT;
  }
  return (tt_mode_t)t_mode;
}

tt_status_t tt_runtime_open(const char* plugin_path, int cpu_device_count, tt_runtime_t** out) {
  *out = NULL;
  tt_runtime_t* rt = calloc(1, sizeof(*rt));
  if (!rt) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  tt_status_t st = tt_pjrt_open(plugin_path, cpu_device_count, &rt->pjrt);
  if (st) {
    free(rt);
    return st;
  }
  pthread_mutex_init(&rt->mu, NULL);
  rt->live.next = rt->live.prev = &rt->live;
  rt->dump_hlo = tt_env_flag(TT_ENV_DUMP_HLO);
  st = tt__mem_init(rt);
  if (st) {
    tt_runtime_close(rt);
    return st;
  }
  *out = rt;
  return NULL;
}

void tt_runtime_close(tt_runtime_t* rt) {
  if (!rt) return;
  tt_status_free(tt__checks_drain(rt));
  free(rt->checks);
  tt__cache_clear(&rt->cache, rt->pjrt);
  for (int i = 0; i < TT_SCALAR_CACHE; i++) tt_pjrt_buffer_destroy(rt->pjrt, rt->scalars[i].buf);
  tt_pjrt_close(rt->pjrt);
  pthread_mutex_destroy(&rt->mu);
  free(rt);
}

const tt_pjrt_info_t* tt_runtime_info(tt_runtime_t* rt) { return tt_pjrt_get_info(rt->pjrt); }

int tt_runtime_device_count(tt_runtime_t* rt) {
  int n = tt_pjrt_get_info(rt->pjrt)->num_devices;
  return n > TT_MAX_DEVICES ? TT_MAX_DEVICES : n;
}

tt_status_t tt_runtime_synchronize(tt_runtime_t* rt, int device) {
  pthread_mutex_lock(&rt->mu);
  tt_status_t first = tt__checks_drain(rt);
  for (tt_storage_t* s = rt->live.next; s != &rt->live; s = s->next) {
    if (device >= 0 && s->device != device) continue;
    if (!s->pending) continue;
    tt_status_t st = tt__storage_await(s);
    if (st && !first) first = st;
    else tt_status_free(st);
  }
  pthread_mutex_unlock(&rt->mu);
  return first;
}

void tt_runtime_get_stats(tt_runtime_t* rt, int device, tt_runtime_stats_t* out) {
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&rt->mu);
  for (int d = 0; d < TT_MAX_DEVICES; d++) {
    if (device >= 0 && d != device) continue;
    out->bytes_in_use += rt->dev[d].bytes_in_use;
    out->peak_bytes += rt->dev[d].peak_bytes;
    out->num_storages += rt->dev[d].num_storages;
    out->num_buffers += rt->dev[d].num_buffers;
    out->bytes_reserved += rt->dev[d].bytes_reserved;
  }
  out->cache_hits = rt->cache_hits;
  out->cache_misses = rt->cache_misses;
  out->cache_entries = (int64_t)rt->cache.count;
  out->compile_seconds = rt->compile_seconds;
  out->executions = rt->executions;
  pthread_mutex_unlock(&rt->mu);
}

void tt_runtime_reset_peak(tt_runtime_t* rt, int device) {
  pthread_mutex_lock(&rt->mu);
  for (int d = 0; d < TT_MAX_DEVICES; d++)
    if (device < 0 || d == device) rt->dev[d].peak_bytes = rt->dev[d].bytes_in_use;
  pthread_mutex_unlock(&rt->mu);
}

/* ---- host transfers ----------------------------------------------------------- */

/* A complex value as PyTorch casts it to a real dtype: bool is re != 0 or
 * im != 0 (compared as floats: -0 and NaN as the CPU sees them), any other
 * dtype takes the real part. */
static tt_val_t complex_to_real(tt_shlo_fn_t* f, tt_val_t v, tt_dtype_t dt) {
  tt_type_t pt = *tt_shlo_type(f, v);
  pt.dtype = tt_dtype_real_part(pt.dtype);
  tt_val_t re = tt_shlo_op(f, "stablehlo.real", &v, 1, &pt, NULL);
  if (dt != TT_BOOL) return tt_l_convert(f, re, dt);
  tt_val_t im = tt_shlo_op(f, "stablehlo.imag", &v, 1, &pt, NULL);
  return tt_l_binary(f, "stablehlo.or", tt_l_convert(f, re, TT_BOOL), tt_l_convert(f, im, TT_BOOL));
}

/* The internal copy: out (written) = src converted and broadcast. */
static tt_status_t lower_copy(tt_lctx_t* c) {
  const tt_type_t* ot = &c->out_types[0];
  const tt_type_t* st = tt_shlo_type(c->f, c->args[1].val);
  if (st && tt_dtype_is_complex(st->dtype) && !tt_dtype_is_complex(ot->dtype)) {
    tt_val_t v = complex_to_real(c->f, c->args[1].val, ot->dtype);
    return tt_l_set_out(c, 0, tt_l_broadcast(c->f, v, ot->rank, ot->dims));
  }
  return tt_l_set_out(c, 0, tt_l_arg_as(c, 1, ot->dtype, ot));
}
static const tt_lower_entry_t k_copy = {"tt::copy", lower_copy, 0, TT_LF_WRITE_ONLY};

static tt_status_t run_copy(tt_runtime_t* rt, const tt_view_t* dst, const tt_view_t* src) {
  tt_call_arg_t args[2];
  memset(args, 0, sizeof(args));
  args[0].kind = TT_ARG_TENSOR; /* self: passed as OUT because of TT_LF_WRITE_ONLY */
  args[0].view = *dst;
  args[1].kind = TT_ARG_TENSOR;
  args[1].tier = TT_TIER_DIM;
  args[1].view = *src;
  tt_call_t call = {&k_copy, args, 2, dst, &dst->dtype, 1, tt_storage_device(dst->storage), {0, 0}};
  return tt_runtime_call(rt, &call);
}

tt_status_t tt_runtime_copy(tt_runtime_t* rt, const tt_view_t* dst, const tt_view_t* src) {
  return run_copy(rt, dst, src);
}

/* A dense row-major view of `like`'s shape and dtype at the start of s. */
static tt_view_t dense_view(tt_storage_t* s, const tt_view_t* like) {
  tt_view_t v = *like;
  v.storage = s;
  v.offset = 0;
  int64_t st = 1;
  for (int i = v.rank - 1; i >= 0; i--) {
    v.strides[i] = st;
    st *= v.sizes[i];
  }
  return v;
}

/* A fresh storage holding `host` as a dense 1-D buffer of the view's dtype. */
static tt_status_t upload(tt_runtime_t* rt, int device, tt_dtype_t dt, int64_t numel,
                          const void* host, tt_storage_t** out) {
  TT_RETURN_IF_ERROR(tt_storage_create(rt, device, (size_t)numel * tt_dtype_size(dt), out));
  tt_type_t t = tt_type_make(dt, 1, &numel);
  tt_pjrt_buffer_t* b = NULL;
  static const char dummy[8];
  tt_status_t st = tt_pjrt_buffer_from_host(rt->pjrt, device, numel ? host : dummy, &t, &b);
  if (st) {
    tt_storage_release(*out);
    *out = NULL;
    return tt_status_annotate(st, "copying %lld elements to tpu:%d", (long long)numel, device);
  }
  pthread_mutex_lock(&rt->mu);
  tt__storage_set_buffer(*out, b, dt, numel, "host-to-device copy", false);
  pthread_mutex_unlock(&rt->mu);
  return NULL;
}

tt_status_t tt_view_write_host(tt_runtime_t* rt, const tt_view_t* dst, const void* host) {
  int device = tt_storage_device(dst->storage);
  int64_t numel = tt_view_numel(dst);
  tt_storage_t* tmp = NULL;
  TT_RETURN_IF_ERROR(upload(rt, device, dst->dtype, numel, host, &tmp));
  if (tt__view_is_full(dst)) {
    /* move the fresh buffer into dst */
    pthread_mutex_lock(&rt->mu);
    tt_pjrt_buffer_t* b = tmp->buf;
    rt->dev[device].bytes_in_use -= numel * (int64_t)tt_dtype_size(dst->dtype);
    rt->dev[device].num_buffers--;
    tmp->buf = NULL;
    tmp->state = TT_STORAGE_EMPTY;
    tt__storage_set_buffer(dst->storage, b, dst->dtype, numel, "host-to-device copy", false);
    pthread_mutex_unlock(&rt->mu);
    tt_storage_release(tmp);
    return NULL;
  }
  tt_view_t src = dense_view(tmp, dst);
  tt_status_t s = run_copy(rt, dst, &src);
  tt_storage_release(tmp);
  return s;
}

tt_status_t tt_view_read_host(tt_runtime_t* rt, const tt_view_t* src, void* host) {
  int64_t numel = tt_view_numel(src);
  size_t nbytes = (size_t)numel * tt_dtype_size(src->dtype);
  if (numel == 0) return NULL;
  tt_storage_t* s = src->storage;
  tt_storage_t* tmp = NULL;
  pthread_mutex_lock(&rt->mu);
  /* a host read waits anyway: wait on the source first so that an error of
   * asynchronous work names the op that failed, not the copy */
  tt_status_t pre = tt__checks_drain(rt);
  if (!pre) pre = tt__storage_await(s);
  if (pre) {
    pthread_mutex_unlock(&rt->mu);
    return pre;
  }
  bool direct = tt__view_is_full(src) && s->state == TT_STORAGE_MATERIALIZED &&
                s->buf_dtype == src->dtype;
  bool empty = s->state == TT_STORAGE_EMPTY;
  pthread_mutex_unlock(&rt->mu);
  if (empty) {
    memset(host, 0, nbytes); /* never written: zeros, as a fresh PJRT buffer would be */
    return NULL;
  }
  if (!direct) {
    TT_RETURN_IF_ERROR(tt_storage_create(rt, s->device, nbytes, &tmp));
    tt_view_t dst = dense_view(tmp, src);
    tt_status_t e = run_copy(rt, &dst, src);
    if (e) {
      tt_storage_release(tmp);
      return e;
    }
    s = tmp;
  }
  pthread_mutex_lock(&rt->mu);
  tt_status_t st = tt__storage_await(s);
  if (!st) st = tt_pjrt_buffer_to_host(rt->pjrt, s->buf, host, nbytes);
  pthread_mutex_unlock(&rt->mu);
  tt_storage_release(tmp);
  return st;
}

tt_status_t tt_storage_copy(tt_storage_t* dst, tt_storage_t* src) {
  tt_runtime_t* rt = dst->rt;
  if (dst->nbytes != src->nbytes)
    return tt_status_make(TT_INVALID_ARGUMENT, "storage copy of %zu bytes into %zu bytes", src->nbytes,
                          dst->nbytes);
  pthread_mutex_lock(&rt->mu);
  tt_storage_state_t state = src->state;
  tt_dtype_t dt = src->buf_dtype;
  int64_t numel = src->buf_numel;
  pthread_mutex_unlock(&rt->mu);
  if (state == TT_STORAGE_EMPTY) { /* src reads zeros: so must dst */
    pthread_mutex_lock(&rt->mu);
    tt__storage_reset(dst);
    pthread_mutex_unlock(&rt->mu);
    return NULL;
  }
  if (state == TT_STORAGE_FAILED) return tt__storage_check(src, "storage copy");
  tt_view_t d = {dst, dt, 1, {numel}, {1}, 0, false, false};
  tt_view_t s = {src, dt, 1, {numel}, {1}, 0, false, false};
  if (dst->device == src->device) return run_copy(rt, &d, &s);
  void* host = malloc(src->nbytes ? src->nbytes : 1);
  if (!host) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  tt_status_t st = tt_view_read_host(rt, &s, host);
  if (!st) st = tt_view_write_host(rt, &d, host);
  free(host);
  return st;
}
