/* Tests of the TORCH_TPU_* registry (base/env.c): every variable's entry
 * (name, default, help), reads of set, unset and empty variables, and the
 * flag, integer and byte-count parsers. No plugin needed; the test sets and
 * unsets the variables it reads. */
#include "tt_test.h"

/* The names the enum stands for (tt_base.h), in enum order. */
static const struct {
  tt_env_var_t v;
  const char* name;
  const char* dflt; /* NULL: unset by default */
} k_vars[] = {
    {TT_ENV_PJRT_PLUGIN, "TORCH_TPU_PJRT_PLUGIN", NULL},
    {TT_ENV_PJRT_PLATFORM, "TORCH_TPU_PJRT_PLATFORM", NULL},
    {TT_ENV_NUM_CPU_DEVICES, "TORCH_TPU_NUM_CPU_DEVICES", "1"},
    {TT_ENV_LAUNCH_BLOCKING, "TORCH_TPU_LAUNCH_BLOCKING", "0"},
    {TT_ENV_DEFER_AND_FUSE, "TORCH_TPU_DEFER_AND_FUSE", "0"},
    {TT_ENV_CPU_FALLBACK, "TORCH_TPU_CPU_FALLBACK", "0"},
    {TT_ENV_CACHE_DIR, "TORCH_TPU_CACHE_DIR", NULL},
    {TT_ENV_DUMP_HLO, "TORCH_TPU_DUMP_HLO", "0"},
    {TT_ENV_MEMORY_LIMIT, "TORCH_TPU_MEMORY_LIMIT", NULL},
    {TT_ENV_CACHE_MAX_PROGRAMS, "TORCH_TPU_CACHE_MAX_PROGRAMS", NULL},
    {TT_ENV_FUSE_MAX_OPS, "TORCH_TPU_FUSE_MAX_OPS", "2048"},
    {TT_ENV_DISK_CACHE, "TORCH_TPU_DISK_CACHE", "1"},
    {TT_ENV_DUMP_DIR, "TORCH_TPU_DUMP_DIR", NULL},
    {TT_ENV_HOST_ADDRESS_READS, "TORCH_TPU_HOST_ADDRESS_READS", "1"},
    {TT_ENV_DONATE, "TORCH_TPU_DONATE", "1"},
    {TT_ENV_DIST_COLLECTIVES, "TORCH_TPU_DIST_COLLECTIVES", "auto"},
    {TT_ENV_CACHE_PREFETCH, "TORCH_TPU_CACHE_PREFETCH", "1"},
    {TT_ENV_CACHE_MAX_MAPS, "TORCH_TPU_CACHE_MAX_MAPS", NULL},
    {TT_ENV_PJRT_LOG, "TORCH_TPU_PJRT_LOG", "0"},
    {TT_ENV_CACHE_MAX_SIZE, "TORCH_TPU_CACHE_MAX_SIZE", "4G"},
};
_Static_assert(sizeof(k_vars) / sizeof(k_vars[0]) == TT_ENV_COUNT, "a variable without a row here");

static bool same_str(const char* a, const char* b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* Every variable has its name, default and a help line; names are unique. */
static void test_table(void) {
  for (int i = 0; i < TT_ENV_COUNT; i++) {
    const tt_env_info_t* e = tt_env_info(k_vars[i].v);
    TT_CHECK(k_vars[i].v == (tt_env_var_t)i);
    TT_CHECK(e != NULL);
    bool ok = same_str(e->name, k_vars[i].name) && same_str(e->default_value, k_vars[i].dflt) && e->help &&
              strlen(e->help) > 10;
    if (!ok) fprintf(stderr, "  entry %d: %s (default %s)\n", i, e->name ? e->name : "(null)",
                     e->default_value ? e->default_value : "(null)");
    TT_CHECK(ok);
    for (int j = 0; j < i; j++) TT_CHECK(strcmp(tt_env_info((tt_env_var_t)j)->name, e->name) != 0);
  }
  TT_CHECK(tt_env_info(TT_ENV_COUNT) == NULL);
  TT_CHECK(tt_env_get(TT_ENV_COUNT) == NULL);
}

/* Unset or empty: the default (or NULL); set: the value. */
static void test_get(void) {
  for (int i = 0; i < TT_ENV_COUNT; i++) {
    const char* name = k_vars[i].name;
    unsetenv(name);
    TT_CHECK(same_str(tt_env_get(k_vars[i].v), k_vars[i].dflt));
    setenv(name, "", 1);
    TT_CHECK(same_str(tt_env_get(k_vars[i].v), k_vars[i].dflt));
    setenv(name, "/some/value", 1);
    TT_CHECK(same_str(tt_env_get(k_vars[i].v), "/some/value"));
    unsetenv(name);
  }
}

static void test_flag(void) {
  static const char* yes[] = {"1", "true", "TRUE", "yes", "Yes", "on", "ON"};
  static const char* no[] = {"0", "false", "no", "off", "2", "y", " 1", "enable"};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    setenv("TORCH_TPU_DUMP_HLO", yes[i], 1);
    if (!tt_env_flag(TT_ENV_DUMP_HLO)) fprintf(stderr, "  \"%s\" is not read as set\n", yes[i]);
    TT_CHECK(tt_env_flag(TT_ENV_DUMP_HLO));
  }
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    setenv("TORCH_TPU_DUMP_HLO", no[i], 1);
    if (tt_env_flag(TT_ENV_DUMP_HLO)) fprintf(stderr, "  \"%s\" is read as set\n", no[i]);
    TT_CHECK(!tt_env_flag(TT_ENV_DUMP_HLO));
  }
  /* unset: the default decides ("0", "1", or none) */
  unsetenv("TORCH_TPU_DUMP_HLO");
  unsetenv("TORCH_TPU_DISK_CACHE");
  unsetenv("TORCH_TPU_CACHE_DIR");
  TT_CHECK(!tt_env_flag(TT_ENV_DUMP_HLO));
  TT_CHECK(tt_env_flag(TT_ENV_DISK_CACHE));
  TT_CHECK(!tt_env_flag(TT_ENV_CACHE_DIR));
  setenv("TORCH_TPU_DISK_CACHE", "0", 1);
  TT_CHECK(!tt_env_flag(TT_ENV_DISK_CACHE));
  unsetenv("TORCH_TPU_DISK_CACHE");
}

static void test_int(void) {
  static const struct { const char* s; int64_t want; } k[] = {
      {"16", 16}, {"-3", -3}, {"0", 0}, {"9000000000", 9000000000LL}, {"12abc", 99}, {"abc", 99}, {"1.5", 99},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    setenv("TORCH_TPU_CACHE_MAX_PROGRAMS", k[i].s, 1);
    int64_t got = tt_env_int(TT_ENV_CACHE_MAX_PROGRAMS, 99);
    if (got != k[i].want)
      fprintf(stderr, "  \"%s\" -> %lld, want %lld\n", k[i].s, (long long)got, (long long)k[i].want);
    TT_CHECK(got == k[i].want);
  }
  unsetenv("TORCH_TPU_CACHE_MAX_PROGRAMS");
  TT_CHECK(tt_env_int(TT_ENV_CACHE_MAX_PROGRAMS, 99) == 99); /* no default: the caller's */
  unsetenv("TORCH_TPU_FUSE_MAX_OPS");
  TT_CHECK(tt_env_int(TT_ENV_FUSE_MAX_OPS, 99) == 2048); /* the table's default wins over the caller's */
  setenv("TORCH_TPU_FUSE_MAX_OPS", "", 1);
  TT_CHECK(tt_env_int(TT_ENV_FUSE_MAX_OPS, 99) == 2048);
  unsetenv("TORCH_TPU_FUSE_MAX_OPS");
}

/* Byte counts: digits with an optional binary suffix; -1 when malformed. */
static void test_bytes(void) {
  static const struct { const char* s; int64_t want; } k[] = {
      {"1024", 1024}, {"8G", 8LL << 30}, {"512m", 512LL << 20}, {"3KiB", 3 << 10}, {"2TB", 2LL << 40},
      {"7b", 7},      {"5kb", 5 << 10},  {"", 42},              {"lots", -1},      {"-5", -1},
      {"1.5G", -1},   {"9999999999T", -1}, {"4GG", -1},         {"8P", -1},        {"G", -1},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    setenv("TORCH_TPU_MEMORY_LIMIT", k[i].s, 1);
    int64_t got = tt_env_bytes(TT_ENV_MEMORY_LIMIT, 42);
    if (got != k[i].want)
      fprintf(stderr, "  \"%s\" -> %lld, want %lld\n", k[i].s, (long long)got, (long long)k[i].want);
    TT_CHECK(got == k[i].want);
  }
  unsetenv("TORCH_TPU_MEMORY_LIMIT");
  TT_CHECK(tt_env_bytes(TT_ENV_MEMORY_LIMIT, 42) == 42);
}

int main(void) {
  TT_RUN(test_table);
  TT_RUN(test_get);
  TT_RUN(test_flag);
  TT_RUN(test_int);
  TT_RUN(test_bytes);
  TT_REPORT();
}
