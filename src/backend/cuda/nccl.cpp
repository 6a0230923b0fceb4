// The "nccl" backend (nccl.h). NCCL moves bytes only: sums, maxima and
// minima are made by our element-wise kernels in rank order, as the mpi
// backend's (rank r receives block r of every rank through grouped
// ncclSend/ncclRecv, combines them ((x_0 op x_1) op x_2) ..., and the blocks
// are gathered back with ncclAllGather), so the bits are the same on every
// rank, run to run, whatever NCCL's algorithm, and equal to the mpi
// backend's. Communicators are non-blocking; a watchdog thread aborts the
// communicator of a collective that has not finished by the deadline
// (NUVEC_DISTRIBUTED_TIMEOUT), so a lost peer becomes an Error on the next
// synchronize, never a hang. docs/distributed.md.
#include "backend/cuda/nccl.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/cuda/cuda.h"
#include "backend/cuda/data.h"

#if NUVEC_HAVE_NCCL_H
#include <dlfcn.h>
#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#endif

namespace nuvec::cuda {

using distributed::detail::GroupImpl;

#if !NUVEC_HAVE_NCCL_H

bool nccl_loadable() { return false; }
std::shared_ptr<GroupImpl> nccl_world(std::string& why) {
  why = "nuvec was built without NCCL's header (nccl.h)";
  return nullptr;
}
void launch_nccl(const Collective&, const std::vector<Array>&, std::vector<Array>&, void*, Stream) {
  (Error(ErrorKind::internal, "launch_nccl: no nccl backend in this build")).raise();
}

#else

namespace {

using Clock = std::chrono::steady_clock;

struct Api {
  void* lib = nullptr;
  std::string error;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRankConfig) init_rank = nullptr;
  decltype(&ncclCommSplit) split = nullptr;
  decltype(&ncclCommAbort) abort = nullptr;
  decltype(&ncclCommGetAsyncError) async_error = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclCommCount) count = nullptr;
  decltype(&ncclCommUserRank) user_rank = nullptr;
};

template <class F>
bool find(Api& a, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(a.lib, name));
  if (!fn) a.error = std::string("symbol ") + name + " missing from libnccl.so.2";
  return fn != nullptr;
}

Api& api() {
  static Api a = [] {
    Api r;
    const char* named = std::getenv("NUVEC_NCCL_LIBRARY");
    r.lib = dlopen(named && *named ? named : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!r.lib) {
      r.error = std::string("libnccl.so.2 could not be loaded (") + dlerror() +
                "): put NCCL's library on LD_LIBRARY_PATH or name it in NUVEC_NCCL_LIBRARY";
      return r;
    }
    bool ok = find(r, r.get_unique_id, "ncclGetUniqueId") && find(r, r.init_rank, "ncclCommInitRankConfig") &&
              find(r, r.split, "ncclCommSplit") && find(r, r.abort, "ncclCommAbort") &&
              find(r, r.async_error, "ncclCommGetAsyncError") && find(r, r.error_string, "ncclGetErrorString") &&
              find(r, r.last_error, "ncclGetLastError") && find(r, r.group_start, "ncclGroupStart") &&
              find(r, r.group_end, "ncclGroupEnd") && find(r, r.send, "ncclSend") && find(r, r.recv, "ncclRecv") &&
              find(r, r.all_gather, "ncclAllGather") && find(r, r.count, "ncclCommCount") &&
              find(r, r.user_rank, "ncclCommUserRank");
    if (!ok) {
      dlclose(r.lib);
      r.lib = nullptr;
    }
    return r;
  }();
  return a;
}

Clock::time_point deadline() {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(distributed::detail::timeout_seconds()));
}

[[noreturn]] void raise(const std::string& msg) { (Error(ErrorKind::backend, msg)).raise(); }

// A dense device array of `shape` at element `offset` of d (a view for
// the kernels: data::copy_into wants its two sides of one shape).
Array view(const std::shared_ptr<Data>& d, int64_t offset, const Shape& shape, DType dt) {
  auto a = std::make_shared<ArrayDesc>();
  a->shape = shape;
  a->strides = row_major_strides(shape);
  a->offset = offset;
  a->size = 1;
  for (int k : shape) a->size *= k;
  a->dtype = dt;
  a->data = d;
  return Array(a);
}
Array view(const std::shared_ptr<Data>& d, int64_t offset, int64_t n, DType dt) {
  return view(d, offset, Shape{static_cast<int>(n)}, dt);
}

char* bytes_of(const Array& a) {
  return static_cast<char*>(a.desc()->data->ptr) + a.desc()->offset * static_cast<int64_t>(a.itemsize());
}

class NcclGroup final : public GroupImpl {
 public:
  NcclGroup(ncclComm_t comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  ~NcclGroup() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();  // after the pending collectives end
    // The communicator is not destroyed: ncclCommDestroy waits for the
    // peers, which may have work of it in flight still.
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "nccl"; }
  bool on_gpu() const override { return true; }

  std::shared_ptr<GroupImpl> split(int color, int key) override {
    if (color < 0)
      (Error(ErrorKind::invalid_argument, "Group::split: color must be >= 0, got " + std::to_string(color)))
          .raise();
    usable("split");
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclComm_t c = nullptr;
    check(api().split(comm_, color, key < 0 ? rank_ : key, &c, &cfg), "split");
    // Non-blocking: the new communicator may be handed back, and become
    // usable, after the call returns (seen on the H200: a null handle).
    const auto end = deadline();
    for (;;) {
      ncclComm_t now = __atomic_load_n(&c, __ATOMIC_ACQUIRE);
      ncclResult_t st = ncclSuccess;
      if (api().async_error(now ? now : comm_, &st) != ncclSuccess) st = ncclInternalError;
      int n = 0;
      if (now && st == ncclSuccess && api().count(now, &n) == ncclSuccess && n > 0) break;
      if (st != ncclSuccess && st != ncclInProgress)
        raise(std::string("split: NCCL failed: ") + api().error_string(st) + " (" +
              api().last_error(now ? now : comm_) + ")");
      if (Clock::now() > end) raise("split timed out (NUVEC_DISTRIBUTED_TIMEOUT) waiting for the other ranks");
      std::this_thread::yield();
    }
    return make(c);
  }

  // Host buffers: not this backend's.
  void all_reduce(CollectiveOp op, const void*, void*, int64_t, DType, uint64_t, const std::string&) override {
    host(collective_name(op));
  }
  void all_gather(const void*, void*, int64_t, uint64_t, const std::string&) override { host("all_gather"); }
  void reduce_scatter(const void*, void*, int64_t, DType, uint64_t, const std::string&) override {
    host("reduce_scatter");
  }
  void send(const void*, int64_t, int, uint64_t, const std::string&) override { host("send"); }
  void recv(void*, int64_t, int, uint64_t, const std::string&) override { host("recv"); }

  static std::shared_ptr<NcclGroup> make(ncclComm_t c);

  void launch(const Collective& p, const std::vector<Array>& in, std::vector<Array>& out, cudaStream_t cs,
              Stream s) {
    const CollectiveOp op = p.op();
    const std::string what = std::string(collective_name(op)) + " (nccl)";
    usable(what);
    if ((op == CollectiveOp::send || op == CollectiveOp::recv) && (p.peer() < 0 || p.peer() >= size_))
      (Error(ErrorKind::invalid_argument, what + ": rank " + std::to_string(p.peer()) + " is not in a group of " +
                                              std::to_string(size_))).raise();
    Array& y = out[0];
    if (op == CollectiveOp::recv) {
      if (y.nbytes() > 0) {
        check(api().recv(bytes_of(y), y.nbytes(), ncclUint8, p.peer(), comm_, cs), what);
        ready(comm_, what);
        watch(cs, what);
      }
      return;
    }
    // A group of one takes the same path (NCCL sends to itself), so that
    // the one-GPU tests run it.
    const Array& x = in[0];
    switch (op) {
      case CollectiveOp::all_sum:
      case CollectiveOp::all_max:
      case CollectiveOp::all_min: all_reduce(op, x, y, cs, s, what); break;
      case CollectiveOp::reduce_scatter: {
        auto src = dense(x, cs, s);
        exchange(bytes_of(src), y.size(), y.dtype(), cs, s, what, [&](const std::shared_ptr<Data>& t) {
          combine(CollectiveOp::all_sum, t, y.desc()->data, y.desc()->offset, y.size(), y.dtype(), cs);
        });
        if (y.size() > 0) watch(cs, what);
        break;
      }
      case CollectiveOp::all_gather: {
        auto src = dense(x, cs, s);
        if (x.nbytes() > 0) {
          check(api().all_gather(bytes_of(src), bytes_of(y), x.nbytes(), ncclUint8, comm_, cs), what);
          ready(comm_, what);
          watch(cs, what);
        }
        break;
      }
      default: {  // send
        auto src = dense(x, cs, s);
        if (x.nbytes() > 0) {
          check(api().send(bytes_of(src), x.nbytes(), ncclUint8, p.peer(), comm_, cs), what);
          ready(comm_, what);
          watch(cs, what);
        }
        data::copy_into(x, y, cs);
      }
    }
  }

 private:
  // x as a dense device array (itself when it is one).
  static Array dense(const Array& x, cudaStream_t cs, Stream s) {
    if (x.desc()->row_contiguous) return x;
    auto d = allocate(std::max<size_t>(x.nbytes(), 1), s);
    Array v = view(d, 0, x.shape(), x.dtype());
    data::copy_into(x, v, cs);
    return v;
  }

  // Blocks of `count` elements: block r of `src` goes to rank r, and the
  // blocks from every rank land in rank order in a new buffer, handed to
  // `then` (enqueued on cs after the exchange).
  template <class F>
  void exchange(const char* src, int64_t count, DType dt, cudaStream_t cs, Stream s, const std::string& what,
                F&& then) {
    const size_t block = static_cast<size_t>(count) * dt.size();
    auto t = allocate(std::max<size_t>(block * static_cast<size_t>(size_), 1), s);
    if (block > 0) {
      check(api().group_start(), what);
      for (int r = 0; r < size_; ++r) {
        api().send(src + r * block, block, ncclUint8, r, comm_, cs);
        api().recv(static_cast<char*>(t->ptr) + r * block, block, ncclUint8, r, comm_, cs);
      }
      check(api().group_end(), what);
      ready(comm_, what);
    }
    then(t);
  }

  // out[offset .. offset + n) = t block 0 op block 1 op ... (blocks of n).
  void combine(CollectiveOp op, const std::shared_ptr<Data>& t, const std::shared_ptr<Data>& out, int64_t offset,
               int64_t n, DType dt, cudaStream_t cs) const {
    const PrimitiveId id = op == CollectiveOp::all_max   ? PrimitiveId::Maximum
                           : op == CollectiveOp::all_min ? PrimitiveId::Minimum
                                                         : PrimitiveId::Add;
    constexpr int64_t kPiece = int64_t{1} << 30;  // a view's shape is an int
    for (int64_t p0 = 0; p0 < n; p0 += kPiece) {
      const int64_t m = std::min(kPiece, n - p0);
      Array acc = view(out, offset + p0, m, dt);
      if (size_ == 1) {
        data::copy_into(view(t, p0, m, dt), acc, cs);
        continue;
      }
      launch_binary(id, view(t, p0, m, dt), view(t, n + p0, m, dt), acc, cs);
      for (int r = 2; r < size_; ++r) launch_binary(id, acc, view(t, r * n + p0, m, dt), acc, cs);
    }
  }

  void all_reduce(CollectiveOp op, const Array& x, Array& y, cudaStream_t cs, Stream s, const std::string& what) {
    const int64_t n = x.size();
    if (n == 0) return;
    const int64_t c = (n + size_ - 1) / size_;  // elements per block
    const size_t isz = x.itemsize();
    // The blocks are read from x and the result is gathered in y when the
    // size divides; else both live in a padded buffer.
    std::shared_ptr<Data> work;
    Array src = x;
    Array res = y;
    if (n % size_ != 0) {
      work = allocate(static_cast<size_t>(c * size_) * isz, s);
      Array w = view(work, 0, x.shape(), x.dtype());
      data::copy_into(x, w, cs);
      src = view(work, 0, c * size_, x.dtype());
      res = src;
    } else {
      src = dense(x, cs, s);
    }
    exchange(bytes_of(src), c, x.dtype(), cs, s, what, [&](const std::shared_ptr<Data>& t) {
      combine(op, t, res.desc()->data, res.desc()->offset + rank_ * c, c, x.dtype(), cs);
    });
    char* base = bytes_of(res);
    check(api().all_gather(base + rank_ * c * isz, base, c * isz, ncclUint8, comm_, cs), what);
    ready(comm_, what);
    if (work) data::copy_into(view(work, 0, y.shape(), x.dtype()), y, cs);
    watch(cs, what);
  }

  // A non-blocking call's result: in progress is waited for.
  void check(ncclResult_t r, const std::string& what) {
    if (r == ncclSuccess || r == ncclInProgress) return;
    raise(what + ": NCCL failed: " + api().error_string(r) + " (" + api().last_error(comm_) + ")");
  }

  // Waits until `c` has taken the calls made so far (non-blocking mode).
  static void ready(ncclComm_t c, const std::string& what) {
    const auto end = deadline();
    for (;;) {
      ncclResult_t st = ncclSuccess;
      if (api().async_error(c, &st) != ncclSuccess) st = ncclInvalidArgument;
      if (st == ncclSuccess) return;
      if (st != ncclInProgress) {
        std::string last = api().last_error(c);
        api().abort(c);
        raise(what + ": NCCL failed: " + api().error_string(st) + " (" + last + ")");
      }
      if (Clock::now() > end) {
        api().abort(c);
        raise(what + " timed out (NUVEC_DISTRIBUTED_TIMEOUT) waiting for the other ranks");
      }
      std::this_thread::yield();
    }
  }

  // The collective just enqueued on cs must end by the deadline.
  void watch(cudaStream_t cs, const std::string& what) {
    cudaEvent_t ev = nullptr;
    if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) return;
    cudaEventRecord(ev, cs);
    std::lock_guard<std::mutex> lock(mu_);
    if (!watchdog_.joinable()) watchdog_ = std::thread([this] { guard(); });
    pending_.push_back({ev, deadline(), what});
    cv_.notify_all();
  }

  void guard() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (pending_.empty()) return;
      Pending p = pending_.front();
      lock.unlock();
      cudaError_t e = cudaEventQuery(p.ev);
      bool late = e == cudaErrorNotReady && Clock::now() > p.end && !aborted_;
      if (late) {
        aborted_ = true;
        std::string msg = p.what + " timed out after " +
                          std::to_string(static_cast<int>(distributed::detail::timeout_seconds())) +
                          " s (NUVEC_DISTRIBUTED_TIMEOUT) waiting for the other ranks: one exited, skipped this "
                          "collective or passed another shape; this group can no longer be used";
        api().abort(comm_);  // the waiting kernels end
        report_async_error(Error(ErrorKind::backend, msg));
        lock.lock();
        broken_ = msg;
        continue;
      }
      if (e == cudaErrorNotReady) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        lock.lock();
        continue;
      }
      cudaEventDestroy(p.ev);
      lock.lock();
      pending_.pop_front();
      if (stop_ && pending_.empty()) return;
    }
  }

  void usable(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!broken_.empty()) raise(what + ": an earlier collective of this group failed (" + broken_ + ")");
  }
  [[noreturn]] static void host(const char* op) {
    raise(std::string(op) + ": the nccl backend communicates GPU arrays (on a GPU stream)");
  }

  struct Pending {
    cudaEvent_t ev;
    Clock::time_point end;
    std::string what;
  };
  ncclComm_t comm_;
  int rank_, size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  std::thread watchdog_;
  bool stop_ = false;
  bool aborted_ = false;  // by the watchdog
  std::string broken_;
};

std::shared_ptr<NcclGroup> NcclGroup::make(ncclComm_t c) {
  int r = 0, n = 0;  // as the communicator holds them (after a split)
  api().count(c, &n);
  api().user_rank(c, &r);
  return std::make_shared<NcclGroup>(c, r, n);
}

}  // namespace

bool nccl_loadable() { return api().lib != nullptr && available(); }

std::shared_ptr<GroupImpl> nccl_world(std::string& why) {
  namespace dd = distributed::detail;
  Api& a = api();
  if (!a.lib) {
    why = a.error;
    return nullptr;
  }
  if (!available()) {
    why = "no GPU: " + unavailable_reason();
    return nullptr;
  }
  // Who we are, and rank 0's id on every rank.
  int rank = 0, size = 1;
  ncclUniqueId id{};
  std::string mine(sizeof(id.internal), '\0');
  std::shared_ptr<GroupImpl> mpi;
  dd::EnvLaunch env = dd::env_launch();
  if (env.size == 0 && dd::launched_by_mpi()) {
    mpi = dd::mpi_world(why);
    if (!mpi) return nullptr;
    rank = mpi->rank();
    size = mpi->size();
  } else if (env.size > 0) {
    rank = env.rank;
    size = env.size;
  }
  if (rank == 0) {
    ncclResult_t r = a.get_unique_id(&id);
    if (r != ncclSuccess) raise(std::string("ncclGetUniqueId: ") + a.error_string(r));
    mine.assign(id.internal, sizeof(id.internal));
  }
  std::string got = mine;
  if (mpi && size > 1) {
    std::string all(mine.size() * static_cast<size_t>(size), '\0');
    mpi->all_gather(mine.data(), all.data(), static_cast<int64_t>(mine.size()), 0x6e63636cu, "nccl bootstrap");
    got = all.substr(0, mine.size());
  } else if (size > 1) {
    got = dd::share_from_rank0(env, mine);
  }
  std::memcpy(id.internal, got.data(), sizeof(id.internal));
  synchronize();  // the runtime has bound its device
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclComm_t c = nullptr;
  ncclResult_t r = a.init_rank(&c, size, id, rank, &cfg);
  if (r != ncclSuccess && r != ncclInProgress) {
    why = std::string("ncclCommInitRankConfig: ") + a.error_string(r) + (c ? std::string(" (") + a.last_error(c) + ")" : "");
    if (c) a.abort(c);
    return nullptr;
  }
  const auto end = deadline();
  for (;;) {
    ncclResult_t st = ncclSuccess;
    a.async_error(c, &st);
    if (st == ncclSuccess) break;
    if (st != ncclInProgress || Clock::now() > end) {
      why = st != ncclInProgress
                ? std::string("ncclCommInitRankConfig: ") + a.error_string(st) + " (" + a.last_error(c) + ")"
                : "ncclCommInitRankConfig timed out (NUVEC_DISTRIBUTED_TIMEOUT) waiting for the other ranks";
      a.abort(c);
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  // The world lives until the process ends (never destroyed in static
  // destruction, after CUDA may have gone).
  auto g = NcclGroup::make(c);
  new std::shared_ptr<NcclGroup>(g);
  return g;
}

void launch_nccl(const Collective& p, const std::vector<Array>& in, std::vector<Array>& out, void* stream,
                 Stream s) {
  auto* g = dynamic_cast<NcclGroup*>(p.group().get());
  if (!g) (Error(ErrorKind::internal, "launch_nccl: not an nccl group")).raise();
  g->launch(p, in, out, static_cast<cudaStream_t>(stream), s);
}

#endif

}  // namespace nuvec::cuda
