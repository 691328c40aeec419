/* torch_tpu core: the runtime. Storage handles, views, op calls through the
 * lowering tables, the executable cache, asynchronous execution and device
 * memory accounting. This is the API the bridge uses.
 *
 * Ownership: tt_runtime_open returns the owned runtime (one per process in
 * practice; tt_runtime_close). tt_storage_create returns an owned handle
 * (tt_storage_release); its address never changes for its lifetime, so
 * PyTorch's DataPtr can point at it. Views (tt_view_t) borrow storages.
 * Thread rules: every function may be called from any thread; the runtime
 * serializes calls with one lock. */
#ifndef TT_RUNTIME_H_
#define TT_RUNTIME_H_

#include "../lower/tt_lower.h"
#include "../pjrt/tt_pjrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tt_runtime tt_runtime_t;
typedef struct tt_storage tt_storage_t;

typedef enum tt_mode {
  TT_MODE_STRICT = 0, /* asynchronous, one cached program per op signature */
  TT_MODE_DEBUG = 1,  /* synchronous: wait for every op, raise at the op */
  TT_MODE_FUSED = 2,  /* deferred (not yet built: runs as Strict) */
} tt_mode_t;

tt_status_t tt_runtime_open(const char* plugin_path, int cpu_device_count, tt_runtime_t** out);
void tt_runtime_close(tt_runtime_t* rt); /* releases cached programs; storages must be gone */
const tt_pjrt_info_t* tt_runtime_info(tt_runtime_t* rt);
int tt_runtime_device_count(tt_runtime_t* rt);

/* Mode of the calling thread; the default comes from the environment. */
void tt_runtime_set_mode(tt_mode_t mode);
tt_mode_t tt_runtime_mode(void);

/* Waits for every outstanding computation on `device` (-1: all). Returns the
 * first error of asynchronous work, naming the op that failed. */
tt_status_t tt_runtime_synchronize(tt_runtime_t* rt, int device);

typedef struct tt_runtime_stats {
  int64_t bytes_in_use;     /* device bytes held by storages */
  int64_t peak_bytes;
  int64_t num_storages;
  int64_t num_buffers;      /* materialized storages */
  int64_t bytes_reserved;   /* nbytes of all live storages (written or not) */
  int64_t cache_hits;
  int64_t cache_misses;
  int64_t cache_entries;
  double compile_seconds;
  int64_t executions;
} tt_runtime_stats_t;
void tt_runtime_get_stats(tt_runtime_t* rt, int device, tt_runtime_stats_t* out);
void tt_runtime_reset_peak(tt_runtime_t* rt, int device);
/* Capacity of `device` and what is left of it after the live storages
 * (memory.c); total 0 when no limit is known. Storages beyond it are refused
 * (TT_RESOURCE_EXHAUSTED). */
void tt_runtime_memory_info(tt_runtime_t* rt, int device, int64_t* free_bytes,
                            int64_t* total_bytes);

/* The plugin's floor for one op: microseconds per Execute of a tiny cached
 * add called from C (event awaited, output destroyed). For bench/. */
tt_status_t tt_runtime_bench_execute(tt_runtime_t* rt, int iters, double* us_per_exec);

/* ---- storages ------------------------------------------------------------
 * A storage is `nbytes` of device memory in one of these states:
 * EMPTY (never written: reads see zeros), MATERIALIZED (a 1-D PJRT buffer of
 * some dtype covering the bytes), FAILED (the async op that should have
 * produced it failed; the error is sticky and raised on use). DEFERRED is for
 * Fused Eager. */
typedef enum tt_storage_state {
  TT_STORAGE_EMPTY = 0,
  TT_STORAGE_MATERIALIZED,
  TT_STORAGE_FAILED,
  TT_STORAGE_DEFERRED,
} tt_storage_state_t;

tt_status_t tt_storage_create(tt_runtime_t* rt, int device, size_t nbytes, tt_storage_t** out);
void tt_storage_release(tt_storage_t* s); /* NULL-safe */
size_t tt_storage_nbytes(const tt_storage_t* s);
int tt_storage_device(const tt_storage_t* s);
tt_storage_state_t tt_storage_state(const tt_storage_t* s);
/* Grows or shrinks the storage in place, keeping the leading bytes. */
tt_status_t tt_storage_resize(tt_storage_t* s, size_t nbytes);
/* Copies all bytes of src into dst (same nbytes, may differ in device). */
tt_status_t tt_storage_copy(tt_storage_t* dst, tt_storage_t* src);

/* ---- views ------------------------------------------------------------------
 * A strided window on a storage, in elements of `dtype` (as a PyTorch tensor). */
typedef struct tt_view {
  tt_storage_t* storage;
  tt_dtype_t dtype;
  int32_t rank;
  int64_t sizes[TT_MAX_RANK];
  int64_t strides[TT_MAX_RANK];
  int64_t offset;
  /* PyTorch's lazy math bits: reads see conj(x) / -x of the stored values,
   * writes store conj / -value (both are involutions). */
  bool conj;
  bool neg;
} tt_view_t;

int64_t tt_view_numel(const tt_view_t* v);
/* host <-> device. `host` is dense row-major of the view's dtype and sizes. */
tt_status_t tt_view_write_host(tt_runtime_t* rt, const tt_view_t* dst, const void* host);
tt_status_t tt_view_read_host(tt_runtime_t* rt, const tt_view_t* src, void* host);

/* dst = src converted to dst's dtype (and broadcast to its shape). */
tt_status_t tt_runtime_copy(tt_runtime_t* rt, const tt_view_t* dst, const tt_view_t* src);

/* ---- op calls --------------------------------------------------------------- */
typedef struct tt_call_arg {
  tt_arg_kind_t kind;
  tt_tier_t tier;             /* TENSOR */
  tt_view_t view;             /* TENSOR on the device */
  bool on_host;               /* TENSOR that is a 0-dim host value (in `scalar`) */
  tt_dtype_t sdtype;          /* SCALAR (F64, I64 or BOOL) / on_host TENSOR dtype */
  union { double f; int64_t i; uint64_t bits; unsigned char bytes[16]; } scalar; /* 16: complex128 */
  const struct tt_call_arg* list; /* TENSORS / SCALARS: n entries (TENSOR / SCALAR / NONE) */
  int n;                      /* TENSORS, SCALARS, INTS */
  int64_t i;                  /* INT, BOOL */
  double f;                   /* FLOAT */
  const int64_t* ints;        /* INTS */
  const char* str;            /* STR */
} tt_call_arg_t;

typedef struct tt_call {
  const tt_lower_entry_t* op;
  const tt_call_arg_t* args;
  int nargs;
  const tt_view_t* outs;   /* where each output is written; storage NULL: computed and
                              dropped (its sizes/dtype still give the lowering's out type) */
  const tt_dtype_t* out_dtypes; /* dtype each output is computed in (= outs[i].dtype) */
  int nout;
  int device;
  uint64_t rng[2];         /* (seed, offset) when op->flags & TT_LF_RNG */
} tt_call_t;

/* Runs one op: reads the input views, runs the lowering, writes the outputs. */
tt_status_t tt_runtime_call(tt_runtime_t* rt, const tt_call_t* call);

#ifdef __cplusplus
}
#endif
#endif /* TT_RUNTIME_H_ */
