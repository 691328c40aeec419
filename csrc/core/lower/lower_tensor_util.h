/* Internal to core/lower: helpers shared by the matmul, reduce, nn, index and
 * create families (dimension lists, iota, limits, reductions, gather/scatter,
 * random bits). Implemented in lower_tensor_util.c. Like tt_lower.h's
 * helpers, builder failures are recorded in the tt_shlo_fn_t and surface at
 * tt_shlo_fn_finish; functions return TT_SHLO_INVALID after a failure. */
#ifndef TT_LOWER_TENSOR_UTIL_H_
#define TT_LOWER_TENSOR_UTIL_H_

#include "tt_lower.h"

/* ---- arguments -------------------------------------------------------------- */
/* The type of a value argument (TENSOR / SCALAR / RNG); NULL if absent. */
const tt_type_t* tt_lt_arg_type(tt_lctx_t* c, int i);
/* True if argument i is present (not TT_ARG_NONE / missing). */
bool tt_lt_has(tt_lctx_t* c, int i);
/* Argument i (a SCALAR or 0-d TENSOR) as a 0-d value of dt. */
tt_val_t tt_lt_scalar(tt_lctx_t* c, int i, tt_dtype_t dt);
/* A 0-d value broadcast to (rank, dims). */
tt_val_t tt_lt_splat(tt_shlo_fn_t* f, tt_val_t v0d, int rank, const int64_t* dims);

/* ---- dimension lists -------------------------------------------------------- */
/* A dim set is a uint32_t mask; lowerings that add a dim still fit. */
_Static_assert(TT_MAX_RANK + 1 < 32, "dim masks are uint32_t");
/* Reduction mask (bit d = dim d reduced) from an INTS / INT / NONE argument.
 * NONE means all dims; an empty list means all dims when empty_is_all, else
 * none. Rank 0: dims 0 / -1 are accepted and the mask is 0. */
uint32_t tt_lt_dim_mask(const tt_larg_t* a, int rank, bool empty_is_all);
/* Writes the dims set in mask (ascending) into dims; returns the count. */
int tt_lt_mask_dims(uint32_t mask, int rank, int64_t* dims);

/* ---- constants and shapes ----------------------------------------------------- */
/* 0-d constant: the lowest (high=false) or highest value of dt (floats: -inf / +inf). */
tt_val_t tt_lt_limit(tt_shlo_fn_t* f, tt_dtype_t dt, bool high);
/* 0-d constant v of dt. */
tt_val_t tt_lt_const0(tt_shlo_fn_t* f, tt_dtype_t dt, double v);
/* iota along `dim` of a (rank, dims) tensor of dtype dt. */
tt_val_t tt_lt_iota(tt_shlo_fn_t* f, tt_dtype_t dt, int rank, const int64_t* dims, int dim);
/* broadcast_in_dim with explicit broadcast dimensions. */
tt_val_t tt_lt_bcast_in_dim(tt_shlo_fn_t* f, tt_val_t v, int rank, const int64_t* dims,
                            const int64_t* bdims);
/* Broadcasts a value whose `mask` dims were reduced away back to `full`'s shape. */
tt_val_t tt_lt_expand(tt_shlo_fn_t* f, tt_val_t v, const tt_type_t* full, uint32_t mask);
tt_val_t tt_lt_slice(tt_shlo_fn_t* f, tt_val_t v, const int64_t* start, const int64_t* limit);
/* Slice [lo, hi) along one dim. */
tt_val_t tt_lt_slice_dim(tt_shlo_fn_t* f, tt_val_t v, int dim, int64_t lo, int64_t hi);
tt_val_t tt_lt_pad(tt_shlo_fn_t* f, tt_val_t v, tt_val_t pad0d, const int64_t* lo, const int64_t* hi);
tt_val_t tt_lt_concat(tt_shlo_fn_t* f, const tt_val_t* vals, int n, int dim);

/* ---- reductions ------------------------------------------------------------------ */
/* "stablehlo.maximum" / "stablehlo.minimum" as compare+select, which
 * propagates NaN everywhere (inside reduction bodies XLA CPU's max/min drop
 * it; PyTorch keeps it). Other ops pass through to tt_l_binary. */
tt_val_t tt_lt_minmax(tt_shlo_fn_t* f, const char* op, tt_val_t a, tt_val_t b);
/* Reduces v over the dims of mask with a binary body op and a 0-d init value;
 * the result drops the reduced dims. mask 0 returns v. maximum / minimum
 * bodies propagate NaN. */
tt_val_t tt_lt_reduce(tt_shlo_fn_t* f, tt_val_t v, uint32_t mask, const char* body_op,
                      tt_val_t init);
/* Sum over mask in v's dtype. */
tt_val_t tt_lt_sum(tt_shlo_fn_t* f, tt_val_t v, uint32_t mask);
/* max (high) / min over mask, NaN propagating, init = the dtype's limit. */
tt_val_t tt_lt_extreme(tt_shlo_fn_t* f, tt_val_t v, uint32_t mask, bool high);
/* softmax (log: log_softmax) of x over the dims of mask, in x's dtype:
 * exp(x - max) / sum, log: (x - max) - log(sum). XLA turns the division by
 * the expanded sum into a multiplication by its reciprocal, as CPU's
 * vectorized kernels compute it. */
tt_val_t tt_lt_softmax(tt_shlo_fn_t* f, tt_val_t x, uint32_t mask, bool log);
/* Value and first index (i64) of the max (high) / min of v along `dim`;
 * NaN counts as the extreme (PyTorch semantics). */
void tt_lt_arg_extreme(tt_shlo_fn_t* f, tt_val_t v, int dim, bool high, tt_val_t* value,
                       tt_val_t* index);
/* Inclusive scan along dim with "stablehlo.add" / "stablehlo.multiply" (log-step). */
tt_val_t tt_lt_scan(tt_shlo_fn_t* f, tt_val_t v, int dim, const char* body_op);

/* ---- gather / scatter ---------------------------------------------------------- */
/* Index tensor wrapped (negative + size) and clamped to [0, size-1], as i64.
 * PyTorch raises for out-of-range indices; XLA would clamp (gather) or drop
 * (scatter) silently. We clamp explicitly until a device-side check exists. */
tt_val_t tt_lt_fix_index(tt_shlo_fn_t* f, tt_val_t idx, int64_t size);
/* Output 0 = the elementwise loss l reduced as ATen's `reduction` says
 * (0 none, 1 mean over all elements, 2 sum). */
tt_status_t tt_lt_set_reduced_loss(tt_lctx_t* c, tt_val_t l, int64_t reduction);
/* The NumPy-broadcast shape of a and b, with dtype dt. */
tt_type_t tt_lt_broadcast_type(const tt_type_t* a, const tt_type_t* b, tt_dtype_t dt);
/* The same with the error a failed check raises (code: a tt_code_t). */
tt_val_t tt_lt_fix_index_checked(tt_shlo_fn_t* f, tt_val_t idx, int64_t size, int code,
                                 const char* message);
/* The same for ops that accept no negative index (index_select, gather,
 * scatter, index_add, embedding_bag): the valid range is [0, size). */
tt_val_t tt_lt_fix_index_strict(tt_shlo_fn_t* f, tt_val_t idx, int64_t size, int code,
                                const char* message);
/* torch.gather: out[p] = v[p with dim replaced by index[p]] (index already fixed). */
tt_val_t tt_lt_gather_dim(tt_shlo_fn_t* f, tt_val_t v, int dim, tt_val_t index);
/* Generic gather (dimension numbers as lists). */
tt_val_t tt_lt_gather(tt_shlo_fn_t* f, tt_val_t v, tt_val_t indices, const tt_type_t* result,
                      const int64_t* offset_dims, int noff, const int64_t* collapsed, int ncol,
                      const int64_t* start_map, int nstart, int64_t index_vector_dim,
                      const int64_t* slice_sizes);
/* Generic scatter; body_op NULL = replace, else a binary op ("stablehlo.add";
 * maximum / minimum propagate NaN). */
tt_val_t tt_lt_scatter(tt_shlo_fn_t* f, tt_val_t v, tt_val_t indices, tt_val_t updates,
                       const int64_t* window_dims, int nwin, const int64_t* inserted, int nins,
                       const int64_t* sd2od, int nsd, int64_t index_vector_dim,
                       const char* body_op);
/* torch.scatter along dim: updates shaped like index (fixed); body as above. */
tt_val_t tt_lt_scatter_dim(tt_shlo_fn_t* f, tt_val_t v, int dim, tt_val_t index,
                           tt_val_t updates, const char* body_op);

/* ---- random bits --------------------------------------------------------------- */
/* Random bits of dtype TT_U32 or TT_U64 shaped (rank, dims) from a 2xui64 state. */
tt_val_t tt_lt_rng_bits(tt_shlo_fn_t* f, tt_val_t state, tt_dtype_t bits_dt, int rank,
                        const int64_t* dims);
/* Uniform values in [0, 1) for an output of dtype out_dt: f64 for f64
 * outputs, else f32; the mantissa width matches out_dt so that rounding to
 * out_dt never yields 1.0. */
tt_val_t tt_lt_uniform01(tt_shlo_fn_t* f, tt_val_t state, tt_dtype_t out_dt, int rank,
                         const int64_t* dims);

#endif /* TT_LOWER_TENSOR_UTIL_H_ */
