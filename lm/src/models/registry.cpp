// model_type -> architecture (mlx-lm's names and remappings).
#include <algorithm>
#include <map>

#include "models/decoder.h"
#include "nuvec/lm/model.h"

namespace nuvec::lm {
namespace detail {
namespace {
const std::map<std::string, Builder>& registry() {
  static const std::map<std::string, Builder> r = {
      {"llama", build_llama},     {"mistral", build_llama},       {"qwen2", build_qwen2},
      {"qwen3", build_qwen3},     {"qwen3_moe", build_qwen3_moe}, {"mixtral", build_mixtral},
      {"gemma3", build_gemma3},   {"gemma3_text", build_gemma3},
      {"qwen3_next", build_qwen3_next},
  };
  return r;
}
}  // namespace

Builder find_builder(const std::string& model_type) {
  auto it = registry().find(model_type);
  if (it != registry().end()) return it->second;
  std::string known;
  for (const auto& t : supported_model_types()) known += (known.empty() ? "" : ", ") + t;
  fail(ErrorKind::invalid_argument,
       "model_type \"" + model_type + "\" is not supported (supported: " + known + ")");
}
}  // namespace detail

std::vector<std::string> supported_model_types() {
  std::vector<std::string> out;
  for (const auto& [k, v] : detail::registry()) out.push_back(k);
  return out;
}

}  // namespace nuvec::lm
