/* The process's memory maps, against the kernel's vm.max_map_count.
 *
 * The CPU plugin JIT-compiles each kernel of a program into memory regions of
 * its own: a small elementwise program takes a few maps, a float64 or complex
 * eigendecomposition (loops of many fused kernels) ~160. At vm.max_map_count
 * (65530 by default) mmap, mprotect and munmap fail: the plugin's next compile
 * aborts or leaves an unwind table registered over an unmapped page, and the
 * next C++ exception anywhere in the process crashes in libgcc's unwinder.
 * So the program cache (cache.c) and the disk cache's start-up loading
 * (disk_cache.c) measure the maps, not only count programs. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

long tt__maps_count(void) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[65536];
  long n = 0;
  ssize_t r;
  while ((r = read(fd, buf, sizeof(buf))) > 0)
    for (ssize_t i = 0; i < r; i++) n += buf[i] == '\n';
  close(fd);
  return r < 0 ? -1 : n;
}

long tt__max_map_count(void) {
  static _Atomic long cached = -1; /* read once: a sysctl the process does not change */
  long v = cached;
  if (v >= 0) return v;
  v = 0;
  FILE* f = fopen("/proc/sys/vm/max_map_count", "r");
  if (f) {
    if (fscanf(f, "%ld", &v) != 1 || v < 0) v = 0;
    fclose(f);
  }
  cached = v;
  return v;
}

long tt__maps_budget(void) {
  int64_t env = tt_env_int(TT_ENV_CACHE_MAX_MAPS, 0);
  if (env > 0) return (long)env;
  long lim = tt__max_map_count();
  if (lim <= 0) lim = 65530; /* the kernel's default, where /proc does not say */
  return lim / 2;            /* the other half: libraries, allocator arenas, stacks, data */
}

#define TT_CACHE_DEFAULT_MAX 4096
/* Memory maps one compiled program holds on the CPU plugin: 3 per JIT-compiled
 * module, and a program of several fused kernels has several modules: ~3 for
 * an add, ~90 for an eigendecomposition, ~180 for an SVD. The number of
 * programs is bounded as if each took 32; the maps themselves are bounded by
 * counting them (tt__cache_make_room, maps.c). */
#define TT_MAPS_PER_PROGRAM 32

size_t tt__cache_limit(void) {
  int64_t env = tt_env_int(TT_ENV_CACHE_MAX_PROGRAMS, 0);
  if (env > 0) return (size_t)env;
  size_t lim = TT_CACHE_DEFAULT_MAX;
  long maps = tt__max_map_count();
  if (maps > 0 && (size_t)(maps / TT_MAPS_PER_PROGRAM) < lim) lim = (size_t)(maps / TT_MAPS_PER_PROGRAM);
  return lim < 64 ? 64 : lim;
}
