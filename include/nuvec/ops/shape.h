// Shape operations: views that share the buffer where strides allow.
#pragma once

#include "nuvec/core/array.h"

namespace nuvec::ops {

/// A view with a new shape of the same size (one dimension may be -1);
/// copies only when the strides cannot express it.
Array reshape(const Array& x, Shape shape, StreamOrDevice s = {},
              Location loc = NUVEC_LOC);
/// Merges axes start_axis..end_axis into one.
Array flatten(const Array& x, int start_axis = 0, int end_axis = -1,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Removes all size-1 axes.
Array squeeze(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Removes the listed size-1 axes.
Array squeeze(const Array& x, const Axes& axes, StreamOrDevice s = {},
              Location loc = NUVEC_LOC);
/// Inserts size-1 axes at the listed positions of the result.
Array expand_dims(const Array& x, const Axes& axes, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);
/// Reverses the axes.
Array transpose(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Permutes the axes (negative axes count from the end).
Array transpose(const Array& x, std::vector<int> axes, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
Array swapaxes(const Array& x, int axis1, int axis2, StreamOrDevice s = {},
               Location loc = NUVEC_LOC);
Array moveaxis(const Array& x, int source, int destination,
               StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// A view broadcast to `shape` (NumPy's rules).
Array broadcast_to(const Array& x, const Shape& shape, StreamOrDevice s = {},
                   Location loc = NUVEC_LOC);
/// The arrays broadcast to their common shape.
std::vector<Array> broadcast_arrays(const std::vector<Array>& inputs,
                                    StreamOrDevice s = {},
                                    Location loc = NUVEC_LOC);
/// The broadcast shape of two shapes, or an error naming both.
Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b);
/// Basic slicing with Python's meaning per axis: start, stop and step
/// (negative steps walk backwards; out-of-range bounds clamp). Axes beyond
/// the lists are taken whole. A view.
Array slice(const Array& x, std::vector<int> start, std::vector<int> stop,
            std::vector<int> strides = {}, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
