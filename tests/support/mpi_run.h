// Tests that run their own binary under mpirun (tests/distributed_test.cpp,
// tests/nn/distributed_test.cpp): the child cases skip unless
// NUVEC_MPI_CHILD is set, and the parent case runs them with n ranks.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace nuvec::testing {

inline bool in_mpi_child() { return std::getenv("NUVEC_MPI_CHILD") != nullptr; }

inline bool have_mpirun() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

/// OpenMPI's own allocations (some in components it unloads, so that no
/// suppression can name them) are reported as leaks by the sanitizer build:
/// the ranks run without the leak check (the code they run is checked in
/// the single-process tests).
inline const std::string kNoLeakCheck = "-x ASAN_OPTIONS=detect_leaks=0 ";

/// Runs this binary's cases `filter` under mpirun with n ranks (`env`: more
/// mpirun options, `-x NAME=VALUE`); their output, and the exit status.
inline std::string run_ranks(int n, const std::string& filter, const std::string& env, int* status) {
  std::string cmd = "mpirun --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none -np " +
                    std::to_string(n) + " -x NUVEC_MPI_CHILD=1 " + kNoLeakCheck + env + " /proc/" +
                    std::to_string(getpid()) +
                    "/exe --gtest_color=no --gtest_filter='" + filter + "' 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  char buf[4096];
  while (size_t k = fread(buf, 1, sizeof buf, p)) out.append(buf, k);
  *status = pclose(p);
  return out;
}

}  // namespace nuvec::testing
