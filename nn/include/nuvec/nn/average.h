// Data-parallel gradient averaging (MLX's nn.average_gradients): buckets of
// gradients through all_sum over a distributed group, divided by its size;
// or through an averager installed by the program (set_gradient_averager),
// which takes precedence. Over a group of one the gradients come back as
// they are.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "nuvec/distributed.h"
#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// Averages one flat bucket (a 1-d array; a leaf of more than INT_MAX
/// elements comes as it is) over the group, element by element.
using Averager = std::function<Array(const Array& bucket)>;

/// Installs the averager (distributed code does; an empty function removes
/// it). Process-wide.
void set_gradient_averager(Averager averager);
/// The installed averager, or an empty function.
const Averager& gradient_averager();

namespace detail {
/// Buckets `leaves` (flattened, grouped by dtype, concatenated up to
/// `bucket_bytes` each; a larger leaf is its own bucket), averages each
/// bucket with `avg`, and splits the results back into the leaves' shapes.
std::vector<Array> average_leaves(const std::vector<Array>& leaves, size_t bucket_bytes, const Averager& avg);
}  // namespace detail

/// The averager of `group` (the world group when empty): all_sum of each
/// bucket divided by the group's size; empty for a group of one.
Averager group_averager(std::optional<distributed::Group> group = std::nullopt);

/// The gradients averaged over the data-parallel group (MLX's argument
/// order), small ones bucketed into collectives of up to `all_reduce_size`
/// bytes (MLX's default 32 MiB); the gradients themselves over a group of
/// one. An installed averager (set_gradient_averager) takes precedence.
template <class T>
T average_gradients(const T& gradients, std::optional<distributed::Group> group,
                    size_t all_reduce_size = 32u << 20) {
  Averager avg = gradient_averager();
  if (!avg) avg = group_averager(std::move(group));
  if (!avg) return gradients;
  return tree_replace_leaves(gradients, detail::average_leaves(tree_leaves(gradients), all_reduce_size, avg));
}
/// average_gradients over the world group.
template <class T>
T average_gradients(const T& gradients, size_t all_reduce_size = 32u << 20) {
  return average_gradients(gradients, std::nullopt, all_reduce_size);
}

}  // namespace nuvec::nn
