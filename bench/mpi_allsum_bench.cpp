// all_sum over the mpi backend against a raw MPI_Allreduce of the same
// buffer, in the same run (issue 31's CPU target: within 10%). Run under
// mpirun, e.g.
//   mpirun --allow-run-as-root --oversubscribe -np 2 build/cpu/bench/mpi_allsum_bench
// nuvec's figure is the whole op: building the node, the rank-order
// reduction (alltoallv, sum, allgatherv) and the signature check.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#include <nuvec/distributed.h>
#include <nuvec/nuvec.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_util.h"

using namespace nuvec;

int main() {
  auto g = distributed::init(true, "mpi");
  if (g.rank() == 0) {
    std::printf("all_sum over %d ranks (float32) against MPI_Allreduce\n", g.size());
    bench::header();
  }
  for (int64_t n : {int64_t{256}, int64_t{1} << 14, int64_t{1} << 18, int64_t{1} << 22, int64_t{1} << 24}) {
    Array x = random::normal({static_cast<int>(n)}, random::key(g.rank()));
    x.eval();
    std::vector<float> out(static_cast<size_t>(n));
    const float* in = x.data<float>();
    // Alternating, each after a barrier, so that drift and a late rank
    // fall on both.
    const int reps = n >= (1 << 22) ? 15 : 101;
    std::vector<double> tb, to;
    auto timed = [](const auto& f) {
      MPI_Barrier(MPI_COMM_WORLD);
      auto s = std::chrono::steady_clock::now();
      f();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
    };
    for (int k = 0; k <= reps; ++k) {
      double b = timed([&] {
        MPI_Allreduce(in, out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      });
      double o = timed([&] { distributed::all_sum(x, g).eval(); });
      if (k > 0) tb.push_back(b), to.push_back(o);  // the first is a warm-up
    }
    std::sort(tb.begin(), tb.end());
    std::sort(to.begin(), to.end());
    const double base = tb[tb.size() / 2], ours = to[to.size() / 2];
    if (g.rank() == 0) {
      std::string name = "all_sum of " + std::to_string(n * 4 / 1024) + " KiB";
      bench::row(name.c_str(), ours, base);
    }
  }
  return 0;
}
