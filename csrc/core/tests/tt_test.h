/* A tiny test harness for the C unit tests: each test binary defines test
 * functions, lists them in main with TT_RUN, and ends with TT_REPORT. The
 * final line "N passed, N failed" is what CI reads. */
#ifndef TT_TEST_H_
#define TT_TEST_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/tt_base.h"

static int tt__passed, tt__failed, tt__cur_failed;

#define TT_CHECK(cond)                                                        \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
      tt__cur_failed = 1;                                                     \
      return;                                                                 \
    }                                                                         \
  } while (0)

#define TT_CHECK_OK(expr)                                                     \
  do {                                                                        \
    tt_status_t tt__s = (expr);                                               \
    if (tt__s) {                                                              \
      fprintf(stderr, "  FAIL %s:%d: %s -> %s\n", __FILE__, __LINE__, #expr, \
              tt_status_message(tt__s));                                      \
      tt_status_free(tt__s);                                                  \
      tt__cur_failed = 1;                                                     \
      return;                                                                 \
    }                                                                         \
  } while (0)

#define TT_RUN(fn)                                                            \
  do {                                                                        \
    tt__cur_failed = 0;                                                       \
    fn();                                                                     \
    if (tt__cur_failed) {                                                     \
      tt__failed++;                                                           \
      printf("FAILED %s\n", #fn);                                             \
    } else {                                                                  \
      tt__passed++;                                                           \
      printf("ok     %s\n", #fn);                                             \
    }                                                                         \
  } while (0)

#define TT_REPORT()                                                           \
  do {                                                                        \
    printf("%d passed, %d failed\n", tt__passed, tt__failed);                 \
    return tt__failed ? 1 : 0;                                                \
  } while (0)

#endif /* TT_TEST_H_ */
