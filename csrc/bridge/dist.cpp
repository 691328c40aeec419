// The tpu_dist c10d backend (torch_tpu/distributed.py registers it). PyTorch
// dispatches the collectives of `tpu` tensors (dist.*, DDP's reducer, the
// functional collectives of DTensor) to a C++ c10d::Backend: a Python object
// cannot be one, hence this file.
//
// On the CPU plugins, which have no collectives across processes, the data is
// staged through the host: device -> host copy -> the wrapped host backend
// (gloo, created by the Python side over the same store) -> device. Every
// collective first checks its arguments on each rank (the output forms the
// c10d docs give), then agrees on its signature across ranks (op, dtype,
// element count, and whether every rank's arguments were valid) through the
// host backend, so that a mismatch (ranks passing tensors of different
// shapes) or one rank's wrong arguments raise an error on every rank at once
// instead of a hang. Work objects are completed when returned: the host copy is a sync
// point anyway (Fused Eager flushes there, as at any host read).
//
// Where the PJRT client spans the processes (GPU plugins: init_process_group
// before the device's first use opens it with node_id/num_nodes and the c10d
// store as its key-value store, see set_distributed), all_reduce, broadcast,
// reduce, all_gather, reduce_scatter and even all_to_all run as StableHLO
// collectives on the devices (tt_runtime_collective): the data never leaves
// them, and the work is asynchronous like any op. The rest (gather, scatter,
// point to point, uneven all_to_all and all_gather, bitwise reduce ops,
// complex dtypes) stays on the host path.
// TORCH_TPU_DIST_COLLECTIVES=device also takes that path where a group's
// members are all in this process (a group of one on the CPU plugin).
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/csrc/utils/pybind.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "bridge.h"
#include "dist.h"
#include "meta.h"

namespace py = pybind11;

namespace torch_tpu {
namespace {

using c10d::AllreduceOptions;
using c10d::ReduceOp;
using c10d::Work;
using namespace dist;  // dist.h: op codes, work objects, reduce ops, the store

std::string shape_of(const at::Tensor& t) { return c10::str(t.scalar_type(), t.sizes()); }

class TpuDistBackend : public c10d::Backend {
 public:
  // `host`: the backend that moves host tensors (gloo); shared, kept alive here.
  // `mode`: kHost, kDevice (checked by the caller), or kAuto: the device
  // path where the runtime's client spans the processes, decided at the
  // first collective (or collectives_path()), which starts the runtime.
  enum Mode { kHost = 0, kAuto = 1, kDevice = 2 };
  TpuDistBackend(int rank, int size, c10::intrusive_ptr<c10d::Backend> host, int mode)
      : c10d::Backend(rank, size), host_(std::move(host)), mode_(mode) {
    TORCH_CHECK(mode >= kHost && mode <= kDevice, "tpu_dist: mode ", mode);
  }

  const std::string getBackendName() const override { return "tpu_dist"; }
  bool device_path() {
    std::lock_guard<std::mutex> lk(path_mu_);
    if (path_ < 0) {
      if (mode_ != kAuto) {
        path_ = mode_ == kDevice;
      } else {
        std::string why = distributed_why();  // starts the runtime
        path_ = why.empty();
        if (!path_ && getSize() > 1 && std::string(tt_runtime_info(runtime())->platform_name) != "cpu")
          TORCH_WARN("tpu_dist: the collectives of this group go through the host (", why, "); call "
                     "init_process_group before the first use of the tpu device for collectives on the devices");
      }
    }
    return path_ == 1;
  }

  // Sequence numbers (c10d's ProcessGroupWrapper, TORCH_DISTRIBUTED_DEBUG=
  // DETAIL, puts one in each collective's fingerprint): the count of
  // collectives this rank entered, from 0 at creation on every rank, so the
  // ranks agree without an exchange. Point to point ops do not count (not
  // every rank takes part).
  void setSequenceNumberForGroup() override { seq_ = 0; }
  uint64_t getSequenceNumberForGroup() override { return seq_.load(); }

  c10::intrusive_ptr<Work> broadcast(std::vector<at::Tensor>& ts, const c10d::BroadcastOptions& o) override {
    seq_++;
    std::string err = tpu_error(ts, kBroadcast);
    if (err.empty()) err = root_error(kBroadcast, o.rootRank);
    if (!err.empty()) refuse(kBroadcast, err);
    if (on_device(ts, kBroadcast)) {
      for (auto& t : ts) device_op(TT_COLL_BROADCAST, TT_COLL_SUM, (int)o.rootRank, t, t, t.numel(), kBroadcast);
      return completed(ts);
    }
    auto h = stage(ts, kBroadcast);
    finish(host_->broadcast(h, o));
    if (getRank() != o.rootRank) unstage(ts, h);
    return completed(ts);
  }

  c10::intrusive_ptr<Work> allreduce(std::vector<at::Tensor>& ts, const AllreduceOptions& o) override {
    seq_++;
    return allreduce_one(ts, o);
  }

  c10::intrusive_ptr<Work> allreduce_coalesced(std::vector<at::Tensor>& ts,
                                               const c10d::AllreduceCoalescedOptions& o) override {
    seq_++;
    for (auto& t : ts) {
      std::vector<at::Tensor> one{t};
      allreduce_one(one, o);
    }
    return completed(ts);
  }

  c10::intrusive_ptr<Work> reduce(std::vector<at::Tensor>& ts, const c10d::ReduceOptions& o) override {
    seq_++;
    std::string err = tpu_error(ts, kReduce);
    if (err.empty() && !ts.empty()) err = rop_error(kReduce, o.reduceOp, ts[0].scalar_type());
    if (err.empty()) err = root_error(kReduce, o.rootRank);
    if (!err.empty()) refuse(kReduce, err);
    bool premul = o.reduceOp == ReduceOp::PREMUL_SUM;
    if (on_device(ts, kReduce, o.reduceOp)) {
      for (auto& t : ts) {
        at::Tensor s = premul ? t * premul_factor(o.reduceOp) : t;  // a non-root's t stays as it was
        device_op(TT_COLL_REDUCE, coll_op(o.reduceOp), (int)o.rootRank, s, s, s.numel(), kReduce);
        if (premul && getRank() == o.rootRank) t.copy_(s);
      }
      return completed(ts);
    }
    auto h = stage(ts, kReduce, o.reduceOp, false);  // gloo may use a non-root's buffer as scratch
    if (premul)
      for (auto& x : h) x.mul_(premul_factor(o.reduceOp));
    c10d::ReduceOptions ho = o;
    ho.reduceOp = host_rop(o.reduceOp);
    finish(host_->reduce(h, ho));
    if (getRank() == o.rootRank) unstage(ts, h, o.reduceOp);
    return completed(ts);
  }

  // all_gather of a list: equal parts, or uneven ones (each rank's part the
  // size of its input; every rank's list gives all sizes), on the host path
  // padded to the largest part.
  c10::intrusive_ptr<Work> allgather(std::vector<std::vector<at::Tensor>>& outs, std::vector<at::Tensor>& ins,
                                     const c10d::AllgatherOptions& o) override {
    seq_++;
    std::string err;
    if (ins.size() != 1 || outs.size() != 1 || (int)outs[0].size() != getSize())
      err = c10::str("tpu_dist all_gather: one input and a list of world_size (", getSize(),
                     ") outputs expected, got ", ins.size(), " inputs and ", outs.empty() ? 0 : outs[0].size(),
                     " outputs");
    if (err.empty()) err = tpu_error(ins, kAllgather);
    if (err.empty()) err = tpu_error(outs[0], kAllgather);
    for (size_t r = 0; err.empty() && r < outs[0].size(); r++)
      if (outs[0][r].scalar_type() != ins[0].scalar_type())
        err = c10::str("tpu_dist all_gather: output ", r, " is ", shape_of(outs[0][r]), ", not of the input's dtype ",
                       ins[0].scalar_type());
    if (err.empty() && outs[0][getRank()].numel() != ins[0].numel())
      err = c10::str("tpu_dist all_gather: this rank's output (index ", getRank(), ") must hold the input's ",
                     ins[0].numel(), " elements; got ", shape_of(outs[0][getRank()]), " for ", shape_of(ins[0]));
    if (!err.empty()) refuse(kAllgather, err);
    const at::Tensor& in = ins[0];
    std::vector<at::Tensor>& list = outs[0];
    int64_t total = 0, most = 0;
    for (const auto& t : list) {
      total += t.numel();
      most = std::max(most, t.numel());
    }
    if (total == in.numel() * getSize() && most == in.numel() && on_device(ins, kAllgather)) {
      at::Tensor all = at::empty({in.numel() * getSize()}, in.options());
      device_op(TT_COLL_ALL_GATHER, TT_COLL_SUM, 0, in, all, in.numel(), kAllgather);
      for (int r = 0; r < getSize(); r++)
        list[r].copy_(all.narrow(0, r * in.numel(), in.numel()).view(list[r].sizes()));
      return completed(list);
    }
    // the ranks agree on the total and the padded size: equal buffers in gloo
    agree(kAllgather, in.scalar_type(), total, most);
    std::vector<at::Tensor> hi{buf(0, {most}, in.scalar_type())};
    hi[0].narrow(0, 0, in.numel()).view(in.sizes()).copy_(in);
    std::vector<std::vector<at::Tensor>> ho(1);
    for (int r = 0; r < getSize(); r++) ho[0].push_back(buf(kOutSlot + r, {most}, in.scalar_type()));
    finish(host_->allgather(ho, hi, o));
    for (int r = 0; r < getSize(); r++) list[r].copy_(ho[0][r].narrow(0, 0, list[r].numel()).view(list[r].sizes()));
    return completed(list);
  }

  c10::intrusive_ptr<Work> _allgather_base(at::Tensor& out, at::Tensor& in, const c10d::AllgatherOptions& o) override {
    seq_++;
    return allgather_base_one(out, in, o);
  }

  c10::intrusive_ptr<Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                                           const c10d::AllgatherOptions& o) override {
    seq_++;
    if (outs.size() != ins.size())
      refuse(kAllgatherBase, c10::str("tpu_dist all_gather_into_tensor_coalesced: ", outs.size(), " outputs for ",
                                      ins.size(), " inputs"));
    for (size_t i = 0; i < ins.size(); i++) allgather_base_one(outs[i], ins[i], o);
    return completed(outs);
  }

  c10::intrusive_ptr<Work> gather(std::vector<std::vector<at::Tensor>>& outs, std::vector<at::Tensor>& ins,
                                  const c10d::GatherOptions& o) override {
    seq_++;
    bool root = getRank() == o.rootRank;
    std::string err = root_error(kGather, o.rootRank);
    if (err.empty() && ins.size() != 1) err = c10::str("tpu_dist gather: one input expected, got ", ins.size());
    if (err.empty()) err = tpu_error(ins, kGather);
    if (err.empty() && root && (outs.size() != 1 || (int)outs[0].size() != getSize()))
      err = c10::str("tpu_dist gather: the destination rank needs a list of world_size (", getSize(),
                     ") outputs, got ", outs.empty() ? 0 : outs[0].size());
    if (err.empty() && !root && !(outs.empty() || (outs.size() == 1 && outs[0].empty())))
      err = "tpu_dist gather: only the destination rank passes outputs";
    if (err.empty() && root) err = list_error(outs[0], ins[0], kGather, "input");
    if (!err.empty()) refuse(kGather, err);
    const at::Tensor& in = ins[0];
    agree(kGather, in.scalar_type(), in.numel());
    std::vector<at::Tensor> hi{host_input(in).reshape({-1})};
    std::vector<std::vector<at::Tensor>> ho;
    if (root) {
      ho.emplace_back();
      for (int r = 0; r < getSize(); r++) ho[0].push_back(buf(kOutSlot + r, {in.numel()}, in.scalar_type()));
    }
    finish(host_->gather(ho, hi, o));
    if (root)
      for (int r = 0; r < getSize(); r++) outs[0][r].copy_(ho[0][r].view(outs[0][r].sizes()));
    return completed(flat(outs));
  }

  c10::intrusive_ptr<Work> scatter(std::vector<at::Tensor>& outs, std::vector<std::vector<at::Tensor>>& ins,
                                   const c10d::ScatterOptions& o) override {
    seq_++;
    bool root = getRank() == o.rootRank;
    std::string err = root_error(kScatter, o.rootRank);
    if (err.empty() && outs.size() != 1) err = c10::str("tpu_dist scatter: one output expected, got ", outs.size());
    if (err.empty()) err = tpu_error(outs, kScatter);
    if (err.empty() && root && (ins.size() != 1 || (int)ins[0].size() != getSize()))
      err = c10::str("tpu_dist scatter: the source rank needs a list of world_size (", getSize(), ") inputs, got ",
                     ins.empty() ? 0 : ins[0].size());
    if (err.empty() && !root && !(ins.empty() || (ins.size() == 1 && ins[0].empty())))
      err = "tpu_dist scatter: only the source rank passes inputs";
    if (err.empty() && root) err = list_error(ins[0], outs[0], kScatter, "output");
    if (!err.empty()) refuse(kScatter, err);
    at::Tensor& out = outs[0];
    agree(kScatter, out.scalar_type(), out.numel());
    std::vector<at::Tensor> ho{buf(kOutSlot, {out.numel()}, out.scalar_type())};
    std::vector<std::vector<at::Tensor>> hi;
    if (root) {
      hi.push_back(to_host(ins[0], kScatter));
      for (auto& t : hi[0]) t = t.reshape({-1});
    }
    finish(host_->scatter(ho, hi, o));
    out.copy_(ho[0].view(out.sizes()));
    return completed(outs);
  }

  // reduce_scatter of a list: an all-reduce of the rank-ordered inputs on the
  // host, of which each rank keeps its own part (gloo's reduce_scatter covers
  // fewer cases; the same bytes as a ring all-reduce). The parts may differ
  // in size: this rank's is the size of its output.
  c10::intrusive_ptr<Work> reduce_scatter(std::vector<at::Tensor>& outs, std::vector<std::vector<at::Tensor>>& ins,
                                          const c10d::ReduceScatterOptions& o) override {
    seq_++;
    std::string err;
    if (outs.size() != 1 || ins.size() != 1 || (int)ins[0].size() != getSize())
      err = c10::str("tpu_dist reduce_scatter: one output and a list of world_size (", getSize(),
                     ") inputs expected, got ", outs.size(), " outputs and ", ins.empty() ? 0 : ins[0].size(),
                     " inputs");
    if (err.empty()) err = tpu_error(outs, kReduceScatter);
    if (err.empty()) err = tpu_error(ins[0], kReduceScatter);
    if (err.empty()) err = rop_error(kReduceScatter, o.reduceOp, outs[0].scalar_type());
    for (size_t r = 0; err.empty() && r < ins[0].size(); r++)
      if (ins[0][r].scalar_type() != outs[0].scalar_type())
        err = c10::str("tpu_dist reduce_scatter: input ", r, " is ", shape_of(ins[0][r]),
                       ", not of the output's dtype ", outs[0].scalar_type());
    if (err.empty() && ins[0][getRank()].numel() != outs[0].numel())
      err = c10::str("tpu_dist reduce_scatter: this rank's input (index ", getRank(), ") must have the output's ",
                     outs[0].numel(), " elements; got ", shape_of(ins[0][getRank()]), " for ", shape_of(outs[0]));
    if (!err.empty()) refuse(kReduceScatter, err);
    std::vector<at::Tensor> parts;
    int64_t offset = 0;
    for (int r = 0; r < getSize(); r++) {
      parts.push_back(ins[0][r].reshape({-1}));
      if (r < getRank()) offset += ins[0][r].numel();
    }
    return reduce_scatter_flat(outs[0], at::cat(parts), offset, o.reduceOp, kReduceScatter, true);
  }

  c10::intrusive_ptr<Work> _reduce_scatter_base(at::Tensor& out, at::Tensor& in,
                                                const c10d::ReduceScatterOptions& o) override {
    seq_++;
    return reduce_scatter_base_one(out, in, o);
  }

  c10::intrusive_ptr<Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                                           const c10d::ReduceScatterOptions& o) override {
    seq_++;
    if (outs.size() != ins.size())
      refuse(kReduceScatterBase, c10::str("tpu_dist reduce_scatter_tensor_coalesced: ", outs.size(),
                                          " outputs for ", ins.size(), " inputs"));
    for (size_t i = 0; i < ins.size(); i++) reduce_scatter_base_one(outs[i], ins[i], o);
    return completed(outs);
  }

  // all_to_all_single: split sizes count rows (dim 0); without them, dim 0
  // divides evenly by the world size. The host backend sees flat buffers
  // with element counts.
  c10::intrusive_ptr<Work> alltoall_base(at::Tensor& out, at::Tensor& in, std::vector<int64_t>& out_splits,
                                         std::vector<int64_t>& in_splits, const c10d::AllToAllOptions& o) override {
    seq_++;
    std::vector<at::Tensor> ins{in}, outs{out};
    std::string err = tpu_error(ins, kAlltoallBase);
    if (err.empty()) err = tpu_error(outs, kAlltoallBase);
    if (err.empty() && (in.dim() == 0 || out.dim() == 0))
      err = c10::str("tpu_dist all_to_all_single: tensors of at least one dimension expected, got ", shape_of(out),
                     " for ", shape_of(in));
    if (err.empty() && in.scalar_type() != out.scalar_type())
      err = c10::str("tpu_dist all_to_all_single: input ", shape_of(in), " and output ", shape_of(out),
                     " differ in dtype");
    int64_t row = err.empty() ? c10::multiply_integers(in.sizes().slice(1)) : 0;
    if (err.empty() && row != c10::multiply_integers(out.sizes().slice(1)))
      err = c10::str("tpu_dist all_to_all_single: the input ", shape_of(in), " and the output ", shape_of(out),
                     " must have rows (dim 0) of the same number of elements");
    if (err.empty()) err = splits_error(in_splits, in, "input");
    if (err.empty()) err = splits_error(out_splits, out, "output");
    if (!err.empty()) refuse(kAlltoallBase, err);
    if (out_splits.empty() && in_splits.empty() && in.numel() == out.numel() && on_device(ins, kAlltoallBase)) {
      device_op(TT_COLL_ALL_TO_ALL, TT_COLL_SUM, 0, in, out, in.numel() / getSize(), kAlltoallBase);
      return completed(outs);
    }
    agree(kAlltoallBase, in.scalar_type(), row);
    at::Tensor hi = host_input(in).reshape({-1});
    at::Tensor ho = buf(kOutSlot, {out.numel()}, out.scalar_type());
    std::vector<int64_t> os = element_splits(out_splits, out, row), is = element_splits(in_splits, in, row);
    finish(host_->alltoall_base(ho, hi, os, is, o));
    out.copy_(ho.view(out.sizes()));
    return completed(outs);
  }

  // all_to_all of lists: the inputs as one flat buffer, split by numel.
  c10::intrusive_ptr<Work> alltoall(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                    const c10d::AllToAllOptions& o) override {
    seq_++;
    std::string err;
    if ((int)outs.size() != getSize() || (int)ins.size() != getSize())
      err = c10::str("tpu_dist all_to_all: world_size (", getSize(), ") inputs and outputs expected, got ",
                     ins.size(), " inputs and ", outs.size(), " outputs");
    if (err.empty()) err = tpu_error(ins, kAlltoall);
    if (err.empty()) err = tpu_error(outs, kAlltoall);
    for (size_t i = 0; err.empty() && i < ins.size(); i++)
      if (ins[i].scalar_type() != ins[0].scalar_type() || outs[i].scalar_type() != ins[0].scalar_type())
        err = "tpu_dist all_to_all: every tensor must have one dtype";
    if (!err.empty()) refuse(kAlltoall, err);
    std::vector<int64_t> in_splits, out_splits;
    std::vector<at::Tensor> parts;
    for (auto& t : ins) {
      parts.push_back(t.reshape({-1}));
      in_splits.push_back(t.numel());
    }
    for (auto& t : outs) out_splits.push_back(t.numel());
    agree(kAlltoall, ins[0].scalar_type(), 0);
    at::Tensor all = at::cat(parts);
    at::Tensor hi = host_input(all);
    at::Tensor ho = buf(kOutSlot, {std::accumulate(out_splits.begin(), out_splits.end(), int64_t{0})},
                        all.scalar_type());
    std::vector<int64_t> os = out_splits, is = in_splits;  // gloo may move from its split vectors
    finish(host_->alltoall_base(ho, hi, os, is, o));
    int64_t off = 0;
    for (size_t i = 0; i < outs.size(); i++) {
      outs[i].copy_(ho.narrow(0, off, out_splits[i]).view(outs[i].sizes()));
      off += out_splits[i];
    }
    return completed(outs);
  }

  // Point to point: no signature exchange (two ranks only; gloo checks the
  // byte counts). The work runs on: see StagedWork.
  c10::intrusive_ptr<Work> send(std::vector<at::Tensor>& ts, int dst, int tag) override {
    auto h = to_host(ts, kSend);
    auto w = host_->send(h, dst, tag);
    return c10::make_intrusive<StagedWork>(w, [h] {}, c10d::OpType::SEND, keeper_);
  }

  c10::intrusive_ptr<Work> recv(std::vector<at::Tensor>& ts, int src, int tag) override {
    auto h = host_like(ts, kRecv);
    auto w = host_->recv(h, src, tag);
    return c10::make_intrusive<StagedWork>(w, [ts, h]() mutable { unstage_raw(ts, h); }, c10d::OpType::RECV, keeper_);
  }

  c10::intrusive_ptr<Work> recvAnysource(std::vector<at::Tensor>& ts, int tag) override {
    auto h = host_like(ts, kRecv);
    auto w = host_->recvAnysource(h, tag);
    return c10::make_intrusive<StagedWork>(w, [ts, h]() mutable { unstage_raw(ts, h); },
                                           c10d::OpType::RECVANYSOURCE, keeper_);
  }

  c10::intrusive_ptr<Work> barrier(const c10d::BarrierOptions& o) override {
    seq_++;
    c10d::BarrierOptions ho = o;
    ho.device_ids.clear();
    finish(host_->barrier(ho));
    return completed({});
  }

 private:
  c10::intrusive_ptr<Work> allreduce_one(std::vector<at::Tensor>& ts, const AllreduceOptions& o) {
    const ReduceOp& rop = o.reduceOp;
    std::string err = tpu_error(ts, kAllreduce);
    if (err.empty() && !ts.empty()) err = rop_error(kAllreduce, rop, ts[0].scalar_type());
    if (!err.empty()) refuse(kAllreduce, err);
    bool premul = rop == ReduceOp::PREMUL_SUM;
    if (inlinable(ts, rop) && !device_path()) {  // small: one exchange (see agree)
      at::Tensor data = premul ? ts[0] * premul_factor(rop) : ts[0];
      allreduce_inline(ts[0], data, rop);
      return completed(ts);
    }
    if (on_device(ts, kAllreduce, rop)) {
      for (auto& t : ts) {
        if (premul) t.mul_(premul_factor(rop));
        device_op(TT_COLL_ALL_REDUCE, coll_op(rop), 0, t, t, t.numel(), kAllreduce);
      }
      return completed(ts);
    }
    auto h = stage(ts, kAllreduce, rop);
    if (premul)
      for (auto& x : h) x.mul_(premul_factor(rop));
    AllreduceOptions ho = o;
    ho.reduceOp = host_rop(rop);
    finish(host_->allreduce(h, ho));
    unstage(ts, h, rop);
    return completed(ts);
  }

  // all_gather_into_tensor: the output holds world_size times the input's
  // elements, in any shape (the c10d docs give the concatenation along dim 0
  // and the stack); the host backend sees flat buffers.
  c10::intrusive_ptr<Work> allgather_base_one(at::Tensor& out, at::Tensor& in, const c10d::AllgatherOptions& o) {
    std::vector<at::Tensor> ins{in}, outs{out};
    std::string err = tpu_error(ins, kAllgatherBase);
    if (err.empty()) err = tpu_error(outs, kAllgatherBase);
    if (err.empty() && (out.numel() != in.numel() * getSize() || out.scalar_type() != in.scalar_type())) {
      std::vector<int64_t> stacked{getSize()}, cat = in.sizes().vec();
      stacked.insert(stacked.end(), cat.begin(), cat.end());
      std::string forms = c10::str("stacked ", c10::IntArrayRef(stacked));
      if (!cat.empty()) {
        cat[0] *= getSize();
        forms = c10::str("concatenated ", c10::IntArrayRef(cat), " or ", forms);
      }
      err = c10::str("tpu_dist all_gather_into_tensor: the output must hold world_size (", getSize(),
                     ") times the input's elements, of its dtype (", forms, "); got ", shape_of(out), " for ",
                     shape_of(in));
    }
    if (!err.empty()) refuse(kAllgatherBase, err);
    if (on_device(ins, kAllgatherBase)) {
      device_op(TT_COLL_ALL_GATHER, TT_COLL_SUM, 0, in, out, in.numel(), kAllgatherBase);
      return completed(outs);
    }
    auto h = stage(ins, kAllgatherBase);
    at::Tensor hin = h[0].reshape({-1});
    at::Tensor ho = buf(kOutSlot, {out.numel()}, out.scalar_type());
    finish(host_->_allgather_base(ho, hin, o));
    out.copy_(ho.view(out.sizes()));
    return completed(outs);
  }

  // reduce_scatter_tensor: the input holds world_size times the output's
  // elements in any shape (concatenated along dim 0, or stacked).
  c10::intrusive_ptr<Work> reduce_scatter_base_one(at::Tensor& out, at::Tensor& in,
                                                   const c10d::ReduceScatterOptions& o) {
    std::vector<at::Tensor> ins{in}, outs{out};
    std::string err = tpu_error(ins, kReduceScatterBase);
    if (err.empty()) err = tpu_error(outs, kReduceScatterBase);
    if (err.empty()) err = rop_error(kReduceScatterBase, o.reduceOp, in.scalar_type());
    if (err.empty() && (in.numel() != out.numel() * getSize() || in.scalar_type() != out.scalar_type()))
      err = c10::str("tpu_dist reduce_scatter_tensor: the input must hold world_size (", getSize(),
                     ") times the output's elements, of its dtype (the outputs concatenated or stacked); got ",
                     shape_of(in), " for ", shape_of(out));
    if (!err.empty()) refuse(kReduceScatterBase, err);
    return reduce_scatter_flat(out, in.reshape({-1}), getRank() * out.numel(), o.reduceOp, kReduceScatterBase,
                               false);
  }

  // Reduces `all` (every rank's flat input, of equal sizes) across the ranks;
  // out gets the reduced elements from `offset` on. `scratch`: all may be
  // overwritten (else it may be the caller's input).
  c10::intrusive_ptr<Work> reduce_scatter_flat(at::Tensor& out, const at::Tensor& all, int64_t offset, ReduceOp rop,
                                               int64_t op, bool scratch) {
    std::vector<at::Tensor> a{all}, outs{out};
    int64_t n = out.numel();
    bool premul = rop == ReduceOp::PREMUL_SUM;
    if (on_device(a, op, rop)) {
      at::Tensor src = premul ? all * premul_factor(rop) : all;
      if (all.numel() == n * getSize() && offset == getRank() * n) {
        device_op(TT_COLL_REDUCE_SCATTER, coll_op(rop), 0, src, out, n, op);
      } else {  // uneven parts: all of it reduced, this rank's part kept
        if (!premul && !scratch) src = all.clone();
        device_op(TT_COLL_ALL_REDUCE, coll_op(rop), 0, src, src, src.numel(), op);
        out.copy_(src.narrow(0, offset, n).view(out.sizes()));
      }
      return completed(outs);
    }
    auto h = stage(a, op, rop, scratch);
    if (premul) h[0].mul_(premul_factor(rop));
    AllreduceOptions ao;
    ao.reduceOp = host_rop(rop);
    finish(host_->allreduce(h, ao));
    std::vector<at::Tensor> mine{h[0].narrow(0, offset, n).view(out.sizes())};
    unstage(outs, mine, rop);
    return completed(outs);
  }

  std::string root_error(int64_t op, int64_t root) const {
    if (root >= 0 && root < getSize()) return "";
    return c10::str("tpu_dist ", op_name(op), ": root rank ", root, " is not in the group of ", getSize());
  }

  // "" where a gather's outputs (a scatter's inputs) are world_size tensors
  // of `one`'s dtype and element count.
  std::string list_error(const std::vector<at::Tensor>& list, const at::Tensor& one, int64_t op,
                         const char* what) const {
    std::string err = tpu_error(list, op);
    for (size_t r = 0; err.empty() && r < list.size(); r++)
      if (list[r].numel() != one.numel() || list[r].scalar_type() != one.scalar_type())
        err = c10::str("tpu_dist ", op_name(op), ": every tensor of the list must match the ", what, " (",
                       shape_of(one), "); got ", shape_of(list[r]), " at index ", r);
    return err;
  }

  // "" where split sizes fit t: world_size row counts summing to its dim 0,
  // or none and a dim 0 that divides by the world size.
  std::string splits_error(const std::vector<int64_t>& splits, const at::Tensor& t, const char* what) const {
    if (splits.empty()) {
      if (t.size(0) % getSize() == 0) return "";
      return c10::str("tpu_dist all_to_all_single: without ", what, " split sizes, the ", what, "'s dim 0 (",
                      t.size(0), ") must divide by world_size (", getSize(), "); got ", shape_of(t));
    }
    if ((int)splits.size() != getSize())
      return c10::str("tpu_dist all_to_all_single: ", what, " split sizes need world_size (", getSize(),
                      ") entries, got ", c10::IntArrayRef(splits));
    int64_t sum = 0;
    for (int64_t s : splits) {
      if (s < 0) return c10::str("tpu_dist all_to_all_single: negative ", what, " split size in ", c10::IntArrayRef(splits));
      sum += s;
    }
    if (sum == t.size(0)) return "";
    return c10::str("tpu_dist all_to_all_single: ", what, " split sizes ", c10::IntArrayRef(splits), " sum to ", sum,
                    ", not the ", what, "'s dim 0 (", t.size(0), "); got ", shape_of(t));
  }

  // Split sizes in elements of flat buffers (rows of `row` elements).
  std::vector<int64_t> element_splits(const std::vector<int64_t>& splits, const at::Tensor& t, int64_t row) const {
    if (splits.empty()) return std::vector<int64_t>(getSize(), t.numel() / getSize());
    std::vector<int64_t> r;
    for (int64_t s : splits) r.push_back(s * row);
    return r;
  }

  // Whether this op runs on the devices: a group with device ids, a dtype
  // and reduce op the device collectives take (complex and bitwise ops stay
  // on the host path). Agrees on the signature first, as the host path
  // does; the caller validated the arguments.
  bool on_device(const std::vector<at::Tensor>& ts, int64_t op, ReduceOp rop = ReduceOp::SUM) {
    if (ts.empty() || is_bitwise(rop) || !device_path()) return false;
    check_tpu(ts, op);
    for (const auto& t : ts)
      if (t.is_complex() || t.scalar_type() != ts[0].scalar_type()) return false;
    int64_t numel = 0;
    for (const auto& t : ts) numel += t.numel();
    // the signature exchange also tells every rank's device (its global id)
    int64_t mine = -1;
    TT_CHECK_STATUS(tt_runtime_device_global_id(runtime(), ts[0].device().index(), &mine), "tpu_dist");
    at::Tensor msgs = agree(op, ts[0].scalar_type(), numel, (int64_t)rop, nullptr, mine);
    ids_.resize(getSize());
    for (int r = 0; r < getSize(); r++) {
      std::memcpy(&ids_[r], msgs[r].const_data_ptr<uint8_t>() + 4 * sizeof(int64_t), sizeof(int64_t));
      for (int q = 0; q < r; q++)
        TORCH_CHECK(ids_[q] != ids_[r], "tpu_dist ", op_name(op), ": ranks ", q, " and ", r,
                    " pass tensors on one device (global id ", ids_[r], "); each rank needs its own");
    }
    return true;
  }

  // One collective program on this rank's device: `count` elements per
  // rank as tt_collective_t counts them; in and out of any layout.
  void device_op(tt_coll_kind_t kind, tt_coll_op_t cop, int root, const at::Tensor& in, const at::Tensor& out,
                 int64_t count, int64_t op) {
    if (in.numel() == 0 && out.numel() == 0) return;
    tt_collective_t c;
    std::memset(&c, 0, sizeof(c));
    c.kind = kind;
    c.op = cop;
    c.root = root;
    c.dtype = to_tt_dtype(in.scalar_type());
    c.count = count;
    c.group_size = getSize();
    c.group_ids = ids_.data();
    c.producer = op_name(op);
    tt_view_t vi = to_view(in), vo = to_view(out);
    TT_CHECK_STATUS(tt_runtime_collective(runtime(), &c, &vi, &vo, 1), "tpu_dist");
  }

  static void check_tpu(const std::vector<at::Tensor>& ts, int64_t op) {
    std::string err = tpu_error(ts, op);
    TORCH_CHECK(err.empty(), err);
  }

  static std::vector<at::Tensor> host_like(const std::vector<at::Tensor>& ts, int64_t op) {
    check_tpu(ts, op);
    std::vector<at::Tensor> h;
    for (const auto& t : ts) h.push_back(at::empty(t.sizes(), t.options().device(at::kCPU)));
    return h;
  }

  static void unstage_raw(std::vector<at::Tensor>& ts, std::vector<at::Tensor>& h) {
    for (size_t i = 0; i < ts.size(); i++) ts[i].copy_(h[i]);
  }

  static std::vector<at::Tensor> to_host(const std::vector<at::Tensor>& ts, int64_t op) {
    check_tpu(ts, op);
    std::vector<at::Tensor> h;
    h.reserve(ts.size());
    for (const auto& t : ts) h.push_back(t.cpu().contiguous());
    return h;
  }

  // Signature check, then ts on the host: where `in_place` (the host op may
  // read and write ts' bytes) and the device's memory is host memory (the CPU
  // plugins), the device buffers themselves, no copy (a window: see
  // tt_view_host_window); else copies in reused host buffers.
  std::vector<at::Tensor> stage(const std::vector<at::Tensor>& ts, int64_t op, ReduceOp rop = ReduceOp::SUM,
                                bool in_place = true) {
    check_tpu(ts, op);
    int64_t numel = 0;
    for (const auto& t : ts) numel += t.numel();
    agree(op, ts.empty() ? at::kFloat : ts[0].scalar_type(), numel, (int64_t)rop);
    windows_.clear();
    std::vector<at::Tensor> h;
    for (size_t i = 0; i < ts.size(); i++) {
      at::Tensor w = in_place ? window(ts[i]) : at::Tensor();
      if (w.defined()) {
        windows_.emplace_back(ts[i].unsafeGetTensorImpl(), w.const_data_ptr());
        h.push_back(w);
        continue;
      }
      h.push_back(buf(i, ts[i].sizes(), ts[i].scalar_type()));
      h.back().copy_(ts[i]);  // one copy, straight from the device buffer
    }
    return h;
  }

  // t's bytes in its device buffer as a CPU tensor, or undefined.
  static at::Tensor window(const at::Tensor& t) {
    tt_view_t v = to_view(t);
    void* addr = nullptr;
    TT_CHECK_STATUS(tt_view_host_window(runtime(), &v, &addr), "tpu_dist");
    if (!addr) return {};
    return at::from_blob(addr, t.sizes(), t.strides(), t.options().device(at::kCPU));
  }

  // A read-only input on the host: its window, else a copy in staging slot 0.
  at::Tensor host_input(const at::Tensor& t) {
    at::Tensor h = window(t);
    if (h.defined()) return h;
    h = buf(0, t.sizes(), t.scalar_type());
    h.copy_(t);
    return h;
  }

  bool is_window(const at::Tensor& t, const at::Tensor& h) const {
    for (const auto& [impl, addr] : windows_)
      if (impl == t.unsafeGetTensorImpl() && addr == h.const_data_ptr()) return true;
    return false;
  }

  // Every rank passes (op, dtype, count, reduce op); all must be equal. The
  // message has one fixed size (whatever the op), so that ranks calling
  // different collectives still exchange it safely; it also tells the rank's
  // device (its global id, the device path's program needs every rank's),
  // whether the rank refused its own arguments (`err`: then every rank
  // raises, none waits in a collective the others never start), and
  // carries up to kInline bytes of data: a small all-reduce travels inside
  // it (see allreduce), one exchange instead of two. Returns the ranks'
  // messages ([world, kMsg] bytes).
  static constexpr int64_t kInline = 4096;
  static constexpr int64_t kHead = 6 * (int64_t)sizeof(int64_t);
  static constexpr int64_t kMsg = kHead + kInline;
  at::Tensor agree(int64_t op, at::ScalarType dt, int64_t count, int64_t rop = 0, const at::Tensor* data = nullptr,
                   int64_t device_id = -1, const std::string* err = nullptr) {
    bool bad = err && !err->empty();
    at::Tensor mine = at::zeros({kMsg}, at::kByte);
    int64_t sig[6] = {op, (int64_t)dt, count, rop, device_id, bad ? 1 : 0};
    std::memcpy(mine.mutable_data_ptr(), sig, sizeof(sig));
    if (data && !bad) {
      at::Tensor h = data->cpu().contiguous();
      TORCH_CHECK(h.nbytes() <= (size_t)kInline, "tpu_dist: inline data too large");
      if (h.nbytes()) std::memcpy(mine.mutable_data_ptr<uint8_t>() + kHead, h.const_data_ptr(), h.nbytes());
    }
    std::vector<at::Tensor> in{mine};
    std::vector<std::vector<at::Tensor>> all(1);
    for (int r = 0; r < getSize(); r++) all[0].push_back(at::empty({kMsg}, at::kByte));
    finish(host_->allgather(all, in));
    TORCH_CHECK(!bad, *err);
    std::vector<std::array<int64_t, 6>> v(getSize());
    for (int r = 0; r < getSize(); r++) {
      std::memcpy(v[r].data(), all[0][r].const_data_ptr(), sizeof(sig));
      TORCH_CHECK(!v[r][5], "tpu_dist ", op_name(op), ": rank ", r, " refused its arguments (its error says why), ",
                  "so no rank runs this ", op_name(op));
    }
    for (int r = 0; r < getSize(); r++) {
      if (v[r][0] == op && v[r][1] == (int64_t)dt && v[r][2] == count && v[r][3] == rop) continue;
      TORCH_CHECK(false, "tpu_dist ", op_name(op), ": ranks disagree: rank ", getRank(), " passes ",
                  describe(op, (int64_t)dt, count, rop), ", rank ", r, " passes ",
                  describe(v[r][0], v[r][1], v[r][2], v[r][3]));
    }
    return at::stack(all[0]);
  }

  // Every rank raises `err` (this one) or names this rank (the others, in
  // their own exchange).
  void refuse(int64_t op, const std::string& err) { agree(op, at::kByte, 0, 0, nullptr, -1, &err); }

  // A small all-reduce inside the signature exchange: every rank reduces
  // the gathered inputs itself, in rank order (so all get the same bits).
  static bool inlinable(const std::vector<at::Tensor>& ts, ReduceOp rop) {
    if (ts.size() != 1 || ts[0].nbytes() > (size_t)kInline) return false;
    at::ScalarType dt = ts[0].scalar_type();
    bool integer = at::isIntegralType(dt, false) && dt != at::kBool;
    if (is_bitwise(rop)) return integer;
    return (at::isFloatingType(dt) || integer) &&
           (rop == ReduceOp::SUM || rop == ReduceOp::AVG || rop == ReduceOp::MAX || rop == ReduceOp::MIN ||
            rop == ReduceOp::PRODUCT || rop == ReduceOp::PREMUL_SUM);
  }

  // t = the reduction of every rank's `data` (t itself, or PREMUL_SUM's
  // scaled copy).
  void allreduce_inline(at::Tensor& t, const at::Tensor& data, ReduceOp rop) {
    at::Tensor msgs = agree(kAllreduce, t.scalar_type(), t.numel(), (int64_t)rop, &data);
    int64_t nb = (int64_t)t.nbytes();
    at::Tensor rows = msgs.narrow(1, kHead, nb).contiguous().view(t.scalar_type());  // [world, numel]
    at::Tensor r = rows[0].clone();
    for (int k = 1; k < getSize(); k++) {
      if (rop == ReduceOp::MAX) r = at::maximum(r, rows[k]);
      else if (rop == ReduceOp::MIN) r = at::minimum(r, rows[k]);
      else if (rop == ReduceOp::PRODUCT) r.mul_(rows[k]);
      else if (rop == ReduceOp::BAND) r.bitwise_and_(rows[k]);
      else if (rop == ReduceOp::BOR) r.bitwise_or_(rows[k]);
      else if (rop == ReduceOp::BXOR) r.bitwise_xor_(rows[k]);
      else r.add_(rows[k]);  // SUM, AVG, PREMUL_SUM
    }
    if (rop == ReduceOp::AVG) {
      if (at::isIntegralType(r.scalar_type(), true)) r.div_(getSize(), "trunc");
      else r.div_(getSize());
    }
    t.copy_(r.view(t.sizes()));
  }

  static std::string describe(int64_t op, int64_t dt, int64_t count, int64_t rop) {
    std::string s = std::string(op_name(op)) + " of " + std::to_string(count) + " elements of " +
                    c10::toString((at::ScalarType)dt);
    if (op == kAllreduce || op == kReduce || op == kReduceScatter || op == kReduceScatterBase)
      s += " (reduce op " + std::to_string(rop) + ")";
    if (op == kAllgather && rop) s += " (parts of up to " + std::to_string(rop) + " elements)";
    return s;
  }

  // Host results back into the device tensors (AVG: the sum divided by the
  // world size; integers as integer division, truncating).
  void unstage(std::vector<at::Tensor>& ts, std::vector<at::Tensor>& h, ReduceOp rop = ReduceOp::SUM) {
    for (size_t i = 0; i < ts.size(); i++) {
      if (rop == ReduceOp::AVG) {
        if (at::isIntegralType(h[i].scalar_type(), true)) h[i].div_(getSize(), "trunc");
        else h[i].div_(getSize());
      }
      if (!is_window(ts[i], h[i])) ts[i].copy_(h[i]);
    }
  }

  static std::vector<at::Tensor> flat(const std::vector<std::vector<at::Tensor>>& tss) {
    std::vector<at::Tensor> r;
    for (const auto& ts : tss) r.insert(r.end(), ts.begin(), ts.end());
    return r;
  }

  // Waits for a host work (see Keeper).
  void finish(c10::intrusive_ptr<Work> w) {
    w->wait();
    keeper_->keep(std::move(w));
  }

  // Host staging buffers of the synchronous collectives, kept between calls:
  // a fresh allocation of many MiB costs more in page faults than the copy.
  // Slot k holds the k-th staged tensor of an op (inputs from 0, outputs
  // from kOutSlot); each grows to the largest size it served.
  static constexpr size_t kOutSlot = 1024;
  at::Tensor buf(size_t slot, at::IntArrayRef sizes, at::ScalarType dt) {
    int64_t numel = c10::multiply_integers(sizes);
    size_t nbytes = (size_t)numel * c10::elementSize(dt);
    at::Tensor& b = bufs_[slot];
    if (!b.defined() || (size_t)b.numel() < nbytes) b = at::empty({(int64_t)std::max<size_t>(nbytes, 64)}, at::kByte);
    return b.narrow(0, 0, (int64_t)nbytes).view(dt).view(sizes);
  }

  c10::intrusive_ptr<c10d::Backend> host_;
  std::unordered_map<size_t, at::Tensor> bufs_;
  std::shared_ptr<Keeper> keeper_ = std::make_shared<Keeper>();
  std::vector<std::pair<const c10::TensorImpl*, const void*>> windows_;  // of the op being staged
  int mode_;
  std::mutex path_mu_;
  int path_ = -1;             // the device path (1) or the host path (0); -1: not decided yet
  std::vector<int64_t> ids_;  // the device path: each rank's global device id, of the op being run
  std::atomic<uint64_t> seq_{0};  // the collectives entered (see getSequenceNumberForGroup)
};

}  // namespace

void register_dist(py::module_& m) {
  py::class_<TpuDistBackend, c10d::Backend, c10::intrusive_ptr<TpuDistBackend>>(m, "_TpuDistBackend")
      .def(py::init<int, int, c10::intrusive_ptr<c10d::Backend>, int>(), py::arg("rank"), py::arg("size"),
           py::arg("host"), py::arg("mode"))
      .def("_on_device", &TpuDistBackend::device_path);
  m.def(
      "_set_distributed",
      [](c10::intrusive_ptr<c10d::Store> store, int rank, int size, int local_device) {
        set_with_store(std::move(store), rank, size, local_device);
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("local_device"));
  m.def("_distributed_why", &distributed_why, py::call_guard<py::gil_scoped_release>());
  m.def("_device_global_id", [](int device) {
    int64_t id = -1;
    TT_CHECK_STATUS(tt_runtime_device_global_id(runtime(), device, &id), "tpu_dist");
    return id;
  });
  // Collectives over this process's devices (tests; torch.cuda.nccl-like):
  // ins[i] and outs[i] on member i's device, ids: the group's device ids.
  m.def("_device_collective", [](int kind, int op, int root, std::vector<at::Tensor> ins,
                                  std::vector<at::Tensor> outs, std::vector<int64_t> ids, int64_t count) {
    TORCH_CHECK(!ins.empty() && ins.size() == outs.size(), "_device_collective: one output per input");
    tt_collective_t c;
    std::memset(&c, 0, sizeof(c));
    c.kind = (tt_coll_kind_t)kind;
    c.op = (tt_coll_op_t)op;
    c.root = root;
    c.dtype = to_tt_dtype(ins[0].scalar_type());
    c.count = count;
    c.group_size = (int)ids.size();
    c.group_ids = ids.data();
    std::vector<tt_view_t> vi, vo;
    for (size_t i = 0; i < ins.size(); i++) {
      TORCH_CHECK(is_tpu(ins[i]) && is_tpu(outs[i]), "_device_collective: tpu tensors expected");
      vi.push_back(to_view(ins[i]));
      vo.push_back(to_view(outs[i]));
    }
    TT_CHECK_STATUS(tt_runtime_collective(runtime(), &c, vi.data(), vo.data(), (int)vi.size()), "collective");
  });
}

}  // namespace torch_tpu
