/* Executables to bytes and back (the persistent compilation cache, DESIGN
 * §7), and the identity of a plugin build for its keys. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "pjrt_internal.h"

static const int k_serialize_slots[] = {
    TT_SLOT_LOADEDEXEC_GETEXECUTABLE, TT_SLOT_EXECUTABLE_SERIALIZE, TT_SLOT_EXECUTABLE_DESTROY,
    TT_SLOT_EXECUTABLE_DESERIALIZEANDLOAD, TT_SLOT_LOADEDEXEC_DESTROY};

bool tt_pjrt_can_serialize(tt_pjrt_t* p) {
  for (size_t i = 0; i < sizeof(k_serialize_slots) / sizeof(k_serialize_slots[0]); i++)
    if (!tt_abi_slot_fn(p->api, k_serialize_slots[i])) return false;
  return true;
}

static tt_status_t tt__unsupported(tt_pjrt_t* p) {
  return tt_status_make(TT_UNIMPLEMENTED,
                        "PJRT plugin %s (C API %d.%d) cannot serialize executables (it lacks "
                        "Executable_Serialize or Executable_DeserializeAndLoad)",
                        p->info.plugin_path, p->info.api_major, p->info.api_minor);
}

tt_status_t tt_pjrt_exec_serialize(tt_pjrt_t* p, tt_pjrt_exec_t* e, void** bytes, size_t* len) {
  *bytes = NULL;
  *len = 0;
  if (!tt_pjrt_can_serialize(p)) return tt__unsupported(p);
  /* The unloaded view of the executable: owned, destroyed below. */
  tt_abi_handle2_args_t g = {.struct_size = TT_ABI_SIZE(tt_abi_handle2_args_t, out),
                             .in = e->loaded};
  TT_RETURN_IF_ERROR(tt__pjrt_call(p->api, TT_SLOT_LOADEDEXEC_GETEXECUTABLE, &g));
  tt_abi_serialize_args_t s = {.struct_size = TT_ABI_SIZE(tt_abi_serialize_args_t, deleter),
                               .executable = g.out};
  tt_status_t st = tt__pjrt_call(p->api, TT_SLOT_EXECUTABLE_SERIALIZE, &s);
  if (!st) {
    *bytes = malloc(s.bytes_size ? s.bytes_size : 1);
    if (!*bytes)
      st = tt_status_make(TT_RESOURCE_EXHAUSTED, "out of memory (%zu bytes)", s.bytes_size);
    else if (s.bytes_size) memcpy(*bytes, s.bytes, s.bytes_size);
    *len = *bytes ? s.bytes_size : 0;
  }
  if (s.serialized && s.deleter) s.deleter(s.serialized);
  tt_abi_handle_args_t d = {.struct_size = TT_ABI_SIZE(tt_abi_handle_args_t, handle), .handle = g.out};
  tt_status_t st2 = tt__pjrt_call(p->api, TT_SLOT_EXECUTABLE_DESTROY, &d);
  if (st || st2) { /* the first error wins; no half result */
    free(*bytes);
    *bytes = NULL;
    *len = 0;
  }
  if (st) {
    tt_status_free(st2);
    return tt_status_annotate(st, "serializing an executable");
  }
  return st2;
}

tt_status_t tt_pjrt_exec_deserialize(tt_pjrt_t* p, const void* bytes, size_t len,
                                     tt_pjrt_exec_t** out) {
  *out = NULL;
  if (!tt_pjrt_can_serialize(p)) return tt__unsupported(p);
  /* No override_options: the bytes hold the options they were compiled with,
   * portability included (both CPU plugins run them on any device). */
  tt_abi_deserialize_args_t a = {
      .struct_size = TT_ABI_SIZE(tt_abi_deserialize_args_t, override_options_size),
      .client = p->client,
      .bytes = bytes,
      .bytes_size = len,
  };
  TT_RETURN_IF_ERROR_CTX(tt__pjrt_call(p->api, TT_SLOT_EXECUTABLE_DESERIALIZEANDLOAD, &a),
                         "loading a serialized executable (%zu bytes)", len);
  if (!a.executable)
    return tt_status_make(TT_INTERNAL, "PJRT Executable_DeserializeAndLoad returned no executable");
  return tt__pjrt_exec_wrap(p, a.executable, out);
}

/* ---- identity ------------------------------------------------------------------ */
/* A hash of the host's CPU feature list (the first "flags" line on x86, the
 * "Features" line on Arm); 0 if /proc/cpuinfo cannot be read. */
static uint64_t tt__cpu_features_hash(void) {
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f) return 0;
  char line[8192];
  uint64_t h = 0;
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, "flags", 5) && strncmp(line, "Features", 8)) continue;
    h = tt_hash_bytes(line, strlen(line), 0x7470755f637075ull);
    break;
  }
  fclose(f);
  return h;
}

tt_status_t tt_pjrt_identity(tt_pjrt_t* p, char* buf, size_t cap) {
  const tt_pjrt_info_t* info = &p->info;
  char real[PATH_MAX];
  const char* path = realpath(info->plugin_path, real) ? real : info->plugin_path;
  struct stat sb;
  if (stat(path, &sb) != 0)
    return tt_status_make(TT_NOT_FOUND, "cannot stat the PJRT plugin %s", path);
  char cpu[96] = "";
  if (!strcmp(info->platform_name, "cpu")) {
    struct utsname u;
    snprintf(cpu, sizeof(cpu), " host=%s/%016llx", uname(&u) == 0 ? u.machine : "?",
             (unsigned long long)tt__cpu_features_hash());
  }
  int n = snprintf(buf, cap, "plugin=%s size=%lld mtime=%lld.%09ld api=%d.%d platform=%s/%s%s",
                   path, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                   (long)sb.st_mtim.tv_nsec, info->api_major, info->api_minor,
                   info->platform_name, info->platform_version, cpu);
  if (n < 0 || (size_t)n >= cap)
    return tt_status_make(TT_OUT_OF_RANGE, "the plugin identity needs %d bytes, %zu given", n + 1,
                          cap);
  return NULL;
}
