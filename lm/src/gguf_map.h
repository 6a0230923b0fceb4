// GGUF checkpoints: llama.cpp's tensor names mapped to mlx-lm's, a
// config.json synthesized from the metadata, and the q/k rows that
// llama.cpp's converter permutes put back (docs/lm.md, "GGUF").
#pragma once

#include <string>
#include <unordered_map>

#include "models/blocks.h"
#include "nuvec/gguf.h"

namespace nuvec::lm::detail {

struct GgufCheckpoint {
  WeightMap weights;  // mlx-lm names
  std::string config_json;
  std::unordered_map<std::string, io::GGUFMetaData> meta;
};

/// Reads `file`. With `unpermute`, q/k rows are restored to the Hugging
/// Face order (non-traditional RoPE); without, they stay and the config
/// asks for traditional RoPE (the same logits).
GgufCheckpoint read_gguf(const std::string& file, bool unpermute);

/// The mlx-lm name of a GGUF tensor name ("blk.3.attn_q.weight" ->
/// "model.layers.3.self_attn.q_proj.weight"); unknown names unchanged.
std::string gguf_to_mlx_name(const std::string& name);

}  // namespace nuvec::lm::detail
