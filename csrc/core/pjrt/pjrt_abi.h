/* Our own declarations of the subset of the PJRT C ABI that torch_tpu uses,
 * written from the measured layout (../../../../shared/pjrt-facts.md) at API
 * version 0.115. Internal to the pjrt layer: nothing above it includes this.
 *
 * Conventions of the ABI (x86-64/aarch64, LP64):
 * - every argument struct starts with `size_t struct_size; void* extension_start`;
 *   the caller fills struct_size; plugins refuse a struct smaller than the one
 *   they were built with and ignore the tail of a larger one, so we declare the
 *   newest layout (0.115) and pass TT_ABI_SIZE(...) of it;
 * - functions take a pointer to their argument struct and return a
 *   tt_abi_error_t* (NULL = success), except Error_Destroy / Error_Message
 *   which return nothing;
 * - the api table holds a header (40 bytes) followed by function pointers,
 *   slot i at byte offset 40 + 8*i; api->struct_size tells how many slots the
 *   plugin has. We read slots by index (tt_abi_slot_t), never by struct field.
 *
 * Handles are opaque; all of them are owned as documented in tt_pjrt.h. */
#ifndef TT_PJRT_ABI_H_
#define TT_PJRT_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Size of an argument struct as PJRT counts it: up to the end of its last
 * field (no trailing padding). */
#define TT_ABI_SIZE(type, last) (offsetof(type, last) + sizeof(((type*)0)->last))
#define TT_ABI_CHECK(type, last, size) \
  _Static_assert(TT_ABI_SIZE(type, last) == (size), #type " size")
#define TT_ABI_AT(type, field, off) \
  _Static_assert(offsetof(type, field) == (off), #type "." #field " offset")

/* ---- opaque handles ------------------------------------------------------- */
typedef struct tt_abi_error tt_abi_error_t;
typedef struct tt_abi_event tt_abi_event_t;
typedef struct tt_abi_client tt_abi_client_t;
typedef struct tt_abi_device tt_abi_device_t;
typedef struct tt_abi_devdesc tt_abi_devdesc_t;
typedef struct tt_abi_memory tt_abi_memory_t;
typedef struct tt_abi_executable tt_abi_executable_t;      /* unloaded */
typedef struct tt_abi_loaded_exec tt_abi_loaded_exec_t;    /* loaded */
typedef struct tt_abi_buffer tt_abi_buffer_t;

/* ---- the api table -------------------------------------------------------- */
typedef struct tt_abi_version {
  size_t struct_size;
  void* extension_start;
  int major;
  int minor;
} tt_abi_version_t;

typedef struct tt_abi_api {
  size_t struct_size; /* bytes: header + 8 per slot the plugin knows */
  void* extension_start;
  tt_abi_version_t version;
  /* function pointers follow: read with tt_abi_slot_fn */
} tt_abi_api_t;
TT_ABI_AT(tt_abi_api_t, version, 16);
TT_ABI_AT(tt_abi_version_t, major, 16);
TT_ABI_AT(tt_abi_version_t, minor, 20);
_Static_assert(sizeof(tt_abi_api_t) == 40, "api header");

#define TT_ABI_SLOT0_OFFSET 40
/* Slot numbers (index of the function pointer after the header). */
typedef enum tt_abi_slot {
  TT_SLOT_ERROR_DESTROY = 0,
  TT_SLOT_ERROR_MESSAGE = 1,
  TT_SLOT_ERROR_GETCODE = 2,
  TT_SLOT_PLUGIN_INITIALIZE = 3,
  TT_SLOT_PLUGIN_ATTRIBUTES = 4,
  TT_SLOT_EVENT_DESTROY = 5,
  TT_SLOT_EVENT_ISREADY = 6,
  TT_SLOT_EVENT_AWAIT = 8,
  TT_SLOT_CLIENT_CREATE = 10,
  TT_SLOT_CLIENT_DESTROY = 11,
  TT_SLOT_CLIENT_PLATFORMNAME = 12,
  TT_SLOT_CLIENT_PROCESSINDEX = 13,
  TT_SLOT_CLIENT_PLATFORMVERSION = 14,
  TT_SLOT_CLIENT_DEVICES = 15,
  TT_SLOT_CLIENT_ADDRESSABLEDEVICES = 16,
  TT_SLOT_CLIENT_COMPILE = 20,
  TT_SLOT_CLIENT_BUFFERFROMHOST = 22,
  TT_SLOT_DEVDESC_ID = 23,
  TT_SLOT_DEVDESC_KIND = 26,
  TT_SLOT_DEVICE_GETDESCRIPTION = 29,
  TT_SLOT_DEVICE_MEMORYSTATS = 34,
  TT_SLOT_EXECUTABLE_DESTROY = 40,
  TT_SLOT_EXECUTABLE_NUMOUTPUTS = 44,
  TT_SLOT_EXECUTABLE_SERIALIZE = 49,
  TT_SLOT_LOADEDEXEC_DESTROY = 50,
  TT_SLOT_LOADEDEXEC_GETEXECUTABLE = 51,
  TT_SLOT_LOADEDEXEC_ADDRESSABLEDEVICES = 52,
  TT_SLOT_LOADEDEXEC_EXECUTE = 55,
  TT_SLOT_EXECUTABLE_DESERIALIZEANDLOAD = 56,
  TT_SLOT_BUFFER_DESTROY = 58,
  TT_SLOT_BUFFER_ELEMENTTYPE = 59,
  TT_SLOT_BUFFER_DIMENSIONS = 60,
  TT_SLOT_BUFFER_TOHOST = 70,
  TT_SLOT_BUFFER_ISONCPU = 71,
  TT_SLOT_BUFFER_READYEVENT = 72,
  TT_SLOT_BUFFER_UNSAFEPOINTER = 73,
} tt_abi_slot_t;

/* The generic shape of a slot: PJRT_Error* fn(Args*). Error_Destroy and
 * Error_Message return void; we call them through tt_abi_void_fn. */
typedef tt_abi_error_t* (*tt_abi_fn)(void* args);
typedef void (*tt_abi_void_fn)(void* args);

/* Does the plugin's table have slot `s`? (it may still be NULL) */
static inline bool tt_abi_has_slot(const tt_abi_api_t* api, int s) {
  return api->struct_size >= (size_t)TT_ABI_SLOT0_OFFSET + 8u * ((size_t)s + 1u);
}
/* The function in slot `s`, or NULL if the table is too short or the slot empty. */
static inline tt_abi_fn tt_abi_slot_fn(const tt_abi_api_t* api, int s) {
  if (!tt_abi_has_slot(api, s)) return NULL;
  const tt_abi_fn* slots = (const tt_abi_fn*)((const char*)api + TT_ABI_SLOT0_OFFSET);
  return slots[s];
}
/* Slots 0 and 1 (Error_Destroy, Error_Message) return void. The cast goes
 * through void(*)(void), C's generic function pointer type. */
static inline tt_abi_void_fn tt_abi_void_slot_fn(const tt_abi_api_t* api, int s) {
  return (tt_abi_void_fn)(void (*)(void))tt_abi_slot_fn(api, s);
}

/* ---- element types (PJRT_Buffer_Type) ------------------------------------- */
typedef enum tt_abi_elem {
  TT_ABI_INVALID = 0,
  TT_ABI_PRED = 1,
  TT_ABI_S8 = 2,
  TT_ABI_S16 = 3,
  TT_ABI_S32 = 4,
  TT_ABI_S64 = 5,
  TT_ABI_U8 = 6,
  TT_ABI_U16 = 7,
  TT_ABI_U32 = 8,
  TT_ABI_U64 = 9,
  TT_ABI_F16 = 10,
  TT_ABI_F32 = 11,
  TT_ABI_F64 = 12,
  TT_ABI_BF16 = 13,
  TT_ABI_C64 = 14,
  TT_ABI_C128 = 15,
  TT_ABI_F8E5M2 = 16,
  TT_ABI_F8E4M3FN = 17,
  TT_ABI_F8E5M2FNUZ = 19,
  TT_ABI_F8E4M3FNUZ = 20,
} tt_abi_elem_t;

/* Error codes follow absl (0 OK, 3 INVALID_ARGUMENT, 5 NOT_FOUND, ...). */
enum {
  TT_ABI_CODE_INVALID_ARGUMENT = 3,
  TT_ABI_CODE_NOT_FOUND = 5,
  TT_ABI_CODE_RESOURCE_EXHAUSTED = 8,
  TT_ABI_CODE_FAILED_PRECONDITION = 9,
  TT_ABI_CODE_OUT_OF_RANGE = 11,
  TT_ABI_CODE_UNIMPLEMENTED = 12,
  TT_ABI_CODE_INTERNAL = 13,
  TT_ABI_CODE_UNAVAILABLE = 14,
};

/* host_buffer_semantics of BufferFromHostBuffer: 0 = the data is copied
 * before the call returns. */
enum { TT_ABI_HOST_IMMUTABLE_ONLY_DURING_CALL = 0 };

/* ---- named values --------------------------------------------------------- */
typedef enum tt_abi_nv_type {
  TT_ABI_NV_STRING = 0,
  TT_ABI_NV_INT64 = 1,
  TT_ABI_NV_INT64_LIST = 2,
  TT_ABI_NV_FLOAT = 3,
  TT_ABI_NV_BOOL = 4,
} tt_abi_nv_type_t;

typedef struct tt_abi_named_value {
  size_t struct_size;
  void* extension_start;
  const char* name;
  size_t name_size;
  int type; /* tt_abi_nv_type_t */
  union {
    const char* s;
    int64_t i64;
    const int64_t* i64_list;
    float f;
    bool b;
  } value;
  size_t value_size; /* elements for strings/lists, 1 for scalars */
} tt_abi_named_value_t;
TT_ABI_AT(tt_abi_named_value_t, name, 16);
TT_ABI_AT(tt_abi_named_value_t, name_size, 24);
TT_ABI_AT(tt_abi_named_value_t, type, 32);
TT_ABI_AT(tt_abi_named_value_t, value, 40);
TT_ABI_CHECK(tt_abi_named_value_t, value_size, 56);

/* ---- argument structs ----------------------------------------------------- */
#define TT_ABI_HEAD \
  size_t struct_size; \
  void* extension_start

/* Error_Destroy, Event_Destroy, Event_Await, Buffer_Destroy, Client_Destroy,
 * Executable_Destroy, LoadedExecutable_Destroy: one handle. */
typedef struct tt_abi_handle_args {
  TT_ABI_HEAD;
  void* handle;
} tt_abi_handle_args_t;
TT_ABI_AT(tt_abi_handle_args_t, handle, 16);
TT_ABI_CHECK(tt_abi_handle_args_t, handle, 24);

typedef struct tt_abi_error_message_args {
  TT_ABI_HEAD;
  const tt_abi_error_t* error;
  const char* message; /* out, lives as long as the error */
  size_t message_size; /* out */
} tt_abi_error_message_args_t;
TT_ABI_AT(tt_abi_error_message_args_t, error, 16);
TT_ABI_AT(tt_abi_error_message_args_t, message, 24);
TT_ABI_CHECK(tt_abi_error_message_args_t, message_size, 40);

typedef struct tt_abi_error_getcode_args {
  TT_ABI_HEAD;
  const tt_abi_error_t* error;
  int code; /* out */
} tt_abi_error_getcode_args_t;
TT_ABI_AT(tt_abi_error_getcode_args_t, code, 24);
TT_ABI_CHECK(tt_abi_error_getcode_args_t, code, 28);

typedef struct tt_abi_plugin_init_args {
  TT_ABI_HEAD;
} tt_abi_plugin_init_args_t;
TT_ABI_CHECK(tt_abi_plugin_init_args_t, extension_start, 16);

typedef struct tt_abi_plugin_attrs_args {
  TT_ABI_HEAD;
  const tt_abi_named_value_t* attributes; /* out, lives for the process */
  size_t num_attributes;                  /* out */
} tt_abi_plugin_attrs_args_t;
TT_ABI_AT(tt_abi_plugin_attrs_args_t, attributes, 16);
TT_ABI_AT(tt_abi_plugin_attrs_args_t, num_attributes, 24);
/* pjrt-facts.md lists 40 bytes, but its own offsets end at 32; both plugins
 * (0.81 and 0.115) accept 32 and fill both fields. */
TT_ABI_CHECK(tt_abi_plugin_attrs_args_t, num_attributes, 32);

/* Event_IsReady (an event in), Buffer_IsOnCpu (a buffer in): a handle in, a
 * bool out. */
typedef struct tt_abi_handle_bool_args {
  TT_ABI_HEAD;
  void* handle;
  bool value; /* out */
} tt_abi_handle_bool_args_t;
TT_ABI_AT(tt_abi_handle_bool_args_t, value, 24);
TT_ABI_CHECK(tt_abi_handle_bool_args_t, value, 25);

typedef struct tt_abi_client_create_args {
  TT_ABI_HEAD;
  const tt_abi_named_value_t* create_options;
  size_t num_options;
  void* kv_get_callback; /* key-value store callbacks (tt_abi_kv_*_args_t), NULL */
                         /* unless the client spans processes */
  void* kv_get_user_arg;
  void* kv_put_callback;
  void* kv_put_user_arg;
  tt_abi_client_t* client; /* out */
  void* kv_try_get_callback;
  void* kv_try_get_user_arg;
} tt_abi_client_create_args_t;
TT_ABI_AT(tt_abi_client_create_args_t, create_options, 16);
TT_ABI_AT(tt_abi_client_create_args_t, num_options, 24);
TT_ABI_AT(tt_abi_client_create_args_t, kv_get_callback, 32);
TT_ABI_AT(tt_abi_client_create_args_t, kv_put_user_arg, 56);
TT_ABI_AT(tt_abi_client_create_args_t, client, 64);
TT_ABI_AT(tt_abi_client_create_args_t, kv_try_get_callback, 72);
TT_ABI_CHECK(tt_abi_client_create_args_t, kv_try_get_user_arg, 88);

/* Key-value store callbacks of Client_Create (a client across processes
 * finds the others through them). The plugin fills key, key_size,
 * timeout_in_ms, callback_error and user_arg only (struct_size and
 * extension_start are not set: never read them); the callback fills value,
 * value_size and a deleter the plugin calls after copying the value. Errors
 * are made with (*callback_error)(code, message, size); try_get reports an
 * absent key as NOT_FOUND. */
typedef tt_abi_error_t* (*tt_abi_callback_error_fn)(int code, const char* message, size_t message_size);
typedef void (*tt_abi_kv_deleter_fn)(char* value);
typedef struct tt_abi_kv_get_args {
  TT_ABI_HEAD;
  const char* key;
  size_t key_size;
  int timeout_in_ms;
  tt_abi_callback_error_fn* callback_error;
  void* user_arg;
  char* value;                                 /* out */
  size_t value_size;                           /* out */
  tt_abi_kv_deleter_fn value_deleter_callback; /* out */
} tt_abi_kv_get_args_t;
TT_ABI_AT(tt_abi_kv_get_args_t, timeout_in_ms, 32);
TT_ABI_AT(tt_abi_kv_get_args_t, callback_error, 40);
TT_ABI_AT(tt_abi_kv_get_args_t, value, 56);
TT_ABI_CHECK(tt_abi_kv_get_args_t, value_deleter_callback, 80);
typedef struct tt_abi_kv_try_get_args {
  TT_ABI_HEAD;
  const char* key;
  size_t key_size;
  tt_abi_callback_error_fn* callback_error;
  void* user_arg;
  char* value;                                 /* out */
  size_t value_size;                           /* out */
  tt_abi_kv_deleter_fn value_deleter_callback; /* out */
} tt_abi_kv_try_get_args_t;
TT_ABI_AT(tt_abi_kv_try_get_args_t, callback_error, 32);
TT_ABI_AT(tt_abi_kv_try_get_args_t, value, 48);
TT_ABI_CHECK(tt_abi_kv_try_get_args_t, value_deleter_callback, 72);
typedef struct tt_abi_kv_put_args {
  TT_ABI_HEAD;
  const char* key;
  size_t key_size;
  const char* value;
  size_t value_size;
  tt_abi_callback_error_fn* callback_error;
  void* user_arg;
} tt_abi_kv_put_args_t;
TT_ABI_AT(tt_abi_kv_put_args_t, value, 32);
TT_ABI_CHECK(tt_abi_kv_put_args_t, user_arg, 64);

/* Client_ProcessIndex: a client in, its process index out. */
typedef struct tt_abi_process_index_args {
  TT_ABI_HEAD;
  tt_abi_client_t* client;
  int process_index; /* out */
} tt_abi_process_index_args_t;
TT_ABI_CHECK(tt_abi_process_index_args_t, process_index, 28);

/* Client_PlatformName, Client_PlatformVersion, DeviceDescription_Kind:
 * a handle in, a string out. */
typedef struct tt_abi_string_args {
  TT_ABI_HEAD;
  void* handle;
  const char* str; /* out, owned by the handle */
  size_t str_size; /* out */
} tt_abi_string_args_t;
TT_ABI_AT(tt_abi_string_args_t, handle, 16);
TT_ABI_AT(tt_abi_string_args_t, str, 24);
TT_ABI_CHECK(tt_abi_string_args_t, str_size, 40);

typedef struct tt_abi_client_devices_args {
  TT_ABI_HEAD;
  tt_abi_client_t* client;
  tt_abi_device_t* const* devices; /* out, owned by the client */
  size_t num_devices;              /* out */
} tt_abi_client_devices_args_t;
TT_ABI_AT(tt_abi_client_devices_args_t, client, 16);
TT_ABI_AT(tt_abi_client_devices_args_t, devices, 24);
TT_ABI_CHECK(tt_abi_client_devices_args_t, num_devices, 40);

/* DeviceDescription_Id: a description in, the device's global id out. */
typedef struct tt_abi_devdesc_id_args {
  TT_ABI_HEAD;
  void* device_description;
  int id; /* out */
} tt_abi_devdesc_id_args_t;
TT_ABI_AT(tt_abi_devdesc_id_args_t, id, 24);
TT_ABI_CHECK(tt_abi_devdesc_id_args_t, id, 28);

/* LoadedExecutable_AddressableDevices: the devices of this process that a
 * program compiled for a device assignment runs on, in execution order. */
typedef struct tt_abi_exec_devices_args {
  TT_ABI_HEAD;
  tt_abi_loaded_exec_t* executable;
  tt_abi_device_t* const* devices; /* out, owned by the executable */
  size_t num_devices;              /* out */
} tt_abi_exec_devices_args_t;
TT_ABI_AT(tt_abi_exec_devices_args_t, devices, 24);
TT_ABI_CHECK(tt_abi_exec_devices_args_t, num_devices, 40);

/* Device_GetDescription, Buffer_ReadyEvent, LoadedExecutable_GetExecutable:
 * a handle in, a handle out; Buffer_UnsafePointer: a buffer in, its address
 * (uintptr_t) out. Executable_NumOutputs: a handle in, a size out. */
typedef struct tt_abi_handle2_args {
  TT_ABI_HEAD;
  void* in;
  void* out; /* out */
} tt_abi_handle2_args_t;
TT_ABI_AT(tt_abi_handle2_args_t, in, 16);
TT_ABI_CHECK(tt_abi_handle2_args_t, out, 32);

typedef struct tt_abi_numoutputs_args {
  TT_ABI_HEAD;
  tt_abi_executable_t* executable;
  size_t num_outputs; /* out */
} tt_abi_numoutputs_args_t;
TT_ABI_AT(tt_abi_numoutputs_args_t, num_outputs, 24);
TT_ABI_CHECK(tt_abi_numoutputs_args_t, num_outputs, 32);

typedef struct tt_abi_program {
  TT_ABI_HEAD;
  const char* code;
  size_t code_size;
  const char* format; /* "mlir" or "hlo" */
  size_t format_size;
} tt_abi_program_t;
TT_ABI_AT(tt_abi_program_t, code, 16);
TT_ABI_AT(tt_abi_program_t, code_size, 24);
TT_ABI_AT(tt_abi_program_t, format, 32);
TT_ABI_CHECK(tt_abi_program_t, format_size, 48);

typedef struct tt_abi_compile_args {
  TT_ABI_HEAD;
  tt_abi_client_t* client;
  const tt_abi_program_t* program;
  const char* compile_options; /* serialized xla.CompileOptionsProto */
  size_t compile_options_size;
  tt_abi_loaded_exec_t* executable; /* out */
} tt_abi_compile_args_t;
TT_ABI_AT(tt_abi_compile_args_t, client, 16);
TT_ABI_AT(tt_abi_compile_args_t, program, 24);
TT_ABI_AT(tt_abi_compile_args_t, compile_options, 32);
TT_ABI_AT(tt_abi_compile_args_t, compile_options_size, 40);
TT_ABI_CHECK(tt_abi_compile_args_t, executable, 56);

typedef struct tt_abi_from_host_args {
  TT_ABI_HEAD;
  tt_abi_client_t* client;
  const void* data;
  int type; /* tt_abi_elem_t */
  const int64_t* dims;
  size_t num_dims;
  const int64_t* byte_strides; /* NULL: dense row-major */
  size_t num_byte_strides;
  int host_buffer_semantics;
  tt_abi_device_t* device;
  tt_abi_memory_t* memory;         /* NULL: the device's default memory */
  void* device_layout;             /* NULL: the default layout */
  tt_abi_event_t* done_with_host;  /* out */
  tt_abi_buffer_t* buffer;         /* out */
} tt_abi_from_host_args_t;
TT_ABI_AT(tt_abi_from_host_args_t, client, 16);
TT_ABI_AT(tt_abi_from_host_args_t, data, 24);
TT_ABI_AT(tt_abi_from_host_args_t, type, 32);
TT_ABI_AT(tt_abi_from_host_args_t, dims, 40);
TT_ABI_AT(tt_abi_from_host_args_t, num_dims, 48);
TT_ABI_AT(tt_abi_from_host_args_t, byte_strides, 56);
TT_ABI_AT(tt_abi_from_host_args_t, num_byte_strides, 64);
TT_ABI_AT(tt_abi_from_host_args_t, host_buffer_semantics, 72);
TT_ABI_AT(tt_abi_from_host_args_t, device, 80);
TT_ABI_AT(tt_abi_from_host_args_t, memory, 88);
TT_ABI_AT(tt_abi_from_host_args_t, device_layout, 96);
TT_ABI_AT(tt_abi_from_host_args_t, done_with_host, 104);
TT_ABI_CHECK(tt_abi_from_host_args_t, buffer, 120);

/* ExecuteOptions: all fields zero is what we want (no callbacks, launch id 0,
 * every input donatable only if the program says so). Only its size matters:
 * 144 bytes at 0.115 (112 at 0.81; larger is accepted). */
typedef struct tt_abi_execute_options {
  TT_ABI_HEAD;
  unsigned char zero[128];
} tt_abi_execute_options_t;
_Static_assert(sizeof(tt_abi_execute_options_t) == 144, "ExecuteOptions size");

typedef struct tt_abi_execute_args {
  TT_ABI_HEAD;
  tt_abi_loaded_exec_t* executable;
  const tt_abi_execute_options_t* options;
  tt_abi_buffer_t* const* const* argument_lists; /* [num_devices][num_args] */
  size_t num_devices;
  size_t num_args;
  tt_abi_buffer_t** const* output_lists;  /* [num_devices][num_outputs], caller-allocated */
  tt_abi_event_t** device_complete_events; /* NULL: none requested */
  tt_abi_device_t* execute_device;         /* non-NULL: run a portable executable there */
} tt_abi_execute_args_t;
TT_ABI_AT(tt_abi_execute_args_t, executable, 16);
TT_ABI_AT(tt_abi_execute_args_t, options, 24);
TT_ABI_AT(tt_abi_execute_args_t, argument_lists, 32);
TT_ABI_AT(tt_abi_execute_args_t, num_devices, 40);
TT_ABI_AT(tt_abi_execute_args_t, num_args, 48);
TT_ABI_AT(tt_abi_execute_args_t, output_lists, 56);
TT_ABI_AT(tt_abi_execute_args_t, device_complete_events, 64);
TT_ABI_CHECK(tt_abi_execute_args_t, execute_device, 80);

typedef struct tt_abi_to_host_args {
  TT_ABI_HEAD;
  tt_abi_buffer_t* src;
  void* host_layout; /* NULL: dense row-major */
  void* dst;         /* NULL: only report dst_size */
  size_t dst_size;
  tt_abi_event_t* event; /* out */
} tt_abi_to_host_args_t;
TT_ABI_AT(tt_abi_to_host_args_t, src, 16);
TT_ABI_AT(tt_abi_to_host_args_t, host_layout, 24);
TT_ABI_AT(tt_abi_to_host_args_t, dst, 32);
TT_ABI_AT(tt_abi_to_host_args_t, dst_size, 40);
TT_ABI_CHECK(tt_abi_to_host_args_t, event, 56);

typedef struct tt_abi_elemtype_args {
  TT_ABI_HEAD;
  tt_abi_buffer_t* buffer;
  int type; /* out, tt_abi_elem_t */
} tt_abi_elemtype_args_t;
TT_ABI_AT(tt_abi_elemtype_args_t, type, 24);
TT_ABI_CHECK(tt_abi_elemtype_args_t, type, 28);

typedef struct tt_abi_dims_args {
  TT_ABI_HEAD;
  tt_abi_buffer_t* buffer;
  const int64_t* dims; /* out, owned by the buffer */
  size_t num_dims;     /* out */
} tt_abi_dims_args_t;
TT_ABI_AT(tt_abi_dims_args_t, dims, 24);
TT_ABI_CHECK(tt_abi_dims_args_t, num_dims, 40);

/* Device_MemoryStats: every field after `device` is an output; a value
 * counts only where its _is_set flag is true (bytes_in_use has none). The
 * CPU plugins do not implement the slot. */
typedef struct tt_abi_memory_stats_args {
  TT_ABI_HEAD;
  tt_abi_device_t* device;
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  bool peak_bytes_in_use_is_set;
  int64_t num_allocs;
  bool num_allocs_is_set;
  int64_t largest_alloc_size;
  bool largest_alloc_size_is_set;
  int64_t bytes_limit; /* the most bytes the user may allocate */
  bool bytes_limit_is_set;
  int64_t bytes_reserved;
  bool bytes_reserved_is_set;
  int64_t peak_bytes_reserved;
  bool peak_bytes_reserved_is_set;
  int64_t bytes_reservable_limit;
  bool bytes_reservable_limit_is_set;
  int64_t largest_free_block_bytes;
  bool largest_free_block_bytes_is_set;
  int64_t pool_bytes;
  bool pool_bytes_is_set;
  int64_t peak_pool_bytes;
  bool peak_pool_bytes_is_set;
} tt_abi_memory_stats_args_t;
TT_ABI_AT(tt_abi_memory_stats_args_t, device, 16);
TT_ABI_AT(tt_abi_memory_stats_args_t, bytes_in_use, 24);
TT_ABI_AT(tt_abi_memory_stats_args_t, bytes_limit, 80);
TT_ABI_AT(tt_abi_memory_stats_args_t, bytes_limit_is_set, 88);
TT_ABI_CHECK(tt_abi_memory_stats_args_t, peak_pool_bytes_is_set, 185);

/* Executable_Serialize: the bytes live until the plugin's deleter is called
 * on `serialized` (exactly once). */
typedef struct tt_abi_serialized tt_abi_serialized_t;
typedef struct tt_abi_serialize_args {
  TT_ABI_HEAD;
  const tt_abi_executable_t* executable;
  const char* bytes;                            /* out, backed by `serialized` */
  size_t bytes_size;                            /* out */
  tt_abi_serialized_t* serialized;              /* out, owned: free with `deleter` */
  void (*deleter)(tt_abi_serialized_t* serialized); /* out */
} tt_abi_serialize_args_t;
TT_ABI_AT(tt_abi_serialize_args_t, executable, 16);
TT_ABI_AT(tt_abi_serialize_args_t, bytes, 24);
TT_ABI_AT(tt_abi_serialize_args_t, bytes_size, 32);
TT_ABI_AT(tt_abi_serialize_args_t, serialized, 40);
TT_ABI_CHECK(tt_abi_serialize_args_t, deleter, 56);

/* Executable_DeserializeAndLoad: bytes from Executable_Serialize of the same
 * plugin build. override_options (API >= 0.71): a serialized
 * xla.CompileOptionsProto replacing the one stored in the bytes, NULL: keep. */
typedef struct tt_abi_deserialize_args {
  TT_ABI_HEAD;
  tt_abi_client_t* client;
  const char* bytes;
  size_t bytes_size;
  tt_abi_loaded_exec_t* executable; /* out */
  const char* override_options;
  size_t override_options_size;
} tt_abi_deserialize_args_t;
TT_ABI_AT(tt_abi_deserialize_args_t, client, 16);
TT_ABI_AT(tt_abi_deserialize_args_t, bytes, 24);
TT_ABI_AT(tt_abi_deserialize_args_t, bytes_size, 32);
TT_ABI_AT(tt_abi_deserialize_args_t, executable, 40);
TT_ABI_AT(tt_abi_deserialize_args_t, override_options, 48);
TT_ABI_CHECK(tt_abi_deserialize_args_t, override_options_size, 64);

#undef TT_ABI_HEAD
#endif /* TT_PJRT_ABI_H_ */
