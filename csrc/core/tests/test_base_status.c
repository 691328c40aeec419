/* Tests of status values (base/status.c): NULL is OK, a failure carries its
 * code and formatted message, annotation prefixes context as the status
 * propagates upward (directly and through TT_RETURN_IF_ERROR(_CTX)), clones
 * are independent. No plugin needed. */
#include "tt_test.h"

static void test_ok_is_null(void) {
  TT_CHECK(tt_status_code(NULL) == TT_OK);
  TT_CHECK(strcmp(tt_status_message(NULL), "") == 0);
  TT_CHECK(tt_status_annotate(NULL, "while %s", "nothing") == NULL);
  TT_CHECK(tt_status_clone(NULL) == NULL);
  tt_status_free(NULL); /* NULL-safe */
}

static void test_codes_and_messages(void) {
  static const tt_code_t codes[] = {TT_INVALID_ARGUMENT, TT_NOT_FOUND,          TT_UNIMPLEMENTED,
                                    TT_FAILED_PRECONDITION, TT_INTERNAL,           TT_RESOURCE_EXHAUSTED,
                                    TT_UNAVAILABLE,         TT_OUT_OF_RANGE};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    tt_status_t st = tt_status_make(codes[i], "code %d, %s %.2f%%", (int)codes[i], "ratio", 12.5);
    char want[64];
    snprintf(want, sizeof want, "code %d, ratio 12.50%%", (int)codes[i]);
    bool ok = st != NULL && tt_status_code(st) == codes[i] && strcmp(tt_status_message(st), want) == 0;
    if (!ok)
      fprintf(stderr, "  code %d: got %d \"%s\"\n", (int)codes[i], (int)tt_status_code(st), tt_status_message(st));
    tt_status_free(st);
    TT_CHECK(ok);
  }
  /* a failure never reads as OK: TT_OK becomes TT_INTERNAL */
  tt_status_t st = tt_status_make(TT_OK, "not really ok");
  TT_CHECK(st != NULL);
  bool ok = tt_status_code(st) == TT_INTERNAL && strcmp(tt_status_message(st), "not really ok") == 0;
  tt_status_free(st);
  TT_CHECK(ok);
}

/* A message far longer than any fixed buffer is kept whole. */
static void test_long_message(void) {
  static char big[5001];
  for (int i = 0; i < 5000; i++) big[i] = (char)('a' + i % 26);
  big[5000] = 0;
  tt_status_t st = tt_status_make(TT_INVALID_ARGUMENT, "[%s]", big);
  const char* m = tt_status_message(st);
  bool ok = strlen(m) == 5002 && m[0] == '[' && m[5001] == ']' && memcmp(m + 1, big, 5000) == 0;
  st = tt_status_annotate(st, "%s", big); /* a long prefix too */
  m = tt_status_message(st);
  ok = ok && strlen(m) == 5000 + 2 + 5002 && memcmp(m, big, 5000) == 0 && memcmp(m + 5000, ": [", 3) == 0;
  tt_status_free(st);
  TT_CHECK(ok);
}

/* Each annotation prefixes "<context>: ", outermost first; the status keeps
 * its identity and code. */
static void test_annotate(void) {
  tt_status_t st = tt_status_make(TT_NOT_FOUND, "no lowering named %s", "aten::foo");
  tt_status_t a = tt_status_annotate(st, "lowering %s", "@main");
  TT_CHECK(a == st);
  a = tt_status_annotate(a, "compiling graph %d", 7);
  TT_CHECK(a == st);
  bool ok = tt_status_code(a) == TT_NOT_FOUND &&
            strcmp(tt_status_message(a), "compiling graph 7: lowering @main: no lowering named aten::foo") == 0;
  if (!ok) fprintf(stderr, "  got \"%s\"\n", tt_status_message(a));
  tt_status_free(a);
  TT_CHECK(ok);
}

/* ---- propagation through the macros --------------------------------------------- */
static int g_after_ok; /* how many times a call after a successful step ran */

static tt_status_t leaf(bool fail) {
  return fail ? tt_status_make(TT_UNAVAILABLE, "device %d is gone", 1) : NULL;
}
static tt_status_t middle(bool fail) {
  TT_RETURN_IF_ERROR_CTX(leaf(false), "never annotated");
  g_after_ok++;
  TT_RETURN_IF_ERROR_CTX(leaf(fail), "copying %s to device", "x");
  g_after_ok++;
  return NULL;
}
static tt_status_t top(bool fail) {
  TT_RETURN_IF_ERROR(middle(fail));
  g_after_ok++;
  return NULL;
}

static void test_propagation(void) {
  g_after_ok = 0;
  TT_CHECK(top(false) == NULL);
  TT_CHECK(g_after_ok == 3);
  g_after_ok = 0;
  tt_status_t st = top(true);
  TT_CHECK(st != NULL);
  TT_CHECK(g_after_ok == 1); /* stopped at the failing step, in both frames */
  st = tt_status_annotate(st, "op %s", "aten::add");
  bool ok = tt_status_code(st) == TT_UNAVAILABLE &&
            strcmp(tt_status_message(st), "op aten::add: copying x to device: device 1 is gone") == 0;
  if (!ok) fprintf(stderr, "  got \"%s\"\n", tt_status_message(st));
  tt_status_free(st);
  TT_CHECK(ok);
}

/* A clone has the same code and message and lives on its own. */
static void test_clone(void) {
  tt_status_t st = tt_status_make(TT_OUT_OF_RANGE, "index %d is out of bounds", 9);
  tt_status_t cl = tt_status_clone(st);
  TT_CHECK(cl != NULL && cl != st);
  bool same = tt_status_code(cl) == TT_OUT_OF_RANGE && strcmp(tt_status_message(cl), tt_status_message(st)) == 0;
  cl = tt_status_annotate(cl, "in the clone");
  bool apart = strcmp(tt_status_message(st), "index 9 is out of bounds") == 0 &&
               strcmp(tt_status_message(cl), "in the clone: index 9 is out of bounds") == 0;
  tt_status_free(st);
  bool after = strcmp(tt_status_message(cl), "in the clone: index 9 is out of bounds") == 0;
  tt_status_free(cl);
  TT_CHECK(same);
  TT_CHECK(apart);
  TT_CHECK(after);
}

int main(void) {
  TT_RUN(test_ok_is_null);
  TT_RUN(test_codes_and_messages);
  TT_RUN(test_long_message);
  TT_RUN(test_annotate);
  TT_RUN(test_propagation);
  TT_RUN(test_clone);
  TT_REPORT();
}
