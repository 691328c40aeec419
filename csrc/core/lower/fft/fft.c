/* FFTs: _fft_r2c, _fft_c2r, _fft_c2c (the ops torch.fft.* and stft reach),
 * as "stablehlo.fft". XLA transforms the trailing 1-3 dims, so the requested
 * dims are transposed to the end and back, and longer dim lists are chained
 * (the transform is separable; c2r does the full complex inverse on the
 * leading dims first, then the real inverse on the last group, as pocketfft).
 *
 * Normalization (ATen's fft_norm_mode): 0 none, 1 1/sqrt(n), 2 1/n, applied
 * to the result whatever the direction; n is the product of the signal sizes.
 * XLA's IFFT/IRFFT already divide by their n: inverse results are multiplied
 * back by n first. Computation stays in the input's precision, as on the CPU
 * (f16/bf16 are refused there too). */
#include <math.h>
#include <stdio.h>

#include "../elementwise/lower_elementwise.h"
#include "../shape/shape_util.h"
#include "../tt_lower_tables.h"

#define MAX_FFT_DIMS 3 /* what one stablehlo.fft transforms */

enum { FFT_FFT, FFT_IFFT, FFT_RFFT, FFT_IRFFT };
static const char* const k_fft_type[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

/* One stablehlo.fft of `type` over dims[0..nd) (nd <= 3, in that order) with
 * signal sizes len[0..nd). RFFT halves the last one, IRFFT produces len[nd-1]
 * reals from len/2+1 complex values. */
static tt_val_t fft_dims(tt_shlo_fn_t* f, tt_val_t v, int type, const int* dims, int nd,
                         const int64_t* len) {
  tt_type_t t = tt__sh_type(f, v);
  int64_t perm[TT_MAX_RANK], inv[TT_MAX_RANK];
  int k = 0;
  for (int d = 0; d < t.rank; d++) {
    bool used = false;
    for (int j = 0; j < nd; j++) used |= dims[j] == d;
    if (!used) perm[k++] = d;
  }
  for (int j = 0; j < nd; j++) perm[k++] = dims[j];
  for (int d = 0; d < t.rank; d++) inv[perm[d]] = d;
  tt_val_t x = tt_l_transpose(f, v, perm);
  tt_type_t rt = tt__sh_type(f, x);
  int last = rt.rank - 1;
  switch (type) {
    case FFT_RFFT:
      rt.dtype = tt_dtype_complex_of(rt.dtype);
      rt.dims[last] = len[nd - 1] / 2 + 1;
      break;
    case FFT_IRFFT:
      rt.dtype = tt_dtype_real_part(rt.dtype);
      rt.dims[last] = len[nd - 1];
      break;
    default:
      break;
  }
  tt_sbuf_t a;
  tt_sbuf_init(&a);
  tt_sbuf_printf(&a, "fft_type = #stablehlo<fft_type %s>, fft_length = ", k_fft_type[type]);
  tt_shlo_fmt_i64_array(&a, len, nd);
  x = tt_shlo_op(f, "stablehlo.fft", &x, 1, &rt, a.data);
  tt_sbuf_free(&a);
  return tt_l_transpose(f, x, inv);
}

/* FFT or IFFT over any number of dims (complex v), in groups of 3. */
static tt_val_t c2c_dims(tt_shlo_fn_t* f, tt_val_t v, int type, const int* dims, int nd) {
  for (int s = 0; s < nd; s += MAX_FFT_DIMS) {
    int g = nd - s < MAX_FFT_DIMS ? nd - s : MAX_FFT_DIMS;
    tt_type_t t = tt__sh_type(f, v);
    int64_t len[MAX_FFT_DIMS];
    for (int j = 0; j < g; j++) len[j] = t.dims[dims[s + j]];
    v = fft_dims(f, v, type, dims + s, g, len);
  }
  return v;
}

/* Multiplies v by `scale` (skipped when 1). */
static tt_val_t scale_by(tt_shlo_fn_t* f, tt_val_t v, double scale) {
  if (scale == 1.0) return v;
  return tt_l_binary(f, "stablehlo.multiply", v, tt__ew_k(f, v, scale));
}

/* The normalization factor of ATen's fft_norm_mode for n points; inverse
 * transforms also undo XLA's 1/n. */
static tt_status_t norm_scale(tt_lctx_t* c, int64_t mode, double n, bool xla_inverse, double* out) {
  double s;
  switch (mode) {
    case 0: s = 1.0; break;
    case 1: s = 1.0 / sqrt(n); break;
    case 2: s = 1.0 / n; break;
    default:
      return tt_status_make(TT_INVALID_ARGUMENT, "%s: invalid normalization mode %lld", c->op->name,
                            (long long)mode);
  }
  *out = xla_inverse ? s * n : s;
  return NULL;
}

/* Checks the dim list (args[1]) and copies it, wrapped, into dims. */
static tt_status_t get_dims(tt_lctx_t* c, int rank, int* dims, int* nd) {
  const tt_larg_t* a = &c->args[1];
  if (a->kind != TT_ARG_INTS || a->n > rank)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: bad dim list", c->op->name);
  for (int j = 0; j < a->n; j++) {
    int64_t d = tt_l_wrap_dim(a->ints[j], rank);
    if (d < 0 || d >= rank) return tt_status_make(TT_INVALID_ARGUMENT, "%s: dim out of range", c->op->name);
    dims[j] = (int)d;
  }
  *nd = a->n;
  return NULL;
}

/* The input (args[0]) as the lowering computes on it: *x, of type *t. */
static tt_status_t check_input(tt_lctx_t* c, tt_type_t* t, bool want_complex, tt_val_t* x) {
  *x = c->args[0].val;
  *t = tt__sh_type(c->f, *x);
  tt_dtype_t dt = t->dtype;
  /* float16 (CUDA's half FFT, whose complex results are complex32) is
   * computed in float32 */
  bool ok = want_complex ? tt_dtype_is_complex(dt) : (dt == TT_F16 || dt == TT_F32 || dt == TT_F64);
  if (!ok)
    return tt_status_make(TT_UNIMPLEMENTED, "%s: unsupported dtype %s", c->op->name, tt_dtype_name(dt));
  if (dt == TT_F16) {
    *x = tt_l_convert(c->f, *x, TT_F32);
    t->dtype = TT_F32;
  }
  return NULL;
}

/* _fft_r2c(self, dim, normalization, onesided) */
static tt_status_t lower_r2c(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t;
  int dims[TT_MAX_RANK], nd;
  tt_val_t x;
  TT_RETURN_IF_ERROR(check_input(c, &t, false, &x));
  TT_RETURN_IF_ERROR(get_dims(c, t.rank, dims, &nd));
  double n = 1;
  for (int j = 0; j < nd; j++) n *= (double)t.dims[dims[j]];
  double scale;
  TT_RETURN_IF_ERROR(norm_scale(c, c->args[2].i, n, false, &scale));
  if (nd == 0) {
    x = tt_l_convert(f, x, tt_dtype_complex_of(t.dtype));
  } else if (!c->args[3].i) { /* two-sided: a complex FFT of the real input */
    x = c2c_dims(f, tt_l_convert(f, x, tt_dtype_complex_of(t.dtype)), FFT_FFT, dims, nd);
  } else { /* RFFT over the last group (it halves dims[nd-1]), FFT over the rest */
    int g = nd < MAX_FFT_DIMS ? nd : MAX_FFT_DIMS, s = nd - g;
    int64_t len[MAX_FFT_DIMS];
    for (int j = 0; j < g; j++) len[j] = t.dims[dims[s + j]];
    x = fft_dims(f, x, FFT_RFFT, dims + s, g, len);
    x = c2c_dims(f, x, FFT_FFT, dims, s);
  }
  return tt_l_set_out(c, 0, scale_by(f, x, scale));
}

/* _fft_c2c(self, dim, normalization, forward) */
static tt_status_t lower_c2c(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t;
  int dims[TT_MAX_RANK], nd;
  tt_val_t x;
  TT_RETURN_IF_ERROR(check_input(c, &t, true, &x));
  TT_RETURN_IF_ERROR(get_dims(c, t.rank, dims, &nd));
  bool forward = c->args[3].i != 0;
  double n = 1;
  for (int j = 0; j < nd; j++) n *= (double)t.dims[dims[j]];
  double scale;
  TT_RETURN_IF_ERROR(norm_scale(c, c->args[2].i, n, !forward && nd > 0, &scale));
  x = c2c_dims(f, x, forward ? FFT_FFT : FFT_IFFT, dims, nd);
  return tt_l_set_out(c, 0, scale_by(f, x, scale));
}

/* _fft_c2r(self, dim, normalization, last_dim_size): the input holds the
 * non-negative half of the last dim (last_dim_size/2+1 values are used; the
 * rest is dropped, a shorter input is zero-padded). */
static tt_status_t lower_c2r(tt_lctx_t* c) {
  tt_shlo_fn_t* f = c->f;
  tt_type_t t;
  int dims[TT_MAX_RANK], nd;
  tt_val_t x;
  TT_RETURN_IF_ERROR(check_input(c, &t, true, &x));
  TT_RETURN_IF_ERROR(get_dims(c, t.rank, dims, &nd));
  int64_t last_n = c->args[3].i;
  if (nd == 0 || last_n < 1)
    return tt_status_make(TT_INVALID_ARGUMENT, "%s: needs at least one dim and last_dim_size >= 1",
                          c->op->name);
  int ld = dims[nd - 1];
  int64_t half = last_n / 2 + 1;
  if (t.dims[ld] > half) {
    x = tt_lt_slice_dim(f, x, ld, 0, half);
  } else if (t.dims[ld] < half) {
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
    hi[ld] = half - t.dims[ld];
    x = tt_lt_pad(f, x, tt_lt_const0(f, t.dtype, 0.0), lo, hi);
  }
  double n = (double)last_n;
  for (int j = 0; j < nd - 1; j++) n *= (double)t.dims[dims[j]];
  double scale;
  TT_RETURN_IF_ERROR(norm_scale(c, c->args[2].i, n, true, &scale));
  int g = nd < MAX_FFT_DIMS ? nd : MAX_FFT_DIMS, s = nd - g;
  x = c2c_dims(f, x, FFT_IFFT, dims, s);
  int64_t len[MAX_FFT_DIMS];
  for (int j = 0; j < g - 1; j++) len[j] = t.dims[dims[s + j]];
  len[g - 1] = last_n;
  x = fft_dims(f, x, FFT_IRFFT, dims + s, g, len);
  return tt_l_set_out(c, 0, scale_by(f, x, scale));
}

#define R(name, fn) {"aten::" name, fn, 0, 0}
const tt_lower_entry_t tt_lower_fft[] = {
    R("_fft_r2c", lower_r2c), R("_fft_r2c.out", lower_r2c),
    R("_fft_c2r", lower_c2r), R("_fft_c2r.out", lower_c2r),
    R("_fft_c2c", lower_c2c), R("_fft_c2c.out", lower_c2c),
};
const int tt_lower_fft_count = TT_TABLE_COUNT(tt_lower_fft);

/* The table's facts (every overload of each op): which ops compute on complex values as
 * CPU does (checked against it in tests/), or do when every tensor is complex (_SAME). The
 * runtime refuses complex tensors for an op without either. CPU's FFT out= kernels resize an
 * out contiguous, whatever layout the functional form's result has. */
const tt_lower_fact_t tt_lower_fft_facts[] = {
    TT_FACT("aten::_fft_r2c", TT_LF_COMPLEX | TT_LF_OUT_RESIZE_CONTIGUOUS),
    TT_FACT("aten::_fft_c2r", TT_LF_COMPLEX | TT_LF_OUT_RESIZE_CONTIGUOUS),
    TT_FACT("aten::_fft_c2c", TT_LF_COMPLEX | TT_LF_OUT_RESIZE_CONTIGUOUS),
};
const int tt_lower_fft_facts_count = TT_TABLE_COUNT(tt_lower_fft_facts);
