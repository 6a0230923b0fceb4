// The basic layers of mlx.nn: Identity, Linear, Bilinear, Embedding,
// LayerNorm, RMSNorm, Dropout (docs/nn.md). Constructors take MLX's
// arguments in MLX's order with its defaults and draw their initial
// weights as MLX does (the same seed gives MLX's weights bit for bit).
#pragma once

#include <optional>

#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// Returns its input (MLX's Identity).
struct Identity : Module<Identity> {
  Array operator()(const Array& x) const { return x; }
};
NUVEC_TREE(Identity)

/// y = x W^T + b, W of shape [output_dims, input_dims], both drawn from
/// U(-k, k) with k = 1/sqrt(input_dims) (weight first, then bias).
struct Linear : Module<Linear> {
  Param weight;
  std::optional<Param> bias;
  Linear(int input_dims, int output_dims, bool bias = true);
  int input_dims() const { return static_cast<int>(weight.value.shape(1)); }
  int output_dims() const { return static_cast<int>(weight.value.shape(0)); }
  /// x [..., input_dims] (floating) to [..., output_dims]; other shapes
  /// give a failed array naming the layer.
  Array operator()(const Array& x) const;
};
NUVEC_TREE(Linear, weight, bias)

/// y_i = x2^T W_i x1 + b_i, W of shape [output_dims, input2_dims,
/// input1_dims], drawn from U(-k, k) with k = 1/sqrt(input1_dims).
struct Bilinear : Module<Bilinear> {
  Param weight;
  std::optional<Param> bias;
  Bilinear(int input1_dims, int input2_dims, int output_dims, bool bias = true);
  /// x1 [..., input1_dims] and x2 [..., input2_dims] to [..., output_dims].
  Array operator()(const Array& x1, const Array& x2) const;
};
NUVEC_TREE(Bilinear, weight, bias)

/// A table of num_embeddings vectors of `dims`, drawn from N(0, 1/dims).
struct Embedding : Module<Embedding> {
  Param weight;
  Embedding(int num_embeddings, int dims);
  /// The rows of the table at integer indices x: shape x.shape + [dims].
  Array operator()(const Array& x) const;
  /// x @ weight^T: the embedding used as an output head (tied weights).
  Array as_linear(const Array& x) const;
};
NUVEC_TREE(Embedding, weight)

/// Layer normalization over the last axis (fast::layer_norm); weight ones
/// and bias zeros when affine (bias only when `bias`).
struct LayerNorm : Module<LayerNorm> {
  std::optional<Param> weight;
  std::optional<Param> bias;
  int dims;
  float eps;
  LayerNorm(int dims, float eps = 1e-5f, bool affine = true, bool bias = true);
  Array operator()(const Array& x) const;
};
NUVEC_TREE(LayerNorm, weight, bias, NUVEC_STATIC(dims), NUVEC_STATIC(eps))

/// Root-mean-square normalization over the last axis (fast::rms_norm),
/// weight ones.
struct RMSNorm : Module<RMSNorm> {
  Param weight;
  float eps;
  explicit RMSNorm(int dims, float eps = 1e-5f);
  Array operator()(const Array& x) const;
};
NUVEC_TREE(RMSNorm, weight, NUVEC_STATIC(eps))

/// Zeroes elements with probability p in training mode and scales the rest
/// by 1/(1-p) (MLX's Dropout: the mask is bernoulli(1-p) from the thread's
/// key sequence); the identity in evaluation mode. p in [0, 1).
struct Dropout : Module<Dropout> {
  double p;
  explicit Dropout(double p = 0.5);
  Array operator()(const Array& x) const;
};
NUVEC_TREE(Dropout, NUVEC_STATIC(p), NUVEC_MODE(training_))

/// Dropout of whole channels for [B, H, W, C] or [H, W, C] inputs.
struct Dropout2d : Module<Dropout2d> {
  double p;
  explicit Dropout2d(double p = 0.5);
  Array operator()(const Array& x) const;
};
NUVEC_TREE(Dropout2d, NUVEC_STATIC(p), NUVEC_MODE(training_))

/// Dropout of whole channels for [B, D, H, W, C] or [D, H, W, C] inputs.
struct Dropout3d : Module<Dropout3d> {
  double p;
  explicit Dropout3d(double p = 0.5);
  Array operator()(const Array& x) const;
};
NUVEC_TREE(Dropout3d, NUVEC_STATIC(p), NUVEC_MODE(training_))

}  // namespace nuvec::nn
