/* Tests of tier 2 of the compilation cache (runtime/disk_cache.c) and the
 * PJRT serialization under it, against both CPU plugins: entries written by
 * one client (or process) load into a fresh one and compute the same; every
 * damaged, foreign or unreadable entry is a counted miss, never a crash; two
 * processes fill one directory at once; a process loads at open what the
 * last run of its command line used first (the bound and the trust check:
 * test_runtime_disk_bound.c). Env: TT_TEST_PLUGIN_NEW (API 0.115),
 * TT_TEST_PLUGIN_OLD (API 0.81); a missing one skips its plugin. Files go to
 * a fresh directory under $TMPDIR (or /tmp), removed at the end.
 * `test_runtime_disk_cache --writer DIR PLUGIN N` is one of the concurrent writers. */
#include "disk_cache_test_util.h"

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

int main(int argc, char** argv) {
  if (argc == 5 && !strcmp(argv[1], "--writer"))
    return writer_main(argv[2], argv[3], atoi(argv[4]));
  if (!dc_setup()) return 1;
  TT_RUN(test_serialize);
  TT_RUN(test_garbage);
  TT_RUN(test_put_get);
  TT_RUN(test_xla_flags);
  TT_RUN(test_corrupt);
  TT_RUN(test_foreign_plugin);
  TT_RUN(test_disabled);
  TT_RUN(test_default_dir);
  TT_RUN(test_clear);
  TT_RUN(test_startup_list);
  TT_RUN(test_concurrent_writers);
  dc_teardown();
  TT_REPORT();
}
