// categorical (Gumbel-max over an axis) and laplace, with MLX's formulas.
#include <cmath>
#include <string>

#include "nuvec/nuvec.h"
#include "ops/builder.h"

namespace nuvec::random {

using ops::detail::fail;

namespace {

// argmax over `axis` of logits plus Gumbel noise of `shape` with the axis
// inserted at its place among the sample axes.
Array categorical_impl(const Array& logits, int axis, const Shape& shape, const Key& key,
                       const StreamOrDevice& s, Location loc) {
  Shape noise_shape = shape;
  int at = axis + static_cast<int>(shape.size()) - logits.ndim() + 1;
  noise_shape.insert(noise_shape.begin() + at, logits.shape(axis));
  Array g = gumbel(noise_shape, float32, key, s, loc);
  return ops::argmax(ops::add(g, logits, s, loc), at, false, s, loc);
}

// One distribution (every other axis of size 1) with num_samples, as MLX
// 0.32: the number of entries of cumsum(softmax(logits)) at or below each
// uniform draw (clamped to the last category if rounding leaves the total
// below the draw).
Array inverse_cdf(const Array& logits, int axis, const Shape& shape, const Key& key,
                  const StreamOrDevice& s, Location loc) {
  int n = logits.shape(axis);
  int samples = shape.back();
  Array cdf = ops::cumsum(ops::reshape(ops::softmax(logits, {axis}, s, loc), {1, n}, s, loc), 1,
                          {}, s, loc);
  Array u = ops::reshape(uniform({samples}, float32, key, s, loc), {samples, 1}, s, loc);
  Array count = ops::sum(ops::less_equal(cdf, u, s, loc), {1}, false, s, loc);
  return ops::reshape(ops::astype(ops::minimum(count, n - 1, s, loc), uint32, s, loc), shape, s,
                      loc);
}

std::optional<int> valid_axis(const Array& logits, int axis) {
  return ops::detail::normalize_axis(axis, logits.ndim());
}

Array bad_axis(const Array& logits, int axis, Location loc) {
  return fail(ErrorKind::invalid_axis,
              "invalid axis " + std::to_string(axis) + " for logits with " +
                  std::to_string(logits.ndim()) + " dimensions",
              "categorical", loc);
}

}  // namespace

Array categorical(const Array& logits, int axis, const Key& key, StreamOrDevice s,
                  Location loc) {
  if (logits.is_failed()) return logits;
  auto ax = valid_axis(logits, axis);
  if (!ax) return bad_axis(logits, axis, loc);
  Shape shape = logits.shape();
  shape.erase(shape.begin() + *ax);
  return categorical_impl(logits, *ax, shape, key, s, loc);
}

Array categorical(const Array& logits, int axis, int num_samples, const Key& key,
                  StreamOrDevice s, Location loc) {
  if (logits.is_failed()) return logits;
  auto ax = valid_axis(logits, axis);
  if (!ax) return bad_axis(logits, axis, loc);
  if (num_samples < 0)
    return fail(ErrorKind::invalid_argument, "num_samples must be non-negative", "categorical",
                loc);
  Array l = ops::expand_dims(logits, {-1}, s, loc);
  Shape shape = l.shape();
  shape.erase(shape.begin() + *ax);
  shape.back() = num_samples;
  if (logits.size() == logits.shape(*ax) && logits.size() > 0)
    return inverse_cdf(logits, *ax, shape, key, s, loc);
  return categorical_impl(l, *ax, shape, key, s, loc);
}

Array categorical(const Array& logits, int axis, const Shape& shape, const Key& key,
                  StreamOrDevice s, Location loc) {
  if (logits.is_failed()) return logits;
  auto ax = valid_axis(logits, axis);
  if (!ax) return bad_axis(logits, axis, loc);
  Shape reduced = logits.shape();
  reduced.erase(reduced.begin() + *ax);
  auto b = ops::broadcast_shapes(shape, reduced);
  if (!b.ok() || *b != shape)
    return fail(ErrorKind::shape_mismatch,
                "the requested shape does not broadcast with the reduced logits shape",
                "categorical", loc);
  return categorical_impl(logits, *ax, shape, key, s, loc);
}

Array laplace(const Shape& shape, DType dtype, double mean, double scale, const Key& key,
              StreamOrDevice s, Location loc) {
  if (dtype != float16 && dtype != bfloat16 && dtype != float32 && dtype != float64)
    return fail(ErrorKind::unsupported_dtype,
                "can only generate laplace numbers with a real floating point type", "laplace",
                loc);
  // MLX takes loc and scale as float.
  float mu = static_cast<float>(mean), b = static_cast<float>(scale);
  Array u = uniform(std::nextafter(-1.0f, 0.0f), 1.0f, shape, float32, key, s, loc);
  // Inverse CDF; -1 has `dtype`, so float64 computes the log1p in float64.
  Array minus_one = ops::astype(array(-1.0f), dtype, s, loc);
  Array x = ops::multiply(ops::sign(u, s, loc),
                          ops::log1p(ops::multiply(minus_one, ops::abs(u, s, loc), s, loc), s, loc),
                          s, loc);
  x = ops::astype(x, dtype, s, loc);
  if (b != 1.0f) x = ops::multiply(ops::astype(array(b), dtype, s, loc), x, s, loc);
  if (mu != 0.0f) x = ops::add(ops::astype(array(mu), dtype, s, loc), x, s, loc);
  return x;
}

}  // namespace nuvec::random
