/* Tests of the runtime (storages, views, op calls, the executable cache,
 * devices, modes, asynchronous errors) without Python. Env:
 * TT_TEST_PLUGIN_NEW (API 0.115 plugin: every test), TT_TEST_PLUGIN_OLD
 * (API 0.81 plugin: storages, view reads/writes, op calls). A missing
 * variable skips its tests. Each plugin's runtime is opened once (2 CPU
 * devices) and shared by the tests. Views are checked against a C model that
 * walks (sizes, strides, offset) over the storage's elements. */
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
static int64_t view_elem(const tt_view_t* v, int64_t lin) {
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

/* ---- storages ------------------------------------------------------------------ */

static void check_storage_basics(tt_runtime_t* rt) {
  tt_storage_t* s = NULL;
  TT_CHECK_OK(tt_storage_create(rt, 0, 24, &s));
  TT_CHECK(tt_storage_nbytes(s) == 24 && tt_storage_device(s) == 0);
  TT_CHECK(tt_storage_state(s) == TT_STORAGE_EMPTY);
  /* EMPTY reads zeros, whole and through a strided view, and stays EMPTY */
  float f[6];
  memset(f, 0xff, sizeof(f));
  SUB(read_f32(rt, s, 6, f));
  for (int i = 0; i < 6; i++) TT_CHECK(f[i] == 0.0f);
  int64_t g[3];
  memset(g, 0xff, sizeof(g));
  tt_view_t t = VIEW(s, TT_I64, I64S(3), I64S(1), 0);
  TT_CHECK_OK(tt_view_read_host(rt, &t, g));
  TT_CHECK(g[0] == 0 && g[1] == 0 && g[2] == 0);
  tt_view_t st2 = VIEW(s, TT_F32, I64S(2, 2), I64S(1, 3), 1);
  memset(f, 0xff, sizeof(f));
  TT_CHECK_OK(tt_view_read_host(rt, &st2, f));
  for (int i = 0; i < 4; i++) TT_CHECK(f[i] == 0.0f);
  TT_CHECK(tt_storage_state(s) == TT_STORAGE_EMPTY);
  tt_storage_release(s);
  tt_storage_release(NULL);
  TT_CHECK_ERR(tt_storage_create(rt, 2, 8, &s), "device", NULL);
  TT_CHECK(s == NULL);
  TT_CHECK_ERR(tt_storage_create(rt, -1, 8, &s), "device", NULL);
  /* zero bytes */
  TT_CHECK_OK(tt_storage_create(rt, 0, 0, &s));
  tt_view_t z = VIEW(s, TT_F32, I64S(0), I64S(1), 0);
  TT_CHECK_OK(tt_view_read_host(rt, &z, f));
  TT_CHECK_OK(tt_view_write_host(rt, &z, f));
  tt_storage_release(s);
}
static void test_storage_basics(void) { FOR_EACH_RT(check_storage_basics); }

/* write_host then read_host of a full view (and a strided view) keeps the bits. */
static void roundtrip(tt_runtime_t* rt, tt_dtype_t dt, const void* data, int64_t n) {
  size_t esz = tt_dtype_size(dt);
  tt_storage_t* s = NULL;
  TT_CHECK_OK(host_storage(rt, 0, dt, n, data, &s));
  TT_CHECK(tt_storage_state(s) == TT_STORAGE_MATERIALIZED);
  unsigned char got[64];
  memset(got, 0xcd, sizeof(got));
  tt_view_t v = flat(s, dt, n);
  TT_CHECK_OK(tt_view_read_host(rt, &v, got));
  if (memcmp(got, data, (size_t)n * esz)) FAILF("%s: full round trip differs", tt_dtype_name(dt));
  /* every other element, from 1: through a program */
  tt_view_t odd = VIEW(s, dt, I64S(n / 2), I64S(2), 1);
  memset(got, 0xcd, sizeof(got));
  TT_CHECK_OK(tt_view_read_host(rt, &odd, got));
  for (int64_t i = 0; i < n / 2; i++)
    if (memcmp(got + i * esz, (const unsigned char*)data + (2 * i + 1) * esz, esz))
      FAILF("%s: element %lld of the stepped view differs", tt_dtype_name(dt), (long long)i);
  /* overwrite through the full view (replaces the buffer), read again */
  unsigned char rev[64];
  for (int64_t i = 0; i < n; i++) memcpy(rev + i * esz, (const unsigned char*)data + (n - 1 - i) * esz, esz);
  TT_CHECK_OK(tt_view_write_host(rt, &v, rev));
  TT_CHECK_OK(tt_view_read_host(rt, &v, got));
  if (memcmp(got, rev, (size_t)n * esz)) FAILF("%s: second round trip differs", tt_dtype_name(dt));
  tt_storage_release(s);
}

static void check_roundtrips(tt_runtime_t* rt) {
  const float f[6] = {1.5f, -2.0f, 3.25e-3f, 0.0f, 1e30f, -7.5f};
  const int64_t i64[6] = {0, -1, INT64_MAX, INT64_MIN, 1ll << 40, 42};
  const bool b[6] = {true, false, false, true, true, false};
  const uint16_t bf[6] = {0x3f80, 0x4000, 0xc040, 0x7f80 /* inf */, 0x8000 /* -0 */, 0x3e20};
  const uint8_t u8[7] = {0, 1, 127, 128, 200, 255, 7};
  SUB(roundtrip(rt, TT_F32, f, 6));
  SUB(roundtrip(rt, TT_I64, i64, 6));
  SUB(roundtrip(rt, TT_BOOL, b, 6));
  SUB(roundtrip(rt, TT_BF16, bf, 6));
  SUB(roundtrip(rt, TT_U8, u8, 7));
}
static void test_roundtrips(void) { FOR_EACH_RT(check_roundtrips); }

static void check_resize(tt_runtime_t* rt) {
  const float src[4] = {1, 2, 3, 4};
  tt_storage_t* s = NULL;
  TT_CHECK_OK(host_storage(rt, 0, TT_F32, 4, src, &s));
  TT_CHECK_OK(tt_storage_resize(s, 24)); /* grow: keeps the bytes, zero-extends */
  TT_CHECK(tt_storage_nbytes(s) == 24);
  float f[6];
  memset(f, 0xff, sizeof(f));
  SUB(read_f32(rt, s, 6, f));
  const float want[6] = {1, 2, 3, 4, 0, 0};
  TT_CHECK(!memcmp(f, want, sizeof(want)));
  TT_CHECK_OK(tt_storage_resize(s, 8)); /* shrink */
  TT_CHECK(tt_storage_nbytes(s) == 8);
  memset(f, 0xff, sizeof(f));
  SUB(read_f32(rt, s, 2, f));
  TT_CHECK(f[0] == 1 && f[1] == 2);
  TT_CHECK_OK(tt_storage_resize(s, 11)); /* not a multiple of 4: bytes */
  uint8_t u[11], wu[11] = {0};
  memcpy(wu, want, 8);
  tt_view_t uv = flat(s, TT_U8, 11);
  TT_CHECK_OK(tt_view_read_host(rt, &uv, u));
  TT_CHECK(!memcmp(u, wu, 11));
  tt_storage_release(s);
  /* an EMPTY storage stays EMPTY and reads zeros */
  TT_CHECK_OK(tt_storage_create(rt, 0, 8, &s));
  TT_CHECK_OK(tt_storage_resize(s, 16));
  TT_CHECK(tt_storage_state(s) == TT_STORAGE_EMPTY && tt_storage_nbytes(s) == 16);
  memset(f, 0xff, sizeof(f));
  SUB(read_f32(rt, s, 4, f));
  for (int i = 0; i < 4; i++) TT_CHECK(f[i] == 0);
  tt_storage_release(s);
}
static void test_resize(void) { NEW_RT_ONLY(check_resize); }

static void check_storage_copy(tt_runtime_t* rt) {
  const float src[6] = {1, -2, 3, -4, 5, -6};
  tt_storage_t *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  TT_CHECK_OK(host_storage(rt, 0, TT_F32, 6, src, &a));
  TT_CHECK_OK(tt_storage_create(rt, 0, 24, &b));
  TT_CHECK_OK(tt_storage_copy(b, a));
  float f[6];
  SUB(read_f32(rt, b, 6, f));
  TT_CHECK(!memcmp(f, src, sizeof(f)));
  /* the copy is independent of the source */
  const float other[6] = {9, 9, 9, 9, 9, 9};
  tt_view_t av = flat(a, TT_F32, 6);
  TT_CHECK_OK(tt_view_write_host(rt, &av, other));
  SUB(read_f32(rt, b, 6, f));
  TT_CHECK(!memcmp(f, src, sizeof(f)));
  /* across devices */
  TT_CHECK_OK(tt_storage_create(rt, 1, 24, &c));
  TT_CHECK_OK(tt_storage_copy(c, b));
  SUB(read_f32(rt, c, 6, f));
  TT_CHECK(!memcmp(f, src, sizeof(f)));
  /* sizes must match */
  TT_CHECK_OK(tt_storage_create(rt, 0, 20, &d));
  TT_CHECK_ERR(tt_storage_copy(d, a), "bytes", NULL);
  tt_storage_release(d);
  /* an EMPTY source copies zeros */
  TT_CHECK_OK(tt_storage_create(rt, 0, 24, &d));
  TT_CHECK_OK(tt_storage_copy(b, d));
  memset(f, 0xff, sizeof(f));
  SUB(read_f32(rt, b, 6, f));
  for (int i = 0; i < 6; i++)
    if (f[i] != 0) FAILF("copy of an EMPTY storage: element %d is %g, not 0", i, (double)f[i]);
  TT_CHECK(tt_storage_state(b) == TT_STORAGE_EMPTY);
  tt_storage_release(a);
  tt_storage_release(b);
  tt_storage_release(c);
  tt_storage_release(d);
}
static void test_storage_copy(void) { NEW_RT_ONLY(check_storage_copy); }

static void check_memory_stats(tt_runtime_t* rt) {
  TT_CHECK_OK(tt_runtime_synchronize(rt, -1));
  tt_runtime_stats_t s0, s1, s2, d1;
  tt_runtime_get_stats(rt, 0, &s0);
  tt_runtime_get_stats(rt, 1, &d1);
  tt_storage_t *a = NULL, *b = NULL;
  TT_CHECK_OK(tt_storage_create(rt, 0, 4096, &a));
  tt_runtime_get_stats(rt, 0, &s1);
  TT_CHECK(s1.num_storages == s0.num_storages + 1);
  TT_CHECK(s1.bytes_in_use == s0.bytes_in_use); /* EMPTY holds no memory */
  float* host = calloc(1024, sizeof(float));
  tt_view_t v = flat(a, TT_F32, 1024);
  tt_status_t st = tt_view_write_host(rt, &v, host);
  free(host);
  TT_CHECK_OK(st);
  tt_runtime_get_stats(rt, 0, &s1);
  TT_CHECK(s1.bytes_in_use == s0.bytes_in_use + 4096);
  TT_CHECK(s1.num_buffers == s0.num_buffers + 1);
  TT_CHECK(s1.peak_bytes >= s1.bytes_in_use);
  /* another 8 KiB storage, materialized by a partial write */
  TT_CHECK_OK(tt_storage_create(rt, 0, 8192, &b));
  const float one[2] = {1, 1};
  tt_view_t bv = VIEW(b, TT_F32, I64S(2), I64S(1), 10);
  TT_CHECK_OK(tt_view_write_host(rt, &bv, one));
  tt_runtime_get_stats(rt, 0, &s2);
  TT_CHECK(s2.num_storages == s0.num_storages + 2);
  TT_CHECK(s2.bytes_in_use == s0.bytes_in_use + 4096 + 8192);
  TT_CHECK(s2.peak_bytes >= s0.bytes_in_use + 4096 + 8192);
  /* device 1 is not affected */
  tt_runtime_stats_t d1b;
  tt_runtime_get_stats(rt, 1, &d1b);
  TT_CHECK(d1b.bytes_in_use == d1.bytes_in_use && d1b.num_storages == d1.num_storages);
  tt_storage_release(b);
  tt_runtime_get_stats(rt, 0, &s1);
  TT_CHECK(s1.bytes_in_use == s0.bytes_in_use + 4096);
  TT_CHECK(s1.num_storages == s0.num_storages + 1);
  TT_CHECK(s1.peak_bytes == s2.peak_bytes); /* the peak stays */
  tt_runtime_reset_peak(rt, 0);
  tt_runtime_get_stats(rt, 0, &s1);
  TT_CHECK(s1.peak_bytes == s1.bytes_in_use);
  tt_storage_release(a);
  tt_runtime_get_stats(rt, 0, &s1);
  TT_CHECK(s1.bytes_in_use == s0.bytes_in_use && s1.num_storages == s0.num_storages);
  TT_CHECK(s1.num_buffers == s0.num_buffers);
}
static void test_memory_stats(void) { NEW_RT_ONLY(check_memory_stats); }

/* ---- view reads ------------------------------------------------------------------ */

/* Reads v (over a storage holding 0..n-1 as base_dt) and compares with the model. */
static void check_read(tt_runtime_t* rt, const tt_view_t* v, tt_dtype_t base_dt, const char* what) {
  int64_t n = tt_view_numel(v);
  size_t esz = tt_dtype_size(v->dtype);
  unsigned char* got = malloc((size_t)n * esz + 8);
  unsigned char* want = malloc((size_t)n * esz + 8);
  memset(got, 0xab, (size_t)n * esz + 8);
  for (int64_t i = 0; i < n; i++) {
    int64_t e = view_elem(v, i);
    if (base_dt == TT_F32) {
      float x = (float)e;
      memcpy(want + i * esz, &x, 4);
    } else {
      int32_t x = (int32_t)e;
      memcpy(want + i * esz, &x, 4);
    }
  }
  tt_status_t st = tt_view_read_host(rt, v, got);
  int64_t bad = -1;
  for (int64_t i = 0; !st && i < n && bad < 0; i++)
    if (memcmp(got + i * esz, want + i * esz, esz)) bad = i;
  bool guard_ok = got[n * (int64_t)esz] == 0xab;
  float gf = 0, wf = 0;
  int32_t gi = 0, wi = 0;
  if (bad >= 0) {
    memcpy(&gf, got + bad * esz, 4);
    memcpy(&wf, want + bad * esz, 4);
    memcpy(&gi, got + bad * esz, 4);
    memcpy(&wi, want + bad * esz, 4);
  }
  free(got);
  free(want);
  if (st) {
    fprintf(stderr, "  FAIL %s:%d: reading %s (%s over %s): %s\n", __FILE__, __LINE__, what,
            tt_dtype_name(v->dtype), tt_dtype_name(base_dt), tt_status_message(st));
    tt_status_free(st);
    tt__cur_failed = 1;
    return;
  }
  if (bad >= 0)
    FAILF("reading %s (%s over %s): element %lld is %g / 0x%x, expected %g / 0x%x", what,
          tt_dtype_name(v->dtype), tt_dtype_name(base_dt), (long long)bad, (double)gf, (unsigned)gi,
          (double)wf, (unsigned)wi);
  if (!guard_ok) FAILF("reading %s wrote past the end of the host buffer", what);
}

/* The view cases over a 60-element storage (a [5,12] / [3,4,5] tensor). */
typedef struct vcase {
  const char* what;
  int rank;
  int64_t sizes[4], strides[4], offset;
  bool overlapping; /* not writable */
} vcase_t;

static const vcase_t k_cases[] = {
    {"full", 1, {60}, {1}, 0, false},
    {"contiguous with offset", 2, {2, 3}, {3, 1}, 5, false},
    {"contiguous 3-D at the end", 3, {2, 2, 3}, {6, 3, 1}, 48, false},
    {"transposed 2-D", 2, {4, 3}, {1, 4}, 0, false},
    {"transposed 2-D with offset", 2, {5, 7}, {1, 5}, 17, false},
    {"permuted 3-D", 3, {4, 2, 3}, {1, 12, 4}, 0, false},
    {"permuted 3-D (2,1,0)", 3, {5, 4, 3}, {1, 5, 20}, 0, false},
    {"narrow on the last dim", 2, {3, 2}, {4, 1}, 1, false},
    {"narrow on the last dim of 3-D", 3, {3, 4, 2}, {20, 5, 1}, 3, false},
    {"step 2 (1-D)", 1, {10}, {2}, 1, false},
    {"step 3 (1-D)", 1, {7}, {3}, 0, false},
    {"step 2,3 (2-D)", 2, {3, 4}, {24, 3}, 0, false},
    {"step 2 rows of a narrow", 2, {3, 5}, {24, 1}, 2, false},
    {"select a column", 1, {5}, {12}, 3, false},
    {"a row as 1-D", 1, {12}, {1}, 24, false},
    {"expanded rows", 2, {3, 4}, {0, 1}, 2, true},
    {"expanded columns", 2, {4, 3}, {1, 0}, 7, true},
    {"expanded 3-D", 3, {2, 3, 4}, {0, 4, 1}, 0, true},
    {"expanded scalar", 2, {2, 3}, {0, 0}, 59, true},
    {"size-1 dims with odd strides", 3, {1, 4, 1}, {7, 1, 99}, 3, false},
    {"size-1 dims, transposed", 4, {1, 3, 1, 2}, {1000, 1, 5, 3}, 10, false},
    {"overlapping strides (gather)", 2, {3, 3}, {1, 1}, 0, true},
    {"non-divisible strides (gather)", 2, {2, 3}, {5, 2}, 0, false},
    {"non-divisible 3-D (gather)", 3, {2, 2, 2}, {7, 3, 1}, 4, false},
    {"window padded past the end", 2, {2, 3}, {25, 1}, 30, false},
    {"0-d at an offset", 0, {0}, {0}, 17, false},
    {"0-numel rows", 2, {0, 3}, {3, 1}, 0, false},
    {"0-numel columns", 2, {3, 0}, {1, 3}, 5, false},
};
#define NCASES ((int)(sizeof(k_cases) / sizeof(k_cases[0])))

/* For time, the i32 base and the old plugin (which reads over f32 only) take
 * the cases at odd indices. */
static bool is_old(tt_runtime_t* rt) { return rt == g_rt[1]; }

static void check_view_reads(tt_runtime_t* rt) {
  tt_dtype_t base[2] = {TT_F32, TT_I32};
  for (int b = 0; b < (is_old(rt) ? 1 : 2); b++) {
    tt_storage_t* s = NULL;
    TT_CHECK_OK(iota_storage(rt, 0, base[b], 60, &s));
    for (int i = 0; i < NCASES; i++) {
      if ((b == 1 || is_old(rt)) && i % 2 == 0) continue;
      const vcase_t* c = &k_cases[i];
      tt_view_t v = mkview(s, base[b], c->rank, c->sizes, c->strides, c->offset);
      SUB(check_read(rt, &v, base[b], c->what));
    }
    /* reinterpreting: read as the other 4-byte dtype (bitcast), full and strided */
    tt_dtype_t other = base[b] == TT_F32 ? TT_I32 : TT_F32;
    tt_view_t full = flat(s, other, 60);
    SUB(check_read(rt, &full, base[b], "bitcast, full"));
    tt_view_t tr = VIEW(s, other, I64S(4, 3), I64S(1, 4), 0);
    SUB(check_read(rt, &tr, base[b], "bitcast, transposed"));
    tt_view_t g = VIEW(s, other, I64S(2, 3), I64S(5, 2), 1);
    SUB(check_read(rt, &g, base[b], "bitcast, gather"));
    tt_storage_release(s);
  }
  /* windows that need padding past the end of a 10-element buffer */
  tt_storage_t* s = NULL;
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 10, &s));
  tt_view_t p1 = VIEW(s, TT_F32, I64S(3, 2), I64S(4, 1), 0);   /* window 3x4 = 12 > 10 */
  tt_view_t p2 = VIEW(s, TT_F32, I64S(2), I64S(6), 3);         /* window 2x6 = 12 > 10 */
  tt_view_t p3 = VIEW(s, TT_F32, I64S(2, 3), I64S(1, 3), 1);   /* transposed, window 4x3 */
  SUB(check_read(rt, &p1, TT_F32, "padded window [3,2]/[4,1]"));
  SUB(check_read(rt, &p2, TT_F32, "padded window [2]/[6]+3"));
  SUB(check_read(rt, &p3, TT_F32, "padded window [2,3]/[1,3]+1"));
  tt_storage_release(s);
}
static void test_view_reads(void) { FOR_EACH_RT(check_view_reads); }

/* ---- view writes ------------------------------------------------------------------ */

/* Writes 1000+i into each element of v (over a fresh storage of 0..59 f32) and
 * compares the whole storage with the model. `empty`: the storage starts EMPTY
 * (model: zeros). */
static void check_write(tt_runtime_t* rt, const vcase_t* c, bool empty) {
  tt_storage_t* s = NULL;
  float model[60], got[60];
  if (empty) {
    TT_CHECK_OK(tt_storage_create(rt, 0, 60 * sizeof(float), &s));
    for (int i = 0; i < 60; i++) model[i] = 0;
  } else {
    TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 60, &s));
    for (int i = 0; i < 60; i++) model[i] = (float)i;
  }
  tt_view_t v = mkview(s, TT_F32, c->rank, c->sizes, c->strides, c->offset);
  int64_t n = tt_view_numel(&v);
  float* vals = malloc((size_t)n * sizeof(float) + 4);
  for (int64_t i = 0; i < n; i++) {
    vals[i] = 1000.0f + (float)i;
    model[view_elem(&v, i)] = vals[i];
  }
  tt_status_t st = tt_view_write_host(rt, &v, vals);
  free(vals);
  TT_CHECK_OK(st);
  memset(got, 0xff, sizeof(got));
  SUB(read_f32(rt, s, 60, got));
  tt_storage_release(s);
  for (int i = 0; i < 60; i++)
    if (got[i] != model[i])
      FAILF("writing %s%s: storage element %d is %g, expected %g", c->what, empty ? " (EMPTY base)" : "",
            i, (double)got[i], (double)model[i]);
}

static void check_view_writes(tt_runtime_t* rt) {
  for (int i = 0; i < NCASES; i++) {
    if (k_cases[i].overlapping || (is_old(rt) && i % 2 == 0)) continue;
    SUB(check_write(rt, &k_cases[i], false));
  }
  static const vcase_t col = {"select a column", 1, {5}, {12}, 3, false};
  static const vcase_t off = {"contiguous with offset", 2, {2, 3}, {3, 1}, 5, false};
  SUB(check_write(rt, &col, true));
  SUB(check_write(rt, &off, true));
  /* an i32 view written into an f32 storage: the bits land (bitcast) */
  tt_storage_t* s = NULL;
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 8, &s));
  const int32_t iv[3] = {-1, 0x12345678, 7};
  tt_view_t w = VIEW(s, TT_I32, I64S(3), I64S(2), 1);
  TT_CHECK_OK(tt_view_write_host(rt, &w, iv));
  float got[8];
  SUB(read_f32(rt, s, 8, got));
  for (int i = 0; i < 8; i++) {
    float want = (float)i;
    if (i % 2 == 1 && i < 7) memcpy(&want, &iv[i / 2], 4);
    if (memcmp(&got[i], &want, 4)) FAILF("i32 view into f32 storage: element %d differs", i);
  }
  tt_storage_release(s);
  /* bf16 stepped write (2-byte elements through a scatter) */
  uint16_t bf[8] = {0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0, 0x40e0, 0x4100};
  TT_CHECK_OK(host_storage(rt, 0, TT_BF16, 8, bf, &s));
  const uint16_t nv[3] = {0xbf80, 0xc000, 0xc040};
  tt_view_t bw = VIEW(s, TT_BF16, I64S(3), I64S(3), 1);
  TT_CHECK_OK(tt_view_write_host(rt, &bw, nv));
  bf[1] = nv[0];
  bf[4] = nv[1];
  bf[7] = nv[2];
  uint16_t gb[8];
  tt_view_t bfull = flat(s, TT_BF16, 8);
  TT_CHECK_OK(tt_view_read_host(rt, &bfull, gb));
  TT_CHECK(!memcmp(gb, bf, sizeof(bf)));
  tt_storage_release(s);
}
static void test_view_writes(void) { FOR_EACH_RT(check_view_writes); }

/* ---- op calls ---------------------------------------------------------------------- */

static tt_call_arg_t targ(tt_view_t v) {
  tt_call_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = TT_ARG_TENSOR;
  a.tier = v.rank ? TT_TIER_DIM : TT_TIER_ZERO_DIM;
  a.view = v;
  return a;
}
static tt_call_arg_t sarg_f(double f) {
  tt_call_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = TT_ARG_SCALAR;
  a.sdtype = TT_F64;
  a.scalar.f = f;
  return a;
}
static tt_call_arg_t sarg_i(int64_t i) {
  tt_call_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = TT_ARG_SCALAR;
  a.sdtype = TT_I64;
  a.scalar.i = i;
  return a;
}

static tt_status_t call_op(tt_runtime_t* rt, const char* name, const tt_call_arg_t* args, int nargs,
                           const tt_view_t* out, int device) {
  const tt_lower_entry_t* op = tt_lower_find(name);
  if (!op) return tt_status_make(TT_NOT_FOUND, "no lowering named %s", name);
  tt_call_t c;
  memset(&c, 0, sizeof(c));
  c.op = op;
  c.args = args;
  c.nargs = nargs;
  c.outs = out;
  c.out_dtypes = &out->dtype;
  c.nout = 1;
  c.device = device;
  return tt_runtime_call(rt, &c);
}

/* out = a + alpha * b over views, a fresh output storage; checked in C. */
static void add_views(tt_runtime_t* rt, const tt_view_t* a, const tt_view_t* b, double alpha,
                      int device, tt_storage_t** keep_out) {
  int64_t n = tt_view_numel(a);
  tt_storage_t* o = NULL;
  TT_CHECK_OK(tt_storage_create(rt, device, (size_t)n * 4, &o));
  int64_t strides[TT_MAX_RANK], st = 1;
  for (int d = a->rank - 1; d >= 0; d--) {
    strides[d] = st;
    st *= a->sizes[d];
  }
  tt_view_t ov = mkview(o, TT_F32, a->rank, a->sizes, strides, 0);
  tt_call_arg_t args[3] = {targ(*a), targ(*b), alpha == 1.0 ? sarg_i(1) : sarg_f(alpha)};
  TT_CHECK_OK(call_op(rt, "aten::add.Tensor", args, 3, &ov, device));
  float* got = malloc((size_t)n * 4 + 4);
  tt_status_t s = tt_view_read_host(rt, &ov, got);
  int64_t bad = -1;
  float want = 0;
  for (int64_t i = 0; !s && i < n && bad < 0; i++) {
    /* both storages hold 0..N-1 (b: times 2) */
    want = (float)view_elem(a, i) + (float)alpha * (2.0f * (float)view_elem(b, i));
    if (got[i] != want) bad = i;
  }
  float g = bad >= 0 ? got[bad] : 0;
  free(got);
  if (keep_out) *keep_out = o;
  else tt_storage_release(o);
  TT_CHECK_OK(s);
  if (bad >= 0) FAILF("add: element %lld is %g, expected %g", (long long)bad, (double)g, (double)want);
}

/* a: 0..63 f32, b: 2*(0..63) f32, on `device`. */
static tt_status_t ab_storages(tt_runtime_t* rt, int device, tt_storage_t** a, tt_storage_t** b) {
  float h[64];
  for (int i = 0; i < 64; i++) h[i] = 2.0f * (float)i;
  TT_RETURN_IF_ERROR(iota_storage(rt, device, TT_F32, 64, a));
  tt_status_t st = host_storage(rt, device, TT_F32, 64, h, b);
  if (st) tt_storage_release(*a);
  return st;
}

static void check_op_add(tt_runtime_t* rt) {
  tt_storage_t *a = NULL, *b = NULL;
  TT_CHECK_OK(ab_storages(rt, 0, &a, &b));
  /* transposed + narrow, contiguous-with-offset + stepped, alpha as a Scalar */
  tt_view_t at = VIEW(a, TT_F32, I64S(4, 3), I64S(1, 4), 0);
  tt_view_t bn = VIEW(b, TT_F32, I64S(4, 3), I64S(8, 1), 2);
  SUB(add_views(rt, &at, &bn, 1.0, 0, NULL));
  tt_view_t ac = VIEW(a, TT_F32, I64S(2, 5), I64S(5, 1), 9);
  tt_view_t bs = VIEW(b, TT_F32, I64S(2, 5), I64S(20, 3), 1);
  SUB(add_views(rt, &ac, &bs, 2.5, 0, NULL));
  /* broadcast: an expanded view */
  tt_view_t ae = VIEW(a, TT_F32, I64S(3, 4), I64S(0, 1), 4);
  tt_view_t bg = VIEW(b, TT_F32, I64S(3, 4), I64S(5, 2), 0);
  SUB(add_views(rt, &ae, &bg, -1.0, 0, NULL));
  tt_storage_release(a);
  tt_storage_release(b);
}
static void test_op_add(void) { FOR_EACH_RT(check_op_add); }

/* add_ into a partial view of a base: the rest of the base stays. */
static void inplace_add(tt_runtime_t* rt, tt_view_t self_shape, const char* what) {
  tt_storage_t *base = NULL, *o = NULL;
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 24, &base));
  int64_t n = tt_view_numel(&self_shape);
  float other[24], got[24], model[24];
  for (int64_t i = 0; i < n; i++) other[i] = 100.0f * (float)(i + 1);
  TT_CHECK_OK(host_storage(rt, 0, TT_F32, n, other, &o));
  tt_view_t self = self_shape;
  self.storage = base;
  int64_t strides[TT_MAX_RANK], st = 1;
  for (int d = self.rank - 1; d >= 0; d--) {
    strides[d] = st;
    st *= self.sizes[d];
  }
  tt_view_t ov = mkview(o, TT_F32, self.rank, self.sizes, strides, 0);
  tt_call_arg_t args[3] = {targ(self), targ(ov), sarg_f(0.5)};
  TT_CHECK_OK(call_op(rt, "aten::add_.Tensor", args, 3, &self, 0));
  for (int i = 0; i < 24; i++) model[i] = (float)i;
  for (int64_t i = 0; i < n; i++) model[view_elem(&self, i)] += 0.5f * other[i];
  SUB(read_f32(rt, base, 24, got));
  for (int i = 0; i < 24; i++)
    if (got[i] != model[i])
      FAILF("add_ into %s: base element %d is %g, expected %g", what, i, (double)got[i], (double)model[i]);
  /* other is untouched */
  SUB(read_f32(rt, o, n, got));
  for (int64_t i = 0; i < n; i++) TT_CHECK(got[i] == other[i]);
  tt_storage_release(base);
  tt_storage_release(o);
}

/* base[:, 1] += 0.5 * base[:, 3] on a [4,6] base: self and other alias */
static void inplace_aliased(tt_runtime_t* rt) {
  tt_storage_t* base = NULL;
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 24, &base));
  tt_view_t self = VIEW(base, TT_F32, I64S(4), I64S(6), 1);
  tt_view_t other = VIEW(base, TT_F32, I64S(4), I64S(6), 3);
  tt_call_arg_t args[3] = {targ(self), targ(other), sarg_f(0.5)};
  TT_CHECK_OK(call_op(rt, "aten::add_.Tensor", args, 3, &self, 0));
  float got[24];
  SUB(read_f32(rt, base, 24, got));
  tt_storage_release(base);
  for (int i = 0; i < 24; i++) {
    float want = i % 6 == 1 ? (float)i + 0.5f * (float)(i + 2) : (float)i;
    if (got[i] != want) FAILF("aliased add_: element %d is %g, expected %g", i, (double)got[i], (double)want);
  }
}

static void check_op_inplace(tt_runtime_t* rt) {
  SUB(inplace_aliased(rt));
  SUB(inplace_add(rt, VIEW(NULL, TT_F32, I64S(4), I64S(6), 1), "a column"));
  SUB(inplace_add(rt, VIEW(NULL, TT_F32, I64S(2, 3), I64S(3, 1), 7), "a contiguous range"));
  SUB(inplace_add(rt, VIEW(NULL, TT_F32, I64S(3, 2), I64S(1, 6), 2), "a transposed narrow"));
}
static void test_op_inplace(void) { FOR_EACH_RT(check_op_inplace); }

/* mul by a host 0-dim tensor (wrapped number) and sum over a dim of a transpose */
static void check_op_mul_sum(tt_runtime_t* rt) {
  tt_storage_t *a = NULL, *o = NULL, *r = NULL;
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 12, &a));
  tt_view_t at = VIEW(a, TT_F32, I64S(4, 3), I64S(1, 4), 0); /* [3,4].t() */
  TT_CHECK_OK(tt_storage_create(rt, 0, 48, &o));
  tt_view_t ov = VIEW(o, TT_F32, I64S(4, 3), I64S(3, 1), 0);
  tt_call_arg_t half;
  memset(&half, 0, sizeof(half));
  half.kind = TT_ARG_TENSOR;
  half.tier = TT_TIER_WRAPPED;
  half.on_host = true;
  half.sdtype = TT_F64;
  half.scalar.f = 0.5;
  tt_call_arg_t margs[2] = {targ(at), half};
  TT_CHECK_OK(call_op(rt, "aten::mul.Tensor", margs, 2, &ov, 0));
  float got[12];
  SUB(read_f32(rt, o, 12, got));
  for (int64_t i = 0; i < 12; i++) TT_CHECK(got[i] == 0.5f * (float)view_elem(&at, i));
  /* sum over dim 1 of the transpose: row sums of columns */
  TT_CHECK_OK(tt_storage_create(rt, 0, 16, &r));
  tt_view_t rv = flat(r, TT_F32, 4);
  const int64_t dims[1] = {1};
  tt_call_arg_t sargs[4];
  memset(sargs, 0, sizeof(sargs));
  sargs[0] = targ(at);
  sargs[1].kind = TT_ARG_INTS;
  sargs[1].ints = dims;
  sargs[1].n = 1;
  sargs[2].kind = TT_ARG_BOOL;
  sargs[2].i = 0;
  sargs[3].kind = TT_ARG_NONE;
  TT_CHECK_OK(call_op(rt, "aten::sum.dim_IntList", sargs, 4, &rv, 0));
  SUB(read_f32(rt, r, 4, got));
  for (int j = 0; j < 4; j++) TT_CHECK(got[j] == (float)(j + (j + 4) + (j + 8)));
  tt_storage_release(a);
  tt_storage_release(o);
  tt_storage_release(r);
}
static void test_op_mul_sum(void) { NEW_RT_ONLY(check_op_mul_sum); }

static void check_cache(tt_runtime_t* rt) {
  tt_storage_t *a = NULL, *b = NULL;
  TT_CHECK_OK(ab_storages(rt, 0, &a, &b));
  tt_runtime_stats_t s0, s1;
  /* contiguous views at offsets: the offsets are runtime values */
  tt_view_t a1 = VIEW(a, TT_F32, I64S(2, 3), I64S(3, 1), 3);
  tt_view_t b1 = VIEW(b, TT_F32, I64S(2, 3), I64S(3, 1), 7);
  SUB(add_views(rt, &a1, &b1, 1.0, 0, NULL));
  tt_runtime_get_stats(rt, -1, &s0);
  SUB(add_views(rt, &a1, &b1, 1.0, 0, NULL));
  tt_runtime_get_stats(rt, -1, &s1);
  if (s1.cache_hits != s0.cache_hits + 1 || s1.cache_misses != s0.cache_misses)
    FAILF("identical call: hits %lld -> %lld, misses %lld -> %lld", (long long)s0.cache_hits,
          (long long)s1.cache_hits, (long long)s0.cache_misses, (long long)s1.cache_misses);
  TT_CHECK(s1.cache_entries == s0.cache_entries);
  TT_CHECK(s1.executions == s0.executions + 1);
  /* other offsets: the same program */
  tt_view_t a2 = VIEW(a, TT_F32, I64S(2, 3), I64S(3, 1), 40);
  tt_view_t b2 = VIEW(b, TT_F32, I64S(2, 3), I64S(3, 1), 11);
  s0 = s1;
  SUB(add_views(rt, &a2, &b2, 1.0, 0, NULL));
  tt_runtime_get_stats(rt, -1, &s1);
  if (s1.cache_hits != s0.cache_hits + 1 || s1.cache_misses != s0.cache_misses)
    FAILF("other offsets: hits %lld -> %lld, misses %lld -> %lld", (long long)s0.cache_hits,
          (long long)s1.cache_hits, (long long)s0.cache_misses, (long long)s1.cache_misses);
  /* another shape: compiled anew */
  tt_view_t a3 = VIEW(a, TT_F32, I64S(3, 3), I64S(3, 1), 3);
  tt_view_t b3 = VIEW(b, TT_F32, I64S(3, 3), I64S(3, 1), 7);
  s0 = s1;
  SUB(add_views(rt, &a3, &b3, 1.0, 0, NULL));
  tt_runtime_get_stats(rt, -1, &s1);
  TT_CHECK(s1.cache_misses == s0.cache_misses + 1);
  TT_CHECK(s1.cache_entries == s0.cache_entries + 1);
  TT_CHECK(s1.compile_seconds > s0.compile_seconds);
  /* another alpha value: a runtime Scalar, the same program */
  SUB(add_views(rt, &a3, &b3, 2.0, 0, NULL)); /* a float alpha: another signature */
  tt_runtime_get_stats(rt, -1, &s0);
  SUB(add_views(rt, &a3, &b3, -3.5, 0, NULL));
  tt_runtime_get_stats(rt, -1, &s1);
  TT_CHECK(s1.cache_hits == s0.cache_hits + 1 && s1.cache_misses == s0.cache_misses);
  tt_storage_release(a);
  tt_storage_release(b);
}
static void test_cache(void) { NEW_RT_ONLY(check_cache); }

/* The slot a host scalar takes in the runtime's scalar cache (scalars.c). */
static size_t scalar_slot(int device, tt_dtype_t dt, uint64_t bits) {
  uint64_t key[3] = {(uint64_t)device, (uint64_t)dt, bits};
  return tt_hash_bytes(key, sizeof(key), 7) & (TT_SCALAR_CACHE - 1);
}

/* Two runtime scalars of one call (here: two dynamic view offsets) that take
 * the same scalar-cache slot: both must reach the program intact. */
static void check_scalar_collision(tt_runtime_t* rt) {
  int64_t x = -1, y = -1;
  for (int64_t i = 1; i <= 58 && x < 0; i++)
    for (int64_t j = i + 1; j <= 58 && x < 0; j++)
      if (scalar_slot(0, TT_I64, (uint64_t)i) == scalar_slot(0, TT_I64, (uint64_t)j)) {
        x = i;
        y = j;
      }
  if (x < 0) return; /* no colliding pair among the offsets: nothing to check */
  tt_storage_t *a = NULL, *b = NULL;
  TT_CHECK_OK(ab_storages(rt, 0, &a, &b));
  tt_view_t av = VIEW(a, TT_F32, I64S(2, 3), I64S(3, 1), x);
  tt_view_t bv = VIEW(b, TT_F32, I64S(2, 3), I64S(3, 1), y);
  for (int k = 0; k < 3; k++) SUB(add_views(rt, &av, &bv, 1.0, 0, NULL));
  tt_view_t bv2 = VIEW(b, TT_F32, I64S(2, 3), I64S(3, 1), x);
  tt_view_t av2 = VIEW(a, TT_F32, I64S(2, 3), I64S(3, 1), y);
  SUB(add_views(rt, &av2, &bv2, 1.0, 0, NULL));
  TT_CHECK_OK(tt_runtime_synchronize(rt, -1));
  tt_storage_release(a);
  tt_storage_release(b);
}
static void test_scalar_collision(void) { NEW_RT_ONLY(check_scalar_collision); }

static void check_devices(tt_runtime_t* rt) {
  TT_CHECK(tt_runtime_device_count(rt) == 2);
  tt_storage_t *a = NULL, *b = NULL, *c = NULL, *o = NULL;
  TT_CHECK_OK(ab_storages(rt, 1, &a, &b));
  TT_CHECK(tt_storage_device(a) == 1);
  tt_runtime_stats_t d1;
  tt_runtime_get_stats(rt, 1, &d1);
  TT_CHECK(d1.bytes_in_use >= 2 * 64 * 4 && d1.num_storages >= 2);
  tt_view_t at = VIEW(a, TT_F32, I64S(4, 3), I64S(1, 4), 2);
  tt_view_t bn = VIEW(b, TT_F32, I64S(4, 3), I64S(8, 1), 2);
  tt_storage_t* out = NULL;
  SUB(add_views(rt, &at, &bn, 2.0, 1, &out));
  TT_CHECK(tt_storage_device(out) == 1);
  tt_storage_release(out);
  /* mixing devices is refused, with the devices named */
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &c));
  TT_CHECK_OK(tt_storage_create(rt, 0, 48, &o));
  tt_view_t cv = VIEW(c, TT_F32, I64S(4, 3), I64S(3, 1), 0);
  tt_view_t ov = VIEW(o, TT_F32, I64S(4, 3), I64S(3, 1), 0);
  tt_call_arg_t args[3] = {targ(cv), targ(bn), sarg_i(1)};
  TT_CHECK_ERR(call_op(rt, "aten::add.Tensor", args, 3, &ov, 0), "same device", "tpu:1");
  TT_CHECK(tt_storage_state(o) == TT_STORAGE_EMPTY); /* not a sticky device error */
  tt_call_arg_t args2[3] = {targ(cv), targ(cv), sarg_i(1)};
  tt_view_t ov1 = VIEW(a, TT_F32, I64S(4, 3), I64S(3, 1), 0);
  TT_CHECK_ERR(call_op(rt, "aten::add.Tensor", args2, 3, &ov1, 0), "tpu:1", NULL);
  TT_CHECK_OK(tt_runtime_synchronize(rt, -1));
  tt_storage_release(a);
  tt_storage_release(b);
  tt_storage_release(c);
  tt_storage_release(o);
}
static void test_devices(void) { FOR_EACH_RT(check_devices); }

static void check_modes(tt_runtime_t* rt) {
  tt_storage_t *a = NULL, *b = NULL, *o1 = NULL, *o2 = NULL;
  TT_CHECK_OK(ab_storages(rt, 0, &a, &b));
  tt_view_t at = VIEW(a, TT_F32, I64S(5, 3), I64S(1, 6), 1);
  tt_view_t bs = VIEW(b, TT_F32, I64S(5, 3), I64S(2, 20), 0);
  tt_mode_t before = tt_runtime_mode();
  tt_runtime_set_mode(TT_MODE_STRICT);
  TT_CHECK(tt_runtime_mode() == TT_MODE_STRICT);
  SUB(add_views(rt, &at, &bs, 3.0, 0, &o1));
  tt_runtime_set_mode(TT_MODE_DEBUG);
  TT_CHECK(tt_runtime_mode() == TT_MODE_DEBUG);
  add_views(rt, &at, &bs, 3.0, 0, &o2);
  tt_runtime_set_mode(before);
  if (tt__cur_failed) return;
  float g1[15], g2[15];
  SUB(read_f32(rt, o1, 15, g1));
  SUB(read_f32(rt, o2, 15, g2));
  TT_CHECK(!memcmp(g1, g2, sizeof(g1)));
  tt_storage_release(a);
  tt_storage_release(b);
  tt_storage_release(o1);
  tt_storage_release(o2);
}
static void test_modes(void) { NEW_RT_ONLY(check_modes); }

/* fill_ of a 2^35-element f32 storage (128 GiB): the device runs out of memory. */
#define HUGE_NUMEL ((int64_t)1 << 35)
static tt_status_t fill_huge(tt_runtime_t* rt, tt_storage_t* s) {
  tt_view_t v = flat(s, TT_F32, HUGE_NUMEL);
  tt_call_arg_t args[2] = {targ(v), sarg_f(1.0)};
  return call_op(rt, "aten::fill_.Scalar", args, 2, &v, 0);
}

static void check_async_failure(tt_runtime_t* rt) {
  tt_mode_t before = tt_runtime_mode();
  tt_runtime_set_mode(TT_MODE_STRICT);
  TT_CHECK_OK(tt_runtime_synchronize(rt, -1));
  tt_storage_t *h = NULL, *x = NULL, *o = NULL;
  TT_CHECK_OK(tt_storage_create(rt, 0, (size_t)HUGE_NUMEL * 4, &h));
  tt_status_t st = fill_huge(rt, h);
  if (st) {
    tt_runtime_set_mode(before);
    FAILF("Strict: fill_ of 128 GiB returned at the call: %s", tt_status_message(st));
  }
  TT_CHECK_ERR(tt_runtime_synchronize(rt, -1), "aten::fill_.Scalar", "memory");
  TT_CHECK(tt_storage_state(h) == TT_STORAGE_FAILED);
  /* a later op reading it: OK at the call, the error at synchronize and read */
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 4, &x));
  TT_CHECK_OK(tt_storage_create(rt, 0, 16, &o));
  tt_view_t hv = VIEW(h, TT_F32, I64S(4), I64S(1), 8);
  tt_view_t xv = flat(x, TT_F32, 4), ov = flat(o, TT_F32, 4);
  tt_call_arg_t args[3] = {targ(hv), targ(xv), sarg_i(1)};
  TT_CHECK_OK(call_op(rt, "aten::add.Tensor", args, 3, &ov, 0));
  TT_CHECK_ERR(tt_runtime_synchronize(rt, 0), "aten::add.Tensor", "aten::fill_.Scalar");
  float f[4];
  TT_CHECK_ERR(tt_view_read_host(rt, &ov, f), "aten::fill_.Scalar", "memory");
  TT_CHECK_ERR(tt_view_read_host(rt, &hv, f), "aten::fill_.Scalar", NULL);
  /* the failure is sticky on the storages, not on the runtime */
  TT_CHECK_OK(tt_runtime_synchronize(rt, -1));
  TT_CHECK_OK(tt_view_read_host(rt, &xv, f));
  TT_CHECK(f[3] == 3.0f);
  /* a full overwrite of the failed output recovers it */
  const float ones[4] = {1, 1, 1, 1};
  TT_CHECK_OK(tt_view_write_host(rt, &ov, ones));
  TT_CHECK(tt_storage_state(o) == TT_STORAGE_MATERIALIZED);
  TT_CHECK_OK(tt_view_read_host(rt, &ov, f));
  TT_CHECK(f[0] == 1.0f);
  tt_storage_release(h);
  /* Debug mode: the call itself returns the error */
  TT_CHECK_OK(tt_storage_create(rt, 0, (size_t)HUGE_NUMEL * 4, &h));
  tt_runtime_set_mode(TT_MODE_DEBUG);
  st = fill_huge(rt, h);
  tt_runtime_set_mode(before);
  TT_CHECK_ERR(st, "aten::fill_.Scalar", "memory");
  TT_CHECK_OK(tt_runtime_synchronize(rt, -1));
  tt_storage_release(h);
  tt_storage_release(x);
  tt_storage_release(o);
  tt_runtime_stats_t s;
  tt_runtime_get_stats(rt, 0, &s);
  TT_CHECK(s.bytes_in_use < ((int64_t)1 << 30));
}
static void test_async_failure(void) { NEW_RT_ONLY(check_async_failure); }

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* "ok" lines in order with the FAIL lines on stderr */
  const char* paths[2] = {getenv("TT_TEST_PLUGIN_NEW"), getenv("TT_TEST_PLUGIN_OLD")};
  for (int i = 0; i < 2; i++) {
    if (!paths[i] || !*paths[i]) {
      printf("skip   the %s plugin: TT_TEST_PLUGIN_%s is not set\n", g_names[i], i ? "OLD" : "NEW");
      continue;
    }
    tt_status_t st = tt_runtime_open(paths[i], 2, &g_rt[i]);
    if (st) {
      printf("FAILED opening %s: %s\n", paths[i], tt_status_message(st));
      tt_status_free(st);
      tt__failed++;
    }
  }
  TT_RUN(test_storage_basics);
  TT_RUN(test_roundtrips);
  TT_RUN(test_resize);
  TT_RUN(test_storage_copy);
  TT_RUN(test_memory_stats);
  TT_RUN(test_view_reads);
  TT_RUN(test_view_writes);
  TT_RUN(test_op_add);
  TT_RUN(test_op_inplace);
  TT_RUN(test_op_mul_sum);
  TT_RUN(test_cache);
  TT_RUN(test_scalar_collision);
  TT_RUN(test_devices);
  TT_RUN(test_modes);
  TT_RUN(test_async_failure);
  for (int i = 0; i < 2; i++) tt_runtime_close(g_rt[i]);
  TT_REPORT();
}
