/* Host transfers and copies between views: what reads or replaces a
 * storage's buffer from outside a program (Fused Eager's recorded calls run
 * first). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
static const tt_lower_entry_t k_copy = {"tt::copy", lower_copy, 0, TT_LF_WRITE_ONLY | TT_LF_COMPLEX};

static tt_call_t copy_call(tt_call_arg_t args[2], const tt_view_t* dst, const tt_view_t* src) {
  memset(args, 0, 2 * sizeof(*args));
  args[0].kind = TT_ARG_TENSOR; /* self: passed as OUT because of TT_LF_WRITE_ONLY */
  args[0].view = *dst;
  args[1].kind = TT_ARG_TENSOR;
  args[1].tier = TT_TIER_DIM;
  args[1].view = *src;
  return (tt_call_t){&k_copy, args, 2, dst, &dst->dtype, 1, tt_storage_device(dst->storage), {0, 0}};
}

/* As an op (recorded in Fused Eager). */
static tt_status_t run_copy(tt_runtime_t* rt, const tt_view_t* dst, const tt_view_t* src) {
  tt_call_arg_t args[2];
  tt_call_t call = copy_call(args, dst, src);
  return tt_runtime_call(rt, &call);
}

/* Now, whatever the mode (rt->mu held, the graph flushed). */
static tt_status_t run_copy_now(tt_runtime_t* rt, const tt_view_t* dst, const tt_view_t* src) {
  tt_call_arg_t args[2];
  tt_call_t call = copy_call(args, dst, src);
  return tt__run_call(rt, &call);
}

tt_status_t tt_runtime_copy(tt_runtime_t* rt, const tt_view_t* dst, const tt_view_t* src) {
  return run_copy(rt, dst, src);
}

tt_view_t tt__dense_view(tt_storage_t* s, const tt_view_t* like) {
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
  numel *= tt_dtype_buffer_factor(dt); /* complex32: its f16 pairs, the same bytes */
  dt = tt_dtype_buffer(dt);
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
  TT_RETURN_IF_ERROR(tt__fuse_sync(rt)); /* recorded ops read or write dst's old value */
  int device = tt_storage_device(dst->storage);
  int64_t numel = tt_view_numel(dst);
  tt_storage_t* tmp = NULL;
  TT_RETURN_IF_ERROR(upload(rt, device, dst->dtype, numel, host, &tmp));
  if (tt__view_is_full(dst)) {
    /* move the fresh buffer into dst */
    pthread_mutex_lock(&rt->mu);
    tt_pjrt_buffer_t* b = tmp->buf;
    rt->mem.dev[device].bytes_in_use -= numel * (int64_t)tt_dtype_size(dst->dtype);
    rt->mem.dev[device].num_buffers--;
    tmp->buf = NULL;
    tmp->state = TT_STORAGE_EMPTY;
    tt__storage_set_buffer(dst->storage, b, dst->dtype, numel, "host-to-device copy", false);
    pthread_mutex_unlock(&rt->mu);
    tt_storage_release(tmp);
    return NULL;
  }
  tt_view_t src = tt__dense_view(tmp, dst);
  tt_status_t s = run_copy(rt, dst, &src);
  tt_storage_release(tmp);
  return s;
}

/* n elements of es bytes, `stride` elements apart, to dense `out` (each
 * size a fixed-size memcpy: one load and store) */
static void copy_row(char* out, const char* in, int64_t n, int64_t stride, size_t es) {
#define TT__ROW(ES)                                                                  \
  for (int64_t i = 0; i < n; i++) memcpy(out + (size_t)i * ES, in + (size_t)(i * stride) * ES, ES); \
  return
  switch (es) {
    case 1: TT__ROW(1);
    case 2: TT__ROW(2);
    case 4: TT__ROW(4);
    case 8: TT__ROW(8);
    case 16: TT__ROW(16);
    default:
      for (int64_t i = 0; i < n; i++) memcpy(out + (size_t)i * es, in + (size_t)(i * stride) * es, es);
  }
#undef TT__ROW
}

/* Where device memory is host memory (tt_pjrt_buffer_host_address), a host
 * read of a ready buffer copies the view's elements from the buffer's
 * address: no copy program for a strided view, no ToHostBuffer. False when
 * that does not apply (another plugin, a lazy conj/neg bit, a view of
 * another dtype than the buffer's, a view reaching past it): the caller
 * takes the plugin's path. rt->mu held, src's storage materialized and
 * awaited. */
static bool gather_from_address(tt_runtime_t* rt, const tt_view_t* v, void* host) {
  tt_storage_t* s = v->storage;
  if (v->conj || v->neg || s->buf_dtype != tt_dtype_buffer(v->dtype) || v->offset < 0 || v->rank > TT_MAX_RANK)
    return false;
  int64_t last = v->offset; /* the furthest element the view reads */
  for (int d = 0; d < v->rank; d++) {
    if (v->sizes[d] == 0) return false; /* nothing to read: callers return before */
    if (v->strides[d] < 0) return false;
    last += (v->sizes[d] - 1) * v->strides[d];
  }
  if (last >= s->buf_numel / tt_dtype_buffer_factor(v->dtype)) return false;
  const char* base = tt_pjrt_buffer_host_address(rt->pjrt, s->buf);
  if (!base) return false;
  size_t es = tt_dtype_size(v->dtype);
  char* out = host;
  if (tt_view_is_contiguous(v)) {
    memcpy(out, base + (size_t)v->offset * es, (size_t)tt_view_numel(v) * es);
    return true;
  }
  /* row-major walk over the view's index space; the innermost dimension is
   * copied element by element (a strided row) */
  int64_t idx[TT_MAX_RANK] = {0};
  int r = v->rank;
  int64_t inner = r ? v->sizes[r - 1] : 1, istride = r ? v->strides[r - 1] : 0;
  for (;;) {
    int64_t off = v->offset;
    for (int d = 0; d + 1 < r; d++) off += idx[d] * v->strides[d];
    copy_row(out, base + (size_t)off * es, inner, istride, es);
    out += (size_t)inner * es;
    int d = r - 2;
    for (; d >= 0; d--) {
      if (++idx[d] < v->sizes[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return true;
  }
}

tt_status_t tt_view_read_host(tt_runtime_t* rt, const tt_view_t* src, void* host) {
  int64_t numel = tt_view_numel(src);
  size_t nbytes = (size_t)numel * tt_dtype_size(src->dtype);
  if (numel == 0) return NULL;
  tt_storage_t* s = src->storage;
  tt_storage_t* tmp = NULL;
  pthread_mutex_lock(&rt->mu);
  /* a host read waits anyway: run the recorded ops, wait on the source first
   * so that an error of asynchronous work names the op that failed, not the
   * copy */
  tt_status_t pre = tt__fuse_flush(rt);
  if (!pre) pre = tt__checks_drain(rt);
  if (!pre) pre = tt__storage_await(s);
  if (pre) {
    pthread_mutex_unlock(&rt->mu);
    return pre;
  }
  bool direct = tt__view_is_full(src) && s->state == TT_STORAGE_MATERIALIZED &&
                s->buf_dtype == tt_dtype_buffer(src->dtype);
  bool empty = s->state == TT_STORAGE_EMPTY;
  if (s->state == TT_STORAGE_MATERIALIZED && gather_from_address(rt, src, host)) {
    pthread_mutex_unlock(&rt->mu);
    return NULL;
  }
  pthread_mutex_unlock(&rt->mu);
  if (empty) {
    memset(host, 0, nbytes); /* never written: zeros, as a fresh PJRT buffer would be */
    return NULL;
  }
  if (!direct) {
    TT_RETURN_IF_ERROR(tt_storage_create(rt, s->device, nbytes, &tmp));
    tt_view_t dst = tt__dense_view(tmp, src);
    pthread_mutex_lock(&rt->mu);
    tt_status_t e = run_copy_now(rt, &dst, src);
    pthread_mutex_unlock(&rt->mu);
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

tt_status_t tt_view_host_window(tt_runtime_t* rt, const tt_view_t* v, void** addr) {
  *addr = NULL;
  if (v->conj || v->neg || !tt__view_is_full(v) || tt_view_numel(v) == 0) return NULL;
  /* every op that reads or writes the storage has run: no program touches the
   * bytes while the caller does (a program whose results were all dropped may
   * still run, and nothing observes what it reads) */
  TT_RETURN_IF_ERROR(tt_runtime_synchronize(rt, -1));
  pthread_mutex_lock(&rt->mu);
  tt_storage_t* s = v->storage;
  tt_status_t st = NULL;
  if (s->state == TT_STORAGE_MATERIALIZED && s->buf_dtype == tt_dtype_buffer(v->dtype) &&
      s->buf_numel == tt_view_numel(v) * tt_dtype_buffer_factor(v->dtype)) {
    st = tt__storage_await(s);
    if (!st) *addr = (void*)tt_pjrt_buffer_host_address(rt->pjrt, s->buf);
  }
  pthread_mutex_unlock(&rt->mu);
  return st;
}

tt_status_t tt_storage_copy(tt_storage_t* dst, tt_storage_t* src) {
  tt_runtime_t* rt = dst->rt;
  if (dst->nbytes != src->nbytes)
    return tt_status_make(TT_INVALID_ARGUMENT, "storage copy of %zu bytes into %zu bytes", src->nbytes,
                          dst->nbytes);
  TT_RETURN_IF_ERROR(tt__fuse_sync(rt)); /* the states below are the recorded ops' results */
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

/* ---- resizes ------------------------------------------------------------------- */

/* Gives back what a failed resize from `was` to `now` reserved (rt->mu held). */
static void mem_undo_resize(tt_runtime_t* rt, int device, size_t was, size_t now) {
  if (now > was) tt__mem_unreserve(rt, device, now - was);
  else rt->mem.dev[device].bytes_reserved += (int64_t)(was - now);
}

tt_status_t tt_storage_resize(tt_storage_t* s, size_t nbytes) {
  if (nbytes == s->nbytes) return NULL;
  tt_runtime_t* rt = s->rt;
  TT_RETURN_IF_ERROR(tt__fuse_sync(rt)); /* the recorded ops see the old size */
  size_t was = s->nbytes;
  pthread_mutex_lock(&rt->mu);
  rt->stats.buffer_writes++; /* a capture that sees this is not one program */
  tt_status_t rs = nbytes > was ? tt__mem_reserve(rt, s->device, nbytes - was) : NULL;
  if (rs) {
    pthread_mutex_unlock(&rt->mu);
    return rs; /* beyond the device: the storage is unchanged */
  }
  if (nbytes < was) tt__mem_unreserve(rt, s->device, was - nbytes);
  if (s->state != TT_STORAGE_MATERIALIZED) {
    s->nbytes = nbytes;
    pthread_mutex_unlock(&rt->mu);
    return NULL; /* EMPTY stays empty; FAILED stays failed */
  }
  pthread_mutex_unlock(&rt->mu);
  /* Keep the leading bytes: read them back, write a new buffer. Resizing is
   * rare (resize_, set_), so a host round trip keeps this simple. */
  size_t keep = nbytes < s->nbytes ? nbytes : s->nbytes;
  unsigned char* host = calloc(nbytes ? nbytes : 1, 1);
  unsigned char* old = malloc(s->nbytes ? s->nbytes : 1);
  if (!host || !old) {
    free(host);
    free(old);
    pthread_mutex_lock(&rt->mu);
    mem_undo_resize(rt, s->device, was, nbytes);
    pthread_mutex_unlock(&rt->mu);
    return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  }
  pthread_mutex_lock(&rt->mu);
  tt_status_t st = tt__storage_await(s);
  if (!st) st = tt_pjrt_buffer_to_host(rt->pjrt, s->buf, old, s->nbytes);
  if (!st) {
    memcpy(host, old, keep);
    size_t esz = tt_dtype_size(s->buf_dtype);
    tt_dtype_t dt = nbytes % esz == 0 ? s->buf_dtype : TT_U8;
    int64_t numel = (int64_t)(nbytes / tt_dtype_size(dt));
    tt_type_t t = tt_type_make(dt, 1, &numel);
    tt_pjrt_buffer_t* b = NULL;
    st = tt_pjrt_buffer_from_host(rt->pjrt, s->device, host, &t, &b);
    if (!st) {
      s->nbytes = nbytes;
      tt__storage_set_buffer(s, b, dt, numel, "resize_", false);
    }
  }
  if (st) mem_undo_resize(rt, s->device, was, nbytes);
  pthread_mutex_unlock(&rt->mu);
  free(host);
  free(old);
  return st ? tt_status_annotate(st, "resizing a tpu storage to %zu bytes", nbytes) : NULL;
}
