/* torch_tpu core: ATen op -> StableHLO lowerings, as tables.
 *
 * A lowering receives its ATen arguments (tensors already read into StableHLO
 * values in their own dtype and logical shape; scalars; static attributes) and
 * the types its outputs must have (computed by PyTorch's meta kernels), and
 * emits only the computation. It never decides output shapes or dtypes, and it
 * never sees storages, strides or views: the runtime reads views before and
 * writes outputs after. Every mode (Strict/Debug/Fused Eager, torch.compile)
 * uses these same functions.
 *
 * Argument convention: `args` holds every argument of the ATen schema in order
 * (out= arguments included, as TT_ARG_OUT, which lowerings ignore). In-place
 * ops (add_) receive `self` as a normal tensor input; their single output is
 * written back into self by the runtime. So `add`, `add_` and `add.out` share
 * one lowering function.
 *
 * Thread rules: the tables are immutable; lowering functions are reentrant. */
#ifndef TT_LOWER_H_
#define TT_LOWER_H_

#include "../shlo/tt_shlo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tt_arg_kind {
  TT_ARG_NONE = 0,  /* None / absent optional */
  TT_ARG_TENSOR,    /* val (+ tier) */
  TT_ARG_TENSORS,   /* vals[n] (Tensor[] / Tensor?[]: a missing entry is TT_SHLO_INVALID) */
  TT_ARG_SCALAR,    /* runtime Scalar: val is a 0-d f64 (float), i64 (int) or i1 (bool) */
  TT_ARG_SCALARS,   /* runtime Scalar[]: vals[n], each as TT_ARG_SCALAR */
  TT_ARG_INT,       /* static int (also: ScalarType as tt_dtype_t, MemoryFormat, Layout) */
  TT_ARG_FLOAT,     /* static float (ATen `float`) */
  TT_ARG_BOOL,      /* static bool */
  TT_ARG_INTS,      /* static int[] */
  TT_ARG_STR,       /* static str */
  TT_ARG_RNG,       /* val: tensor<2xui64> (seed, offset) for the op's random bits */
  TT_ARG_OUT,       /* an out= argument: not read */
} tt_arg_kind_t;

/* Promotion tier of a tensor operand, as in PyTorch: dimensioned tensors win
 * over zero-dim tensors, which win over wrapped numbers (Python scalars). */
typedef enum tt_tier { TT_TIER_WRAPPED = 0, TT_TIER_ZERO_DIM = 1, TT_TIER_DIM = 2 } tt_tier_t;

typedef struct tt_larg {
  tt_arg_kind_t kind;
  tt_tier_t tier;        /* TENSOR, TENSORS and SCALAR(S) (scalars: WRAPPED) */
  tt_val_t val;          /* TENSOR, SCALAR, RNG */
  const tt_val_t* vals;  /* TENSORS, SCALARS */
  int n;                 /* TENSORS, SCALARS, INTS */
  int64_t i;             /* INT, BOOL (0/1) */
  double f;              /* FLOAT */
  const int64_t* ints;   /* INTS */
  const char* str;       /* STR */
} tt_larg_t;

typedef struct tt_lower_entry tt_lower_entry_t;

typedef struct tt_lctx {
  tt_shlo_fn_t* f;
  const tt_lower_entry_t* op;
  const tt_larg_t* args;
  int nargs;
  const tt_type_t* out_types; /* what each output must be */
  int nout;
  tt_val_t* outs;             /* the lowering writes nout values of exactly out_types */
} tt_lctx_t;

typedef tt_status_t (*tt_lower_fn_t)(tt_lctx_t* c);

/* flags */
#define TT_LF_RNG 0x1u /* the op consumes random bits: the runtime passes a TT_ARG_RNG
                          as an extra, last argument (after the schema's args) */
#define TT_LF_WRITE_ONLY 0x2u /* in-place op that never reads self: self comes as TT_ARG_OUT */
/* Complex values: an op whose tensors or Scalars are complex runs only with one of these;
 * without, the runtime refuses it with a clear error (most lowerings treat any non-float dtype
 * as an integer or compute in f32, which would drop imaginary parts silently). */
#define TT_LF_COMPLEX 0x4u      /* computes on complex values as PyTorch's CPU does */
#define TT_LF_COMPLEX_SAME 0x8u /* ... when every tensor is complex (products: one dtype) */
/* What the bridge does around the call (facts of the ATen op, not of its lowering): */
#define TT_LF_HOST_SIZE 0x10u    /* the output size depends on the data unless the schema's
                                    `output_size` is given: without it, the op runs on the host */
#define TT_LF_LU_OF_TRANSPOSE 0x20u /* saves an LU for its backward, of A^T when A is contiguous
                                       (as CPU): the lowering factors its input transposed, so a
                                       non-contiguous real A is passed as A^T */
#define TT_LF_STATS_OUTPUTS 0x40u /* training (arg 5) updates running_mean / running_var (args 3,
                                     4) although the schema does not say so: two extra outputs */
#define TT_LF_HOST_OP 0x80u /* runs on the host: the output size depends on the data (nonzero,
                               masked_select, unique); the bridge runs PyTorch's CPU kernel */
/* The dtype an out= argument must have (CPU's out= kernel refuses others; PyTorch's meta
   kernels accept them and the result is cast): */
#define TT_LF_OUT_SAME_DTYPE 0x100u   /* the input's: a TensorIterator that checks all dtypes
                                         equal ("Found dtype Double but expected Float") */
#define TT_LF_OUT_RESULT_DTYPE 0x200u /* the functional form's result dtype: a generated out=
                                         wrapper ("Expected out tensor to have dtype float, but
                                         got double instead") */
/* CPU's out= kernel resizes out only when its numel differs (the range factories: arange,
   range, linspace, logspace): an out of the result's numel keeps its shape and strides and
   takes the values in row-major order, where PyTorch's meta kernels (its Python references)
   resize it to the result's shape. */
#define TT_LF_OUT_KEEPS_SHAPE 0x400u
/* An out= that must be resized takes the strides of the functional form's result (CPU's
   structured and TensorIterator kernels), except for ops with this fact, whose CPU out= kernel
   resizes it contiguous whatever the functional form's layout (e.g. the FFTs). */
#define TT_LF_OUT_RESIZE_CONTIGUOUS 0x800u
/* ... where the input is complex (CPU computes complex-to-real unary ops into a new tensor and
   copies it into the resized out: abs, angle) */
#define TT_LF_OUT_RESIZE_CONTIGUOUS_COMPLEX 0x1000u
/* ... where the out is not empty: CPU's kernel gives an empty out the functional layout
   (column-major), resizes one of another shape contiguous (householder_product, ormqr, eig) */
#define TT_LF_OUT_RESTRIDE_IF_EMPTY 0x2000u
/* The flags a fact may give an op that has no lowering (see tt_lower_fact_t). */
#define TT_LF_FACT_ONLY TT_LF_HOST_OP

/* What torch.compile's bucketing may assume about an op (torch_tpu/_buckets.py: a graph with
 * dynamic sizes runs each size as the program of the next power of two, its inputs padded with
 * zeros and its outputs narrowed back; exact only if no value at a valid position reads a padded
 * one). The class names the rule that follows the op's dims through the graph, from the
 * arguments of its schema; an op without one is refused (one program per size, still exact)
 * unless PyTorch tags it pointwise. A fact of the ATen op, not of its lowering: given per
 * overload where overloads take other arguments. tt_lower_bucket_name gives the names Python
 * reads. */
typedef enum tt_lower_bucket {
  TT_BUCKET_NONE = 0,    /* no rule */
  TT_BUCKET_KEEP,        /* "keep": keeps positions apart, as an elementwise op (copies, aliases,
                            dtype conversions) */
  TT_BUCKET_CREATE,      /* "create": a new tensor whose values at valid positions do not depend
                            on its size (factories, tril / triu) */
  TT_BUCKET_VIEW,        /* "view": arg 0 as the sizes of arg 1 (dims may merge or split) */
  TT_BUCKET_PERMUTE,     /* "permute": arg 0's dims in the order of arg 1 */
  TT_BUCKET_TRANSPOSE,   /* "transpose": dims arg 1 and arg 2 swapped; dims 0 and 1 where the
                            schema has no other argument than arg 0 (t) */
  TT_BUCKET_UNSQUEEZE,   /* "unsqueeze": a dim of size 1 inserted at arg 1 */
  TT_BUCKET_EXPAND,      /* "expand": arg 0 broadcast to the sizes of arg 1 (-1: kept) */
  TT_BUCKET_SELECT,      /* "select": one index of dim arg 1, which goes */
  TT_BUCKET_SLICE,       /* "slice": dim arg 1 sliced (start, end, step: args 2 to 4) */
  TT_BUCKET_REDUCE,      /* "reduce": over the dims of arg 1 (an int, a list; every dim when absent
                            or empty), kept as size 1 when the result keeps the rank */
  TT_BUCKET_LAYER_NORM,  /* "layer_norm": normalizes over the last len(arg 1) dims; returns the
                            output, mean and rstd */
  TT_BUCKET_MATMUL,      /* "matmul": contracts arg 0's last dim with arg 1's second to last */
  TT_BUCKET_MATMUL_BIAS, /* "matmul_bias": the same of the last two args, plus arg 0 (a bias) */
  TT_BUCKET_SPLIT,       /* "split": pieces of dim arg 2 (the `dim` keyword; 0 when absent) */
  TT_BUCKET_ATTENTION,   /* "attention": scaled dot-product attention (q, k, v, attn_bias,
                            dropout_p, is_causal): rows are independent; keys padded only under
                            is_causal with queries of their size */
  TT_BUCKET_EMBEDDING,   /* "embedding": rows of arg 0 at the indices arg 1 */
  TT_BUCKET_SIZE,        /* "size": reads one of arg 0's sizes (an int) */
  TT_BUCKET_COUNT
} tt_lower_bucket_t;

/* A fact about an op, kept beside its family's table (`tt_lower_<family>_facts`) and ORed into
 * the flags of the entries tt_lower_find returns. `op`: a base name, for every overload
 * ("aten::add" covers "aten::add.Tensor", "aten::add_.Scalar", ...), or one overload
 * ("aten::sum.dim_IntList"; "aten::sum.default" is the overload-less "aten::sum", as
 * torch.ops.aten names it) where overloads differ in what the fact says (their arguments).
 * `scalars`: how CPU's kernel converts the op's Scalar arguments to the element type it
 * computes in (c10::checked_convert, which raises on overflow), as `name:to` pairs separated
 * by spaces, `to` one of result (the result's dtype), opmath (its opmath type: float for
 * half types), neg_result (negated, to the result's dtype), integral64 (integral results:
 * to int64, truncated, then to the result's dtype); NULL: none converts. `bucket`: what
 * compile-time bucketing may assume (tt_lower_bucket_t).
 * The rule tt_lower_check_facts enforces: a fact names an op of its own family's table; or an
 * op that has no lowering in any table (a fact-only op: nonzero, view, ...), kept beside the
 * family it belongs to, and then it holds only facts that need no entry: flags of
 * TT_LF_FACT_ONLY and a bucket class, no Scalar conversions. At most one bucket class reaches
 * an overload. */
typedef struct tt_lower_fact {
  const char* op;
  uint32_t flags;
  const char* scalars;
  tt_lower_bucket_t bucket;
} tt_lower_fact_t;
#define TT_FACT(op_, flags_) {.op = (op_), .flags = (flags_)}
#define TT_FACT_SCALARS(op_, flags_, scalars_) {.op = (op_), .flags = (flags_), .scalars = (scalars_)}
#define TT_FACT_BUCKET(op_, bucket_) {.op = (op_), .bucket = (bucket_)}

struct tt_lower_entry {
  const char* name;  /* ATen schema name with overload: "aten::add.Tensor", "aten::relu" */
  tt_lower_fn_t fn;
  int64_t param;     /* family parameter, interpreted by fn (e.g. which binary op) */
  uint32_t flags;
};

/* Lookup by full name ("aten::add_.Tensor"; an overload-less op is "aten::relu").
 * Returns NULL if we have no lowering. O(1) after the first call. The entry's flags
 * include its family's facts. */
const tt_lower_entry_t* tt_lower_find(const char* name);
/* All entries (for the supported-op report). */
int tt_lower_count(void);
/* The Scalar conversions of the op of entry e (tt_lower_fact_t.scalars), or NULL. */
const char* tt_lower_scalar_rules(const tt_lower_entry_t* e);
/* Checks the facts against the rule stated at tt_lower_fact_t (an error naming
 * the first that breaks it). */
tt_status_t tt_lower_check_facts(void);
/* Every fact about the op `name` ("aten::nonzero", "aten::sum.dim_IntList"), whether or not it
 * has a lowering: the facts naming its base name or this overload, merged (flags ORed, its
 * bucket class and Scalar conversions); `op` is NULL. A scan of the facts: callers cache. */
tt_lower_fact_t tt_lower_facts_of(const char* name);
/* Every fact as written beside the tables (several may name one op), for Python. */
int tt_lower_fact_count(void);
const tt_lower_fact_t* tt_lower_fact_at(int i);
/* The name of a bucket class ("reduce"); NULL for TT_BUCKET_NONE or out of range. */
const char* tt_lower_bucket_name(tt_lower_bucket_t b);
const tt_lower_entry_t* tt_lower_at(int i);

/* ---- helpers for lowering functions (lower_util.c) -------------------------- */

/* dtype of a TENSOR or SCALAR argument (scalars: f64 / i64 / bool). */
tt_dtype_t tt_l_arg_dtype(tt_lctx_t* c, int i);
/* PyTorch's result_type over the TENSOR / SCALAR arguments listed in idx
 * (tiers respected; float wrapped numbers promote ints to float32 (the default
 * dtype), int wrapped numbers promote bool to int64, ...). */
tt_dtype_t tt_l_promote(tt_lctx_t* c, const int* idx, int n);
/* The dtype PyTorch computes in for a result dtype: f32 for f16/bf16, else itself. */
tt_dtype_t tt_l_opmath(tt_dtype_t dt);

/* Converts v to dtype (no-op when equal; to bool = v != 0; real -> complex
 * = (v, 0); complex -> real = the real part, to bool = re != 0 or im != 0). */
tt_val_t tt_l_convert(tt_shlo_fn_t* f, tt_val_t v, tt_dtype_t dt);
/* hypot(a, b) of real values as std::hypot (no overflow / underflow of the
 * squares; inf if either is inf, else NaN if either is NaN). */
tt_val_t tt_l_hypot(tt_shlo_fn_t* f, tt_val_t a, tt_val_t b);
/* |z|: hypot of the parts for a complex z (a real value), abs otherwise. */
tt_val_t tt_l_cabs(tt_shlo_fn_t* f, tt_val_t z);
/* NumPy-style broadcast of v (right-aligned) to dims of `to` (dtype kept). */
tt_val_t tt_l_broadcast(tt_shlo_fn_t* f, tt_val_t v, int rank, const int64_t* dims);
/* Argument i as a value of `dt` broadcast to `shape` (TENSOR or SCALAR args). */
tt_val_t tt_l_arg_as(tt_lctx_t* c, int i, tt_dtype_t dt, const tt_type_t* shape);
/* Splat constant shaped like `like` (dtype dt). */
tt_val_t tt_l_full(tt_shlo_fn_t* f, tt_dtype_t dt, int rank, const int64_t* dims, double v);
/* Elementwise op on same-typed operands (result type = operand type). */
tt_val_t tt_l_unary(tt_shlo_fn_t* f, const char* op, tt_val_t a);
tt_val_t tt_l_binary(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b);
/* Comparison (dir: "EQ","NE","LT","LE","GT","GE") -> i1 tensor of a's shape.
 * Complex operands: EQ / NE only, both parts compared as floats. */
tt_val_t tt_l_compare(tt_shlo_fn_t* f, const char* dir, tt_val_t a, tt_val_t b);
tt_val_t tt_l_select(tt_shlo_fn_t* f, tt_val_t pred, tt_val_t a, tt_val_t b);
tt_val_t tt_l_reshape(tt_shlo_fn_t* f, tt_val_t v, int rank, const int64_t* dims);
tt_val_t tt_l_transpose(tt_shlo_fn_t* f, tt_val_t v, const int64_t* perm);
/* (reductions: tt_lt_reduce in lower_tensor_util.h, NaN-propagating max/min) */
int64_t tt_l_wrap_dim(int64_t d, int rank);
/* Sets the result i to v converted/reshaped to out_types[i] when only the
 * dtype or a unit-dim reshape differs; fails otherwise. */
tt_status_t tt_l_set_out(tt_lctx_t* c, int i, tt_val_t v);

/* ---- views of a 1-D storage buffer inside a program (view/view.c) -------------
 * A view's layout over its storage's flat buffer, in elements of `dtype`, with
 * PyTorch's lazy math bits: reads see conj(x) / -x of the stored values, writes
 * store conj / -value. */
typedef struct tt_layout {
  tt_dtype_t dtype;
  int32_t rank;
  int64_t sizes[TT_MAX_RANK];
  int64_t strides[TT_MAX_RANK];
  int64_t offset;
  bool conj;
  bool neg;
} tt_layout_t;

int64_t tt_layout_numel(const tt_layout_t* v);
bool tt_layout_is_contiguous(const tt_layout_t* v);
/* Does a partial write through a view of `view_dtype` turn a buffer of
 * `buf_dtype` into the view's dtype (another element size, or complex and
 * another dtype)? */
bool tt_l_write_retypes(tt_dtype_t buf_dtype, tt_dtype_t view_dtype);
/* The view's values read from `base` (a 1-D buffer of any dtype: its bytes are
 * reinterpreted as the view's), in the view's shape and compute dtype
 * (tt_dtype_compute: a complex32 view reads complex<f32>). `offset_param`: an
 * i64 scalar value holding the offset at run time, or TT_SHLO_INVALID for the
 * layout's own offset. */
tt_val_t tt_l_view_read(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v, tt_val_t offset_param);
/* `base` with `value` (converted to the view's dtype) written through the view:
 * the new 1-D buffer (in the view's dtype when tt_l_write_retypes). */
tt_val_t tt_l_view_write(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v, tt_val_t offset_param,
                         tt_val_t value);
/* `value` as the whole 1-D buffer of a storage of dtype dt (converted; a
 * complex32 buffer holds f16 pairs). */
tt_val_t tt_l_view_store(tt_shlo_fn_t* f, tt_val_t value, tt_dtype_t dt);

#ifdef __cplusplus
}
#endif
#endif /* TT_LOWER_H_ */
