/* Device capacity: where it comes from, and the out-of-memory check that
 * storages pass when they are created or grow.
 *
 * Storages hold no buffer until first written (storage.c), so a plugin would
 * only fail an oversized allocation later, at some op. CUDA's allocator
 * refuses it at once; so do we: every live storage counts with its full size
 * from creation, and a storage that would take the total beyond the device's
 * capacity is refused with TT_RESOURCE_EXHAUSTED (torch.OutOfMemoryError in
 * Python). Nothing is allocated or changed by a refused request, so the device
 * keeps working.
 *
 * The capacity is, in order: TORCH_TPU_MEMORY_LIMIT; the plugin's bytes_limit
 * (Device_MemoryStats: the GPU and TPU plugins); for the CPU plugin, the host's
 * physical memory, shared by all its devices. No limit when none is known. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int64_t host_physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (int64_t)pages * (int64_t)page : 0;
}

tt_status_t tt__mem_init(tt_runtime_t* rt) {
  int64_t env = tt_env_bytes(TT_ENV_MEMORY_LIMIT, 0);
  const tt_pjrt_info_t* info = tt_pjrt_get_info(rt->pjrt);
  rt->mem.shared = !strcmp(info->platform_name, "cpu");
  if (env < 0)
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "TORCH_TPU_MEMORY_LIMIT=%s: expected a byte count such as 8G, 512M or "
                          "1073741824",
                          tt_env_get(TT_ENV_MEMORY_LIMIT));
  if (env > 0) {
    rt->mem.limit = env;
    rt->mem.limit_source = "TORCH_TPU_MEMORY_LIMIT";
    return NULL;
  }
  int64_t lim = 0;
  tt_status_t st = info->num_devices > 0 ? tt_pjrt_memory_limit(rt->pjrt, 0, &lim) : NULL;
  tt_status_free(st); /* optional: the CPU plugins do not implement it */
  if (lim > 0) {
    rt->mem.limit = lim;
    rt->mem.limit_source = "the plugin's memory statistics";
  } else if (rt->mem.shared) {
    rt->mem.limit = host_physical_memory();
    rt->mem.limit_source = "the host's physical memory";
  }
  return NULL;
}

static void fmt_bytes(char* out, size_t n, double b) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (b >= 1024.0 && u < 6) b /= 1024.0, u++;
  if (u == 0) snprintf(out, n, "%.0f bytes", b);
  else snprintf(out, n, "%.2f %s", b, units[u]);
}

tt_status_t tt__mem_reserve(tt_runtime_t* rt, int device, size_t nbytes) {
  int64_t used = 0;
  if (rt->mem.shared)
    for (int d = 0; d < TT_MAX_DEVICES; d++) used += rt->mem.dev[d].bytes_reserved;
  else
    used = rt->mem.dev[device].bytes_reserved;
  int64_t lim = rt->mem.limit;
  if (lim > 0 && (nbytes > (size_t)INT64_MAX || (int64_t)nbytes > lim - used)) {
    char want[32], cap[32], held[32], left[32];
    fmt_bytes(want, sizeof want, (double)nbytes);
    fmt_bytes(cap, sizeof cap, (double)lim);
    fmt_bytes(held, sizeof held, (double)used);
    fmt_bytes(left, sizeof left, (double)(lim > used ? lim - used : 0));
    return tt_status_make(TT_RESOURCE_EXHAUSTED,
                          "tpu out of memory. Tried to allocate %s (%zu bytes). Device %d has a "
                          "total capacity of %s (%s%s) of which %s is free; tensors hold %s. "
                          "Set TORCH_TPU_MEMORY_LIMIT to change the capacity.",
                          want, nbytes, device, cap, rt->mem.limit_source,
                          rt->mem.shared ? ", shared by the devices" : "", left, held);
  }
  rt->mem.dev[device].bytes_reserved += (int64_t)nbytes;
  return NULL;
}

void tt__mem_unreserve(tt_runtime_t* rt, int device, size_t nbytes) {
  rt->mem.dev[device].bytes_reserved -= (int64_t)nbytes;
}

void tt_runtime_memory_info(tt_runtime_t* rt, int device, int64_t* free_bytes,
                            int64_t* total_bytes) {
  pthread_mutex_lock(&rt->mu);
  int64_t used = 0;
  for (int d = 0; d < TT_MAX_DEVICES; d++)
    if (rt->mem.shared || d == device) used += rt->mem.dev[d].bytes_reserved;
  *total_bytes = rt->mem.limit;
  *free_bytes = rt->mem.limit > used ? rt->mem.limit - used : 0;
  pthread_mutex_unlock(&rt->mu);
}

/* The devices storages may live on (the runtime keeps state for TT_MAX_DEVICES). */
int tt_runtime_device_count(tt_runtime_t* rt) {
  int n = tt_pjrt_get_info(rt->pjrt)->num_devices;
  return n > TT_MAX_DEVICES ? TT_MAX_DEVICES : n;
}
