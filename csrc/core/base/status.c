/* Status values: NULL = OK, otherwise an owned heap object. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_base.h"

struct tt_status_s {
  tt_code_t code;
  char* message; /* owned, NUL-terminated */
};

static char* vformat(const char* fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  char* s = malloc((size_t)n + 1);
  if (!s) return NULL;
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

/* Returned when we cannot even allocate a status: never freed. */
static struct tt_status_s g_oom_status = {TT_RESOURCE_EXHAUSTED, "out of host memory"};

tt_status_t tt_status_make(tt_code_t code, const char* fmt, ...) {
  struct tt_status_s* st = malloc(sizeof(*st));
  if (!st) return &g_oom_status;
  va_list ap;
  va_start(ap, fmt);
  st->message = vformat(fmt, ap);
  va_end(ap);
  st->code = code == TT_OK ? TT_INTERNAL : code;
  if (!st->message) {
    free(st);
    return &g_oom_status;
  }
  return st;
}

tt_status_t tt_status_annotate(tt_status_t st, const char* fmt, ...) {
  if (!st || st == &g_oom_status) return st;
  va_list ap;
  va_start(ap, fmt);
  char* prefix = vformat(fmt, ap);
  va_end(ap);
  if (!prefix) return st;
  size_t a = strlen(prefix), b = strlen(st->message);
  char* msg = malloc(a + 2 + b + 1);
  if (msg) {
    memcpy(msg, prefix, a);
    memcpy(msg + a, ": ", 2);
    memcpy(msg + a + 2, st->message, b + 1);
    free(st->message);
    st->message = msg;
  }
  free(prefix);
  return st;
}

tt_code_t tt_status_code(tt_status_t st) { return st ? st->code : TT_OK; }

const char* tt_status_message(tt_status_t st) { return st ? st->message : ""; }

tt_status_t tt_status_clone(tt_status_t st) {
  if (!st) return NULL;
  return tt_status_make(st->code, "%s", st->message);
}

void tt_status_free(tt_status_t st) {
  if (!st || st == &g_oom_status) return;
  free(st->message);
  free(st);
}
