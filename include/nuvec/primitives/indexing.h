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
  bool params_equal(const Primitive& o) const override {
    return static_cast<const Take&>(o).axis_ == axis_;
  }
  size_t params_hash() const override { return size_t(axis_); }

 private:
  int axis_;
};

}  // namespace nuvec
