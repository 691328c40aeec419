/* StableHLO builder: golden text for the generic form (regions, bit-exact
 * constants, multi-result ops) and a compile + run of that text on both CPU
 * plugins (API 0.115 and 0.81). */
#include <math.h>

#include "../pjrt/tt_pjrt.h"
#include "../shlo/tt_shlo.h"
#include "tt_test.h"

static tt_pjrt_t* g_new;
static tt_pjrt_t* g_old;

/* main(a: 2x3 f32) -> (sum over dim 1 of a + 1, a as f16) */
static tt_status_t build(tt_sbuf_t* out) {
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  int64_t d[2] = {2, 3};
  tt_type_t t = tt_type_make(TT_F32, 2, d);
  tt_val_t a = tt_shlo_param(f, &t);
  tt_val_t one = tt_shlo_const(f, &t, 1.0);
  tt_val_t ops[2] = {a, one};
  tt_val_t s = tt_shlo_op(f, "stablehlo.add", ops, 2, &t, NULL);
  tt_type_t st = tt_type_scalar(TT_F32);
  tt_val_t zero = tt_shlo_const(f, &st, 0.0);
  tt_type_t bt[2] = {st, st};
  tt_val_t ba[2];
  tt_shlo_region_begin(f, bt, 2, ba);
  tt_val_t r = tt_shlo_op(f, "stablehlo.add", ba, 2, &st, NULL);
  char* region = tt_shlo_region_end(f, &r, 1);
  int64_t rd[1] = {2};
  tt_type_t rt = tt_type_make(TT_F32, 1, rd);
  tt_val_t red_ops[2] = {s, zero};
  tt_val_t red;
  tt_shlo_op_multi(f, "stablehlo.reduce", red_ops, 2, &rt, 1, "dimensions = array<i64: 1>", region, &red);
  tt_type_t ht = tt_type_make(TT_F16, 2, d);
  tt_val_t h = tt_shlo_op(f, "stablehlo.convert", &a, 1, &ht, NULL);
  tt_type_t inf_t = tt_type_scalar(TT_BF16);
  tt_val_t inf = tt_shlo_const(f, &inf_t, INFINITY);
  tt_val_t res[3] = {red, h, inf};
  tt_status_t st2 = tt_shlo_fn_finish(f, res, 3, out);
  tt_shlo_fn_destroy(f);
  return st2;
}

static const char k_golden[] =
    "module @tt_program {\n"
    "  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf16>, tensor<bf16>) {\n"
    "    %v0 = \"stablehlo.constant\"() {value = dense<0x3F800000> : tensor<2x3xf32>} : () -> tensor<2x3xf32>\n"
    "    %v1 = \"stablehlo.add\"(%arg0, %v0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "    %v2 = \"stablehlo.constant\"() {value = dense<0x00000000> : tensor<f32>} : () -> tensor<f32>\n"
    "    %v6 = \"stablehlo.reduce\"(%v1, %v2) ({\n"
    "  ^bb0(%v3: tensor<f32>, %v4: tensor<f32>):\n"
    "    %v5 = \"stablehlo.add\"(%v3, %v4) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    \"stablehlo.return\"(%v5) : (tensor<f32>) -> ()\n"
    "  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
    "    %v7 = \"stablehlo.convert\"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf16>\n"
    "    %v8 = \"stablehlo.constant\"() {value = dense<0x7F80> : tensor<bf16>} : () -> tensor<bf16>\n"
    "    \"func.return\"(%v6, %v7, %v8) : (tensor<2xf32>, tensor<2x3xf16>, tensor<bf16>) -> ()\n"
    "  }\n"
    "}\n";

static void test_golden_text(void) {
  tt_sbuf_t text;
  tt_sbuf_init(&text);
  TT_CHECK_OK(build(&text));
  if (strcmp(text.data, k_golden)) fprintf(stderr, "got:\n%s\nwant:\n%s\n", text.data, k_golden);
  TT_CHECK(!strcmp(text.data, k_golden));
  tt_sbuf_free(&text);
}

static void run_on(tt_pjrt_t* p) {
  tt_sbuf_t text;
  tt_sbuf_init(&text);
  TT_CHECK_OK(build(&text));
  tt_pjrt_exec_t* ex = NULL;
  TT_CHECK_OK(tt_pjrt_compile(p, text.data, text.len, &ex));
  tt_sbuf_free(&text);
  float a[6] = {1, 2, 3, 4, 5, 6.5f};
  int64_t d[2] = {2, 3};
  tt_type_t t = tt_type_make(TT_F32, 2, d);
  tt_pjrt_buffer_t* in = NULL;
  TT_CHECK_OK(tt_pjrt_buffer_from_host(p, 0, a, &t, &in));
  tt_pjrt_buffer_t* out[3];
  TT_CHECK_OK(tt_pjrt_execute(p, ex, 0, &in, 1, out, 3));
  float sums[2];
  uint16_t half[6], inf;
  TT_CHECK_OK(tt_pjrt_buffer_to_host(p, out[0], sums, sizeof sums));
  TT_CHECK_OK(tt_pjrt_buffer_to_host(p, out[1], half, sizeof half));
  TT_CHECK_OK(tt_pjrt_buffer_to_host(p, out[2], &inf, sizeof inf));
  TT_CHECK(sums[0] == 9.0f && sums[1] == 18.5f);
  TT_CHECK(half[0] == 0x3C00 && half[5] == 0x4680); /* 1.0, 6.5 */
  TT_CHECK(inf == 0x7F80);
  for (int i = 0; i < 3; i++) tt_pjrt_buffer_destroy(p, out[i]);
  tt_pjrt_buffer_destroy(p, in);
  tt_pjrt_exec_destroy(p, ex);
}

static void test_runs_on_new_plugin(void) { run_on(g_new); }
static void test_runs_on_old_plugin(void) { run_on(g_old); }

static void test_failed_builder_reports(void) {
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  tt_val_t bogus = 42;
  tt_type_t st = tt_type_scalar(TT_F32);
  tt_val_t r = tt_shlo_op(f, "stablehlo.abs", &bogus, 1, &st, NULL);
  TT_CHECK(r == TT_SHLO_INVALID);
  tt_sbuf_t text;
  tt_sbuf_init(&text);
  tt_status_t s = tt_shlo_fn_finish(f, &r, 1, &text);
  TT_CHECK(s != NULL && strstr(tt_status_message(s), "stablehlo.abs"));
  tt_status_free(s);
  tt_sbuf_free(&text);
  tt_shlo_fn_destroy(f);
}

/* Appending nothing from a NULL pointer (the data of an empty int[] in a
 * cache key): no memcpy from NULL (UBSan in make test-asan). */
static void test_sbuf_empty_append(void) {
  tt_sbuf_t b;
  tt_sbuf_init(&b);
  tt_sbuf_append(&b, "ab");
  tt_sbuf_appendn(&b, NULL, 0);
  TT_CHECK(b.len == 2 && strcmp(b.data, "ab") == 0);
  tt_sbuf_free(&b);
}

int main(void) {
  const char* pn = getenv("TT_TEST_PLUGIN_NEW");
  const char* po = getenv("TT_TEST_PLUGIN_OLD");
  TT_RUN(test_sbuf_empty_append);
  TT_RUN(test_golden_text);
  TT_RUN(test_failed_builder_reports);
  if (!pn || !po) {
    fprintf(stderr, "TT_TEST_PLUGIN_NEW / TT_TEST_PLUGIN_OLD not set\n");
    tt__failed++;
    TT_REPORT();
  }
  tt_status_t s = tt_pjrt_open(pn, 1, &g_new);
  if (!s) s = tt_pjrt_open(po, 1, &g_old);
  if (s) {
    fprintf(stderr, "open: %s\n", tt_status_message(s));
    tt_status_free(s);
    tt__failed++;
    TT_REPORT();
  }
  TT_RUN(test_runs_on_new_plugin);
  TT_RUN(test_runs_on_old_plugin);
  tt_pjrt_close(g_new);
  tt_pjrt_close(g_old);
  TT_REPORT();
}
