// mixtral (and mistral-style MoE), as mlx-lm's models/mixtral.py: top-k of
// the router's logits, a softmax over those, the experts of
// block_sparse_moe.switch_mlp.
#include "models/decoder.h"

namespace nuvec::lm::detail {

std::shared_ptr<Model> build_mixtral(const Config& cfg, Weights& w) {
  DecoderSpec s = base_spec(cfg, 1e6, false, 1e-5);
  s.router = Router::topk_softmax;
  s.experts = cfg.get_int("num_local_experts");
  s.top_k = cfg.get_int("num_experts_per_tok");
  s.moe_intermediate = s.intermediate;
  s.moe_prefix = "block_sparse_moe";
  if (s.top_k <= 0 || s.top_k > s.experts)
    fail(ErrorKind::io, cfg.source() + ": num_experts_per_tok must be in [1, num_local_experts]");
  return build_decoder(std::move(s), w);
}

}  // namespace nuvec::lm::detail
