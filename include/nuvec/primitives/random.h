// Random bits: the one random primitive. Every distribution is built from it
// with ordinary ops, so transforms and compile see random draws as nodes.
#pragma once

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// Random bits from Threefry-2x32 keys. Input: uint32 keys of shape
/// (..., 2); output: shape (..., shape...) of uint8, uint16 or uint32 for
/// width 1, 2 or 4 bytes. Each key fills its own block of the output with
/// MLX's counter layout (see backend/cpu/random.cpp).
class RandomBits : public PrimitiveBase<PrimitiveId::RandomBits> {
 public:
  RandomBits(Shape shape, int width) : shape_(std::move(shape)), width_(width) {}
  const Shape& shape() const { return shape_; }
  int width() const { return width_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return false; }
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const RandomBits&>(o);
    return r.width_ == width_ && r.shape_ == shape_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_vector(shape_), size_t(width_));
  }
  void print_params(std::ostream& os) const override {
    os << shape_ << ", width " << width_;
  }

 private:
  Shape shape_;  // per key
  int width_;    // bytes per element: 1, 2 or 4
};

}  // namespace nuvec
