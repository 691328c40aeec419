/* Tests of the runtime's storages and views without Python (runtime/storage.c,
 * view.c, memory.c): storage states, round trips, resize, copies, memory stats,
 * the device capacity, and reading/writing every kind of strided view, checked
 * against a C model that walks (sizes, strides, offset) over the storage's
 * elements. */
#include "runtime_test_util.h"

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

/* A host window is the storage's bytes in place: written through it, read
 * back by the runtime and by a program; none for views that are not the
 * whole storage, for another dtype, or for a storage never written. */
static void check_host_window(tt_runtime_t* rt) {
  const float f[6] = {1, 2, 3, 4, 5, 6};
  tt_storage_t* s = NULL;
  TT_CHECK_OK(host_storage(rt, 0, TT_F32, 6, f, &s));
  tt_view_t v = flat(s, TT_F32, 6);
  void* addr = NULL;
  TT_CHECK_OK(tt_view_host_window(rt, &v, &addr));
  if (!addr) { /* the CPU plugins' device memory is host memory, unless reads from it are off */
    if (tt_env_flag(TT_ENV_HOST_ADDRESS_READS)) FAILF("no host window on a CPU plugin");
    tt_storage_release(s);
    return;
  }
  TT_CHECK(memcmp(addr, f, sizeof(f)) == 0);
  ((float*)addr)[2] = -30.0f;
  float got[6];
  SUB(read_f32(rt, s, 6, got));
  TT_CHECK(got[2] == -30.0f && got[5] == 6.0f);
  tt_view_t odd = VIEW(s, TT_F32, I64S(3), I64S(2), 0); /* through a program */
  TT_CHECK_OK(tt_view_read_host(rt, &odd, got));
  TT_CHECK(got[0] == 1.0f && got[1] == -30.0f && got[2] == 5.0f);
  void* none = &none;
  TT_CHECK_OK(tt_view_host_window(rt, &odd, &none));
  TT_CHECK(none == NULL);
  tt_view_t as_i32 = flat(s, TT_I32, 6);
  none = &none;
  TT_CHECK_OK(tt_view_host_window(rt, &as_i32, &none));
  TT_CHECK(none == NULL);
  tt_storage_t* e = NULL;
  TT_CHECK_OK(tt_storage_create(rt, 0, 24, &e));
  tt_view_t ev = flat(e, TT_F32, 6);
  none = &none;
  TT_CHECK_OK(tt_view_host_window(rt, &ev, &none));
  TT_CHECK(none == NULL && tt_storage_state(e) == TT_STORAGE_EMPTY);
  tt_storage_release(e);
  tt_storage_release(s);
}
static void test_host_window(void) { FOR_EACH_RT(check_host_window); }

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

/* ---- device capacity ------------------------------------------------------------ */

/* A runtime of its own whose capacity TORCH_TPU_MEMORY_LIMIT sets: storages
 * beyond it are refused (nothing changes), within it they work, the CPU
 * plugin's devices share it, resize_ growth is checked. */
static void test_memory_limit(void) {
  const char* path = getenv("TT_TEST_PLUGIN_NEW");
  if (!path || !*path) FAILF("TT_TEST_PLUGIN_NEW is not set");
  setenv("TORCH_TPU_MEMORY_LIMIT", "1M", 1);
  tt_runtime_t* rt = NULL;
  tt_status_t st = tt_runtime_open(path, 2, &rt);
  unsetenv("TORCH_TPU_MEMORY_LIMIT");
  TT_CHECK_OK(st);
  if (!rt) return;
  int64_t fr = 0, total = 0;
  tt_runtime_memory_info(rt, 0, &fr, &total);
  TT_CHECK(total == 1 << 20 && fr == total);
  tt_storage_t *a = NULL, *b = NULL, *c = NULL;
  st = tt_storage_create(rt, 0, 2 << 20, &a);
  TT_CHECK(st && tt_status_code(st) == TT_RESOURCE_EXHAUSTED && !a);
  TT_CHECK(st && strstr(tt_status_message(st), "Tried to allocate 2.00 MiB"));
  tt_status_free(st);
  TT_CHECK_OK(tt_storage_create(rt, 0, 600 << 10, &a));
  st = tt_storage_create(rt, 1, 600 << 10, &b); /* device 1 shares the host's memory */
  TT_CHECK(st && tt_status_code(st) == TT_RESOURCE_EXHAUSTED && !b);
  tt_status_free(st);
  TT_CHECK_OK(tt_storage_create(rt, 1, 400 << 10, &b));
  tt_runtime_memory_info(rt, 0, &fr, &total);
  TT_CHECK(fr == (1 << 20) - (1000 << 10));
  st = tt_storage_resize(b, 500 << 10); /* 100 KiB more: beyond */
  TT_CHECK(st && tt_status_code(st) == TT_RESOURCE_EXHAUSTED);
  tt_status_free(st);
  TT_CHECK(tt_storage_nbytes(b) == 400 << 10);
  TT_CHECK_OK(tt_storage_resize(b, 100 << 10)); /* shrinking gives back */
  TT_CHECK_OK(tt_storage_create(rt, 0, 300 << 10, &c));
  tt_storage_release(a);
  tt_storage_release(b);
  tt_storage_release(c);
  tt_runtime_memory_info(rt, 1, &fr, &total);
  TT_CHECK(fr == total);
  tt_runtime_close(rt);
  /* a malformed value is an error at open, naming the variable */
  setenv("TORCH_TPU_MEMORY_LIMIT", "lots", 1);
  st = tt_runtime_open(path, 1, &rt);
  unsetenv("TORCH_TPU_MEMORY_LIMIT");
  TT_CHECK(st && strstr(tt_status_message(st), "TORCH_TPU_MEMORY_LIMIT=lots"));
  tt_status_free(st);
}

int main(void) {
  TT_RUN(test_memory_limit);
  open_runtimes();
  TT_RUN(test_storage_basics);
  TT_RUN(test_roundtrips);
  TT_RUN(test_host_window);
  TT_RUN(test_resize);
  TT_RUN(test_storage_copy);
  TT_RUN(test_memory_stats);
  TT_RUN(test_view_reads);
  TT_RUN(test_view_writes);
  close_runtimes();
  TT_REPORT();
}
