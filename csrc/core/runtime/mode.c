/* The eager mode ops run in (tt_runtime_mode) and the runtime's clock. */
#include <time.h>

#include "internal.h"

/* The mode of a thread: its own (eager_mode on that thread), else the
 * process's (the innermost eager_mode of any thread: it reaches autograd's
 * device threads, which run a backward pass for the thread that called
 * backward()), else the environment's. */
static _Thread_local int t_mode = -1;
static _Atomic int g_mode = -1;
static _Atomic int g_env_mode = -1;

void tt_runtime_set_mode(tt_mode_t mode) { t_mode = (int)mode; }
int tt_runtime_thread_mode(void) { return t_mode; }
void tt_runtime_set_thread_mode(int mode) { t_mode = mode < 0 ? -1 : mode; }
int tt_runtime_process_mode(void) { return g_mode; }
void tt_runtime_set_process_mode(int mode) { g_mode = mode < 0 ? -1 : mode; }

tt_mode_t tt_runtime_mode(void) {
  if (t_mode >= 0) return (tt_mode_t)t_mode;
  int g = g_mode;
  if (g >= 0) return (tt_mode_t)g;
  int e = g_env_mode;
  if (e < 0) {
    if (tt_env_flag(TT_ENV_LAUNCH_BLOCKING)) e = TT_MODE_DEBUG;
    else if (tt_env_flag(TT_ENV_DEFER_AND_FUSE)) e = TT_MODE_FUSED;
    else e = TT_MODE_STRICT;
    g_env_mode = e;
  }
  return (tt_mode_t)e;
}

double tt__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
