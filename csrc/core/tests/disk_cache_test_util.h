/* What the disk-cache tests share (test_runtime_disk_cache.c,
 * test_runtime_disk_bound.c): the plugins under test, the scratch
 * directory, three programs and their keys, file helpers, and the two
 * writer processes (`<test binary> --writer DIR PLUGIN N`). */
#ifndef TT_DISK_CACHE_TEST_UTIL_H_
#define TT_DISK_CACHE_TEST_UTIL_H_

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

static inline double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline tt_status_t compile(tt_pjrt_t* p, int prog, tt_pjrt_exec_t** out) {
  return tt_pjrt_compile(p, k_progs[prog], strlen(k_progs[prog]), out);
}

/* Runs e (program `prog`) on `device` of p; 0 if every result is exact. */
static inline int run_prog(tt_pjrt_t* p, tt_pjrt_exec_t* e, int device, int prog) {
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
static inline void subdir(char* buf, size_t cap, int i, const char* what) {
  snprintf(buf, cap, "%s/%s-%s", g_root, g_names[i], what);
}

static inline unsigned char* read_all(const char* path, size_t* n) {
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

static inline int write_all(const char* path, const void* d, size_t n) {
  FILE* f = fopen(path, "wb");
  if (!f) return 1;
  int bad = fwrite(d, 1, n, f) != n;
  return fclose(f) != 0 || bad;
}

static inline int count_files(const char* dir, int* others) {
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
static inline int count_lists(const char* dir, char* path, size_t cap) {
  DIR* d = opendir(dir);
  int n = 0;
  if (!d) return -1;
  for (struct dirent* e; (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    if (l == 23 && !strcmp(e->d_name + 16, ".ttlist")) {
      n++;
      if (path && (size_t)snprintf(path, cap, "%s/%s", dir, e->d_name) >= cap) path[0] = 0;  // too long: none
    }
  }
  closedir(d);
  return n;
}

static inline int rm_entry(const char* path, const struct stat* sb, int flag, struct FTW* ftw) {
  (void)sb, (void)flag, (void)ftw;
  chmod(path, 0700);
  return remove(path);
}

/* ---- two processes fill one directory at once -------------------------------------------- */
#define WRITER_PUTS 50
#define SHARED_KEYS 5

/* Child n: compiles, says it is ready (file "<dir>.ready<n>"), waits for
 * "<dir>.go" so that both write at once, then does 50 puts of its own keys
 * (program 1 + n) interleaved with 50 puts of the keys both children write
 * (program 0). Exit status 0 if every put wrote. */
static inline bool wait_for_file(const char* path, int seconds) {
  for (int k = 0; k < seconds * 1000; k++) {
    if (access(path, F_OK) == 0) return true;
    usleep(1000);
  }
  return false;
}

static inline int writer_main(const char* dir, const char* plugin, int n) {
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
static inline bool run_writers(int i, const char* dir) {
  pid_t pids[2];
  for (int n = 0; n < 2; n++) {
    char num[16];
    snprintf(num, sizeof(num), "%d", n);
    pids[n] = fork();
    if (pids[n] == 0) { /* exec: the parent's PJRT client does not survive fork */
      execl("/proc/self/exe", "disk_cache_test", "--writer", dir, g_paths[i], num, (char*)NULL);
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


/* The run's set-up: the scratch directory and the plugins (a missing one is
 * skipped). False: no directory. */
static inline bool dc_setup(void) {
  unsetenv("TORCH_TPU_DISK_CACHE");
  const char* tmp = getenv("TMPDIR");
  snprintf(g_root, sizeof(g_root), "%s/tt_disk_cache.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g_root)) {
    printf("FAILED: cannot create a directory under %s\n", tmp && *tmp ? tmp : "/tmp");
    return false;
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
  return true;
}

static inline void dc_teardown(void) {
  for (int i = 0; i < 2; i++) tt_pjrt_close(g_plugins[i]);
  nftw(g_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif  /* TT_DISK_CACHE_TEST_UTIL_H_ */
