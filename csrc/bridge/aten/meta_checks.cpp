// CPU's input checks that PyTorch's meta kernels lack. They run before the
// meta kernel, which would accept the call (max() of an empty tensor, mode
// over an empty dim: the lowering would then return an identity that does not
// exist) or raise a different error (amax's "reducing over zero-size
// dimension"). Each check raises CPU's exception type and message.
//
// clamp / clip with neither min nor max, and add / sub with a float alpha over
// integers, raise CPU's RuntimeError (the meta kernels raise a ValueError);
// cat into an out= of another kind raises CPU's TypeError; addcdiv of integers
// raises CPU's message. An out= argument of another dtype than CPU's
// kernel accepts is refused where the op's facts say so (cpu_out_dtype_checks).
//
// std / var (and their _mean forms) refuse integer and bool inputs;
// convolutions refuse a weight or bias of another dtype than the input's.
// index_put refuses values of another dtype than self's (before boolean masks
// are expanded: it runs on every call).
//
// Reductions without an identity (max / min / amax / amin / argmax / argmin /
// aminmax / kthvalue / median / nanmedian / mode): CPU refuses an empty input
// when no dim is given, and an empty reduced dim when one is (also where the
// other dims are not empty). median / nanmedian over all elements of an empty
// input give NaN on CPU (no check); scans (cummax / cummin) of an empty input
// give empty outputs (no check).
//
// _foreach_* ops (cpu_foreach_checks): CPU's slow path runs the per-element op
// on each element, so each element gets that op's checks, in CPU's order: sub
// of bools, addcdiv of integers, lerp's dtypes (TypeMeta names: "long int"),
// broadcasting ("The size of tensor a (10) must match ..."), clamp's refusal
// of complex values, and in place the result's shape and dtype; PyTorch's
// foreach meta kernels word these otherwise or accept them.
//
// In-place pointwise ops: CPU builds them on a TensorIterator whose output is
// self, which cannot be resized and must hold the result type; PyTorch's meta
// kernels check neither for most of them (mul_ of an int8 tensor by a float16
// one passes; lt_ with a larger broadcast shape resizes self).
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/accumulate.h>

#include <algorithm>
#include <sstream>

#include "aten.h"

namespace torch_tpu {
namespace {

std::optional<size_t> arg_index(const c10::FunctionSchema& schema, const char* name) {
  auto i = schema.argumentIndexWithName(name);
  if (!i) return std::nullopt;
  return (size_t)*i;
}

// index_put's values must expand to the indexing result's shape (CPU's
// make_index_put_iterator: no more dims than it, each 1 or equal). The shape:
// self's, the indexed dims replaced by the indices' broadcast shape `b`, in
// place when the indexed dims are adjacent, else in front. A lone boolean
// mask left unexpanded (lone_mask_select) was checked there.
void index_put_values_check(c10::ArrayRef<c10::IValue> args, const std::vector<int64_t>& b) {
  if (args.size() < 3 || !args[0].isTensor() || !args[2].isTensor()) return;
  const at::Tensor &self = args[0].toTensor(), &v = args[2].toTensor();
  if (!self.defined() || !v.defined()) return;
  std::vector<int64_t> given;
  const c10::List<c10::IValue> list = args[1].toList();
  for (size_t k = 0; k < list.size(); k++) {
    const c10::IValue e = list.get(k);
    if (!e.isTensor() || !e.toTensor().defined()) continue;
    if (e.toTensor().scalar_type() == at::kBool || e.toTensor().scalar_type() == at::kByte) return;
    given.push_back((int64_t)k);
  }
  if ((int64_t)list.size() > self.dim()) return;  // too many indices: the meta kernel says so
  std::vector<int64_t> res;
  if (given.empty()) {
    res = self.sizes().vec();
  } else {
    bool adjacent = given.back() - given.front() + 1 == (int64_t)given.size();
    if (adjacent) res.assign(self.sizes().begin(), self.sizes().begin() + given.front());
    res.insert(res.end(), b.begin(), b.end());
    for (int64_t d = adjacent ? given.back() + 1 : 0; d < self.dim(); d++)
      if (adjacent || std::find(given.begin(), given.end(), d) == given.end()) res.push_back(self.size(d));
  }
  TORCH_CHECK(at::is_expandable_to(v.sizes(), res), "shape mismatch: value tensor of shape ", v.sizes(),
              " cannot be broadcast to indexing result of shape ", c10::IntArrayRef(res));
}

[[noreturn]] void need_dim(const std::string& label) {
  TORCH_CHECK(false, label, "(): Expected reduction dim to be specified for input.numel() == 0. "
                            "Specify the reduction dim with the 'dim' argument.");
}

// `print_given`: CPU's message prints the dim as given (amax / amin), else
// wrapped.
void dim_nonzero(const at::Tensor& self, int64_t dim, const std::string& prefix, bool print_given) {
  if (self.dim() == 0) return;  // a 0-dim input reduces its one element
  int64_t d = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(self.size(d) != 0, prefix, " Expected reduction dim ", print_given ? dim : d,
                    " to have non-zero size.");
}

// float8 takes part in no type promotion on CPU (c10::promoteTypes refuses
// it): an op computing one result from a float8 operand and an operand of
// another dtype raises there, where PyTorch's meta kernels give a float8
// result (mul with float32) or fail obscurely. The operands are the
// arguments named as TensorIterator's inputs are (self, other, input,
// tensors, ...), weighed as CPU weighs them (a 0-dim or wrapped-number
// operand does not promote a float8 tensor): at::result_type raises CPU's
// error exactly when CPU's result_type does.
void float8_promotion_check(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args) {
  static const char* const kOperands[] = {"self", "other", "input", "tensors", "tensor1", "tensor2", "end"};
  std::vector<at::Tensor> ts;
  bool f8 = false, mixed = false;
  auto add = [&](const at::Tensor& t) {
    if (!t.defined()) return;
    f8 = f8 || at::isFloat8Type(t.scalar_type());
    mixed = mixed || (!ts.empty() && ts.front().scalar_type() != t.scalar_type());
    ts.push_back(t);
  };
  const auto& formals = schema.arguments();
  for (size_t i = 0; i < args.size() && i < formals.size(); i++) {
    if (formals[i].is_out()) continue;
    const std::string& name = formals[i].name();
    if (std::none_of(std::begin(kOperands), std::end(kOperands), [&](const char* k) { return name == k; })) continue;
    if (args[i].isTensor()) add(args[i].toTensor());
    else if (args[i].isTensorList())
      for (const at::Tensor& t : args[i].toTensorList().vec()) add(t);
  }
  if (f8 && mixed) (void)at::native::result_type(at::ITensorListRef(ts));
}

// complex(real, imag) / polar(abs, angle): CPU's dtype checks (both inputs
// Half, Float or Double and alike; an out= of their complex dtype), where
// the meta kernels promote mixed inputs and word the others differently.
void factory_complex_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args) {
  if (args.size() < 2 || !args[0].isTensor() || !args[1].isTensor()) return;
  const at::ScalarType a = args[0].toTensor().scalar_type(), b = args[1].toTensor().scalar_type();
  auto floating = [](at::ScalarType t) { return t == at::kHalf || t == at::kFloat || t == at::kDouble; };
  TORCH_CHECK(floating(a) && floating(b), "Expected both inputs to be Half, Float or Double tensors but got ", a,
              " and ", b);
  TORCH_CHECK(a == b, "Expected object of scalar type ", a, " but got scalar type ", b, " for second argument");
  auto oi = arg_index(schema, "out");
  if (!oi || *oi >= args.size() || !args[*oi].isTensor() || !args[*oi].toTensor().defined()) return;
  const at::ScalarType o = args[*oi].toTensor().scalar_type();
  TORCH_CHECK(o == c10::toComplexType(a), "Expected object of scalar type ", c10::toComplexType(a),
              " but got scalar type ", o, " for argument 'out'");
}

// linspace / logspace of Scalars: CPU's checks of steps and of a complex
// start or end, which the Python meta kernels word otherwise. With a dtype, a
// complex start or end needs a complex one; into an out= of a real dtype, CPU
// converts them to its element type (checked: an imaginary part overflows).
void range_scalar_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, const std::string& op) {
  auto si = arg_index(schema, "start"), ei = arg_index(schema, "end"), ni = arg_index(schema, "steps");
  if (!si || !ei || !ni || *si >= args.size() || *ei >= args.size() || *ni >= args.size()) return;
  if (!args[*si].isScalar() || !args[*ei].isScalar() || !args[*ni].isInt()) return;
  TORCH_CHECK(args[*ni].toInt() >= 0, "number of steps must be non-negative");
  if (auto oi = arg_index(schema, "out"); oi && *oi < args.size() && args[*oi].isTensor() &&
                                          args[*oi].toTensor().defined())
    at::assert_no_internal_overlap(args[*oi].toTensor());  // CPU's "unsupported operation: ..."
  const c10::Scalar start = args[*si].toScalar(), end = args[*ei].toScalar();
  if (!start.isComplex() && !end.isComplex()) return;
  auto di = arg_index(schema, "dtype"), oi = arg_index(schema, "out");
  if (di && *di < args.size() && args[*di].isInt()) {
    const auto dt = static_cast<at::ScalarType>(args[*di].toInt());
    TORCH_CHECK(at::isComplexType(dt), "torch.", op, "(): inferred dtype ", c10::get_default_complex_dtype(),
                " can't be safely cast to passed dtype ", dt);
  }
  if (oi && *oi < args.size() && args[*oi].isTensor() && args[*oi].toTensor().defined()) {
    const at::ScalarType o = args[*oi].toTensor().scalar_type();
    if (at::isComplexType(o)) return;
    for (const c10::Scalar& v : {start, end})
      TORCH_CHECK(!v.isComplex() || v.toComplexDouble().imag() == 0, "value cannot be converted to type ",
                  c_type_name(o), " without overflow");
  }
}

// arange / range: CPU's checks, in its order (a non-finite bound is refused
// before the step's sign is compared; the meta kernel compares first).
void arange_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args) {
  auto si = arg_index(schema, "start"), ei = arg_index(schema, "end"), pi = arg_index(schema, "step");
  if (!ei || *ei >= args.size() || !args[*ei].isScalar()) return;
  auto value = [&](std::optional<size_t> i, double dflt) {
    return i && *i < args.size() && args[*i].isScalar() ? args[*i].toScalar().toDouble() : dflt;
  };
  const double start = value(si, 0.0), end = value(ei, 0.0), step = value(pi, 1.0);
  TORCH_CHECK(step > 0 || step < 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(start) && std::isfinite(end), "unsupported range: ", start, " -> ", end);
}

// kaiser_window (lowered as a whole: its ATen kernel is a device stub): CPU's
// dtype check, which the meta kernel makes with the meta device in its text.
void window_dtype_check(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, const std::string& op) {
  auto di = arg_index(schema, "dtype"), li = arg_index(schema, "layout"), dv = arg_index(schema, "device"),
       pi = arg_index(schema, "pin_memory");
  if (!di || *di >= args.size()) return;
  at::ScalarType dt = args[*di].isInt() ? static_cast<at::ScalarType>(args[*di].toInt())
                                        : c10::get_default_dtype_as_scalartype();
  if (at::isFloatingType(dt)) return;
  at::TensorOptions o = at::TensorOptions().dtype(dt);
  if (li && *li < args.size() && args[*li].isInt()) o = o.layout(static_cast<at::Layout>(args[*li].toInt()));
  if (dv && *dv < args.size() && args[*dv].isDevice()) o = o.device(args[*dv].toDevice());
  if (pi && *pi < args.size() && args[*pi].isBool()) o = o.pinned_memory(args[*pi].toBool());
  TORCH_CHECK(false, op, " expects floating point dtypes, got: ", o);
}

void addcdiv_integer_check(const at::Tensor& t1, const at::Tensor& t2) {
  TORCH_CHECK(!at::isIntegralType(t1.scalar_type(), true) || !at::isIntegralType(t2.scalar_type(), true),
              "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
              "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
              "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
              "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior "
              "is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.");
}

// CPU's sub_check: a, b whether self / other are bool.
void sub_bool_check(bool a, bool b) {
  TORCH_CHECK(!(a && b), "Subtraction, the `-` operator, with two bool tensors is not supported. "
                         "Use the `^` or `logical_xor()` operator instead.");
  TORCH_CHECK(!a && !b, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                        "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

}  // namespace

void cpu_input_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args) {
  const std::string& n = schema.name();
  if (n.rfind("aten::", 0) != 0) return;
  float8_promotion_check(schema, args);
  const std::string op = n.substr(6);
  if ((op == "sub" || op == "sub_") && args.size() >= 2 && args[0].isTensor() && args[0].toTensor().defined()) {
    // CPU's sub_check, before broadcasting (also of a bool Scalar, which the lowering wraps)
    bool a = args[0].toTensor().scalar_type() == at::kBool;
    bool b = args[1].isTensor() ? args[1].toTensor().defined() && args[1].toTensor().scalar_type() == at::kBool
                                : args[1].isScalar() && args[1].toScalar().isBoolean();
    sub_bool_check(a, b);
  }
  if (op == "add" || op == "add_" || op == "sub" || op == "sub_" || op == "rsub") {
    // CPU's alpha_check, on the inputs' result type (the meta kernel raises a ValueError)
    auto ai = arg_index(schema, "alpha");
    if (!ai || *ai >= args.size() || !args[*ai].isScalar() || args.size() < 2) return;
    const c10::Scalar alpha = args[*ai].toScalar();
    at::ScalarType dt;
    if (args[0].isTensor() && args[1].isTensor()) dt = at::result_type(args[0].toTensor(), args[1].toTensor());
    else if (args[0].isTensor() && args[1].isScalar()) dt = at::result_type(args[0].toTensor(), args[1].toScalar());
    else return;
    TORCH_CHECK(!alpha.isBoolean() || dt == at::kBool, "Boolean alpha only supported for Boolean results.");
    TORCH_CHECK(at::isFloatingType(dt) || at::isComplexType(dt) || alpha.isIntegral(true),
                "For integral input tensors, argument alpha must not be a floating point number.");
    TORCH_CHECK(at::isComplexType(dt) || !alpha.isComplex(),
                "For non-complex input tensors, argument alpha must not be a complex number.");
    return;
  }
  if (op == "complex" || op == "polar") {
    factory_complex_checks(schema, args);
    return;
  }
  if (op == "linspace" || op == "logspace") {
    range_scalar_checks(schema, args, op);
    return;
  }
  if (op == "arange" || op == "range") {
    arange_checks(schema, args);
    return;
  }
  if (op == "kaiser_window") {
    window_dtype_check(schema, args, op);
    return;
  }
  if (op == "cat") {
    // CPU refuses an out= of another kind (a float result into an integer out): a TypeError
    auto oi = arg_index(schema, "out");
    if (!oi || *oi >= args.size() || !args[*oi].isTensor() || !args[0].isTensorList()) return;
    std::vector<at::Tensor> ts;
    for (const at::Tensor& t : args[0].toTensorList()) ts.push_back(t);
    if (ts.empty()) return;
    const at::ScalarType out = args[*oi].toTensor().scalar_type();
    TORCH_CHECK_TYPE(c10::canCast(at::native::result_type(ts), out),
                     "torch.cat(): input types can't be cast to the desired output type ", out);
    return;
  }
  if (op == "addcdiv" || op == "addcdiv_" || op == "addcmul" || op == "addcmul_") {
    // CPU's messages (the meta kernel's are a tuple of its parts, and "Attempting to broadcast")
    if (args.size() < 3 || !args[0].isTensor() || !args[1].isTensor() || !args[2].isTensor()) return;
    if (op == "addcdiv" || op == "addcdiv_") addcdiv_integer_check(args[1].toTensor(), args[2].toTensor());
    std::vector<int64_t> shape = args[0].toTensor().sizes().vec();  // TensorIterator's order
    for (int i = 1; i < 3; i++) shape = at::infer_size(shape, args[i].toTensor().sizes());
    return;
  }
  if (op == "clamp" || op == "clamp_" || op == "clip" || op == "clip_" || op == "clamp_min" || op == "clamp_min_" ||
      op == "clamp_max" || op == "clamp_max_") {
    // CPU's clamp refuses complex values (its meta function: also for an empty self, also in
    // place before the cast check) where the bounds are Scalars
    bool scalar_bounds = true, complex = args.size() >= 1 && args[0].isTensor() && args[0].toTensor().defined() &&
                                         args[0].toTensor().is_complex();
    for (const char* b : {"min", "max"}) {
      auto bi = arg_index(schema, b);
      if (!bi || *bi >= args.size()) continue;
      if (args[*bi].isTensor()) scalar_bounds = false;
      else if (args[*bi].isScalar() && args[*bi].toScalar().isComplex()) complex = true;
    }
    TORCH_CHECK_NOT_IMPLEMENTED(!scalar_bounds || !complex, "clamp is not supported for complex types");
    if (op.rfind("clamp_m", 0) == 0) return;
  }
  if (op == "clamp" || op == "clamp_" || op == "clip" || op == "clip_") {
    // CPU raises a RuntimeError (PyTorch's meta kernel a ValueError)
    auto lo = arg_index(schema, "min"), hi = arg_index(schema, "max");
    if (lo && hi && *lo < args.size() && *hi < args.size())
      TORCH_CHECK(!args[*lo].isNone() || !args[*hi].isNone(),
                  "torch.clamp: At least one of 'min' or 'max' must not be None");
    return;
  }
  if (op == "convolution" || op == "_convolution" || op == "convolution_overrideable") {
    // CPU's kernels take input, weight and bias of one dtype
    if (args.size() < 3 || !args[0].isTensor() || !args[1].isTensor()) return;
    const at::Tensor &in = args[0].toTensor(), &w = args[1].toTensor();
    if (!in.defined() || !w.defined()) return;
    if (args[2].isTensor() && args[2].toTensor().defined() && w.scalar_type() == in.scalar_type()) {
      at::ScalarType b = args[2].toTensor().scalar_type();
      auto lower = [](at::ScalarType t) -> std::string {
        return t == at::kFloat ? "float" : t == at::kDouble ? "double" : c10::toString(t);
      };
      TORCH_CHECK(b == in.scalar_type(), "Input type (", lower(in.scalar_type()), ") and bias type (", lower(b),
                  ") should be the same");
    }
    TORCH_CHECK(w.scalar_type() == in.scalar_type(), "expected scalar type ", in.scalar_type(), " but found ",
                w.scalar_type());
    return;
  }
  if (op == "index_put" || op == "index_put_" || op == "_index_put_impl_" || op == "index" ||
      op == "_unsafe_index_put" || op == "_unsafe_index") {
    // the index tensors (boolean masks already expanded) must broadcast together
    if (args.size() < 2 || !args[1].isList()) return;
    // CPU's IndexErrors (the meta kernel raises RuntimeErrors)
    if (op == "index" || op == "_unsafe_index") {
      TORCH_CHECK_INDEX(!args[1].toList().empty(), "at least one index must be provided");
    } else {  // CPU's index_put kernel refuses no indices too (a RuntimeError)
      TORCH_CHECK(!args[1].toList().empty(), "at least one index must be provided");
    }
    std::vector<c10::IntArrayRef> shapes;
    for (const c10::IValue& e : args[1].toList()) {
      if (!e.isTensor() || !e.toTensor().defined()) continue;
      const at::ScalarType it = e.toTensor().scalar_type();
      TORCH_CHECK_INDEX(it == at::kLong || it == at::kInt || it == at::kByte || it == at::kBool,
                        "tensors used as indices must be long, int, byte or bool tensors");
      shapes.push_back(e.toTensor().sizes());
    }
    std::vector<int64_t> acc;
    bool ok = true;
    try {
      for (auto sh : shapes) acc = at::infer_size(acc, sh);
    } catch (const c10::Error&) {
      ok = false;
    }
    if (!ok) {
      std::ostringstream m;
      m << "shape mismatch: indexing tensors could not be broadcast together with shapes ";
      for (size_t i = 0; i < shapes.size(); i++) m << (i ? ", " : "") << shapes[i];
      TORCH_CHECK_INDEX(false, m.str());
    }
    // a dim of size 0 indexed by positions (the broadcast indices not empty): no position is
    // in bounds (CPU's kernel says so; a gather from an empty dim does not compile)
    if (args[0].isTensor() && args[0].toTensor().defined() && c10::multiply_integers(acc) > 0) {
      const at::Tensor& self = args[0].toTensor();
      const c10::List<c10::IValue> list = args[1].toList();
      for (size_t k = 0; k < list.size() && (int64_t)k < self.dim(); k++) {
        const c10::IValue e = list.get(k);
        if (e.isTensor() && e.toTensor().defined())
          TORCH_CHECK_INDEX(self.size((int64_t)k) != 0, "index is out of bounds for dimension with size 0");
      }
    }
    if (op != "index" && op != "_unsafe_index") index_put_values_check(args, acc);
    return;
  }
  if (op == "index_fill" || op == "index_fill_") {
    // CPU fills through a Scalar of self's type: a complex value into a real tensor is refused
    auto vi = arg_index(schema, "value");
    if (!vi || *vi >= args.size() || !args[0].isTensor() || !args[0].toTensor().defined()) return;
    const c10::IValue& v = args[*vi];
    bool complex_value = v.isScalar() ? v.toScalar().isComplex()
                                      : v.isTensor() && v.toTensor().defined() && v.toTensor().is_complex();
    TORCH_CHECK(!complex_value || args[0].toTensor().is_complex(),
                "index_fill_(): Converting complex Scalar to non-complex type is not supported");
    return;
  }
  if (op == "var" || op == "std" || op == "var_mean" || op == "std_mean") {
    auto si = arg_index(schema, "self");
    if (si && *si < args.size() && args[*si].isTensor() && args[*si].toTensor().defined()) {
      at::ScalarType t = args[*si].toTensor().scalar_type();
      TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t),
                  "std and var only support floating point and complex dtypes");
    }
    return;
  }
  bool minmax = op == "max" || op == "min", aminmax_ = op == "amax" || op == "amin";
  bool arg = op == "argmax" || op == "argmin", both = op == "aminmax";
  bool by_dim = op == "kthvalue" || op == "median" || op == "nanmedian" || op == "mode";
  if (!minmax && !aminmax_ && !arg && !both && !by_dim) return;
  auto si = arg_index(schema, "self");
  if (!si || *si >= args.size() || !args[*si].isTensor()) return;
  const at::Tensor& self = args[*si].toTensor();
  if (!self.defined()) return;
  if (minmax && arg_index(schema, "other")) return;  // the binary overloads
  auto di = arg_index(schema, "dim");
  const c10::IValue* dim = di && *di < args.size() ? &args[*di] : nullptr;
  bool no_dim = !dim || dim->isNone();
  if (!no_dim && !dim->isInt() && !dim->isIntList()) return;  // named dims decompose before here

  if (minmax) {
    if (no_dim) {
      if (self.numel() == 0) need_dim(op);
    } else {
      dim_nonzero(self, dim->toInt(), op + "():", false);
    }
  } else if (aminmax_) {
    std::vector<int64_t> dims = no_dim ? std::vector<int64_t>{} : dim->toIntVector();
    if (dims.empty()) {
      if (self.numel() == 0) need_dim(op);
    } else {
      for (int64_t d : dims) dim_nonzero(self, d, op + "():", true);
    }
  } else if (arg) {
    if (no_dim) {
      TORCH_CHECK_INDEX(self.numel() != 0, op, "(): Expected reduction dim to be specified for input.numel() == 0.");
    } else {
      dim_nonzero(self, dim->toInt(), op + "():", false);
    }
  } else if (both) {
    if (no_dim) {
      TORCH_CHECK(self.numel() != 0,
                  "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
    } else {
      dim_nonzero(self, dim->toInt(), "aminmax:", false);
    }
  } else if (!no_dim) {  // kthvalue, median, nanmedian, mode with a dim
    dim_nonzero(self, dim->toInt(), (op == "nanmedian" ? std::string("median") : op) + "():", false);
  }
}

void cpu_cast_error(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, const char* what) {
  // PyTorch's Python references (_safe_copy_out):
  // "Attempting to cast from torch.float32 to out tensor with dtype torch.int64, but ..."
  const std::string m = what, from = "Attempting to cast from torch.", to = " to out tensor with dtype torch.";
  // add_ / sub_ of an integer self by a float, of a bool self by a number: "Promotion of
  // int.add/sub_(float) in in-place ops are not possible due to element size change."
  if (m.find(" in in-place ops are not possible due to element size change") != std::string::npos &&
      args.size() >= 2 && args[0].isTensor()) {
    const at::Tensor& self = args[0].toTensor();
    at::ScalarType res = args[1].isTensor()   ? at::result_type(self, args[1].toTensor())
                         : args[1].isScalar() ? at::result_type(self, args[1].toScalar())
                                              : self.scalar_type();
    TORCH_CHECK(false, "result type ", res, " can't be cast to the desired output type ", self.scalar_type());
  }
  size_t a = m.find(from);
  if (a == std::string::npos) return;
  a += from.size();
  size_t b = m.find(to, a);
  if (b == std::string::npos) return;
  size_t c = b + to.size(), d = m.find(',', c);
  if (d == std::string::npos) return;
  auto parse = [](const std::string& name) -> std::optional<at::ScalarType> {
    for (int i = 0; i < (int)at::ScalarType::NumOptions; i++)
      if (c10::getDtypeNames((at::ScalarType)i).first == name) return (at::ScalarType)i;
    return std::nullopt;
  };
  auto res = parse(m.substr(a, b - a)), out = parse(m.substr(c, d - c));
  if (!res || !out) return;
  TORCH_CHECK(false, "result type ", *res, " can't be cast to the desired output type ", *out);  // TensorIterator's
}

void cpu_out_dtype_checks(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, bool same_as_input,
                          MetaRunner functional) {
  const auto& sargs = op.schema().arguments();
  const at::Tensor *out = nullptr, *in = nullptr;
  std::vector<c10::IValue> fargs;
  for (size_t i = 0; i < sargs.size() && i < args.size(); i++) {
    if (sargs[i].is_out()) {
      if (!out && args[i].isTensor() && args[i].toTensor().defined()) out = &args[i].toTensor();
      continue;
    }
    fargs.push_back(args[i]);
    if (!in && args[i].isTensor() && args[i].toTensor().defined()) in = &args[i].toTensor();
  }
  if (!out || !in) return;  // not an out= call
  if (same_as_input) {  // TensorIterator's check_all_same_dtype
    TORCH_CHECK(out->scalar_type() == in->scalar_type(), "Found dtype ", out->scalar_type(), " but expected ",
                in->scalar_type());
    return;
  }
  auto fop = c10::Dispatcher::singleton().findSchema({op.schema().name(), ""});
  if (!fop || fop->schema().arguments().size() != fargs.size()) return;
  MetaResult fr = functional(*fop, fargs);
  if (fr.rets.empty() || fr.rets[0].first || fr.rets[0].second.size() != 1) return;
  const at::ScalarType want = fr.rets[0].second[0].dtype;
  TORCH_CHECK(out->scalar_type() == want, "Expected out tensor to have dtype ", c10::scalarTypeToTypeMeta(want),
              ", but got ", out->dtype(), " instead");
}

void cpu_inplace_checks(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, MetaRunner functional) {
  const auto& schema = op.schema();
  const std::string& n = schema.name();
  if (n.size() < 8 || n.back() != '_' || n.rfind("aten::", 0) != 0 || op.hasTag(at::Tag::inplace_view)) return;
  if (schema.arguments().empty() || args.empty() || !args[0].isTensor()) return;
  const auto* ai = schema.arguments()[0].alias_info();
  if (!ai || !ai->isWrite()) return;
  const at::Tensor& self = args[0].toTensor();
  if (!self.defined()) return;
  // The functional overload of the same arguments: pow_.Tensor's is
  // pow.Tensor_Tensor (pow.Scalar takes a Scalar base).
  auto same_args = [&](const c10::FunctionSchema& f) {
    if (f.arguments().size() != schema.arguments().size() || f.returns().size() != 1) return false;
    for (size_t i = 0; i < f.arguments().size(); i++)
      if (f.arguments()[i].type()->str() != schema.arguments()[i].type()->str()) return false;
    return true;
  };
  const std::string fname = n.substr(0, n.size() - 1), ov = schema.overload_name();
  std::optional<c10::OperatorHandle> fop;
  for (const std::string& o : {ov, "Tensor_" + ov}) {
    auto h = c10::Dispatcher::singleton().findSchema({fname, o});
    if (h && same_args(h->schema())) {
      fop = h;
      break;
    }
  }
  // pointwise: TensorIterator ops (comparisons, abs_, copysign_... carry the
  // tag on their functional overload only)
  if (!fop || !(op.hasTag(at::Tag::pointwise) || fop->hasTag(at::Tag::pointwise))) return;
  MetaResult fr;
  try {
    fr = functional(*fop, args);
  } catch (const std::exception&) {
    return;  // the in-place meta kernel, which ran first, accepted the call: leave it
  }
  if (fr.rets.empty() || fr.rets[0].first || fr.rets[0].second.size() != 1) return;
  const TMeta& m = fr.rets[0].second[0];
  TORCH_CHECK(m.sizes == self.sizes().vec(), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", c10::IntArrayRef(m.sizes));
  if (n == "aten::float_power_")
    TORCH_CHECK(m.dtype == self.scalar_type(), "the base given to float_power_ has dtype ", self.scalar_type(),
                " but the operation's result requires dtype ", m.dtype);
  TORCH_CHECK(c10::canCast(m.dtype, self.scalar_type()), "result type ", m.dtype,
              " can't be cast to the desired output type ", self.scalar_type());
}

void cpu_out_resize_warning(const c10::FunctionSchema& schema, const at::Tensor& out, int64_t size) {
  // CPU's arange (and the fft_fftfreq / fft_rfftfreq built on it) warns; its
  // range / linspace / logspace resize silently
  if (schema.name() != "aten::arange" || out.numel() == 0 || out.numel() == size) return;
  TORCH_WARN("The number of elements in the out tensor of shape ", out.sizes(), " is ", out.numel(),
             " which does not match the computed number of elements ", size,
             ". Note that this may occur as a result of rounding error. The out tensor will be resized to a tensor "
             "of shape (", size, ",).");
}

void cpu_foreach_checks(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args, MetaRunner functional) {
  const auto& schema = op.schema();
  const std::string& n = schema.name();
  static const std::string kPrefix = "aten::_foreach_";
  if (n.rfind(kPrefix, 0) != 0 || args.empty() || !args[0].isTensorList()) return;
  const std::vector<at::Tensor> self = args[0].toTensorList().vec();
  const bool inplace = n.back() == '_';
  const std::string base = n.substr(kPrefix.size(), n.size() - kPrefix.size() - (inplace ? 1 : 0));
  const std::string& ov = schema.overload_name();
  const auto& formals = schema.arguments();
  // element k of each argument: a tensor's dtype, a Scalar's class (bool / complex)
  auto elem_bool = [&](const c10::IValue& a, size_t k) {
    if (a.isTensorList()) return k < a.toTensorList().size() && a.toTensorList().get(k).scalar_type() == at::kBool;
    if (a.isTensor()) return a.toTensor().defined() && a.toTensor().scalar_type() == at::kBool;
    if (a.isScalar()) return a.toScalar().isBoolean();
    if (a.isList()) return k < a.toList().size() && a.toList().get(k).isBool();
    return false;
  };
  auto elem_complex = [&](const c10::IValue& a, size_t k) {
    if (a.isTensorList()) return k < a.toTensorList().size() && a.toTensorList().get(k).is_complex();
    if (a.isTensor()) return a.toTensor().defined() && a.toTensor().is_complex();
    if (a.isScalar()) return a.toScalar().isComplex();
    if (a.isList()) return k < a.toList().size() && a.toList().get(k).isComplexDouble();
    return false;
  };
  // Lengths differ: the meta kernel says so in CPU's words.
  for (size_t i = 1; i < args.size() && i < formals.size(); i++) {
    if (formals[i].is_out()) continue;
    if (args[i].isTensorList() && args[i].toTensorList().size() != self.size()) return;
    if (args[i].isList() && !args[i].isTensorList() && args[i].toList().size() != self.size()) return;
  }
  // CPU runs the per-element op on each element: sub's bool check comes before broadcasting
  if (base == "sub" && args.size() >= 2) {
    for (size_t k = 0; k < self.size(); k++) sub_bool_check(self[k].scalar_type() == at::kBool, elem_bool(args[1], k));
  }
  // addcdiv of integers; lerp's end and weight of self's dtype (CPU's lerp meta function)
  if (base == "addcdiv" && args.size() >= 3 && args[1].isTensorList() && args[2].isTensorList()) {
    for (size_t k = 0; k < self.size(); k++)
      addcdiv_integer_check(args[1].toTensorList().get(k), args[2].toTensorList().get(k));
  }
  if (base == "lerp" && args.size() >= 3 && args[1].isTensorList()) {
    for (size_t k = 0; k < self.size(); k++) {
      const at::Tensor end = args[1].toTensorList().get(k);
      TORCH_CHECK(self[k].dtype() == end.dtype(), "expected dtype ", self[k].dtype(), " for `end` but got dtype ",
                  end.dtype());
      if (args[2].isTensorList()) {
        const at::Tensor w = args[2].toTensorList().get(k);
        TORCH_CHECK(self[k].dtype() == w.dtype(), "expected dtype ", self[k].dtype(), " for `weight` but got dtype ",
                    w.dtype());
      }
    }
  }
  // the tensors of element k broadcast together (at::infer_size raises CPU's message)
  if (base != "copy") {
    for (size_t i = 1; i < args.size() && i < formals.size(); i++) {
      if (formals[i].is_out() || !args[i].isTensorList()) continue;
      const auto other = args[i].toTensorList();
      for (size_t k = 0; k < self.size(); k++) {
        const at::Tensor o = other.get(k);
        if (self[k].defined() && o.defined()) (void)at::infer_size(self[k].sizes(), o.sizes());
      }
    }
  }
  // Per element, in CPU's order: maximum / minimum / clamp_min / clamp_max with a Scalar run
  // CPU's clamp kernels, which refuse complex values and word the cast error with self's
  // TypeMeta ("long int"); in place, each element's result (of the functional overload) must
  // keep self's shape and cast to self's dtype, as CPU's TensorIterator with self as its output
  // demands.
  const bool clamp = (base == "maximum" || base == "minimum" || base == "clamp_min" || base == "clamp_max") &&
                     (ov == "Scalar" || ov == "ScalarList");
  const std::vector<TMeta>* res = nullptr;
  MetaResult fr;
  if (inplace && base != "copy" && base != "zero") {
    auto fop = c10::Dispatcher::singleton().findSchema({kPrefix + base, ov});
    if (fop && fop->schema().arguments().size() == args.size()) {
      try {
        fr = functional(*fop, args);
        if (!fr.rets.empty() && fr.rets[0].second.size() == self.size()) res = &fr.rets[0].second;
      } catch (const std::exception&) {
        // the in-place meta kernel raises its error
      }
    }
  }
  for (size_t k = 0; k < self.size(); k++) {
      const bool complex_bound = clamp && args.size() >= 2 && elem_complex(args[1], k);
    if (clamp && self[k].defined())  // also of an empty element: CPU's check is in its meta function
      TORCH_CHECK_NOT_IMPLEMENTED(!self[k].is_complex() && !complex_bound, "clamp is not supported for complex types");
    if (!res || !(*res)[k].defined || !self[k].defined()) continue;
    const TMeta& m = (*res)[k];
    TORCH_CHECK(m.sizes == self[k].sizes().vec(), "output with shape ", self[k].sizes(),
                " doesn't match the broadcast shape ", c10::IntArrayRef(m.sizes));
    if (clamp)
      TORCH_CHECK(c10::canCast(m.dtype, self[k].scalar_type()), "result type ", m.dtype,
                  " can't be cast to the desired output type ", self[k].dtype());
    TORCH_CHECK(c10::canCast(m.dtype, self[k].scalar_type()), "result type ", m.dtype,
                " can't be cast to the desired output type ", self[k].scalar_type());
  }
}

std::string index_put_dtype_error(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args) {
  const std::string& n = schema.name();
  if (n != "aten::index_put" && n != "aten::index_put_" && n != "aten::_index_put_impl_" &&
      n != "aten::_index_put_impl")
    return "";
  if (args.size() < 3 || !args[0].isTensor() || !args[2].isTensor() || !args[0].toTensor().defined() ||
      !args[2].toTensor().defined())
    return "";
  at::ScalarType d = args[0].toTensor().scalar_type(), v = args[2].toTensor().scalar_type();
  if (d == v) return "";
  // x[mask] = v with one value: Python's indexing calls masked_fill_ there on
  // CPU (any dtype), so a mask index with a one-element value passes
  bool mask = false;
  if (args[1].isList())
    for (const c10::IValue& e : args[1].toList())
      if (e.isTensor() && e.toTensor().defined() &&
          (e.toTensor().scalar_type() == at::kBool || e.toTensor().scalar_type() == at::kByte))
        mask = true;
  if (mask && args[2].toTensor().numel() == 1) return "";
  return c10::str("Index put requires the source and destination dtypes match, got ", d, " for the destination and ",
                  v, " for the source.");
}

}  // namespace torch_tpu
