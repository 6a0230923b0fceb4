// Gathers: take, take_along_axis, and indexing with index lists (x.i(...)).
// Index values are wrapped once when negative (-1 is the last) and then
// clamped into range: a gather never reads out of bounds (MLX does not
// check; docs/semantics.md).
#pragma once

#include <vector>

#include "nuvec/core/array.h"

namespace nuvec::ops {

/// Elements of `x` along `axis` at integer `indices`: the result has
/// x.shape[:axis] + indices.shape + x.shape[axis+1:].
Array take(const Array& x, const Array& indices, int axis, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// take over the flattened array.
Array take(const Array& x, const Array& indices, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// out[..., j, ...] = x[..., indices[..., j, ...], ...] along `axis`;
/// indices has x's rank and broadcasts with x on the other axes.
Array take_along_axis(const Array& x, const Array& indices, int axis,
                      StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// A copy of x with values written at `indices` along `axis` (indices as in
/// take_along_axis; values broadcast to the indices' shape).
Array put_along_axis(const Array& x, const Array& indices, const Operand& values,
                     int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// As put_along_axis, adding (repeated indices accumulate in order).
Array scatter_add_along_axis(const Array& x, const Array& indices,
                             const Operand& values, int axis,
                             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// x[index...] (Array::i).
Array index(const Array& x, const std::vector<Index>& index,
            StreamOrDevice s = {});

}  // namespace nuvec::ops
