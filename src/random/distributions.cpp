// Distributions built from random bits with MLX's formulas (so the same key
// gives MLX's values; see docs/random.md for where last bits may differ).
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "nuvec/nuvec.h"
#include "ops/builder.h"
#include "random/internal.h"

namespace nuvec::random {

using ops::detail::fail;

namespace {

// An operand as MLX's Python layer makes it: a float scalar is a float32
// 0-d array, an int int32 (int64 beyond), a bool bool.
Array as_array(const Operand& o) {
  if (!o.is_scalar()) return o.array();
  const Scalar& v = o.scalar();
  if (v.kind == Scalar::Kind::floating) return array(static_cast<float>(v.f));
  if (v.kind == Scalar::Kind::boolean) return array(v.i != 0);
  if (v.i >= std::numeric_limits<int32_t>::min() && v.i <= std::numeric_limits<int32_t>::max())
    return array(static_cast<int32_t>(v.i));
  return array(static_cast<long long>(v.i));
}

// A 0-d constant of `dtype` from a double (rounded once).
Array constant(double v, DType dtype, const StreamOrDevice& s, Location loc) {
  if (dtype == float64) return array<double>(std::vector<double>{v}, Shape{});
  return ops::astype(array(static_cast<float>(v)), dtype, s, loc);
}

bool is_real_floating(DType d) {
  return d == float16 || d == bfloat16 || d == float32 || d == float64;
}

// The largest value below 1 of a half type, as float32 (1.0's bits minus
// one): float16 1 - 2^-11, bfloat16 1 - 2^-8.
float below_one(DType d) { return d == float16 ? 1.0f - 0x1p-11f : 1.0f - 0x1p-8f; }

// Whether `shape` is what broadcasting `shape` with `other` gives.
bool broadcasts_into(const Shape& shape, const Shape& other) {
  auto b = ops::broadcast_shapes(shape, other);
  return b.ok() && *b == shape;
}

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// Checks the bounds of uniform and truncated_normal: `dtype` a real float
// other than float64 (as MLX), lo and hi broadcasting into `shape`. Returns
// the failed array, or nothing when all is well.
std::optional<Array> check_bounds(const char* op, const char* dtype_message, DType dtype,
                                  const Array& lo, const Array& hi, const Shape& shape,
                                  Location loc) {
  if (!is_real_floating(dtype)) return fail(ErrorKind::unsupported_dtype, dtype_message, op, loc);
  if (dtype == float64)
    return fail(ErrorKind::unsupported_dtype, "float64 is not supported (as MLX)", op, loc);
  if (lo.is_failed()) return lo;
  if (hi.is_failed()) return hi;
  auto b = ops::broadcast_shapes(lo.shape(), hi.shape());
  if (!b.ok() || !broadcasts_into(shape, *b))
    return fail(ErrorKind::shape_mismatch,
                "cannot generate random values of shape " + shape_text(shape) +
                    " from the shape of the bounds",
                op, loc);
  return std::nullopt;
}

// The uniform draw with its checks done by the caller; lo and hi already
// have `dtype`.
Array uniform_impl(const Array& lo, const Array& hi, const Shape& shape, DType dtype,
                   const Key& key, const StreamOrDevice& s, Location loc) {
  Array range = ops::subtract(hi, lo, s, loc);
  float upper = dtype == float32 ? std::nextafter(1.0f, 0.0f) : below_one(dtype);
  Array u = unit_uniform(shape, dtype, upper, key, s, loc);
  return ops::add(ops::multiply(range, u, s, loc), lo, s, loc);
}

Array first_failed(std::initializer_list<const Array*> xs) {
  for (const Array* x : xs)
    if (x->is_failed()) return *x;
  return Array();
}

}  // namespace

Array uniform(const Operand& low, const Operand& high, const Shape& shape, DType dtype,
              const Key& key, StreamOrDevice s, Location loc) {
  Array lo = ops::astype(as_array(low), dtype, s, loc);
  Array hi = ops::astype(as_array(high), dtype, s, loc);
  if (auto bad = check_bounds("uniform",
                              "can only generate uniform numbers with a real floating point type",
                              dtype, lo, hi, shape, loc))
    return *bad;
  return uniform_impl(lo, hi, shape, dtype, key, s, loc);
}

Array uniform(const Shape& shape, DType dtype, const Key& key, StreamOrDevice s, Location loc) {
  if (!is_real_floating(dtype) || dtype == float64)
    return uniform(0.0, 1.0, shape, dtype, key, s, loc);  // the error
  // MLX then computes (1 - 0) * u + 0, which is u bit for bit (u in [0, 1)):
  // two passes fewer.
  float upper = dtype == float32 ? std::nextafter(1.0f, 0.0f) : below_one(dtype);
  return unit_uniform(shape, dtype, upper, key, s, loc);
}

Array normal(const Shape& shape, DType dtype, const std::optional<Operand>& mean,
             const std::optional<Operand>& scale, const Key& key, StreamOrDevice s,
             Location loc) {
  if (dtype == complex64) {
    // As MLX: erfinv of uniform pairs, without the sqrt(2) factor.
    Shape pairs = shape;
    pairs.push_back(2);
    Array u = uniform_impl(array(std::nextafter(-1.0f, 0.0f)), array(1.0f), pairs, float32, key, s,
                           loc);
    Array z = ops::squeeze(ops::view(ops::erfinv(u, s, loc), complex64, s, loc), {-1}, s, loc);
    if (scale) z = ops::multiply(as_array(*scale), z, s, loc);
    if (mean) z = ops::add(as_array(*mean), z, s, loc);
    return z;
  }
  if (!is_real_floating(dtype))
    return fail(ErrorKind::unsupported_dtype, "can only generate normal numbers with a floating "
                "point type", "normal", loc);
  Array mu = mean ? ops::astype(as_array(*mean), dtype, s, loc) : Array();
  Array sd = scale ? ops::astype(as_array(*scale), dtype, s, loc) : Array();
  if (mean && mu.is_failed()) return mu;
  if (scale && sd.is_failed()) return sd;
  for (const Array* p : {mean ? &mu : nullptr, scale ? &sd : nullptr})
    if (p && !broadcasts_into(shape, p->shape()))
      return fail(ErrorKind::shape_mismatch,
                  "loc and scale must broadcast to the shape " + shape_text(shape), "normal", loc);
  Array u = uniform_impl(array(std::nextafter(-1.0f, 0.0f)), array(1.0f), shape, float32, key, s,
                         loc);
  Array applied = constant(std::sqrt(2.0), dtype, s, loc);
  if (scale) applied = ops::multiply(applied, sd, s, loc);
  Array z = ops::astype(ops::erfinv(u, s, loc), dtype, s, loc);
  z = ops::multiply(applied, z, s, loc);
  if (mean) z = ops::add(mu, z, s, loc);
  return z;
}

Array normal(const Shape& shape, const Key& key, StreamOrDevice s, Location loc) {
  return normal(shape, float32, std::nullopt, std::nullopt, key, s, loc);
}

Array truncated_normal(const Operand& lower, const Operand& upper, const Shape& shape,
                       DType dtype, const Key& key, StreamOrDevice s, Location loc) {
  Array lo = ops::astype(as_array(lower), dtype, s, loc);
  Array hi = ops::astype(as_array(upper), dtype, s, loc);
  if (auto bad = check_bounds("truncated_normal",
                              "truncated_normal only accepts floating point dtypes", dtype, lo,
                              hi, shape, loc))
    return *bad;
  Array sqrt2 = constant(std::sqrt(2.0), dtype, s, loc);
  Array a = ops::erf(ops::divide(lo, sqrt2, s, loc), s, loc);
  Array b = ops::erf(ops::divide(hi, sqrt2, s, loc), s, loc);
  Array u = uniform_impl(a, b, shape, dtype, key, s, loc);
  Array z = ops::multiply(sqrt2, ops::erfinv(u, s, loc), s, loc);
  return ops::maximum(ops::minimum(hi, z, s, loc), lo, s, loc);
}

Array truncated_normal(const Operand& lower, const Operand& upper, DType dtype, const Key& key,
                       StreamOrDevice s, Location loc) {
  Array lo = as_array(lower), hi = as_array(upper);
  if (lo.is_failed() || hi.is_failed()) return first_failed({&lo, &hi});
  auto bs = ops::broadcast_shapes(lo.shape(), hi.shape());
  if (!bs.ok())
    return fail(ErrorKind::shape_mismatch, "the bounds do not broadcast together",
                "truncated_normal", loc);
  return truncated_normal(lo, hi, *bs, dtype, key, s, loc);
}

Array bernoulli(const Operand& p, const Shape& shape, const Key& key, StreamOrDevice s,
                Location loc) {
  Array pa = as_array(p);
  if (pa.is_failed()) return pa;
  if (!is_real_floating(pa.dtype()))
    return fail(ErrorKind::unsupported_dtype, "the probability p must be a float type",
                "bernoulli", loc);
  if (!broadcasts_into(shape, pa.shape()))
    return fail(ErrorKind::shape_mismatch, "the shape of p is incompatible with " +
                shape_text(shape), "bernoulli", loc);
  // p on the scale [0, the float32 above 2^32 - 1]: p >= 1 gives all true.
  float top = std::nextafter(static_cast<float>(std::numeric_limits<uint32_t>::max()),
                             std::numeric_limits<float>::max());
  return ops::less(bits(shape, 4, key, s, loc), ops::multiply(pa, array(top), s, loc), s, loc);
}

Array bernoulli(const Operand& p, const Key& key, StreamOrDevice s, Location loc) {
  Array pa = as_array(p);
  if (pa.is_failed()) return pa;
  return bernoulli(pa, pa.shape(), key, s, loc);
}

Array randint(const Operand& low, const Operand& high, const Shape& shape, DType dtype,
              const Key& key, StreamOrDevice s, Location loc) {
  if (is_inexact(dtype))
    return fail(ErrorKind::unsupported_dtype, "randint only accepts integer dtypes and bool",
                "randint", loc);
  Array lo = as_array(low), hi = as_array(high);
  if (lo.is_failed() || hi.is_failed()) return first_failed({&lo, &hi});
  auto bs = ops::broadcast_shapes(lo.shape(), hi.shape());
  if (!bs.ok() || !broadcasts_into(shape, *bs))
    return fail(ErrorKind::shape_mismatch,
                "cannot generate random values of shape " + shape_text(shape) +
                    " from the shape of the bounds",
                "randint", loc);
  // As MLX 0.32: floor of a float32 uniform draw, converted, then clipped to
  // [low, high - 1] in the output dtype (bounds converted as well).
  Array u = uniform(lo, hi, shape, float32, key, s, loc);
  if (u.is_failed()) return u;
  Array x = ops::astype(ops::floor(u, s, loc), dtype, s, loc);
  Array top = ops::astype(ops::subtract(hi, 1, s, loc), dtype, s, loc);
  return ops::maximum(ops::minimum(x, top, s, loc), ops::astype(lo, dtype, s, loc), s, loc);
}

Array gumbel(const Shape& shape, DType dtype, const Key& key, StreamOrDevice s, Location loc) {
  Array u = uniform(shape, dtype, key, s, loc);
  return ops::negative(ops::log(ops::negative(ops::log(u, s, loc), s, loc), s, loc), s, loc);
}

}  // namespace nuvec::random
