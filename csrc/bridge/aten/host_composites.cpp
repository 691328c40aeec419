// Ops whose result is a host value or whose output size depends on the data
// (equal -> bool, bincount -> max(input) + 1 bins; registered in register.cpp),
// and boolean-mask indices
// (their true positions decide the index count). Each is a composition of ops
// that have lowerings, plus one host read: the computation itself still runs
// on the device; only the data-dependent size or the final bool crosses over.
#include "../bridge.h"
#include "aten.h"

namespace torch_tpu {

// torch.equal: same sizes and every element equal (after type promotion, as
// CPU compares; NaN is never equal).
bool tpu_equal(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              self.device(), " and ", other.device(), "!");
  if (!self.is_same_size(other)) return false;
  if (self.numel() == 0) return true;
  return at::eq(self, other).all().item<bool>();
}

// torch.bincount: CPU's checks and dtypes (float32 weights count in float32,
// other weights in float64, no weights in int64).
at::Tensor tpu_bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights_opt,
                        int64_t minlength) {
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1 && !at::isFloatingType(self.scalar_type()) &&
                  self.scalar_type() != at::kBool && !at::isComplexType(self.scalar_type()),
              "bincount only supports 1-d non-negative integral inputs.");
  const at::Tensor* w = weights_opt.has_value() && weights_opt->defined() ? &*weights_opt : nullptr;
  TORCH_CHECK(!w || (w->dim() == 1 && w->size(0) == self.size(0)),
              "weights should be 1-d and have the same length as input");
  at::ScalarType dt = !w ? at::kLong : w->scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
  int64_t n = minlength;
  if (self.numel() > 0) {
    auto mm = at::aminmax(self);
    at::Tensor both = at::stack({std::get<0>(mm).to(at::kLong), std::get<1>(mm).to(at::kLong)}).cpu();
    int64_t lo = both[0].item<int64_t>(), hi = both[1].item<int64_t>();
    TORCH_CHECK(lo >= 0, "bincount only supports 1-d non-negative integral inputs.");
    n = std::max(n, hi + 1);
  }
  at::Tensor out = at::zeros({n}, self.options().dtype(dt));
  if (self.numel() == 0) return out;
  at::Tensor src = w ? w->to(dt) : at::ones({self.size(0)}, self.options().dtype(dt));
  return out.index_add_(0, self, src);
}

// torch._efficientzerotensor: PyTorch's ZeroTensor has no storage; here it is
// a materialized zero tensor (same values, used by autograd formulas).
at::Tensor tpu_efficientzerotensor(c10::SymIntArrayRef size, std::optional<at::ScalarType> dtype,
                                   std::optional<at::Layout> layout,
                                   std::optional<at::Device> device, std::optional<bool> pin) {
  auto opts = at::TensorOptions().dtype(dtype).layout(layout).device(device).pinned_memory(pin);
  return at::zeros_symint(size, opts);
}

// index_put(self, [mask], values) where the values do not vary along the
// masked elements (a number, or values broadcast along them): the core
// lowers it as an elementwise select on the mask, so that nothing waits for
// the mask's true positions (no sync; one program in Fused Eager and under
// torch.compile). The mask must be a boolean one covering dims of self from
// some position on (the shape checks below), the only index given.
static bool lone_mask_select(const c10::FunctionSchema& schema, const torch::jit::Stack& stack, size_t base,
                      const c10::List<std::optional<at::Tensor>>& list, const at::Tensor& self) {
  auto vi = schema.argumentIndexWithName("values");
  if (!vi || !stack[base + *vi].isTensor()) return false;
  const at::Tensor& v = stack[base + *vi].toTensor();
  int64_t p = 0, given = 0;
  std::optional<at::Tensor> mask;
  for (size_t k = 0; k < list.size(); k++) {
    std::optional<at::Tensor> t = list.get(k);
    if (!t.has_value() || !t->defined()) {
      if (!given) p++;
      continue;
    }
    given++;
    mask = t;
  }
  if (given != 1 || mask->scalar_type() != at::kBool || mask->dim() == 0 || p + mask->dim() > self.dim())
    return false;
  for (int64_t j = 0; j < mask->dim(); j++)
    if (mask->size(j) != self.size(p + j)) return false;
  // self[mask]'s shape, the masked elements' count as 1: the values must broadcast to it
  std::vector<int64_t> want(self.sizes().begin(), self.sizes().begin() + p);
  want.push_back(1);
  want.insert(want.end(), self.sizes().begin() + p + mask->dim(), self.sizes().end());
  int64_t lead = (int64_t)want.size() - v.dim();
  if (lead < 0) return false;
  for (int64_t j = 0; j < v.dim(); j++)
    if (v.size(j) != 1 && v.size(j) != want[lead + j]) return false;
  return v.device() == self.device();
}

// The `indices` argument as a list of optional tensors. TorchScript's
// interpreter passes a generic list (of tensors and Nones) where Python's
// dispatch passes a typed one.
static c10::List<std::optional<at::Tensor>> optional_tensors(const c10::IValue& iv) {
  if (iv.isOptionalTensorList()) return iv.toOptionalTensorList();
  c10::List<std::optional<at::Tensor>> out;
  for (const c10::IValue& e : iv.toList())
    out.push_back(e.isTensor() ? std::optional<at::Tensor>(e.toTensor()) : std::nullopt);
  return out;
}

// Boolean / uint8 masks among the `indices` of index / index_put: replaced by
// the int64 positions of their true elements (one index tensor per mask
// dimension), as PyTorch's own indexing does before its kernels run. The
// positions come from nonzero (a host op: one sync). Returns false if there
// was nothing to expand.
bool expand_mask_indices(const c10::FunctionSchema& schema, torch::jit::Stack* stack) {
  const auto& sargs = schema.arguments();
  auto ii = schema.argumentIndexWithName("indices");
  auto si = schema.argumentIndexWithName("self");
  if (!ii || !si) return false;
  size_t base = stack->size() - sargs.size();
  c10::IValue& iv = (*stack)[base + *ii];
  if (!iv.isList() || !(*stack)[base + *si].isTensor()) return false;
  auto list = optional_tensors(iv);
  bool any = false;
  for (size_t k = 0; k < list.size(); k++) {
    std::optional<at::Tensor> t = list.get(k);
    if (t.has_value() && t->defined() && (t->scalar_type() == at::kBool || t->scalar_type() == at::kByte))
      any = true;
    if (t.has_value() && t->defined() && t->scalar_type() == at::kByte)  // CPU's warning, once per mask
      TORCH_WARN("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
  }
  if (!any) return false;
  const at::Tensor self = (*stack)[base + *si].toTensor();
  if (lone_mask_select(schema, *stack, base, list, self)) return false;
  c10::List<std::optional<at::Tensor>> out;
  int64_t dim = 0;
  for (size_t k = 0; k < list.size(); k++) {
    std::optional<at::Tensor> t = list.get(k);
    if (!t.has_value() || !t->defined() ||
        (t->scalar_type() != at::kBool && t->scalar_type() != at::kByte)) {
      out.push_back(t);
      dim++;
      continue;
    }
    const at::Tensor& m = *t;
    TORCH_CHECK_NOT_IMPLEMENTED(m.dim() > 0, "tpu: a 0-dim boolean index tensor is not supported yet");
    for (int64_t j = 0; j < m.dim(); j++) {
      TORCH_CHECK_INDEX(dim + j < self.dim(), "too many indices for tensor of dimension ", self.dim());
      TORCH_CHECK_INDEX(m.size(j) == self.size(dim + j), "The shape of the mask ", m.sizes(),
                        " at index ", j, " does not match the shape of the indexed tensor ",
                        self.sizes(), " at index ", dim + j);
    }
    at::Tensor nz = at::nonzero(m);
    for (int64_t j = 0; j < m.dim(); j++) out.push_back(std::optional<at::Tensor>(nz.select(1, j)));
    dim += m.dim();
  }
  iv = c10::IValue(out);
  return true;
}

// CPU tensors among the `indices` of index / index_put (masks already
// expanded): copied to the indexed tensor's device. CUDA does the same
// (make_info in ATen's TensorAdvancedIndexingUtils moves every index to
// self's device; index's meta check allows indices "either on cpu or on the
// same device as the indexed tensor"). Other arguments are not moved: a CPU
// `values` of index_put_ is refused unless 0-dim, as on CUDA.
void move_host_indices(const c10::FunctionSchema& schema, torch::jit::Stack* stack) {
  const auto& sargs = schema.arguments();
  auto ii = schema.argumentIndexWithName("indices");
  auto si = schema.argumentIndexWithName("self");
  if (!ii || !si) return;
  size_t base = stack->size() - sargs.size();
  c10::IValue& iv = (*stack)[base + *ii];
  if (!iv.isList() || !(*stack)[base + *si].isTensor()) return;
  const at::Device dev = (*stack)[base + *si].toTensor().device();
  if (!dev.is_privateuseone()) return;
  auto list = optional_tensors(iv);
  bool any = false;
  for (size_t k = 0; k < list.size(); k++) {
    std::optional<at::Tensor> t = list.get(k);
    if (t.has_value() && t->defined() && t->is_cpu()) any = true;
  }
  if (!any) return;
  c10::List<std::optional<at::Tensor>> out;
  for (size_t k = 0; k < list.size(); k++) {
    std::optional<at::Tensor> t = list.get(k);
    if (t.has_value() && t->defined() && t->is_cpu()) t = t->to(dev);
    out.push_back(t);
  }
  iv = c10::IValue(out);
}

}  // namespace torch_tpu
