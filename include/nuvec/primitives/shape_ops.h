// Layout primitives. Views share their input's buffer at new strides (known
// when the node is built); Reshape is a view when the strides allow and a
// copy otherwise; Copy always makes a dense copy.
#pragma once

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

class Reshape : public PrimitiveBase<PrimitiveId::Reshape> {
 public:
  explicit Reshape(Shape shape) : shape_(std::move(shape)) {}
  const Shape& shape() const { return shape_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return false; }
  bool params_equal(const Primitive& o) const override {
    return static_cast<const Reshape&>(o).shape_ == shape_;
  }
  size_t params_hash() const override { return params::hash_vector(shape_); }
  void print_params(std::ostream& os) const override { os << shape_; }

 private:
  Shape shape_;
};

/// Strides for viewing (shape, strides) as `new_shape` without a copy, if
/// they exist.
std::optional<Strides> reshape_strides(const Shape& shape,
                                       const Strides& strides,
                                       const Shape& new_shape);

class Transpose : public PrimitiveBase<PrimitiveId::Transpose> {
 public:
  explicit Transpose(std::vector<int> perm) : perm_(std::move(perm)) {}
  const std::vector<int>& perm() const { return perm_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    return static_cast<const Transpose&>(o).perm_ == perm_;
  }
  size_t params_hash() const override { return params::hash_vector(perm_); }

 private:
  std::vector<int> perm_;  // a permutation of the input's axes
};

/// Broadcasts input 0 to `shape` (NumPy's rules), as a view with zero
/// strides. A *relative* broadcast (element-wise operands, made by
/// broadcast_arrays) has the other operands as extra inputs and broadcasts
/// to the common shape of all its inputs: it holds no size, so shapeless
/// compile replays it for any shapes (the extra inputs lend only their
/// shapes).
class Broadcast : public PrimitiveBase<PrimitiveId::Broadcast> {
 public:
  explicit Broadcast(Shape shape, bool relative = false)
      : shape_(std::move(shape)), relative_(relative) {}
  const Shape& shape() const { return shape_; }
  bool relative() const { return relative_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return relative_; }
  bool differentiable_input(int i) const override { return i == 0; }
  bool params_equal(const Primitive& o) const override {
    auto& b = static_cast<const Broadcast&>(o);
    return b.relative_ == relative_ && (relative_ || b.shape_ == shape_);
  }
  size_t params_hash() const override {
    return relative_ ? 0x9e3779b9u : params::hash_vector(shape_);
  }
  void print_params(std::ostream& os) const override { os << shape_; }

 private:
  Shape shape_;
  bool relative_;
};

/// Basic slicing: per axis, `start` and the element count `size` walking by
/// `step` (nonzero, may be negative); already normalised by ops::slice.
class Slice : public PrimitiveBase<PrimitiveId::Slice> {
 public:
  Slice(std::vector<int> start, std::vector<int> size, std::vector<int> step)
      : start_(std::move(start)), size_(std::move(size)), step_(std::move(step)) {}
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return false; }
  bool params_equal(const Primitive& o) const override {
    auto& s = static_cast<const Slice&>(o);
    return s.start_ == start_ && s.size_ == size_ && s.step_ == step_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_vector(start_),
                           params::combine(params::hash_vector(size_),
                                           params::hash_vector(step_)));
  }

 private:
  std::vector<int> start_, size_, step_;
};

/// The identity for values; transforms treat it as a constant.
class StopGradient : public PrimitiveBase<PrimitiveId::StopGradient> {
 public:
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
};

/// An explicit dense copy (kept by graph simplification).
class Copy : public PrimitiveBase<PrimitiveId::Copy> {
 public:
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
};

/// Reinterprets the bytes as another dtype; the last axis scales by the
/// ratio of item sizes.
class BitCast : public PrimitiveBase<PrimitiveId::BitCast> {
 public:
  explicit BitCast(DType dtype) : dtype_(dtype) {}
  DType dtype() const { return dtype_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    return static_cast<const BitCast&>(o).dtype_ == dtype_;
  }
  size_t params_hash() const override { return size_t(dtype_.index()); }

 private:
  DType dtype_;
};

/// Returns its first input unchanged once all inputs are computed (an
/// ordering edge without data).
class Depends : public PrimitiveBase<PrimitiveId::Depends> {
 public:
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
};

}  // namespace nuvec
