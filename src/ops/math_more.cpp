// MLX's further math functions built from other ops: trunc, positive,
// logical_xor, nan_to_num, result_type, count_nonzero, median, minmax,
// vecdot and diff.
#include <algorithm>
#include <numeric>

#include "nuvec/core/dtype_info.h"
#include "nuvec/ops/creation.h"
#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/join.h"
#include "nuvec/ops/linalg.h"
#include "nuvec/ops/reduce.h"
#include "nuvec/ops/shape.h"
#include "nuvec/ops/sort.h"
#include "ops/axis_slice.h"
#include "ops/builder.h"

namespace nuvec::inline ops {

using impl::fail;

namespace {

std::vector<int> all_axes(const Array& x) {
  std::vector<int> a(x.ndim());
  std::iota(a.begin(), a.end(), 0);
  return a;
}

}  // namespace

Array trunc(const Array& x, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  if (!is_floating(x.dtype())) return ops::floor(x, s, loc);  // the rule's checks
  // ceil below zero, floor elsewhere: -0.5 gives -0, as std::trunc.
  return ops::where(ops::less(x, 0, s, loc), ops::ceil(x, s, loc), ops::floor(x, s, loc), s,
                    loc);
}

Array positive(const Array& x, StreamOrDevice, Location) { return x; }

Array logical_xor(const Operand& a, const Operand& b, StreamOrDevice s, Location loc) {
  auto as_bool = [&](const Operand& o) {
    return o.is_scalar() ? ops::astype(ops::add(array(false), o, s, loc), bool_, s, loc)
                         : ops::astype(o.array(), bool_, s, loc);
  };
  return ops::not_equal(as_bool(a), as_bool(b), s, loc);
}

Array nan_to_num(const Array& x, float nan, std::optional<float> posinf,
                 std::optional<float> neginf, StreamOrDevice s, Location loc) {
  if (x.is_failed() || !is_inexact(x.dtype())) return x;
  if (is_complex(x.dtype()))
    return fail(ErrorKind::unsupported_dtype, "complex inputs are not supported", "nan_to_num",
                loc);
  finfo info(x.dtype());
  Array big = array(posinf.value_or(static_cast<float>(info.max)), x.dtype());
  Array low = array(neginf.value_or(static_cast<float>(info.min)), x.dtype());
  if (!posinf && x.dtype() == float64) big = array(info.max, float64);
  if (!neginf && x.dtype() == float64) low = array(info.min, float64);
  Array out = ops::where(ops::isnan(x, s, loc), array(nan, x.dtype()), x, s, loc);
  out = ops::where(ops::isposinf(x, s, loc), big, out, s, loc);
  return ops::where(ops::isneginf(x, s, loc), low, out, s, loc);
}

DType result_type(const Array& a, const Array& b) { return promote_types(a.dtype(), b.dtype()); }
DType result_type(const Array& a, const Array& b, const Array& c) {
  return promote_types(result_type(a, b), c.dtype());
}
DType result_type(const std::vector<Array>& arrays) {
  if (arrays.empty()) return bool_;
  DType d = arrays[0].dtype();
  for (const Array& a : arrays) d = promote_types(d, a.dtype());
  return d;
}

Array count_nonzero(const Array& x, const Axes& axes, bool keepdims, StreamOrDevice s,
                    Location loc) {
  return ops::sum(ops::not_equal(x, 0, s, loc), axes, keepdims, s, loc);
}
Array count_nonzero(const Array& x, int axis, bool keepdims, StreamOrDevice s, Location loc) {
  return ops::count_nonzero(x, Axes(axis), keepdims, s, loc);
}
Array count_nonzero(const Array& x, bool keepdims, StreamOrDevice s, Location loc) {
  return ops::count_nonzero(x, Axes(all_axes(x)), keepdims, s, loc);
}

Array median(const Array& x, const Axes& axes, bool keepdims, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto ax = impl::normalize_axes(axes.list(), x.ndim());
  if (!ax) return fail(ax.error().kind(), ax.error().message(), "median", loc);
  if (ax->empty()) return ops::astype(x, at_least_float(x.dtype()), s, loc);
  // The reduced axes moved to the end and merged, then sorted.
  std::vector<int> order;
  for (int i = 0; i < x.ndim(); ++i)
    if (std::find(ax->begin(), ax->end(), i) == ax->end()) order.push_back(i);
  Shape kept;
  for (int i : order) kept.push_back(x.shape(i));
  order.insert(order.end(), ax->begin(), ax->end());
  Array y = ops::transpose(x, order, s, loc);
  y = ops::flatten(y, static_cast<int>(kept.size()), -1, s, loc);
  int n = y.shape(-1);
  if (n == 0)
    return fail(ErrorKind::invalid_argument, "the median of an empty axis is undefined",
                "median", loc);
  y = ops::sort(ops::astype(y, at_least_float(x.dtype()), s, loc), -1, s, loc);
  int last = y.ndim() - 1;
  Array mid = impl::slice_axis(y, last, n / 2, n / 2 + 1, s, loc);
  if (n % 2 == 0) {
    Array lo = impl::slice_axis(y, last, n / 2 - 1, n / 2, s, loc);
    mid = ops::multiply(ops::add(lo, mid, s, loc), 0.5, s, loc);
  }
  Array out = ops::squeeze(mid, last, s, loc);
  if (!keepdims) return out;
  Shape with_ones = x.shape();
  for (int a : *ax) with_ones[a] = 1;
  return ops::reshape(out, with_ones, s, loc);
}
Array median(const Array& x, int axis, bool keepdims, StreamOrDevice s, Location loc) {
  return ops::median(x, Axes(axis), keepdims, s, loc);
}
Array median(const Array& x, bool keepdims, StreamOrDevice s, Location loc) {
  return ops::median(x, Axes(all_axes(x)), keepdims, s, loc);
}

std::tuple<Array, Array> minmax(const Array& x, const Axes& axes, bool keepdims,
                                StreamOrDevice s, Location loc) {
  return {ops::min(x, axes, keepdims, s, loc), ops::max(x, axes, keepdims, s, loc)};
}
std::tuple<Array, Array> minmax(const Array& x, int axis, bool keepdims, StreamOrDevice s,
                                Location loc) {
  return ops::minmax(x, Axes(axis), keepdims, s, loc);
}
std::tuple<Array, Array> minmax(const Array& x, bool keepdims, StreamOrDevice s, Location loc) {
  return ops::minmax(x, Axes(all_axes(x)), keepdims, s, loc);
}

Array vecdot(const Array& a, const Array& b, int axis, StreamOrDevice s, Location loc) {
  Array ca = is_complex(a.dtype()) ? ops::conjugate(a, s, loc) : a;
  return ops::sum(ops::multiply(ca, b, s, loc), axis, false, s, loc);
}

Array diff(const Array& x, int n, int axis, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  if (n < 0)
    return fail(ErrorKind::invalid_argument, "n must be non-negative, got " + std::to_string(n),
                "diff", loc);
  if (x.ndim() == 0)
    return fail(ErrorKind::invalid_argument, "needs at least 1 dimension", "diff", loc);
  auto ax = impl::normalize_axis(axis, x.ndim());
  if (!ax)
    return fail(ErrorKind::invalid_axis,
                "axis " + std::to_string(axis) + " is out of range for an array with " +
                    std::to_string(x.ndim()) + " dimensions",
                "diff", loc);
  Array y = x;
  for (int i = 0; i < n; ++i) {
    int len = y.shape(*ax);
    if (len == 0) break;
    Array hi = impl::slice_axis(y, *ax, 1, len, s, loc);
    Array lo = impl::slice_axis(y, *ax, 0, len - 1, s, loc);
    y = y.dtype() == bool_ ? ops::not_equal(hi, lo, s, loc) : ops::subtract(hi, lo, s, loc);
  }
  return y;
}

}  // namespace nuvec::ops
