/* Waiting for the device: Fused Eager's recorded calls run, the pending
 * device-side checks are read, every storage still being computed is
 * awaited; the first error of asynchronous work is returned, naming its op. */
#include "internal.h"

tt_status_t tt_runtime_flush(tt_runtime_t* rt) { return tt__fuse_sync(rt); }

tt_status_t tt_runtime_synchronize(tt_runtime_t* rt, int device) {
  pthread_mutex_lock(&rt->mu);
  tt_status_t first = tt__fuse_flush(rt);
  tt_status_t cst = tt__checks_drain(rt);
  if (!first) first = cst;
  else tt_status_free(cst);
  for (tt_storage_t* s = rt->live.next; s != &rt->live; s = s->next) {
    if (device >= 0 && s->device != device) continue;
    if (!s->pending) continue;
    tt_status_t st = tt__storage_await(s);
    if (st && !first) first = st;
    else tt_status_free(st);
  }
  pthread_mutex_unlock(&rt->mu);
  return first;
}
