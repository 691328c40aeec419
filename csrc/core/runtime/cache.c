/* In-memory executable cache: open addressing on a 64-bit hash, full keys
 * compared byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

tt_cache_entry_t* tt__cache_find(tt_exec_cache_t* c, const void* key, size_t len, uint64_t h) {
  if (!c->cap) return NULL;
  size_t i = h & (c->cap - 1);
  while (c->slots[i].exec) {
    tt_cache_entry_t* e = &c->slots[i];
    if (e->hash == h && e->key_len == len && !memcmp(e->key, key, len)) return e;
    i = (i + 1) & (c->cap - 1);
  }
  return NULL;
}

static tt_status_t grow(tt_exec_cache_t* c) {
  size_t cap = c->cap ? c->cap * 2 : 256;
  tt_cache_entry_t* slots = calloc(cap, sizeof(*slots));
  if (!slots) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (executable cache)");
  for (size_t j = 0; j < c->cap; j++) {
    if (!c->slots[j].exec) continue;
    size_t i = c->slots[j].hash & (cap - 1);
    while (slots[i].exec) i = (i + 1) & (cap - 1);
    slots[i] = c->slots[j];
  }
  free(c->slots);
  c->slots = slots;
  c->cap = cap;
  return NULL;
}

tt_status_t tt__cache_insert(tt_exec_cache_t* c, const void* key, size_t len, uint64_t h,
                             tt_pjrt_exec_t* exec, int nresults, double secs,
                             tt_cache_entry_t** out) {
  if ((c->count + 1) * 2 > c->cap) TT_RETURN_IF_ERROR(grow(c));
  unsigned char* k = malloc(len ? len : 1);
  if (!k) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (executable cache)");
  memcpy(k, key, len);
  size_t i = h & (c->cap - 1);
  while (c->slots[i].exec) i = (i + 1) & (c->cap - 1);
  c->slots[i] = (tt_cache_entry_t){h, k, len, exec, nresults, secs};
  c->count++;
  *out = &c->slots[i];
  return NULL;
}

void tt__cache_clear(tt_exec_cache_t* c, tt_pjrt_t* p) {
  for (size_t j = 0; j < c->cap; j++) {
    if (!c->slots[j].exec) continue;
    tt_pjrt_exec_destroy(p, c->slots[j].exec);
    free(c->slots[j].key);
  }
  free(c->slots);
  memset(c, 0, sizeof(*c));
}
