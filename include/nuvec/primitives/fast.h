// The fast primitives (nuvec::fast, <nuvec/fast.h>; docs/fast.md): row-wise
// normalizations, RoPE, softmax and log-sum-exp over the last axis, cross
// entropy and attention. Each has a composite definition written with ops
// (MLX's fallback): transforms without a dedicated rule differentiate and
// vectorize the composite, and a device without a kernel for the call runs
// the composite instead (decided when the op is built, never at evaluation).
#pragma once

#include <optional>

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// Base of the fast primitives: the composite gives the transform rules.
class FastPrimitive : public Primitive {
 public:
  /// The same outputs, written with ops.
  virtual Arrays fallback(const Arrays& inputs) const = 0;
  /// For vmap: the number of leading inputs that are rows (the others are
  /// per-feature parameters). When only those are batched, the batch axis
  /// goes in front and the primitive runs again; 0: vmap the composite.
  virtual int row_inputs() const { return 0; }
  NUVEC_TRANSFORM_RULES
};

template <PrimitiveId Id>
class FastBase : public FastPrimitive {
 public:
  static constexpr PrimitiveId static_id = Id;
  PrimitiveId id() const override { return Id; }
};

/// x [..., N] (a floating dtype) and w [N] or a 0-d 1 (no weight), of x's
/// dtype: x * rsqrt(mean(x^2) + eps) * w, the statistics in float32 (float64
/// for float64), rounded to the dtype before the weight (as MLX).
class RMSNorm : public FastBase<PrimitiveId::RMSNorm> {
 public:
  int row_inputs() const override { return 1; }
  explicit RMSNorm(float eps) : eps_(eps) {}
  float eps() const { return eps_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
  Arrays vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
             const Arrays& outputs) const override;
  bool params_equal(const Primitive& o) const override {
    return params::same_float_bits(static_cast<const RMSNorm&>(o).eps_, eps_);
  }
  size_t params_hash() const override { return params::hash_double(eps_); }

 private:
  float eps_;
};

/// x, w [N] or a 0-d 1, b [N] or a 0-d 0: (x - mean) * rsqrt(var + eps) * w + b.
class LayerNorm : public FastBase<PrimitiveId::LayerNorm> {
 public:
  int row_inputs() const override { return 1; }
  explicit LayerNorm(float eps) : eps_(eps) {}
  float eps() const { return eps_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
  Arrays vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
             const Arrays& outputs) const override;
  bool params_equal(const Primitive& o) const override {
    return params::same_float_bits(static_cast<const LayerNorm&>(o).eps_, eps_);
  }
  size_t params_hash() const override { return params::hash_double(eps_); }

 private:
  float eps_;
};

/// x, residual (x's shape and dtype), w: outputs h = x + residual (in the
/// dtype) and rms_norm(h, w, eps).
class AddRMSNorm : public FastBase<PrimitiveId::AddRMSNorm> {
 public:
  int row_inputs() const override { return 2; }
  explicit AddRMSNorm(float eps) : eps_(eps) {}
  float eps() const { return eps_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
  bool params_equal(const Primitive& o) const override {
    return params::same_float_bits(static_cast<const AddRMSNorm&>(o).eps_, eps_);
  }
  size_t params_hash() const override { return params::hash_double(eps_); }

 private:
  float eps_;
};

/// Rotary embeddings over the first `dims` features of x [B, ..., T, D]:
/// inputs x, offset (int32, 0-d or [B]: the position of row 0 of each
/// batch item) and, when `has_freqs`, freqs [dims / 2] (float32; else
/// inverse frequencies base^(-2i/dims)). `forward` false applies the
/// inverse rotation (the vjp).
class RoPE : public FastBase<PrimitiveId::RoPE> {
 public:
  RoPE(int dims, bool traditional, float base, float scale, bool forward, bool has_freqs)
      : dims_(dims), traditional_(traditional), base_(base), scale_(scale), forward_(forward),
        has_freqs_(has_freqs) {}
  int dims() const { return dims_; }
  bool traditional() const { return traditional_; }
  float base() const { return base_; }
  float scale() const { return scale_; }
  bool forward() const { return forward_; }
  bool has_freqs() const { return has_freqs_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
  Arrays vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
             const Arrays& outputs) const override;
  /// The batch goes after axis 0 (the offsets' axis) when only x is batched.
  std::pair<Arrays, std::vector<int>> vmap(const Arrays& inputs,
                                           const std::vector<int>& axes) const override;
  bool differentiable_input(int i) const override { return i == 0; }
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const RoPE&>(o);
    return r.dims_ == dims_ && r.traditional_ == traditional_ &&
           params::same_float_bits(r.base_, base_) && params::same_float_bits(r.scale_, scale_) &&
           r.forward_ == forward_ && r.has_freqs_ == has_freqs_;
  }
  size_t params_hash() const override {
    return params::combine(size_t(dims_) * 8 + traditional_ * 4 + forward_ * 2 + has_freqs_,
                           params::combine(params::hash_double(base_), params::hash_double(scale_)));
  }
  void print_params(std::ostream& os) const override;

 private:
  int dims_;
  bool traditional_;
  float base_, scale_;
  bool forward_, has_freqs_;
};

/// Softmax over the last axis of a floating x; 16-bit inputs compute in
/// float32 and round once (`precise` is accepted, as MLX's, and changes
/// nothing: the statistics are always float32).
class Softmax : public FastBase<PrimitiveId::Softmax> {
 public:
  int row_inputs() const override { return 1; }
  explicit Softmax(bool precise) : precise_(precise) {}
  bool precise() const { return precise_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
  Arrays vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
             const Arrays& outputs) const override;
  bool params_equal(const Primitive& o) const override {
    return static_cast<const Softmax&>(o).precise_ == precise_;
  }
  size_t params_hash() const override { return precise_; }

 private:
  bool precise_;
};

/// log(sum(exp(x))) over the last axis of a floating x [..., N], kept as
/// [..., 1].
class LogSumExp : public FastBase<PrimitiveId::LogSumExp> {
 public:
  int row_inputs() const override { return 1; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
};

/// Per-row loss of logits [..., C] (floating) against integer targets
/// [...]: logsumexp(row) - (1 - s) * row[t] - s * mean(row) with s the
/// label smoothing; 0 where t equals the ignore index. float32 output.
/// A target outside [0, C) fails the node on the CPU and gives NaN on the
/// GPU (docs/fast.md).
class CrossEntropy : public FastBase<PrimitiveId::CrossEntropy> {
 public:
  int row_inputs() const override { return 2; }
  CrossEntropy(float label_smoothing, std::optional<int> ignore_index)
      : smoothing_(label_smoothing), ignore_(ignore_index) {}
  float label_smoothing() const { return smoothing_; }
  std::optional<int> ignore_index() const { return ignore_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
  Arrays vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
             const Arrays& outputs) const override;
  bool differentiable_input(int i) const override { return i == 0; }
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const CrossEntropy&>(o);
    return params::same_float_bits(r.smoothing_, smoothing_) && r.ignore_ == ignore_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_double(smoothing_), ignore_ ? size_t(*ignore_) : ~size_t(0));
  }

 private:
  float smoothing_;
  std::optional<int> ignore_;
};

/// softmax(scale * q k^T + mask) v with q [B, Hq, Lq, D], k [B, Hkv, Lk, D],
/// v [B, Hkv, Lk, Dv] (Hq a multiple of Hkv), of one floating dtype; then,
/// when given, a mask of [B, Hq, Lq, Lk] (broadcast view; bool keeps, else
/// added) and sinks [Hq] (one extra logit per head). `causal` masks key j
/// for query i when j > i + Lk - Lq.
class Attention : public FastBase<PrimitiveId::Attention> {
 public:
  Attention(float scale, bool causal, bool has_mask, bool has_sinks)
      : scale_(scale), causal_(causal), has_mask_(has_mask), has_sinks_(has_sinks) {}
  float scale() const { return scale_; }
  bool causal() const { return causal_; }
  bool has_mask() const { return has_mask_; }
  bool has_sinks() const { return has_sinks_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
  /// AttentionGrad where it has a kernel (no sinks, gradients of q, k, v
  /// only), else the composite's.
  Arrays vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
             const Arrays& outputs) const override;
  /// The batch merged into B when the sinks are not batched.
  std::pair<Arrays, std::vector<int>> vmap(const Arrays& inputs,
                                           const std::vector<int>& axes) const override;
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const Attention&>(o);
    return params::same_float_bits(r.scale_, scale_) && r.causal_ == causal_ &&
           r.has_mask_ == has_mask_ && r.has_sinks_ == has_sinks_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_double(scale_), causal_ * 4 + has_mask_ * 2 + has_sinks_);
  }
  void print_params(std::ostream& os) const override;

 private:
  float scale_;
  bool causal_, has_mask_, has_sinks_;
};

/// The gradient of CrossEntropy with respect to the logits, in one pass per
/// row: inputs logits [..., C], targets (int32 [...]) and the loss's
/// cotangent g (float32 [...]); output g * (softmax(row) - (1 - s) onehot -
/// s / C) of the logits' dtype (zeros on ignored rows).
class CrossEntropyGrad : public FastBase<PrimitiveId::CrossEntropyGrad> {
 public:
  int row_inputs() const override { return 3; }
  CrossEntropyGrad(float label_smoothing, std::optional<int> ignore_index)
      : smoothing_(label_smoothing), ignore_(ignore_index) {}
  float label_smoothing() const { return smoothing_; }
  std::optional<int> ignore_index() const { return ignore_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
  bool differentiable_input(int i) const override { return i != 1; }
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const CrossEntropyGrad&>(o);
    return params::same_float_bits(r.smoothing_, smoothing_) && r.ignore_ == ignore_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_double(smoothing_), ignore_ ? size_t(*ignore_) : ~size_t(0));
  }

 private:
  float smoothing_;
  std::optional<int> ignore_;
};

/// The gradients of Attention (without sinks) with respect to q, k and v:
/// inputs q, k, v, o (the forward's output), dout (its cotangent), then the
/// mask when `has_mask`; outputs dq, dk, dv of the inputs' shapes (dk and dv
/// summed over the query heads of each key/value head). The row statistics
/// are recomputed (FlashAttention's backward), no float atomics.
class AttentionGrad : public FastBase<PrimitiveId::AttentionGrad> {
 public:
  AttentionGrad(float scale, bool causal, bool has_mask)
      : scale_(scale), causal_(causal), has_mask_(has_mask) {}
  float scale() const { return scale_; }
  bool causal() const { return causal_; }
  bool has_mask() const { return has_mask_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  Arrays fallback(const Arrays& inputs) const override;
  /// The batch merged into B, as Attention's.
  std::pair<Arrays, std::vector<int>> vmap(const Arrays& inputs,
                                           const std::vector<int>& axes) const override;
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const AttentionGrad&>(o);
    return params::same_float_bits(r.scale_, scale_) && r.causal_ == causal_ &&
           r.has_mask_ == has_mask_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_double(scale_), causal_ * 2 + has_mask_);
  }

 private:
  float scale_;
  bool causal_, has_mask_;
};

}  // namespace nuvec
