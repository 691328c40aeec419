// scaled_dot_product_attention on tpu: PyTorch asks each device which SDPA
// backend to run (_fused_sdp_choice_stub, registered in register.cpp). Ours
// answers "overrideable" where the core lowers
// _scaled_dot_product_fused_attention_overrideable (and its backward) as one
// op, and "math" (the decomposition) elsewhere: dropout
// (its mask would have to be regenerated in the backward), grouped-query
// attention or broadcast batch dims, ranks other than 3 and 4, non-float
// dtypes, or when the user disabled the overrideable backend
// (torch.nn.attention.sdpa_kernel); and wherever the CPU would not run its
// flash kernel (e.g. different head dims of q and v, a last dim of stride
// other than 1), so that outputs have the CPU's strides.
#include <ATen/Context.h>
#include <ATen/SDPBackend.h>
#include <ATen/ops/_fused_sdp_choice_ops.h>
#include <ATen/ops/from_blob.h>

#include "aten.h"

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

// Whether the CPU would run its flash kernel on tensors laid out as these:
// where it runs the math path instead, so do we, so that the output is laid
// out as the math ops lay it out (the fused op's output, like CPU's flash
// kernel's, follows the query's layout). The CPU's choice reads only
// metadata (sizes, strides, dtypes, the user's backend toggles): it is asked
// with CPU tensors of the same layout over a dummy address, never read.
// Symbolic sizes (torch.compile tracing): not asked (true).
bool cpu_runs_flash(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                    std::optional<double> scale, bool enable_gqa) {
  static char dummy[16];
  auto symbolic = [](const at::Tensor& t) { return t.unsafeGetTensorImpl()->has_symbolic_sizes_strides(); };
  bool has_mask = mask.has_value() && mask->defined();
  if (symbolic(q) || symbolic(k) || symbolic(v) || (has_mask && symbolic(*mask))) return true;
  auto like = [](const at::Tensor& t) {  // (requires_grad too: a mask that needs a gradient rules flash out)
    at::Tensor d =
        at::from_blob(dummy, t.sizes(), t.strides(), at::TensorOptions().dtype(t.scalar_type()).device(at::kCPU));
    if (t.requires_grad() && d.is_floating_point()) d.set_requires_grad(true);
    return d;
  };
  std::optional<at::Tensor> m;
  if (has_mask) m = like(*mask);
  // straight to the CPU kernel: no mode (FakeTensorMode while dynamo traces, a
  // TorchDispatchMode) sees these tensors
  int64_t choice = at::_ops::_fused_sdp_choice::redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), like(q),
                                                           like(k), like(v), m, dropout_p, is_causal, scale,
                                                           enable_gqa);
  return choice == static_cast<int64_t>(at::SDPBackend::flash_attention);
}

}  // namespace

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
  // last, the CPU's own choice (the user's toggles would answer for it: asked
  // only while its flash kernel is on)
  if (at::globalContext().userEnabledFlashSDP() &&
      !cpu_runs_flash(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa))
    return math;
  return static_cast<int64_t>(at::SDPBackend::overrideable);
}

}  // namespace torch_tpu
