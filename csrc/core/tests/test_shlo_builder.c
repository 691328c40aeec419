/* StableHLO builder: golden text for the generic form (regions, bit-exact
 * constants, multi-result ops) and a compile + run of that text on both CPU
 * plugins (API 0.115 and 0.81); writes whose update reads their own buffer;
 * divisions by values whose elements are all equal. */
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

/* ---- a write whose update reads the buffer it writes (XLA miscompiles the in-place form) ---
 * main(x: shape) -> p = reshape(exp(x)) to 6 (or p = exp(x) when `reshape` is
 * false); dynamic_update_slice(p, (src[0:5]) * 2, 1), src being p itself
 * (`self_read`) or x + 1 (another value). */
static tt_status_t build_shift(bool reshape, bool self_read, int64_t rows, tt_sbuf_t* out) {
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  int64_t xd[2] = {rows, 6 / rows}, six = 6, five = 5;
  tt_type_t xt = tt_type_make(TT_F32, reshape ? 2 : 1, reshape ? xd : &six);
  tt_type_t pt = tt_type_make(TT_F32, 1, &six), ut = tt_type_make(TT_F32, 1, &five);
  tt_type_t it = tt_type_scalar(TT_I64);
  tt_val_t x = tt_shlo_param(f, &xt);
  tt_val_t e = tt_shlo_op(f, "stablehlo.exponential", &x, 1, &xt, NULL);
  tt_val_t p = reshape ? tt_shlo_op(f, "stablehlo.reshape", &e, 1, &pt, NULL) : e;
  tt_val_t src = p;
  if (!self_read) { /* reshape(x) + 1: nothing of p's buffer */
    tt_val_t one = tt_shlo_const(f, &pt, 1.0);
    tt_val_t ops[2] = {reshape ? tt_shlo_op(f, "stablehlo.reshape", &x, 1, &pt, NULL) : x, one};
    src = tt_shlo_op(f, "stablehlo.add", ops, 2, &pt, NULL);
  }
  tt_val_t sl = tt_shlo_op(f, "stablehlo.slice", &src, 1, &ut,
                           "start_indices = array<i64: 0>, limit_indices = array<i64: 5>, "
                           "strides = array<i64: 1>");
  tt_val_t two = tt_shlo_const(f, &ut, 2.0);
  tt_val_t mops[2] = {sl, two};
  tt_val_t u = tt_shlo_op(f, "stablehlo.multiply", mops, 2, &ut, NULL);
  tt_val_t at = tt_shlo_const_i64(f, &it, 1);
  tt_val_t dops[3] = {p, u, at};
  tt_val_t r = tt_shlo_op(f, "stablehlo.dynamic_update_slice", dops, 3, &pt, NULL);
  tt_status_t st = tt_shlo_fn_finish(f, &r, 1, out);
  tt_shlo_fn_destroy(f);
  return st;
}

static void run_shift(tt_pjrt_t* p) {
  /* {reshape, self_read, rows}: 1x6 and 6x1 (unit dims: the bitcast XLA
   * miscompiled), 2x3, no reshape, and an update of another value */
  const int cases[5][3] = {{1, 1, 1}, {1, 1, 6}, {1, 1, 2}, {0, 1, 1}, {1, 0, 1}};
  for (int c = 0; c < 5; c++) {
    bool reshape = cases[c][0], self_read = cases[c][1];
    tt_sbuf_t text;
    tt_sbuf_init(&text);
    TT_CHECK_OK(build_shift(reshape, self_read, cases[c][2], &text));
    /* the safe form only where the update reads a reshaped operand */
    bool selects = strstr(text.data, "stablehlo.select") != NULL;
    TT_CHECK(selects == (reshape && self_read));
    tt_pjrt_exec_t* ex = NULL;
    TT_CHECK_OK(tt_pjrt_compile(p, text.data, text.len, &ex));
    tt_sbuf_free(&text);
    float x[6] = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f}, got[6], want[6];
    int64_t d[2] = {cases[c][2], 6 / cases[c][2]}, six = 6;
    tt_type_t t = tt_type_make(TT_F32, reshape ? 2 : 1, reshape ? d : &six);
    tt_pjrt_buffer_t *in = NULL, *out = NULL;
    TT_CHECK_OK(tt_pjrt_buffer_from_host(p, 0, x, &t, &in));
    TT_CHECK_OK(tt_pjrt_execute(p, ex, 0, &in, 1, &out, 1));
    TT_CHECK_OK(tt_pjrt_buffer_to_host(p, out, got, sizeof got));
    want[0] = expf(x[0]);
    for (int i = 1; i < 6; i++) want[i] = (self_read ? expf(x[i - 1]) : x[i - 1] + 1.0f) * 2.0f;
    for (int i = 0; i < 6; i++) TT_CHECK(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]));
    tt_pjrt_buffer_destroy(p, out);
    tt_pjrt_buffer_destroy(p, in);
    tt_pjrt_exec_destroy(p, ex);
    if (tt__cur_failed) {
      fprintf(stderr, "  (case %d)\n", c);
      return;
    }
  }
}
static void test_write_reading_its_buffer(void) {
  run_shift(g_new);
  run_shift(g_old);
}

/* ---- divisors whose elements are all equal (XLA multiplies by their reciprocal) ----
 * main(x: f32[64], a: f32[], b: f32[]) -> (x / (bcast(a) - bcast(b)),
 * x / dense<10>, x / bcast(a)): each must equal C's IEEE division bit for bit. */
static tt_status_t build_uniform_divisors(tt_sbuf_t* out) {
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  int64_t n = 64;
  tt_type_t xt = tt_type_make(TT_F32, 1, &n), st = tt_type_scalar(TT_F32);
  tt_val_t x = tt_shlo_param(f, &xt), a = tt_shlo_param(f, &st), b = tt_shlo_param(f, &st);
  tt_val_t ba = tt_shlo_op(f, "stablehlo.broadcast_in_dim", &a, 1, &xt, "broadcast_dimensions = array<i64>");
  tt_val_t bb = tt_shlo_op(f, "stablehlo.broadcast_in_dim", &b, 1, &xt, "broadcast_dimensions = array<i64>");
  tt_val_t sub[2] = {ba, bb};
  tt_val_t width = tt_shlo_op(f, "stablehlo.subtract", sub, 2, &xt, NULL);
  tt_val_t d1[2] = {x, width}, d2[2] = {x, tt_shlo_const(f, &xt, 10.0)}, d3[2] = {x, ba};
  tt_val_t res[3] = {tt_shlo_op(f, "stablehlo.divide", d1, 2, &xt, NULL),
                     tt_shlo_op(f, "stablehlo.divide", d2, 2, &xt, NULL),
                     tt_shlo_op(f, "stablehlo.divide", d3, 2, &xt, NULL)};
  tt_status_t st2 = tt_shlo_fn_finish(f, res, 3, out);
  tt_shlo_fn_destroy(f);
  return st2;
}

static void run_uniform_divisors(tt_pjrt_t* p) {
  tt_sbuf_t text;
  tt_sbuf_init(&text);
  TT_CHECK_OK(build_uniform_divisors(&text));
  TT_CHECK(strstr(text.data, "stablehlo.pad") != NULL);
  tt_pjrt_exec_t* ex = NULL;
  TT_CHECK_OK(tt_pjrt_compile(p, text.data, text.len, &ex));
  tt_sbuf_free(&text);
  if (!ex) return;
  float x[64], a = 3.7f, b = 0.3f, got[3][64];
  for (int i = 0; i < 64; i++) x[i] = (float)(i - 20) * 0.37f + 0.1f * (float)i;
  int64_t n = 64;
  tt_type_t xt = tt_type_make(TT_F32, 1, &n), st = tt_type_scalar(TT_F32);
  tt_pjrt_buffer_t *in[3] = {NULL, NULL, NULL}, *out[3] = {NULL, NULL, NULL};
  TT_CHECK_OK(tt_pjrt_buffer_from_host(p, 0, x, &xt, &in[0]));
  TT_CHECK_OK(tt_pjrt_buffer_from_host(p, 0, &a, &st, &in[1]));
  TT_CHECK_OK(tt_pjrt_buffer_from_host(p, 0, &b, &st, &in[2]));
  TT_CHECK_OK(tt_pjrt_execute(p, ex, 0, in, 3, out, 3));
  int bad = 0;
  float w = a - b;
  for (int k = 0; k < 3; k++) {
    TT_CHECK_OK(tt_pjrt_buffer_to_host(p, out[k], got[k], sizeof got[k]));
    for (int i = 0; i < 64; i++) {
      float want = k == 0 ? x[i] / w : k == 1 ? x[i] / 10.0f : x[i] / a;
      if (memcmp(&got[k][i], &want, sizeof want) != 0 && bad++ < 6) fprintf(stderr, "  k %d i %d got %a want %a\n", k, i, got[k][i], want);
    }
    tt_pjrt_buffer_destroy(p, out[k]);
    tt_pjrt_buffer_destroy(p, in[k]);
  }
  TT_CHECK(bad == 0);
  tt_pjrt_exec_destroy(p, ex);
}
static void test_uniform_divisors(void) {
  run_uniform_divisors(g_new);
  run_uniform_divisors(g_old);
}

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

/* float8 constants are written as PyTorch's conversion from float encodes
 * them: to nearest even, e4m3fn saturating at 448 (inf too), e5m2 to inf,
 * the fnuz types to NaN 0x80 (and no -0); NaN 0x7f with its sign. */
static void test_float8_constants(void) {
  static const struct {
    tt_dtype_t dt;
    double v;
    const char* hex;
  } cases[] = {
      {TT_F8E4M3FN, 1.0, "0x38"},          {TT_F8E4M3FN, 448.0, "0x7E"},      {TT_F8E4M3FN, 464.0, "0x7E"},
      {TT_F8E4M3FN, 1e9, "0x7E"},          {TT_F8E4M3FN, -INFINITY, "0xFE"},  {TT_F8E4M3FN, NAN, "0x7F"},
      {TT_F8E4M3FN, -0.0, "0x80"},         {TT_F8E4M3FN, 0x1p-9, "0x01"},     {TT_F8E4M3FN, 0x1p-10, "0x00"},
      {TT_F8E4M3FN, 0x1.8p-10, "0x01"},    {TT_F8E4M3FN, 1.0625, "0x38"},     {TT_F8E4M3FN, 1.1875, "0x3A"},
      {TT_F8E5M2, 1.0, "0x3C"},            {TT_F8E5M2, 57344.0, "0x7B"},      {TT_F8E5M2, 61440.0, "0x7C"},
      {TT_F8E5M2, -INFINITY, "0xFC"},      {TT_F8E5M2, -NAN, "0xFF"},         {TT_F8E5M2, 0x1p-16, "0x01"},
      {TT_F8E4M3FNUZ, 1.0, "0x40"},        {TT_F8E4M3FNUZ, 240.0, "0x7F"},    {TT_F8E4M3FNUZ, 248.0, "0x80"},
      {TT_F8E4M3FNUZ, -0.0, "0x00"},       {TT_F8E4M3FNUZ, NAN, "0x80"},      {TT_F8E5M2FNUZ, 1.0, "0x40"},
      {TT_F8E5M2FNUZ, 57344.0, "0x7F"},    {TT_F8E5M2FNUZ, INFINITY, "0x80"}, {TT_F8E5M2FNUZ, 0x1p-17, "0x01"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    tt_shlo_fn_t* f = tt_shlo_fn_create();
    tt_type_t t = tt_type_scalar(cases[i].dt);
    tt_val_t c = tt_shlo_const(f, &t, cases[i].v);
    tt_sbuf_t text;
    tt_sbuf_init(&text);
    TT_CHECK_OK(tt_shlo_fn_finish(f, &c, 1, &text));
    char want[64];
    snprintf(want, sizeof want, "dense<%s> : tensor<%s>", cases[i].hex, tt_dtype_mlir(cases[i].dt));
    if (!strstr(text.data, want)) fprintf(stderr, "case %zu: want %s in\n%s\n", i, want, text.data);
    TT_CHECK(strstr(text.data, want) != NULL);
    tt_sbuf_free(&text);
    tt_shlo_fn_destroy(f);
  }
}

int main(void) {
  const char* pn = getenv("TT_TEST_PLUGIN_NEW");
  const char* po = getenv("TT_TEST_PLUGIN_OLD");
  TT_RUN(test_float8_constants);
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
  TT_RUN(test_write_reading_its_buffer);
  TT_RUN(test_uniform_divisors);
  tt_pjrt_close(g_new);
  tt_pjrt_close(g_old);
  TT_REPORT();
}
