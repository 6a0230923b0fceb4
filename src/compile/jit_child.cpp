// The compiler's processes (jit.h: run_compiler). Each runs in a process
// group of its own, at the lowest scheduling priority (SCHED_IDLE and nice
// 19: the user's threads, the interpreter's included, run first), with
// TMPDIR in a directory of its own (the compiler's intermediate files land
// there). A time limit kills the whole group; so does the end of the
// process (atexit), which also removes the temporary directories. A forked
// child forgets its parent's compilers (pthread_atfork), so its exit never
// kills them.
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "compile/jit.h"

extern char** environ;

namespace nuvec::jit_detail {

namespace {

struct Child {
  pid_t pid;
  std::string tmpdir;
  bool reaped = false;  // by the exit handler
};

// The running compilers. Never destroyed: the exit handler and a worker
// thread still polling its child may use it after static destructors ran.
struct Registry {
  std::mutex mu;
  std::vector<Child> children;
  bool exiting = false;
};

void at_exit();

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry();
    // posix_spawn runs no fork handlers (glibc since 2.24, musl), so
    // holding `mu` while spawning cannot deadlock with these.
    pthread_atfork([] { registry().mu.lock(); }, [] { registry().mu.unlock(); },
                   [] {
                     Registry& c = registry();
                     c.children.clear();  // the parent's, not this process's
                     c.mu.unlock();
                   });
    std::atexit(at_exit);
    return reg;
  }();
  return *r;
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  remove(path);
  return 0;
}

// Kills each compiler's group, reaps it and removes its files.
void at_exit() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.exiting = true;
  for (Child& c : r.children) {
    if (c.reaped) continue;
    kill(-c.pid, SIGKILL);
    waitpid(c.pid, nullptr, 0);
    c.reaped = true;
    remove_tree(c.tmpdir);
  }
}

// The environment with TMPDIR replaced.
std::vector<std::string> child_environment(const std::string& tmpdir) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "TMPDIR=", 7) != 0) env.emplace_back(*e);
  env.push_back("TMPDIR=" + tmpdir);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// What the compiler's processes are doing, from /proc: the driver and
// its descendants (each process's `children` list).
struct Progress {
  bool known = false;     // /proc told us
  bool runnable = false;  // one of them runs or waits for a CPU
  double cpu_s = 0;       // their CPU time, with that of reaped descendants
};

// The fields after the command (which may hold spaces and parentheses).
bool stat_fields(pid_t pid, char& state, std::vector<long long>& fields) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return false;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (!p || std::sscanf(p + 1, " %c", &state) != 1) return false;
  fields.clear();
  for (p += 3; *p;) {
    char* end = nullptr;
    long long v = std::strtoll(p, &end, 10);
    if (end == p) break;
    fields.push_back(v);
    p = end;
  }
  return true;
}

Progress progress(pid_t driver) {
  Progress out;
  static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::vector<pid_t> todo{driver};
  std::vector<long long> f;
  for (size_t i = 0; i < todo.size() && i < 64; ++i) {
    char state = 0;
    // Fields from the 4th on: utime, stime, cutime, cstime are 14-17.
    if (!stat_fields(todo[i], state, f) || f.size() < 14) {
      if (i == 0) return out;
      continue;
    }
    out.runnable = out.runnable || state == 'R';
    out.cpu_s += static_cast<double>(f[10] + f[11] + f[12] + f[13]) / tick;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", static_cast<int>(todo[i]),
                  static_cast<int>(todo[i]));
    FILE* c = std::fopen(path, "r");
    if (!c) {
      if (i == 0) return out;  // no `children` lists: wall time only
      continue;
    }
    for (int child; std::fscanf(c, "%d", &child) == 1;) todo.push_back(child);
    std::fclose(c);
  }
  out.known = true;
  return out;
}

}  // namespace

void remove_tree(const std::string& dir) {
  if (!dir.empty()) nftw(dir.c_str(), remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

RunResult run_compiler(const std::vector<std::string>& args,
                       const std::string& log, const std::string& tmpdir,
                       double timeout_s, bool idle) {
  std::vector<std::string> argv_s = args;
  std::vector<std::string> env_s = child_environment(tmpdir);
  std::vector<char*> argv = pointers(argv_s), envp = pointers(env_s);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  Registry& reg = registry();
  pid_t pid = -1;
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    if (reg.exiting) {
      posix_spawn_file_actions_destroy(&fa);
      posix_spawnattr_destroy(&attr);
      return {RunEnd::cancelled, 0};
    }
    // The child inherits the spawning thread's policy and nice value, but
    // posix_spawn's attributes cannot carry SCHED_IDLE (glibc takes only
    // OTHER, FIFO and RR there), and an unprivileged thread cannot leave
    // SCHED_IDLE again: so a thread of its own lowers itself, then spawns.
    int rc = 0;
    auto spawn = [&] { rc = posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), envp.data()); };
    if (idle) {
      std::thread([&] {
        sched_param prio{};
        prio.sched_priority = 0;
        sched_setscheduler(0, SCHED_IDLE, &prio);  // this thread (Linux)
        setpriority(PRIO_PROCESS, 0, 19);          // this thread too
        spawn();
      }).join();
    } else {
      spawn();
    }
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) return {RunEnd::failed_to_start, 0};
    reg.children.push_back({pid, tmpdir});
  }
  using clock = std::chrono::steady_clock;
  auto last = clock::now();
  double counted = 0, last_cpu = 0;
  int polls = 0;
  bool timed_out = false;
  for (;;) {
    // WNOWAIT: the exited child stays a zombie, so its pid (and group id)
    // cannot be reused before it is reaped below, under the lock.
    siginfo_t info{};
    int w = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (w == 0 && info.si_pid == pid) break;
    if (w < 0 && errno != EINTR) break;  // reaped by the exit handler
    if (timeout_s > 0 && ++polls % 8 == 0) {  // /proc every ~16 ms
      auto now = clock::now();
      double wall = std::chrono::duration<double>(now - last).count();
      last = now;
      Progress p = progress(pid);
      if (!p.known || !p.runnable) counted += wall;
      else counted += std::max(0.0, p.cpu_s - last_cpu);
      if (p.known) last_cpu = std::max(last_cpu, p.cpu_s);
      if (counted > timeout_s) {
        kill(-pid, SIGKILL);
        timed_out = true;
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::lock_guard<std::mutex> lock(reg.mu);
  size_t i = 0;
  while (i < reg.children.size() && reg.children[i].pid != pid) ++i;
  if (i == reg.children.size() || reg.children[i].reaped || reg.exiting) {
    if (i < reg.children.size()) reg.children.erase(reg.children.begin() + i);
    return {RunEnd::cancelled, 0};
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  reg.children.erase(reg.children.begin() + i);
  if (timed_out) return {RunEnd::timed_out, 0};
  if (!WIFEXITED(status)) return {RunEnd::exited, -1};
  return {RunEnd::exited, WEXITSTATUS(status)};
}

}  // namespace nuvec::jit_detail
