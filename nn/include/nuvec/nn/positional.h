// Positional encodings of mlx.nn: RoPE, SinusoidalPositionalEncoding, ALiBi.
#pragma once

#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// Rotary positional encoding of the first `dims` features (fast::rope).
struct RoPE : Module<RoPE> {
  int dims;
  bool traditional;
  float base, scale;
  explicit RoPE(int dims, bool traditional = false, float base = 10000, float scale = 1.0f);
  /// x [..., L, D] with positions offset, offset + 1, ...
  Array operator()(const Array& x, int offset = 0) const;
};
NUVEC_TREE(RoPE, NUVEC_STATIC(dims), NUVEC_STATIC(traditional), NUVEC_STATIC(base), NUVEC_STATIC(scale))

/// sin/cos features of x at geometrically spaced frequencies between
/// min_freq and max_freq (MLX's SinusoidalPositionalEncoding): x [...] to
/// [..., dims]. dims must be positive and even.
struct SinusoidalPositionalEncoding : Module<SinusoidalPositionalEncoding> {
  Array sigmas;  // not a parameter (MLX's private _sigmas)
  double scale;
  bool cos_first;
  explicit SinusoidalPositionalEncoding(int dims, double min_freq = 0.0001, double max_freq = 1,
                                        std::optional<double> scale = {}, bool cos_first = false,
                                        bool full_turns = false);
  Array operator()(const Array& x) const;
};
NUVEC_TREE(SinusoidalPositionalEncoding, NUVEC_STATIC(scale), NUVEC_STATIC(cos_first))

/// Attention with linear biases: adds -slope_h * |i - j| to attention
/// scores [B, H, Lq, Lk] (MLX's ALiBi, slopes per head as MLX's).
struct ALiBi : Module<ALiBi> {
  Array operator()(const Array& attention_scores, int offset = 0, const std::optional<Array>& mask = {}) const;
  static Array create_alibi_matrix(int q_sequence_length, int k_sequence_length, int num_heads, int offset = 0,
                                   DType dtype = float32);
  static Array create_alibi_slope(int num_heads, DType dtype = float32);
};
NUVEC_TREE(ALiBi)

}  // namespace nuvec::nn
