#include "nuvec/ops/reduce.h"

#include "nuvec/ops/creation.h"
#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/shape.h"
#include "nuvec/primitives/reduce.h"
#include "fast/composite.h"
#include "fast/route.h"
#include "ops/builder.h"

namespace nuvec::inline ops {

using impl::build1;
using impl::fail;
using impl::make;

namespace {

std::vector<int> all_axes(const Array& x) {
  std::vector<int> a(static_cast<size_t>(x.ndim()));
  for (int i = 0; i < x.ndim(); ++i) a[i] = i;
  return a;
}

// Squeezes the reduced axes unless keepdims.
Array finish(const Array& r, const std::vector<int>& axes, bool keepdims,
             const StreamOrDevice& s, Location loc) {
  if (keepdims || r.is_failed() || axes.empty()) return r;
  return ops::squeeze(r, Axes(axes), s, loc);
}

Array reduce(const Array& x, const Axes& axes, bool keepdims, Reduce::Type type,
             const StreamOrDevice& s, const char* op, Location loc) {
  if (x.is_failed()) return x;
  auto ax = impl::normalize_axes(axes.list(), x.ndim());
  if (!ax) return fail(ax.error().kind(), ax.error().message(), op, loc);
  if (ax->empty()) {  // nothing to reduce: MLX returns the input (all/any as bool)
    if (type == Reduce::Type::all || type == Reduce::Type::any) return ops::astype(x, bool_, s, loc);
    return x;
  }
  Array r = build1(make<Reduce>(type, *ax), {x}, s, op, loc);
  return finish(r, *ax, keepdims, s, loc);
}

Array count(const Array& x, const std::vector<int>& axes, DType dtype,
            const StreamOrDevice& s, Location loc) {
  return build1(make<NumberOf>(axes, dtype), {x}, s, "mean", loc);
}
// 1 / n in `dtype`, computed in double (MLX's inverted NumberOf).
Array reciprocal_count(const Array& x, const std::vector<int>& axes, DType dtype,
                       const StreamOrDevice& s, Location loc) {
  Array r = ops::divide(1.0, count(x, axes, float64, s, loc), s, loc);
  return dtype == float64 ? r : ops::astype(r, dtype, s, loc);
}

}  // namespace

#define NUVEC_SIMPLE_REDUCTION(name, type)                                        \
  Array name(const Array& x, bool keepdims, StreamOrDevice s, Location loc) {    \
    return reduce(x, Axes(all_axes(x)), keepdims, Reduce::Type::type, s, #name, loc); \
  }                                                                              \
  Array name(const Array& x, const Axes& axes, bool keepdims, StreamOrDevice s, \
             Location loc) {                                                     \
    return reduce(x, axes, keepdims, Reduce::Type::type, s, #name, loc);         \
  }
NUVEC_SIMPLE_REDUCTION(sum, sum)
NUVEC_SIMPLE_REDUCTION(prod, prod)
NUVEC_SIMPLE_REDUCTION(max, max)
NUVEC_SIMPLE_REDUCTION(min, min)
NUVEC_SIMPLE_REDUCTION(all, all)
NUVEC_SIMPLE_REDUCTION(any, any)
#undef NUVEC_SIMPLE_REDUCTION

Array mean(const Array& x, const Axes& axes, bool keepdims, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto ax = impl::normalize_axes(axes.list(), x.ndim());
  if (!ax) return fail(ax.error().kind(), ax.error().message(), "mean", loc);
  // As MLX: sum in the input's dtype (integers wrap), then convert, and
  // multiply by 1 / n (computed in double and rounded once).
  DType f = at_least_float(x.dtype());
  Array total = ops::astype(ops::sum(x, axes, keepdims, s, loc), f, s, loc);
  return ops::multiply(total, reciprocal_count(x, *ax, f, s, loc), s, loc);
}
Array mean(const Array& x, bool keepdims, StreamOrDevice s, Location loc) {
  return ops::mean(x, Axes(all_axes(x)), keepdims, s, loc);
}

Array var(const Array& x, const Axes& axes, bool keepdims, int ddof, StreamOrDevice s,
          Location loc) {
  if (x.is_failed()) return x;
  auto ax = impl::normalize_axes(axes.list(), x.ndim());
  if (!ax) return fail(ax.error().kind(), ax.error().message(), "var", loc);
  DType f = at_least_float(x.dtype());
  Array xf = ops::astype(x, f, s, loc);
  Array mu = ops::mean(x, axes, true, s, loc);  // as MLX: integer sums wrap
  Array d = ops::subtract(xf, mu, s, loc);
  Array sq = is_complex(f) ? ops::real(ops::multiply(d, ops::conjugate(d, s, loc), s, loc), s, loc)
                           : ops::square(d, s, loc);
  // MLX's rule: the sum times 1 / n without ddof; else divided by max(n -
  // ddof, 0), so too few elements give inf or NaN through the division.
  Array total = ops::sum(sq, axes, keepdims, s, loc);
  if (ddof == 0) return ops::multiply(total, reciprocal_count(x, *ax, sq.dtype(), s, loc), s, loc);
  Array n = ops::maximum(ops::subtract(count(x, *ax, sq.dtype(), s, loc), ddof, s, loc), 0, s, loc);
  return ops::divide(total, n, s, loc);
}
Array var(const Array& x, bool keepdims, int ddof, StreamOrDevice s, Location loc) {
  return ops::var(x, Axes(all_axes(x)), keepdims, ddof, s, loc);
}
Array std(const Array& x, const Axes& axes, bool keepdims, int ddof, StreamOrDevice s,
          Location loc) {
  return ops::sqrt(ops::var(x, axes, keepdims, ddof, s, loc), s, loc);
}
Array std(const Array& x, bool keepdims, int ddof, StreamOrDevice s, Location loc) {
  return ops::std(x, Axes(all_axes(x)), keepdims, ddof, s, loc);
}

Array logsumexp(const Array& x, const Axes& axes, bool keepdims, StreamOrDevice s,
                Location loc) {
  if (x.is_failed()) return x;
  if (x.size() == 0)
    return fail(ErrorKind::invalid_shape, "cannot compute logsumexp of an empty array", "logsumexp",
                loc);
  auto ax = impl::normalize_axes(axes.list(), x.ndim());
  if (!ax) return fail(ax.error().kind(), ax.error().message(), "logsumexp", loc);
  Array xf = ops::astype(x, at_least_float(x.dtype()), s, loc);
  // The last axis alone has a kernel (fast::detail::logsumexp_last).
  Array out = ax->size() == 1 && (*ax)[0] == x.ndim() - 1 && is_floating(xf.dtype())
                  ? fast::detail::logsumexp_last(xf, s, loc)
                  : fast::composite::logsumexp(xf, *ax, s, loc);
  return finish(out, *ax, keepdims, s, loc);
}
Array logsumexp(const Array& x, bool keepdims, StreamOrDevice s, Location loc) {
  return ops::logsumexp(x, Axes(all_axes(x)), keepdims, s, loc);
}

namespace {
Array arg_reduce(const Array& x, std::optional<int> axis, bool keepdims, ArgReduce::Type t,
                 const StreamOrDevice& s, const char* op, Location loc) {
  if (x.is_failed()) return x;
  if (!axis) {
    Array flat = ops::reshape(x, {-1}, s, loc);
    Array r = arg_reduce(flat, 0, false, t, s, op, loc);
    if (keepdims && !r.is_failed()) return ops::reshape(r, Shape(static_cast<size_t>(x.ndim()), 1), s, loc);
    return r;
  }
  auto a = impl::normalize_axis(*axis, x.ndim());
  if (!a)
    return fail(ErrorKind::invalid_axis, "axis " + std::to_string(*axis) + " is out of range for an array with " +
                                             std::to_string(x.ndim()) + " dimensions",
                op, loc);
  Array r = build1(make<ArgReduce>(t, *a), {x}, s, op, loc);
  return finish(r, {*a}, keepdims, s, loc);
}
}  // namespace

Array argmax(const Array& x, int axis, bool keepdims, StreamOrDevice s, Location loc) {
  return arg_reduce(x, axis, keepdims, ArgReduce::Type::argmax, s, "argmax", loc);
}
Array argmax(const Array& x, bool keepdims, StreamOrDevice s, Location loc) {
  return arg_reduce(x, std::nullopt, keepdims, ArgReduce::Type::argmax, s, "argmax", loc);
}
Array argmin(const Array& x, int axis, bool keepdims, StreamOrDevice s, Location loc) {
  return arg_reduce(x, axis, keepdims, ArgReduce::Type::argmin, s, "argmin", loc);
}
Array argmin(const Array& x, bool keepdims, StreamOrDevice s, Location loc) {
  return arg_reduce(x, std::nullopt, keepdims, ArgReduce::Type::argmin, s, "argmin", loc);
}

Array softmax(const Array& x, const Axes& axes, bool precise, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  DType out = at_least_float(x.dtype());
  if (x.size() == 0) {
    // As MLX: an empty input is returned as it is (checking the axes).
    Array checked = ops::sum(x, axes, true, s, loc);
    return checked.is_failed() ? checked : ops::astype(x, out, s, loc);
  }
  auto ax = impl::normalize_axes(axes.list(), x.ndim());
  if (!ax) return fail(ax.error().kind(), ax.error().message(), "softmax", loc);
  // The last axis alone has a kernel (fast::detail::softmax_last).
  if (ax->size() == 1 && (*ax)[0] == x.ndim() - 1 && is_floating(out))
    return fast::detail::softmax_last(ops::astype(x, out, s, loc), precise, s, loc);
  return fast::composite::softmax(x, *ax, s, loc);
}
Array softmax(const Array& x, bool precise, StreamOrDevice s, Location loc) {
  return ops::softmax(x, Axes(all_axes(x)), precise, s, loc);
}
Array softmax(const Array& x, int axis, bool precise, StreamOrDevice s, Location loc) {
  return ops::softmax(x, Axes(axis), precise, s, loc);
}

}  // namespace nuvec::ops
