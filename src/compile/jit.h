// The CPU JIT: fused regions of a trace emitted as C++ (emit_cpp.h), built
// by the system compiler into one shared object per trace, loaded with
// dlopen, and cached in memory and on disk (DESIGN.md sections 5 and 10;
// docs/compile.md). Until a region's kernel is ready, and where no compiler
// works, the backend interprets the region with the same bits.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "compile/emit_cpp.h"
#include "compile/simplify.h"
#include "nuvec/compile.h"
#include "nuvec/primitives/gpu_module.h"

namespace nuvec::compiler {

/// Starts building the generated kernels of the graph's fused steps (in
/// the background, or before returning in sync mode); each Fused step gets
/// its kernel when the shared object is loaded. Returns the ticket of the
/// queued build (0: none pending) for wait_for_cpu_kernels.
uint64_t prepare_cpu_kernels(const Graph& g);

/// Returns once the build `ticket` (and every build queued before it) has
/// ended, built or failed; at once for 0.
void wait_for_cpu_kernels(uint64_t ticket);

/// Gives the graph's fused steps on GPU streams their CUDA kernels (built
/// with NVRTC before returning, or loaded from the memory or disk cache);
/// nothing without a GPU or with jit::Mode::off.
void prepare_gpu_kernels(const Graph& g);

/// The GPU emitter's view of the fused step `s`: its inputs' dtypes, and
/// which are read broadcast or dense at the trace's shapes.
EmitRegion gpu_region(const Step& s);

/// The whole text NVRTC compiles for `program` (CUDA C++ that uses the
/// functors): the NVRTC prelude and the functor header, then `program`.
std::string cuda_program(const std::string& program);

/// The module of `program` (cuda_program(program) built for `t.arch`): from
/// the memory cache, the disk cache or NVRTC; null with `error` set to
/// NVRTC's log when it does not compile.
std::shared_ptr<const GpuModule> gpu_module(const std::string& program, const backend::GpuTarget& t,
                                            std::string& error);

/// The text of a trace's program with the functor header in front.
std::string full_source(const std::string& program, const std::string& key);

}  // namespace nuvec::compiler

namespace nuvec::jit_detail {

// A 128-bit hash as 32 hex digits (two 64-bit hashes of different
// constructions; enough to name files, not a defence against an attacker,
// which the private directory is).
class Hash128 {
 public:
  void add(std::string_view s) {
    for (unsigned char c : s) {
      a_ = (a_ ^ c) * 0x100000001b3ull;
      b_ = ((b_ ^ c) << 7 | (b_ ^ c) >> 57) * 0x9e3779b97f4a7c15ull;
    }
    a_ = (a_ ^ 0xff) * 0x100000001b3ull;  // separates consecutive strings
    b_ += 0x632be59bd9b4e019ull;
  }
  std::string hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a_),
                  static_cast<unsigned long long>(b_ ^ (b_ >> 31)));
    return buf;
  }

 private:
  uint64_t a_ = 0xcbf29ce484222325ull;
  uint64_t b_ = 0x84222325cbf29ce4ull;
};

/// Forgets the GPU kernels built by this process (jit_cuda.cpp).
void reset_gpu_kernels();
/// Counts of GPU kernels compiled, loaded from disk, found in memory, failed.
jit::Stats gpu_stats();

/// The root of the kernel caches: the test override, $NUVEC_CACHE_DIR, or
/// ~/.cache/nuvec ("" when none is set).
std::string cache_root();

/// Writes `bytes` to `dir`/`name` (a temporary name, then renamed).
bool store_file(const std::string& dir, const std::string& name, const std::string& bytes);
/// The bytes of `path` if it is a regular file we own that nobody else can
/// write, opened without following links, at most `max` bytes; else nullopt.
std::optional<std::string> read_checked(const std::string& path, size_t max);

/// For tests: forget loaded modules and the logged reasons, and use this
/// cache directory and compiler from now on ("" restores the defaults:
/// $NUVEC_CACHE_DIR or ~/.cache/nuvec, and $NUVEC_CXX or the build's).
void reset_for_tests(const std::string& cache_dir, const std::string& compiler);

// The disk cache (jit_disk.cpp).

/// The usable cache directory `requested` (ROOT/SUB: $NUVEC_CACHE_DIR/cpu),
/// or "" with `why` set when there is none: running setuid, or ROOT or
/// ROOT/SUB unwritable, a symbolic link, not a directory, not ours, or
/// writable by group or others. ROOT (with its parents) is created and
/// checked before ROOT/SUB is created in it.
std::string cache_directory(const std::string& requested, std::string& why);

/// dlopen of the kernel file `path` if it is a regular file we own that
/// nobody else can write (opened without following links) and its
/// trailer's hash matches its bytes (compile_to writes it); the checked
/// bytes are loaded from a sealed in-memory copy through /proc/self/fd.
/// Null otherwise: nothing of a damaged file runs. `fd` stays open while
/// the module is loaded: dlopen matches loaded objects by name, so the
/// number must not be reused.
void* load_checked(const std::string& path, int& fd);

/// How a build ended: `error` empty on success, else the reason (the
/// compiler's output); `timed_out` when the compiler ran past the limit
/// (killed), `cancelled` when the process is exiting.
struct BuildResult {
  std::string error;
  bool timed_out = false;
  bool cancelled = false;
};

/// Compiles `source` into `dir`/`key`.so with the hash trailer
/// load_checked checks (built in a temporary directory of its own,
/// renamed into place when complete), killing the compiler after
/// `timeout_s` seconds (0: no limit); `idle`: at the lowest priority
/// (run_compiler).
BuildResult compile_to(const std::string& dir, const std::string& key, const std::string& source,
                       const std::string& compiler, const std::vector<std::string>& flags,
                       double timeout_s, bool idle);

// The compiler's processes (jit_child.cpp).

enum class RunEnd { exited, failed_to_start, timed_out, cancelled };
struct RunResult {
  RunEnd end;
  int status;  // the exit status when `exited` (-1: killed by a signal)
};

/// Runs `args` (args[0] a path) with stdout and stderr into `log` and
/// TMPDIR=`tmpdir`, in a process group of its own (with `idle`, at
/// SCHED_IDLE and nice 19, else at the caller's priority); waits for it,
/// polling, and kills the group after `timeout_s`
/// seconds of the compiler's CPU time and of its waiting for anything but
/// a CPU (0: no limit). At the process's exit (atexit) every running
/// group is killed and reaped and its `tmpdir` removed; a run then, or
/// one that exit interrupted, ends `cancelled`.
RunResult run_compiler(const std::vector<std::string>& args, const std::string& log,
                       const std::string& tmpdir, double timeout_s, bool idle);

/// Removes `dir` and everything under it (no links followed).
void remove_tree(const std::string& dir);

/// Removes temporary files older than an hour and, beyond `max_bytes`,
/// the least recently modified kernels.
void trim_cache(const std::string& dir, long long max_bytes);

}  // namespace nuvec::jit_detail
