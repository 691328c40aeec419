// CPU's checks of the random ops' parameters, which PyTorch's meta kernels
// lack (uniform_'s range, random_'s bounds, bernoulli_'s p) or make with
// Python's wording ("std -1.0" where CPU prints "std -1"), or make on the
// device (a tensor std, read on the host as CPU reads it). Each raises CPU's
// exception type and message; random_ warns as CPU does where a float dtype
// cannot hold every integer of the range. They run on every call, before the
// meta kernel: CPU checks first, and warns on every call.
#include <cmath>
#include <limits>

#include "aten.h"

namespace torch_tpu {
namespace {

std::optional<size_t> arg_at(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, const char* name) {
  auto i = schema.argumentIndexWithName(name);
  if (!i || (size_t)*i >= args.size()) return std::nullopt;
  return (size_t)*i;
}

// A float argument's value, when given as one.
std::optional<double> float_arg(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args,
                                const char* name) {
  auto i = arg_at(schema, args, name);
  if (!i || !args[*i].isDouble()) return std::nullopt;
  return args[*i].toDouble();
}

// self's dtype, when self is a defined tensor.
std::optional<at::ScalarType> self_dtype(c10::ArrayRef<c10::IValue> args) {
  if (args.empty() || !args[0].isTensor() || !args[0].toTensor().defined()) return std::nullopt;
  return args[0].toTensor().scalar_type();
}

// The finite range and the mantissa digits (numeric_limits<T>::digits) of a floating type.
void float_limits(at::ScalarType t, double* lo, double* hi, int* digits) {
  switch (t) {
    case at::kHalf: *hi = 65504.0, *digits = 11; break;
    case at::kBFloat16: *hi = 3.3895313892515355e38, *digits = 8; break;
    case at::kFloat: *hi = std::numeric_limits<float>::max(), *digits = 24; break;
    default: *hi = std::numeric_limits<double>::max(), *digits = 53; break;
  }
  *lo = -*hi;
}

// The range of an integral type (bool: [0, 1]) as int64 (uint64: to INT64_MAX, as CPU).
void int_limits(at::ScalarType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case at::kBool: *lo = 0, *hi = 1; break;
    case at::kByte: *lo = 0, *hi = 255; break;
    case at::kChar: *lo = -128, *hi = 127; break;
    case at::kShort: *lo = -32768, *hi = 32767; break;
    case at::kInt: *lo = std::numeric_limits<int32_t>::min(), *hi = std::numeric_limits<int32_t>::max(); break;
    case at::kUInt16: *lo = 0, *hi = 65535; break;
    case at::kUInt32: *lo = 0, *hi = std::numeric_limits<uint32_t>::max(); break;
    case at::kUInt64: *lo = 0, *hi = std::numeric_limits<int64_t>::max(); break;
    default: *lo = std::numeric_limits<int64_t>::min(), *hi = std::numeric_limits<int64_t>::max(); break;
  }
}

// CPU's check that [from, to_inc] fits the dtype (its name in the message is
// the element type's, e.g. "signed char"), and its warning where a float
// dtype cannot tell apart all integers of the range.
void from_to_in_range(int64_t from, int64_t to_inc, at::ScalarType t) {
  TORCH_CHECK(at::isFloatingType(t) || at::isIntegralType(t, /*includeBool=*/true),
              "check_random_bounds handles only integral, floating-point and boolean types");
  const caffe2::TypeMeta name = c10::scalarTypeToTypeMeta(t);
  if (at::isFloatingType(t)) {
    double lo, hi;
    int digits;
    float_limits(t, &lo, &hi, &digits);
    TORCH_CHECK((double)from >= lo && (double)from <= hi, "from is out of bounds for ", name);
    TORCH_CHECK((double)to_inc >= lo && (double)to_inc <= hi, "to - 1 is out of bounds for ", name);
    const int64_t lim = (int64_t)1 << digits;
    const char* tail = " can support discrete uniform distribution only within this range. This warning will "
                       "become an error in version 1.7 release, please fix the code in advance";
    if (from < -lim || from > lim)
      TORCH_WARN("from is out of bounds [-(2^", digits, "), 2^", digits, "]. Due to precision limitations ", name, tail);
    if (to_inc < -lim || to_inc > lim)
      TORCH_WARN("to - 1 is out of bounds [-(2^", digits, "), 2^", digits, "]. Due to precision limitations ", name,
                 tail);
    return;
  }
  int64_t lo, hi;
  int_limits(t, &lo, &hi);
  TORCH_CHECK(from >= lo && from <= hi, "from is out of bounds for ", name);
  TORCH_CHECK(to_inc >= lo && to_inc <= hi, "to - 1 is out of bounds for ", name);
}

// The bit length of |v| minus one (v != 0).
int top_bit(int64_t v) {
  uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  int n = 0;
  while (a >>= 1) n++;
  return n;
}

// v rounded to `digits` significant bits, ties to even: the integer a float
// dtype with that many mantissa digits holds nearest to v (saturated).
int64_t round_to_digits(int64_t v, int digits) {
  if (v == 0 || top_bit(v) < digits) return v;
  const int shift = top_bit(v) - digits + 1;
  const uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  uint64_t q = a >> shift;
  const uint64_t rem = a & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  if (q >= ((uint64_t)1 << (63 - shift))) return v < 0 ? std::numeric_limits<int64_t>::min()
                                                      : std::numeric_limits<int64_t>::max();
  const int64_t r = (int64_t)(q << shift);
  return v < 0 ? -r : r;
}

// CPU's bounds "casted to dtype" (as the lowering draws them, see
// core/lower/create/create.c): from moves up where from + 1 rounds below it,
// to moves down where to - 1 rounds to it or above.
int64_t float_from(int64_t from, int digits) {
  if (from == std::numeric_limits<int64_t>::max()) return from;
  const int64_t r = round_to_digits(from + 1, digits);
  return r < from ? r + ((int64_t)1 << (top_bit(from + 1) - digits + 1)) : from;
}
int64_t float_to(int64_t to, int digits) {
  if (to == std::numeric_limits<int64_t>::min()) return to;
  const int64_t r = round_to_digits(to - 1, digits);
  return r >= to ? r - ((int64_t)1 << (top_bit(to - 1) - digits + 1)) : to;
}

// random_(self), random_.from(self, from, to?), random_.to(self, to).
void random_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args, at::ScalarType t) {
  const std::string& ov = schema.overload_name();
  if (ov != "from" && ov != "to" && ov != "from_out" && ov != "to_out") return;
  int64_t from = 0;
  std::optional<int64_t> to;
  if (ov == "from" || ov == "from_out") {
    auto fi = arg_at(schema, args, "from");
    auto ti = arg_at(schema, args, "to");
    if (!fi || !args[*fi].isInt()) return;
    from = args[*fi].toInt();
    if (ti && args[*ti].isInt()) to = args[*ti].toInt();
  } else {
    auto ti = arg_at(schema, args, "to");
    if (!ti || !args[*ti].isInt()) return;
    to = args[*ti].toInt();
  }
  if (to) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
    if (at::isFloatingType(t)) {
      double lo, hi;
      int digits;
      float_limits(t, &lo, &hi, &digits);
      from = float_from(from, digits);
      to = float_to(*to, digits);
      TORCH_CHECK(from < *to, "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                              "from=", from, " >= to=", *to);
    }
    from_to_in_range(from, *to - 1, t);
    return;
  }
  if (from == std::numeric_limits<int64_t>::min()) return;  // the whole 64-bit range
  TORCH_CHECK(at::isFloatingType(t) || at::isIntegralType(t, /*includeBool=*/true),
              "random_from_to_impl handles only integral, floating-point and boolean types");
  int64_t to_inc;
  if (at::isFloatingType(t)) {
    double lo, hi;
    int digits;
    float_limits(t, &lo, &hi, &digits);
    to_inc = digits >= 63 ? std::numeric_limits<int64_t>::max() : (int64_t)1 << digits;
    from = float_from(from, digits);
    TORCH_CHECK(from < to_inc, "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                               "casted to dtype, but got from=", from, " > to_inc=", to_inc);
  } else {
    int64_t lo;
    int_limits(t, &lo, &to_inc);
    if (t == at::kUInt64) to_inc = std::numeric_limits<int64_t>::max();
  }
  from_to_in_range(from, to_inc, t);
}

}  // namespace

bool cpu_random_op(const std::string& base) {
  static const char* const kOps[] = {"aten::random_",    "aten::random",     "aten::uniform_",   "aten::uniform",
                                     "aten::normal_",    "aten::normal",     "aten::bernoulli_", "aten::bernoulli",
                                     "aten::exponential_", "aten::exponential", "aten::geometric_", "aten::geometric",
                                     "aten::cauchy_",    "aten::cauchy",     "aten::log_normal_", "aten::log_normal"};
  for (const char* k : kOps)
    if (base == k) return true;
  return false;
}

void cpu_random_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args) {
  const std::string& n = schema.name();
  const std::string op = n.substr(6);  // (cpu_random_op: "aten::" names)
  const std::string base = op.back() == '_' ? op.substr(0, op.size() - 1) : op;
  auto t = self_dtype(args);
  if (base == "random") {
    if (t) random_checks(schema, args, *t);
    return;
  }
  if (base == "uniform") {
    if (!t) return;
    const at::ScalarType v = at::isComplexType(*t) ? c10::toRealValueType(*t) : *t;  // CPU: the real view
    TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(v), "\"check_uniform_bounds\" not implemented for '",
                                c10::toString(v), "'");
    const double from = float_arg(schema, args, "from").value_or(0.0), to = float_arg(schema, args, "to").value_or(1.0);
    double lo, hi;
    int digits;
    float_limits(v, &lo, &hi, &digits);
    const caffe2::TypeMeta name = c10::scalarTypeToTypeMeta(v);
    TORCH_CHECK(from >= lo && from <= hi, "from is out of bounds for ", name);
    TORCH_CHECK(to >= lo && to <= hi, "to is out of bounds for ", name);
    TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
    TORCH_CHECK(to - from <= hi, "uniform_ expects to-from <= std::numeric_limits<", c10::toString(v),
                ">::max(), but found to=", to, " and from=", from, " which result in to-from to exceed the limit");
    return;
  }
  if (base == "normal") {
    if (op == "normal_" && t && !at::isFloatingType(*t) && !at::isComplexType(*t))
      TORCH_CHECK_NOT_IMPLEMENTED(false, "\"normal_kernel_cpu\" not implemented for '", c10::toString(*t), "'");
    if (auto sd = float_arg(schema, args, "std"))
      TORCH_CHECK(*sd >= 0.0, "normal expects std >= 0.0, but found std ", *sd);
    auto si = arg_at(schema, args, "std");
    if (si && args[*si].isTensor() && args[*si].toTensor().defined()) {
      // a tensor std: CPU (and CUDA) read its smallest element on the host
      const at::Tensor& sd = args[*si].toTensor();
      TORCH_CHECK(!sd.is_complex(), "normal expects standard deviation to be non-complex");
      TORCH_CHECK(sd.numel() == 0 || sd.min().ge(0).item<bool>(), "normal expects all elements of std >= 0.0");
    }
    return;
  }
  if (base == "bernoulli") {
    if (auto p = float_arg(schema, args, "p"))
      TORCH_CHECK(*p >= 0 && *p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", *p);
    return;
  }
  if (base == "exponential") {
    if (t)
      TORCH_CHECK(at::isFloatingType(*t), "Exponential distribution is a continuous probability distribution. "
                                          "dtype must be a floating point but you specified ", *t);
    if (auto l = float_arg(schema, args, "lambd"))
      TORCH_CHECK(*l > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", *l);
    return;
  }
  if (base == "geometric") {
    if (auto p = float_arg(schema, args, "p"))
      TORCH_CHECK(0 < *p && *p < 1, "geometric_ expects p to be in (0, 1), but got p=", *p);
    return;
  }
  if (base == "cauchy") {
    if (auto s = float_arg(schema, args, "sigma"))
      TORCH_CHECK(*s > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", *s);
    return;
  }
  if (base == "log_normal") {
    if (auto s = float_arg(schema, args, "std"))
      TORCH_CHECK(*s > 0.0, "log_normal_ expects std > 0.0, but found std=", *s);
  }
}

}  // namespace torch_tpu
