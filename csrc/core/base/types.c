/* dtypes, tensor types, string buffers, hashing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_base.h"

typedef struct dtype_info {
  size_t size;
  const char* mlir;
  const char* name;
  char kind; /* 'b' bool, 'f' float, 's' signed, 'u' unsigned, 'c' complex */
} dtype_info_t;

static const dtype_info_t k_dtypes[] = {
    [TT_BOOL] = {1, "i1", "bool", 'b'},      [TT_U8] = {1, "ui8", "uint8", 'u'},
    [TT_I8] = {1, "i8", "int8", 's'},        [TT_I16] = {2, "i16", "int16", 's'},
    [TT_I32] = {4, "i32", "int32", 's'},     [TT_I64] = {8, "i64", "int64", 's'},
    [TT_F16] = {2, "f16", "float16", 'f'},   [TT_BF16] = {2, "bf16", "bfloat16", 'f'},
    [TT_F32] = {4, "f32", "float32", 'f'},   [TT_F64] = {8, "f64", "float64", 'f'},
    [TT_U16] = {2, "ui16", "uint16", 'u'},   [TT_U32] = {4, "ui32", "uint32", 'u'},
    [TT_U64] = {8, "ui64", "uint64", 'u'},
    [TT_C64] = {8, "complex<f32>", "complex64", 'c'},
    [TT_C128] = {16, "complex<f64>", "complex128", 'c'},
    [TT_F8E4M3FN] = {1, "f8E4M3FN", "float8_e4m3fn", 'f'},
    [TT_F8E5M2] = {1, "f8E5M2", "float8_e5m2", 'f'},
    [TT_F8E4M3FNUZ] = {1, "f8E4M3FNUZ", "float8_e4m3fnuz", 'f'},
    [TT_F8E5M2FNUZ] = {1, "f8E5M2FNUZ", "float8_e5m2fnuz", 'f'},
    [TT_C32] = {4, "complex<f16>", "complex32", 'c'},
};
_Static_assert(sizeof(k_dtypes) / sizeof(k_dtypes[0]) == TT_DTYPE_COUNT, "dtype table");

size_t tt_dtype_size(tt_dtype_t dt) { return dt < TT_DTYPE_COUNT ? k_dtypes[dt].size : 0; }
const char* tt_dtype_mlir(tt_dtype_t dt) { return dt < TT_DTYPE_COUNT ? k_dtypes[dt].mlir : "?"; }
const char* tt_dtype_name(tt_dtype_t dt) { return dt < TT_DTYPE_COUNT ? k_dtypes[dt].name : "?"; }
bool tt_dtype_is_float(tt_dtype_t dt) { return dt < TT_DTYPE_COUNT && k_dtypes[dt].kind == 'f'; }
bool tt_dtype_is_signed_int(tt_dtype_t dt) { return dt < TT_DTYPE_COUNT && k_dtypes[dt].kind == 's'; }
bool tt_dtype_is_unsigned_int(tt_dtype_t dt) { return dt < TT_DTYPE_COUNT && k_dtypes[dt].kind == 'u'; }
bool tt_dtype_is_complex(tt_dtype_t dt) { return dt < TT_DTYPE_COUNT && k_dtypes[dt].kind == 'c'; }
bool tt_dtype_is_f8(tt_dtype_t dt) {
  return dt == TT_F8E4M3FN || dt == TT_F8E5M2 || dt == TT_F8E4M3FNUZ || dt == TT_F8E5M2FNUZ;
}
tt_dtype_t tt_dtype_real_part(tt_dtype_t dt) {
  return dt == TT_C64 ? TT_F32 : dt == TT_C128 ? TT_F64 : dt == TT_C32 ? TT_F16 : dt;
}
tt_dtype_t tt_dtype_complex_of(tt_dtype_t dt) {
  return tt_dtype_is_complex(dt) ? dt : dt == TT_F64 ? TT_C128 : TT_C64;
}

tt_dtype_t tt_dtype_buffer(tt_dtype_t dt) { return dt == TT_C32 ? TT_F16 : dt; }
int64_t tt_dtype_buffer_factor(tt_dtype_t dt) { return dt == TT_C32 ? 2 : 1; }
tt_dtype_t tt_dtype_compute(tt_dtype_t dt) { return dt == TT_C32 ? TT_C64 : dt; }

int64_t tt_type_numel(const tt_type_t* t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank && i < TT_MAX_RANK; i++) n *= t->dims[i];
  return n;
}

bool tt_type_equal(const tt_type_t* a, const tt_type_t* b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank && i < TT_MAX_RANK; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

tt_type_t tt_type_make(tt_dtype_t dt, int32_t rank, const int64_t* dims) {
  tt_type_t t;
  memset(&t, 0, sizeof(t));
  t.dtype = dt;
  t.rank = rank;
  for (int i = 0; i < rank && i < TT_MAX_RANK; i++) t.dims[i] = dims[i];
  return t;
}

tt_type_t tt_type_scalar(tt_dtype_t dt) { return tt_type_make(dt, 0, NULL); }

int tt_type_format(const tt_type_t* t, char* buf, size_t cap) {
  size_t n = 0;
#define PUT(...)                                                        \
  do {                                                                  \
    int w = snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__); \
    if (w > 0) n += (size_t)w;                                          \
  } while (0)
  PUT("tensor<");
  if (t->rank < 0 || t->rank > TT_MAX_RANK) PUT("?x"); /* never set dims: not read */
  else
    for (int i = 0; i < t->rank; i++) PUT("%lldx", (long long)t->dims[i]);
  PUT("%s>", tt_dtype_mlir(t->dtype));
#undef PUT
  return (int)n;
}

void tt_sbuf_init(tt_sbuf_t* b) { memset(b, 0, sizeof(*b)); }
void tt_sbuf_free(tt_sbuf_t* b) {
  free(b->data);
  memset(b, 0, sizeof(*b));
}
void tt_sbuf_clear(tt_sbuf_t* b) {
  b->len = 0;
  if (b->data) b->data[0] = 0;
}

static bool sbuf_reserve(tt_sbuf_t* b, size_t extra) {
  if (b->oom) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  char* d = realloc(b->data, cap);
  if (!d) {
    b->oom = true;
    return false;
  }
  b->data = d;
  b->cap = cap;
  return true;
}

void tt_sbuf_appendn(tt_sbuf_t* b, const char* s, size_t n) {
  if (!sbuf_reserve(b, n)) return;
  if (n) memcpy(b->data + b->len, s, n); /* s may be NULL when n == 0 (an empty int[]) */
  b->len += n;
  b->data[b->len] = 0;
}

void tt_sbuf_append(tt_sbuf_t* b, const char* s) { tt_sbuf_appendn(b, s, strlen(s)); }

void tt_sbuf_printf(tt_sbuf_t* b, const char* fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n > 0 && sbuf_reserve(b, (size_t)n)) {
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
  }
  va_end(ap);
}

/* 8 bytes at a time (multiply-xorshift per word), then a final avalanche;
 * cache keys are also compared byte for byte, so quality only affects speed. */
uint64_t tt_hash_bytes(const void* data, size_t n, uint64_t seed) {
  const unsigned char* p = data;
  uint64_t h = 0x9e3779b97f4a7c15ull ^ seed ^ (n * 0xff51afd7ed558ccdull);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, p, n);
  h = (h ^ w) * 0x94d049bb133111ebull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}
