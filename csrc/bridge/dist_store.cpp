// The c10d store as the PJRT client's key-value store (dist.h).
#include <cstdlib>
#include <cstring>

#include "dist.h"

namespace torch_tpu {
namespace dist {

// The c10d store as the PJRT client's key-value store (tt_pjrt_kv_t). It
// lives as long as the process: the plugin calls it while the client lives.
struct StoreKV {
  c10::intrusive_ptr<c10d::Store> store;

  static tt_status_t fail(const std::exception& e, const char* what, const char* key, size_t klen) {
    return tt_status_make(TT_UNAVAILABLE, "c10d store %s of %.*s: %s", what, (int)klen, key, e.what());
  }
  static void give(const std::vector<uint8_t>& v, char** value, size_t* len) {
    *value = static_cast<char*>(std::malloc(v.size() + 1));
    if (!v.empty()) std::memcpy(*value, v.data(), v.size());
    *len = v.size();
  }
  static tt_status_t get(void* ctx, const char* key, size_t klen, int timeout_ms, char** value, size_t* len) {
    auto* self = static_cast<StoreKV*>(ctx);
    std::string k(key, klen);
    try {
      self->store->wait({k}, std::chrono::milliseconds(timeout_ms));
      give(self->store->get(k), value, len);
      return nullptr;
    } catch (const std::exception& e) {
      return fail(e, "get", key, klen);
    }
  }
  static tt_status_t try_get(void* ctx, const char* key, size_t klen, char** value, size_t* len) {
    auto* self = static_cast<StoreKV*>(ctx);
    std::string k(key, klen);
    try {
      if (!self->store->check({k})) return tt_status_make(TT_NOT_FOUND, "no key %s", k.c_str());
      give(self->store->get(k), value, len);
      return nullptr;
    } catch (const std::exception& e) {
      return fail(e, "try_get", key, klen);
    }
  }
  static tt_status_t put(void* ctx, const char* key, size_t klen, const char* value, size_t vlen) {
    auto* self = static_cast<StoreKV*>(ctx);
    try {
      self->store->set(std::string(key, klen), std::vector<uint8_t>(value, value + vlen));
      return nullptr;
    } catch (const std::exception& e) {
      return fail(e, "set", key, klen);
    }
  }
};

void set_with_store(c10::intrusive_ptr<c10d::Store> store, int rank, int size, int local_device) {
  static StoreKV* kv = nullptr;  // the first group's store, kept for the process
  if (kv) return;                // (only the first group's counts: see set_distributed)
  kv = new StoreKV{std::move(store)};
  set_distributed(tt_pjrt_kv_t{kv, &StoreKV::get, &StoreKV::try_get, &StoreKV::put}, rank, size, local_device);
}

}  // namespace dist
}  // namespace torch_tpu
