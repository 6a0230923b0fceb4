#include "gguf_map.h"

#include <map>
#include <nlohmann/json.hpp>

#include "config.h"

namespace nuvec::lm::detail {

std::string gguf_to_mlx_name(const std::string& name) {
  static const std::map<std::string, std::string> top = {
      {"token_embd", "model.embed_tokens"}, {"output_norm", "model.norm"}, {"output", "lm_head"}};
  static const std::map<std::string, std::string> block = {
      {"attn_q", "self_attn.q_proj"},         {"attn_k", "self_attn.k_proj"},
      {"attn_v", "self_attn.v_proj"},         {"attn_output", "self_attn.o_proj"},
      {"attn_q_norm", "self_attn.q_norm"},    {"attn_k_norm", "self_attn.k_norm"},
      {"attn_norm", "input_layernorm"},       {"ffn_norm", "post_attention_layernorm"},
      {"ffn_gate", "mlp.gate_proj"},          {"ffn_up", "mlp.up_proj"},
      {"ffn_down", "mlp.down_proj"},          {"post_attention_norm", "post_attention_layernorm"},
      {"post_ffw_norm", "post_feedforward_layernorm"}};
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return name;
  std::string stem = name.substr(0, dot), suffix = name.substr(dot);
  if (auto it = top.find(stem); it != top.end()) return it->second + suffix;
  if (stem.rfind("blk.", 0) == 0) {
    const auto d2 = stem.find('.', 4);
    if (d2 == std::string::npos) return name;
    std::string layer = stem.substr(4, d2 - 4), part = stem.substr(d2 + 1);
    if (layer.empty() || layer.find_first_not_of("0123456789") != std::string::npos) return name;
    if (auto it = block.find(part); it != block.end())
      return "model.layers." + layer + "." + it->second + suffix;
  }
  return name;
}

namespace {

const io::GGUFMetaData* find(const std::unordered_map<std::string, io::GGUFMetaData>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : &it->second;
}

std::optional<double> number(const std::unordered_map<std::string, io::GGUFMetaData>& m, const std::string& k,
                             const std::string& file) {
  const auto* v = find(m, k);
  if (!v) return std::nullopt;
  const Array* a = std::get_if<Array>(v);
  if (!a || a->size() != 1) fail(ErrorKind::io, file + ": metadata " + k + " must be a number");
  return a->astype(float64).item<double>();
}

std::string text(const std::unordered_map<std::string, io::GGUFMetaData>& m, const std::string& k) {
  const auto* v = find(m, k);
  const std::string* s = v ? std::get_if<std::string>(v) : nullptr;
  return s ? *s : std::string();
}

// llama.cpp's converter reorders each head's rows from [2, half] to
// [half, 2] (interleaved pairs, for its traditional RoPE); this undoes it.
Array unpermute_rows(const Array& w, int heads) {
  const int rows = w.shape(0);
  Shape s{heads, rows / heads / 2, 2};
  for (int i = 1; i < w.ndim(); ++i) s.push_back(w.shape(i));
  return w.reshape(s).swapaxes(1, 2).reshape(w.shape());
}

}  // namespace

GgufCheckpoint read_gguf(const std::string& file, bool unpermute) {
  auto [tensors, meta] = io::load_gguf(file);
  GgufCheckpoint out;
  const std::string arch = text(meta, "general.architecture");
  if (arch.empty()) fail(ErrorKind::io, file + ": no general.architecture in the metadata");
  auto num = [&](const std::string& key) { return number(meta, arch + "." + key, file); };
  auto need = [&](const std::string& key) {
    auto v = num(key);
    if (!v) fail(ErrorKind::io, file + ": missing metadata " + arch + "." + key);
    return *v;
  };
  if (tensors.count("rope_freqs.weight"))
    fail(ErrorKind::invalid_argument, file + ": rope_freqs (llama3 rope scaling in GGUF) is not supported yet");
  nlohmann::json c;
  c["model_type"] = arch;
  c["hidden_size"] = static_cast<int>(need("embedding_length"));
  c["num_hidden_layers"] = static_cast<int>(need("block_count"));
  c["intermediate_size"] = static_cast<int>(need("feed_forward_length"));
  const int heads = static_cast<int>(need("attention.head_count"));
  const int kv = static_cast<int>(num("attention.head_count_kv").value_or(heads));
  c["num_attention_heads"] = heads;
  c["num_key_value_heads"] = kv;
  c["rms_norm_eps"] = need("attention.layer_norm_rms_epsilon");
  c["rope_theta"] = num("rope.freq_base").value_or(10000.0);
  if (auto kl = num("attention.key_length")) c["head_dim"] = static_cast<int>(*kl);
  if (auto ctx = num("context_length")) c["max_position_embeddings"] = static_cast<int>(*ctx);
  auto emb = tensors.find("token_embd.weight");
  if (emb == tensors.end()) fail(ErrorKind::io, file + ": no token_embd.weight");
  c["vocab_size"] = emb->second.shape(0);
  c["tie_word_embeddings"] = !tensors.count("output.weight");
  if (auto eos = number(meta, "tokenizer.ggml.eos_token_id", file)) c["eos_token_id"] = static_cast<int>(*eos);
  if (num("rope.scaling.factor") && text(meta, arch + ".rope.scaling.type") == "linear")
    c["rope_scaling"] = {{"type", "linear"}, {"factor", *num("rope.scaling.factor")}};
  // Only llama.cpp's llama-family conversion permutes q/k.
  const bool permuted = arch == "llama" || arch == "mistral";
  if (permuted && !unpermute) c["rope_traditional"] = true;
  for (auto& [name, a] : tensors) {
    std::string mlx = gguf_to_mlx_name(name);
    Array v = a;
    if (permuted && unpermute && v.ndim() >= 1) {
      if (mlx.find(".self_attn.q_proj.") != std::string::npos && v.shape(0) % (2 * heads) == 0)
        v = unpermute_rows(v, heads);
      else if (mlx.find(".self_attn.k_proj.") != std::string::npos && v.shape(0) % (2 * kv) == 0)
        v = unpermute_rows(v, kv);
    }
    out.weights.emplace(std::move(mlx), v);
  }
  out.config_json = c.dump();
  out.meta = std::move(meta);
  return out;
}

}  // namespace nuvec::lm::detail
