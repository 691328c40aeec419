/* Tests of op calls through the runtime without Python (runtime/call.c and
 * what a call uses: cache.c, scalars.c, runtime.c): functional and in-place
 * ops on views, Scalars, the executable cache, devices, modes and
 * asynchronous errors. */
#include "runtime_test_util.h"

/* ---- op calls ---------------------------------------------------------------------- */

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

/* ---- complex32 ----------------------------------------------------------------------- */

/* complex32 (TT_C32): held as f16 (re, im) pairs, computed in complex64. A
 * product into a fresh storage, an in-place add through a stepped view (the
 * elements between keep their bits), a read of the same bytes as f16, a
 * copy to complex64. */
static void check_complex32(tt_runtime_t* rt) {
  const _Float16 a[8] = {1, 2, -0.5f, 3, 0, 1, 2048, 1}; /* 1+2i, -0.5+3i, i, 2048+i */
  const _Float16 b[8] = {2, -1, 1, 1, 0, 1, 1, 0.5f};   /* 2-i, 1+i, i, 1+0.5i */
  tt_storage_t *sa = NULL, *sb = NULL, *so = NULL, *sc = NULL;
  TT_CHECK_OK(host_storage(rt, 0, TT_C32, 4, a, &sa));
  TT_CHECK_OK(host_storage(rt, 0, TT_C32, 4, b, &sb));
  TT_CHECK_OK(tt_storage_create(rt, 0, 16, &so));
  tt_view_t va = flat(sa, TT_C32, 4), vb = flat(sb, TT_C32, 4), vo = flat(so, TT_C32, 4);
  tt_call_arg_t args[2] = {targ(va), targ(vb)};
  TT_CHECK_OK(call_op(rt, "aten::mul.Tensor", args, 2, &vo, 0));
  _Float16 got[8];
  TT_CHECK_OK(tt_view_read_host(rt, &vo, got));
  /* 2048+i times 1+0.5i = 2047.5+1025i: f16 rounds 2047.5 to 2048 once */
  const float want[8] = {4, 3, -3.5f, 2.5f, -1, 0, 2048, 1025};
  for (int i = 0; i < 8; i++)
    if ((float)got[i] != want[i]) FAILF("complex32 mul: part %d is %g, expected %g", i, (double)got[i], (double)want[i]);
  /* a[0::2] += b[0::2]: elements 0 and 2 change, 1 and 3 keep their bits */
  tt_view_t step = VIEW(sa, TT_C32, I64S(2), I64S(2), 0);
  tt_view_t bstep = VIEW(sb, TT_C32, I64S(2), I64S(2), 0);
  tt_call_arg_t iargs[3] = {targ(step), targ(bstep), sarg_i(1)};
  TT_CHECK_OK(call_op(rt, "aten::add.Tensor", iargs, 3, &step, 0));
  _Float16 parts[8];
  tt_view_t as_f16 = flat(sa, TT_F16, 8);
  TT_CHECK_OK(tt_view_read_host(rt, &as_f16, parts));
  const float want2[8] = {3, 1, -0.5f, 3, 0, 2, 2048, 1};
  for (int i = 0; i < 8; i++)
    if ((float)parts[i] != want2[i]) FAILF("complex32 add_: part %d is %g, expected %g", i, (double)parts[i], (double)want2[i]);
  /* to complex64 (exact) */
  TT_CHECK_OK(tt_storage_create(rt, 0, 32, &sc));
  tt_view_t vc = flat(sc, TT_C64, 4);
  TT_CHECK_OK(tt_runtime_copy(rt, &vc, &va));
  float wide[8];
  TT_CHECK_OK(tt_view_read_host(rt, &vc, wide));
  for (int i = 0; i < 8; i++)
    if (wide[i] != want2[i]) FAILF("complex32 to complex64: part %d is %g, expected %g", i, (double)wide[i], (double)want2[i]);
  tt_storage_release(sa);
  tt_storage_release(sb);
  tt_storage_release(so);
  tt_storage_release(sc);
}
static void test_complex32(void) { FOR_EACH_RT(check_complex32); }

int main(void) {
  /* test_async_failure needs a 128 GiB storage that the plugin fails to
   * allocate at run time; the capacity check (runtime/memory.c) would refuse
   * it at creation, so this binary raises the capacity above it. */
  setenv("TORCH_TPU_MEMORY_LIMIT", "1024T", 1);
  open_runtimes();
  TT_RUN(test_op_add);
  TT_RUN(test_op_inplace);
  TT_RUN(test_op_mul_sum);
  TT_RUN(test_cache);
  TT_RUN(test_scalar_collision);
  TT_RUN(test_devices);
  TT_RUN(test_modes);
  TT_RUN(test_async_failure);
  TT_RUN(test_complex32);
  close_runtimes();
  TT_REPORT();
}
