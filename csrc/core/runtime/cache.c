/* In-memory executable cache: open addressing on a 64-bit hash, full keys
 * compared byte for byte, at most max_count entries (least recently used
 * ones are dropped beyond it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static void entry_free(tt_cache_entry_t* e, tt_pjrt_t* p) {
  tt_pjrt_exec_destroy(p, e->exec);
  free(e->key);
  for (int k = 0; k < e->nchecks; k++) free(e->check_msgs[k]);
  free(e->check_msgs);
  free(e->check_codes);
  free(e->check_ops);
}

tt_status_t tt__cache_set_checks(tt_cache_entry_t* e, int n, const int* codes, char** msgs,
                                 const char** ops) {
  if (n == 0) return NULL;
  e->check_codes = malloc(sizeof(int) * (size_t)n);
  e->check_msgs = malloc(sizeof(char*) * (size_t)n);
  e->check_ops = malloc(sizeof(char*) * (size_t)n);
  if (!e->check_codes || !e->check_msgs || !e->check_ops) {
    free(e->check_codes);
    free(e->check_msgs);
    free(e->check_ops);
    e->check_codes = NULL;
    e->check_msgs = NULL;
    e->check_ops = NULL;
    for (int k = 0; k < n; k++) free(msgs[k]);
    return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (executable cache)");
  }
  memcpy(e->check_codes, codes, sizeof(int) * (size_t)n);
  memcpy(e->check_msgs, msgs, sizeof(char*) * (size_t)n);
  memcpy(e->check_ops, ops, sizeof(char*) * (size_t)n);
  e->nchecks = n;
  return NULL;
}

void tt__cache_clear(tt_exec_cache_t* c, tt_pjrt_t* p) {
  for (size_t j = 0; j < c->cap; j++)
    if (c->slots[j].exec) entry_free(&c->slots[j], p);
  free(c->slots);
  tt_exec_cache_t kept = {.max_count = c->max_count, .evictions = c->evictions,
                          .maps_evictions = c->maps_evictions}; /* the bound and the counts stay */
  *c = kept;
}

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

/* Waits for every computation that may still run an executable: the pending
 * outputs and device-side checks. Errors stay where they are (the storages
 * still report them at the next sync). */
static void await_in_flight(tt_runtime_t* rt) {
  for (tt_storage_t* s = rt->live.next; s != &rt->live; s = s->next)
    if (s->pending && s->buf) tt_status_free(tt_pjrt_buffer_await(rt->pjrt, s->buf));
  for (size_t i = 0; i < rt->nchecks; i++)
    tt_status_free(tt_pjrt_buffer_await(rt->pjrt, rt->checks[i].buf));
}

/* Drops the least recently used quarter of the entries (at least one),
 * after the work that may still run them. false when there was nothing to
 * drop or no memory to rebuild the table. */
static bool drop_lru_quarter(tt_runtime_t* rt) {
  tt_exec_cache_t* c = &rt->cache;
  if (!c->count) return false;
  uint64_t* uses = malloc(c->count * sizeof(*uses));
  tt_cache_entry_t* slots = calloc(c->cap, sizeof(*slots));
  if (!uses || !slots) { /* no memory to rebuild: keep everything */
    free(uses);
    free(slots);
    return false;
  }
  size_t n = 0;
  for (size_t j = 0; j < c->cap; j++)
    if (c->slots[j].exec) uses[n++] = c->slots[j].last_use;
  qsort(uses, n, sizeof(*uses), cmp_u64);
  size_t drop = n / 4 ? n / 4 : 1;
  uint64_t cut = uses[drop - 1]; /* entries used at or before `cut` go */
  free(uses);
  await_in_flight(rt);
  size_t kept = 0;
  for (size_t j = 0; j < c->cap; j++) {
    tt_cache_entry_t* e = &c->slots[j];
    if (!e->exec) continue;
    if (e->last_use <= cut) {
      entry_free(e, rt->pjrt);
      c->evictions++;
      continue;
    }
    size_t i = e->hash & (c->cap - 1);
    while (slots[i].exec) i = (i + 1) & (c->cap - 1);
    slots[i] = *e;
    kept++;
  }
  free(c->slots);
  c->slots = slots;
  c->count = kept;
  return true;
}

/* A program may take a few hundred maps: the maps are counted again after
 * at most this many new ones, fewer as they near the bound (counting reads
 * /proc/self/maps: ~0.3 us a map, only when a program is compiled or loaded). */
#define TT_MAPS_PER_PROGRAM_MAX 512
#define TT_MAPS_CHECK_EVERY_MAX 64

void tt__cache_make_room(tt_runtime_t* rt) {
  tt_exec_cache_t* c = &rt->cache;
  if (c->max_count && c->count >= c->max_count) drop_lru_quarter(rt);
  if (++c->since_maps_check < c->maps_check_every) return;
  c->since_maps_check = 0;
  long budget = tt__maps_budget(), maps = tt__maps_count();
  if (maps < 0) { /* no /proc: the count bound alone */
    c->maps_check_every = UINT32_MAX;
    return;
  }
  /* over the bound: drop quarters until a quarter of it is free again (the
   * plugin unmaps a program's code when its executable is destroyed) */
  if (maps > budget)
    for (int round = 0; maps > budget - budget / 4 && round < 16; round++) {
      int64_t before = c->evictions;
      if (!drop_lru_quarter(rt)) break;
      c->maps_evictions += c->evictions - before;
      long now = tt__maps_count();
      if (now < 0) break;
      maps = now;
    }
  long room = budget - maps;
  long every = room > 0 ? room / TT_MAPS_PER_PROGRAM_MAX : 0;
  c->maps_check_every = every < 1 ? 1 : every > TT_MAPS_CHECK_EVERY_MAX ? TT_MAPS_CHECK_EVERY_MAX : (unsigned)every;
}

void tt__cache_drop_all(tt_runtime_t* rt) {
  if (!rt->cache.count) return;
  await_in_flight(rt);
  rt->cache.evictions += (int64_t)rt->cache.count;
  tt__cache_clear(&rt->cache, rt->pjrt);
}

/* ---- tier 2 and the dump directory ---------------------------------------------- */

/* "<dir>/<n>-<name>-<hash>.mlir", name reduced to [A-Za-z0-9._-] */
static void dump_program(tt_runtime_t* rt, const char* name, const tt_sbuf_t* text) {
  if (!rt->dump_dir) return;
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  tt_sbuf_printf(&path, "%s/%06lld-", rt->dump_dir, (long long)rt->dumped);
  for (const char* c = name; *c && path.len < 4096; c++) {
    char ch = *c;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-';
    tt_sbuf_appendn(&path, ok ? &ch : "_", 1);
  }
  tt_sbuf_printf(&path, "-%016llx.mlir",
                 (unsigned long long)tt_hash_bytes(text->data, text->len, 0));
  if (!path.oom) {
    mkdir(rt->dump_dir, 0755); /* one level; an error shows as the fopen below failing */
    FILE* f = fopen(path.data, "w");
    if (f) {
      if (fwrite(text->data, 1, text->len, f) == text->len) rt->dumped++;
      fclose(f);
    } else if (!rt->dump_warned) {
      fprintf(stderr, "[torch_tpu] TORCH_TPU_DUMP_DIR: cannot write %s: %s\n", path.data,
              strerror(errno));
      rt->dump_warned = true;
    }
  }
  tt_sbuf_free(&path);
}

tt_status_t tt__cache_compile(tt_runtime_t* rt, const char* name, const tt_sbuf_t* text,
                              tt_pjrt_exec_t** out, double* secs) {
  *out = NULL;
  *secs = 0;
  dump_program(rt, name, text);
  /* the disk key is the program text itself: nothing of this process in it */
  TT_RETURN_IF_ERROR(tt_disk_cache_get(rt->disk, text->data, text->len, out));
  if (*out) return NULL;
  double t0 = tt__now();
  tt_status_t st = tt_pjrt_compile(rt->pjrt, text->data, text->len, out);
  *secs = tt__now() - t0;
  if (st) return st;
  rt->stats.compiles++;
  rt->stats.compile_seconds += *secs;
  return tt_disk_cache_put(rt->disk, text->data, text->len, *out);
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
    char* msg = strdup(e->check_msgs[i] ? e->check_msgs[i] : "");
    if (!msg) {
      tt_pjrt_buffer_destroy(rt->pjrt, bufs[i]);
      first = tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (checks)");
      continue;
    }
    rt->checks[rt->nchecks++] =
        (tt_pending_check_t){bufs[i], e->check_codes[i], msg, e->check_ops[i] ? e->check_ops[i] : op};
  }
  return first;
}

tt_status_t tt__checks_drain(tt_runtime_t* rt) {
  tt_status_t first = NULL;
  for (size_t i = 0; i < rt->nchecks; i++) {
    tt_pending_check_t* c = &rt->checks[i];
    unsigned char failed = 0;
    /* where device memory is host memory, the flag is read from its address
     * once ready: a ToHostBuffer per check costs ~25 us on the CPU plugin */
    tt_status_t st = tt_pjrt_buffer_await(rt->pjrt, c->buf);
    const unsigned char* at = st ? NULL : tt_pjrt_buffer_host_address(rt->pjrt, c->buf);
    if (at) failed = at[0];
    else if (!st) st = tt_pjrt_buffer_to_host(rt->pjrt, c->buf, &failed, 1);
    tt_pjrt_buffer_destroy(rt->pjrt, c->buf);
    if (!st && failed) st = tt_status_make((tt_code_t)c->code, "%s: %s", c->op, c->message);
    else if (st) st = tt_status_annotate(st, "error in asynchronous op %s", c->op);
    free(c->message);
    if (st && !first) first = st;
    else tt_status_free(st);
  }
  rt->nchecks = 0;
  return first;
}
