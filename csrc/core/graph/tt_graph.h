/* torch_tpu core: deferred op calls (Fused Eager, DESIGN §6).
 *
 * This header also defines what one op call is (tt_call_t): the runtime runs
 * calls one at a time (Strict/Debug) or records them in a graph and runs the
 * graph as one program when a value is needed (Fused).
 *
 * A graph holds deep copies of calls: every argument list, int array, string
 * and output view lives in the graph's arena (reset wholesale), so the
 * caller's memory may go right after tt_graph_append. Storages are borrowed
 * pointers: the runtime keeps the storages of a graph alive until it runs.
 * Each node carries a structural hash (op, argument kinds, dtypes, shapes,
 * strides, attributes; no storage identity, no scalar values) for the
 * repeated-block detector.
 *
 * Ownership: tt_graph_create returns an owned graph (tt_graph_destroy).
 * Thread rules: thread-compatible (the runtime's lock serializes uses). */
#ifndef TT_GRAPH_H_
#define TT_GRAPH_H_

#include "../lower/tt_lower.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tt_storage tt_storage_t;

/* A strided window on a storage, in elements of `dtype` (as a PyTorch tensor). */
typedef struct tt_view {
  tt_storage_t* storage;
  tt_dtype_t dtype;
  int32_t rank;
  int64_t sizes[TT_MAX_RANK];
  int64_t strides[TT_MAX_RANK];
  int64_t offset;
  /* PyTorch's lazy math bits: reads see conj(x) / -x of the stored values,
   * writes store conj / -value (both are involutions). */
  bool conj;
  bool neg;
} tt_view_t;

/* The view's layout over its storage's buffer (what lower/view/view.c reads
 * and writes). */
static inline tt_layout_t tt_view_layout(const tt_view_t* v) {
  tt_layout_t l;
  l.dtype = v->dtype;
  l.rank = v->rank;
  for (int i = 0; i < TT_MAX_RANK; i++) {
    l.sizes[i] = i < v->rank ? v->sizes[i] : 0;
    l.strides[i] = i < v->rank ? v->strides[i] : 0;
  }
  l.offset = v->offset;
  l.conj = v->conj;
  l.neg = v->neg;
  return l;
}

int64_t tt_view_numel(const tt_view_t* v);

typedef struct tt_call_arg {
  tt_arg_kind_t kind;
  tt_tier_t tier;             /* TENSOR */
  tt_view_t view;             /* TENSOR on the device */
  bool on_host;               /* TENSOR that is a 0-dim host value (in `scalar`) */
  uint64_t host_id;           /* on_host: the host tensor's identity (0: none), by which a
                                 capture (graph/capture.c) finds its value again */
  tt_dtype_t sdtype;          /* SCALAR (F64, I64 or BOOL) / on_host TENSOR dtype */
  union { double f; int64_t i; uint64_t bits; unsigned char bytes[16]; } scalar; /* 16: complex128 */
  const struct tt_call_arg* list; /* TENSORS / SCALARS: n entries (TENSOR / SCALAR / NONE) */
  int n;                      /* TENSORS, SCALARS, INTS */
  int64_t i;                  /* INT, BOOL */
  double f;                   /* FLOAT */
  const int64_t* ints;        /* INTS */
  const char* str;            /* STR */
} tt_call_arg_t;

typedef struct tt_call {
  const tt_lower_entry_t* op;
  const tt_call_arg_t* args;
  int nargs;
  const tt_view_t* outs;   /* where each output is written; storage NULL: computed and
                              dropped (its sizes/dtype still give the lowering's out type) */
  const tt_dtype_t* out_dtypes; /* dtype each output is computed in (= outs[i].dtype) */
  int nout;
  int device;
  uint64_t rng[2];         /* (seed, offset) when op->flags & TT_LF_RNG */
} tt_call_t;

typedef struct tt_graph tt_graph_t;

tt_graph_t* tt_graph_create(void); /* NULL: out of host memory */
void tt_graph_destroy(tt_graph_t* g); /* NULL-safe */

/* Appends a deep copy of `call`. Fails only when out of host memory. */
tt_status_t tt_graph_append(tt_graph_t* g, const tt_call_t* call);
/* The same, with the call's hash (tt_graph_call_hash) already computed. */
tt_status_t tt_graph_append_hashed(tt_graph_t* g, const tt_call_t* call, uint64_t hash);
int tt_graph_size(const tt_graph_t* g);
/* The i-th recorded call (borrowed; valid until the next reset). */
const tt_call_t* tt_graph_call(const tt_graph_t* g, int i);
uint64_t tt_graph_node_hash(const tt_graph_t* g, int i);
/* Forgets every node (the arena's memory is kept for the next graph). */
void tt_graph_reset(tt_graph_t* g);

/* The repeated-block detector: the largest k in [kmin, kmax] such that the
 * newest k nodes have the hashes of the k nodes before them; 0 if none. */
int tt_graph_repeat(const tt_graph_t* g, int kmin, int kmax);

/* The structural hash of a call (what tt_graph_node_hash returns for it). */
uint64_t tt_graph_call_hash(const tt_call_t* call);

#ifdef __cplusplus
}
#endif
#endif /* TT_GRAPH_H_ */
