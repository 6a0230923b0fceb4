// nuvec::distributed: the group of one process here, and the mpi backend
// with 2 and 3 ranks started by the tests themselves (mpirun runs this test
// binary's MpiRanks.* and MpiFailure.* cases, which skip outside mpirun).
// References: every rank draws every rank's input, so each computes the
// expected result locally (the rank-order sum with ops::add, concatenate,
// maximum), and float64 sums bound the float32 ones.
#include <gtest/gtest.h>
#include <nuvec/distributed.h>
#include <nuvec/nuvec.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "support/bits.h"
#include "support/mpi_run.h"

using namespace nuvec;
namespace dist = nuvec::distributed;
using nuvec::testing::bits_of;
using nuvec::testing::have_mpirun;
using nuvec::testing::in_mpi_child;
using nuvec::testing::run_ranks;

namespace {

// Rank r's input: normal values of `shape` from seed + r, in `dt`.
Array input(const Shape& shape, DType dt, int seed, int r) {
  Array x = random::normal(shape, random::key(seed * 101 + r)) * 3.0f;
  return dt == bool_ ? x > 0.0f : x.astype(dt);
}

std::string error_of(const Array& y) {
  try {
    y.eval();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// ---- The group of one process ---------------------------------------------

TEST(DistributedSingle, InitGivesAGroupOfOne) {
  if (in_mpi_child()) GTEST_SKIP() << "under mpirun";
  auto g = dist::init();
  EXPECT_EQ(g.size(), 1);
  EXPECT_EQ(g.rank(), 0);
  EXPECT_EQ(g.backend(), "single");
  EXPECT_TRUE(dist::is_available("single"));
  EXPECT_FALSE(dist::is_available("carrier-pigeon"));
  EXPECT_THROW(dist::init(false, "carrier-pigeon"), Error);
  EXPECT_EQ(g.split(3).size(), 1);
  if (!dist::is_available("nccl")) {  // no GPU or no libnccl here (CI)
    EXPECT_THROW(dist::init(true, "nccl"), Error);
    EXPECT_EQ(dist::init("nccl").backend(), "single");
  }
}

TEST(DistributedSingle, CollectivesAreCopies) {
  auto g = dist::init("single");
  Array x = input({4, 3}, float32, 1, 0);
  Array xt = ops::transpose(input({3, 4}, float32, 2, 0));
  EXPECT_EQ(bits_of(dist::all_sum(x, g)), bits_of(x));
  EXPECT_EQ(bits_of(dist::all_max(xt, g)), bits_of(xt));
  EXPECT_EQ(bits_of(dist::all_min(x, g)), bits_of(x));
  EXPECT_EQ(bits_of(dist::all_gather(xt, g)), bits_of(xt));
  EXPECT_EQ(bits_of(dist::reduce_scatter(x, g)), bits_of(x));
  Array s = dist::all_gather(array(2.5f), g);
  EXPECT_EQ(s.shape(), (Shape{1}));
  EXPECT_EQ(s.to_vector<float>(), std::vector<float>{2.5f});
}

TEST(DistributedSingle, InvalidCallsFailClearly) {
  auto g = dist::init("single");
  Array scalar = dist::reduce_scatter(array(1.0f), g);
  ASSERT_TRUE(scalar.is_failed());
  EXPECT_NE(std::string(scalar.error()->what()).find("reduce_scatter"), std::string::npos);
  Array s = dist::send(array({1.0f, 2.0f}), 1, g);
  ASSERT_TRUE(s.is_failed());
  EXPECT_NE(std::string(s.error()->what()).find("dst 1"), std::string::npos);
  EXPECT_TRUE(dist::recv({2}, float32, 0, g).is_failed());
  EXPECT_TRUE(dist::all_max(array({1.0f}).astype(complex64), g).is_failed());
}

// ---- Several ranks (run under mpirun by DistributedMpi below) -------------

TEST(MpiRanks, AllSumIsTheRankOrderSum) {
  if (!in_mpi_child()) GTEST_SKIP() << "runs under mpirun (DistributedMpi)";
  auto g = dist::init(true, "mpi");
  const int n = g.size(), me = g.rank();
  const Shape shapes[] = {{}, {0}, {1}, {5}, {7, 3}, {130, 33}};
  int seed = 0;
  for (DType dt : {float32, float64, float16, bfloat16, int32, int64, uint8})
    for (const auto& shape : shapes) {
      ++seed;
      Array expect = input(shape, dt, seed, 0);
      for (int r = 1; r < n; ++r) expect = ops::add(expect, input(shape, dt, seed, r));
      Array got = dist::all_sum(input(shape, dt, seed, me), g);
      EXPECT_EQ(bits_of(got), bits_of(expect)) << dtype_name(dt) << " seed " << seed;
      Array mx = input(shape, dt, seed, 0), mn = mx;
      for (int r = 1; r < n; ++r) {
        mx = ops::maximum(mx, input(shape, dt, seed, r));
        mn = ops::minimum(mn, input(shape, dt, seed, r));
      }
      EXPECT_EQ(bits_of(dist::all_max(input(shape, dt, seed, me), g)), bits_of(mx)) << dtype_name(dt);
      EXPECT_EQ(bits_of(dist::all_min(input(shape, dt, seed, me), g)), bits_of(mn)) << dtype_name(dt);
    }
  // Past the small-buffer path (whole buffers to every rank): blocks of
  // uneven sizes to their owners and back.
  for (DType dt : {float32, bfloat16}) {
    const Shape big{70001 * 4 / static_cast<int>(dt.size())};
    Array expect = input(big, dt, 50, 0);
    for (int r = 1; r < n; ++r) expect = ops::add(expect, input(big, dt, 50, r));
    EXPECT_EQ(bits_of(dist::all_sum(input(big, dt, 50, me), g)), bits_of(expect)) << dtype_name(dt);
  }
  // Within float32 rounding of the float64 sum; from a strided view.
  Array x64 = ops::zeros({40, 9}, float64);
  for (int r = 0; r < n; ++r) x64 = x64 + input({40, 9}, float64, 99, r);
  Array got = dist::all_sum(ops::transpose(ops::transpose(input({40, 9}, float32, 99, me))), g);
  double err = ops::max(ops::abs(got.astype(float64) - x64)).item<double>();
  EXPECT_LT(err, 1e-5 * n * 12);
}

TEST(MpiRanks, GatherScatterSendRecv) {
  if (!in_mpi_child()) GTEST_SKIP() << "runs under mpirun (DistributedMpi)";
  auto g = dist::init(true, "mpi");
  const int n = g.size(), me = g.rank();
  std::vector<Array> parts;
  for (int r = 0; r < n; ++r) parts.push_back(input({2, 5}, float32, 7, r));
  EXPECT_EQ(bits_of(dist::all_gather(input({2, 5}, float32, 7, me), g)), bits_of(ops::concatenate(parts, 0)));
  Array sc = dist::all_gather(array(static_cast<float>(me)), g);
  EXPECT_EQ(sc.shape(), (Shape{n}));
  std::vector<float> ranks(n);
  for (int r = 0; r < n; ++r) ranks[r] = static_cast<float>(r);
  EXPECT_EQ(sc.to_vector<float>(), ranks);
  // reduce_scatter: block `me` of the rank-order sum.
  Array total = input({2 * n, 3}, float32, 8, 0);
  for (int r = 1; r < n; ++r) total = total + input({2 * n, 3}, float32, 8, r);
  Array rs = dist::reduce_scatter(input({2 * n, 3}, float32, 8, me), g);
  EXPECT_EQ(bits_of(rs), bits_of(ops::slice(total, {2 * me, 0}, {2 * me + 2, 3})));
  // A ring of sends: even ranks send first, odd ranks receive first.
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  Array mine = input({3, 4}, bfloat16, 9, me);
  Array got;
  if (me % 2 == 0) {
    dist::send(mine, next, g).eval();
    got = dist::recv_like(mine, prev, g);
    got.eval();
  } else {
    got = dist::recv({3, 4}, bfloat16, prev, g);
    got.eval();
    dist::send(mine, next, g).eval();
  }
  EXPECT_EQ(bits_of(got), bits_of(input({3, 4}, bfloat16, 9, prev)));
}

TEST(MpiRanks, MismatchFailsOnEveryRankAndTheGroupGoesOn) {
  if (!in_mpi_child()) GTEST_SKIP() << "runs under mpirun (DistributedMpi)";
  auto g = dist::init(true, "mpi");
  Array x = ops::ones({g.rank() == 0 ? 3 : 4});
  std::string e = error_of(dist::all_sum(x, g));
  EXPECT_NE(e.find("different shapes or dtypes"), std::string::npos) << e;
  e = error_of(dist::all_sum(ops::ones({2}, g.rank() == 0 ? float32 : int32), g));
  EXPECT_NE(e.find("different shapes or dtypes"), std::string::npos) << e;
  EXPECT_EQ(dist::all_sum(ops::ones({2}), g).to_vector<float>(),
            std::vector<float>(2, static_cast<float>(g.size())));
}

TEST(MpiRanks, TransformsAndSplit) {
  if (!in_mpi_child()) GTEST_SKIP() << "runs under mpirun (DistributedMpi)";
  auto g = dist::init(true, "mpi");
  const int n = g.size(), me = g.rank();
  // vjp of all_gather: this rank's rows of the cotangent.
  Array w = input({2 * n, 3}, float32, 11, 0);  // the same on every rank
  auto f = [&](const std::vector<Array>& a) { return ops::sum(dist::all_gather(a[0], g) * w); };
  Array dx = grad(f, 0)({input({2, 3}, float32, 12, me)})[0];
  EXPECT_EQ(bits_of(dx), bits_of(ops::slice(w, {2 * me, 0}, {2 * me + 2, 3})));
  // vjp of all_sum passes the cotangent (MLX's rule).
  Array ds = grad([&](const std::vector<Array>& a) { return ops::sum(dist::all_sum(a[0], g) * w); }, 0)({w})[0];
  EXPECT_EQ(bits_of(ds), bits_of(w));
  // jvp of all_max: the tangent of the rank holding the maximum.
  Array xm = array({static_cast<float>(me), static_cast<float>(-me)});
  auto [y, t] = jvp([&](const Array& a) { return dist::all_max(a, g); }, xm, array({me * 10.0f, me * 10.0f}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{(n - 1) * 10.0f, 0.0f}));
  // vmap of all_gather over axis 1 equals the loop.
  Array b = input({2, 4}, float32, 13, me);
  Array vm = vmap([&](const Array& a) { return dist::all_gather(a, g); }, 1, 1)(b);
  for (int j = 0; j < 4; ++j) {
    Array col = dist::all_gather(ops::slice(b, {0, j}, {2, j + 1}).reshape({2}), g);
    EXPECT_EQ(bits_of(ops::slice(vm, {0, j}, {2 * n, j + 1}).reshape({2 * n})), bits_of(col));
  }
  // compile replays the collective.
  auto cf = compile([&](const std::vector<Array>& a) { return std::vector<Array>{dist::all_sum(a[0] * 2.0f, g)}; });
  EXPECT_EQ(cf({ops::ones({3})})[0].to_vector<float>(), std::vector<float>(3, 2.0f * n));
  EXPECT_EQ(cf({ops::ones({3})})[0].to_vector<float>(), std::vector<float>(3, 2.0f * n));
  // split by parity: sums over the ranks of the same parity.
  auto sub = g.split(me % 2);
  int members = (n - me % 2 + 1) / 2;
  EXPECT_EQ(sub.size(), members);
  EXPECT_EQ(sub.rank(), me / 2);
  EXPECT_EQ(dist::all_sum(ops::ones({2}), sub).to_vector<float>(), std::vector<float>(2, float(members)));
}

// A rank that arrives after the deadline: both ranks get an Error in
// bounded time (the late one in the step the first one no longer joins).
TEST(MpiFailure, LateRankFailsEveryRank) {
  if (!in_mpi_child()) GTEST_SKIP() << "runs under mpirun (DistributedMpi)";
  auto g = dist::init(true, "mpi");
  if (g.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::string e = error_of(dist::all_sum(ops::ones({1000}), g));
  bool ok = e.find("timed out") != std::string::npos;
  std::printf("FAILURE-CHECK rank %d: %s\n", g.rank(), ok ? "error as expected" : e.c_str());
  std::fflush(stdout);
  // A later collective fails at once, naming the first failure.
  e = error_of(dist::all_sum(ops::ones({3}), g));
  std::printf("FAILURE-CHECK rank %d again: %s\n", g.rank(),
              e.find("earlier collective") != std::string::npos ? "error as expected" : e.c_str());
  std::fflush(stdout);
  // mpirun ends the job when a rank exits without MPI_Finalize: rank 0,
  // done first, waits for rank 1's report (rank 1 fails by about 2.5 s).
  if (g.rank() == 0) std::this_thread::sleep_for(std::chrono::seconds(4));
  std::_Exit(0);  // without MPI_Finalize: a request is still pending
}

// A rank that exits: the others get an Error within the deadline (when
// mpirun lets them live on: nuvec-run's --mca orte_abort_on_non_zero_status 0).
TEST(MpiFailure, APeerThatExitsFailsTheOthers) {
  if (!in_mpi_child()) GTEST_SKIP() << "runs under mpirun (DistributedMpi)";
  auto g = dist::init(true, "mpi");
  if (g.rank() == 1) std::_Exit(3);
  std::string e = error_of(dist::all_sum(ops::ones({1000}), g));
  std::printf("EXIT-CHECK rank %d: %s\n", g.rank(),
              e.find("timed out") != std::string::npos ? "error as expected" : e.c_str());
  std::fflush(stdout);
  std::_Exit(0);
}

TEST(DistributedMpi, TwoAndThreeRanks) {
  if (in_mpi_child()) GTEST_SKIP() << "the parent of the MPI runs";
  if (!have_mpirun() || !dist::is_available("mpi")) GTEST_SKIP() << "no mpirun or libmpi (openmpi-bin)";
  for (int n : {2, 3}) {
    int status = 0;
    std::string out = run_ranks(n, "MpiRanks.*", "", &status);
    EXPECT_EQ(status, 0) << n << " ranks:\n" << out;
    EXPECT_EQ(out.find("[  FAILED  ]"), std::string::npos) << out;
    EXPECT_NE(out.find("[  PASSED  ] 4 tests"), std::string::npos) << out;
  }
}

TEST(DistributedMpi, AFailureReachesEveryRankInBoundedTime) {
  if (in_mpi_child()) GTEST_SKIP() << "the parent of the MPI runs";
  if (!have_mpirun() || !dist::is_available("mpi")) GTEST_SKIP() << "no mpirun or libmpi (openmpi-bin)";
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  std::string out = run_ranks(2, "MpiFailure.LateRankFailsEveryRank", "-x NUVEC_DISTRIBUTED_TIMEOUT=1", &status);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 20.0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(out.find("FAILURE-CHECK rank " + std::to_string(r) + ": error as expected"), std::string::npos)
        << out;
    EXPECT_NE(out.find("FAILURE-CHECK rank " + std::to_string(r) + " again: error as expected"),
              std::string::npos)
        << out;
  }
}

TEST(DistributedMpi, APeerThatExitsIsAnErrorOnTheOthers) {
  if (in_mpi_child()) GTEST_SKIP() << "the parent of the MPI runs";
  if (!have_mpirun() || !dist::is_available("mpi")) GTEST_SKIP() << "no mpirun or libmpi (openmpi-bin)";
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  std::string out = run_ranks(2, "MpiFailure.APeerThatExitsFailsTheOthers",
                              "--mca orte_abort_on_non_zero_status 0 -x NUVEC_DISTRIBUTED_TIMEOUT=1", &status);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 20.0);
  EXPECT_NE(out.find("EXIT-CHECK rank 0: error as expected"), std::string::npos) << out;
}

