/* Internal to core/lower/nn: the windows and weights of the antialiased
 * bilinear / bicubic resizes, one dim at a time, computed in C from sizes and
 * scales (resample_aa_weights.c). Used by nn_more_aa.c (float resizes and
 * their backward) and resample_u8.c (uint8 resizes with antialias). Pure
 * functions; reentrant. */
#ifndef TT_RESAMPLE_AA_WEIGHTS_H_
#define TT_RESAMPLE_AA_WEIGHTS_H_

#include "../tt_lower.h"

/* The windows of one dim: output o reads input [xmin[o], xmin[o] + xsize[o])
 * with weights w[o * width ...]. Owned arrays: tt__aa_free releases them. */
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

#endif /* TT_RESAMPLE_AA_WEIGHTS_H_ */
