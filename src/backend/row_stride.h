// How a FusedReduce input is seen as rows on both backends: the one stride
// that walks a range of axes in row-major order, when there is one.
#pragma once

#include <cstdint>
#include <optional>

#include "nuvec/core/shape.h"

namespace nuvec::backend {

/// The stride of axes [lo, hi) of `shape` with `st`, walked in row-major
/// order as one axis (size-1 axes skipped; 0 when all are size 1), or
/// nothing when no single stride does.
inline std::optional<int64_t> one_stride(const Shape& shape, const Strides& st, int lo, int hi) {
  int64_t stride = 0, expect = -1;
  for (int d = hi - 1; d >= lo; --d) {
    if (shape[d] == 1) continue;
    if (expect >= 0 && st[d] != expect) return std::nullopt;
    if (expect < 0) stride = st[d];
    expect = st[d] * shape[d];
  }
  return stride;
}

}  // namespace nuvec::backend
