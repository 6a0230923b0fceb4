// MultiHeadAttention and the Transformer layers of mlx.nn (docs/nn.md).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "nuvec/nn/layers.h"

namespace nuvec::nn {

/// An activation given to a layer (MLX passes callables; relu by default).
using Activation = std::function<Array(const Array&)>;

/// Multi-head attention as MLX's: projections query_proj, key_proj,
/// value_proj, out_proj (no biases by default), heads split from the last
/// axis, fast::scaled_dot_product_attention with scale 1/sqrt(head dims).
struct MultiHeadAttention : Module<MultiHeadAttention> {
  int num_heads;
  Linear query_proj, key_proj, value_proj, out_proj;
  MultiHeadAttention(int dims, int num_heads, std::optional<int> query_input_dims = {},
                     std::optional<int> key_input_dims = {}, std::optional<int> value_input_dims = {},
                     std::optional<int> value_dims = {}, std::optional<int> value_output_dims = {},
                     bool bias = false);
  /// queries [B, Lq, Dq], keys [B, Lk, Dk], values [B, Lk, Dv]; mask
  /// additive or boolean, broadcastable to [B, heads, Lq, Lk].
  Array operator()(const Array& queries, const Array& keys, const Array& values,
                   const std::optional<Array>& mask = {}) const;
  /// [N, N] with 0 on and below the diagonal and the dtype's lowest value
  /// above it (MLX's create_additive_causal_mask).
  static Array create_additive_causal_mask(int n, DType dtype = float32);
};
NUVEC_TREE(MultiHeadAttention, query_proj, key_proj, value_proj, out_proj, NUVEC_STATIC(num_heads))

struct TransformerEncoderLayer : Module<TransformerEncoderLayer> {
  MultiHeadAttention attention;
  LayerNorm ln1, ln2;
  Linear linear1, linear2;
  Dropout dropout1, dropout2;
  Activation activation;
  bool norm_first;
  TransformerEncoderLayer(int dims, int num_heads, std::optional<int> mlp_dims = {}, double dropout = 0.0,
                          Activation activation = {}, bool norm_first = true);
  Array operator()(const Array& x, const std::optional<Array>& mask) const;
};
NUVEC_TREE(TransformerEncoderLayer, attention, ln1, ln2, linear1, linear2, dropout1, dropout2,
           NUVEC_STATIC(norm_first), NUVEC_UNCHECKED(activation))

struct TransformerEncoder : Module<TransformerEncoder> {
  std::vector<TransformerEncoderLayer> layers;
  LayerNorm ln;
  bool checkpoint;
  TransformerEncoder(int num_layers, int dims, int num_heads, std::optional<int> mlp_dims = {},
                     double dropout = 0.0, Activation activation = {}, bool norm_first = true,
                     bool checkpoint = false);
  Array operator()(const Array& x, const std::optional<Array>& mask) const;
};
NUVEC_TREE(TransformerEncoder, layers, ln, NUVEC_STATIC(checkpoint))

struct TransformerDecoderLayer : Module<TransformerDecoderLayer> {
  MultiHeadAttention self_attention, cross_attention;
  LayerNorm ln1, ln2, ln3;
  Linear linear1, linear2;
  Dropout dropout1, dropout2, dropout3;
  Activation activation;
  bool norm_first;
  TransformerDecoderLayer(int dims, int num_heads, std::optional<int> mlp_dims = {}, double dropout = 0.0,
                          Activation activation = {}, bool norm_first = true);
  Array operator()(const Array& x, const Array& memory, const std::optional<Array>& x_mask,
                   const std::optional<Array>& memory_mask) const;
};
NUVEC_TREE(TransformerDecoderLayer, self_attention, cross_attention, ln1, ln2, ln3, linear1, linear2, dropout1,
           dropout2, dropout3, NUVEC_STATIC(norm_first), NUVEC_UNCHECKED(activation))

struct TransformerDecoder : Module<TransformerDecoder> {
  std::vector<TransformerDecoderLayer> layers;
  LayerNorm ln;
  bool checkpoint;
  TransformerDecoder(int num_layers, int dims, int num_heads, std::optional<int> mlp_dims = {},
                     double dropout = 0.0, Activation activation = {}, bool norm_first = true,
                     bool checkpoint = false);
  Array operator()(const Array& x, const Array& memory, const std::optional<Array>& x_mask,
                   const std::optional<Array>& memory_mask) const;
};
NUVEC_TREE(TransformerDecoder, layers, ln, NUVEC_STATIC(checkpoint))

/// An encoder-decoder Transformer (MLX's defaults: dims 512, 8 heads, 6 + 6
/// layers, relu, pre-norm). Custom encoders/decoders: compose the parts.
struct Transformer : Module<Transformer> {
  TransformerEncoder encoder;
  TransformerDecoder decoder;
  Transformer(int dims = 512, int num_heads = 8, int num_encoder_layers = 6, int num_decoder_layers = 6,
              std::optional<int> mlp_dims = {}, double dropout = 0.0, Activation activation = {},
              bool norm_first = true, bool checkpoint = false);
  Array operator()(const Array& src, const Array& tgt, const std::optional<Array>& src_mask,
                   const std::optional<Array>& tgt_mask, const std::optional<Array>& memory_mask) const;
};
NUVEC_TREE(Transformer, encoder, decoder)

}  // namespace nuvec::nn
