// Random bits: the one random primitive. Every distribution is built from it
// with ordinary ops, so transforms and compile see random draws as nodes.
#pragma once

#include <cstdint>
#include <optional>

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// Random bits from Threefry-2x32 keys. Input: uint32 keys of shape
/// (..., 2); output: shape (..., shape...) of uint8, uint16 or uint32 for
/// width 1, 2 or 4 bytes. Each key fills its own block of the output with
/// MLX's counter layout (see backend/cpu/random.cpp).
///
/// With a unit-uniform epilogue (width 4), each word w is written as
/// astype(minimum(float32(w) / 4294967295, upper), dtype): the values
/// random::uniform computes with ordinary ops, in the same steps (the same
/// functors), so the bits are equal; done in the generating pass it saves
/// three passes over memory.
struct UnitUniform {
  DType dtype;
  float upper;
  bool operator==(const UnitUniform& o) const {
    return dtype == o.dtype && __builtin_bit_cast(uint32_t, upper) == __builtin_bit_cast(uint32_t, o.upper);
  }
};

class RandomBits : public PrimitiveBase<PrimitiveId::RandomBits> {
 public:
  RandomBits(Shape shape, int width, std::optional<UnitUniform> uniform = std::nullopt)
      : shape_(std::move(shape)), width_(width), uniform_(uniform) {}
  const Shape& shape() const { return shape_; }
  int width() const { return width_; }
  const std::optional<UnitUniform>& unit_uniform() const { return uniform_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return false; }
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const RandomBits&>(o);
    return r.width_ == width_ && r.shape_ == shape_ && r.uniform_ == uniform_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_vector(shape_), size_t(width_) + (uniform_ ? 8 : 0));
  }
  void print_params(std::ostream& os) const override {
    os << shape_ << ", width " << width_;
    if (uniform_) os << ", unit uniform " << uniform_->dtype;
  }

 private:
  Shape shape_;  // per key
  int width_;    // bytes per element: 1, 2 or 4
  std::optional<UnitUniform> uniform_;
};

}  // namespace nuvec
