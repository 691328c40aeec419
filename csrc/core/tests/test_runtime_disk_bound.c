/* Tests of the disk cache's bound and trust (runtime/disk_files.c through
 * runtime/disk_cache.c), against both CPU plugins: the directory's size stays
 * within TORCH_TPU_CACHE_MAX_SIZE, least recently used entries going first,
 * across cache handles and processes (two writers); no bound at 0; a
 * directory others may write, or another user's, is refused, and what the
 * cache creates is private (0700 / 0600). Env as test_runtime_disk_cache.c.
 * `test_runtime_disk_bound --writer DIR PLUGIN N` is one of the writers. */
#include "disk_cache_test_util.h"

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
  if (!dc_setup()) return 1;
  TT_RUN(test_bound);
  TT_RUN(test_no_bound);
  TT_RUN(test_trust);
  TT_RUN(test_private_files);
  TT_RUN(test_concurrent_bound);
  dc_teardown();
  TT_REPORT();
}
