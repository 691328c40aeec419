// Fake tensors of tpu tensors (torch.compile's tracing) take the bridge's own
// output-metadata rule for the ops whose Python meta kernel states another
// backend's limits (aten/aten.h: meta_rules_for_fake), so that a graph traces
// as its eager run computes. torch_tpu/_fake.py registers _fake_meta with
// PyTorch's fake-tensor implementations for those ops.
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/extension.h>

#include "aten/aten.h"

namespace torch_tpu {
namespace {

py::list fake_meta_ops() {
  py::list l;
  for (const auto& n : meta_rules_for_fake()) l.append(n);
  return l;
}

// The outputs (sizes, strides, dtype) of op `name`.`overload` for these
// arguments (fake tensors: only their metadata is read), or None when the
// bridge has no rule for the call; raises CPU's error for bad input.
py::object fake_meta(const std::string& name, const std::string& overload, py::tuple args, py::kwargs kwargs) {
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str());
  torch::jit::Stack stack = torch::jit::createStackForSchema(op.schema(), args, kwargs, std::nullopt);
  MetaResult r;
  if (!meta_rule_before(op.schema(), stack, r)) return py::none();
  py::list outs;
  for (const auto& ret : r.rets) {
    if (ret.first || ret.second.size() != 1 || !ret.second[0].defined) return py::none();
    const TMeta& tm = ret.second[0];
    auto dt = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(torch::getTHPDtype(tm.dtype)));
    outs.append(py::make_tuple(tm.sizes, tm.strides, dt));
  }
  return outs;
}

}  // namespace

void register_fake_meta(py::module_& m) {
  m.def("_fake_meta_ops", &fake_meta_ops);
  m.def("_fake_meta", &fake_meta);
}

}  // namespace torch_tpu
