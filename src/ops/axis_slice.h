// A slice of one axis, the others whole: the view that split, roll and topk
// are built from.
#pragma once

#include <vector>

#include "nuvec/ops/shape.h"

namespace nuvec::inline ops::impl {

/// x[..., start:stop, ...] on `axis` (non-negative, in range), Python bounds.
inline Array slice_axis(const Array& x, int axis, int start, int stop,
                        const StreamOrDevice& s, Location loc) {
  std::vector<int> lo(static_cast<size_t>(axis + 1), 0), hi, st(static_cast<size_t>(axis + 1), 1);
  for (int d = 0; d <= axis; ++d) hi.push_back(x.shape()[d]);
  lo[axis] = start;
  hi[axis] = stop;
  return ops::slice(x, lo, hi, st, s, loc);
}

}  // namespace nuvec::ops::impl
