// CPU's overflow check of Scalar arguments. CPU kernels convert some Scalars
// to the element type they compute in with c10::checked_convert, which raises
// "value cannot be converted to type T without overflow" (fill_(300) on a
// uint8 tensor, clamp(min=1e40) on float32, alpha=70000 on float16). Meta
// kernels never convert, so without this check the tpu wrapped or rounded
// such values silently. The check runs on every call, before the meta cache
// (whose keys hold a pointwise op's Scalars by class, not value).
//
// Which ops convert which Scalars, and to what, is a fact of each op beside its
// lowering (tt_lower_fact_t.scalars): found by calling every pointwise op with
// Scalar arguments on CPU in uint8 / int8 / int32 / float16 / bfloat16 /
// float32 with values beyond each type's range. The Scalar goes to the
// result's dtype (`scalar_t`), or to its opmath type (float for half types)
// where the kernel computes in it (ScalarTo); Python numbers passed as `other`
// become wrapped tensors and are not checked (CPU neither).
#include <cmath>
#include <cstring>
#include <limits>

#include "aten.h"

namespace torch_tpu {

// c10's name of each element type in the message (c10::demangle_type<T>()).
const char* c_type_name(at::ScalarType t) {
  switch (t) {
    case at::kByte: return "uint8_t";
    case at::kChar: return "int8_t";
    case at::kShort: return "int16_t";
    case at::kInt: return "int";
    case at::kLong: return "int64_t";
    case at::kHalf: return "c10::Half";
    case at::kBFloat16: return "c10::BFloat16";
    case at::kFloat: return "float";
    case at::kDouble: return "double";
    case at::kComplexHalf: return "c10::complex<c10::Half>";
    case at::kComplexFloat: return "c10::complex<float>";
    case at::kComplexDouble: return "c10::complex<double>";
    default: return c10::toString(t);
  }
}

namespace {

// The largest finite value and the lowest of a floating type.
double float_max(at::ScalarType t) {
  switch (t) {
    case at::kHalf: case at::kComplexHalf: return 65504.0;
    case at::kBFloat16: return 3.3895313892515355e38;
    case at::kFloat8_e4m3fn: return 448.0;
    case at::kFloat8_e5m2: case at::kFloat8_e5m2fnuz: return 57344.0;
    case at::kFloat8_e4m3fnuz: return 240.0;
    case at::kFloat: case at::kComplexFloat: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}

// c10::overflows<To, From>: integral From (Python int) and floating From (Python float).
bool overflows_int(int64_t v, at::ScalarType t) {
  switch (t) {
    case at::kBool: return false;
    case at::kByte: return v > 255 || (v < 0 && -static_cast<uint64_t>(v) > 255);  // negatives wrap
    case at::kChar: return v < -128 || v > 127;
    case at::kShort: return v < -32768 || v > 32767;
    case at::kInt: return v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max();
    case at::kLong: return false;
    default: return std::fabs(static_cast<double>(v)) > float_max(t);
  }
}

bool overflows_double(double v, at::ScalarType t) {
  if (t == at::kBool) return false;
  if (at::isFloatingType(t) || at::isComplexType(t)) return std::isfinite(v) && std::fabs(v) > float_max(t);
  if (std::isnan(v)) return true;  // integer types have no NaN
  double lo, hi;
  switch (t) {
    case at::kByte: lo = 0, hi = 255; break;
    case at::kChar: lo = -128, hi = 127; break;
    case at::kShort: lo = -32768, hi = 32767; break;
    case at::kInt: lo = -2147483648.0, hi = 2147483647.0; break;
    default: lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
  }
  return v < lo || v > hi;
}

bool overflows(const c10::Scalar& s, at::ScalarType t) {
  if (s.isBoolean()) return false;
  if (s.isIntegral(false)) return overflows_int(s.toLong(), t);
  if (s.isComplex()) {
    auto z = s.toComplexDouble();
    // c10: a complex value with an imaginary part overflows every real type
    if (!at::isComplexType(t)) return z.imag() != 0 || overflows_double(z.real(), t);
    return overflows_double(z.real(), t) || overflows_double(z.imag(), t);
  }
  return overflows_double(s.toDouble(), t);
}

// CPU's conversion of Scalar v for a result of dtype t: throws its error.
void check_conversion(c10::Scalar v, at::ScalarType t, ScalarTo to) {
  at::ScalarType d = t;
  if (to == ScalarTo::kOpmath && (t == at::kHalf || t == at::kBFloat16)) d = at::kFloat;
  if (to == ScalarTo::kIntegral64 && at::isIntegralType(t, /*includeBool=*/false)) {
    // to int64 (a float truncated), then that integer to the result's type
    TORCH_CHECK(!overflows(v, at::kLong), "value cannot be converted to type int64_t without overflow");
    if (!v.isBoolean() && !v.isIntegral(false)) v = c10::Scalar(static_cast<int64_t>(v.toDouble()));
  }
  if (to == ScalarTo::kNegResult && !v.isBoolean()) v = -v;
  TORCH_CHECK(!overflows(v, d), "value cannot be converted to type ", c_type_name(d), " without overflow");
}

}  // namespace

std::vector<ScalarConversion> scalar_conversions(const c10::FunctionSchema& schema, const char* scalars) {
  std::vector<ScalarConversion> out;
  const char* p = scalars;
  while (p && *p) {
    while (*p == ' ') p++;
    const char* colon = std::strchr(p, ':');
    if (!*p || !colon) break;
    const char* end = colon + std::strcspn(colon, " ");
    std::string name(p, colon - p), to(colon + 1, end - colon - 1);
    p = end;
    ScalarTo k;
    if (to == "result") k = ScalarTo::kResult;
    else if (to == "opmath") k = ScalarTo::kOpmath;
    else if (to == "neg_result") k = ScalarTo::kNegResult;
    else if (to == "integral64") k = ScalarTo::kIntegral64;
    else TORCH_CHECK(false, "torch_tpu: ", schema.name(), ": unknown Scalar conversion '", to, "'");
    auto i = schema.argumentIndexWithName(name);
    if (i) out.push_back({static_cast<int>(*i), k});
  }
  return out;
}

void scalar_overflow_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args,
                            const MetaResult& r, const std::vector<ScalarConversion>& conv) {
  const std::string& op = schema.name();
  if ((op == "aten::pow" || op == "aten::pow_") && args.size() >= 2 && args[0].isTensor() && args[1].isScalar()) {
    // CPU's pow(Tensor, Scalar) meta check, by value (the meta cache holds the
    // exponent by class): any integer or bool base, unsigned ones included
    const c10::Scalar e = args[1].toScalar();
    TORCH_CHECK(!(at::isIntegralType(args[0].toTensor().scalar_type(), /*includeBool=*/true) &&
                  e.isIntegral(/*includeBool=*/true) && e.toLong() < 0),
                "Integers to negative integer powers are not allowed.");
  }
  if (conv.empty()) return;
  // the result's dtypes: of the first new return, else of the first mutated argument (one per
  // element of a list: a _foreach op converts its Scalars per element)
  const std::vector<TMeta>* res = nullptr;
  for (const auto& ret : r.rets)
    if (!res && !ret.second.empty() && ret.second[0].defined) res = &ret.second;
  for (const auto& m : r.mut)
    if (!res && !m.empty() && m[0].defined) res = &m;
  if (!res) return;
  if (schema.name().rfind("aten::_foreach_", 0) == 0) {
    // CPU's kernels that compute in the opmath type (lerp, addcmul, addcdiv) are not built for
    // bool, lerp's not for integers: CPU refuses the dtype before converting (so does the lowering)
    const bool lerp = schema.name().rfind("aten::_foreach_lerp", 0) == 0;
    for (size_t k = 0; k < res->size(); k++) {
      if (!(*res)[k].defined) continue;
      const at::ScalarType dt = (*res)[k].dtype;
      for (const auto& [i, to] : conv) {
        if (i >= (int)args.size()) continue;
        if (to == ScalarTo::kOpmath && (dt == at::kBool || (lerp && at::isIntegralType(dt, false)))) continue;
        const c10::IValue& a = args[i];
        if (a.isScalar()) check_conversion(a.toScalar(), (*res)[k].dtype, to);
        else if (a.isList() && k < a.toList().size() && a.toList().get(k).isScalar())
          check_conversion(a.toList().get(k).toScalar(), (*res)[k].dtype, to);
        else if (a.isTensor() && a.toTensor().defined() && a.toTensor().dim() == 1 && a.toTensor().is_cpu() &&
                 (int64_t)k < a.toTensor().numel())  // `Tensor scalars`: a CPU tensor of the values
          check_conversion(a.toTensor()[(int64_t)k].item(), (*res)[k].dtype, to);
      }
    }
    return;
  }
  const at::ScalarType t = (*res)[0].dtype;
  const std::string& name = schema.name();
  if (name == "aten::add" || name == "aten::add_" || name == "aten::sub" || name == "aten::sub_") {
    // CPU's alpha_check (the meta kernels skip it)
    auto i = schema.argumentIndexWithName("alpha");
    if (i && *i < (int)args.size() && args[*i].isScalar()) {
      c10::Scalar a = args[*i].toScalar();
      TORCH_CHECK(!a.isBoolean() || t == at::kBool, "Boolean alpha only supported for Boolean results.");
      TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t) || a.isIntegral(true),
                  "For integral input tensors, argument alpha must not be a floating point number.");
      TORCH_CHECK(at::isComplexType(t) || !a.isComplex(),
                  "For non-complex input tensors, argument alpha must not be a complex number.");
    }
  }
  for (const auto& [i, to] : conv)
    if (i < (int)args.size() && args[i].isScalar()) check_conversion(args[i].toScalar(), t, to);
}

}  // namespace torch_tpu
