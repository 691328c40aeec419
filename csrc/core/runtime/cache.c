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
  memset(&c->slots[i], 0, sizeof(c->slots[i]));
  c->slots[i].hash = h;
  c->slots[i].key = k;
  c->slots[i].key_len = len;
  c->slots[i].exec = exec;
  c->slots[i].nresults = nresults;
  c->slots[i].compile_seconds = secs;
  c->count++;
  *out = &c->slots[i];
  return NULL;
}

void tt__cache_clear(tt_exec_cache_t* c, tt_pjrt_t* p) {
  for (size_t j = 0; j < c->cap; j++) {
    if (!c->slots[j].exec) continue;
    tt_pjrt_exec_destroy(p, c->slots[j].exec);
    free(c->slots[j].key);
    for (int k = 0; k < c->slots[j].nchecks; k++) free(c->slots[j].check_msgs[k]);
  }
  free(c->slots);
  memset(c, 0, sizeof(*c));
}

/* ---- device-side checks ------------------------------------------------------- */

tt_status_t tt__checks_push(tt_runtime_t* rt, tt_cache_entry_t* e, tt_pjrt_buffer_t** bufs,
                            const char* op) {
  tt_status_t first = NULL;
  if (rt->nchecks + (size_t)e->nchecks > rt->capchecks) {
    size_t cap = rt->capchecks ? rt->capchecks * 2 : 64;
    while (cap < rt->nchecks + (size_t)e->nchecks) cap *= 2;
    tt_pending_check_t* n = realloc(rt->checks, cap * sizeof(*n));
    if (!n) first = tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (checks)");
    else {
      rt->checks = n;
      rt->capchecks = cap;
    }
  }
  for (int i = 0; i < e->nchecks; i++) {
    if (first) {
      tt_pjrt_buffer_destroy(rt->pjrt, bufs[i]);
      continue;
    }
    rt->checks[rt->nchecks++] = (tt_pending_check_t){bufs[i], e->check_codes[i], e->check_msgs[i], op};
  }
  return first;
}

tt_status_t tt__checks_drain(tt_runtime_t* rt) {
  tt_status_t first = NULL;
  for (size_t i = 0; i < rt->nchecks; i++) {
    tt_pending_check_t* c = &rt->checks[i];
    unsigned char failed = 0;
    tt_status_t st = tt_pjrt_buffer_to_host(rt->pjrt, c->buf, &failed, 1);
    tt_pjrt_buffer_destroy(rt->pjrt, c->buf);
    if (!st && failed) st = tt_status_make((tt_code_t)c->code, "%s: %s", c->op, c->message);
    else if (st) st = tt_status_annotate(st, "error in asynchronous op %s", c->op);
    if (st && !first) first = st;
    else tt_status_free(st);
  }
  rt->nchecks = 0;
  return first;
}
