// Gradient averaging: buckets of flattened gradients through the installed
// averager.
#include "nuvec/nn/average.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace nuvec::nn {
namespace {

Averager& slot() {
  static Averager a;
  return a;
}

}  // namespace

void set_gradient_averager(Averager averager) { slot() = std::move(averager); }
const Averager& gradient_averager() { return slot(); }

Averager group_averager(std::optional<distributed::Group> group) {
  distributed::Group g = group ? *group : distributed::init();
  if (g.size() == 1) return {};
  return [g](const Array& bucket) {
    return ops::divide(distributed::all_sum(bucket, g), array(static_cast<float>(g.size()), bucket.dtype()));
  };
}

namespace detail {

std::vector<Array> average_leaves(const std::vector<Array>& leaves, size_t bucket_bytes, const Averager& avg) {
  std::vector<Array> out(leaves.size());
  // Group by dtype, in leaf order, so one bucket holds one dtype.
  std::vector<std::pair<DType, std::vector<size_t>>> by_dtype;
  for (size_t i = 0; i < leaves.size(); ++i) {
    DType d = leaves[i].dtype();
    auto it = std::find_if(by_dtype.begin(), by_dtype.end(), [&](auto& e) { return e.first == d; });
    if (it == by_dtype.end()) it = by_dtype.insert(by_dtype.end(), {d, {}});
    it->second.push_back(i);
  }
  auto flush = [&](std::vector<size_t>& bucket) {
    if (bucket.empty()) return;
    std::vector<Array> flat;
    for (size_t i : bucket) flat.push_back(leaves[i].reshape({-1}));
    Array averaged = avg(flat.size() == 1 ? flat[0] : ops::concatenate(flat, 0));
    int64_t at = 0;
    for (size_t i : bucket) {
      int n = static_cast<int>(leaves[i].size());
      out[i] = ops::slice(averaged, {static_cast<int>(at)}, {static_cast<int>(at) + n}).reshape(leaves[i].shape());
      at += n;
    }
    bucket.clear();
  };
  for (auto& [d, indices] : by_dtype) {
    std::vector<size_t> bucket;
    size_t bytes = 0;
    int64_t elements = 0;
    for (size_t i : indices) {
      // A leaf too large for a 1-d array of int dims is averaged as it is
      // (averaging is element-wise); buckets stay under that size too.
      if (leaves[i].size() > std::numeric_limits<int>::max()) {
        out[i] = avg(leaves[i]);
        continue;
      }
      size_t b = static_cast<size_t>(leaves[i].nbytes());
      if (!bucket.empty() && elements + leaves[i].size() > std::numeric_limits<int>::max()) {
        flush(bucket);
        bytes = 0;
        elements = 0;
      }
      if (!bucket.empty() && bytes + b > bucket_bytes) {
        flush(bucket);
        bytes = 0;
        elements = 0;
      }
      bucket.push_back(i);
      bytes += b;
      elements += leaves[i].size();
    }
    flush(bucket);
  }
  return out;
}

}  // namespace detail
}  // namespace nuvec::nn
