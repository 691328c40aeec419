/* Internal to core/runtime: the structures behind the runtime API. */
#ifndef TT_RUNTIME_INTERNAL_H_
#define TT_RUNTIME_INTERNAL_H_

#include <pthread.h>

#include "tt_runtime.h"
#include "../graph/tt_program.h"
#include "disk_cache.h"

#define TT_MAX_DEVICES 64

typedef struct tt_coll_entry tt_coll_entry_t; /* collective.c */

/* A device-side check result not read yet: a 0-d bool buffer. */
typedef struct tt_pending_check {
  tt_pjrt_buffer_t* buf; /* owned */
  int code;
  char* message;         /* owned (a copy: the cache may drop the entry before the check is read) */
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
  /* Fused Eager (fuse.c): recorded ops write it (reported as DEFERRED); the
   * graph holds `graph_refs` on it, so it outlives PyTorch's release
   * (user_alive false) until the graph has run. */
  bool deferred;
  bool user_alive;
  int graph_refs;
  uint64_t born;              /* rt->storage_serial when created (graph/capture.c: new or not) */
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
  int* check_codes;           /* owned arrays of nchecks */
  char** check_msgs;          /* owned, each owned */
  const char** check_ops;     /* static op names */
  double compile_seconds;
  uint64_t last_use;          /* rt->call_serial of the last call that ran it */
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
  size_t max_count;           /* entries kept (tt__cache_limit); 0 until the runtime opens */
  int64_t evictions;
  int64_t maps_evictions;     /* of evictions: entries dropped for the maps' bound */
  unsigned since_maps_check;  /* new entries since the process's maps were counted */
  unsigned maps_check_every;  /* recount after this many (fewer as the maps near the bound) */
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

/* Fused programs' packed scalar parameters (one 1-D buffer per dtype): a
 * loop's flushes mostly pass the same values again (eps, betas, constant
 * factors), so recent packs are kept by content. */
#define TT_PACKED_CACHE 64
typedef struct tt_packed_slot {
  tt_pjrt_buffer_t* buf;      /* owned */
  unsigned char* bytes;       /* owned copy of the pack, for the comparison */
  size_t nbytes;
  uint64_t hash;
  int device;
  tt_dtype_t dtype;
  uint64_t call;              /* rt->call_serial of the last call that took it */
} tt_packed_slot_t;

/* The runtime's counters (tt_runtime_get_stats). */
typedef struct tt_run_stats {
  int64_t cache_hits, cache_misses, executions;
  int64_t compiles;           /* programs compiled (tier-1 misses the disk did not serve) */
  int64_t buffer_writes;      /* storage buffers set, reset or failed (storage.c) */
  double compile_seconds;
  double execute_seconds;
} tt_run_stats_t;

/* Device memory (memory.c): storages are refused beyond the capacity, as
 * CUDA's allocator refuses (torch.OutOfMemoryError). limit 0: no limit
 * known. With `shared` (the CPU plugin: every device is host memory) the
 * limit holds for the sum over all devices. */
typedef struct tt_mem_state {
  tt_device_stats_t dev[TT_MAX_DEVICES];
  int64_t limit;
  bool shared;
  const char* limit_source;   /* static: where limit comes from */
} tt_mem_state_t;

/* Device buffers of host values (scalars.c). */
typedef struct tt_scalar_cache {
  tt_scalar_slot_t slots[TT_SCALAR_CACHE];
  tt_packed_slot_t packed[TT_PACKED_CACHE];
  int64_t packed_hits, packed_uploads;
} tt_scalar_cache_t;

/* Fused Eager (fuse.c): the recorded calls not yet run, and the storages
 * they hold. */
typedef struct tt_fuse_state {
  tt_graph_t* graph;          /* owned: the recorded calls not yet run */
  tt_graph_t* spare;          /* owned: where the calls kept by a partial flush go */
  tt_storage_t** refs;        /* owned array: a storage per reference the graph holds */
  size_t nrefs, caprefs;
  size_t* node_refs;          /* owned: per recorded call, its first entry in refs */
  int capnode_refs;
  int max_ops;                /* graph-size limit (tt_graph_max_ops, read once) */
  pthread_t thread;           /* the thread that recorded the newest call */
  tt_sigset_t checked;        /* owned: call signatures whose lowering ran at record time */
  int64_t flushes, ops, replays;
} tt_fuse_state_t;

/* A capture being made (replay.c): while `capturing` > 0 the graph is not
 * cut; the flush that ends it fills `note` (call.c). */
typedef struct tt_capture_state {
  int capturing;
  tt_capture_t* note;
  int64_t flushes0, writes0;  /* the counters when it began */
  uint64_t serial0;           /* storages born after it are new */
} tt_capture_state_t;

/* The runtime: one lock over the state of each part. */
struct tt_runtime {
  tt_pjrt_t* pjrt;            /* owned */
  pthread_mutex_t mu;
  tt_storage_t live;          /* sentinel of the live-storage list (storage.c) */
  uint64_t storage_serial;    /* numbers storages as they are created */
  tt_mem_state_t mem;
  tt_exec_cache_t cache;      /* tier 1 (cache.c) */
  tt_disk_cache_t* disk;      /* owned: tier 2 (NULL: disabled or unusable) */
  tt_scalar_cache_t scalars;
  tt_pending_check_t* checks; /* pending device-side checks (cache.c) */
  size_t nchecks, capchecks;
  uint64_t call_serial;       /* counts program runs (scalar-cache pinning) */
  tt_fuse_state_t fuse;
  tt_capture_state_t capture;
  tt_coll_entry_t* colls;     /* owned: compiled collective programs (collective.c) */
  tt_run_stats_t stats;
  /* options */
  bool dump_hlo;
  bool donate;                /* programs take the buffers of storages they rewrite */
  char* dump_dir;             /* owned: TORCH_TPU_DUMP_DIR, NULL when unset */
  int64_t dumped;             /* programs written to dump_dir */
  bool dump_warned;
};

/* storage.c (rt->mu held) */
void tt__storage_set_buffer(tt_storage_t* s, tt_pjrt_buffer_t* b, tt_dtype_t dt, int64_t numel,
                            const char* producer, bool pending);
/* The 1-D type an empty storage's zeros take: hint where it divides the
 * storage's bytes, else u8 (what tt__storage_materialize uploads). */
tt_dtype_t tt__storage_empty_type(const tt_storage_t* s, tt_dtype_t hint, int64_t* numel);
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
/* Moves n device-side checks (codes, owned messages, static op names) into e. */
tt_status_t tt__cache_set_checks(tt_cache_entry_t* e, int n, const int* codes, char** msgs,
                                 const char** ops);
void tt__cache_clear(tt_exec_cache_t* c, tt_pjrt_t* p);
/* maps.c: the number of compiled programs kept in memory: TORCH_TPU_CACHE_MAX_PROGRAMS,
 * else 4096, fewer where the kernel's vm.max_map_count would not hold them
 * (each program the CPU plugin JIT-compiles maps a few regions; at the
 * kernel's limit its next compile fails). */
size_t tt__cache_limit(void);
/* The process's memory maps (lines of /proc/self/maps; -1 if unreadable) and
 * the number they may reach before programs are dropped: TORCH_TPU_CACHE_MAX_MAPS,
 * else half of vm.max_map_count (maps.c). */
long tt__maps_count(void);
long tt__maps_budget(void);
/* The kernel's vm.max_map_count (read once), 0 where /proc does not say. */
long tt__max_map_count(void);
/* Makes room for one more entry (rt->mu held): beyond c->max_count, and
 * whenever the process's maps pass tt__maps_budget (counted every few new
 * entries), waits for the work in flight, then drops the least recently used
 * quarter of the entries (quarters until the maps are back under 3/4 of the
 * bound). Entry pointers are invalid afterwards. */
void tt__cache_make_room(tt_runtime_t* rt);
/* Drops every in-memory program (after awaiting what may still run one). */
void tt__cache_drop_all(tt_runtime_t* rt);
/* The executable for a program text: from the disk cache, else compiled
 * (then put on disk); written to TORCH_TPU_DUMP_DIR when set. `name` names
 * the program in errors and dump files. *out is owned by the caller. */
tt_status_t tt__cache_compile(tt_runtime_t* rt, const char* name, const tt_sbuf_t* text,
                              tt_pjrt_exec_t** out, double* secs);

/* call.c (rt->mu held): one call as its own program (Strict/Debug); a
 * sequence as one program (a Fused Eager flush: on failure nothing is
 * installed). */
tt_status_t tt__run_call(tt_runtime_t* rt, const tt_call_t* call);
tt_status_t tt__run_fused(tt_runtime_t* rt, const tt_call_t* const* calls, int n);

/* fuse.c (rt->mu held): records a call into the graph (flushing where
 * graph/ cuts it); runs the graph. */
tt_status_t tt__fuse_record(tt_runtime_t* rt, const tt_call_t* call);
tt_status_t tt__fuse_flush(tt_runtime_t* rt);
/* The same, taking rt->mu: before anything that reads or replaces buffers. */
tt_status_t tt__fuse_sync(tt_runtime_t* rt);
/* storage.c (rt->mu held): frees s once neither PyTorch nor a graph holds it. */
void tt__storage_unref(tt_storage_t* s);

/* host.c: a dense row-major view of `like`'s shape, dtype and math bits at
 * the start of s. */
tt_view_t tt__dense_view(tt_storage_t* s, const tt_view_t* like);
/* Whether v is contiguous from offset 0, without math bits, over all of its storage. */
static inline bool tt__view_is_full(const tt_view_t* v) { return tt_view_covers(v, v->storage->nbytes); }

/* scalars.c (rt->mu held): a device buffer holding one host value, borrowed
 * from the cache, or owned by the caller (*owned) when its cache slot already
 * holds another argument of the current call (rt->call_serial). */
tt_status_t tt__scalar_buffer(tt_runtime_t* rt, int device, tt_dtype_t dt, const void* bytes,
                              tt_pjrt_buffer_t** out, bool* owned);
/* The same for a packed 1-D group of n values of dtype dt. */
tt_status_t tt__packed_buffer(tt_runtime_t* rt, int device, tt_dtype_t dt, const void* bytes, int64_t n,
                              tt_pjrt_buffer_t** out, bool* owned);
void tt__packed_cache_clear(tt_runtime_t* rt);

/* mode.c */
double tt__now(void);

/* collective.c: one member's program text; the compiled programs' release
 * (rt->mu held or the runtime closing). */
tt_status_t tt__coll_program(const tt_collective_t* c, tt_sbuf_t* out);
void tt__coll_cache_clear(tt_runtime_t* rt);

/* complex_check.c: refuses complex tensors for ops whose entry does not say
 * they compute on them (TT_LF_COMPLEX / TT_LF_COMPLEX_SAME). */
tt_status_t tt__complex_check(const tt_call_t* c);

/* ---- the disk cache's directory and files (disk_files.c; rules in disk_cache.h) ---- */
bool tt__disk_is_hex16(const char* s);    /* 16 lowercase hex digits */
bool tt__disk_is_entry(const char* name); /* "<hex>.ttexec" (an entry) or "<hex>.ttlist" (a start-up list) */
bool tt__disk_is_temp(const char* name);  /* ".<hex>.ttexec|ttlist.<pid>.<n>.tmp" */
/* The directory dir, else TORCH_TPU_CACHE_DIR, else ~/.cache/torch_tpu,
 * created (0700) with its parents and trusted (disk_cache.h): its path,
 * owned by the caller (free), or NULL: cannot be made, or not trusted
 * (then one line on stderr says why). */
char* tt__disk_dir_open(const char* dir);
/* The bytes of the entries and lists in dir (regular files only); past
 * max_bytes the least recently used (oldest mtime) are removed until it is
 * within 90% of it, each adding 1 to *evicted; a file another process
 * removed first counts as gone. Temporary files an hour old are removed.
 * Returns what is left, or -1 if dir cannot be listed. max_bytes > 0. */
int64_t tt__disk_dir_trim(const char* dir, int64_t max_bytes, int64_t* evicted);

#endif /* TT_RUNTIME_INTERNAL_H_ */
