// Data-parallel gradient averaging: the hook through which a distributed
// group averages gradients (MLX's nn.average_gradients). With no averager
// installed (one process) it returns the gradients unchanged.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

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

/// The gradients averaged over the data-parallel group, small ones
/// bucketed into collectives of up to `all_reduce_size` bytes (MLX's
/// default 32 MiB); the gradients themselves when no averager is installed.
template <class T>
T average_gradients(const T& gradients, size_t all_reduce_size = 32u << 20) {
  const Averager& avg = gradient_averager();
  if (!avg) return gradients;
  return tree_replace_leaves(gradients, detail::average_leaves(tree_leaves(gradients), all_reduce_size, avg));
}

}  // namespace nuvec::nn
