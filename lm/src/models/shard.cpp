// Tensor-parallel shards of a model's linear layers (blocks.h): rows for
// the column-parallel layers (q, k, v, gate, up: each rank its heads or
// its part of the MLP), columns for the row-parallel ones (o, down: the
// partial products summed over the group, as nn::ShardedToAllLinear).
// Quantized weights split along their packed columns at whole groups.
#include "models/blocks.h"

namespace nuvec::lm::detail {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& why) {
  (Error(ErrorKind::invalid_argument, "tensor parallelism: " + what + ": " + why)).raise();
}

// Block `rank` of `parts` along `axis` (which `parts` must divide).
Array block(const Array& a, int axis, int parts, int rank, const std::string& what) {
  const int dim = static_cast<int>(a.shape(axis));
  if (dim % parts != 0)
    fail(what, std::to_string(dim) + " features do not split into " + std::to_string(parts) + " equal parts");
  Shape lo(a.ndim(), 0), hi = a.shape();
  lo[axis] = rank * (dim / parts);
  hi[axis] = (rank + 1) * (dim / parts);
  return contiguous(slice(a, lo, hi));
}

}  // namespace

void shard_rows(Linear& l, int parts, int rank, const std::string& what) {
  l.weight = block(l.weight, 0, parts, rank, what);
  if (l.scales) l.scales = block(*l.scales, 0, parts, rank, what);
  if (l.biases) l.biases = block(*l.biases, 0, parts, rank, what);
  if (l.bias) l.bias = block(*l.bias, 0, parts, rank, what);
}

void shard_columns(Linear& l, const distributed::Group& group, const std::string& what) {
  const int n = group.size(), r = group.rank();
  if (l.quantized()) {
    const int in = static_cast<int>(l.scales->shape(-1)) * l.group_size;
    if ((in / n) % l.group_size != 0 || in % n != 0)
      fail(what, "its " + std::to_string(in) + " inputs in groups of " + std::to_string(l.group_size) +
                     " do not split into " + std::to_string(n) + " parts of whole groups");
    l.scales = block(*l.scales, 1, n, r, what);
    if (l.biases) l.biases = block(*l.biases, 1, n, r, what);
  }
  l.weight = block(l.weight, 1, n, r, what);
  l.reduce = group;  // the bias stays whole, added once after the sum
}

}  // namespace nuvec::lm::detail
