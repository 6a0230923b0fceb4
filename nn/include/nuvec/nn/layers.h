// The basic layers of mlx.nn: Identity, Linear, Bilinear, Embedding,
// LayerNorm, RMSNorm, Dropout (docs/nn.md). Constructors take MLX's
// arguments in MLX's order with its defaults and draw their initial
// weights as MLX does (the same seed gives MLX's weights bit for bit).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// Returns its input (MLX's Identity).
struct Identity : Module<Identity> {
  Array operator()(const Array& x) const { return x; }
};
NUVEC_TREE(Identity)

/// How a layer's weight is quantized (bits 0: it is not): the arguments of
/// ops::quantize.
struct Quantization {
  int group_size = 0;
  int bits = 0;
  std::string mode;
};
NUVEC_STATIC_STRUCT(Quantization, group_size, bits, mode)

/// y = x W^T + b, W of shape [output_dims, input_dims], both drawn from
/// U(-k, k) with k = 1/sqrt(input_dims) (weight first, then bias).
/// Quantized (to_quantized, nn::quantize, QuantizedLinear), `weight` holds
/// the packed words and `scales` / `biases` MLX's QuantizedLinear arrays,
/// and the product is ops::quantized_matmul.
struct Linear : Module<Linear> {
  Param weight;
  std::optional<Param> scales, biases;
  std::optional<Param> bias;
  Quantization quantization;
  Linear(int input_dims, int output_dims, bool bias = true);
  int input_dims() const;
  int output_dims() const { return static_cast<int>(weight.value.shape(0)); }
  bool quantized() const { return quantization.bits > 0; }
  /// "Linear", or "QuantizedLinear" once quantized.
  std::string name() const override;
  /// x [..., input_dims] (floating) to [..., output_dims]; other shapes
  /// give a failed array naming the layer.
  Array operator()(const Array& x) const;
  /// Quantizes the weight in place, as MLX's to_quantized (defaults per
  /// mode: affine 64/4, mxfp4 32/4, nvfp4 16/4, mxfp8 32/8). Like MLX's
  /// from_linear it draws (and drops) a fresh weight first, so later draws
  /// match MLX's; the quantized arrays are frozen, the bias keeps its flag.
  /// Throws nuvec::Error when the input dims do not fit the group size.
  Linear& to_quantized(std::optional<int> group_size = {}, std::optional<int> bits = {},
                       const std::string& mode = "affine");
};
NUVEC_TREE(Linear, weight, scales, biases, bias, NUVEC_STATIC(quantization))

/// MLX's QuantizedLinear: a Linear whose weight is drawn, then quantized;
/// every array frozen.
struct QuantizedLinear : Linear {
  QuantizedLinear(int input_dims, int output_dims, bool bias = true, std::optional<int> group_size = {},
                  std::optional<int> bits = {}, const std::string& mode = "affine");
  /// The quantization of `linear` (MLX's from_linear).
  static QuantizedLinear from_linear(const Linear& linear, std::optional<int> group_size = {},
                                     std::optional<int> bits = {}, const std::string& mode = "affine");

 private:
  explicit QuantizedLinear(const Linear& l) : Linear(l) {}
};
NUVEC_TREE(QuantizedLinear, weight, scales, biases, bias, NUVEC_STATIC(quantization))

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
/// Quantized, as MLX's QuantizedEmbedding (weight, scales, biases).
struct Embedding : Module<Embedding> {
  Param weight;
  std::optional<Param> scales, biases;
  Quantization quantization;
  Embedding(int num_embeddings, int dims);
  int dims() const;
  bool quantized() const { return quantization.bits > 0; }
  std::string name() const override;
  /// The rows of the table at integer indices x: shape x.shape + [dims].
  Array operator()(const Array& x) const;
  /// x @ weight^T: the embedding used as an output head (tied weights).
  Array as_linear(const Array& x) const;
  /// Quantizes the table in place (see Linear::to_quantized).
  Embedding& to_quantized(std::optional<int> group_size = {}, std::optional<int> bits = {},
                          const std::string& mode = "affine");
};
NUVEC_TREE(Embedding, weight, scales, biases, NUVEC_STATIC(quantization))

/// MLX's QuantizedEmbedding: an Embedding drawn, then quantized; frozen.
struct QuantizedEmbedding : Embedding {
  QuantizedEmbedding(int num_embeddings, int dims, std::optional<int> group_size = {},
                     std::optional<int> bits = {}, const std::string& mode = "affine");
  static QuantizedEmbedding from_embedding(const Embedding& embedding, std::optional<int> group_size = {},
                                           std::optional<int> bits = {}, const std::string& mode = "affine");

 private:
  explicit QuantizedEmbedding(const Embedding& e) : Embedding(e) {}
};
NUVEC_TREE(QuantizedEmbedding, weight, scales, biases, NUVEC_STATIC(quantization))

/// Quantizes every Linear and Embedding of `model` in place for which
/// `predicate(path, module)` holds (all of them by default), as MLX's
/// nn.quantize; modules visited in tree order.
template <class M>
void quantize(M& model, std::optional<int> group_size = {}, std::optional<int> bits = {},
              const std::string& mode = "affine",
              const std::function<bool(const std::string&, const ModuleBase&)>& predicate = {}) {
  model.apply_to_modules([&](const std::string& path, ModuleBase& m) {
    if (predicate && !predicate(path, m)) return;
    if (auto* l = dynamic_cast<Linear*>(&m); l && !l->quantized()) l->to_quantized(group_size, bits, mode);
    if (auto* e = dynamic_cast<Embedding*>(&m); e && !e->quantized()) e->to_quantized(group_size, bits, mode);
  });
}

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
