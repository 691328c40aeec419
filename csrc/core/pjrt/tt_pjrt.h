/* torch_tpu core: the PJRT layer. Loads a plugin, creates its client, moves
 * buffers between host and device, compiles StableHLO text, executes.
 * The ABI subset we use is declared in pjrt_abi.h (internal to this layer);
 * nothing above this layer sees a PJRT type.
 *
 * Ownership: tt_pjrt_open returns an owned client (tt_pjrt_close). Buffers and
 * executables returned by *_create / from_host / compile / execute are owned by
 * the caller and released with their _destroy; they must be destroyed before
 * the client is closed. Plugins are never dlclose'd.
 * Thread rules: a tt_pjrt_t may be used from several threads at once (PJRT
 * clients are thread-safe); buffers and executables likewise, except that a
 * buffer must not be destroyed while another thread still passes it in. */
#ifndef TT_PJRT_H_
#define TT_PJRT_H_

#include "../base/tt_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tt_pjrt tt_pjrt_t;
typedef struct tt_pjrt_buffer tt_pjrt_buffer_t; /* a PJRT_Buffer* */
typedef struct tt_pjrt_exec tt_pjrt_exec_t;     /* a PJRT_LoadedExecutable* + its output count */

typedef struct tt_pjrt_info {
  char plugin_path[1024];
  int api_major;
  int api_minor;
  char platform_name[64];      /* "cpu", "cuda", "tpu" */
  char platform_version[256];
  int num_devices;             /* addressable devices */
  int num_global_devices;      /* of every process of the client (= num_devices on one) */
  int process_index;           /* this process's, in a client that spans processes; else 0 */
  char device_kind[128];       /* of device 0 */
  char stablehlo_current[32];  /* plugin attribute, "" if absent */
  char stablehlo_minimum[32];
} tt_pjrt_info_t;

/* Discovery (DESIGN §3). `site_dirs` are the Python package roots to search
 * (sys.path); the core knows the relative file names of every plugin package.
 * Order: TORCH_TPU_PJRT_PLUGIN, TPU_LIBRARY_PATH / libtpu, the CUDA plugins (if
 * /dev/nvidia0 exists), lammps_jax_pjrt_cpu, xla_cpu_pjrt. TORCH_TPU_PJRT_PLATFORM
 * restricts the search to one platform. On failure the status explains how to
 * install a plugin. Writes the path into `out`. */
tt_status_t tt_pjrt_discover(const char* const* site_dirs, int n_site_dirs, tt_sbuf_t* out);
/* The same, also naming the platform of the plugin found ("cpu", "gpu",
 * "tpu"; static), or NULL where the user named the file
 * (TORCH_TPU_PJRT_PLUGIN): known without loading it. */
tt_status_t tt_pjrt_discover_platform(const char* const* site_dirs, int n_site_dirs, tt_sbuf_t* out,
                                      const char** found_platform);

/* Loads the plugin at `path` (dlopen, GetPjrtApi, version and slot checks,
 * Plugin_Initialize) and creates a client. `cpu_device_count` is passed to CPU
 * plugins (ignored if <= 0). */
tt_status_t tt_pjrt_open(const char* path, int cpu_device_count, tt_pjrt_t** out);

/* A key-value store shared by the processes of one job (e.g. torch's c10d
 * store), through which a client that spans processes finds the others.
 * Keys and values are bytes. get waits up to timeout_ms for the key; try_get
 * returns TT_NOT_FOUND at once when it is absent. A value returned is
 * malloc'd and passes to the caller. The functions may be called from any
 * thread while the client lives (XLA exchanges collective ids at run time). */
typedef struct tt_pjrt_kv {
  void* ctx;
  tt_status_t (*get)(void* ctx, const char* key, size_t key_len, int timeout_ms, char** value,
                     size_t* value_len);
  tt_status_t (*try_get)(void* ctx, const char* key, size_t key_len, char** value, size_t* value_len);
  tt_status_t (*put)(void* ctx, const char* key, size_t key_len, const char* value, size_t value_len);
} tt_pjrt_kv_t;

typedef struct tt_pjrt_options {
  int cpu_device_count;            /* CPU plugins; <= 0: the plugin's default */
  /* num_nodes > 1: one client across num_nodes processes, this one node_id
   * (GPU plugins: create options node_id, num_nodes, and the store). */
  int node_id;
  int num_nodes;
  const int64_t* visible_devices;  /* GPU plugins: the local devices to use (NULL: all) */
  int num_visible_devices;
  tt_pjrt_kv_t kv;                 /* copied; kv.ctx must outlive the client */
} tt_pjrt_options_t;

/* tt_pjrt_open with options. A client across processes is only what the
 * plugin makes of the options: check tt_pjrt_info_t.num_global_devices (a
 * CPU plugin ignores them). */
tt_status_t tt_pjrt_open_with(const char* path, const tt_pjrt_options_t* o, tt_pjrt_t** out);
void tt_pjrt_close(tt_pjrt_t* p); /* NULL-safe */
const tt_pjrt_info_t* tt_pjrt_get_info(const tt_pjrt_t* p);

/* host -> device; `data` is dense row-major of `type` and is copied before the
 * call returns. */
tt_status_t tt_pjrt_buffer_from_host(tt_pjrt_t* p, int device, const void* data,
                                     const tt_type_t* type, tt_pjrt_buffer_t** out);
/* device -> host, blocking; `nbytes` must equal the buffer's dense size. A
 * failed computation that produced the buffer surfaces here. */
tt_status_t tt_pjrt_buffer_to_host(tt_pjrt_t* p, tt_pjrt_buffer_t* b, void* dst, size_t nbytes);
/* Waits until the buffer is computed; returns the error of the computation. */
tt_status_t tt_pjrt_buffer_await(tt_pjrt_t* p, tt_pjrt_buffer_t* b);
/* Non-blocking: is the buffer computed (or failed)? */
bool tt_pjrt_buffer_is_ready(tt_pjrt_t* p, tt_pjrt_buffer_t* b);
/* Where device memory is host memory (XLA's CPU plugin): the address of the
 * buffer's dense contents, valid while the buffer lives, readable once it
 * is ready (tt_pjrt_buffer_await). NULL on other plugins, or when
 * TORCH_TPU_HOST_ADDRESS_READS=0. */
const void* tt_pjrt_buffer_host_address(tt_pjrt_t* p, tt_pjrt_buffer_t* b);
void tt_pjrt_buffer_destroy(tt_pjrt_t* p, tt_pjrt_buffer_t* b); /* NULL-safe */
/* The buffer's logical type (element type and dims, as PJRT reports them).
 * Fails with TT_UNIMPLEMENTED for element types without a tt_dtype_t. */
tt_status_t tt_pjrt_buffer_type(tt_pjrt_t* p, tt_pjrt_buffer_t* b, tt_type_t* out);

/* Compiles StableHLO text ("mlir" format) for 1 replica x 1 partition, as a
 * portable executable (no device baked in: it runs on any device passed to
 * tt_pjrt_execute). The status of a failed compile carries the plugin's
 * diagnostic. */
/* The most bytes `device` can hold, from the plugin's memory statistics
 * (Device_MemoryStats' bytes_limit). TT_UNIMPLEMENTED where the plugin does
 * not say (the CPU plugins). */
tt_status_t tt_pjrt_memory_limit(tt_pjrt_t* p, int device, int64_t* out);

tt_status_t tt_pjrt_compile(tt_pjrt_t* p, const char* code, size_t code_size, tt_pjrt_exec_t** out);
void tt_pjrt_exec_destroy(tt_pjrt_t* p, tt_pjrt_exec_t* e); /* NULL-safe */
size_t tt_pjrt_exec_num_outputs(tt_pjrt_t* p, tt_pjrt_exec_t* e);
/* The serialized xla.CompileOptionsProto that tt_pjrt_compile passes
 * (static bytes): part of every persistent cache key. */
const void* tt_pjrt_compile_options(size_t* len);

/* ---- executables on disk (pjrt_serialize.c) ----------------------------------
 * Does the plugin have the slots to serialize and load executables? Both CPU
 * plugins (0.81, 0.115) do. Without them the two functions below return
 * TT_UNIMPLEMENTED. */
bool tt_pjrt_can_serialize(tt_pjrt_t* p);
/* The plugin's bytes for `e` (borrowed), as a malloc'd copy: *bytes is owned
 * by the caller (free). They load only into the same plugin build
 * (tt_pjrt_identity says which). */
tt_status_t tt_pjrt_exec_serialize(tt_pjrt_t* p, tt_pjrt_exec_t* e, void** bytes, size_t* len);
/* Loads bytes from tt_pjrt_exec_serialize (of any client of the same plugin
 * build, in any process) into p: an owned executable, as tt_pjrt_compile
 * returns (portable, same output count). Foreign or damaged bytes are a
 * status (the plugin's diagnostic), never a crash as far as the plugin
 * checks them: callers verify a checksum first. */
tt_status_t tt_pjrt_exec_deserialize(tt_pjrt_t* p, const void* bytes, size_t len,
                                     tt_pjrt_exec_t** out);
/* A text naming the plugin build and the host it compiles for, for
 * persistent cache keys: plugin path (resolved), file size and mtime, PJRT
 * API version, platform name and version, and for the CPU platform the host
 * architecture and a hash of its CPU feature flags (/proc/cpuinfo). Equal in
 * every process on one machine with the same files. TT_OUT_OF_RANGE if it
 * does not fit in `cap` bytes (with the NUL); 1024 always suffice beyond the
 * path's length. */
tt_status_t tt_pjrt_identity(tt_pjrt_t* p, char* buf, size_t cap);

/* Runs `e` on `device` with `nargs` argument buffers (borrowed; they must live
 * on `device`, or the plugin refuses). On success
 * writes `nouts` owned output buffers (nouts must equal num_outputs). Returns
 * without waiting for the computation; errors of the computation itself show
 * on the output buffers (tt_pjrt_buffer_await / to_host). */
tt_status_t tt_pjrt_execute(tt_pjrt_t* p, tt_pjrt_exec_t* e, int device,
                            tt_pjrt_buffer_t* const* args, size_t nargs,
                            tt_pjrt_buffer_t** outs, size_t nouts);

/* ---- several devices (pjrt_multi.c, DESIGN §9) ------------------------------------
 * The global id of addressable device `device` (unique across the processes
 * of a client that spans processes; 0..n-1 on one machine's CPU plugin). */
tt_status_t tt_pjrt_device_id(tt_pjrt_t* p, int device, int64_t* id);
/* The serialized xla.CompileOptionsProto for n replicas x 1 partition on the
 * devices `ids` (global ids, replica order); *len is set even when cap is too
 * small (TT_OUT_OF_RANGE). */
tt_status_t tt_pjrt_replicated_options(int n, const int64_t* ids, void* buf, size_t cap, size_t* len);
/* Compiles StableHLO for n replicas on the devices device_ids (replica i runs
 * on device_ids[i]): what collective programs need. Owned result, as
 * tt_pjrt_compile's, but not portable. */
tt_status_t tt_pjrt_compile_replicated(tt_pjrt_t* p, const char* code, size_t code_size, int n,
                                       const int64_t* device_ids, tt_pjrt_exec_t** out);
/* Runs a replicated executable on this process's devices of its assignment:
 * devices[i] (addressable indexes, any order) takes args[i] (nargs buffers,
 * borrowed) and gets outs[i] (nouts owned buffers). Asynchronous, as
 * tt_pjrt_execute. */
tt_status_t tt_pjrt_execute_replicated(tt_pjrt_t* p, tt_pjrt_exec_t* e, const int* devices, int ndev,
                                       tt_pjrt_buffer_t* const* const* args, size_t nargs,
                                       tt_pjrt_buffer_t** const* outs, size_t nouts);

#ifdef __cplusplus
}
#endif
#endif /* TT_PJRT_H_ */
