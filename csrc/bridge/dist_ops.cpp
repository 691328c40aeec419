// tpu_dist's op names, the mapping of c10d's reduce ops to the device's and
// the host backend's, and the errors of its argument checks (dist.h).
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "dist.h"
#include "meta.h"

namespace torch_tpu {
namespace dist {

const char* op_name(int64_t op) {
  static const char* names[] = {"?", "broadcast", "all_reduce", "reduce", "all_gather",
                                "all_gather_into_tensor", "gather", "scatter", "reduce_scatter",
                                "reduce_scatter_tensor", "all_to_all_single", "all_to_all", "send", "recv"};
  return op >= 0 && op < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[op] : "?";
}

c10::intrusive_ptr<Work> completed(std::vector<at::Tensor> result) {
  auto fut = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  fut->markCompleted(c10::IValue(std::move(result)));
  return Work::create_from_future(fut);
}

bool is_bitwise(ReduceOp rop) {
  return rop == ReduceOp::BAND || rop == ReduceOp::BOR || rop == ReduceOp::BXOR;
}

tt_coll_op_t coll_op(ReduceOp rop) {
  switch (rop) {
    case ReduceOp::SUM: return TT_COLL_SUM;
    case ReduceOp::PREMUL_SUM: return TT_COLL_SUM;
    case ReduceOp::PRODUCT: return TT_COLL_PROD;
    case ReduceOp::MIN: return TT_COLL_MIN;
    case ReduceOp::MAX: return TT_COLL_MAX;
    case ReduceOp::AVG: return TT_COLL_AVG;
    default: TORCH_CHECK(false, "tpu_dist: reduce op ", (int)rop, " has no device collective");
  }
}

ReduceOp host_rop(ReduceOp rop) {
  return rop == ReduceOp::AVG || rop == ReduceOp::PREMUL_SUM ? ReduceOp(ReduceOp::SUM) : rop;
}

c10::Scalar premul_factor(const ReduceOp& rop) {
  auto* s = static_cast<c10d::PreMulSumSupplement*>(rop.supplement_.get());
  return s->tensor_factor.defined() ? s->tensor_factor.item() : c10::Scalar(s->double_factor);
}

std::string rop_error(int64_t op, const ReduceOp& rop, at::ScalarType dt) {
  const char* name = op_name(op);
  if (is_bitwise(rop))
    return at::isIntegralType(dt, true) ? ""
                                        : c10::str("tpu_dist ", name, ": BAND, BOR and BXOR need integer or bool "
                                                   "tensors, got ", dt);
  switch (rop) {
    case ReduceOp::SUM:
    case ReduceOp::PRODUCT: return "";
    case ReduceOp::MIN:
    case ReduceOp::MAX:
      return at::isComplexType(dt) ? c10::str("tpu_dist ", name, ": MIN and MAX of complex tensors") : "";
    case ReduceOp::AVG: return dt == at::kBool ? c10::str("tpu_dist ", name, ": AVG of bool tensors") : "";
    case ReduceOp::PREMUL_SUM:
      if (!rop.supplement_)
        return c10::str("tpu_dist ", name, ": PREMUL_SUM without its factor (make the op with "
                        "dist._make_nccl_premul_sum(factor))");
      return at::isFloatingType(dt) || at::isComplexType(dt)
                 ? ""
                 : c10::str("tpu_dist ", name, ": PREMUL_SUM needs floating-point tensors, got ", dt);
    default: return c10::str("tpu_dist ", name, ": reduce op ", (int)rop, " is not supported");
  }
}

std::string tpu_error(const std::vector<at::Tensor>& ts, int64_t op) {
  for (const auto& t : ts) {
    if (!t.defined()) return c10::str("tpu_dist ", op_name(op), ": undefined tensor");
    if (!is_tpu(t))
      return c10::str("tpu_dist ", op_name(op), ": tensors must be on the tpu device, got one on ", t.device(),
                      " (for host tensors use a group of backend gloo, e.g. init_process_group(",
                      "backend=\"cpu:gloo,tpu:tpu_dist\"))");
    if (t.is_sparse()) return c10::str("tpu_dist ", op_name(op), ": sparse tensors are not supported");
  }
  return "";
}

}  // namespace dist
}  // namespace torch_tpu
