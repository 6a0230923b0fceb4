// A small GPT: token embeddings (tied with the output head), pre-norm
// blocks of causal self-attention with RoPE and a GELU MLP, a final norm.
// Parameter names follow mlx-lm's conventions.
#pragma once

#include <cmath>
#include <vector>

#include <nuvec/nn.h>

namespace gpt {

using nuvec::Array;
namespace nn = nuvec::nn;

struct Config {
  int vocab = 96;
  int dims = 128;
  int heads = 4;
  int layers = 2;
  int context = 128;
};
NUVEC_STATIC_STRUCT(Config, vocab, dims, heads, layers, context)

/// GELU with erf, as mlx.nn.gelu.
inline Array gelu(const Array& x) { return x * (1.0 + (x / std::sqrt(2.0)).erf()) / 2.0; }

struct Attention : nn::Module<Attention> {
  nn::Linear query_proj, key_proj, value_proj, out_proj;
  int heads;
  Attention(int dims, int heads_)
      : query_proj(dims, dims, false), key_proj(dims, dims, false), value_proj(dims, dims, false),
        out_proj(dims, dims, false), heads(heads_) {}
  Array operator()(const Array& x) const {
    int B = x.shape(0), L = x.shape(1), D = x.shape(2), hd = D / heads;
    auto split = [&](const Array& t) { return t.reshape({B, L, heads, hd}).transpose({0, 2, 1, 3}); };
    Array q = nuvec::fast::rope(split(query_proj(x)), hd, false, 10000.0f, 1.0f, 0);
    Array k = nuvec::fast::rope(split(key_proj(x)), hd, false, 10000.0f, 1.0f, 0);
    Array v = split(value_proj(x));
    Array o = nuvec::fast::scaled_dot_product_attention(q, k, v, 1.0f / std::sqrt(float(hd)), "causal");
    return out_proj(o.transpose({0, 2, 1, 3}).reshape({B, L, D}));
  }
};
NUVEC_TREE(Attention, query_proj, key_proj, value_proj, out_proj, NUVEC_STATIC(heads))

struct Mlp : nn::Module<Mlp> {
  nn::Linear up_proj, down_proj;
  explicit Mlp(int dims) : up_proj(dims, 4 * dims, false), down_proj(4 * dims, dims, false) {}
  Array operator()(const Array& x) const { return down_proj(gelu(up_proj(x))); }
};
NUVEC_TREE(Mlp, up_proj, down_proj)

struct Block : nn::Module<Block> {
  nn::LayerNorm attention_norm, mlp_norm;
  Attention attention;
  Mlp mlp;
  Block(int dims, int heads)
      : attention_norm(dims, 1e-5f, true, false), mlp_norm(dims, 1e-5f, true, false),
        attention(dims, heads), mlp(dims) {}
  Array operator()(const Array& x) const {
    Array h = x + attention(attention_norm(x));
    return h + mlp(mlp_norm(h));
  }
};
NUVEC_TREE(Block, attention_norm, mlp_norm, attention, mlp)

struct Gpt : nn::Module<Gpt> {
  Config config;
  nn::Embedding embed_tokens;
  std::vector<Block> layers;
  nn::LayerNorm norm;
  explicit Gpt(const Config& c) : config(c), embed_tokens(c.vocab, c.dims), norm(c.dims, 1e-5f, true, false) {
    for (int i = 0; i < c.layers; ++i) layers.emplace_back(c.dims, c.heads);
  }
  /// Logits [B, L, vocab] for tokens [B, L] (int32).
  Array operator()(const Array& tokens) const {
    Array h = embed_tokens(tokens);
    for (auto& l : layers) h = l(h);
    return embed_tokens.as_linear(norm(h));
  }
};
NUVEC_TREE(Gpt, NUVEC_STATIC(config), embed_tokens, layers, norm)

/// The mean next-token cross-entropy of `tokens` [B, L] against `targets`.
inline Array loss(const Gpt& model, const Array& tokens, const Array& targets) {
  Array logits = model(tokens).astype(nuvec::float32);
  return nuvec::fast::cross_entropy(logits, targets).mean();
}

}  // namespace gpt
