/* Shared helpers for the lowering-family tests (matmul, reduce, nn, index,
 * create): argument builders, plugin set-up and value comparison on top of
 * lower_harness.h. Header-only; include after tt_test.h.
 * Env: TT_TEST_PLUGIN_NEW (API 0.115), TT_TEST_PLUGIN_OLD (API 0.81); a
 * missing variable skips the tests that need that plugin. */
#ifndef TT_LOWER_CHECK_H_
#define TT_LOWER_CHECK_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_harness.h"
#include "tt_test.h"

static tt_pjrt_t* lc_new; /* API 0.115 plugin, NULL: skipped */
static tt_pjrt_t* lc_old; /* API 0.81 plugin */

static tt_pjrt_t* lc_open_one(const char* env) {
  return th_open_plugin(env);
}

static void lc_open(void) {
  lc_new = lc_open_one("TT_TEST_PLUGIN_NEW");
  lc_old = lc_open_one("TT_TEST_PLUGIN_OLD");
}

static void lc_close(void) {
  tt_pjrt_close(lc_new);
  tt_pjrt_close(lc_old);
}

/* ---- argument builders ---------------------------------------------------------- */
#define LC_DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define LC_RANK(...) ((int)(sizeof(LC_DIMS(__VA_ARGS__)) / sizeof(int64_t)))
#define TY(dt, ...) tt_type_make(dt, LC_RANK(__VA_ARGS__), LC_DIMS(__VA_ARGS__))
#define TY0(dt) tt_type_scalar(dt)

static inline th_arg_t lc_tensor(tt_type_t t, const void* data) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = TT_ARG_TENSOR;
  a.tier = t.rank ? TT_TIER_DIM : TT_TIER_ZERO_DIM;
  a.type = t;
  a.data = data;
  return a;
}
/* a tensor of dtype dt, dims..., with data given as a compound literal */
#define T_F32(data, ...) lc_tensor(TY(TT_F32, __VA_ARGS__), (const float[])data)
#define ARR(...) {__VA_ARGS__}

static inline th_arg_t lc_scalar_f(const double* v) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = TT_ARG_SCALAR;
  a.type = tt_type_scalar(TT_F64);
  a.data = v;
  return a;
}
static inline th_arg_t lc_scalar_i(const int64_t* v) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = TT_ARG_SCALAR;
  a.type = tt_type_scalar(TT_I64);
  a.data = v;
  return a;
}
#define SF(v) lc_scalar_f((const double[]){v})
#define SI(v) lc_scalar_i((const int64_t[]){v})

static inline th_arg_t lc_kind(tt_arg_kind_t k, int64_t i, double f) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = k;
  a.i = i;
  a.f = f;
  return a;
}
#define NONE() lc_kind(TT_ARG_NONE, 0, 0)
#define OUT() lc_kind(TT_ARG_OUT, 0, 0)
#define INT(v) lc_kind(TT_ARG_INT, v, 0)
#define BOOL(v) lc_kind(TT_ARG_BOOL, v, 0)
#define FLT(v) lc_kind(TT_ARG_FLOAT, 0, v)

static inline th_arg_t lc_ints(const int64_t* v, int n) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = TT_ARG_INTS;
  a.ints = v;
  a.n = n;
  return a;
}
#define INTS(...) lc_ints(LC_DIMS(__VA_ARGS__), LC_RANK(__VA_ARGS__))
#define INTS0() lc_ints(NULL, 0)

static inline th_arg_t lc_str(const char* s) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = TT_ARG_STR;
  a.str = s;
  return a;
}
static inline th_arg_t lc_list(const th_arg_t* items, int n) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = TT_ARG_TENSORS;
  a.list = items;
  a.n = n;
  return a;
}
static const uint64_t lc_seed_a[2] = {1234, 0}, lc_seed_b[2] = {99, 7};
static inline th_arg_t lc_rng(const uint64_t* state) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = TT_ARG_RNG;
  a.type = tt_type_make(TT_U64, 1, (const int64_t[]){2});
  a.data = state;
  return a;
}

/* ---- running --------------------------------------------------------------------- */

#define LC_MAXOUT 8
typedef struct lc_result {
  void* out[LC_MAXOUT];
  int nout;
} lc_result_t;

static inline void lc_free(lc_result_t* r) {
  for (int i = 0; i < r->nout; i++) free(r->out[i]);
  memset(r, 0, sizeof(*r));
}

/* Runs `name` on plugin p; prints the status on failure. */
static inline bool lc_run(tt_pjrt_t* p, const char* name, const th_arg_t* args, int nargs,
                          const tt_type_t* outs, int nout, lc_result_t* r) {
  memset(r, 0, sizeof(*r));
  if (nout > LC_MAXOUT) {
    fprintf(stderr, "  %s: %d outputs, lc_run keeps at most %d\n", name, nout, LC_MAXOUT);
    return false;
  }
  tt_sbuf_t text;
  tt_sbuf_init(&text);
  tt_status_t st = th_run(p, name, args, nargs, outs, nout, r->out, &text);
  r->nout = nout;
  if (st) {
    fprintf(stderr, "  %s: %s\n", name, tt_status_message(st));
    if (getenv("LC_VERBOSE") && text.data) fprintf(stderr, "%s\n", text.data);
    tt_status_free(st);
    tt_sbuf_free(&text);
    lc_free(r);
    return false;
  }
  if (getenv("LC_VERBOSE") && text.data) fprintf(stderr, "%s\n", text.data);
  tt_sbuf_free(&text);
  return true;
}
#define NARGS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- comparing ------------------------------------------------------------------- */
static inline bool lc_close_f32(const float* got, const float* want, int64_t n, double rtol,
                                double atol) {
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    if (isnan(w) && isnan(g)) continue;
    if (isinf(w) && g == w) continue;
    if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
      fprintf(stderr, "  element %lld: got %.9g, want %.9g\n", (long long)i, g, w);
      return false;
    }
  }
  return true;
}
static inline bool lc_eq_i64(const int64_t* got, const int64_t* want, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (got[i] != want[i]) {
      fprintf(stderr, "  element %lld: got %lld, want %lld\n", (long long)i, (long long)got[i],
              (long long)want[i]);
      return false;
    }
  }
  return true;
}
static inline bool lc_eq_bytes(const uint8_t* got, const uint8_t* want, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (got[i] != want[i]) {
      fprintf(stderr, "  byte %lld: got %u, want %u\n", (long long)i, got[i], want[i]);
      return false;
    }
  }
  return true;
}
#define WANT_F32(r, k, n, rtol, ...) \
  TT_CHECK(lc_close_f32((const float*)(r).out[k], (const float[]){__VA_ARGS__}, n, rtol, rtol))
#define WANT_I64(r, k, n, ...) TT_CHECK(lc_eq_i64((const int64_t*)(r).out[k], (const int64_t[]){__VA_ARGS__}, n))

/* bf16 <-> f32 (round to nearest even) for test data */
static inline uint16_t lc_bf16(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static inline float lc_from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float x;
  memcpy(&x, &u, 4);
  return x;
}

#endif /* TT_LOWER_CHECK_H_ */
