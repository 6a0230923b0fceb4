// Group, init and the group of one process; the rank-order combine every
// backend reduces with.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "distributed/group.h"
#include "nuvec/distributed.h"
#include "nuvec/kernels/binary.h"

namespace nuvec::distributed {

namespace detail {

namespace {

template <class T, class F>
void combine_typed(F f, const void* const* parts, int n, void* out, int64_t count) {
  T* dst = static_cast<T*>(out);
  const T* first = static_cast<const T*>(parts[0]);
  for (int64_t i = 0; i < count; ++i) {
    T acc = first[i];
    for (int r = 1; r < n; ++r) acc = f(acc, static_cast<const T*>(parts[r])[i]);
    dst[i] = acc;
  }
}

class SingleGroup final : public GroupImpl {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* backend() const override { return "single"; }
  std::shared_ptr<GroupImpl> split(int, int) override { return single_group(); }
  void all_reduce(CollectiveOp, const void* in, void* out, int64_t count, DType dtype, uint64_t,
                  const std::string&) override {
    move(in, out, count * static_cast<int64_t>(dtype.size()));
  }
  void all_gather(const void* in, void* out, int64_t bytes, uint64_t, const std::string&) override {
    move(in, out, bytes);
  }
  void reduce_scatter(const void* in, void* out, int64_t count, DType dtype, uint64_t,
                      const std::string&) override {
    move(in, out, count * static_cast<int64_t>(dtype.size()));
  }
  void send(const void*, int64_t, int dst, uint64_t, const std::string& what) override {
    no_peer(what, dst);
  }
  void recv(void*, int64_t, int src, uint64_t, const std::string& what) override { no_peer(what, src); }

 private:
  static void move(const void* in, void* out, int64_t bytes) {
    if (in != out && bytes > 0) std::memmove(out, in, static_cast<size_t>(bytes));
  }
  [[noreturn]] static void no_peer(const std::string& what, int peer) {
    (Error(ErrorKind::invalid_argument,
           what + ": rank " + std::to_string(peer) + " does not exist in a group of one process")).raise();
  }
};

}  // namespace

void combine(CollectiveOp op, DType dtype, const void* const* parts, int n, void* out, int64_t count) {
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (op) {
      case CollectiveOp::all_max: return combine_typed<T>(kernels::Maximum{}, parts, n, out, count);
      case CollectiveOp::all_min: return combine_typed<T>(kernels::Minimum{}, parts, n, out, count);
      default: return combine_typed<T>(kernels::Add{}, parts, n, out, count);
    }
  });
}

std::shared_ptr<GroupImpl> single_group() {
  static const std::shared_ptr<GroupImpl> g = std::make_shared<SingleGroup>();
  return g;
}

double timeout_seconds() {
  const char* v = std::getenv("NUVEC_DISTRIBUTED_TIMEOUT");
  if (v && *v) {
    char* end = nullptr;
    double t = std::strtod(v, &end);
    if (end != v && t > 0) return t;
  }
  return 300.0;
}

}  // namespace detail

Group::Group(std::shared_ptr<detail::GroupImpl> impl) : impl_(std::move(impl)) {}
int Group::rank() const { return impl_->rank(); }
int Group::size() const { return impl_->size(); }
std::string Group::backend() const { return impl_->backend(); }
Group Group::split(int color, int key) const { return Group(impl_->split(color, key)); }

bool is_available(const std::string& backend) {
  if (backend == "any" || backend == "single") return true;
  if (backend == "mpi") return detail::mpi_loadable();
  if (backend == "nccl") return detail::nccl_loadable();
  return false;
}

Group init(bool strict, const std::string& backend) {
  if (backend != "any" && backend != "mpi" && backend != "nccl" && backend != "single")
    (Error(ErrorKind::invalid_argument,
           "distributed::init: unknown backend \"" + backend + "\" (mpi, nccl, single or any)")).raise();
  if (backend == "single") return Group(detail::single_group());
  static std::mutex m;
  static std::map<std::string, std::shared_ptr<detail::GroupImpl>> worlds;
  std::lock_guard<std::mutex> lock(m);
  // "any": mpi under mpirun, nccl when launched through NUVEC_WORLD_SIZE.
  const bool by_mpi = detail::launched_by_mpi();
  const bool by_env = detail::env_launch().size > 0;
  std::string name = backend;
  if (name == "any") name = by_mpi ? "mpi" : by_env ? "nccl" : "single";
  if (name == "single") return Group(detail::single_group());
  auto& world = worlds[name];
  if (world) return Group(world);
  std::string why;
  world = name == "mpi" ? detail::mpi_world(why) : detail::nccl_world(why);
  if (world) return Group(world);
  if (strict)
    (Error(ErrorKind::backend, "distributed::init: the " + name + " backend did not start: " + why)).raise();
  static std::once_flag warned;
  if (by_mpi || by_env) std::call_once(warned, [&] {
    std::fprintf(stderr, "nuvec: launched as one of several ranks but %s did not start (%s): a group of one\n",
                 name.c_str(), why.c_str());
  });
  return Group(detail::single_group());
}

Group init(const char* backend) { return init(false, std::string(backend)); }
Group init(const std::string& backend) { return init(false, backend); }

}  // namespace nuvec::distributed
