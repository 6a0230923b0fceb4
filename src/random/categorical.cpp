// categorical, with MLX 0.32's two methods (read from its library: the
// choice is made in categorical_impl, the same for all three forms):
// - one distribution (every axis of logits but `axis` of size 1, at least
//   one category) and a non-empty sample shape: inverse CDF, one float32
//   uniform draw per sample;
// - otherwise the argmax of logits plus Gumbel noise.
#include <string>

#include "nuvec/nuvec.h"
#include "ops/builder.h"
#include "random/internal.h"

namespace nuvec::random {

using ops::impl::fail;

namespace {

// The categories of the 1-D `logits` for uniform draws of `shape`: with
// weights w = exp(x - max) (MLX's exp), or, where the maximum is infinite,
// 1 at the positions equal to it and 0 elsewhere; the exclusive cumulative
// sum c of w (in order), the total c[n-1] + w[n-1] (MLX sums in that
// order); then for each draw u, the number of c[i] <= u * total, less one.
Array inverse_cdf(const Array& logits, const Shape& shape, const Key& key,
                  const StreamOrDevice& s, Location loc) {
  int n = logits.shape(0);
  DType dt = promote_types(logits.dtype(), float32);
  Array x = ops::astype(logits, dt, s, loc);
  Array m = ops::max(x, false, s, loc);
  Array peaks = ops::astype(ops::equal(x, m, s, loc), dt, s, loc);
  Array w =
      ops::where(ops::isinf(m, s, loc), peaks,
                 detail::mlx_exp(ops::subtract(x, m, s, loc), s, loc), s, loc);
  Array c = ops::cumsum(w, 0, false, false, s, loc);
  Array last = ops::slice(c, {n - 1}, {n}, {}, s, loc);
  Array total = ops::reshape(
      ops::add(last, ops::slice(w, {n - 1}, {n}, {}, s, loc), s, loc), {}, s,
      loc);
  Array u = uniform(shape, float32, key, s, loc);
  Array at =
      ops::searchsorted(c, ops::multiply(u, total, s, loc), "right", s, loc);
  return ops::subtract(at, array(1u), s, loc);
}

// argmax over `axis` of logits plus Gumbel noise of `shape` with the axis
// inserted at its place among the sample axes; or the inverse CDF.
Array categorical_impl(const Array& logits, int axis, const Shape& shape,
                       const Key& key, const StreamOrDevice& s, Location loc) {
  int n = logits.shape(axis);
  if (n > 0 && logits.size() == n && !shape.empty())
    return inverse_cdf(ops::reshape(logits, {n}, s, loc), shape, key, s, loc);
  for (int d : shape)
    if (d < 0)
      return fail(ErrorKind::invalid_shape, "negative dimension in shape",
                  "categorical", loc);
  Shape noise_shape = shape;
  int at = axis + static_cast<int>(shape.size()) - logits.ndim() + 1;
  noise_shape.insert(noise_shape.begin() + at, n);
  Array g = gumbel(noise_shape, float32, key, s, loc);
  return ops::argmax(ops::add(g, logits, s, loc), at, false, s, loc);
}

// The axis normalised, or nothing when out of range.
std::optional<int> valid_axis(const Array& logits, int axis) {
  return ops::impl::normalize_axis(axis, logits.ndim());
}

Array bad_axis(const Array& logits, int axis, Location loc) {
  return fail(ErrorKind::invalid_axis,
              "invalid axis " + std::to_string(axis) + " for logits with " +
                  std::to_string(logits.ndim()) + " dimensions",
              "categorical", loc);
}

bool logits_ok(const Array& logits) { return !logits.is_failed(); }

}  // namespace

Array categorical(const Array& logits, int axis, const Key& key,
                  StreamOrDevice s, Location loc) {
  if (!logits_ok(logits)) return logits;
  auto ax = valid_axis(logits, axis);
  if (!ax) return bad_axis(logits, axis, loc);
  Shape shape = logits.shape();
  shape.erase(shape.begin() + *ax);
  return categorical_impl(logits, *ax, shape, key, s, loc);
}

Array categorical(const Array& logits, int axis, int num_samples,
                  const Key& key, StreamOrDevice s, Location loc) {
  if (!logits_ok(logits)) return logits;
  auto ax = valid_axis(logits, axis);
  if (!ax) return bad_axis(logits, axis, loc);
  if (num_samples < 0)
    return fail(ErrorKind::invalid_shape, "num_samples must be non-negative",
                "categorical", loc);
  Array l = ops::expand_dims(logits, {-1}, s, loc);
  Shape shape = l.shape();
  shape.erase(shape.begin() + *ax);
  shape.back() = num_samples;
  return categorical_impl(l, *ax, shape, key, s, loc);
}

Array categorical(const Array& logits, int axis, const Shape& shape,
                  const Key& key, StreamOrDevice s, Location loc) {
  if (!logits_ok(logits)) return logits;
  auto ax = valid_axis(logits, axis);
  if (!ax) return bad_axis(logits, axis, loc);
  Shape reduced = logits.shape();
  reduced.erase(reduced.begin() + *ax);
  if (!ops::try_broadcast_shapes(shape, reduced).ok() ||
      *ops::try_broadcast_shapes(shape, reduced) != shape)
    return fail(
        ErrorKind::shape_mismatch,
        "the requested shape does not broadcast with the reduced logits shape",
        "categorical", loc);
  return categorical_impl(logits, *ax, shape, key, s, loc);
}

}  // namespace nuvec::random
