// searchsorted and dynamic slices, composed from comparisons, sums and take.
#include <algorithm>
#include "nuvec/ops/ops.h"
#include "ops/builder.h"
#include "ops/indexing_impl.h"

namespace nuvec::inline ops {

namespace {

// a < b with NaN after every number (as sort orders them).
Array less_nan_last(const Array& a, const Array& b, const StreamOrDevice& s, Location loc) {
  Array nan_b = ops::logical_and(ops::isnan(b, s, loc), ops::logical_not(ops::isnan(a, s, loc), s, loc),
                                 s, loc);
  return ops::logical_or(ops::less(a, b, s, loc), nan_b, s, loc);
}

}  // namespace

Array searchsorted(const Array& sorted, const Array& values, const std::string& side,
                   StreamOrDevice s, Location loc) {
  if (sorted.is_failed()) return sorted;
  if (values.is_failed()) return values;
  if (side != "left" && side != "right")
    return impl::fail(ErrorKind::invalid_argument,
                      "side must be \"left\" or \"right\", got \"" + side + "\"",
                      "searchsorted", loc);
  if (sorted.ndim() != 1)
    return impl::fail(ErrorKind::invalid_shape,
                        "the sorted array must be 1-D, got " + std::to_string(sorted.ndim()) +
                            " dimensions",
                        "searchsorted", loc);
  Array v = ops::expand_dims(values, {-1}, s, loc);
  // left: how many sorted[i] < v; right: how many sorted[i] <= v, i.e. !(v < sorted[i]).
  Array hits = side == "left" ? less_nan_last(sorted, v, s, loc)
                                  : ops::logical_not(less_nan_last(v, sorted, s, loc), s, loc);
  return ops::astype(ops::sum(hits, {-1}, false, s, loc), uint32, s, loc);
}

Array slice(const Array& x, const Array& start, const std::vector<int>& axes,
            const Shape& slice_size, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  if (start.is_failed()) return start;
  std::vector<int> ax(axes);
  if (auto bad = impl::check_dynamic_start(x, start, ax, "slice", loc))
    return *bad;
  if (static_cast<int>(slice_size.size()) != x.ndim())
    return impl::fail(ErrorKind::invalid_argument,
                      std::to_string(slice_size.size()) +
                          " slice sizes for an array with " +
                          std::to_string(x.ndim()) + " dimensions",
                      "slice", loc);
  for (int d = 0; d < x.ndim(); ++d)
    if (slice_size[d] < 0 || slice_size[d] > x.shape(d))
      return impl::fail(ErrorKind::invalid_argument,
                        "slice size " + std::to_string(slice_size[d]) +
                            " does not fit axis " + std::to_string(d) +
                            " of size " + std::to_string(x.shape(d)),
                        "slice", loc);
  Array pos = impl::dynamic_positions(x.shape(), start, ax, slice_size, s, loc);
  return impl::take_flat(x, pos, "slice", s, loc);
}

}  // namespace nuvec::inline ops
