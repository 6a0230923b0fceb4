// Walking strided arrays: element offsets in row-major order of the shape.
#pragma once

#include <cstdint>
#include <vector>

#include "nuvec/core/shape.h"

namespace nuvec {

/// Calls f(offset) for every element of (shape, strides) in row-major order,
/// starting from `base`.
template <class F>
void for_each_offset(const Shape& shape, const Strides& strides, int64_t base,
                     F&& f) {
  int64_t n = shape_size(shape);
  if (n <= 0) return;
  int nd = static_cast<int>(shape.size());
  if (nd == 0) {
    f(base);
    return;
  }
  std::vector<int> idx(nd, 0);
  int64_t off = base;
  int last = nd - 1;
  int64_t inner = shape[last], inner_stride = strides[last];
  for (int64_t done = 0; done < n; done += inner) {
    for (int64_t i = 0; i < inner; ++i) f(off + i * inner_stride);
    for (int d = last - 1; d >= 0; --d) {
      off += strides[d];
      if (++idx[d] < shape[d]) break;
      off -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace nuvec
