/* Tests of base/types.c: the dtype table (sizes, MLIR and PyTorch names,
 * kinds, complex <-> real), tensor types (make, numel, equality, text),
 * string buffers and byte hashing. No plugin needed. */
#include "tt_test.h"

/* ---- dtypes ------------------------------------------------------------------------ */
static const struct {
  tt_dtype_t dt;
  size_t size;
  const char* mlir;
  const char* name;
  char kind; /* 'b' bool, 'f' float, 's' signed, 'u' unsigned, 'c' complex, '8' float8 */
} k_dtypes[] = {
    {TT_BOOL, 1, "i1", "bool", 'b'},
    {TT_U8, 1, "ui8", "uint8", 'u'},
    {TT_I8, 1, "i8", "int8", 's'},
    {TT_I16, 2, "i16", "int16", 's'},
    {TT_I32, 4, "i32", "int32", 's'},
    {TT_I64, 8, "i64", "int64", 's'},
    {TT_F16, 2, "f16", "float16", 'f'},
    {TT_BF16, 2, "bf16", "bfloat16", 'f'},
    {TT_F32, 4, "f32", "float32", 'f'},
    {TT_F64, 8, "f64", "float64", 'f'},
    {TT_U16, 2, "ui16", "uint16", 'u'},
    {TT_U32, 4, "ui32", "uint32", 'u'},
    {TT_U64, 8, "ui64", "uint64", 'u'},
    {TT_C64, 8, "complex<f32>", "complex64", 'c'},
    {TT_C128, 16, "complex<f64>", "complex128", 'c'},
    {TT_F8E4M3FN, 1, "f8E4M3FN", "float8_e4m3fn", '8'},
    {TT_F8E5M2, 1, "f8E5M2", "float8_e5m2", '8'},
    {TT_F8E4M3FNUZ, 1, "f8E4M3FNUZ", "float8_e4m3fnuz", '8'},
    {TT_F8E5M2FNUZ, 1, "f8E5M2FNUZ", "float8_e5m2fnuz", '8'},
    {TT_C32, 4, "complex<f16>", "complex32", 'c'},
};
_Static_assert(sizeof(k_dtypes) / sizeof(k_dtypes[0]) == TT_DTYPE_COUNT, "a dtype without a row here");

static void test_dtype_table(void) {
  for (int i = 0; i < TT_DTYPE_COUNT; i++) {
    tt_dtype_t dt = k_dtypes[i].dt;
    TT_CHECK(dt == (tt_dtype_t)i);
    bool ok = tt_dtype_size(dt) == k_dtypes[i].size && strcmp(tt_dtype_mlir(dt), k_dtypes[i].mlir) == 0 &&
              strcmp(tt_dtype_name(dt), k_dtypes[i].name) == 0;
    if (!ok) fprintf(stderr, "  dtype %d: %zu %s %s\n", i, tt_dtype_size(dt), tt_dtype_mlir(dt), tt_dtype_name(dt));
    TT_CHECK(ok);
  }
  /* outside the table: size 0, "?" */
  TT_CHECK(tt_dtype_size(TT_DTYPE_COUNT) == 0 && strcmp(tt_dtype_name(TT_DTYPE_COUNT), "?") == 0 &&
           strcmp(tt_dtype_mlir(TT_DTYPE_COUNT), "?") == 0);
}

/* Each dtype is of exactly one kind; float8 counts as float; bool is neither
 * signed nor unsigned; complex is not float. */
static void test_dtype_kinds(void) {
  for (int i = 0; i < TT_DTYPE_COUNT; i++) {
    tt_dtype_t dt = k_dtypes[i].dt;
    char k = k_dtypes[i].kind;
    bool ok = tt_dtype_is_float(dt) == (k == 'f' || k == '8') && tt_dtype_is_f8(dt) == (k == '8') &&
              tt_dtype_is_signed_int(dt) == (k == 's') && tt_dtype_is_unsigned_int(dt) == (k == 'u') &&
              tt_dtype_is_complex(dt) == (k == 'c');
    if (!ok) fprintf(stderr, "  %s: kinds differ from '%c'\n", k_dtypes[i].name, k);
    TT_CHECK(ok);
  }
  TT_CHECK(!tt_dtype_is_float(TT_DTYPE_COUNT) && !tt_dtype_is_signed_int(TT_DTYPE_COUNT) &&
           !tt_dtype_is_unsigned_int(TT_DTYPE_COUNT) && !tt_dtype_is_complex(TT_DTYPE_COUNT));
}

static void test_complex_real(void) {
  TT_CHECK(tt_dtype_real_part(TT_C64) == TT_F32);
  TT_CHECK(tt_dtype_real_part(TT_C128) == TT_F64);
  TT_CHECK(tt_dtype_real_part(TT_BF16) == TT_BF16 && tt_dtype_real_part(TT_I32) == TT_I32);
  TT_CHECK(tt_dtype_complex_of(TT_F64) == TT_C128);
  TT_CHECK(tt_dtype_complex_of(TT_F32) == TT_C64 && tt_dtype_complex_of(TT_F16) == TT_C64 &&
           tt_dtype_complex_of(TT_BF16) == TT_C64);
  TT_CHECK(tt_dtype_complex_of(TT_C64) == TT_C64 && tt_dtype_complex_of(TT_C128) == TT_C128);
  /* complex32: held as f16 pairs, computed in complex64 */
  TT_CHECK(tt_dtype_real_part(TT_C32) == TT_F16 && tt_dtype_is_complex(TT_C32));
  TT_CHECK(tt_dtype_buffer(TT_C32) == TT_F16 && tt_dtype_buffer_factor(TT_C32) == 2);
  TT_CHECK(tt_dtype_compute(TT_C32) == TT_C64 && tt_dtype_compute(TT_F16) == TT_F16);
  TT_CHECK(tt_dtype_buffer(TT_C64) == TT_C64 && tt_dtype_buffer_factor(TT_C64) == 1);
  /* a complex element is two of its real part */
  TT_CHECK(tt_dtype_size(TT_C64) == 2 * tt_dtype_size(tt_dtype_real_part(TT_C64)));
  TT_CHECK(tt_dtype_size(TT_C128) == 2 * tt_dtype_size(tt_dtype_real_part(TT_C128)));
}

/* ---- tensor types -------------------------------------------------------------------- */
static void test_type_make(void) {
  const int64_t d[3] = {2, 3, 4};
  tt_type_t t = tt_type_make(TT_F32, 3, d);
  TT_CHECK(t.dtype == TT_F32 && t.rank == 3 && t.dims[0] == 2 && t.dims[1] == 3 && t.dims[2] == 4);
  for (int i = 3; i < TT_MAX_RANK; i++) TT_CHECK(t.dims[i] == 0); /* unused dims are zero (types are hashed) */
  TT_CHECK(tt_type_numel(&t) == 24);
  tt_type_t s = tt_type_scalar(TT_I64);
  TT_CHECK(s.rank == 0 && s.dtype == TT_I64 && tt_type_numel(&s) == 1);
  for (int i = 0; i < TT_MAX_RANK; i++) TT_CHECK(s.dims[i] == 0);
  const int64_t z[2] = {5, 0};
  tt_type_t e = tt_type_make(TT_BF16, 2, z);
  TT_CHECK(tt_type_numel(&e) == 0);
  /* a rank beyond TT_MAX_RANK is kept; only TT_MAX_RANK dims are read */
  int64_t big[TT_MAX_RANK + 1], want = 1;
  for (int i = 0; i < TT_MAX_RANK; i++) want *= big[i] = 1 + i % 2;
  big[TT_MAX_RANK] = 7;
  tt_type_t b = tt_type_make(TT_F32, TT_MAX_RANK + 1, big);
  TT_CHECK(b.rank == TT_MAX_RANK + 1 && tt_type_numel(&b) == want);
}

static void test_type_equal(void) {
  const int64_t d[2] = {2, 3}, d2[2] = {3, 2};
  tt_type_t a = tt_type_make(TT_F32, 2, d), b = tt_type_make(TT_F32, 2, d);
  TT_CHECK(tt_type_equal(&a, &b));
  tt_type_t c = tt_type_make(TT_F16, 2, d), e = tt_type_make(TT_F32, 2, d2), f = tt_type_make(TT_F32, 1, d);
  TT_CHECK(!tt_type_equal(&a, &c));
  TT_CHECK(!tt_type_equal(&a, &e));
  TT_CHECK(!tt_type_equal(&a, &f));
  tt_type_t s1 = tt_type_scalar(TT_F32), s2 = tt_type_make(TT_F32, 0, d);
  TT_CHECK(tt_type_equal(&s1, &s2));
}

static void test_type_format(void) {
  char buf[64];
  const int64_t d[2] = {2, 3}, one[1] = {4};
  tt_type_t t = tt_type_make(TT_F32, 2, d);
  TT_CHECK(tt_type_format(&t, buf, sizeof buf) == 15 && strcmp(buf, "tensor<2x3xf32>") == 0);
  tt_type_t s = tt_type_scalar(TT_BOOL);
  TT_CHECK(tt_type_format(&s, buf, sizeof buf) == 10 && strcmp(buf, "tensor<i1>") == 0);
  tt_type_t c = tt_type_make(TT_C64, 1, one);
  TT_CHECK(tt_type_format(&c, buf, sizeof buf) == 22 && strcmp(buf, "tensor<4xcomplex<f32>>") == 0);
  /* too small a buffer: truncated, NUL-terminated, the full length returned */
  memset(buf, 'z', sizeof buf);
  TT_CHECK(tt_type_format(&t, buf, 8) == 15 && strcmp(buf, "tensor<") == 0 && buf[8] == 'z');
  /* a rank beyond TT_MAX_RANK prints no dims */
  int64_t big[TT_MAX_RANK + 1];
  for (int i = 0; i <= TT_MAX_RANK; i++) big[i] = 1;
  tt_type_t b = tt_type_make(TT_F32, TT_MAX_RANK + 1, big);
  TT_CHECK(tt_type_format(&b, buf, sizeof buf) > 0 && strcmp(buf, "tensor<?xf32>") == 0);
  /* the longest type of TT_MAX_RANK dims fits TT_TYPE_TEXT_MAX */
  for (int i = 0; i < TT_MAX_RANK; i++) big[i] = INT64_MIN;
  tt_type_t w = tt_type_make(TT_C128, TT_MAX_RANK, big);
  char wide[TT_TYPE_TEXT_MAX];
  int n = tt_type_format(&w, wide, sizeof wide);
  TT_CHECK(n > 21 * TT_MAX_RANK && n < (int)sizeof wide && strcmp(wide + n - 14, "xcomplex<f64>>") == 0);
}

/* ---- string buffers ------------------------------------------------------------------- */
static void test_sbuf_growth(void) {
  tt_sbuf_t b;
  tt_sbuf_init(&b);
  TT_CHECK(b.data == NULL && b.len == 0 && !b.oom);
  char want[2001];
  for (int i = 0; i < 200; i++) {
    char piece[16];
    snprintf(piece, sizeof piece, "%09d|", i); /* 10 characters */
    tt_sbuf_append(&b, piece);
    memcpy(want + 10 * i, piece, 10);
  }
  want[2000] = 0;
  bool ok = b.len == 2000 && b.cap > 2000 && strcmp(b.data, want) == 0 && !b.oom;
  tt_sbuf_clear(&b);
  ok = ok && b.len == 0 && b.data && b.data[0] == 0 && b.cap > 2000; /* clear keeps the memory */
  tt_sbuf_appendn(&b, "abcdef", 3);
  ok = ok && b.len == 3 && strcmp(b.data, "abc") == 0;
  tt_sbuf_free(&b);
  TT_CHECK(ok);
  TT_CHECK(b.data == NULL && b.len == 0 && b.cap == 0);
}

static void test_sbuf_printf(void) {
  tt_sbuf_t b;
  tt_sbuf_init(&b);
  tt_sbuf_printf(&b, "%s<%dx%s>", "tensor", 3, "f32");
  tt_sbuf_printf(&b, " %lld", (long long)-7);
  bool ok = b.len == 16 && strcmp(b.data, "tensor<3xf32> -7") == 0;
  if (!ok) fprintf(stderr, "  got \"%s\" (%zu)\n", b.data ? b.data : "(null)", b.len);
  /* one write larger than the first allocation */
  static char big[1001];
  memset(big, 'q', 1000);
  big[1000] = 0;
  tt_sbuf_clear(&b);
  tt_sbuf_printf(&b, "[%s]", big);
  ok = ok && b.len == 1002 && b.data[0] == '[' && b.data[1001] == ']' && b.data[1002] == 0 &&
       memcmp(b.data + 1, big, 1000) == 0;
  tt_sbuf_printf(&b, "%s", ""); /* nothing */
  ok = ok && b.len == 1002;
  tt_sbuf_free(&b);
  TT_CHECK(ok);
}

/* Appending nothing from a NULL pointer (the data of an empty int[] in a
 * cache key): no memcpy from NULL (UBSan in make test-asan). */
static void test_sbuf_empty_append(void) {
  tt_sbuf_t b;
  tt_sbuf_init(&b);
  tt_sbuf_append(&b, "ab");
  tt_sbuf_appendn(&b, NULL, 0);
  TT_CHECK(b.len == 2 && strcmp(b.data, "ab") == 0);
  tt_sbuf_free(&b);
}

/* ---- hashing ---------------------------------------------------------------------------- */
static void test_hash(void) {
  const char* s = "the quick brown fox";
  size_t n = strlen(s);
  uint64_t h = tt_hash_bytes(s, n, 0);
  TT_CHECK(h == tt_hash_bytes(s, n, 0));                   /* deterministic */
  TT_CHECK(h != tt_hash_bytes(s, n, 1));                   /* the seed matters */
  TT_CHECK(h != tt_hash_bytes(s, n - 1, 0));               /* the length matters */
  char z[8] = "abc";                                        /* "abc" and "abc\0": same words, other length */
  TT_CHECK(tt_hash_bytes(z, 3, 0) != tt_hash_bytes(z, 4, 0));
  char c[32];
  memcpy(c, s, n);
  c[n - 2] ^= 1; /* a byte of the tail (past the last full 8-byte word) */
  TT_CHECK(h != tt_hash_bytes(c, n, 0));
  memcpy(c, s, n);
  c[3] ^= 0x80; /* a byte of the first word */
  TT_CHECK(h != tt_hash_bytes(c, n, 0));
  /* an unaligned copy hashes the same */
  char u[40];
  memcpy(u + 3, s, n);
  TT_CHECK(tt_hash_bytes(u + 3, n, 0) == h);
  /* no data: a value of its own, the same whatever the pointer */
  TT_CHECK(tt_hash_bytes(s, 0, 0) == tt_hash_bytes(u, 0, 0));
  TT_CHECK(tt_hash_bytes(s, 0, 0) != tt_hash_bytes(s, 0, 5));
  /* every single byte value gets its own hash */
  static uint64_t hs[256];
  for (int i = 0; i < 256; i++) {
    unsigned char b = (unsigned char)i;
    hs[i] = tt_hash_bytes(&b, 1, 0);
    for (int j = 0; j < i; j++) TT_CHECK(hs[j] != hs[i]);
  }
}

int main(void) {
  TT_RUN(test_dtype_table);
  TT_RUN(test_dtype_kinds);
  TT_RUN(test_complex_real);
  TT_RUN(test_type_make);
  TT_RUN(test_type_equal);
  TT_RUN(test_type_format);
  TT_RUN(test_sbuf_growth);
  TT_RUN(test_sbuf_printf);
  TT_RUN(test_sbuf_empty_append);
  TT_RUN(test_hash);
  TT_REPORT();
}
