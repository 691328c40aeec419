/* Storage handles: stable addresses over replaceable PJRT buffers. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"


static int64_t buffer_bytes(const tt_storage_t* s) {
  return s->buf ? s->buf_numel * (int64_t)tt_dtype_size(s->buf_dtype) : 0;
}

static void drop_buffer(tt_storage_t* s) {
  if (!s->buf) return;
  tt_device_stats_t* d = &s->rt->mem.dev[s->device];
  d->bytes_in_use -= buffer_bytes(s);
  d->num_buffers--;
  tt_pjrt_buffer_destroy(s->rt->pjrt, s->buf);
  s->buf = NULL;
}

void tt__storage_set_buffer(tt_storage_t* s, tt_pjrt_buffer_t* b, tt_dtype_t dt, int64_t numel,
                            const char* producer, bool pending) {
  s->rt->stats.buffer_writes++;
  drop_buffer(s);
  tt_status_free(s->error);
  s->error = NULL;
  s->buf = b;
  s->buf_dtype = tt_dtype_buffer(dt); /* complex32: its f16 pairs */
  s->buf_numel = numel * tt_dtype_buffer_factor(dt);
  s->producer = producer;
  s->pending = pending;
  s->state = TT_STORAGE_MATERIALIZED;
  tt_device_stats_t* d = &s->rt->mem.dev[s->device];
  d->bytes_in_use += buffer_bytes(s);
  d->num_buffers++;
  if (d->bytes_in_use > d->peak_bytes) d->peak_bytes = d->bytes_in_use;
}

void tt__storage_fail(tt_storage_t* s, tt_status_t err) {
  s->rt->stats.buffer_writes++;
  drop_buffer(s);
  tt_status_free(s->error);
  s->error = err;
  s->state = TT_STORAGE_FAILED;
  s->pending = true; /* not yet reported by a synchronize */
}

void tt__storage_reset(tt_storage_t* s) {
  s->rt->stats.buffer_writes++;
  drop_buffer(s);
  tt_status_free(s->error);
  s->error = NULL;
  s->state = TT_STORAGE_EMPTY;
  s->pending = false;
}

/* Zeros, as one buffer in `hint` if it divides the size, else bytes. */
tt_dtype_t tt__storage_empty_type(const tt_storage_t* s, tt_dtype_t hint, int64_t* numel) {
  hint = tt_dtype_buffer(hint);
  size_t esz = tt_dtype_size(hint);
  tt_dtype_t dt = (esz && s->nbytes % esz == 0) ? hint : TT_U8;
  *numel = (int64_t)(s->nbytes / tt_dtype_size(dt));
  return dt;
}

tt_status_t tt__storage_materialize(tt_storage_t* s, tt_dtype_t hint) {
  if (s->state == TT_STORAGE_MATERIALIZED) return NULL;
  if (s->state == TT_STORAGE_FAILED) return tt__storage_check(s, "read");
  int64_t numel = 0;
  tt_dtype_t dt = tt__storage_empty_type(s, hint, &numel);
  void* zeros = calloc(s->nbytes ? s->nbytes : 1, 1);
  if (!zeros) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  tt_type_t t = tt_type_make(dt, 1, &numel);
  tt_pjrt_buffer_t* b = NULL;
  tt_status_t st = tt_pjrt_buffer_from_host(s->rt->pjrt, s->device, zeros, &t, &b);
  free(zeros);
  if (st) return tt_status_annotate(st, "allocating %zu bytes on device %d", s->nbytes, s->device);
  tt__storage_set_buffer(s, b, dt, numel, "empty", false);
  return NULL;
}

/* The sticky error of a failed storage, as a fresh status for `user`. */
tt_status_t tt__storage_check(tt_storage_t* s, const char* user) {
  if (s->state != TT_STORAGE_FAILED) return NULL;
  return tt_status_make(tt_status_code(s->error), "%s: a tensor it uses was not computed: %s",
                        user, tt_status_message(s->error));
}

/* Waits for a pending buffer; a failure becomes the storage's sticky error. */
tt_status_t tt__storage_await(tt_storage_t* s) {
  if (s->state == TT_STORAGE_FAILED) {
    s->pending = false;
    return tt_status_clone(s->error);
  }
  if (s->state != TT_STORAGE_MATERIALIZED || !s->pending) return NULL;
  tt_status_t st = tt_pjrt_buffer_await(s->rt->pjrt, s->buf);
  s->pending = false;
  if (!st) return NULL;
  st = tt_status_annotate(st, "error in asynchronous op %s", s->producer ? s->producer : "?");
  tt__storage_fail(s, tt_status_clone(st));
  return st;
}

tt_status_t tt_storage_create(tt_runtime_t* rt, int device, size_t nbytes, tt_storage_t** out) {
  *out = NULL;
  if (device < 0 || device >= tt_runtime_device_count(rt))
    return tt_status_make(TT_INVALID_ARGUMENT, "invalid tpu device index %d (there are %d)", device,
                          tt_runtime_device_count(rt));
  tt_storage_t* s = calloc(1, sizeof(*s));
  if (!s) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  s->rt = rt;
  s->nbytes = nbytes;
  s->device = device;
  s->state = TT_STORAGE_EMPTY;
  s->user_alive = true;
  pthread_mutex_lock(&rt->mu);
  tt_status_t st = tt__mem_reserve(rt, device, nbytes);
  if (st) {
    pthread_mutex_unlock(&rt->mu);
    free(s);
    return st;
  }
  s->born = ++rt->storage_serial;
  s->next = rt->live.next;
  s->prev = &rt->live;
  rt->live.next->prev = s;
  rt->live.next = s;
  rt->mem.dev[device].num_storages++;
  pthread_mutex_unlock(&rt->mu);
  *out = s;
  return NULL;
}

void tt__storage_unref(tt_storage_t* s) {
  if (s->user_alive || s->graph_refs > 0) return;
  tt_runtime_t* rt = s->rt;
  drop_buffer(s);
  s->prev->next = s->next;
  s->next->prev = s->prev;
  rt->mem.dev[s->device].num_storages--;
  tt__mem_unreserve(rt, s->device, s->nbytes);
  tt_status_free(s->error);
  free(s);
}

void tt_storage_release(tt_storage_t* s) {
  if (!s) return;
  tt_runtime_t* rt = s->rt;
  pthread_mutex_lock(&rt->mu);
  s->user_alive = false; /* a graph that still uses it frees it when it has run */
  tt__storage_unref(s);
  pthread_mutex_unlock(&rt->mu);
}

size_t tt_storage_nbytes(const tt_storage_t* s) { return s->nbytes; }
int tt_storage_device(const tt_storage_t* s) { return s->device; }
tt_storage_state_t tt_storage_state(const tt_storage_t* s) {
  return s->deferred ? TT_STORAGE_DEFERRED : s->state;
}
