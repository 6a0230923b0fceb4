// all_sum over the nccl backend against a raw ncclAllReduce (sum, in
// place) of a buffer of the same size and dtype on the same GPUs, in the
// same run: issue 31's target is a bus bandwidth of at least 90% of the
// raw call's at 256 MiB of bfloat16. One process per GPU, each seeing its
// own GPU:
//   scripts/nuvec-run --gpus -n 8 build/gpu/bench/nccl_allsum_bench
// Bus bandwidth = bytes / time * 2 (n - 1) / n, as nccl-tests reports it.
// nuvec's figure is the whole op (the node, the rank-order exchange, the
// sums, the gather) from a built array to its completion.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <nuvec/distributed.h>
#include <nuvec/nuvec.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench_util.h"
#include "distributed/group.h"

using namespace nuvec;
namespace dd = nuvec::distributed::detail;

namespace {

template <class F>
F sym(void* lib, const char* name) {
  auto f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) {
    std::fprintf(stderr, "libnccl.so.2 lacks %s\n", name);
    std::exit(1);
  }
  return f;
}

}  // namespace

int main() try {
  auto g = distributed::init(true, "nccl");
  const int n = g.size(), rank = g.rank();
  // The baseline's own communicator, its id shared as nuvec shares its own.
  void* lib = dlopen("libnccl.so.2", RTLD_NOW);
  if (!lib) throw std::runtime_error("libnccl.so.2 not found");
  auto get_id = sym<decltype(&ncclGetUniqueId)>(lib, "ncclGetUniqueId");
  auto init_rank = sym<decltype(&ncclCommInitRank)>(lib, "ncclCommInitRank");
  auto all_reduce = sym<decltype(&ncclAllReduce)>(lib, "ncclAllReduce");
  ncclUniqueId id{};
  if (rank == 0) get_id(&id);
  std::string mine(id.internal, sizeof id.internal), got = mine;
  if (dd::env_launch().size > 0) {
    got = dd::share_from_rank0(dd::env_launch(), mine);
  } else if (n > 1) {
    auto mpi = distributed::init(true, "mpi");
    std::string all(mine.size() * static_cast<size_t>(n), '\0');
    mpi.impl()->all_gather(mine.data(), all.data(), static_cast<int64_t>(mine.size()), 1, "bench id");
    got = all.substr(0, mine.size());
  }
  std::memcpy(id.internal, got.data(), sizeof id.internal);
  ncclComm_t comm = nullptr;
  if (init_rank(&comm, n, id, rank) != ncclSuccess) throw std::runtime_error("ncclCommInitRank failed");
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (rank == 0) {
    std::printf("all_sum over %d GPUs (bfloat16) against ncclAllReduce; bus GB/s in the names\n", n);
    bench::header();
  }
  for (int64_t mib : {1, 16, 256}) {
    const int64_t count = mib * (1 << 20) / 2;
    void* buf = nullptr;
    cudaMalloc(&buf, static_cast<size_t>(count) * 2);
    cudaMemset(buf, 0, static_cast<size_t>(count) * 2);
    const int reps = mib >= 256 ? 11 : 31;
    double base = bench::median_ms(reps, [&] {
      all_reduce(buf, buf, static_cast<size_t>(count), ncclBfloat16, ncclSum, comm, stream);
      cudaStreamSynchronize(stream);
    });
    Array x = random::normal({static_cast<int>(count)}, bfloat16, 0.0f, 1.0f, random::key(rank), Device::gpu);
    x.eval();
    synchronize();
    double ours = bench::median_ms(reps, [&] {
      distributed::all_sum(x, g).eval();
      synchronize();
    });
    cudaFree(buf);
    if (rank == 0) {
      const double bytes = static_cast<double>(count) * 2, factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
      char name[96];
      std::snprintf(name, sizeof name, "all_sum %lld MiB: nuvec %.0f / raw %.0f GB/s", static_cast<long long>(mib),
                    bytes / (ours * 1e6) * factor, bytes / (base * 1e6) * factor);
      bench::row(name, ours, base);
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "nccl_allsum_bench: %s\n", e.what());
  return 1;
}
