/* Pass 2 of a program: its StableHLO text, from a plan (tt_program.h). Each
 * call's lowering runs on the current values of the storages it reads, and
 * its writes replace them; the storages' final values are the results. */
#include <stdlib.h>
#include <string.h>

#include "larg.h"

static tt_status_t oom(void) { return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory"); }

typedef struct build {
  tt_plan_t* p;
  tt_shlo_fn_t* f;
  tt_val_t* cur;       /* per storage: its current value */
  tt_val_t* extra_val;
  int occ;   /* cursor into p->occ */
  int extra; /* cursor into p->extra */
  tt_val_t* pool; /* list values */
  int npool, cappool;
} build_t;

static tt_val_t build_tensor(void* ctx, const tt_call_arg_t* a) {
  build_t* b = ctx;
  int si = b->p->occ[b->occ].st;
  int ei = b->p->occ[b->occ++].extra;
  if (ei >= 0) b->extra++;
  return tt_view_read(b->f, b->cur[si], &a->view, ei >= 0 ? b->extra_val[ei] : TT_SHLO_INVALID);
}

static tt_val_t build_scalar(void* ctx, const tt_call_arg_t* a) {
  build_t* b = ctx;
  return b->extra_val[b->extra++];
}

static tt_val_t* pool_take(void* ctx, int n) {
  build_t* b = ctx;
  if (b->npool + n > b->cappool) return NULL;
  tt_val_t* r = b->pool + b->npool;
  b->npool += n;
  return r;
}

static int count_list_elems(const tt_call_t* c) {
  int n = 0;
  for (int i = 0; i < c->nargs; i++)
    if (c->args[i].kind == TT_ARG_TENSORS || c->args[i].kind == TT_ARG_SCALARS) n += c->args[i].n;
  return n;
}

/* One call's lowering and writes, onto b->cur. `out0`: its first output in p->out. */
static tt_status_t build_one(build_t* b, const tt_call_t* c, int out0) {
  tt_plan_t* p = b->p;
  b->cappool = count_list_elems(c);
  b->npool = 0;
  b->pool = calloc((size_t)b->cappool + 1, sizeof(tt_val_t));
  int nl = c->nargs + ((c->op->flags & TT_LF_RNG) ? 1 : 0);
  tt_larg_t* largs = calloc((size_t)nl + 1, sizeof(tt_larg_t));
  tt_type_t* out_types = calloc((size_t)c->nout + 1, sizeof(tt_type_t));
  tt_val_t* outs = calloc((size_t)c->nout + 1, sizeof(tt_val_t));
  tt_status_t st = NULL;
  if (!b->pool || !largs || !out_types || !outs) {
    st = oom();
    goto done;
  }
  tt_larg_src_t src = {b, build_tensor, build_scalar, pool_take};
  for (int i = 0; i < c->nargs; i++)
    tt__larg_make(b->f, &c->args[i], i == 0 && (c->op->flags & TT_LF_WRITE_ONLY), &src, &largs[i]);
  if (c->op->flags & TT_LF_RNG) {
    largs[c->nargs].kind = TT_ARG_RNG;
    largs[c->nargs].val = b->extra_val[b->extra++];
  }
  for (int i = 0; i < c->nout; i++) {
    /* complex32 is computed in complex64 (tt_dtype_compute) */
    out_types[i] = tt_type_make(tt_dtype_compute(c->out_dtypes[i]), c->outs[i].rank, c->outs[i].sizes);
    outs[i] = TT_SHLO_INVALID;
  }
  tt_lctx_t lc = {b->f, c->op, largs, nl, out_types, c->nout, outs};
  if (!tt_shlo_failed(b->f)) {
    st = c->op->fn(&lc);
    if (st) goto done;
  }
  /* writes, in output order, onto the current value of each storage */
  for (int i = 0; i < c->nout && !tt_shlo_failed(b->f); i++) {
    if (outs[i] == TT_SHLO_INVALID) {
      st = tt_status_make(TT_INTERNAL, "%s: the lowering did not set output %d", c->op->name, i);
      goto done;
    }
    const tt_plan_out_t* o = &p->out[out0 + i];
    if (o->st < 0) continue;
    if (o->full) {
      b->cur[o->st] = tt_l_view_store(b->f, outs[i], c->outs[i].dtype);
    } else {
      b->cur[o->st] = tt_view_write(b->f, b->cur[o->st], &c->outs[i],
                                    o->extra >= 0 ? b->extra_val[o->extra] : TT_SHLO_INVALID, outs[i]);
    }
  }
done:
  free(b->pool);
  b->pool = NULL;
  free(largs);
  free(out_types);
  free(outs);
  return st ? tt_status_annotate(st, "lowering %s", c->op->name) : NULL;
}

/* The device-side checks call c added to the program (from `before` on). */
static tt_status_t take_checks(tt_plan_t* p, tt_shlo_fn_t* f, const tt_call_t* c, int before) {
  int after = tt_shlo_check_count(f);
  if (after <= before) return NULL;
  if (after > p->capchecks) {
    int cap = p->capchecks ? p->capchecks : 16;
    while (cap < after) cap *= 2;
    int* codes = realloc(p->check_codes, sizeof(int) * (size_t)cap);
    if (codes) p->check_codes = codes;
    char** msgs = realloc(p->check_msgs, sizeof(char*) * (size_t)cap);
    if (msgs) p->check_msgs = msgs;
    const char** ops = realloc(p->check_ops, sizeof(char*) * (size_t)cap);
    if (ops) p->check_ops = ops;
    if (!codes || !msgs || !ops) return oom();
    p->capchecks = cap;
  }
  for (int q = before; q < after; q++) {
    p->check_codes[q] = tt_shlo_check_code(f, q);
    p->check_ops[q] = c->op->name;
    p->check_msgs[q] = strdup(tt_shlo_check_message(f, q));
    p->nchecks = q + 1;
    if (!p->check_msgs[q]) return oom();
  }
  return NULL;
}

tt_status_t tt_plan_build(tt_plan_t* p, tt_sbuf_t* text) {
  build_t b;
  memset(&b, 0, sizeof(b));
  b.p = p;
  b.f = tt_shlo_fn_create();
  b.cur = calloc((size_t)p->nst + 1, sizeof(tt_val_t));
  b.extra_val = calloc((size_t)p->nextra + 1, sizeof(tt_val_t));
  tt_val_t* results = NULL;
  tt_status_t st = NULL;
  if (!b.f || !b.cur || !b.extra_val) {
    st = oom();
    goto done;
  }
  for (int i = 0; i < p->nst; i++) {
    const tt_plan_st_t* e = &p->st[i];
    b.cur[i] = TT_SHLO_INVALID;
    int64_t n = e->param_numel;
    if (e->zero) {
      b.cur[i] = tt_l_broadcast(b.f, tt_l_full(b.f, e->param_dtype, 0, NULL, 0.0), 1, &n);
    } else if (e->param) {
      tt_type_t t = tt_type_make(e->param_dtype, 1, &n);
      b.cur[i] = tt_shlo_param_donated(b.f, &t, tt_plan_donated_result(p, i));
    }
  }
  /* parameters in run order: the packed groups, then the other extras */
  tt_val_t groups[TT_DTYPE_COUNT];
  for (int g = 0; g < p->ngroups; g++) {
    int64_t n = p->group_n[g];
    tt_type_t t = tt_type_make(p->group_dt[g], 1, &n);
    groups[g] = tt_shlo_param(b.f, &t);
  }
  for (int i = 0; i < p->nextra; i++)
    if (!p->extra[i].packed) b.extra_val[i] = tt_shlo_param(b.f, &p->extra[i].type);
  for (int i = 0; i < p->nextra; i++) {
    if (!p->extra[i].packed) continue;
    int g = p->extra[i].group;
    int64_t lo = p->extra[i].slot, hi = lo + 1;
    tt_val_t one = p->group_n[g] == 1 ? groups[g] : tt_shlo_slice(b.f, groups[g], &lo, &hi, NULL);
    b.extra_val[i] = tt_l_reshape(b.f, one, 0, NULL);
  }
  int out0 = 0;
  for (int k = 0; k < p->ncalls && !st; k++) {
    const tt_call_t* c = p->calls[k];
    b.extra = p->call_extra0[k];
    int before = tt_shlo_check_count(b.f);
    st = build_one(&b, c, out0);
    out0 += c->nout;
    if (!st) st = take_checks(p, b.f, c, before);
  }
  if (st) goto done;
  results = calloc((size_t)(p->nres + p->nchecks) + 1, sizeof(tt_val_t));
  if (!results) {
    st = oom();
    goto done;
  }
  for (int r = 0; r < p->nres; r++) results[r] = b.cur[p->res_st[r]];
  for (int k = 0; k < p->nchecks; k++) results[p->nres + k] = tt_shlo_check_value(b.f, k);
  st = tt_shlo_fn_finish(b.f, results, p->nres + p->nchecks, text);
  if (st && p->ncalls == 1) st = tt_status_annotate(st, "lowering %s", p->calls[0]->op->name);
done:
  tt_shlo_fn_destroy(b.f);
  free(b.cur);
  free(b.extra_val);
  free(results);
  return st;
}
