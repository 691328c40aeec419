// The one registration of ATen kernels for the tpu device (PrivateUse1) that
// are not the boxed fallback (fallback.cpp: every op with a lowering, and
// CompositeExplicitAutograd ops with one, registered from the core's tables)
// nor PyTorch's required device ops (required_ops.cpp: allocation, storage,
// views, copies, .item()). Each is here because the op's CPU behaviour takes
// more than a lowering: a host value or a data-dependent size
// (host_composites.cpp), PyTorch's own composite implementation for a device
// key it would otherwise skip, or the SDPA backend choice (attention.cpp).
// Sparse COO tensors (the SparsePrivateUse1 key, and the dense ops that make
// or consume them) register in sparse.cpp, beside their kernels.
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_native_multi_head_attention_native.h>
#include <ATen/ops/_transformer_encoder_layer_fwd_native.h>
#include <torch/library.h>

#include "aten.h"

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_tpu::tpu_sdp_choice)
}

namespace torch_tpu {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // host values and data-dependent sizes, composed of lowered ops (host_composites.cpp)
  m.impl("equal", &tpu_equal);
  m.impl("bincount", &tpu_bincount);
  m.impl("_efficientzerotensor", &tpu_efficientzerotensor);
  // The inference fast paths of nn.MultiheadAttention and nn.TransformerEncoderLayer
  // (eval mode, no grad: torch._native_multi_head_attention and
  // torch._transformer_encoder_layer_fwd, which PyTorch takes for PrivateUse1
  // devices too): PyTorch's own implementations, written in ATen ops (the
  // device-specific pieces, _transform_bias_rescale_qkv and _masked_softmax, are
  // lowered by the core). Nothing of the ops' semantics is restated here.
  m.impl("_native_multi_head_attention", &at::native::native_multi_head_attention_cpu);
  m.impl("_transformer_encoder_layer_fwd", &at::native::transformer_encoder_layer_forward);
}

}  // namespace torch_tpu
