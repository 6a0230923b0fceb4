// Padding, diagonals, grids, products over named axes, searches and
// dynamic slices (MLX's names and rules).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nuvec/core/array.h"

namespace nuvec::ops {

enum class PadMode { constant, edge };
/// x padded by (before, after) per axis: one pair for every axis or one per
/// axis; widths must be non-negative. `constant_value` is cast to x's dtype.
Array pad(const Array& x, const std::vector<std::pair<int, int>>& pad_width,
          PadMode mode, const Array& constant_value, StreamOrDevice s = {},
          Location loc = NUVEC_LOC);
Array pad(const Array& x, const std::vector<std::pair<int, int>>& pad_width,
          PadMode mode = PadMode::constant, double constant_value = 0,
          StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array pad(const Array& x, int pad_width, PadMode mode = PadMode::constant,
          double constant_value = 0, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// 1-D: the square matrix with x on the k-th diagonal; 2-D: that diagonal.
Array diag(const Array& x, int k = 0, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The diagonal at `offset` of the planes (axis1, axis2), appended as the
/// last axis.
Array diagonal(const Array& x, int offset = 0, int axis1 = 0, int axis2 = 1,
               StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Sum of the diagonal, in `dtype` (default: x's dtype, then sum's rules).
Array trace(const Array& x, int offset = 0, int axis1 = 0, int axis2 = 1,
            std::optional<DType> dtype = std::nullopt, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);
/// Coordinate grids of 1-D (flattened) arrays; "xy" swaps the first two
/// axes of the output, "ij" does not; `sparse` gives broadcastable shapes.
std::vector<Array> meshgrid(const std::vector<Array>& arrays, bool sparse = false,
                            const std::string& indexing = "xy", StreamOrDevice s = {},
                            Location loc = NUVEC_LOC);
/// Kronecker product.
Array kron(const Array& a, const Array& b, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Sum of products over the last `axes` axes of a and the first of b.
Array tensordot(const Array& a, const Array& b, int axes = 2, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
/// Sum of products over the listed axes pairs.
Array tensordot(const Array& a, const Array& b, const std::vector<int>& axes_a,
                const std::vector<int>& axes_b, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
/// Einstein summation ("ij,jk->ik"; implicit output: the letters used once,
/// sorted; "..." broadcasts). Contractions of two operands go through matmul
/// (so, as MLX, integer contractions fail); no path optimisation: operands
/// combine left to right.
Array einsum(const std::string& subscripts, const std::vector<Array>& operands,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
enum class Side { left, right };
/// Insertion positions of `values` in the sorted 1-D array (uint32): left is
/// the first position with sorted[i] >= v, right the first with
/// sorted[i] > v; NaN sorts last. Computed by comparing every pair.
Array searchsorted(const Array& sorted, const Array& values, Side side = Side::left,
                   StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The block of x of shape `slice_size` (x's full shape, as MLX) starting at
/// the integer array `start` along `axes`. Starts are clamped so the block
/// stays inside x (MLX does not check them).
Array slice(const Array& x, const Array& start, const std::vector<int>& axes,
            const Shape& slice_size, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// A copy of x with `update` written at `start` along `axes` (clamped as
/// slice).
Array slice_update(const Array& x, const Array& update, const Array& start,
                   const std::vector<int>& axes, StreamOrDevice s = {},
                   Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
