// Shape operations: views that share the buffer where strides allow.
#pragma once

#include "nuvec/core/array.h"

namespace nuvec::inline ops {

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
Expected<Shape> try_broadcast_shapes(const Shape& a, const Shape& b);
/// MLX's broadcast_shapes: the broadcast shape, or std::invalid_argument (as
/// nuvec::Error) when the shapes do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);
/// Reverses the elements along the listed axes, one axis, or all axes (a
/// view with negative strides).
Array flip(const Array& x, const std::vector<int>& axes, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
Array flip(const Array& x, int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array flip(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Splits axis `axis` into `shape` (one entry may be -1; a one-entry shape
/// returns x).
Array unflatten(const Array& x, int axis, Shape shape, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
/// The slices of x along `axis` (default 0), each without that axis.
std::vector<Array> unstack(const Array& x, int axis, StreamOrDevice s = {},
                           Location loc = NUVEC_LOC);
std::vector<Array> unstack(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// x with at least 1, 2 or 3 dimensions, as NumPy: a 0-d array becomes (1),
/// (1, 1) or (1, 1, 1); a 1-d (n) becomes (1, n) or (1, n, 1); a 2-d (m, n)
/// becomes (m, n, 1).
Array atleast_1d(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array atleast_2d(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array atleast_3d(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
std::vector<Array> atleast_1d(const std::vector<Array>& xs, StreamOrDevice s = {},
                              Location loc = NUVEC_LOC);
std::vector<Array> atleast_2d(const std::vector<Array>& xs, StreamOrDevice s = {},
                              Location loc = NUVEC_LOC);
std::vector<Array> atleast_3d(const std::vector<Array>& xs, StreamOrDevice s = {},
                              Location loc = NUVEC_LOC);
/// x when its elements are laid out row-major (or column-major, when
/// `allow_col_major`), otherwise a row-major copy.
Array contiguous(const Array& x, bool allow_col_major = false, StreamOrDevice s = {},
                 Location loc = NUVEC_LOC);
/// The elements of x (in row-major order, as MLX's view of a contiguous x)
/// at `offset + sum(i[k] * strides[k])` for each index i of `shape`. Every
/// position must lie inside x (MLX does not check). A gather, not a view.
Array as_strided(const Array& x, Shape shape, Strides strides, size_t offset,
                 StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Swaps the last two axes (at least 2-D).
Array matrix_transpose(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// Basic slicing with Python's meaning per axis: start, stop and step
/// (negative steps walk backwards; out-of-range bounds clamp). Axes beyond
/// the lists are taken whole. A view.
Array slice(const Array& x, std::vector<int> start, std::vector<int> stop,
            std::vector<int> strides = {}, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
