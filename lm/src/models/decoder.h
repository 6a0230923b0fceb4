// The decoder-only transformer that every supported architecture is an
// instance of: embeddings, blocks of attention and an MLP (dense or a
// mixture of experts), a final norm and the output projection. The
// architecture files (llama.cpp, qwen3.cpp, gemma3.cpp, ...) read their
// config into a DecoderSpec and take their weights by name.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "models/blocks.h"
#include "nuvec/lm/model.h"

namespace nuvec::lm::detail {

/// How a layer's MLP routes tokens to experts.
enum class Router {
  none,          // a dense MLP
  topk_softmax,  // mixtral: top-k of the logits, softmax over them
  softmax_topk,  // qwen3_moe: softmax over all, top-k, optionally renormalized
};

struct DecoderSpec {
  std::string model_type;
  int vocab = 0, hidden = 0, layers = 0, intermediate = 0;
  float norm_eps = 1e-5f;
  bool tie_embeddings = false;
  bool attention_bias = false, mlp_bias = false, qk_norm = false;
  /// Gemma: (1 + w) norms, embeddings times sqrt(hidden) rounded to
  /// bfloat16, norms after attention and around the MLP, gelu (tanh).
  bool gemma = false;
  std::vector<AttentionSpec> attention;  // one per layer
  std::vector<int> window;               // per layer, 0 for global attention
  Router router = Router::none;
  int experts = 0, top_k = 0, moe_intermediate = 0;
  bool norm_topk = false;
  std::vector<bool> moe_layer;  // per layer, when router != none (empty: all)
  std::string moe_prefix = "mlp";     // the router's and experts' module name
  std::string router_name = "gate";
  std::string experts_name = "switch_mlp";
};

/// Reads the rope settings mlx-lm's initialize_rope reads (rope_theta,
/// rope_traditional, rope_scaling with types default, linear and llama3)
/// into `spec` for head dimension `dims`.
void read_rope(const Config& cfg, AttentionSpec& spec, int dims, float base);

/// The fields every architecture reads the same way: sizes, heads,
/// head_dim (default hidden / heads), rms_norm_eps, rope_theta, tie, and one
/// global AttentionSpec per layer with scale head_dim^-1/2.
DecoderSpec base_spec(const Config& cfg, double default_theta, bool default_tie, double default_eps);

/// The weights named as mlx-lm names them (model.layers.N.self_attn...),
/// checked against `spec`.
std::shared_ptr<Model> build_decoder(DecoderSpec spec, Weights& weights);

/// Every architecture: reads `cfg` and takes its weights.
using Builder = std::shared_ptr<Model> (*)(const Config& cfg, Weights& weights);
std::shared_ptr<Model> build_llama(const Config& cfg, Weights& weights);  // llama, mistral
std::shared_ptr<Model> build_qwen2(const Config& cfg, Weights& weights);
std::shared_ptr<Model> build_qwen3(const Config& cfg, Weights& weights);
std::shared_ptr<Model> build_gemma3(const Config& cfg, Weights& weights);
std::shared_ptr<Model> build_mixtral(const Config& cfg, Weights& weights);
std::shared_ptr<Model> build_qwen3_moe(const Config& cfg, Weights& weights);
std::shared_ptr<Model> build_qwen3_next(const Config& cfg, Weights& weights);  // qwen3_next.cpp
/// The builder of `model_type`, or an error naming it and the known ones.
Builder find_builder(const std::string& model_type);

/// A model other than build_decoder's (qwen3_next) that converts itself:
/// convert_model calls convert() with its arguments.
class SelfConverting {
 public:
  virtual ~SelfConverting() = default;
  virtual void convert(std::optional<DType> dtype, bool dequantize, std::optional<int> quantize_bits,
                       int group_size, std::optional<Device> device) = 0;
};

/// Applies LoadConfig's dtype / dequantization / quantization to a model
/// that build_decoder made.
void convert_model(Model& model, std::optional<DType> dtype, bool dequantize,
                   std::optional<int> quantize_bits, int group_size,
                   std::optional<Device> device = std::nullopt);

}  // namespace nuvec::lm::detail
