// Language models: loading a checkpoint (an mlx-lm / Hugging Face folder or
// a GGUF file) into a model of its architecture, and calling it on tokens
// with a cache (docs/lm.md, "Loading" and "Architectures").
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nuvec/distributed.h"
#include "nuvec/lm/cache.h"
#include "nuvec/lm/tokenizer.h"
#include "nuvec/nuvec.h"

namespace nuvec::lm {

/// What every architecture reports about itself.
struct ModelInfo {
  std::string model_type;  ///< config.json's model_type ("llama", "qwen3", ...)
  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  DType dtype = float32;        ///< the compute dtype
  size_t num_parameters = 0;    ///< elements of the stored weights (packed words count once)
  size_t weight_bytes = 0;      ///< bytes of the weights as held
  std::optional<int> quant_bits, quant_group_size;  ///< when quantized
};

/// A decoder-only language model. Calls build lazy graphs; the caller
/// evaluates.
class Model {
 public:
  virtual ~Model() = default;
  /// Logits [B, L, vocab] of the int32 tokens [B, L] after what `cache`
  /// holds (one LayerCache per layer, from make_cache()), which it updates.
  virtual Array operator()(const Array& tokens, PromptCache& cache) const = 0;
  /// Fresh caches, one per layer, of the kinds the architecture needs
  /// (rotating for sliding-window layers). `max_kv_size` > 0 makes every
  /// attention cache rotating with that size, as mlx-lm's option.
  virtual PromptCache make_cache(int max_kv_size = 0) const = 0;
  /// Every weight by its checkpoint name (mlx-lm's names), for saving.
  virtual std::vector<std::pair<std::string, Array>> weights() const = 0;
  const ModelInfo& info() const { return info_; }

 protected:
  ModelInfo info_;
};

/// How load() treats the weights.
struct LoadConfig {
  /// The compute dtype; floating weights are converted, quantized weights
  /// dequantized into it. Absent: the checkpoint's own (float32 for GGUF
  /// files, whose quantized weights stay quantized).
  std::optional<DType> dtype;
  /// Quantize the linear layers (and embeddings) on load, as mlx-lm's
  /// convert: affine with these bits and group size.
  std::optional<int> quantize_bits;
  int quantize_group_size = 64;
  /// GGUF only: un-permute the q/k rows that llama.cpp's converter permuted
  /// (true), or keep them and use traditional RoPE (false; same logits).
  bool gguf_unpermute = true;
  /// Where the weights live; absent: the default device.
  std::optional<Device> device;
};

/// A loaded checkpoint.
struct Loaded {
  std::shared_ptr<Model> model;
  Tokenizer tokenizer;
  /// config.json as text (synthesized from the metadata for GGUF).
  std::string config_json;
  /// generation_config.json's eos ids merged with the tokenizer's.
  std::vector<int> eos_token_ids;
};

/// Loads a checkpoint folder (config.json, model.safetensors or shards with
/// model.safetensors.index.json, tokenizer.json, tokenizer_config.json,
/// generation_config.json) or a .gguf file. Missing, unexpected or
/// mis-shaped tensors are all listed in one nuvec::Error; an unknown
/// model_type is an error naming it.
Loaded load(const std::string& path, const LoadConfig& config = {});

/// The model alone, from a folder without a tokenizer or a GGUF file.
std::shared_ptr<Model> load_model(const std::string& path, const LoadConfig& config = {});

/// Tensor parallelism (docs/lm.md): keeps this rank's share of `model`
/// (every process of `group` loads the same checkpoint and calls it): its
/// query and key/value heads and its part of each MLP, with the attention
/// output and MLP down projections summed over the group, so every rank
/// computes the same logits. The heads and the MLP width must split over
/// the group (quantized layers also at whole groups); mixtures of experts
/// and qwen3_next are not sharded yet. Errors leave the model whole; a
/// group of one changes nothing.
void shard_model(Model& model, const distributed::Group& group);

/// The architectures the registry knows, sorted.
std::vector<std::string> supported_model_types();

/// Writes `model` as an mlx-lm checkpoint folder: config.json (the given
/// text, with a "quantization" entry when quantized), model.safetensors, and
/// the tokenizer files copied from `source_dir` when there are any.
void save_checkpoint(const Model& model, const std::string& config_json, const std::string& out_dir,
                     const std::string& source_dir = "");

}  // namespace nuvec::lm
