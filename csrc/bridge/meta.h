// Output metadata of an op call (shapes, strides, dtypes), as PyTorch's meta
// kernels give it; the bridge's own rules for the ops whose meta kernels are
// missing or describe another device are in aten/ (aten/aten.h).
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

// The meta-result cache key (meta_key.cpp): the op's arguments as its meta
// kernel sees them, Scalars by class (not value) when `scalar_class`
// (aten/aten.h: scalar_class_key_op).
void meta_key(std::string& k, const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args,
              bool scalar_class);
// Schema helpers: the kind of a (possibly optional) type / of a list's elements.
c10::TypeKind base_kind(const c10::TypePtr& t);
c10::TypeKind list_elem_kind(const c10::TypePtr& t);
bool is_tpu(const at::Tensor& t);

}  // namespace torch_tpu
