// The pieces the architectures are made of: linear layers and embeddings
// (dense or quantized), the weight set they are taken from (every name
// checked), norms, and the attention with a cache.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "nuvec/distributed.h"
#include "nuvec/lm/cache.h"
#include "nuvec/nuvec.h"

namespace nuvec::lm::detail {

using WeightMap = std::unordered_map<std::string, Array>;
using NamedList = std::vector<std::pair<std::string, Array>>;

/// A linear layer's weights: y = x W^T (+ b); W dense [out, in] or affine
/// quantized (weight uint32 [out, in * bits / 32], scales/biases [out, in / group]).
struct Linear {
  Array weight = array(0.0f);
  std::optional<Array> bias, scales, biases;
  int bits = 0, group_size = 0;
  /// A row-parallel shard of a tensor-parallel model (shard.cpp): the
  /// products are summed over this group, then the bias is added.
  std::optional<distributed::Group> reduce;
  bool quantized() const { return bits > 0; }
  Array operator()(const Array& x) const;
  void collect(const std::string& prefix, NamedList& out) const;
};

/// Layers that read the same input as one product (docs/lm.md, "Fused
/// projections"): the layers' weights (and scales, biases, bias)
/// concatenated along the output features and evaluated, each layer's
/// arrays then replaced by its rows of the concatenation (views, so the
/// memory is not doubled). The fused layer, or nullopt (nothing changed)
/// when the layers differ in kind (dense or quantized, bits, group size,
/// dtypes, a bias on some only) or one sums over a group.
std::optional<Linear> fuse_linears(const std::vector<Linear*>& parts);

/// Token embeddings, dense or quantized as Linear.
struct Embedding {
  Linear table;  // [vocab, dims]
  Array operator()(const Array& ids) const;
  /// x @ table^T: tied output projections.
  Array as_linear(const Array& x) const { return table(x); }
};

/// The tensors of a checkpoint, taken by name: what is missing, mis-shaped
/// or never taken is collected and reported together by finish().
class Weights {
 public:
  Weights(WeightMap map, std::string source) : map_(std::move(map)), source_(std::move(source)) {}
  bool has(const std::string& name) const { return map_.count(name) > 0; }
  /// Every tensor name (unordered): layouts a model detects by name.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& kv : map_) out.push_back(kv.first);
    return out;
  }
  /// The tensor `name` of shape `shape` (a placeholder and a recorded
  /// problem when missing or mis-shaped).
  Array take(const std::string& name, const Shape& shape);
  std::optional<Array> take_if(const std::string& name, const Shape& shape);
  /// A linear layer `prefix`.{weight, bias, scales, biases}, quantized
  /// when prefix.scales exists (bits and group size read from the shapes).
  Linear linear(const std::string& prefix, int in, int out, bool bias);
  /// A stack of `n` linear layers [n, out, in] (the experts of a MoE).
  Linear stacked(const std::string& prefix, int n, int in, int out);
  Embedding embedding(const std::string& prefix, int vocab, int dims);
  /// Records a problem.
  void problem(const std::string& what) { problems_.push_back(what); }
  /// Marks a name as used without taking it (tensors a model ignores,
  /// such as rotary_emb.inv_freq).
  void ignore(const std::string& name) { used_.insert(name); }
  /// Throws one nuvec::Error listing every problem and every unused tensor.
  void finish();

 private:
  WeightMap map_;
  std::string source_;
  std::set<std::string> used_;
  std::vector<std::string> problems_;
};

/// RMS norm with weight w (gemma: 1 + w, precomputed at load).
Array rms_norm(const Array& x, const Array& w, float eps);

/// Options of one attention layer.
struct AttentionSpec {
  int heads = 0, kv_heads = 0, head_dim = 0;
  float scale = 1.0f;
  int rope_dims = 0;
  bool rope_traditional = false;
  std::optional<float> rope_base;
  float rope_scale = 1.0f;
  std::optional<Array> rope_freqs;
  float norm_eps = 1e-6f;
};

/// An attention layer's weights.
struct Attention {
  Linear q, k, v, o;
  std::optional<Array> q_norm, k_norm;  // per-head RMS norms over head_dim
  /// q, k and v as one product (fuse(); q, k, v then view its rows).
  std::optional<Linear> qkv;
  void fuse() { qkv = fuse_linears({&q, &k, &v}); }
  Array operator()(const AttentionSpec& spec, const Array& x, LayerCache& cache) const;
  void collect(const std::string& prefix, NamedList& out) const;
};

/// A gated MLP: down(act(gate(x)) * up(x)), act silu or gelu (tanh).
struct Mlp {
  Linear gate, up, down;
  bool gelu = false;
  /// gate and up as one product (fuse(); gate, up then view its rows).
  std::optional<Linear> gate_up;
  void fuse() { gate_up = fuse_linears({&gate, &up}); }
  Array operator()(const Array& x) const;
  void collect(const std::string& prefix, NamedList& out) const;
};

/// The experts of a mixture-of-experts layer (mlx-lm's SwitchGLU), each
/// token through its top-k experts by gather_mm / gather_qmm.
struct SwitchMlp {
  Linear gate, up, down;  // stacked [E, out, in]
  Array operator()(const Array& x, const Array& indices) const;
  void collect(const std::string& prefix, NamedList& out) const;
};

/// Tensor parallelism (shard.cpp): this rank's block `rank` of `parts`
/// equal blocks of the output features (rows, and the bias), or of the
/// input features (columns; the layer then sums over `group`). `what`
/// names the layer in errors (a count that does not split, a quantized
/// group that a block would cut).
void shard_rows(Linear& l, int parts, int rank, const std::string& what);
void shard_columns(Linear& l, const distributed::Group& group, const std::string& what);

/// Converts floating arrays of `w` to `dtype` (quantized weights stay; their
/// scales/biases too are converted), or dequantizes when `dequantize`.
void convert(Linear& w, DType dtype, bool dequantize);

}  // namespace nuvec::lm::detail
