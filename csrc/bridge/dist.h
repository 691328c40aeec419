// Internal to the bridge's tpu_dist backend (dist.cpp): its op codes, the
// work objects it returns, the mapping of c10d's reduce ops, its argument
// errors (dist_ops.cpp) and the c10d store as the PJRT client's key-value
// store (dist_store.cpp).
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "bridge.h"

namespace torch_tpu {
namespace dist {

using c10d::ReduceOp;
using c10d::Work;

enum OpCode : int64_t {
  kBroadcast = 1, kAllreduce, kReduce, kAllgather, kAllgatherBase, kGather, kScatter,
  kReduceScatter, kReduceScatterBase, kAlltoallBase, kAlltoall, kSend, kRecv
};

// The op's name in messages ("all_reduce", ...).
const char* op_name(int64_t op);

// A work already completed with `result`.
c10::intrusive_ptr<Work> completed(std::vector<at::Tensor> result);

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

// The first group's store as the PJRT client's key-value store, for the process.
void set_with_store(c10::intrusive_ptr<c10d::Store> store, int rank, int size, int local_device);

bool is_bitwise(ReduceOp rop);
// The reduce op the device collectives run: PREMUL_SUM is a SUM of inputs
// scaled first (see premul_factor).
tt_coll_op_t coll_op(ReduceOp rop);
// The reduce op the host backend runs: gloo has no AVG (a SUM, divided
// after: see unstage) and no PREMUL_SUM (a SUM of inputs scaled first).
ReduceOp host_rop(ReduceOp rop);
// PREMUL_SUM's factor (dist._make_nccl_premul_sum: a number or a one-element
// tensor); every rank's input is multiplied by it before the SUM.
c10::Scalar premul_factor(const ReduceOp& rop);
// "" where op may reduce tensors of dtype dt with rop, else why not.
std::string rop_error(int64_t op, const ReduceOp& rop, at::ScalarType dt);
// "" where every tensor can take part in op, else why not.
std::string tpu_error(const std::vector<at::Tensor>& ts, int64_t op);

}  // namespace dist
}  // namespace torch_tpu
