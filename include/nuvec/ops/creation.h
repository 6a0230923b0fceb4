// Creating arrays: from literals and data, and the constant families.
#pragma once

#include <initializer_list>
#include <type_traits>
#include <vector>

#include "nuvec/core/array.h"

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

/// A 0-d array: float and double give float32, int int32, bool bool, and
/// the other integer types their own dtype.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Array array(T value) {
  if constexpr (std::is_same_v<T, double>) {
    float f = static_cast<float>(value);
    return detail::array_from_bytes(&f, {}, float32);
  } else if constexpr (std::is_same_v<T, long long>) {
    auto v = static_cast<int64_t>(value);
    return detail::array_from_bytes(&v, {}, int64);
  } else if constexpr (std::is_same_v<T, unsigned long long>) {
    auto v = static_cast<uint64_t>(value);
    return detail::array_from_bytes(&v, {}, uint64);
  } else {
    return detail::array_from_bytes(&value, {}, dtype_v<T>);
  }
}
template <class T, std::enable_if_t<std::is_same_v<T, complex64_t>, int> = 0>
Array array(T value) {
  return detail::array_from_bytes(&value, {}, complex64);
}

/// Arrays from nested literal lists, up to 4-D: `array({{0.0, 1.0}, {2.0,
/// 3.0}})`. Ragged lists give a failed array.
inline Array array(List<Literal> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
inline Array array(List<List<Literal>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
inline Array array(List<List<List<Literal>>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
inline Array array(List<List<List<List<Literal>>>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
// Lists of one element type deduce it, which resolves lists of one-element
// lists (`array({{10}, {20}})`); the barrier keeps `array<T>(...)` for the
// typed forms below.
template <int&... Barrier, class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Array array(List<T> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
template <int&... Barrier, class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Array array(List<List<T>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
template <int&... Barrier, class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Array array(List<List<List<T>>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
template <int&... Barrier, class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Array array(List<List<List<List<T>>>> v, Location loc = NUVEC_LOC) {
  return detail::array_from_nested(v, loc);
}
/// A literal list with a shape of the same size: `array({10, 20}, {2, 1})`.
inline Array array(List<Literal> v, Shape shape, Location loc = NUVEC_LOC) {
  return detail::array_from_literals(std::vector<Literal>(v), std::move(shape), loc);
}

template <class T>
Array array(const std::vector<T>& data, Shape shape) {
  if (shape_size(shape) != static_cast<int64_t>(data.size()))
    return detail::array_from_literals({}, {-1}, NUVEC_LOC);
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(data.begin(), data.end());
    return detail::array_from_bytes(bytes.data(), std::move(shape), bool_);
  } else {
    return detail::array_from_bytes(data.data(), std::move(shape), dtype_v<T>);
  }
}

/// Typed data: `array<uint8_t>({1, 2, 3})`, `array<double>({1, 2}, {2, 1})`,
/// `array<double>(ptr, {2, 3})`. A shape of another size gives a failed array.
template <class T>
Array array(List<std::type_identity_t<T>> v, Shape shape) {
  if (shape_size(shape) != static_cast<int64_t>(v.size()))
    return detail::array_from_literals({}, {-1}, NUVEC_LOC);
  std::vector<T> copy(v);
  return array<T>(copy, std::move(shape));
}
template <class T>
Array array(List<std::type_identity_t<T>> v) {
  return array<T>(v, Shape{static_cast<int>(v.size())});
}
template <class T>
Array array(const T* data, Shape shape) {
  return detail::array_from_bytes(data, std::move(shape), dtype_v<T>);
}

}  // namespace nuvec

namespace nuvec::ops {

/// An array of `shape` filled with `value` (converted to `dtype`, or the
/// value's own dtype when omitted). Lazy: a broadcast view of one value.
Array full(const Shape& shape, const Array& value, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
Array full(const Shape& shape, const Array& value, DType dtype,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array full(const Shape& shape, double value, DType dtype = float32,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array zeros(const Shape& shape, DType dtype = float32, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);
Array ones(const Shape& shape, DType dtype = float32, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
Array zeros_like(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array ones_like(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array full_like(const Array& x, double value, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
/// start, start + step, ... below stop (above it for negative steps).
Array arange(double start, double stop, double step, DType dtype,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// arange with int32 for integral arguments, float32 otherwise.
Array arange(double start, double stop, double step = 1.0,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array arange(int stop, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array arange(int start, int stop, int step = 1, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
/// `num` evenly spaced values from start to stop inclusive.
Array linspace(double start, double stop, int num = 50, DType dtype = float32,
               StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// n x m with ones on diagonal k.
Array eye(int n, int m = -1, int k = 0, DType dtype = float32,
          StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array identity(int n, DType dtype = float32, StreamOrDevice s = {},
               Location loc = NUVEC_LOC);

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
