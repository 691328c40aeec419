// CPU's input checks that PyTorch's meta kernels lack. They run before the
// meta kernel, which would accept the call (max() of an empty tensor, mode
// over an empty dim: the lowering would then return an identity that does not
// exist) or raise a different error (amax's "reducing over zero-size
// dimension"). Each check raises CPU's exception type and message.
//
// Reductions without an identity (max / min / amax / amin / argmax / argmin /
// aminmax / kthvalue / median / nanmedian / mode): CPU refuses an empty input
// when no dim is given, and an empty reduced dim when one is (also where the
// other dims are not empty). median / nanmedian over all elements of an empty
// input give NaN on CPU (no check); scans (cummax / cummin) of an empty input
// give empty outputs (no check).
#include <ATen/WrapDimUtils.h>

#include "meta.h"

namespace torch_tpu {
namespace {

std::optional<size_t> arg_index(const c10::FunctionSchema& schema, const char* name) {
  auto i = schema.argumentIndexWithName(name);
  if (!i) return std::nullopt;
  return (size_t)*i;
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

}  // namespace

void cpu_input_checks(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args) {
  const std::string& n = schema.name();
  if (n.rfind("aten::", 0) != 0) return;
  const std::string op = n.substr(6);
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

}  // namespace torch_tpu
