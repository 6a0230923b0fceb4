// Distributions built from random bits with MLX 0.32's formulas, so that
// the same key gives MLX's values (docs/random.md: where the C library's
// log/log1p leave a last-bit difference). Every check runs before the key
// is taken, so a call that fails does not advance the thread's sequence.
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "nuvec/nuvec.h"
#include "ops/builder.h"
#include "random/internal.h"

namespace nuvec::random {

using ops::impl::fail;

namespace {

bool is_real_floating(DType d) {
  return d == float16 || d == bfloat16 || d == float32 || d == float64;
}

// The largest value below 1 of a half type, as float32 (1.0's bits minus
// one): float16 1 - 2^-11, bfloat16 1 - 2^-8.
float below_one(DType d) {
  return d == float32   ? std::nextafter(1.0f, 0.0f)
         : d == float16 ? 1.0f - 0x1p-11f
                        : 1.0f - 0x1p-8f;
}

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// Whether `shape` is what broadcasting `shape` with `other` gives.
bool broadcasts_into(const Shape& shape, const Shape& other) {
  auto b = ops::try_broadcast_shapes(shape, other);
  return b.ok() && *b == shape;
}

// The checks of MLX's uniform on bounds already in `dtype`: their broadcast
// shape must broadcast into `shape`, and `dtype` must not be float64 (MLX
// has no upper bound below 1 for it). A failed array, or nothing.
std::optional<Array> check_bounds(const char* op, DType dtype, const Array& lo,
                                  const Array& hi, const Shape& shape,
                                  Location loc) {
  if (lo.is_failed()) return lo;
  if (hi.is_failed()) return hi;
  auto b = ops::try_broadcast_shapes(lo.shape(), hi.shape());
  if (!b.ok() || !broadcasts_into(shape, *b))
    return fail(ErrorKind::shape_mismatch,
                "cannot generate random values of shape " + shape_text(shape) +
                    " from the shape of the bounds",
                op, loc);
  if (dtype == float64)
    return fail(ErrorKind::unsupported_dtype,
                "float64 is not supported (as MLX)", op, loc);
  return std::nullopt;
}

// lo + (hi - lo) * u, u the unit uniform of `dtype`; lo and hi in `dtype`,
// checked by the caller.
Array uniform_impl(const Array& lo, const Array& hi, const Shape& shape,
                   DType dtype, const Key& key, const StreamOrDevice& s,
                   Location loc) {
  Array range = ops::subtract(hi, lo, s, loc);
  Array u = unit_uniform(shape, dtype, below_one(dtype), key, s, loc);
  return ops::add(ops::multiply(range, u, s, loc), lo, s, loc);
}

// uniform in [nextafter(-1, 0), 1) in float32: what normal and laplace draw.
Array symmetric_unit(const Shape& shape, const Key& key,
                     const StreamOrDevice& s, Location loc) {
  return uniform_impl(array(std::nextafter(-1.0f, 0.0f)), array(1.0f), shape,
                      float32, key, s, loc);
}

}  // namespace

Array uniform(const Array& low, const Array& high, const Shape& shape,
              DType dtype, const Key& key, StreamOrDevice s, Location loc) {
  if (low.is_failed()) return low;
  if (high.is_failed()) return high;
  if (!is_real_floating(dtype))
    return fail(
        ErrorKind::unsupported_dtype,
        "can only generate uniform numbers with a real floating point type",
        "uniform", loc);
  Array lo = ops::astype(low, dtype, s, loc);
  Array hi = ops::astype(high, dtype, s, loc);
  if (auto bad = check_bounds("uniform", dtype, lo, hi, shape, loc))
    return *bad;
  return uniform_impl(lo, hi, shape, dtype, key, s, loc);
}

Array detail::uniform_unit(const Shape& shape, DType dtype, const Key& key,
                           StreamOrDevice s, Location loc) {
  if (!is_real_floating(dtype) || dtype == float64)
    return uniform(array(0.0), array(1.0), shape, dtype, key, s,
                   loc);  // the error
  // MLX then computes (1 - 0) * u + 0, which is u bit for bit (u in [0, 1)):
  // two passes fewer.
  return unit_uniform(shape, dtype, below_one(dtype), key, s, loc);
}

Array uniform(const Shape& shape, const Key& key, StreamOrDevice s,
              Location loc) {
  return detail::uniform_unit(shape, float32, key, s, loc);
}

Array normal(const Shape& shape, DType dtype, const std::optional<Array>& mean,
             const std::optional<Array>& scale, const Key& key,
             StreamOrDevice s, Location loc) {
  if (mean && mean->is_failed()) return *mean;
  if (scale && scale->is_failed()) return *scale;
  if (dtype != complex64 && !is_real_floating(dtype))
    return fail(ErrorKind::unsupported_dtype,
                "can only generate normal numbers with a floating point type",
                "normal", loc);
  // MLX lets mean and scale broadcast the result beyond `shape`; checked
  // here so that a failure takes no key.
  for (const auto* p : {&mean, &scale})
    if (*p && !ops::try_broadcast_shapes(shape, (*p)->shape()).ok())
      return fail(
          ErrorKind::shape_mismatch,
          "mean and scale must broadcast with the shape " + shape_text(shape),
          "normal", loc);
  if (dtype == complex64) {
    // As MLX: erfinv of uniform pairs, without the sqrt(2) factor; mean
    // and scale keep their dtypes (promotion decides).
    Shape pairs = shape;
    pairs.push_back(2);
    Array u = symmetric_unit(pairs, key, s, loc);
    Array z = ops::squeeze(
        ops::view(detail::mlx_erfinv(u, s, loc), complex64, s, loc), {-1}, s,
        loc);
    if (scale) z = ops::multiply(*scale, z, s, loc);
    if (mean) z = ops::add(*mean, z, s, loc);
    return z;
  }
  Array u = symmetric_unit(shape, key, s, loc);
  Array applied = array(std::sqrt(2.0), dtype);
  if (scale)
    applied =
        ops::multiply(applied, ops::astype(*scale, dtype, s, loc), s, loc);
  Array z = ops::astype(detail::mlx_erfinv(u, s, loc), dtype, s, loc);
  z = ops::multiply(applied, z, s, loc);
  if (mean) z = ops::add(ops::astype(*mean, dtype, s, loc), z, s, loc);
  return z;
}

Array detail::normal_floats(const Shape& shape, DType dtype, float mean,
                            float scale, const Key& key, StreamOrDevice s,
                            Location loc) {
  std::optional<Array> m, sd;
  if (mean != 0) m = array(mean, dtype);
  if (scale != 1) sd = array(scale, dtype);
  return normal(shape, dtype, m, sd, key, s, loc);
}

Array normal(const Shape& shape, float mean, float scale, const Key& key,
             StreamOrDevice s, Location loc) {
  return detail::normal_floats(shape, float32, mean, scale, key, s, loc);
}

Array detail::normal_dtype(const Shape& shape, DType dtype, const Key& key,
                           StreamOrDevice s, Location loc) {
  return normal(shape, dtype, std::nullopt, std::nullopt, key, s, loc);
}

Array normal(const Shape& shape, const Key& key, StreamOrDevice s,
             Location loc) {
  return normal(shape, float32, std::nullopt, std::nullopt, key, s, loc);
}

Array truncated_normal(const Array& lower, const Array& upper,
                       const Shape& shape, DType dtype, const Key& key,
                       StreamOrDevice s, Location loc) {
  if (lower.is_failed()) return lower;
  if (upper.is_failed()) return upper;
  if (!is_real_floating(dtype))
    return fail(ErrorKind::unsupported_dtype,
                "truncated_normal only accepts floating point dtypes",
                "truncated_normal", loc);
  Array sqrt2 = array(std::sqrt(2.0), dtype);
  Array lo = ops::astype(lower, dtype, s, loc);
  Array hi = ops::astype(upper, dtype, s, loc);
  Array a = detail::mlx_erf(ops::divide(lo, sqrt2, s, loc), s, loc);
  Array b = detail::mlx_erf(ops::divide(hi, sqrt2, s, loc), s, loc);
  Array u = uniform(a, b, shape, dtype, key, s, loc);
  if (u.is_failed()) return u;
  Array z = ops::multiply(sqrt2, detail::mlx_erfinv(u, s, loc), s, loc);
  return ops::maximum(ops::minimum(hi, z, s, loc), lo, s, loc);
}

Array detail::truncated_normal_dtype(const Array& lower, const Array& upper,
                                     DType dtype, const Key& key,
                                     StreamOrDevice s, Location loc) {
  if (lower.is_failed()) return lower;
  if (upper.is_failed()) return upper;
  auto bs = ops::try_broadcast_shapes(lower.shape(), upper.shape());
  if (!bs.ok())
    return fail(ErrorKind::shape_mismatch,
                "the bounds do not broadcast together", "truncated_normal",
                loc);
  return truncated_normal(lower, upper, *bs, dtype, key, s, loc);
}

Array bernoulli(const Array& p, const Shape& shape, const Key& key,
                StreamOrDevice s, Location loc) {
  if (p.is_failed()) return p;
  if (!is_real_floating(p.dtype()))
    return fail(ErrorKind::unsupported_dtype,
                "the probability p must be a float type", "bernoulli", loc);
  if (!broadcasts_into(shape, p.shape()))
    return fail(ErrorKind::shape_mismatch,
                "the shape of p is incompatible with " + shape_text(shape),
                "bernoulli", loc);
  // p on the scale [0, the float32 above 2^32 - 1]: p >= 1 gives all true.
  float top =
      std::nextafter(static_cast<float>(std::numeric_limits<uint32_t>::max()),
                     std::numeric_limits<float>::max());
  return ops::less(bits(shape, 4, key, s, loc),
                   ops::multiply(p, array(top), s, loc), s, loc);
}

Array bernoulli(const Array& p, const Key& key, StreamOrDevice s,
                Location loc) {
  if (p.is_failed()) return p;
  return bernoulli(p, p.shape(), key, s, loc);
}

Array bernoulli(const Key& key, StreamOrDevice s, Location loc) {
  return bernoulli(array(0.5f), key, s, loc);
}

Array randint(const Array& low, const Array& high, const Shape& shape,
              DType dtype, const Key& key, StreamOrDevice s, Location loc) {
  if (is_inexact(dtype))
    return fail(ErrorKind::unsupported_dtype,
                "randint only accepts integer dtypes and bool", "randint", loc);
  // As MLX 0.32: floor of a float32 uniform draw, converted, then clipped to
  // [low, high - 1] in the output dtype (high - 1 with an int32 one).
  Array u = uniform(low, high, shape, float32, key, s, loc);
  if (u.is_failed()) return u;
  Array x = ops::astype(ops::floor(u, s, loc), dtype, s, loc);
  Array top = ops::astype(ops::subtract(high, array(1), s, loc), dtype, s, loc);
  return ops::maximum(ops::minimum(x, top, s, loc),
                      ops::astype(low, dtype, s, loc), s, loc);
}

Array gumbel(const Shape& shape, DType dtype, const Key& key, StreamOrDevice s,
             Location loc) {
  Array u = detail::uniform_unit(shape, dtype, key, s, loc);
  if (u.is_failed()) return u;
  Array inner = ops::negative(detail::libm_log(u, s, loc), s, loc);
  return ops::negative(detail::libm_log(inner, s, loc), s, loc);
}

Array detail::laplace_floats(const Shape& shape, DType dtype, float mean,
                             float scale, const Key& key, StreamOrDevice s,
                             Location loc) {
  if (!is_real_floating(dtype))
    return fail(
        ErrorKind::unsupported_dtype,
        "can only generate laplace numbers with a real floating point type",
        "laplace", loc);
  Array u = symmetric_unit(shape, key, s, loc);
  if (u.is_failed()) return u;
  // Inverse CDF. -1 has `dtype`, so the log1p runs in float32 (float32 and
  // the 16-bit floats) or float64 (float64), as MLX's promotion gives.
  Array t = ops::multiply(array(-1.0f, dtype), ops::abs(u, s, loc), s, loc);
  Array x = ops::multiply(ops::sign(u, s, loc), detail::libm_log1p(t, s, loc),
                          s, loc);
  x = ops::astype(x, dtype, s, loc);
  if (scale != 1) x = ops::multiply(array(scale, dtype), x, s, loc);
  if (mean != 0) x = ops::add(array(mean, dtype), x, s, loc);
  return x;
}

Array laplace(const Shape& shape, float mean, float scale, const Key& key,
              StreamOrDevice s, Location loc) {
  return detail::laplace_floats(shape, float32, mean, scale, key, s, loc);
}

Array laplace(const Shape& shape, const Key& key, StreamOrDevice s,
              Location loc) {
  return detail::laplace_floats(shape, float32, 0.0f, 1.0f, key, s, loc);
}

}  // namespace nuvec::random
