/* torch_tpu core: one program from a sequence of calls (DESIGN §6).
 *
 * A plan keys the signature of a sequence of calls (one call for Strict and
 * Debug Eager, a recorded graph for a Fused Eager flush) and builds the
 * StableHLO text of the one program that runs them. The runtime finds or
 * compiles the program by the plan's key, passes the parameters the plan
 * lists and installs the results it names.
 *
 * A program's parameters are: one 1-D buffer per distinct storage whose
 * value from before the program it reads (or partially writes), then the
 * runtime values ("extras") in argument order (dynamic view offsets,
 * Scalars, host 0-dim tensors, RNG states); a fused plan packs the runtime
 * scalars of each dtype into one 1-D parameter. Its results are the new
 * values of the storages it writes (in a fused plan: those whose value is
 * still wanted), then the device-side checks.
 *
 * graph/ holds no storage of its own: storages are identities here, and
 * what the plan must know about one (its device, size, value before the
 * program) it asks the runtime through tt_plan_env_t.
 *
 * Ownership: tt_plan_acquire returns the calling thread's plan (reused;
 * freed when the thread exits). Captures: tt_capture_create returns an
 * owned capture (tt_capture_destroy).
 * Thread rules: a plan is the calling thread's; the runtime's lock
 * serializes what the env callbacks touch. */
#ifndef TT_PROGRAM_H_
#define TT_PROGRAM_H_

#include "tt_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A storage's value before the program, which reads it. */
typedef struct tt_plan_initial {
  bool zero;        /* empty (never written): zeros made in the program, nothing passed in */
  tt_dtype_t dtype; /* the 1-D buffer passed in (or the zeros' type) */
  int64_t numel;
} tt_plan_initial_t;

/* What the plan asks the runtime about storages (rt->mu held while planning). */
typedef struct tt_plan_env {
  void* ctx;
  int (*device)(void* ctx, tt_storage_t* s);
  size_t (*nbytes)(void* ctx, tt_storage_t* s);
  /* Its value before the program, read by it (materializing it where it is
   * on the host). An error: a failed storage's (*device_error set) or the
   * upload's. `hint`: the dtype the program reads it in; `op` names the op. */
  tt_status_t (*initial)(void* ctx, tt_storage_t* s, tt_dtype_t hint, const char* op, tt_plan_initial_t* out,
                         bool* device_error);
  /* Fused plans: whether its value after the program is still wanted (PyTorch,
   * or calls recorded after these, hold it). */
  bool (*wanted)(void* ctx, tt_storage_t* s);
} tt_plan_env_t;

/* Per distinct storage of a program. */
typedef struct tt_plan_st {
  tt_storage_t* s;
  bool param;       /* its value from before the program is read: passed in */
  bool zero;        /* its value from before the program is read, and it is empty: zeros
                       made in the program (param_dtype, param_numel), nothing uploaded */
  bool has_val;     /* the program has written it so far */
  bool result;      /* its final value is a result */
  tt_dtype_t dtype; /* the type of its (final) value */
  int64_t numel;
  tt_dtype_t param_dtype; /* param: the buffer passed in */
  int64_t param_numel;
  const char* producer; /* static: the op that wrote it last */
} tt_plan_st_t;

/* A runtime value the program takes. */
typedef struct tt_plan_extra {
  tt_type_t type;
  bool rng;          /* a call's RNG state: bytes hold (seed, offset) as two u64 */
  bool packed;       /* fused plans: a slot of its dtype's packed parameter */
  int group, slot;
  unsigned char bytes[16];
  uint64_t host_id;  /* a host tensor's value (captures): its identity, else 0 */
} tt_plan_extra_t;

typedef struct tt_plan_out { /* per output of each call */
  int st;             /* storage index, -1: dropped */
  bool full;
  int extra;          /* dynamic offset param, or -1 */
} tt_plan_out_t;

typedef struct tt_plan {
  const tt_plan_env_t* env;
  const tt_call_t* const* calls;
  int ncalls;
  bool fused;        /* results: only storages whose value is wanted; scalars packed */
  bool donate;       /* a storage read and rewritten gives its buffer to its new value */
  tt_sbuf_t key;     /* the program's signature (what the executable cache keys) */
  tt_plan_st_t* st;
  int nst, capst;
  tt_plan_extra_t* extra;
  int nextra, capextra;
  /* decisions of pass 1, replayed by pass 2: per tensor occurrence */
  struct tt_plan_occ { int st, extra; /* offset param, or -1 */ } * occ;
  int nocc, capocc;
  int* call_extra0; /* per call: its first extra */
  int capcalls;
  /* Fused plans pass the runtime scalars of each dtype (Scalars, host 0-dim
   * values, view offsets) as one 1-D parameter, uploaded per run, instead of
   * one parameter each: Execute's cost grows with its argument count (a
   * chain of 100 ops with a Scalar each: 100 arguments). */
  int ngroups;
  tt_dtype_t group_dt[TT_DTYPE_COUNT];
  int group_n[TT_DTYPE_COUNT];
  tt_plan_out_t* out; /* all outputs of all calls, in order */
  int nout, capout;
  int* res_st;        /* storages with a result, in result order */
  int nres, capres;
  bool device_error;  /* the failure is the device's (a failed input) */
  /* device-side checks of the program built (moved out by the runtime) */
  int nchecks, capchecks;
  int* check_codes;
  char** check_msgs;  /* owned, each owned */
  const char** check_ops;
  /* storage -> index, for plans of many storages (open addressing) */
  tt_storage_t** map_keys;
  int* map_vals;
  int capmap;
} tt_plan_t;

/* The calling thread's plan, reset for `calls` (NULL: out of host memory). */
tt_plan_t* tt_plan_acquire(const tt_plan_env_t* env, const tt_call_t* const* calls, int ncalls, bool fused,
                           bool donate);
/* Frees what the last use left (check messages not moved out). */
void tt_plan_release(tt_plan_t* p);
/* Pass 1: the key, the storages and their roles, the extras, the results. */
tt_status_t tt_plan_calls(tt_plan_t* p);
/* Pass 2: the program's text (after tt_plan_calls). Fills the plan's checks. */
tt_status_t tt_plan_build(tt_plan_t* p, tt_sbuf_t* text);
/* The result index the parameter of p->st[i] is donated to, or -1. */
int tt_plan_donated_result(const tt_plan_t* p, int i);
/* What errors and dumps call the program. */
const char* tt_plan_name(const tt_plan_t* p, bool capture);

/* ---- views inside a program (lower/view on the view's layout) ------------------- */
bool tt_view_is_contiguous(const tt_view_t* v);
/* Contiguous, offset 0, no math bits, covering all `nbytes` of its storage. */
bool tt_view_covers(const tt_view_t* v, size_t nbytes);
/* offset_param: a 0-d i64 value holding the offset, or TT_SHLO_INVALID for the
 * static v->offset. base: 1-D value of the storage's buffer. */
tt_val_t tt_view_read(tt_shlo_fn_t* f, tt_val_t base, const tt_view_t* v, tt_val_t offset_param);
tt_val_t tt_view_write(tt_shlo_fn_t* f, tt_val_t base, const tt_view_t* v, tt_val_t offset_param,
                       tt_val_t value);

/* ---- recording (Fused Eager) -------------------------------------------------------- */

/* An attribute argument (INT, BOOL, FLOAT, INTS, STR) as the lowering sees it. */
void tt_larg_attr(const tt_call_arg_t* a, tt_larg_t* l);

/* Runs the lowering of call c on parameters of its argument types (the
 * program is thrown away): what a lowering refuses is raised at the op it
 * was recorded for, and a flush never meets a call it cannot lower. */
tt_status_t tt_graph_check_lowering(const tt_call_t* c);

/* A set of call hashes (tt_graph_call_hash) whose lowering was checked. */
typedef struct tt_sigset {
  uint64_t* slots;   /* owned; 0 = empty */
  size_t n, cap;
} tt_sigset_t;
/* Whether h is in the set; adds it when `add` (and memory allows). */
bool tt_sigset_has(tt_sigset_t* s, uint64_t h);
void tt_sigset_add(tt_sigset_t* s, uint64_t h);
void tt_sigset_free(tt_sigset_t* s);

/* Where a graph of recorded calls is cut, after each append:
 * - at `max_ops` calls (TORCH_TPU_FUSE_MAX_OPS, tt_graph_max_ops), all of it;
 * - once it holds TT_GRAPH_CUT_MIN calls, where a repeated block ends (the
 *   newest k calls repeat the k before them, 2 <= k <= 128, by structural
 *   hash): a loop without host reads is cut at the same calls every
 *   iteration and settles on a few cached programs;
 * - before a call of another thread, once it holds TT_GRAPH_THREAD_CUT_MIN.
 * Returns how many of the oldest calls to run now (0: none). */
#define TT_GRAPH_CUT_MIN 32
#define TT_GRAPH_THREAD_CUT_MIN 8
int tt_graph_cut(const tt_graph_t* g, int max_ops);
int tt_graph_max_ops(void);

/* ---- captured programs (torch.compile, DESIGN §8) ---------------------------------
 * What it takes to run a fused plan's program again on other storages: the
 * key of its executable, its storages named by role (an input of the
 * caller's, or one the captured calls created), their types, its packed
 * scalars and RNG states. The runtime makes it from the plan of the flush
 * that ends a capture, and replays it. */

/* A storage of a captured program. */
typedef struct tt_capture_st {
  tt_storage_t* s;            /* while the capture is made only: an identity (a storage
                                 the program did not keep may be freed already) */
  size_t nbytes;
  uint64_t born;
  int slot;                   /* >= 0: input index; < 0: new storage -slot-1 */
  bool param;                 /* its value from before the program is passed in */
  tt_dtype_t param_dtype;     /* ... as a 1-D buffer of this type */
  int64_t param_numel;
  bool zero;                  /* its value from before the program is read but was empty:
                                 zeros made in the program (a replay's must be empty too) */
  bool result;                /* the program gives its new value */
  tt_dtype_t res_dtype;
  int64_t res_numel;
  const char* producer;       /* static: the op that wrote it last */
} tt_capture_st_t;

struct tt_capture {
  bool has_program;           /* false: the calls wrote nothing (outputs are views, empties) */
  bool oom;
  int device;
  unsigned char* key;         /* owned: the program's plan key, to find its executable */
  size_t key_len;
  uint64_t hash;
  const char* name;           /* static */
  tt_capture_st_t* st;        /* owned, nst: in the plan's order (parameters pass in it) */
  int nst;
  int* res;                   /* owned, nres: st index of each result, in result order */
  int nres;
  int nchecks;                /* device-side checks after the results */
  int ngroups;                /* packed scalars: per dtype, the bytes of all slots */
  tt_dtype_t group_dt[TT_DTYPE_COUNT];
  int group_n[TT_DTYPE_COUNT];
  unsigned char* group_bytes[TT_DTYPE_COUNT]; /* owned */
  /* owned, per slot: the index of the host value it takes at replay, or -1
   * (a constant); while the capture is made, the host tensor's identity */
  int64_t* group_host[TT_DTYPE_COUNT];
  bool has_host;              /* some slot takes a host value */
  int nhost;                  /* host values a replay passes */
  uint64_t* rng;              /* owned, 2 * nrng: (seed, offset) of each RNG call, in order */
  int nrng;
  int nin;                    /* inputs the caller passes */
  size_t* new_nbytes;         /* owned, nnew */
  int nnew;
  int* out_slot;              /* owned, nout: as tt_capture_st_t.slot; TT_CAPTURE_NONE */
  int nout;
};
typedef struct tt_capture tt_capture_t;
#define TT_CAPTURE_NONE (-2147483647 - 1) /* an output that is not a device tensor */

tt_capture_t* tt_capture_create(void); /* NULL: out of host memory */
void tt_capture_destroy(tt_capture_t* c); /* NULL-safe */
/* Notes the program of fused plan p (its executable: `hash`, with `nchecks`
 * checks). born(ctx, s): the serial the runtime gave storage s when it was
 * made. Out of host memory: c->oom. */
void tt_capture_note(tt_capture_t* c, const tt_plan_t* p, uint64_t hash, int nchecks,
                     uint64_t (*born)(void* ctx, tt_storage_t* s), void* ctx);
/* An output of the captured calls, as the runtime sees it at the end. */
typedef struct tt_capture_output {
  tt_storage_t* s;  /* NULL: not a device tensor */
  uint64_t born;
  size_t nbytes;
  bool empty;       /* never written */
} tt_capture_output_t;
/* Names every storage of the noted program and every output by role:
 * inputs by identity, storages born after serial0 as new. Then maps the
 * host values the program took to the caller's (host_ids). Returns NULL,
 * or why the capture cannot be replayed (static text). */
const char* tt_capture_assign(tt_capture_t* c, uint64_t serial0, tt_storage_t* const* inputs, int nin,
                              const tt_capture_output_t* outputs, int nout, const uint64_t* host_ids,
                              int nhost);
int tt_capture_device(const tt_capture_t* c);
int tt_capture_new_count(const tt_capture_t* c);
size_t tt_capture_new_nbytes(const tt_capture_t* c, int j);
/* Output i's storage: >= 0 input index, TT_CAPTURE_NONE, else new storage -slot-1. */
int tt_capture_output_slot(const tt_capture_t* c, int i);
bool tt_capture_uses_rng(const tt_capture_t* c);
/* The bytes of packed group g with this replay's host values patched in:
 * c->group_bytes[g], or *scratch (owned by the caller, NULL if unused).
 * NULL: out of host memory. */
const unsigned char* tt_capture_group_bytes(const tt_capture_t* c, int g, const void* const* host_vals,
                                            unsigned char** scratch);

#ifdef __cplusplus
}
#endif
#endif /* TT_PROGRAM_H_ */
