/* Tests of tier 2 of the compilation cache (runtime/disk_cache.c) and the
 * PJRT serialization under it, against both CPU plugins: entries written by
 * one client (or process) load into a fresh one and compute the same; every
 * damaged, foreign or unreadable entry is a counted miss, never a crash; two
 * processes fill one directory at once; a process loads at open what the
 * last run of its command line used first; the directory's size stays
 * within TORCH_TPU_CACHE_MAX_SIZE, least recently used entries going first,
 * across cache handles and processes; a directory others may write is
 * refused, and what the cache creates is private (0700 / 0600). Env: TT_TEST_PLUGIN_NEW (API 0.115),
 * TT_TEST_PLUGIN_OLD (API 0.81); a missing one skips its plugin. Files go to
 * a fresh directory under $TMPDIR (or /tmp), removed at the end.
 * `test_runtime_disk_cache --writer DIR PLUGIN N` is one of the concurrent writers. */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/disk_cache.h"
#include "tt_test.h"

static const char* g_paths[2];
static tt_pjrt_t* g_plugins[2]; /* [0] API 0.115, [1] API 0.81; NULL: skipped */
static const char* g_names[2] = {"new", "old"};
static char g_root[256];        /* this run's scratch directory */

#define FOR_EACH_PLUGIN(check)                                             \
  do {                                                                     \
    for (int i_ = 0; i_ < 2; i_++) {                                       \
      if (!g_plugins[i_]) continue;                                        \
      check(i_);                                                           \
      if (tt__cur_failed) {                                                \
        fprintf(stderr, "  (with the %s plugin)\n", g_names[i_]);          \
        return;                                                            \
      }                                                                    \
    }                                                                      \
  } while (0)

/* ---- programs: [0] a+b and its column sums, [1] a*b, [2] a-b ----------------------------- */
static const char* k_progs[3] = {
    "func.func public @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, "
    "tensor<3xf32>) {\n"
    "  %0 = stablehlo.add %a, %b : tensor<2x3xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : "
    "(tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
    "  return %0, %1 : tensor<2x3xf32>, tensor<3xf32>\n"
    "}\n",
    "func.func public @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "  %0 = stablehlo.multiply %a, %b : tensor<2x3xf32>\n"
    "  return %0 : tensor<2x3xf32>\n"
    "}\n",
    "func.func public @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "  %0 = stablehlo.subtract %a, %b : tensor<2x3xf32>\n"
    "  return %0 : tensor<2x3xf32>\n"
    "}\n",
};
static const float k_a[6] = {1.5f, -2.0f, 3.25f, 0.0f, 100.0f, -7.5f};
static const float k_b[6] = {0.5f, 2.0f, -1.25f, 8.0f, 0.125f, 7.5f};

/* Keys are bytes, NULs included. */
static const char k_key_a[] = "sig:add+colsum\0f32[2,3]\0f32[2,3]";
static const char k_key_b[] = "sig:add+colsum\0f32[2,3]\0f32[2,4]";
#define KEY(k) (k), sizeof(k)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static tt_status_t compile(tt_pjrt_t* p, int prog, tt_pjrt_exec_t** out) {
  return tt_pjrt_compile(p, k_progs[prog], strlen(k_progs[prog]), out);
}

/* Runs e (program `prog`) on `device` of p; 0 if every result is exact. */
static int run_prog(tt_pjrt_t* p, tt_pjrt_exec_t* e, int device, int prog) {
  size_t nout = tt_pjrt_exec_num_outputs(p, e);
  if (nout != (prog == 0 ? 2u : 1u)) return 1;
  int64_t dims[2] = {2, 3};
  tt_type_t t = tt_type_make(TT_F32, 2, dims);
  tt_pjrt_buffer_t *a = NULL, *b = NULL, *outs[2] = {NULL, NULL};
  tt_status_t st = tt_pjrt_buffer_from_host(p, device, k_a, &t, &a);
  if (!st) st = tt_pjrt_buffer_from_host(p, device, k_b, &t, &b);
  tt_pjrt_buffer_t* args[2] = {a, b};
  if (!st) st = tt_pjrt_execute(p, e, device, args, 2, outs, nout);
  float r[6] = {0}, cols[3] = {0};
  if (!st) st = tt_pjrt_buffer_to_host(p, outs[0], r, sizeof(r));
  if (!st && prog == 0) st = tt_pjrt_buffer_to_host(p, outs[1], cols, sizeof(cols));
  tt_pjrt_buffer_destroy(p, a);
  tt_pjrt_buffer_destroy(p, b);
  tt_pjrt_buffer_destroy(p, outs[0]);
  tt_pjrt_buffer_destroy(p, outs[1]);
  if (st) {
    fprintf(stderr, "  run: %s\n", tt_status_message(st));
    tt_status_free(st);
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < 6; i++) {
    float want = prog == 0 ? k_a[i] + k_b[i] : prog == 1 ? k_a[i] * k_b[i] : k_a[i] - k_b[i];
    bad |= r[i] != want;
  }
  for (int j = 0; prog == 0 && j < 3; j++)
    bad |= cols[j] != (k_a[j] + k_b[j]) + (k_a[3 + j] + k_b[3 + j]);
  return bad;
}

/* ---- files ------------------------------------------------------------------------------- */
static void subdir(char* buf, size_t cap, int i, const char* what) {
  snprintf(buf, cap, "%s/%s-%s", g_root, g_names[i], what);
}

static unsigned char* read_all(const char* path, size_t* n) {
  *n = 0;
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* d = malloc((size_t)sz + 1);
  if (d && fread(d, 1, (size_t)sz, f) != (size_t)sz) {
    free(d);
    d = NULL;
  }
  fclose(f);
  if (d) *n = (size_t)sz;
  return d;
}

static int write_all(const char* path, const void* d, size_t n) {
  FILE* f = fopen(path, "wb");
  if (!f) return 1;
  int bad = fwrite(d, 1, n, f) != n;
  return fclose(f) != 0 || bad;
}

static int count_files(const char* dir, int* others) {
  DIR* d = opendir(dir);
  int n = 0;
  *others = 0;
  if (!d) return -1;
  for (struct dirent* e; (e = readdir(d));) {
    if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, ".."))) continue;
    size_t l = strlen(e->d_name);
    if (l == 23 && !strcmp(e->d_name + 16, ".ttexec")) n++;
    else if (!(l == 23 && !strcmp(e->d_name + 16, ".ttlist"))) (*others)++;
  }
  closedir(d);
  return n;
}

/* The start-up lists in dir; the path of the last one found goes to path. */
static int count_lists(const char* dir, char* path, size_t cap) {
  DIR* d = opendir(dir);
  int n = 0;
  if (!d) return -1;
  for (struct dirent* e; (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    if (l == 23 && !strcmp(e->d_name + 16, ".ttlist")) {
      n++;
      if (path) snprintf(path, cap, "%s/%s", dir, e->d_name);
    }
  }
  closedir(d);
  return n;
}

static int rm_entry(const char* path, const struct stat* sb, int flag, struct FTW* ftw) {
  (void)sb, (void)flag, (void)ftw;
  chmod(path, 0700);
  return remove(path);
}

/* ---- PJRT: serialize, load in a fresh client, identity ----------------------------------- */
static void check_serialize(int i) {
  tt_pjrt_t* p = g_plugins[i];
  TT_CHECK(tt_pjrt_can_serialize(p));
  tt_pjrt_exec_t *e = NULL, *e2 = NULL;
  double t0 = now();
  TT_CHECK_OK(compile(p, 0, &e));
  double t_compile = now() - t0;
  void* bytes = NULL;
  size_t len = 0;
  t0 = now();
  tt_status_t st = tt_pjrt_exec_serialize(p, e, &bytes, &len);
  double t_ser = now() - t0;
  tt_pjrt_exec_destroy(p, e);
  TT_CHECK_OK(st);
  TT_CHECK(bytes && len > 0);

  tt_pjrt_t* q = NULL; /* a fresh client: what another process would have */
  st = tt_pjrt_open(g_paths[i], 2, &q);
  double t_load = 1e9;
  for (int k = 0; !st && k < 3; k++) { /* best of 3 */
    tt_pjrt_exec_destroy(q, e2);
    e2 = NULL;
    t0 = now();
    st = tt_pjrt_exec_deserialize(q, bytes, len, &e2);
    double dt = now() - t0;
    if (dt < t_load) t_load = dt;
  }
  int bad = st ? 0 : run_prog(q, e2, 1, 0); /* device 1: still portable */
  t0 = now();
  tt_pjrt_exec_t* e3 = NULL;
  if (!st) st = compile(q, 0, &e3); /* a warm compile, for the comparison */
  double t_compile2 = now() - t0;
  printf("  %s plugin: %zu bytes serialized; compile %.1f ms (again %.1f ms), serialize %.2f ms, "
         "load %.2f ms\n",
         g_names[i], len, 1e3 * t_compile, 1e3 * t_compile2, 1e3 * t_ser, 1e3 * t_load);

  /* identity: stable across clients, refuses a short buffer */
  char id1[4096], id2[4096], tiny[16];
  tt_status_t sid = st ? NULL : tt_pjrt_identity(p, id1, sizeof(id1));
  if (!st && !sid) sid = tt_pjrt_identity(q, id2, sizeof(id2));
  tt_status_t short_buf = st || sid ? NULL : tt_pjrt_identity(q, tiny, sizeof(tiny));
  if (!st && !sid) printf("  identity: %s\n", id1);
  tt_pjrt_exec_destroy(q, e2);
  tt_pjrt_exec_destroy(q, e3);
  tt_pjrt_close(q);
  free(bytes);
  TT_CHECK_OK(st);
  TT_CHECK(!bad);
  TT_CHECK_OK(sid);
  TT_CHECK(!strcmp(id1, id2));
  TT_CHECK(strstr(id1, i ? "api=0.81" : "api=0.115") && strstr(id1, "host=") &&
           strstr(id1, "mtime="));
  TT_CHECK(short_buf && tt_status_code(short_buf) == TT_OUT_OF_RANGE);
  tt_status_free(short_buf);
}
static void test_serialize(void) { FOR_EACH_PLUGIN(check_serialize); }

/* Bytes that are not an executable: a status from the plugin, not a crash. */
static void check_garbage(int i) {
  tt_pjrt_t* p = g_plugins[i];
  unsigned char junk[256];
  for (size_t k = 0; k < sizeof(junk); k++) junk[k] = (unsigned char)(k * 37 + 11);
  tt_pjrt_exec_t* e = NULL;
  tt_status_t st = tt_pjrt_exec_deserialize(p, junk, sizeof(junk), &e);
  TT_CHECK(st && !e);
  TT_CHECK(strstr(tt_status_message(st), "serialized executable"));
  tt_status_free(st);
}
static void test_garbage(void) { FOR_EACH_PLUGIN(check_garbage); }

/* ---- put, then get in a fresh cache object and a fresh client ---------------------------- */
static void check_put_get(int i) {
  char dir[512];
  subdir(dir, sizeof(dir), i, "basic");
  tt_pjrt_t* p = g_plugins[i];
  tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
  TT_CHECK(c != NULL);
  TT_CHECK(!strcmp(tt_disk_cache_dir(c), dir));
  tt_pjrt_exec_t* e = NULL;
  TT_CHECK_OK(compile(p, 0, &e));
  TT_CHECK_OK(tt_disk_cache_put(c, KEY(k_key_a), e));
  tt_pjrt_exec_destroy(p, e);
  tt_disk_cache_stats_t s;
  tt_disk_cache_stats(c, &s);
  tt_disk_cache_close(c);
  TT_CHECK(s.writes == 1 && s.errors == 0);

  tt_pjrt_t* q = NULL;
  TT_CHECK_OK(tt_pjrt_open(g_paths[i], 2, &q));
  char slash[600]; /* the same directory, spelled with a trailing slash */
  snprintf(slash, sizeof(slash), "%s/", dir);
  c = tt_disk_cache_open(q, slash);
  tt_pjrt_exec_t *hit = NULL, *miss = NULL;
  double t0 = now();
  tt_status_t st = c ? tt_disk_cache_get(c, KEY(k_key_a), &hit) : NULL;
  double t_get = now() - t0;
  if (!st && c) st = tt_disk_cache_get(c, KEY(k_key_b), &miss);
  int bad = hit ? run_prog(q, hit, 0, 0) : 1;
  tt_disk_cache_stats(c, &s);
  printf("  %s plugin: get (read, check, load) %.2f ms\n", g_names[i], 1e3 * t_get);
  tt_pjrt_exec_destroy(q, hit);
  tt_pjrt_exec_destroy(q, miss);
  tt_disk_cache_close(c);
  tt_pjrt_close(q);
  TT_CHECK(c != NULL);
  TT_CHECK_OK(st);
  TT_CHECK(hit != NULL && !bad);
  TT_CHECK(miss == NULL);
  TT_CHECK(s.hits == 1 && s.misses == 1 && s.rejected == 0 && s.errors == 0 && s.writes == 0);
}
static void test_put_get(void) { FOR_EACH_PLUGIN(check_put_get); }

/* XLA_FLAGS changes what the plugin compiles: an entry written under other
 * flags is not served (another name: a miss), and is again under the same. */
static void check_xla_flags(int i) {
  char dir[512];
  subdir(dir, sizeof(dir), i, "xla-flags");
  tt_pjrt_t* p = g_plugins[i];
  const char* old = getenv("XLA_FLAGS");
  char* saved = old ? strdup(old) : NULL;
  unsetenv("XLA_FLAGS");
  tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
  tt_pjrt_exec_t* e = NULL;
  tt_status_t st = c ? compile(p, 0, &e) : NULL;
  if (!st && c) st = tt_disk_cache_put(c, KEY(k_key_a), e);
  tt_pjrt_exec_destroy(p, e);
  tt_disk_cache_close(c);
  setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=true", 1);
  tt_disk_cache_t* other = tt_disk_cache_open(p, dir);
  tt_pjrt_exec_t *miss = NULL, *hit = NULL;
  if (!st && other) st = tt_disk_cache_get(other, KEY(k_key_a), &miss);
  tt_disk_cache_stats_t so = {0};
  tt_disk_cache_stats(other, &so);
  tt_disk_cache_close(other);
  unsetenv("XLA_FLAGS");
  tt_disk_cache_t* same = tt_disk_cache_open(p, dir);
  if (!st && same) st = tt_disk_cache_get(same, KEY(k_key_a), &hit);
  tt_pjrt_exec_destroy(p, miss);
  tt_pjrt_exec_destroy(p, hit);
  tt_disk_cache_close(same);
  if (saved) setenv("XLA_FLAGS", saved, 1);
  free(saved);
  TT_CHECK(c && other && same);
  TT_CHECK_OK(st);
  TT_CHECK(miss == NULL && so.misses == 1 && so.rejected == 0);
  TT_CHECK(hit != NULL);
}
static void test_xla_flags(void) { FOR_EACH_PLUGIN(check_xla_flags); }

/* ---- damaged and foreign entries: each a counted miss ------------------------------------ */
static void fix_checksum(unsigned char* f, size_t n) {
  uint64_t h = tt_disk_cache_checksum(f, n);
  memcpy(f + TT_DISK_CACHE_CHECKSUM_AT, &h, 8);
}

/* get(key) must miss with one more rejected entry. */
static int expect_rejected(tt_disk_cache_t* c, tt_pjrt_t* p, const void* key, size_t len,
                           const char* what) {
  tt_disk_cache_stats_t s0, s1;
  tt_disk_cache_stats(c, &s0);
  tt_pjrt_exec_t* e = NULL;
  tt_status_t st = tt_disk_cache_get(c, key, len, &e);
  tt_disk_cache_stats(c, &s1);
  int bad = st || e || s1.misses != s0.misses + 1 || s1.rejected != s0.rejected + 1;
  if (bad) fprintf(stderr, "  %s: not rejected\n", what);
  tt_status_free(st);
  tt_pjrt_exec_destroy(p, e);
  return bad;
}

static void check_corrupt(int i) {
  char dir[512];
  subdir(dir, sizeof(dir), i, "corrupt");
  tt_pjrt_t* p = g_plugins[i];
  tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
  TT_CHECK(c != NULL);
  tt_pjrt_exec_t* e = NULL;
  tt_status_t st = compile(p, 0, &e);
  if (!st) st = tt_disk_cache_put(c, KEY(k_key_a), e);
  tt_pjrt_exec_destroy(p, e);
  tt_sbuf_t pa, pb;
  tt_sbuf_init(&pa);
  tt_sbuf_init(&pb);
  tt_disk_cache_entry_path(c, KEY(k_key_a), &pa);
  tt_disk_cache_entry_path(c, KEY(k_key_b), &pb);
  size_t n = 0;
  unsigned char* good = st ? NULL : read_all(pa.data, &n);
  unsigned char* f = malloc(n + 1);
  int bad = !good || !f || n <= TT_DISK_CACHE_HEADER + sizeof(k_key_a);
  size_t key_at = TT_DISK_CACHE_HEADER, ident_at = key_at + sizeof(k_key_a);
  uint32_t ident_len = 0;
  if (!bad) memcpy(&ident_len, good + 12, 4);
#define CASE(what, size, edit)                                                      \
  if (!bad) {                                                                       \
    memcpy(f, good, n);                                                             \
    edit;                                                                           \
    bad |= write_all(pa.data, f, (size));                                           \
    bad |= expect_rejected(c, p, KEY(k_key_a), what);                               \
  }
  CASE("truncated to half", n / 2, (void)0);
  CASE("truncated by one byte", n - 1, (void)0);
  CASE("truncated inside the header", 20, (void)0);
  CASE("zero-length file", 0, (void)0);
  CASE("a byte appended", n + 1, f[n] = 0);
  CASE("flipped payload byte", n, f[n - 1] ^= 0x10);
  CASE("flipped payload byte, mid", n, f[ident_at + ident_len + 100] ^= 0x01);
  CASE("flipped header byte", n, f[24] ^= 0x01);
  CASE("flipped key byte", n, f[key_at + 3] ^= 0x20);
  CASE("flipped checksum byte", n, f[TT_DISK_CACHE_CHECKSUM_AT + 7] ^= 0x80);
  CASE("wrong magic", n, (f[0] = 'X', fix_checksum(f, n)));
  CASE("wrong version", n, (f[8] = 2, fix_checksum(f, n)));
  CASE("foreign identity", n, (f[ident_at + ident_len - 1] ^= 0x01, fix_checksum(f, n)));
  CASE("payload length past the end", n, (f[24] += 1, fix_checksum(f, n)));
#undef CASE
  /* another key's entry under this key's name (a hash collision) */
  if (!bad) {
    bad |= write_all(pb.data, good, n);
    bad |= expect_rejected(c, p, KEY(k_key_b), "entry of another key");
    unlink(pb.data);
  }
  /* a directory where the file should be */
  if (!bad) {
    unlink(pa.data);
    bad |= mkdir(pa.data, 0700) != 0;
    bad |= expect_rejected(c, p, KEY(k_key_a), "a directory");
    rmdir(pa.data);
  }
  /* the intact file hits again: the cases failed for their own reason */
  tt_pjrt_exec_t* hit = NULL;
  if (!bad) bad |= write_all(pa.data, good, n);
  if (!bad) st = tt_disk_cache_get(c, KEY(k_key_a), &hit);
  if (!bad && !st) bad |= !hit || run_prog(p, hit, 0, 0);
  tt_pjrt_exec_destroy(p, hit);
  tt_disk_cache_stats_t s;
  tt_disk_cache_stats(c, &s);
  free(good);
  free(f);
  tt_sbuf_free(&pa);
  tt_sbuf_free(&pb);
  tt_disk_cache_close(c);
  TT_CHECK_OK(st);
  TT_CHECK(!bad);
  TT_CHECK(s.hits == 1 && s.rejected == 16 && s.misses == 16 && s.errors == 0);
}
static void test_corrupt(void) { FOR_EACH_PLUGIN(check_corrupt); }

/* Two plugins share a directory: their entries have different names, and
 * one's entry under the other's name is refused. */
static void test_foreign_plugin(void) {
  if (!g_plugins[0] || !g_plugins[1]) return;
  char dir[512];
  subdir(dir, sizeof(dir), 0, "shared-by-both");
  tt_disk_cache_t* c[2] = {tt_disk_cache_open(g_plugins[0], dir),
                           tt_disk_cache_open(g_plugins[1], dir)};
  tt_pjrt_exec_t* e = NULL;
  tt_status_t st = c[0] && c[1] ? compile(g_plugins[1], 1, &e) : NULL;
  if (e) st = tt_disk_cache_put(c[1], KEY(k_key_a), e);
  tt_pjrt_exec_destroy(g_plugins[1], e);
  tt_sbuf_t path[2];
  for (int i = 0; i < 2; i++) {
    tt_sbuf_init(&path[i]);
    tt_disk_cache_entry_path(c[i], KEY(k_key_a), &path[i]);
  }
  bool distinct = c[0] && c[1] && strcmp(path[0].data, path[1].data);
  tt_pjrt_exec_t* none = NULL;
  if (!st && distinct) st = tt_disk_cache_get(c[0], KEY(k_key_a), &none); /* absent: a miss */
  tt_disk_cache_stats_t s0;
  tt_disk_cache_stats(c[0], &s0);
  size_t n = 0;
  unsigned char* old_entry = distinct ? read_all(path[1].data, &n) : NULL;
  int bad = !old_entry || write_all(path[0].data, old_entry, n);
  if (!bad) bad = expect_rejected(c[0], g_plugins[0], KEY(k_key_a), "the other plugin's entry");
  free(old_entry);
  for (int i = 0; i < 2; i++) {
    tt_sbuf_free(&path[i]);
    tt_disk_cache_close(c[i]);
  }
  TT_CHECK_OK(st);
  TT_CHECK(distinct);
  TT_CHECK(none == NULL && s0.misses == 1 && s0.rejected == 0);
  TT_CHECK(!bad);
}

/* ---- disabled caches and failed writes --------------------------------------------------- */
static void check_disabled(int i) {
  tt_pjrt_t* p = g_plugins[i];
  char file[512], under[600], ro[512];
  subdir(file, sizeof(file), i, "plainfile");
  TT_CHECK(!write_all(file, "x", 1));
  snprintf(under, sizeof(under), "%s/cache", file); /* a directory under a regular file */
  TT_CHECK(tt_disk_cache_open(p, under) == NULL);
  subdir(ro, sizeof(ro), i, "readonly");
  TT_CHECK(mkdir(ro, 0500) == 0);
  if (geteuid() != 0) TT_CHECK(tt_disk_cache_open(p, ro) == NULL);
  else printf("  (running as root: a mode-0500 directory stays writable, not checked)\n");
  setenv("TORCH_TPU_DISK_CACHE", "0", 1);
  tt_disk_cache_t* off = tt_disk_cache_open(p, g_root);
  unsetenv("TORCH_TPU_DISK_CACHE");
  TT_CHECK(off == NULL);

  /* a NULL cache: misses, puts nothing, counts nothing */
  tt_pjrt_exec_t* e = NULL;
  TT_CHECK_OK(compile(p, 1, &e));
  tt_pjrt_exec_t* got = e;
  tt_status_t st = tt_disk_cache_get(NULL, KEY(k_key_a), &got);
  if (!st) st = tt_disk_cache_put(NULL, KEY(k_key_a), e);
  if (!st) st = tt_disk_cache_clear(NULL);
  tt_disk_cache_stats_t s;
  tt_disk_cache_stats(NULL, &s);
  /* the directory goes away after open: puts fail, counted; gets miss */
  char gone[512];
  subdir(gone, sizeof(gone), i, "gone");
  tt_disk_cache_t* c = st ? NULL : tt_disk_cache_open(p, gone);
  tt_pjrt_exec_t* miss = NULL;
  tt_status_t st2 = NULL;
  if (c) {
    rmdir(gone);
    st2 = tt_disk_cache_put(c, KEY(k_key_a), e);
    if (!st2) st2 = tt_disk_cache_get(c, KEY(k_key_a), &miss);
  }
  tt_disk_cache_stats_t s2;
  tt_disk_cache_stats(c, &s2);
  tt_disk_cache_close(c);
  tt_pjrt_exec_destroy(p, e);
  TT_CHECK_OK(st);
  TT_CHECK_OK(st2);
  TT_CHECK(got == NULL);
  TT_CHECK(s.hits == 0 && s.misses == 0 && s.writes == 0 && s.errors == 0);
  TT_CHECK(c != NULL && miss == NULL);
  TT_CHECK(s2.writes == 0 && s2.errors == 1 && s2.misses == 1 && s2.rejected == 0);
}
static void test_disabled(void) { FOR_EACH_PLUGIN(check_disabled); }

/* ---- where the directory is: TORCH_TPU_CACHE_DIR, else ~/.cache/torch_tpu ---------------- */
static void test_default_dir(void) {
  tt_pjrt_t* p = g_plugins[0] ? g_plugins[0] : g_plugins[1];
  if (!p) return;
  char env_dir[512], home[512], want[600];
  snprintf(env_dir, sizeof(env_dir), "%s/from-env/a/b", g_root);
  snprintf(home, sizeof(home), "%s/home", g_root);
  snprintf(want, sizeof(want), "%s/.cache/torch_tpu", home);
  const char* old_home = getenv("HOME");
  char* saved_home = old_home ? strdup(old_home) : NULL;
  setenv("TORCH_TPU_CACHE_DIR", env_dir, 1);
  tt_disk_cache_t* a = tt_disk_cache_open(p, NULL);
  unsetenv("TORCH_TPU_CACHE_DIR");
  setenv("HOME", home, 1);
  tt_disk_cache_t* b = tt_disk_cache_open(p, NULL);
  if (saved_home) setenv("HOME", saved_home, 1);
  else unsetenv("HOME");
  free(saved_home);
  struct stat sb;
  bool private_dir = stat(want, &sb) == 0 && (sb.st_mode & 0777) == 0700;
  bool ok_a = a && !strcmp(tt_disk_cache_dir(a), env_dir);
  bool ok_b = b && !strcmp(tt_disk_cache_dir(b), want);
  tt_disk_cache_close(a);
  tt_disk_cache_close(b);
  TT_CHECK(ok_a);
  TT_CHECK(ok_b);
  TT_CHECK(private_dir);
}

/* ---- clear: our files only --------------------------------------------------------------- */
static void check_clear(int i) {
  char dir[512], notes[600], stale[600];
  subdir(dir, sizeof(dir), i, "clear");
  tt_pjrt_t* p = g_plugins[i];
  tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
  TT_CHECK(c != NULL);
  tt_pjrt_exec_t* e = NULL;
  tt_status_t st = compile(p, 2, &e);
  for (int k = 0; !st && k < 3; k++) {
    char key[8] = {'k', (char)k};
    st = tt_disk_cache_put(c, key, sizeof(key), e);
  }
  tt_pjrt_exec_destroy(p, e);
  snprintf(notes, sizeof(notes), "%s/notes.txt", dir);
  snprintf(stale, sizeof(stale), "%s/.0123456789abcdef.ttexec.77.3.tmp", dir);
  int bad = write_all(notes, "mine", 4) | write_all(stale, "half", 4);
  int others = 0, before = count_files(dir, &others), lists = count_lists(dir, NULL, 0);
  if (!st) st = tt_disk_cache_clear(c);
  int others2 = 0, after = count_files(dir, &others2), lists2 = count_lists(dir, NULL, 0);
  struct stat sb;
  bool notes_kept = stat(notes, &sb) == 0, stale_gone = stat(stale, &sb) != 0;
  tt_pjrt_exec_t* got = NULL;
  char key0[8] = {'k', 0};
  if (!st) st = tt_disk_cache_get(c, key0, sizeof(key0), &got);
  tt_disk_cache_close(c);
  TT_CHECK_OK(st);
  TT_CHECK(!bad);
  TT_CHECK(before == 3 && others == 2);
  TT_CHECK(after == 0 && others2 == 1 && notes_kept && stale_gone);
  TT_CHECK(lists == 1 && lists2 == 0); /* the start-up list goes too */
  TT_CHECK(got == NULL);
}
static void test_clear(void) { FOR_EACH_PLUGIN(check_clear); }

/* ---- the bound: TORCH_TPU_CACHE_MAX_SIZE ------------------------------------------------ */
/* The bytes of the cache's own files (entries and lists) in dir. */
static long long dir_bytes(const char* dir) {
  DIR* d = opendir(dir);
  long long total = 0;
  if (!d) return -1;
  for (struct dirent* e; (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    struct stat sb;
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    if (l == 23 && (!strcmp(e->d_name + 16, ".ttexec") || !strcmp(e->d_name + 16, ".ttlist")) &&
        stat(path, &sb) == 0)
      total += sb.st_size;
  }
  closedir(d);
  return total;
}

/* Sets the file's times to `ago` seconds before now. */
static int set_age(const char* path, int ago) {
  struct timespec t[2];
  clock_gettime(CLOCK_REALTIME, &t[0]);
  t[0].tv_sec -= ago;
  t[1] = t[0];
  return utimensat(AT_FDCWD, path, t, 0);
}

static bool entry_exists(tt_disk_cache_t* c, const void* key, size_t len) {
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  tt_disk_cache_entry_path(c, key, len, &path);
  struct stat sb;
  bool there = stat(path.data, &sb) == 0;
  tt_sbuf_free(&path);
  return there;
}

/* Puts key k<n> (program 2; every entry has the same size) and makes it
 * `ago` seconds old. */
static tt_status_t put_aged(tt_disk_cache_t* c, tt_pjrt_exec_t* e, int n, int ago) {
  char key[8] = {'k', (char)n};
  tt_status_t st = tt_disk_cache_put(c, key, sizeof(key), e);
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  tt_disk_cache_entry_path(c, key, sizeof(key), &path);
  if (!st && ago && set_age(path.data, ago) != 0)
    st = tt_status_make(TT_UNAVAILABLE, "cannot set the time of %s", path.data);
  tt_sbuf_free(&path);
  return st;
}

#define KEYN(n) ((char[8]){'k', (char)(n)}), 8

/* Five entries' room: the least recently used go first (a hit makes an
 * entry recent), to 90% of the bound; a second handle (another process)
 * on the directory keeps to the same bound and counts its own evictions. */
static void check_bound(int i) {
  char dir[512], size[32];
  subdir(dir, sizeof(dir), i, "bound");
  tt_pjrt_t* p = g_plugins[i];
  tt_pjrt_exec_t* e = NULL;
  TT_CHECK_OK(compile(p, 2, &e));
  /* the size of one entry */
  tt_disk_cache_t* probe = tt_disk_cache_open(p, dir);
  tt_status_t st = probe ? put_aged(probe, e, 99, 0) : NULL;
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  tt_disk_cache_entry_path(probe, KEYN(99), &path);
  struct stat sb;
  long long entry = probe && !st && stat(path.data, &sb) == 0 ? (long long)sb.st_size : 0;
  tt_sbuf_free(&path);
  if (!st) st = tt_disk_cache_clear(probe);
  tt_disk_cache_close(probe);
  TT_CHECK_OK(st);
  TT_CHECK(entry > 1000);
  long long bound = 5 * entry;
  snprintf(size, sizeof(size), "%lld", bound);
  setenv("TORCH_TPU_CACHE_MAX_SIZE", size, 1);
  tt_disk_cache_t *a = tt_disk_cache_open(p, dir), *b = tt_disk_cache_open(p, dir);
  /* k0..k3, oldest first; then a hit on k0 */
  for (int k = 0; a && !st && k < 4; k++) st = put_aged(a, e, k, 100 - 10 * k);
  tt_pjrt_exec_t* hit = NULL;
  if (!st && a) st = tt_disk_cache_get(a, KEYN(0), &hit);
  bool hit_ok = hit && !run_prog(p, hit, 0, 2);
  tt_pjrt_exec_destroy(p, hit);
  long long before = dir_bytes(dir);
  /* k4 passes the bound: k1 goes (k0 was used since) */
  if (!st && a) st = put_aged(a, e, 4, 0);
  tt_disk_cache_stats_t sa1 = {0};
  tt_disk_cache_stats(a, &sa1);
  bool k1_gone = a && !entry_exists(a, KEYN(1)), rest1 = true;
  for (int k = 0; a && k < 5; k++) rest1 &= k == 1 || entry_exists(a, KEYN(k));
  long long after1 = dir_bytes(dir);
  /* the other handle's first put scans: k2 goes; then a's estimate, grown
   * by its own put, makes it scan again: k3 goes */
  if (!st && b) st = put_aged(b, e, 5, 0);
  bool k2_gone = a && !entry_exists(a, KEYN(2));
  if (!st && a) st = put_aged(a, e, 6, 0);
  bool k3_gone = a && !entry_exists(a, KEYN(3)), rest2 = true;
  for (int k = 0; a && k < 7; k++) rest2 &= (k >= 1 && k <= 3) || entry_exists(a, KEYN(k));
  long long after2 = dir_bytes(dir);
  tt_disk_cache_stats_t sa2 = {0}, sb2 = {0};
  tt_disk_cache_stats(a, &sa2);
  tt_disk_cache_stats(b, &sb2);
  tt_disk_cache_close(a);
  tt_disk_cache_close(b);
  unsetenv("TORCH_TPU_CACHE_MAX_SIZE");
  tt_pjrt_exec_destroy(p, e);
  printf("  %s plugin: entries of %lld bytes, bound %lld: %lld -> %lld bytes\n", g_names[i], entry, bound,
         before, after1);
  TT_CHECK(a && b);
  TT_CHECK_OK(st);
  TT_CHECK(hit_ok);
  TT_CHECK(before < bound);
  TT_CHECK(sa1.evictions == 1 && k1_gone && rest1);
  TT_CHECK(after1 <= bound - bound / 10);
  TT_CHECK(k2_gone && k3_gone && rest2);
  TT_CHECK(sb2.evictions == 1 && sa2.evictions == 2);
  TT_CHECK(after2 <= bound - bound / 10);
  TT_CHECK(sa2.errors == 0 && sb2.errors == 0 && sa2.writes == 6 && sb2.writes == 1);
}
static void test_bound(void) { FOR_EACH_PLUGIN(check_bound); }

/* TORCH_TPU_CACHE_MAX_SIZE=0: no bound. Unset: 4G, nothing removed. */
static void check_no_bound(int i) {
  char dir[512];
  subdir(dir, sizeof(dir), i, "unbounded");
  tt_pjrt_t* p = g_plugins[i];
  tt_pjrt_exec_t* e = NULL;
  TT_CHECK_OK(compile(p, 2, &e));
  tt_status_t st = NULL;
  tt_disk_cache_stats_t s[2];
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0) setenv("TORCH_TPU_CACHE_MAX_SIZE", "0", 1);
    tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
    for (int k = 0; c && !st && k < 8; k++) st = put_aged(c, e, 10 * pass + k, 0);
    tt_disk_cache_stats(c, &s[pass]);
    tt_disk_cache_close(c);
    unsetenv("TORCH_TPU_CACHE_MAX_SIZE");
  }
  tt_pjrt_exec_destroy(p, e);
  int others = 0;
  TT_CHECK_OK(st);
  TT_CHECK(s[0].writes == 8 && s[0].evictions == 0 && s[1].writes == 8 && s[1].evictions == 0);
  TT_CHECK(count_files(dir, &others) == 16);
}
static void test_no_bound(void) { FOR_EACH_PLUGIN(check_no_bound); }

/* ---- trust: a directory others may write is not used ------------------------------------- */
/* Opens the cache on dir with stderr going to err (NUL-terminated). */
static tt_disk_cache_t* open_capturing(tt_pjrt_t* p, const char* dir, char* err, size_t cap) {
  char file[600];
  snprintf(file, sizeof(file), "%s/stderr.txt", g_root);
  fflush(stderr);
  int saved = dup(2), fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) dup2(fd, 2);
  tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ssize_t n = fd >= 0 ? pread(fd, err, cap - 1, 0) : -1;
  err[n > 0 ? n : 0] = 0;
  if (fd >= 0) close(fd);
  unlink(file);
  return c;
}

/* Opens a cache on a directory of the given mode; true if it is refused
 * (NULL, one warning with `reason`, nothing written), false if it is
 * taken. *bad set if it is neither cleanly. */
static bool refused(tt_pjrt_t* p, const char* dir, const char* reason, int* bad) {
  char err[2048];
  tt_disk_cache_t* c = open_capturing(p, dir, err, sizeof(err));
  int others = 0, files = count_files(dir, &others);
  if (c) {
    *bad |= err[0] != 0; /* taken: no warning */
    tt_disk_cache_close(c);
    return false;
  }
  bool said = strstr(err, "[torch_tpu] compilation cache disabled: ") && strstr(err, dir) &&
              strstr(err, reason) && strstr(err, "using the memory cache only") &&
              strchr(err, '\n') == err + strlen(err) - 1; /* one line */
  if (!said) fprintf(stderr, "  refused %s without the reason \"%s\": %s\n", dir, reason, err);
  *bad |= !said || files != 0 || others != 0;
  return true;
}

static void check_trust(int i) {
  tt_pjrt_t* p = g_plugins[i];
  char open_dir[512], group_dir[512], ok_dir[512], rx_dir[512], link_ok[512], link_bad[512];
  int bad = 0;
  subdir(open_dir, sizeof(open_dir), i, "mode-0777");
  subdir(group_dir, sizeof(group_dir), i, "mode-0770");
  subdir(ok_dir, sizeof(ok_dir), i, "mode-0700");
  subdir(rx_dir, sizeof(rx_dir), i, "mode-0755");
  subdir(link_ok, sizeof(link_ok), i, "link-to-0700");
  subdir(link_bad, sizeof(link_bad), i, "link-to-0777");
  const char* dirs[4] = {open_dir, group_dir, ok_dir, rx_dir};
  const mode_t modes[4] = {0777, 0770, 0700, 0755};
  for (int k = 0; k < 4; k++) TT_CHECK(mkdir(dirs[k], 0700) == 0 && chmod(dirs[k], modes[k]) == 0);
  TT_CHECK(symlink(ok_dir, link_ok) == 0 && symlink(open_dir, link_bad) == 0);
  bool r777 = refused(p, open_dir, "is writable by other users (mode 0777)", &bad);
  bool r770 = refused(p, group_dir, "is writable by its group (mode 0770)", &bad);
  bool r700 = refused(p, ok_dir, "", &bad), r755 = refused(p, rx_dir, "", &bad);
  bool rl_ok = refused(p, link_ok, "", &bad);
  bool rl_bad = refused(p, link_bad, "leads to a directory writable by other users (mode 0777)", &bad);
  /* a sticky, world-writable directory (/tmp's mode) too */
  TT_CHECK(chmod(open_dir, 01777) == 0);
  bool r1777 = refused(p, open_dir, "is writable by other users (mode 1777)", &bad);
  TT_CHECK(!bad);
  TT_CHECK(r777 && r770 && r1777 && rl_bad);
  TT_CHECK(!r700 && !r755 && !rl_ok);

  /* another user's directory (root can make one; others cannot) */
  char theirs[512];
  subdir(theirs, sizeof(theirs), i, "another-user");
  TT_CHECK(mkdir(theirs, 0700) == 0);
  if (geteuid() == 0) {
    TT_CHECK(chown(theirs, 12345, 12345) == 0);
    TT_CHECK(refused(p, theirs, "is owned by uid 12345, not by this user (uid 0)", &bad));
    TT_CHECK(!bad);
  } else {
    printf("  (not root: another user's directory is not checked)\n");
  }
}
static void test_trust(void) { FOR_EACH_PLUGIN(check_trust); }

/* What the cache creates is private whatever the umask: directories 0700
 * (its parents only as far as it creates them: a world-writable parent it
 * did not create is the user's choice), entries and lists 0600. */
static void check_private_files(int i) {
  tt_pjrt_t* p = g_plugins[i];
  char shared[512], dir[600], mid[600], path[700];
  subdir(shared, sizeof(shared), i, "shared-parent");
  TT_CHECK(mkdir(shared, 0700) == 0 && chmod(shared, 01777) == 0);
  snprintf(mid, sizeof(mid), "%s/mine", shared);
  snprintf(dir, sizeof(dir), "%s/mine/cache", shared);
  mode_t old = umask(0);
  tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
  tt_pjrt_exec_t* e = NULL;
  tt_status_t st = c ? compile(p, 1, &e) : NULL;
  if (!st && c) st = tt_disk_cache_put(c, KEY(k_key_a), e);
  umask(old);
  tt_pjrt_exec_destroy(p, e);
  tt_sbuf_t entry;
  tt_sbuf_init(&entry);
  tt_disk_cache_entry_path(c, KEY(k_key_a), &entry);
  struct stat s_dir, s_mid, s_entry, s_list;
  int lists = count_lists(dir, path, sizeof(path));
  bool ok = stat(dir, &s_dir) == 0 && stat(mid, &s_mid) == 0 && c &&
            stat(entry.data, &s_entry) == 0 && lists == 1 && stat(path, &s_list) == 0;
  tt_sbuf_free(&entry);
  tt_disk_cache_close(c);
  TT_CHECK(c != NULL);
  TT_CHECK_OK(st);
  TT_CHECK(ok);
  TT_CHECK((s_dir.st_mode & 07777) == 0700 && (s_mid.st_mode & 07777) == 0700);
  TT_CHECK((s_entry.st_mode & 07777) == 0600 && (s_list.st_mode & 07777) == 0600);
}
static void test_private_files(void) { FOR_EACH_PLUGIN(check_private_files); }

/* ---- the start-up list: the entries the last run of this command used, loaded at open ---- */
static const char k_key_c[] = "sig:sub\0f32[2,3]";

/* The 16-hex name of key's entry. */
static void entry_name(tt_disk_cache_t* c, const void* key, size_t len, char name[17]) {
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  tt_disk_cache_entry_path(c, key, len, &path);
  snprintf(name, 17, "%s", path.data + path.len - 23);
  tt_sbuf_free(&path);
}

/* Gets the three keys in `order` (0: a, 1: b, 2: c, programs 0, 1, 2) from a
 * fresh cache object on q after its thread has loaded; puts what misses.
 * Returns the number of wrong results; stats to s. */
static const char* k_list_keys[3] = {k_key_a, k_key_b, k_key_c};
static const size_t k_list_lens[3] = {sizeof(k_key_a), sizeof(k_key_b), sizeof(k_key_c)};
static int get_in_order(tt_pjrt_t* q, const char* dir, const int* order, int n, bool wait,
                        tt_disk_cache_stats_t* s) {
  tt_disk_cache_t* c = tt_disk_cache_open(q, dir);
  if (!c) return 100;
  if (wait) tt_disk_cache_wait_loaded(c);
  int bad = 0;
  for (int k = 0; k < n; k++) {
    int j = order[k];
    tt_pjrt_exec_t* e = NULL;
    tt_status_t st = tt_disk_cache_get(c, k_list_keys[j], k_list_lens[j], &e);
    if (!st && !e) { /* a miss: compile and put, as the runtime does */
      st = compile(q, j, &e);
      if (!st) st = tt_disk_cache_put(c, k_list_keys[j], k_list_lens[j], e);
    }
    bad += st || !e || run_prog(q, e, 0, j);
    tt_status_free(st);
    tt_pjrt_exec_destroy(q, e);
  }
  tt_disk_cache_stats(c, s);
  tt_disk_cache_close(c);
  return bad;
}

/* The names in the list file, in order; -1 if it does not parse. */
static int read_list_names(const char* path, char names[][17], int cap) {
  size_t n = 0;
  unsigned char* f = read_all(path, &n);
  int count = -1;
  if (f && n >= 8 && !memcmp(f, "TTLIST1\n", 8) && (n - 8) % 17 == 0) {
    count = (int)((n - 8) / 17);
    for (int i = 0; i < count && i < cap; i++) {
      memcpy(names[i], f + 8 + 17 * i, 16);
      names[i][16] = 0;
    }
  }
  free(f);
  return count;
}

static void check_startup_list(int i) {
  char dir[512], list[700] = "";
  subdir(dir, sizeof(dir), i, "list");
  tt_pjrt_t* p = g_plugins[i];
  char names[3][17];
  tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
  TT_CHECK(c != NULL);
  for (int j = 0; j < 3; j++) entry_name(c, k_list_keys[j], k_list_lens[j], names[j]);
  tt_disk_cache_close(c);

  /* a cold run: three misses, compiled and put; the list says a, b, c */
  tt_pjrt_t* q = NULL; /* another client: what the next process would have */
  TT_CHECK_OK(tt_pjrt_open(g_paths[i], 1, &q));
  const int abc[3] = {0, 1, 2}, ca[2] = {2, 0};
  tt_disk_cache_stats_t s;
  int bad = get_in_order(p, dir, abc, 3, true, &s);
  int nlists = count_lists(dir, list, sizeof(list));
  char got[8][17];
  int nnames = read_list_names(list, got, 8);
  TT_CHECK(!bad && s.misses == 3 && s.writes == 3 && s.prefetched == 0);
  TT_CHECK(nlists == 1 && nnames == 3);
  for (int j = 0; j < 3 && nnames == 3; j++) TT_CHECK(!strcmp(got[j], names[j]));

  /* a warm run in the same order: all three loaded by the thread */
  struct stat sb0, sb1;
  stat(list, &sb0);
  bad = get_in_order(q, dir, abc, 3, true, &s);
  stat(list, &sb1);
  TT_CHECK(!bad && s.hits == 3 && s.prefetched == 3 && s.misses == 0);
  TT_CHECK(sb0.st_ino == sb1.st_ino); /* the same order: the list is not rewritten */

  /* gets that come before the thread has loaded: served either way */
  bad = get_in_order(q, dir, abc, 3, false, &s);
  TT_CHECK(!bad && s.hits == 3 && s.misses == 0);

  /* a damaged entry: the thread cannot load it; the get reads it, rejects it */
  char path[700];
  snprintf(path, sizeof(path), "%s/%s.ttexec", dir, names[1]);
  size_t n = 0;
  unsigned char* f = read_all(path, &n);
  TT_CHECK(f != NULL);
  if (f) {
    f[n - 5] ^= 0x5a;
    TT_CHECK(write_all(path, f, n) == 0);
  }
  free(f);
  bad = get_in_order(q, dir, abc, 3, true, &s);
  TT_CHECK(!bad && s.hits == 2 && s.prefetched == 2 && s.rejected == 1 && s.writes == 1);

  /* another order: the list is rewritten as this run's (c, a) */
  bad = get_in_order(q, dir, ca, 2, true, &s);
  nnames = read_list_names(list, got, 8);
  TT_CHECK(!bad && s.hits == 2 && s.prefetched == 2);
  TT_CHECK(nnames == 2 && !strcmp(got[0], names[2]) && !strcmp(got[1], names[0]));

  /* a list that does not parse: ignored, then replaced */
  TT_CHECK(write_all(list, "TTLIST1\nnot a name at all\n", 26) == 0);
  bad = get_in_order(q, dir, abc, 3, true, &s);
  nnames = read_list_names(list, got, 8);
  TT_CHECK(!bad && s.hits == 3 && s.prefetched == 0);
  TT_CHECK(nnames == 3);

  /* TORCH_TPU_CACHE_PREFETCH=0: no thread, the same hits */
  setenv("TORCH_TPU_CACHE_PREFETCH", "0", 1);
  bad = get_in_order(q, dir, abc, 3, true, &s);
  unsetenv("TORCH_TPU_CACHE_PREFETCH");
  TT_CHECK(!bad && s.hits == 3 && s.prefetched == 0);

  /* a memory tier of 4 programs: at most 2 loaded ahead, the third read when asked */
  setenv("TORCH_TPU_CACHE_MAX_PROGRAMS", "4", 1);
  bad = get_in_order(q, dir, abc, 3, true, &s);
  unsetenv("TORCH_TPU_CACHE_MAX_PROGRAMS");
  TT_CHECK(!bad && s.hits == 3 && s.prefetched == 2);

  /* a clear: what the thread loaded is not served either */
  c = tt_disk_cache_open(q, dir);
  tt_disk_cache_wait_loaded(c);
  tt_pjrt_exec_t* e = NULL;
  tt_status_t st = tt_disk_cache_clear(c);
  if (!st) st = tt_disk_cache_get(c, KEY(k_key_a), &e);
  tt_disk_cache_stats(c, &s);
  tt_disk_cache_close(c);
  TT_CHECK_OK(st);
  TT_CHECK(e == NULL && s.misses == 1 && s.prefetched == 0);
  tt_pjrt_exec_destroy(q, e);
  bad = get_in_order(q, dir, abc, 3, true, &s); /* compiled and put again */
  TT_CHECK(!bad && s.misses == 3 && s.writes == 3);
  TT_CHECK(read_list_names(list, got, 8) == 3);

  /* closed while the thread loads: it stops, what it loaded is freed */
  for (int k = 0; k < 5; k++) {
    c = tt_disk_cache_open(q, dir);
    if (k & 1) usleep(2000);
    tt_disk_cache_close(c);
  }
  tt_pjrt_close(q);
}
static void test_startup_list(void) { FOR_EACH_PLUGIN(check_startup_list); }

/* ---- two processes fill one directory at once -------------------------------------------- */
#define WRITER_PUTS 50
#define SHARED_KEYS 5

/* Child n: compiles, says it is ready (file "<dir>.ready<n>"), waits for
 * "<dir>.go" so that both write at once, then does 50 puts of its own keys
 * (program 1 + n) interleaved with 50 puts of the keys both children write
 * (program 0). Exit status 0 if every put wrote. */
static bool wait_for_file(const char* path, int seconds) {
  for (int k = 0; k < seconds * 1000; k++) {
    if (access(path, F_OK) == 0) return true;
    usleep(1000);
  }
  return false;
}

static int writer_main(const char* dir, const char* plugin, int n) {
  char ready[600], go[600];
  snprintf(ready, sizeof(ready), "%s.ready%d", dir, n);
  snprintf(go, sizeof(go), "%s.go", dir);
  tt_pjrt_t* p = NULL;
  tt_status_t st = tt_pjrt_open(plugin, 1, &p);
  tt_disk_cache_t* c = st ? NULL : tt_disk_cache_open(p, dir);
  tt_pjrt_exec_t *own = NULL, *shared = NULL;
  if (!st) st = compile(p, 1 + n, &own);
  if (!st) st = compile(p, 0, &shared);
  if (!st && (write_all(ready, "", 0) || !wait_for_file(go, 120)))
    st = tt_status_make(TT_UNAVAILABLE, "no start signal");
  for (int k = 0; c && !st && k < WRITER_PUTS; k++) {
    char key[16] = {'o', (char)n, (char)k};
    st = tt_disk_cache_put(c, key, sizeof(key), own);
    char skey[16] = {'s', (char)(k % SHARED_KEYS)};
    if (!st) st = tt_disk_cache_put(c, skey, sizeof(skey), shared);
  }
  tt_disk_cache_stats_t s;
  tt_disk_cache_stats(c, &s);
  int rc = st || !c || s.writes != 2 * WRITER_PUTS || s.errors != 0;
  if (rc)
    fprintf(stderr, "  writer %d: %s (writes %lld, errors %lld)\n", n,
            st ? tt_status_message(st) : "", (long long)s.writes, (long long)s.errors);
  tt_status_free(st);
  tt_pjrt_exec_destroy(p, own);
  tt_pjrt_exec_destroy(p, shared);
  tt_disk_cache_close(c);
  tt_pjrt_close(p);
  return rc;
}

/* Runs the two writers (plugin i) on dir at once; false if one failed. */
static bool run_writers(int i, const char* dir) {
  pid_t pids[2];
  for (int n = 0; n < 2; n++) {
    char num[16];
    snprintf(num, sizeof(num), "%d", n);
    pids[n] = fork();
    if (pids[n] == 0) { /* exec: the parent's PJRT client does not survive fork */
      execl("/proc/self/exe", "test_runtime_disk_cache", "--writer", dir, g_paths[i], num, (char*)NULL);
      _exit(127);
    }
    if (pids[n] < 0) return false;
  }
  char ready[2][600], go[600];
  for (int n = 0; n < 2; n++) snprintf(ready[n], sizeof(ready[n]), "%s.ready%d", dir, n);
  snprintf(go, sizeof(go), "%s.go", dir);
  /* start both writers together (a writer that died early fails below) */
  for (int n = 0; n < 2; n++) wait_for_file(ready[n], 120);
  write_all(go, "", 0);
  bool ok = true;
  for (int n = 0; n < 2; n++) {
    int status = 0;
    ok &= waitpid(pids[n], &status, 0) == pids[n] && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

static void check_concurrent(int i) {
  char dir[512];
  subdir(dir, sizeof(dir), i, "concurrent");
  TT_CHECK(run_writers(i, dir));

  tt_pjrt_t* p = g_plugins[i];
  tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
  TT_CHECK(c != NULL);
  int misses = 0, wrong = 0;
  for (int n = 0; n < 2; n++)
    for (int k = 0; k < WRITER_PUTS; k++) {
      char key[16] = {'o', (char)n, (char)k};
      tt_pjrt_exec_t* e = NULL;
      tt_status_free(tt_disk_cache_get(c, key, sizeof(key), &e));
      misses += !e;
      if (e && k % 10 == 0) wrong += run_prog(p, e, 0, 1 + n);
      tt_pjrt_exec_destroy(p, e);
    }
  for (int k = 0; k < SHARED_KEYS; k++) {
    char skey[16] = {'s', (char)k};
    tt_pjrt_exec_t* e = NULL;
    tt_status_free(tt_disk_cache_get(c, skey, sizeof(skey), &e));
    misses += !e;
    if (e) wrong += run_prog(p, e, 0, 0);
    tt_pjrt_exec_destroy(p, e);
  }
  tt_disk_cache_close(c);
  int others = 0, entries = count_files(dir, &others);
  TT_CHECK(misses == 0 && wrong == 0);
  TT_CHECK(entries == 2 * WRITER_PUTS + SHARED_KEYS && others == 0); /* no temporary left */
  TT_CHECK(count_lists(dir, NULL, 0) == 3); /* one per command line: the writers', this one's */
}
static void test_concurrent_writers(void) { FOR_EACH_PLUGIN(check_concurrent); }

/* The same two writers under a bound of about ten entries: the directory
 * ends within it, give or take the tenth of it the other writer may have
 * put since this one's last scan, and every entry left loads and computes. */
static void check_concurrent_bound(int i) {
  char dir[512], size[32];
  subdir(dir, sizeof(dir), i, "concurrent-bound");
  long long bound = i == 0 ? 45000 : 38000; /* ~10 entries of each plugin's */
  snprintf(size, sizeof(size), "%lld", bound);
  setenv("TORCH_TPU_CACHE_MAX_SIZE", size, 1); /* the writers' */
  bool ran = run_writers(i, dir);
  unsetenv("TORCH_TPU_CACHE_MAX_SIZE");
  TT_CHECK(ran);
  long long total = dir_bytes(dir);
  tt_pjrt_t* p = g_plugins[i];
  tt_disk_cache_t* c = tt_disk_cache_open(p, dir);
  TT_CHECK(c != NULL);
  int hits = 0, wrong = 0;
  long long largest = 0;
  for (int n = 0; n < 3; n++)
    for (int k = 0; k < WRITER_PUTS; k++) {
      char key[16] = {'o', (char)n, (char)k}, skey[16] = {'s', (char)k};
      char* kk = n < 2 ? key : skey;
      if (n == 2 && k >= SHARED_KEYS) break;
      tt_sbuf_t path;
      tt_sbuf_init(&path);
      tt_disk_cache_entry_path(c, kk, 16, &path);
      struct stat sb;
      if (stat(path.data, &sb) == 0 && sb.st_size > largest) largest = sb.st_size;
      tt_sbuf_free(&path);
      tt_pjrt_exec_t* e = NULL;
      tt_status_free(tt_disk_cache_get(c, kk, 16, &e));
      hits += e != NULL;
      if (e) wrong += run_prog(p, e, 0, n < 2 ? 1 + n : 0);
      tt_pjrt_exec_destroy(p, e);
    }
  tt_disk_cache_stats_t s;
  tt_disk_cache_stats(c, &s);
  tt_disk_cache_close(c);
  int others = 0, entries = count_files(dir, &others);
  printf("  %s plugin: bound %lld, %d entries of %lld bytes left (largest %lld)\n", g_names[i], bound, entries,
         total, largest);
  TT_CHECK(wrong == 0 && s.rejected == 0 && s.errors == 0);
  TT_CHECK(hits == entries && entries >= 5 && entries < 2 * WRITER_PUTS / 2);
  TT_CHECK(total <= bound + bound / 10 && others == 0);
}
static void test_concurrent_bound(void) { FOR_EACH_PLUGIN(check_concurrent_bound); }

int main(int argc, char** argv) {
  if (argc == 5 && !strcmp(argv[1], "--writer"))
    return writer_main(argv[2], argv[3], atoi(argv[4]));
  unsetenv("TORCH_TPU_DISK_CACHE");
  const char* tmp = getenv("TMPDIR");
  snprintf(g_root, sizeof(g_root), "%s/tt_disk_cache.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g_root)) {
    printf("FAILED: cannot create a directory under %s\n", tmp && *tmp ? tmp : "/tmp");
    return 1;
  }
  const char* env[2] = {"TT_TEST_PLUGIN_NEW", "TT_TEST_PLUGIN_OLD"};
  for (int i = 0; i < 2; i++) {
    g_paths[i] = getenv(env[i]);
    if (!g_paths[i] || !*g_paths[i]) {
      printf("skip   the %s plugin: %s is not set\n", g_names[i], env[i]);
      continue;
    }
    tt_status_t st = tt_pjrt_open(g_paths[i], 2, &g_plugins[i]);
    if (st) {
      printf("FAILED opening %s: %s\n", g_paths[i], tt_status_message(st));
      tt_status_free(st);
      tt__failed++;
    }
  }
  TT_RUN(test_serialize);
  TT_RUN(test_garbage);
  TT_RUN(test_put_get);
  TT_RUN(test_xla_flags);
  TT_RUN(test_corrupt);
  TT_RUN(test_foreign_plugin);
  TT_RUN(test_disabled);
  TT_RUN(test_default_dir);
  TT_RUN(test_clear);
  TT_RUN(test_bound);
  TT_RUN(test_no_bound);
  TT_RUN(test_trust);
  TT_RUN(test_private_files);
  TT_RUN(test_startup_list);
  TT_RUN(test_concurrent_writers);
  TT_RUN(test_concurrent_bound);
  for (int i = 0; i < 2; i++) tt_pjrt_close(g_plugins[i]);
  nftw(g_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  TT_REPORT();
}
