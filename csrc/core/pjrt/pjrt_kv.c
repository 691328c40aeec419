/* The key-value store of a client across processes: the callbacks
 * Client_Create takes (pjrt.c passes them, with the tt_pjrt_t as their user
 * arg). They call the store given in tt_pjrt_options_t (p->kv, set before
 * the client is created) and turn its status into the plugin's error. The
 * plugin may call them from any thread while the client lives. */
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

static void kv_free(char* value) { free(value); }

/* Our status as the plugin's error (NULL for OK); frees st. */
static tt_abi_error_t* kv_error(tt_abi_callback_error_fn* make, tt_status_t st) {
  if (!st) return NULL;
  int code = TT_ABI_CODE_INTERNAL;
  switch (tt_status_code(st)) {
    case TT_NOT_FOUND: code = TT_ABI_CODE_NOT_FOUND; break;
    case TT_INVALID_ARGUMENT: code = TT_ABI_CODE_INVALID_ARGUMENT; break;
    case TT_UNAVAILABLE: code = TT_ABI_CODE_UNAVAILABLE; break;
    case TT_UNIMPLEMENTED: code = TT_ABI_CODE_UNIMPLEMENTED; break;
    default: break;
  }
  const char* m = tt_status_message(st);
  tt_abi_error_t* e = make && *make ? (*make)(code, m, strlen(m)) : NULL;
  tt_status_free(st);
  return e;
}

/* get (timeout_ms >= 0) or try_get (< 0) of the store, its value handed to
 * the plugin's out fields (the deleter frees it). */
static tt_abi_error_t* kv_lookup(tt_pjrt_t* p, const char* key, size_t key_size, int timeout_ms,
                                 tt_abi_callback_error_fn* make, char** value, size_t* value_size,
                                 tt_abi_kv_deleter_fn* deleter) {
  tt_status_t st;
  if (!p->kv.get || !p->kv.try_get) st = tt_status_make(TT_UNIMPLEMENTED, "no key-value store");
  else if (timeout_ms >= 0) st = p->kv.get(p->kv.ctx, key, key_size, timeout_ms, value, value_size);
  else st = p->kv.try_get(p->kv.ctx, key, key_size, value, value_size);
  if (st) return kv_error(make, st);
  *deleter = kv_free;
  return NULL;
}

static tt_abi_error_t* kv_get(void* args) {
  tt_abi_kv_get_args_t* a = args;
  int timeout = a->timeout_in_ms < 0 ? 0 : a->timeout_in_ms;
  return kv_lookup(a->user_arg, a->key, a->key_size, timeout, a->callback_error, &a->value, &a->value_size,
                   &a->value_deleter_callback);
}

static tt_abi_error_t* kv_try_get(void* args) {
  tt_abi_kv_try_get_args_t* a = args;
  return kv_lookup(a->user_arg, a->key, a->key_size, -1, a->callback_error, &a->value, &a->value_size,
                   &a->value_deleter_callback);
}

static tt_abi_error_t* kv_put(void* args) {
  tt_abi_kv_put_args_t* a = args;
  tt_pjrt_t* p = a->user_arg;
  tt_status_t st = p->kv.put ? p->kv.put(p->kv.ctx, a->key, a->key_size, a->value, a->value_size)
                             : tt_status_make(TT_UNIMPLEMENTED, "no key-value store");
  return kv_error(a->callback_error, st);
}

void tt__pjrt_kv_callbacks(tt_abi_fn* get, tt_abi_fn* try_get, tt_abi_fn* put) {
  *get = kv_get;
  *try_get = kv_try_get;
  *put = kv_put;
}
