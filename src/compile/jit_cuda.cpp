// Generated GPU kernels (jit.h: gpu_module, prepare_gpu_kernels): each
// fused step on a GPU stream is emitted as CUDA C++ after the functor
// header (emit_cuda_kernel), compiled with NVRTC for this GPU when a trace
// is made (fast::CudaKernel's programs when called), and cached in memory
// (by source) and on disk under $NUVEC_CACHE_DIR/cuda, keyed by the source,
// the GPU architecture and the NVRTC and driver versions. The disk cache
// follows the CPU cache's rules (private directory, temporary name then
// rename, no links followed); a cached file starts with its key and a hash
// of its bytes, checked before the binary is handed to the driver.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "compile/emit_cpp.h"
#include "compile/jit.h"
#include "compile/jit_embed.h"
#include "nuvec/compile.h"
#include "nuvec/primitives/fused_reduce.h"

namespace nuvec {

namespace {

using jit_detail::Hash128;

constexpr size_t kMaxBinary = 64u << 20;

struct GpuCache {
  std::mutex mu;
  std::unordered_map<std::string, std::weak_ptr<const GpuModule>> modules;
  bool dir_done = false;
  std::string dir;  // "" without a disk cache
  jit::Stats stats;
  std::string reason;
};

GpuCache& cache() {
  static GpuCache* c = new GpuCache();
  return *c;
}

std::string header(const std::string& key, const std::string& binary) {
  Hash128 h;
  h.add(binary);
  return "nuvec-cubin " + key + " " + h.hex() + "\n";
}

// The binary cached under `key`, if the file is intact.
std::optional<std::string> from_disk(const std::string& dir, const std::string& key) {
  auto bytes = jit_detail::read_checked(dir + "/" + key + ".bin", kMaxBinary);
  if (!bytes) return std::nullopt;
  size_t eol = bytes->find('\n');
  if (eol == std::string::npos) return std::nullopt;
  std::string binary = bytes->substr(eol + 1);
  if (bytes->compare(0, eol + 1, header(key, binary)) != 0) return std::nullopt;
  return binary;
}

std::string disk_dir(GpuCache& c) {
  if (!c.dir_done) {
    c.dir_done = true;
    std::string root = jit_detail::cache_root(), why;
    if (!root.empty()) c.dir = jit_detail::cache_directory(root + "/cuda", why);
  }
  return c.dir;
}

// The first failure of generated kernels, logged once per process (the
// regions then run op by op, with the same results).
void log_failure(const std::string& error) {
  auto& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.reason.empty()) return;
  c.reason = error;
  std::fprintf(stderr,
               "[nuvec] compile: generated GPU kernels failed to build; fused regions run op by op "
               "(same results): %s\n",
               error.c_str());
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

}  // namespace

namespace compiler {

EmitRegion gpu_region(const Step& s) {
  EmitRegion r{static_cast<const Fused*>(s.primitive.get()), {}, false, {}, {}};
  for (const auto& in : s.inputs) {
    r.input_dtypes.push_back(in.dtype());
    r.broadcast = r.broadcast || (in.size() > 1 && in.shape() != s.outputs[0].shape());
    r.dense.push_back(in.size() > 1 && in.shape() == s.outputs[0].shape());
  }
  return r;
}

std::string cuda_program(const std::string& program) {
  return std::string(cuda_prelude()) + jit_detail::kFunctorSource + program;
}

std::shared_ptr<const GpuModule> gpu_module(const std::string& program, const backend::GpuTarget& t,
                                            std::string& error) {
  std::string source = cuda_program(program);
  Hash128 h;
  h.add(source);
  h.add(t.arch);
  h.add(t.identity);
  const std::string key = h.hex();
  auto& c = cache();
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto m = c.modules[key].lock()) {
      ++c.stats.memory_hits;
      return m;
    }
    dir = disk_dir(c);
  }
  // Built outside the lock: the chunks of one trace compile in parallel
  // (NVRTC programs are independent); a key built twice at once is built
  // twice, with the same bytes.
  auto m = std::make_shared<GpuModule>();
  if (auto b = dir.empty() ? std::nullopt : from_disk(dir, key)) {
    m->binary = std::move(*b);
    std::lock_guard<std::mutex> lock(c.mu);
    ++c.stats.disk_hits;
  } else {
    if (env_flag("NUVEC_DEBUG_KERNELS"))
      std::fprintf(stderr, "[nuvec] GPU kernels %s:\n%s\n", key.c_str(), program.c_str());
    error = backend::gpu_compile(source, t.arch, m->binary);
    std::lock_guard<std::mutex> lock(c.mu);
    if (!error.empty()) {
      ++c.stats.failures;
      return nullptr;
    }
    ++c.stats.compiled;
    if (!dir.empty()) jit_detail::store_file(dir, key + ".bin", header(key, m->binary) + m->binary);
  }
  std::lock_guard<std::mutex> lock(c.mu);
  c.modules[key] = m;
  return m;
}

namespace {

/// How many programs a trace's kernels are split into: one per core the
/// machine has, at most 16 (NVRTC's time grows with the program; chunks
/// build at once, each NVRTC instance holding its own memory), at most one
/// per kernel, NUVEC_GPU_COMPILE_THREADS to override.
size_t chunk_count(size_t kernels) {
  size_t n = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
  if (const char* e = std::getenv("NUVEC_GPU_COMPILE_THREADS")) n = std::max(1, std::atoi(e));
  return std::max<size_t>(1, std::min(n, kernels));
}

/// Assigns each kernel (by its source length) to the chunk with the least
/// source so far: a deterministic split of similar sizes.
std::vector<size_t> assign_chunks(const std::vector<size_t>& lengths, size_t chunks) {
  std::vector<size_t> total(chunks, 0), out(lengths.size());
  for (size_t i = 0; i < lengths.size(); ++i) {
    size_t best = static_cast<size_t>(std::min_element(total.begin(), total.end()) - total.begin());
    out[i] = best;
    total[best] += lengths[i];
  }
  return out;
}

/// Builds the programs in parallel; a null entry where a build failed
/// (the first error in `error`).
std::vector<std::shared_ptr<const GpuModule>> build_all(const std::vector<std::string>& programs,
                                                        const backend::GpuTarget& t, std::string& error) {
  std::vector<std::shared_ptr<const GpuModule>> out(programs.size());
  std::vector<std::string> errors(programs.size());
  std::vector<std::thread> threads;
  for (size_t i = 1; i < programs.size(); ++i)
    threads.emplace_back([&, i] { out[i] = gpu_module(programs[i], t, errors[i]); });
  if (!programs.empty()) out[0] = gpu_module(programs[0], t, errors[0]);
  for (auto& th : threads) th.join();
  for (auto& e : errors)
    if (!e.empty() && error.empty()) error = e;
  return out;
}

}  // namespace

void prepare_gpu_kernels(const Graph& g) {
  if (jit::mode() == jit::Mode::off) return;
  std::vector<EmitRegion> regions;
  std::vector<const FusedReduce*> row_regions;
  for (const auto& s : g.steps) {
    if (s.stream.device != Device::gpu) continue;
    if (s.primitive->id() == PrimitiveId::FusedReduce)
      row_regions.push_back(static_cast<const FusedReduce*>(s.primitive.get()));
    if (s.primitive->id() != PrimitiveId::Fused) continue;
    regions.push_back(gpu_region(s));
  }
  if (regions.empty() && row_regions.empty()) return;
  backend::GpuTarget t = backend::gpu_target();
  if (t.arch.empty()) return;  // no GPU: nothing will run there
  // The contiguous kernels now, in chunks built in parallel, then the
  // strided ones in the background (NVRTC's time of a first call is mostly
  // code generation, about half of it for each variant).
  std::vector<std::string> contig, strided_src, rows;
  std::vector<size_t> lengths;
  for (size_t i = 0; i < regions.size(); ++i) {
    contig.push_back(emit_cuda_kernel(regions[i], static_cast<int>(i), CudaVariant::contig));
    strided_src.push_back(emit_cuda_kernel(regions[i], static_cast<int>(i), CudaVariant::strided));
    lengths.push_back(contig.back().size());
  }
  for (size_t i = 0; i < row_regions.size(); ++i) {
    rows.push_back(emit_cuda_rows_kernel(*row_regions[i], static_cast<int>(i)));
    lengths.push_back(rows.back().size());
  }
  const size_t chunks = chunk_count(lengths.size());
  std::vector<size_t> chunk_of = assign_chunks(lengths, chunks);
  std::vector<std::string> programs(chunks), strided_programs(chunks);
  for (size_t i = 0; i < regions.size(); ++i) {
    programs[chunk_of[i]] += contig[i];
    strided_programs[chunk_of[i]] += strided_src[i];
  }
  for (size_t i = 0; i < row_regions.size(); ++i) programs[chunk_of[regions.size() + i]] += rows[i];
  std::string error;
  auto modules = build_all(programs, t, error);
  for (auto& m : modules)
    if (!m) {
      log_failure(error);
      return;
    }
  // The strided programs: a trace split into several programs (many
  // kernels) builds them in the background from now on, as a first step
  // that meets strided inputs would otherwise wait for them one by one; a
  // single program builds its strided kernels when a region first needs
  // them (often never). A region that needs its strided kernel waits for
  // its chunk's build.
  std::vector<std::function<std::shared_ptr<const GpuModule>()>> strided(chunks);
  for (size_t k = 0; k < chunks; ++k) {
    auto build = [program = std::move(strided_programs[k]), t] {
      std::string why;
      auto m = gpu_module(program, t, why);
      if (!m) log_failure(why);
      return m;
    };
    using Built = std::shared_future<std::shared_ptr<const GpuModule>>;
    if (chunks > 1) {
      auto built = std::make_shared<Built>(std::async(std::launch::async, std::move(build)).share());
      strided[k] = [built] { return built->get(); };
    } else {
      struct Lazy {
        std::once_flag once;
        std::shared_ptr<const GpuModule> module;
      };
      auto lazy = std::make_shared<Lazy>();
      strided[k] = [lazy, build = std::move(build)] {
        std::call_once(lazy->once, [&] { lazy->module = build(); });
        return lazy->module;
      };
    }
  }
  for (size_t i = 0; i < regions.size(); ++i) {
    const EmitRegion& r = regions[i];
    auto k = std::make_shared<FusedGpuKernel>();
    k->module = modules[chunk_of[i]];
    k->strided_module = strided[chunk_of[i]];
    k->contig = "nuvec_contig_" + std::to_string(i);
    k->strided = "nuvec_strided_" + std::to_string(i);
    k->input_dtypes = r.input_dtypes;
    CudaParams c = cuda_params(r);
    k->params = c.inputs;
    for (int q : c.inputs) k->dense.push_back(r.dense[q]);
    k->per_thread = c.per_thread;
    for (size_t t = 0; t < c.tables.size(); ++t)
      k->tables.push_back({"nuvec_table_" + std::to_string(i) + "_" + std::to_string(t),
                           value_dtype(r, c.tables[t].value).size()});
    r.fused->set_gpu_kernel(std::move(k));
  }
  for (size_t i = 0; i < row_regions.size(); ++i) {
    auto k = std::make_shared<FusedRowsGpuKernel>();
    k->module = modules[chunk_of[regions.size() + i]];
    k->name = "nuvec_rows_" + std::to_string(i);
    k->params = cuda_rows_params(*row_regions[i]);
    row_regions[i]->set_gpu_kernel(std::move(k));
  }
}

}  // namespace compiler

namespace jit_detail {

void reset_gpu_kernels() {
  auto& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.modules.clear();
  c.dir_done = false;
  c.dir.clear();
  c.reason.clear();
}

jit::Stats gpu_stats() {
  auto& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.stats;
}

}  // namespace jit_detail

}  // namespace nuvec
