// Tensor-parallel linear layers (MLX's mlx.nn AllToShardedLinear and
// ShardedToAllLinear, nn/layers/distributed.py): a layer's weight split
// over the ranks of a distributed group. docs/nn.md, "Tensor parallelism".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nuvec/distributed.h"
#include "nuvec/nn/layers.h"
#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// MLX's sum_gradients: x itself; its gradient is the all_sum of the
/// cotangents over `group` (each rank's shard of a replicated input adds
/// its part). Over a group of one, x.
Array sum_gradients(const Array& x, const distributed::Group& group);

/// How `dims` features split over n ranks (MLX's rule): as evenly as
/// possible, the first dims % n ranks one more.
std::vector<int> rank_sizes(int dims, int n);

/// A replicated input [..., input_dims] to this rank's shard of the
/// output features [..., sizes[rank]]: y = x W_r^T + b_r, with W_r the rows
/// of the full weight that this rank holds. The gradient of x is summed
/// over the group (sum_gradients).
struct AllToShardedLinear : Module<AllToShardedLinear> {
  Param weight;  // [sizes[rank], input_dims]
  std::optional<Param> bias;
  int full_output_dims = 0;
  distributed::Group group;
  /// Fresh parameters drawn as Linear draws them, for this rank's shard;
  /// `sizes` (one per rank, summing to output_dims) defaults to rank_sizes.
  AllToShardedLinear(int input_dims, int output_dims, bool bias = true,
                     std::optional<distributed::Group> group = std::nullopt,
                     std::optional<std::vector<int>> sizes = std::nullopt);
  /// This rank's shard of `linear` (MLX's from_linear). With `segments`
  /// > 1 (a fused projection, say QKV: 3) each of the equal segments of
  /// the output is split over the ranks and this rank's parts are joined.
  static AllToShardedLinear from_linear(const Linear& linear, int segments = 1,
                                        std::optional<distributed::Group> group = std::nullopt,
                                        std::optional<std::vector<int>> sizes = std::nullopt);
  Array operator()(const Array& x) const;
};
NUVEC_TREE(AllToShardedLinear, weight, bias, NUVEC_STATIC(full_output_dims))

/// This rank's shard of the input features [..., sizes[rank]] to the full
/// output, the same on every rank: y = all_sum(x W_r^T) + b, with W_r the
/// columns of the full weight that this rank holds (the bias is whole).
struct ShardedToAllLinear : Module<ShardedToAllLinear> {
  Param weight;  // [output_dims, sizes[rank]]
  std::optional<Param> bias;
  int full_input_dims = 0;
  distributed::Group group;
  ShardedToAllLinear(int input_dims, int output_dims, bool bias = true,
                     std::optional<distributed::Group> group = std::nullopt,
                     std::optional<std::vector<int>> sizes = std::nullopt);
  static ShardedToAllLinear from_linear(const Linear& linear, int segments = 1,
                                        std::optional<distributed::Group> group = std::nullopt,
                                        std::optional<std::vector<int>> sizes = std::nullopt);
  Array operator()(const Array& x) const;
};
NUVEC_TREE(ShardedToAllLinear, weight, bias, NUVEC_STATIC(full_input_dims))

}  // namespace nuvec::nn
