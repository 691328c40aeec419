// torch.compile's captured programs (DESIGN §8): the marshalling between a
// compiled graph's tensors and the core's captures (csrc/core/graph/
// capture.c, csrc/core/runtime/replay.c). Python (torch_tpu/_compile.py) records a graph once through
// the normal kernels in Fused mode between _capture_begin and _capture_end;
// _replay then runs its program on the next call's tensors, checking that
// they are laid out as the captured ones (else Python records again).
//
// Host values: CPU 0-dim tensors whose values the graph's device ops take
// (an optimizer's step counts and bias corrections, computed on the CPU by
// the graph's host part, which Python runs before each replay). They are
// passed to each replay in the order given at capture.
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>

#include <algorithm>
#include <cstring>

#include "bridge.h"

namespace torch_tpu {
namespace {

const c10::DispatchKeySet kTpuKeys(c10::DispatchKey::PrivateUse1);

// What a replay's input must match: its layout when captured.
struct InMeta {
  bool is_int;  // an int (a dynamic size): its value must match
  int64_t value;
  bool host;  // a CPU tensor: only its dtype and sizes must match
  at::ScalarType dtype;
  c10::DeviceIndex device;
  std::vector<int64_t> sizes, strides;
  int64_t offset;
  size_t nbytes;
  int alias;  // the first input with the same storage (itself if none before)
  bool conj, neg;
};

struct OutMeta {
  int slot;  // as tt_capture_output_slot; TT_CAPTURE_NONE: `host` or `constant`
  int host;  // >= 0: this host value of the replay; -1: `constant`
  at::ScalarType dtype;
  std::vector<int64_t> sizes, strides;
  int64_t offset;
  py::object constant;
};

// A captured graph (owned core capture + the layouts around it).
struct Capture {
  tt_capture_t* cap = nullptr;
  std::vector<InMeta> ins;
  std::vector<OutMeta> outs;
  size_t nhost = 0;
  bool rng = false;
  c10::DeviceIndex rng_device = 0;
  uint64_t rng_span = 0;  // generator offsets one run takes
  ~Capture() { tt_capture_destroy(cap); }
};

tt_storage_t* storage_of(const at::Tensor& t) {
  return static_cast<tt_storage_t*>(const_cast<void*>(t.storage().data()));
}

uint64_t host_id(const at::Tensor& t) { return (uint64_t)(uintptr_t)t.unsafeGetTensorImpl(); }

// The tensors of `args`: tpu tensors, and CPU tensors (host values); an int
// (a dynamic size, with `ints`) is an undefined tensor, its value in
// (*ints)[i]. nullopt when an arg is none of these.
std::optional<std::vector<at::Tensor>> arg_tensors(const py::sequence& args,
                                                   std::vector<int64_t>* ints = nullptr) {
  std::vector<at::Tensor> ts;
  ts.reserve(args.size());
  if (ints) ints->assign(args.size(), 0);
  for (auto a : args) {
    if (ints && py::isinstance<py::int_>(a) && !py::isinstance<py::bool_>(a)) {
      (*ints)[ts.size()] = a.cast<int64_t>();
      ts.emplace_back();
      continue;
    }
    if (!THPVariable_Check(a.ptr())) return std::nullopt;
    const at::Tensor& t = THPVariable_Unpack(a.ptr());
    if (!t.has_storage() || !(t.is_privateuseone() || t.is_cpu())) return std::nullopt;
    ts.push_back(t);
  }
  return ts;
}

// The device storage of each tensor (NULL for CPU ones).
std::vector<tt_storage_t*> device_storages(const std::vector<at::Tensor>& ts) {
  std::vector<tt_storage_t*> st(ts.size());
  for (size_t i = 0; i < ts.size(); i++)
    st[i] = ts[i].defined() && ts[i].is_privateuseone() ? storage_of(ts[i]) : nullptr;
  return st;
}

// Per input: the first input sharing its storage (sorted by storage, then
// position: each group's first entry is its first input).
std::vector<int> aliases(const std::vector<at::Tensor>& ts) {
  std::vector<int> al(ts.size());
  std::vector<std::pair<const void*, int>> by;
  by.reserve(ts.size());
  for (size_t i = 0; i < ts.size(); i++) {
    al[i] = (int)i;
    if (ts[i].defined()) by.emplace_back(ts[i].storage().data(), (int)i);
  }
  std::sort(by.begin(), by.end());
  for (size_t k = 1; k < by.size(); k++)
    if (by[k].first == by[k - 1].first) al[by[k].second] = al[by[k - 1].second];
  return al;
}

InMeta in_meta(const at::Tensor& t, int64_t value, int alias) {
  if (!t.defined()) return {true, value, false, at::kLong, 0, {}, {}, 0, 0, alias, false, false};
  return {false, 0, t.is_cpu(), t.scalar_type(), t.device().index(), t.sizes().vec(), t.strides().vec(),
          t.storage_offset(), t.storage().nbytes(), alias, t.is_conj(), t.is_neg()};
}

bool matches(const InMeta& m, const at::Tensor& t, int64_t value, int alias) {
  if (m.is_int || !t.defined()) return m.is_int && !t.defined() && m.value == value;
  if (m.host) return t.is_cpu() && m.dtype == t.scalar_type() && t.sizes().equals(m.sizes);
  return t.is_privateuseone() && m.dtype == t.scalar_type() && m.device == t.device().index() &&
         m.alias == alias && m.offset == t.storage_offset() && m.nbytes == t.storage().nbytes() &&
         t.sizes().equals(m.sizes) && t.strides().equals(m.strides) && m.conj == t.is_conj() &&
         m.neg == t.is_neg();
}

// _capture_begin(device) -> (previous thread mode, rng seed, rng offset)
py::tuple capture_begin(int device) {
  {
    py::gil_scoped_release nogil;
    TT_CHECK_STATUS(tt_capture_begin(runtime()), "starting a graph capture");
  }
  int old = tt_runtime_thread_mode();
  tt_runtime_set_thread_mode(TT_MODE_FUSED);
  at::Generator g = default_generator((c10::DeviceIndex)device);
  std::lock_guard<std::mutex> lk(g.mutex());
  return py::make_tuple(old, g.current_seed(), g.get_offset());
}

void capture_abort(int old_mode) {
  tt_runtime_set_thread_mode(old_mode);
  tt_capture_abort(runtime());
}

// The output metadata of one graph output; `why` is set when it cannot be
// replayed. Its storage (NULL when none) goes to out_st.
OutMeta out_meta(py::handle o, const std::vector<at::Tensor>& hosts, const char** why,
                 std::vector<tt_storage_t*>* out_st) {
  OutMeta m{TT_CAPTURE_NONE, -1, at::kFloat, {}, {}, 0, py::none()};
  out_st->push_back(nullptr);
  if (!THPVariable_Check(o.ptr())) {
    if (o.is_none() || py::isinstance<py::int_>(o) || py::isinstance<py::float_>(o))
      m.constant = py::reinterpret_borrow<py::object>(o);
    else if (!*why)
      *why = "an output of the graph is not a tensor, a number or None";
    return m;
  }
  const at::Tensor& t = THPVariable_Unpack(o.ptr());
  if (t.is_cpu()) {
    for (size_t k = 0; k < hosts.size() && m.host < 0; k++)
      if (hosts[k].unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) m.host = (int)k;
    if (m.host < 0 && !*why) *why = "a CPU output of the graph is not one of its host values";
    return m;
  }
  if (!t.is_privateuseone() || !t.has_storage()) {
    if (!*why) *why = "an output of the graph is not a tpu tensor";
    return m;
  }
  if ((t.is_conj() || t.is_neg()) && !*why) *why = "an output of the graph has a lazy conj/neg bit";
  m.dtype = t.scalar_type();
  m.sizes = t.sizes().vec();
  m.strides = t.strides().vec();
  m.offset = t.storage_offset();
  out_st->back() = storage_of(t);
  return m;
}

// _capture_end(args, outputs, host_values, device, seed, offset, old_mode)
// -> Capture, or the reason (str) why the graph's calls cannot be replayed.
// host_values: the CPU tensors a replay will pass again (see above).
py::object capture_end(const py::sequence& args, const py::sequence& outputs, const py::sequence& host_values,
                       int device, uint64_t seed, uint64_t offset, int old_mode) {
  tt_runtime_set_thread_mode(old_mode);
  std::vector<int64_t> ints;
  auto ins = arg_tensors(args, &ints);
  auto hosts = arg_tensors(host_values);
  const char* why = !ins ? "an input of the graph is not a tensor or an int" : !hosts ? "a host value is not a tensor" : nullptr;
  std::vector<tt_storage_t*> in_st = ins ? device_storages(*ins) : std::vector<tt_storage_t*>();
  std::vector<at::Tensor> host_ts = hosts ? *hosts : std::vector<at::Tensor>();
  std::vector<uint64_t> host_ids;
  for (auto& h : host_ts) {
    if (!h.is_cpu() && !why) why = "a host value is not a CPU tensor";
    host_ids.push_back(host_id(h));
  }
  auto c = std::make_unique<Capture>();
  std::vector<tt_storage_t*> out_st;
  for (auto o : outputs) c->outs.push_back(out_meta(o, host_ts, &why, &out_st));
  at::Generator g = default_generator((c10::DeviceIndex)device);
  uint64_t seed_now, off_now;
  {
    std::lock_guard<std::mutex> lk(g.mutex());
    seed_now = g.current_seed();
    off_now = g.get_offset();
  }
  if (seed_now != seed && !why) why = "the generator was reseeded while the graph ran";
  tt_capture_t* cap = nullptr;
  const char* core_why = nullptr;
  tt_status_t st;
  {
    py::gil_scoped_release nogil;
    st = tt_capture_end(runtime(), in_st.data(), (int)in_st.size(), out_st.data(), (int)out_st.size(),
                        host_ids.data(), (int)host_ids.size(), seed, offset, off_now, &cap, &core_why);
  }
  TT_CHECK_STATUS(st, "running a compiled graph");
  c->cap = cap;
  if (!why) why = core_why;
  if (why) return py::str(why);
  auto al = aliases(*ins);
  for (size_t i = 0; i < ins->size(); i++) c->ins.push_back(in_meta((*ins)[i], ints[i], al[i]));
  for (size_t i = 0; i < c->outs.size(); i++)
    if (out_st[i]) c->outs[i].slot = tt_capture_output_slot(cap, (int)i);
  c->nhost = host_ts.size();
  c->rng = tt_capture_uses_rng(cap);
  c->rng_device = (c10::DeviceIndex)device;
  c->rng_span = off_now - offset;
  return py::cast(c.release(), py::return_value_policy::take_ownership);
}

// Fresh storages for the capture's new ones, on its device.
std::vector<c10::Storage> new_storages(const Capture& c) {
  int nnew = tt_capture_new_count(c.cap);
  std::vector<c10::Storage> news;
  news.reserve(nnew);
  int dev = tt_capture_device(c.cap);
  c10::DeviceIndex was = current_device();
  if (dev >= 0 && dev != was) set_current_device((c10::DeviceIndex)dev);
  for (int j = 0; j < nnew; j++) {
    size_t nb = tt_capture_new_nbytes(c.cap, j);
    news.emplace_back(c10::Storage::use_byte_size_t(), nb, allocator()->allocate(nb), allocator(), true);
  }
  if (current_device() != was) set_current_device(was);
  return news;
}

// Whether args (tensors, ints) are laid out as the captured inputs.
bool layout_matches(const Capture& c, const std::optional<std::vector<at::Tensor>>& ts,
                    const std::vector<int64_t>& ints) {
  if (!ts || ts->size() != c.ins.size()) return false;
  auto al = aliases(*ts);
  for (size_t i = 0; i < ts->size(); i++)
    if (!matches(c.ins[i], (*ts)[i], ints[i], al[i])) return false;
  return true;
}

// _replay_ready(capture, args): a replay on args would run (before a host
// part with side effects runs for it).
bool replay_ready(Capture& c, const py::sequence& args) {
  std::vector<int64_t> ints;
  auto ts = arg_tensors(args, &ints);
  return layout_matches(c, ts, ints) && tt_capture_ready(runtime(), c.cap);
}

// _replay(capture, args, host_values, checked=False) -> list of outputs, or
// None when the args are not laid out as the captured ones (or the program
// is gone): record again. checked: _replay_ready just accepted these args
// (only host values were computed since, which touch no device tensor).
py::object replay(Capture& c, const py::sequence& args, const py::sequence& host_values, bool checked) {
  if (host_values.size() != c.nhost) return py::none();
  std::vector<int64_t> ints;
  auto ts = arg_tensors(args, &ints);
  auto hosts = arg_tensors(host_values);
  if (!hosts || !ts || ts->size() != c.ins.size() || (!checked && !layout_matches(c, ts, ints))) return py::none();
  std::vector<tt_storage_t*> in_st = device_storages(*ts);
  std::vector<const void*> host_vals(hosts->size());
  for (size_t k = 0; k < hosts->size(); k++) {
    const at::Tensor& h = (*hosts)[k];
    if (!h.is_cpu() || h.numel() < 1) return py::none();
    host_vals[k] = h.const_data_ptr();  // 0-dim: its one element
  }
  std::vector<c10::Storage> news = new_storages(c);
  std::vector<tt_storage_t*> new_st;
  for (auto& s : news) new_st.push_back(static_cast<tt_storage_t*>(s.mutable_data()));
  bool stale = false;
  tt_status_t st;
  uint64_t seed = 0, off = 0;
  std::optional<at::Generator> gen;
  std::unique_lock<std::mutex> lk;
  if (c.rng) {  // the generator's offsets this run takes, as eager takes them
    gen = default_generator(c.rng_device);
    lk = std::unique_lock<std::mutex>(gen->mutex());
    seed = gen->current_seed();
    off = gen->get_offset();
  }
  {
    py::gil_scoped_release nogil;
    st = tt_capture_replay(runtime(), c.cap, in_st.data(), (int)in_st.size(), new_st.data(), host_vals.data(),
                           (int)host_vals.size(), seed, off, &stale);
  }
  if (c.rng && !stale && !st) gen->set_offset(off + c.rng_span);
  if (lk.owns_lock()) lk.unlock();
  TT_CHECK_STATUS(st, "running a compiled graph");
  if (stale) return py::none();
  py::list out;
  for (const OutMeta& m : c.outs) {
    if (m.slot == TT_CAPTURE_NONE) {
      out.append(m.host >= 0 ? py::reinterpret_borrow<py::object>(host_values[m.host]) : m.constant);
      continue;
    }
    c10::Storage s = m.slot >= 0 ? (*ts)[m.slot].storage() : news[-m.slot - 1];
    auto t = at::detail::make_tensor<c10::TensorImpl>(std::move(s), kTpuKeys,
                                                      caffe2::TypeMeta::fromScalarType(m.dtype));
    t.unsafeGetTensorImpl()->set_sizes_and_strides(m.sizes, m.strides, m.offset);
    out.append(py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(t))));
  }
  return out;
}

// The host part of an optimizer graph is typically its CPU step counts:
// `_foreach_add(steps, 1)` before the replay, the results copied back into
// the steps after it. Through the dispatcher that is ~5 us per count (29
// for a small GPT); these two do it per 0-dim CPU float/double tensor in
// place of at::add / copy_, with CPU's arithmetic (one rounding of a + b in
// the tensor's dtype, b cast to it first, as the CPU kernel's Scalar). Any
// other tensor goes through ATen.
std::vector<at::Tensor> host_add_scalars(const std::vector<at::Tensor>& ts, const py::object& number) {
  TORCH_CHECK(py::isinstance<py::int_>(number) || py::isinstance<py::float_>(number),
              "_host_add_scalars: the number must be an int or a float");
  at::Scalar b = py::isinstance<py::int_>(number) ? at::Scalar(number.cast<int64_t>())
                                                  : at::Scalar(number.cast<double>());
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const at::Tensor& t : ts) {
    bool plain = t.is_cpu() && t.dim() == 0 && !t.requires_grad() && !t.is_conj() && !t.is_neg();
    if (plain && t.scalar_type() == at::kFloat) {
      at::Tensor r = at::empty({}, t.options());
      *r.mutable_data_ptr<float>() = *t.const_data_ptr<float>() + b.to<float>();
      out.push_back(std::move(r));
    } else if (plain && t.scalar_type() == at::kDouble) {
      at::Tensor r = at::empty({}, t.options());
      *r.mutable_data_ptr<double>() = *t.const_data_ptr<double>() + b.to<double>();
      out.push_back(std::move(r));
    } else {
      out.push_back(at::add(t, b));
    }
  }
  return out;
}

// dst.copy_(src) for each pair; 0-dim CPU tensors of one dtype by their bytes
// (the version counter bumped as copy_ does).
void host_copy_scalars(std::vector<at::Tensor> dsts, const std::vector<at::Tensor>& srcs) {
  TORCH_CHECK(dsts.size() == srcs.size(), "_host_copy_scalars: ", dsts.size(), " destinations, ", srcs.size(),
              " sources");
  for (size_t i = 0; i < dsts.size(); i++) {
    at::Tensor& d = dsts[i];
    const at::Tensor& s = srcs[i];
    if (d.is_cpu() && s.is_cpu() && d.dim() == 0 && s.dim() == 0 && d.scalar_type() == s.scalar_type() &&
        !d.requires_grad() && !d.is_conj() && !s.is_conj() && !d.is_neg() && !s.is_neg() &&
        !d.is_inference()) {
      std::memcpy(d.mutable_data_ptr(), s.const_data_ptr(), d.element_size());
      d.unsafeGetTensorImpl()->bump_version();
    } else {
      d.copy_(s);
    }
  }
}

}  // namespace

void register_compile(py::module_& m) {
  py::class_<Capture>(m, "_Capture")
      .def_property_readonly("num_inputs", [](const Capture& c) { return c.ins.size(); })
      .def_property_readonly("num_host_values", [](const Capture& c) { return c.nhost; })
      .def_property_readonly("uses_rng", [](const Capture& c) { return c.rng; });
  m.def("_capture_begin", &capture_begin);
  m.def("_capture_abort", &capture_abort);
  m.def("_capture_end", &capture_end);
  m.def("_replay", &replay, py::arg("capture"), py::arg("args"), py::arg("host_values"), py::arg("checked") = false);
  m.def("_replay_ready", &replay_ready);
  m.def("_host_add_scalars", &host_add_scalars);
  m.def("_host_copy_scalars", &host_copy_scalars);
}

}  // namespace torch_tpu
