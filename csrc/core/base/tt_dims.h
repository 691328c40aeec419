/* Dimension lists (sizes and strides in elements), shared by the layers that
 * describe tensors: lower/ (layouts) and graph/ (views). Header-only. */
#ifndef TT_DIMS_H
#define TT_DIMS_H

#include <stdbool.h>
#include <stdint.h>

/* Whether `rank` dims of these sizes and strides are row-major contiguous
 * (dims of size 1 may have any stride). */
static inline bool tt_dims_contiguous(int rank, const int64_t* sizes, const int64_t* strides) {
  int64_t expect = 1;
  for (int i = rank - 1; i >= 0; i--) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expect) return false;
    expect *= sizes[i];
  }
  return true;
}

#endif
