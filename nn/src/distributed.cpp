// Tensor-parallel linear layers (nuvec/nn/distributed.h): the split of a
// weight over the ranks follows MLX's (nn/layers/distributed.py): rows for
// all-to-sharded, columns for sharded-to-all, as evenly as possible or by
// explicit sizes, segment by segment for fused projections.
#include "nuvec/nn/distributed.h"

#include <cmath>
#include <numeric>

#include "nuvec/transforms.h"

namespace nuvec::nn {

namespace {

[[noreturn]] void fail(const std::string& layer, const std::string& msg) {
  (Error(ErrorKind::invalid_argument, layer + ": " + msg)).raise();
}

std::string ints(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

distributed::Group group_or_world(const std::optional<distributed::Group>& g) {
  return g ? *g : distributed::init();
}

// The sizes of every rank's shard of `dims`, checked.
std::vector<int> resolve(int dims, const distributed::Group& g, const std::optional<std::vector<int>>& sizes,
                         const std::string& layer, const char* what) {
  if (dims <= 0) fail(layer, std::string(what) + " must be positive, got " + std::to_string(dims));
  std::vector<int> s = sizes ? *sizes : rank_sizes(dims, g.size());
  if (static_cast<int>(s.size()) != g.size() || std::accumulate(s.begin(), s.end(), int64_t{0}) != dims)
    fail(layer, "expected " + std::to_string(g.size()) + " sizes that sum to " + std::to_string(dims) + ", got " +
                    ints(s));
  for (int k : s)
    if (k <= 0)
      fail(layer, std::string("cannot shard the ") + what + " of size " + std::to_string(dims) + " over " +
                      std::to_string(g.size()) + " ranks (sizes " + ints(s) + ")");
  return s;
}

// This rank's part of `w` along `axis`: by `sizes` (one segment), or part
// `rank` of each of `segments` equal segments, joined.
Array shard(const Array& w, int axis, int segments, const std::vector<int>& sizes, const distributed::Group& g,
            const std::string& layer) {
  const int n = g.size(), r = g.rank();
  const int dim = static_cast<int>(w.shape(axis));
  auto part = [&](int start, int len) {
    Shape lo(w.ndim(), 0), hi(w.shape().begin(), w.shape().end());
    lo[axis] = start;
    hi[axis] = start + len;
    return ops::slice(w, lo, hi);
  };
  if (segments == 1) {
    int start = std::accumulate(sizes.begin(), sizes.begin() + r, 0);
    return ops::contiguous(part(start, sizes[r]));
  }
  if (segments <= 0 || dim % (segments * n) != 0)
    fail(layer, "cannot split " + std::to_string(dim) + " features into " + std::to_string(segments) +
                    " segments over " + std::to_string(n) + " ranks");
  const int seg = dim / segments, piece = seg / n;
  std::vector<Array> parts;
  for (int s = 0; s < segments; ++s) parts.push_back(part(s * seg + r * piece, piece));
  return ops::contiguous(ops::concatenate(parts, axis));
}

// The sizes with segments: every rank an equal part (explicit sizes only
// with one segment).
std::vector<int> layer_sizes(int dims, const distributed::Group& g, int segments,
                             const std::optional<std::vector<int>>& sizes, const std::string& layer,
                             const char* what) {
  if (segments == 1) return resolve(dims, g, sizes, layer, what);
  if (sizes) fail(layer, "explicit sizes need segments = 1");
  if (dims % g.size() != 0)
    fail(layer, std::string("cannot shard the ") + what + " of size " + std::to_string(dims) + " over " +
                    std::to_string(g.size()) + " ranks");
  return std::vector<int>(g.size(), dims / g.size());
}

// A failed array when x is not floating or its last axis is not `dims`
// (this rank's features).
std::optional<Array> features(const ModuleBase& m, const Array& x, int64_t dims) {
  if (!is_floating(x.dtype()))
    return detail::layer_error(m, ErrorKind::unsupported_dtype,
                               "expected a floating input, got " + std::string(dtype_name(x.dtype())));
  if (x.ndim() == 0 || x.shape(-1) != dims)
    return detail::layer_error(m, ErrorKind::shape_mismatch,
                               "expected last dimension " + std::to_string(dims) + " (this rank's shard), got " +
                                   (x.ndim() == 0 ? std::string("a scalar") : std::to_string(x.shape(-1))));
  return std::nullopt;
}

}  // namespace

std::vector<int> rank_sizes(int dims, int n) {
  std::vector<int> s(n);
  for (int r = 0; r < n; ++r) s[r] = dims / n + (r < dims % n ? 1 : 0);
  return s;
}

Array sum_gradients(const Array& x, const distributed::Group& group) {
  if (group.size() == 1) return x;
  auto f = custom_vjp([](const std::vector<Array>& a) { return a; },
                      [group](const std::vector<Array>&, const std::vector<Array>& ct, const std::vector<Array>&) {
                        return std::vector<Array>{distributed::all_sum(ct[0], group)};
                      });
  return f({x})[0];
}

AllToShardedLinear::AllToShardedLinear(int input_dims, int output_dims, bool has_bias,
                                       std::optional<distributed::Group> g, std::optional<std::vector<int>> sizes)
    : full_output_dims(output_dims), group(group_or_world(g)) {
  const std::string layer = "AllToShardedLinear";
  if (input_dims <= 0) fail(layer, "input_dims must be positive, got " + std::to_string(input_dims));
  auto s = resolve(output_dims, group, sizes, layer, "output");
  const int local = s[group.rank()];
  double scale = std::sqrt(1.0 / input_dims);
  weight = random::uniform(-scale, scale, {local, input_dims});
  if (has_bias) bias = Param(random::uniform(-scale, scale, {local}));
}

AllToShardedLinear AllToShardedLinear::from_linear(const Linear& linear, int segments,
                                                   std::optional<distributed::Group> g,
                                                   std::optional<std::vector<int>> sizes) {
  const std::string layer = "AllToShardedLinear.from_linear";
  if (linear.quantized()) fail(layer, "quantized layers are not sharded yet");
  auto grp = group_or_world(g);
  const int out = linear.output_dims(), in = linear.input_dims();
  auto s = layer_sizes(out, grp, segments, sizes, layer, "output");
  AllToShardedLinear sl(in, out, linear.bias.has_value(), grp, s);
  sl.weight = Param(shard(linear.weight.value, 0, segments, s, grp, layer));
  if (linear.bias) sl.bias = Param(shard(linear.bias->value, 0, segments, s, grp, layer));
  return sl;
}

Array AllToShardedLinear::operator()(const Array& x) const {
  if (auto bad = features(*this, x, weight.value.shape(1))) return *bad;
  Array h = sum_gradients(x, group);
  if (bias) return ops::addmm(bias->value, h, weight.value.t());
  return ops::matmul(h, weight.value.t());
}

ShardedToAllLinear::ShardedToAllLinear(int input_dims, int output_dims, bool has_bias,
                                       std::optional<distributed::Group> g, std::optional<std::vector<int>> sizes)
    : full_input_dims(input_dims), group(group_or_world(g)) {
  const std::string layer = "ShardedToAllLinear";
  if (output_dims <= 0) fail(layer, "output_dims must be positive, got " + std::to_string(output_dims));
  auto s = resolve(input_dims, group, sizes, layer, "input");
  double scale = std::sqrt(1.0 / input_dims);
  weight = random::uniform(-scale, scale, {output_dims, s[group.rank()]});
  if (has_bias) bias = Param(random::uniform(-scale, scale, {output_dims}));
}

ShardedToAllLinear ShardedToAllLinear::from_linear(const Linear& linear, int segments,
                                                   std::optional<distributed::Group> g,
                                                   std::optional<std::vector<int>> sizes) {
  const std::string layer = "ShardedToAllLinear.from_linear";
  if (linear.quantized()) fail(layer, "quantized layers are not sharded yet");
  auto grp = group_or_world(g);
  const int out = linear.output_dims(), in = linear.input_dims();
  auto s = layer_sizes(in, grp, segments, sizes, layer, "input");
  ShardedToAllLinear sl(in, out, linear.bias.has_value(), grp, s);
  sl.weight = Param(shard(linear.weight.value, 1, segments, s, grp, layer));
  if (linear.bias) sl.bias = Param(linear.bias->value);
  return sl;
}

Array ShardedToAllLinear::operator()(const Array& x) const {
  if (auto bad = features(*this, x, weight.value.shape(1))) return *bad;
  Array y = distributed::all_sum(ops::matmul(x, weight.value.t()), group);
  return bias ? y + bias->value : y;
}

}  // namespace nuvec::nn
