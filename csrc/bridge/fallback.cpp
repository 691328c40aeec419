// The boxed fallback: every ATen op without its own PrivateUse1 kernel lands
// here. Output metadata comes from PyTorch's meta kernels; the op is looked up
// in the core's lowering tables and run through tt_runtime_call. What it does
// around an op comes from the op's facts there (run on the host, extra
// outputs, ...); the per-op rules it calls are in aten/. Ops without a
// lowering raise (or run on the CPU when the user asked for that).
#include <ATen/native/CPUFallback.h>
#include <c10/util/SmallVector.h>
#include <c10/util/accumulate.h>
#include <c10/util/strides.h>
#include <torch/library.h>

#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "aten/aten.h"
#include "bridge.h"

namespace torch_tpu {
namespace {

std::atomic<bool> g_cpu_fallback{false};
std::once_flag g_fallback_env_once;

struct OpInfo {
  std::string name;                 // "aten::add.Tensor"
  const tt_lower_entry_t* entry;    // NULL: no lowering
  bool host_op;                     // data-dependent output size: runs on the host (TT_LF_HOST_OP)
  bool bn_stats;                    // native_batch_norm: updates running stats in place
  bool host_unless_output_size;     // data-dependent size unless output_size is given
  bool mask_indices;                // has `Tensor?[] indices`: boolean masks are expanded
  bool lu_of_transpose;             // det / slogdet: CPU's LU is of A^T when A is contiguous,
                                    // else of A; the lowering factors its input transposed, so a
                                    // non-contiguous real A is passed as A^T (TT_LF_LU_OF_TRANSPOSE)
  bool scalar_class_key;            // the meta key holds Scalars' classes, not values (see below)
  std::vector<ScalarConversion> scalars;  // the Scalars CPU's kernel converts (overflow checks)
  uint32_t out_dtype_rule;          // TT_LF_OUT_SAME_DTYPE / TT_LF_OUT_RESULT_DTYPE, or 0
  bool out_keeps_shape;             // an out= of the result's numel is not resized (TT_LF_OUT_KEEPS_SHAPE)
  bool out_resize_contiguous;       // a resized out= is contiguous (TT_LF_OUT_RESIZE_CONTIGUOUS)
  bool out_resize_contiguous_complex;  // ... where the input is complex (_COMPLEX)
  bool out_restride_if_empty;       // ... where the out is not empty (TT_LF_OUT_RESTRIDE_IF_EMPTY)
  bool random_checks;               // CPU's checks of the op's random parameters, every call (aten/)
};

const OpInfo& op_info(const c10::OperatorHandle& op) {
  static std::mutex mu;
  static std::unordered_map<const void*, OpInfo> cache;
  const void* key = &op.schema();
  std::lock_guard<std::mutex> lk(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const auto& on = op.schema().operator_name();
  std::string name = on.name + (on.overload_name.empty() ? "" : "." + on.overload_name);
  auto ii = op.schema().argumentIndexWithName("indices");
  bool mask_indices = ii && op.schema().arguments()[*ii].type()->str() == "Tensor?[]";
  const tt_lower_entry_t* entry = tt_lower_find(name.c_str());
  // the op's facts (core/lower/tt_lower.h), also of ops without a lowering (TT_LF_HOST_OP)
  uint32_t facts = entry ? entry->flags : tt_lower_facts_of(name.c_str()).flags;
  OpInfo info{name, entry, (facts & TT_LF_HOST_OP) != 0, (facts & TT_LF_STATS_OUTPUTS) != 0,
              (facts & TT_LF_HOST_SIZE) != 0, mask_indices, (facts & TT_LF_LU_OF_TRANSPOSE) != 0,
              scalar_class_key_op(op, on.name),
              scalar_conversions(op.schema(), entry ? tt_lower_scalar_rules(entry) : nullptr),
              facts & (TT_LF_OUT_SAME_DTYPE | TT_LF_OUT_RESULT_DTYPE), (facts & TT_LF_OUT_KEEPS_SHAPE) != 0,
              (facts & TT_LF_OUT_RESIZE_CONTIGUOUS) != 0, (facts & TT_LF_OUT_RESIZE_CONTIGUOUS_COMPLEX) != 0,
              (facts & TT_LF_OUT_RESTRIDE_IF_EMPTY) != 0, cpu_random_op(on.name)};
  return cache.emplace(key, std::move(info)).first->second;
}


// ---- meta ------------------------------------------------------------------------

at::Tensor to_meta(const at::Tensor& t) {
  if (!t.defined()) return t;
  if (!is_tpu(t) && !(t.is_cpu() && t.dim() == 0))
    TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two "
                       "devices, tpu and ", t.device(), "!");
  if (!is_tpu(t)) return t;  // 0-dim host values stay on the host (meta kernels accept them)
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
}

c10::IValue to_meta(const c10::IValue& v) {
  if (v.isTensor()) return to_meta(v.toTensor());
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(to_meta(t));
    return out;
  }
  if (v.isList()) {
    auto l = v.toList();
    if (l.size() && (l.get(0).isTensor() || l.get(0).isNone())) {
      c10::List<std::optional<at::Tensor>> out;
      for (const c10::IValue& e : l) {
        if (e.isTensor()) out.push_back(to_meta(e.toTensor()));
        else out.push_back(std::nullopt);
      }
      return out;
    }
  }
  if (v.isGenerator()) return c10::IValue();
  if (v.isDevice()) return c10::Device(c10::kMeta);  // factory functions build meta tensors
  return v;
}

// `Tensor scalars` of the _foreach_*.Tensor overloads: a 1-D host tensor of
// per-element Scalars, by definition on the CPU.
bool is_host_scalars(const c10::Argument& a, const c10::IValue& v) {
  return v.isTensor() && v.toTensor().defined() && v.toTensor().dim() == 1 && v.toTensor().is_cpu() &&
         a.name() == "scalars";
}

// ---- meta results, cached per signature ---------------------------------------------
// Meta kernels give PyTorch's exact output shapes, strides and dtypes (and its
// error messages), but some are Python reference implementations costing
// hundreds of microseconds. So the result is cached under a key that holds
// everything a meta kernel reads:
//  - the op, and per argument: tensor metadata (device kind, dtype, sizes,
//    strides), non-tensor argument values, Scalar values (not just their type:
//    meta kernels check them, e.g. renorm's maxnorm >= 0, vector_norm's ord on
//    an empty input, histc's min < max, and a key by type alone would skip
//    those errors after a first valid call; pointwise and foreach ops key
//    their class instead, see scalar_class_key_op), and the values of 0-dim
//    host tensors (to_meta passes them to the meta kernel as they are).
//  - global state that changes output metadata: the default dtype
//    (torch.set_default_dtype), read by type promotion of integer inputs and
//    Python scalars (int / int, sqrt(int), uint8 + 5.5) and by factory ops
//    without a dtype (arange(0.0, 3.0), linspace, full); the default complex
//    dtype follows from it (float64 -> complex128), so it needs no entry.
// Global state left out, and why:
//  - grad mode / inference mode: the fallback runs below autograd; no meta
//    kernel reads them (the only Python reader, prims' backwards_not_supported,
//    wraps autograd and changes no metadata).
//  - autocast: its kernels run above the backend (AutocastPrivateUse1), so the
//    fallback sees the already-cast inputs; meta tensors have no autocast key.
//  - deterministic algorithms: no meta kernel's metadata depends on them. A few
//    Python meta kernels take a meta tensor for a CUDA one and raise CUDA's
//    "does not have a deterministic implementation" alert (median with indices,
//    histc); CPU does not, nor do our lowerings: see run_meta_quiet.
//  - the default device: explicit in every call that reaches a backend, and
//    to_meta replaces devices by meta.
// The cache is bounded (Scalar values vary, e.g. a learning rate per step):
// when full it is dropped whole; entries are shared so a caller keeps its own.

const size_t kMetaCacheMax = 1 << 14;

std::vector<TMeta> tmetas(const c10::IValue& v) {
  std::vector<TMeta> out;
  std::vector<at::Tensor> ts;
  if (v.isTensor()) ts.push_back(v.toTensor());
  else if (v.isTensorList())
    for (const at::Tensor& t : v.toTensorList()) ts.push_back(t);
  for (const auto& t : ts) {
    if (t.defined()) out.push_back({t.sizes().vec(), t.strides().vec(), t.scalar_type(), true});
    else out.push_back({{}, {}, at::kFloat, false});
  }
  return out;
}

// flat_outs (TT_LF_OUT_KEEPS_SHAPE): out= tensors reach the meta kernel
// empty, so that it gives the range factory's result shape without warning
// that it resizes them: the caller keeps an out= of that many elements as it
// is, as CPU's kernel does, and resizes (with CPU's warning) another.
MetaResult run_meta_with(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, bool flat_outs) {
  const auto& schema = op.schema();
  torch::jit::Stack meta;
  meta.reserve(args.size());
  for (size_t i = 0; i < args.size(); i++) {
    if (is_host_scalars(schema.arguments()[i], args[i])) meta.push_back(args[i]);
    else if (flat_outs && schema.arguments()[i].is_out() && args[i].isTensor() && args[i].toTensor().defined())
      meta.push_back(at::empty({0}, args[i].toTensor().options().device(at::kMeta)));
    else if (host_value_as_meta(schema, i, args[i]))
      meta.push_back(at::empty({}, args[i].toTensor().options().device(at::kMeta)));
    else meta.push_back(to_meta(args[i]));
  }
  std::vector<c10::IValue> meta_args(meta.begin(), meta.end());
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &meta);
  MetaResult r;
  r.mut.resize(args.size());
  for (size_t i = 0; i < args.size(); i++) {
    const auto* ai = schema.arguments()[i].alias_info();
    if (ai && ai->isWrite()) r.mut[i] = tmetas(meta_args[i]);
  }
  for (const auto& v : meta) {
    r.rets.emplace_back(v.isTensorList(), tmetas(v));
    // e.g. the max_q / max_k of _scaled_dot_product_fused_attention_overrideable
    bool value = v.isInt() || v.isSymInt() || v.isDouble() || v.isBool();
    r.values.push_back(value ? v : c10::IValue());
  }
  return r;
}

MetaResult run_meta(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args) {
  return run_meta_with(op, args, false);
}

// The functional overload of an out= overload: the same name, the non-out
// arguments of the same types, as many returns as outs
// (add.out -> add.Tensor, pow.Tensor_Scalar_out -> pow.Tensor_Scalar,
// _linalg_eigh.eigenvalues -> _linalg_eigh).
std::optional<c10::OperatorHandle> functional_overload(const c10::FunctionSchema& schema, size_t nargs, size_t nout) {
  const std::string& ov = schema.overload_name();
  std::vector<std::string> names{""};
  if (ov.size() > 4 && ov.compare(ov.size() - 4, 4, "_out") == 0) names.insert(names.begin(), ov.substr(0, ov.size() - 4));
  if (ov.rfind("out_", 0) == 0) names.insert(names.begin(), "Tensor_" + ov.substr(4));  // div.out_mode
  for (const char* n : {"Tensor", "Scalar", "self", "int", "dim", "default"}) names.emplace_back(n);
  for (const auto& n : names) {
    auto fop = c10::Dispatcher::singleton().findSchema({schema.name(), n});
    if (!fop) continue;
    const auto& fs = fop->schema();
    if (fs.arguments().size() != nargs || fs.returns().size() != nout) continue;
    bool same = true;
    for (size_t i = 0, j = 0; i < schema.arguments().size() && same; i++) {
      if (schema.arguments()[i].is_out()) continue;
      same = *schema.arguments()[i].type() == *fs.arguments()[j++].type();
    }
    if (same) return fop;
  }
  return std::nullopt;
}

// An out= overload without a meta kernel (e.g. _native_batch_norm_legit.out):
// the meta result of its functional overload, whose returns go to the out=
// arguments in order. False when there is no such overload.
bool functional_meta(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, MetaResult& r) {
  const auto& schema = op.schema();
  std::vector<c10::IValue> fargs;
  size_t nout = 0;
  for (size_t i = 0; i < args.size(); i++) {
    if (schema.arguments()[i].is_out()) nout++;
    else fargs.push_back(args[i]);
  }
  if (nout == 0 || schema.overload_name().empty()) return false;
  auto fop = functional_overload(schema, fargs.size(), nout);
  if (!fop) return false;
  MetaResult fr;
  try {
    fr = run_meta(*fop, fargs);
  } catch (const c10::NotImplementedError&) {
    return false;
  }
  r.mut.assign(args.size(), {});
  r.rets.clear();
  size_t j = 0, k = 0;
  for (size_t i = 0; i < args.size(); i++) {
    if (schema.arguments()[i].is_out()) {
      r.mut[i] = fr.rets[k].second;
      r.rets.push_back(fr.rets[k++]);
    } else {
      r.mut[i] = fr.mut[j++];
    }
  }
  return true;
}

// An out= that must be resized takes the strides the functional form's result
// has, as CPU's structured and TensorIterator kernels resize it (a column-major
// LAPACK result, the inputs' permutation of an elementwise op), where PyTorch's
// Python meta kernels resize it contiguous. Ops whose CPU out= kernel resizes
// contiguous whatever the functional form gives carry TT_LF_OUT_RESIZE_CONTIGUOUS
// (contiguous: true; also _COMPLEX with a complex input), those that give only an
// empty out the functional layout TT_LF_OUT_RESTRIDE_IF_EMPTY (if_empty).
void restride_resized_outs(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, MetaResult& r,
                           bool contiguous, bool if_empty) {
  const auto& schema = op.schema();
  bool resized = false;
  for (size_t i = 0; i < args.size() && i < r.mut.size(); i++) {
    if (!schema.arguments()[i].is_out() || !args[i].isTensor() || r.mut[i].size() != 1) continue;
    const at::Tensor& t = args[i].toTensor();
    if (!t.defined() || t.sizes() == c10::IntArrayRef(r.mut[i][0].sizes)) continue;
    resized = true;
    if (contiguous || (if_empty && t.numel() != 0)) {
      auto cs = c10::contiguous_strides(r.mut[i][0].sizes);
      r.mut[i][0].strides.assign(cs.begin(), cs.end());
    }
  }
  if (!resized || contiguous) return;  // (if_empty: the non-empty outs are contiguous now)
  std::vector<c10::IValue> fargs;
  for (size_t i = 0; i < args.size(); i++)
    if (!schema.arguments()[i].is_out()) fargs.push_back(args[i]);
  auto fop = functional_overload(schema, fargs.size(), args.size() - fargs.size());
  if (!fop) return;
  MetaResult fr;
  try {
    fr = run_meta(*fop, fargs);
  } catch (const std::exception&) {
    return;  // the functional form refuses what the out= form takes: keep the out= meta's strides
  }
  match_cpu_metadata(fop->schema(), fargs, fr);
  for (size_t i = 0, k = 0; i < args.size() && i < r.mut.size(); i++) {
    if (!schema.arguments()[i].is_out()) continue;
    const auto& f = k < fr.rets.size() ? fr.rets[k++].second : std::vector<TMeta>{};
    if (!args[i].isTensor() || r.mut[i].size() != 1 || f.size() != 1) continue;
    const at::Tensor& t = args[i].toTensor();
    TMeta& m = r.mut[i][0];
    if (t.defined() && t.sizes() != c10::IntArrayRef(m.sizes) && f[0].sizes == m.sizes && !(if_empty && t.numel()))
      m.strides = f[0].strides;
  }
}

// Some Python meta kernels take a meta tensor for a CUDA one (device_hint) and,
// under torch.use_deterministic_algorithms(True), raise CUDA's alert ("median
// CUDA with indices output does not have a deterministic implementation",
// histc): CPU raises none for these ops and the lowerings are deterministic.
// Such a call is rerun with the alerts off. The flag is process-wide, so this
// rare path holds a lock and restores it at once.
MetaResult run_meta_no_cuda_alerts(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args,
                                    bool flat_outs) {
  try {
    return run_meta_with(op, args, flat_outs);
  } catch (const std::exception& e) {
    auto& ctx = at::globalContext();
    if (!ctx.deterministicAlgorithms() ||
        std::string(e.what()).find("does not have a deterministic implementation") == std::string::npos)
      throw;
  }
  static std::mutex mu;
  std::lock_guard<std::mutex> lk(mu);
  auto& ctx = at::globalContext();
  bool warn_only = ctx.deterministicAlgorithmsWarnOnly();
  ctx.setDeterministicAlgorithms(false, false);
  struct Restore {
    bool w;
    ~Restore() { at::globalContext().setDeterministicAlgorithms(true, w); }
  } restore{warn_only};
  return run_meta_with(op, args, flat_outs);
}

std::atomic<int64_t> g_meta_hits{0}, g_meta_misses{0};

std::shared_ptr<const MetaResult> meta_result(const c10::OperatorHandle& op, const OpInfo& info,
                                              c10::ArrayRef<c10::IValue> args) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const MetaResult>> cache;
  thread_local std::string key;
  key.clear();
  key += info.name;
  key += '\0';
  meta_key(key, op.schema(), args, info.scalar_class_key);
  {
    std::lock_guard<std::mutex> lk(mu);
    auto it = cache.find(key);
    if (it != cache.end()) {
      g_meta_hits.fetch_add(1, std::memory_order_relaxed);
      return it->second;
    }
  }
  g_meta_misses.fetch_add(1, std::memory_order_relaxed);
  MetaResult r;
  cpu_input_checks(op.schema(), args);  // shapes only: a passing signature stays valid
  cpu_foreach_checks(op, args, run_meta);  // per element: shapes, dtypes, Scalars' classes
  if (info.out_dtype_rule) cpu_out_dtype_checks(op, args, info.out_dtype_rule == TT_LF_OUT_SAME_DTYPE, run_meta);
  if (!meta_rule_before(op.schema(), args, r)) {
    try {
      r = run_meta_no_cuda_alerts(op, args, info.out_keeps_shape);  // throws PyTorch's errors for bad input
    } catch (const c10::NotImplementedError&) {
      // No meta kernel: the bridge's rule for the op, else (e.g.
      // _fused_adam_.tensor_lr) an op that returns nothing only rewrites its
      // mutated arguments, whose metadata stays.
      if (!meta_rule_missing(op.schema(), args, r) && !functional_meta(op, args, r)) {
        if (!op.schema().returns().empty()) throw;
        r.mut.resize(args.size());
        for (size_t i = 0; i < args.size(); i++) {
          const auto* ai = op.schema().arguments()[i].alias_info();
          if (ai && ai->isWrite()) r.mut[i] = tmetas(args[i]);
        }
      }
    } catch (const std::exception& e) {
      cpu_cast_error(op.schema(), args, e.what());  // CPU's message for an unsafe out= dtype
      throw;
    }
  }
  bool complex_in = info.out_resize_contiguous_complex && !args.empty() && args[0].isTensor() &&
                    args[0].toTensor().defined() && args[0].toTensor().is_complex();
  if (!info.out_keeps_shape) restride_resized_outs(op, args, r, info.out_resize_contiguous || complex_in,
                                                   info.out_restride_if_empty);
  cpu_inplace_checks(op, args, [](const c10::OperatorHandle& fop, c10::ArrayRef<c10::IValue> fargs) {
    MetaResult fr = run_meta(fop, fargs);
    match_cpu_metadata(fop.schema(), fargs, fr);
    return fr;
  });
  match_cpu_metadata(op.schema(), args, r);
  auto shared = std::make_shared<const MetaResult>(std::move(r));
  std::lock_guard<std::mutex> lk(mu);
  if (cache.size() >= kMetaCacheMax) cache.clear();
  cache.emplace(key, shared);
  return shared;
}

// ---- marshalling ------------------------------------------------------------------

struct Marshal {
  // Pointers into these must stay valid: each holds at most one entry per
  // argument, and capacity is reserved up front (on first use).
  std::vector<std::vector<tt_call_arg_t>> lists;
  std::vector<std::vector<int64_t>> ints;
  std::vector<std::string> strs;
  size_t nargs = 0;
  c10::DeviceIndex device = -1;

  template <class V>
  typename V::reference add(V& v) {
    if (v.capacity() == 0) v.reserve(nargs * 2 + 1);
    TORCH_INTERNAL_ASSERT(v.size() < v.capacity());
    return v.emplace_back();
  }

  void note_device(const at::Tensor& t) {
    if (is_tpu(t) && device < 0) device = t.device().index();
  }

  tt_call_arg_t tensor(const at::Tensor& t) {
    tt_call_arg_t a;
    std::memset(&a, 0, sizeof(a));
    if (!t.defined()) {
      a.kind = TT_ARG_NONE;
      return a;
    }
    a.kind = TT_ARG_TENSOR;
    if (is_tpu(t)) {
      note_device(t);
      a.view = to_view(t);
      a.tier = t.dim() == 0 ? TT_TIER_ZERO_DIM : TT_TIER_DIM;
      return a;
    }
    TORCH_CHECK(t.dim() == 0, "Expected all tensors to be on the same device, but found tpu and ",
                t.device());
    a.on_host = true;
    a.tier = t.unsafeGetTensorImpl()->is_wrapped_number() ? TT_TIER_WRAPPED : TT_TIER_ZERO_DIM;
    if (a.tier != TT_TIER_WRAPPED) a.host_id = (uint64_t)(uintptr_t)t.unsafeGetTensorImpl();
    // complex32 is computed in complex64 (tt_dtype_compute): so is its value
    auto c = (t.scalar_type() == at::kComplexHalf ? t.to(at::kComplexFloat) : t).contiguous();
    a.sdtype = to_tt_dtype(c.scalar_type());
    std::memcpy(a.scalar.bytes, c.const_data_ptr(), c.element_size());
    return a;
  }

  tt_call_arg_t scalar(const at::Scalar& s) {
    tt_call_arg_t a;
    std::memset(&a, 0, sizeof(a));
    a.kind = TT_ARG_SCALAR;
    if (s.isBoolean()) {
      a.sdtype = TT_BOOL;
      a.scalar.bytes[0] = s.toBool() ? 1 : 0;
    } else if (s.isIntegral(false)) {
      a.sdtype = TT_I64;
      a.scalar.i = s.toLong();
    } else if (s.isComplex()) {  // complex128: real then imaginary part
      c10::complex<double> z = s.toComplexDouble();
      double parts[2] = {z.real(), z.imag()};
      a.sdtype = TT_C128;
      std::memcpy(a.scalar.bytes, parts, sizeof parts);
    } else {
      a.sdtype = TT_F64;
      a.scalar.f = s.toDouble();
    }
    return a;
  }

  tt_call_arg_t arg(const c10::Argument& schema_arg, const c10::IValue& v, bool is_out) {
    tt_call_arg_t a;
    std::memset(&a, 0, sizeof(a));
    if (is_out) {
      a.kind = TT_ARG_OUT;
      if (v.isTensor()) note_device(v.toTensor());
      return a;
    }
    if (v.isNone()) {
      a.kind = TT_ARG_NONE;
      return a;
    }
    c10::TypeKind k = base_kind(schema_arg.type());
    if (is_host_scalars(schema_arg, v)) {
      auto& vec = add(lists);
      auto t = v.toTensor();
      for (int64_t i = 0; i < t.numel(); i++) vec.push_back(scalar(t[i].item()));
      a.kind = TT_ARG_SCALARS;
      a.list = vec.data();
      a.n = (int)vec.size();
      return a;
    }
    if (v.isTensor()) return tensor(v.toTensor());
    if (v.isScalar() && k == c10::TypeKind::NumberType) return scalar(v.toScalar());
    if (v.isTensorList() || (v.isList() && list_elem_kind(schema_arg.type()) == c10::TypeKind::TensorType)) {
      auto& vec = add(lists);
      const auto list = v.toList();
      vec.reserve(list.size());  // (a _foreach op's lists hold every parameter)
      for (const c10::IValue& e : list) vec.push_back(e.isTensor() ? tensor(e.toTensor()) : tensor(at::Tensor()));
      a.kind = TT_ARG_TENSORS;
      a.list = vec.data();
      a.n = (int)vec.size();
      return a;
    }
    if (v.isList() && (list_elem_kind(schema_arg.type()) == c10::TypeKind::NumberType ||
                       list_elem_kind(schema_arg.type()) == c10::TypeKind::FloatType)) {
      auto& vec = add(lists);
      const auto list = v.toList();
      vec.reserve(list.size());
      for (const c10::IValue& e : list) vec.push_back(scalar(e.toScalar()));
      a.kind = TT_ARG_SCALARS;
      a.list = vec.data();
      a.n = (int)vec.size();
      return a;
    }
    switch (k) {
      case c10::TypeKind::ScalarTypeType:
        a.kind = TT_ARG_INT;
        a.i = has_tt_dtype((at::ScalarType)v.toInt()) ? tt_dtype_compute(to_tt_dtype((at::ScalarType)v.toInt()))
                                                      : -1;
        return a;
      case c10::TypeKind::LayoutType:
      case c10::TypeKind::MemoryFormatType:
      case c10::TypeKind::DeviceObjType:
      case c10::TypeKind::GeneratorType:
        a.kind = TT_ARG_NONE;
        return a;
      default:
        break;
    }
    if (v.isBool()) {
      a.kind = TT_ARG_BOOL;
      a.i = v.toBool();
    } else if (v.isInt() || v.isSymInt()) {
      a.kind = TT_ARG_INT;
      a.i = v.isInt() ? v.toInt() : v.toSymInt().expect_int();
    } else if (v.isDouble()) {
      a.kind = TT_ARG_FLOAT;
      a.f = v.toDouble();
    } else if (v.isString()) {
      a.kind = TT_ARG_STR;
      a.str = (add(strs) = v.toStringRef()).c_str();
    } else if (v.isIntList() || v.isBoolList() || (v.isList() && list_elem_kind(schema_arg.type()) == c10::TypeKind::SymIntType)) {
      auto& vec = add(ints);
      for (const c10::IValue& e : v.toList())
        vec.push_back(e.isBool() ? e.toBool() : e.isInt() ? e.toInt() : e.toSymInt().expect_int());
      a.kind = TT_ARG_INTS;
      a.ints = vec.data();
      a.n = (int)vec.size();
    } else if (v.isScalar()) {
      return scalar(v.toScalar());
    } else {
      TORCH_CHECK_NOT_IMPLEMENTED(false, "tpu: argument '", schema_arg.name(), "' of type ",
                                  schema_arg.type()->str(), " is not supported yet");
    }
    return a;
  }
};

void flatten_tensors(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) out.push_back(v.toTensor());
  else if (v.isTensorList())
    for (const at::Tensor& t : v.toTensorList()) out.push_back(t);
}

[[noreturn]] void unsupported(const OpInfo& info) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, info.name,
                              " is not supported on the tpu device yet. To run it on the CPU "
                              "instead, call torch_tpu.cpu_fallback(True) or set "
                              "TORCH_TPU_CPU_FALLBACK=1.");
}

void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack, const OpInfo& info,
                bool warn) {
  if (warn) {
    static std::mutex mu;
    static std::unordered_set<std::string> warned;
    std::lock_guard<std::mutex> lk(mu);
    if (warned.insert(info.name).second)
      TORCH_WARN(info.name, " is not supported on the tpu device yet; running it on the CPU "
                            "(copies its tensors to the host and back).");
  }
  // cpu_fallback copies the tensors to the host and writes the results back into the out=
  // arguments: a host one would be written through the wrong device (CUDA refuses it too)
  const auto& sargs = op.schema().arguments();
  const size_t base = stack->size() - sargs.size();
  for (size_t i = 0; i < sargs.size(); i++) {
    if (!sargs[i].is_out()) continue;
    std::vector<at::Tensor> ts;
    flatten_tensors((*stack)[base + i], ts);
    for (const at::Tensor& t : ts)
      TORCH_CHECK(!t.defined() || is_tpu(t), "expected self and out to be on the same device, but got out on ",
                  t.device(), " and self on tpu");
  }
  at::native::cpu_fallback(op, stack);
}

void tpu_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const OpInfo& info = op_info(op);
  if (info.host_op) return run_on_cpu(op, stack, info, false);
  if (info.host_unless_output_size) {
    // repeat_interleave(Tensor repeats): the output size depends on the data
    // unless the caller gives it
    const auto& sargs = op.schema().arguments();
    for (size_t i = 0; i < sargs.size(); i++)
      if (sargs[i].name() == "output_size" && (*stack)[stack->size() - sargs.size() + i].isNone())
        return run_on_cpu(op, stack, info, false);
  }
  if (!info.entry || !info.entry->fn) {
    if (cpu_fallback_enabled()) return run_on_cpu(op, stack, info, true);
    unsupported(info);
  }
  const auto& schema = op.schema();
  if (info.mask_indices) {
    const std::string dtype_error =
        index_put_dtype_error(schema, c10::ArrayRef<c10::IValue>(*stack).slice(stack->size() - schema.arguments().size()));
    expand_mask_indices(schema, stack);  // a CPU mask's positions are found on the host
    move_host_indices(schema, stack);
    if (!dtype_error.empty()) {  // CPU checks the values' shape first
      cpu_input_checks(schema, c10::ArrayRef<c10::IValue>(*stack).slice(stack->size() - schema.arguments().size()));
      TORCH_CHECK(false, dtype_error);
    }
  }
  if (info.lu_of_transpose) {
    c10::IValue& a = (*stack)[stack->size() - schema.arguments().size()];
    if (a.isTensor() && a.toTensor().dim() >= 2 && !a.toTensor().is_contiguous() && !a.toTensor().is_complex())
      a = a.toTensor().mT();
  }
  const size_t nargs = schema.arguments().size();
  // The arguments stay on the stack until the returns are pushed.
  c10::ArrayRef<c10::IValue> args(&*(stack->end() - nargs), nargs);

  // 1. output metadata (meta kernels, cached per signature)
  if (info.random_checks) cpu_random_checks(schema, args);  // (they warn on every call)
  const std::shared_ptr<const MetaResult> mrp = meta_result(op, info, args);
  const MetaResult& mr = *mrp;
  scalar_overflow_checks(schema, args, mr, info.scalars);  // values the cached metadata does not cover

  // 2. outputs: the mutated arguments, else new tensors like the meta results
  Marshal mm;
  mm.nargs = nargs;
  for (const auto& a : args) {
    if (a.isTensor()) mm.note_device(a.toTensor());
    else if (a.isTensorList())
      for (const at::Tensor& t : a.toTensorList()) mm.note_device(t);
  }
  if (mm.device < 0) mm.device = current_device();
  // (small vectors: most ops have a few arguments and one output)
  c10::SmallVector<at::Tensor, 4> outs;
  c10::SmallVector<bool, 16> is_out(nargs, false);
  bool mutates = false;
  for (size_t i = 0; i < nargs; i++) {
    const auto* ai = schema.arguments()[i].alias_info();
    if (ai && ai->isWrite()) mutates = true;
  }
  // Returns that alias no argument are new tensors; they come first among the
  // outputs (also for ops that mutate arguments too, e.g. the running stats of
  // _native_batch_norm_legit), the mutated arguments follow.
  c10::SmallVector<c10::IValue, 2> new_returns;
  for (size_t r = 0; r < schema.returns().size() && r < mr.rets.size(); r++) {
    if (schema.returns()[r].alias_info()) {
      new_returns.emplace_back();
      continue;
    }
    const auto& [is_list, tms] = mr.rets[r];
    size_t first = outs.size();
    for (const auto& tm : tms)
      outs.push_back(tm.defined ? new_output(tm.sizes, tm.strides, tm.dtype, mm.device) : at::Tensor());
    c10::ArrayRef<at::Tensor> ts(outs.data() + first, outs.size() - first);
    if (is_list) new_returns.emplace_back(c10::List<at::Tensor>(ts));
    else if (ts.size() == 1) new_returns.emplace_back(ts[0]);
    else if (r < mr.values.size()) new_returns.emplace_back(mr.values[r]);
    else new_returns.emplace_back();
  }
  for (size_t i = 0; i < nargs; i++) {
    const auto* ai = schema.arguments()[i].alias_info();
    if (!ai || !ai->isWrite()) continue;
    is_out[i] = schema.arguments()[i].is_out();
    std::vector<at::Tensor> real;
    flatten_tensors(args[i], real);
    const auto& m = mr.mut[i];
    for (size_t k = 0; k < real.size(); k++) {
      bool keep = info.out_keeps_shape && is_out[i] && k < m.size() &&
                  real[k].numel() == c10::multiply_integers(m[k].sizes);  // the lowering reshapes
      if (k < m.size() && real[k].sizes() != c10::IntArrayRef(m[k].sizes) && !keep) {
        if (info.out_keeps_shape) cpu_out_resize_warning(schema, real[k], c10::multiply_integers(m[k].sizes));
        real[k].resize_(m[k].sizes);
        if (real[k].strides() != c10::IntArrayRef(m[k].strides)) real[k].as_strided_(m[k].sizes, m[k].strides);
      }
      outs.push_back(real[k]);
    }
  }
  // native_batch_norm updates running_mean / running_var (args 3, 4) when
  // training (arg 5) although its schema does not say so: they are passed as
  // two extra outputs after the others.
  if (info.bn_stats && args[5].isBool() && args[5].toBool() && args[3].isTensor() && args[4].isTensor() &&
      is_tpu(args[3].toTensor()) && is_tpu(args[4].toTensor())) {
    outs.push_back(args[3].toTensor());
    outs.push_back(args[4].toTensor());
  }

  // 3. the call
  c10::SmallVector<tt_call_arg_t, 8> cargs;
  cargs.reserve(nargs);
  for (size_t i = 0; i < nargs; i++) cargs.push_back(mm.arg(schema.arguments()[i], args[i], is_out[i]));
  c10::SmallVector<tt_view_t, 2> views;
  c10::SmallVector<tt_dtype_t, 2> dtypes;
  uint64_t numel = 0;
  for (const auto& o : outs) {
    if (!o.defined()) {  // not requested: computed as a 0-d value and dropped
      tt_view_t v;
      std::memset(&v, 0, sizeof(v));
      v.dtype = TT_F32;
      views.push_back(v);
      dtypes.push_back(v.dtype);
      continue;
    }
    TORCH_CHECK(is_tpu(o), info.name, ": output is not a tpu tensor");
    views.push_back(to_view(o));
    dtypes.push_back(views.back().dtype);
    numel += (uint64_t)o.numel();
  }
  tt_call_t call;
  std::memset(&call, 0, sizeof(call));
  call.op = info.entry;
  call.args = cargs.data();
  call.nargs = (int)cargs.size();
  call.outs = views.data();
  call.out_dtypes = dtypes.data();
  call.nout = (int)views.size();
  call.device = mm.device;
  if (info.entry->flags & TT_LF_RNG) {
    std::optional<at::Generator> gen;
    for (const auto& a : args)
      if (a.isGenerator()) gen = a.toGenerator();
    next_rng(gen, mm.device, numel, call.rng);
  }
  TT_CHECK_STATUS(tt_runtime_call(runtime(), &call), info.name.c_str());

  // 4. returns
  if (!mutates) {
    torch::jit::drop(*stack, nargs);
    for (auto& r : new_returns) stack->push_back(std::move(r));
    return;
  }
  c10::SmallVector<c10::IValue, 2> rets;
  for (size_t r = 0; r < schema.returns().size(); r++) {
    const auto* ra = schema.returns()[r].alias_info();
    if (!ra) {
      rets.push_back(new_returns[r]);
      continue;
    }
    bool found = false;
    for (size_t i = 0; i < nargs && !found; i++) {
      const auto* ai = schema.arguments()[i].alias_info();
      if (ai && ai->beforeSets() == ra->beforeSets()) {
        rets.push_back(args[i]);
        found = true;
      }
    }
    TORCH_CHECK(found, info.name, ": cannot match a return to its argument");
  }
  torch::jit::drop(*stack, nargs);
  for (auto& r : rets) stack->push_back(std::move(r));
}

}  // namespace

// The boxed fallback, for a kernel of our own that hands some calls back to
// the lowering (aten/sparse.cpp: _embedding_bag_backward's dense case).
void run_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  tpu_fallback(op, ks, stack);
}

// Ops with a CompositeExplicitAutograd kernel (native_layer_norm, the
// _foreach_* family, add.Tensor, ...) never reach a backend fallback: the
// composite kernel wins. Where we have a lowering, register the boxed kernel
// for PrivateUse1 explicitly so the op runs as one program. Ops with a
// CompositeImplicitAutograd kernel are left alone: they must decompose for
// autograd to see their parts.
void register_lowered_kernels() {
  static torch::Library* lib =
      new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  auto& d = c10::Dispatcher::singleton();
  for (int i = 0; i < tt_lower_count(); i++) {
    const tt_lower_entry_t* e = tt_lower_at(i);
    if (!e->fn || std::strncmp(e->name, "aten::", 6) != 0) continue;
    std::string full = e->name;
    auto dot = full.find('.');
    std::string base = full.substr(0, dot), overload = dot == std::string::npos ? "" : full.substr(dot + 1);
    auto op = d.findOp(c10::OperatorName(base, overload));
    if (!op) continue;
    if (op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) continue;
    if (op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) continue;
    if (!op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) &&
        !op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional))
      continue;
    lib->impl(full.substr(6).c_str(), torch::CppFunction::makeFromBoxedFunction<&tpu_fallback>());
  }
}

void set_cpu_fallback(bool on) { g_cpu_fallback = on; }

void meta_cache_counts(int64_t* hits, int64_t* misses) {
  *hits = g_meta_hits.load();
  *misses = g_meta_misses.load();
}

bool cpu_fallback_enabled() {
  std::call_once(g_fallback_env_once, [] {
    if (tt_env_flag(TT_ENV_CPU_FALLBACK)) g_cpu_fallback = true;
  });
  return g_cpu_fallback;
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&tpu_fallback>());
}

}  // namespace torch_tpu
