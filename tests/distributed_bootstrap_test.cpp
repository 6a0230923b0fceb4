// The environment launch's bootstrap (src/distributed/bootstrap.cpp): rank
// 0's bytes reach every rank over loopback TCP, a rank whose peers never
// come fails within the timeout, and bad variables are Errors.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "distributed/group.h"

namespace dd = nuvec::distributed::detail;

namespace {

// A loopback port nothing listens on now.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Sets an environment variable for the scope.
struct Env {
  std::string name;
  Env(const char* n, const std::string& v) : name(n) { ::setenv(n, v.c_str(), 1); }
  ~Env() { ::unsetenv(name.c_str()); }
};

}  // namespace

TEST(DistributedBootstrap, RankZerosBytesReachEveryRank) {
  Env timeout("NUVEC_DISTRIBUTED_TIMEOUT", "20");
  for (int n : {2, 3, 5}) {
    const std::string coord = "127.0.0.1:" + std::to_string(free_port());
    std::string id(128, '\0');
    for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(i * 7 + n);
    std::vector<std::string> got(n);
    std::vector<std::thread> ranks;
    // The other ranks start first: they retry until rank 0 listens.
    for (int r = n - 1; r >= 0; --r)
      ranks.emplace_back([&, r] {
        dd::EnvLaunch e{r, n, coord};
        got[r] = dd::share_from_rank0(e, r == 0 ? id : std::string(128, 'x'));
      });
    for (auto& t : ranks) t.join();
    for (int r = 0; r < n; ++r) EXPECT_EQ(got[r], id) << n << " ranks, rank " << r;
  }
}

TEST(DistributedBootstrap, AMissingRankZeroIsAnErrorInBoundedTime) {
  Env timeout("NUVEC_DISTRIBUTED_TIMEOUT", "1");
  dd::EnvLaunch e{1, 2, "127.0.0.1:" + std::to_string(free_port())};
  auto start = std::chrono::steady_clock::now();
  try {
    dd::share_from_rank0(e, std::string(128, 'x'));
    ADD_FAILURE() << "no error";
  } catch (const nuvec::Error& err) {
    EXPECT_NE(std::string(err.what()).find("could not reach rank 0"), std::string::npos) << err.what();
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 5.0);
  // Rank 0 alone: the missing ranks are named.
  dd::EnvLaunch z{0, 3, "127.0.0.1:" + std::to_string(free_port())};
  try {
    dd::share_from_rank0(z, std::string(128, 'x'));
    ADD_FAILURE() << "no error";
  } catch (const nuvec::Error& err) {
    EXPECT_NE(std::string(err.what()).find("2 more rank(s)"), std::string::npos) << err.what();
  }
}

TEST(DistributedBootstrap, TheEnvironmentIsChecked) {
  EXPECT_EQ(dd::env_launch().size, 0);  // not launched this way
  {
    Env size("NUVEC_WORLD_SIZE", "2");
    Env rank("NUVEC_RANK", "2");
    EXPECT_THROW(dd::env_launch(), nuvec::Error);
  }
  {
    Env size("NUVEC_WORLD_SIZE", "two");
    EXPECT_THROW(dd::env_launch(), nuvec::Error);
  }
  {
    Env size("NUVEC_WORLD_SIZE", "4");
    Env rank("NUVEC_RANK", "3");
    auto e = dd::env_launch();
    EXPECT_EQ(e.size, 4);
    EXPECT_EQ(e.rank, 3);
    EXPECT_EQ(e.coordinator, "127.0.0.1:29517");
    Env bad("NUVEC_COORDINATOR", "localhost");
    EXPECT_THROW(dd::share_from_rank0(dd::env_launch(), "x"), nuvec::Error);
  }
}
