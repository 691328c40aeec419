// The bridge's ATen-specific rules, all in this folder: where following the
// CPU takes knowledge of one op that neither PyTorch's meta kernels nor the
// core's lowering tables hold. The CPU's output layouts where meta kernels
// lack them or describe CUDA's (meta_rules.cpp, cpu_metadata.cpp), the CPU's
// input checks that meta kernels lack (meta_checks.cpp), the CPU's overflow
// check of Scalar arguments (scalar_checks.cpp, from the ops' `scalars`
// facts), ops whose result is a host value or whose size depends on the data
// (host_composites.cpp), the SDPA backend choice (attention.cpp); and the one
// registration of ATen kernels for PrivateUse1 (register.cpp). Every fact
// about an op that is not such a rule is a fact beside its lowering
// (core/lower/tt_lower.h), read through the registry. The rest of the bridge
// calls what this header declares; nothing here marshals a call.
#pragma once

#include <torch/library.h>

#include "../meta.h"

namespace torch_tpu {

// ---- output metadata -------------------------------------------------------

// Ops whose meta kernel is missing or wrong for CPU's results (meta_rules.cpp).
// `before`: rules that replace the meta kernel (it fails or disagrees);
// `missing`: rules tried only when the meta kernel does not exist. Both return
// false when they do not know the op; they throw PyTorch's errors for bad input.
bool meta_rule_before(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r);
bool meta_rule_missing(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r);
// The ops ("aten::_grouped_mm") whose `before` rule also replaces PyTorch's
// Python meta kernel for tpu fake tensors (torch.compile's tracing, see
// fake_meta.cpp): that kernel states another backend's limits.
const std::vector<std::string>& meta_rules_for_fake();
// Where PyTorch's meta kernels describe CUDA's outputs rather than CPU's, CPU's
// (cpu_metadata.cpp): r, the meta kernel's result, is corrected in place.
void match_cpu_metadata(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r);
// Whether argument i, a 0-dim CPU tensor, reaches the meta kernel as a meta
// tensor rather than as the host value it is (cpu_metadata.cpp).
bool host_value_as_meta(const c10::FunctionSchema& schema, size_t i, const c10::IValue& v);
// Whether the meta kernel of the op (base name `base`, "aten::add") reads its
// Scalars' classes only, not their values, so that its meta results may be
// cached by class (cpu_metadata.cpp).
bool scalar_class_key_op(const c10::OperatorHandle& op, const std::string& base);

// ---- CPU's checks -----------------------------------------------------------

// CPU's input checks that the meta kernels lack (meta_checks.cpp): throw
// CPU's error (e.g. a reduction without identity over an empty dim).
void cpu_input_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args);
// CPU's checks of a random op's parameters (random_'s bounds, with its
// warnings where a float dtype cannot hold them; uniform_'s range; the std,
// lambda, p or sigma of normal_, exponential_, bernoulli_, geometric_,
// cauchy_, log_normal_), which the meta kernels lack or word otherwise. They
// run on every call (the warnings repeat on CPU), for the ops cpu_random_op
// names ("aten::random_", ...: their base names).
bool cpu_random_op(const std::string& base);
void cpu_random_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args);
// CPU's warning where an out= of arange must be resized (to `size` elements):
// the meta kernel warns with another text, or not at all.
void cpu_out_resize_warning(const c10::FunctionSchema& schema, const at::Tensor& out, int64_t size);
// index_put's values must have self's dtype (CPU's check), except one value
// with a boolean mask (x[mask] = v is masked_fill_ on CPU). Every call, before
// the masks are expanded: CPU's message, or "" where the dtypes pass. CPU
// checks the values' shape first: the caller raises the message after the
// masks are expanded and cpu_input_checks has seen the shapes.
std::string index_put_dtype_error(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args);
// CPU's TensorIterator checks of an in-place pointwise op (add_, sin_,
// clamp_...) that the meta kernels lack: the result must keep self's shape and
// cast safely to self's dtype. `functional` runs the meta kernel of an op (the
// op's functional overload, e.g. aten::mul.Tensor for aten::mul_.Tensor).
using MetaRunner = MetaResult (*)(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args);
void cpu_inplace_checks(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, MetaRunner functional);
// CPU's checks of a _foreach_* op, whose slow path runs the per-element op on
// each element, that the meta kernels lack or word otherwise: sub of bools,
// the tensors of an element broadcasting together, clamp's refusal of complex
// values, and in place each element's result keeping self's shape and casting
// to self's dtype (`functional` runs the functional overload's meta kernel).
void cpu_foreach_checks(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, MetaRunner functional);
// The dtype CPU's out= kernel of the op demands of its out= argument, where the
// meta kernel accepts any (the op's TT_LF_OUT_SAME_DTYPE / _RESULT_DTYPE fact):
// `same_as_input`: the first tensor input's, else the result dtype of the
// functional overload, whose meta kernel `functional` runs.
// A meta kernel's refusal of an out= of an unsafe dtype ("Attempting to cast
// from torch.float32 to out tensor with dtype torch.int64, ...") rethrown as
// CPU's ("result type Float can't be cast to the desired output type Long");
// returns if `what` is another error.
void cpu_cast_error(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, const char* what);
void cpu_out_dtype_checks(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, bool same_as_input,
                          MetaRunner functional);

// Where CPU's kernel converts a Scalar argument (c10::checked_convert): the
// `scalars` fact of the op's lowering entry (core/lower/tt_lower.h), parsed
// once per op by scalar_conversions.
enum class ScalarTo {
  kResult,     // the result's dtype (scalar_t)
  kOpmath,     // its opmath type (float for half types)
  kNegResult,  // negated, to the result's dtype (sub: add with -alpha)
  kIntegral64, // integral results: to int64 (truncated), then to the result's dtype (hardtanh)
};
struct ScalarConversion {
  int arg;  // index in the schema's arguments
  ScalarTo to;
};
// The conversions `scalars` ("name:to name:to", or NULL) names, for the
// arguments the schema has.
std::vector<ScalarConversion> scalar_conversions(const c10::FunctionSchema& schema, const char* scalars);
// c10's name of an element type in CPU's conversion errors ("int64_t", "c10::Half").
const char* c_type_name(at::ScalarType t);
// CPU's overflow check of the Scalars the op's kernel converts to its element
// type (scalar_checks.cpp): throws CPU's error. Runs on every call.
void scalar_overflow_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args,
                            const MetaResult& r, const std::vector<ScalarConversion>& conv);

// ---- boolean-mask indices (host_composites.cpp) ------------------------------

// Replaces boolean / uint8 masks in the `indices` argument of the op on top of
// the stack by int64 indices. Returns false if none.
bool expand_mask_indices(const c10::FunctionSchema& schema, torch::jit::Stack* stack);
// Copies CPU tensors among those `indices` to the indexed tensor's device, as
// CUDA accepts them.
void move_host_indices(const c10::FunctionSchema& schema, torch::jit::Stack* stack);

// ---- kernels, registered in register.cpp ------------------------------------

// host_composites.cpp
bool tpu_equal(const at::Tensor& self, const at::Tensor& other);
at::Tensor tpu_bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights_opt, int64_t minlength);
at::Tensor tpu_efficientzerotensor(c10::SymIntArrayRef size, std::optional<at::ScalarType> dtype,
                                   std::optional<at::Layout> layout, std::optional<at::Device> device,
                                   std::optional<bool> pin);
// attention.cpp: which SDPA backend runs (_fused_sdp_choice_stub)
int64_t tpu_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                       std::optional<double> scale, bool enable_gqa);

}  // namespace torch_tpu
