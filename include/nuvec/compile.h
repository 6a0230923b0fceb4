// compile and compile_mut: trace a function once per input signature,
// simplify the graph, and replay it on later calls (docs/compile.md).
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "nuvec/core/graph.h"
#include "nuvec/random.h"
#include "nuvec/transforms/flat.h"
#include "nuvec/tree/ops.h"

namespace nuvec {

/// Options of compile, compile_flat and compile_mut (the spec's
/// compile::Options).
struct CompileOptions {
  /// Trace once per structure, dtypes and ranks, replay for any shapes.
  bool shapeless = false;
  /// Traces kept per compiled function (least recently used dropped); 0
  /// disables caching (every call traces).
  size_t cache_capacity = 64;
};

/// MLX's switches: after disable_compile() every compiled function (compile,
/// compile_flat, compile_mut) runs its function uncompiled, as MLX does;
/// enable_compile() turns compilation back on. The environment variable
/// NUVEC_DISABLE_COMPILE (any value but "0" or empty), read at the first
/// compiled call, starts the process disabled (MLX_DISABLE_COMPILE's role).
/// Traces already cached are kept and replayed again once enabled.
void disable_compile();
void enable_compile();
/// Whether compiled functions compile now (enable/disable_compile).
bool compile_enabled();

/// The CPU code generator of fused regions (docs/compile.md).
namespace jit {

/// off: fused regions always run in the interpreter; sync: a trace's
/// kernels are built before its first replay; async (the default): they
/// are built in the background while the interpreter runs (the same bits).
/// The environment variable NUVEC_JIT=off|sync|async sets the start value.
enum class Mode { off, sync, async };
void set_mode(Mode m);
Mode mode();
/// Returns when no kernel build is pending (as nuvec::wait_for_kernels).
void wait();

struct Stats {
  uint64_t compiled = 0;     // shared objects built by the compiler
  uint64_t disk_hits = 0;    // loaded from the disk cache
  uint64_t memory_hits = 0;  // already loaded by this process
  uint64_t failures = 0;     // builds that failed (logged once)
  uint64_t generated_runs = 0;    // fused regions run by generated kernels
  uint64_t interpreted_runs = 0;  // fused regions run by the interpreter
                                  // (on the GPU: op by op)
  uint64_t streamed_runs = 0;     // generated runs with non-temporal stores
  // The same for generated GPU kernels (NVRTC; built when a trace is made).
  uint64_t gpu_compiled = 0;
  uint64_t gpu_disk_hits = 0;
  uint64_t gpu_memory_hits = 0;
  uint64_t gpu_failures = 0;
  uint64_t gpu_table_runs = 0;  // generated GPU runs done as table lookups
  uint64_t gpu_graph_launches = 0;  // their kernels launched as CUDA graphs
};
Stats stats();
/// A generated CPU kernel whose outputs total more than this many bytes
/// writes them with non-temporal stores (past the caches: a memory-bound
/// loop moves a third less). The default is the size of the largest CPU
/// cache; a negative value restores it. The values are the same either way.
void set_stream_min_bytes(long long bytes);
long long stream_min_bytes();
/// Why generated kernels are not available ("" while they are).
std::string unavailable_reason();
/// The directory of the disk cache of kernels ($NUVEC_CACHE_DIR/cpu, by
/// default ~/.cache/nuvec/cpu), or "none: " and why it is not used.
std::string disk_cache();

}  // namespace jit

/// Returns once every generated CPU kernel build queued so far, by any
/// compiled function, has ended (built, or failed: those regions keep the
/// interpreter); at once when none is pending (sync and off modes). For
/// benchmarks and servers that warm up before measuring or serving: calls
/// made after it run the generated kernels wherever they could be built.
/// `Compiled::wait_for_kernels()` waits for one function's builds only.
void wait_for_kernels();

/// A compiled function's simplified and fused graph for one input
/// signature: `text` lists the steps (fused regions with their operations,
/// element-wise steps left alone with the reason), `dot` is the same graph
/// for Graphviz.
struct GraphReport {
  std::string text;
  std::string dot;
};

namespace compiler {
struct Graph;
}

namespace detail {

/// What a trace is keyed on: the input structure, each leaf's dtype and
/// shape (rank when shapeless), and the default stream.
struct CompileKey {
  TreeDef def;
  std::vector<DType> dtypes;
  // Each leaf's rank, then its dimensions (each -1 when keyed by rank only,
  // shapeless): one vector, not a Shape a leaf.
  std::vector<int> dims;
  Stream stream{0, Device::cpu};
  bool operator==(const CompileKey& o) const;
  uint64_t hash() const;
};

/// The key of `leaves` under `def`; when shapeless, leaves from
/// `exact_prefix` on are keyed by rank only (compile_mut keys its state
/// exactly and its inputs by rank).
CompileKey make_compile_key(TreeDef def, const std::vector<Array>& leaves, bool shapeless,
                            size_t exact_prefix = 0);

/// How many leaves of `def` lie under the path `prefix` (the prefix itself or
/// below it); they come first when `prefix` is the first element ("0").
size_t leaves_under(const TreeDef& def, std::string_view prefix);

/// compile_mut's rule: the step must leave the state's structure as it was.
void check_state_structure(const TreeDef& before, const TreeDef& after);

/// A traced function: runs f on the placeholders and returns its output
/// leaves, storing the output's structure in `out_like`.
using TraceFn = std::function<std::vector<Array>(const std::vector<Array>& placeholders,
                                                 std::any& out_like)>;

/// The shared state of one compiled function: its cache of traces.
class CompiledCore {
 public:
  /// `site`: where compile() was called (named in errors of fused steps).
  CompiledCore(CompileOptions options, Location site);
  ~CompiledCore();
  /// Replays the trace for `key` on `inputs` (tracing first on a miss);
  /// `out_like` receives the output structure stored with the trace. Throws
  /// the first failure of an output.
  std::vector<Array> call(const CompileKey& key, const std::vector<Array>& inputs,
                          const TraceFn& trace, std::any& out_like);
  /// The graph for `key` (traced on a miss; concurrent first calls with
  /// one key wait for one trace).
  std::shared_ptr<const compiler::Graph> graph(const CompileKey& key, const std::vector<Array>& inputs,
                                               const TraceFn& trace, std::any& out_like);
  GraphReport report(const CompileKey& key, const std::vector<Array>& inputs, const TraceFn& trace);
  /// How many times the function has been traced.
  uint64_t trace_count() const;
  /// Returns once the CPU kernel builds of the traces made so far ended.
  void wait_for_kernels() const;
  const CompileOptions& options() const { return options_; }

 private:
  void log_trace(const CompileKey& key) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  CompileOptions options_;
};

}  // namespace detail

/// f compiled: the same results, traced once per input structure (the
/// TreeDef of the arguments), leaf dtypes and shapes, and default stream;
/// later calls replay the simplified graph without running f. Called inside
/// another transform, it runs f itself.
template <class F>
class Compiled {
 public:
  Compiled(F f, CompileOptions options, Location site = Location::none())
      : f_(std::move(f)), core_(std::make_shared<detail::CompiledCore>(options, site)) {}

  template <Tree... Args>
  auto operator()(const Args&... args) const {
    using R = std::remove_cvref_t<std::invoke_result_t<const F&, const Args&...>>;
    if (detail::trace_depth() > 0 || !compile_enabled()) return R(f_(args...));
    auto all = std::forward_as_tuple(args...);
    std::vector<Array> leaves;
    TreeDef def = tree_def(all, leaves);
    auto key = detail::make_compile_key(std::move(def), leaves, core_->options().shapeless);
    std::any like;
    auto outs = core_->call(key, leaves, tracer(args...), like);
    return tree_replace_leaves(std::any_cast<const R&>(like), outs);
  }

  /// MLX's call of a compiled function of a vector with a braced list,
  /// `f({x, y})` (a braced list cannot be deduced by the form above).
  auto operator()(const std::vector<Array>& xs) const
    requires std::is_invocable_v<const F&, const std::vector<Array>&>
  {
    return this->template operator()<std::vector<Array>>(xs);
  }

  /// The simplified and fused graph f has for these arguments (traced if
  /// it was not yet), as text and as Graphviz DOT.
  template <Tree... Args>
  GraphReport graph(const Args&... args) const {
    auto all = std::forward_as_tuple(args...);
    std::vector<Array> leaves;
    TreeDef def = tree_def(all, leaves);
    auto key = detail::make_compile_key(std::move(def), leaves, core_->options().shapeless);
    return core_->report(key, leaves, tracer(args...));
  }

  /// How many times f has been traced (tests use it to prove replays).
  uint64_t trace_count() const { return core_->trace_count(); }

  /// Returns once the generated CPU kernels of f's traces so far are built
  /// (or their builds failed); at once in sync and off modes. Calls made
  /// after it run those kernels instead of the interpreter.
  void wait_for_kernels() const { core_->wait_for_kernels(); }

 private:
  template <class... Args>
  detail::TraceFn tracer(const Args&... args) const {
    using R = std::remove_cvref_t<std::invoke_result_t<const F&, const Args&...>>;
    return [&](const std::vector<Array>& ph, std::any& out_like) {
      auto rebuilt = tree_replace_leaves(std::tuple<Args...>(args...), ph);
      R r = std::apply(f_, rebuilt);
      std::vector<Array> outs = tree_leaves(r);
      out_like = std::move(r);
      return outs;
    };
  }

  F f_;
  std::shared_ptr<detail::CompiledCore> core_;
};

template <class F>
Compiled<std::decay_t<F>> compile(F&& f, CompileOptions options = {}, Location site = NUVEC_LOC) {
  return Compiled<std::decay_t<F>>(std::forward<F>(f), options, site);
}

/// MLX's compile(fun, shapeless): `compile(f, true)` is
/// `compile(f, {.shapeless = true})`.
template <class F>
Compiled<std::decay_t<F>> compile(F&& f, bool shapeless, Location site = NUVEC_LOC) {
  return Compiled<std::decay_t<F>>(std::forward<F>(f), CompileOptions{.shapeless = shapeless}, site);
}

/// compile over positional arrays: one trace per input signature.
inline Compiled<FlatFunction> compile_flat(FlatFunction f, CompileOptions options = {},
                                           Location site = NUVEC_LOC) {
  return Compiled<FlatFunction>(std::move(f), options, site);
}

/// compile_flat with options first (the spec's compile_flat_with).
inline Compiled<FlatFunction> compile_flat_with(CompileOptions options, FlatFunction f,
                                                Location site = NUVEC_LOC) {
  return Compiled<FlatFunction>(std::move(f), options, site);
}

/// A compiled stateful step, as MLX's mx.compile(step, inputs=state,
/// outputs=state): step(state, inputs) runs f(state&, inputs) whose state
/// leaves are inputs and outputs of the trace; the state is written back
/// when no output failed. Random draws inside advance the calling thread's
/// key sequence as an uncompiled call would. A step that changes the state's
/// structure (a static field, a mode flag) is an error.
template <class F>
class CompiledMut {
 public:
  CompiledMut(F f, CompileOptions options, Location site = Location::none())
      : f_(std::move(f)), core_(std::make_shared<detail::CompiledCore>(options, site)) {}

  template <Tree S, Tree I>
  auto operator()(S& state, const I& inputs) const {
    using R = std::remove_cvref_t<std::invoke_result_t<const F&, S&, const I&>>;
    if (detail::trace_depth() > 0 || !compile_enabled()) return R(f_(state, inputs));
    Array& rng = random::KeySequence::thread_default().state();
    std::vector<Array> leaves;  // the state's, then the inputs' (one visit)
    TreeDef def = tree_def(std::forward_as_tuple(state, inputs), leaves);
    const size_t n_state = detail::leaves_under(def, "0");
    const size_t n_in = leaves.size() - n_state;
    leaves.push_back(rng);
    auto key = detail::make_compile_key(std::move(def), leaves, core_->options().shapeless, n_state);
    detail::TraceFn trace = [&](const std::vector<Array>& ph, std::any& out_like) {
      S s = tree_replace_leaves(state, std::vector<Array>(ph.begin(), ph.begin() + n_state));
      I in = tree_replace_leaves(inputs, std::vector<Array>(ph.begin() + n_state, ph.begin() + n_state + n_in));
      Array saved = rng;
      rng = ph.back();
      struct Restore {
        Array& rng;
        Array saved;
        ~Restore() { rng = saved; }
      } restore{rng, saved};
      TreeDef before = tree_def(s);
      R r = f_(s, in);
      detail::check_state_structure(before, tree_def(s));
      std::vector<Array> outs = tree_leaves(r);
      auto st = tree_leaves(s);
      outs.insert(outs.end(), st.begin(), st.end());
      outs.push_back(rng);
      out_like = std::move(r);
      return outs;
    };
    std::any like;
    auto outs = core_->call(key, leaves, trace, like);
    const R& r_like = std::any_cast<const R&>(like);
    size_t n_out = outs.size() - n_state - 1;
    state = tree_replace_leaves(state, std::vector<Array>(outs.begin() + n_out, outs.end() - 1));
    rng = outs.back();
    return tree_replace_leaves(r_like, std::vector<Array>(outs.begin(), outs.begin() + n_out));
  }

  uint64_t trace_count() const { return core_->trace_count(); }

  /// Returns once the generated CPU kernels of the step's traces so far are
  /// built (or their builds failed), as Compiled::wait_for_kernels.
  void wait_for_kernels() const { core_->wait_for_kernels(); }

 private:
  F f_;
  std::shared_ptr<detail::CompiledCore> core_;
};

template <class F>
CompiledMut<std::decay_t<F>> compile_mut(F&& f, CompileOptions options = {},
                                         Location site = NUVEC_LOC) {
  return CompiledMut<std::decay_t<F>>(std::forward<F>(f), options, site);
}

}  // namespace nuvec
