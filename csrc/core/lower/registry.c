/* The lowering registry: every family table, one hash index by ATen name. The
 * index holds copies of the entries with their family's facts ORed into their
 * flags (tt_lower_fact_t), so a caller reads every fact of an op from its entry. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tt_lower_tables.h"

typedef struct family {
  const char* name;
  const tt_lower_entry_t* entries;
  const int* count;
} family_t;

#define TT_FAMILY(name) {#name, tt_lower_##name, &tt_lower_##name##_count},
static const family_t k_families[] = {TT_LOWER_FAMILIES(TT_FAMILY)};
#undef TT_FAMILY
#define NFAMILIES ((int)(sizeof(k_families) / sizeof(k_families[0])))

typedef struct facts {
  const char* family;
  const tt_lower_fact_t* facts;
  const int* count;
} facts_t;

#define TT_FACTS(name) {#name, tt_lower_##name##_facts, &tt_lower_##name##_facts_count},
static const facts_t k_facts[] = {TT_LOWER_FACT_FAMILIES(TT_FACTS)};
#undef TT_FACTS
#define NFACTS ((int)(sizeof(k_facts) / sizeof(k_facts[0])))

/* The flags of the facts of `family` about the op of entry name `name`
 * ("aten::add_.Scalar" matches the fact "aten::add_"), and their Scalar
 * conversions (*scalars, NULL if none). */
static uint32_t facts_of(const char* family, const char* name, const char** scalars) {
  size_t base = strcspn(name, ".");
  uint32_t flags = 0;
  *scalars = NULL;
  for (int i = 0; i < NFACTS; i++) {
    if (strcmp(k_facts[i].family, family)) continue;
    for (int j = 0; j < *k_facts[i].count; j++) {
      const tt_lower_fact_t* fact = &k_facts[i].facts[j];
      if (strlen(fact->op) != base || strncmp(fact->op, name, base)) continue;
      flags |= fact->flags;
      if (fact->scalars) *scalars = fact->scalars;
    }
  }
  return flags;
}

#define INDEX_BITS 13
#define INDEX_SIZE (1 << INDEX_BITS)

static const tt_lower_entry_t* g_index[INDEX_SIZE]; /* open addressing */
static const tt_lower_entry_t** g_all;
static tt_lower_entry_t* g_entries; /* owned, for the process: the copies with their facts */
static const char** g_scalars;      /* owned: g_entries[i]'s Scalar conversions (static strings) */
static int g_nentries;
static int g_count;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static uint64_t name_hash(const char* s) { return tt_hash_bytes(s, strlen(s), 0); }

static void build_index(void) {
  int total = 0;
  for (int i = 0; i < NFAMILIES; i++) total += *k_families[i].count;
  g_all = calloc((size_t)total + 1, sizeof(*g_all));
  g_entries = calloc((size_t)total + 1, sizeof(*g_entries));
  g_scalars = calloc((size_t)total + 1, sizeof(*g_scalars));
  if (!g_all || !g_entries || !g_scalars) return;
  g_nentries = total;
  int n = 0;
  for (int i = 0; i < NFAMILIES; i++) {
    for (int j = 0; j < *k_families[i].count; j++) {
      tt_lower_entry_t* e = &g_entries[n];
      *e = k_families[i].entries[j];
      e->flags |= facts_of(k_families[i].name, e->name, &g_scalars[n]);
      n++;
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

const char* tt_lower_scalar_rules(const tt_lower_entry_t* e) {
  pthread_once(&g_once, build_index);
  if (!g_entries || e < g_entries || e >= g_entries + g_nentries) return NULL;
  return g_scalars[e - g_entries];
}

tt_status_t tt_lower_check_facts(void) {
  for (int i = 0; i < NFACTS; i++) {
    const family_t* fam = NULL;
    for (int k = 0; k < NFAMILIES && !fam; k++)
      if (!strcmp(k_families[k].name, k_facts[i].family)) fam = &k_families[k];
    if (!fam)
      return tt_status_make(TT_INTERNAL, "facts of %s: no such lowering family", k_facts[i].family);
    for (int j = 0; j < *k_facts[i].count; j++) {
      const char* op = k_facts[i].facts[j].op;
      bool found = false;
      for (int e = 0; e < *fam->count && !found; e++) {
        const char* name = fam->entries[e].name;
        size_t base = strcspn(name, ".");
        found = strlen(op) == base && !strncmp(op, name, base);
      }
      if (!found)
        return tt_status_make(TT_INTERNAL, "a fact of the %s family names %s, which has no entry there",
                              k_facts[i].family, op);
    }
  }
  return NULL;
}
