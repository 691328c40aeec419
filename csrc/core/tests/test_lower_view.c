/* The view program (lower/view/view_program.c): randomized reads and writes
 * through strided views, many per program: thousands of view cases for a few
 * compiles (test_runtime_view_fuzz.c, through the runtime, compiles about one
 * program per case). Each batch is one program over a storage
 * buffer (i32 [N_I32], 8 KiB): a chain of random steps, each a read of the
 * current buffer through a random view (a result of the program) or a write
 * of a parameter value through a random non-overlapping view (the buffer the
 * next steps see). The final buffer is a result as well. A host model of the
 * storage bytes checks every read and the final bytes.
 *
 * Views: ranks 0-8, sizes 0-3, permuted, gapped and broadcast (stride 0)
 * strides, any offset, the view's dtype u8/i8/i16/i32/i64 over the storage's
 * bytes (a write of another element size retypes the buffer, as a PyTorch
 * storage written through a view of another dtype), PyTorch's neg bit, and
 * the offset static or a program parameter (the runtime's dynamic offset).
 * This drives the view code inside programs directly (tt_view_read /
 * tt_view_write), not through the runtime's executable cache.
 *
 * Fixed seed. TT_VIEW_BATCHES (default 48) batches of TT_VIEW_STEPS (default
 * 48) steps on the default plugin, a quarter of the batches on the old one. */
#include <stdint.h>

#include "../pjrt/tt_pjrt.h"
#include "../runtime/internal.h"
#include "../shlo/tt_shlo.h"
#include "tt_test.h"

#define N_BYTES 8192
#define N_I32 (N_BYTES / 4)
#define MAX_STEPS 128

static uint64_t g_seed = 0x2545f4914f6cdd1dull;
static uint32_t rnd(uint32_t n) { /* xorshift64*, [0, n) */
  g_seed ^= g_seed >> 12;
  g_seed ^= g_seed << 25;
  g_seed ^= g_seed >> 27;
  return (uint32_t)((g_seed * 0x2545f4914f6cdd1dull) >> 33) % n;
}

static const tt_dtype_t k_dtypes[] = {TT_U8, TT_I8, TT_I16, TT_I32, TT_I32, TT_I64};

typedef struct step {
  bool write;
  bool dyn_offset;  /* the offset is a parameter of the program */
  tt_view_t v;      /* storage NULL: the view code reads only the layout */
  int64_t numel;
  size_t esize;
  unsigned char* value; /* owned; write: numel * esize bytes, row-major */
  int out;          /* read: index of its result */
} step_t;

/* Storage element index (in units of the view's dtype) of the view's i-th
 * element in row-major order. */
static int64_t elem_at(const tt_view_t* v, int64_t i) {
  int64_t e = v->offset;
  for (int d = v->rank - 1; d >= 0; d--) {
    e += (i % v->sizes[d]) * v->strides[d];
    i /= v->sizes[d];
  }
  return e;
}

static bool overlaps(const tt_view_t* v, int64_t numel) {
  static unsigned char seen[N_BYTES];
  memset(seen, 0, sizeof(seen));
  for (int64_t i = 0; i < numel; i++) {
    int64_t e = elem_at(v, i);
    if (seen[e]) return true;
    seen[e] = 1;
  }
  return false;
}

/* A random view of the storage's bytes, at most RANDOM_MOVING_DIMS of its
 * dims of size other than 1; for_write: its elements do not overlap. */
#define RANDOM_MOVING_DIMS 8
static tt_view_t random_view(int rank, bool for_write) {
  for (;;) {
    tt_view_t v;
    memset(&v, 0, sizeof(v));
    v.dtype = k_dtypes[rnd(sizeof(k_dtypes) / sizeof(k_dtypes[0]))];
    v.rank = rank;
    int64_t cap = N_BYTES / (int64_t)tt_dtype_size(v.dtype);
    int order[TT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
      v.sizes[d] = rnd(40) == 0 ? 0 : 1 + rnd(3);
      order[d] = d;
    }
    for (int d = rank - 1; d > 0; d--) {
      int j = (int)rnd((uint32_t)d + 1), t = order[d];
      order[d] = order[j];
      order[j] = t;
    }
    for (int j = RANDOM_MOVING_DIMS; j < rank; j++) v.sizes[order[j]] = 1; /* the span fits */
    int64_t acc = 1;
    for (int j = rank - 1; j >= 0; j--) {
      int d = order[j];
      if (rnd(10) == 0) {
        v.strides[d] = 0;
        continue;
      }
      v.strides[d] = acc * (rnd(4) == 0 ? 2 : 1);
      acc = v.strides[d] * (v.sizes[d] ? v.sizes[d] : 1) + (rnd(3) == 0 ? 1 : 0);
    }
    int64_t span = 1, numel = 1;
    for (int d = 0; d < rank; d++) {
      numel *= v.sizes[d];
      if (v.sizes[d]) span += (v.sizes[d] - 1) * v.strides[d];
    }
    if (span > cap) continue;
    v.offset = (int64_t)rnd((uint32_t)(cap - span + 1));
    v.neg = rnd(8) == 0;
    if (for_write && overlaps(&v, numel)) continue;
    return v;
  }
}

/* -x in `size` bytes of two's complement, in place. */
static void negate(unsigned char* p, size_t size) {
  uint64_t x = 0;
  memcpy(&x, p, size); /* little-endian */
  x = 0 - x;
  memcpy(p, &x, size);
}

static int g_cases;
static double g_compile_s;

/* One batch on plugin p: returns through TT_CHECK. */
static void run_batch(tt_pjrt_t* p, int batch, int nsteps) {
  static unsigned char model[N_BYTES], init[N_BYTES];
  for (int i = 0; i < N_BYTES; i++) init[i] = (unsigned char)rnd(256);
  memcpy(model, init, sizeof(model));
  step_t steps[MAX_STEPS];
  memset(steps, 0, sizeof(steps));
  tt_pjrt_buffer_t* args[1 + 2 * MAX_STEPS] = {0};
  tt_pjrt_buffer_t* outs[MAX_STEPS + 1] = {0};
  size_t nargs = 0, nouts = 0;
  tt_pjrt_exec_t* ex = NULL;
  tt_sbuf_t text;
  tt_sbuf_init(&text);
  tt_shlo_fn_t* f = tt_shlo_fn_create();
  tt_status_t st = NULL;

  int64_t n32 = N_I32;
  tt_type_t bt = tt_type_make(TT_I32, 1, &n32);
  tt_val_t cur = tt_shlo_param(f, &bt);
  st = tt_pjrt_buffer_from_host(p, 0, init, &bt, &args[nargs++]);
  tt_val_t results[MAX_STEPS + 1];
  int nres = 0;
  for (int i = 0; i < nsteps && !st; i++) {
    step_t* s = &steps[i];
    s->write = rnd(3) == 0;
    /* ranks 0..8 mostly, 9..TT_MAX_RANK in one view of four (their programs compile slowly) */
    int rank = rnd(4) == 0 ? 9 + (int)rnd(TT_MAX_RANK - 8) : (int)rnd(9);
    s->v = random_view(rank, s->write);
    s->numel = tt_view_numel(&s->v);
    s->esize = tt_dtype_size(s->v.dtype);
    s->dyn_offset = rnd(4) == 0;
    tt_val_t off = TT_SHLO_INVALID;
    if (s->dyn_offset) {
      tt_type_t ot = tt_type_scalar(TT_I64);
      off = tt_shlo_param(f, &ot);
      st = tt_pjrt_buffer_from_host(p, 0, &s->v.offset, &ot, &args[nargs++]);
    }
    tt_type_t vt = tt_type_make(s->v.dtype, s->v.rank, s->v.sizes);
    if (s->write) {
      size_t nb = (size_t)s->numel * s->esize;
      s->value = malloc(nb ? nb : 1);
      for (size_t b = 0; b < nb; b++) s->value[b] = (unsigned char)rnd(256);
      tt_val_t val = tt_shlo_param(f, &vt);
      if (!st) st = tt_pjrt_buffer_from_host(p, 0, s->value, &vt, &args[nargs++]);
      cur = tt_view_write(f, cur, &s->v, off, val);
    } else {
      s->out = nres;
      results[nres++] = tt_view_read(f, cur, &s->v, off);
    }
  }
  results[nres++] = cur;
  if (!st) st = tt_shlo_fn_finish(f, results, nres, &text);
  double t0 = tt__now();
  if (!st) st = tt_pjrt_compile(p, text.data, text.len, &ex);
  g_compile_s += tt__now() - t0;
  if (!st) {
    nouts = (size_t)nres;
    st = tt_pjrt_execute(p, ex, 0, args, nargs, outs, nouts);
    if (st) nouts = 0;
  }
  /* the host model, step by step; every read checked against its result */
  static unsigned char got[N_BYTES * 8];
  for (int i = 0; i < nsteps && !st; i++) {
    step_t* s = &steps[i];
    const tt_view_t* v = &s->v;
    if (s->write) {
      for (int64_t e = 0; e < s->numel; e++) {
        unsigned char* dst = model + elem_at(v, e) * (int64_t)s->esize;
        memcpy(dst, s->value + e * (int64_t)s->esize, s->esize);
        if (v->neg) negate(dst, s->esize);
      }
    } else {
      size_t nb = (size_t)s->numel * s->esize;
      st = tt_pjrt_buffer_to_host(p, outs[s->out], got, nb);
      for (int64_t e = 0; e < s->numel && !st; e++) {
        unsigned char want[8];
        memcpy(want, model + elem_at(v, e) * (int64_t)s->esize, s->esize);
        if (v->neg) negate(want, s->esize);
        if (memcmp(want, got + e * (int64_t)s->esize, s->esize)) {
          st = tt_status_make(TT_INTERNAL,
                              "batch %d step %d: read of %s rank %d offset %lld%s%s: element %lld differs",
                              batch, i, tt_dtype_name(v->dtype), v->rank, (long long)v->offset,
                              s->dyn_offset ? " (dynamic)" : "", v->neg ? " neg" : "", (long long)e);
        }
      }
    }
    g_cases++;
  }
  if (!st) {
    const tt_type_t* ft = tt_shlo_type(f, cur);
    size_t nb = (size_t)ft->dims[0] * tt_dtype_size(ft->dtype);
    if (nb != N_BYTES) st = tt_status_make(TT_INTERNAL, "batch %d: final buffer has %zu bytes", batch, nb);
    if (!st) st = tt_pjrt_buffer_to_host(p, outs[nres - 1], got, nb);
    if (!st && memcmp(got, model, N_BYTES))
      st = tt_status_make(TT_INTERNAL, "batch %d: the storage after the writes differs", batch);
  }
  if (st) {
    const char* dump = getenv("TT_VIEW_DUMP"); /* a file for the failing program's text */
    FILE* fp = dump ? fopen(dump, "w") : NULL;
    if (fp) {
      fwrite(text.data, 1, text.len, fp);
      fclose(fp);
    }
  }
  for (size_t i = 0; i < nouts; i++) tt_pjrt_buffer_destroy(p, outs[i]);
  for (size_t i = 0; i < nargs; i++) tt_pjrt_buffer_destroy(p, args[i]);
  for (int i = 0; i < nsteps; i++) free(steps[i].value);
  tt_pjrt_exec_destroy(p, ex);
  tt_shlo_fn_destroy(f);
  tt_sbuf_free(&text);
  TT_CHECK_OK(st);
}

static int env_int(const char* name, int def, int lo, int hi) {
  const char* e = getenv(name);
  int n = e ? atoi(e) : def;
  return n < lo ? lo : n > hi ? hi : n;
}

static tt_pjrt_t* g_plugin;
static int g_batches, g_steps;

static void test_view_batches(void) {
  for (int b = 0; b < g_batches && !tt__cur_failed; b++) run_batch(g_plugin, b, g_steps);
}

/* Writes through views that are strided windows of the buffer (transposed,
 * stepped, narrowed + permuted, one reaching past the window's parent and one
 * ending before the buffer's end) lower to dynamic_update_slice, not to a
 * scatter, and write the elements a host model says. */
static void test_window_writes(void) {
  typedef struct {
    int rank;
    int64_t sizes[3], strides[3], offset;
  } wcase_t;
  static const wcase_t cases[] = {
      {2, {8, 8}, {1, 8}, 0},            /* t() of all 64 */
      {2, {4, 4}, {8, 2}, 1},            /* [:4, 1::2] as 4x4 (steps) */
      {3, {2, 3, 2}, {8, 16, 1}, 2},     /* narrowed and permuted */
      {2, {3, 5}, {1, 12}, 12},          /* transposed; its parent passes the end */
      {2, {2, 2}, {16, 2}, 3},           /* ends well before the buffer's end */
  };
  for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]) && !tt__cur_failed; ci++) {
    const wcase_t* wc = &cases[ci];
    tt_view_t v;
    memset(&v, 0, sizeof(v));
    v.dtype = TT_I32;
    v.rank = wc->rank;
    v.offset = wc->offset;
    for (int d = 0; d < wc->rank; d++) {
      v.sizes[d] = wc->sizes[d];
      v.strides[d] = wc->strides[d];
    }
    int64_t n = 64, numel = tt_view_numel(&v);
    int32_t init[64], vals[64], want[64], got[64];
    for (int i = 0; i < 64; i++) init[i] = want[i] = 1000 + i;
    for (int64_t e = 0; e < numel; e++) {
      int64_t at = elem_at(&v, e);
      TT_CHECK(at >= 0 && at < n); /* the cases stay inside the buffer */
      vals[e] = -(int32_t)e - 1;
      want[at] = vals[e];
    }
    tt_shlo_fn_t* f = tt_shlo_fn_create();
    tt_type_t bt = tt_type_make(TT_I32, 1, &n), vt = tt_type_make(TT_I32, v.rank, v.sizes);
    tt_val_t base = tt_shlo_param(f, &bt), val = tt_shlo_param(f, &vt);
    tt_val_t out = tt_view_write(f, base, &v, TT_SHLO_INVALID, val);
    tt_sbuf_t text;
    tt_sbuf_init(&text);
    tt_pjrt_exec_t* ex = NULL;
    tt_pjrt_buffer_t *args[2] = {0}, *res = NULL;
    tt_status_t st = tt_shlo_fn_finish(f, &out, 1, &text);
    if (!st && strstr(text.data, "stablehlo.scatter"))
      st = tt_status_make(TT_INTERNAL, "case %zu: a window write lowered to a scatter", ci);
    if (!st && !strstr(text.data, "stablehlo.dynamic_update_slice"))
      st = tt_status_make(TT_INTERNAL, "case %zu: no dynamic_update_slice", ci);
    if (!st) st = tt_pjrt_buffer_from_host(g_plugin, 0, init, &bt, &args[0]);
    if (!st) st = tt_pjrt_buffer_from_host(g_plugin, 0, vals, &vt, &args[1]);
    if (!st) st = tt_pjrt_compile(g_plugin, text.data, text.len, &ex);
    if (!st) st = tt_pjrt_execute(g_plugin, ex, 0, args, 2, &res, 1);
    if (!st) st = tt_pjrt_buffer_to_host(g_plugin, res, got, sizeof(got));
    if (!st && memcmp(got, want, sizeof(got)))
      st = tt_status_make(TT_INTERNAL, "case %zu: the buffer after the write differs", ci);
    if (res) tt_pjrt_buffer_destroy(g_plugin, res);
    for (int i = 0; i < 2; i++)
      if (args[i]) tt_pjrt_buffer_destroy(g_plugin, args[i]);
    tt_pjrt_exec_destroy(g_plugin, ex);
    tt_shlo_fn_destroy(f);
    tt_sbuf_free(&text);
    TT_CHECK_OK(st);
  }
}

static tt_pjrt_t* open_plugin(const char* env) {
  const char* path = getenv(env);
  tt_pjrt_t* p = NULL;
  tt_status_t s = path ? tt_pjrt_open(path, 1, &p) : tt_status_make(TT_NOT_FOUND, "%s not set", env);
  if (s) {
    fprintf(stderr, "open: %s\n", tt_status_message(s));
    tt_status_free(s);
    tt__failed++;
  }
  return p;
}

int main(void) {
  int batches = env_int("TT_VIEW_BATCHES", 48, 1, 100000);
  g_steps = env_int("TT_VIEW_STEPS", 48, 1, MAX_STEPS);
  g_plugin = open_plugin("TT_TEST_PLUGIN_NEW");
  if (g_plugin) {
    g_batches = batches;
    TT_RUN(test_view_batches);
    TT_RUN(test_window_writes);
    tt_pjrt_close(g_plugin);
  }
  g_plugin = open_plugin("TT_TEST_PLUGIN_OLD");
  if (g_plugin) {
    g_batches = (batches + 3) / 4;
    TT_RUN(test_view_batches);
    tt_pjrt_close(g_plugin);
  }
  printf("%d view steps checked (%.1f s compiling)\n", g_cases, g_compile_s);
  TT_REPORT();
}
