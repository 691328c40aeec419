/* The lowering registry: every family table, one hash index by ATen name. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tt_lower_tables.h"

typedef struct family {
  const tt_lower_entry_t* entries;
  const int* count;
} family_t;

#define TT_FAMILY(name) {tt_lower_##name, &tt_lower_##name##_count},
static const family_t k_families[] = {TT_LOWER_FAMILIES(TT_FAMILY)};
#undef TT_FAMILY
#define NFAMILIES ((int)(sizeof(k_families) / sizeof(k_families[0])))

#define INDEX_BITS 13
#define INDEX_SIZE (1 << INDEX_BITS)

static const tt_lower_entry_t* g_index[INDEX_SIZE]; /* open addressing */
static const tt_lower_entry_t** g_all;
static int g_count;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static uint64_t name_hash(const char* s) { return tt_hash_bytes(s, strlen(s), 0); }

static void build_index(void) {
  int total = 0;
  for (int i = 0; i < NFAMILIES; i++) total += *k_families[i].count;
  g_all = calloc((size_t)total + 1, sizeof(*g_all));
  if (!g_all) return;
  for (int i = 0; i < NFAMILIES; i++) {
    for (int j = 0; j < *k_families[i].count; j++) {
      const tt_lower_entry_t* e = &k_families[i].entries[j];
      uint64_t h = name_hash(e->name) & (INDEX_SIZE - 1);
      bool dup = false;
      while (g_index[h]) {
        if (!strcmp(g_index[h]->name, e->name)) { dup = true; break; }
        h = (h + 1) & (INDEX_SIZE - 1);
      }
      if (dup) continue; /* first table wins; tests check there are no duplicates */
      if (g_count >= INDEX_SIZE / 2) return; /* keep the index sparse */
      g_index[h] = e;
      g_all[g_count++] = e;
    }
  }
}

const tt_lower_entry_t* tt_lower_find(const char* name) {
  pthread_once(&g_once, build_index);
  uint64_t h = name_hash(name) & (INDEX_SIZE - 1);
  while (g_index[h]) {
    if (!strcmp(g_index[h]->name, name)) return g_index[h];
    h = (h + 1) & (INDEX_SIZE - 1);
  }
  return NULL;
}

int tt_lower_count(void) {
  pthread_once(&g_once, build_index);
  return g_count;
}

const tt_lower_entry_t* tt_lower_at(int i) {
  pthread_once(&g_once, build_index);
  return (i >= 0 && i < g_count) ? g_all[i] : NULL;
}
