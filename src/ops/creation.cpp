#include "nuvec/ops/creation.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "nuvec/core/graph.h"
#include "nuvec/core/memory.h"
#include "nuvec/kernels/cast.h"
#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/shape.h"
#include "nuvec/primitives/linalg.h"
#include "core/checked.h"
#include "ops/builder.h"

namespace nuvec {

namespace detail {

Array array_from_bytes(const void* data, Shape shape, DType dtype) {
  // The one size rule (core/checked.h): the buffer below must hold the
  // shape's bytes without a wrap.
  auto n = checked_size(shape, dtype.size(), "data");
  if (!n) return make_failed(Error(n.error().kind(), n.error().message(), std::string("array")));
  try {
    Array a = make_empty_constant(shape, dtype);
    if (data && a.nbytes() > 0) std::memcpy(a.desc()->data->ptr, data, static_cast<size_t>(a.nbytes()));
    return a;
  } catch (const Error& e) {
    return make_failed(Error(e.kind(), e.message(), std::string("array")));
  }
}

std::optional<Array> data_shape_error(std::optional<int64_t> n, const Shape& shape,
                                      Location loc) {
  // Checked before anything reads `n` values from the caller's pointer, so
  // that a shape whose size wraps (or hides past a 0) never reads.
  auto size = checked_size(shape, 1, "data");
  if (!size)
    return make_failed(Error(size.error().kind(), size.error().message(), std::string("array"), loc));
  if (n && *n != *size)
    return make_failed(Error(ErrorKind::invalid_shape,
                             "shape of size " + std::to_string(*size) + " does not match the " +
                                 std::to_string(*n) + " values",
                             std::string("array"), loc));
  return std::nullopt;
}

std::optional<Array> staging_error(int64_t n, size_t itemsize, Location loc) {
  if (n >= 0) {
    __int128 bytes = static_cast<__int128>(n) * itemsize;
    if (bytes <= static_cast<__int128>(get_memory_limit())) return std::nullopt;
    // Past int64 no array could hold the values either: the size rule's kind.
    return make_failed(Error(bytes > INT64_MAX ? ErrorKind::overflow : ErrorKind::out_of_memory,
                             "a host staging buffer of " + std::to_string(n) + " values (" +
                                 wide_text(bytes) + " bytes) exceeds the memory limit of " +
                                 std::to_string(get_memory_limit()) + " bytes",
                             std::string("array"), loc));
  }
  return make_failed(Error(ErrorKind::out_of_memory,
                           "a host staging buffer of " + std::to_string(itemsize) +
                               "-byte values could not be allocated",
                           std::string("array"), loc));
}

Array array_from_literals(const std::vector<Literal>& values, Shape shape, Location loc) {
  for (int d : shape)
    if (d < 0)
      return make_failed(Error(ErrorKind::invalid_shape,
                               "ragged nested lists or a negative dimension", std::string("array"), loc));
  auto size = checked_size(shape, 1, "data");
  if (!size)
    return make_failed(Error(size.error().kind(), size.error().message(), std::string("array"), loc));
  if (*size != static_cast<int64_t>(values.size()))
    return make_failed(Error(ErrorKind::invalid_shape,
                             "shape does not match the " + std::to_string(values.size()) + " values",
                             std::string("array"), loc));
  bool any_float = false, all_bool = !values.empty(), wide = false;
  for (const auto& v : values) {
    any_float |= v.kind == Literal::Kind::floating;
    all_bool &= v.kind == Literal::Kind::boolean;
    wide |= v.kind == Literal::Kind::integer && v.i != static_cast<int32_t>(v.i);
  }
  DType dt = any_float ? float32 : all_bool ? bool_ : wide ? int64 : int32;
  if (values.empty()) dt = float32;  // MLX: an empty list is float32
  Array out = array_from_bytes(nullptr, shape, dt);
  if (out.is_failed() || values.empty()) return out;
  dispatch_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(out.desc()->data->ptr);
    for (size_t i = 0; i < values.size(); ++i) {
      const Literal& v = values[i];
      if (v.kind == Literal::Kind::floating) p[i] = kernels::Cast<T>{}(static_cast<float>(v.f));
      else p[i] = kernels::Cast<T>{}(static_cast<long long>(v.i));
    }
  });
  return out;
}

}  // namespace detail

inline namespace ops {

using nuvec::ops::impl::build1;
using nuvec::ops::impl::fail;
using nuvec::ops::impl::make;

Array full(const Shape& shape, const Array& value, StreamOrDevice s, Location loc) {
  if (value.is_failed()) return value;
  // The one size rule (core/checked.h), named for this op rather than the
  // broadcast that makes the array.
  auto ok = checked_size(shape, value.itemsize(), "output");
  if (!ok) return fail(ok.error().kind(), ok.error().message(), "full", loc);
  return ops::broadcast_to(value, shape, s, loc);
}
Array full(const Shape& shape, const Array& value, DType dtype, StreamOrDevice s, Location loc) {
  return ops::full(shape, ops::astype(value, dtype, s, loc), s, loc);
}
Array zeros(const Shape& shape, DType dtype, StreamOrDevice s, Location loc) {
  return ops::full(shape, array(0, dtype), s, loc);
}
Array ones(const Shape& shape, DType dtype, StreamOrDevice s, Location loc) {
  return ops::full(shape, array(1, dtype), s, loc);
}
Array zeros_like(const Array& x, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  return ops::zeros(x.shape(), x.dtype(), s, loc);
}
Array zeros_like(const Array& x, DType dtype, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  return ops::zeros(x.shape(), dtype, s, loc);
}
Array ones_like(const Array& x, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  return ops::ones(x.shape(), x.dtype(), s, loc);
}
Array ones_like(const Array& x, DType dtype, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  return ops::ones(x.shape(), dtype, s, loc);
}
Array full_like(const Array& x, const Array& value, DType dtype, StreamOrDevice s,
                Location loc) {
  if (x.is_failed()) return x;
  return ops::full(x.shape(), value, dtype, s, loc);
}
Array full_like(const Array& x, const Array& value, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  return ops::full(x.shape(), value, x.dtype(), s, loc);
}

Array arange(double start, double stop, double step, DType dtype, StreamOrDevice s,
             Location loc) {
  if (step == 0 || std::isnan(start) || std::isnan(stop) || std::isnan(step))
    return fail(ErrorKind::invalid_argument, "step must be nonzero and the bounds finite", "arange", loc);
  if (std::isinf(start) || std::isinf(stop))
    return fail(ErrorKind::invalid_argument, "cannot compute a size from infinite bounds", "arange", loc);
  if (dtype == bool_)
    return fail(ErrorKind::unsupported_dtype, "arange is not defined for bool", "arange", loc);
  double n = std::ceil((stop - start) / step);
  if (n > 2147483647.0)
    return fail(ErrorKind::overflow, "the range has " + std::to_string(static_cast<int64_t>(n)) +
                " elements, more than the int range", "arange", loc);
  int size = n > 0 ? static_cast<int>(n) : 0;
  if (size > 0 && is_integer(dtype)) {
    // MLX steps integers by T(start + step) - T(start) from T(start); the
    // values must fit the dtype (MLX wraps them silently).
    double lo = 0, hi = 0;
    dispatch_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) {
        lo = static_cast<double>(std::numeric_limits<T>::min());
        hi = static_cast<double>(std::numeric_limits<T>::max());
      }
    });
    double first = std::trunc(start), second = std::trunc(start + step);
    double last = first + (second - first) * (size - 1);
    auto fits = [&](double v) { return v >= lo && v <= hi; };
    auto text = [](double v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      return std::string(buf);
    };
    if (!fits(first) || (size > 1 && !fits(second)) || !fits(last))
      return fail(ErrorKind::overflow,
                  "values from " + text(first) + " to " + text(last) + " do not fit " +
                      std::string(dtype_name(dtype)),
                  "arange", loc);
  }
  return build1(make<Arange>(start, step, size, dtype), {}, s, "arange", loc);
}
Array arange(double start, double stop, double step, StreamOrDevice s, Location loc) {
  return arange(start, stop, step, float32, s, loc);
}
Array arange(double start, double stop, DType dtype, StreamOrDevice s, Location loc) {
  return arange(start, stop, 1.0, dtype, s, loc);
}
Array arange(double start, double stop, StreamOrDevice s, Location loc) {
  return arange(start, stop, 1.0, float32, s, loc);
}
Array arange(double stop, DType dtype, StreamOrDevice s, Location loc) {
  return arange(0.0, stop, 1.0, dtype, s, loc);
}
Array arange(double stop, StreamOrDevice s, Location loc) {
  return arange(0.0, stop, 1.0, float32, s, loc);
}
Array arange(int start, int stop, int step, StreamOrDevice s, Location loc) {
  return arange(double(start), double(stop), double(step), int32, s, loc);
}
Array arange(int start, int stop, StreamOrDevice s, Location loc) {
  return arange(double(start), double(stop), 1.0, int32, s, loc);
}
Array arange(int stop, StreamOrDevice s, Location loc) {
  return arange(0.0, double(stop), 1.0, int32, s, loc);
}

Array linspace(double start, double stop, int num, bool endpoint, DType dtype, StreamOrDevice s,
               Location loc) {
  if (num < 0)
    return fail(ErrorKind::invalid_argument, "num must be non-negative, got " + std::to_string(num),
                "linspace", loc);
  if (num == 1) return ops::astype(ops::full({1}, start, float64, s, loc), dtype, s, loc);
  // As MLX: t = i / (num - 1) (i / num without the endpoint), then
  // (1 - t) * start + t * stop, computed in float64 for float64, else
  // float32.
  DType w = dtype == float64 ? float64 : float32;
  double den = endpoint ? double(num - 1) : double(num);
  Array t = ops::divide(ops::arange(0.0, double(num), 1.0, w, s, loc), den, s, loc);
  Array v = ops::add(ops::multiply(ops::subtract(1.0, t, s, loc), start, s, loc),
                     ops::multiply(t, stop, s, loc), s, loc);
  return ops::astype(v, dtype, s, loc);
}
Array linspace(double start, double stop, int num, DType dtype, StreamOrDevice s, Location loc) {
  return ops::linspace(start, stop, num, true, dtype, s, loc);
}

Array eye(int n, int m, int k, DType dtype, StreamOrDevice s, Location loc) {
  if (n < 0 || m < 0)
    return fail(ErrorKind::invalid_argument,
                "n and m must not be negative, got " + std::to_string(n) + " and " +
                    std::to_string(m),
                "eye", loc);
  Array r = ops::reshape(arange(0, n, 1, s, loc), {n, 1}, s, loc);
  Array c = arange(0, m, 1, s, loc);
  return ops::astype(ops::equal(ops::subtract(c, r, s, loc), k, s, loc), dtype, s, loc);
}
Array eye(int n, DType dtype, StreamOrDevice s, Location loc) { return eye(n, n, 0, dtype, s, loc); }
Array eye(int n, int m, StreamOrDevice s, Location loc) { return eye(n, m, 0, float32, s, loc); }
Array eye(int n, int m, int k, StreamOrDevice s, Location loc) {
  return eye(n, m, k, float32, s, loc);
}
Array eye(int n, StreamOrDevice s, Location loc) { return eye(n, n, 0, float32, s, loc); }
Array identity(int n, DType dtype, StreamOrDevice s, Location loc) {
  return eye(n, n, 0, dtype, s, loc);
}

}  // namespace ops
}  // namespace nuvec
