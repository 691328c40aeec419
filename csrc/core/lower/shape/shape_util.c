/* Helpers shared by the shape, resample and sort families (shape_util.h). */
#include <stdlib.h>
#include <string.h>

#include "shape_util.h"

tt_type_t tt__sh_type(tt_shlo_fn_t* f, tt_val_t v) {
  const tt_type_t* t = tt_shlo_type(f, v);
  return t ? *t : tt_type_scalar(TT_F32);
}

tt_val_t tt__sh_batched(tt_shlo_fn_t* f, tt_val_t v, int rank) {
  const tt_type_t* t = tt_shlo_type(f, v);
  if (!t || t->rank == rank) return v;
  int64_t d[TT_MAX_RANK + 1] = {1};
  for (int k = 0; k < t->rank && k < TT_MAX_RANK; k++) d[k + 1] = t->dims[k];
  return tt_l_reshape(f, v, t->rank + 1, d);
}

/* idx as an (n, 1) i64 constant */
static tt_val_t index_col(tt_shlo_fn_t* f, const int64_t* idx, int64_t n) {
  int64_t d2[2] = {n, 1};
  return tt_l_reshape(f, tt_shlo_const_i64s(f, idx, (int)n), 2, d2);
}

tt_val_t tt__sh_take(tt_shlo_fn_t* f, tt_val_t v, int dim, const int64_t* idx, int64_t n) {
  tt_type_t t = tt__sh_type(f, v);
  bool ident = n == t.dims[dim];
  for (int64_t j = 0; ident && j < n; j++) ident = idx[j] == j;
  if (ident) return v;
  tt_type_t rt = t;
  rt.dims[dim] = n;
  if (n == 0 || tt_type_numel(&t) == 0) return tt_shlo_const(f, &rt, 0.0);
  int64_t off[TT_MAX_RANK], sizes[TT_MAX_RANK], d1[1] = {dim};
  int noff = 0;
  for (int d = 0; d < t.rank; d++) {
    if (d != dim) off[noff++] = d;
    sizes[d] = d == dim ? 1 : t.dims[d];
  }
  return tt_lt_gather(f, v, index_col(f, idx, n), &rt, off, noff, d1, 1, d1, 1, 1, sizes);
}

tt_val_t tt__sh_put_add(tt_shlo_fn_t* f, tt_val_t g, int dim, const int64_t* idx, int64_t n_in) {
  tt_type_t t = tt__sh_type(f, g);
  int64_t n = t.dims[dim];
  bool ident = n == n_in;
  for (int64_t j = 0; ident && j < n; j++) ident = idx[j] == j;
  if (ident) return g;
  tt_type_t rt = t;
  rt.dims[dim] = n_in;
  tt_val_t zero = tt_shlo_const(f, &rt, 0.0);
  if (n == 0 || tt_type_numel(&rt) == 0) return zero;
  int64_t win[TT_MAX_RANK], d1[1] = {dim};
  int nwin = 0;
  for (int d = 0; d < t.rank; d++)
    if (d != dim) win[nwin++] = d;
  const char* op = t.dtype == TT_BOOL ? "stablehlo.or" : "stablehlo.add";
  return tt_lt_scatter(f, zero, index_col(f, idx, n), g, win, nwin, d1, 1, d1, 1, 1, op);
}

tt_val_t tt__sh_fconst(tt_shlo_fn_t* f, tt_dtype_t dt, const double* vals, int64_t n) {
  int64_t* bits = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
  if (!bits) {
    tt_shlo_fail(f, "out of memory");
    return TT_SHLO_INVALID;
  }
  bool wide = dt == TT_F64;
  for (int64_t i = 0; i < n; i++) {
    if (wide) {
      memcpy(&bits[i], &vals[i], 8);
    } else {
      float x = (float)vals[i];
      int32_t b;
      memcpy(&b, &x, 4);
      bits[i] = b;
    }
  }
  tt_val_t v = tt_shlo_const_i64s(f, bits, (int)n);
  free(bits);
  tt_type_t t = tt_type_make(wide ? TT_I64 : TT_I32, 1, &n);
  if (!wide) v = tt_shlo_op(f, "stablehlo.convert", &v, 1, &t, NULL);
  t.dtype = wide ? TT_F64 : TT_F32;
  return tt_shlo_op(f, "stablehlo.bitcast_convert", &v, 1, &t, NULL);
}

tt_val_t tt__sh_along(tt_shlo_fn_t* f, tt_val_t vec, int rank, const int64_t* dims, int dim) {
  int64_t bd[1] = {dim};
  return tt_lt_bcast_in_dim(f, vec, rank, dims, bd);
}
