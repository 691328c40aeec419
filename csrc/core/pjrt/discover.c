/* PJRT plugin discovery (DESIGN §3): the first candidate that exists wins. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tt_pjrt.h"

/* Candidates in order of preference: where the path comes from, and the
 * platform it serves (NULL: any platform, an explicit user choice). */
typedef enum tt__source {
  TT__FROM_OUR_ENV, /* TORCH_TPU_PJRT_PLUGIN, via the env registry */
  TT__FROM_ENV,     /* another environment variable holding a path */
  TT__IN_SITE_DIR,  /* a path relative to each Python site directory */
} tt__source_t;

typedef struct tt__candidate {
  const char* platform;
  tt__source_t source;
  const char* name; /* env var name, or relative path */
  bool needs_gpu;   /* only if /dev/nvidia0 exists */
} tt__candidate_t;

static const tt__candidate_t k_candidates[] = {
    {NULL, TT__FROM_OUR_ENV, "TORCH_TPU_PJRT_PLUGIN", false},
    {"tpu", TT__FROM_ENV, "TPU_LIBRARY_PATH", false},
    {"tpu", TT__IN_SITE_DIR, "libtpu/libtpu.so", false},
    {"gpu", TT__IN_SITE_DIR, "jax_plugins/xla_cuda13/xla_cuda_plugin.so", true},
    {"gpu", TT__IN_SITE_DIR, "jax_plugins/xla_cuda12/xla_cuda_plugin.so", true},
    {"cpu", TT__IN_SITE_DIR, "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so", false},
    {"cpu", TT__IN_SITE_DIR, "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so", false},
};
#define TT__NCANDIDATES (sizeof(k_candidates) / sizeof(k_candidates[0]))

static bool tt__is_file(const char* path) {
  struct stat s;
  return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

static const char* tt__env_value(const tt__candidate_t* c) {
  const char* v = c->source == TT__FROM_OUR_ENV ? tt_env_get(TT_ENV_PJRT_PLUGIN) : getenv(c->name);
  return (v && *v) ? v : NULL;
}

static const char k_install_help[] =
    "Install one into this Python environment:\n"
    "  pip install lammps-jax-pjrt-cpu==0.11.2   # CPU\n"
    "  pip install jax-cuda13-pjrt               # NVIDIA GPU\n"
    "  pip install libtpu                        # TPU\n"
    "or set TORCH_TPU_PJRT_PLUGIN=/path/to/plugin.so";

tt_status_t tt_pjrt_discover(const char* const* site_dirs, int n_site_dirs, tt_sbuf_t* out) {
  return tt_pjrt_discover_platform(site_dirs, n_site_dirs, out, NULL);
}

tt_status_t tt_pjrt_discover_platform(const char* const* site_dirs, int n_site_dirs, tt_sbuf_t* out,
                                      const char** found_platform) {
  if (found_platform) *found_platform = NULL;
  tt_sbuf_clear(out);
  const char* platform = tt_env_get(TT_ENV_PJRT_PLATFORM);
  if (platform && strcmp(platform, "cpu") && strcmp(platform, "gpu") && strcmp(platform, "tpu"))
    return tt_status_make(TT_INVALID_ARGUMENT,
                          "TORCH_TPU_PJRT_PLATFORM=%s: expected cpu, gpu or tpu", platform);
  struct stat gpu_node;
  bool have_gpu = stat("/dev/nvidia0", &gpu_node) == 0; /* a character device */
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  for (size_t i = 0; i < TT__NCANDIDATES; i++) {
    const tt__candidate_t* c = &k_candidates[i];
    if (platform && c->platform && strcmp(platform, c->platform)) continue;
    if (c->needs_gpu && !have_gpu) continue;
    if (c->source != TT__IN_SITE_DIR) {
      const char* v = tt__env_value(c);
      if (!v) continue;
      if (tt__is_file(v)) {
        tt_sbuf_append(out, v);
        tt_sbuf_free(&path);
        if (found_platform) *found_platform = c->platform;
        return NULL;
      }
      if (!c->platform) { /* an explicit choice that does not exist: say so */
        tt_sbuf_free(&path);
        return tt_status_make(TT_NOT_FOUND, "%s=%s: no such file. %s", c->name, v, k_install_help);
      }
      continue;
    }
    for (int d = 0; d < n_site_dirs; d++) {
      if (!site_dirs[d] || !*site_dirs[d]) continue;
      tt_sbuf_clear(&path);
      tt_sbuf_printf(&path, "%s/%s", site_dirs[d], c->name);
      if (!path.oom && tt__is_file(path.data)) {
        tt_sbuf_append(out, path.data);
        tt_sbuf_free(&path);
        if (found_platform) *found_platform = c->platform;
        return NULL;
      }
    }
  }
  tt_sbuf_free(&path);
  return tt_status_make(TT_NOT_FOUND, "no PJRT plugin was found (%s%s%s%d site dir(s) searched). %s",
                         platform ? "TORCH_TPU_PJRT_PLATFORM=" : "", platform ? platform : "",
                         platform ? ", " : "", n_site_dirs, k_install_help);
}
