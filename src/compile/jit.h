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
#include <vector>

#include "backend/backend.h"
#include "compile/emit_cpp.h"
#include "compile/simplify.h"
#include "nuvec/compile.h"
#include "nuvec/primitives/gpu_module.h"

namespace nuvec::compiler {

/// Starts building the generated kernels of the graph's fused steps (in
/// the background, or before returning in sync mode); each Fused step gets
/// its kernel when the shared object is loaded.
void prepare_cpu_kernels(const Graph& g);

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
  void add(const std::string& s) {
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

/// The usable cache directory, or "" with `why` set when there is none
/// (setuid, unwritable, a symlink, group- or world-writable, not ours).
std::string cache_directory(const std::string& requested, std::string& why);

/// dlopen of `path` if it is a regular file we own that nobody else can
/// write (opened without following links, loaded through /proc/self/fd);
/// null otherwise. `fd` stays open while the module is loaded: dlopen
/// matches loaded objects by name, so the number must not be reused.
void* load_checked(const std::string& path, int& fd);

/// Compiles `source` into `dir`/`key`.so (written under a temporary name,
/// renamed when complete); returns "" or the error (the compiler's output).
std::string compile_to(const std::string& dir, const std::string& key, const std::string& source,
                       const std::string& compiler, const std::vector<std::string>& flags);

/// Removes temporary files older than an hour and, beyond `max_bytes`,
/// the least recently modified kernels.
void trim_cache(const std::string& dir, long long max_bytes);

}  // namespace nuvec::jit_detail
