// Process-wide runtime: lazy creation, device selection, dtype mapping.
#include <cstring>
#include <mutex>

#include "bridge.h"

namespace torch_tpu {

namespace {
std::mutex g_mu;
tt_runtime_t* g_rt = nullptr;
bool g_tried = false;
std::string g_error;
std::vector<std::string> g_search;
thread_local c10::DeviceIndex t_device = 0;

// A client across processes to create when the runtime starts (set by
// tpu_dist's group creation, before the device's first use).
struct PendingDist {
  bool set = false;
  tt_pjrt_kv_t kv{};
  int node_id = 0, num_nodes = 1, local_device = -1;
};
PendingDist g_dist;
std::string g_dist_why = "no process group asked for a client across processes";

// Tries the pending client across processes at `path`; "" when it spans them.
std::string try_distributed_locked(const char* path) {
  tt_pjrt_options_t o;
  std::memset(&o, 0, sizeof(o));
  o.node_id = g_dist.node_id;
  o.num_nodes = g_dist.num_nodes;
  o.kv = g_dist.kv;
  int64_t visible = g_dist.local_device;
  if (g_dist.local_device >= 0) {
    o.visible_devices = &visible;
    o.num_visible_devices = 1;
  }
  tt_runtime_t* rt = nullptr;
  tt_status_t st = tt_runtime_open_with(path, &o, &rt);
  if (st) {
    std::string why = tt_status_message(st);
    tt_status_free(st);
    return why;
  }
  if (tt_runtime_info(rt)->num_global_devices <= tt_runtime_info(rt)->num_devices) {
    tt_runtime_close(rt);
    return "the plugin's client does not span processes";
  }
  g_rt = rt;
  return "";
}

void try_init_locked() {
  if (g_tried) return;
  g_tried = true;
  std::vector<const char*> dirs;
  for (auto& d : g_search) dirs.push_back(d.c_str());
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  tt_status_t st = tt_pjrt_discover(dirs.data(), (int)dirs.size(), &path);
  if (!st && g_dist.set) g_dist_why = try_distributed_locked(path.data);
  if (!st && !g_rt) {  // one client of this process
    int ncpu = (int)tt_env_int(TT_ENV_NUM_CPU_DEVICES, 1);
    st = tt_runtime_open(path.data, ncpu, &g_rt);
  }
  if (st) {
    g_error = tt_status_message(st);
    if (g_dist.set) g_dist_why = g_error;
    tt_status_free(st);
    g_rt = nullptr;
  }
  tt_sbuf_free(&path);
}
}  // namespace

void throw_status(tt_status_t st, const char* context) {
  std::string msg = tt_status_message(st);
  tt_code_t code = tt_status_code(st);
  tt_status_free(st);
  if (context && *context && msg.rfind(std::string(context) + ":", 0) != 0)
    msg = std::string(context) + ": " + msg;
  if (code == TT_UNIMPLEMENTED) TORCH_CHECK_NOT_IMPLEMENTED(false, msg);
  if (code == TT_OUT_OF_RANGE) TORCH_CHECK_INDEX(false, msg);
  if (code == TT_INVALID_ARGUMENT) TORCH_CHECK_VALUE(false, msg);
  if (code == TT_RESOURCE_EXHAUSTED) TORCH_CHECK_WITH(OutOfMemoryError, false, msg);
  TORCH_CHECK(false, msg);
}

void set_search_path(const std::vector<std::string>& dirs) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_search = dirs;
}

tt_runtime_t* runtime() {
  std::lock_guard<std::mutex> lk(g_mu);
  try_init_locked();
  TORCH_CHECK(g_rt, "torch_tpu could not start a PJRT plugin for the tpu device: ", g_error);
  return g_rt;
}

int device_count_nothrow() {
  std::lock_guard<std::mutex> lk(g_mu);
  try_init_locked();
  return g_rt ? tt_runtime_device_count(g_rt) : 0;
}

std::string init_error() {
  std::lock_guard<std::mutex> lk(g_mu);
  try_init_locked();
  return g_error;
}

std::string plugin_platform() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_rt) {
    std::string name = tt_runtime_info(g_rt)->platform_name;
    return name == "cpu" ? "cpu" : name == "tpu" ? "tpu" : "gpu";
  }
  std::vector<const char*> dirs;
  for (auto& d : g_search) dirs.push_back(d.c_str());
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  const char* platform = nullptr;
  tt_status_t st = tt_pjrt_discover_platform(dirs.data(), (int)dirs.size(), &path, &platform);
  tt_sbuf_free(&path);
  tt_status_free(st);
  return platform ? platform : "";
}

bool runtime_started() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_rt != nullptr;
}

void set_distributed(const tt_pjrt_kv_t& kv, int node_id, int num_nodes, int local_device) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_tried || g_dist.set || num_nodes < 2) return;  // started already, set before, or one process
  g_dist.set = true;
  g_dist.kv = kv;
  g_dist.node_id = node_id;
  g_dist.num_nodes = num_nodes;
  g_dist.local_device = local_device;
  g_dist_why = "the runtime has not started";
}

std::string distributed_why() {
  std::lock_guard<std::mutex> lk(g_mu);
  try_init_locked();
  if (g_rt && tt_runtime_info(g_rt)->num_global_devices > tt_runtime_info(g_rt)->num_devices) return "";
  if (g_rt && !g_dist.set)
    return "the tpu device was in use before init_process_group, so its PJRT client serves this process only";
  return g_dist_why.empty() ? "the plugin's client does not span processes" : g_dist_why;
}

c10::DeviceIndex current_device() { return t_device; }

void set_current_device(c10::DeviceIndex d) {
  if (d < 0) return;
  int n = device_count_nothrow();
  TORCH_CHECK(d < n || n == 0, "invalid tpu device index ", (int)d, " (there are ", n, " devices)");
  t_device = d;
}

bool has_tt_dtype(at::ScalarType t) {
  switch (t) {
    case at::kBool: case at::kByte: case at::kChar: case at::kShort: case at::kInt:
    case at::kLong: case at::kHalf: case at::kBFloat16: case at::kFloat: case at::kDouble:
    case at::kUInt16: case at::kUInt32: case at::kUInt64: case at::kComplexFloat:
    case at::kComplexDouble: case at::kComplexHalf: case at::kFloat8_e4m3fn: case at::kFloat8_e5m2: case at::kFloat8_e4m3fnuz:
    case at::kFloat8_e5m2fnuz:
      return true;
    default:
      return false;
  }
}

tt_dtype_t to_tt_dtype(at::ScalarType t) {
  switch (t) {
    case at::kBool: return TT_BOOL;
    case at::kByte: return TT_U8;
    case at::kChar: return TT_I8;
    case at::kShort: return TT_I16;
    case at::kInt: return TT_I32;
    case at::kLong: return TT_I64;
    case at::kHalf: return TT_F16;
    case at::kBFloat16: return TT_BF16;
    case at::kFloat: return TT_F32;
    case at::kDouble: return TT_F64;
    case at::kUInt16: return TT_U16;
    case at::kUInt32: return TT_U32;
    case at::kUInt64: return TT_U64;
    case at::kComplexFloat: return TT_C64;
    case at::kComplexDouble: return TT_C128;
    case at::kFloat8_e4m3fn: return TT_F8E4M3FN;
    case at::kFloat8_e5m2: return TT_F8E5M2;
    case at::kFloat8_e4m3fnuz: return TT_F8E4M3FNUZ;
    case at::kFloat8_e5m2fnuz: return TT_F8E5M2FNUZ;
    case at::kComplexHalf: return TT_C32;  // held as f16 pairs, computed in complex64
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "dtype ", t, " is not supported on the tpu device yet");
  }
}

tt_view_t to_view(const at::Tensor& t) {
  tt_view_t v;
  std::memset(&v, 0, sizeof(v));
  TORCH_CHECK(t.dim() <= TT_MAX_RANK, "tpu tensors have at most ", TT_MAX_RANK, " dimensions, got ",
              t.dim());
  v.storage = static_cast<tt_storage_t*>(t.storage().mutable_data());
  TORCH_CHECK(v.storage, "tpu tensor without a storage");
  v.dtype = to_tt_dtype(t.scalar_type());
  v.rank = (int32_t)t.dim();
  for (int i = 0; i < v.rank; i++) {
    v.sizes[i] = t.size(i);
    v.strides[i] = t.stride(i);
  }
  v.offset = t.storage_offset();
  v.conj = t.is_conj();  // lazy math bits: the core applies them on reads and writes
  v.neg = t.is_neg();
  return v;
}

}  // namespace torch_tpu
