/* Programs over several devices (DESIGN §9): global device ids, executables
 * compiled for a device assignment of N replicas, and their execution on
 * this process's devices of the assignment. */
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

tt_status_t tt_pjrt_device_id(tt_pjrt_t* p, int device, int64_t* id) {
  *id = -1;
  if (device < 0 || (size_t)device >= p->num_devices)
    return tt_status_make(TT_INVALID_ARGUMENT, "device %d out of range: %s has %zu device(s)", device,
                          p->info.platform_name, p->num_devices);
  tt_abi_handle2_args_t g = {.struct_size = TT_ABI_SIZE(tt_abi_handle2_args_t, out), .in = p->devices[device]};
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_DEVICE_GETDESCRIPTION, &g));
  tt_abi_devdesc_id_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_devdesc_id_args_t, id),
                                .device_description = g.out};
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_DEVDESC_ID, &a));
  *id = a.id;
  return NULL;
}

/* ---- xla.CompileOptionsProto with a device assignment -------------------------
 * CompileOptionsProto.executable_build_options (3) {
 *   num_replicas (4), num_partitions (5) = 1,
 *   device_assignment (9) = DeviceAssignmentProto {
 *     replica_count (1), computation_count (2) = 1,
 *     computation_devices (3) { replica_device_ids (1, packed) } } }
 * Not portable: the executable runs on the assignment's devices only. */
typedef struct pb {
  unsigned char* b;
  size_t n, cap;
} pb_t;

static void pb_byte(pb_t* w, unsigned char c) {
  if (w->n < w->cap) w->b[w->n] = c;
  w->n++;
}
static void pb_varint(pb_t* w, uint64_t v) {
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    pb_byte(w, c | (v ? 0x80 : 0));
  } while (v);
}
static size_t varint_len(uint64_t v) {
  size_t n = 1;
  while (v >>= 7) n++;
  return n;
}
static void pb_tag(pb_t* w, int field, int wire) { pb_varint(w, ((uint64_t)field << 3) | (uint64_t)wire); }
static void pb_int(pb_t* w, int field, uint64_t v) {
  pb_tag(w, field, 0);
  pb_varint(w, v);
}

/* Writes the options into w (w->n tells the size; nothing past cap). */
static void compile_options(pb_t* w, int n, const int64_t* ids) {
  size_t ids_len = 0;
  for (int i = 0; i < n; i++) ids_len += varint_len((uint64_t)ids[i]);
  size_t comp_len = 1 + varint_len(ids_len) + ids_len;              /* replica_device_ids */
  size_t da_len = 1 + varint_len((uint64_t)n) + 2                   /* replica_count, computation_count */
                  + 1 + varint_len(comp_len) + comp_len;             /* computation_devices */
  size_t ebo_len = 1 + varint_len((uint64_t)n) + 2 + 1 + varint_len(da_len) + da_len;
  pb_tag(w, 3, 2);
  pb_varint(w, ebo_len);
  pb_int(w, 4, (uint64_t)n);
  pb_int(w, 5, 1);
  pb_tag(w, 9, 2);
  pb_varint(w, da_len);
  pb_int(w, 1, (uint64_t)n);
  pb_int(w, 2, 1);
  pb_tag(w, 3, 2);
  pb_varint(w, comp_len);
  pb_tag(w, 1, 2);
  pb_varint(w, ids_len);
  for (int i = 0; i < n; i++) pb_varint(w, (uint64_t)ids[i]);
}

tt_status_t tt_pjrt_replicated_options(int n, const int64_t* ids, void* buf, size_t cap, size_t* len) {
  for (int i = 0; i < n; i++)
    if (ids[i] < 0) return tt_status_make(TT_INVALID_ARGUMENT, "device id %lld", (long long)ids[i]);
  pb_t w = {buf, 0, cap};
  compile_options(&w, n, ids);
  *len = w.n;
  return w.n <= cap ? NULL : tt_status_make(TT_OUT_OF_RANGE, "compile options need %zu bytes", w.n);
}

tt_status_t tt_pjrt_compile_replicated(tt_pjrt_t* p, const char* code, size_t code_size, int n,
                                       const int64_t* device_ids, tt_pjrt_exec_t** out) {
  *out = NULL;
  if (n < 1) return tt_status_make(TT_INVALID_ARGUMENT, "%d replicas", n);
  size_t cap = 64 + (size_t)n * 10, len = 0;
  unsigned char* opts = malloc(cap);
  if (!opts) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  tt_status_t st = tt_pjrt_replicated_options(n, device_ids, opts, cap, &len);
  if (st) {
    free(opts);
    return st;
  }
  st = tt__pjrt_compile_with(p, code, code_size, opts, len, out);
  free(opts);
  return st ? tt_status_annotate(st, "compiling StableHLO for %d replicas on %s", n, p->info.platform_name) : NULL;
}

tt_status_t tt_pjrt_execute_replicated(tt_pjrt_t* p, tt_pjrt_exec_t* e, const int* devices, int ndev,
                                       tt_pjrt_buffer_t* const* const* args, size_t nargs,
                                       tt_pjrt_buffer_t** const* outs, size_t nouts) {
  for (int i = 0; i < ndev; i++)
    for (size_t j = 0; j < nouts; j++) outs[i][j] = NULL;
  if (nouts != e->num_outputs)
    return tt_status_make(TT_INVALID_ARGUMENT, "executable has %zu outputs, caller expects %zu", e->num_outputs,
                          nouts);
  /* The plugin takes the lists in the order of the executable's addressable
   * devices: ours are reordered to it. */
  tt_abi_exec_devices_args_t d = {.struct_size = TT_ABI_SIZE(tt_abi_exec_devices_args_t, num_devices),
                                   .executable = e->loaded};
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_LOADEDEXEC_ADDRESSABLEDEVICES, &d));
  if (d.num_devices != (size_t)ndev)
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "the program runs on %zu device(s) of this process, the caller passes %d",
                          d.num_devices, ndev);
  tt_abi_buffer_t* const** al = calloc((size_t)ndev, sizeof(*al));
  tt_abi_buffer_t*** ol = calloc((size_t)ndev, sizeof(*ol));
  tt_status_t st = (!al || !ol) ? tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory") : NULL;
  for (int k = 0; k < ndev && !st; k++) {
    int found = -1;
    for (int i = 0; i < ndev; i++) {
      if (devices[i] < 0 || (size_t)devices[i] >= p->num_devices) break;
      if (p->devices[devices[i]] == d.devices[k]) found = i;
    }
    if (found < 0) {
      st = tt_status_make(TT_INVALID_ARGUMENT, "the caller passes no buffers for device %d of the program", k);
      break;
    }
    al[k] = (tt_abi_buffer_t* const*)args[found];
    ol[k] = (tt_abi_buffer_t**)outs[found];
  }
  if (!st) {
    tt_abi_execute_options_t opts;
    memset(&opts, 0, sizeof(opts));
    opts.struct_size = sizeof(opts);
    tt_abi_execute_args_t a = {
        .struct_size = TT_ABI_SIZE(tt_abi_execute_args_t, execute_device),
        .executable = e->loaded,
        .options = &opts,
        .argument_lists = (tt_abi_buffer_t* const* const*)al,
        .num_devices = (size_t)ndev,
        .num_args = nargs,
        .output_lists = (tt_abi_buffer_t** const*)ol,
        .device_complete_events = NULL,
        .execute_device = NULL,
    };
    st = tt__pjrt_call(p->api, TT_SLOT_LOADEDEXEC_EXECUTE, &a);
    if (st) {
      for (int i = 0; i < ndev; i++)
        for (size_t j = 0; j < nouts; j++) {
          tt_pjrt_buffer_destroy(p, outs[i][j]);
          outs[i][j] = NULL;
        }
      st = tt_status_annotate(st, "executing on %d device(s)", ndev);
    }
  }
  free(al);
  free(ol);
  return st;
}
