/* PJRT buffers, compilation and execution. */
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

/* ---- dtypes: tt_dtype_t <-> PJRT element type, one table ---------------------- */
static const int k_elem_of_dtype[] = {
    [TT_BOOL] = TT_ABI_PRED, [TT_U8] = TT_ABI_U8,     [TT_I8] = TT_ABI_S8,
    [TT_I16] = TT_ABI_S16,   [TT_I32] = TT_ABI_S32,   [TT_I64] = TT_ABI_S64,
    [TT_F16] = TT_ABI_F16,   [TT_BF16] = TT_ABI_BF16, [TT_F32] = TT_ABI_F32,
    [TT_F64] = TT_ABI_F64,   [TT_U16] = TT_ABI_U16,   [TT_U32] = TT_ABI_U32,
    [TT_U64] = TT_ABI_U64,   [TT_C64] = TT_ABI_C64,   [TT_C128] = TT_ABI_C128,
    [TT_F8E4M3FN] = TT_ABI_F8E4M3FN,     [TT_F8E5M2] = TT_ABI_F8E5M2,
    [TT_F8E4M3FNUZ] = TT_ABI_F8E4M3FNUZ, [TT_F8E5M2FNUZ] = TT_ABI_F8E5M2FNUZ,
    [TT_C32] = TT_ABI_INVALID, /* held as F16 pairs (tt_dtype_buffer) */
};
_Static_assert(sizeof(k_elem_of_dtype) / sizeof(k_elem_of_dtype[0]) == TT_DTYPE_COUNT,
               "every dtype maps to a PJRT element type");

static tt_status_t tt__dtype_of_elem(int elem, tt_dtype_t* out) {
  for (int d = 0; d < TT_DTYPE_COUNT; d++)
    if (elem != TT_ABI_INVALID && k_elem_of_dtype[d] == elem) {
      *out = (tt_dtype_t)d;
      return NULL;
    }
  return tt_status_make(TT_UNIMPLEMENTED, "PJRT element type %d has no torch_tpu dtype", elem);
}

static tt_status_t tt__check_device(const tt_pjrt_t* p, int device) {
  if (device < 0 || (size_t)device >= p->num_devices)
    return tt_status_make(TT_INVALID_ARGUMENT, "device %d out of range: %s has %zu device(s)",
                          device, p->info.platform_name, p->num_devices);
  return NULL;
}

/* ---- buffers ------------------------------------------------------------------ */
tt_status_t tt_pjrt_buffer_from_host(tt_pjrt_t* p, int device, const void* data,
                                     const tt_type_t* type, tt_pjrt_buffer_t** out) {
  *out = NULL;
  TT_RETURN_IF_ERROR(tt__check_device(p, device));
  if ((unsigned)type->dtype >= TT_DTYPE_COUNT || type->rank < 0 || type->rank > TT_MAX_RANK ||
      k_elem_of_dtype[type->dtype] == TT_ABI_INVALID)
    return tt_status_make(TT_INVALID_ARGUMENT, "bad tensor type (dtype %d, rank %d)",
                          (int)type->dtype, (int)type->rank);
  tt_abi_from_host_args_t a = {
      .struct_size = TT_ABI_SIZE(tt_abi_from_host_args_t, buffer),
      .client = p->client,
      .data = data,
      .type = k_elem_of_dtype[type->dtype],
      .dims = type->dims,
      .num_dims = (size_t)type->rank,
      .host_buffer_semantics = TT_ABI_HOST_IMMUTABLE_ONLY_DURING_CALL,
      .device = p->devices[device],
  };
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_CLIENT_BUFFERFROMHOST, &a));
  tt_status_t st = tt__pjrt_event_finish(p->api, a.done_with_host);
  if (st) {
    tt_pjrt_buffer_destroy(p, (tt_pjrt_buffer_t*)a.buffer);
    return st;
  }
  *out = (tt_pjrt_buffer_t*)a.buffer;
  return NULL;
}

tt_status_t tt_pjrt_buffer_type(tt_pjrt_t* p, tt_pjrt_buffer_t* b, tt_type_t* out) {
  memset(out, 0, sizeof(*out));
  tt_abi_elemtype_args_t e = {.struct_size = TT_ABI_SIZE(tt_abi_elemtype_args_t, type),
                              .buffer = tt__buf(b)};
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_BUFFER_ELEMENTTYPE, &e));
  tt_abi_dims_args_t d = {.struct_size = TT_ABI_SIZE(tt_abi_dims_args_t, num_dims),
                          .buffer = tt__buf(b)};
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_BUFFER_DIMENSIONS, &d));
  if (d.num_dims > TT_MAX_RANK)
    return tt_status_make(TT_UNIMPLEMENTED, "PJRT buffer of rank %zu exceeds the maximum %d",
                          d.num_dims, TT_MAX_RANK);
  tt_dtype_t dt = TT_F32;
  TT_RETURN_IF_ERROR(tt__dtype_of_elem(e.type, &dt));
  *out = tt_type_make(dt, (int32_t)d.num_dims, d.dims);
  return NULL;
}

tt_status_t tt_pjrt_buffer_to_host(tt_pjrt_t* p, tt_pjrt_buffer_t* b, void* dst, size_t nbytes) {
  tt_type_t t;
  TT_RETURN_IF_ERROR(tt_pjrt_buffer_type(p, b, &t));
  size_t want = (size_t)tt_type_numel(&t) * tt_dtype_size(t.dtype);
  if (nbytes != want) {
    char tbuf[160];
    tt_type_format(&t, tbuf, sizeof(tbuf));
    return tt_status_make(TT_INVALID_ARGUMENT, "copying a %s buffer (%zu bytes) into %zu bytes",
                          tbuf, want, nbytes);
  }
  /* An empty transfer would be a size query to the plugin: just wait. */
  if (nbytes == 0) return tt_pjrt_buffer_await(p, b);
  tt_abi_to_host_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_to_host_args_t, event),
                             .src = tt__buf(b),
                             .dst = dst,
                             .dst_size = nbytes};
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_BUFFER_TOHOST, &a));
  return tt__pjrt_event_finish(p->api, a.event);
}

/* XLA's CPU plugin keeps a buffer in host memory, dense and row-major (our
 * buffers are 1-D): a host read of a ready buffer can copy from its address
 * instead of asking ToHostBuffer, which hands the copy to the plugin's
 * thread pool and waits for it (~15 us against ~1 us). */
const void* tt_pjrt_buffer_host_address(tt_pjrt_t* p, tt_pjrt_buffer_t* b) {
  int known = atomic_load_explicit(&p->host_memory, memory_order_relaxed);
  if (known < 0) return NULL;
  if (known == 0) {
    tt_abi_handle_bool_args_t c = {.struct_size = TT_ABI_SIZE(tt_abi_handle_bool_args_t, value),
                                   .handle = tt__buf(b)};
    tt_status_t st = tt__pjrt_call(p->api, TT_SLOT_BUFFER_ISONCPU, &c);
    known = !st && c.value && tt_env_flag(TT_ENV_HOST_ADDRESS_READS) ? 1 : -1;
    tt_status_free(st);
    atomic_store_explicit(&p->host_memory, known, memory_order_relaxed);
    if (known < 0) return NULL;
  }
  tt_abi_handle2_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_handle2_args_t, out), .in = tt__buf(b)};
  tt_status_t st = tt__pjrt_call(p->api, TT_SLOT_BUFFER_UNSAFEPOINTER, &a);
  if (st) {
    tt_status_free(st);
    return NULL;
  }
  return a.out;
}

static tt_status_t tt__ready_event(tt_pjrt_t* p, tt_pjrt_buffer_t* b, tt_abi_event_t** ev) {
  tt_abi_handle2_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_handle2_args_t, out),
                             .in = tt__buf(b)};
  tt_status_t st = tt__pjrt_call(p->api, TT_SLOT_BUFFER_READYEVENT, &a);
  *ev = st ? NULL : (tt_abi_event_t*)a.out;
  return st;
}

tt_status_t tt_pjrt_buffer_await(tt_pjrt_t* p, tt_pjrt_buffer_t* b) {
  tt_abi_event_t* ev;
  TT_RETURN_IF_ERROR(tt__ready_event(p, b, &ev));
  return tt__pjrt_event_finish(p->api, ev);
}

bool tt_pjrt_buffer_is_ready(tt_pjrt_t* p, tt_pjrt_buffer_t* b) {
  tt_abi_event_t* ev;
  tt_status_t st = tt__ready_event(p, b, &ev);
  if (st) { /* no event to ask: say ready, so the caller awaits and sees the error */
    tt_status_free(st);
    return true;
  }
  tt_abi_handle_bool_args_t r = {.struct_size = TT_ABI_SIZE(tt_abi_handle_bool_args_t, value), .handle = ev};
  st = tt__pjrt_call(p->api, TT_SLOT_EVENT_ISREADY, &r);
  bool ready = st ? true : r.value;
  tt_status_free(st);
  tt_abi_handle_args_t d = {.struct_size = TT_ABI_SIZE(tt_abi_handle_args_t, handle), .handle = ev};
  tt_status_free(tt__pjrt_call(p->api, TT_SLOT_EVENT_DESTROY, &d));
  return ready;
}

void tt_pjrt_buffer_destroy(tt_pjrt_t* p, tt_pjrt_buffer_t* b) {
  if (!b) return;
  tt_abi_handle_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_handle_args_t, handle),
                            .handle = tt__buf(b)};
  tt_status_free(tt__pjrt_call(p->api, TT_SLOT_BUFFER_DESTROY, &a));
}

/* ---- compile ------------------------------------------------------------------- */
/* Serialized xla.CompileOptionsProto:
 *   executable_build_options (field 3, 4 bytes) { num_replicas (4) = 1, num_partitions (5) = 1 }
 *   compile_portable_executable (field 4) = true
 * Portable: no device assignment is baked in; Execute names the device
 * (execute_device), so one executable runs on any device of the client. */
static const char k_compile_options[] = {0x1a, 0x04, 0x20, 0x01, 0x28, 0x01, 0x20, 0x01};

const void* tt_pjrt_compile_options(size_t* len) {
  *len = sizeof(k_compile_options);
  return k_compile_options;
}

static tt_status_t tt__num_outputs(tt_pjrt_t* p, tt_abi_loaded_exec_t* le, size_t* out) {
  tt_abi_handle2_args_t g = {.struct_size = TT_ABI_SIZE(tt_abi_handle2_args_t, out), .in = le};
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_LOADEDEXEC_GETEXECUTABLE, &g));
  tt_abi_numoutputs_args_t n = {.struct_size = TT_ABI_SIZE(tt_abi_numoutputs_args_t, num_outputs),
                                .executable = g.out};
  tt_status_t st = tt__pjrt_call(p->api, TT_SLOT_EXECUTABLE_NUMOUTPUTS, &n);
  tt_abi_handle_args_t d = {.struct_size = TT_ABI_SIZE(tt_abi_handle_args_t, handle), .handle = g.out};
  tt_status_t st2 = tt__pjrt_call(p->api, TT_SLOT_EXECUTABLE_DESTROY, &d);
  if (st) {
    tt_status_free(st2);
    return st;
  }
  *out = n.num_outputs;
  return st2;
}

tt_status_t tt__pjrt_exec_wrap(tt_pjrt_t* p, tt_abi_loaded_exec_t* le, tt_pjrt_exec_t** out) {
  *out = NULL;
  tt_pjrt_exec_t* e = calloc(1, sizeof(*e));
  if (!e) {
    tt_abi_handle_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_handle_args_t, handle), .handle = le};
    tt_status_free(tt__pjrt_call(p->api, TT_SLOT_LOADEDEXEC_DESTROY, &a));
    return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of memory");
  }
  e->loaded = le;
  tt_status_t st = tt__num_outputs(p, le, &e->num_outputs);
  if (st) {
    tt_pjrt_exec_destroy(p, e);
    return st;
  }
  *out = e;
  return NULL;
}

tt_status_t tt__pjrt_compile_with(tt_pjrt_t* p, const char* code, size_t code_size, const void* options,
                                  size_t options_size, tt_pjrt_exec_t** out) {
  *out = NULL;
  tt_abi_program_t prog = {.struct_size = TT_ABI_SIZE(tt_abi_program_t, format_size),
                           .code = code,
                           .code_size = code_size,
                           .format = "mlir",
                           .format_size = 4};
  tt_abi_compile_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_compile_args_t, executable),
                             .client = p->client,
                             .program = &prog,
                             .compile_options = (const char*)options,
                             .compile_options_size = options_size};
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_CLIENT_COMPILE, &a));
  return tt__pjrt_exec_wrap(p, a.executable, out);
}

tt_status_t tt_pjrt_compile(tt_pjrt_t* p, const char* code, size_t code_size, tt_pjrt_exec_t** out) {
  tt_status_t st = tt__pjrt_compile_with(p, code, code_size, k_compile_options, sizeof(k_compile_options), out);
  return st ? tt_status_annotate(st, "compiling StableHLO on %s", p->info.platform_name) : NULL;
}

void tt_pjrt_exec_destroy(tt_pjrt_t* p, tt_pjrt_exec_t* e) {
  if (!e) return;
  tt_abi_handle_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_handle_args_t, handle),
                            .handle = e->loaded};
  tt_status_free(tt__pjrt_call(p->api, TT_SLOT_LOADEDEXEC_DESTROY, &a));
  free(e);
}

size_t tt_pjrt_exec_num_outputs(tt_pjrt_t* p, tt_pjrt_exec_t* e) {
  (void)p;
  return e ? e->num_outputs : 0;
}

/* ---- execute ---------------------------------------------------------------------- */
tt_status_t tt_pjrt_execute(tt_pjrt_t* p, tt_pjrt_exec_t* e, int device,
                            tt_pjrt_buffer_t* const* args, size_t nargs,
                            tt_pjrt_buffer_t** outs, size_t nouts) {
  for (size_t i = 0; i < nouts; i++) outs[i] = NULL;
  TT_RETURN_IF_ERROR(tt__check_device(p, device));
  if (nouts != e->num_outputs)
    return tt_status_make(TT_INVALID_ARGUMENT, "executable has %zu outputs, caller expects %zu",
                          e->num_outputs, nouts);
  /* Zeroed options of the 0.115 size: plugins refuse a smaller struct and
   * ignore the tail of a larger one (0.81 wants 112 bytes). */
  tt_abi_execute_options_t opts;
  memset(&opts, 0, sizeof(opts));
  opts.struct_size = sizeof(opts);
  /* One device: the lists are the caller's arrays (a tt_pjrt_buffer_t* is the
   * PJRT_Buffer*), no copies. */
  tt_abi_buffer_t* const* arg_list = (tt_abi_buffer_t* const*)args;
  tt_abi_buffer_t** out_list = (tt_abi_buffer_t**)outs;
  tt_abi_execute_args_t a = {
      .struct_size = TT_ABI_SIZE(tt_abi_execute_args_t, execute_device),
      .executable = e->loaded,
      .options = &opts,
      .argument_lists = &arg_list,
      .num_devices = 1,
      .num_args = nargs,
      .output_lists = &out_list,
      .device_complete_events = NULL,
      .execute_device = p->devices[device],
  };
  tt_status_t st = tt__pjrt_call(p->api, TT_SLOT_LOADEDEXEC_EXECUTE, &a);
  if (st) {
    for (size_t i = 0; i < nouts; i++) { /* a plugin may have filled some */
      tt_pjrt_buffer_destroy(p, outs[i]);
      outs[i] = NULL;
    }
    return tt_status_annotate(st, "executing on device %d", device);
  }
  return NULL;
}

tt_status_t tt_pjrt_memory_limit(tt_pjrt_t* p, int device, int64_t* out) {
  *out = 0;
  if (device < 0 || (size_t)device >= p->num_devices)
    return tt_status_make(TT_INVALID_ARGUMENT, "no device %d", device);
  tt_abi_memory_stats_args_t a = {
      .struct_size = TT_ABI_SIZE(tt_abi_memory_stats_args_t, peak_pool_bytes_is_set),
      .device = p->devices[device],
  };
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_DEVICE_MEMORYSTATS, &a));
  if (!a.bytes_limit_is_set || a.bytes_limit <= 0)
    return tt_status_make(TT_UNIMPLEMENTED, "the plugin does not report a memory limit");
  *out = a.bytes_limit;
  return NULL;
}
