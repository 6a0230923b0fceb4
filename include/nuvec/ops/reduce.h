// Reductions over axes. No axes argument means all axes; `keepdims` keeps the
// reduced axes with size 1. sum and prod of bool and small integers give
// int32 (uint32 for unsigned), as MLX; mean, var and std compute in at least
// float32.
#pragma once

#include <tuple>

#include "nuvec/core/array.h"
#include "nuvec/ops/op_lists.h"

namespace nuvec::inline ops {

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
/// The number of nonzero (true) elements over all axes, one axis or a list:
/// int32, as sum of bool.
Array count_nonzero(const Array& x, bool keepdims = false, StreamOrDevice s = {},
                    Location loc = NUVEC_LOC);
Array count_nonzero(const Array& x, int axis, bool keepdims = false, StreamOrDevice s = {},
                    Location loc = NUVEC_LOC);
Array count_nonzero(const Array& x, const Axes& axes, bool keepdims = false,
                    StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The median over all axes, one axis or a list (the mean of the two middle
/// values for an even count), in at least float32; NaN sorts last.
Array median(const Array& x, bool keepdims = false, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array median(const Array& x, int axis, bool keepdims = false, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array median(const Array& x, const Axes& axes, bool keepdims = false, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
/// {min, max} over all axes, one axis or a list.
std::tuple<Array, Array> minmax(const Array& x, bool keepdims = false, StreamOrDevice s = {},
                                Location loc = NUVEC_LOC);
std::tuple<Array, Array> minmax(const Array& x, int axis, bool keepdims = false,
                                StreamOrDevice s = {}, Location loc = NUVEC_LOC);
std::tuple<Array, Array> minmax(const Array& x, const Axes& axes, bool keepdims = false,
                                StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// exp(x) / sum(exp(x)) over the axes (all when omitted), computed stably,
/// with MLX's forms: `softmax(x, precise)`, `softmax(x, axis, precise)`,
/// `softmax(x, axes, precise)`. Integer and bool inputs give float32; 16-bit
/// floats always compute in float32 (the `precise` result; the flag is
/// accepted for MLX's signatures). An empty input is returned as it is.
Array softmax(const Array& x, const Axes& axes, bool precise = false,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array softmax(const Array& x, bool precise = false, StreamOrDevice s = {},
              Location loc = NUVEC_LOC);
Array softmax(const Array& x, int axis, bool precise = false,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
