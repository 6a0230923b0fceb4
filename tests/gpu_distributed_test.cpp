// The nccl backend on the one GPU there is: a group of one takes NCCL's
// path (it sends to itself), so its collectives give their inputs bit for
// bit, on GPU streams, from non-contiguous inputs too; two ranks on the one
// GPU, launched by the test through NUVEC_WORLD_SIZE / NUVEC_RANK /
// NUVEC_COORDINATOR, either both get the rank-order sum or both get an
// Error in bounded time (NCCL refuses two ranks on one device). Skipped
// without a GPU or libnccl.so.2 (CI).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nuvec/distributed.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "support/gpu.h"

using namespace nuvec;
using namespace nuvec::testing;
namespace dist = nuvec::distributed;

namespace {

bool in_child() { return std::getenv("NUVEC_NCCL_CHILD") != nullptr; }

Array input(const Shape& shape, DType dt, int seed, int r) {
  return (random::normal(shape, random::key(seed * 101 + r)) * 3.0f).astype(dt);
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

#define NUVEC_NCCL_REQUIRED()                                              \
  NUVEC_GPU_REQUIRED();                                                    \
  if (!dist::is_available("nccl")) GTEST_SKIP() << "no libnccl.so.2 here"; \
  if (in_child()) GTEST_SKIP() << "a child of GpuNccl.TwoRanksOnOneGpu"

}  // namespace

TEST(GpuNccl, AGroupOfOneTakesNcclsPath) {
  NUVEC_NCCL_REQUIRED();
  auto g = dist::init(true, "nccl");
  EXPECT_EQ(g.backend(), "nccl");
  EXPECT_EQ(g.size(), 1);
  EXPECT_EQ(g.rank(), 0);
  const Shape shapes[] = {{}, {0}, {7}, {130, 33}};
  int seed = 0;
  for (DType dt : {float32, bfloat16, float16, float64, int32, int64, uint8})
    for (const auto& shape : shapes) {
      Array x = input(shape, dt, ++seed, 0);
      const std::string what = std::string(dtype_name(dt)) + " seed " + std::to_string(seed);
      EXPECT_EQ(bits_of(dist::all_sum(x, g)), bits_of(x)) << what;
      EXPECT_EQ(bits_of(dist::all_max(x, g)), bits_of(x)) << what;
      EXPECT_EQ(bits_of(dist::all_min(x, g)), bits_of(x)) << what;
      EXPECT_EQ(bits_of(dist::all_gather(x, g)), bits_of(x.ndim() ? x : x.reshape({1}))) << what;
      if (x.ndim()) EXPECT_EQ(bits_of(dist::reduce_scatter(x, g)), bits_of(x)) << what;
      if (x.ndim() == 2) {  // a transposed view
        Array t = ops::transpose(x);
        EXPECT_EQ(bits_of(dist::all_sum(t, g)), bits_of(t)) << what;
        EXPECT_EQ(bits_of(dist::all_gather(t, g)), bits_of(t)) << what;
      }
    }
  Array x = input({5, 3}, float32, 77, 0);
  Array y = dist::all_sum(x, g);
  y.eval();
  EXPECT_TRUE(y.desc()->data->device == Device::gpu);
  // A CPU stream is refused; a peer outside the group is an Error.
  Array on_cpu = dist::all_sum(x, g, kCpu);
  ASSERT_TRUE(on_cpu.is_failed());
  EXPECT_NE(std::string(on_cpu.error()->what()).find("GPU arrays"), std::string::npos);
  EXPECT_THROW(dist::send(x, 1, g).eval(), Error);
  // compile replays it; grad passes the cotangent; split gives a group.
  auto cf = compile([&](const std::vector<Array>& a) { return std::vector<Array>{dist::all_sum(a[0] * 2.0f, g)}; });
  EXPECT_EQ(bits_of(cf({x})[0]), bits_of(x * 2.0f));
  EXPECT_EQ(bits_of(cf({x})[0]), bits_of(x * 2.0f));
  Array w = input({5, 3}, float32, 78, 0);
  Array dx = grad([&](const std::vector<Array>& a) { return ops::sum(dist::all_sum(a[0], g) * w); }, 0)({x})[0];
  EXPECT_EQ(bits_of(dx), bits_of(w));
  auto sub = g.split(0);
  EXPECT_EQ(sub.size(), 1);
  EXPECT_EQ(sub.backend(), "nccl");
  EXPECT_EQ(bits_of(dist::all_sum(x, sub)), bits_of(x));
}

// Run by GpuNccl.TwoRanksOnOneGpu as two processes.
TEST(GpuNcclChild, TwoRanks) {
  if (!in_child()) GTEST_SKIP() << "runs as a child of GpuNccl.TwoRanksOnOneGpu";
  std::string line;
  int rank = std::atoi(std::getenv("NUVEC_RANK"));
  try {
    auto g = dist::init(true, "nccl");
    Array expect = input({1000}, float32, 5, 0) + input({1000}, float32, 5, 1);
    Array y = dist::all_sum(input({1000}, float32, 5, g.rank()), g);
    line = bits_of(y) == bits_of(expect) ? "sum ok" : "sum wrong";
  } catch (const Error& e) {
    line = std::string("error: ") + e.what();
  }
  std::printf("NCCL-CHILD rank %d: %s\n", rank, line.c_str());
  std::fflush(stdout);
  std::_Exit(0);  // a communicator may be stuck: no static destruction
}

TEST(GpuNccl, TwoRanksOnOneGpuAgreeOrFailInBoundedTime) {
  NUVEC_NCCL_REQUIRED();
  const std::string coord = "127.0.0.1:" + std::to_string(free_port());
  auto start = std::chrono::steady_clock::now();
  FILE* p[2];
  for (int r = 0; r < 2; ++r) {
    std::string cmd = "NUVEC_NCCL_CHILD=1 NUVEC_WORLD_SIZE=2 NUVEC_RANK=" + std::to_string(r) +
                      " NUVEC_COORDINATOR=" + coord + " NUVEC_DISTRIBUTED_TIMEOUT=20 /proc/" +
                      std::to_string(getpid()) + "/exe --gtest_filter=GpuNcclChild.TwoRanks 2>&1";
    p[r] = popen(cmd.c_str(), "r");
    ASSERT_NE(p[r], nullptr);
  }
  std::string out[2];
  for (int r = 0; r < 2; ++r) {
    char buf[4096];
    while (size_t k = fread(buf, 1, sizeof buf, p[r])) out[r].append(buf, k);
    pclose(p[r]);
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 60.0);
  bool ok[2], err[2];
  for (int r = 0; r < 2; ++r) {
    const std::string tag = "NCCL-CHILD rank " + std::to_string(r) + ": ";
    ok[r] = out[r].find(tag + "sum ok") != std::string::npos;
    err[r] = out[r].find(tag + "error") != std::string::npos;
    EXPECT_TRUE(ok[r] || err[r]) << out[r];
    const size_t at = out[r].find("NCCL-CHILD");  // the outcome, in the test's log
    std::printf("%s\n", out[r].substr(at == std::string::npos ? 0 : at, 400).c_str());
  }
  EXPECT_EQ(ok[0], ok[1]) << out[0] << "\n----\n" << out[1];
}
