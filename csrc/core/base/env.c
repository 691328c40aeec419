/* The one table of TORCH_TPU_* environment variables. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tt_base.h"

static const tt_env_info_t k_env[] = {
    [TT_ENV_PJRT_PLUGIN] = {"TORCH_TPU_PJRT_PLUGIN", NULL,
                            "path of a PJRT plugin .so; overrides discovery"},
    [TT_ENV_PJRT_PLATFORM] = {"TORCH_TPU_PJRT_PLATFORM", NULL,
                              "force a platform during discovery: cpu, gpu or tpu"},
    [TT_ENV_NUM_CPU_DEVICES] = {"TORCH_TPU_NUM_CPU_DEVICES", "1",
                                "number of devices the CPU plugin exposes"},
    [TT_ENV_LAUNCH_BLOCKING] = {"TORCH_TPU_LAUNCH_BLOCKING", "0",
                                "1: Debug Eager (wait for every op, raise errors at the op)"},
    [TT_ENV_DEFER_AND_FUSE] = {"TORCH_TPU_DEFER_AND_FUSE", "0",
                               "1: Fused Eager (defer ops, run them as one program)"},
    [TT_ENV_CPU_FALLBACK] = {"TORCH_TPU_CPU_FALLBACK", "0",
                             "1: run ops the tpu device lacks on the CPU (warns once per op)"},
    [TT_ENV_CACHE_DIR] = {"TORCH_TPU_CACHE_DIR", NULL,
                          "directory of the persistent compilation cache (default ~/.cache/torch_tpu)"},
    [TT_ENV_DUMP_HLO] = {"TORCH_TPU_DUMP_HLO", "0",
                         "1: print every StableHLO program before it is compiled"},
    [TT_ENV_MEMORY_LIMIT] = {"TORCH_TPU_MEMORY_LIMIT", NULL,
                             "bytes each device may hold (e.g. 8G, 512M); default: the plugin's "
                             "memory limit, or the host's physical memory for the CPU plugin"},
    [TT_ENV_CACHE_MAX_PROGRAMS] = {"TORCH_TPU_CACHE_MAX_PROGRAMS", NULL,
                                   "compiled programs kept in memory (least recently used ones "
                                   "are dropped beyond it); default 4096, fewer when the "
                                   "kernel's vm.max_map_count is low"},
    [TT_ENV_FUSE_MAX_OPS] = {"TORCH_TPU_FUSE_MAX_OPS", "2048",
                             "Fused Eager: ops recorded before the graph runs as one program"},
    [TT_ENV_DISK_CACHE] = {"TORCH_TPU_DISK_CACHE", "1",
                           "0: no compiled executables on disk (TORCH_TPU_CACHE_DIR unused)"},
    [TT_ENV_DUMP_DIR] = {"TORCH_TPU_DUMP_DIR", NULL,
                         "directory: the StableHLO text of every program compiled (or loaded "
                         "from the disk cache) is written there, one .mlir file each"},
    [TT_ENV_HOST_ADDRESS_READS] = {"TORCH_TPU_HOST_ADDRESS_READS", "1",
                                   "0: host reads (.item(), .cpu()) always copy through the plugin's "
                                   "ToHostBuffer; 1: from the buffer's address where device memory "
                                   "is host memory (XLA's CPU plugin)"},
    [TT_ENV_DONATE] = {"TORCH_TPU_DONATE", "1",
                       "0: a program never reuses the buffer of a storage it rewrites (donation); "
                       "1: it does, on plugins of PJRT API 0.100 and newer"},
    [TT_ENV_DIST_COLLECTIVES] = {"TORCH_TPU_DIST_COLLECTIVES", "auto",
                                 "tpu_dist: auto (on the devices where the PJRT client spans the "
                                 "processes, else through the host), host, or device (an error "
                                 "where the devices cannot serve the group)"},
    [TT_ENV_CACHE_PREFETCH] = {"TORCH_TPU_CACHE_PREFETCH", "1",
                               "0: a process does not load, while it starts, the disk-cache entries "
                               "the last run of the same command line used first"},
    [TT_ENV_CACHE_MAX_MAPS] = {"TORCH_TPU_CACHE_MAX_MAPS", NULL,
                               "memory maps of the process beyond which the least recently used "
                               "compiled programs are dropped (each holds JIT-compiled code in "
                               "maps of its own); default: half of the kernel's vm.max_map_count"},
    [TT_ENV_PJRT_LOG] = {"TORCH_TPU_PJRT_LOG", "0",
                         "1: show the informational lines the PJRT plugin logs while it loads and "
                         "creates its client (hidden by default; its warnings and errors always show)"},
    [TT_ENV_CACHE_MAX_SIZE] = {"TORCH_TPU_CACHE_MAX_SIZE", "4G",
                               "bytes the disk cache's entries may take (K, M, G: powers of 1024); "
                               "beyond it the least recently used go; 0: no bound"},
};
_Static_assert(sizeof(k_env) / sizeof(k_env[0]) == TT_ENV_COUNT, "env table");

const tt_env_info_t* tt_env_info(tt_env_var_t v) { return v < TT_ENV_COUNT ? &k_env[v] : NULL; }

const char* tt_env_get(tt_env_var_t v) {
  if (v >= TT_ENV_COUNT) return NULL;
  const char* s = getenv(k_env[v].name);
  return (s && *s) ? s : k_env[v].default_value;
}

bool tt_env_flag(tt_env_var_t v) {
  const char* s = tt_env_get(v);
  if (!s) return false;
  return !strcmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") ||
         !strcasecmp(s, "on");
}

int64_t tt_env_int(tt_env_var_t v, int64_t dflt) {
  const char* s = tt_env_get(v);
  if (!s) return dflt;
  char* end = NULL;
  long long x = strtoll(s, &end, 10);
  return (end && *end == 0) ? (int64_t)x : dflt;
}

int64_t tt_env_bytes(tt_env_var_t v, int64_t dflt) {
  const char* s = tt_env_get(v);
  if (!s) return dflt;
  char* end = NULL;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (end == s || errno || *s == '-') return -1;
  int shift = 0;
  switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
  }
  if (shift && (*end == 'i' || *end == 'I')) end++;
  if (*end == 'b' || *end == 'B') end++;
  if (*end) return -1;
  if (x > ((unsigned long long)INT64_MAX >> shift)) return -1;
  return (int64_t)(x << shift);
}
