// Helpers shared by the gathers, scatters and slice updates: every one of
// them finds the flat positions it reads or writes and runs one Take or one
// Scatter over the flattened array (so their derivatives and vmap rules are
// those two primitives').
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/primitives/indexing.h"

namespace nuvec::inline ops::impl {

/// arange of the element count in `shape`: int32, or int64 past 2^31 - 1
/// elements.
Array positions_of(const Shape& shape, const StreamOrDevice& s, Location loc);
/// Python's slice.indices() for one axis of size `dim` with start `b`,
/// stop `e` and step `k` (not 0): the first index and the count (0: empty,
/// first index 0).
void slice_axis(int dim, int64_t b, int64_t e, int64_t k, int& first, int& count);
/// The shape that flattens x ({-1}, or {0} when x is empty).
Shape flat_shape(const Array& x);
/// Integer `idx` as int64, wrapped once when negative (-1 is n - 1) and
/// then clamped into [0, hi] (hi below 0 counts as 0).
Array wrap_clamp(const Array& idx, int n, int hi, const StreamOrDevice& s,
                 Location loc);
/// The positions of the block of shape `block` (no larger than `shape`)
/// whose corner is at flat offset 0, as int64 in the block's shape.
Array block_offsets(const Shape& shape, const Shape& block,
                    const StreamOrDevice& s, Location loc);
/// One Take of x's flattened elements at `pos` (any shape, integers), named
/// `op` in errors; no argument checks beyond Take's own.
Array take_flat(const Array& x, const Array& pos, const char* op,
                const StreamOrDevice& s, Location loc);
/// A copy of x updated at its flat positions `pos` with `upd` (pos's shape,
/// already x's dtype), one update after the other in row-major order.
Array scatter_flat(const Array& x, const Array& pos, const Array& upd,
                   Scatter::Type type, const char* op, const StreamOrDevice& s,
                   Location loc);
/// MLX's checks of a dynamic slice's `start` (integers, 0-d or 1-d, one
/// per axis) and `axes` (normalised in place, distinct): a failed array
/// when they fail.
std::optional<Array> check_dynamic_start(const Array& x, const Array& start,
                                         std::vector<int>& axes, const char* op,
                                         Location loc);
/// The flat positions (int64, shape `block`) of the block of an array of
/// `shape` whose corner is at `start` along `axes` (normalised), each start
/// clamped into [0, dim - block] so the block fits; 0 on the other axes.
Array dynamic_positions(const Shape& shape, const Array& start,
                        const std::vector<int>& axes, const Shape& block,
                        const StreamOrDevice& s, Location loc);
/// A failed array for `op` at `loc` with the error of the failed `a`.
Array refail(const Array& a, const char* op, Location loc);
/// The shape as "(2, 3)".
std::string shape_text(const Shape& shape);

}  // namespace nuvec::inline ops::impl
