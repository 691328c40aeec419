/* PJRT plugin loading, client creation, and the one place where a
 * PJRT_Error* becomes a tt_status_t. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

#define TT_PJRT_MIN_MINOR 81 /* oldest plugin we support: xla-cpu-pjrt 0.0.1 */

/* ---- the slots we use ------------------------------------------------------
 * required: checked at open (present and non-NULL), so later calls need no
 * check. Optional ones are checked where they are called. */
typedef struct tt__slot_info {
  int slot;
  const char* name;
  bool required;
} tt__slot_info_t;

static const tt__slot_info_t k_slots[] = {
    {TT_SLOT_ERROR_DESTROY, "Error_Destroy", true},
    {TT_SLOT_ERROR_MESSAGE, "Error_Message", true},
    {TT_SLOT_ERROR_GETCODE, "Error_GetCode", true},
    {TT_SLOT_PLUGIN_INITIALIZE, "Plugin_Initialize", true},
    {TT_SLOT_PLUGIN_ATTRIBUTES, "Plugin_Attributes", false},
    {TT_SLOT_EVENT_DESTROY, "Event_Destroy", true},
    {TT_SLOT_EVENT_ISREADY, "Event_IsReady", true},
    {TT_SLOT_EVENT_AWAIT, "Event_Await", true},
    {TT_SLOT_CLIENT_CREATE, "Client_Create", true},
    {TT_SLOT_CLIENT_DESTROY, "Client_Destroy", true},
    {TT_SLOT_CLIENT_PLATFORMNAME, "Client_PlatformName", true},
    {TT_SLOT_CLIENT_PROCESSINDEX, "Client_ProcessIndex", false},
    {TT_SLOT_CLIENT_PLATFORMVERSION, "Client_PlatformVersion", false},
    {TT_SLOT_CLIENT_DEVICES, "Client_Devices", false},
    {TT_SLOT_CLIENT_ADDRESSABLEDEVICES, "Client_AddressableDevices", true},
    {TT_SLOT_CLIENT_COMPILE, "Client_Compile", true},
    {TT_SLOT_CLIENT_BUFFERFROMHOST, "Client_BufferFromHostBuffer", true},
    {TT_SLOT_DEVDESC_ID, "DeviceDescription_Id", false},
    {TT_SLOT_DEVDESC_KIND, "DeviceDescription_Kind", false},
    {TT_SLOT_DEVICE_GETDESCRIPTION, "Device_GetDescription", false},
    {TT_SLOT_DEVICE_MEMORYSTATS, "Device_MemoryStats", false},
    {TT_SLOT_EXECUTABLE_DESTROY, "Executable_Destroy", true},
    {TT_SLOT_EXECUTABLE_NUMOUTPUTS, "Executable_NumOutputs", true},
    {TT_SLOT_EXECUTABLE_SERIALIZE, "Executable_Serialize", false},
    {TT_SLOT_LOADEDEXEC_DESTROY, "LoadedExecutable_Destroy", true},
    {TT_SLOT_LOADEDEXEC_GETEXECUTABLE, "LoadedExecutable_GetExecutable", true},
    {TT_SLOT_LOADEDEXEC_ADDRESSABLEDEVICES, "LoadedExecutable_AddressableDevices", false},
    {TT_SLOT_LOADEDEXEC_EXECUTE, "LoadedExecutable_Execute", true},
    {TT_SLOT_EXECUTABLE_DESERIALIZEANDLOAD, "Executable_DeserializeAndLoad", false},
    {TT_SLOT_BUFFER_DESTROY, "Buffer_Destroy", true},
    {TT_SLOT_BUFFER_ELEMENTTYPE, "Buffer_ElementType", true},
    {TT_SLOT_BUFFER_DIMENSIONS, "Buffer_Dimensions", true},
    {TT_SLOT_BUFFER_TOHOST, "Buffer_ToHostBuffer", true},
    {TT_SLOT_BUFFER_ISONCPU, "Buffer_IsOnCpu", false},
    {TT_SLOT_BUFFER_READYEVENT, "Buffer_ReadyEvent", true},
    {TT_SLOT_BUFFER_UNSAFEPOINTER, "Buffer_UnsafePointer", false},
};
#define TT__NSLOTS (sizeof(k_slots) / sizeof(k_slots[0]))

const char* tt__pjrt_slot_name(int slot) {
  for (size_t i = 0; i < TT__NSLOTS; i++)
    if (k_slots[i].slot == slot) return k_slots[i].name;
  return "?";
}

/* ---- errors ----------------------------------------------------------------- */
static tt_code_t tt__map_code(int c) {
  switch (c) {
    case TT_ABI_CODE_INVALID_ARGUMENT:
    case TT_ABI_CODE_OUT_OF_RANGE: return TT_INVALID_ARGUMENT;
    case TT_ABI_CODE_NOT_FOUND: return TT_NOT_FOUND;
    case TT_ABI_CODE_UNIMPLEMENTED: return TT_UNIMPLEMENTED;
    case TT_ABI_CODE_FAILED_PRECONDITION: return TT_FAILED_PRECONDITION;
    case TT_ABI_CODE_RESOURCE_EXHAUSTED: return TT_RESOURCE_EXHAUSTED;
    case TT_ABI_CODE_UNAVAILABLE: return TT_UNAVAILABLE;
    default: return TT_INTERNAL;
  }
}

tt_status_t tt__pjrt_status(const tt_abi_api_t* api, int slot, tt_abi_error_t* err) {
  if (!err) return NULL;
  tt_abi_error_message_args_t m = {.struct_size = TT_ABI_SIZE(tt_abi_error_message_args_t, message_size),
                                   .error = err};
  tt_abi_void_slot_fn(api, TT_SLOT_ERROR_MESSAGE)(&m);
  tt_abi_error_getcode_args_t c = {.struct_size = TT_ABI_SIZE(tt_abi_error_getcode_args_t, code),
                                   .error = err};
  tt_abi_error_t* e2 = tt_abi_slot_fn(api, TT_SLOT_ERROR_GETCODE)(&c);
  tt_code_t code = e2 ? TT_INTERNAL : tt__map_code(c.code);
  tt_status_t st = tt_status_make(code, "PJRT %s: %.*s", tt__pjrt_slot_name(slot),
                                  m.message ? (int)m.message_size : 0, m.message ? m.message : "");
  tt_abi_handle_args_t d = {.struct_size = TT_ABI_SIZE(tt_abi_handle_args_t, handle), .handle = err};
  tt_abi_void_fn destroy = tt_abi_void_slot_fn(api, TT_SLOT_ERROR_DESTROY);
  destroy(&d);
  if (e2) { /* an error about reading the code: drop it too */
    d.handle = e2;
    destroy(&d);
  }
  return st;
}

tt_status_t tt__pjrt_call(const tt_abi_api_t* api, int slot, void* args) {
  tt_abi_fn fn = tt_abi_slot_fn(api, slot);
  if (!fn)
    return tt_status_make(TT_UNIMPLEMENTED, "PJRT plugin lacks %s (slot %d)",
                          tt__pjrt_slot_name(slot), slot);
  return tt__pjrt_status(api, slot, fn(args));
}

tt_status_t tt__pjrt_event_finish(const tt_abi_api_t* api, tt_abi_event_t* ev) {
  if (!ev) return NULL;
  tt_abi_handle_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_handle_args_t, handle), .handle = ev};
  tt_status_t st = tt__pjrt_call(api, TT_SLOT_EVENT_AWAIT, &a);
  tt_status_t st2 = tt__pjrt_call(api, TT_SLOT_EVENT_DESTROY, &a);
  if (st) {
    tt_status_free(st2);
    return st;
  }
  return st2;
}

/* ---- loading ---------------------------------------------------------------- */
typedef const tt_abi_api_t* (*tt__get_api_fn)(void);

/* Plugin_Initialize must run once per plugin per process, before any other
 * call; opening the same plugin again (dlopen returns the same library) must
 * not initialize it twice. */
static pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER;
static const tt_abi_api_t* g_initialized[32];
static int g_num_initialized;

static tt_status_t tt__plugin_initialize_once(const tt_abi_api_t* api) {
  tt_status_t st = NULL;
  pthread_mutex_lock(&g_init_mu);
  bool done = false;
  for (int i = 0; i < g_num_initialized; i++) done |= g_initialized[i] == api;
  if (!done) {
    tt_abi_plugin_init_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_plugin_init_args_t, extension_start)};
    st = tt__pjrt_call(api, TT_SLOT_PLUGIN_INITIALIZE, &a);
    if (!st && g_num_initialized < (int)(sizeof(g_initialized) / sizeof(g_initialized[0])))
      g_initialized[g_num_initialized++] = api;
  }
  pthread_mutex_unlock(&g_init_mu);
  return st;
}

/* Checks the version and that every required slot exists and is non-NULL. */
static tt_status_t tt__check_api(const char* path, const tt_abi_api_t* api) {
  if (api->struct_size < sizeof(tt_abi_api_t))
    return tt_status_make(TT_FAILED_PRECONDITION,
                          "PJRT plugin %s: api table of %zu bytes is too small to be a PJRT_Api",
                          path, api->struct_size);
  int major = api->version.major, minor = api->version.minor;
  if (major != 0 || minor < TT_PJRT_MIN_MINOR)
    return tt_status_make(TT_FAILED_PRECONDITION,
                          "PJRT plugin %s has C API version %d.%d; torch_tpu supports version 0.%d "
                          "or newer with major version 0",
                          path, major, minor, TT_PJRT_MIN_MINOR);
  size_t have = (api->struct_size - TT_ABI_SLOT0_OFFSET) / 8;
  for (size_t i = 0; i < TT__NSLOTS; i++) {
    const tt__slot_info_t* s = &k_slots[i];
    if (!s->required) continue;
    if (!tt_abi_has_slot(api, s->slot))
      return tt_status_make(TT_FAILED_PRECONDITION,
                            "PJRT plugin %s (C API version %d.%d) lacks slot %d (%s): its api "
                            "table has only %zu slots",
                            path, major, minor, s->slot, s->name, have);
    if (!tt_abi_slot_fn(api, s->slot))
      return tt_status_make(TT_FAILED_PRECONDITION,
                            "PJRT plugin %s (C API version %d.%d) has a NULL slot %d (%s)", path,
                            major, minor, s->slot, s->name);
  }
  return NULL;
}

/* dlopen + GetPjrtApi + checks + Plugin_Initialize. Never dlclose'd: plugins
 * keep threads and static state that do not survive unloading. */
static tt_status_t tt__load(const char* path, const tt_abi_api_t** out) {
  *out = NULL;
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (!strncmp(base, "libtpu", 6)) setenv("TPU_SKIP_MDS_QUERY", "1", 0);
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    return tt_status_make(TT_NOT_FOUND, "cannot load PJRT plugin %s: %s", path, why ? why : "?");
  }
  void* sym = dlsym(lib, "GetPjrtApi");
  if (!sym)
    return tt_status_make(TT_FAILED_PRECONDITION,
                          "%s does not export GetPjrtApi: it is not a PJRT plugin", path);
  tt__get_api_fn get_api;
  memcpy(&get_api, &sym, sizeof(get_api)); /* object -> function pointer, POSIX-style */
  const tt_abi_api_t* api = get_api();
  if (!api)
    return tt_status_make(TT_FAILED_PRECONDITION, "GetPjrtApi of PJRT plugin %s returned NULL",
                          path);
  TT_RETURN_IF_ERROR(tt__check_api(path, api));
  TT_RETURN_IF_ERROR_CTX(tt__plugin_initialize_once(api), "initializing PJRT plugin %s", path);
  *out = api;
  return NULL;
}

/* ---- info ------------------------------------------------------------------- */
static void tt__copy(char* dst, size_t cap, const char* s, size_t n) {
  if (!s) n = 0;
  if (n >= cap) n = cap - 1;
  if (n) memcpy(dst, s, n);
  dst[n] = 0;
}

static void tt__read_attributes(const tt_abi_api_t* api, tt_pjrt_info_t* info) {
  tt_abi_plugin_attrs_args_t a = {
      .struct_size = TT_ABI_SIZE(tt_abi_plugin_attrs_args_t, num_attributes)};
  tt_status_t st = tt__pjrt_call(api, TT_SLOT_PLUGIN_ATTRIBUTES, &a);
  if (st) { /* optional: absent attributes leave "" */
    tt_status_free(st);
    return;
  }
  for (size_t i = 0; i < a.num_attributes; i++) {
    const tt_abi_named_value_t* nv = &a.attributes[i];
    char* dst = NULL;
    if (nv->name_size == 25 && !strncmp(nv->name, "stablehlo_current_version", 25))
      dst = info->stablehlo_current;
    else if (nv->name_size == 25 && !strncmp(nv->name, "stablehlo_minimum_version", 25))
      dst = info->stablehlo_minimum;
    if (!dst) continue;
    size_t cap = sizeof(info->stablehlo_current), len = 0;
    if (nv->type == TT_ABI_NV_INT64_LIST) {
      for (size_t k = 0; k < nv->value_size && len + 1 < cap; k++)
        len += (size_t)snprintf(dst + len, cap - len, k ? ".%lld" : "%lld",
                                (long long)nv->value.i64_list[k]);
    } else if (nv->type == TT_ABI_NV_STRING) {
      tt__copy(dst, cap, nv->value.s, nv->value_size);
    }
  }
}

static tt_status_t tt__read_info(tt_pjrt_t* p) {
  const tt_abi_api_t* api = p->api;
  tt_pjrt_info_t* info = &p->info;
  tt_abi_string_args_t s = {.struct_size = TT_ABI_SIZE(tt_abi_string_args_t, str_size),
                            .handle = p->client};
  TT_RETURN_IF_ERROR(tt__pjrt_call(api, TT_SLOT_CLIENT_PLATFORMNAME, &s));
  tt__copy(info->platform_name, sizeof(info->platform_name), s.str, s.str_size);
  s.str = NULL, s.str_size = 0;
  tt_status_t st = tt__pjrt_call(api, TT_SLOT_CLIENT_PLATFORMVERSION, &s);
  if (st) tt_status_free(st); /* optional */
  else tt__copy(info->platform_version, sizeof(info->platform_version), s.str, s.str_size);

  tt_abi_client_devices_args_t d = {
      .struct_size = TT_ABI_SIZE(tt_abi_client_devices_args_t, num_devices), .client = p->client};
  TT_RETURN_IF_ERROR(tt__pjrt_call(api, TT_SLOT_CLIENT_ADDRESSABLEDEVICES, &d));
  p->devices = d.devices;
  p->num_devices = d.num_devices;
  info->num_devices = (int)d.num_devices;
  info->num_global_devices = (int)d.num_devices;
  tt_abi_client_devices_args_t g = {
      .struct_size = TT_ABI_SIZE(tt_abi_client_devices_args_t, num_devices), .client = p->client};
  st = tt__pjrt_call(api, TT_SLOT_CLIENT_DEVICES, &g); /* optional */
  if (!st && g.num_devices > d.num_devices) info->num_global_devices = (int)g.num_devices;
  tt_status_free(st);
  tt_abi_process_index_args_t pi = {.struct_size = TT_ABI_SIZE(tt_abi_process_index_args_t, process_index),
                                    .client = p->client};
  st = tt__pjrt_call(api, TT_SLOT_CLIENT_PROCESSINDEX, &pi); /* optional */
  if (!st) info->process_index = pi.process_index;
  tt_status_free(st);

  if (p->num_devices > 0) { /* the kind of device 0, if the plugin tells */
    tt_abi_handle2_args_t g = {.struct_size = TT_ABI_SIZE(tt_abi_handle2_args_t, out),
                               .in = p->devices[0]};
    st = tt__pjrt_call(api, TT_SLOT_DEVICE_GETDESCRIPTION, &g);
    if (!st) {
      tt_abi_string_args_t k = {.struct_size = TT_ABI_SIZE(tt_abi_string_args_t, str_size),
                                .handle = g.out};
      st = tt__pjrt_call(api, TT_SLOT_DEVDESC_KIND, &k);
      if (!st) tt__copy(info->device_kind, sizeof(info->device_kind), k.str, k.str_size);
    }
    tt_status_free(st);
  }
  return NULL;
}

/* ---- client ----------------------------------------------------------------- */
static tt_abi_named_value_t nv_i64(const char* name, int64_t v) {
  return (tt_abi_named_value_t){.struct_size = TT_ABI_SIZE(tt_abi_named_value_t, value_size),
                                .name = name,
                                .name_size = strlen(name),
                                .type = TT_ABI_NV_INT64,
                                .value.i64 = v,
                                .value_size = 1};
}

/* A client across processes: node_id, num_nodes (and visible_devices) with
 * the store's callbacks (the GPU plugin uses them only when all three are
 * given). */
static tt_status_t tt__client_create_multi(tt_pjrt_t* p, const tt_pjrt_options_t* o) {
  tt_abi_named_value_t opts[3] = {nv_i64("node_id", o->node_id), nv_i64("num_nodes", o->num_nodes)};
  size_t n = 2;
  if (o->visible_devices && o->num_visible_devices > 0) {
    opts[n] = nv_i64("visible_devices", 0);
    opts[n].type = TT_ABI_NV_INT64_LIST;
    opts[n].value.i64_list = o->visible_devices;
    opts[n].value_size = (size_t)o->num_visible_devices;
    n++;
  }
  tt_abi_fn get, try_get, put;
  tt__pjrt_kv_callbacks(&get, &try_get, &put);
  tt_abi_client_create_args_t a = {
      .struct_size = TT_ABI_SIZE(tt_abi_client_create_args_t, kv_try_get_user_arg),
      .create_options = opts,
      .num_options = n,
      .kv_get_callback = (void*)get,
      .kv_get_user_arg = p,
      .kv_put_callback = (void*)put,
      .kv_put_user_arg = p,
      .kv_try_get_callback = (void*)try_get,
      .kv_try_get_user_arg = p,
  };
  tt_status_t st = tt__pjrt_call(p->api, TT_SLOT_CLIENT_CREATE, &a);
  if (st)
    return tt_status_annotate(st, "a client across %d processes (node_id %d)", o->num_nodes, o->node_id);
  p->client = a.client;
  return NULL;
}

static tt_status_t tt__client_create(const tt_abi_api_t* api, int cpu_device_count,
                                     tt_abi_client_t** out) {
  tt_abi_named_value_t opt = nv_i64("cpu_device_count", cpu_device_count);
  tt_abi_client_create_args_t a = {
      .struct_size = TT_ABI_SIZE(tt_abi_client_create_args_t, kv_try_get_user_arg)};
  tt_status_t first = NULL;
  if (cpu_device_count > 0) {
    /* Only CPU plugins know this option; others may refuse it, so on failure
     * retry without (and report the retry's error if that fails too). */
    a.create_options = &opt;
    a.num_options = 1;
    first = tt__pjrt_call(api, TT_SLOT_CLIENT_CREATE, &a);
    if (!first) {
      *out = a.client;
      return NULL;
    }
    a.create_options = NULL;
    a.num_options = 0;
    a.client = NULL;
  }
  tt_status_t st = tt__pjrt_call(api, TT_SLOT_CLIENT_CREATE, &a);
  if (st && first) /* report both tries */
    st = tt_status_annotate(st, "with cpu_device_count=%d: %s; without options", cpu_device_count,
                            tt_status_message(first));
  tt_status_free(first);
  *out = st ? NULL : a.client;
  return st;
}

tt_status_t tt_pjrt_open(const char* path, int cpu_device_count, tt_pjrt_t** out) {
  tt_pjrt_options_t o;
  memset(&o, 0, sizeof(o));
  o.cpu_device_count = cpu_device_count;
  return tt_pjrt_open_with(path, &o, out);
}

tt_status_t tt_pjrt_open_with(const char* path, const tt_pjrt_options_t* o, tt_pjrt_t** out) {
  *out = NULL;
  if (!path || !*path) return tt_status_make(TT_INVALID_ARGUMENT, "no PJRT plugin path given");
  bool multi = o->num_nodes > 1;
  if (multi && (o->node_id < 0 || o->node_id >= o->num_nodes || !o->kv.get || !o->kv.try_get || !o->kv.put))
    return tt_status_make(TT_INVALID_ARGUMENT, "a client across %d processes needs node_id in [0, %d) and a "
                          "key-value store (get, try_get, put); got node_id %d", o->num_nodes, o->num_nodes,
                          o->node_id);
  const tt_abi_api_t* api = NULL;
  tt__pjrt_log_capture_t log;
  tt__pjrt_log_capture_begin(&log);
  tt_status_t st = tt__load(path, &api);
  if (st) {
    tt__pjrt_log_capture_end(&log, true);
    return st;
  }
  tt_pjrt_t* p = calloc(1, sizeof(*p));
  if (!p) {
    tt__pjrt_log_capture_end(&log, true);
    return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of memory");
  }
  p->api = api;
  if (multi) p->kv = o->kv;
  tt__copy(p->info.plugin_path, sizeof(p->info.plugin_path), path, strlen(path));
  p->info.api_major = api->version.major;
  p->info.api_minor = api->version.minor;
  tt__read_attributes(api, &p->info);
  st = multi ? tt__client_create_multi(p, o) : tt__client_create(api, o->cpu_device_count, &p->client);
  tt__pjrt_log_capture_end(&log, st != NULL);
  if (st) goto fail;
  st = tt__read_info(p);
  if (st) goto fail;
  *out = p;
  return NULL;
fail:
  tt_pjrt_close(p);
  return tt_status_annotate(st, "creating the PJRT client of %s", path);
}

void tt_pjrt_close(tt_pjrt_t* p) {
  if (!p) return;
  if (p->client) {
    tt_abi_handle_args_t a = {.struct_size = TT_ABI_SIZE(tt_abi_handle_args_t, handle),
                              .handle = p->client};
    tt_status_free(tt__pjrt_call(p->api, TT_SLOT_CLIENT_DESTROY, &a));
  }
  free(p);
}

const tt_pjrt_info_t* tt_pjrt_get_info(const tt_pjrt_t* p) { return p ? &p->info : NULL; }
