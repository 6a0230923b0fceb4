// Shapes, strides and axis lists.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <ostream>
#include <vector>

namespace nuvec {

/// Dimensions of an array (int, as in MLX). Compare with `Shape{3, 2}`.
/// A std::vector<int> in every respect (and converted from one), declared
/// in nuvec so that `std::cout << x.shape()` finds its printer anywhere,
/// as MLX's Shape does.
class Shape : public std::vector<int> {
 public:
  using std::vector<int>::vector;
  Shape() = default;
  Shape(const std::vector<int>& v) : std::vector<int>(v) {}
  Shape(std::vector<int>&& v) : std::vector<int>(std::move(v)) {}
};
/// Element strides (int64, may be 0 for broadcast dimensions or negative).
using Strides = std::vector<int64_t>;

/// The axes argument of reductions and shape operations: one axis
/// (`x.sum(-1)`) or a list (`x.sum({0, 2})`). `{}` is the empty list (no
/// axes, as NumPy's `axis=()`); the methods without an axes argument mean
/// all axes.
class Axes {
 public:
  Axes() = default;
  Axes(int axis) : axes_{axis} {}
  Axes(std::initializer_list<int> axes) : axes_(axes) {}
  Axes(std::vector<int> axes) : axes_(std::move(axes)) {}
  const std::vector<int>& list() const { return axes_; }

 private:
  std::vector<int> axes_;
};

/// Number of elements of a shape (1 for a 0-d shape).
int64_t shape_size(const Shape& shape);
/// Row-major (C order) strides of a shape, in elements.
Strides row_major_strides(const Shape& shape);
std::ostream& operator<<(std::ostream& os, const Shape& shape);

}  // namespace nuvec
