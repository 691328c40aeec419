/* Helpers for the elementwise lowering tests (test_lower_elementwise_unary.c,
 * _binary.c, _foreach.c): argument constructors over caller-owned data,
 * one-call runners on the current plugin, and comparisons that print every
 * mismatch. Header-only, test code only. */
#ifndef TT_EW_TEST_UTIL_H_
#define TT_EW_TEST_UTIL_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_harness.h"
#include "tt_test.h"

static tt_pjrt_t* ew_plugin; /* the plugin the runners use */

static inline th_arg_t ew_t(tt_dtype_t dt, int rank, const int64_t* dims, const void* data) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = TT_ARG_TENSOR;
  a.tier = rank ? TT_TIER_DIM : TT_TIER_ZERO_DIM;
  a.type = tt_type_make(dt, rank, dims);
  a.data = data;
  return a;
}
/* 1-D tensor of n elements */
static inline th_arg_t ew_t1(tt_dtype_t dt, int64_t n, const void* data) { return ew_t(dt, 1, &n, data); }
/* Python number wrapped as a 0-d tensor */
static inline th_arg_t ew_wrapped(tt_dtype_t dt, const void* data) {
  th_arg_t a = ew_t(dt, 0, NULL, data);
  a.tier = TT_TIER_WRAPPED;
  return a;
}
static inline th_arg_t ew_scalar(tt_dtype_t dt, const void* data) {
  th_arg_t a = ew_t(dt, 0, NULL, data);
  a.kind = TT_ARG_SCALAR;
  return a;
}
#define EW_SF(v) ew_scalar(TT_F64, &(double){(v)})
#define EW_SI(v) ew_scalar(TT_I64, &(int64_t){(v)})
static inline th_arg_t ew_kind(tt_arg_kind_t k) {
  th_arg_t a;
  memset(&a, 0, sizeof a);
  a.kind = k;
  return a;
}
static inline th_arg_t ew_int(tt_arg_kind_t k, int64_t v) {
  th_arg_t a = ew_kind(k); /* TT_ARG_INT or TT_ARG_BOOL */
  a.i = v;
  return a;
}
static inline th_arg_t ew_float(double v) {
  th_arg_t a = ew_kind(TT_ARG_FLOAT);
  a.f = v;
  return a;
}
static inline th_arg_t ew_str(const char* s) {
  th_arg_t a = ew_kind(TT_ARG_STR);
  a.str = s;
  return a;
}
static inline th_arg_t ew_list(tt_arg_kind_t k, const th_arg_t* list, int n) {
  th_arg_t a = ew_kind(k); /* TT_ARG_TENSORS / TT_ARG_SCALARS */
  a.list = list;
  a.n = n;
  return a;
}

/* Runs `name` on ew_plugin; on success out[i] are malloc'd host copies. */
static inline tt_status_t ew_run(const char* name, const th_arg_t* args, int nargs,
                                 const tt_type_t* outs, int nout, void** out) {
  for (int i = 0; i < nout; i++) out[i] = NULL;
  return th_run(ew_plugin, name, args, nargs, outs, nout, out, NULL);
}

/* Single output of `type`; returns NULL (after printing) on failure. */
static inline void* ew_run1(const char* name, const th_arg_t* args, int nargs, tt_type_t type) {
  void* out = NULL;
  tt_status_t st = ew_run(name, args, nargs, &type, 1, &out);
  if (st) {
    fprintf(stderr, "  %s: %s\n", name, tt_status_message(st));
    tt_status_free(st);
    free(out);
    return NULL;
  }
  return out;
}

static inline bool ew_close(double got, double want, double rtol, double atol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= atol + rtol * fabs(want);
}

/* Compares n values (got read as dtype dt) against want; prints mismatches. */
static inline int ew_check(const char* what, tt_dtype_t dt, const void* got, const double* want, int n,
                           double rtol, double atol) {
  int bad = 0;
  for (int i = 0; i < n; i++) {
    double g;
    switch (dt) {
      case TT_F32: g = ((const float*)got)[i]; break;
      case TT_F64: g = ((const double*)got)[i]; break;
      case TT_I64: g = (double)((const int64_t*)got)[i]; break;
      case TT_I32: g = ((const int32_t*)got)[i]; break;
      case TT_U8: g = ((const uint8_t*)got)[i]; break;
      case TT_BOOL: g = ((const uint8_t*)got)[i] ? 1 : 0; break;
      case TT_BF16: {
        uint32_t bits = (uint32_t)((const uint16_t*)got)[i] << 16;
        float fv;
        memcpy(&fv, &bits, 4);
        g = fv;
        break;
      }
      default: g = NAN; break;
    }
    if (!ew_close(g, want[i], rtol, atol)) {
      if (bad < 4) fprintf(stderr, "  %s[%d]: got %.9g want %.9g\n", what, i, g, want[i]);
      bad++;
    }
  }
  return bad;
}

/* bf16 <-> float with round-to-nearest-even (NaN kept quiet). */
static inline uint16_t ew_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7FFF + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static inline float ew_from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Opens the plugin named by env var `env`; NULL (and a note) if unset. */
static inline tt_pjrt_t* ew_open(const char* env) {
  return th_open_plugin(env);
}

#endif /* TT_EW_TEST_UTIL_H_ */
