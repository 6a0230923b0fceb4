// llama (Llama 2, 3, 3.1 with llama3 rope scaling, 3.2) and mistral, as
// mlx-lm's models/llama.py (mistral is remapped to it): optional attention
// and MLP biases, layer_types with sliding-window layers.
#include "models/decoder.h"

namespace nuvec::lm::detail {

std::shared_ptr<Model> build_llama(const Config& cfg, Weights& w) {
  DecoderSpec s = base_spec(cfg, 10000.0, true, 1e-5);
  s.attention_bias = cfg.get_bool("attention_bias", false);
  s.mlp_bias = cfg.get_bool("mlp_bias", false);
  if (cfg.has("layer_types")) {
    const auto& types = cfg.json()["layer_types"];
    if (!types.is_array() || types.size() != static_cast<size_t>(s.layers))
      fail(ErrorKind::io, cfg.source() + ": \"layer_types\" must list every layer");
    for (int i = 0; i < s.layers; ++i)
      if (types[i] == "sliding_attention") s.window[i] = cfg.get_int("sliding_window");
  }
  return build_decoder(std::move(s), w);
}

}  // namespace nuvec::lm::detail
