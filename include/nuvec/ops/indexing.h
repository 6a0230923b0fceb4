// Gathers (take, take_along_axis, gather, indexing with index lists x.i(...))
// and scatters (scatter and its reductions, put_along_axis,
// scatter_add_axis, masked_scatter), with MLX's names, argument orders and
// checks. Index values are wrapped once when negative (-1 is the last) and
// then clamped into range: a gather never reads, and a scatter never writes,
// out of bounds (MLX does not check; docs/array-api.md). Scatters apply their
// updates in row-major order, so repeated indices accumulate in a fixed order
// and `scatter` keeps the last write.
#pragma once

#include <vector>

#include "nuvec/core/array.h"

namespace nuvec::inline ops {

/// Elements of `x` along `axis` at integer `indices` (any integer dtype;
/// bool and floating indices fail): the result has x.shape[:axis] +
/// indices.shape + x.shape[axis+1:]. A non-empty take from an axis of size
/// 0 fails.
Array take(const Array& x, const Array& indices, int axis,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// take over the flattened array.
Array take(const Array& x, const Array& indices, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// The slice of x at `index` along `axis`, that axis removed (a view). A
/// negative index counts from the end (MLX rejects it); one out of range
/// fails.
Array take(const Array& x, int index, int axis, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// The element of the flattened x at `index` (0-d).
Array take(const Array& x, int index, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// out[..., j, ...] = x[..., indices[..., j, ...], ...] along `axis`;
/// indices has x's rank and broadcasts with x on the other axes.
Array take_along_axis(const Array& x, const Array& indices, int axis,
                      StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// A copy of x with values written at `indices` along `axis` (indices as in
/// take_along_axis). values (converted to x's dtype; leading axes of size 1
/// beyond the indices' rank dropped) broadcast with the indices, and x, the
/// indices and the values broadcast on the other axes, as MLX (the result
/// can be larger than x). An empty x is returned as it is.
Array put_along_axis(const Array& x, const Array& indices,
                     const Operand& values, int axis, StreamOrDevice s = {},
                     Location loc = NUVEC_LOC);
/// As put_along_axis, adding (repeated indices accumulate in order).
Array scatter_add_axis(const Array& x, const Array& indices,
                       const Operand& values, int axis, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
/// The former name of scatter_add_axis.
Array scatter_add_along_axis(const Array& x, const Array& indices,
                             const Operand& values, int axis,
                             StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// Slices of `a` of shape `slice_sizes` (one size per axis) starting at the
/// broadcast `indices` along `axes` (one index array per axis, axes in [0,
/// ndim) and distinct; 0 elsewhere): the result has the indices' broadcast
/// shape followed by slice_sizes. Index arrays promote to one integer dtype
/// (uint64 with a signed dtype gives float32, which fails, as MLX). Starts
/// are clamped so each slice stays inside `a`.
Array gather(const Array& a, const std::vector<Array>& indices,
             const std::vector<int>& axes, const Shape& slice_sizes,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// gather with one index array.
Array gather(const Array& a, const Array& indices, int axis,
             const Shape& slice_sizes, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);

/// A copy of `a` with the slices of `updates` written where gather would
/// read them: updates has the indices' broadcast shape followed by one slice
/// of a's rank (no larger than a on any axis), converted to a's dtype.
/// Updates apply in row-major order (the last write wins).
Array scatter(const Array& a, const std::vector<Array>& indices,
              const Array& updates, const std::vector<int>& axes,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array scatter(const Array& a, const Array& indices, const Array& updates,
              int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// As scatter, adding the updates (repeated indices accumulate in order).
Array scatter_add(const Array& a, const std::vector<Array>& indices,
                  const Array& updates, const std::vector<int>& axes,
                  StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array scatter_add(const Array& a, const Array& indices, const Array& updates,
                  int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// As scatter, multiplying.
Array scatter_prod(const Array& a, const std::vector<Array>& indices,
                   const Array& updates, const std::vector<int>& axes,
                   StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array scatter_prod(const Array& a, const Array& indices, const Array& updates,
                   int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// As scatter, keeping the maximum.
Array scatter_max(const Array& a, const std::vector<Array>& indices,
                  const Array& updates, const std::vector<int>& axes,
                  StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array scatter_max(const Array& a, const Array& indices, const Array& updates,
                  int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// As scatter, keeping the minimum.
Array scatter_min(const Array& a, const std::vector<Array>& indices,
                  const Array& updates, const std::vector<int>& axes,
                  StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array scatter_min(const Array& a, const Array& indices, const Array& updates,
                  int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// A copy of `a` whose elements selected by the bool `mask` (a's leading
/// shape; it selects whole trailing blocks) take the values of `src` in
/// order: the k-th selected element gets the k-th element of src, whose
/// trailing axes broadcast with a's unmasked ones. src is converted to a's
/// dtype; when it has fewer values than selected elements its last value
/// repeats (MLX fails when it evaluates).
Array masked_scatter(const Array& a, const Array& mask, const Array& src,
                     StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// x[index...] (Array::i).
Array index(const Array& x, const std::vector<Index>& index,
            StreamOrDevice s = {});

}  // namespace nuvec::inline ops
