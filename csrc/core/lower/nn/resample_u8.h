/* Internal to core/lower/nn: uint8 bilinear / bicubic resizes, with and
 * without antialias, as PyTorch CPU computes them (resample_u8.c). Used by
 * resample.c (upsample_bilinear2d, upsample_bicubic2d) and nn_more_aa.c
 * (_upsample_{bilinear,bicubic}2d_aa). */
#ifndef TT_RESAMPLE_U8_H_
#define TT_RESAMPLE_U8_H_

#include "../lower_tensor_util.h"

/* x: a (N, C, H, W) uint8 value; out_hw: the output H and W; scales: the
 * H and W scale arguments (<= 0: none given). Returns the resized uint8
 * value, or TT_SHLO_INVALID with the failure recorded in f. */
tt_val_t tt__resample_u8(tt_shlo_fn_t* f, tt_val_t x, const int64_t out_hw[2], bool align,
                         const double scales[2], bool cubic, bool antialias);

#endif /* TT_RESAMPLE_U8_H_ */
