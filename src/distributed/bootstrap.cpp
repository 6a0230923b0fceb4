// The environment launch of a group (NUVEC_RANK, NUVEC_WORLD_SIZE and
// NUVEC_COORDINATOR, as torchrun's RANK, WORLD_SIZE and MASTER_ADDR): rank 0
// listens on the coordinator's address and hands its bytes (the nccl
// backend's unique id) to every other rank over TCP. Every step has the
// group's deadline, so a rank that never comes gives an Error.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "distributed/group.h"

namespace nuvec::distributed::detail {

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& why) {
  (Error(ErrorKind::backend, "distributed bootstrap: " + why)).raise();
}

// Closes the socket when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long r = std::strtol(v, &end, 10);
  if (*end || r < 0 || r > (1 << 20)) fail(std::string(name) + "=\"" + v + "\" is not a rank count or rank");
  return static_cast<int>(r);
}

sockaddr_in address(const std::string& coordinator) {
  auto colon = coordinator.rfind(':');
  if (colon == std::string::npos) fail("NUVEC_COORDINATOR \"" + coordinator + "\" is not HOST:PORT");
  std::string host = coordinator.substr(0, colon);
  int port = std::atoi(coordinator.c_str() + colon + 1);
  if (port <= 0 || port > 65535) fail("NUVEC_COORDINATOR \"" + coordinator + "\": bad port");
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res)
    fail("NUVEC_COORDINATOR host \"" + host + "\" not found");
  sockaddr_in a = *reinterpret_cast<sockaddr_in*>(res->ai_addr);
  freeaddrinfo(res);
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

double left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// Waits for `events` on fd until the deadline.
void await(int fd, short events, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    double s = left(deadline);
    if (s <= 0) fail(what + " timed out (NUVEC_DISTRIBUTED_TIMEOUT)");
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min(s * 1000.0, 1000.0)) + 1);
    if (r > 0) return;
    if (r < 0 && errno != EINTR) fail(what + ": " + std::strerror(errno));
  }
}

void send_all(int fd, const char* p, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    await(fd, POLLOUT, deadline, "sending the group's id");
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (w <= 0) fail(std::string("sending the group's id: ") + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void recv_all(int fd, char* p, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    await(fd, POLLIN, deadline, "receiving the group's id from rank 0");
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (r <= 0) fail("rank 0 closed the connection before sending the group's id");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

}  // namespace

EnvLaunch env_launch() {
  EnvLaunch e;
  e.size = env_int("NUVEC_WORLD_SIZE", 0);
  if (e.size == 0) return e;
  e.rank = env_int("NUVEC_RANK", -1);
  if (e.rank < 0 || e.rank >= e.size)
    fail("NUVEC_RANK must be set to 0 .. NUVEC_WORLD_SIZE - 1 (NUVEC_WORLD_SIZE=" + std::to_string(e.size) + ")");
  const char* c = std::getenv("NUVEC_COORDINATOR");
  e.coordinator = c && *c ? c : "127.0.0.1:29517";
  return e;
}

std::string share_from_rank0(const EnvLaunch& e, const std::string& bytes) {
  if (e.size <= 1) return bytes;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_seconds()));
  sockaddr_in a = address(e.coordinator);
  const uint32_t n = static_cast<uint32_t>(bytes.size());
  if (e.rank == 0) {
    Fd srv(::socket(AF_INET, SOCK_STREAM, 0));
    if (srv.fd < 0) fail(std::string("socket: ") + std::strerror(errno));
    int one = 1;
    ::setsockopt(srv.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(srv.fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0)
      fail("rank 0 cannot listen on NUVEC_COORDINATOR " + e.coordinator + ": " + std::strerror(errno));
    ::listen(srv.fd, 128);
    ::fcntl(srv.fd, F_SETFL, O_NONBLOCK);
    for (int got = 1; got < e.size;) {
      await(srv.fd, POLLIN, deadline,
            "rank 0 waiting for " + std::to_string(e.size - got) + " more rank(s) on " + e.coordinator);
      Fd c(::accept(srv.fd, nullptr, nullptr));
      if (c.fd < 0) continue;
      ::fcntl(c.fd, F_SETFL, O_NONBLOCK);
      uint32_t len = htonl(n);
      send_all(c.fd, reinterpret_cast<const char*>(&len), sizeof(len), deadline);
      send_all(c.fd, bytes.data(), bytes.size(), deadline);
      ++got;
    }
    return bytes;
  }
  for (;;) {  // rank 0 may not listen yet: try again until the deadline
    Fd c(::socket(AF_INET, SOCK_STREAM, 0));
    if (c.fd < 0) fail(std::string("socket: ") + std::strerror(errno));
    if (::connect(c.fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
      ::fcntl(c.fd, F_SETFL, O_NONBLOCK);
      uint32_t len = 0;
      recv_all(c.fd, reinterpret_cast<char*>(&len), sizeof(len), deadline);
      if (ntohl(len) != n) fail("rank 0 sent an id of another size (another nuvec build?)");
      std::string out(n, '\0');
      recv_all(c.fd, out.data(), n, deadline);
      return out;
    }
    if (left(deadline) <= 0)
      fail("rank " + std::to_string(e.rank) + " could not reach rank 0 at NUVEC_COORDINATOR " + e.coordinator +
           " (timed out, NUVEC_DISTRIBUTED_TIMEOUT)");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace nuvec::distributed::detail
