// searchsorted and dynamic slices, composed from comparisons, sums and take.
#include <algorithm>
#include "nuvec/ops/ops.h"
#include "ops/builder.h"

namespace nuvec::ops {

namespace {

// a < b with NaN after every number (as sort orders them).
Array less_nan_last(const Array& a, const Array& b, const StreamOrDevice& s, Location loc) {
  Array nan_b = ops::logical_and(ops::isnan(b, s, loc), ops::logical_not(ops::isnan(a, s, loc), s, loc),
                                 s, loc);
  return ops::logical_or(ops::less(a, b, s, loc), nan_b, s, loc);
}

}  // namespace

Array searchsorted(const Array& sorted, const Array& values, Side side, StreamOrDevice s,
                   Location loc) {
  if (sorted.is_failed()) return sorted;
  if (values.is_failed()) return values;
  if (sorted.ndim() != 1)
    return detail::fail(ErrorKind::invalid_shape,
                        "the sorted array must be 1-D, got " + std::to_string(sorted.ndim()) +
                            " dimensions",
                        "searchsorted", loc);
  Array v = ops::expand_dims(values, {-1}, s, loc);
  // left: how many sorted[i] < v; right: how many sorted[i] <= v, i.e. !(v < sorted[i]).
  Array hits = side == Side::left ? less_nan_last(sorted, v, s, loc)
                                  : ops::logical_not(less_nan_last(v, sorted, s, loc), s, loc);
  return ops::astype(ops::sum(hits, {-1}, false, s, loc), uint32, s, loc);
}

Array slice(const Array& x, const Array& start, const std::vector<int>& axes,
            const Shape& slice_size, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  if (start.is_failed()) return start;
  auto fail = [&](ErrorKind k, const std::string& m) { return detail::fail(k, m, "slice", loc); };
  if (!is_integer(start.dtype()))
    return fail(ErrorKind::unsupported_dtype, "start indices must be integers");
  if (start.ndim() != 1 || start.shape(0) != static_cast<int>(axes.size()))
    return fail(ErrorKind::invalid_shape, "start needs one index per listed axis");
  if (static_cast<int>(slice_size.size()) != x.ndim())
    return fail(ErrorKind::invalid_shape, "slice_size must give every dimension of the array");
  for (int d = 0; d < x.ndim(); ++d)
    if (slice_size[d] < 0 || slice_size[d] > x.shape(d))
      return fail(ErrorKind::invalid_shape, "slice_size " + std::to_string(slice_size[d]) +
                                                " does not fit axis " + std::to_string(d) +
                                                " of size " + std::to_string(x.shape(d)));
  Array out = x;
  for (size_t k = 0; k < axes.size(); ++k) {
    auto a = detail::normalize_axis(axes[k], x.ndim());
    if (!a) return fail(ErrorKind::invalid_axis, "axis " + std::to_string(axes[k]) + " is out of range");
    int n = slice_size[*a];
    // Clamp the start so the block stays inside the axis.
    Array st = ops::clip(ops::astype(ops::take(start, array(static_cast<int>(k)), 0, s, loc), int32, s, loc),
                         Operand(0), Operand(x.shape(*a) - n), s, loc);
    out = ops::take(out, ops::add(ops::arange(n, s, loc), st, s, loc), *a, s, loc);
  }
  for (int d = 0; d < x.ndim(); ++d)  // axes not listed: the leading slice_size
    if (std::find(axes.begin(), axes.end(), d) == axes.end() &&
        std::find(axes.begin(), axes.end(), d - x.ndim()) == axes.end() && slice_size[d] != x.shape(d))
      out = ops::take(out, ops::arange(slice_size[d], s, loc), d, s, loc);
  return out;
}

}  // namespace nuvec::ops
