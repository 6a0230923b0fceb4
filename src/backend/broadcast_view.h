// A view of an array as a larger shape it broadcasts to (NumPy's rules),
// for kernels that read an operand broadcast (AddMM's c on both backends).
#pragma once

#include <memory>

#include "nuvec/core/graph.h"

namespace nuvec::backend {

/// `x` read as `shape`: zero strides on the added and size-1 axes, the
/// buffer shared.
inline Array broadcast_view(const Array& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  auto d = std::make_shared<ArrayDesc>(*x.desc());
  d->node = nullptr;
  int extra = static_cast<int>(shape.size()) - x.ndim();
  Strides strides(shape.size(), 0);
  for (int i = 0; i < x.ndim(); ++i)
    if (x.shape(i) != 1) strides[extra + i] = x.strides()[i];
  d->shape = shape;
  d->strides = std::move(strides);
  d->size = shape_size(shape);
  d->row_contiguous = false;
  return Array(std::move(d));
}

}  // namespace nuvec::backend
