/* Views inside a program: lower/view reads and writes them on their
 * layouts (tt_view_layout). */
#include "tt_program.h"
#include "../base/tt_dims.h"

int64_t tt_view_numel(const tt_view_t* v) {
  int64_t n = 1;
  for (int i = 0; i < v->rank; i++) n *= v->sizes[i];
  return n;
}

/* tt_layout_is_contiguous on the view's own dims: runs per op (is an output
 * written whole?), where a copy of the layout's TT_MAX_RANK dims would cost
 * more than the test. */
bool tt_view_is_contiguous(const tt_view_t* v) { return tt_dims_contiguous(v->rank, v->sizes, v->strides); }

bool tt_view_covers(const tt_view_t* v, size_t nbytes) {
  /* a view with math bits transforms the values: never moved as is */
  return !v->conj && !v->neg && v->offset == 0 && tt_view_is_contiguous(v) &&
         (size_t)tt_view_numel(v) * tt_dtype_size(v->dtype) == nbytes;
}

tt_val_t tt_view_read(tt_shlo_fn_t* f, tt_val_t base, const tt_view_t* v, tt_val_t off) {
  tt_layout_t l = tt_view_layout(v);
  return tt_l_view_read(f, base, &l, off);
}

tt_val_t tt_view_write(tt_shlo_fn_t* f, tt_val_t base, const tt_view_t* v, tt_val_t off, tt_val_t value) {
  tt_layout_t l = tt_view_layout(v);
  return tt_l_view_write(f, base, &l, off, value);
}
