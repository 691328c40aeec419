/* Internal to core/runtime: the structures behind the runtime API. */
#ifndef TT_RUNTIME_INTERNAL_H_
#define TT_RUNTIME_INTERNAL_H_

#include <pthread.h>

#include "tt_runtime.h"

#define TT_MAX_DEVICES 64
#define TT_MAX_CHECKS 32 /* device-side checks per program (tt_shlo_add_check) */

/* A device-side check result not read yet: a 0-d bool buffer. */
typedef struct tt_pending_check {
  tt_pjrt_buffer_t* buf; /* owned */
  int code;
  const char* message;   /* borrowed from the cache entry (entries live until close) */
  const char* op;        /* static op name */
} tt_pending_check_t;

struct tt_storage {
  tt_runtime_t* rt;           /* borrowed */
  size_t nbytes;
  int device;
  tt_storage_state_t state;
  tt_pjrt_buffer_t* buf;      /* owned; MATERIALIZED: 1-D [buf_numel] of buf_dtype */
  tt_dtype_t buf_dtype;
  int64_t buf_numel;
  const char* producer;       /* static name of the op that produced buf */
  tt_status_t error;          /* owned; FAILED */
  bool pending;               /* produced asynchronously, not yet checked */
  tt_storage_t* prev;         /* live list (guarded by rt->mu) */
  tt_storage_t* next;
};

typedef struct tt_cache_entry {
  uint64_t hash;
  unsigned char* key;         /* owned */
  size_t key_len;
  tt_pjrt_exec_t* exec;       /* owned */
  int nresults;               /* storage results; the checks follow them */
  int nchecks;
  int check_codes[TT_MAX_CHECKS];
  char* check_msgs[TT_MAX_CHECKS]; /* owned */
  double compile_seconds;
} tt_cache_entry_t;

/* Reserves `nbytes` more for a storage on `device` (rt->mu held): the
 * out-of-memory error (TT_RESOURCE_EXHAUSTED, naming the sizes) beyond the
 * device's capacity. */
tt_status_t tt__mem_reserve(tt_runtime_t* rt, int device, size_t nbytes);
void tt__mem_unreserve(tt_runtime_t* rt, int device, size_t nbytes); /* rt->mu held */
/* Sets the capacity at tt_runtime_open (memory.c); fails on a malformed
 * TORCH_TPU_MEMORY_LIMIT. */
tt_status_t tt__mem_init(tt_runtime_t* rt);

typedef struct tt_exec_cache {
  tt_cache_entry_t* slots;    /* open addressing; exec == NULL means free */
  size_t cap;
  size_t count;
} tt_exec_cache_t;

typedef struct tt_device_stats {
  int64_t bytes_in_use;
  int64_t peak_bytes;
  int64_t num_storages;
  int64_t num_buffers;
  int64_t bytes_reserved; /* nbytes of the live storages, materialized or not */
} tt_device_stats_t;

#define TT_SCALAR_CACHE 256
typedef struct tt_scalar_slot {
  tt_pjrt_buffer_t* buf;      /* owned */
  int device;
  tt_dtype_t dtype;
  uint64_t bits[2];           /* the value's bytes (complex128 needs 16) */
  uint64_t call;              /* rt->call_serial of the last call that took it */
} tt_scalar_slot_t;

struct tt_runtime {
  tt_pjrt_t* pjrt;            /* owned */
  pthread_mutex_t mu;
  tt_storage_t live;          /* sentinel of the live-storage list */
  tt_device_stats_t dev[TT_MAX_DEVICES];
  tt_exec_cache_t cache;
  tt_scalar_slot_t scalars[TT_SCALAR_CACHE];
  tt_pending_check_t* checks; /* pending device-side checks */
  size_t nchecks, capchecks;
  int64_t cache_hits, cache_misses, executions;
  uint64_t call_serial;       /* counts op calls (scalar-cache pinning) */
  double compile_seconds;
  bool dump_hlo;
  /* Device capacity (runtime.c): storages are refused beyond it, as CUDA's
   * allocator refuses (torch.OutOfMemoryError). 0: no limit known. With
   * mem_shared (the CPU plugin: every device is host memory) the limit holds
   * for the sum over all devices. */
  int64_t mem_limit;
  bool mem_shared;
  const char* mem_limit_source; /* static: where mem_limit comes from */
};

/* storage.c (rt->mu held) */
void tt__storage_set_buffer(tt_storage_t* s, tt_pjrt_buffer_t* b, tt_dtype_t dt, int64_t numel,
                            const char* producer, bool pending);
tt_status_t tt__storage_materialize(tt_storage_t* s, tt_dtype_t hint);
tt_status_t tt__storage_check(tt_storage_t* s, const char* user);
tt_status_t tt__storage_await(tt_storage_t* s);
/* Makes s EMPTY (reads zeros): its buffer and any error are dropped. */
void tt__storage_reset(tt_storage_t* s);
/* Marks s FAILED with err (consumed); its buffer is dropped. */
void tt__storage_fail(tt_storage_t* s, tt_status_t err);

/* cache.c (rt->mu held) */
tt_cache_entry_t* tt__cache_find(tt_exec_cache_t* c, const void* key, size_t len, uint64_t h);
tt_status_t tt__cache_insert(tt_exec_cache_t* c, const void* key, size_t len, uint64_t h,
                             tt_pjrt_exec_t* exec, int nresults, double secs,
                             tt_cache_entry_t** out);

/* checks (rt->mu held): queue the check buffers of one execution; read every
 * pending check and return the first failure (naming its op). */
tt_status_t tt__checks_push(tt_runtime_t* rt, tt_cache_entry_t* e, tt_pjrt_buffer_t** bufs,
                            const char* op);
tt_status_t tt__checks_drain(tt_runtime_t* rt);
void tt__cache_clear(tt_exec_cache_t* c, tt_pjrt_t* p);

/* view_program.c: reading and writing views inside a program */
bool tt__view_is_contiguous(const tt_view_t* v);
bool tt__view_is_full(const tt_view_t* v); /* contiguous, offset 0, covers all bytes */
/* A partial write through a view whose element size differs from the buffer's
 * turns the whole buffer into the view's dtype. */
bool tt__write_retypes(tt_dtype_t buf_dtype, tt_dtype_t view_dtype);
/* offset_param: a 0-d i64 value holding the offset, or TT_SHLO_INVALID for the
 * static v->offset. base: 1-D value of the storage's buffer. */
tt_val_t tt__view_read(tt_shlo_fn_t* f, tt_val_t base, const tt_view_t* v, tt_val_t offset_param);
tt_val_t tt__view_write(tt_shlo_fn_t* f, tt_val_t base, const tt_view_t* v, tt_val_t offset_param,
                        tt_val_t value);

/* scalars.c (rt->mu held): a device buffer holding one host value, borrowed
 * from the cache, or owned by the caller (*owned) when its cache slot already
 * holds another argument of the current call (rt->call_serial). */
tt_status_t tt__scalar_buffer(tt_runtime_t* rt, int device, tt_dtype_t dt, const void* bytes,
                              tt_pjrt_buffer_t** out, bool* owned);

double tt__now(void);

/* complex_gate.c: refuses complex tensors for ops whose lowering is not known
 * to handle them (instead of silently dropping imaginary parts). */
tt_status_t tt__complex_gate(const tt_call_t* c);

#endif /* TT_RUNTIME_INTERNAL_H_ */
