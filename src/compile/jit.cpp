// The CPU JIT's front: keys, the in-memory module cache, the background
// worker and the modes (jit.h). The disk side is in jit_disk.cpp.
#include "compile/jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "compile/emit_cpp.h"
#include "compile/jit_embed.h"
#include "nuvec/compile.h"
#include "nuvec/primitives/fused_reduce.h"

namespace nuvec {

namespace {

using compiler::EmitRegion;
using jit_detail::Hash128;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// NUVEC_JIT_TIMEOUT: seconds a build may take before the compiler is
// killed (a positive number; else the default).
double timeout_from_env() {
  const char* v = std::getenv("NUVEC_JIT_TIMEOUT");
  if (!v || !*v) return 120.0;
  char* end = nullptr;
  double t = std::strtod(v, &end);
  return end && *end == '\0' && t > 0 ? t : 120.0;
}

jit::Mode mode_from_env() {
  const char* v = std::getenv("NUVEC_JIT");
  std::string s = v ? v : "";
  if (s == "0" || s == "off") return jit::Mode::off;
  if (s == "sync") return jit::Mode::sync;
  return jit::Mode::async;
}

std::string absolute_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  return name;
}

// The "flags" and "model name" lines of the first processor: part of the
// key, since kernels are built for this machine's -march.
std::string cpu_features() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, out;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) == 0 || line.rfind("model name", 0) == 0) out += line + "\n";
    if (line.empty() && !out.empty()) break;
  }
  return out;
}

struct Module {
  void* handle = nullptr;
  int fd = -1;  // the name it was loaded under (/proc/self/fd/N)
  ~Module() {
    if (handle) dlclose(handle);
    if (fd >= 0) close(fd);
  }
};

void unload(void*& h, int& fd) {
  dlclose(h);
  close(fd);
  h = nullptr;
  fd = -1;
}

struct Job {
  uint64_t ticket = 0;  // the order in which it was queued (async)
  std::string key;
  std::string program;
  std::vector<std::shared_ptr<const Primitive>> fused;
  std::vector<std::vector<DType>> dtypes;
};

class Jit {
 public:
  static Jit& get() {
    static Jit* j = new Jit();  // never destroyed: the worker may outlive statics
    return *j;
  }

  jit::Mode mode() const { return mode_.load(); }
  void set_mode(jit::Mode m) { mode_.store(m); }

  // Queues (async) or runs (sync) the build of the regions' kernels; the
  // ticket of the queued build (wait_for), 0 when nothing is pending.
  uint64_t prepare(std::vector<EmitRegion> regions, std::vector<std::shared_ptr<const Primitive>> owners) {
    if (mode() == jit::Mode::off || regions.empty() || timed_out()) return 0;
    Job job;
    job.program = compiler::emit_cpu_kernels(regions);
    for (auto& r : regions) job.dtypes.push_back(r.input_dtypes);
    job.fused = std::move(owners);
    Setup s = setup();
    if (!s.error.empty()) {
      unavailable(s.error);
      return 0;
    }
    Hash128 h;
    h.add(s.header_hash);
    h.add(job.program);
    h.add(s.compiler_id);
    for (const auto& f : s.flags) h.add(f);
    h.add(s.cpu);
    job.key = h.hex();
    if (env_flag("NUVEC_DEBUG_KERNELS"))
      std::fprintf(stderr, "[nuvec] kernel %s:\n%s\n", job.key.c_str(), job.program.c_str());
    if (mode() == jit::Mode::sync) {
      build(job, false);
      return 0;
    }
    std::lock_guard<std::mutex> lock(mu_);
    job.ticket = ++queued_;
    uint64_t ticket = job.ticket;
    queue_.push_back(std::move(job));
    ++pending_;
    if (!worker_started_) {
      worker_started_ = true;
      std::thread([this] { work(); }).detach();
    }
    cv_.notify_all();
    return ticket;
  }

  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return pending_ == 0; });
  }

  // Returns once the build `ticket` and those queued before it ended (the
  // worker takes them in order).
  void wait_for(uint64_t ticket) {
    if (ticket == 0) return;
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return finished_ >= ticket; });
  }

  jit::Stats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    jit::Stats s = stats_;
    s.generated_runs = detail::fused_runs(true).load();
    s.interpreted_runs = detail::fused_runs(false).load();
    s.streamed_runs = detail::streamed_runs().load();
    jit::Stats g = jit_detail::gpu_stats();
    s.gpu_compiled = g.compiled;
    s.gpu_disk_hits = g.disk_hits;
    s.gpu_memory_hits = g.memory_hits;
    s.gpu_failures = g.failures;
    s.gpu_table_runs = detail::table_runs().load();
    s.gpu_graph_launches = detail::graph_launches().load();
    return s;
  }

  std::string reason() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reason_;
  }

  std::string disk() {
    setup();
    std::lock_guard<std::mutex> lock(mu_);
    return disk_;
  }

  std::string root() {
    std::lock_guard<std::mutex> lock(mu_);
    return root_locked();
  }

  void reset(const std::string& dir, const std::string& compiler) {
    wait();
    std::lock_guard<std::mutex> lock(mu_);
    modules_.clear();
    reason_.clear();
    logged_ = false;
    timed_out_ = false;
    dir_override_ = dir;
    compiler_override_ = compiler;
    setup_done_ = false;
  }

 private:
  struct Setup {
    std::string error;        // no compiler
    std::string compiler;     // absolute path
    std::string compiler_id;  // path, size, modification time, inode
    std::vector<std::string> flags;
    std::string header_hash;
    std::string cpu;
    std::string dir;  // "" without a disk cache
    double timeout_s = 120;
  };

  Setup setup() {
    std::lock_guard<std::mutex> lock(mu_);
    if (setup_done_) return setup_;
    setup_done_ = true;
    Setup s;
    const char* env_cxx = std::getenv("NUVEC_CXX");
    std::string cxx = !compiler_override_.empty() ? compiler_override_
                      : env_cxx && *env_cxx       ? env_cxx
                                                  : jit_detail::kBuildCompiler;
    s.compiler = absolute_program(cxx);
    struct stat st;
    if (stat(s.compiler.c_str(), &st) != 0 || !(st.st_mode & S_IXUSR)) {
      s.error = "no C++ compiler at " + s.compiler + " (set NUVEC_CXX)";
    } else {
      s.compiler_id = s.compiler + "|" + std::to_string(st.st_size) + "|" +
                      std::to_string(st.st_mtime) + "|" + std::to_string(st.st_ino);
    }
    s.flags = {"-std=c++20", "-O3", "-fPIC", "-shared", "-w", "-fno-semantic-interposition"};
    std::stringstream fl(jit_detail::kBuildFlags);
    for (std::string f; fl >> f;) s.flags.push_back(f);
    Hash128 h;
    h.add(jit_detail::kFunctorSource);
    s.header_hash = h.hex();
    s.cpu = cpu_features();
    s.timeout_s = timeout_from_env();
    std::string want = root_locked();
    std::string why = "no cache directory ($NUVEC_CACHE_DIR and $HOME are unset)";
    if (!want.empty()) s.dir = jit_detail::cache_directory(want + "/cpu", why);
    disk_ = s.dir.empty() ? "none: " + why : s.dir;
    if (s.dir.empty()) {
      // Without a disk cache, build in a private directory of our own.
      std::fprintf(stderr, "[nuvec] compile: no disk cache for generated kernels (%s)\n", why.c_str());
      char tmpl[] = "/tmp/nuvec-jit-XXXXXX";
      if (mkdtemp(tmpl)) s.dir = tmpl;
      else s.error = "no directory to build kernels in";
      private_dir_ = s.dir;
    }
    setup_ = s;
    return s;
  }

  std::string root_locked() const {
    const char* env_dir = std::getenv("NUVEC_CACHE_DIR");
    const char* home = std::getenv("HOME");
    return !dir_override_.empty() ? dir_override_
           : env_dir && *env_dir  ? env_dir
           : home && *home        ? std::string(home) + "/.cache/nuvec"
                                  : "";
  }

  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty(); });
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      build(job, true);
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = job.ticket;
      --pending_;
      idle_.notify_all();
    }
  }

  // Loads the job's module (memory, disk, or the compiler) and gives each
  // region its kernel. A background build (`idle`) runs the compiler at
  // the lowest priority: the calls meanwhile, and everything else, come
  // first. A sync build's caller waits for it: the caller's priority.
  void build(const Job& job, bool idle) {
    std::shared_ptr<Module> m;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (timed_out_) return;  // queued before the compiler hung
      auto it = modules_.find(job.key);
      if (it != modules_.end()) m = it->second.lock();
      if (m) ++stats_.memory_hits;
    }
    Setup s = setup();
    if (!m) {
      std::string path = s.dir + "/" + job.key + ".so";
      int fd = -1;
      // A file that is damaged, not ours, or built for another key is
      // never run: it is rebuilt, and the new file replaces it.
      void* h = jit_detail::load_checked(path, fd);
      if (h && !valid(h, job.key)) unload(h, fd);
      if (h) {
        utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used
        std::lock_guard<std::mutex> lock(mu_);
        ++stats_.disk_hits;
      } else {
        jit_detail::BuildResult r = jit_detail::compile_to(
            s.dir, job.key, compiler::full_source(job.program, job.key), s.compiler, s.flags,
            s.timeout_s, idle);
        if (r.cancelled) return;  // the process is exiting: nothing to say
        std::string error = r.error;
        if (error.empty()) h = jit_detail::load_checked(path, fd);
        if (h && !valid(h, job.key)) {
          unload(h, fd);
          error = "the built kernel does not carry its key";
        } else if (!h && error.empty()) {
          const char* why = dlerror();
          error = std::string("cannot load the built kernel") + (why ? std::string(": ") + why : "");
        }
        std::lock_guard<std::mutex> lock(mu_);
        if (error.empty()) ++stats_.compiled;
        else ++stats_.failures;
        if (r.timed_out) {
          // A compiler that hangs once would cost the limit on every
          // trace: no more builds in this process (as without a compiler).
          timed_out_ = true;
          return log_once_locked(error + "; no more kernels are built in this process", true);
        }
        if (!error.empty()) return log_once_locked(error);
        if (private_dir_ == s.dir) unlink(path.c_str());  // loaded; nothing to keep
        else if (++writes_ % 8 == 1) jit_detail::trim_cache(s.dir, max_bytes());
      }
      m = std::make_shared<Module>();
      m->handle = h;
      m->fd = fd;
      std::lock_guard<std::mutex> lock(mu_);
      modules_[job.key] = m;
    }
    for (size_t i = 0; i < job.fused.size(); ++i) {
      auto k = std::make_shared<FusedCpuKernel>();
      std::string base = "nuvec_k" + std::to_string(i);
      k->contig = reinterpret_cast<FusedCpuKernel::Contig>(dlsym(m->handle, (base + "_contig").c_str()));
      k->strided = reinterpret_cast<FusedCpuKernel::Strided>(dlsym(m->handle, (base + "_strided").c_str()));
      // Absent for regions that do not stream (small-argument blocks).
      k->stream = reinterpret_cast<FusedCpuKernel::Contig>(dlsym(m->handle, (base + "_stream").c_str()));
      k->rows = reinterpret_cast<FusedCpuKernel::Contig>(dlsym(m->handle, (base + "_rows").c_str()));
      k->input_dtypes = job.dtypes[i];
      k->module = m;
      if (k->contig && k->strided) static_cast<const Fused&>(*job.fused[i]).set_cpu_kernel(k);
    }
  }

  static bool valid(void* h, const std::string& key) {
    auto* tag = static_cast<const char*>(dlsym(h, "nuvec_kernel_key"));
    return tag && key == tag;
  }

  static long long max_bytes() {
    const char* v = std::getenv("NUVEC_CACHE_MAX_MB");
    long long mb = v ? std::atoll(v) : 0;
    return (mb > 0 ? mb : 512) << 20;
  }

  void unavailable(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    log_once_locked(why);
  }

  // One line on stderr, for the first reason only; a timeout (`always`)
  // is said even after another reason was.
  void log_once_locked(const std::string& why, bool always = false) {
    if (reason_.empty() || always) reason_ = why;
    if (logged_ && !always) return;
    logged_ = true;
    std::fprintf(stderr,
                 "[nuvec] compile: generated CPU kernels unavailable: %s; fused regions run in the "
                 "interpreter (same results)\n",
                 why.c_str());
  }

  bool timed_out() const {
    std::lock_guard<std::mutex> lock(mu_);
    return timed_out_;
  }

  std::atomic<jit::Mode> mode_{mode_from_env()};
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<Job> queue_;
  int pending_ = 0;
  uint64_t queued_ = 0, finished_ = 0;  // tickets
  bool timed_out_ = false;              // a build ran past the time limit
  bool worker_started_ = false;
  std::unordered_map<std::string, std::weak_ptr<Module>> modules_;
  jit::Stats stats_;
  std::string reason_;
  bool logged_ = false;
  bool setup_done_ = false;
  Setup setup_;
  std::string private_dir_;
  std::string disk_;
  std::string dir_override_, compiler_override_;
  unsigned writes_ = 0;
};

}  // namespace

namespace compiler {

std::string full_source(const std::string& program, const std::string& key) {
  return std::string(jit_detail::kFunctorSource) + program + "\nextern \"C\" const char nuvec_kernel_key[] = \"" +
         key + "\";\n";
}

// The compiler's time grows faster than a function's length (g++ -O3 on
// this machine: 1,000 operations 0.5 s, 4,000 4.3 s, 10,000 26 s), so
// larger regions (long unrolled chains) keep the interpreter instead of
// costing minutes and the time limit.
constexpr size_t kMaxGeneratedOps = 4096;

uint64_t prepare_cpu_kernels(const Graph& g) {
  std::vector<EmitRegion> regions;
  std::vector<std::shared_ptr<const Primitive>> owners;
  for (const auto& s : g.steps) {
    if (s.primitive->id() == PrimitiveId::FusedReduce && s.stream.device == Device::cpu) {
      for (const auto& st : static_cast<const FusedReduce&>(*s.primitive).stages()) {
        if (!st.program || st.program->ops().size() > kMaxGeneratedOps) continue;
        EmitRegion r{st.program.get(), st.arg_dtypes, false, {}, {}};
        if (st.kind == RowStage::Kind::map) r.row_scalar = st.row_scalar;
        regions.push_back(std::move(r));
        owners.push_back(st.program);
      }
      continue;
    }
    if (s.primitive->id() != PrimitiveId::Fused || s.stream.device != Device::cpu) continue;
    size_t n_ops = static_cast<const Fused&>(*s.primitive).ops().size();
    if (n_ops > kMaxGeneratedOps) {
      if (env_flag("NUVEC_LOG_COMPILES"))
        std::fprintf(stderr,
                     "[nuvec] compile: a fused region of %zu operations runs in the interpreter "
                     "(generated kernels hold at most %zu)\n",
                     n_ops, kMaxGeneratedOps);
      continue;
    }
    EmitRegion r{static_cast<const Fused*>(s.primitive.get()), {}, false, {}, {}};
    for (const auto& in : s.inputs) r.input_dtypes.push_back(in.dtype());
    regions.push_back(std::move(r));
    owners.push_back(s.primitive);
  }
  return Jit::get().prepare(std::move(regions), std::move(owners));
}

void wait_for_cpu_kernels(uint64_t ticket) { Jit::get().wait_for(ticket); }

}  // namespace compiler

namespace jit {

void set_mode(Mode m) { Jit::get().set_mode(m); }
Mode mode() { return Jit::get().mode(); }
void wait() { Jit::get().wait(); }
Stats stats() { return Jit::get().stats(); }
void set_stream_min_bytes(long long bytes) { detail::set_stream_min_bytes(bytes); }
long long stream_min_bytes() { return detail::stream_min_bytes(); }
std::string unavailable_reason() { return Jit::get().reason(); }
std::string disk_cache() { return Jit::get().disk(); }

}  // namespace jit

void wait_for_kernels() { Jit::get().wait(); }

namespace jit_detail {

void reset_for_tests(const std::string& cache_dir, const std::string& compiler) {
  Jit::get().reset(cache_dir, compiler);
  reset_gpu_kernels();
}

std::string cache_root() { return Jit::get().root(); }

}  // namespace jit_detail

}  // namespace nuvec
