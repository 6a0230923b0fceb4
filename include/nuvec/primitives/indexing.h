// Gather primitives.
#pragma once

#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// Elements of input 0 along `axis` at the integer input 1 (negative
/// indices wrapped once, then clamped into range).
class Take : public PrimitiveBase<PrimitiveId::Take> {
 public:
  explicit Take(int axis) : axis_(axis) {}
  int axis() const { return axis_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    return static_cast<const Take&>(o).axis_ == axis_;
  }
  size_t params_hash() const override { return size_t(axis_); }

 private:
  int axis_;
};

/// Updates a copy of input 0 (flat) at the integer positions of input 1 with
/// the values of input 2 (positions' shape, input 0's dtype), one position
/// after the other in row-major order: repeated positions accumulate, and
/// for `set` the last write wins. Positions are clamped as Take's.
class Scatter : public PrimitiveBase<PrimitiveId::Scatter> {
 public:
  enum class Type { set, add, multiply, maximum, minimum };
  explicit Scatter(Type type) : type_(type) {}
  Type type() const { return type_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    return static_cast<const Scatter&>(o).type_ == type_;
  }
  size_t params_hash() const override { return size_t(type_); }

 private:
  Type type_;
};

}  // namespace nuvec
