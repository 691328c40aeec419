/* Randomized reads / writes / copies through strided views (ranks 0-8:
 * permuted, gapped, broadcast (stride 0), offset) against a host model of
 * the storage, through the runtime API only (tt_view_read_host,
 * tt_view_write_host, tt_runtime_copy). Fixed seed; TT_VIEW_FUZZ_CASES
 * sets the count (default 160). */
#include "runtime_test_util.h"

#define N_ELEMS 2048

static uint64_t g_seed = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) { /* xorshift64*, [0, n) */
  g_seed ^= g_seed >> 12;
  g_seed ^= g_seed << 25;
  g_seed ^= g_seed >> 27;
  return (uint32_t)((g_seed * 0x2545f4914f6cdd1dull) >> 33) % n;
}

/* A random view of `rank` dims fitting N_ELEMS elements, at most
 * FUZZ_MOVING_DIMS of them of size > 1; allow_zero: may broadcast (stride 0)
 * dims. */
#define FUZZ_MOVING_DIMS 8
static tt_view_t random_view(tt_storage_t* s, int rank, bool allow_zero) {
  for (;;) {
    int64_t sizes[TT_MAX_RANK], strides[TT_MAX_RANK];
    int order[TT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
      sizes[d] = 1 + rnd(3);
      order[d] = d;
    }
    for (int d = rank - 1; d > 0; d--) {
      int j = (int)rnd((uint32_t)d + 1), t = order[d];
      order[d] = order[j];
      order[j] = t;
    }
    for (int j = FUZZ_MOVING_DIMS; j < rank; j++) sizes[order[j]] = 1; /* the span fits */
    int64_t acc = 1;
    for (int j = rank - 1; j >= 0; j--) {
      int d = order[j];
      if (allow_zero && rnd(10) == 0) {
        strides[d] = 0;
        continue;
      }
      strides[d] = acc * (rnd(4) == 0 ? 2 : 1);
      acc = strides[d] * sizes[d] + (rnd(3) == 0 ? 1 : 0);
    }
    int64_t span = 1;
    for (int d = 0; d < rank; d++) span += (sizes[d] - 1) * strides[d];
    if (span > N_ELEMS) continue;
    return mkview(s, TT_I32, rank, sizes, strides, (int64_t)rnd((uint32_t)(N_ELEMS - span + 1)));
  }
}

static bool overlaps(const tt_view_t* v) {
  static unsigned char seen[N_ELEMS];
  memset(seen, 0, sizeof(seen));
  int64_t n = tt_view_numel(v);
  for (int64_t i = 0; i < n; i++) {
    int64_t e = view_elem(v, i);
    if (seen[e]) return true;
    seen[e] = 1;
  }
  return false;
}

static void check_storage(tt_runtime_t* rt, tt_storage_t* s, const int32_t* model, const char* what,
                          int c) {
  static int32_t got[N_ELEMS];
  tt_view_t all = flat(s, TT_I32, N_ELEMS);
  TT_CHECK_OK(tt_view_read_host(rt, &all, got));
  for (int i = 0; i < N_ELEMS; i++)
    if (got[i] != model[i]) FAILF("case %d: %s: element %d is %d, want %d", c, what, i, got[i], model[i]);
}

static void fuzz(tt_runtime_t* rt) {
  const char* env = getenv("TT_VIEW_FUZZ_CASES");
  int cases = env ? atoi(env) : 160;
  static int32_t ma[N_ELEMS], mb[N_ELEMS], host[N_ELEMS], got[N_ELEMS];
  for (int i = 0; i < N_ELEMS; i++) ma[i] = i, mb[i] = -i;
  tt_storage_t *a = NULL, *b = NULL;
  TT_CHECK_OK(host_storage(rt, 0, TT_I32, N_ELEMS, ma, &a));
  TT_CHECK_OK(host_storage(rt, 0, TT_I32, N_ELEMS, mb, &b));
  for (int c = 0; c < cases && !tt__cur_failed; c++) {
    /* ranks 0..8, and 9..TT_MAX_RANK in one case of four (their programs compile slowly) */
    int rank = c % 4 == 3 ? 9 + (c / 4) % (TT_MAX_RANK - 8) : c % 9;
    /* read */
    tt_view_t v = random_view(a, rank, true);
    int64_t n = tt_view_numel(&v);
    TT_CHECK_OK(tt_view_read_host(rt, &v, got));
    for (int64_t i = 0; i < n; i++)
      if (got[i] != ma[view_elem(&v, i)]) {
        FAILF("case %d: read rank %d: element %lld is %d, want %d", c, rank, (long long)i, got[i],
              ma[view_elem(&v, i)]);
      }
    /* write (a view without overlapping elements) */
    tt_view_t w = random_view(a, rank, false);
    n = tt_view_numel(&w);
    if (!overlaps(&w)) {
      for (int64_t i = 0; i < n; i++) host[i] = (int32_t)rnd(1u << 30);
      TT_CHECK_OK(tt_view_write_host(rt, &w, host));
      for (int64_t i = 0; i < n; i++) ma[view_elem(&w, i)] = host[i];
      SUB(check_storage(rt, a, ma, "write", c));
    }
    /* copy from a view of a (any) into a view of b of the same sizes */
    tt_view_t src = random_view(a, rank, true);
    tt_view_t dst = random_view(b, rank, false);
    memcpy(src.sizes, dst.sizes, sizeof(dst.sizes));
    int64_t span = 1;
    for (int d = 0; d < rank; d++) span += (src.sizes[d] - 1) * src.strides[d];
    if (src.offset + span > N_ELEMS) src.offset = N_ELEMS - span;
    if (src.offset < 0 || overlaps(&dst)) continue;
    TT_CHECK_OK(tt_runtime_copy(rt, &dst, &src));
    n = tt_view_numel(&dst);
    for (int64_t i = 0; i < n; i++) mb[view_elem(&dst, i)] = ma[view_elem(&src, i)];
    SUB(check_storage(rt, b, mb, "copy", c));
  }
  tt_storage_release(a);
  tt_storage_release(b);
}
static void test_view_fuzz(void) { NEW_RT_ONLY(fuzz); }

int main(void) {
  (void)read_f32; /* shared helpers this test does not use */
  (void)iota_storage;
  /* host reads from the buffers' addresses (the CPU plugins' default), then
   * through the plugin's ToHostBuffer and copy programs */
  open_runtimes();
  TT_RUN(test_view_fuzz);
  close_runtimes();
  setenv("TORCH_TPU_HOST_ADDRESS_READS", "0", 1);
  open_runtimes();
  TT_RUN(test_view_fuzz);
  close_runtimes();
  TT_REPORT();
}
