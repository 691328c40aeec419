/* Device buffers for host scalars (op scalars, dynamic view offsets, fused
 * programs' packed scalars). Small direct-mapped caches keep repeated values
 * (alpha=1, lr, offsets, a loop's constants) from being transferred again. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

tt_status_t tt__scalar_buffer(tt_runtime_t* rt, int device, tt_dtype_t dt, const void* bytes,
                              tt_pjrt_buffer_t** out, bool* owned) {
  *owned = false;
  uint64_t bits[2] = {0, 0};
  size_t sz = tt_dtype_size(dt);
  memcpy(bits, bytes, sz <= sizeof(bits) ? sz : sizeof(bits));
  uint64_t key[4] = {(uint64_t)device, (uint64_t)dt, bits[0], bits[1]};
  size_t i = tt_hash_bytes(key, sizeof(key), 7) & (TT_SCALAR_CACHE - 1);
  tt_scalar_slot_t* s = &rt->scalars.slots[i];
  if (s->buf && s->device == device && s->dtype == dt && s->bits[0] == bits[0] &&
      s->bits[1] == bits[1]) {
    s->call = rt->call_serial;
    *out = s->buf;
    return NULL;
  }
  tt_type_t t = tt_type_scalar(dt);
  tt_pjrt_buffer_t* b = NULL;
  TT_RETURN_IF_ERROR(tt_pjrt_buffer_from_host(rt->pjrt, device, bits, &t, &b));
  if (s->buf && s->call == rt->call_serial) {
    /* the slot holds another argument of this call, not yet executed: keep it */
    *out = b;
    *owned = true;
    return NULL;
  }
  tt_pjrt_buffer_destroy(rt->pjrt, s->buf); /* PJRT keeps it alive for in-flight uses */
  *s = (tt_scalar_slot_t){b, device, dt, {bits[0], bits[1]}, rt->call_serial};
  *out = b;
  return NULL;
}

tt_status_t tt__packed_buffer(tt_runtime_t* rt, int device, tt_dtype_t dt, const void* bytes, int64_t n,
                              tt_pjrt_buffer_t** out, bool* owned) {
  *owned = false;
  size_t nbytes = (size_t)n * tt_dtype_size(dt);
  uint64_t h = tt_hash_bytes(bytes, nbytes, (uint64_t)device * 131 + (uint64_t)dt);
  tt_packed_slot_t* s = &rt->scalars.packed[h & (TT_PACKED_CACHE - 1)];
  if (s->buf && s->hash == h && s->device == device && s->dtype == dt && s->nbytes == nbytes &&
      !memcmp(s->bytes, bytes, nbytes)) {
    s->call = rt->call_serial;
    rt->scalars.packed_hits++;
    *out = s->buf;
    return NULL;
  }
  tt_type_t t = tt_type_make(dt, 1, &n);
  tt_pjrt_buffer_t* b = NULL;
  TT_RETURN_IF_ERROR(tt_pjrt_buffer_from_host(rt->pjrt, device, bytes, &t, &b));
  rt->scalars.packed_uploads++;
  unsigned char* copy = (s->buf && s->call == rt->call_serial) ? NULL : malloc(nbytes ? nbytes : 1);
  if (!copy) { /* the slot holds another pack of this call, or no memory: not cached */
    *out = b;
    *owned = true;
    return NULL;
  }
  memcpy(copy, bytes, nbytes);
  tt_pjrt_buffer_destroy(rt->pjrt, s->buf); /* PJRT keeps it alive for in-flight uses */
  free(s->bytes);
  *s = (tt_packed_slot_t){b, copy, nbytes, h, device, dt, rt->call_serial};
  *out = b;
  return NULL;
}

void tt__packed_cache_clear(tt_runtime_t* rt) {
  for (int i = 0; i < TT_PACKED_CACHE; i++) {
    tt_pjrt_buffer_destroy(rt->pjrt, rt->scalars.packed[i].buf);
    free(rt->scalars.packed[i].bytes);
    rt->scalars.packed[i] = (tt_packed_slot_t){0};
  }
}
