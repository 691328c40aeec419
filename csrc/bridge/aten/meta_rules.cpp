// The bridge's own output-metadata rules, for ops whose meta kernel PyTorch
// lacks (or whose meta kernel describes another backend's outputs). Each rule
// states CPU's result layout, since tpu follows CPU.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <c10/core/DefaultDtype.h>

#include <algorithm>

#include "aten.h"

namespace torch_tpu {
namespace {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size(), 1);
  for (int64_t d = (int64_t)sizes.size() - 2; d >= 0; d--)
    st[d] = st[d + 1] * std::max<int64_t>(1, sizes[d + 1]);
  return st;
}

TMeta contiguous(std::vector<int64_t> sizes, at::ScalarType dt) {
  TMeta tm{std::move(sizes), {}, dt, true};
  tm.strides = contiguous_strides(tm.sizes);
  return tm;
}

// Batches of column-major matrices (LAPACK's layout): the last two dims
// swapped, with `rows_alloc` rows allocated per column (>= the visible rows).
TMeta column_major(std::vector<int64_t> sizes, at::ScalarType dt, int64_t rows_alloc) {
  TMeta tm{std::move(sizes), {}, dt, true};
  size_t n = tm.sizes.size();
  tm.strides.assign(n, 1);
  int64_t cols = tm.sizes[n - 1];
  tm.strides[n - 1] = std::max<int64_t>(1, rows_alloc);
  int64_t step = std::max<int64_t>(1, rows_alloc) * std::max<int64_t>(1, cols);
  for (int64_t d = (int64_t)n - 3; d >= 0; d--) {
    tm.strides[d] = step;
    step *= std::max<int64_t>(1, tm.sizes[d]);
  }
  return tm;
}

TMeta like(const at::Tensor& t) { return contiguous(t.sizes().vec(), t.scalar_type()); }

// The op's results: into its out= arguments when it has them, else returns.
void emit(const c10::FunctionSchema& schema, size_t nargs, std::vector<TMeta> outs, MetaResult& r) {
  r.mut.assign(nargs, {});
  r.rets.clear();
  size_t k = 0;
  for (size_t i = 0; i < nargs && i < schema.arguments().size(); i++)
    if (schema.arguments()[i].is_out() && k < outs.size()) r.mut[i] = {outs[k++]};
  for (auto& tm : outs) r.rets.emplace_back(false, std::vector<TMeta>{std::move(tm)});
}

// The fused RNN cells that LSTM / GRU call on non-CPU devices: PyTorch has
// no meta kernel for the GRU ones and the LSTM one fails without biases.
// Their outputs are plain contiguous tensors in the gates' dtype: states like
// the state argument, gate buffers (B, k*H), bias gradients (k*H) or nothing.
bool rnn_cell_meta(const std::string& name, c10::ArrayRef<c10::IValue> args, MetaResult& r) {
  bool lstm = name == "aten::_thnn_fused_lstm_cell", gru = name == "aten::_thnn_fused_gru_cell";
  bool lstm_b = name == "aten::_thnn_fused_lstm_cell_backward_impl";
  bool gru_b = name == "aten::_thnn_fused_gru_cell_backward";
  if (!lstm && !gru && !lstm_b && !gru_b) return false;
  const at::Tensor st = args[(lstm || gru || lstm_b) ? 2 : 0].toTensor();
  std::vector<int64_t> state(st.sizes().begin(), st.sizes().end());
  at::ScalarType dt = args[lstm_b ? 4 : gru_b ? 1 : 0].toTensor().scalar_type();
  auto gates = [&](int k) {
    std::vector<int64_t> s = state;
    s.back() *= k;
    return s;
  };
  auto add = [&](const std::vector<int64_t>* sizes) {
    TMeta tm{{}, {}, dt, sizes != nullptr};
    if (sizes) tm = contiguous(*sizes, dt);
    r.rets.emplace_back(false, std::vector<TMeta>{tm});
  };
  r.mut.assign(args.size(), {});
  if (lstm) {
    auto g = gates(4);
    add(&state), add(&state), add(&g);
  } else if (gru) {
    auto g = gates(5);
    add(&state), add(&g);
  } else if (lstm_b) {
    auto g = gates(4);
    std::vector<int64_t> b{g.back()};
    add(&g), add(&state), add(args[5].toBool() ? &b : nullptr);
  } else {
    auto g = gates(3);
    std::vector<int64_t> b{g.back()};
    bool hb = args[2].toBool();
    add(&g), add(&g), add(&state), add(hb ? &b : nullptr), add(hb ? &b : nullptr);
  }
  return true;
}

// linalg_lstsq(self, b, rcond, driver) as CPU lays it out: the solution is
// the first n rows of a column-major (max(m, n), k) buffer per batch;
// residuals (batch, k) when m > n and the driver is not gelsy, the rank
// (batch) unless the driver is gels, the singular values (batch, min(m, n))
// for gelsd / gelss; absent outputs are empty.
void lstsq_meta(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r) {
  const at::Tensor& a = args[0].toTensor();
  const at::Tensor& b = args[1].toTensor();
  TORCH_CHECK(a.dim() >= 2, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(),
              "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype ",
              a.scalar_type(), " and other's dtype ", b.scalar_type());
  int64_t dd = a.dim() - b.dim();
  TORCH_CHECK(0 <= dd && dd <= 1,
              "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1");
  bool vec = dd == 1;
  int64_t m = a.size(-2), n = a.size(-1);
  TORCH_CHECK(m == (vec ? b.size(-1) : b.size(-2)), "torch.linalg.lstsq: input.size(-2) should match other.size(",
              vec ? -1 : -2, ")");
  std::string driver = "gelsy";
  if (args.size() > 3 && args[3].isString()) driver = args[3].toStringRef();
  TORCH_CHECK(driver == "gels" || driver == "gelsy" || driver == "gelsd" || driver == "gelss",
              "parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  auto ab = a.sizes().slice(0, a.dim() - 2);
  auto bb = b.sizes().slice(0, b.dim() - (vec ? 1 : 2));
  std::vector<int64_t> batch = at::infer_size(ab, bb);
  int64_t k = vec ? 1 : b.size(-1);
  at::ScalarType dt = a.scalar_type();
  at::ScalarType real = c10::toRealValueType(dt);  // residuals and singular values
  std::vector<TMeta> outs;
  std::vector<int64_t> sol = batch;
  sol.push_back(n);
  if (vec) {  // a column per batch: (batch, n, 1) column-major without its last dim
    sol.push_back(1);
    TMeta tm = column_major(sol, dt, std::max(m, n));
    tm.sizes.pop_back();
    tm.strides.pop_back();
    outs.push_back(tm);
  } else {
    sol.push_back(k);
    outs.push_back(column_major(sol, dt, std::max(m, n)));
  }
  bool svd = driver == "gelsd" || driver == "gelss";
  std::vector<int64_t> res = batch;
  res.push_back(k);
  outs.push_back(m > n && driver != "gelsy" ? contiguous(res, real) : contiguous({0}, real));
  outs.push_back(driver != "gels" ? contiguous(batch, at::kLong) : contiguous({0}, at::kLong));
  std::vector<int64_t> sv = batch;
  sv.push_back(std::min(m, n));
  outs.push_back(svd ? contiguous(sv, real) : contiguous({0}, real));
  emit(schema, args.size(), std::move(outs), r);
}

}  // namespace

// _scaled_mm(self, mat2, scale_a, scale_b, bias?, scale_result?, out_dtype?,
// use_fast_accum) as CPU checks and lays it out (Blas.cpp): float8 matrices,
// float32 scales either both single (tensor-wise) or (M, 1) and (1, N)
// contiguous (row-wise), an (M, N) contiguous result of out_dtype (default:
// self's dtype). PyTorch's meta kernel states cuBLAS's limits (sizes
// divisible by 16, a column-major mat2), which CPU does not have.
bool scaled_mm_meta(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r) {
  if (schema.name() != "aten::_scaled_mm" || args.size() < 8) return false;
  const at::Tensor &a = args[0].toTensor(), &b = args[1].toTensor();
  const at::Tensor &sa = args[2].toTensor(), &sb = args[3].toTensor();
  TORCH_CHECK(a.dim() == 2, "mat_a must be a matrix");
  TORCH_CHECK(b.dim() == 2, "mat_b must be a matrix");
  TORCH_CHECK(a.size(1) == b.size(0), "mat_a and mat_b shapes cannot be multiplied (", a.size(0), "x", a.size(1),
              " and ", b.size(0), "x", b.size(1), ")");
  bool f8 = at::isFloat8Type(a.scalar_type()) && at::isFloat8Type(b.scalar_type());
  bool tensorwise = f8 && sa.scalar_type() == at::kFloat && sb.scalar_type() == at::kFloat && sa.numel() == 1 &&
                    sb.numel() == 1;
  bool rowwise = f8 && sa.scalar_type() == at::kFloat && sb.scalar_type() == at::kFloat && sa.dim() == 2 &&
                 sa.size(0) == a.size(0) && sa.size(1) == 1 && sa.is_contiguous() && sb.dim() == 2 &&
                 sb.size(0) == 1 && sb.size(1) == b.size(1) && sb.t().is_contiguous();
  TORCH_CHECK_VALUE(tensorwise || rowwise, "Invalid scaling configuration.\n"
              "- For TensorWise scaling, a and b should be float8, scales should be float and singletons.\n"
              "- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be (", a.size(0),
              ", 1) and scale_b should be (1, ", b.size(1), "), and both should be contiguous.\nGot a.dtype()=",
              a.scalar_type(), ", scale_a.dtype()=", sa.scalar_type(), ", scale_a.size()=", sa.sizes(),
              ", b.dtype()=", b.scalar_type(), ", scale_b.dtype()=", sb.scalar_type(), ", scale_b.size()=", sb.sizes());
  if (args[5].isTensor()) {
    const at::Tensor& sr = args[5].toTensor();
    TORCH_CHECK(sr.numel() == 1 && sr.scalar_type() == at::kFloat, "scale_result must be a float scalar");
  }
  if (args[4].isTensor())
    TORCH_CHECK(args[4].toTensor().numel() == b.size(1), "Bias must be size ", b.size(1), " but got ",
                args[4].toTensor().numel());
  at::ScalarType dt = args[6].isNone() ? a.scalar_type() : static_cast<at::ScalarType>(args[6].toInt());
  if (args.size() > 8 && args[8].isTensor())
    TORCH_CHECK_VALUE(args[6].isNone() || dt == args[8].toTensor().scalar_type(), "out_dtype must match output matrix type");
  if (args.size() > 8 && args[8].isTensor()) dt = args[8].toTensor().scalar_type();
  emit(schema, args.size(), {contiguous({a.size(0), b.size(1)}, dt)}, r);
  return true;
}

// _scaled_mm_v2(self, mat2, scale_a[], recipe_a[], swizzle_a[], scale_b[],
// recipe_b[], swizzle_b[], bias?, out_dtype?, contraction_dim[],
// use_fast_accum) (F.scaled_mm) as CPU checks it, in its order: an empty
// product needs no scales; CPU takes the tensor-wise (recipe 0) and
// row-wise (recipe 1, scales (M, 1) and (1, N)) recipes, no swizzle.
bool scaled_mm_v2_meta(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r) {
  if (schema.name() != "aten::_scaled_mm_v2" || args.size() < 12) return false;
  const at::Tensor &a = args[0].toTensor(), &b = args[1].toTensor();
  TORCH_CHECK_VALUE(a.dim() == 2, "mat_a must be a matrix");
  TORCH_CHECK_VALUE(b.dim() == 2, "mat_b must be a matrix");
  bool out = args.size() > 12 && args[12].isTensor();
  at::ScalarType dt = args[9].isNone() ? a.scalar_type() : static_cast<at::ScalarType>(args[9].toInt());
  if (out) dt = args[12].toTensor().scalar_type();
  auto done = [&] {
    emit(schema, args.size(), {contiguous({a.size(0), b.size(1)}, dt)}, r);
    return true;
  };
  if (a.size(0) == 0 || a.size(1) == 0 || b.size(1) == 0) return done();
  std::vector<int64_t> cdim = args[10].toIntVector();
  if (!cdim.empty()) {
    TORCH_CHECK_VALUE(cdim.size() == 2, "contraction_dim must have exactly 2 elements");
    TORCH_CHECK_VALUE(a.size(cdim[0]) == b.size(cdim[1]), "mat_a and mat_b shapes cannot be multiplied (", a.size(0),
                      "x", a.size(1), " and ", b.size(0), "x", b.size(1), ") with contraction dims mat_a: ", cdim[0],
                      ", mat_b: ", cdim[1]);
  } else {
    TORCH_CHECK_VALUE(a.size(1) == b.size(0), "mat_a and mat_b shapes cannot be multiplied (", a.size(0), "x",
                      a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  }
  if (args[8].isTensor()) {
    const at::Tensor& bias = args[8].toTensor();
    TORCH_CHECK_VALUE(bias.numel() == b.size(1), "Bias must be size ", b.size(1), " but got ", bias.numel());
  }
  TORCH_CHECK_VALUE(!out || args[9].isNone() || static_cast<at::ScalarType>(args[9].toInt()) == dt,
                    "out_dtype must match output matrix type");
  if (args[8].isTensor()) {
    at::ScalarType bt = args[8].toTensor().scalar_type();
    TORCH_CHECK_VALUE(bt == at::kFloat || bt == at::kBFloat16 || bt == at::kHalf,
                      "Bias must be Float32 or BFloat16 or Half, but got ", bt);
  }
  for (int k : {4, 7})
    for (int64_t v : args[k].toIntVector()) TORCH_CHECK_VALUE(v == 0, "CPU does not support swizzle.");
  // the recipe (scaled_blas::check_{tensorwise,rowwise}_recipe), then the
  // emulated kernel's checks of the scales
  std::vector<at::Tensor> sa = args[2].toTensorVector(), sb = args[5].toTensorVector();
  std::vector<int64_t> ra = args[3].toIntVector(), rb = args[6].toIntVector();
  bool f8 = at::isFloat8Type(a.scalar_type()) && at::isFloat8Type(b.scalar_type());
  bool one = f8 && sa.size() == 1 && sb.size() == 1 && ra.size() == 1 && rb.size() == 1 &&
             sa[0].scalar_type() == at::kFloat && sb[0].scalar_type() == at::kFloat;
  bool tensorwise = one && ra[0] == 0 && rb[0] == 0, rowwise = one && ra[0] == 1 && rb[0] == 1;
  TORCH_CHECK_VALUE(tensorwise || rowwise, "Invalid scaling configuration.\n"
                    "- For TensorWise scaling, a and b should be float8, scales should be float and singletons.\n"
                    "- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be (",
                    a.size(0), ", 1) and scale_b should be (1, ", b.size(1), "), and both should be contiguous.\n"
                    "Got mat_a.dtype()=", a.scalar_type(), ", mat_b.dtype()=", b.scalar_type());
  if (tensorwise) {
    TORCH_CHECK_VALUE(sa[0].numel() == 1, "scale_a must have 1 Float element");
    TORCH_CHECK_VALUE(sb[0].numel() == 1, "scale_b must have 1 Float element");
  } else {
    TORCH_CHECK_VALUE(sa[0].size(0) == a.size(0) && sa[0].size(1) == 1, "scale_a must have shape [", a.size(0),
                      ", 1], got [", sa[0].sizes(), "]");
    TORCH_CHECK_VALUE(sb[0].numel() == b.size(1), "scale_b must have ", b.size(1), " Float elements, got ",
                      sb[0].numel());
    TORCH_CHECK_VALUE(sa[0].stride(1) == 1, "expected scale_a.stride(1) to be 1, but got ", sa[0].stride(1));
    TORCH_CHECK_VALUE(sb[0].stride(1) == 1, "expected scale_b.stride(1) to be 1, but got ", sb[0].stride(1));
    // CPU multiplies mat_b (K, N) by the scale as it is: a (N, 1) scale broadcasts only when K == N, and
    // then scales rows; the tpu takes (1, N) only
    TORCH_CHECK_VALUE(sb[0].dim() == 2 && sb[0].size(0) == 1, "scale_b must have shape [1, ", b.size(1), "], got [",
                      sb[0].sizes(), "]");
  }
  TORCH_CHECK(a.size(1) == b.size(0), "mat_a and mat_b shapes cannot be multiplied (", a.size(0), "x", a.size(1),
              " and ", b.size(0), "x", b.size(1), ")");
  return done();
}

// _grouped_mm(self, mat2, offs?, bias?, out_dtype?) as CPU checks it
// (GroupedMMUtils.h), in its order, and lays it out: the last dim's stride
// padded to 16 bytes, as CPU and CUDA allocate it. CPU also asks for
// 16-byte-aligned strides of the operands, and PyTorch's meta kernel for
// bfloat16 operands (CUDA's kernel): tpu takes any strides and float32,
// bfloat16 and float16 operands.
bool grouped_mm_meta(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r) {
  if (schema.name() != "aten::_grouped_mm" || args.size() < 5) return false;
  const at::Tensor &a = args[0].toTensor(), &b = args[1].toTensor();
  auto float_matrix = [](at::ScalarType t) { return t == at::kBFloat16 || t == at::kFloat || t == at::kHalf; };
  TORCH_CHECK(float_matrix(a.scalar_type()), "Expected mat_a to be Float32, BFloat16 or Float16 matrix, got ",
              a.scalar_type());
  TORCH_CHECK(float_matrix(b.scalar_type()), "Expected mat_b to be Float32, BFloat16 or Float16 matrix, got ",
              b.scalar_type());
  TORCH_CHECK(a.dim() == 2 || a.dim() == 3, "mat_a has to be 2 or 3d");
  TORCH_CHECK(b.dim() == 2 || b.dim() == 3, "mat_b has to be 2 or 3d");
  const bool a2 = a.dim() == 2, b2 = b.dim() == 2;
  if (!a2 || !b2) TORCH_CHECK(a.size(-1) == b.size(-2), "contraction dimension of mat_a and mat_b must match");
  const bool has_offs = args[2].isTensor() && args[2].toTensor().defined();
  TORCH_CHECK(has_offs == (a2 || b2),
              "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d");
  if (has_offs) {
    const at::Tensor& offs = args[2].toTensor();
    TORCH_CHECK(offs.dim() == 1, "offs has to be 1D");
    TORCH_CHECK(offs.scalar_type() == at::kInt, "Offsets have to be int32");
  }
  TORCH_CHECK(!(args[3].isTensor() && args[3].toTensor().defined()), "Bias not supported yet");
  at::ScalarType dt = args[4].isNone() ? a.scalar_type() : static_cast<at::ScalarType>(args[4].toInt());
  TORCH_CHECK(dt == a.scalar_type(), "Grouped gemm output dtype must match `mat_a` dtype");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected mat_a and mat_b to have the same dtype, but got: ",
              a.scalar_type(), " != ", b.scalar_type());
  std::vector<int64_t> sizes;
  int64_t g = has_offs ? args[2].toTensor().size(0) : 0;
  if (a2 && b2) {
    sizes = {g, a.size(0), b.size(1)};
  } else if (a2) {
    TORCH_CHECK(g == b.size(0), "matrix batch sizes have to match");
    sizes = {a.size(0), b.size(-1)};
  } else if (b2) {
    TORCH_CHECK(g == a.size(0), "matrix batch sizes have to match");
    sizes = {a.size(1), b.size(1)};
  } else {
    TORCH_CHECK(a.size(0) == b.size(0), "batched dimension has to match");
    sizes = {a.size(0), a.size(1), b.size(-1)};
  }
  const int64_t align = 16 / (int64_t)c10::elementSize(dt);
  const int64_t padded = (sizes.back() + align - 1) / align * align;
  TMeta tm{sizes, {}, dt, true};
  tm.strides = sizes.size() == 2 ? std::vector<int64_t>{padded, 1} : std::vector<int64_t>{sizes[1] * padded, padded, 1};
  emit(schema, args.size(), {tm}, r);
  return true;
}

const std::vector<std::string>& meta_rules_for_fake() {
  static const std::vector<std::string> ops{"aten::_grouped_mm"};
  return ops;
}

bool meta_rule_before(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r) {
  // bool_tensor.pow_(True / False): CPU keeps bool; the Python meta kernel
  // promotes the bool exponent to int64 and refuses the in-place cast
  if (schema.name() == "aten::pow_" && schema.overload_name() == "Scalar" && args.size() == 2 &&
      args[0].isTensor() && args[0].toTensor().scalar_type() == at::kBool && args[1].isScalar() &&
      args[1].toScalar().isBoolean()) {
    const at::Tensor& self = args[0].toTensor();
    TMeta tm{self.sizes().vec(), self.strides().vec(), at::kBool, true};
    r.mut.assign(args.size(), {});
    r.mut[0] = {tm};
    r.rets.assign(1, {false, {tm}});
    r.values.assign(1, c10::IValue());
    return true;
  }
  // nll_loss with uint8 targets (CPU takes Long or Byte): the meta kernel, a
  // decomposition through gather, refuses Byte. Forward: (output, total_weight),
  // output of the target's shape for reduction 'none', else 0-dim; backward: like self.
  const std::string& name = schema.name();
  if ((name == "aten::nll_loss_forward" || name == "aten::nll_loss_backward") && schema.overload_name().empty()) {
    bool fwd = name == "aten::nll_loss_forward";
    size_t is = fwd ? 0 : 1, it = is + 1, ir = is + 3;
    if (args.size() > ir && args[is].isTensor() && args[it].isTensor() && args[ir].isInt() &&
        args[it].toTensor().scalar_type() == at::kByte) {
      const at::Tensor& self = args[is].toTensor();
      const at::Tensor& target = args[it].toTensor();
      TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
      TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
      TORCH_CHECK(self.dim() == 1 || self.size(0) == target.size(0), "size mismatch (got input: ", self.sizes(),
                  ", target: ", target.sizes(), ")");
      at::ScalarType dt = self.scalar_type();
      if (fwd) {
        std::vector<int64_t> out;
        if (args[ir].toInt() == 0 && self.dim() == 2) out = {self.size(0)};
        emit(schema, args.size(), {contiguous(out, dt), contiguous({}, dt)}, r);
      } else {
        emit(schema, args.size(), {like(self)}, r);
      }
      return true;
    }
  }
  // linspace with a 0-dim tensor endpoint and no dtype: CPU reads the endpoints' values and
  // infers the dtype from them as from Python numbers (complex -> the default complex dtype);
  // the meta kernel gives the default float dtype whatever the endpoints (a complex range
  // would silently lose its imaginary parts)
  if (name == "aten::linspace" && (schema.overload_name() == "Tensor_Tensor" || schema.overload_name() == "Tensor_Scalar" ||
                                   schema.overload_name() == "Scalar_Tensor") &&
      args.size() >= 4 && args[3].isNone()) {
    auto complex_end = [](const c10::IValue& v) {
      return v.isTensor() ? v.toTensor().is_complex() : v.isScalar() && v.toScalar().isComplex();
    };
    if (complex_end(args[0]) || complex_end(args[1])) {
      int64_t steps = args[2].toInt();
      TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
      emit(schema, args.size(), {contiguous({steps}, c10::typeMetaToScalarType(c10::get_default_complex_dtype()))}, r);
      return true;
    }
  }
  // samplers and gradients of torch.distributions: a contiguous tensor like argument 0, as
  // CPU's kernels allocate it (PyTorch has no meta kernel for some; its _standard_gamma and
  // poisson ones keep the input's strides)
  if (name == "aten::_sample_dirichlet" || name == "aten::_standard_gamma_grad" ||
      name == "aten::_standard_gamma" || name == "aten::poisson" || name == "aten::binomial") {
    emit(schema, args.size(), {like(args[0].toTensor())}, r);
    return true;
  }
  if (name == "aten::_dirichlet_grad") {  // x, alpha, total broadcast together, x's dtype
    const at::Tensor &x = args[0].toTensor(), &a = args[1].toTensor(), &t = args[2].toTensor();
    std::vector<int64_t> sh = at::infer_size(at::infer_size(x.sizes(), a.sizes()), t.sizes());
    emit(schema, args.size(), {contiguous(sh, x.scalar_type())}, r);
    return true;
  }
  if (scaled_mm_meta(schema, args, r) || scaled_mm_v2_meta(schema, args, r)) return true;
  if (grouped_mm_meta(schema, args, r)) return true;
  return rnn_cell_meta(name, args, r);
}

// CPU's checks of histogramdd's inputs (Histogram.cpp), in its order, then
// its outputs. Int bins: select_outer_bin_edges (range length; the finite /
// ordered range is a device-side check), linspace(bins + 1), and for the
// histogram histogramdd_check_inputs then prepare_out. The tpu lowering
// computes f32 / f64 only (CPU also bins half types given bin tensors).
static void histogramdd_meta(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r) {
  const at::Tensor& x = args[0].toTensor();
  TORCH_CHECK(x.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions");
  const int64_t d = x.size(-1);
  const at::ScalarType dt = x.scalar_type();
  const bool tensors = schema.name() == "aten::_histogramdd_from_bin_tensors";
  const bool edges_only = schema.name() == "aten::_histogramdd_bin_edges";
  std::vector<int64_t> nb;
  if (tensors) {
    auto bins = args[1].toTensorList();
    TORCH_CHECK((int64_t)bins.size() == d, "torch.histogramdd: expected ", d, " sequences of bin edges for a ", d,
                "-dimensional histogram but got ", bins.size());
    for (int64_t k = 0; k < d; k++) {
      const at::Tensor b = bins[k];
      TORCH_CHECK(b.scalar_type() == dt, "torch.histogramdd: input tensor and bins tensors should ",
                  "have the same dtype, but got input with dtype ", x.dtype(), " and bins for dimension ", k,
                  " with dtype ", b.dtype());
      TORCH_CHECK(b.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ", b.dim(),
                  " dimensions in the bins tensor for dimension ", k);
      TORCH_CHECK(b.numel() > 0, "torch.histogramdd: bins tensor should have at least 1 element, but got ",
                  b.numel(), " elements in the bins tensor for dimension ", k);
      nb.push_back(b.numel() - 1);
    }
  } else {
    nb = args[1].toIntVector();
    TORCH_CHECK((int64_t)nb.size() == d,
                "histogramdd: The size of bins must be equal to the innermost dimension of the input.");
    if (!args[2].isNone()) {
      size_t nr = args[2].toDoubleVector().size();
      TORCH_CHECK((int64_t)nr == 2 * d, "torch.histogramdd: for a ", d, "-dimensional histogram range should have ",
                  2 * d, " elements, but got ", nr);
    }
    for (int64_t k = 0; k < d; k++) TORCH_CHECK(nb[k] >= -1, "number of steps must be non-negative");
    if (!edges_only)
      for (int64_t k = 0; k < d; k++)
        TORCH_CHECK(nb[k] >= 0, "torch.histogramdd: bins tensor should have at least 1 element, but got 0 ",
                    "elements in the bins tensor for dimension ", k);
  }
  if (tensors && !at::isFloatingType(dt))
    TORCH_CHECK_NOT_IMPLEMENTED(false, "\"histogram_cpu\" not implemented for '", c10::toString(dt), "'");
  TORCH_CHECK_NOT_IMPLEMENTED(dt == at::kFloat || dt == at::kDouble, "\"histogramdd\" not implemented for '",
                              c10::toString(dt), "'", tensors ? " on tpu (float32 and float64 only)" : "");
  const c10::IValue& w = args[tensors ? 2 : 3];
  if (!edges_only && !w.isNone() && w.toTensor().defined()) {
    const at::Tensor& wt = w.toTensor();
    TORCH_CHECK(wt.scalar_type() == dt, "torch.histogramdd: if weight tensor is provided, input tensor ",
                "and weight tensor should have the same dtype, but got input(", x.dtype(), "), and weight(",
                wt.dtype(), ")");
    std::vector<int64_t> ws = wt.sizes().vec();
    if (ws.empty()) ws = {1};  // CPU compares a 0-d weight as shape [1]
    TORCH_CHECK(ws == x.sizes().slice(0, x.dim() - 1).vec(), "torch.histogramdd: if weight tensor is provided it ",
                "should have the same shape as the input tensor excluding its innermost dimension, but got input ",
                "with shape ", x.sizes(), " and weight with shape ", wt.sizes());
  }
  if (!edges_only) {
    for (int64_t k = 0; k < d; k++)
      TORCH_CHECK(nb[k] > 0, "torch.histogram(): bins must be > 0, but got ", nb[k], " for dimension ", k);
    emit(schema, args.size(), {contiguous(nb, dt)}, r);
    return;
  }
  std::vector<TMeta> edges;
  for (int64_t k = 0; k < d; k++) edges.push_back(contiguous({nb[k] + 1}, dt));
  r.mut.assign(args.size(), {});
  r.rets.clear();
  for (size_t i = 0; i < args.size() && i < schema.arguments().size(); i++)
    if (schema.arguments()[i].is_out()) r.mut[i] = edges;
  if (!schema.returns().empty()) r.rets.emplace_back(true, std::move(edges));
}

bool meta_rule_missing(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, MetaResult& r) {
  const std::string& name = schema.name();
  auto tensor = [&](size_t i) -> const at::Tensor& { return args[i].toTensor(); };
  // backward kernels whose gradient is a contiguous tensor like argument 1
  // (the forward's input; the log-probabilities for CTC)
  if (name == "aten::multi_margin_loss_backward" || name == "aten::multilabel_margin_loss_backward" ||
      name == "aten::fractional_max_pool3d_backward" || name == "aten::_ctc_loss_backward") {
    emit(schema, args.size(), {like(tensor(1))}, r);
    return true;
  }
  // the inference fast paths of nn.MultiheadAttention / TransformerEncoderLayer
  if (name == "aten::_masked_softmax") {
    const at::Tensor &x = tensor(0), &m = tensor(1);
    TORCH_CHECK(m.scalar_type() == at::kBool, "Mask should be a boolean tensor");
    int64_t mt = args[3].isNone() ? 2 : args[3].toInt();
    if (m.sizes() != x.sizes()) {  // CPU's shapes: the mask's own, (B, L) or (L, L) of a (B, H, L, L) input
      bool four = x.dim() == 4 && m.dim() == 2;
      if (mt == 1 && x.dim() == 4) {
        TORCH_CHECK(four && m.size(0) == x.size(0) && m.size(1) == x.size(3),
                    "For mask_type == 1 mask shape should be (B, L)");
      } else if (mt == 0 && x.dim() == 4) {
        TORCH_CHECK(four && m.size(0) == x.size(2) && m.size(1) == x.size(3),
                    "For mask_type == 0 mask shape should be (L, L)");
      } else {
        TORCH_CHECK(false, "For mask_type == 2 mask shape should match input shape");
      }
    }
    if (!args[2].isNone()) at::maybe_wrap_dim(args[2].toInt(), x.dim());
    emit(schema, args.size(), {like(x)}, r);
    return true;
  }
  if (name == "aten::_transform_bias_rescale_qkv") {
    const at::Tensor& qkv = tensor(0);
    int64_t nh = args[2].toInt();
    TORCH_CHECK(qkv.dim() == 3 && qkv.size(2) % 3 == 0 && nh > 0 && (qkv.size(2) / 3) % nh == 0,
                "_transform_bias_rescale_qkv: qkv of shape [B, T, 3 * D] with D divisible by num_heads expected");
    std::vector<int64_t> sh = {qkv.size(0), nh, qkv.size(1), qkv.size(2) / 3 / nh};
    emit(schema, args.size(), {contiguous(sh, qkv.scalar_type()), contiguous(sh, qkv.scalar_type()),
                               contiguous(sh, qkv.scalar_type())}, r);
    return true;
  }
  if (name == "aten::_logcumsumexp") {
    at::maybe_wrap_dim(args[1].toInt(), tensor(0).dim());
    emit(schema, args.size(), {like(tensor(0))}, r);
    return true;
  }
  if (name == "aten::geqrf") {
    const at::Tensor& a = tensor(0);
    TORCH_CHECK(a.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
    int64_t m = a.size(-2), n = a.size(-1);
    std::vector<int64_t> tau(a.sizes().begin(), a.sizes().end() - 2);
    tau.push_back(std::min(m, n));
    emit(schema, args.size(), {column_major(a.sizes().vec(), a.scalar_type(), m), contiguous(tau, a.scalar_type())}, r);
    return true;
  }
  if (name == "aten::histogram") {
    const at::Tensor& x = tensor(0);
    int64_t ne;
    if (args[1].isTensor()) {
      ne = args[1].toTensor().numel();
    } else {
      int64_t bins = args[1].toInt();
      TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
      ne = bins + 1;
    }
    emit(schema, args.size(), {contiguous({std::max<int64_t>(0, ne - 1)}, x.scalar_type()), contiguous({ne}, x.scalar_type())}, r);
    return true;
  }
  // histogramdd's parts: hist (the bin counts per dimension) or bin_edges
  // (one tensor of bins + 1 edges per dimension), in the input's dtype.
  if (name == "aten::_histogramdd_bin_edges" || name == "aten::_histogramdd_from_bin_cts" ||
      name == "aten::_histogramdd_from_bin_tensors") {
    histogramdd_meta(schema, args, r);
    return true;
  }
  if (name == "aten::linalg_lstsq") {
    lstsq_meta(schema, args, r);
    return true;
  }
  return false;
}

}  // namespace torch_tpu
