// torch_tpu._C: the Python-facing functions of the bridge.
#include <torch/csrc/Generator.h>
#include <torch/extension.h>

#include <map>

#include "bridge.h"

namespace torch_tpu {
void register_hooks();
void register_lowered_kernels();
void register_compile(py::module_& m);
void register_dist(py::module_& m);
void register_fake_meta(py::module_& m);
}

namespace {
using namespace torch_tpu;

py::dict info() {
  py::dict d;
  tt_runtime_t* rt = runtime();
  const tt_pjrt_info_t* i = tt_runtime_info(rt);
  d["plugin_path"] = std::string(i->plugin_path);
  d["api_version"] = std::to_string(i->api_major) + "." + std::to_string(i->api_minor);
  d["platform_name"] = std::string(i->platform_name);
  d["platform_version"] = std::string(i->platform_version);
  d["device_kind"] = std::string(i->device_kind);
  d["num_devices"] = i->num_devices;
  d["num_global_devices"] = i->num_global_devices;  // > num_devices: a client across processes
  d["process_index"] = i->process_index;
  d["stablehlo_current_version"] = std::string(i->stablehlo_current);
  d["stablehlo_minimum_version"] = std::string(i->stablehlo_minimum);
  return d;
}

py::dict stats(int device) {
  tt_runtime_stats_t s;
  tt_runtime_get_stats(runtime(), device, &s);
  py::dict d;
  d["bytes_in_use"] = s.bytes_in_use;
  d["peak_bytes"] = s.peak_bytes;
  d["num_storages"] = s.num_storages;
  d["num_buffers"] = s.num_buffers;
  d["cache_hits"] = s.cache_hits;
  d["cache_misses"] = s.cache_misses;
  d["cache_entries"] = s.cache_entries;
  d["cache_evictions"] = s.cache_evictions;
  d["cache_max_entries"] = s.cache_max_entries;
  d["cache_maps_evictions"] = s.cache_maps_evictions;
  d["maps_budget"] = s.maps_budget;
  d["compile_seconds"] = s.compile_seconds;
  d["execute_seconds"] = s.execute_seconds;
  d["compiles"] = s.compiles;
  d["disk_enabled"] = s.disk_enabled;
  d["disk_hits"] = s.disk_hits;
  d["disk_misses"] = s.disk_misses;
  d["disk_writes"] = s.disk_writes;
  d["disk_rejected"] = s.disk_rejected;
  d["disk_prefetched"] = s.disk_prefetched;
  d["disk_errors"] = s.disk_errors;
  d["disk_evictions"] = s.disk_evictions;
  d["dumped"] = s.dumped;
  const char* dir = tt_runtime_cache_dir(runtime());
  d["disk_dir"] = dir ? py::object(py::str(dir)) : py::object(py::none());
  d["executions"] = s.executions;
  d["bytes_reserved"] = s.bytes_reserved;
  d["fused_flushes"] = s.fused_flushes;
  d["fused_ops"] = s.fused_ops;
  d["fused_replays"] = s.fused_replays;
  d["packed_hits"] = s.packed_hits;
  d["packed_uploads"] = s.packed_uploads;
  d["pending_ops"] = s.pending_ops;
  int64_t mh = 0, mm = 0;
  meta_cache_counts(&mh, &mm);
  d["meta_hits"] = mh;
  d["meta_misses"] = mm;
  return d;
}

py::list supported_ops() {
  py::list l;
  for (int i = 0; i < tt_lower_count(); i++) {
    const tt_lower_entry_t* e = tt_lower_at(i);
    if (e->fn) l.append(std::string(e->name));
  }
  return l;
}

// Every fact beside the lowering tables (core/lower/tt_lower.h), by the op it
// names ("aten::nonzero", "aten::sum.dim_IntList": every overload of a base
// name, or one overload; "X.default" is the overload-less X): (flags, bucket
// class name or None), the facts naming one op merged.
py::dict lower_facts() {
  std::map<std::string, std::pair<uint32_t, const char*>> by_op;
  for (int i = 0; i < tt_lower_fact_count(); i++) {
    const tt_lower_fact_t* f = tt_lower_fact_at(i);
    auto& [flags, bucket] = by_op[f->op];
    flags |= f->flags;
    if (const char* b = tt_lower_bucket_name(f->bucket)) bucket = b;
  }
  py::dict d;
  for (const auto& [op, fb] : by_op)
    d[py::str(op)] = py::make_tuple(fb.first, fb.second ? py::object(py::str(fb.second)) : py::object(py::none()));
  return d;
}

py::list env_vars() {
  py::list l;
  for (int i = 0; i < TT_ENV_COUNT; i++) {
    const tt_env_info_t* e = tt_env_info((tt_env_var_t)i);
    l.append(py::make_tuple(e->name, e->default_value ? e->default_value : "", e->help));
  }
  return l;
}
// At exit (atexit, before the interpreter finalizes): torch 2.13's backward
// stashes a Python object (the contextvars context) in the thread-local state
// each graph task captures. When autograd's device thread drops the last
// reference to a finished graph task while the interpreter finalizes, the
// decref's GIL acquisition ends the thread inside a destructor and the process
// aborts ("terminate called without an active exception"). A device thread
// works through its tasks in order: one more backward on each device, run from
// C++ (no Python objects in its state, tensors without Python objects) with
// the GIL released, makes the thread drop the earlier tasks first, while
// taking the GIL is still possible.
void drain_autograd_threads(int ndev) {
  py::gil_scoped_release nogil;
  at::AutoGradMode grad(true);
  for (int d = 0; d < ndev; d++) {
    auto opts = at::TensorOptions().device(c10::Device(c10::DeviceType::PrivateUse1, (c10::DeviceIndex)d));
    // views of never-written storages: no program runs, nothing is compiled
    at::Tensor x = at::empty({1}, opts).requires_grad_(true);
    at::Tensor y = x.view({1, 1});
    torch::autograd::grad({y}, {x}, {at::empty({1, 1}, opts)});
  }
}
}  // namespace

PYBIND11_MODULE(_C, m) {
  register_hooks();
  register_lowered_kernels();
  register_compile(m);
  register_dist(m);
  register_fake_meta(m);
  m.def("_set_search_path", &set_search_path);
  m.def("_device_count", &device_count_nothrow);
  m.def("_init_error", &init_error);
  m.def("_runtime_started", &runtime_started);  // never starts it
  m.def("_plugin_platform", &plugin_platform);  // never starts it
  m.def("_current_device", [] { return (int)current_device(); });
  m.def("_set_device", [](int d) { set_current_device((c10::DeviceIndex)d); });
  m.def("_synchronize", [](int d) {
    py::gil_scoped_release nogil;
    TT_CHECK_STATUS(tt_runtime_synchronize(runtime(), d), "synchronize");
  });
  m.def("_info", &info);
  m.def("_drain_autograd_threads", &drain_autograd_threads);
  m.def("_stats", &stats);
  m.def("_mem_info", [](int d) {
    int64_t free_b = 0, total = 0;
    tt_runtime_memory_info(runtime(), d, &free_b, &total);
    return py::make_tuple(free_b, total);
  });
  m.def("_reset_peak", [](int d) { tt_runtime_reset_peak(runtime(), d); });
  m.def("_get_mode", [] { return (int)tt_runtime_mode(); });
  m.def("_thread_mode", [] { return tt_runtime_thread_mode(); });
  m.def("_set_thread_mode", [](int mode) { tt_runtime_set_thread_mode(mode); });
  m.def("_process_mode", [] { return tt_runtime_process_mode(); });
  m.def("_set_process_mode", [](int mode) { tt_runtime_set_process_mode(mode); });
  m.def("_flush", [] {
    py::gil_scoped_release nogil;
    TT_CHECK_STATUS(tt_runtime_flush(runtime()), "flush");
  });
  m.def("_clear_cache", [](bool disk) {
    py::gil_scoped_release nogil;
    TT_CHECK_STATUS(tt_runtime_clear_cache(runtime(), disk), "clear_cache");
  });
  m.def("_set_cpu_fallback", &set_cpu_fallback);
  m.def("_cpu_fallback_enabled", &cpu_fallback_enabled);
  m.def("_default_generator", [](int d) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(default_generator((c10::DeviceIndex)d)));
  });
  m.def("_supported_ops", &supported_ops);
  m.def("_lower_facts", &lower_facts);
  m.def("_bench_execute_floor", [](int iters) {
    double us = 0;
    TT_CHECK_STATUS(tt_runtime_bench_execute(runtime(), iters, &us), "bench");
    return us;
  });
  m.def("_env_vars", &env_vars);
}
