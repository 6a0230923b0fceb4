// MultiHeadAttention and the Transformer layers, in MLX's order of
// construction (so a seed gives MLX's weights) and of computation.
#include "nuvec/nn/transformer.h"

#include <cmath>

namespace nuvec::nn {
namespace {

Activation or_relu(Activation a) {
  if (a) return a;
  return [](const Array& x) { return ops::maximum(x, 0); };
}

/// The query input dims, once dims and heads are checked (before any draw).
int checked(int dims, int heads, std::optional<int> query_input_dims) {
  if (heads <= 0 || dims % heads != 0)
    Error(ErrorKind::invalid_argument, "MultiHeadAttention: dims " + std::to_string(dims) +
                                           " are not divisible by num_heads " + std::to_string(heads))
        .raise();
  return query_input_dims.value_or(dims);
}

int mlp_or(std::optional<int> mlp_dims, int dims) { return mlp_dims.value_or(dims * 4); }

}  // namespace

MultiHeadAttention::MultiHeadAttention(int dims, int heads, std::optional<int> query_input_dims,
                                       std::optional<int> key_input_dims, std::optional<int> value_input_dims,
                                       std::optional<int> value_dims, std::optional<int> value_output_dims,
                                       bool bias)
    : num_heads(heads),
      query_proj(checked(dims, heads, query_input_dims), dims, bias),
      key_proj(key_input_dims.value_or(dims), dims, bias),
      value_proj(value_input_dims.value_or(key_input_dims.value_or(dims)), value_dims.value_or(dims), bias),
      out_proj(value_dims.value_or(dims), value_output_dims.value_or(dims), bias) {}

Array MultiHeadAttention::operator()(const Array& queries, const Array& keys, const Array& values,
                                     const std::optional<Array>& mask) const {
  for (const Array* a : {&queries, &keys, &values})
    if (a->ndim() != 3)
      return detail::layer_error(*this, ErrorKind::invalid_shape,
                                 "expected queries, keys and values of shape [batch, length, dims]");
  auto heads = [&](const Array& t) { return ops::unflatten(t, -1, {num_heads, -1}).transpose({0, 2, 1, 3}); };
  Array q = heads(query_proj(queries)), k = heads(key_proj(keys)), v = heads(value_proj(values));
  float scale = static_cast<float>(std::sqrt(1.0 / q.shape(-1)));
  Array o = mask ? fast::scaled_dot_product_attention(q, k, v, scale, "array", *mask)
                 : fast::scaled_dot_product_attention(q, k, v, scale);
  return out_proj(ops::flatten(o.transpose({0, 2, 1, 3}), -2, -1));
}

Array MultiHeadAttention::create_additive_causal_mask(int n, DType dtype) {
  Array i = ops::arange(n);
  Array upper = ops::less(ops::expand_dims(i, 1), ops::expand_dims(i, 0));
  return upper.astype(dtype) * finfo(dtype).min;
}

TransformerEncoderLayer::TransformerEncoderLayer(int dims, int heads, std::optional<int> mlp_dims, double dropout,
                                                 Activation act, bool norm_first_)
    : attention(dims, heads), ln1(dims), ln2(dims), linear1(dims, mlp_or(mlp_dims, dims)),
      linear2(mlp_or(mlp_dims, dims), dims), dropout1(dropout), dropout2(dropout),
      activation(or_relu(std::move(act))), norm_first(norm_first_) {}

Array TransformerEncoderLayer::operator()(const Array& x, const std::optional<Array>& mask) const {
  if (norm_first) {
    Array y = ln1(x);
    Array h = x + dropout1(attention(y, y, y, mask));
    return h + linear2(dropout2(activation(linear1(ln2(h)))));
  }
  Array h = ln1(x + dropout1(attention(x, x, x, mask)));
  return ln2(h + linear2(dropout2(activation(linear1(h)))));
}

TransformerEncoder::TransformerEncoder(int num_layers, int dims, int heads, std::optional<int> mlp_dims,
                                       double dropout, Activation act, bool norm_first, bool checkpoint_)
    : ln(dims), checkpoint(checkpoint_) {
  // LayerNorm draws nothing: the layers' weights are drawn in MLX's order.
  layers.reserve(num_layers);
  for (int i = 0; i < num_layers; ++i) layers.emplace_back(dims, heads, mlp_dims, dropout, act, norm_first);
}

Array TransformerEncoder::operator()(const Array& x, const std::optional<Array>& mask) const {
  Array h = x;
  for (auto& layer : layers) {
    if (checkpoint) {
      auto f = [mask](const std::pair<TransformerEncoderLayer, Array>& p) { return p.first(p.second, mask); };
      h = nuvec::checkpoint(f)(std::pair<TransformerEncoderLayer, Array>(layer, h));
    } else {
      h = layer(h, mask);
    }
  }
  return ln(h);
}

TransformerDecoderLayer::TransformerDecoderLayer(int dims, int heads, std::optional<int> mlp_dims, double dropout,
                                                 Activation act, bool norm_first_)
    : self_attention(dims, heads), cross_attention(dims, heads), ln1(dims), ln2(dims), ln3(dims),
      linear1(dims, mlp_or(mlp_dims, dims)), linear2(mlp_or(mlp_dims, dims), dims), dropout1(dropout),
      dropout2(dropout), dropout3(dropout), activation(or_relu(std::move(act))), norm_first(norm_first_) {}

Array TransformerDecoderLayer::operator()(const Array& x, const Array& memory, const std::optional<Array>& x_mask,
                                          const std::optional<Array>& memory_mask) const {
  if (norm_first) {
    Array y = ln1(x);
    Array h = x + dropout1(self_attention(y, y, y, x_mask));
    y = ln2(h);
    h = h + dropout2(cross_attention(y, memory, memory, memory_mask));
    return h + linear2(dropout3(activation(linear1(ln3(h)))));
  }
  Array h = ln1(x + dropout1(self_attention(x, x, x, x_mask)));
  h = ln2(h + dropout2(cross_attention(h, memory, memory, memory_mask)));
  return ln3(h + linear2(dropout3(activation(linear1(h)))));
}

TransformerDecoder::TransformerDecoder(int num_layers, int dims, int heads, std::optional<int> mlp_dims,
                                       double dropout, Activation act, bool norm_first, bool checkpoint_)
    : ln(dims), checkpoint(checkpoint_) {
  // LayerNorm draws nothing: the layers' weights are drawn in MLX's order.
  layers.reserve(num_layers);
  for (int i = 0; i < num_layers; ++i) layers.emplace_back(dims, heads, mlp_dims, dropout, act, norm_first);
}

Array TransformerDecoder::operator()(const Array& x, const Array& memory, const std::optional<Array>& x_mask,
                                     const std::optional<Array>& memory_mask) const {
  Array h = x;
  for (auto& layer : layers) {
    if (checkpoint) {
      auto f = [&memory, x_mask, memory_mask](const std::pair<TransformerDecoderLayer, Array>& p) {
        return p.first(p.second, memory, x_mask, memory_mask);
      };
      h = nuvec::checkpoint(f)(std::pair<TransformerDecoderLayer, Array>(layer, h));
    } else {
      h = layer(h, memory, x_mask, memory_mask);
    }
  }
  return ln(h);
}

Transformer::Transformer(int dims, int heads, int num_encoder_layers, int num_decoder_layers,
                         std::optional<int> mlp_dims, double dropout, Activation act, bool norm_first,
                         bool checkpoint)
    : encoder(num_encoder_layers, dims, heads, mlp_dims, dropout, act, norm_first, checkpoint),
      decoder(num_decoder_layers, dims, heads, mlp_dims, dropout, act, norm_first, checkpoint) {}

Array Transformer::operator()(const Array& src, const Array& tgt, const std::optional<Array>& src_mask,
                              const std::optional<Array>& tgt_mask,
                              const std::optional<Array>& memory_mask) const {
  return decoder(tgt, encoder(src, src_mask), tgt_mask, memory_mask);
}

}  // namespace nuvec::nn
