// scaled_dot_product_attention on tpu: PyTorch asks each device which SDPA
// backend to run (_fused_sdp_choice_stub). Ours answers "overrideable" where
// the core lowers _scaled_dot_product_fused_attention_overrideable (and its
// backward) as one op, and "math" (the decomposition) elsewhere: dropout
// (its mask would have to be regenerated in the backward), grouped-query
// attention or broadcast batch dims, ranks other than 3 and 4, non-float
// dtypes, or when the user disabled the overrideable backend
// (torch.nn.attention.sdpa_kernel).
#include <ATen/Context.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/transformers/attention.h>

namespace torch_tpu {
namespace {

// Sizes are read as SymInts: under torch.compile with dynamic shapes a plain
// size() would specialize the graph to one length.
bool same_lead(const at::Tensor& a, const at::Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int64_t d = 0; d < a.dim() - 2; d++)
    if (a.sym_size(d) != b.sym_size(d)) return false;
  return true;
}

int64_t tpu_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                       std::optional<double> scale, bool enable_gqa) {
  const auto math = static_cast<int64_t>(at::SDPBackend::math);
  if (!at::globalContext().userEnabledOverrideableSDP()) return math;
  if (dropout_p != 0.0) return math;
  if (q.dim() != 4) return math;  // the meta kernel handles 3-d inputs only partly
  if (!same_lead(q, k) || !same_lead(q, v)) return math;
  if (q.is_nested() || k.is_nested() || v.is_nested()) return math;
  at::ScalarType dt = q.scalar_type();
  if (!at::isFloatingType(dt) || k.scalar_type() != dt || v.scalar_type() != dt) return math;
  if (k.sym_size(-1) != q.sym_size(-1) || v.sym_size(-2) != k.sym_size(-2)) return math;
  if (mask.has_value() && mask->defined()) {
    const at::Tensor& m = *mask;
    if (m.dim() > q.dim() || (m.scalar_type() != at::kBool && !at::isFloatingType(m.scalar_type())))
      return math;
  }
  return static_cast<int64_t>(at::SDPBackend::overrideable);
}

}  // namespace
}  // namespace torch_tpu

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_tpu::tpu_sdp_choice)
}
