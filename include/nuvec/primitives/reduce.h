// Reductions, arg-reductions and NumberOf (the element count of axes, so
// that mean and var stay shape-relative for shapeless compile).
#pragma once

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// Reduces the listed axes (sorted, unique, non-negative); the reduced axes
/// keep size 1 (ops squeeze them when keepdims is false).
class Reduce : public PrimitiveBase<PrimitiveId::Reduce> {
 public:
  enum class Type { sum, prod, max, min, all, any };
  Reduce(Type type, std::vector<int> axes) : type_(type), axes_(std::move(axes)) {}
  Type type() const { return type_; }
  const std::vector<int>& axes() const { return axes_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const Reduce&>(o);
    return r.type_ == type_ && r.axes_ == axes_;
  }
  size_t params_hash() const override {
    return params::combine(size_t(type_), params::hash_vector(axes_));
  }
  void print_params(std::ostream& os) const override;

 private:
  Type type_;
  std::vector<int> axes_;
};

/// The output dtype of a reduction: bool for all/any; sum and prod widen
/// bool and the 8- and 16-bit integers to int32 (uint32 for unsigned), as
/// MLX; max and min keep the dtype.
constexpr DType reduce_output_dtype(Reduce::Type t, DType in) {
  using T = Reduce::Type;
  if (t == T::all || t == T::any) return bool_;
  if (t == T::sum || t == T::prod) {
    if (in == bool_ || in == int8 || in == int16) return int32;
    if (in == uint8 || in == uint16) return uint32;
  }
  return in;
}

/// Index of the first maximum or minimum along one axis (kept with size 1);
/// NaN counts as the extreme, as in NumPy. Output uint32.
class ArgReduce : public PrimitiveBase<PrimitiveId::ArgReduce> {
 public:
  enum class Type { argmax, argmin };
  ArgReduce(Type type, int axis) : type_(type), axis_(axis) {}
  Type type() const { return type_; }
  int axis() const { return axis_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const ArgReduce&>(o);
    return r.type_ == type_ && r.axis_ == axis_;
  }
  size_t params_hash() const override {
    return params::combine(size_t(type_), size_t(axis_));
  }

 private:
  Type type_;
  int axis_;
};

/// A 0-d array of `dtype` holding the product of the input's sizes along
/// `axes` (the input's values are not read).
class NumberOf : public PrimitiveBase<PrimitiveId::NumberOf> {
 public:
  NumberOf(std::vector<int> axes, DType dtype) : axes_(std::move(axes)), dtype_(dtype) {}
  const std::vector<int>& axes() const { return axes_; }
  DType dtype() const { return dtype_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const NumberOf&>(o);
    return r.axes_ == axes_ && r.dtype_ == dtype_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_vector(axes_), size_t(dtype_.index()));
  }

 private:
  std::vector<int> axes_;
  DType dtype_;
};

}  // namespace nuvec
