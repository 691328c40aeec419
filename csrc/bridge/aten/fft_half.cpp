// The torch.fft functions on float16 input. PyTorch's wrappers
// (CompositeImplicitAutograd C++) take float16 only on CUDA and meta devices
// ("Unsupported dtype Half" elsewhere); on CUDA a float16 transform returns
// float16 or complex32. Here one boxed kernel at the autograd key serves every
// torch.fft function: a float16 input is computed in float32 and the results
// are rounded to float16 / complex32 (each step differentiable, so gradients
// flow as through CUDA's); any other input goes on to the wrapper itself.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "../bridge.h"

namespace torch_tpu {
namespace {

void fft_half(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  const size_t nargs = op.schema().arguments().size();
  c10::IValue& self = (*stack)[stack->size() - nargs];
  bool half = self.isTensor() && self.toTensor().scalar_type() == at::kHalf;
  if (half) self = self.toTensor().to(at::kFloat);
  // the wrapper itself, as the autograd key would have run it without this kernel
  op.callBoxedForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd, *stack);
  if (!half) return;
  const size_t nres = op.schema().returns().size();
  for (size_t i = stack->size() - nres; i < stack->size(); i++) {
    if (!(*stack)[i].isTensor()) continue;
    const at::Tensor r = (*stack)[i].toTensor();
    (*stack)[i] = r.to(r.is_complex() ? at::kComplexHalf : at::kHalf);
  }
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  for (const char* name : {"fft_fft", "fft_ifft", "fft_rfft", "fft_irfft", "fft_hfft", "fft_ihfft", "fft_fft2",
                           "fft_ifft2", "fft_rfft2", "fft_irfft2", "fft_hfft2", "fft_ihfft2", "fft_fftn",
                           "fft_ifftn", "fft_rfftn", "fft_irfftn", "fft_hfftn", "fft_ihfftn"})
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&fft_half>());
}

}  // namespace torch_tpu
