// torch.autocast("tpu", dtype=...): PyTorch's own op lists and cast policies
// (ATen/autocast_mode.h), registered for the AutocastPrivateUse1 key the way
// CUDA's are; every other op falls through.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace {
using namespace at::autocast;

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define TT_LOWER_PRECISION(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define TT_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define TT_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(TT_LOWER_PRECISION)
  AT_FORALL_FP32(TT_FP32)
  AT_FORALL_PROMOTE(TT_PROMOTE)
#undef TT_LOWER_PRECISION
#undef TT_FP32
#undef TT_PROMOTE
}

}  // namespace
