// torch_tpu bridge: the thin C++ layer between PyTorch's PrivateUse1 hooks
// and the C core. No op semantics live here: kernels marshal ATen calls into
// tt_runtime_call, the lowering tables decide what an op computes, and every
// fact about an op is read from the core (core/lower/tt_lower.h: an entry's
// flags, tt_lower_facts_of for ops without a lowering). Outside aten/, no
// file holds a rule about a particular ATen op (a list or a test of op names)
// besides the required device ops required_ops.cpp implements (allocation,
// storage, views, copies: marshalling); the rules that follow the CPU where
// that takes knowledge of one op (meta layouts and checks, host composites,
// the SDPA choice) and the one registration of other ATen kernels are in
// aten/ (aten/aten.h).
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>

#include <string>
#include <vector>

extern "C" {
#include "../core/runtime/tt_runtime.h"
}

namespace torch_tpu {

// Converts a core status into a c10 error (one place). Consumes the status.
[[noreturn]] void throw_status(tt_status_t st, const char* context);
#define TT_CHECK_STATUS(expr, ctx)                    \
  do {                                                \
    tt_status_t tt__s = (expr);                       \
    if (tt__s) ::torch_tpu::throw_status(tt__s, ctx); \
  } while (0)

// The process-wide runtime, created on first use (plugin discovery over the
// search path set from Python). Throws the discovery error if none loads.
tt_runtime_t* runtime();
// Never throws: 0 when no plugin could be loaded.
int device_count_nothrow();
std::string init_error();  // "" if the runtime loaded
void set_search_path(const std::vector<std::string>& dirs);
// Whether the runtime has started (never starts it).
bool runtime_started();
// The platform of the runtime ("cpu", "gpu", "tpu"), or, before it starts, of
// the plugin discovery would load ("" when the user named the file, or none
// is found). Never starts the runtime.
std::string plugin_platform();
// When the runtime starts (it has not yet): try a PJRT client across the
// num_nodes processes of a job (this one node_id; local_device >= 0: the one
// local device it uses), which find each other through kv (kv.ctx must live
// as long as the process). Else, or if that fails, one client of this
// process, as always. The first call wins.
void set_distributed(const tt_pjrt_kv_t& kv, int node_id, int num_nodes, int local_device);
// Starts the runtime if needed; "" when its client spans the processes, else why not.
std::string distributed_why();

// Current device of this thread.
c10::DeviceIndex current_device();
void set_current_device(c10::DeviceIndex d);

// dtype conversion; throws for dtypes the device cannot hold.
tt_dtype_t to_tt_dtype(at::ScalarType t);
bool has_tt_dtype(at::ScalarType t);

// The core view of a tpu tensor (borrowed storage).
tt_view_t to_view(const at::Tensor& t);

c10::DeviceAllocator* allocator();
// A new tpu tensor as empty_strided makes it, without the dispatcher.
at::Tensor new_output(c10::IntArrayRef size, c10::IntArrayRef stride, at::ScalarType dtype,
                      c10::DeviceIndex device);
at::Generator default_generator(c10::DeviceIndex d);
at::Generator new_generator(c10::DeviceIndex d);
// Takes (seed, offset) for `n` random values from a tpu generator.
void next_rng(const std::optional<at::Generator>& gen, c10::DeviceIndex d, uint64_t n,
              uint64_t out[2]);

void set_cpu_fallback(bool on);
bool cpu_fallback_enabled();
// Meta-result cache lookups of the boxed fallback so far (hits, misses).
void meta_cache_counts(int64_t* hits, int64_t* misses);

}  // namespace torch_tpu
