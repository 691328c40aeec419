/* Reading and writing strided views of a 1-D storage buffer inside a program
 * (DESIGN §5): the lowering of every view read and write the runtime and the
 * graph builder emit. Reads try, in order: the whole buffer (reshape), a contiguous
 * range (slice / dynamic_slice), a strided window of a contiguous parent
 * (pad + reshape + slice + transpose + broadcast: covers transpose, permute,
 * narrow, select, step slicing, expand), then a gather with computed indices.
 * Writes: the whole buffer (replace), a contiguous range
 * (dynamic_update_slice), a strided window that does not broadcast
 * (transpose + dynamic_update_slice into the reshaped parent), else a scatter
 * with computed indices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/tt_dims.h"
#include "../tt_lower.h"

int64_t tt_layout_numel(const tt_layout_t* v) {
  int64_t n = 1;
  for (int i = 0; i < v->rank; i++) n *= v->sizes[i];
  return n;
}

bool tt_layout_is_contiguous(const tt_layout_t* v) { return tt_dims_contiguous(v->rank, v->sizes, v->strides); }

static tt_type_t vec_type(tt_dtype_t dt, int64_t n) { return tt_type_make(dt, 1, &n); }

static tt_val_t slice1(tt_shlo_fn_t* f, tt_val_t b, int64_t start, int64_t limit) {
  const tt_type_t* t = tt_shlo_type(f, b);
  tt_type_t rt = vec_type(t->dtype, limit - start);
  return tt_shlo_opf(f, "stablehlo.slice", &b, 1, &rt,
                     "start_indices = array<i64: %lld>, limit_indices = array<i64: %lld>, "
                     "strides = array<i64: 1>",
                     (long long)start, (long long)limit);
}

/* The base's bytes reinterpreted as `dt` (a 1-D value, as a PyTorch storage
 * read through another dtype). Bools are bytes 0/1: they go through u8.
 * Neither the base nor dt is complex here (see as_dtype). */
static tt_val_t as_real_dtype(tt_shlo_fn_t* f, tt_val_t base, tt_dtype_t dt) {
  const tt_type_t* t = tt_shlo_type(f, base);
  if (!t) return TT_SHLO_INVALID;
  if (t->dtype == dt) return base;
  if (t->dtype == TT_BOOL) base = tt_l_convert(f, base, TT_U8);
  tt_dtype_t want = dt == TT_BOOL ? TT_U8 : dt;
  t = tt_shlo_type(f, base);
  tt_dtype_t src = t->dtype;
  int64_t n = t->dims[0];
  size_t ss = tt_dtype_size(src), ws = tt_dtype_size(want);
  if (src != want) {
    if (ss == ws) {
      tt_type_t rt = vec_type(want, n);
      base = tt_shlo_op(f, "stablehlo.bitcast_convert", &base, 1, &rt, NULL);
    } else if (ss > ws) { /* [n] wide -> [n, 1] -> [n, 1, r] narrow -> [n*r] */
      /* Not [n] -> [n, r] directly: XLA's simplifier (both CPU plugins)
       * folds a widening bitcast_convert followed by that narrowing one (a
       * buffer retyped by a write, then read as a third dtype) into one
       * bitcast of the wrong shape, which its verifier rejects. The reshape
       * in between keeps them apart (test_lower_view.c). */
      int64_t r = (int64_t)(ss / ws), d2[2] = {n, 1}, d3[3] = {n, 1, r};
      base = tt_l_reshape(f, base, 2, d2);
      tt_type_t rt = tt_type_make(want, 3, d3);
      base = tt_shlo_op(f, "stablehlo.bitcast_convert", &base, 1, &rt, NULL);
      int64_t m = n * r;
      base = tt_l_reshape(f, base, 1, &m);
    } else { /* [n] narrow -> [n/r, r] -> [n/r] wide */
      int64_t r = (int64_t)(ws / ss);
      if (n % r) {
        tt_shlo_fail(f, "reading %lld bytes as %s: not a whole number of elements",
                     (long long)(n * (int64_t)ss), tt_dtype_name(dt));
        return TT_SHLO_INVALID;
      }
      int64_t d2[2] = {n / r, r};
      base = tt_l_reshape(f, base, 2, d2);
      tt_type_t rt = vec_type(want, n / r);
      base = tt_shlo_op(f, "stablehlo.bitcast_convert", &base, 1, &rt, NULL);
    }
  }
  return dt == TT_BOOL ? tt_l_convert(f, base, TT_BOOL) : base;
}


/* [n] complex -> [2n] of its component dtype, (re, im) interleaved as in
 * memory. bitcast_convert does not accept complex types: real/imag +
 * concatenate instead. */
static tt_val_t complex_to_parts(tt_shlo_fn_t* f, tt_val_t base) {
  const tt_type_t* t = tt_shlo_type(f, base);
  int64_t n = t->dims[0], d2[2] = {n, 1}, two_n = 2 * n, pair[2] = {n, 2};
  tt_dtype_t pd = tt_dtype_real_part(t->dtype);
  tt_type_t pt = vec_type(pd, n);
  tt_val_t re = tt_l_reshape(f, tt_shlo_op(f, "stablehlo.real", &base, 1, &pt, NULL), 2, d2);
  tt_val_t im = tt_l_reshape(f, tt_shlo_op(f, "stablehlo.imag", &base, 1, &pt, NULL), 2, d2);
  tt_type_t ct = tt_type_make(pd, 2, pair);
  tt_val_t ops[2] = {re, im};
  tt_val_t both = tt_shlo_op(f, "stablehlo.concatenate", ops, 2, &ct, "dimension = 1 : i64");
  return tt_l_reshape(f, both, 1, &two_n);
}

/* [2n] of a component dtype -> [n] complex (pairs (re, im)). */
static tt_val_t parts_to_complex(tt_shlo_fn_t* f, tt_val_t base, tt_dtype_t cdt) {
  const tt_type_t* t = tt_shlo_type(f, base);
  int64_t m = t->dims[0];
  if (m % 2) {
    tt_shlo_fail(f, "reading %lld bytes as %s: not a whole number of elements",
                 (long long)(m * (int64_t)tt_dtype_size(t->dtype)), tt_dtype_name(cdt));
    return TT_SHLO_INVALID;
  }
  int64_t n = m / 2, pair[2] = {n, 2};
  tt_val_t p = tt_l_reshape(f, base, 2, pair);
  int64_t col[2] = {n, 1};
  tt_type_t ct = tt_type_make(t->dtype, 2, col);
  char a[160];
  snprintf(a, sizeof a, "start_indices = array<i64: 0, 0>, limit_indices = array<i64: %lld, 1>, "
                        "strides = array<i64: 1, 1>", (long long)n);
  tt_val_t re = tt_shlo_op(f, "stablehlo.slice", &p, 1, &ct, a);
  snprintf(a, sizeof a, "start_indices = array<i64: 0, 1>, limit_indices = array<i64: %lld, 2>, "
                        "strides = array<i64: 1, 1>", (long long)n);
  tt_val_t im = tt_shlo_op(f, "stablehlo.slice", &p, 1, &ct, a);
  tt_val_t ops[2] = {tt_l_reshape(f, re, 1, &n), tt_l_reshape(f, im, 1, &n)};
  tt_type_t rt = vec_type(cdt, n);
  return tt_shlo_op(f, "stablehlo.complex", ops, 2, &rt, NULL);
}

/* as_real_dtype for any pair of dtypes: complex values go through their
 * components. */
static tt_val_t as_dtype(tt_shlo_fn_t* f, tt_val_t base, tt_dtype_t dt) {
  const tt_type_t* t = tt_shlo_type(f, base);
  if (!t) return TT_SHLO_INVALID;
  if (t->dtype == dt) return base;
  if (tt_dtype_is_complex(t->dtype)) base = complex_to_parts(f, base);
  if (!tt_dtype_is_complex(dt)) return as_real_dtype(f, base, dt);
  base = as_real_dtype(f, base, tt_dtype_real_part(dt));
  if (base == TT_SHLO_INVALID) return base;
  return parts_to_complex(f, base, dt);
}

/* PyTorch's conj / neg bits of a view, applied to a value of its dtype. */
static tt_val_t apply_math_bits(tt_shlo_fn_t* f, tt_val_t x, const tt_layout_t* v) {
  if (x == TT_SHLO_INVALID) return x;
  if (v->conj && tt_dtype_is_complex(v->dtype)) {
    tt_type_t ct = *tt_shlo_type(f, x), pt = ct;
    pt.dtype = tt_dtype_real_part(ct.dtype);
    tt_val_t re = tt_shlo_op(f, "stablehlo.real", &x, 1, &pt, NULL);
    tt_val_t im = tt_shlo_op(f, "stablehlo.imag", &x, 1, &pt, NULL);
    tt_val_t ops[2] = {re, tt_l_unary(f, "stablehlo.negate", im)};
    x = tt_shlo_op(f, "stablehlo.complex", ops, 2, &ct, NULL);
  }
  if (v->neg) x = tt_l_unary(f, "stablehlo.negate", x);
  return x;
}

bool tt_l_write_retypes(tt_dtype_t buf_dtype, tt_dtype_t view_dtype) {
  view_dtype = tt_dtype_buffer(view_dtype); /* complex32 is held as f16 pairs */
  /* complex values cannot be bitcast: a write mixing complex and another
   * dtype of the same size also rewrites the buffer in the view's dtype */
  if (buf_dtype != view_dtype && (tt_dtype_is_complex(buf_dtype) || tt_dtype_is_complex(view_dtype)))
    return true;
  return tt_dtype_size(buf_dtype) != tt_dtype_size(view_dtype);
}

/* i64 [numel, 1] of the flat storage indices of the view's elements in
 * row-major order: offset + sum_i iota_i * stride_i. Built in the view's
 * shape (rank <= TT_MAX_RANK), then flattened, so that gather and scatter
 * take an index of rank 2 whatever the view's rank. */
static tt_val_t flat_indices(tt_shlo_fn_t* f, const tt_layout_t* v, tt_val_t offset_param) {
  int rank = v->rank;
  if (rank < 0 || rank > TT_MAX_RANK) {
    tt_shlo_fail(f, "a view of rank %d (at most %d dimensions are supported)", rank, TT_MAX_RANK);
    return TT_SHLO_INVALID;
  }
  const int64_t* dims = v->sizes;
  tt_type_t it = tt_type_make(TT_I64, rank, dims);
  tt_val_t acc;
  if (offset_param != TT_SHLO_INVALID) acc = tt_l_broadcast(f, offset_param, rank, dims);
  else acc = tt_shlo_const_i64(f, &it, v->offset);
  for (int d = 0; d < rank; d++) {
    if (v->sizes[d] == 1 || v->strides[d] == 0) continue;
    tt_val_t io = tt_shlo_opf(f, "stablehlo.iota", NULL, 0, &it, "iota_dimension = %d : i64", d);
    tt_val_t st = tt_shlo_const_i64(f, &it, v->strides[d]);
    acc = tt_l_binary(f, "stablehlo.add", acc, tt_l_binary(f, "stablehlo.multiply", io, st));
  }
  int64_t col[2] = {tt_layout_numel(v), 1};
  return tt_l_reshape(f, acc, 2, col);
}

static tt_val_t read_gather(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v, tt_val_t off) {
  tt_val_t idx = flat_indices(f, v, off);
  int64_t numel = tt_layout_numel(v);
  tt_type_t rt = vec_type(v->dtype, numel);
  tt_val_t ops[2] = {base, idx};
  tt_val_t flat = tt_shlo_op(f, "stablehlo.gather", ops, 2, &rt,
                             "dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], "
                             "start_index_map = [0], index_vector_dim = 1>, "
                             "slice_sizes = array<i64: 1>, indices_are_sorted = false");
  return tt_l_reshape(f, flat, v->rank, v->sizes);
}

/* A view that is a strided window of its buffer (DESIGN §5): its dims that
 * move (size > 1, stride != 0), sorted by stride descending, nest, so that
 * the first `need` elements of the buffer reshaped to P[0..k] hold the view
 * at c[0..k] with sizes n[0..k-1] (and 1 in the last dim, which takes a step
 * or gap of the innermost dim). The window's parent has k + 1 dims. It must
 * fit a tt_type_t (TT_MAX_RANK), and XLA's CPU compiler takes minutes on the
 * rank-8 reshape + rank-7 transpose of a rank-8 permuted view where the
 * gather compiles in a fraction of a second: wider windows gather. */
#define TT_VIEW_WINDOW_MAX_RANK 6
typedef struct {
  int k;                         /* moving dims */
  int real[TT_MAX_RANK];         /* the view's dim of each window dim (stride order) */
  int64_t n[TT_MAX_RANK];        /* their sizes */
  int64_t P[TT_MAX_RANK + 1];    /* the parent's dims */
  int64_t c[TT_MAX_RANK + 1];    /* the window's start in the parent */
  int64_t need;                  /* elements of the parent: P[0] * ... * P[k] */
  bool broadcasts;               /* a dim of size > 1 with stride 0 */
} window_t;

static bool window_plan(const tt_layout_t* v, window_t* w) {
  int k = 0;
  w->broadcasts = false;
  for (int d = 0; d < v->rank; d++) {
    if (v->sizes[d] == 1) continue;
    if (v->strides[d] == 0) {
      w->broadcasts = true;
      continue;
    }
    if (v->strides[d] < 0) return false;
    w->real[k++] = d;
  }
  w->k = k;
  if (k == 0) return true;
  if (k + 1 > TT_VIEW_WINDOW_MAX_RANK) return false;
  /* sort the moving dims by stride, descending (insertion sort, rank <= 8) */
  int* real = w->real;
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && v->strides[real[j]] > v->strides[real[j - 1]]; j--) {
      int t = real[j];
      real[j] = real[j - 1];
      real[j - 1] = t;
    }
  int64_t s[TT_MAX_RANK];
  for (int j = 0; j < k; j++) {
    w->n[j] = v->sizes[real[j]];
    s[j] = v->strides[real[j]];
  }
  /* P[0] = rows, P[j] = s[j-1]/s[j], P[k] = s[k-1] */
  for (int j = 1; j < k; j++) {
    if (s[j] == s[j - 1] || s[j - 1] % s[j]) return false;
    w->P[j] = s[j - 1] / s[j];
  }
  w->P[k] = s[k - 1];
  int64_t rem = v->offset;
  w->c[0] = rem / s[0];
  rem %= s[0];
  for (int j = 1; j <= k; j++) {
    int64_t unit = j < k ? s[j] : 1;
    w->c[j] = rem / unit;
    rem %= unit;
  }
  for (int j = 1; j < k; j++)
    if (w->c[j] + w->n[j] > w->P[j]) return false;
  w->P[0] = w->c[0] + w->n[0];
  w->need = w->P[0] * s[0];
  return true;
}

/* The base's first w->need elements as the window's parent [P0..Pk]: padded
 * with zeros or sliced to that length first. */
static tt_val_t window_parent(tt_shlo_fn_t* f, tt_val_t base, const window_t* w) {
  int64_t N = tt_shlo_type(f, base)->dims[0];
  tt_val_t b = base;
  if (w->need > N) {
    tt_type_t zt = tt_type_scalar(tt_shlo_type(f, base)->dtype);
    tt_val_t z = tt_shlo_const(f, &zt, 0.0);
    tt_type_t pt = vec_type(zt.dtype, w->need);
    tt_val_t ops[2] = {b, z};
    b = tt_shlo_opf(f, "stablehlo.pad", ops, 2, &pt,
                    "edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: %lld>, "
                    "interior_padding = array<i64: 0>",
                    (long long)(w->need - N));
  } else if (w->need < N) {
    b = slice1(f, b, 0, w->need);
  }
  return tt_l_reshape(f, b, w->k + 1, w->P);
}

/* perm[m]: the window dim of the view's m-th moving dim in position order;
 * pos[m]: that view dim. */
static void window_order(const tt_layout_t* v, const window_t* w, int64_t* perm, int64_t* pos) {
  int m = 0;
  for (int d = 0; d < v->rank; d++)
    for (int j = 0; j < w->k; j++)
      if (w->real[j] == d) {
        perm[m] = j;
        pos[m++] = d;
      }
}

/* See the file comment; returns TT_SHLO_INVALID (without failing f) when the
 * view is not such a window. */
static tt_val_t read_window(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v) {
  window_t w;
  if (!window_plan(v, &w)) return TT_SHLO_INVALID;
  int k = w.k;
  if (k == 0) {
    tt_val_t one = slice1(f, base, v->offset, v->offset + 1);
    return tt_l_broadcast(f, tt_l_reshape(f, one, 0, NULL), v->rank, v->sizes);
  }
  tt_val_t b = window_parent(f, base, &w);
  int64_t lim[TT_MAX_RANK + 1];
  for (int j = 0; j < k; j++) lim[j] = w.c[j] + w.n[j];
  lim[k] = w.c[k] + 1;
  b = tt_shlo_slice(f, b, w.c, lim, NULL);
  b = tt_l_reshape(f, b, k, w.n);
  /* back to the original order of the moving dims */
  int64_t perm[TT_MAX_RANK], pos[TT_MAX_RANK];
  window_order(v, &w, perm, pos);
  b = tt_l_transpose(f, b, perm);
  /* insert size-1 dims and broadcast stride-0 dims */
  tt_type_t rt = tt_type_make(v->dtype, v->rank, v->sizes);
  if (k == v->rank) return b;
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_append(&a, "broadcast_dimensions = ");
  tt_shlo_fmt_i64_array(&a, pos, k);
  tt_val_t r = tt_shlo_op(f, "stablehlo.broadcast_in_dim", &b, 1, &rt, a.data);
  tt_sbuf_free(&a);
  return r;
}

/* The write into a window (see window_plan) of a view that does not
 * broadcast: the value, in the window's dim order, goes into the parent with
 * dynamic_update_slice, which XLA does in place (a scatter runs element by
 * element). TT_SHLO_INVALID (f not failed) when the view is no such window. */
static tt_val_t write_window(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v, tt_val_t value) {
  window_t w;
  if (!window_plan(v, &w) || w.broadcasts || w.k == 0) return TT_SHLO_INVALID;
  int k = w.k;
  int64_t N = tt_shlo_type(f, base)->dims[0];
  /* the value's moving dims in position order, then in window order */
  int64_t perm[TT_MAX_RANK], pos[TT_MAX_RANK], psizes[TT_MAX_RANK], inv[TT_MAX_RANK];
  window_order(v, &w, perm, pos);
  for (int m = 0; m < k; m++) psizes[m] = v->sizes[pos[m]];
  value = tt_l_reshape(f, value, k, psizes);
  for (int m = 0; m < k; m++) inv[perm[m]] = m;
  value = tt_l_transpose(f, value, inv);
  int64_t udims[TT_MAX_RANK + 1];
  for (int j = 0; j < k; j++) udims[j] = w.n[j];
  udims[k] = 1;
  value = tt_l_reshape(f, value, k + 1, udims);
  tt_val_t b = window_parent(f, base, &w);
  tt_val_t ops[2 + TT_MAX_RANK + 1];
  ops[0] = b;
  ops[1] = value;
  tt_type_t it = tt_type_scalar(TT_I64);
  for (int j = 0; j <= k; j++) ops[2 + j] = tt_shlo_const_i64(f, &it, w.c[j]);
  tt_type_t pt = *tt_shlo_type(f, b);
  b = tt_shlo_op(f, "stablehlo.dynamic_update_slice", ops, k + 3, &pt, NULL);
  b = tt_l_reshape(f, b, 1, &w.need);
  if (w.need > N) return slice1(f, b, 0, N);
  if (w.need < N) {
    tt_val_t parts[2] = {b, slice1(f, base, w.need, N)};
    tt_type_t rt = vec_type(pt.dtype, N);
    return tt_shlo_op(f, "stablehlo.concatenate", parts, 2, &rt, "dimension = 0 : i64");
  }
  return b;
}

/* A view whose offset is a runtime value (a loop's x[:, t], a column, a
 * narrow): its elements lie in the `span` elements from the offset, read
 * with one dynamic_slice; the view is then the same layout at offset 0 of
 * that span, which the static paths (window, gather) handle. One program
 * serves every offset. */
static int64_t layout_span(const tt_layout_t* v) {
  int64_t span = 1;
  for (int d = 0; d < v->rank; d++)
    if (v->sizes[d] > 1) span += (v->sizes[d] - 1) * v->strides[d];
  return span;
}

static bool dynamic_span(const tt_layout_t* v, tt_val_t off, int64_t N, tt_layout_t* at0, int64_t* span) {
  if (off == TT_SHLO_INVALID) return false;
  for (int d = 0; d < v->rank; d++)
    if (v->strides[d] < 0) return false;
  *span = layout_span(v);
  if (*span > N) return false;
  *at0 = *v;
  at0->offset = 0;
  return true;
}

static tt_val_t span_slice(tt_shlo_fn_t* f, tt_val_t base, tt_val_t off, int64_t span) {
  tt_type_t rt = vec_type(tt_shlo_type(f, base)->dtype, span);
  tt_val_t ops[2] = {base, off};
  return tt_shlo_opf(f, "stablehlo.dynamic_slice", ops, 2, &rt, "slice_sizes = array<i64: %lld>", (long long)span);
}

static tt_val_t view_read(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v, tt_val_t off) {
  base = as_dtype(f, base, v->dtype);
  if (base == TT_SHLO_INVALID) return base;
  int64_t N = tt_shlo_type(f, base)->dims[0];
  int64_t numel = tt_layout_numel(v);
  if (numel == 0) return tt_l_reshape(f, slice1(f, base, 0, 0), v->rank, v->sizes);
  if (tt_layout_is_contiguous(v)) {
    tt_val_t flat;
    if (off != TT_SHLO_INVALID) {
      tt_type_t rt = vec_type(v->dtype, numel);
      tt_val_t ops[2] = {base, off};
      flat = tt_shlo_opf(f, "stablehlo.dynamic_slice", ops, 2, &rt, "slice_sizes = array<i64: %lld>",
                         (long long)numel);
    } else if (v->offset == 0 && numel == N) {
      flat = base;
    } else {
      flat = slice1(f, base, v->offset, v->offset + numel);
    }
    return tt_l_reshape(f, flat, v->rank, v->sizes);
  }
  tt_layout_t at0;
  int64_t span;
  if (dynamic_span(v, off, N, &at0, &span)) {
    base = span_slice(f, base, off, span);
    v = &at0;
    off = TT_SHLO_INVALID;
  }
  if (off == TT_SHLO_INVALID) {
    tt_val_t w = read_window(f, base, v);
    if (w != TT_SHLO_INVALID || tt_shlo_failed(f)) return w;
  }
  return read_gather(f, base, v, off);
}

static tt_val_t write_strided(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v, tt_val_t off,
                              tt_val_t value);

/* ---- complex32 (TT_C32): computed as complex<f32> ----------------------------------
 * A complex32 buffer holds f16 (re, im) pairs. Its views are read and written
 * on the buffer's bytes as complex<f32> values, one per complex32 element
 * (widening is exact), and the buffer is narrowed back after a write: the
 * values written round once, the others come back unchanged. */

/* any buffer's bytes -> [nbytes/4] complex<f32> */
static tt_val_t c32_widen(tt_shlo_fn_t* f, tt_val_t base) {
  base = as_dtype(f, base, TT_F16);
  if (base == TT_SHLO_INVALID) return base;
  return parts_to_complex(f, tt_l_convert(f, base, TT_F32), TT_C64);
}

/* [n] complex<f32> -> the [2n] f16 pairs of a complex32 buffer */
static tt_val_t c32_narrow(tt_shlo_fn_t* f, tt_val_t v) {
  if (v == TT_SHLO_INVALID) return v;
  return tt_l_convert(f, complex_to_parts(f, v), TT_F16);
}

static tt_layout_t c32_layout(const tt_layout_t* v) {
  tt_layout_t l = *v;
  l.dtype = TT_C64;
  return l;
}

tt_val_t tt_l_view_store(tt_shlo_fn_t* f, tt_val_t value, tt_dtype_t dt) {
  const tt_type_t* t = tt_shlo_type(f, value);
  if (!t) return TT_SHLO_INVALID;
  int64_t n = tt_type_numel(t);
  tt_val_t flat = tt_l_reshape(f, tt_l_convert(f, value, tt_dtype_compute(dt)), 1, &n);
  return dt == TT_C32 ? c32_narrow(f, flat) : flat;
}

tt_val_t tt_l_view_read(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v, tt_val_t off) {
  if (v->dtype == TT_C32) {
    tt_layout_t l = c32_layout(v);
    return tt_l_view_read(f, c32_widen(f, base), &l, off);
  }
  return apply_math_bits(f, view_read(f, base, v, off), v);
}

tt_val_t tt_l_view_write(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v, tt_val_t off,
                         tt_val_t value) {
  if (v->dtype == TT_C32) {
    tt_layout_t l = c32_layout(v);
    tt_val_t wide = c32_widen(f, base);
    if (wide == TT_SHLO_INVALID) return wide;
    return c32_narrow(f, tt_l_view_write(f, wide, &l, off, value));
  }
  /* a copy: tt_shlo_type points into the function's value table, which
   * every new value may move */
  const tt_type_t* btp = tt_shlo_type(f, base);
  if (!btp) return TT_SHLO_INVALID;
  tt_type_t bt = *btp;
  tt_dtype_t bdt = bt.dtype;
  if (tt_l_write_retypes(bdt, v->dtype)) {
    /* a write through a view of another element size: the storage's buffer
     * becomes the view's dtype (the plan expects that) */
    base = as_dtype(f, base, v->dtype);
    if (base == TT_SHLO_INVALID) return base;
    btp = tt_shlo_type(f, base);
    if (!btp) return TT_SHLO_INVALID;
    bt = *btp;
    bdt = v->dtype;
  }
  value = apply_math_bits(f, tt_l_convert(f, value, v->dtype), v);
  if (bdt != v->dtype) { /* same size: the value's bits in the base's dtype */
    if (bdt == TT_BOOL || v->dtype == TT_BOOL) value = tt_l_convert(f, value, bdt);
    else {
      tt_type_t rt = *tt_shlo_type(f, value);
      rt.dtype = bdt;
      value = tt_shlo_op(f, "stablehlo.bitcast_convert", &value, 1, &rt, NULL);
    }
  }
  if (value == TT_SHLO_INVALID) return value;
  int64_t numel = tt_layout_numel(v);
  if (numel == 0) return base;
  if (tt_layout_is_contiguous(v)) {
    tt_val_t flat = tt_l_reshape(f, value, 1, &numel);
    tt_val_t idx = off;
    if (idx == TT_SHLO_INVALID) {
      tt_type_t it = tt_type_scalar(TT_I64);
      idx = tt_shlo_const_i64(f, &it, v->offset);
    }
    tt_val_t ops[3] = {base, flat, idx};
    return tt_shlo_op(f, "stablehlo.dynamic_update_slice", ops, 3, &bt, NULL);
  }
  tt_layout_t at0;
  int64_t span;
  if (dynamic_span(v, off, bt.dims[0], &at0, &span)) {
    /* the write into the span at offset 0, and the span back in place */
    tt_val_t sub = span_slice(f, base, off, span);
    sub = write_strided(f, sub, &at0, TT_SHLO_INVALID, value);
    tt_val_t ops[3] = {base, sub, off};
    return tt_shlo_op(f, "stablehlo.dynamic_update_slice", ops, 3, &bt, NULL);
  }
  return write_strided(f, base, v, off, value);
}

/* The write of value (already in the base's dtype) through a view that is
 * not contiguous: into its window, else a scatter. */
static tt_val_t write_strided(tt_shlo_fn_t* f, tt_val_t base, const tt_layout_t* v, tt_val_t off, tt_val_t value) {
  tt_type_t bt = *tt_shlo_type(f, base);
  tt_dtype_t bdt = bt.dtype;
  int64_t numel = tt_layout_numel(v);
  if (off == TT_SHLO_INVALID) {
    tt_val_t w = write_window(f, base, v, value);
    if (w != TT_SHLO_INVALID || tt_shlo_failed(f)) return w;
  }
  tt_val_t idx = flat_indices(f, v, off);
  value = tt_l_reshape(f, value, 1, &numel);
  tt_type_t st = tt_type_scalar(bdt);
  tt_type_t bts[2] = {st, st};
  tt_val_t ba[2];
  tt_shlo_region_begin(f, bts, 2, ba);
  char* region = tt_shlo_region_end(f, &ba[1], 1);
  char attrs[512];
  snprintf(attrs, sizeof(attrs),
           "scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], "
           "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, "
           "indices_are_sorted = false, unique_indices = false");
  tt_val_t ops[3] = {base, idx, value};
  tt_type_t rt = bt;
  tt_val_t out;
  tt_shlo_op_multi(f, "stablehlo.scatter", ops, 3, &rt, 1, attrs, region, &out);
  return out;
}
