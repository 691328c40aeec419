/* Measures the plugin's own floor: Execute of a tiny cached add, called from
 * C, output destroyed each time (what one Strict Eager op cannot beat). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

tt_status_t tt_runtime_bench_execute(tt_runtime_t* rt, int iters, double* us_per_exec) {
  static const char prog[] =
      "func.func public @main(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {\n"
      "  %0 = stablehlo.add %a, %b : tensor<16xf32>\n"
      "  return %0 : tensor<16xf32>\n}\n";
  float host[16] = {0};
  int64_t n = 16;
  tt_type_t t = tt_type_make(TT_F32, 1, &n);
  tt_pjrt_exec_t* ex = NULL;
  tt_pjrt_buffer_t* in = NULL;
  TT_RETURN_IF_ERROR(tt_pjrt_compile(rt->pjrt, prog, sizeof(prog) - 1, &ex));
  tt_status_t st = tt_pjrt_buffer_from_host(rt->pjrt, 0, host, &t, &in);
  tt_pjrt_buffer_t* args[2] = {in, in};
  tt_pjrt_buffer_t* out = NULL;
  double t0 = tt__now();
  for (int i = 0; i < iters && !st; i++) {
    st = tt_pjrt_execute(rt->pjrt, ex, 0, args, 2, &out, 1);
    if (!st) st = tt_pjrt_buffer_await(rt->pjrt, out);
    tt_pjrt_buffer_destroy(rt->pjrt, out);
  }
  *us_per_exec = (tt__now() - t0) * 1e6 / (iters > 0 ? iters : 1);
  tt_pjrt_buffer_destroy(rt->pjrt, in);
  tt_pjrt_exec_destroy(rt->pjrt, ex);
  return st;
}
