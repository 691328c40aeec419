/* Runtime lifetime, statistics, the caches' release. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

tt_status_t tt_runtime_open(const char* plugin_path, int cpu_device_count, tt_runtime_t** out) {
  tt_pjrt_options_t o;
  memset(&o, 0, sizeof(o));
  o.cpu_device_count = cpu_device_count;
  return tt_runtime_open_with(plugin_path, &o, out);
}

tt_status_t tt_runtime_open_with(const char* plugin_path, const tt_pjrt_options_t* opts, tt_runtime_t** out) {
  *out = NULL;
  tt_runtime_t* rt = calloc(1, sizeof(*rt));
  if (!rt) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory");
  tt_status_t st = tt_pjrt_open_with(plugin_path, opts, &rt->pjrt);
  if (st) {
    free(rt);
    return st;
  }
  pthread_mutex_init(&rt->mu, NULL);
  rt->live.next = rt->live.prev = &rt->live;
  rt->dump_hlo = tt_env_flag(TT_ENV_DUMP_HLO);
  /* The API 0.81 CPU plugin runs a donating program ~2.5x slower (it seems
   * to wait for the donated buffer's earlier uses): donation from 0.100 on. */
  rt->donate = tt_env_flag(TT_ENV_DONATE) && tt_pjrt_get_info(rt->pjrt)->api_minor >= 100;
  rt->cache.max_count = tt__cache_limit();
  rt->disk = tt_disk_cache_open(rt->pjrt, NULL);
  const char* dump = tt_env_get(TT_ENV_DUMP_DIR);
  if (dump && *dump) rt->dump_dir = strdup(dump);
  st = tt__mem_init(rt);
  if (st) {
    tt_runtime_close(rt);
    return st;
  }
  *out = rt;
  return NULL;
}

void tt_runtime_close(tt_runtime_t* rt) {
  if (!rt) return;
  tt_status_free(tt__fuse_sync(rt));
  tt_graph_destroy(rt->fuse.graph);
  tt_graph_destroy(rt->fuse.spare);
  free(rt->fuse.refs);
  tt_sigset_free(&rt->fuse.checked);
  free(rt->fuse.node_refs);
  tt_status_free(tt__checks_drain(rt));
  free(rt->checks);
  tt__cache_clear(&rt->cache, rt->pjrt);
  tt__coll_cache_clear(rt);
  tt_disk_cache_close(rt->disk);
  free(rt->dump_dir);
  for (int i = 0; i < TT_SCALAR_CACHE; i++) tt_pjrt_buffer_destroy(rt->pjrt, rt->scalars.slots[i].buf);
  tt__packed_cache_clear(rt);
  tt_pjrt_close(rt->pjrt);
  pthread_mutex_destroy(&rt->mu);
  free(rt);
}

const tt_pjrt_info_t* tt_runtime_info(tt_runtime_t* rt) { return tt_pjrt_get_info(rt->pjrt); }


void tt_runtime_get_stats(tt_runtime_t* rt, int device, tt_runtime_stats_t* out) {
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&rt->mu);
  for (int d = 0; d < TT_MAX_DEVICES; d++) {
    if (device >= 0 && d != device) continue;
    out->bytes_in_use += rt->mem.dev[d].bytes_in_use;
    out->peak_bytes += rt->mem.dev[d].peak_bytes;
    out->num_storages += rt->mem.dev[d].num_storages;
    out->num_buffers += rt->mem.dev[d].num_buffers;
    out->bytes_reserved += rt->mem.dev[d].bytes_reserved;
  }
  out->cache_hits = rt->stats.cache_hits;
  out->cache_misses = rt->stats.cache_misses;
  out->cache_entries = (int64_t)rt->cache.count;
  out->cache_evictions = rt->cache.evictions;
  out->cache_max_entries = (int64_t)rt->cache.max_count;
  out->cache_maps_evictions = rt->cache.maps_evictions;
  out->maps_budget = tt__maps_budget();
  out->compile_seconds = rt->stats.compile_seconds;
  out->execute_seconds = rt->stats.execute_seconds;
  out->compiles = rt->stats.compiles;
  tt_disk_cache_stats_t ds;
  tt_disk_cache_stats(rt->disk, &ds);
  out->disk_enabled = rt->disk != NULL;
  out->disk_hits = ds.hits;
  out->disk_misses = ds.misses;
  out->disk_writes = ds.writes;
  out->disk_rejected = ds.rejected;
  out->disk_prefetched = ds.prefetched;
  out->disk_errors = ds.errors;
  out->disk_evictions = ds.evictions;
  out->dumped = rt->dumped;
  out->executions = rt->stats.executions;
  out->fused_flushes = rt->fuse.flushes;
  out->fused_ops = rt->fuse.ops;
  out->fused_replays = rt->fuse.replays;
  out->packed_hits = rt->scalars.packed_hits;
  out->packed_uploads = rt->scalars.packed_uploads;
  out->pending_ops = rt->fuse.graph ? tt_graph_size(rt->fuse.graph) : 0;
  pthread_mutex_unlock(&rt->mu);
}

tt_status_t tt_runtime_clear_cache(tt_runtime_t* rt, bool disk) {
  pthread_mutex_lock(&rt->mu);
  tt_status_t st = tt__fuse_flush(rt);
  tt__cache_drop_all(rt);
  tt__coll_cache_clear(rt);
  if (disk) {
    tt_status_t dst = tt_disk_cache_clear(rt->disk);
    if (!st) st = dst;
    else tt_status_free(dst);
  }
  pthread_mutex_unlock(&rt->mu);
  return st;
}

const char* tt_runtime_cache_dir(tt_runtime_t* rt) { return tt_disk_cache_dir(rt->disk); }

void tt_runtime_reset_peak(tt_runtime_t* rt, int device) {
  pthread_mutex_lock(&rt->mu);
  for (int d = 0; d < TT_MAX_DEVICES; d++)
    if (device < 0 || d == device) rt->mem.dev[d].peak_bytes = rt->mem.dev[d].bytes_in_use;
  pthread_mutex_unlock(&rt->mu);
}

