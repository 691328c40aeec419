// The ops every PrivateUse1 backend must provide itself (OpenReg's list):
// creation, views, resize/set, cross-device copies and .item().
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <torch/library.h>

#include "bridge.h"

namespace torch_tpu {
namespace {

const c10::DispatchKeySet kTpuKeys(c10::DispatchKey::PrivateUse1);

c10::DeviceIndex device_of(std::optional<at::Device> device) {
  if (device.has_value() && device->has_index()) return device->index();
  return current_device();
}

struct DeviceScope {  // (nothing to switch, and nothing to check, when d is current)
  c10::DeviceIndex old;
  explicit DeviceScope(c10::DeviceIndex d) : old(current_device()) {
    if (d != old) set_current_device(d);
  }
  ~DeviceScope() {
    if (current_device() != old) set_current_device(old);
  }
};

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout>, std::optional<at::Device> device,
                               std::optional<bool>, std::optional<at::MemoryFormat> memory_format) {
  auto dt = c10::dtype_or_default(dtype);
  to_tt_dtype(dt);  // refuse dtypes the device cannot hold
  DeviceScope scope(device_of(device));
  return at::detail::empty_generic(size, allocator(), kTpuKeys, dt, memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                         std::optional<at::Device> device, std::optional<bool>) {
  auto dt = c10::dtype_or_default(dtype);
  to_tt_dtype(dt);
  DeviceScope scope(device_of(device));
  return at::detail::empty_strided_generic(size, stride, allocator(), kTpuKeys, dt);
}

}  // namespace

// An op's new output, without a trip through the dispatcher (the boxed
// fallback makes one per output of every op): what empty_strided makes.
at::Tensor new_output(c10::IntArrayRef size, c10::IntArrayRef stride, at::ScalarType dtype,
                      c10::DeviceIndex device) {
  to_tt_dtype(dtype);
  DeviceScope scope(device);
  return at::detail::empty_strided_generic(size, stride, allocator(), kTpuKeys, dtype);
}

namespace {

// Grows the storage (in place: the handle keeps its address) to hold `need`.
void ensure_storage(const at::Tensor& self, size_t need) {
  auto storage = self.storage();
  if (need <= storage.nbytes()) return;
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  auto* s = static_cast<tt_storage_t*>(storage.mutable_data());
  TT_CHECK_STATUS(tt_storage_resize(s, need), "resize_");
  storage.unsafeGetStorageImpl()->set_nbytes(need);
}

size_t storage_bytes_needed(const at::Tensor& t) {
  if (t.numel() == 0) return 0;
  return at::detail::computeStorageNbytes(t.sizes(), t.strides(), t.dtype().itemsize(),
                                         t.storage_offset());
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  if (self.sizes() != size) impl->set_sizes_contiguous(size);
  auto fmt = memory_format.value_or(at::MemoryFormat::Contiguous);
  if (fmt != at::MemoryFormat::Preserve && fmt != at::MemoryFormat::Contiguous)
    impl->empty_tensor_restride(fmt);
  ensure_storage(self, storage_bytes_needed(self));
  return self;
}

at::Tensor& set_storage_offset(at::Tensor& self, c10::Storage source, c10::SymInt offset,
                               c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  auto* impl = self.unsafeGetTensorImpl();
  if (!impl->storage().is_alias_of(source)) impl->set_storage_keep_dtype(std::move(source));
  impl->set_storage_offset(offset.expect_int());
  auto sz = C10_AS_INTARRAYREF_SLOW(size);
  if (stride.data() != nullptr) impl->set_sizes_and_strides(sz, C10_AS_INTARRAYREF_SLOW(stride));
  else impl->set_sizes_contiguous(sz);
  ensure_storage(self, storage_bytes_needed(self));
  return self;
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source) {
  int64_t n = (int64_t)(source.nbytes() / self.dtype().itemsize());
  std::vector<c10::SymInt> size{c10::SymInt(n)};
  std::vector<c10::SymInt> stride{c10::SymInt(1)};
  return set_storage_offset(self, std::move(source), 0, size, stride);
}

at::Tensor& set_tensor(at::Tensor& self, const at::Tensor& src) {
  return set_storage_offset(self, src.storage(), src.sym_storage_offset(), src.sym_sizes(),
                            src.sym_strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, allocator(), true);
  std::vector<c10::SymInt> size{c10::SymInt(0)};
  return set_storage_offset(self, storage, 0, size, {});
}

// ---- copies ----------------------------------------------------------------------

void copy_host_to_device(const at::Tensor& dst, const at::Tensor& src) {
  // the host bytes must hold the values (a conj / neg view's bits resolved);
  // dst's own bits are applied by the core's write
  auto host = src.to(dst.scalar_type()).resolve_conj().resolve_neg().expand(dst.sizes()).contiguous();
  tt_view_t v = to_view(dst);
  TT_CHECK_STATUS(tt_view_write_host(runtime(), &v, host.const_data_ptr()), "copy to tpu");
}

at::Tensor device_to_host(const at::Tensor& src) {
  auto host = at::empty(src.sizes(), src.options().device(at::kCPU));
  tt_view_t v = to_view(src);
  TT_CHECK_STATUS(tt_view_read_host(runtime(), &v, host.mutable_data_ptr()), "copy from tpu");
  return host;
}

at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool) {
  if (self.numel() == 0) return self;
  // ATen's copy_ warns before it reaches a device's kernel; this copy_ replaces it
  if (!self.is_complex() && src.is_complex())
    TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");
  bool dst_tpu = self.is_privateuseone(), src_tpu = src.is_privateuseone();
  if (dst_tpu && src_tpu) {
    tt_view_t d = to_view(self), s = to_view(src);
    if (s.rank < d.rank || src.sizes() != self.sizes()) {
      // broadcast src to self's shape as an expanded view
      auto e = src.expand(self.sizes());
      s = to_view(e);
    }
    TT_CHECK_STATUS(tt_runtime_copy(runtime(), &d, &s), "copy_");
  } else if (dst_tpu) {
    copy_host_to_device(self, src.device().is_cpu() ? src : src.cpu());
  } else if (src_tpu) {
    if (self.is_cpu() && self.is_contiguous() && self.scalar_type() == src.scalar_type() &&
        self.sizes() == src.sizes() && !self.is_conj() && !self.is_neg()) {
      tt_view_t v = to_view(src);  // straight into self: no temporary, one copy
      TT_CHECK_STATUS(tt_view_read_host(runtime(), &v, self.mutable_data_ptr()), "copy from tpu");
    } else {
      self.copy_(device_to_host(src));
    }
  } else {
    TORCH_CHECK(false, "tpu copy_: neither tensor is on the tpu device");
  }
  return self;
}

at::Tensor copy_from_kernel(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  at::Tensor d = dst;
  copy_(d, self, non_blocking);
  return dst;
}

at::Tensor copy_from_and_resize_kernel(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) {
    if (dst.is_privateuseone()) resize_(dst, self.sizes(), std::nullopt);
    else dst.resize_(self.sizes());
  }
  return copy_from_kernel(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(),
              " elements cannot be converted to Scalar");
  return device_to_host(self).item();
}

// module.to("tpu") moves parameters in place (param.data = ...) only when
// PyTorch deems CPU and tpu tensors shallow-copy compatible; its own check
// lists only built-in dense backends.
bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  auto dense = [](const at::Tensor& t) {
    return t.layout() == at::kStrided && (t.is_cpu() || t.is_privateuseone());
  };
  if (dense(self) && dense(from)) return true;
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("unfold", at::native::unfold);
  // complex <-> (re, im) float pairs: metadata-only views of the same storage
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage", set_storage);
  m.impl("set_.source_Storage_storage_offset", set_storage_offset);
  m.impl("set_.source_Tensor", set_tensor);
  m.impl("set_", set_empty);
  m.impl("copy_", copy_);
  m.impl("_copy_from", copy_from_kernel);
  m.impl("_copy_from_and_resize", copy_from_and_resize_kernel);
  m.impl("_local_scalar_dense", local_scalar_dense);
}

}  // namespace torch_tpu
