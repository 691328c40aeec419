/* torch_tpu core: base layer. Status values, dtypes, tensor types, small
 * helpers. Nothing here knows about PJRT, StableHLO or PyTorch.
 *
 * Ownership: a tt_status_t is owned by whoever holds it; it must be either
 * returned upward, consumed with tt_status_free, or turned into a message.
 * Thread rules: everything here is thread-safe (no shared state) except the
 * env registry, which is read-only after first use. */
#ifndef TT_BASE_H_
#define TT_BASE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------
 * NULL means OK. A failure is a heap object with a code and a message; it is
 * annotated (prefix added) as it propagates upward. */
typedef enum tt_code {
  TT_OK = 0,
  TT_INVALID_ARGUMENT = 1,
  TT_NOT_FOUND = 2,
  TT_UNIMPLEMENTED = 3,
  TT_FAILED_PRECONDITION = 4,
  TT_INTERNAL = 5,
  TT_RESOURCE_EXHAUSTED = 6,
  TT_UNAVAILABLE = 7,
  TT_OUT_OF_RANGE = 8, /* an index out of range (Python: IndexError) */
} tt_code_t;

typedef struct tt_status_s* tt_status_t;

tt_status_t tt_status_make(tt_code_t code, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prefixes "<context>: " to the message; returns the same status (or NULL). */
tt_status_t tt_status_annotate(tt_status_t st, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
tt_code_t tt_status_code(tt_status_t st);
const char* tt_status_message(tt_status_t st); /* borrowed; "" for OK */
tt_status_t tt_status_clone(tt_status_t st);
void tt_status_free(tt_status_t st); /* NULL-safe */

#define TT_RETURN_IF_ERROR(expr)                \
  do {                                          \
    tt_status_t tt__st = (expr);                \
    if (tt__st) return tt__st;                  \
  } while (0)

#define TT_RETURN_IF_ERROR_CTX(expr, ...)                  \
  do {                                                     \
    tt_status_t tt__st = (expr);                           \
    if (tt__st) return tt_status_annotate(tt__st, __VA_ARGS__); \
  } while (0)

/* ---- dtypes ------------------------------------------------------------
 * Our own numbering, independent of PyTorch's ScalarType and PJRT's types;
 * conversion tables live where each foreign enum is known. */
typedef enum tt_dtype {
  TT_BOOL = 0,
  TT_U8,
  TT_I8,
  TT_I16,
  TT_I32,
  TT_I64,
  TT_F16,
  TT_BF16,
  TT_F32,
  TT_F64,
  TT_U16,
  TT_U32,
  TT_U64,
  TT_C64,  /* complex<f32>: interleaved (re, im) f32 pairs, as PyTorch and XLA store them */
  TT_C128, /* complex<f64> */
  /* float8 (1 byte): PyTorch's float8_e4m3fn / e5m2 / e4m3fnuz / e5m2fnuz */
  TT_F8E4M3FN,
  TT_F8E5M2,
  TT_F8E4M3FNUZ,
  TT_F8E5M2FNUZ,
  /* complex<f16> (PyTorch's ComplexHalf, 4 bytes): StableHLO has no such
   * type. A buffer holds its (re, im) f16 pairs (tt_dtype_buffer) and a
   * program computes on complex<f32> values (tt_dtype_compute), rounding to
   * f16 when it stores them, as CUDA computes complex32 in complex<float>. */
  TT_C32,
  TT_DTYPE_COUNT,
} tt_dtype_t;

size_t tt_dtype_size(tt_dtype_t dt);
const char* tt_dtype_mlir(tt_dtype_t dt); /* "f32", "i1", "ui8", "bf16", ... */
const char* tt_dtype_name(tt_dtype_t dt); /* "float32", ... */
bool tt_dtype_is_float(tt_dtype_t dt);
bool tt_dtype_is_signed_int(tt_dtype_t dt);
bool tt_dtype_is_unsigned_int(tt_dtype_t dt); /* bool is not */
bool tt_dtype_is_complex(tt_dtype_t dt);      /* complex is not "float" */
bool tt_dtype_is_f8(tt_dtype_t dt);           /* the float8 types (also "float") */
/* The component dtype of a complex dtype (C64 -> F32, C128 -> F64); others
 * are returned unchanged. */
tt_dtype_t tt_dtype_real_part(tt_dtype_t dt);
/* The complex dtype holding values of dt: F64 -> C128, other floats -> C64;
 * complex dtypes are returned unchanged. */
tt_dtype_t tt_dtype_complex_of(tt_dtype_t dt);
/* The element type of a device buffer holding values of dt, and how many of
 * its elements one value takes: dt and 1, except C32 (F16 and 2). */
tt_dtype_t tt_dtype_buffer(tt_dtype_t dt);
int64_t tt_dtype_buffer_factor(tt_dtype_t dt);
/* The dtype a program computes values of dt in: dt, except C32 (C64). */
tt_dtype_t tt_dtype_compute(tt_dtype_t dt);

/* ---- tensor types --------------------------------------------------------
 * A dense, row-major logical type: what a StableHLO value has.
 *
 * TT_MAX_RANK bounds every rank in the core (types, views, layouts, graph
 * nodes). PyTorch's CPU tensors have no fixed bound, but its CUDA kernels take
 * at most 25 dims (their TensorInfo limit), so code that runs on CUDA runs
 * here; StableHLO and XLA have no bound of their own. The dims are inline
 * arrays, so types, views and graph nodes need no allocation: a type is 208
 * bytes, a view 432, a call argument 528 (72, 160, 256 at 8 dims), and an op
 * copies a few of them: ~0.1 us more per op recorded in Fused Eager (~3% of
 * a tiny op's dispatch), no difference measured in Strict. Lowerings keep dim
 * sets in uint32_t masks, and a few build a value of one more dim than their
 * input: TT_MAX_RANK + 1 must stay below 32. */
#define TT_MAX_RANK 25
/* The longest text tt_type_format writes for a type of at most TT_MAX_RANK
 * dims: "tensor<" + a 20-digit dim and an "x" per dim + the longest element
 * type ("complex<f64>") + ">", and a NUL. */
#define TT_TYPE_TEXT_MAX (7 + 21 * TT_MAX_RANK + 16 + 2)

typedef struct tt_type {
  tt_dtype_t dtype;
  int32_t rank;
  int64_t dims[TT_MAX_RANK];
} tt_type_t;

int64_t tt_type_numel(const tt_type_t* t);
bool tt_type_equal(const tt_type_t* a, const tt_type_t* b);
/* A rank beyond TT_MAX_RANK is kept as asked (only TT_MAX_RANK dims are
 * copied): the StableHLO builder fails any op given such a type. */
tt_type_t tt_type_make(tt_dtype_t dt, int32_t rank, const int64_t* dims);
tt_type_t tt_type_scalar(tt_dtype_t dt);
/* Writes "tensor<2x3xf32>" into buf; returns chars written (excl. NUL). */
int tt_type_format(const tt_type_t* t, char* buf, size_t cap);

/* ---- string buffer -------------------------------------------------------
 * Growable text. Ownership: the struct owns `data`; tt_sbuf_free releases it.
 * On allocation failure the buffer sets `oom` and ignores further appends. */
typedef struct tt_sbuf {
  char* data;
  size_t len;
  size_t cap;
  bool oom;
} tt_sbuf_t;

void tt_sbuf_init(tt_sbuf_t* b);
void tt_sbuf_free(tt_sbuf_t* b);
void tt_sbuf_clear(tt_sbuf_t* b);
void tt_sbuf_append(tt_sbuf_t* b, const char* s);
void tt_sbuf_appendn(tt_sbuf_t* b, const char* s, size_t n);
void tt_sbuf_printf(tt_sbuf_t* b, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- hashing ------------------------------------------------------------ */
uint64_t tt_hash_bytes(const void* data, size_t n, uint64_t seed);

/* ---- environment variables ------------------------------------------------
 * Every TORCH_TPU_* variable is declared in one table (env.c). */
typedef enum tt_env_var {
  TT_ENV_PJRT_PLUGIN = 0,    /* TORCH_TPU_PJRT_PLUGIN: path to a plugin .so */
  TT_ENV_PJRT_PLATFORM,      /* TORCH_TPU_PJRT_PLATFORM: cpu|gpu|tpu */
  TT_ENV_NUM_CPU_DEVICES,    /* TORCH_TPU_NUM_CPU_DEVICES: default 1 */
  TT_ENV_LAUNCH_BLOCKING,    /* TORCH_TPU_LAUNCH_BLOCKING=1: Debug Eager */
  TT_ENV_DEFER_AND_FUSE,     /* TORCH_TPU_DEFER_AND_FUSE=1: Fused Eager */
  TT_ENV_CPU_FALLBACK,       /* TORCH_TPU_CPU_FALLBACK=1 */
  TT_ENV_CACHE_DIR,          /* TORCH_TPU_CACHE_DIR */
  TT_ENV_DUMP_HLO,           /* TORCH_TPU_DUMP_HLO=1: print each program */
  TT_ENV_MEMORY_LIMIT,       /* TORCH_TPU_MEMORY_LIMIT: bytes per device (8G, 512M) */
  TT_ENV_CACHE_MAX_PROGRAMS, /* TORCH_TPU_CACHE_MAX_PROGRAMS: compiled programs kept in memory */
  TT_ENV_FUSE_MAX_OPS,       /* TORCH_TPU_FUSE_MAX_OPS: Fused Eager's graph-size limit */
  TT_ENV_DISK_CACHE,         /* TORCH_TPU_DISK_CACHE=0: no executables on disk (cache tier 2) */
  TT_ENV_DUMP_DIR,           /* TORCH_TPU_DUMP_DIR: write every compiled program there */
  TT_ENV_HOST_ADDRESS_READS, /* TORCH_TPU_HOST_ADDRESS_READS=0: host reads through the plugin */
  TT_ENV_DONATE,             /* TORCH_TPU_DONATE=0: programs never take their inputs' buffers */
  TT_ENV_DIST_COLLECTIVES,   /* TORCH_TPU_DIST_COLLECTIVES: auto|host|device (read by torch_tpu/distributed.py) */
  TT_ENV_CACHE_PREFETCH,     /* TORCH_TPU_CACHE_PREFETCH=0: no start-up loading of the disk cache */
  TT_ENV_CACHE_MAX_MAPS,     /* TORCH_TPU_CACHE_MAX_MAPS: memory maps compiled programs may bring the process to */
  TT_ENV_PJRT_LOG,           /* TORCH_TPU_PJRT_LOG=1: the plugin's start-up log lines on stderr */
  TT_ENV_CACHE_MAX_SIZE,     /* TORCH_TPU_CACHE_MAX_SIZE: bytes of the disk cache's directory (4G; 0: no bound) */
  TT_ENV_COUNT,
} tt_env_var_t;

typedef struct tt_env_info {
  const char* name;
  const char* default_value; /* NULL: unset by default */
  const char* help;
} tt_env_info_t;

const tt_env_info_t* tt_env_info(tt_env_var_t v);
const char* tt_env_get(tt_env_var_t v);          /* value or default; may be NULL */
bool tt_env_flag(tt_env_var_t v);                /* "1", "true", "yes", "on" */
int64_t tt_env_int(tt_env_var_t v, int64_t dflt);
/* A byte count: digits with an optional binary suffix K, M, G, T (also KB,
 * KiB, ...; any case). Returns dflt when unset, -1 when set but malformed. */
int64_t tt_env_bytes(tt_env_var_t v, int64_t dflt);

#ifdef __cplusplus
}
#endif
#endif /* TT_BASE_H_ */
