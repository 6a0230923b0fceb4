// The "mpi" backend: Debian's OpenMPI, loaded with dlopen when a group is
// first made, so that nuvec itself links no MPI library. Every call is
// non-blocking and waited for with a deadline (NUVEC_DISTRIBUTED_TIMEOUT),
// so a peer that never arrives gives an Error, never a hang. Sums are in
// rank order: rank r receives block r of every rank (point-to-point
// messages), reduces them with detail::combine and sends the reduced block
// to every rank, which moves as many bytes as a ring all-reduce and gives
// the same bits on every rank whatever MPI does. docs/distributed.md.
#include <cstdlib>
#include <string>

#include "distributed/group.h"

#if NUVEC_HAVE_MPI_H
#define OMPI_SKIP_MPICXX 1
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace nuvec::distributed::detail {

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

#if !NUVEC_HAVE_MPI_H

bool mpi_loadable() { return false; }
std::shared_ptr<GroupImpl> mpi_world(std::string& why) {
  why = "nuvec was built without MPI's header (libopenmpi-dev)";
  return nullptr;
}

#else

namespace {

// The entry points and predefined handles, looked up in the library.
struct Api {
  void* lib = nullptr;
  std::string error;
  decltype(&MPI_Initialized) initialized = nullptr;
  decltype(&MPI_Init_thread) init_thread = nullptr;
  decltype(&MPI_Finalized) finalized = nullptr;
  decltype(&MPI_Finalize) finalize = nullptr;
  decltype(&MPI_Comm_rank) comm_rank = nullptr;
  decltype(&MPI_Comm_size) comm_size = nullptr;
  decltype(&MPI_Comm_split) comm_split = nullptr;
  decltype(&MPI_Comm_set_errhandler) set_errhandler = nullptr;
  decltype(&MPI_Error_string) error_string = nullptr;
  decltype(&MPI_Test) test = nullptr;
  decltype(&MPI_Testall) testall = nullptr;
  decltype(&MPI_Iallreduce) iallreduce = nullptr;
  decltype(&MPI_Ialltoall) ialltoall = nullptr;
  decltype(&MPI_Iallgather) iallgather = nullptr;
  decltype(&MPI_Isend) isend = nullptr;
  decltype(&MPI_Irecv) irecv = nullptr;
  MPI_Comm world = nullptr;
  MPI_Datatype byte = nullptr, int64 = nullptr;
  MPI_Op max = nullptr;
  MPI_Errhandler errors_return = nullptr;
  bool started_here = false;  // this process called MPI_Init_thread
  bool broken = false;        // a collective timed out: do not finalize
};

// All MPI calls of the process, one at a time (MPI_THREAD_SERIALIZED).
std::mutex& mpi_mutex() {
  static std::mutex m;
  return m;
}

template <class F>
bool find(Api& a, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(a.lib, name));
  if (!fn) a.error = std::string("symbol ") + name + " missing";
  return fn != nullptr;
}

// Predefined handles are data: a program that links libmpi itself holds
// copies of them (copy relocations) which the library then uses, so the
// process-wide definition comes first.
template <class H>
bool handle(Api& a, H& h, const char* name) {
  h = reinterpret_cast<H>(dlsym(RTLD_DEFAULT, name));
  if (!h) h = reinterpret_cast<H>(dlsym(a.lib, name));
  if (!h) a.error = std::string("symbol ") + name + " missing";
  return h != nullptr;
}

Api& api() {
  static Api a = [] {
    Api r;
    std::vector<std::string> names;
    if (const char* v = std::getenv("NUVEC_MPI_LIBRARY")) names.push_back(v);
    names.push_back("libmpi.so.40");
    names.push_back("libmpi.so");
    for (const auto& n : names) {
      // Global symbols: OpenMPI's own components resolve against libmpi.
      r.lib = dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (r.lib) break;
    }
    if (!r.lib) {
      r.error = "libmpi.so.40 (Debian's OpenMPI, package libopenmpi3) could not be loaded";
      return r;
    }
    bool ok = find(r, r.initialized, "MPI_Initialized") && find(r, r.init_thread, "MPI_Init_thread") &&
              find(r, r.finalized, "MPI_Finalized") && find(r, r.finalize, "MPI_Finalize") &&
              find(r, r.comm_rank, "MPI_Comm_rank") && find(r, r.comm_size, "MPI_Comm_size") &&
              find(r, r.comm_split, "MPI_Comm_split") &&
              find(r, r.set_errhandler, "MPI_Comm_set_errhandler") &&
              find(r, r.error_string, "MPI_Error_string") && find(r, r.test, "MPI_Test") &&
              find(r, r.testall, "MPI_Testall") &&
              find(r, r.iallreduce, "MPI_Iallreduce") && find(r, r.ialltoall, "MPI_Ialltoall") &&
              find(r, r.iallgather, "MPI_Iallgather") && find(r, r.isend, "MPI_Isend") &&
              find(r, r.irecv, "MPI_Irecv") && handle(r, r.world, "ompi_mpi_comm_world") &&
              handle(r, r.byte, "ompi_mpi_byte") && handle(r, r.int64, "ompi_mpi_int64_t") &&
              handle(r, r.max, "ompi_mpi_op_max") &&
              handle(r, r.errors_return, "ompi_mpi_errors_return");
    if (!ok) {
      r.error = "the MPI library is not OpenMPI 4 (" + r.error + ")";
      dlclose(r.lib);
      r.lib = nullptr;
    }
    return r;
  }();
  return a;
}

void finalize_at_exit() {
  Api& a = api();
  std::lock_guard<std::mutex> lock(mpi_mutex());
  int done = 0;
  a.finalized(&done);
  // After a timeout a request is still pending and MPI_Finalize could wait
  // for the peer forever: the process exits without it.
  if (!done && !a.broken) a.finalize();
}

constexpr int kTagHeader = 0x4e56;
constexpr int kTagAck = 0x4e57;
constexpr int kTagData = 0x4e58;
constexpr int kTagReduce = 0x4e59;  // all_reduce's blocks to their owners
constexpr int kTagGather = 0x4e5a;  // and the reduced blocks back
// The largest message: counts and displacements are ints.
constexpr int64_t kMaxMessage = int64_t{1} << 30;

class MpiGroup final : public GroupImpl {
 public:
  MpiGroup(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "mpi"; }

  std::shared_ptr<GroupImpl> split(int color, int key) override {
    if (color < 0)
      (Error(ErrorKind::invalid_argument, "Group::split: color must be >= 0, got " + std::to_string(color)))
          .raise();
    std::lock_guard<std::mutex> lock(mpi_mutex());
    usable("split");
    MPI_Comm c = nullptr;
    check(api().comm_split(comm_, color, key < 0 ? rank_ : key, &c), "split");
    api().set_errhandler(c, api().errors_return);
    int r = 0, n = 0;
    api().comm_rank(c, &r);
    api().comm_size(c, &n);
    return std::make_shared<MpiGroup>(c, r, n);
  }

  void all_reduce(CollectiveOp op, const void* in, void* out, int64_t count, DType dtype, uint64_t sig,
                  const std::string& what) override {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    agree(sig, what);
    const int64_t isz = static_cast<int64_t>(dtype.size());
    const int64_t seg = std::max<int64_t>(1, kMaxMessage / isz);
    auto src = static_cast<const char*>(in);
    auto dst = static_cast<char*>(out);
    if ((size_ - 1) * count * isz <= kWhole) return reduce_whole(op, src, dst, count, dtype, what);
    for (int64_t s0 = 0; s0 < count; s0 += seg)
      reduce_segment(op, src + s0 * isz, dst + s0 * isz, std::min(seg, count - s0), dtype, what);
  }

  void all_gather(const void* in, void* out, int64_t bytes, uint64_t sig, const std::string& what) override {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    agree(sig, what);
    fits(bytes, what);
    MPI_Request req;
    check(api().iallgather(in, static_cast<int>(bytes), api().byte, out, static_cast<int>(bytes), api().byte,
                           comm_, &req),
          what);
    wait(req, what);
  }

  void reduce_scatter(const void* in, void* out, int64_t count, DType dtype, uint64_t sig,
                      const std::string& what) override {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    agree(sig, what);
    const int64_t block = count * static_cast<int64_t>(dtype.size());
    fits(block, what);
    char* scratch = buffer(static_cast<size_t>(block * size_));
    MPI_Request req;
    check(api().ialltoall(in, static_cast<int>(block), api().byte, scratch, static_cast<int>(block),
                          api().byte, comm_, &req),
          what);
    wait(req, what);
    std::vector<const void*> parts(size_);
    for (int r = 0; r < size_; ++r) parts[r] = scratch + r * block;
    combine(CollectiveOp::all_sum, dtype, parts.data(), size_, out, count);
    release();
  }

  void send(const void* in, int64_t bytes, int dst, uint64_t sig, const std::string& what) override {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    usable(what);
    int64_t header[2] = {static_cast<int64_t>(sig), bytes};
    MPI_Request req;
    check(api().isend(header, 2, api().int64, dst, kTagHeader, comm_, &req), what);
    wait(req, what);
    int64_t ack = 0;
    check(api().irecv(&ack, 1, api().int64, dst, kTagAck, comm_, &req), what);
    wait(req, what);
    if (!ack) mismatch(what, "rank " + std::to_string(dst) + " expected another shape or dtype");
    auto p = static_cast<const char*>(in);
    for (int64_t s0 = 0; s0 < bytes; s0 += kMaxMessage) {
      check(api().isend(p + s0, static_cast<int>(std::min(kMaxMessage, bytes - s0)), api().byte, dst, kTagData,
                        comm_, &req),
            what);
      wait(req, what);
    }
  }

  void recv(void* out, int64_t bytes, int src, uint64_t sig, const std::string& what) override {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    usable(what);
    int64_t header[2] = {0, 0};
    MPI_Request req;
    check(api().irecv(header, 2, api().int64, src, kTagHeader, comm_, &req), what);
    wait(req, what);
    int64_t ack = header[0] == static_cast<int64_t>(sig) && header[1] == bytes;
    check(api().isend(&ack, 1, api().int64, src, kTagAck, comm_, &req), what);
    wait(req, what);
    if (!ack) mismatch(what, "rank " + std::to_string(src) + " sent another shape or dtype");
    auto p = static_cast<char*>(out);
    for (int64_t s0 = 0; s0 < bytes; s0 += kMaxMessage) {
      check(api().irecv(p + s0, static_cast<int>(std::min(kMaxMessage, bytes - s0)), api().byte, src, kTagData,
                        comm_, &req),
            what);
      wait(req, what);
    }
  }

 private:
  // Block r of a segment of n elements: n / size elements, one more for the
  // first n % size ranks.
  // Small buffers: every rank sends its whole buffer to every rank, which
  // combines them in rank order (the same bits as the blocks' way, in one
  // round of messages instead of two).
  static constexpr int64_t kWhole = int64_t{256} << 10;
  void reduce_whole(CollectiveOp op, const char* in, char* out, int64_t count, DType dtype,
                    const std::string& what) {
    const int bytes = static_cast<int>(count * static_cast<int64_t>(dtype.size()));
    char* scratch = buffer(static_cast<size_t>(bytes) * size_);
    std::vector<MPI_Request> reqs;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      reqs.emplace_back();
      check(api().irecv(scratch + static_cast<int64_t>(r) * bytes, bytes, api().byte, r, kTagReduce, comm_,
                        &reqs.back()),
            what);
      reqs.emplace_back();
      check(api().isend(in, bytes, api().byte, r, kTagReduce, comm_, &reqs.back()), what);
    }
    wait_all(reqs, what);
    std::vector<const void*> parts(size_);
    for (int r = 0; r < size_; ++r) parts[r] = r == rank_ ? in : scratch + static_cast<int64_t>(r) * bytes;
    combine(op, dtype, parts.data(), size_, out, count);
    release();
  }

  void reduce_segment(CollectiveOp op, const char* in, char* out, int64_t n, DType dtype,
                      const std::string& what) {
    const int isz = static_cast<int>(dtype.size());
    std::vector<int> cnt(size_), off(size_);
    int64_t at = 0;
    for (int r = 0; r < size_; ++r) {
      cnt[r] = static_cast<int>((n / size_ + (r < n % size_ ? 1 : 0)) * isz);
      off[r] = static_cast<int>(at);
      at += cnt[r];
    }
    // Point-to-point messages (MPI's non-blocking collectives progress
    // far slower): block r of every rank to rank r, in rank order...
    const int mine = cnt[rank_];
    char* scratch = buffer(static_cast<size_t>(mine) * size_);
    std::vector<MPI_Request> reqs;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      reqs.emplace_back();
      check(api().irecv(scratch + r * mine, mine, api().byte, r, kTagReduce, comm_, &reqs.back()), what);
      reqs.emplace_back();
      check(api().isend(in + off[r], cnt[r], api().byte, r, kTagReduce, comm_, &reqs.back()), what);
    }
    if (mine > 0) std::memcpy(scratch + rank_ * mine, in + off[rank_], static_cast<size_t>(mine));
    wait_all(reqs, what);
    std::vector<const void*> parts(size_);
    for (int r = 0; r < size_; ++r) parts[r] = scratch + r * mine;
    combine(op, dtype, parts.data(), size_, out + off[rank_], mine / isz);
    release();
    // ... and the reduced blocks to every rank.
    reqs.clear();
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      reqs.emplace_back();
      check(api().irecv(out + off[r], cnt[r], api().byte, r, kTagGather, comm_, &reqs.back()), what);
      reqs.emplace_back();
      check(api().isend(out + off[rank_], mine, api().byte, r, kTagGather, comm_, &reqs.back()), what);
    }
    wait_all(reqs, what);
  }

  // Scratch for the blocks received, kept between calls (a fresh large
  // allocation is page faults on every call) up to kKeep bytes.
  static constexpr size_t kKeep = size_t{64} << 20;
  char* buffer(size_t bytes) {
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    return scratch_.data();
  }
  void release() {
    if (scratch_.size() > kKeep) std::vector<char>().swap(scratch_);
  }

  // Every rank passes the same signature, or every rank fails.
  void agree(uint64_t sig, const std::string& what) {
    usable(what);
    int64_t mine[2] = {static_cast<int64_t>(sig), ~static_cast<int64_t>(sig)};
    int64_t most[2] = {0, 0};
    MPI_Request req;
    check(api().iallreduce(mine, most, 2, api().int64, api().max, comm_, &req), what);
    wait(req, what);
    if (most[0] != mine[0] || most[1] != mine[1])
      mismatch(what, "the ranks called different collectives, or passed different shapes or dtypes");
  }

  void wait(MPI_Request& req, const std::string& what) { wait_for(what, [&](int* flag) { return api().test(&req, flag, MPI_STATUS_IGNORE); }); }
  void wait_all(std::vector<MPI_Request>& reqs, const std::string& what) {
    if (reqs.empty()) return;
    wait_for(what, [&](int* flag) {
      return api().testall(static_cast<int>(reqs.size()), reqs.data(), flag, MPI_STATUSES_IGNORE);
    });
  }

  // Polls `test` (an MPI_Test-like call) until it sets its flag, or fails
  // the group at the deadline.
  template <class T>
  void wait_for(const std::string& what, T&& test) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const double limit = timeout_seconds();
    for (int spins = 0;; ++spins) {
      int flag = 0;
      check(test(&flag), what);
      if (flag) return;
      if (spins > 64) {
        double waited = std::chrono::duration<double>(clock::now() - start).count();
        if (waited > limit) {
          api().broken = true;
          broken_ = what + " timed out after " + std::to_string(static_cast<int>(limit)) +
                    " s (NUVEC_DISTRIBUTED_TIMEOUT) waiting for the other ranks: one exited, skipped "
                    "this collective or is stuck";
          (Error(ErrorKind::backend, broken_ + "; this group can no longer be used")).raise();
        }
        if (spins > 4096) std::this_thread::sleep_for(std::chrono::microseconds(20));
        else std::this_thread::yield();
      }
    }
  }

  void usable(const std::string& what) const {
    if (!broken_.empty())
      (Error(ErrorKind::backend, what + ": an earlier collective of this group failed (" + broken_ + ")")).raise();
  }
  static void fits(int64_t bytes, const std::string& what) {
    if (bytes > INT_MAX)
      (Error(ErrorKind::overflow, what + ": " + std::to_string(bytes) +
                                      " bytes per rank; the mpi backend sends at most 2^31 - 1 bytes per rank "
                                      "in one all_gather or reduce_scatter: split the array")).raise();
  }
  [[noreturn]] static void mismatch(const std::string& what, const std::string& why) {
    (Error(ErrorKind::shape_mismatch, what + ": " + why)).raise();
  }
  static void check(int rc, const std::string& what) {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING] = {0};
    int len = 0;
    api().error_string(rc, msg, &len);
    (Error(ErrorKind::backend, what + ": MPI failed: " + std::string(msg, static_cast<size_t>(len)))).raise();
  }

  MPI_Comm comm_;
  int rank_, size_;
  std::string broken_;
  std::vector<char> scratch_;
};

}  // namespace

bool mpi_loadable() { return api().lib != nullptr; }

std::shared_ptr<GroupImpl> mpi_world(std::string& why) {
  Api& a = api();
  if (!a.lib) {
    why = a.error;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mpi_mutex());
  int inited = 0;
  a.initialized(&inited);
  if (!inited) {
    int provided = 0;
    if (a.init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
      why = "MPI_Init_thread failed";
      return nullptr;
    }
    a.started_here = true;
    std::atexit(finalize_at_exit);
  }
  a.set_errhandler(a.world, a.errors_return);
  int r = 0, n = 0;
  a.comm_rank(a.world, &r);
  a.comm_size(a.world, &n);
  return std::make_shared<MpiGroup>(a.world, r, n);
}

#endif

}  // namespace nuvec::distributed::detail
