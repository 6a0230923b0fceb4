// qwen2 (biases on q/k/v), qwen3 (per-head q/k RMS norms) and qwen3_moe
// (qwen3 attention, a softmax router over experts), as mlx-lm's models.
#include <algorithm>

#include "models/decoder.h"

namespace nuvec::lm::detail {

std::shared_ptr<Model> build_qwen2(const Config& cfg, Weights& w) {
  DecoderSpec s = base_spec(cfg, 1000000.0, true, 1e-6);
  s.attention_bias = true;
  return build_decoder(std::move(s), w);
}

std::shared_ptr<Model> build_qwen3(const Config& cfg, Weights& w) {
  DecoderSpec s = base_spec(cfg, 1000000.0, true, 1e-6);
  s.qk_norm = true;
  return build_decoder(std::move(s), w);
}

std::shared_ptr<Model> build_qwen3_moe(const Config& cfg, Weights& w) {
  DecoderSpec s = base_spec(cfg, 1000000.0, false, 1e-6);
  s.qk_norm = true;
  s.router = Router::softmax_topk;
  s.experts = cfg.get_int("num_experts");
  s.top_k = cfg.get_int("num_experts_per_tok");
  s.moe_intermediate = cfg.get_int("moe_intermediate_size");
  s.norm_topk = cfg.get_bool("norm_topk_prob", false);
  // mlx-lm: layer i is sparse unless listed in mlp_only_layers, when
  // (i + 1) % decoder_sparse_step == 0.
  const int sparse_step = cfg.get_int("decoder_sparse_step", 1);
  if (sparse_step <= 0) fail(ErrorKind::io, cfg.source() + ": decoder_sparse_step must be positive");
  std::vector<int> dense_only = cfg.int_list("mlp_only_layers");
  for (int i = 0; i < s.layers; ++i) {
    const bool listed = std::find(dense_only.begin(), dense_only.end(), i) != dense_only.end();
    s.moe_layer.push_back(!listed && s.experts > 0 && (i + 1) % sparse_step == 0);
  }
  if (s.top_k <= 0 || s.top_k > s.experts)
    fail(ErrorKind::io, cfg.source() + ": num_experts_per_tok must be in [1, num_experts]");
  return build_decoder(std::move(s), w);
}

}  // namespace nuvec::lm::detail
