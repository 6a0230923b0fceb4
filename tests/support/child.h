// Runs one test of this test binary in a child process, with variables
// added to (or replacing those of) the environment: for properties across
// processes (thread counts read once per process, exit handlers).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace nuvec::testing {

/// Runs `--gtest_filter=filter` of /proc/self/exe with `env` ("NAME=value"
/// entries, replacing variables of the same name) and stdout to /dev/null;
/// true when it exited with status 0.
inline bool run_child(const std::string& filter, const std::vector<std::string>& env) {
  std::string arg = "--gtest_filter=" + filter;
  std::vector<char*> argv{const_cast<char*>("/proc/self/exe"), arg.data(), nullptr};
  std::vector<std::string> extra = env;
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) {
    std::string_view have(*e);
    bool replaced = false;
    for (const auto& x : extra) {
      auto eq = x.find('=');
      if (have.substr(0, have.find('=')) == std::string_view(x).substr(0, eq)) replaced = true;
    }
    if (!replaced) envp.push_back(*e);
  }
  for (auto& e : extra) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return false;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace nuvec::testing
