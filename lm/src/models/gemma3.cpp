// gemma3 text models, as mlx-lm's models/gemma3_text.py: (1 + w) RMS norms,
// norms after attention and around the MLP, gelu (tanh) MLP, q/k norms,
// embeddings scaled by sqrt(hidden) in bfloat16, attention scale
// query_pre_attn_scalar^-1/2, and every sliding_window_pattern-th layer
// global (rope_theta, rope_scaling), the others a sliding window with
// rope_local_base_freq.
#include <cmath>

#include "models/decoder.h"

namespace nuvec::lm::detail {

std::shared_ptr<Model> build_gemma3(const Config& cfg_in, Weights& w) {
  Config cfg = cfg_in;
  // A full gemma3 config nests the text model's under text_config.
  if (cfg.has("text_config")) {
    nlohmann::json j = cfg.json()["text_config"];
    j["model_type"] = "gemma3_text";
    cfg = Config(j, cfg.source() + ": text_config");
  }
  nlohmann::json j = cfg.json();
  if (!j.contains("head_dim")) j["head_dim"] = 256;
  Config c(j, cfg.source());
  DecoderSpec s = base_spec(c, 1000000.0, true, 1e-6);
  s.gemma = true;
  s.qk_norm = true;
  s.tie_embeddings = !w.has("lm_head.weight");
  const int pattern = c.get_int("sliding_window_pattern", 6);
  const int window = c.get_int("sliding_window", 512);
  const float local_base = static_cast<float>(c.get_double("rope_local_base_freq", 10000.0));
  const double qscale = c.get_double("query_pre_attn_scalar", 256.0);
  if (pattern <= 0) fail(ErrorKind::io, c.source() + ": sliding_window_pattern must be positive");
  for (int i = 0; i < s.layers; ++i) {
    AttentionSpec& a = s.attention[i];
    a.scale = static_cast<float>(std::pow(qscale, -0.5));
    if ((i + 1) % pattern != 0) {
      s.window[i] = window;
      a.rope_base = local_base;
      a.rope_freqs.reset();
      a.rope_scale = 1.0f;
    }
  }
  return build_decoder(std::move(s), w);
}

}  // namespace nuvec::lm::detail
