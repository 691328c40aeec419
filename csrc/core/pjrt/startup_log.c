/* The plugin's start-up log. XLA's plugins log through absl before anything
 * initializes absl's logging, so loading one and creating its client print
 * "WARNING: All log messages before absl::InitializeLog() ..." and INFO lines
 * ("I0000 ... cpu_device_count set via create_options") on stderr in every
 * process. While a plugin loads and creates its client, stderr goes to a
 * temporary file; afterwards the informational lines are dropped and every
 * other line (the plugin's warnings and errors) is written to stderr as it
 * came. TORCH_TPU_PJRT_LOG=1, or a failed load, shows everything.
 *
 * Thread rules: one capture at a time in the process (a mutex); other threads'
 * writes to stderr during the window land in the capture and are replayed
 * unless they look like absl INFO lines. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pjrt_internal.h"

static pthread_mutex_t g_capture_mu = PTHREAD_MUTEX_INITIALIZER;

/* absl's INFO prefix: 'I', four digits (month, day), a space. */
static bool tt__is_info_line(const char* s, size_t n) {
  static const char kPreamble[] = "WARNING: All log messages before absl::InitializeLog()";
  if (n >= sizeof(kPreamble) - 1 && !memcmp(s, kPreamble, sizeof(kPreamble) - 1)) return true;
  if (n < 6 || s[0] != 'I' || s[5] != ' ') return false;
  for (int i = 1; i < 5; i++)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

void tt__pjrt_log_capture_begin(tt__pjrt_log_capture_t* c) {
  c->saved_fd = -1;
  c->file = NULL;
  if (tt_env_flag(TT_ENV_PJRT_LOG)) return;
  pthread_mutex_lock(&g_capture_mu);
  fflush(stderr);
  c->file = tmpfile();
  c->saved_fd = c->file ? dup(STDERR_FILENO) : -1;
  if (c->saved_fd < 0 || dup2(fileno(c->file), STDERR_FILENO) < 0) {
    if (c->saved_fd >= 0) close(c->saved_fd);
    if (c->file) fclose(c->file);
    c->saved_fd = -1;
    c->file = NULL;
    pthread_mutex_unlock(&g_capture_mu);
  }
}

static void tt__write_all(int fd, const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

void tt__pjrt_log_capture_end(tt__pjrt_log_capture_t* c, bool show_all) {
  if (!c->file) return;
  fflush(stderr);
  dup2(c->saved_fd, STDERR_FILENO);
  close(c->saved_fd);
  rewind(c->file);
  char line[4096];
  bool at_line_start = true, drop = false;
  while (fgets(line, sizeof(line), c->file)) {
    size_t n = strlen(line);
    if (at_line_start) drop = !show_all && tt__is_info_line(line, n);
    if (!drop) tt__write_all(STDERR_FILENO, line, n);
    at_line_start = n > 0 && line[n - 1] == '\n';
  }
  fclose(c->file);
  c->file = NULL;
  c->saved_fd = -1;
  pthread_mutex_unlock(&g_capture_mu);
}
