// compile: trace on placeholders once per key, simplify, replay.
#include "nuvec/compile.h"

#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <string_view>
#include <list>
#include <mutex>
#include <unordered_map>

#include "compile/jit.h"
#include "compile/simplify.h"
#include "nuvec/primitives/custom.h"
#include "ops/builder.h"
#include "transforms/tape.h"

namespace nuvec::detail {

bool CompileKey::operator==(const CompileKey& o) const {
  return stream == o.stream && dtypes == o.dtypes && dims == o.dims && def == o.def;
}

uint64_t CompileKey::hash() const {
  StaticHasher h;
  h.u64(def.hash());
  for (DType d : dtypes) h.u64(static_cast<uint64_t>(d.index()));
  for (int v : dims) h.u64(static_cast<uint64_t>(static_cast<int64_t>(v)));
  h.u64(static_cast<uint64_t>(stream.index));
  return h.digest();
}

CompileKey make_compile_key(TreeDef def, const std::vector<Array>& leaves, bool shapeless,
                            size_t exact_prefix) {
  CompileKey k;
  k.def = std::move(def);
  k.dtypes.reserve(leaves.size());
  k.dims.reserve(leaves.size() * 3);
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Array& a = leaves[i];
    if (const Error* e = a.error()) (e)->raise();
    k.dtypes.push_back(a.dtype());
    const bool by_rank = shapeless && i >= exact_prefix;
    k.dims.push_back(a.ndim());
    for (int d : a.shape()) k.dims.push_back(by_rank ? -1 : d);
  }
  k.stream = default_stream();
  return k;
}

size_t leaves_under(const TreeDef& def, std::string_view prefix) {
  size_t n = 0;
  for (const auto& l : def.leaves) {
    const std::string& p = l.path;
    if (p.size() >= prefix.size() && p.compare(0, prefix.size(), prefix) == 0 &&
        (p.size() == prefix.size() || p[prefix.size()] == '.'))
      ++n;
  }
  return n;
}

void check_state_structure(const TreeDef& before, const TreeDef& after) {
  if (before == after) return;
  (Error(ErrorKind::transform,
              "compile_mut: the step changed the structure of its state (" + after.difference(before) +
                  "), so every call would trace again; hold such values in arrays, or leave the "
                  "field out of the structure (NUVEC_UNCHECKED), whose value is then baked into "
                  "the trace")).raise();
}

namespace {

bool log_compiles() {
  static const bool on = [] {
    const char* v = std::getenv("NUVEC_LOG_COMPILES");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

}  // namespace

struct CompiledCore::Impl {
  struct Entry {
    CompileKey key;
    uint64_t hash;
    std::shared_ptr<const compiler::Graph> graph;
    std::any out_like;
  };
  // A trace in progress: concurrent first calls with its key wait for it.
  struct Pending {
    CompileKey key;
    uint64_t hash;
    bool done = false;
  };
  std::mutex mu;
  std::condition_variable traced;
  std::list<Entry> entries;  // most recently used first
  std::list<std::shared_ptr<Pending>> pending;
  std::atomic<uint64_t> traces{0};
  std::atomic<uint64_t> kernels_ticket{0};  // the latest trace's CPU kernel build
  std::string site;  // "file.cpp:12" of the compile() call, or ""
};

// NUVEC_LOG_COMPILES=1: one line per trace, with what differs from the most
// recently used trace.
void CompiledCore::log_trace(const CompileKey& key) const {
  std::string why = "first trace";
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->entries.empty()) {
      const CompileKey& last = impl_->entries.front().key;
      if (!(last.def == key.def)) why = key.def.difference(last.def);
      else if (last.dtypes != key.dtypes) why = "a leaf's dtype changed";
      else if (last.dims != key.dims) why = "a leaf's shape changed";
      else why = "the default stream changed";
    }
  }
  std::fprintf(stderr, "[nuvec] compile: tracing %s (%s)\n", key.def.root_type.c_str(), why.c_str());
}

CompiledCore::CompiledCore(CompileOptions options, Location site)
    : impl_(std::make_unique<Impl>()), options_(options) {
  if (site.file && *site.file) {
    std::string_view f(site.file);
    if (auto slash = f.rfind('/'); slash != std::string_view::npos) f.remove_prefix(slash + 1);
    impl_->site = std::string(f) + ":" + std::to_string(site.line);
  }
}
CompiledCore::~CompiledCore() = default;

uint64_t CompiledCore::trace_count() const { return impl_->traces.load(); }

void CompiledCore::wait_for_kernels() const {
  compiler::wait_for_cpu_kernels(impl_->kernels_ticket.load());
}

std::shared_ptr<const compiler::Graph> CompiledCore::graph(const CompileKey& key,
                                                          const std::vector<Array>& inputs,
                                                          const TraceFn& trace, std::any& out_like) {
  uint64_t h = key.hash();
  std::shared_ptr<Impl::Pending> mine;
  {
    std::unique_lock<std::mutex> lock(impl_->mu);
    for (;;) {
      auto it = impl_->entries.begin();
      while (it != impl_->entries.end() && (it->hash != h || !(it->key == key))) ++it;
      if (it != impl_->entries.end()) {
        impl_->entries.splice(impl_->entries.begin(), impl_->entries, it);
        out_like = it->out_like;
        return it->graph;
      }
      std::shared_ptr<Impl::Pending> other;
      for (const auto& p : impl_->pending)
        if (p->hash == h && p->key == key) other = p;
      if (!other) break;
      // Another thread traces this key: wait, then look again (its trace
      // may have failed or not been cached; then this thread traces).
      impl_->traced.wait(lock, [&] { return other->done; });
    }
    mine = std::make_shared<Impl::Pending>(Impl::Pending{key, h});
    impl_->pending.push_back(mine);
  }
  struct Finish {  // runs on success and on a failed trace
    Impl& impl;
    std::shared_ptr<Impl::Pending> p;
    ~Finish() {
      std::lock_guard<std::mutex> lock(impl.mu);
      p->done = true;
      impl.pending.remove(p);
      impl.traced.notify_all();
    }
  } finish{*impl_, mine};
  // No lock is held while tracing (f may call other compiled functions).
  impl_->traces.fetch_add(1);
  if (log_compiles()) log_trace(key);
  Impl::Entry e{key, h, {}, {}};
  auto t0 = std::chrono::steady_clock::now();
  auto g = std::make_shared<compiler::Graph>(compiler::trace(
      inputs, options_.shapeless, [&](const std::vector<Array>& ph) { return trace(ph, e.out_like); }));
  if (!impl_->site.empty())  // fused steps' errors name the compile() call
    for (auto& step : g->steps)
      if (step.primitive->id() == PrimitiveId::Fused || step.primitive->id() == PrimitiveId::FusedReduce)
        step.op_name = compiler::intern_op_name(std::string(step.op_name) + " (compiled at " +
                                                impl_->site + ")");
  if (uint64_t t = compiler::prepare_cpu_kernels(*g)) {
    uint64_t seen = impl_->kernels_ticket.load();
    while (seen < t && !impl_->kernels_ticket.compare_exchange_weak(seen, t)) {
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  compiler::prepare_gpu_kernels(*g);
  if (log_compiles()) {
    auto t2 = std::chrono::steady_clock::now();
    auto sec = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
    std::fprintf(stderr, "[nuvec] compile: %zu steps traced and simplified in %.3f s, GPU kernels built in %.3f s\n",
                 g->steps.size(), sec(t0, t1), sec(t1, t2));
  }
  e.graph = g;
  out_like = e.out_like;
  if (options_.cache_capacity > 0) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->entries.push_front(std::move(e));
    while (impl_->entries.size() > options_.cache_capacity) impl_->entries.pop_back();
  }
  return g;
}

std::vector<Array> CompiledCore::call(const CompileKey& key, const std::vector<Array>& inputs,
                                      const TraceFn& trace, std::any& out_like) {
  // The graph is immutable once traced: replay without the lock.
  return compiler::replay(*graph(key, inputs, trace, out_like), inputs);
}

GraphReport CompiledCore::report(const CompileKey& key, const std::vector<Array>& inputs,
                                 const TraceFn& trace) {
  std::any like;
  return compiler::describe(*graph(key, inputs, trace, like));
}

}  // namespace nuvec::detail

namespace nuvec {

namespace {
// -1: not yet read from the environment; 0 disabled; 1 enabled.
std::atomic<int>& compile_switch() {
  static std::atomic<int> state{-1};
  return state;
}
}  // namespace

void disable_compile() { compile_switch().store(0); }
void enable_compile() { compile_switch().store(1); }

bool compile_enabled() {
  int s = compile_switch().load(std::memory_order_relaxed);
  if (s < 0) {
    const char* env = std::getenv("NUVEC_DISABLE_COMPILE");
    int from_env = (env && *env && std::string_view(env) != "0") ? 0 : 1;
    compile_switch().compare_exchange_strong(s, from_env);
    s = compile_switch().load();
  }
  return s == 1;
}

}  // namespace nuvec
