// Creating arrays: from literals and data, and the constant families.
#pragma once

#include <exception>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <type_traits>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/kernels/cast.h"
#include "nuvec/ops/elementwise.h"

namespace nuvec {

/// One element of an array literal. Literal lists take MLX's element types:
/// all bool gives bool, any floating element float32, otherwise int32
/// (int64 when a value does not fit).
struct Literal {
  enum class Kind { boolean, integer, floating };
  Kind kind;
  int64_t i = 0;
  double f = 0;
  Literal(bool v) : kind(Kind::boolean), i(v) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> &&
                                          !std::is_same_v<T, bool>, int> = 0>
  Literal(T v) : kind(Kind::integer), i(static_cast<int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Literal(T v) : kind(Kind::floating), f(static_cast<double>(v)) {}
};

template <class T>
using List = std::initializer_list<T>;

namespace detail {
Array array_from_literals(const std::vector<Literal>& values, Shape shape,
                          Location loc);
Array array_from_bytes(const void* data, Shape shape, DType dtype);
/// Flattens nested lists, failing (a failed array) on ragged input.
template <class T>
void flatten_into(const T& v, std::vector<Literal>& out, Shape& shape,
                  size_t depth, bool& ragged) {
  if constexpr (std::is_same_v<T, Literal> || std::is_arithmetic_v<T>) {
    out.push_back(Literal(v));
  } else {
    if (shape.size() <= depth) {
      shape.push_back(static_cast<int>(v.size()));
    } else if (shape[depth] != static_cast<int>(v.size())) {
      ragged = true;
    }
    for (const auto& e : v) flatten_into(e, out, shape, depth + 1, ragged);
  }
}
template <class L>
Array array_from_nested(const L& list, Location loc) {
  std::vector<Literal> values;
  Shape shape;
  bool ragged = false;
  flatten_into(list, values, shape, 0, ragged);
  if (ragged) return array_from_literals({}, {-1}, loc);
  return array_from_literals(values, shape, loc);
}
}  // namespace detail

namespace detail {
/// The dtype of a C++ element type in an array literal or scalar, as MLX's
/// TypeToDtype: double gives float32 (the spec's rule for literals).
template <class T>
constexpr DType literal_dtype() {
  if constexpr (std::is_same_v<T, double>) return float32;
  else if constexpr (std::is_same_v<T, long long>) return int64;
  else if constexpr (std::is_same_v<T, unsigned long long>) return uint64;
  else if constexpr (std::is_same_v<T, char>) return std::is_signed_v<char> ? int8 : uint8;
  else return dtype_v<T>;
}
/// The C++ types an array can be made from.
template <class T>
inline constexpr bool is_element_v =
    (std::is_arithmetic_v<T> && !std::is_same_v<T, long double>) ||
    std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t> ||
    std::is_same_v<T, complex64_t>;
/// A failed array when `shape` cannot hold `n` values (a negative
/// dimension, a size other than n when n is given, or a size past the
/// supported range).
std::optional<Array> data_shape_error(std::optional<int64_t> n, const Shape& shape,
                                      Location loc);
/// A failed array (out_of_memory) when a host staging vector of `n` items
/// of `itemsize` bytes exceeds the memory limit (n < 0: its allocation
/// failed), else nullopt.
std::optional<Array> staging_error(int64_t n, size_t itemsize, Location loc);
/// Sizes a host staging vector to `n` items, or gives staging_error's
/// failed array (ops never throw std::bad_alloc).
template <class V>
std::optional<Array> size_staging(V& v, int64_t n, Location loc) {
  using E = typename V::value_type;
  if (auto bad = staging_error(n, sizeof(E), loc)) return bad;
  try {
    v.reserve(static_cast<size_t>(n));
  } catch (const std::exception&) {  // std::bad_alloc, std::length_error
    return staging_error(-1, sizeof(E), loc);
  }
  return std::nullopt;
}
/// An array of dtype `to` from `n` values of type T, each converted as
/// astype converts (kernels/cast.h).
template <class T>
Array array_from_values(const T* v, int64_t n, Shape shape, DType to, Location loc) {
  if (auto bad = data_shape_error(n, shape, loc)) return *bad;
  return dispatch_dtype(to, [&](auto tag) {
    using U = typename decltype(tag)::type;
    using S = std::conditional_t<std::is_same_v<U, bool>, uint8_t, U>;
    std::vector<S> buf;
    if (auto bad = size_staging(buf, n, loc)) return *bad;
    for (int64_t i = 0; i < n; ++i) buf.push_back(S(kernels::Cast<U>{}(v[i])));
    return array_from_bytes(buf.data(), std::move(shape), to);
  });
}
// Bools are held as bytes (std::vector<bool> has no data()).
template <class T>
using held_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
template <class T, class L>
void flatten_typed(const L& v, std::vector<held_t<T>>& out, Shape& shape, size_t depth,
                   bool& ragged) {
  if constexpr (std::is_same_v<L, T>) {
    out.push_back(held_t<T>(v));
  } else {
    if (shape.size() <= depth) {
      shape.push_back(static_cast<int>(v.size()));
    } else if (shape[depth] != static_cast<int>(v.size())) {
      ragged = true;
    }
    for (const auto& e : v) flatten_typed<T>(e, out, shape, depth + 1, ragged);
  }
}
/// A nested list of one C++ type T: that type's dtype, or `to`.
template <class T, class L>
Array array_from_typed(const L& list, std::optional<DType> to, Location loc) {
  std::vector<held_t<T>> values;
  Shape shape;
  bool ragged = false;
  flatten_typed<T>(list, values, shape, 0, ragged);
  if (ragged) return array_from_literals({}, {-1}, loc);
  return array_from_values(values.data(), static_cast<int64_t>(values.size()),
                           std::move(shape), to.value_or(literal_dtype<T>()), loc);
}
}  // namespace detail

/// A 0-d array: float and double give float32, int int32, bool bool, and
/// the other element types their own dtype (as MLX's array(value)).
template <class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array array(T value) {
  return detail::array_from_values(&value, 1, {}, detail::literal_dtype<T>(),
                                   NUVEC_LOC);
}
/// A 0-d array of `dtype` holding `value` converted (MLX's array(val, dtype)).
template <class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array array(T value, DType dtype) {
  return detail::array_from_values(&value, 1, {}, dtype, NUVEC_LOC);
}

/// Arrays from nested literal lists, up to 4-D: `array({{0.0, 1.0}, {2.0,
/// 3.0}})`. A list of one C++ type gets that type's dtype (int int32,
/// unsigned uint32, int64_t int64, uint64_t uint64, float and double float32,
/// bool bool, float16_t ...); a mixed list takes MLX's element types: all
/// bool gives bool, any floating element float32, otherwise int32 (int64
/// when a value does not fit). `array({})` is an empty float32 array.
/// Ragged lists give a failed array.
inline Array array(List<Literal> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
// The nested forms are templates without deducible parameters, so that
// `array({})` picks the 1-D form above (a non-template wins a tie).
template <int&... Barrier>
Array array(List<List<Literal>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
template <int&... Barrier>
Array array(List<List<List<Literal>>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
template <int&... Barrier>
Array array(List<List<List<List<Literal>>>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
// Lists of one element type deduce it, which also resolves lists of
// one-element lists (`array({{10}, {20}})`); the barrier keeps
// `array<T>(...)` for the explicitly typed forms below.
template <int&... Barrier, class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array array(List<T> v, Location loc = NUVEC_LOC) {
  return detail::array_from_typed<T>(v, std::nullopt, loc);
}
template <int&... Barrier, class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array array(List<List<T>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_typed<T>(v, std::nullopt, loc);
}
template <int&... Barrier, class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array array(List<List<List<T>>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_typed<T>(v, std::nullopt, loc);
}
template <int&... Barrier, class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array array(List<List<List<List<T>>>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_typed<T>(v, std::nullopt, loc);
}
/// A 1-D list converted to `dtype`: `array({1, 2, 300}, uint8)` (as MLX).
template <int&... Barrier, class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array array(List<T> v, DType dtype, Location loc = NUVEC_LOC) {
  return detail::array_from_typed<T>(v, dtype, loc);
}
inline Array array(List<Literal> v, DType dtype, Location loc = NUVEC_LOC) {
  return ops::astype(detail::array_from_nested(v, loc), dtype, {}, loc);
}
/// A literal list with a shape of the same size: `array({10, 20}, {2, 1})`,
/// optionally converted to `dtype` (MLX's array(data, shape, dtype)).
inline Array array(List<Literal> v, Shape shape, Location loc = NUVEC_LOC) {
  return detail::array_from_literals(std::vector<Literal>(v), std::move(shape), loc);
}
template <int&... Barrier, class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array array(List<T> v, Shape shape, Location loc = NUVEC_LOC) {
  std::vector<detail::held_t<T>> held(v.begin(), v.end());
  return detail::array_from_values(held.data(), static_cast<int64_t>(held.size()),
                                   std::move(shape), detail::literal_dtype<T>(), loc);
}
template <int&... Barrier, class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array array(List<T> v, Shape shape, DType dtype, Location loc = NUVEC_LOC) {
  std::vector<detail::held_t<T>> held(v.begin(), v.end());
  return detail::array_from_values(held.data(), static_cast<int64_t>(held.size()),
                                   std::move(shape), dtype, loc);
}

/// Typed data: `array(std::vector<float>{...}, {2, 3})`, optionally
/// converted to `dtype`. A shape of another size gives a failed array.
template <class T>
Array array(const std::vector<T>& data, Shape shape) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(data.begin(), data.end());
    return detail::array_from_values(bytes.data(), static_cast<int64_t>(bytes.size()),
                                     std::move(shape), bool_, NUVEC_LOC);
  } else {
    return detail::array_from_values(data.data(), static_cast<int64_t>(data.size()),
                                     std::move(shape), dtype_v<T>, NUVEC_LOC);
  }
}
template <class T>
Array array(const std::vector<T>& data, Shape shape, DType dtype) {
  if constexpr (std::is_same_v<T, bool>) {
    return ops::astype(array(data, std::move(shape)), dtype);
  } else {
    return detail::array_from_values(data.data(), static_cast<int64_t>(data.size()),
                                     std::move(shape), dtype, NUVEC_LOC);
  }
}

/// Explicitly typed data: `array<uint8_t>({1, 2, 3})`, `array<double>({1,
/// 2}, {2, 1})`, `array<double>(ptr, {2, 3})` (the shape's size elements
/// are read from ptr), `array(ptr, shape, dtype)` converting to `dtype`.
template <class T>
Array array(List<std::type_identity_t<T>> v, Shape shape) {
  std::vector<T> copy(v);
  return array<T>(copy, std::move(shape));
}
template <class T>
Array array(List<std::type_identity_t<T>> v) {
  return array<T>(v, Shape{static_cast<int>(v.size())});
}
template <class T>
Array array(const T* data, Shape shape) {
  if (auto bad = detail::data_shape_error(std::nullopt, shape, NUVEC_LOC)) return *bad;
  return detail::array_from_bytes(data, std::move(shape), dtype_v<T>);
}
/// MLX's iterator form: the shape's size elements from `data` on, converted
/// to `dtype` (default: the value type's).
template <class It>
  requires(std::input_iterator<It> && !std::is_pointer_v<It> &&
           detail::is_element_v<std::iter_value_t<It>>)
Array array(It data, Shape shape,
            DType dtype = detail::literal_dtype<std::iter_value_t<It>>()) {
  if (auto bad = detail::data_shape_error(std::nullopt, shape, NUVEC_LOC)) return *bad;
  using T = std::iter_value_t<It>;
  std::vector<detail::held_t<T>> values;
  int64_t n = shape_size(shape);
  if (auto bad = detail::size_staging(values, n, NUVEC_LOC)) return *bad;
  for (int64_t i = 0; i < n; ++i, ++data) values.push_back(detail::held_t<T>(*data));
  return detail::array_from_values(values.data(), n, std::move(shape), dtype, NUVEC_LOC);
}
template <class T>
Array array(const T* data, Shape shape, DType dtype) {
  if (auto bad = detail::data_shape_error(std::nullopt, shape, NUVEC_LOC)) return *bad;
  int64_t n = shape_size(shape);  // before the shape is moved from
  return detail::array_from_values(data, n, std::move(shape), dtype, NUVEC_LOC);
}

}  // namespace nuvec

namespace nuvec::inline ops {

/// An array of `shape` filled with `value` (converted to `dtype`, or the
/// value's own dtype when omitted: `full({2}, 1)` is int32, `full({2},
/// true)` bool, `full({2}, 1.5)` float32, as MLX). Lazy: a broadcast view of
/// one value.
Array full(const Shape& shape, const Array& value, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
Array full(const Shape& shape, const Array& value, DType dtype,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);
template <class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array full(const Shape& shape, T value, DType dtype, StreamOrDevice s = {},
           Location loc = NUVEC_LOC) {
  return full(shape, array(value, dtype), s, loc);
}
template <class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array full(const Shape& shape, T value, StreamOrDevice s = {},
           Location loc = NUVEC_LOC) {
  return full(shape, array(value), s, loc);
}
Array zeros(const Shape& shape, DType dtype = float32, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);
Array ones(const Shape& shape, DType dtype = float32, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// zeros, ones or `value` with x's shape and x's dtype (or `dtype`).
Array zeros_like(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array zeros_like(const Array& x, DType dtype, StreamOrDevice s = {},
                 Location loc = NUVEC_LOC);
Array ones_like(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array ones_like(const Array& x, DType dtype, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
Array full_like(const Array& x, const Array& value, DType dtype,
                StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array full_like(const Array& x, const Array& value, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
template <class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array full_like(const Array& x, T value, DType dtype, StreamOrDevice s = {},
                Location loc = NUVEC_LOC) {
  return full_like(x, array(value, dtype), dtype, s, loc);
}
template <class T, std::enable_if_t<detail::is_element_v<T>, int> = 0>
Array full_like(const Array& x, T value, StreamOrDevice s = {},
                Location loc = NUVEC_LOC) {
  return full_like(x, array(value), s, loc);
}

/// start, start + step, ... below stop (above it for negative steps), as
/// MLX's overload set: floating arguments give float32 (`arange(10.5)`,
/// `arange(1.0, 4.0)`), int arguments int32, and an explicit dtype wins.
/// A range past the int range or a dtype that cannot hold its values fails.
Array arange(double start, double stop, double step, DType dtype,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array arange(double start, double stop, double step, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array arange(double start, double stop, DType dtype, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array arange(double start, double stop, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array arange(double stop, DType dtype, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array arange(double stop, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array arange(int start, int stop, int step, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array arange(int start, int stop, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array arange(int stop, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// `num` evenly spaced values from start to stop inclusive.
Array linspace(double start, double stop, int num = 50, DType dtype = float32,
               StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// n x m with ones on diagonal k (MLX's forms; n and m must not be
/// negative).
Array eye(int n, int m, int k, DType dtype, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array eye(int n, DType dtype, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array eye(int n, int m, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array eye(int n, int m, int k, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array eye(int n, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array identity(int n, DType dtype = float32, StreamOrDevice s = {},
               Location loc = NUVEC_LOC);
/// `num` evenly spaced values from start to stop, inclusive or (without
/// `endpoint`) not.
Array linspace(double start, double stop, int num, bool endpoint, DType dtype = float32,
               StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::ops

namespace nuvec {
using ops::arange;
using ops::eye;
using ops::full;
using ops::full_like;
using ops::identity;
using ops::linspace;
using ops::ones;
using ops::ones_like;
using ops::zeros;
using ops::zeros_like;
}  // namespace nuvec
