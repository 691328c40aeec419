/* Shared by the runtime tests (test_runtime_*.c, test_graph_capture.c): plugin
 * set-up, a C model of strided views, storage helpers, check macros. Env:
 * TT_TEST_PLUGIN_NEW (API 0.115 plugin: every test), TT_TEST_PLUGIN_OLD
 * (API 0.81 plugin: a subset). Each plugin's runtime is opened once (2 CPU
 * devices) and shared by the tests of a binary. */
#ifndef TT_RUNTIME_TEST_UTIL_H_
#define TT_RUNTIME_TEST_UTIL_H_
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/internal.h" /* TT_SCALAR_CACHE: the scalar-cache test */
#include "../runtime/tt_runtime.h"
#include "tt_test.h"

/* The async-failure test asks the plugin for a 128 GiB buffer: under ASan the
 * allocator must return NULL (a status) instead of aborting the process. */
#if defined(__SANITIZE_ADDRESS__)
#define TT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_TEST_ASAN 1
#endif
#endif
#ifdef TT_TEST_ASAN
const char* __asan_default_options(void);
const char* __asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

static tt_runtime_t* g_rt[2]; /* [0] API 0.115, [1] API 0.81; NULL: skipped */
static const char* g_names[2] = {"new (0.115)", "old (0.81)"};

/* Runs check(rt) on every opened runtime (or only the new one). */
#define FOR_RT(check, nplugins)                                            \
  do {                                                                     \
    for (int i_ = 0; i_ < (nplugins); i_++) {                              \
      if (!g_rt[i_]) continue;                                             \
      check(g_rt[i_]);                                                     \
      if (tt__cur_failed) {                                                \
        fprintf(stderr, "  (with the %s plugin)\n", g_names[i_]);          \
        return;                                                            \
      }                                                                    \
    }                                                                      \
  } while (0)
#define FOR_EACH_RT(check) FOR_RT(check, 2)
#define NEW_RT_ONLY(check) FOR_RT(check, 1)

#define FAILF(...)                                                         \
  do {                                                                     \
    fprintf(stderr, "  FAIL %s:%d: ", __FILE__, __LINE__);                 \
    fprintf(stderr, __VA_ARGS__);                                          \
    fputc('\n', stderr);                                                   \
    tt__cur_failed = 1;                                                    \
    return;                                                                \
  } while (0)

/* A sub-check: stop the caller at its first failure. */
#define SUB(call)                  \
  do {                             \
    call;                          \
    if (tt__cur_failed) return;    \
  } while (0)

/* expr must fail with a message containing `sub` (and `sub2` if non-NULL). */
#define TT_CHECK_ERR(expr, sub, sub2)                                                   \
  do {                                                                                  \
    tt_status_t e__ = (expr);                                                           \
    if (!e__) FAILF("%s: expected an error containing \"%s\", got OK", #expr, (sub));  \
    const char* m__ = tt_status_message(e__);                                           \
    bool ok__ = strcasestr(m__, (sub)) && (!(sub2) || strcasestr(m__, (sub2) ? (sub2) : "")); \
    if (!ok__) fprintf(stderr, "  FAIL %s:%d: %s: unexpected error: %s\n", __FILE__, __LINE__, #expr, m__); \
    tt_status_free(e__);                                                                \
    if (!ok__) {                                                                        \
      tt__cur_failed = 1;                                                               \
      return;                                                                           \
    }                                                                                   \
  } while (0)

/* ---- helpers ------------------------------------------------------------------ */

static tt_view_t mkview(tt_storage_t* s, tt_dtype_t dt, int rank, const int64_t* sizes,
                        const int64_t* strides, int64_t offset) {
  tt_view_t v;
  memset(&v, 0, sizeof(v));
  v.storage = s;
  v.dtype = dt;
  v.rank = rank;
  for (int i = 0; i < rank; i++) {
    v.sizes[i] = sizes[i];
    v.strides[i] = strides[i];
  }
  v.offset = offset;
  return v;
}
#define I64S(...) ((const int64_t[]){__VA_ARGS__})
/* A view with rank taken from the sizes list. */
#define VIEW(s, dt, sizes, strides, off) \
  mkview((s), (dt), (int)(sizeof(sizes) / sizeof(int64_t)), (sizes), (strides), (off))

/* Dense 1-D view over all of s (n elements of dt). */
static tt_view_t flat(tt_storage_t* s, tt_dtype_t dt, int64_t n) {
  return mkview(s, dt, 1, &n, I64S(1), 0);
}

/* Element index in the storage of the lin-th (row-major) element of v. */
static inline int64_t view_elem(const tt_view_t* v, int64_t lin) {
  int64_t off = v->offset;
  for (int d = v->rank - 1; d >= 0; d--) {
    int64_t idx = lin % v->sizes[d];
    lin /= v->sizes[d];
    off += idx * v->strides[d];
  }
  return off;
}

/* A storage on `device` holding n elements of dt, element i = i (f32 / i32 / i64). */
static tt_status_t iota_storage(tt_runtime_t* rt, int device, tt_dtype_t dt, int64_t n,
                                tt_storage_t** out) {
  TT_RETURN_IF_ERROR(tt_storage_create(rt, device, (size_t)n * tt_dtype_size(dt), out));
  unsigned char* host = malloc((size_t)n * tt_dtype_size(dt) + 1);
  for (int64_t i = 0; i < n; i++) {
    if (dt == TT_F32) ((float*)host)[i] = (float)i;
    else if (dt == TT_I32) ((int32_t*)host)[i] = (int32_t)i;
    else ((int64_t*)host)[i] = i;
  }
  tt_view_t v = flat(*out, dt, n);
  tt_status_t st = tt_view_write_host(rt, &v, host);
  free(host);
  if (st) {
    tt_storage_release(*out);
    *out = NULL;
  }
  return st;
}

static tt_status_t host_storage(tt_runtime_t* rt, int device, tt_dtype_t dt, int64_t n,
                                const void* data, tt_storage_t** out) {
  TT_RETURN_IF_ERROR(tt_storage_create(rt, device, (size_t)n * tt_dtype_size(dt), out));
  tt_view_t v = flat(*out, dt, n);
  tt_status_t st = tt_view_write_host(rt, &v, data);
  if (st) {
    tt_storage_release(*out);
    *out = NULL;
  }
  return st;
}

static void read_f32(tt_runtime_t* rt, tt_storage_t* s, int64_t n, float* out) {
  tt_view_t v = flat(s, TT_F32, n);
  TT_CHECK_OK(tt_view_read_host(rt, &v, out));
}


/* Call arguments: a device tensor view, a Scalar. */
static inline tt_call_arg_t targ(tt_view_t v) {
  tt_call_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = TT_ARG_TENSOR;
  a.tier = v.rank ? TT_TIER_DIM : TT_TIER_ZERO_DIM;
  a.view = v;
  return a;
}
static inline tt_call_arg_t sarg_f(double f) {
  tt_call_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = TT_ARG_SCALAR;
  a.sdtype = TT_F64;
  a.scalar.f = f;
  return a;
}
static inline tt_call_arg_t sarg_i(int64_t i) {
  tt_call_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = TT_ARG_SCALAR;
  a.sdtype = TT_I64;
  a.scalar.i = i;
  return a;
}

/* Opens both runtimes; a missing plugin variable is a failure (the Makefile
 * always sets both). */
static void open_runtimes(void) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* "ok" lines in order with the FAIL lines on stderr */
  /* tier 1 only: these tests count compiles, which a program left on disk by
   * an earlier run (the default ~/.cache/torch_tpu) would serve instead
   * (test_runtime_disk_cache covers tier 2) */
  setenv("TORCH_TPU_DISK_CACHE", "0", 1);
  const char* paths[2] = {getenv("TT_TEST_PLUGIN_NEW"), getenv("TT_TEST_PLUGIN_OLD")};
  for (int i = 0; i < 2; i++) {
    if (!paths[i] || !*paths[i]) {
      printf("FAILED the %s plugin: TT_TEST_PLUGIN_%s is not set\n", g_names[i], i ? "OLD" : "NEW");
      tt__failed++;
      continue;
    }
    tt_status_t st = tt_runtime_open(paths[i], 2, &g_rt[i]);
    if (st) {
      printf("FAILED opening %s: %s\n", paths[i], tt_status_message(st));
      tt_status_free(st);
      tt__failed++;
    }
  }
}

static void close_runtimes(void) {
  for (int i = 0; i < 2; i++) tt_runtime_close(g_rt[i]);
}

#endif /* TT_RUNTIME_TEST_UTIL_H_ */
