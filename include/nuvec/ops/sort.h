// Sorting, partitioning and scans along an axis (MLX's names and rules).
// Without an axis the array is flattened first (MLX's axis=None). NaN sorts
// after every number. Invalid axes and kth/k out of range give failed arrays.
#pragma once

#include <optional>

#include "nuvec/core/array.h"

namespace nuvec::inline ops {

/// The values sorted along `axis` (stable; NaN last); any dtype.
Array sort(const Array& x, int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The flattened array sorted (a 0-d input gives shape {1}).
Array sort(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Indices (uint32) that sort `x` along `axis`; stable, so equal values keep
/// their order.
Array argsort(const Array& x, int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array argsort(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Moves the element of rank `kth` (negative counts from the end) to
/// position kth along `axis`, smaller or equal values before it, the others
/// after (in MLX's CPU order, std::nth_element's).
Array partition(const Array& x, int kth, int axis, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
Array partition(const Array& x, int kth, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The indices (uint32) of partition's order.
Array argpartition(const Array& x, int kth, int axis, StreamOrDevice s = {},
                   Location loc = NUVEC_LOC);
Array argpartition(const Array& x, int kth, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The `k` largest values along `axis` (0 <= k <= size; NaN counts as the
/// largest), in partition's order (not sorted), as MLX.
Array topk(const Array& x, int k, int axis, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array topk(const Array& x, int k, StreamOrDevice s = {}, Location loc = NUVEC_LOC);

// Scans, with MLX's positional forms: `(x, reverse, inclusive)` over the
// flattened array and `(x, axis, reverse, inclusive)` along an axis.
// `reverse` accumulates from the end; an exclusive scan (`inclusive =
// false`) leaves each element out of its own result and starts from the
// identity. A bool second argument is `reverse`, an int one the axis.
#define NUVEC_DECLARE_SCAN(name)                                             \
  Array name(const Array& x, bool reverse = false, bool inclusive = true,     \
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);                \
  Array name(const Array& x, int axis, bool reverse = false,                  \
             bool inclusive = true, StreamOrDevice s = {},                    \
             Location loc = NUVEC_LOC);
#define NUVEC_DECLARE_TYPED_SCAN(name)                                       \
  Array name(const Array& x, bool reverse = false, bool inclusive = true,     \
             std::optional<DType> dtype = std::nullopt, StreamOrDevice s = {}, \
             Location loc = NUVEC_LOC);                                       \
  Array name(const Array& x, bool reverse, bool inclusive, StreamOrDevice s,  \
             Location loc = NUVEC_LOC);                                       \
  Array name(const Array& x, int axis, bool reverse = false,                  \
             bool inclusive = true, std::optional<DType> dtype = std::nullopt, \
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);                \
  Array name(const Array& x, int axis, bool reverse, bool inclusive,          \
             StreamOrDevice s, Location loc = NUVEC_LOC);
/// Cumulative sum; `dtype` converts x first. The dtype is kept, except
/// bool gives int32 (MLX: small integers are not widened, unlike sum).
NUVEC_DECLARE_TYPED_SCAN(cumsum)
/// Cumulative product; `dtype` converts x first; keeps the dtype.
NUVEC_DECLARE_TYPED_SCAN(cumprod)
/// Cumulative maximum; NaN propagates; keeps the dtype.
NUVEC_DECLARE_SCAN(cummax)
/// Cumulative minimum; NaN propagates; keeps the dtype.
NUVEC_DECLARE_SCAN(cummin)
/// log(cumsum(exp(x))) computed stably; bool and integers give float32.
NUVEC_DECLARE_SCAN(logcumsumexp)
#undef NUVEC_DECLARE_SCAN
#undef NUVEC_DECLARE_TYPED_SCAN

}  // namespace nuvec::ops
