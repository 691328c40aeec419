// PrivateUse1 device plumbing: allocator, device guard, hooks, generator.
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <array>
#include <mutex>
#include <random>

#include "bridge.h"

namespace torch_tpu {

// ---- allocator ----------------------------------------------------------------
// A DataPtr points at a core storage handle (stable address); device memory
// itself lives in PJRT buffers that the handle swaps as ops write it.
namespace {
void delete_storage(void* p) { tt_storage_release(static_cast<tt_storage_t*>(p)); }

struct TpuAllocator final : c10::DeviceAllocator {
  c10::DataPtr allocate(size_t n) override {
    tt_runtime_t* rt = runtime();
    c10::DeviceIndex d = current_device();
    tt_storage_t* s = nullptr;
    TT_CHECK_STATUS(tt_storage_create(rt, d, n, &s), "allocating tpu memory");
    return {s, s, &delete_storage, c10::Device(c10::DeviceType::PrivateUse1, d)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &delete_storage; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    auto* d = static_cast<tt_storage_t*>(dest);
    auto* s = static_cast<tt_storage_t*>(const_cast<void*>(src));
    TORCH_CHECK(count == tt_storage_nbytes(d) && count == tt_storage_nbytes(s),
                "tpu: partial storage copies are not supported");
    TT_CHECK_STATUS(tt_storage_copy(d, s), "copying a tpu storage");
  }
  bool initialized() override { return device_count_nothrow() > 0; }
  void emptyCache(c10::MempoolId_t) override {}
  void recordStream(const c10::DataPtr&, c10::Stream) override {}
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    c10::CachingDeviceAllocator::DeviceStats stats;
    tt_runtime_stats_t s;
    tt_runtime_get_stats(runtime(), device, &s);
    using c10::CachingDeviceAllocator::StatType;
    auto& a = stats.allocated_bytes[static_cast<size_t>(StatType::AGGREGATE)];
    a.current = s.bytes_in_use;
    a.peak = s.peak_bytes;
    stats.reserved_bytes[static_cast<size_t>(StatType::AGGREGATE)] = a;
    stats.active_bytes[static_cast<size_t>(StatType::AGGREGATE)] = a;
    auto& c = stats.allocation[static_cast<size_t>(StatType::AGGREGATE)];
    c.current = s.num_buffers;
    return stats;
  }
  void resetAccumulatedStats(c10::DeviceIndex) override {}
  void resetPeakStats(c10::DeviceIndex device) override { tt_runtime_reset_peak(runtime(), device); }
};

TpuAllocator g_allocator;
}  // namespace

c10::DeviceAllocator* allocator() { return &g_allocator; }
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

// ---- device guard -------------------------------------------------------------
namespace {
struct TpuGuardImpl final : c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;
  c10::DeviceType type() const override { return kType; }
  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old(kType, current_device());
    if (d.index() != old.index()) set_current_device(d.index());
    return old;
  }
  c10::Device getDevice() const override { return {kType, current_device()}; }
  void setDevice(c10::Device d) const override { set_current_device(d.index()); }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    try {
      set_current_device(d.index());
    } catch (...) {
    }
  }
  c10::Stream getStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  // Work on a device runs in order on one timeline (PJRT orders it): every
  // stream is that timeline, so a "new" stream (FSDP2's all-gather and
  // reduce-scatter streams) is the default one and waits between streams hold.
  c10::Stream getNewStream(c10::Device d, int) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    return c10::Stream(c10::Stream::DEFAULT, s.device());
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return (c10::DeviceIndex)device_count_nothrow();
  }
  // Events: work on one device runs in order, so an event is a point on the
  // device's timeline; synchronizing it synchronizes the device.
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream& s) const override {
    TT_CHECK_STATUS(tt_runtime_synchronize(runtime(), s.device_index()), "synchronize");
  }
  void synchronizeEvent(void*) const override {
    TT_CHECK_STATUS(tt_runtime_synchronize(runtime(), -1), "synchronize");
  }
  void synchronizeDevice(const c10::DeviceIndex d) const override {
    TT_CHECK_STATUS(tt_runtime_synchronize(runtime(), d), "synchronize");
  }
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const override {}
};
C10_REGISTER_GUARD_IMPL(PrivateUse1, TpuGuardImpl);
}  // namespace

// ---- generator ----------------------------------------------------------------
namespace {
struct TpuGenerator final : c10::GeneratorImpl {
  explicit TpuGenerator(c10::DeviceIndex d)
      : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, d),
                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}
  void set_current_seed(uint64_t seed) override {
    seed_ = seed;
    offset_ = 0;
  }
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override {
    uint64_t s = c10::detail::getNonDeterministicRandom(false);
    set_current_seed(s);
    return s;
  }
  void set_state(const c10::TensorImpl& state) override {
    TORCH_CHECK(state.numel() == 16 && state.dtype() == at::kByte,
                "tpu generator state must be a uint8 tensor of 16 bytes");
    const auto* p = static_cast<const uint64_t*>(state.data());
    seed_ = p[0];
    offset_ = p[1];
  }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    auto t = at::empty({16}, at::TensorOptions().dtype(at::kByte));
    auto* p = static_cast<uint64_t*>(t.data_ptr());
    p[0] = seed_;
    p[1] = offset_;
    return t.getIntrusivePtr();
  }
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

 private:
  TpuGenerator* clone_impl() const override {
    auto* g = new TpuGenerator(device().index());
    g->seed_ = seed_;
    g->offset_ = offset_;
    return g;
  }
  uint64_t seed_ = c10::default_rng_seed_val;
  uint64_t offset_ = 0;
};

std::mutex g_gen_mu;
std::array<at::Generator, 64> g_default_gens;
}  // namespace

at::Generator default_generator(c10::DeviceIndex d) {
  if (d < 0) d = current_device();
  TORCH_CHECK(d < 64, "tpu device index out of range");
  std::lock_guard<std::mutex> lk(g_gen_mu);
  if (!g_default_gens[d].defined()) {
    g_default_gens[d] = at::make_generator<TpuGenerator>(d);
  }
  return g_default_gens[d];
}

at::Generator new_generator(c10::DeviceIndex d) {
  return at::make_generator<TpuGenerator>(d < 0 ? current_device() : d);
}

void next_rng(const std::optional<at::Generator>& gen, c10::DeviceIndex d, uint64_t n, uint64_t out[2]) {
  at::Generator g = (gen.has_value() && gen->defined()) ? *gen : default_generator(d);
  std::lock_guard<std::mutex> lk(g.mutex());
  out[0] = g.current_seed();
  uint64_t off = g.get_offset();
  out[1] = off;
  g.set_offset(off + (n ? n : 1));
}

// ---- hooks ---------------------------------------------------------------------
namespace {
struct TpuHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count_nothrow() > 0; }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex d) const override {
    static thread_local at::Generator tmp;
    tmp = default_generator(d);
    return tmp;
  }
  at::Generator getNewGenerator(c10::DeviceIndex d) const override { return new_generator(d); }
  at::Device getDeviceFromPtr(void* data) const override {
    return {c10::DeviceType::PrivateUse1,
            (c10::DeviceIndex)tt_storage_device(static_cast<tt_storage_t*>(data))};
  }
  bool isPinnedPtr(const void*) const override { return false; }
  at::Allocator* getPinnedMemoryAllocator() const override { return at::getCPUAllocator(); }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return (c10::DeviceIndex)device_count_nothrow(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_current_device(d); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = current_device();
    set_current_device(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    auto* s = static_cast<tt_storage_t*>(const_cast<void*>(storage.data()));
    TT_CHECK_STATUS(tt_storage_resize(s, newsize), "resizing a tpu storage");
    storage.unsafeGetStorageImpl()->set_nbytes(newsize);
  }
};
TpuHooks g_hooks;
}  // namespace

void register_hooks() { at::RegisterPrivateUse1HooksInterface(&g_hooks); }

}  // namespace torch_tpu
