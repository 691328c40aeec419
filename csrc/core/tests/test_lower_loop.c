/* Tests of the shared loop helper (core/lower/lower_loop.h): tt_l_while with
 * per-element state, tt_l_fori with a static and tt_l_fori_dyn with a
 * run-time trip count, and the limits on carried values; on both plugins. */
#include "lower_check.h"
#include "../lower/lower_loop.h"
#include "../lower/lower_tensor_util.h"

/* ---- tt_l_while: Collatz steps of each element (state: n, steps, live, any) */
static tt_val_t any_live(tt_shlo_fn_t* f, tt_val_t live) {
  return tt_lt_reduce(f, live, 1u, "stablehlo.or", tt_lt_const0(f, TT_BOOL, 0.0));
}
static tt_val_t k64(tt_shlo_fn_t* f, double v) {
  int64_t d[1] = {4};
  return tt_l_full(f, TT_I64, 1, d, v);
}
static tt_val_t collatz_cond(tt_shlo_fn_t* f, const tt_val_t* st, void* ud) {
  (void)ud;
  return st[3];
}
static void collatz_body(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* nx, void* ud) {
  int* calls = ud;
  (*calls)++;
  tt_val_t n = st[0], live = st[2];
  tt_val_t odd = tt_l_compare(f, "EQ", tt_l_binary(f, "stablehlo.remainder", n, k64(f, 2)), k64(f, 1));
  tt_val_t up = tt_l_binary(f, "stablehlo.add", tt_l_binary(f, "stablehlo.multiply", n, k64(f, 3)), k64(f, 1));
  tt_val_t down = tt_l_binary(f, "stablehlo.divide", n, k64(f, 2));
  nx[0] = tt_l_select(f, live, tt_l_select(f, odd, up, down), n);
  nx[1] = tt_l_select(f, live, tt_l_binary(f, "stablehlo.add", st[1], k64(f, 1)), st[1]);
  nx[2] = tt_l_compare(f, "GT", nx[0], k64(f, 1));
  nx[3] = any_live(f, nx[2]);
}
static tt_status_t lower_collatz(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int calls = 0;
  tt_val_t st[4] = {c->args[0].val, k64(f, 0), tt_l_compare(f, "GT", c->args[0].val, k64(f, 1)),
                    TT_SHLO_INVALID};
  st[3] = any_live(f, st[2]);
  tt_l_while(f, st, 4, collatz_cond, collatz_body, &calls);
  if (calls != 1) return tt_status_make(TT_INTERNAL, "body built %d times", calls);
  return tt_l_set_out(c, 0, st[1]);
}

/* ---- tt_l_fori: v = 2 v + i for i < 10, with a second carried value w = w + 1
 * the step leaves alone (it keeps its value) */
static void fori_step(tt_shlo_fn_t* f, tt_val_t i, tt_val_t* v, void* ud) {
  (void)ud;
  tt_type_t t = *tt_shlo_type(f, v[0]);
  tt_val_t two = tt_shlo_const(f, &t, 2.0);
  tt_val_t fi = tt_lt_splat(f, tt_l_convert(f, i, TT_F32), t.rank, t.dims);
  v[0] = tt_l_binary(f, "stablehlo.add", tt_l_binary(f, "stablehlo.multiply", v[0], two), fi);
}
static tt_status_t lower_fori(tt_lctx_t* c) {
  tt_val_t v[2] = {c->args[0].val, c->args[0].val};
  tt_l_fori(c->f, 10, v, 2, fori_step, NULL);
  tt_status_t st = tt_l_set_out(c, 0, v[0]);
  return st ? st : tt_l_set_out(c, 1, v[1]);
}
/* the trip count: the first element of an i64 input */
static tt_status_t lower_fori_dyn(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  int64_t one[1] = {1};
  tt_val_t n = tt_l_reshape(f, tt_lt_slice(f, c->args[1].val, (int64_t[]){0}, one), 0, NULL);
  tt_val_t v[1] = {c->args[0].val};
  tt_l_fori_dyn(f, n, v, 1, fori_step, NULL);
  return tt_l_set_out(c, 0, v[0]);
}

/* ---- limits: 17 carried values, or 15 for a counted loop, fail the build */
static tt_val_t never(tt_shlo_fn_t* f, const tt_val_t* st, void* ud) {
  return tt_lt_const0(f, TT_BOOL, 0.0);
}
static void keep(tt_shlo_fn_t* f, const tt_val_t* st, tt_val_t* nx, void* ud) {}
static void keep_step(tt_shlo_fn_t* f, tt_val_t i, tt_val_t* v, void* ud) {}
static tt_status_t lower_too_many(tt_lctx_t* c) {
  tt_val_t v[TT_L_LOOP_MAX + 1];
  for (int i = 0; i <= TT_L_LOOP_MAX; i++) v[i] = c->args[0].val;
  if (c->op->param)
    tt_l_fori(c->f, 3, v, TT_L_LOOP_MAX - 1, keep_step, NULL);
  else
    tt_l_while(c->f, v, TT_L_LOOP_MAX + 1, never, keep, NULL);
  if (v[0] != TT_SHLO_INVALID) return tt_status_make(TT_INTERNAL, "values not invalidated");
  return tt_l_set_out(c, 0, c->args[0].val);
}

static const tt_lower_entry_t k_collatz = {"test::collatz", lower_collatz, 0, 0};
static const tt_lower_entry_t k_fori = {"test::fori", lower_fori, 0, 0};
static const tt_lower_entry_t k_fori_dyn = {"test::fori_dyn", lower_fori_dyn, 0, 0};
static const tt_lower_entry_t k_many[2] = {{"test::while_too_many", lower_too_many, 0, 0},
                                           {"test::fori_too_many", lower_too_many, 1, 0}};

static bool run_entry(tt_pjrt_t* p, const tt_lower_entry_t* e, const th_arg_t* a, int na,
                      const tt_type_t* ot, int no, lc_result_t* r, tt_sbuf_t* text) {
  memset(r, 0, sizeof(*r));
  r->nout = no;
  tt_status_t st = th_run_entry(p, e, a, na, ot, no, r->out, text);
  if (st) {
    fprintf(stderr, "  %s: %s\n", e->name, tt_status_message(st));
    tt_status_free(st);
    lc_free(r);
    return false;
  }
  return true;
}

static int count(const char* s, const char* what) {
  int n = 0;
  for (const char* q = s; (q = strstr(q, what)); q += strlen(what)) n++;
  return n;
}

static void check_loops(tt_pjrt_t* p) {
  tt_sbuf_t text;
  tt_sbuf_init(&text);
  lc_result_t r;
  const int64_t n[4] = {1, 6, 7, 27};
  th_arg_t ca[] = {lc_tensor(TY(TT_I64, 4), n)};
  tt_type_t ci = TY(TT_I64, 4);
  TT_CHECK(run_entry(p, &k_collatz, ca, 1, &ci, 1, &r, &text));
  if (tt__cur_failed) goto done;
  WANT_I64(r, 0, 4, 0, 8, 16, 111);
  TT_CHECK(count(text.data, "stablehlo.while") == 1);
  lc_free(&r);

  const float x[3] = {0.0f, 1.0f, -0.5f};
  th_arg_t fa[] = {lc_tensor(TY(TT_F32, 3), x)};
  tt_type_t fo[2] = {TY(TT_F32, 3), TY(TT_F32, 3)};
  TT_CHECK(run_entry(p, &k_fori, fa, 1, fo, 2, &r, &text));
  if (tt__cur_failed) goto done;
  /* v_10 = 2^10 v_0 + sum_i 2^(9 - i) i = 1024 v_0 + 1013 */
  WANT_F32(r, 0, 3, 0, 1013.0f, 2037.0f, 501.0f);
  WANT_F32(r, 1, 3, 0, 0.0f, 1.0f, -0.5f);
  lc_free(&r);

  const int64_t trips[2][2] = {{3, 9}, {0, 9}};
  for (int k = 0; k < 2; k++) {
    th_arg_t da[] = {lc_tensor(TY(TT_F32, 3), x), lc_tensor(TY(TT_I64, 2), trips[k])};
    TT_CHECK(run_entry(p, &k_fori_dyn, da, 2, fo, 1, &r, &text));
    if (tt__cur_failed) goto done;
    if (k == 0) WANT_F32(r, 0, 3, 0, 4.0f, 12.0f, 0.0f); /* 8 v + 2 * 1 + 2 */
    else WANT_F32(r, 0, 3, 0, 0.0f, 1.0f, -0.5f);       /* zero trips: unchanged */
    lc_free(&r);
  }

  for (int k = 0; k < 2; k++) {
    tt_status_t st = th_run_entry(p, &k_many[k], fa, 1, fo, 1, r.out, NULL);
    TT_CHECK(st != NULL && strstr(tt_status_message(st), "carried values"));
    if (!st) free(r.out[0]);
    tt_status_free(st);
  }
done:
  tt_sbuf_free(&text);
}

static void test_loops(void) {
  if (lc_new) check_loops(lc_new);
  if (!tt__cur_failed && lc_old) check_loops(lc_old);
}

int main(void) {
  lc_open();
  TT_RUN(test_loops);
  lc_close();
  TT_REPORT();
}
