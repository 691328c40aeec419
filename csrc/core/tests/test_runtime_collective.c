/* Collectives across devices (runtime/collective.c, pjrt/pjrt_multi.c) on the
 * CPU plugins' two in-process devices, against a host reference: every kind,
 * reduction and a spread of dtypes, random data, both replica orders, views
 * in and out, Fused Eager, one-member groups, and the refusals. */
#include "runtime_test_util.h"
#include "../lower/tt_lower.h"

/* runtime_test_util.h helpers this file does not use */
static void unused_helpers(void) { (void)iota_storage; }

static uint64_t g_seed = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return g_seed;
}

/* Element i of a host array of dt as double / from double. */
static double get(const void* p, tt_dtype_t dt, int64_t i) {
  switch (dt) {
    case TT_F32: return ((const float*)p)[i];
    case TT_F64: return ((const double*)p)[i];
    case TT_I32: return ((const int32_t*)p)[i];
    case TT_I64: return (double)((const int64_t*)p)[i];
    case TT_U8: return ((const uint8_t*)p)[i];
    case TT_BOOL: return ((const uint8_t*)p)[i] != 0;
    default: return 0;
  }
}
static void put(void* p, tt_dtype_t dt, int64_t i, double v) {
  switch (dt) {
    case TT_F32: ((float*)p)[i] = (float)v; break;
    case TT_F64: ((double*)p)[i] = v; break;
    case TT_I32: ((int32_t*)p)[i] = (int32_t)v; break;
    case TT_I64: ((int64_t*)p)[i] = (int64_t)v; break;
    case TT_U8: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case TT_BOOL: ((uint8_t*)p)[i] = v != 0; break;
    default: break;
  }
}
static void fill(void* p, tt_dtype_t dt, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double v = (double)(rnd() % 15) - 7;
    if (dt == TT_F32 || dt == TT_F64) v += (double)(rnd() % 8) / 8.0;
    if (dt == TT_U8) v = (double)(rnd() % 12);
    if (dt == TT_BOOL) v = (double)(rnd() % 2);
    put(p, dt, i, v);
  }
}

/* a op b in dt, as the device computes it. */
static double combine(tt_coll_op_t op, tt_dtype_t dt, double a, double b) {
  double r;
  if (dt == TT_BOOL) return (op == TT_COLL_PROD || op == TT_COLL_MIN) ? (a && b) : (a || b);
  switch (op) {
    case TT_COLL_PROD: r = a * b; break;
    case TT_COLL_MIN: r = a < b ? a : b; break;
    case TT_COLL_MAX: r = a > b ? a : b; break;
    default: r = a + b; break;
  }
  if (dt == TT_F32) r = (float)r;
  return r;
}
static double avg(tt_dtype_t dt, double sum, int n) {
  if (dt == TT_F32) return (float)(sum / n);
  if (dt == TT_F64) return sum / n;
  return (double)(int64_t)(sum / n); /* integers truncate toward zero */
}

/* The reference result of member m (group rank) given every member's input. */
static void reference(const tt_collective_t* c, void* const* in, int m, void* out) {
  int n = c->group_size;
  int64_t k = c->count;
  tt_dtype_t dt = c->dtype;
  switch (c->kind) {
    case TT_COLL_ALL_REDUCE:
    case TT_COLL_REDUCE:
      for (int64_t i = 0; i < k; i++) {
        double r = get(in[0], dt, i);
        for (int j = 1; j < n; j++) r = combine(c->op, dt, r, get(in[j], dt, i));
        if (c->op == TT_COLL_AVG) r = avg(dt, r, n);
        if (c->kind == TT_COLL_REDUCE && m != c->root) r = get(in[m], dt, i);
        put(out, dt, i, r);
      }
      break;
    case TT_COLL_BROADCAST:
      for (int64_t i = 0; i < k; i++) put(out, dt, i, get(in[c->root], dt, i));
      break;
    case TT_COLL_ALL_GATHER:
      for (int j = 0; j < n; j++)
        for (int64_t i = 0; i < k; i++) put(out, dt, j * k + i, get(in[j], dt, i));
      break;
    case TT_COLL_REDUCE_SCATTER:
      for (int64_t i = 0; i < k; i++) {
        double r = get(in[0], dt, m * k + i);
        for (int j = 1; j < n; j++) r = combine(c->op, dt, r, get(in[j], dt, m * k + i));
        if (c->op == TT_COLL_AVG) r = avg(dt, r, n);
        put(out, dt, i, r);
      }
      break;
    case TT_COLL_ALL_TO_ALL:
      for (int j = 0; j < n; j++)
        for (int64_t i = 0; i < k; i++) put(out, dt, j * k + i, get(in[j], dt, m * k + i));
      break;
  }
}

static int64_t numel_in(const tt_collective_t* c) {
  return (c->kind == TT_COLL_REDUCE_SCATTER || c->kind == TT_COLL_ALL_TO_ALL) ? c->count * c->group_size
                                                                              : c->count;
}
static int64_t numel_out(const tt_collective_t* c) {
  return (c->kind == TT_COLL_ALL_GATHER || c->kind == TT_COLL_ALL_TO_ALL) ? c->count * c->group_size : c->count;
}

/* Runs c on the runtime's two devices (group rank r on device order[r]) and
 * compares with the reference. in_place: out is in (same-size kinds). */
static void run_case(tt_runtime_t* rt, tt_collective_t c, const int* order, bool in_place) {
  int64_t ids[2];
  for (int r = 0; r < 2; r++) TT_CHECK_OK(tt_runtime_device_global_id(rt, order[r], &ids[r]));
  c.group_size = 2;
  c.group_ids = ids;
  int64_t ni = numel_in(&c), no = numel_out(&c);
  size_t es = tt_dtype_size(c.dtype);
  void* host_in[2];
  tt_storage_t* sin[2] = {0};
  tt_storage_t* sout[2] = {0};
  tt_view_t vin[2], vout[2];
  for (int r = 0; r < 2; r++) {
    host_in[r] = malloc((size_t)ni * es + 1);
    fill(host_in[r], c.dtype, ni);
    TT_CHECK_OK(host_storage(rt, order[r], c.dtype, ni, host_in[r], &sin[r]));
    vin[r] = flat(sin[r], c.dtype, ni);
    if (in_place) {
      vout[r] = vin[r];
    } else {
      TT_CHECK_OK(tt_storage_create(rt, order[r], (size_t)no * es, &sout[r]));
      vout[r] = flat(sout[r], c.dtype, no);
    }
  }
  TT_CHECK_OK(tt_runtime_collective(rt, &c, vin, vout, 2));
  void* want = malloc((size_t)no * es + 1);
  void* got = malloc((size_t)no * es + 1);
  for (int r = 0; r < 2; r++) {
    reference(&c, host_in, r, want);
    TT_CHECK_OK(tt_view_read_host(rt, &vout[r], got));
    for (int64_t i = 0; i < no; i++) {
      double w = get(want, c.dtype, i), g = get(got, c.dtype, i);
      if (w != g) {
        fprintf(stderr, "  %s op %d %s count %lld rank %d elem %lld: want %g got %g\n",
                tt_coll_kind_name(c.kind), (int)c.op, tt_dtype_name(c.dtype), (long long)c.count, r,
                (long long)i, w, g);
        TT_CHECK(w == g);
      }
    }
  }
  for (int r = 0; r < 2; r++) {
    free(host_in[r]);
    tt_storage_release(sin[r]);
    tt_storage_release(sout[r]);
  }
  free(want);
  free(got);
}

static void check_kinds(tt_runtime_t* rt) {
  if (tt_runtime_device_count(rt) < 2) FAILF("the test runtime has %d device(s)", tt_runtime_device_count(rt));
  static const tt_dtype_t dts[] = {TT_F32, TT_F64, TT_I32, TT_I64, TT_U8, TT_BOOL};
  static const int orders[2][2] = {{0, 1}, {1, 0}};
  for (int kind = TT_COLL_ALL_REDUCE; kind <= TT_COLL_ALL_TO_ALL; kind++) {
    for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
      for (int op = TT_COLL_SUM; op <= TT_COLL_AVG; op++) {
        bool reduces = kind == TT_COLL_ALL_REDUCE || kind == TT_COLL_REDUCE || kind == TT_COLL_REDUCE_SCATTER;
        if (!reduces && op != TT_COLL_SUM) continue;
        if (dts[d] == TT_BOOL && op == TT_COLL_AVG) continue;
        if (dts[d] == TT_U8 && op == TT_COLL_PROD) continue; /* wraps: fine, but the reference is double */
        tt_collective_t c = {.kind = (tt_coll_kind_t)kind, .op = (tt_coll_op_t)op, .dtype = dts[d],
                             .count = 1 + (int64_t)(rnd() % 9), .root = (int)(rnd() % 2)};
        bool same = numel_in(&(tt_collective_t){.kind = c.kind, .count = 1, .group_size = 2}) ==
                    numel_out(&(tt_collective_t){.kind = c.kind, .count = 1, .group_size = 2});
        SUB(run_case(rt, c, orders[rnd() % 2], same && (rnd() % 2)));
      }
    }
  }
}
static void test_kinds(void) { FOR_EACH_RT(check_kinds); }

/* A strided input view and an output that is a view into a larger storage;
 * the input's storage holds another dtype's buffer; an empty storage. */
static void check_views(tt_runtime_t* rt) {
  int64_t ids[2];
  for (int r = 0; r < 2; r++) TT_CHECK_OK(tt_runtime_device_global_id(rt, r, &ids[r]));
  tt_collective_t c = {.kind = TT_COLL_ALL_REDUCE, .op = TT_COLL_SUM, .dtype = TT_F32, .count = 3,
                       .group_size = 2, .group_ids = ids};
  tt_storage_t* s[2];
  tt_storage_t* o[2];
  tt_view_t vin[2], vout[2];
  for (int r = 0; r < 2; r++) {
    float h[6];
    for (int i = 0; i < 6; i++) h[i] = (float)(10 * r + i);
    TT_CHECK_OK(host_storage(rt, r, TT_F32, 6, h, &s[r]));
    vin[r] = VIEW(s[r], TT_F32, I64S(3), I64S(2), 1); /* elements 1, 3, 5 */
    TT_CHECK_OK(tt_storage_create(rt, r, 8 * sizeof(float), &o[r]));
    vout[r] = VIEW(o[r], TT_F32, I64S(3), I64S(1), 4);
  }
  TT_CHECK_OK(tt_runtime_collective(rt, &c, vin, vout, 2));
  for (int r = 0; r < 2; r++) {
    float got[8];
    SUB(read_f32(rt, o[r], 8, got));
    TT_CHECK(got[0] == 0 && got[3] == 0 && got[7] == 0);                   /* untouched */
    TT_CHECK(got[4] == 1 + 11 && got[5] == 3 + 13 && got[6] == 5 + 15);  /* 1,3,5 + 11,13,15 */
  }
  /* an all_gather where one member's input was never written (zeros) and the
   * other's storage holds i32 bits read as f32 */
  tt_collective_t g = {.kind = TT_COLL_ALL_GATHER, .dtype = TT_F32, .count = 2, .group_size = 2, .group_ids = ids};
  tt_storage_t* e = NULL;
  tt_storage_t* bits = NULL;
  int32_t one[2] = {0x3f800000, 0x40000000}; /* 1.0f, 2.0f */
  TT_CHECK_OK(tt_storage_create(rt, 0, 8, &e));
  TT_CHECK_OK(host_storage(rt, 1, TT_I32, 2, one, &bits));
  tt_view_t gi[2] = {flat(e, TT_F32, 2), flat(bits, TT_F32, 2)};
  tt_storage_t* go[2];
  tt_view_t gv[2];
  for (int r = 0; r < 2; r++) {
    TT_CHECK_OK(tt_storage_create(rt, r, 16, &go[r]));
    gv[r] = flat(go[r], TT_F32, 4);
  }
  TT_CHECK_OK(tt_runtime_collective(rt, &g, gi, gv, 2));
  for (int r = 0; r < 2; r++) {
    float got[4];
    SUB(read_f32(rt, go[r], 4, got));
    TT_CHECK(got[0] == 0 && got[1] == 0 && got[2] == 1.0f && got[3] == 2.0f);
    tt_storage_release(go[r]);
    tt_storage_release(s[r]);
    tt_storage_release(o[r]);
  }
  tt_storage_release(e);
  tt_storage_release(bits);
}
static void test_views(void) { FOR_EACH_RT(check_views); }

/* In Fused Eager the recorded producers run first; the program is compiled
 * once per signature and group; a group of one member. */
static void check_fused_cache_single(tt_runtime_t* rt) {
  int64_t ids[2];
  for (int r = 0; r < 2; r++) TT_CHECK_OK(tt_runtime_device_global_id(rt, r, &ids[r]));
  TT_CHECK(ids[0] != ids[1]);
  tt_storage_t* s[2];
  tt_view_t v[2];
  for (int r = 0; r < 2; r++) {
    float h[4] = {1, 2, 3, 4};
    TT_CHECK_OK(host_storage(rt, r, TT_F32, 4, h, &s[r]));
    v[r] = flat(s[r], TT_F32, 4);
  }
  tt_runtime_set_mode(TT_MODE_FUSED);
  /* s += s (recorded, not run) on both devices */
  for (int r = 0; r < 2; r++) {
    tt_call_arg_t a[3] = {targ(v[r]), targ(v[r]), sarg_i(1)};
    tt_call_t call;
    memset(&call, 0, sizeof(call));
    call.op = tt_lower_find("aten::add.Tensor");
    call.args = a;
    call.nargs = 3;
    call.outs = &v[r];
    call.out_dtypes = &v[r].dtype;
    call.nout = 1;
    call.device = r;
    tt_status_t st = call.op ? tt_runtime_call(rt, &call) : tt_status_make(TT_NOT_FOUND, "no add");
    if (st) {
      tt_runtime_set_mode(TT_MODE_STRICT);
      TT_CHECK_OK(st);
    }
  }
  tt_collective_t c = {.kind = TT_COLL_ALL_REDUCE, .op = TT_COLL_MAX, .dtype = TT_F32, .count = 4,
                       .group_size = 2, .group_ids = ids};
  tt_runtime_stats_t st0, st1;
  tt_runtime_get_stats(rt, -1, &st0);
  tt_status_t st = tt_runtime_collective(rt, &c, v, v, 2);
  if (!st) st = tt_runtime_collective(rt, &c, v, v, 2);
  tt_runtime_set_mode(TT_MODE_STRICT);
  TT_CHECK_OK(st);
  tt_runtime_get_stats(rt, -1, &st1);
  TT_CHECK(st1.cache_misses - st0.cache_misses <= 2); /* the add (fused) and the collective, once */
  for (int r = 0; r < 2; r++) {
    float got[4];
    SUB(read_f32(rt, s[r], 4, got));
    TT_CHECK(got[0] == 2 && got[3] == 8);
  }
  /* a group of one: device 1 alone */
  tt_collective_t one = {.kind = TT_COLL_ALL_REDUCE, .op = TT_COLL_SUM, .dtype = TT_F32, .count = 4,
                         .group_size = 1, .group_ids = &ids[1]};
  TT_CHECK_OK(tt_runtime_collective(rt, &one, &v[1], &v[1], 1));
  float got[4];
  SUB(read_f32(rt, s[1], 4, got));
  TT_CHECK(got[0] == 2 && got[3] == 8);
  for (int r = 0; r < 2; r++) tt_storage_release(s[r]);
}
static void test_fused_cache_single(void) { NEW_RT_ONLY(check_fused_cache_single); }

static void check_refusals(tt_runtime_t* rt) {
  int64_t ids[2];
  for (int r = 0; r < 2; r++) TT_CHECK_OK(tt_runtime_device_global_id(rt, r, &ids[r]));
  tt_storage_t* s = NULL;
  tt_storage_t* z = NULL;
  TT_CHECK_OK(tt_storage_create(rt, 0, 16, &s));
  TT_CHECK_OK(tt_storage_create(rt, 0, 16, &z));
  tt_view_t v = flat(s, TT_F32, 4);
  tt_collective_t c = {.kind = TT_COLL_ALL_REDUCE, .dtype = TT_F32, .count = 4, .group_size = 1,
                       .group_ids = &ids[1]};
  TT_CHECK_ERR(tt_runtime_collective(rt, &c, &v, &v, 1), "not in the group", NULL);
  c.group_ids = ids;
  c.count = 3;
  TT_CHECK_ERR(tt_runtime_collective(rt, &c, &v, &v, 1), "member 0 passes 4", NULL);
  c.count = 2;
  c.dtype = TT_C64;
  tt_view_t cv = flat(z, TT_C64, 2);
  TT_CHECK_ERR(tt_runtime_collective(rt, &c, &cv, &cv, 1), "complex64", NULL);
  c.dtype = TT_F32;
  c.count = 4;
  c.kind = TT_COLL_BROADCAST;
  c.root = 1;
  TT_CHECK_ERR(tt_runtime_collective(rt, &c, &v, &v, 1), "root 1", NULL);
  tt_storage_release(s);
  tt_storage_release(z);
  /* the compile options: 2 replicas on devices 0 and 1 */
  unsigned char buf[64];
  size_t len = 0;
  TT_CHECK_OK(tt_pjrt_replicated_options(2, (const int64_t[]){0, 1}, buf, sizeof(buf), &len));
  /* 3 { num_replicas 2, num_partitions 1, 9 { 1: 2, 2: 1, 3 { 1: [0, 1] } } } */
  static const unsigned char want[] = {0x1a, 0x10, 0x20, 0x02, 0x28, 0x01, 0x4a, 0x0a, 0x08,
                                       0x02, 0x10, 0x01, 0x1a, 0x04, 0x0a, 0x02, 0x00, 0x01};
  TT_CHECK(len == sizeof(want) && memcmp(buf, want, sizeof(want)) == 0);
  TT_CHECK_ERR(tt_pjrt_replicated_options(2, (const int64_t[]){0, 1}, buf, 4, &len), "18 bytes", NULL);
}
static void test_refusals(void) { NEW_RT_ONLY(check_refusals); }

/* ---- the key-value store callbacks, called as a plugin calls them ------------- */
#include "../pjrt/pjrt_internal.h"

#define KV_MAX 8
static struct {
  char key[32], val[32];
  size_t vlen;
} g_kv[KV_MAX];
static int g_nkv;
static int g_err_code;

static tt_status_t mem_try_get(void* ctx, const char* key, size_t klen, char** v, size_t* n) {
  (void)ctx;
  for (int i = 0; i < g_nkv; i++) {
    if (strlen(g_kv[i].key) == klen && !memcmp(g_kv[i].key, key, klen)) {
      *v = malloc(g_kv[i].vlen + 1);
      memcpy(*v, g_kv[i].val, g_kv[i].vlen);
      *n = g_kv[i].vlen;
      return NULL;
    }
  }
  return tt_status_make(TT_NOT_FOUND, "no key %.*s", (int)klen, key);
}
static tt_status_t mem_get(void* ctx, const char* key, size_t klen, int timeout_ms, char** v, size_t* n) {
  tt_status_t st = mem_try_get(ctx, key, klen, v, n);
  if (st && timeout_ms < 100) { /* "waited" and gave up */
    tt_status_free(st);
    return tt_status_make(TT_UNAVAILABLE, "timed out after %d ms", timeout_ms);
  }
  return st;
}
static tt_status_t mem_put(void* ctx, const char* key, size_t klen, const char* v, size_t vlen) {
  (void)ctx;
  if (g_nkv == KV_MAX || klen >= 32 || vlen > 32) return tt_status_make(TT_RESOURCE_EXHAUSTED, "full");
  memcpy(g_kv[g_nkv].key, key, klen);
  g_kv[g_nkv].key[klen] = 0;
  memcpy(g_kv[g_nkv].val, v, vlen);
  g_kv[g_nkv].vlen = vlen;
  g_nkv++;
  return NULL;
}
static tt_abi_error_t* fake_error(int code, const char* msg, size_t len) {
  (void)msg;
  (void)len;
  g_err_code = code;
  return (tt_abi_error_t*)&g_err_code; /* any non-NULL handle */
}

static void test_kv_callbacks(void) {
  struct tt_pjrt p;
  memset(&p, 0, sizeof(p));
  p.kv = (tt_pjrt_kv_t){NULL, mem_get, mem_try_get, mem_put};
  tt_abi_fn get, try_get, put;
  tt__pjrt_kv_callbacks(&get, &try_get, &put);
  tt_abi_callback_error_fn make = fake_error;
  /* struct_size and extension_start are left as garbage, as the plugin does */
  tt_abi_kv_put_args_t pa;
  memset(&pa, 0xab, sizeof(pa));
  pa.key = "local_topology/cuda/0";
  pa.key_size = strlen(pa.key);
  pa.value = "bytes\0with nul";
  pa.value_size = 14;
  pa.callback_error = &make;
  pa.user_arg = &p;
  TT_CHECK(put(&pa) == NULL && g_nkv == 1);
  tt_abi_kv_get_args_t ga;
  memset(&ga, 0xab, sizeof(ga));
  ga.key = pa.key;
  ga.key_size = pa.key_size;
  ga.timeout_in_ms = 1000;
  ga.callback_error = &make;
  ga.user_arg = &p;
  TT_CHECK(get(&ga) == NULL);
  TT_CHECK(ga.value_size == 14 && !memcmp(ga.value, "bytes\0with nul", 14) && ga.value_deleter_callback);
  ga.value_deleter_callback(ga.value);
  tt_abi_kv_try_get_args_t ta;
  memset(&ta, 0xab, sizeof(ta));
  ta.key = "global_topology/cuda";
  ta.key_size = strlen(ta.key);
  ta.callback_error = &make;
  ta.user_arg = &p;
  g_err_code = 0;
  TT_CHECK(try_get(&ta) != NULL && g_err_code == 5); /* PJRT_Error_Code_NOT_FOUND */
  ga.key = ta.key;
  ga.key_size = ta.key_size;
  ga.timeout_in_ms = 10;
  g_err_code = 0;
  TT_CHECK(get(&ga) != NULL && g_err_code == 14); /* UNAVAILABLE */
  ta.key = pa.key;
  ta.key_size = pa.key_size;
  TT_CHECK(try_get(&ta) == NULL && ta.value_size == 14);
  ta.value_deleter_callback(ta.value);
}

/* A client across processes on the CPU plugin: options it refuses, or a
 * client of this process only (no global devices beyond its own): either
 * way not one the collectives may span processes with. */
static void test_open_multi(void) {
  const char* path = getenv("TT_TEST_PLUGIN_NEW");
  if (!path) FAILF("TT_TEST_PLUGIN_NEW is not set");
  tt_pjrt_options_t o;
  memset(&o, 0, sizeof(o));
  o.num_nodes = 2;
  o.node_id = 0;
  tt_pjrt_t* p = NULL;
  TT_CHECK_ERR(tt_pjrt_open_with(path, &o, &p), "key-value store", NULL);
  o.kv = (tt_pjrt_kv_t){NULL, mem_get, mem_try_get, mem_put};
  o.node_id = 2;
  TT_CHECK_ERR(tt_pjrt_open_with(path, &o, &p), "node_id 2", NULL);
  o.node_id = 1;
  tt_status_t st = tt_pjrt_open_with(path, &o, &p);
  if (st) {
    printf("  (the CPU plugin refuses a client across processes: %s)\n", tt_status_message(st));
    tt_status_free(st);
  } else {
    const tt_pjrt_info_t* info = tt_pjrt_get_info(p);
    TT_CHECK(info->num_global_devices == info->num_devices);
    tt_pjrt_close(p);
  }
}

int main(void) {
  unused_helpers();
  open_runtimes();
  TT_RUN(test_kinds);
  TT_RUN(test_views);
  TT_RUN(test_fused_cache_single);
  TT_RUN(test_refusals);
  TT_RUN(test_kv_callbacks);
  TT_RUN(test_open_multi);
  close_runtimes();
  TT_REPORT();
}
