// Quantized Linear and Embedding layers (MLX's QuantizedLinear,
// QuantizedEmbedding and to_quantized), through ops::quantize.
#include <cmath>

#include "nuvec/nn/layers.h"

namespace nuvec::nn {
namespace {

/// MLX's defaults per mode (group size, bits); an unknown mode throws.
Quantization defaults_for(const std::string& mode, std::optional<int> group_size, std::optional<int> bits) {
  struct D {
    const char* mode;
    int group, bits;
  };
  static const D table[] = {{"affine", 64, 4}, {"mxfp4", 32, 4}, {"nvfp4", 16, 4}, {"mxfp8", 32, 8}};
  for (auto& d : table)
    if (mode == d.mode) return {group_size.value_or(d.group), bits.value_or(d.bits), mode};
  Error(ErrorKind::invalid_argument,
        "invalid quantization mode '" + mode + "': valid modes are affine, mxfp4, nvfp4, mxfp8")
      .raise();
  return {};
}

/// Quantizes `w`: {packed, scales, biases (affine only)}; throws naming
/// `who` when the arguments do not fit (ops::quantize's failed array).
std::vector<Array> quantize_checked(const ModuleBase& who, const Array& w, const Quantization& q) {
  std::vector<Array> out = ops::quantize(w, q.group_size, q.bits, q.mode);
  try {
    for (auto& a : out) a.check();
  } catch (const Error& e) {
    Error(e.kind(), who.where() + ": cannot quantize the weight: " + e.message()).raise();
  }
  return out;
}

template <class L>
void install(L& layer, std::vector<Array> q, const Quantization& spec) {
  layer.weight = Param(q[0], true);
  layer.scales = Param(q[1], true);
  if (q.size() > 2)
    layer.biases = Param(q[2], true);
  else
    layer.biases.reset();
  layer.quantization = spec;
}

}  // namespace

std::string Linear::name() const { return quantized() ? "QuantizedLinear" : "Linear"; }

Linear& Linear::to_quantized(std::optional<int> group_size, std::optional<int> bits, const std::string& mode) {
  if (quantized())
    Error(ErrorKind::invalid_argument, where() + ": the layer is already quantized").raise();
  Quantization spec = defaults_for(mode, group_size, bits);
  // MLX's from_linear first builds a QuantizedLinear, drawing its weight.
  double scale = std::sqrt(1.0 / input_dims());
  (void)random::uniform(-scale, scale, {output_dims(), input_dims()});
  install(*this, quantize_checked(*this, weight.value, spec), spec);
  return *this;
}

QuantizedLinear::QuantizedLinear(int input_dims, int output_dims, bool has_bias, std::optional<int> group_size,
                                 std::optional<int> bits, const std::string& mode)
    : Linear(input_dims, output_dims, false) {
  Quantization spec = defaults_for(mode, group_size, bits);
  install(*this, quantize_checked(*this, weight.value, spec), spec);
  if (has_bias) bias = Param(ops::zeros({output_dims}), true);
}

QuantizedLinear QuantizedLinear::from_linear(const Linear& linear, std::optional<int> group_size,
                                             std::optional<int> bits, const std::string& mode) {
  QuantizedLinear q(linear);
  q.to_quantized(group_size, bits, mode);
  return q;
}

std::string Embedding::name() const { return quantized() ? "QuantizedEmbedding" : "Embedding"; }

Embedding& Embedding::to_quantized(std::optional<int> group_size, std::optional<int> bits,
                                   const std::string& mode) {
  if (quantized())
    Error(ErrorKind::invalid_argument, where() + ": the layer is already quantized").raise();
  Quantization spec = defaults_for(mode, group_size, bits);
  int rows = static_cast<int>(weight.value.shape(0)), d = dims();
  (void)random::normal({rows, d}, float32, 0.0f, static_cast<float>(std::sqrt(1.0 / d)));
  install(*this, quantize_checked(*this, weight.value, spec), spec);
  return *this;
}

QuantizedEmbedding::QuantizedEmbedding(int num_embeddings, int dims, std::optional<int> group_size,
                                       std::optional<int> bits, const std::string& mode)
    : Embedding(num_embeddings, dims) {
  Quantization spec = defaults_for(mode, group_size, bits);
  install(*this, quantize_checked(*this, weight.value, spec), spec);
}

QuantizedEmbedding QuantizedEmbedding::from_embedding(const Embedding& e, std::optional<int> group_size,
                                                      std::optional<int> bits, const std::string& mode) {
  QuantizedEmbedding q(e);
  q.to_quantized(group_size, bits, mode);
  return q;
}

}  // namespace nuvec::nn
