// Sparse COO tensors on the tpu device (the SparsePrivateUse1 key). A sparse
// tensor here is PyTorch's own SparseTensorImpl holding two ordinary tpu
// tensors, indices (int64, [sparse_dim, nnz]) and values ([nnz, dense...]).
// Most of PyTorch's sparse kernels only rearrange those two and are
// device-generic: they are registered as they are (construction, metadata,
// copies, clone, zero_, to_dense, add/mul/sub wrappers, sparse_mask, mm). The
// few whose CPU and CUDA kernels are device-specific are written here as
// compositions of dense tpu ops on indices and values (coalesce, add.out,
// mul.out, addmm, index_select): the numbers are computed on the device; only
// a data-dependent count (coalesce's unique entries, index_select's matches)
// crosses to the host, as on CUDA.
#include <ATen/native/SparseTensorUtils.h>
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_dimI_native.h>
#include <ATen/ops/_dimV_native.h>
#include <ATen/ops/_embedding_bag_backward_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_to_dense_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/abs_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/cat_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/isinf_native.h>
#include <ATen/ops/isnan_native.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/mv_native.h>
#include <ATen/ops/nan_to_num_native.h>
#include <ATen/ops/narrow_copy_native.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/permute_native.h>
#include <ATen/ops/pow_native.h>
#include <ATen/ops/relu_native.h>
#include <ATen/ops/sgn_native.h>
#include <ATen/ops/sign_native.h>
#include <ATen/ops/sin_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_mask_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/sub_native.h>
#include <ATen/ops/sum_native.h>
#include <ATen/ops/tanh_native.h>
#include <ATen/ops/unsqueeze_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/zero_native.h>
#include <ATen/ops/zeros_native.h>
#include <torch/library.h>

namespace torch_tpu {

void run_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack);  // fallback.cpp

namespace {

using at::Tensor;
using at::sparse::get_sparse_impl;

// Gives `out` (a sparse tensor) these indices and values and sizes.
Tensor& set_sparse(Tensor& out, c10::IntArrayRef sizes, int64_t sparse_dim, const Tensor& indices,
                   const Tensor& values, bool coalesced) {
  auto* impl = get_sparse_impl(out);
  impl->raw_resize_(sparse_dim, values.dim() - 1, sizes);
  impl->set_indices_and_values_unsafe(indices, values);
  return out._coalesced_(coalesced);
}

// Each entry's linear position over the sparse dims (row-major, as CPU's
// flatten_indices), int64 [nnz].
Tensor flat_positions(const Tensor& indices, c10::IntArrayRef sizes) {
  Tensor flat = indices.select(0, 0);
  for (int64_t d = 1; d < indices.size(0); d++) flat = flat.mul(sizes[d]).add(indices.select(0, d));
  return flat;
}

// The inverse of flat_positions: [sparse_dim, n].
Tensor unflat_positions(const Tensor& flat, c10::IntArrayRef sizes, int64_t sparse_dim) {
  std::vector<Tensor> rows(sparse_dim);
  Tensor rest = flat;
  for (int64_t d = sparse_dim - 1; d > 0; d--) {
    rows[d] = rest.remainder(sizes[d]);
    rest = rest.div(sizes[d], "floor");
  }
  rows[0] = rest;
  return at::stack(rows);
}

// coalesce: entries sorted by position, duplicates summed. Sorting the
// positions, marking where a new position starts, and numbering the runs (a
// cumulative sum) gives each entry its output row; the values add there with
// index_add (in the device's order: float sums may differ from CPU's in the
// last bits). One host read: the number of distinct positions.
Tensor tpu_coalesce(const Tensor& self) {
  const int64_t nnz = self._nnz();
  const int64_t sd = self.sparse_dim();
  // fewer than two entries are coalesced already
  if (nnz < 2) return at::native::clone_sparse(self)._coalesced_(true);
  Tensor indices = self._indices(), values = self._values();
  c10::IntArrayRef sizes = self.sizes();
  Tensor out = at::native::empty_like_sparse_coo(self);
  if (sd == 0)  // every entry is at the one position
    return set_sparse(out, sizes, 0, indices.slice(1, 0, 1).clone(), values.sum(0, true), true);
  Tensor flat = flat_positions(indices, sizes);
  auto [sorted, perm] = flat.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false);
  Tensor starts = at::cat({at::ones({1}, sorted.options().dtype(at::kLong)),
                           sorted.slice(0, 1).ne(sorted.slice(0, 0, -1)).to(at::kLong)});
  Tensor run = starts.cumsum(0).sub(1);
  const int64_t n = run.select(0, -1).item<int64_t>() + 1;
  std::vector<int64_t> vshape = values.sizes().vec();
  vshape[0] = n;
  Tensor new_values = at::zeros(vshape, values.options()).index_add_(0, run, values.index_select(0, perm));
  Tensor new_flat = at::zeros({n}, sorted.options()).index_copy_(0, run, sorted);
  Tensor new_indices = unflat_positions(new_flat, sizes, sd);
  return set_sparse(out, sizes, sd, new_indices, new_values, true);
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  TORCH_CHECK(a.device() == b.device(), "Expected all tensors to be on the same device, but found at least two "
              "devices, ", a.device(), " and ", b.device(), "! (", op, ")");
}

// add(dense, sparse) -> dense: the values, times alpha, accumulate into a
// copy of the dense tensor at their positions (index_put_ with accumulate).
Tensor& add_dense_sparse(const Tensor& dense, const Tensor& sparse, const c10::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(dense.sizes().equals(sparse.sizes()), "add: expected 'self' and 'other' to have same size, but "
              "self has size ", dense.sizes(), " while other has size ", sparse.sizes(),
              " (FYI: dense-sparse addition does not currently support broadcasting)");
  check_same_device(dense, sparse, "add");
  auto common = at::promoteTypes(dense.scalar_type(), sparse.scalar_type());
  TORCH_CHECK(at::canCast(common, out.scalar_type()), "Can't convert result type ", common, " to output ",
              out.scalar_type(), " in add operation");
  TORCH_CHECK(!out.is_sparse(), "add(dense, sparse): expected a dense 'out'");
  const bool in_place = out.is_same(dense) && dense.scalar_type() == common;
  Tensor acc = in_place ? out : dense.to(common, /*non_blocking=*/false, /*copy=*/true);
  if (sparse._nnz() > 0) {
    Tensor values = sparse._values().to(common);
    if (!(alpha.isIntegral(true) && alpha.toLong() == 1)) values = values.mul(alpha);
    Tensor indices = sparse._indices();
    c10::List<std::optional<Tensor>> where;
    for (int64_t d = 0; d < sparse.sparse_dim(); d++) where.push_back(indices.select(0, d));
    acc.index_put_(where, values, /*accumulate=*/true);
  }
  if (in_place) return out;
  if (!out.is_same(dense)) out.resize_(dense.sizes());
  return out.copy_(acc);
}

// add(sparse, sparse) -> sparse: the two lists of entries, concatenated
// (uncoalesced; CUDA's choice, which needs no host read: grad accumulation
// adds sparse gradients this way). An empty operand leaves the other's
// coalescedness.
Tensor& add_sparse_sparse(const Tensor& self, const Tensor& other, const c10::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(self.sizes().equals(other.sizes()), "add: expected sizes of 'self' and 'other' to match, but ",
              self.sizes(), " != ", other.sizes());
  TORCH_CHECK(self.sparse_dim() == other.sparse_dim(), "add: expected 'self' and 'other' to have same "
              "sparse dimensions, but got ", self.sparse_dim(), " and ", other.sparse_dim());
  TORCH_CHECK(self.dense_dim() == other.dense_dim(), "add: expected 'self' and 'other' to have same dense "
              "dimensions, but got ", self.dense_dim(), " and ", other.dense_dim());
  check_same_device(self, other, "add");
  TORCH_CHECK(out.is_sparse(), "add(sparse, sparse): expected a sparse 'out'");
  auto common = at::promoteTypes(self.scalar_type(), other.scalar_type());
  TORCH_CHECK(at::canCast(common, out.scalar_type()), "Can't convert result type ", common, " to output ",
              out.scalar_type(), " in add operation");
  Tensor ov = other._values().to(common);
  if (!(alpha.isIntegral(true) && alpha.toLong() == 1)) ov = ov.mul(alpha);
  const bool coalesced = (self._nnz() == 0 && other.is_coalesced()) || (other._nnz() == 0 && self.is_coalesced());
  Tensor indices = at::cat({self._indices(), other._indices()}, 1);
  Tensor values = at::cat({self._values().to(common), ov}, 0).to(out.scalar_type());
  std::vector<int64_t> sizes = self.sizes().vec();
  return set_sparse(out, sizes, self.sparse_dim(), indices, values, coalesced);
}

Tensor& tpu_sparse_add_out(const Tensor& self, const Tensor& other, const c10::Scalar& alpha, Tensor& out) {
  if (!self.is_sparse()) return add_dense_sparse(self, other, alpha, out);
  TORCH_CHECK(other.is_sparse(), "add(sparse, dense) is not supported. Use add(dense, sparse) instead.");
  return add_sparse_sparse(self, other, alpha, out);
}

// mul of two sparse tensors of one size: the entries at positions both hold
// (CPU's intersection), sorted. The positions of both, sorted together
// (stably: self's first), meet as equal neighbours; their count is the host
// read.
Tensor& mul_sparse_sparse(const Tensor& a_in, const Tensor& b_in, Tensor& out) {
  TORCH_CHECK(a_in.sizes().equals(b_in.sizes()), "mul: expected 'self' and 'other' to have same sizes when both "
              "are sparse, but ", a_in.sizes(), " != ", b_in.sizes());
  check_same_device(a_in, b_in, "mul");
  auto common = at::promoteTypes(a_in.scalar_type(), b_in.scalar_type());
  TORCH_CHECK(at::canCast(common, out.scalar_type()), "Can't convert result type ", common, " to output ",
              out.scalar_type(), " in mul operation");
  std::vector<int64_t> sizes = a_in.sizes().vec();
  const int64_t sd = a_in.sparse_dim();
  const bool coalesced_in = a_in.is_coalesced() && b_in.is_coalesced();  // before an in-place result changes it
  Tensor a = a_in.coalesce(), b = b_in.coalesce();
  const int64_t na = a._nnz(), nb = b._nnz();
  Tensor ai = a._indices(), bi = b._indices();
  if (na == 0 || nb == 0 || sd == 0) {
    Tensor vals = (na && nb) ? a._values().to(common).mul(b._values().to(common))
                             : at::empty({0}, a._values().options().dtype(common));
    if (!(na && nb)) {
      std::vector<int64_t> vs = a._values().sizes().vec();
      vs[0] = 0;
      vals = vals.reshape(vs);
    }
    Tensor idx = (na && nb) ? ai.clone() : at::empty({sd, 0}, ai.options());
    return set_sparse(out, sizes, sd, idx, vals.to(out.scalar_type()), true);
  }
  Tensor all = at::cat({flat_positions(ai, sizes), flat_positions(bi, sizes)});
  auto [sorted, perm] = all.sort(/*stable=*/true, 0, false);
  Tensor at_pos = sorted.slice(0, 1).eq(sorted.slice(0, 0, -1)).nonzero().squeeze(1);
  Tensor pa = perm.index_select(0, at_pos), pb = perm.index_select(0, at_pos.add(1)).sub(na);
  Tensor vals = a._values().to(common).index_select(0, pa).mul(b._values().to(common).index_select(0, pb));
  // sorted and unique, but marked coalesced only where CPU's is (both operands coalesced)
  return set_sparse(out, sizes, sd, ai.index_select(1, pa), vals.to(out.scalar_type()),
                    coalesced_in);
}

// mul with a sparse operand: by a 0-dim tensor (a Scalar), by a dense
// tensor of the sparse one's size (the dense values at the sparse entries:
// what sparse_mask and SparseAdam use), keeping the sparse entries; or of two
// sparse tensors (above).
Tensor& tpu_sparse_mul_out(const Tensor& self, const Tensor& other, Tensor& out) {
  TORCH_CHECK(out.is_sparse(), "mul: expected a sparse 'out'");
  const bool both = self.is_sparse() && other.is_sparse();
  if (both && self.dim() > 0 && other.dim() > 0) return mul_sparse_sparse(self, other, out);
  const Tensor& s = (self.is_sparse() && !(both && self.dim() == 0)) ? self : other;
  const Tensor& d = s.is_same(self) ? other : self;
  Tensor factor = d.is_sparse() ? d.coalesce()._values().sum() : d;
  if (factor.dim() > 0) {
    TORCH_CHECK(factor.sizes().equals(s.sizes()), "mul(sparse, dense) on the tpu device needs operands of "
                "the same size (or a 0-dim one), but got ", s.sizes(), " and ", factor.sizes());
    check_same_device(factor, s, "mul");
    c10::List<std::optional<Tensor>> where;
    for (int64_t dd = 0; dd < s.sparse_dim(); dd++) where.push_back(s._indices().select(0, dd));
    factor = s._nnz() > 0 ? factor.index(where) : at::empty(s._values().sizes(), factor.options());
  } else if (!factor.is_cpu()) {
    check_same_device(factor, s, "mul");
  }
  auto common = at::result_type(self, other);
  TORCH_CHECK(at::canCast(common, out.scalar_type()), "Can't convert result type ", common, " to output ",
              out.scalar_type(), " in mul operation");
  Tensor values = s._values().to(common).mul(factor.to(common)).to(out.scalar_type());
  const bool coalesced = s.is_coalesced();
  Tensor indices = out.is_same(s) ? s._indices() : s._indices().clone();
  std::vector<int64_t> sizes = s.sizes().vec();
  return set_sparse(out, sizes, s.sparse_dim(), indices, values, coalesced);
}

// addmm(t, sparse [n, m], dense [m, p]) = beta * t + alpha * sparse @ dense:
// each entry (i, j, v) adds v * dense[j] to row i (index_add).
Tensor& tpu_sparse_addmm_out(const Tensor& t, const Tensor& sparse, const Tensor& dense, const c10::Scalar& beta,
                             const c10::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(sparse.is_sparse() && !dense.is_sparse() && !t.is_sparse(),
              "addmm on the tpu device: expected a sparse mat1 and a dense self and mat2");
  TORCH_CHECK(sparse.sparse_dim() == 2, "addmm: matrices expected, got ", sparse.sparse_dim(), "D tensor");
  TORCH_CHECK(sparse.dense_dim() == 0, "addmm: scalar values expected, got ", sparse.dense_dim(),
              "D values");
  TORCH_CHECK(dense.dim() == 2, "addmm: matrices expected, got ", dense.dim(), "D tensor");
  TORCH_CHECK(sparse.size(1) == dense.size(0), "addmm: Argument #3 (dense): Expected dim 0 size ",
              sparse.size(1), ", got ", dense.size(0));
  check_same_device(sparse, dense, "addmm");
  check_same_device(t, dense, "addmm");
  const int64_t n = sparse.size(0), p = dense.size(1);
  Tensor tb = t.expand({n, p});
  Tensor prod = at::zeros({n, p}, dense.options());
  if (sparse._nnz() > 0 && p > 0) {
    Tensor idx = sparse._indices();
    Tensor rows = dense.index_select(0, idx.select(0, 1)).mul(sparse._values().to(dense.scalar_type()).unsqueeze(1));
    prod.index_add_(0, idx.select(0, 0), rows);
  }
  // beta == 0: t is not read (CPU ignores its NaNs)
  Tensor r = beta.toComplexDouble() == 0.0 ? prod.mul(alpha) : at::add(tb.mul(beta), prod.mul(alpha));
  if (!out.is_same(t)) out.resize_({n, p});
  return out.copy_(r);
}

Tensor tpu_sparse_addmm(const Tensor& t, const Tensor& sparse, const Tensor& dense, const c10::Scalar& beta,
                        const c10::Scalar& alpha) {
  Tensor out = at::empty({0}, dense.options());
  return tpu_sparse_addmm_out(t, sparse, dense, beta, alpha, out);
}

Tensor& tpu_sparse_addmm_(Tensor& t, const Tensor& sparse, const Tensor& dense, const c10::Scalar& beta,
                          const c10::Scalar& alpha) {
  return tpu_sparse_addmm_out(t, sparse, dense, beta, alpha, t);
}

// index_select(sparse, dim, index): along a sparse dim, output position k
// takes every entry whose index there is index[k] (the matches found on the
// device as an [index, nnz] comparison, so memory grows as their product;
// their count is a host read); along a dense dim, the values'.
Tensor tpu_sparse_index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  Tensor idx = index.reshape({-1}).to(self.device(), at::kLong);
  const int64_t sd = self.sparse_dim();
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes[dim] = idx.size(0);
  if (idx.numel() > 0) {  // CPU's bounds (one host read of min and max); negative indices count from the end
    const int64_t n = self.size(dim);
    auto [lo_t, hi_t] = at::aminmax(idx);
    Tensor both = at::stack({lo_t, hi_t}).cpu();
    const int64_t lo = both[0].item<int64_t>(), hi = both[1].item<int64_t>();
    TORCH_CHECK_INDEX(lo >= -n && hi < n, "index_select(): index contains ", lo < -n ? lo : hi,
                      " that is out of range for tensor of size ", self.sizes(), " at dimension ", dim);
    if (lo < 0) idx = at::where(idx.lt(0), idx.add(n), idx);
  }
  Tensor out = at::native::empty_like_sparse_coo(self);
  if (dim >= sd) {
    Tensor values = self._values().index_select(dim - sd + 1, idx);
    return set_sparse(out, sizes, sd, self._indices().clone(), values, self.is_coalesced());
  }
  Tensor indices = self._indices(), values = self._values();
  // match[k, e]: entry e's index along dim is index[k]
  Tensor match = idx.unsqueeze(1).eq(indices.select(0, dim).unsqueeze(0));
  Tensor pairs = match.nonzero();  // [m, 2]: (k, e), k ascending
  Tensor k = pairs.select(1, 0), e = pairs.select(1, 1);
  Tensor new_indices = indices.index_select(1, e).clone();
  new_indices.select(0, dim).copy_(k);
  return set_sparse(out, sizes, sd, new_indices, values.index_select(0, e), false);
}

// _embedding_bag_backward with sparse=True (nn.EmbeddingBag(sparse=True)):
// PyTorch's own implementation, which builds the gradient as a sparse tensor
// from dense ops (the rows of grad per index, scaled for mean bags). The dense
// case stays the core's one lowering.
void embedding_bag_backward(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t base = stack->size() - schema.arguments().size();
  auto arg = [&](const char* name) -> c10::IValue& { return (*stack)[base + *schema.argumentIndexWithName(name)]; };
  if (!arg("sparse").toBool()) return run_fallback(op, ks, stack);
  std::optional<Tensor> psw = arg("per_sample_weights").toOptional<Tensor>();
  Tensor r = at::native::_embedding_bag_backward_symint(
      arg("grad").toTensor(), arg("indices").toTensor(), arg("offsets").toTensor(), arg("offset2bag").toTensor(),
      arg("bag_size").toTensor(), arg("maximum_indices").toTensor(), arg("num_weights").toSymInt(),
      arg("scale_grad_by_freq").toBool(), arg("mode").toInt(), true, psw, arg("padding_idx").toInt());
  torch::jit::drop(*stack, schema.arguments().size());
  stack->push_back(std::move(r));
}

}  // namespace

// The device-generic kernels are PyTorch's own (at::native); the rest above.
TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_sparse_coo_tensor_with_dims", at::native::new_with_dims_sparse);
  m.impl("_sparse_coo_tensor_with_dims_and_tensors", at::native::new_with_dims_and_tensor_sparse_symint);
  m.impl("empty.memory_format", at::native::empty_sparse);
  m.impl("empty_like", at::native::empty_like_sparse_coo);
  m.impl("sparse_resize_", at::native::sparse_resize_);
  m.impl("sparse_resize_and_clear_", at::native::sparse_resize_and_clear_);
  m.impl("sparse_dim", at::native::sparse_dim_sparse);
  m.impl("_dimI", at::native::sparse_dim_sparse);
  m.impl("dense_dim", at::native::dense_dim_sparse);
  m.impl("_dimV", at::native::dense_dim_sparse);
  m.impl("_nnz", at::native::_nnz_sparse);
  m.impl("is_coalesced", at::native::is_coalesced_sparse);
  m.impl("_coalesced_", at::native::_coalesced_sparse_);
  m.impl("_indices", at::native::_indices_sparse);
  m.impl("_values", at::native::_values_sparse);
  m.impl("indices", at::native::indices_sparse);
  m.impl("values", at::native::values_sparse);
  m.impl("copy_sparse_to_sparse_", at::native::copy_sparse_);
  m.impl("copy_", at::native::copy_sparse_wrapper_);
  m.impl("clone", at::native::clone_sparse);
  m.impl("zero_", at::native::zero_sparse_);
  m.impl("zeros.out", at::native::zeros_sparse_out);
  m.impl("_to_dense", at::native::sparse_to_dense);
  m.impl("_to_sparse.sparse_dim", static_cast<Tensor (*)(const Tensor&, int64_t)>(at::native::sparse_coo_to_sparse));
  m.impl("_to_sparse", static_cast<Tensor (*)(const Tensor&, std::optional<at::Layout>, at::OptionalIntArrayRef,
                                              std::optional<int64_t>)>(at::native::sparse_coo_to_sparse));
  m.impl("sparse_mask", at::native::sparse_mask);
  m.impl("sum", at::native::sum_coo);
  m.impl("add.Tensor", at::native::add_sparse);
  m.impl("add_.Tensor", at::native::add_sparse_);
  m.impl("add.out", tpu_sparse_add_out);
  m.impl("sub.Tensor", at::native::sub_sparse);
  m.impl("sub_.Tensor", at::native::sub_sparse_);
  m.impl("sub.out", at::native::sub_out_sparse);
  m.impl("mul.Tensor", at::native::mul_sparse);
  m.impl("mul_.Tensor", at::native::mul_sparse_);
  m.impl("mul.out", tpu_sparse_mul_out);
  m.impl("div.Tensor", static_cast<Tensor (*)(const Tensor&, const Tensor&)>(at::native::div_sparse));
  m.impl("div_.Tensor", static_cast<Tensor& (*)(Tensor&, const Tensor&)>(at::native::div_sparse_));
  m.impl("div.out", static_cast<Tensor& (*)(const Tensor&, const Tensor&, Tensor&)>(at::native::div_out_sparse_zerodim));
  m.impl("neg", at::native::neg_sparse);
  m.impl("neg_", at::native::neg_sparse_);
  m.impl("neg.out", at::native::neg_out_sparse);
  // elementwise on the coalesced values (zero-preserving ops)
#define TT_SPARSE_UNARY(op)                  \
  m.impl(#op, at::native::op##_sparse);      \
  m.impl(#op "_", at::native::op##_sparse_); \
  m.impl(#op ".out", at::native::op##_sparse_out);
  TT_SPARSE_UNARY(abs)
  TT_SPARSE_UNARY(sgn)
  TT_SPARSE_UNARY(sign)
  TT_SPARSE_UNARY(sqrt)
  TT_SPARSE_UNARY(tanh)
  TT_SPARSE_UNARY(sin)
  TT_SPARSE_UNARY(nan_to_num)
#undef TT_SPARSE_UNARY
  m.impl("relu", at::native::relu_sparse);
  m.impl("relu_", at::native::relu_sparse_);
  m.impl("pow.Tensor_Scalar", at::native::pow_sparse_scalar);
  m.impl("pow.Tensor_Scalar_out", at::native::pow_out_sparse_scalar);
  m.impl("isnan", at::native::isnan_sparse);
  m.impl("isinf", at::native::isinf_sparse);
  // shape: new dims, permuted dims, pieces, concatenation
  m.impl("unsqueeze", at::native::unsqueeze_sparse);
  m.impl("permute", at::native::permute_sparse_coo);
  m.impl("narrow_copy", at::native::narrow_copy_sparse);
  m.impl("cat", at::native::cat_sparse);
  m.impl("_coalesce", tpu_coalesce);
  m.impl("mm", at::native::_sparse_mm);
  m.impl("addmm", tpu_sparse_addmm);
  m.impl("addmm_", tpu_sparse_addmm_);
  m.impl("addmm.out", tpu_sparse_addmm_out);
  m.impl("mv", at::native::mv_sparse);
  m.impl("index_select", tpu_sparse_index_select);
}

// Tensor.to_sparse() of a dense tpu tensor: PyTorch's generic conversion
// (nonzero, then the values at those positions); sparse embedding-bag gradients.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_to_sparse.sparse_dim", static_cast<Tensor (*)(const Tensor&, int64_t)>(at::native::dense_to_sparse));
  m.impl("_to_sparse", static_cast<Tensor (*)(const Tensor&, std::optional<at::Layout>, at::OptionalIntArrayRef,
                                              std::optional<int64_t>)>(at::native::dense_to_sparse));
  m.impl("_embedding_bag_backward", torch::CppFunction::makeFromBoxedFunction<&embedding_bag_backward>());
}

}  // namespace torch_tpu
