/* Internal to core/lower/nn: uint8 bilinear / bicubic resizes, with and
 * without antialias, as PyTorch CPU computes them (resample_u8.c). Used by
 * resample.c (upsample_bilinear2d, upsample_bicubic2d) and nn_more_aa.c
 * (_upsample_{bilinear,bicubic}2d_aa), with the antialias windows those
 * share. */
#ifndef TT_RESAMPLE_U8_H_
#define TT_RESAMPLE_U8_H_

#include "../lower_tensor_util.h"

/* The antialiased resizes' windows of one dim (nn_more_aa.c), also used by
 * the uint8 ones. */
typedef struct aa_dim {
  int64_t in, out, width; /* width: CPU's max_interp_size */
  int64_t* xmin;          /* out */
  int64_t* xsize;         /* out */
  double* w;              /* out x width, zero past xsize */
} aa_dim_t;

/* Scale, windows and normalized weights of one dim (in -> out) as CPU's
 * _compute_indices_min_size_weights_aa, each step rounded to float unless
 * f64; sc: the scale argument (FLOAT or NONE). False on OOM (free d anyway). */
bool tt__aa_weights(int64_t in, int64_t out, bool align, const tt_larg_t* sc, bool f64, bool cubic, aa_dim_t* d);
void tt__aa_free(aa_dim_t* d);

/* x: a (N, C, H, W) uint8 value; out_hw: the output H and W; scales: the
 * H and W scale arguments (<= 0: none given). Returns the resized uint8
 * value, or TT_SHLO_INVALID with the failure recorded in f. */
tt_val_t tt__resample_u8(tt_shlo_fn_t* f, tt_val_t x, const int64_t out_hw[2], bool align,
                         const double scales[2], bool cubic, bool antialias);

#endif /* TT_RESAMPLE_U8_H_ */
