/* Device buffers for host scalars (op scalars, dynamic view offsets). A small
 * direct-mapped cache keeps repeated values (alpha=1, lr, offsets) from being
 * transferred again. */
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
  tt_scalar_slot_t* s = &rt->scalars[i];
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
