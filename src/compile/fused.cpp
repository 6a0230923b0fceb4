// The Fused primitive: shape rule, equality, and transform rules (by
// expanding the region into ordinary nodes).
#include "nuvec/primitives/fused.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "nuvec/ops/shape.h"
#include "nuvec/primitives/params.h"
#include "compile/expanded_rules.h"
#include "primitives/rules.h"

namespace nuvec {

Expected<std::vector<OutputSpec>> Fused::output_specs(const std::vector<Array>& inputs) const {
  if (static_cast<int>(inputs.size()) != num_inputs_ || inputs.empty())
    return op_error(ErrorKind::internal, "a fused kernel got the wrong number of inputs");
  // Operands broadcast as the element-wise ops they replace did.
  Shape shape = inputs[0].shape();
  for (const auto& in : inputs) {
    if (in.ndim() == 0 || in.shape() == shape) continue;  // (replays ask on every call)
    auto b = ops::try_broadcast_shapes(shape, in.shape());
    if (!b) return b.error();
    shape = *b;
  }
  std::vector<OutputSpec> out;
  out.reserve(outputs_.size());
  for (int v : outputs_) {
    OutputSpec s;
    s.shape = shape;
    s.dtype = v < num_inputs_ ? inputs[v].dtype() : ops_[v - num_inputs_].dtype;
    out.push_back(std::move(s));
  }
  return out;
}

std::atomic<uint64_t>& detail::fused_runs(bool generated) {
  static std::atomic<uint64_t> runs[2];
  return runs[generated ? 1 : 0];
}

std::atomic<uint64_t>& detail::streamed_runs() {
  static std::atomic<uint64_t> runs{0};
  return runs;
}

std::atomic<uint64_t>& detail::table_runs() {
  static std::atomic<uint64_t> runs{0};
  return runs;
}

std::atomic<uint64_t>& detail::graph_launches() {
  static std::atomic<uint64_t> launches{0};
  return launches;
}

namespace {

// The size of the largest cache core 0 reaches, from sysfs (the kernel's
// view: one CCX's L3 on AMD parts, where sysconf can report the whole
// package's), else sysconf; 0 when neither knows.
long long cache_bytes() {
  long long best = 0;
  for (int i = 0; i < 8; ++i) {
    std::string path = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size";
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) break;
    long long v = 0;
    char unit = 0;
    if (std::fscanf(f, "%lld%c", &v, &unit) >= 1)
      best = std::max(best, v << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0));
    std::fclose(f);
  }
  if (best == 0) best = std::max(0l, sysconf(_SC_LEVEL3_CACHE_SIZE));
  return best;
}

// What is written beyond the largest cache leaves it before anything reads
// it back anyway; 32 MiB where the size is unknown.
long long default_stream_min_bytes() {
  static const long long bytes = [] {
    long long c = cache_bytes();
    return c > 0 ? c : 32ll << 20;
  }();
  return bytes;
}

std::atomic<long long>& stream_override() {
  static std::atomic<long long> bytes{-1};
  return bytes;
}

}  // namespace

long long detail::stream_min_bytes() {
  long long b = stream_override().load(std::memory_order_relaxed);
  return b >= 0 ? b : default_stream_min_bytes();
}

void detail::set_stream_min_bytes(long long bytes) {
  stream_override().store(bytes < 0 ? -1 : bytes, std::memory_order_relaxed);
}

std::shared_ptr<const FusedCpuKernel> Fused::cpu_kernel() const {
  std::lock_guard<std::mutex> lock(slot_->mu);
  return slot_->cpu;
}

void Fused::set_cpu_kernel(std::shared_ptr<const FusedCpuKernel> k) const {
  std::lock_guard<std::mutex> lock(slot_->mu);
  slot_->cpu = std::move(k);
}

std::shared_ptr<const FusedGpuKernel> Fused::gpu_kernel() const {
  std::lock_guard<std::mutex> lock(slot_->mu);
  return slot_->gpu;
}

void Fused::set_gpu_kernel(std::shared_ptr<const FusedGpuKernel> k) const {
  std::lock_guard<std::mutex> lock(slot_->mu);
  slot_->gpu = std::move(k);
}

bool Fused::params_equal(const Primitive& o) const {
  auto& f = static_cast<const Fused&>(o);
  if (f.num_inputs_ != num_inputs_ || f.outputs_ != outputs_ || f.ops_.size() != ops_.size() ||
      f.literals_ != literals_)
    return false;
  for (size_t i = 0; i < ops_.size(); ++i)
    if (f.ops_[i].args != ops_[i].args || !(f.ops_[i].dtype == ops_[i].dtype) ||
        !f.ops_[i].primitive->is_equivalent(*ops_[i].primitive))
      return false;
  return true;
}

size_t Fused::params_hash() const {
  size_t h = params::combine(static_cast<size_t>(num_inputs_), params::hash_vector(outputs_));
  for (const auto& op : ops_) {
    h = params::combine(h, static_cast<size_t>(op.primitive->id()));
    h = params::combine(h, op.primitive->params_hash());
    h = params::combine(h, params::hash_vector(op.args));
  }
  for (const auto& l : literals_) h = params::combine(params::combine(h, l.input), l.bits);
  return h;
}

void Fused::print_params(std::ostream& os) const {
  os << ops_.size() << " ops:";
  for (const auto& op : ops_) os << ' ' << op.primitive->name();
}

Arrays Fused::expand(const Arrays& inputs) const {
  Arrays values = ops::broadcast_arrays(inputs);
  for (const auto& op : ops_) {
    Arrays args;
    for (int a : op.args) args.push_back(values[a]);
    values.push_back(rules::rebuild(*op.primitive, std::move(args))[0]);
  }
  Arrays out;
  for (int v : outputs_) out.push_back(values[v]);
  return out;
}

Arrays Fused::vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
                  const Arrays&) const {
  return compiler::expanded_vjp([this](const Arrays& in) { return expand(in); }, primals, cotangents, argnums);
}

Arrays Fused::jvp(const Arrays& primals, const Arrays& tangents, const std::vector<int>& argnums) const {
  return compiler::expanded_jvp([this](const Arrays& in) { return expand(in); }, primals, tangents, argnums);
}

std::pair<Arrays, std::vector<int>> Fused::vmap(const Arrays& inputs, const std::vector<int>& axes) const {
  return compiler::expanded_vmap([this](const Arrays& in) { return expand(in); }, inputs, axes);
}

}  // namespace nuvec
