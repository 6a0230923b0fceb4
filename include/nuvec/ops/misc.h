// Padding, diagonals, grids, products over named axes, searches and
// dynamic slices (MLX's names and rules).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/ops/creation.h"

namespace nuvec::inline ops {

/// x padded by (low, high) widths, MLX's forms: along the listed `axes`
/// with `low` and `high` per axis; by one (before, after) pair per axis or
/// one pair (or one width) for every axis. Widths must be non-negative.
/// Modes: "constant" (`pad_value`, cast to x's dtype), "edge" (the border
/// value repeated), "reflect" (mirrored without the border: [1 2 3] by 2 is
/// [3 2 1 2 3 2 1]) and "symmetric" (mirrored with it: [2 1 1 2 3 3 2]);
/// reflections longer than the axis repeat, as NumPy's.
Array pad(const Array& x, const std::vector<int>& axes, const Shape& low_pad_size,
          const Shape& high_pad_size, const Array& pad_value = array(0),
          const std::string& mode = "constant", StreamOrDevice s = {},
          Location loc = NUVEC_LOC);
Array pad(const Array& x, const std::vector<std::pair<int, int>>& pad_width,
          const Array& pad_value = array(0), const std::string& mode = "constant",
          StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array pad(const Array& x, const std::pair<int, int>& pad_width,
          const Array& pad_value = array(0), const std::string& mode = "constant",
          StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array pad(const Array& x, int pad_width, const Array& pad_value = array(0),
          const std::string& mode = "constant", StreamOrDevice s = {},
          Location loc = NUVEC_LOC);
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
/// Insertion positions of `values` in the sorted 1-D array (uint32):
/// "left" is the first position with sorted[i] >= v, "right" the first with
/// sorted[i] > v; NaN sorts last. Computed by comparing every pair.
Array searchsorted(const Array& sorted, const Array& values, const std::string& side = "left",
                   StreamOrDevice s = {}, Location loc = NUVEC_LOC);

// Slices (the static form with strides is in ops/shape.h) and slice
// updates, MLX's forms. Start, stop and strides have Python's meaning per
// axis (negative values count from the end, bounds clamp).

/// x[start:stop] with step 1 on every axis (a view); MLX's form with a
/// stream in the fourth place.
Array slice(const Array& x, Shape start, Shape stop, StreamOrDevice s,
            Location loc = NUVEC_LOC);
/// The block of x of shape `slice_size` (one size per axis, each at most
/// the axis' size) starting at the integer array `start` (0-d or 1-d, one
/// entry per listed axis) along the distinct `axes`; 0 on the others.
/// Starts are clamped into [0, dim - size] so the block stays inside x (MLX
/// does not check them).
Array slice(const Array& x, const Array& start, const std::vector<int>& axes,
            const Shape& slice_size, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);
/// A copy of x with `update` written at `start` along `axes` (start and
/// axes as slice's, starts clamped likewise). update is converted to x's
/// dtype; missing leading axes take x's sizes (1 on listed axes), as MLX.
Array slice_update(const Array& x, const Array& update, const Array& start,
                   const std::vector<int>& axes, StreamOrDevice s = {},
                   Location loc = NUVEC_LOC);
/// A copy of src with src[start:stop:strides] replaced by `update`
/// (converted to src's dtype, broadcast to the slice). start, stop and
/// strides give every axis; strides are not 0.
Array slice_update(const Array& src, const Array& update, Shape start,
                   Shape stop, Shape strides, StreamOrDevice s = {},
                   Location loc = NUVEC_LOC);
Array slice_update(const Array& src, const Array& update, Shape start,
                   Shape stop, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// As slice_update, adding the update to the slice.
Array slice_update_add(const Array& src, const Array& update, Shape start,
                       Shape stop, Shape strides, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
Array slice_update_add(const Array& src, const Array& update, Shape start,
                       Shape stop, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
/// As slice_update, multiplying the slice by the update.
Array slice_update_prod(const Array& src, const Array& update, Shape start,
                        Shape stop, Shape strides, StreamOrDevice s = {},
                        Location loc = NUVEC_LOC);
Array slice_update_prod(const Array& src, const Array& update, Shape start,
                        Shape stop, StreamOrDevice s = {},
                        Location loc = NUVEC_LOC);
/// As slice_update, keeping the maximum of the slice and the update.
Array slice_update_max(const Array& src, const Array& update, Shape start,
                       Shape stop, Shape strides, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
Array slice_update_max(const Array& src, const Array& update, Shape start,
                       Shape stop, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
/// As slice_update, keeping the minimum of the slice and the update.
Array slice_update_min(const Array& src, const Array& update, Shape start,
                       Shape stop, Shape strides, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
Array slice_update_min(const Array& src, const Array& update, Shape start,
                       Shape stop, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
