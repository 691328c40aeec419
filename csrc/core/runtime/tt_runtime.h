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

#include "../graph/tt_program.h"
#include "../pjrt/tt_pjrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tt_runtime tt_runtime_t;

typedef enum tt_mode {
  TT_MODE_STRICT = 0, /* asynchronous, one cached program per op signature */
  TT_MODE_DEBUG = 1,  /* synchronous: wait for every op, raise at the op */
  TT_MODE_FUSED = 2,  /* deferred: recorded, run as one program when a value is needed */
} tt_mode_t;

tt_status_t tt_runtime_open(const char* plugin_path, int cpu_device_count, tt_runtime_t** out);
/* The same with the client's options: a client across processes (DESIGN §9)
 * for collectives that stay on the devices. */
tt_status_t tt_runtime_open_with(const char* plugin_path, const tt_pjrt_options_t* opts, tt_runtime_t** out);
void tt_runtime_close(tt_runtime_t* rt); /* releases cached programs; storages must be gone */
const tt_pjrt_info_t* tt_runtime_info(tt_runtime_t* rt);
int tt_runtime_device_count(tt_runtime_t* rt);

/* The mode ops of the calling thread run in: the thread's own if set, else
 * the process's if set, else the environment's (TORCH_TPU_LAUNCH_BLOCKING,
 * TORCH_TPU_DEFER_AND_FUSE). The process's mode reaches the threads that
 * never set one, such as autograd's device threads. -1: not set. */
tt_mode_t tt_runtime_mode(void);
void tt_runtime_set_mode(tt_mode_t mode); /* the thread's */
int tt_runtime_thread_mode(void);
void tt_runtime_set_thread_mode(int mode);
int tt_runtime_process_mode(void);
void tt_runtime_set_process_mode(int mode);

/* Runs the ops Fused Eager has recorded (all devices). Returns the first
 * error Strict Eager would have raised at one of those ops. */
tt_status_t tt_runtime_flush(tt_runtime_t* rt);

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
  int64_t cache_evictions;  /* programs dropped by the cache's bound (TORCH_TPU_CACHE_MAX_PROGRAMS) */
  int64_t cache_max_entries;
  int64_t cache_maps_evictions; /* of cache_evictions: dropped for the maps' bound (TORCH_TPU_CACHE_MAX_MAPS) */
  int64_t maps_budget;      /* that bound */
  double compile_seconds;   /* spent compiling (not loading from disk) */
  double execute_seconds;   /* host time in the plugin's Execute calls (enqueueing, or running inline) */
  int64_t compiles;         /* programs compiled: cache_misses the disk did not serve */
  bool disk_enabled;        /* tier 2 in use (TORCH_TPU_CACHE_DIR usable, plugin serializes) */
  int64_t disk_hits;        /* programs loaded from the disk cache */
  int64_t disk_misses;      /* looked up there, not found or refused */
  int64_t disk_writes;
  int64_t disk_rejected;    /* entries refused (damaged, foreign): recompiled */
  int64_t disk_prefetched;  /* disk hits loaded at start-up from the command's list */
  int64_t disk_errors;      /* I/O or serialization failures (ignored) */
  int64_t disk_evictions;   /* files removed for the disk's bound (TORCH_TPU_CACHE_MAX_SIZE) */
  int64_t dumped;           /* programs written to TORCH_TPU_DUMP_DIR */
  int64_t executions;       /* programs run */
  int64_t fused_flushes;    /* Fused Eager: graphs run */
  int64_t fused_ops;        /* ops in them */
  int64_t fused_replays;    /* graphs run again op by op after the fused program failed */
  int64_t packed_hits;      /* fused programs' packed scalars found on the device already */
  int64_t packed_uploads;   /* ... and copied there */
  int64_t pending_ops;      /* ops recorded, not yet run */
} tt_runtime_stats_t;
void tt_runtime_get_stats(tt_runtime_t* rt, int device, tt_runtime_stats_t* out);
void tt_runtime_reset_peak(tt_runtime_t* rt, int device);
/* Runs what Fused Eager recorded, then drops every compiled program kept in
 * memory, and with `disk` every entry of the disk cache's directory. */
tt_status_t tt_runtime_clear_cache(tt_runtime_t* rt, bool disk);
/* The disk cache's directory (borrowed), NULL when tier 2 is off. */
const char* tt_runtime_cache_dir(tt_runtime_t* rt);
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

/* ---- views (tt_view_t: ../graph/tt_graph.h) ------------------------------------ */
/* host <-> device. `host` is dense row-major of the view's dtype and sizes. */
tt_status_t tt_view_write_host(tt_runtime_t* rt, const tt_view_t* dst, const void* host);
tt_status_t tt_view_read_host(tt_runtime_t* rt, const tt_view_t* src, void* host);
/* Where device memory is host memory (the CPU plugins): synchronizes the
 * runtime (every recorded and pending op done), then sets *addr to where a
 * full, contiguous view's bytes live in its storage's buffer. The caller may
 * read and write them in place, with no op on the device in between, until
 * it launches the next op (e.g. a host collective reducing in device memory).
 * *addr is NULL (and the status OK) when that does not apply: another plugin,
 * a view that is not its whole storage, a storage never written or holding
 * another dtype, a lazy conj/neg bit. Borrowed; the storage keeps the buffer. */
tt_status_t tt_view_host_window(tt_runtime_t* rt, const tt_view_t* v, void** addr);

/* dst = src converted to dst's dtype (and broadcast to its shape). */
tt_status_t tt_runtime_copy(tt_runtime_t* rt, const tt_view_t* dst, const tt_view_t* src);

/* ---- op calls (tt_call_t: ../graph/tt_graph.h) ------------------------------------ */
/* Runs one op: reads the input views, runs the lowering, writes the outputs. */
tt_status_t tt_runtime_call(tt_runtime_t* rt, const tt_call_t* call);

/* ---- collectives across devices (collective.c, DESIGN §9) ----------------------
 * One StableHLO program replicated over a group of devices: those of this
 * client (TORCH_TPU_NUM_CPU_DEVICES on the CPU plugin) or, on a client that
 * spans processes (tt_runtime_open_with, num_nodes > 1), those of every
 * process. Each process calls with its own members; all members of a group
 * must make the same call (kind, op, root, dtype, count, group) in the same
 * order, as with any collective library. */
typedef enum tt_coll_kind {
  TT_COLL_ALL_REDUCE = 0,
  TT_COLL_BROADCAST,      /* from group rank `root` */
  TT_COLL_REDUCE,         /* to group rank `root`; the others keep their input */
  TT_COLL_ALL_GATHER,     /* count in, group_size * count out, in group-rank order */
  TT_COLL_REDUCE_SCATTER, /* group_size * count in, count out: the member's part */
  TT_COLL_ALL_TO_ALL,     /* group_size * count in and out: part j goes to member j */
} tt_coll_kind_t;
typedef enum tt_coll_op { TT_COLL_SUM = 0, TT_COLL_PROD, TT_COLL_MIN, TT_COLL_MAX, TT_COLL_AVG } tt_coll_op_t;

typedef struct tt_collective {
  tt_coll_kind_t kind;
  tt_coll_op_t op;          /* ALL_REDUCE, REDUCE, REDUCE_SCATTER; AVG of integers truncates */
  int root;                 /* BROADCAST, REDUCE: a group rank */
  tt_dtype_t dtype;         /* any but complex */
  int64_t count;            /* elements per member (see the kinds) */
  int group_size;
  const int64_t* group_ids; /* borrowed: the global device id of each group rank */
  const char* producer;     /* static name for errors ("c10d::allreduce_"), or NULL */
} tt_collective_t;

/* Runs the collective on this process's members: in[i] and out[i] (views of
 * any layout; out may be in) live on member i's device. Asynchronous like
 * any op (Debug Eager waits); recorded Fused Eager ops run first. */
tt_status_t tt_runtime_collective(tt_runtime_t* rt, const tt_collective_t* c, const tt_view_t* in,
                                  const tt_view_t* out, int nlocal);
/* The global id of a local device (what tt_collective_t.group_ids lists). */
tt_status_t tt_runtime_device_global_id(tt_runtime_t* rt, int device, int64_t* id);
const char* tt_coll_kind_name(tt_coll_kind_t k);

/* ---- captured programs (torch.compile, DESIGN §8) --------------------------------
 * A capture records the one program that a sequence of calls, recorded as
 * Fused Eager records them, ran as; its storages are named by role: the
 * caller's inputs (by index) or storages the calls created ("new", numbered).
 * Replaying it runs the same executable on other inputs of the same layout,
 * into fresh storages, with no recording: a compiled graph's call costs one
 * Execute. A capture is exact or refused: tt_capture_end gives no capture
 * when the calls did not run as one program (a host read or write, an op
 * without a lowering, a Strict call from another thread, a storage that is
 * neither an input nor new), and the caller then records the calls again
 * on each call.
 *
 * Ownership: tt_capture_end returns an owned capture (tt_capture_destroy).
 * Thread rules: a capture is immutable; replays may run on any thread. */
/* tt_capture_t, its accessors and tt_capture_destroy: ../graph/tt_program.h. */

/* Runs what Fused Eager recorded, then starts a capture: until
 * tt_capture_end (or _abort), calls are recorded whatever the thread's mode
 * says (the caller sets Fused) and the graph is never cut. */
tt_status_t tt_capture_begin(tt_runtime_t* rt);
/* Ends a capture that will not be used (an exception while recording): the
 * recorded calls stay recorded and run as Fused Eager runs them. */
void tt_capture_abort(tt_runtime_t* rt);
/* Runs the recorded calls as one program and ends the capture. The calls'
 * error, if any, is returned (as Fused Eager returns it). Otherwise *out is
 * the capture, or NULL with *why (static text) when the calls cannot be
 * replayed. inputs/outputs: the storages of the caller's inputs and outputs
 * (NULL for what is not a device tensor); host_ids: the identities
 * (tt_call_arg_t.host_id) of the host values the caller will pass again to
 * each replay, in that order; a host 0-dim tensor argument that is not one of
 * them is a constant of the graph. rng_seed and [rng_begin, rng_end): the
 * generator's seed and the offsets the calls took from it. */
tt_status_t tt_capture_end(tt_runtime_t* rt, tt_storage_t* const* inputs, int nin,
                           tt_storage_t* const* outputs, int nout, const uint64_t* host_ids, int nhost,
                           uint64_t rng_seed, uint64_t rng_begin, uint64_t rng_end, tt_capture_t** out,
                           const char** why);
/* Whether the capture's executable is still cached (a replay would not be
 * stale for that reason). */
bool tt_capture_ready(tt_runtime_t* rt, const tt_capture_t* c);
/* Runs the captured program on `inputs` (nin, laid out as the capture's:
 * the caller checks sizes, strides, offsets, aliasing) into `news` (fresh
 * storages of tt_capture_new_nbytes). host_vals: this run's host values
 * (nhost, as at tt_capture_end; each the bytes of one element of the dtype
 * its argument had). RNG calls take (rng_seed, their captured offset +
 * rng_delta). *stale: the executable or an input's buffer
 * type is not the capture's any more; nothing ran, capture again. Errors as
 * Strict Eager's: device failures are sticky on the results, raised at the
 * next sync (Debug: here). */
tt_status_t tt_capture_replay(tt_runtime_t* rt, const tt_capture_t* c, tt_storage_t* const* inputs,
                              int nin, tt_storage_t* const* news, const void* const* host_vals, int nhost,
                              uint64_t rng_seed, uint64_t rng_delta, bool* stale);

#ifdef __cplusplus
}
#endif
#endif /* TT_RUNTIME_H_ */
