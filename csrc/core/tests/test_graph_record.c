/* Tests of recording (graph/graph.c, graph/record.c): where Fused Eager cuts
 * a graph of recorded calls (the size limit, repeated blocks), the set of
 * checked call signatures, and the lowering checked at record time. No
 * plugin needed: calls refer to storages only as identities here. */
#include "../graph/tt_program.h"
#include "tt_test.h"

static tt_storage_t* const FAKE = (tt_storage_t*)(uintptr_t)0x1000; /* never dereferenced */

static tt_view_t view1(int64_t n) {
  tt_view_t v;
  memset(&v, 0, sizeof(v));
  v.storage = FAKE;
  v.dtype = TT_F32;
  v.rank = 1;
  v.sizes[0] = n;
  v.strides[0] = 1;
  return v;
}

static tt_call_arg_t tensor_arg(tt_view_t v) {
  tt_call_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = TT_ARG_TENSOR;
  a.tier = TT_TIER_DIM;
  a.view = v;
  return a;
}

/* A unary call `op` on n elements (its structural hash differs by op and n). */
typedef struct one_call {
  tt_call_arg_t args[1];
  tt_view_t out;
  tt_dtype_t out_dt;
  tt_call_t call;
} one_call_t;

static void make_unary(one_call_t* c, const char* op, int64_t n) {
  memset(c, 0, sizeof(*c));
  c->args[0] = tensor_arg(view1(n));
  c->out = view1(n);
  c->out_dt = TT_F32;
  c->call.op = tt_lower_find(op);
  c->call.args = c->args;
  c->call.nargs = 1;
  c->call.outs = &c->out;
  c->call.out_dtypes = &c->out_dt;
  c->call.nout = 1;
}

static const char* const OPS[4] = {"aten::relu", "aten::neg", "aten::exp", "aten::abs"};

/* A loop body of 4 calls, repeated: no cut before TT_GRAPH_CUT_MIN calls, then a cut
 * inside the newest repeat, before its call of the smallest hash. */
static void test_cut_at_repeated_block(void) {
  for (int i = 0; i < 4; i++) TT_CHECK(tt_lower_find(OPS[i]) != NULL);
  tt_graph_t* g = tt_graph_create();
  TT_CHECK(g != NULL);
  int cut = 0, at = 0;
  for (int i = 0; i < 200 && !cut; i++) {
    one_call_t c;
    make_unary(&c, OPS[i % 4], 8);
    tt_status_t st = tt_graph_append(g, &c.call);
    if (st) {
      tt_status_free(st);
      tt_graph_destroy(g);
      TT_CHECK(false);
    }
    cut = tt_graph_cut(g, 2048);
    at = i + 1;
  }
  int n = tt_graph_size(g);
  uint64_t min = UINT64_MAX;
  for (int i = n - 4; i < n; i++)
    if (tt_graph_node_hash(g, i) < min) min = tt_graph_node_hash(g, i);
  bool ok = at == TT_GRAPH_CUT_MIN && cut > 0 && cut < n && tt_graph_node_hash(g, cut) == min &&
            tt_graph_call(g, cut)->op == tt_graph_call(g, cut % 4)->op;
  tt_graph_destroy(g);
  TT_CHECK(ok);
}

/* Calls that never repeat are cut only at the size limit, whole. */
static void test_cut_at_size_limit(void) {
  tt_graph_t* g = tt_graph_create();
  TT_CHECK(g != NULL);
  bool ok = true;
  for (int i = 0; i < 100 && ok; i++) {
    one_call_t c;
    make_unary(&c, "aten::relu", 1 + i); /* another shape: another hash */
    tt_status_t st = tt_graph_append(g, &c.call);
    ok = st == NULL;
    tt_status_free(st);
    int cut = tt_graph_cut(g, 100);
    ok = ok && cut == (i + 1 == 100 ? 100 : 0);
  }
  tt_graph_destroy(g);
  TT_CHECK(ok);
}

/* The recorded copy is deep: the caller's arguments may go right after. */
static void test_append_copies_deeply(void) {
  tt_graph_t* g = tt_graph_create();
  TT_CHECK(g != NULL);
  one_call_t* c = malloc(sizeof(*c));
  TT_CHECK(c != NULL);
  make_unary(c, "aten::exp", 5);
  uint64_t h = tt_graph_call_hash(&c->call);
  tt_status_t st = tt_graph_append(g, &c->call);
  memset(c, 0xAB, sizeof(*c));
  free(c);
  const tt_call_t* r = tt_graph_call(g, 0);
  bool ok = st == NULL && r->nargs == 1 && r->args[0].view.sizes[0] == 5 && r->outs[0].storage == FAKE &&
            r->op == tt_lower_find("aten::exp") && tt_graph_node_hash(g, 0) == h;
  tt_status_free(st);
  tt_graph_destroy(g);
  TT_CHECK(ok);
}

static void test_sigset(void) {
  tt_sigset_t s = {0};
  bool ok = !tt_sigset_has(&s, 7);
  for (uint64_t h = 0; h < 5000; h++) tt_sigset_add(&s, h * 0x9E3779B97F4A7C15ull);
  for (uint64_t h = 0; h < 5000 && ok; h++) ok = tt_sigset_has(&s, h * 0x9E3779B97F4A7C15ull);
  for (uint64_t h = 5000; h < 6000 && ok; h++) ok = !tt_sigset_has(&s, h * 0x9E3779B97F4A7C15ull);
  ok = ok && s.n == 5000 && s.cap >= 2 * s.n;
  tt_sigset_free(&s);
  TT_CHECK(ok && s.slots == NULL && s.n == 0);
}

/* The lowering runs on parameters of the call's types: a call it accepts
 * passes; one it refuses fails naming the op, as Strict Eager raises it. */
static void test_check_lowering(void) {
  one_call_t c;
  make_unary(&c, "aten::exp", 16);
  TT_CHECK_OK(tt_graph_check_lowering(&c.call));
  tt_call_arg_t args[3];
  memset(args, 0, sizeof(args));
  args[0] = tensor_arg(view1(16));
  args[1].kind = TT_ARG_NONE;
  args[2].kind = TT_ARG_NONE;
  c.call.op = tt_lower_find("aten::clamp");
  TT_CHECK(c.call.op != NULL);
  c.call.args = args;
  c.call.nargs = 3;
  tt_status_t st = tt_graph_check_lowering(&c.call);
  bool ok = st != NULL && strstr(tt_status_message(st), "lowering aten::clamp") != NULL &&
            strstr(tt_status_message(st), "'min' or 'max'") != NULL;
  if (!ok) fprintf(stderr, "  got: %s\n", st ? tt_status_message(st) : "(ok)");
  tt_status_free(st);
  TT_CHECK(ok);
}

int main(void) {
  TT_RUN(test_cut_at_repeated_block);
  TT_RUN(test_cut_at_size_limit);
  TT_RUN(test_append_copies_deeply);
  TT_RUN(test_sigset);
  TT_RUN(test_check_lowering);
  TT_REPORT();
}
