/* Internal to core/lower: helpers shared by the shape, resample and sort
 * families (shape.c, shape_pad.c, resample.c, sort.c): gathers and
 * scatter-adds along one axis with index maps known when lowering, and 1-D
 * constants written bit-exactly. Builder failures are recorded in the
 * tt_shlo_fn_t (helpers then return TT_SHLO_INVALID). Reentrant. */
#ifndef TT_SHAPE_UTIL_H_
#define TT_SHAPE_UTIL_H_

#include "../lower_tensor_util.h"

/* The type of a value (a scalar f32 type after a builder failure). */
tt_type_t tt__sh_type(tt_shlo_fn_t* f, tt_val_t v);
/* v with a unit batch dim in front unless its rank is already `rank`
 * (unbatched inputs of pooling / folding ops). */
tt_val_t tt__sh_batched(tt_shlo_fn_t* f, tt_val_t v, int rank);
/* out[..., j, ...] = v[..., idx[j], ...] along `dim` (idx in range, n entries). */
tt_val_t tt__sh_take(tt_shlo_fn_t* f, tt_val_t v, int dim, const int64_t* idx, int64_t n);
/* The transpose of tt__sh_take: a tensor like g with `dim` resized to n_in,
 * where out[..., i, ...] = sum of g[..., j, ...] over the j with idx[j] == i. */
tt_val_t tt__sh_put_add(tt_shlo_fn_t* f, tt_val_t g, int dim, const int64_t* idx, int64_t n_in);
/* A 1-D constant of dt (TT_F32: the values rounded to float, TT_F64 exact)
 * written through its bit pattern, so it is exact on every parser. */
tt_val_t tt__sh_fconst(tt_shlo_fn_t* f, tt_dtype_t dt, const double* vals, int64_t n);
/* A 1-D vector of length dims[dim] broadcast along `dim` of (rank, dims). */
tt_val_t tt__sh_along(tt_shlo_fn_t* f, tt_val_t vec, int rank, const int64_t* dims, int dim);

#endif /* TT_SHAPE_UTIL_H_ */
