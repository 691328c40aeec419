/* Fake PJRT plugins that tt_pjrt_open must refuse, built three ways:
 *   -DFAKE_MAJOR=1  GetPjrtApi reports C API version 1.0 (a future major);
 *   -DFAKE_SHORT=1  version 0.115, but the table has only 10 slots;
 *   -DFAKE_NOSYM=1  no GetPjrtApi symbol at all.
 * Every slot it has points at a function that aborts: the loader must refuse
 * the plugin before calling anything (Plugin_Initialize included). */
#include <stdlib.h>

#include "../pjrt/pjrt_abi.h"

#define FAKE_SLOTS 140

typedef struct fake_api {
  tt_abi_api_t head;
  tt_abi_fn slots[FAKE_SLOTS];
} fake_api_t;

static tt_abi_error_t* fake_must_not_be_called(void* args) {
  (void)args;
  abort();
}

static fake_api_t g_api;

static void fake_fill(int major, int minor, int nslots) {
  g_api.head.struct_size = TT_ABI_SLOT0_OFFSET + 8 * (size_t)nslots;
  g_api.head.version.struct_size = sizeof(tt_abi_version_t);
  g_api.head.version.major = major;
  g_api.head.version.minor = minor;
  for (int i = 0; i < FAKE_SLOTS; i++) g_api.slots[i] = fake_must_not_be_called;
}

#if defined(FAKE_NOSYM)
const tt_abi_api_t* NotGetPjrtApi(void) {
  fake_fill(0, 115, FAKE_SLOTS);
  return &g_api.head;
}
#else
const tt_abi_api_t* GetPjrtApi(void) {
#if defined(FAKE_MAJOR)
  fake_fill(1, 0, FAKE_SLOTS);
#elif defined(FAKE_SHORT)
  fake_fill(0, 115, 10);
#else
  fake_fill(0, 115, FAKE_SLOTS); /* looks valid; nothing builds this variant */
#endif
  return &g_api.head;
}
#endif
