// The tpu_dist c10d backend (torch_tpu/distributed.py registers it). PyTorch
// dispatches the collectives of `tpu` tensors (dist.*, DDP's reducer, the
// functional collectives of DTensor) to a C++ c10d::Backend: a Python object
// cannot be one, hence this file.
//
// On the CPU plugins, which have no collectives across processes, the data is
// staged through the host: device -> host copy -> the wrapped host backend
// (gloo, created by the Python side over the same store) -> device. Every
// collective first agrees on its signature across ranks (op, dtype, element
// count) through the host backend, so that a mismatch (ranks passing tensors
// of different shapes) raises an error on every rank at once instead of a
// hang. Work objects are completed when returned: the host copy is a sync
// point anyway (Fused Eager flushes there, as at any host read).
//
// Where the PJRT client spans the processes (GPU plugins: init_process_group
// before the device's first use opens it with node_id/num_nodes and the c10d
// store as its key-value store, see set_distributed), all_reduce, broadcast,
// reduce, all_gather, reduce_scatter and even all_to_all run as StableHLO
// collectives on the devices (tt_runtime_collective): the data never leaves
// them, and the work is asynchronous like any op. The rest (gather, scatter,
// point to point, uneven all_to_all, complex dtypes) stays on the host path.
// TORCH_TPU_DIST_COLLECTIVES=device also takes that path where a group's
// members are all in this process (a group of one on the CPU plugin).
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/csrc/utils/pybind.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "bridge.h"
#include "meta.h"

namespace py = pybind11;

namespace torch_tpu {
namespace {

using c10d::AllreduceOptions;
using c10d::ReduceOp;
using c10d::Work;

enum OpCode : int64_t {
  kBroadcast = 1, kAllreduce, kReduce, kAllgather, kAllgatherBase, kGather, kScatter,
  kReduceScatter, kReduceScatterBase, kAlltoallBase, kAlltoall, kSend, kRecv
};

const char* op_name(int64_t op) {
  static const char* names[] = {"?", "broadcast", "all_reduce", "reduce", "all_gather",
                                "all_gather_into_tensor", "gather", "scatter", "reduce_scatter",
                                "reduce_scatter_tensor", "all_to_all_single", "all_to_all", "send", "recv"};
  return op >= 0 && op < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[op] : "?";
}

c10::intrusive_ptr<Work> completed(std::vector<at::Tensor> result) {
  auto fut = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  fut->markCompleted(c10::IValue(std::move(result)));
  return Work::create_from_future(fut);
}

// Keeps the last host works alive after they completed: the host backend's
// worker thread must not drop the last reference. A work's captured
// thread-local state may hold a Python object, and a worker thread releasing
// it while the interpreter exits aborts the process. Kept works are released
// on a caller's thread (when newer ones push them out) or with the backend.
struct Keeper {
  std::mutex mu;
  std::deque<c10::intrusive_ptr<Work>> recent;
  void keep(c10::intrusive_ptr<Work> w) {
    std::lock_guard<std::mutex> lk(mu);
    recent.push_back(std::move(w));
    if (recent.size() > 16) recent.pop_front();
  }
};

// Point-to-point work: gloo's send completes only once the peer has posted
// its receive, so an isend followed by an irecv on both ranks would deadlock
// if isend waited. The host op runs on; wait() waits for it and then runs
// `done` (a receive's copy into the device tensors) once.
class StagedWork : public Work {
 public:
  StagedWork(c10::intrusive_ptr<Work> host, std::function<void()> done, c10d::OpType type,
             std::shared_ptr<Keeper> keeper)
      : Work(-1, type), host_(std::move(host)), done_(std::move(done)), keeper_(std::move(keeper)) {}

  bool isCompleted() override { return finished_ || host_->isCompleted(); }
  bool isSuccess() const override { return host_->isSuccess(); }
  std::exception_ptr exception() const override { return host_->exception(); }

  bool wait(std::chrono::milliseconds timeout) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (!finished_) {
      host_->wait(timeout);
      keeper_->keep(host_);
      if (done_) done_();
      finished_ = true;
    }
    return true;
  }

 private:
  c10::intrusive_ptr<Work> host_;
  std::function<void()> done_;
  std::shared_ptr<Keeper> keeper_;
  std::mutex mu_;
  bool finished_ = false;
};

// The c10d store as the PJRT client's key-value store (tt_pjrt_kv_t). It
// lives as long as the process: the plugin calls it while the client lives.
struct StoreKV {
  c10::intrusive_ptr<c10d::Store> store;

  static tt_status_t fail(const std::exception& e, const char* what, const char* key, size_t klen) {
    return tt_status_make(TT_UNAVAILABLE, "c10d store %s of %.*s: %s", what, (int)klen, key, e.what());
  }
  static void give(const std::vector<uint8_t>& v, char** value, size_t* len) {
    *value = static_cast<char*>(std::malloc(v.size() + 1));
    if (!v.empty()) std::memcpy(*value, v.data(), v.size());
    *len = v.size();
  }
  static tt_status_t get(void* ctx, const char* key, size_t klen, int timeout_ms, char** value, size_t* len) {
    auto* self = static_cast<StoreKV*>(ctx);
    std::string k(key, klen);
    try {
      self->store->wait({k}, std::chrono::milliseconds(timeout_ms));
      give(self->store->get(k), value, len);
      return nullptr;
    } catch (const std::exception& e) {
      return fail(e, "get", key, klen);
    }
  }
  static tt_status_t try_get(void* ctx, const char* key, size_t klen, char** value, size_t* len) {
    auto* self = static_cast<StoreKV*>(ctx);
    std::string k(key, klen);
    try {
      if (!self->store->check({k})) return tt_status_make(TT_NOT_FOUND, "no key %s", k.c_str());
      give(self->store->get(k), value, len);
      return nullptr;
    } catch (const std::exception& e) {
      return fail(e, "try_get", key, klen);
    }
  }
  static tt_status_t put(void* ctx, const char* key, size_t klen, const char* value, size_t vlen) {
    auto* self = static_cast<StoreKV*>(ctx);
    try {
      self->store->set(std::string(key, klen), std::vector<uint8_t>(value, value + vlen));
      return nullptr;
    } catch (const std::exception& e) {
      return fail(e, "set", key, klen);
    }
  }
};

void set_with_store(c10::intrusive_ptr<c10d::Store> store, int rank, int size, int local_device) {
  static StoreKV* kv = nullptr;  // the first group's store, kept for the process
  if (kv) return;                // (only the first group's counts: see set_distributed)
  kv = new StoreKV{std::move(store)};
  set_distributed(tt_pjrt_kv_t{kv, &StoreKV::get, &StoreKV::try_get, &StoreKV::put}, rank, size, local_device);
}

tt_coll_op_t coll_op(ReduceOp rop) {
  switch (rop) {
    case ReduceOp::SUM: return TT_COLL_SUM;
    case ReduceOp::PRODUCT: return TT_COLL_PROD;
    case ReduceOp::MIN: return TT_COLL_MIN;
    case ReduceOp::MAX: return TT_COLL_MAX;
    case ReduceOp::AVG: return TT_COLL_AVG;
    default: TORCH_CHECK(false, "tpu_dist: reduce op ", (int)rop, " is not supported");
  }
}

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

  c10::intrusive_ptr<Work> broadcast(std::vector<at::Tensor>& ts, const c10d::BroadcastOptions& o) override {
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
    if (inlinable(ts, o.reduceOp) && !device_path()) {  // small: one exchange (see agree)
      check_tpu(ts, kAllreduce);
      allreduce_inline(ts[0], o.reduceOp);
      return completed(ts);
    }
    if (on_device(ts, kAllreduce, o.reduceOp)) {
      for (auto& t : ts) device_op(TT_COLL_ALL_REDUCE, coll_op(o.reduceOp), 0, t, t, t.numel(), kAllreduce);
      return completed(ts);
    }
    auto h = stage(ts, kAllreduce, o.reduceOp);
    finish(host_->allreduce(h, host_opts(o)));
    unstage(ts, h, o.reduceOp);
    return completed(ts);
  }

  c10::intrusive_ptr<Work> allreduce_coalesced(std::vector<at::Tensor>& ts,
                                               const c10d::AllreduceCoalescedOptions& o) override {
    for (auto& t : ts) {
      std::vector<at::Tensor> one{t};
      allreduce(one, o);
    }
    return completed(ts);
  }

  c10::intrusive_ptr<Work> reduce(std::vector<at::Tensor>& ts, const c10d::ReduceOptions& o) override {
    if (on_device(ts, kReduce, o.reduceOp)) {
      for (auto& t : ts)
        device_op(TT_COLL_REDUCE, coll_op(o.reduceOp), (int)o.rootRank, t, t, t.numel(), kReduce);
      return completed(ts);
    }
    auto h = stage(ts, kReduce, o.reduceOp, false);  // gloo may use a non-root's buffer as scratch
    c10d::ReduceOptions ho = o;
    if (o.reduceOp == ReduceOp::AVG) ho.reduceOp = ReduceOp::SUM;
    finish(host_->reduce(h, ho));
    if (getRank() == o.rootRank) unstage(ts, h, o.reduceOp);
    return completed(ts);
  }

  c10::intrusive_ptr<Work> allgather(std::vector<std::vector<at::Tensor>>& outs, std::vector<at::Tensor>& ins,
                                     const c10d::AllgatherOptions& o) override {
    if (ins.size() == 1 && outs.size() == 1 && (int)outs[0].size() == getSize() && on_device(ins, kAllgather)) {
      const at::Tensor& in = ins[0];
      for (const auto& t : outs[0])
        TORCH_CHECK(is_tpu(t) && t.numel() == in.numel() && t.scalar_type() == in.scalar_type(),
                    "tpu_dist all_gather: every output must match the input (", in.scalar_type(), in.sizes(),
                    "), got ", t.scalar_type(), t.sizes(), " on ", t.device());
      at::Tensor all = at::empty({in.numel() * getSize()}, in.options());
      device_op(TT_COLL_ALL_GATHER, TT_COLL_SUM, 0, in, all, in.numel(), kAllgather);
      for (int r = 0; r < getSize(); r++)
        outs[0][r].copy_(all.narrow(0, r * in.numel(), in.numel()).view(outs[0][r].sizes()));
      return completed(flat(outs));
    }
    auto h = stage(ins, kAllgather);
    auto ho = out_bufs(outs, kAllgather);
    finish(host_->allgather(ho, h, o));
    for (size_t i = 0; i < outs.size(); i++) unstage(outs[i], ho[i]);
    return completed(flat(outs));
  }

  c10::intrusive_ptr<Work> _allgather_base(at::Tensor& out, at::Tensor& in, const c10d::AllgatherOptions& o) override {
    std::vector<at::Tensor> ins{in}, outs{out};
    if (on_device(ins, kAllgatherBase)) {
      check_tpu(outs, kAllgatherBase);
      TORCH_CHECK(out.numel() == in.numel() * getSize() && out.scalar_type() == in.scalar_type(),
                  "tpu_dist all_gather_into_tensor: the output must hold world_size (", getSize(),
                  ") times the input's elements of its dtype; got ", out.scalar_type(), out.sizes(), " for ",
                  in.scalar_type(), in.sizes());
      device_op(TT_COLL_ALL_GATHER, TT_COLL_SUM, 0, in, out, in.numel(), kAllgatherBase);
      return completed(outs);
    }
    auto h = stage(ins, kAllgatherBase);
    check_tpu(outs, kAllgatherBase);
    at::Tensor ho = buf(kOutSlot, out.sizes(), out.scalar_type());
    finish(host_->_allgather_base(ho, h[0], o));
    out.copy_(ho);
    return completed(outs);
  }

  c10::intrusive_ptr<Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                                           const c10d::AllgatherOptions& o) override {
    TORCH_CHECK(outs.size() == ins.size(), "tpu_dist all_gather_into_tensor_coalesced: ", outs.size(),
                " outputs for ", ins.size(), " inputs");
    for (size_t i = 0; i < ins.size(); i++) _allgather_base(outs[i], ins[i], o);
    return completed(outs);
  }

  c10::intrusive_ptr<Work> gather(std::vector<std::vector<at::Tensor>>& outs, std::vector<at::Tensor>& ins,
                                  const c10d::GatherOptions& o) override {
    auto h = stage(ins, kGather);
    auto ho = out_bufs(outs, kGather);
    finish(host_->gather(ho, h, o));
    if (getRank() == o.rootRank)
      for (size_t i = 0; i < outs.size(); i++) unstage(outs[i], ho[i]);
    return completed(flat(outs));
  }

  c10::intrusive_ptr<Work> scatter(std::vector<at::Tensor>& outs, std::vector<std::vector<at::Tensor>>& ins,
                                   const c10d::ScatterOptions& o) override {
    auto ho = stage(outs, kScatter);
    std::vector<std::vector<at::Tensor>> hi(ins.size());
    for (size_t i = 0; i < ins.size(); i++) hi[i] = to_host(ins[i], kScatter);
    finish(host_->scatter(ho, hi, o));
    unstage(outs, ho);
    return completed(outs);
  }

  // reduce_scatter: an all-reduce of the rank-ordered inputs on the host, of
  // which each rank keeps its own part (gloo's reduce_scatter covers fewer
  // cases); the same bytes as a ring all-reduce.
  c10::intrusive_ptr<Work> reduce_scatter(std::vector<at::Tensor>& outs, std::vector<std::vector<at::Tensor>>& ins,
                                          const c10d::ReduceScatterOptions& o) override {
    TORCH_CHECK(outs.size() == 1 && ins.size() == 1 && (int)ins[0].size() == getSize(),
                "tpu_dist reduce_scatter: one output and one input per rank expected");
    check_tpu(ins[0], kReduceScatter);
    std::vector<at::Tensor> parts;
    for (auto& t : ins[0]) {
      TORCH_CHECK(t.numel() == outs[0].numel() && t.scalar_type() == outs[0].scalar_type(),
                  "tpu_dist reduce_scatter: every input must match the output (", outs[0].scalar_type(),
                  outs[0].sizes(), "), got ", t.scalar_type(), t.sizes());
      parts.push_back(t.reshape({-1}));
    }
    at::Tensor all = at::cat(parts);
    return reduce_scatter_flat(outs[0], all, o.reduceOp, kReduceScatter);
  }

  c10::intrusive_ptr<Work> _reduce_scatter_base(at::Tensor& out, at::Tensor& in,
                                                const c10d::ReduceScatterOptions& o) override {
    check_tpu(std::vector<at::Tensor>{in}, kReduceScatterBase);
    TORCH_CHECK(in.numel() == out.numel() * getSize() && in.scalar_type() == out.scalar_type(),
                "tpu_dist reduce_scatter_tensor: the input must hold world_size (", getSize(),
                ") times the output's elements of its dtype; got ", in.scalar_type(), in.sizes(), " for ",
                out.scalar_type(), out.sizes());
    return reduce_scatter_flat(out, in.reshape({-1}), o.reduceOp, kReduceScatterBase);
  }

  c10::intrusive_ptr<Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                                           const c10d::ReduceScatterOptions& o) override {
    TORCH_CHECK(outs.size() == ins.size(), "tpu_dist reduce_scatter_tensor_coalesced: ", outs.size(),
                " outputs for ", ins.size(), " inputs");
    for (size_t i = 0; i < ins.size(); i++) _reduce_scatter_base(outs[i], ins[i], o);
    return completed(outs);
  }

  c10::intrusive_ptr<Work> alltoall_base(at::Tensor& out, at::Tensor& in, std::vector<int64_t>& out_splits,
                                         std::vector<int64_t>& in_splits, const c10d::AllToAllOptions& o) override {
    std::vector<at::Tensor> ins{in}, outs{out};
    check_tpu(ins, kAlltoallBase);
    check_tpu(outs, kAlltoallBase);
    if (out_splits.empty() && in_splits.empty() && in.numel() == out.numel() && in.numel() % getSize() == 0 &&
        on_device(ins, kAlltoallBase)) {
      device_op(TT_COLL_ALL_TO_ALL, TT_COLL_SUM, 0, in, out, in.numel() / getSize(), kAlltoallBase);
      return completed(outs);
    }
    agree(kAlltoallBase, in.scalar_type(), in.dim() ? in.numel() / std::max<int64_t>(1, in.size(0)) : 1);
    at::Tensor hi = host_input(in);
    at::Tensor ho = buf(kOutSlot, out.sizes(), out.scalar_type());
    std::vector<int64_t> os = out_splits, is = in_splits;  // gloo may move from its split vectors
    finish(host_->alltoall_base(ho, hi, os, is, o));
    out.copy_(ho);
    return completed(outs);
  }

  // all_to_all of lists: the inputs as one flat buffer, split by numel.
  c10::intrusive_ptr<Work> alltoall(std::vector<at::Tensor>& outs, std::vector<at::Tensor>& ins,
                                    const c10d::AllToAllOptions& o) override {
    TORCH_CHECK((int)outs.size() == getSize() && (int)ins.size() == getSize(),
                "tpu_dist all_to_all: one input and one output tensor per rank expected");
    check_tpu(ins, kAlltoall);
    check_tpu(outs, kAlltoall);
    std::vector<int64_t> in_splits, out_splits;
    std::vector<at::Tensor> parts;
    for (auto& t : ins) {
      TORCH_CHECK(t.scalar_type() == ins[0].scalar_type() && outs[parts.size()].scalar_type() == t.scalar_type(),
                  "tpu_dist all_to_all: every tensor must have one dtype");
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
    c10d::BarrierOptions ho = o;
    ho.device_ids.clear();
    finish(host_->barrier(ho));
    return completed({});
  }

 private:
  // Whether this op runs on the devices: a group with device ids, a dtype
  // the device collectives take (complex stays on the host path). Checks
  // the tensors and agrees on the signature first, as the host path does.
  bool on_device(const std::vector<at::Tensor>& ts, int64_t op, ReduceOp rop = ReduceOp::SUM) {
    if (ts.empty() || !device_path()) return false;
    check_tpu(ts, op);
    for (const auto& t : ts)
      if (t.is_complex() || t.scalar_type() != ts[0].scalar_type()) return false;
    TORCH_CHECK(rop != ReduceOp::PREMUL_SUM, "tpu_dist ", op_name(op), ": PREMUL_SUM is not supported");
    TORCH_CHECK(!(rop == ReduceOp::AVG && !ts.empty() && ts[0].scalar_type() == at::kBool), "tpu_dist ",
                op_name(op), ": AVG of bool tensors");
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
    for (const auto& t : ts) {
      TORCH_CHECK(t.defined(), "tpu_dist ", op_name(op), ": undefined tensor");
      TORCH_CHECK(is_tpu(t), "tpu_dist ", op_name(op), ": tensors must be on the tpu device, got one on ",
                  t.device(), " (for host tensors use a group of backend gloo, e.g. init_process_group(",
                  "backend=\"cpu:gloo,tpu:tpu_dist\"))");
      TORCH_CHECK(!t.is_sparse(), "tpu_dist ", op_name(op), ": sparse tensors are not supported");
    }
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
    TORCH_CHECK(rop != ReduceOp::PREMUL_SUM, "tpu_dist ", op_name(op), ": PREMUL_SUM is not supported");
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
  // device (its global id, the device path's program needs every rank's)
  // and carries up to kInline bytes of data: a small all-reduce travels
  // inside it (see allreduce), one exchange instead of two. Returns the
  // ranks' messages ([world, kMsg] bytes).
  static constexpr int64_t kInline = 4096;
  static constexpr int64_t kHead = 5 * (int64_t)sizeof(int64_t);
  static constexpr int64_t kMsg = kHead + kInline;
  at::Tensor agree(int64_t op, at::ScalarType dt, int64_t count, int64_t rop = 0, const at::Tensor* data = nullptr,
                   int64_t device_id = -1) {
    at::Tensor mine = at::zeros({kMsg}, at::kByte);
    int64_t sig[5] = {op, (int64_t)dt, count, rop, device_id};
    std::memcpy(mine.mutable_data_ptr(), sig, sizeof(sig));
    if (data) {
      at::Tensor h = data->cpu().contiguous();
      TORCH_CHECK(h.nbytes() <= (size_t)kInline, "tpu_dist: inline data too large");
      if (h.nbytes()) std::memcpy(mine.mutable_data_ptr<uint8_t>() + kHead, h.const_data_ptr(), h.nbytes());
    }
    std::vector<at::Tensor> in{mine};
    std::vector<std::vector<at::Tensor>> all(1);
    for (int r = 0; r < getSize(); r++) all[0].push_back(at::empty({kMsg}, at::kByte));
    finish(host_->allgather(all, in));
    for (int r = 0; r < getSize(); r++) {
      int64_t v[4];
      std::memcpy(v, all[0][r].const_data_ptr(), sizeof(v));
      if (v[0] == op && v[1] == (int64_t)dt && v[2] == count && v[3] == rop) continue;
      TORCH_CHECK(false, "tpu_dist ", op_name(op), ": ranks disagree: rank ", getRank(), " passes ",
                  describe(op, (int64_t)dt, count, rop), ", rank ", r, " passes ",
                  describe(v[0], v[1], v[2], v[3]));
    }
    return at::stack(all[0]);
  }

  // A small all-reduce inside the signature exchange: every rank reduces
  // the gathered inputs itself, in rank order (so all get the same bits).
  static bool inlinable(const std::vector<at::Tensor>& ts, ReduceOp rop) {
    if (ts.size() != 1 || ts[0].nbytes() > (size_t)kInline) return false;
    at::ScalarType dt = ts[0].scalar_type();
    bool kind = at::isFloatingType(dt) || (at::isIntegralType(dt, false) && dt != at::kBool);
    return kind && (rop == ReduceOp::SUM || rop == ReduceOp::AVG || rop == ReduceOp::MAX ||
                    rop == ReduceOp::MIN || rop == ReduceOp::PRODUCT);
  }

  void allreduce_inline(at::Tensor& t, ReduceOp rop) {
    at::Tensor msgs = agree(kAllreduce, t.scalar_type(), t.numel(), (int64_t)rop, &t);
    int64_t nb = (int64_t)t.nbytes();
    at::Tensor rows = msgs.narrow(1, kHead, nb).contiguous().view(t.scalar_type());  // [world, numel]
    at::Tensor r = rows[0].clone();
    for (int k = 1; k < getSize(); k++) {
      if (rop == ReduceOp::MAX) r = at::maximum(r, rows[k]);
      else if (rop == ReduceOp::MIN) r = at::minimum(r, rows[k]);
      else if (rop == ReduceOp::PRODUCT) r.mul_(rows[k]);
      else r.add_(rows[k]);
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
    return s;
  }

  static AllreduceOptions host_opts(const AllreduceOptions& o) {
    AllreduceOptions h = o;
    if (o.reduceOp == ReduceOp::AVG) h.reduceOp = ReduceOp::SUM;  // gloo has no AVG
    return h;
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

  c10::intrusive_ptr<Work> reduce_scatter_flat(at::Tensor& out, const at::Tensor& all, ReduceOp rop, int64_t op) {
    std::vector<at::Tensor> a{all};
    if (on_device(a, op, rop)) {
      device_op(TT_COLL_REDUCE_SCATTER, coll_op(rop), 0, all, out, out.numel(), op);
      return completed({out});
    }
    auto h = stage(a, op, rop);
    AllreduceOptions ao;
    ao.reduceOp = rop;
    finish(host_->allreduce(h, host_opts(ao)));
    int64_t n = out.numel();
    std::vector<at::Tensor> mine{h[0].narrow(0, getRank() * n, n).view(out.sizes())};
    std::vector<at::Tensor> outs{out};
    unstage(outs, mine, rop);
    return completed(outs);
  }

  static void check_tpu(const std::vector<std::vector<at::Tensor>>& tss, int64_t op) {
    for (const auto& ts : tss) check_tpu(ts, op);
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

  // Host buffers for a list of output lists (all_gather, gather).
  std::vector<std::vector<at::Tensor>> out_bufs(const std::vector<std::vector<at::Tensor>>& outs, int64_t op) {
    std::vector<std::vector<at::Tensor>> ho(outs.size());
    size_t k = 0;
    for (size_t i = 0; i < outs.size(); i++) {
      check_tpu(outs[i], op);
      for (const auto& t : outs[i]) ho[i].push_back(buf(kOutSlot + k++, t.sizes(), t.scalar_type()));
    }
    return ho;
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
