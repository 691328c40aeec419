/* Internal to the pjrt layer: the client struct and the one call helper that
 * turns a PJRT_Error* into a tt_status_t. Not API. */
#ifndef TT_PJRT_INTERNAL_H_
#define TT_PJRT_INTERNAL_H_

#include <stdatomic.h>
#include <stdio.h>
#include "pjrt_abi.h"
#include "tt_pjrt.h"

/* Thread rules: immutable after tt_pjrt_open returns (PJRT calls themselves
 * are thread-safe), so no lock. */
struct tt_pjrt {
  const tt_abi_api_t* api;            /* borrowed from the plugin, lives forever */
  tt_abi_client_t* client;            /* owned: Client_Destroy in tt_pjrt_close */
  tt_abi_device_t* const* devices;    /* owned by the client */
  size_t num_devices;
  tt_pjrt_info_t info;
  tt_pjrt_kv_t kv;                    /* a client across processes: the store (else zeros) */
  /* Is device memory host memory (Buffer_IsOnCpu, asked of the first buffer
   * read)? 0 not yet known, 1 yes, -1 no or not answerable. */
  _Atomic int host_memory;
};

/* A compiled program: the loaded executable (owned) and its output count. */
struct tt_pjrt_exec {
  tt_abi_loaded_exec_t* loaded;
  size_t num_outputs;
};

/* Wraps a loaded executable (ownership passes in, also on failure) as a
 * tt_pjrt_exec_t with its output count: what compile and deserialize return. */
tt_status_t tt__pjrt_exec_wrap(tt_pjrt_t* p, tt_abi_loaded_exec_t* le, tt_pjrt_exec_t** out);

/* The plugin's start-up log (startup_log.c): between begin and end, stderr
 * goes to a temporary file; end restores it and writes back every captured
 * line except absl's informational ones (all of them when show_all, e.g. the
 * load failed). Without TORCH_TPU_PJRT_LOG=1 only; a capture that cannot be
 * set up leaves stderr alone. begin and end pair on one thread. */
typedef struct tt__pjrt_log_capture {
  int saved_fd;  /* the process's stderr while captured, else -1 */
  FILE* file;    /* owned: the capture, NULL when not capturing */
} tt__pjrt_log_capture_t;
void tt__pjrt_log_capture_begin(tt__pjrt_log_capture_t* c);
void tt__pjrt_log_capture_end(tt__pjrt_log_capture_t* c, bool show_all);

/* The key-value callbacks passed to Client_Create (user arg: the tt_pjrt_t,
 * whose kv they call): pjrt_kv.c. Exposed for the tests, which call them
 * as a plugin does. */
void tt__pjrt_kv_callbacks(tt_abi_fn* get, tt_abi_fn* try_get, tt_abi_fn* put);

/* Client_Compile of StableHLO text with serialized xla.CompileOptionsProto
 * bytes (pjrt_ops.c); an owned executable. */
tt_status_t tt__pjrt_compile_with(tt_pjrt_t* p, const char* code, size_t code_size, const void* options,
                                  size_t options_size, tt_pjrt_exec_t** out);

/* Our handles are the plugin's handles, cast. */
static inline tt_abi_buffer_t* tt__buf(tt_pjrt_buffer_t* b) { return (tt_abi_buffer_t*)b; }

/* The name of a slot we use ("Client_Compile"), for messages. */
const char* tt__pjrt_slot_name(int slot);

/* THE conversion of a plugin error: reads its message and code, destroys it,
 * returns a status "<slot name>: <message>" (NULL if err is NULL). */
tt_status_t tt__pjrt_status(const tt_abi_api_t* api, int slot, tt_abi_error_t* err);

/* Calls slot `slot` with `args` (struct_size already filled) and converts
 * its error. A missing slot is TT_UNIMPLEMENTED. */
tt_status_t tt__pjrt_call(const tt_abi_api_t* api, int slot, void* args);

/* Awaits and destroys an event (NULL-safe); returns the event's error. */
tt_status_t tt__pjrt_event_finish(const tt_abi_api_t* api, tt_abi_event_t* ev);

#endif /* TT_PJRT_INTERNAL_H_ */
