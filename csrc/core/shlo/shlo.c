/* StableHLO text builder: generic-form ops, regions, constants, @main. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_shlo.h"

#define MAX_REGION_DEPTH 8
#define TT_SHLO_MAX_CHECKS 32

typedef struct value {
  tt_type_t type;
  char name[28]; /* "%v12", "%v12#3", "%arg0" */
  unsigned char producer; /* producer_t: the op that made it, where it matters */
  unsigned char uniform;  /* every element equal: made from one-element values elementwise */
  unsigned char splat;    /* a constant of tt_shlo_const: every element splat_v */
  double splat_v;
  int opnd_at, nopnd;     /* the operands of the op that made it: f->opnds[opnd_at..] */
} value_t;

/* Ops whose results XLA's algebraic simplifier rewrites its consumers
 * around, changing results from an op-by-op evaluation (found on both CPU
 * plugins; JAX gets the rewritten forms):
 *   A / (B / C) -> A * C / B      (A / B) / C -> A / (B * C)
 *   A / sqrt(B) -> A * rsqrt(B)   A / exp(B) -> A * exp(-B)
 *   A / pow(B, C) -> A * pow(B, -C)
 *   exp(A) * exp(B) -> exp(A + B) log(exp(A)) -> A
 * They round differently, and overflow or not where PyTorch's op-by-op
 * evaluation does the opposite (log(exp(100.)) is inf on the CPU, 100 once
 * rewritten). tt_shlo_op_multi hides such an operand behind an
 * optimization_barrier, so a program of several ops (Fused Eager,
 * torch.compile, a composite lowering) computes as the ops one by one.
 * Divisors that are broadcasts or constants (A / broadcast(B) ->
 * A * broadcast(1/B)) round differently too. A one-element one (a scalar
 * broadcast, a splat constant) is spread here as an edge pad of itself
 * behind a barrier (spread_divisor: XLA keeps the divide and fuses the pad,
 * no buffer), so every lowering's division by a scalar is IEEE division.
 * Broadcasts of larger values are hidden where the elementwise lowerings
 * divide (tt__ew_divisor): here every such divide would materialize the
 * broadcast, also where the lowering needs no exact division. */
typedef enum {
  PRODUCER_OTHER,
  PRODUCER_DIVIDE,
  PRODUCER_ROOT,
  PRODUCER_EXP,
  PRODUCER_BITCAST, /* an op XLA may turn into a bitcast of its operand 0 (see reads_buffer_of) */
} producer_t;

static producer_t producer_of(const char* op) {
  if (!strcmp(op, "stablehlo.divide")) return PRODUCER_DIVIDE;
  if (!strcmp(op, "stablehlo.sqrt") || !strcmp(op, "stablehlo.rsqrt") || !strcmp(op, "stablehlo.power"))
    return PRODUCER_ROOT;
  if (!strcmp(op, "stablehlo.exponential")) return PRODUCER_EXP;
  if (!strcmp(op, "stablehlo.reshape") || !strcmp(op, "stablehlo.transpose") ||
      !strcmp(op, "stablehlo.broadcast_in_dim") || !strcmp(op, "stablehlo.bitcast_convert") ||
      !strcmp(op, "stablehlo.optimization_barrier"))
    return PRODUCER_BITCAST;
  return PRODUCER_OTHER;
}

/* Values live in fixed-size chunks that never move: the pointer
 * tt_shlo_type returns stays valid for the function's lifetime, so a caller
 * may pass it as the result type of the next op (which adds a value). */
#define VALS_PER_CHUNK 256

struct tt_shlo_fn {
  value_t** chunks; /* owned, each owned; chunks[i] holds values i*256.. */
  int nvals, nchunks, capchunks;
  int nparams;
  int next_id;
  tt_sbuf_t params;                     /* "%arg0: tensor<..>, ..." */
  tt_sbuf_t text[MAX_REGION_DEPTH + 1]; /* [0] = body of @main */
  int depth;
  int* opnds; /* owned: operand lists of the values (value_t.opnd_at) */
  int nopnds, capopnds;
  unsigned* mark; /* owned: visit marks of reads_buffer_of, one per value */
  int capmark;
  unsigned gen;
  char* error; /* first failure */
  struct {
    tt_val_t val;
    int code;
    char* message; /* owned */
  } checks[TT_SHLO_MAX_CHECKS];
  int nchecks;
};

tt_shlo_fn_t* tt_shlo_fn_create(void) {
  tt_shlo_fn_t* f = calloc(1, sizeof(*f));
  if (!f) return NULL;
  tt_sbuf_init(&f->params);
  for (int i = 0; i <= MAX_REGION_DEPTH; i++) tt_sbuf_init(&f->text[i]);
  return f;
}

void tt_shlo_fn_destroy(tt_shlo_fn_t* f) {
  if (!f) return;
  for (int i = 0; i < f->nchunks; i++) free(f->chunks[i]);
  free(f->chunks);
  free(f->opnds);
  free(f->mark);
  tt_sbuf_free(&f->params);
  for (int i = 0; i <= MAX_REGION_DEPTH; i++) tt_sbuf_free(&f->text[i]);
  for (int i = 0; i < f->nchecks; i++) free(f->checks[i].message);
  free(f->error);
  free(f);
}

void tt_shlo_add_check(tt_shlo_fn_t* f, tt_val_t failed, int code, const char* message) {
  if (f->error) return;
  const tt_type_t* t = tt_shlo_type(f, failed);
  if (!t || t->rank != 0 || t->dtype != TT_BOOL) {
    tt_shlo_fail(f, "a check must be a 0-d i1 value");
    return;
  }
  if (f->nchecks == TT_SHLO_MAX_CHECKS) {
    tt_shlo_fail(f, "too many checks in one program");
    return;
  }
  char* m = strdup(message ? message : "check failed");
  if (!m) {
    tt_shlo_fail(f, "out of memory");
    return;
  }
  f->checks[f->nchecks].val = failed;
  f->checks[f->nchecks].code = code;
  f->checks[f->nchecks++].message = m;
}

int tt_shlo_check_count(const tt_shlo_fn_t* f) { return f->nchecks; }
tt_val_t tt_shlo_check_value(const tt_shlo_fn_t* f, int i) { return f->checks[i].val; }
int tt_shlo_check_code(const tt_shlo_fn_t* f, int i) { return f->checks[i].code; }
const char* tt_shlo_check_message(const tt_shlo_fn_t* f, int i) { return f->checks[i].message; }

void tt_shlo_fail(tt_shlo_fn_t* f, const char* fmt, ...) {
  if (f->error) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  f->error = strdup(buf);
}

bool tt_shlo_failed(const tt_shlo_fn_t* f) { return f->error != NULL; }
const char* tt_shlo_error(const tt_shlo_fn_t* f) { return f->error; }

#define VAL(f, i) (&(f)->chunks[(i) / VALS_PER_CHUNK][(i) % VALS_PER_CHUNK])

static tt_val_t new_value(tt_shlo_fn_t* f, const tt_type_t* t, const char* name) {
  if (f->error) return TT_SHLO_INVALID;
  if (f->nvals == f->nchunks * VALS_PER_CHUNK) {
    if (f->nchunks == f->capchunks) {
      int cap = f->capchunks ? f->capchunks * 2 : 8;
      value_t** c = realloc(f->chunks, (size_t)cap * sizeof(value_t*));
      if (!c) {
        tt_shlo_fail(f, "out of memory");
        return TT_SHLO_INVALID;
      }
      f->chunks = c;
      f->capchunks = cap;
    }
    f->chunks[f->nchunks] = malloc(VALS_PER_CHUNK * sizeof(value_t));
    if (!f->chunks[f->nchunks]) {
      tt_shlo_fail(f, "out of memory");
      return TT_SHLO_INVALID;
    }
    f->nchunks++;
  }
  value_t* v = VAL(f, f->nvals);
  v->type = *t;
  v->producer = PRODUCER_OTHER;
  v->uniform = tt_type_numel(t) == 1; /* (a parameter, a region argument) */
  v->splat = 0;
  v->splat_v = 0;
  v->opnd_at = v->nopnd = 0;
  snprintf(v->name, sizeof(v->name), "%s", name);
  return f->nvals++;
}

const tt_type_t* tt_shlo_type(tt_shlo_fn_t* f, tt_val_t v) {
  if (v < 0 || v >= f->nvals) return NULL;
  return &VAL(f, v)->type;
}

static void put_type(tt_sbuf_t* b, const tt_type_t* t) {
  char buf[TT_TYPE_TEXT_MAX];
  tt_type_format(t, buf, sizeof(buf));
  tt_sbuf_append(b, buf);
}

tt_val_t tt_shlo_param(tt_shlo_fn_t* f, const tt_type_t* type) { return tt_shlo_param_donated(f, type, -1); }

tt_val_t tt_shlo_param_donated(tt_shlo_fn_t* f, const tt_type_t* type, int output) {
  if (f->error) return TT_SHLO_INVALID;
  if (type->rank < 0 || type->rank > TT_MAX_RANK) {
    tt_shlo_fail(f, "bad rank %d", type->rank);
    return TT_SHLO_INVALID;
  }
  char name[28];
  snprintf(name, sizeof(name), "%%arg%d", f->nparams);
  if (f->nparams) tt_sbuf_append(&f->params, ", ");
  tt_sbuf_printf(&f->params, "%s: ", name);
  put_type(&f->params, type);
  if (output >= 0) tt_sbuf_printf(&f->params, " {tf.aliasing_output = %d : i32}", output);
  f->nparams++;
  return new_value(f, type, name);
}

/* A type of a rank tt_type_t cannot hold (tt_type_make keeps the asked
 * rank, its dims stop at TT_MAX_RANK) fails the function instead of being
 * written out with dims that were never set. */
static bool check_types(tt_shlo_fn_t* f, const char* what, const tt_type_t* t, int n) {
  if (f->error) return false;
  for (int i = 0; i < n; i++) {
    if (t[i].rank < 0 || t[i].rank > TT_MAX_RANK) {
      tt_shlo_fail(f, "%s: a value of rank %d (at most %d dimensions are supported)", what,
                   (int)t[i].rank, TT_MAX_RANK);
      return false;
    }
  }
  return true;
}

static bool check_vals(tt_shlo_fn_t* f, const char* what, const tt_val_t* v, int n) {
  if (f->error) return false;
  for (int i = 0; i < n; i++) {
    if (v[i] < 0 || v[i] >= f->nvals) {
      tt_shlo_fail(f, "%s: operand %d is not a value", what, i);
      return false;
    }
  }
  return true;
}

/* "(%a, %b)" */
static void put_operands(tt_shlo_fn_t* f, tt_sbuf_t* b, const tt_val_t* v, int n) {
  tt_sbuf_append(b, "(");
  for (int i = 0; i < n; i++) {
    if (i) tt_sbuf_append(b, ", ");
    tt_sbuf_append(b, VAL(f, v[i])->name);
  }
  tt_sbuf_append(b, ")");
}

/* "(tensor<..>, tensor<..>)" */
static void put_operand_types(tt_shlo_fn_t* f, tt_sbuf_t* b, const tt_val_t* v, int n) {
  tt_sbuf_append(b, "(");
  for (int i = 0; i < n; i++) {
    if (i) tt_sbuf_append(b, ", ");
    put_type(b, &VAL(f, v[i])->type);
  }
  tt_sbuf_append(b, ")");
}

static tt_val_t barrier(tt_shlo_fn_t* f, tt_val_t v) {
  tt_type_t t = VAL(f, v)->type;
  tt_val_t out;
  tt_shlo_op_multi(f, "stablehlo.optimization_barrier", &v, 1, &t, 1, NULL, NULL, &out);
  return out;
}

/* Whether `name` over operands[0..1] is one of the rewrites above; if so,
 * hidden[] holds the operands with the rewritten-around one behind a
 * barrier. */
static bool rewritten_around(tt_shlo_fn_t* f, const char* name, const tt_val_t* operands, int n,
                             tt_val_t* hidden) {
  tt_dtype_t dt = VAL(f, operands[0])->type.dtype;
  if (!tt_dtype_is_float(dt) && !tt_dtype_is_complex(dt)) return false;
  producer_t p0 = (producer_t)VAL(f, operands[0])->producer;
  producer_t p1 = n == 2 ? (producer_t)VAL(f, operands[1])->producer : PRODUCER_OTHER;
  int hide = -1;
  if (n == 1) {
    if (!strcmp(name, "stablehlo.log") && p0 == PRODUCER_EXP) hide = 0;
  } else if (!strcmp(name, "stablehlo.divide")) {
    if (p1 == PRODUCER_DIVIDE || p1 == PRODUCER_ROOT || p1 == PRODUCER_EXP) hide = 1;
    else if (p0 == PRODUCER_DIVIDE) hide = 0;
  } else if (!strcmp(name, "stablehlo.multiply")) {
    if (p0 == PRODUCER_EXP && p1 == PRODUCER_EXP) hide = 1;
  }
  if (hide < 0) return false;
  for (int i = 0; i < n; i++) hidden[i] = operands[i];
  hidden[hide] = barrier(f, operands[hide]);
  return true;
}

/* ---- writes whose update reads the buffer they write --------------------------------------
 * XLA's CPU compiler (both plugins, and jaxlib 0.10.2's) miscompiles a
 * dynamic_update_slice it runs in place when its operand is a reshape (a
 * bitcast) of a value the update also reads:
 *     p = reshape(exp(x) : 1x6 -> 6);  dynamic_update_slice(p, p[0:5] * 2, 1)
 * The fused loop writes p[1] before it reads p[1] for p[2], so each element
 * becomes twice the one just written (a recurrence) instead of twice the
 * old value (Fused Eager's `c[..., 1:].copy_(c[..., :-1] * 2)` on a 1xN
 * tensor). Such a write is built as select(mask, dynamic_update_slice(0, U),
 * X) instead, which XLA computes elementwise into a fresh buffer; every
 * other dynamic_update_slice (the update reads other values: KV caches,
 * view writes of new values, loops) stays one in-place op. */
#define READS_BUDGET 20000 /* values visited before a write is taken as reading its buffer */

/* Does u (transitively) read x, or a value x is a bitcast of? Only asked
 * for an x made by a bitcast-like op (the miscompiled case). */
static bool reads_buffer_of(tt_shlo_fn_t* f, tt_val_t x, tt_val_t u) {
  if (VAL(f, x)->producer != PRODUCER_BITCAST) return false;
  tt_val_t alias[16];
  int na = 0;
  tt_val_t lo = x;
  for (tt_val_t v = x; na < 16;) {
    alias[na++] = v;
    if (v < lo) lo = v;
    value_t* p = VAL(f, v);
    if (p->producer != PRODUCER_BITCAST || p->nopnd < 1) break;
    v = f->opnds[p->opnd_at];
  }
  if (f->capmark < f->nvals) {
    int cap = f->nvals + 1024;
    unsigned* m = realloc(f->mark, sizeof(*m) * (size_t)cap);
    if (!m) return true; /* cannot tell: the safe form */
    memset(m + f->capmark, 0, sizeof(*m) * (size_t)(cap - f->capmark));
    f->mark = m;
    f->capmark = cap;
  }
  if (++f->gen == 0) { /* wrapped: old marks could collide */
    memset(f->mark, 0, sizeof(*f->mark) * (size_t)f->capmark);
    f->gen = 1;
  }
  tt_val_t* stack = malloc(sizeof(*stack) * READS_BUDGET);
  if (!stack) return true;
  int sp = 0, visited = 0;
  bool found = false;
  stack[sp++] = u;
  f->mark[u] = f->gen;
  while (sp && !found) {
    tt_val_t v = stack[--sp];
    for (int i = 0; i < na && !found; i++) found = v == alias[i];
    if (found || ++visited >= READS_BUDGET) {
      found = true;
      break;
    }
    const value_t* p = VAL(f, v);
    for (int i = 0; i < p->nopnd; i++) {
      tt_val_t o = f->opnds[p->opnd_at + i];
      if (o < lo || f->mark[o] == f->gen || sp >= READS_BUDGET) continue;
      f->mark[o] = f->gen;
      stack[sp++] = o;
    }
  }
  free(stack);
  return found;
}

/* dynamic_update_slice(x, u, starts...) as select(mask, dus(0, u), x). */
static tt_val_t write_by_select(tt_shlo_fn_t* f, const tt_val_t* operands, int n) {
  tt_type_t xt = VAL(f, operands[0])->type, ut = VAL(f, operands[1])->type;
  tt_type_t xb = xt, ub = ut;
  xb.dtype = ub.dtype = TT_BOOL;
  tt_val_t ops[2 + TT_MAX_RANK];
  for (int i = 0; i < n && i < 2 + TT_MAX_RANK; i++) ops[i] = operands[i];
  ops[0] = tt_shlo_const(f, &xt, 0.0);
  tt_val_t placed = tt_shlo_op(f, "stablehlo.dynamic_update_slice", ops, n, &xt, NULL);
  ops[0] = tt_shlo_const(f, &xb, 0.0);
  ops[1] = tt_shlo_const(f, &ub, 1.0);
  tt_val_t mask = tt_shlo_op(f, "stablehlo.dynamic_update_slice", ops, n, &xb, NULL);
  tt_val_t sel[3] = {mask, placed, operands[0]};
  return tt_shlo_op(f, "stablehlo.select", sel, 3, &xt, NULL);
}

/* Records the operands of the op that made outs[0..nres). */
static void record_operands(tt_shlo_fn_t* f, const tt_val_t* operands, int n,
                            const tt_val_t* outs, int nres) {
  if (f->nopnds + n > f->capopnds) {
    int cap = f->capopnds ? 2 * f->capopnds : 1024;
    while (cap < f->nopnds + n) cap *= 2;
    int* o = realloc(f->opnds, sizeof(*o) * (size_t)cap);
    if (!o) {
      tt_shlo_fail(f, "out of memory");
      return;
    }
    f->opnds = o;
    f->capopnds = cap;
  }
  int at = f->nopnds;
  for (int i = 0; i < n; i++) f->opnds[f->nopnds++] = operands[i];
  for (int i = 0; i < nres; i++) {
    if (outs[i] == TT_SHLO_INVALID) continue;
    value_t* v = VAL(f, outs[i]);
    v->opnd_at = at;
    v->nopnd = n;
  }
}

/* Whether op `name` over operands makes a value whose elements are all
 * equal: one element, or a shape op / an elementwise op over such values. */
static bool makes_uniform(tt_shlo_fn_t* f, const char* name, const tt_val_t* operands, int n,
                          const tt_type_t* result) {
  if (tt_type_numel(result) == 1) return true;
  static const char* const k_ops[] = {
      "stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.transpose", "stablehlo.convert",
      "stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide",
      "stablehlo.negate", "stablehlo.abs", "stablehlo.sqrt", "stablehlo.rsqrt", "stablehlo.power",
      "stablehlo.exponential", "stablehlo.exponential_minus_one", "stablehlo.log",
      "stablehlo.log_plus_one", "stablehlo.maximum", "stablehlo.minimum", "stablehlo.floor",
      "stablehlo.ceil", "stablehlo.round_nearest_even", "stablehlo.round_nearest_afz",
      "stablehlo.sign", "stablehlo.tanh", "stablehlo.logistic", "stablehlo.select",
      "stablehlo.clamp", "stablehlo.remainder", "stablehlo.optimization_barrier"};
  bool listed = false;
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0] && !listed; i++) listed = !strcmp(name, k_ops[i]);
  if (!listed || n == 0) return false;
  for (int i = 0; i < n; i++)
    if (!VAL(f, operands[i])->uniform) return false;
  return true;
}

/* A divisor d whose elements are all equal (a broadcast scalar, a splat
 * constant, arithmetic on them) as an edge pad of its barrier'd scalar,
 * padded flat and reshaped (a flat storage updated in place stays in
 * place): XLA keeps the divide and fuses the pad, where it turns a divide by
 * a broadcast or a constant into a multiply by the reciprocal. A one-element
 * constant is put behind a barrier. TT_SHLO_INVALID for any other divisor. */
static tt_val_t spread_divisor(tt_shlo_fn_t* f, tt_val_t d) {
  value_t* v = VAL(f, d);
  tt_type_t t = v->type;
  int64_t numel = tt_type_numel(&t);
  if (!tt_dtype_is_float(t.dtype) || numel == 0 || !v->uniform) return TT_SHLO_INVALID;
  if (numel == 1) return v->splat ? barrier(f, d) : TT_SHLO_INVALID;
  tt_type_t st = t;
  st.rank = 0;
  tt_val_t s;
  if (v->splat) {
    s = tt_shlo_const(f, &st, v->splat_v);
  } else { /* its first element (XLA folds the slice into the scalar computation) */
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK];
    for (int i = 0; i < t.rank; i++) hi[i] = 1;
    s = tt_shlo_slice(f, d, lo, hi, NULL);
    if (s == TT_SHLO_INVALID) return TT_SHLO_INVALID;
    s = tt_shlo_op(f, "stablehlo.reshape", &s, 1, &st, NULL);
  }
  s = barrier(f, s);
  int64_t one = 1;
  tt_type_t t1 = tt_type_make(t.dtype, 1, &one), tf = tt_type_make(t.dtype, 1, &numel);
  tt_val_t col = tt_shlo_op(f, "stablehlo.reshape", &s, 1, &t1, NULL);
  tt_val_t ops[2] = {col, s};
  tt_val_t flat = tt_shlo_opf(f, "stablehlo.pad", ops, 2, &tf,
                              "edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: %lld>, "
                              "interior_padding = array<i64: 0>",
                              (long long)(numel - 1));
  return t.rank == 1 ? flat : tt_shlo_op(f, "stablehlo.reshape", &flat, 1, &t, NULL);
}

void tt_shlo_op_multi(tt_shlo_fn_t* f, const char* name, const tt_val_t* operands, int n,
                      const tt_type_t* results, int nres, const char* attrs, char* region,
                      tt_val_t* outs) {
  for (int i = 0; i < nres; i++) outs[i] = TT_SHLO_INVALID;
  if (!check_vals(f, name, operands, n) || !check_types(f, name, results, nres)) {
    free(region);
    return;
  }
  if (nres == 1 && n >= 3 && n <= 2 + TT_MAX_RANK && !region &&
      !strcmp(name, "stablehlo.dynamic_update_slice") &&
      reads_buffer_of(f, operands[0], operands[1])) {
    outs[0] = write_by_select(f, operands, n);
    return;
  }
  tt_val_t hidden[2];
  if (nres == 1 && n == 2 && f->depth == 0 && !strcmp(name, "stablehlo.divide")) { /* (not in a region's scalar body) */
    tt_val_t spread = spread_divisor(f, operands[1]);
    if (spread != TT_SHLO_INVALID) {
      hidden[0] = operands[0];
      hidden[1] = spread;
      operands = hidden;
    }
  }
  if (nres == 1 && (n == 1 || n == 2) && rewritten_around(f, name, operands, n, hidden)) operands = hidden;
  if (f->error) {
    free(region);
    return;
  }
  tt_sbuf_t* b = &f->text[f->depth];
  int id = f->next_id++;
  tt_sbuf_append(b, "    ");
  if (nres == 1) tt_sbuf_printf(b, "%%v%d = ", id);
  else if (nres > 1) tt_sbuf_printf(b, "%%v%d:%d = ", id, nres);
  tt_sbuf_printf(b, "\"%s\"", name);
  put_operands(f, b, operands, n);
  if (region) {
    tt_sbuf_append(b, " ");
    tt_sbuf_append(b, region);
    free(region);
  }
  if (attrs && *attrs) tt_sbuf_printf(b, " {%s}", attrs);
  tt_sbuf_append(b, " : ");
  put_operand_types(f, b, operands, n);
  tt_sbuf_append(b, " -> ");
  if (nres != 1) tt_sbuf_append(b, "(");
  for (int i = 0; i < nres; i++) {
    if (i) tt_sbuf_append(b, ", ");
    put_type(b, &results[i]);
  }
  if (nres != 1) tt_sbuf_append(b, ")");
  tt_sbuf_append(b, "\n");
  for (int i = 0; i < nres; i++) {
    char vn[28];
    if (nres == 1) snprintf(vn, sizeof(vn), "%%v%d", id);
    else snprintf(vn, sizeof(vn), "%%v%d#%d", id, i);
    outs[i] = new_value(f, &results[i], vn);
    if (nres == 1 && outs[i] != TT_SHLO_INVALID) {
      VAL(f, outs[i])->producer = (unsigned char)producer_of(name);
      VAL(f, outs[i])->uniform = makes_uniform(f, name, operands, n, &results[0]);
    }
  }
  record_operands(f, operands, n, outs, nres);
  if (b->oom) tt_shlo_fail(f, "out of memory");
}

tt_val_t tt_shlo_op(tt_shlo_fn_t* f, const char* name, const tt_val_t* operands, int n,
                    const tt_type_t* result, const char* attrs) {
  tt_val_t out;
  tt_shlo_op_multi(f, name, operands, n, result, 1, attrs, NULL, &out);
  return out;
}

tt_val_t tt_shlo_opf(tt_shlo_fn_t* f, const char* name, const tt_val_t* operands, int n,
                     const tt_type_t* result, const char* attrs_fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, attrs_fmt);
  int w = vsnprintf(buf, sizeof(buf), attrs_fmt, ap);
  va_end(ap);
  if (w < 0 || (size_t)w >= sizeof(buf)) {
    tt_shlo_fail(f, "%s: attributes too long", name);
    return TT_SHLO_INVALID;
  }
  return tt_shlo_op(f, name, operands, n, result, buf);
}

/* An op whose attributes are three i64 arrays of `rank` elements. */
static tt_val_t op_i64_attrs(tt_shlo_fn_t* f, const char* name, const tt_val_t* operands, int n,
                             const tt_type_t* result, const char* const names[3],
                             const int64_t* const vals[3], int rank) {
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  for (int k = 0; k < 3; k++) {
    tt_sbuf_printf(&a, "%s%s = ", k ? ", " : "", names[k]);
    tt_shlo_fmt_i64_array(&a, vals[k], rank);
  }
  tt_val_t r = TT_SHLO_INVALID;
  if (a.oom) tt_shlo_fail(f, "out of memory");
  else r = tt_shlo_op(f, name, operands, n, result, a.data);
  tt_sbuf_free(&a);
  return r;
}

tt_val_t tt_shlo_slice(tt_shlo_fn_t* f, tt_val_t v, const int64_t* start, const int64_t* limit,
                       const int64_t* strides) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  int64_t ones[TT_MAX_RANK];
  for (int i = 0; i < t->rank; i++) {
    ones[i] = 1;
    int64_t st = strides ? strides[i] : 1;
    if (st < 1 || start[i] < 0 || limit[i] < start[i] || limit[i] > t->dims[i]) {
      tt_shlo_fail(f, "stablehlo.slice: bad bounds in dim %d", i);
      return TT_SHLO_INVALID;
    }
    rt.dims[i] = (limit[i] - start[i] + st - 1) / st;
  }
  const char* names[3] = {"start_indices", "limit_indices", "strides"};
  const int64_t* vals[3] = {start, limit, strides ? strides : ones};
  return op_i64_attrs(f, "stablehlo.slice", &v, 1, &rt, names, vals, t->rank);
}

tt_val_t tt_shlo_pad(tt_shlo_fn_t* f, tt_val_t v, tt_val_t value, const int64_t* lo, const int64_t* hi,
                     const int64_t* interior) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t) return TT_SHLO_INVALID;
  tt_type_t rt = *t;
  int64_t zeros[TT_MAX_RANK];
  for (int i = 0; i < t->rank; i++) {
    zeros[i] = 0;
    int64_t in = interior ? interior[i] : 0, d = t->dims[i];
    rt.dims[i] = lo[i] + hi[i] + d + (d > 0 ? (d - 1) * in : 0);
    if (in < 0 || rt.dims[i] < 0) {
      tt_shlo_fail(f, "stablehlo.pad: bad padding in dim %d", i);
      return TT_SHLO_INVALID;
    }
  }
  const char* names[3] = {"edge_padding_low", "edge_padding_high", "interior_padding"};
  const int64_t* vals[3] = {lo, hi, interior ? interior : zeros};
  tt_val_t ops[2] = {v, value};
  return op_i64_attrs(f, "stablehlo.pad", ops, 2, &rt, names, vals, t->rank);
}

void tt_shlo_region_begin(tt_shlo_fn_t* f, const tt_type_t* arg_types, int nargs, tt_val_t* args) {
  for (int i = 0; i < nargs; i++) args[i] = TT_SHLO_INVALID;
  if (!check_types(f, "region", arg_types, nargs)) return;
  if (f->depth >= MAX_REGION_DEPTH) {
    tt_shlo_fail(f, "regions nested too deeply");
    return;
  }
  f->depth++;
  tt_sbuf_t* b = &f->text[f->depth];
  tt_sbuf_clear(b);
  tt_sbuf_append(b, "({\n  ^bb0(");
  for (int i = 0; i < nargs; i++) {
    char vn[28];
    snprintf(vn, sizeof(vn), "%%v%d", f->next_id++);
    if (i) tt_sbuf_append(b, ", ");
    tt_sbuf_printf(b, "%s: ", vn);
    put_type(b, &arg_types[i]);
    args[i] = new_value(f, &arg_types[i], vn);
  }
  tt_sbuf_append(b, "):\n");
}

char* tt_shlo_region_end(tt_shlo_fn_t* f, const tt_val_t* results, int nres) {
  if (f->error) return NULL;
  if (f->depth == 0) {
    tt_shlo_fail(f, "region_end without region_begin");
    return NULL;
  }
  if (!check_vals(f, "stablehlo.return", results, nres)) return NULL;
  tt_sbuf_t* b = &f->text[f->depth];
  tt_sbuf_append(b, "    \"stablehlo.return\"");
  put_operands(f, b, results, nres);
  tt_sbuf_append(b, " : ");
  put_operand_types(f, b, results, nres);
  tt_sbuf_append(b, " -> ()\n  })");
  f->depth--;
  if (b->oom) {
    tt_shlo_fail(f, "out of memory");
    return NULL;
  }
  char* s = strdup(b->data);
  tt_sbuf_clear(b);
  if (!s) tt_shlo_fail(f, "out of memory");
  return s;
}

/* Writes one element of a constant, bit-exact for floats. */
/* Round to nearest even; NaN stays a quiet NaN. */
static unsigned tt_f32_to_bf16_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return ((u >> 16) | 0x40u) & 0xffffu;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (u >> 16) & 0xffffu;
}

/* IEEE half from float, round to nearest even (subnormals, inf, nan). */
static unsigned tt_f32_to_f16_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t ax = u & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | 0x7e00u;              /* nan */
  if (ax >= 0x477ff000u) return sign | 0x7c00u;             /* overflow (incl. inf) */
  if (ax < 0x38800000u) {                                   /* subnormal or zero */
    float f;
    memcpy(&f, &ax, 4);
    f = f * 16777216.0f; /* 2^24: units of the smallest half subnormal */
    uint32_t m = (uint32_t)f;
    float rem = f - (float)m;
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) m++;
    return sign | m;
  }
  uint32_t e = ((ax >> 23) - 112u) << 10;
  uint32_t m = ax & 0x7fffffu;
  uint32_t h = e | (m >> 13);
  uint32_t low = m & 0x1fffu;
  if (low > 0x1000u || (low == 0x1000u && (h & 1u))) h++;
  return sign | h;
}

/* float8 from float as PyTorch converts (c10's Float8_* from float): round
 * to nearest even; overflow saturates in e4m3fn (no inf; +-inf too), is inf
 * in e5m2, NaN in the fnuz types (no inf, no -0, NaN 0x80). NaN: 0x7f with
 * the sign (0x80 in fnuz). */
static unsigned tt_f32_to_f8_bits(tt_dtype_t dt, float x) {
  int mbits = dt == TT_F8E5M2 || dt == TT_F8E5M2FNUZ ? 2 : 3;
  int bias = dt == TT_F8E4M3FN ? 7 : dt == TT_F8E5M2 ? 15 : dt == TT_F8E4M3FNUZ ? 8 : 16;
  double max = dt == TT_F8E4M3FN ? 448.0 : dt == TT_F8E4M3FNUZ ? 240.0 : 57344.0;
  bool fnuz = dt == TT_F8E4M3FNUZ || dt == TT_F8E5M2FNUZ;
  unsigned sign = signbit(x) ? 0x80u : 0u;
  if (isnan(x)) return fnuz ? 0x80u : sign | 0x7fu;
  double a = fabs((double)x), r = a;
  if (!isinf(a) && a != 0.0) {
    int e;
    frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
    int E = e - 1 > 1 - bias ? e - 1 : 1 - bias;
    double q = ldexp(1.0, E - mbits); /* the spacing at a (subnormals: the smallest) */
    r = nearbyint(a / q) * q;         /* ties to even in the default rounding mode */
  }
  if (r > max) {
    if (dt == TT_F8E4M3FN) r = max;
    else return fnuz ? 0x80u : sign | 0x7cu;
  }
  if (r == 0.0) return fnuz ? 0u : sign;
  int e2;
  frexp(r, &e2);
  int E2 = e2 - 1;
  unsigned bits;
  if (E2 < 1 - bias) bits = (unsigned)(r / ldexp(1.0, 1 - bias - mbits));
  else bits = ((unsigned)(E2 + bias) << mbits) | (unsigned)((r / ldexp(1.0, E2) - 1.0) * (double)(1 << mbits));
  return sign | bits;
}

static void put_elem(tt_sbuf_t* b, tt_dtype_t dt, double v) {
  switch (dt) {
    case TT_F8E4M3FN:
    case TT_F8E5M2:
    case TT_F8E4M3FNUZ:
    case TT_F8E5M2FNUZ:
      tt_sbuf_printf(b, "0x%02X", tt_f32_to_f8_bits(dt, (float)v));
      return;
    case TT_BOOL:
      tt_sbuf_append(b, v != 0 ? "true" : "false");
      return;
    case TT_F32: {
      float x = (float)v;
      uint32_t bits;
      memcpy(&bits, &x, 4);
      tt_sbuf_printf(b, "0x%08X", bits);
      return;
    }
    case TT_F64: {
      uint64_t bits;
      memcpy(&bits, &v, 8);
      tt_sbuf_printf(b, "0x%016llX", (unsigned long long)bits);
      return;
    }
    case TT_F16:
      tt_sbuf_printf(b, "0x%04X", tt_f32_to_f16_bits((float)v));
      return;
    case TT_BF16:
      tt_sbuf_printf(b, "0x%04X", tt_f32_to_bf16_bits((float)v));
      return;
    case TT_C64:
    case TT_C128: /* (re, im): a real value, imaginary part +0 */
      tt_sbuf_append(b, "(");
      put_elem(b, tt_dtype_real_part(dt), v);
      tt_sbuf_append(b, ", ");
      put_elem(b, tt_dtype_real_part(dt), 0.0);
      tt_sbuf_append(b, ")");
      return;
    default:
      if (tt_dtype_is_unsigned_int(dt)) tt_sbuf_printf(b, "%llu", (unsigned long long)v);
      else tt_sbuf_printf(b, "%lld", (long long)v);
      return;
  }
}

tt_val_t tt_shlo_const(tt_shlo_fn_t* f, const tt_type_t* type, double v) {
  if (!check_types(f, "stablehlo.constant", type, 1)) return TT_SHLO_INVALID;
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "value = dense<");
  put_elem(&a, type->dtype, v);
  tt_sbuf_append(&a, "> : ");
  put_type(&a, type);
  tt_val_t r = a.oom ? TT_SHLO_INVALID : tt_shlo_op(f, "stablehlo.constant", NULL, 0, type, a.data);
  tt_sbuf_free(&a);
  if (r != TT_SHLO_INVALID) {
    VAL(f, r)->splat = VAL(f, r)->uniform = 1;
    VAL(f, r)->splat_v = v;
  }
  return r;
}

tt_val_t tt_shlo_const_i64(tt_shlo_fn_t* f, const tt_type_t* type, int64_t v) {
  if (!check_types(f, "stablehlo.constant", type, 1)) return TT_SHLO_INVALID;
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "value = dense<");
  if (type->dtype == TT_BOOL) tt_sbuf_append(&a, v ? "true" : "false");
  else if (tt_dtype_is_float(type->dtype) || tt_dtype_is_complex(type->dtype))
    put_elem(&a, type->dtype, (double)v);
  else if (tt_dtype_is_unsigned_int(type->dtype)) tt_sbuf_printf(&a, "%llu", (unsigned long long)v);
  else tt_sbuf_printf(&a, "%lld", (long long)v);
  tt_sbuf_append(&a, "> : ");
  put_type(&a, type);
  tt_val_t r = a.oom ? TT_SHLO_INVALID : tt_shlo_op(f, "stablehlo.constant", NULL, 0, type, a.data);
  tt_sbuf_free(&a);
  if (r != TT_SHLO_INVALID) VAL(f, r)->uniform = 1;
  return r;
}

tt_val_t tt_shlo_const_i64s(tt_shlo_fn_t* f, const int64_t* vals, int n) {
  int64_t dims[1] = {n};
  tt_type_t t = tt_type_make(TT_I64, 1, dims);
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "value = dense<");
  tt_shlo_fmt_i64_list(&a, vals, n);
  tt_sbuf_append(&a, "> : ");
  put_type(&a, &t);
  tt_val_t r = a.oom ? TT_SHLO_INVALID : tt_shlo_op(f, "stablehlo.constant", NULL, 0, &t, a.data);
  tt_sbuf_free(&a);
  return r;
}

void tt_shlo_fmt_i64_array(tt_sbuf_t* b, const int64_t* v, int n) {
  tt_sbuf_append(b, n ? "array<i64: " : "array<i64");
  for (int i = 0; i < n; i++) tt_sbuf_printf(b, i ? ", %lld" : "%lld", (long long)v[i]);
  tt_sbuf_append(b, ">");
}

void tt_shlo_fmt_i64_list(tt_sbuf_t* b, const int64_t* v, int n) {
  tt_sbuf_append(b, "[");
  for (int i = 0; i < n; i++) tt_sbuf_printf(b, i ? ", %lld" : "%lld", (long long)v[i]);
  tt_sbuf_append(b, "]");
}

tt_status_t tt_shlo_fn_finish(tt_shlo_fn_t* f, const tt_val_t* results, int nres, tt_sbuf_t* out) {
  if (!f->error && f->depth != 0) tt_shlo_fail(f, "unterminated region");
  if (!f->error) check_vals(f, "func.return", results, nres);
  if (f->error) return tt_status_make(TT_INTERNAL, "building StableHLO: %s", f->error);
  tt_sbuf_clear(out);
  tt_sbuf_append(out, "module @tt_program {\n  func.func public @main(");
  tt_sbuf_append(out, f->params.data ? f->params.data : "");
  tt_sbuf_append(out, ") -> (");
  for (int i = 0; i < nres; i++) {
    if (i) tt_sbuf_append(out, ", ");
    put_type(out, &VAL(f, results[i])->type);
  }
  tt_sbuf_append(out, ") {\n");
  tt_sbuf_append(out, f->text[0].data ? f->text[0].data : "");
  tt_sbuf_append(out, "    \"func.return\"");
  put_operands(f, out, results, nres);
  tt_sbuf_append(out, " : ");
  put_operand_types(f, out, results, nres);
  tt_sbuf_append(out, " -> ()\n  }\n}\n");
  if (out->oom || f->text[0].oom || f->params.oom)
    return tt_status_make(TT_RESOURCE_EXHAUSTED, "building StableHLO: out of memory");
  return NULL;
}
