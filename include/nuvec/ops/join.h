// Joining, splitting and rearranging arrays: concatenate, stack, split,
// repeat, tile, roll, and the triangular helpers (MLX's names and rules).
#pragma once

#include <vector>

#include "nuvec/core/array.h"

namespace nuvec::inline ops {

/// Joins arrays along `axis` (negative from the end); dtypes promote, the
/// other dimensions must match. One array is returned unchanged.
Array concatenate(const std::vector<Array>& arrays, int axis, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);
/// Joins the flattened arrays.
Array concatenate(const std::vector<Array>& arrays, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);
/// Stacks arrays of one shape along a new axis (-ndim-1 <= axis <= ndim).
Array stack(const std::vector<Array>& arrays, int axis = 0, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);
/// `sections` equal parts along `axis` (views); the size must divide. On an
/// invalid call, a vector holding one failed array. Note `split(x, {3})`
/// means 3 sections; pass `std::vector<int>{3}` for an index.
std::vector<Array> split(const Array& x, int sections, int axis = 0,
                         StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Parts between the given indices along `axis` (Python slice bounds:
/// negative from the end, clamped; unsorted indices give empty parts).
std::vector<Array> split(const Array& x, const std::vector<int>& indices, int axis = 0,
                         StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Each element repeated `repeats` times along `axis` (without an axis, of
/// the flattened array).
Array repeat(const Array& x, int repeats, int axis, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array repeat(const Array& x, int repeats, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The array repeated `reps` times per axis (NumPy's tile: the shorter of
/// the ranks is padded with leading 1s).
Array tile(const Array& x, std::vector<int> reps, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// Elements shifted by `shift` positions (wrapping) along `axis`; without
/// an axis, over the flattened array (the shape is kept).
Array roll(const Array& x, int shift, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array roll(const Array& x, int shift, int axis, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// Shifts per axis; `shifts` and `axes` have the same length.
Array roll(const Array& x, const Shape& shifts, const std::vector<int>& axes,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// One shift for each of the axes.
Array roll(const Array& x, int shift, const std::vector<int>& axes, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// The shifts summed, along one axis or over the flattened array.
Array roll(const Array& x, const Shape& shifts, int axis, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
Array roll(const Array& x, const Shape& shifts, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// The n-th discrete difference along `axis`: x[1:] - x[:-1] applied n
/// times (not_equal for bool); n = 0 returns x, n past the axis' size gives
/// an empty axis, a negative n fails.
Array diff(const Array& x, int n = 1, int axis = -1, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// An n x m array with ones at and below the k-th diagonal: MLX's
/// arange(n)[:, None] >= arange(-k, m - k)[None, :] (a negative n or m
/// gives an empty axis, as MLX).
Array tri(int n, int m, int k, DType dtype, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array tri(int n, DType dtype = float32, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The lower (tril) or upper (triu) triangle of the last two axes from the
/// k-th diagonal, zeros elsewhere; at least 2-D.
Array tril(const Array& x, int k = 0, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array triu(const Array& x, int k = 0, StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
