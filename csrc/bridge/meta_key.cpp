// The key of the boxed fallback's meta-result cache (what it holds and why:
// fallback.cpp, "meta results, cached per signature"; which ops key their
// Scalars by class: aten/cpu_metadata.cpp), and the schema helpers it shares
// with the fallback.
#include <cmath>

#include "meta.h"

namespace torch_tpu {

static void key_scalar_class(std::string& k, const c10::Scalar& s);
static void key_ivalue(std::string& k, const c10::IValue& v);

c10::TypeKind base_kind(const c10::TypePtr& t) {
  if (auto o = t->cast<c10::OptionalType>()) return o->getElementType()->kind();
  return t->kind();
}

c10::TypeKind list_elem_kind(const c10::TypePtr& t) {
  c10::TypePtr x = t;
  if (auto o = x->cast<c10::OptionalType>()) x = o->getElementType();
  if (auto l = x->cast<c10::ListType>()) {
    auto e = l->getElementType();
    if (auto o = e->cast<c10::OptionalType>()) return o->getElementType()->kind();
    return e->kind();
  }
  return c10::TypeKind::AnyType;
}

bool is_tpu(const at::Tensor& t) { return t.defined() && t.is_privateuseone(); }


// The value of a 0-dim CPU tensor without math bits, read in place (Python
// numbers reach ops as such tensors: item() would dispatch for each).
static c10::Scalar host_scalar(const at::Tensor& t) {
  const void* p = t.const_data_ptr();
  switch (t.scalar_type()) {
    case at::kDouble: return *static_cast<const double*>(p);
    case at::kFloat: return *static_cast<const float*>(p);
    case at::kLong: return *static_cast<const int64_t*>(p);
    case at::kInt: return *static_cast<const int32_t*>(p);
    case at::kBool: return *static_cast<const bool*>(p);
    case at::kComplexDouble: return *static_cast<const c10::complex<double>*>(p);
    default: return t.item();
  }
}

// scalar_class: a 0-dim host tensor's value is keyed by its class (see scalar_class_key_op).
static void key_tensor(std::string& k, const at::Tensor& t, bool scalar_class) {
  if (!t.defined()) {
    k += 'u';
    return;
  }
  k += is_tpu(t) ? 'T' : (t.unsafeGetTensorImpl()->is_wrapped_number() ? 'w' : 'h');
  k += (char)t.scalar_type();
  k += (char)t.dim();
  k.append(reinterpret_cast<const char*>(t.sizes().data()), t.dim() * sizeof(int64_t));
  k.append(reinterpret_cast<const char*>(t.strides().data()), t.dim() * sizeof(int64_t));
  if (!is_tpu(t) && t.is_cpu() && t.dim() == 0) {  // a host value: meta kernels may read it
    if (t.is_conj() || t.is_neg()) {
      auto c = t.resolve_conj().resolve_neg();
      if (scalar_class) key_scalar_class(k, c.item());
      else k.append(static_cast<const char*>(c.const_data_ptr()), c.element_size());
    } else if (scalar_class) {
      key_scalar_class(k, host_scalar(t));
    } else {
      k.append(static_cast<const char*>(t.const_data_ptr()), t.element_size());
    }
  }
}

static void key_scalar(std::string& k, const c10::Scalar& s) {
  if (s.isBoolean()) {
    k += s.toBool() ? 'S' : 's';
  } else if (s.isIntegral(false)) {
    k += 'I';
    int64_t i = s.toLong();
    k.append(reinterpret_cast<const char*>(&i), sizeof i);
  } else if (s.isComplex()) {
    k += 'C';
    c10::complex<double> z = s.toComplexDouble();
    k.append(reinterpret_cast<const char*>(&z), sizeof z);
  } else {
    k += 'D';
    double d = s.toDouble();
    k.append(reinterpret_cast<const char*>(&d), sizeof d);
  }
}

// A Scalar's type and class (see scalar_class_key_op).
static void key_scalar_class(std::string& k, const c10::Scalar& s) {
  if (s.isBoolean()) {
    k += 'S';
  } else if (s.isIntegral(false)) {
    int64_t i = s.toLong();
    k += 'I';
    k += i < 0 ? '-' : i == 0 ? '0' : '+';
  } else if (s.isComplex()) {
    k += 'C';
  } else {
    double d = s.toDouble();
    k += 'D';
    k += std::isnan(d) ? 'n' : std::isinf(d) ? (d < 0 ? 'I' : 'i') : d < 0 ? '-' : d == 0 ? '0' : '+';
    if (std::isfinite(d) && std::fabs(d) > 3.4028234663852886e38) k += 'x';
  }
}

static void key_ivalue(std::string& k, const c10::IValue& v) {
  if (v.isTensor()) return key_tensor(k, v.toTensor(), false);
  if (v.isNone()) {
    k += 'n';
  } else if (v.isTensorList()) {
    k += 'L';
    for (const at::Tensor& t : v.toTensorList()) key_tensor(k, t, false);
    k += ']';
  } else if (v.isList()) {
    k += 'l';
    for (const c10::IValue& e : v.toList()) key_ivalue(k, e);
    k += ']';
  } else if (v.isDouble()) {
    k += 'd';
    double d = v.toDouble();
    k.append(reinterpret_cast<const char*>(&d), sizeof d);
  } else if (v.isComplexDouble()) {
    k += 'c';
    c10::complex<double> z = v.toComplexDouble();
    k.append(reinterpret_cast<const char*>(&z), sizeof z);
  } else if (v.isInt()) {
    k += 'i';
    int64_t i = v.toInt();
    k.append(reinterpret_cast<const char*>(&i), sizeof i);
  } else if (v.isBool()) {
    k += v.toBool() ? 'B' : 'b';
  } else if (v.isString()) {
    k += 's';
    k += v.toStringRef();
    k += '\0';
  } else if (v.isGenerator()) {
    k += 'g';
  } else {
    k += 'o';
    std::string r = c10::str(v);  // devices, layouts, rare kinds
    k += r;
    k += '\0';
  }
}

void meta_key(std::string& k, const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args,
              bool scalar_class) {
  k += (char)c10::get_default_dtype_as_scalartype();
  for (size_t i = 0; i < args.size(); i++) {
    const c10::TypePtr& t = schema.arguments()[i].type();
    c10::TypeKind kind = base_kind(t);
    const c10::IValue& v = args[i];
    if (kind == c10::TypeKind::NumberType && v.isScalar()) {
      if (scalar_class) key_scalar_class(k, v.toScalar());
      else key_scalar(k, v.toScalar());
    } else if (scalar_class && v.isList() && list_elem_kind(t) == c10::TypeKind::NumberType) {
      k += 'l';
      for (const c10::IValue& e : v.toList()) {
        if (e.isScalar()) key_scalar_class(k, e.toScalar());
        else key_ivalue(k, e);
      }
      k += ']';
    } else if (v.isTensor()) {
      key_tensor(k, v.toTensor(), scalar_class);
    } else {
      key_ivalue(k, v);
    }
  }
}

}  // namespace torch_tpu
