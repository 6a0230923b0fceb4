// Matrix products and array creation primitives.
#pragma once

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// [..., M, K] @ [..., K, N] with equal batch shapes (ops broadcast first).
class Matmul : public PrimitiveBase<PrimitiveId::Matmul> {
 public:
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
};

/// start + i * step for i in [0, size), computed in double and converted.
class Arange : public PrimitiveBase<PrimitiveId::Arange> {
 public:
  Arange(double start, double step, int size, DType dtype)
      : start_(start), step_(step), size_(size), dtype_(dtype) {}
  double start() const { return start_; }
  double step() const { return step_; }
  DType dtype() const { return dtype_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  bool params_equal(const Primitive& o) const override {
    auto& a = static_cast<const Arange&>(o);
    return params::same_bits(a.start_, start_) &&
           params::same_bits(a.step_, step_) && a.size_ == size_ &&
           a.dtype_ == dtype_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_double(start_),
                           params::combine(params::hash_double(step_), size_t(size_)));
  }

 private:
  double start_, step_;
  int size_;
  DType dtype_;
};

}  // namespace nuvec
