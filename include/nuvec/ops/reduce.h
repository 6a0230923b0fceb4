// Reductions over axes. No axes argument means all axes; `keepdims` keeps the
// reduced axes with size 1. sum and prod of bool and small integers give
// int32 (uint32 for unsigned), as MLX; mean, var and std compute in at least
// float32.
#pragma once

#include "nuvec/core/array.h"
#include "nuvec/ops/op_lists.h"

namespace nuvec::ops {

// One axis given as an int picks the `int axis` overload (`sum(x, 0)` is
// the sum over axis 0, as MLX's sum(a, axis)), never the keepdims one.
#define NUVEC_DECLARE_REDUCTION_OP(name)                                    \
  Array name(const Array& x, bool keepdims = false, StreamOrDevice s = {},  \
             Location loc = NUVEC_LOC);                                     \
  Array name(const Array& x, const Axes& axes, bool keepdims = false,       \
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);              \
  inline Array name(const Array& x, int axis, bool keepdims = false,        \
                    StreamOrDevice s = {}, Location loc = NUVEC_LOC) {      \
    return name(x, Axes(axis), keepdims, s, loc);                           \
  }
NUVEC_REDUCTION_OPS(NUVEC_DECLARE_REDUCTION_OP)
#undef NUVEC_DECLARE_REDUCTION_OP

/// Variance with `ddof` delta degrees of freedom.
Array var(const Array& x, const Axes& axes, bool keepdims = false, int ddof = 0,
          StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array var(const Array& x, bool keepdims = false, int ddof = 0,
          StreamOrDevice s = {}, Location loc = NUVEC_LOC);
inline Array var(const Array& x, int axis, bool keepdims = false, int ddof = 0,
                 StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return var(x, Axes(axis), keepdims, ddof, s, loc);
}
/// Standard deviation: sqrt(var).
Array std(const Array& x, const Axes& axes, bool keepdims = false, int ddof = 0,
          StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array std(const Array& x, bool keepdims = false, int ddof = 0,
          StreamOrDevice s = {}, Location loc = NUVEC_LOC);
inline Array std(const Array& x, int axis, bool keepdims = false, int ddof = 0,
                 StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return std(x, Axes(axis), keepdims, ddof, s, loc);
}
/// Index of the first maximum along `axis` (uint32); without an axis, of
/// the flattened array.
Array argmax(const Array& x, int axis, bool keepdims = false,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array argmax(const Array& x, bool keepdims = false, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array argmin(const Array& x, int axis, bool keepdims = false,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array argmin(const Array& x, bool keepdims = false, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
/// exp(x) / sum(exp(x)) over the axes (all when omitted), computed stably;
/// 16-bit floats compute in float32.
Array softmax(const Array& x, const Axes& axes, StreamOrDevice s = {},
              Location loc = NUVEC_LOC);
Array softmax(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
