/* The lowering registry: every family table, one hash index by ATen name. The
 * index holds copies of the entries with their family's facts ORed into their
 * flags (tt_lower_fact_t), so a caller reads every fact of an op from its entry;
 * the facts of ops without a lowering (and bucket classes) by tt_lower_facts_of. */
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

/* Whether the fact op `fop` names the op `name` (a full name): it is name's base name (every
 * overload) or name itself ("aten::sum.default" for "aten::sum", and the other way round). */
static bool fact_names(const char* fop, const char* name) {
  size_t base = strcspn(name, "."), fbase = strcspn(fop, ".");
  if (fbase != base || strncmp(fop, name, base)) return false;
  const char *fo = fop + fbase, *no = name + base;
  if (!*fo) return true;
  if (!*no) no = ".default";
  return !strcmp(fo, no);
}

/* Whether two fact ops may name one overload: the same base name, and one of them is a base
 * name or both name the same overload. */
static bool facts_overlap(const char* a, const char* b) {
  size_t na = strcspn(a, "."), nb = strcspn(b, ".");
  if (na != nb || strncmp(a, b, na)) return false;
  return !a[na] || !b[nb] || fact_names(a, b);
}

/* The flags of the facts of `family` about the op of entry name `name`
 * ("aten::add_.Scalar" matches the fact "aten::add_"), and their Scalar
 * conversions (*scalars, NULL if none). */
static uint32_t facts_of(const char* family, const char* name, const char** scalars) {
  uint32_t flags = 0;
  *scalars = NULL;
  for (int i = 0; i < NFACTS; i++) {
    if (strcmp(k_facts[i].family, family)) continue;
    for (int j = 0; j < *k_facts[i].count; j++) {
      const tt_lower_fact_t* fact = &k_facts[i].facts[j];
      if (!fact_names(fact->op, name)) continue;
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

tt_lower_fact_t tt_lower_facts_of(const char* name) {
  tt_lower_fact_t out = {0};
  for (int i = 0; name && i < NFACTS; i++)
    for (int j = 0; j < *k_facts[i].count; j++) {
      const tt_lower_fact_t* fact = &k_facts[i].facts[j];
      if (!fact_names(fact->op, name)) continue;
      out.flags |= fact->flags;
      if (fact->scalars) out.scalars = fact->scalars;
      if (fact->bucket) out.bucket = fact->bucket;
    }
  return out;
}

int tt_lower_fact_count(void) {
  int n = 0;
  for (int i = 0; i < NFACTS; i++) n += *k_facts[i].count;
  return n;
}

const tt_lower_fact_t* tt_lower_fact_at(int i) {
  for (int k = 0; k < NFACTS && i >= 0; k++) {
    if (i < *k_facts[k].count) return &k_facts[k].facts[i];
    i -= *k_facts[k].count;
  }
  return NULL;
}

static const char* const k_bucket_names[] = {
    [TT_BUCKET_NONE] = NULL,
    [TT_BUCKET_KEEP] = "keep",
    [TT_BUCKET_CREATE] = "create",
    [TT_BUCKET_VIEW] = "view",
    [TT_BUCKET_PERMUTE] = "permute",
    [TT_BUCKET_TRANSPOSE] = "transpose",
    [TT_BUCKET_UNSQUEEZE] = "unsqueeze",
    [TT_BUCKET_EXPAND] = "expand",
    [TT_BUCKET_SELECT] = "select",
    [TT_BUCKET_SLICE] = "slice",
    [TT_BUCKET_REDUCE] = "reduce",
    [TT_BUCKET_LAYER_NORM] = "layer_norm",
    [TT_BUCKET_MATMUL] = "matmul",
    [TT_BUCKET_MATMUL_BIAS] = "matmul_bias",
    [TT_BUCKET_SPLIT] = "split",
    [TT_BUCKET_ATTENTION] = "attention",
    [TT_BUCKET_EMBEDDING] = "embedding",
    [TT_BUCKET_SIZE] = "size",
};
_Static_assert(sizeof(k_bucket_names) / sizeof(k_bucket_names[0]) == TT_BUCKET_COUNT,
               "a name for every bucket class");

const char* tt_lower_bucket_name(tt_lower_bucket_t b) {
  return (int)b > 0 && b < TT_BUCKET_COUNT ? k_bucket_names[b] : NULL;
}

static const family_t* family_named(const char* name) {
  for (int k = 0; k < NFAMILIES; k++)
    if (!strcmp(k_families[k].name, name)) return &k_families[k];
  return NULL;
}

static bool family_has(const family_t* fam, const char* op) {
  for (int e = 0; e < *fam->count; e++)
    if (fact_names(op, fam->entries[e].name)) return true;
  return false;
}

tt_status_t tt_lower_check_facts(void) {
  for (int i = 0; i < NFACTS; i++) {
    const family_t* fam = family_named(k_facts[i].family);
    if (!fam)
      return tt_status_make(TT_INTERNAL, "facts of %s: no such lowering family", k_facts[i].family);
    for (int j = 0; j < *k_facts[i].count; j++) {
      const tt_lower_fact_t* fact = &k_facts[i].facts[j];
      const char* op = fact->op;
      if ((int)fact->bucket < 0 || fact->bucket >= TT_BUCKET_COUNT)
        return tt_status_make(TT_INTERNAL, "a fact about %s has no such bucket class (%d)", op, (int)fact->bucket);
      if (!family_has(fam, op)) {
        if ((fact->flags & ~TT_LF_FACT_ONLY) || fact->scalars)
          return tt_status_make(TT_INTERNAL,
                                "a fact of the %s family names %s, which has no entry there (an op without a "
                                "lowering may have only TT_LF_FACT_ONLY flags and a bucket class)",
                                k_facts[i].family, op);
        for (int k = 0; k < NFAMILIES; k++)
          if (family_has(&k_families[k], op))
            return tt_status_make(TT_INTERNAL, "a fact of the %s family names %s, whose lowering is in the %s "
                                  "family: its facts go beside it", k_facts[i].family, op, k_families[k].name);
      }
      if (!fact->bucket) continue;
      for (int i2 = 0; i2 <= i; i2++)
        for (int j2 = 0; j2 < (i2 == i ? j : *k_facts[i2].count); j2++) {
          const tt_lower_fact_t* other = &k_facts[i2].facts[j2];
          if (other->bucket && facts_overlap(op, other->op))
            return tt_status_make(TT_INTERNAL, "two bucket classes reach %s (facts about %s and %s)", op,
                                  other->op, op);
        }
    }
  }
  return NULL;
}
