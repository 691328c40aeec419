// Output metadata of an op call (shapes, strides, dtypes), as PyTorch's meta
// kernels give it, and the bridge's own rules for the ops that have none.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>

#include <string>
#include <utility>
#include <vector>

namespace c10 {
class OperatorHandle;
}

namespace torch_tpu {

struct TMeta {
  std::vector<int64_t> sizes, strides;
  at::ScalarType dtype;
  bool defined;  // false: an undefined (not requested) output
};
struct MetaResult {
  std::vector<std::vector<TMeta>> mut;                     // per argument (mutated ones)
  std::vector<std::pair<bool, std::vector<TMeta>>> rets;   // per return: (is list, tensors)
  std::vector<c10::IValue> values;  // per return: an int / float / bool return's value, else None
};

// Ops whose meta kernel is missing or wrong for CPU's results (meta_rules.cpp).
// `before`: rules that replace the meta kernel (it fails or disagrees);
// `after`: rules tried only when the meta kernel does not exist. Both return
// false when they do not know the op; they throw PyTorch's errors for bad input.
bool meta_rule_before(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r);
// CPU's input checks that the meta kernels lack (meta_checks.cpp): throw
// CPU's error (e.g. a reduction without identity over an empty dim).
void cpu_input_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args);
// index_put's values must have self's dtype (CPU's check), except one value
// with a boolean mask (x[mask] = v is masked_fill_ on CPU). Every call, before
// the masks are expanded.
void index_put_dtype_check(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args);
// CPU's TensorIterator checks of an in-place pointwise op (add_, sin_,
// clamp_...) that the meta kernels lack: the result must keep self's shape and
// cast safely to self's dtype. `functional` runs the meta kernel of an op (the
// op's functional overload, e.g. aten::mul.Tensor for aten::mul_.Tensor).
using MetaRunner = MetaResult (*)(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args);
void cpu_inplace_checks(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, MetaRunner functional);
// The meta-result cache key (meta_key.cpp): the op's arguments as its meta
// kernel sees them, Scalars of pointwise / foreach ops by class
// (scalar_class_key_op) when `scalar_class`.
bool scalar_class_key_op(const c10::OperatorHandle& op, const std::string& base);
void meta_key(std::string& k, const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args,
              bool scalar_class);
// Schema helpers: the kind of a (possibly optional) type / of a list's elements.
c10::TypeKind base_kind(const c10::TypePtr& t);
c10::TypeKind list_elem_kind(const c10::TypePtr& t);
bool is_tpu(const at::Tensor& t);

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
// CPU's overflow check of the Scalars the op's kernel converts to its element
// type (scalar_checks.cpp): throws CPU's error. Runs on every call.
void scalar_overflow_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args,
                            const MetaResult& r, const std::vector<ScalarConversion>& conv);
bool meta_rule_missing(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r);

}  // namespace torch_tpu
