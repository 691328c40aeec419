/* Tests of the PJRT layer against both real CPU plugins (API 0.115 and 0.81),
 * three fake plugins that must be refused, and discovery over fake site
 * directories. Env: TT_TEST_PLUGIN_NEW, TT_TEST_PLUGIN_OLD (plugin paths),
 * TT_TEST_FAKE_DIR (the fake plugins). A missing variable skips its tests.
 * Each real plugin is opened once (2 CPU devices) and shared by the tests. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../pjrt/tt_pjrt.h"
#include "tt_test.h"

static tt_pjrt_t* g_plugins[2]; /* [0] API 0.115, [1] API 0.81; NULL: skipped */
static const char* g_names[2] = {"new (0.115)", "old (0.81)"};

/* Runs check(p) on every opened plugin; stops at the first failure. */
#define FOR_EACH_PLUGIN(check)                                             \
  do {                                                                     \
    for (int i_ = 0; i_ < 2; i_++) {                                       \
      if (!g_plugins[i_]) continue;                                        \
      check(g_plugins[i_]);                                                \
      if (tt__cur_failed) {                                                \
        fprintf(stderr, "  (with the %s plugin)\n", g_names[i_]);          \
        return;                                                            \
      }                                                                    \
    }                                                                      \
  } while (0)

static const char k_add[] =
    "func.func public @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<2x3xf32>\n"
    "  return %0 : tensor<2x3xf32>\n"
    "}\n";

static const char k_two_outputs[] =
    "func.func public @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, "
    "tensor<3xf32>) {\n"
    "  %0 = stablehlo.add %a, %b : tensor<2x3xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : "
    "(tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
    "  return %0, %1 : tensor<2x3xf32>, tensor<3xf32>\n"
    "}\n";

static const char k_bad[] =
    "func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = stablehlo.frobnicate %a : tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n"
    "}\n";

static const float k_a[6] = {1.5f, -2.0f, 3.25f, 0.0f, 100.0f, -7.5f};
static const float k_b[6] = {0.5f, 2.0f, -1.25f, 8.0f, 0.125f, 7.5f};

/* ---- info -------------------------------------------------------------------- */
static void check_info(tt_pjrt_t* p) {
  const tt_pjrt_info_t* info = tt_pjrt_get_info(p);
  TT_CHECK(info != NULL);
  printf("  %s: API %d.%d, platform %s (%s), %d device(s) of kind \"%s\", stablehlo %s..%s\n",
         info->plugin_path, info->api_major, info->api_minor, info->platform_name,
         info->platform_version, info->num_devices, info->device_kind, info->stablehlo_minimum,
         info->stablehlo_current);
  TT_CHECK(info->api_major == 0 && info->api_minor >= 81);
  TT_CHECK(!strcmp(info->platform_name, "cpu"));
  TT_CHECK(info->num_devices == 2);
}
static void test_info(void) {
  FOR_EACH_PLUGIN(check_info);
  if (g_plugins[0] && g_plugins[1]) {
    TT_CHECK(tt_pjrt_get_info(g_plugins[0])->api_minor > tt_pjrt_get_info(g_plugins[1])->api_minor);
    TT_CHECK(tt_pjrt_get_info(g_plugins[0])->stablehlo_current[0] != 0);
  }
}

/* ---- compile + execute --------------------------------------------------------- */
/* a+b on `device`; with two_outputs also the column sums. */
static void run_add(tt_pjrt_t* p, int device, bool two_outputs) {
  const char* code = two_outputs ? k_two_outputs : k_add;
  tt_pjrt_exec_t* e = NULL;
  TT_CHECK_OK(tt_pjrt_compile(p, code, strlen(code), &e));
  size_t nout = tt_pjrt_exec_num_outputs(p, e);
  TT_CHECK(nout == (two_outputs ? 2u : 1u));
  int64_t dims[2] = {2, 3};
  tt_type_t t = tt_type_make(TT_F32, 2, dims);
  tt_pjrt_buffer_t *a = NULL, *b = NULL, *outs[2] = {NULL, NULL};
  tt_status_t st = tt_pjrt_buffer_from_host(p, device, k_a, &t, &a);
  if (!st) st = tt_pjrt_buffer_from_host(p, device, k_b, &t, &b);
  tt_pjrt_buffer_t* args[2] = {a, b};
  if (!st) st = tt_pjrt_execute(p, e, device, args, 2, outs, nout);
  float sum[6] = {0}, cols[3] = {0};
  if (!st) st = tt_pjrt_buffer_to_host(p, outs[0], sum, sizeof(sum));
  if (!st && two_outputs) st = tt_pjrt_buffer_to_host(p, outs[1], cols, sizeof(cols));
  bool ready = !st && tt_pjrt_buffer_is_ready(p, outs[0]);
  tt_type_t ot = {0};
  if (!st && two_outputs) st = tt_pjrt_buffer_type(p, outs[1], &ot);
  tt_pjrt_buffer_destroy(p, a);
  tt_pjrt_buffer_destroy(p, b);
  tt_pjrt_buffer_destroy(p, outs[0]);
  tt_pjrt_buffer_destroy(p, outs[1]);
  tt_pjrt_exec_destroy(p, e);
  TT_CHECK_OK(st);
  TT_CHECK(ready);
  for (int i = 0; i < 6; i++) TT_CHECK(sum[i] == k_a[i] + k_b[i]);
  if (two_outputs) {
    TT_CHECK(ot.dtype == TT_F32 && ot.rank == 1 && ot.dims[0] == 3);
    for (int j = 0; j < 3; j++) TT_CHECK(cols[j] == (k_a[j] + k_b[j]) + (k_a[3 + j] + k_b[3 + j]));
  }
}
static void check_add(tt_pjrt_t* p) { run_add(p, 0, false); }
static void check_two_outputs(tt_pjrt_t* p) { run_add(p, 0, true); }
static void check_device1(tt_pjrt_t* p) { run_add(p, 1, true); }
static void test_add(void) { FOR_EACH_PLUGIN(check_add); }
static void test_two_outputs(void) { FOR_EACH_PLUGIN(check_two_outputs); }
static void test_execute_on_device1(void) { FOR_EACH_PLUGIN(check_device1); }

/* Misuse is refused with a status, not a crash. */
static void check_misuse(tt_pjrt_t* p) {
  tt_pjrt_exec_t* e = NULL;
  TT_CHECK_OK(tt_pjrt_compile(p, k_add, strlen(k_add), &e));
  int64_t dims[2] = {2, 3};
  tt_type_t t = tt_type_make(TT_F32, 2, dims);
  tt_pjrt_buffer_t* a = NULL;
  tt_status_t st = tt_pjrt_buffer_from_host(p, 0, k_a, &t, &a);
  tt_pjrt_buffer_t *args[2] = {a, a}, *outs[2] = {NULL, NULL};
  tt_status_t wrong_nouts = st ? NULL : tt_pjrt_execute(p, e, 0, args, 2, outs, 2);
  tt_status_t bad_device = st ? NULL : tt_pjrt_execute(p, e, 7, args, 2, outs, 1);
  /* arguments on device 0, execution on device 1: the plugin refuses */
  tt_status_t mixed = st ? NULL : tt_pjrt_execute(p, e, 1, args, 2, outs, 1);
  float small[2];
  tt_status_t bad_size = st ? NULL : tt_pjrt_buffer_to_host(p, a, small, sizeof(small));
  tt_status_t bad_from = tt_pjrt_buffer_from_host(p, 5, k_a, &t, &outs[1]);
  tt_pjrt_buffer_destroy(p, a);
  tt_pjrt_exec_destroy(p, e);
  bool ok = wrong_nouts && bad_device && mixed && bad_size && bad_from && !outs[0] && !outs[1] &&
            tt_status_code(bad_size) == TT_INVALID_ARGUMENT &&
            strstr(tt_status_message(bad_device), "device 7");
  tt_status_free(wrong_nouts);
  tt_status_free(bad_device);
  tt_status_free(mixed);
  tt_status_free(bad_size);
  tt_status_free(bad_from);
  TT_CHECK_OK(st);
  TT_CHECK(ok);
}
static void test_misuse(void) { FOR_EACH_PLUGIN(check_misuse); }

/* ---- every dtype host -> device -> host --------------------------------------------- */
static void check_dtypes(tt_pjrt_t* p) {
  static const tt_dtype_t dts[] = {TT_BOOL, TT_U8,   TT_I8,  TT_I16, TT_I32,
                                   TT_I64,  TT_F16, TT_BF16, TT_F32, TT_F64};
  static const uint16_t f16_bits[6] = {0x3C00, 0xC000, 0x3555, 0x0001, 0x7BFF, 0x8000};
  static const uint16_t bf16_bits[6] = {0x3F80, 0xC000, 0x4049, 0x0001, 0x7F7F, 0x8000};
  static const double f64[6] = {1.0, -2.5, 3.141592653589793, 1e-300, -1e300, 0.0};
  for (size_t k = 0; k < sizeof(dts) / sizeof(dts[0]); k++) {
    tt_dtype_t dt = dts[k];
    size_t es = tt_dtype_size(dt), n = 6, nb = n * es;
    unsigned char src[48], dst[48];
    for (size_t i = 0; i < nb; i++) src[i] = (unsigned char)(i * 37 + 11 + k);
    if (dt == TT_BOOL)
      for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i % 2);
    if (dt == TT_F16) memcpy(src, f16_bits, nb);
    if (dt == TT_BF16) memcpy(src, bf16_bits, nb);
    if (dt == TT_F32) memcpy(src, k_a, nb);
    if (dt == TT_F64) memcpy(src, f64, nb);
    int64_t dims[2] = {3, 2};
    tt_type_t t = tt_type_make(dt, 2, dims), got = {0};
    tt_pjrt_buffer_t* b = NULL;
    memset(dst, 0xAB, sizeof(dst));
    tt_status_t st = tt_pjrt_buffer_from_host(p, 1, src, &t, &b);
    if (!st) st = tt_pjrt_buffer_await(p, b);
    if (!st) st = tt_pjrt_buffer_type(p, b, &got);
    if (!st) st = tt_pjrt_buffer_to_host(p, b, dst, nb);
    /* the CPU plugins' buffers are host memory, dense: readable in place */
    const void* addr = st ? NULL : tt_pjrt_buffer_host_address(p, b);
    TT_CHECK(addr != NULL || !tt_env_flag(TT_ENV_HOST_ADDRESS_READS));
    if (addr && memcmp(addr, src, nb)) fprintf(stderr, "  dtype %s: host address holds other bytes\n", tt_dtype_name(dt));
    TT_CHECK(!addr || memcmp(addr, src, nb) == 0);
    tt_pjrt_buffer_destroy(p, b);
    if (st) fprintf(stderr, "  dtype %s:\n", tt_dtype_name(dt));
    TT_CHECK_OK(st);
    if (!tt_type_equal(&got, &t) || memcmp(src, dst, nb))
      fprintf(stderr, "  dtype %s did not round-trip\n", tt_dtype_name(dt));
    TT_CHECK(tt_type_equal(&got, &t));
    TT_CHECK(memcmp(src, dst, nb) == 0);
  }
  /* a scalar and an empty array */
  int64_t zero_dims[2] = {0, 3};
  tt_type_t scalar = tt_type_scalar(TT_I64), empty = tt_type_make(TT_F32, 2, zero_dims);
  int64_t v = -1234567890123LL, w = 0;
  tt_pjrt_buffer_t *bs = NULL, *be = NULL;
  tt_status_t st = tt_pjrt_buffer_from_host(p, 0, &v, &scalar, &bs);
  if (!st) st = tt_pjrt_buffer_to_host(p, bs, &w, sizeof(w));
  if (!st) st = tt_pjrt_buffer_from_host(p, 0, k_a, &empty, &be);
  if (!st) st = tt_pjrt_buffer_to_host(p, be, NULL, 0);
  tt_pjrt_buffer_destroy(p, bs);
  tt_pjrt_buffer_destroy(p, be);
  TT_CHECK_OK(st);
  TT_CHECK(w == v);
}
static void test_dtypes(void) { FOR_EACH_PLUGIN(check_dtypes); }

/* ---- a bad program --------------------------------------------------------------- */
static void check_bad_program(tt_pjrt_t* p) {
  tt_pjrt_exec_t* e = NULL;
  tt_status_t st = tt_pjrt_compile(p, k_bad, strlen(k_bad), &e);
  TT_CHECK(st != NULL && e == NULL);
  const char* msg = tt_status_message(st);
  printf("  compile error: %.300s\n", msg);
  bool ok = msg[0] && strstr(msg, "frobnicate") && strstr(msg, "Client_Compile");
  tt_status_free(st);
  TT_CHECK(ok);
}
static void test_bad_program(void) { FOR_EACH_PLUGIN(check_bad_program); }

/* ---- fake plugins are refused ------------------------------------------------------ */
static void expect_refused(const char* file, const char* word) {
  const char* dir = getenv("TT_TEST_FAKE_DIR");
  if (!dir) return;
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  tt_pjrt_t* p = NULL;
  tt_status_t st = tt_pjrt_open(path, 1, &p);
  TT_CHECK(st != NULL && p == NULL);
  const char* msg = tt_status_message(st);
  printf("  %s: %s\n", file, msg);
  bool ok = strstr(msg, word) && strstr(msg, path);
  tt_status_free(st);
  TT_CHECK(ok);
}
static void test_fake_plugins(void) {
  expect_refused("fake_major.so", "version 1.0");
  if (tt__cur_failed) return;
  expect_refused("fake_short.so", "slot");
  if (tt__cur_failed) return;
  expect_refused("fake_nosym.so", "GetPjrtApi");
  if (tt__cur_failed) return;
  expect_refused("does_not_exist.so", "cannot load");
}

/* ---- discovery ----------------------------------------------------------------------- */
static void touch(const char* root, const char* rel) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  for (char* s = path + 1; (s = strchr(s, '/')); s++) {
    *s = 0;
    mkdir(path, 0700);
    *s = '/';
  }
  FILE* f = fopen(path, "w");
  if (f) fclose(f);
}
static int rm_entry(const char* path, const struct stat* sb, int flag, struct FTW* ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* discover -> *found (or the status message if not found); returns the code;
 * g_found_platform: the platform discovery named ("" for none) */
static char g_found_platform[8];
static tt_code_t discover(const char* const* dirs, int n, char* found, size_t cap) {
  tt_sbuf_t out;
  tt_sbuf_init(&out);
  const char* platform = NULL;
  tt_status_t st = tt_pjrt_discover_platform(dirs, n, &out, &platform);
  snprintf(g_found_platform, sizeof(g_found_platform), "%s", platform ? platform : "");
  tt_code_t code = tt_status_code(st);
  snprintf(found, cap, "%s", st ? tt_status_message(st) : out.data ? out.data : "");
  tt_status_free(st);
  tt_sbuf_free(&out);
  return code;
}

static void test_discover(void) {
  char root[] = "/tmp/tt_discover_XXXXXX";
  TT_CHECK(mkdtemp(root) != NULL);
  char s1[600], s2[600], s3[600], got[2048], want[1024];
  snprintf(s1, sizeof(s1), "%s/site1", root);
  snprintf(s2, sizeof(s2), "%s/site2", root);
  snprintf(s3, sizeof(s3), "%s/empty", root);
  touch(s1, "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
  touch(s2, "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so");
  touch(s2, "libtpu/libtpu.so");
  touch(root, "my/plugin.so");
  mkdir(s3, 0700);
  unsetenv("TORCH_TPU_PJRT_PLUGIN");
  unsetenv("TORCH_TPU_PJRT_PLATFORM");
  unsetenv("TPU_LIBRARY_PATH");
  const char* both[2] = {s1, s2};
  const char* only1[1] = {s1};
  const char* none[1] = {s3};
  int fails = 0;
#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "  FAIL %s:%d: %s (got: %s)\n", __FILE__, __LINE__, #cond, got); \
      fails++;                                                           \
    }                                                                    \
  } while (0)
  /* libtpu beats the CPU plugins */
  EXPECT(discover(both, 2, got, sizeof(got)) == TT_OK && strstr(got, "site2/libtpu/libtpu.so"));
  EXPECT(!strcmp(g_found_platform, "tpu"));
  /* cpu only: lammps (in the 2nd dir) beats xla_cpu_pjrt (in the 1st) */
  setenv("TORCH_TPU_PJRT_PLATFORM", "cpu", 1);
  snprintf(want, sizeof(want), "%s/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so", s2);
  EXPECT(discover(both, 2, got, sizeof(got)) == TT_OK && !strcmp(got, want));
  EXPECT(!strcmp(g_found_platform, "cpu"));
  snprintf(want, sizeof(want), "%s/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so", s1);
  EXPECT(discover(only1, 1, got, sizeof(got)) == TT_OK && !strcmp(got, want));
  /* a TPU_LIBRARY_PATH is skipped when the platform is cpu, taken otherwise */
  snprintf(want, sizeof(want), "%s/my/plugin.so", root);
  setenv("TPU_LIBRARY_PATH", want, 1);
  EXPECT(discover(only1, 1, got, sizeof(got)) == TT_OK && strstr(got, "xla_cpu_pjrt.so"));
  unsetenv("TORCH_TPU_PJRT_PLATFORM");
  EXPECT(discover(only1, 1, got, sizeof(got)) == TT_OK && !strcmp(got, want));
  unsetenv("TPU_LIBRARY_PATH");
  /* gpu: no CUDA plugin in these dirs */
  setenv("TORCH_TPU_PJRT_PLATFORM", "gpu", 1);
  EXPECT(discover(both, 2, got, sizeof(got)) == TT_NOT_FOUND && strstr(got, "pip install"));
  setenv("TORCH_TPU_PJRT_PLATFORM", "quantum", 1);
  EXPECT(discover(both, 2, got, sizeof(got)) == TT_INVALID_ARGUMENT);
  unsetenv("TORCH_TPU_PJRT_PLATFORM");
  /* nothing at all */
  EXPECT(discover(none, 1, got, sizeof(got)) == TT_NOT_FOUND &&
         strstr(got, "no PJRT plugin was found") &&
         strstr(got, "pip install lammps-jax-pjrt-cpu==0.11.2") &&
         strstr(got, "pip install libtpu") && strstr(got, "TORCH_TPU_PJRT_PLUGIN"));
  /* an explicit plugin wins, and a missing one is an error */
  setenv("TORCH_TPU_PJRT_PLUGIN", want, 1);
  EXPECT(discover(both, 2, got, sizeof(got)) == TT_OK && !strcmp(got, want));
  EXPECT(!strcmp(g_found_platform, "")); /* the user's file: not known before loading it */
  setenv("TORCH_TPU_PJRT_PLUGIN", "/nonexistent/plugin.so", 1);
  EXPECT(discover(both, 2, got, sizeof(got)) == TT_NOT_FOUND &&
         strstr(got, "TORCH_TPU_PJRT_PLUGIN=/nonexistent/plugin.so"));
  unsetenv("TORCH_TPU_PJRT_PLUGIN");
#undef EXPECT
  nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  TT_CHECK(fails == 0);
}

int main(void) {
  const char* paths[2] = {getenv("TT_TEST_PLUGIN_NEW"), getenv("TT_TEST_PLUGIN_OLD")};
  for (int i = 0; i < 2; i++) {
    if (!paths[i] || !*paths[i]) {
      printf("skip   the %s plugin: TT_TEST_PLUGIN_%s is not set\n", g_names[i],
             i ? "OLD" : "NEW");
      continue;
    }
    tt_status_t st = tt_pjrt_open(paths[i], 2, &g_plugins[i]);
    if (st) {
      printf("FAILED opening %s: %s\n", paths[i], tt_status_message(st));
      tt_status_free(st);
      tt__failed++;
    }
  }
  TT_RUN(test_info);
  TT_RUN(test_add);
  TT_RUN(test_two_outputs);
  TT_RUN(test_execute_on_device1);
  TT_RUN(test_misuse);
  TT_RUN(test_dtypes);
  TT_RUN(test_bad_program);
  TT_RUN(test_fake_plugins);
  TT_RUN(test_discover);
  for (int i = 0; i < 2; i++) tt_pjrt_close(g_plugins[i]);
  TT_REPORT();
}
