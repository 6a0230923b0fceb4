// The quantization primitives (docs/quantization.md): MLX's packed formats
// (affine bits 1-8 except 7 over groups of 32, 64 or 128; mxfp4, nvfp4,
// mxfp8), their (de)quantization, and the products of a packed matrix and
// of gathered matrices (mixture-of-experts layers). The ops
// (nuvec/ops/quantized.h) validate the arguments and name them; the shape
// rules here check them again, since compile replays primitives directly.
#pragma once

#include <cstdint>

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// The quantization formats (MLX's QuantizationMode).
enum class QuantMode : uint8_t { affine, mxfp4, nvfp4, mxfp8 };

/// The name MLX gives a mode ("affine", "mxfp4", "nvfp4", "mxfp8").
const char* quant_mode_name(QuantMode m);

/// A format: group size along the last axis, bits per element and mode.
struct QuantSpec {
  int group_size = 64;
  int bits = 4;
  QuantMode mode = QuantMode::affine;
  bool operator==(const QuantSpec&) const = default;
  size_t hash() const {
    return params::combine(params::combine(size_t(group_size), size_t(bits)), size_t(mode));
  }
  /// Whether there are biases (affine) besides the scales.
  bool has_biases() const { return mode == QuantMode::affine; }
  /// The dtype of the scales: uint8 codes for the floating-point modes
  /// (E8M0 exponents, or FP8 E4M3 for nvfp4), else the given one.
  DType scale_dtype(DType t) const { return has_biases() ? t : uint8; }
  /// uint32 words per row of `cols` elements (cols a multiple of 32).
  int64_t words(int64_t cols) const { return cols * bits / 32; }
};

/// w [..., K] (float32, float16, bfloat16 or float64; K a multiple of the
/// group size, at least 2 dims): outputs w_q uint32 [..., K * bits / 32],
/// scales [..., K / group] (w's dtype, or uint8 codes for the floating
/// modes) and, for affine, biases. MLX's arithmetic bit for bit.
class Quantize : public PrimitiveBase<PrimitiveId::Quantize> {
 public:
  explicit Quantize(QuantSpec q) : q_(q) {}
  const QuantSpec& spec() const { return q_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    return static_cast<const Quantize&>(o).q_ == q_;
  }
  size_t params_hash() const override { return q_.hash(); }
  void print_params(std::ostream& os) const override;

 private:
  QuantSpec q_;
};

/// w_q uint32 [..., W], scales [..., G] and, for affine, biases (scales'
/// shape and dtype): the values [..., W * 32 / bits] in `dtype`. Affine:
/// scale * q + bias rounded to the scales' dtype after each step (MLX's
/// bits), then cast; floating modes: the code's value times the scale.
class Dequantize : public PrimitiveBase<PrimitiveId::Dequantize> {
 public:
  Dequantize(QuantSpec q, DType dtype) : q_(q), dtype_(dtype) {}
  const QuantSpec& spec() const { return q_; }
  DType dtype() const { return dtype_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool differentiable_input(int i) const override { return i > 0 && q_.has_biases(); }
  bool params_equal(const Primitive& o) const override {
    auto& p = static_cast<const Dequantize&>(o);
    return p.q_ == q_ && p.dtype_ == dtype_;
  }
  size_t params_hash() const override { return params::combine(q_.hash(), size_t(dtype_.index())); }
  void print_params(std::ostream& os) const override;

 private:
  QuantSpec q_;
  DType dtype_;
};

/// x [..., M, K] times the packed matrix (w_q [..., N, K * bits / 32] with
/// `transpose`, i.e. x @ W^T, else w_q [..., K, N * bits / 32], x @ W),
/// scales and biases as Dequantize's; batch axes of x and w equal (the op
/// broadcasts), or w 2-D with any x [..., K]. Inputs x, w_q, scales[,
/// biases], all floats of x's dtype. Row independence (docs/quantization.md):
/// up to ROW_INDEPENDENT_ROWS rows per matrix take the matrix-vector path,
/// whose per-row arithmetic does not depend on the row count.
class QuantizedMatmul : public PrimitiveBase<PrimitiveId::QuantizedMatmul> {
 public:
  QuantizedMatmul(QuantSpec q, bool transpose) : q_(q), transpose_(transpose) {}
  const QuantSpec& spec() const { return q_; }
  bool transpose() const { return transpose_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool differentiable_input(int i) const override { return i == 0 || (i >= 2 && q_.has_biases()); }
  bool params_equal(const Primitive& o) const override {
    auto& p = static_cast<const QuantizedMatmul&>(o);
    return p.q_ == q_ && p.transpose_ == transpose_;
  }
  size_t params_hash() const override { return params::combine(q_.hash(), transpose_); }
  void print_params(std::ostream& os) const override;

 private:
  QuantSpec q_;
  bool transpose_;
};

/// a [..A, M, K] and b [..B, K, N] (one floating dtype), lhs and rhs uint32
/// indices of one shape I into the flattened batches of a and b: out
/// I + [M, N], out[i] = a[lhs[i]] @ b[rhs[i]], read in place (no gathered
/// copy). `sorted`: the caller promises runs of equal indices (MLX's
/// sorted_indices; a hint, the result is the same). Indices out of range
/// are clamped.
class GatherMM : public PrimitiveBase<PrimitiveId::GatherMM> {
 public:
  explicit GatherMM(bool sorted) : sorted_(sorted) {}
  bool sorted() const { return sorted_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool differentiable_input(int i) const override { return i < 2; }
  bool params_equal(const Primitive& o) const override {
    return static_cast<const GatherMM&>(o).sorted_ == sorted_;
  }
  size_t params_hash() const override { return sorted_; }
  void print_params(std::ostream& os) const override;

 private:
  bool sorted_;
};

/// x [..X, M, K], the packed matrices w_q [..W, N, K * bits / 32] (with
/// `transpose`; else [..W, K, N * bits / 32]), scales[, biases] [..W, ., G],
/// then lhs and rhs uint32 indices of one shape I into the flattened
/// batches of x and w: out I + [M, N], out[i] = x[lhs[i]] @ W[rhs[i]].
class GatherQMM : public PrimitiveBase<PrimitiveId::GatherQMM> {
 public:
  GatherQMM(QuantSpec q, bool transpose, bool sorted)
      : q_(q), transpose_(transpose), sorted_(sorted) {}
  const QuantSpec& spec() const { return q_; }
  bool transpose() const { return transpose_; }
  bool sorted() const { return sorted_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool differentiable_input(int i) const override { return i == 0; }
  bool params_equal(const Primitive& o) const override {
    auto& p = static_cast<const GatherQMM&>(o);
    return p.q_ == q_ && p.transpose_ == transpose_ && p.sorted_ == sorted_;
  }
  size_t params_hash() const override {
    return params::combine(params::combine(q_.hash(), transpose_), sorted_);
  }
  void print_params(std::ostream& os) const override;

 private:
  QuantSpec q_;
  bool transpose_;
  bool sorted_;
};

}  // namespace nuvec
