/* Tests of captured programs (runtime/capture.c) without Python: a capture
 * replayed on other inputs, in-place results, refusals, stale programs; and
 * of where Fused Eager cuts its graph (runtime/fuse.c). Both are the graph
 * layer's work (DESIGN §2), still in runtime/ today. */
#include <pthread.h>

#include "runtime_test_util.h"

/* out = a + alpha * b (all dense f32 of n) */
static tt_status_t add(tt_runtime_t* rt, tt_storage_t* a, tt_storage_t* b, double alpha, tt_storage_t* out,
                       int64_t n) {
  tt_call_arg_t args[3] = {targ(flat(a, TT_F32, n)), targ(flat(b, TT_F32, n)), sarg_f(alpha)};
  tt_view_t ov = flat(out, TT_F32, n);
  tt_call_t c;
  memset(&c, 0, sizeof(c));
  c.op = tt_lower_find("aten::add.Tensor");
  c.args = args;
  c.nargs = 3;
  c.outs = &ov;
  c.out_dtypes = &ov.dtype;
  c.nout = 1;
  return tt_runtime_call(rt, &c);
}

static void expect_f32(tt_runtime_t* rt, tt_storage_t* s, int64_t n, float (*want)(int64_t),
                       const char* what) {
  float got[64];
  read_f32(rt, s, n, got);
  if (tt__cur_failed) return;
  for (int64_t i = 0; i < n; i++)
    if (got[i] != want(i)) FAILF("%s[%lld] = %g, expected %g", what, (long long)i, (double)got[i], (double)want(i));
}

static float iota_f(int64_t i) { return (float)i; }
static float two_iota(int64_t i) { return 2.0f * (float)i; }
static float three_iota(int64_t i) { return 3.0f * (float)i; }   /* i + 2*i */
static float five_iota(int64_t i) { return 5.0f * (float)i; }    /* a += 2*2i */
static float nine_iota(int64_t i) { return 9.0f * (float)i; }    /* t = i + 2*2i, o = t + 2*2i */

/* Records t = a + 2b; o = t + 2b (o an output, t an intermediate) and
 * a += 2b in place, then captures them. */
static void record_graph(tt_runtime_t* rt, tt_storage_t* a, tt_storage_t* b, tt_storage_t** o,
                         tt_capture_t** cap, const char** why) {
  *cap = NULL;
  TT_CHECK_OK(tt_capture_begin(rt));
  tt_runtime_set_mode(TT_MODE_FUSED);
  tt_storage_t* t = NULL;
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &t));
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, o));
  TT_CHECK_OK(add(rt, a, b, 2.0, t, 64));
  TT_CHECK_OK(add(rt, t, b, 2.0, *o, 64));
  TT_CHECK_OK(add(rt, a, b, 2.0, a, 64));
  tt_storage_release(t); /* dead before the program runs: not a result */
  tt_runtime_set_mode(TT_MODE_STRICT);
  tt_storage_t* ins[2] = {a, b};
  TT_CHECK_OK(tt_capture_end(rt, ins, 2, o, 1, NULL, 0, 0, 0, 0, cap, why));
}

static void check_replay(tt_runtime_t* rt) {
  tt_storage_t *a = NULL, *b = NULL, *o = NULL, *a2 = NULL, *b2 = NULL;
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &a));
  float h[64];
  for (int i = 0; i < 64; i++) h[i] = 2.0f * (float)i;
  TT_CHECK_OK(host_storage(rt, 0, TT_F32, 64, h, &b));
  tt_capture_t* cap = NULL;
  const char* why = NULL;
  int64_t exec0 = 0;
  SUB(record_graph(rt, a, b, &o, &cap, &why));
  if (!cap) FAILF("capture refused: %s", why ? why : "?");
  SUB(expect_f32(rt, o, 64, nine_iota, "o (recorded)"));
  SUB(expect_f32(rt, a, 64, five_iota, "a (recorded, in place)"));
  TT_CHECK(tt_capture_new_count(cap) == 1);
  TT_CHECK(tt_capture_output_slot(cap, 0) == -1);
  TT_CHECK(tt_capture_new_nbytes(cap, 0) == 64 * 4);
  /* replay on fresh inputs: o2 = 9i, a2 becomes 5i; the old ones stay */
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &a2));
  TT_CHECK_OK(host_storage(rt, 0, TT_F32, 64, h, &b2));
  tt_storage_t* o2 = NULL;
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &o2));
  tt_runtime_stats_t s0, s1;
  tt_runtime_get_stats(rt, -1, &s0);
  exec0 = s0.executions;
  bool stale = true;
  tt_storage_t* ins[2] = {a2, b2};
  TT_CHECK_OK(tt_capture_replay(rt, cap, ins, 2, &o2, NULL, 0, 0, 0, &stale));
  TT_CHECK(!stale);
  tt_runtime_get_stats(rt, -1, &s1);
  TT_CHECK(s1.executions == exec0 + 1);
  TT_CHECK(s1.cache_misses == s0.cache_misses);
  SUB(expect_f32(rt, o2, 64, nine_iota, "o2 (replayed)"));
  SUB(expect_f32(rt, a2, 64, five_iota, "a2 (replayed, in place)"));
  SUB(expect_f32(rt, b2, 64, two_iota, "b2 (read only)"));
  /* the wrong number of inputs is an error, not a crash */
  TT_CHECK_ERR(tt_capture_replay(rt, cap, ins, 1, &o2, NULL, 0, 0, 0, &stale), "inputs", NULL);
  /* a program dropped from the cache: stale, nothing runs */
  TT_CHECK_OK(tt_runtime_clear_cache(rt, false));
  TT_CHECK_OK(tt_capture_replay(rt, cap, ins, 2, &o2, NULL, 0, 0, 0, &stale));
  TT_CHECK(stale);
  SUB(expect_f32(rt, a2, 64, five_iota, "a2 (stale: unchanged)"));
  tt_capture_destroy(cap);
  tt_storage_t* all[] = {a, b, o, a2, b2, o2};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) tt_storage_release(all[i]);
}
static void test_replay(void) { FOR_EACH_RT(check_replay); }

/* Records o = (a + h1) + h2 for host 0-dim f32 values h1 = 10 (host_id 42)
 * and h2 = 100 (a Python number: no identity, a constant). */
static void record_host(tt_runtime_t* rt, tt_storage_t* a, tt_storage_t** o) {
  tt_storage_t* t = NULL;
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &t));
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, o));
  tt_call_arg_t h[2];
  float hv[2] = {10.0f, 100.0f};
  for (int k = 0; k < 2; k++) {
    memset(&h[k], 0, sizeof(h[k]));
    h[k].kind = TT_ARG_TENSOR;
    h[k].tier = k ? TT_TIER_WRAPPED : TT_TIER_ZERO_DIM;
    h[k].on_host = true;
    h[k].sdtype = TT_F32;
    memcpy(h[k].scalar.bytes, &hv[k], 4);
    h[k].host_id = k ? 0 : 42;
  }
  tt_view_t tv = flat(t, TT_F32, 64), ov = flat(*o, TT_F32, 64);
  tt_call_arg_t a1[3] = {targ(flat(a, TT_F32, 64)), h[0], sarg_f(1.0)};
  tt_call_arg_t a2[3] = {targ(tv), h[1], sarg_f(1.0)};
  tt_call_t c;
  memset(&c, 0, sizeof(c));
  c.op = tt_lower_find("aten::add.Tensor");
  c.nargs = 3;
  c.nout = 1;
  c.args = a1;
  c.outs = &tv;
  c.out_dtypes = &tv.dtype;
  tt_runtime_set_mode(TT_MODE_FUSED);
  TT_CHECK_OK(tt_runtime_call(rt, &c));
  c.args = a2;
  c.outs = &ov;
  c.out_dtypes = &ov.dtype;
  TT_CHECK_OK(tt_runtime_call(rt, &c));
  tt_runtime_set_mode(TT_MODE_STRICT);
  tt_storage_release(t);
}

static void check_host_values(tt_runtime_t* rt) {
  tt_storage_t *a = NULL, *o = NULL, *o2 = NULL;
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &a));
  tt_capture_t* cap = NULL;
  const char* why = NULL;
  uint64_t ids[1] = {42};
  tt_storage_t* ins[1] = {a};
  /* a host tensor that is not a named host value: refused */
  TT_CHECK_OK(tt_capture_begin(rt));
  SUB(record_host(rt, a, &o));
  TT_CHECK_OK(tt_capture_end(rt, ins, 1, &o, 1, NULL, 0, 0, 0, 0, &cap, &why));
  TT_CHECK(!cap && why && strstr(why, "host values"));
  tt_storage_release(o);
  TT_CHECK_OK(tt_capture_begin(rt));
  SUB(record_host(rt, a, &o));
  TT_CHECK_OK(tt_capture_end(rt, ins, 1, &o, 1, ids, 1, 0, 0, 0, &cap, &why));
  if (!cap) FAILF("capture refused: %s", why ? why : "?");
  float got[64];
  read_f32(rt, o, 64, got);
  TT_CHECK(got[3] == 113.0f);
  /* replay with h1 = 1000: o2 = i + 1000 + 100 */
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &o2));
  float h1 = 1000.0f;
  const void* vals[1] = {&h1};
  bool stale = true;
  TT_CHECK_OK(tt_capture_replay(rt, cap, ins, 1, &o2, vals, 1, 0, 0, &stale));
  TT_CHECK(!stale);
  read_f32(rt, o2, 64, got);
  for (int i = 0; i < 64; i++)
    if (got[i] != (float)i + 1100.0f) FAILF("o2[%d] = %g, expected %g", i, (double)got[i], (double)i + 1100.0);
  TT_CHECK_ERR(tt_capture_replay(rt, cap, ins, 1, &o2, vals, 0, 0, 0, &stale), "host values", NULL);
  tt_capture_destroy(cap);
  tt_storage_release(a);
  tt_storage_release(o);
  tt_storage_release(o2);
}
static void test_host_values(void) { FOR_EACH_RT(check_host_values); }

static void check_refusals(tt_runtime_t* rt) {
  tt_storage_t *a = NULL, *b = NULL, *other = NULL, *o = NULL;
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &a));
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &b));
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &other));
  tt_capture_t* cap = NULL;
  const char* why = NULL;
  tt_storage_t* ins[2] = {a, b};
  /* a storage that is not an input */
  TT_CHECK_OK(tt_capture_begin(rt));
  tt_runtime_set_mode(TT_MODE_FUSED);
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &o));
  TT_CHECK_OK(add(rt, a, other, 1.0, o, 64));
  tt_runtime_set_mode(TT_MODE_STRICT);
  TT_CHECK_OK(tt_capture_end(rt, ins, 2, &o, 1, NULL, 0, 0, 0, 0, &cap, &why));
  TT_CHECK(!cap && why && strstr(why, "not one of its inputs"));
  SUB(expect_f32(rt, o, 64, two_iota, "o (refused: a + other)"));
  tt_storage_release(o);
  /* a host write inside: two programs, not one */
  TT_CHECK_OK(tt_capture_begin(rt));
  tt_runtime_set_mode(TT_MODE_FUSED);
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &o));
  TT_CHECK_OK(add(rt, a, b, 1.0, o, 64));
  float h[64] = {0};
  tt_view_t bv = flat(b, TT_F32, 64);
  TT_CHECK_OK(tt_view_write_host(rt, &bv, h));
  TT_CHECK_OK(add(rt, o, b, 1.0, o, 64));
  tt_runtime_set_mode(TT_MODE_STRICT);
  TT_CHECK_OK(tt_capture_end(rt, ins, 2, &o, 1, NULL, 0, 0, 0, 0, &cap, &why));
  TT_CHECK(!cap && why && strstr(why, "one program"));
  SUB(expect_f32(rt, o, 64, two_iota, "o (refused: a + b, then + zeros)"));
  tt_storage_release(o);
  /* an abort leaves the recorded calls to run as Fused Eager runs them */
  TT_CHECK_OK(tt_capture_begin(rt));
  tt_runtime_set_mode(TT_MODE_FUSED);
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &o));
  TT_CHECK_OK(add(rt, a, a, 2.0, o, 64));
  tt_runtime_set_mode(TT_MODE_STRICT);
  tt_capture_abort(rt);
  SUB(expect_f32(rt, o, 64, three_iota, "o after an abort"));
  tt_storage_release(o);
  tt_storage_release(a);
  tt_storage_release(b);
  tt_storage_release(other);
}
static void test_refusals(void) { FOR_EACH_RT(check_refusals); }

/* ---- Fused Eager: a cut where another thread starts recording ---------------------- */

typedef struct {
  tt_runtime_t* rt;
  tt_storage_t *a, *b, *o;
  int64_t executions; /* programs run by the time its call was recorded */
  tt_status_t st;
} other_thread_t;

static void* record_on_other_thread(void* p) {
  other_thread_t* t = p;
  tt_runtime_set_mode(TT_MODE_FUSED);
  t->st = add(t->rt, t->a, t->b, 1.0, t->o, 64);
  tt_runtime_stats_t s;
  tt_runtime_get_stats(t->rt, -1, &s);
  t->executions = s.executions;
  tt_runtime_set_mode(TT_MODE_STRICT);
  return NULL;
}

/* Records `calls` adds (o = o + 2b, from a) on this thread, then one on
 * another thread: the graph runs before the other thread's call if it held
 * at least 8 calls (so autograd's backward thread starts a program for the
 * forward recorded before it), and never inside a capture. */
static void thread_cut(tt_runtime_t* rt, int calls, bool capture, bool want_cut) {
  tt_storage_t *a = NULL, *b = NULL, *o = NULL, *o2 = NULL;
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &a));
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &b));
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &o));
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &o2));
  TT_CHECK_OK(tt_runtime_flush(rt));
  tt_runtime_stats_t s0, s1;
  tt_runtime_get_stats(rt, -1, &s0);
  if (capture) TT_CHECK_OK(tt_capture_begin(rt));
  tt_runtime_set_mode(TT_MODE_FUSED);
  TT_CHECK_OK(add(rt, a, b, 0.0, o, 64)); /* o = a */
  for (int i = 1; i < calls; i++) TT_CHECK_OK(add(rt, o, b, 2.0, o, 64));
  other_thread_t t = {rt, o, b, o2, -1, NULL};
  pthread_t th;
  TT_CHECK(pthread_create(&th, NULL, record_on_other_thread, &t) == 0);
  pthread_join(th, NULL);
  TT_CHECK_OK(t.st);
  TT_CHECK(t.executions == s0.executions + (want_cut ? 1 : 0));
  tt_runtime_set_mode(TT_MODE_STRICT);
  if (capture) tt_capture_abort(rt);
  TT_CHECK_OK(tt_runtime_flush(rt));
  tt_runtime_get_stats(rt, -1, &s1);
  TT_CHECK(s1.executions == s0.executions + (want_cut ? 2 : 1));
  /* o = i + 2 (calls - 1) * i, o2 = o + i */
  float got[64], got2[64];
  read_f32(rt, o, 64, got);
  read_f32(rt, o2, 64, got2);
  for (int i = 0; i < 64 && !tt__cur_failed; i++) {
    float want = (float)i * (float)(2 * calls - 1);
    if (got[i] != want || got2[i] != want + (float)i)
      FAILF("calls=%d: o[%d] = %g, o2[%d] = %g; expected %g, %g", calls, i, (double)got[i], i,
            (double)got2[i], (double)want, (double)(want + (float)i));
  }
  tt_storage_release(a);
  tt_storage_release(b);
  tt_storage_release(o);
  tt_storage_release(o2);
}

static void check_thread_cut(tt_runtime_t* rt) {
  SUB(thread_cut(rt, 8, false, true));
  SUB(thread_cut(rt, 7, false, false));
  SUB(thread_cut(rt, 12, true, false));
}
static void test_thread_cut(void) { FOR_EACH_RT(check_thread_cut); }

/* A program reading an empty storage (e += 2b, e never written: zeros) makes
 * the zeros itself (no buffer passed in, call.c use_initial); its capture
 * replays on another empty input, and refuses (stale) a written one. */
static void check_empty_initial(tt_runtime_t* rt) {
  tt_storage_t *e = NULL, *b = NULL, *e2 = NULL, *e3 = NULL;
  float h[64];
  for (int i = 0; i < 64; i++) h[i] = (float)i;
  TT_CHECK_OK(host_storage(rt, 0, TT_F32, 64, h, &b));
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &e));
  tt_capture_t* cap = NULL;
  const char* why = NULL;
  TT_CHECK_OK(tt_capture_begin(rt));
  tt_runtime_set_mode(TT_MODE_FUSED);
  TT_CHECK_OK(add(rt, e, b, 2.0, e, 64));
  tt_runtime_set_mode(TT_MODE_STRICT);
  tt_storage_t* ins[2] = {e, b};
  TT_CHECK_OK(tt_capture_end(rt, ins, 2, NULL, 0, NULL, 0, 0, 0, 0, &cap, &why));
  if (!cap) FAILF("capture refused: %s", why ? why : "?");
  SUB(expect_f32(rt, e, 64, two_iota, "e (recorded)"));
  bool stale = true;
  TT_CHECK_OK(tt_storage_create(rt, 0, 64 * 4, &e2)); /* empty: replays */
  tt_storage_t* ins2[2] = {e2, b};
  TT_CHECK_OK(tt_capture_replay(rt, cap, ins2, 2, NULL, NULL, 0, 0, 0, &stale));
  TT_CHECK(!stale);
  SUB(expect_f32(rt, e2, 64, two_iota, "e2 (replayed on an empty input)"));
  TT_CHECK_OK(iota_storage(rt, 0, TT_F32, 64, &e3)); /* written: not zeros, stale */
  tt_storage_t* ins3[2] = {e3, b};
  TT_CHECK_OK(tt_capture_replay(rt, cap, ins3, 2, NULL, NULL, 0, 0, 0, &stale));
  TT_CHECK(stale);
  SUB(expect_f32(rt, e3, 64, iota_f, "e3 (stale: unchanged)"));
  /* Strict: the same call on the written storage reads its values (another program) */
  TT_CHECK_OK(add(rt, e3, b, 2.0, e3, 64));
  SUB(expect_f32(rt, e3, 64, three_iota, "e3 += 2b"));
  tt_capture_destroy(cap);
  tt_storage_t* all[] = {e, b, e2, e3};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) tt_storage_release(all[i]);
}
static void test_empty_initial(void) { FOR_EACH_RT(check_empty_initial); }

int main(void) {
  open_runtimes();
  TT_RUN(test_replay);
  TT_RUN(test_host_values);
  TT_RUN(test_refusals);
  TT_RUN(test_thread_cut);
  TT_RUN(test_empty_initial);
  close_runtimes();
  TT_REPORT();
}
