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
#include <mutex>
#include <unordered_map>

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
  std::lock_guard<std::mutex> lock(c.mu);  // one build at a time
  if (auto m = c.modules[key].lock()) {
    ++c.stats.memory_hits;
    return m;
  }
  auto m = std::make_shared<GpuModule>();
  const std::string dir = disk_dir(c);
  if (auto b = dir.empty() ? std::nullopt : from_disk(dir, key)) {
    m->binary = std::move(*b);
    ++c.stats.disk_hits;
  } else {
    if (env_flag("NUVEC_DEBUG_KERNELS"))
      std::fprintf(stderr, "[nuvec] GPU kernels %s:\n%s\n", key.c_str(), program.c_str());
    error = backend::gpu_compile(source, t.arch, m->binary);
    if (!error.empty()) {
      ++c.stats.failures;
      return nullptr;
    }
    ++c.stats.compiled;
    if (!dir.empty()) jit_detail::store_file(dir, key + ".bin", header(key, m->binary) + m->binary);
  }
  c.modules[key] = m;
  return m;
}

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
  // Two programs: the contiguous kernels now, the strided ones when a
  // region first meets inputs that need them (NVRTC's time of a first call
  // is mostly code generation, about half of it for each variant).
  std::string program, strided_program;
  for (size_t i = 0; i < regions.size(); ++i) {
    program += emit_cuda_kernel(regions[i], static_cast<int>(i), CudaVariant::contig);
    strided_program += emit_cuda_kernel(regions[i], static_cast<int>(i), CudaVariant::strided);
  }
  for (size_t i = 0; i < row_regions.size(); ++i)
    program += emit_cuda_rows_kernel(*row_regions[i], static_cast<int>(i));
  std::string error;
  auto m = gpu_module(program, t, error);
  if (!m) {
    log_failure(error);
    return;
  }
  struct Lazy {  // shared by the trace's regions
    std::string program;
    backend::GpuTarget target;
    std::once_flag once;
    std::shared_ptr<const GpuModule> module;
  };
  auto lazy = std::make_shared<Lazy>();
  lazy->program = std::move(strided_program);
  lazy->target = t;
  auto strided = [lazy] {
    std::call_once(lazy->once, [&] {
      std::string why;
      lazy->module = gpu_module(lazy->program, lazy->target, why);
      if (!lazy->module) log_failure(why);
    });
    return lazy->module;
  };
  for (size_t i = 0; i < regions.size(); ++i) {
    const EmitRegion& r = regions[i];
    auto k = std::make_shared<FusedGpuKernel>();
    k->module = m;
    k->strided_module = strided;
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
    k->module = m;
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
