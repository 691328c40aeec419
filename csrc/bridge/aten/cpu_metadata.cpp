// Where following the CPU takes per-op knowledge around PyTorch's meta
// kernels: the CPU's output metadata where a meta kernel describes CUDA's
// (match_cpu_metadata), a host value a meta kernel must see as a meta tensor
// (host_value_as_meta), and which meta kernels read Scalars' classes only
// (scalar_class_key_op, for the meta-result cache's key).
#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>

#include "aten.h"

namespace torch_tpu {

// 0-dim CPU tensors: CUDA takes one as a host scalar where its kernel allows
// it (TensorIterator ops with allow_cpu_scalars: binary elementwise ops, at
// most one; index_put_'s values; masked_fill's value), and so do the meta
// kernels, which see them on the host. masked_fill's Python reference allows
// one only beside a tensor of an accelerator (a.device.type), which a meta
// tensor is not: there the value is given to the meta kernel as a meta tensor.
bool host_value_as_meta(const c10::FunctionSchema& schema, size_t i, const c10::IValue& v) {
  if (!v.isTensor() || !v.toTensor().defined() || !v.toTensor().is_cpu() || v.toTensor().dim() != 0)
    return false;
  const std::string& n = schema.name();
  return (n == "aten::masked_fill" || n == "aten::masked_fill_") && schema.arguments()[i].name() == "value";
}

// Where PyTorch's meta kernels describe CUDA's outputs rather than CPU's, take
// CPU's (tpu follows CPU): the saved statistics of batch/layer norm keep the
// input's dtype for half types, and eval-mode batch norm saves none.
void match_cpu_metadata(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args,
                        MetaResult& r) {
  const std::string& name = schema.name();
  // multilabel_margin_loss of one sample, reduction 'none': CPU's loss is 0-d
  if (name == "aten::multilabel_margin_loss_forward" && args.size() > 2 && args[0].isTensor() &&
      args[0].toTensor().dim() <= 1 && args[2].isInt() && args[2].toInt() == 0) {
    auto i = schema.argumentIndexWithName("output");
    std::vector<TMeta>* loss = i && (size_t)*i < r.mut.size() && !r.mut[*i].empty() ? &r.mut[*i]
                               : !r.rets.empty() ? &r.rets[0].second : nullptr;
    if (loss && !loss->empty()) (*loss)[0].sizes.clear(), (*loss)[0].strides.clear();
  }
  // linalg_eig: CPU's eigenvectors are column-major (geev's layout), the meta
  // kernel's are CUDA's row-major ones. (out=: a resized out takes these
  // strides when empty, TT_LF_OUT_RESTRIDE_IF_EMPTY in fallback.cpp.)
  if (name == "aten::linalg_eig") {
    if (r.rets.size() < 2 || schema.overload_name() == "out") return;
    for (auto& tm : r.rets[1].second) {
      size_t n = tm.sizes.size();
      if (!tm.defined || n < 2) continue;
      int64_t rows = std::max<int64_t>(1, tm.sizes[n - 2]), cols = std::max<int64_t>(1, tm.sizes[n - 1]);
      tm.strides.assign(n, 1);
      tm.strides[n - 1] = rows;
      int64_t step = rows * cols;
      for (int64_t d = (int64_t)n - 3; d >= 0; d--) {
        tm.strides[d] = step;
        step *= std::max<int64_t>(1, tm.sizes[d]);
      }
    }
    return;
  }
  // convolutions: CPU's kernels (oneDNN for float32 / reduced types, its own
  // for float64) return a channels-last output when the input or the weight
  // is channels-last (2-d and 3-d convolutions, transposed too), except its
  // float64 3-d kernels, which return a contiguous one; the meta kernel's is
  // always contiguous
  if (name == "aten::convolution" || name == "aten::_convolution" || name == "aten::convolution_overrideable") {
    if (args.size() < 2 || !args[0].isTensor() || !args[1].isTensor() || r.rets.empty() ||
        r.rets[0].second.size() != 1)
      return;
    const at::Tensor &in = args[0].toTensor(), &w = args[1].toTensor();
    TMeta& out = r.rets[0].second[0];
    if (!in.defined() || !w.defined() || !out.defined || in.dim() != w.dim() || out.sizes.size() != (size_t)in.dim())
      return;
    at::MemoryFormat cl = in.dim() == 4 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::ChannelsLast3d;
    bool want = (in.dim() == 4 || (in.dim() == 5 && in.scalar_type() != at::kDouble)) &&
                (in.suggest_memory_format() == cl || w.suggest_memory_format() == cl);
    if (want)
      out.strides = at::empty(out.sizes, at::TensorOptions().device(at::kMeta).memory_format(cl)).strides().vec();
    return;
  }
  // SDPA's fused backward where CPU runs its flash kernel (attention.cpp): the
  // CPU's gradients of q, k, v are laid out as (B, L, H, E), whatever the
  // inputs' layout; the meta kernel's as the inputs
  if (name == "aten::_scaled_dot_product_fused_attention_overrideable_backward") {
    for (size_t k = 0; k < 3 && k < r.rets.size(); k++)
      for (auto& tm : r.rets[k].second) {
        if (!tm.defined || tm.sizes.size() != 4) continue;
        auto n = [&](int d) { return std::max<int64_t>(1, tm.sizes[d]); };
        tm.strides = {n(2) * n(1) * n(3), n(3), n(1) * n(3), 1};
      }
    return;
  }
  // copysign, floor_divide, div(rounding_mode="floor") of a tensor and a 0-dim
  // tensor: CPU's TensorIterator lays the result out as the tensor (a 0-dim
  // operand has no say), the Python references' compositions contiguously
  if ((name == "aten::copysign" || name == "aten::floor_divide" || name == "aten::div") && args.size() >= 2 &&
      args[0].isTensor() && args[1].isTensor() && r.rets.size() == 1 && r.rets[0].second.size() == 1) {
    const at::Tensor &a = args[0].toTensor(), &b = args[1].toTensor();
    TMeta& out = r.rets[0].second[0];
    if (!a.defined() || !b.defined() || !out.defined) return;
    const at::Tensor* like = a.dim() == 0 ? &b : b.dim() == 0 ? &a : nullptr;
    if (like && like->dim() > 0 && like->sizes() == c10::IntArrayRef(out.sizes))
      out.strides = at::infer_dense_strides(like->sizes(), like->strides());
    return;
  }
  // huber_loss: CPU computes into empty_like(input) (the promoted value cast to
  // input's dtype); the meta kernel promotes
  if (name == "aten::huber_loss" && !args.empty() && args[0].isTensor() && !r.rets.empty()) {
    for (auto& tm : r.rets[0].second) tm.dtype = args[0].toTensor().scalar_type();
    return;
  }
  // pow(bool tensor, bool Scalar): CPU's result type is bool, the meta kernel's int64
  if (name == "aten::pow" && schema.overload_name() == "Tensor_Scalar" && args.size() > 1 && args[0].isTensor() &&
      args[0].toTensor().scalar_type() == at::kBool && args[1].isScalar() && args[1].toScalar().isBoolean()) {
    for (auto& ret : r.rets)
      for (auto& tm : ret.second) tm.dtype = at::kBool;
    return;
  }
  bool ln = name == "aten::native_layer_norm";
  bool bn = name == "aten::native_batch_norm" || name == "aten::_native_batch_norm_legit" ||
            name == "aten::_native_batch_norm_legit_functional" ||
            name == "aten::_native_batch_norm_legit_no_training" ||
            name == "aten::_batch_norm_with_update" || name == "aten::_batch_norm_no_update";
  if ((!bn && !ln) || r.rets.size() < 3 || args.empty() || !args[0].isTensor()) return;
  at::ScalarType in = args[0].toTensor().scalar_type();
  bool half = in == at::kHalf || in == at::kBFloat16;
  bool eval = name == "aten::_native_batch_norm_legit_no_training" || name == "aten::_batch_norm_no_update";
  if (bn && !eval) {
    auto ti = schema.argumentIndexWithName("training");
    if (ti && (size_t)*ti < args.size() && args[*ti].isBool()) eval = !args[*ti].toBool();
  }
  auto fix = [&](TMeta& tm) {
    if (!tm.defined) return;
    if (half) tm.dtype = in;
    if (eval) {
      tm.sizes = {0};
      tm.strides = {1};
    }
  };
  for (size_t k = 1; k < 3; k++)
    for (auto& tm : r.rets[k].second) fix(tm);
  // _native_batch_norm_legit_functional's new running stats: in the running
  // stats' dtype on CPU (the meta kernel says float32 for half inputs)
  if (name == "aten::_native_batch_norm_legit_functional" && r.rets.size() >= 5)
    for (size_t k = 3; k < 5; k++) {
      const c10::IValue& src = args.size() > k ? args[k] : c10::IValue();
      if (!src.isTensor()) continue;
      for (auto& tm : r.rets[k].second)
        if (tm.defined) tm.dtype = src.toTensor().scalar_type();
    }
  // out= overloads: the saved statistics are the arguments save_mean / save_invstd
  for (const char* a : {"save_mean", "save_invstd"}) {
    auto i = schema.argumentIndexWithName(a);
    if (i && (size_t)*i < r.mut.size())
      for (auto& tm : r.mut[*i]) fix(tm);
  }
}

// Pointwise ops (PyTorch's `pointwise` tag) and the foreach family: their meta
// kernels read a Scalar's type (promotion) and at most its class (sign, zero,
// NaN, infinity, beyond float32's range: softshrink's lambda range, rrelu's
// finite bounds), never the exact value; so their meta results are keyed by
// the class, and a Scalar that changes every call (an optimizer's step size,
// a bias correction) does not miss the cache every call. Found by calling the
// meta kernel of every such op with Scalars of each class in several dtypes:
// only the families below read more (elu's input_scale 1 vs 2 as an integer),
// and they keep the exact value.
bool scalar_class_key_op(const c10::OperatorHandle& op, const std::string& base) {
  for (const char* f : {"elu", "hardtanh", "rrelu", "softshrink", "hardshrink", "threshold"})
    if (base.find(f) != std::string::npos) return false;
  return op.hasTag(at::Tag::pointwise) || base.rfind("aten::_foreach_", 0) == 0;
}

}  // namespace torch_tpu
