// Generation contracts on the tiny mlx-lm checkpoints: chunk plans,
// resuming from saved prompt caches, speculative decoding equal to greedy,
// the rotating and quantized caches, and invalid calls.
#include <gtest/gtest.h>

#include <filesystem>

#include "nuvec/lm.h"
#include "lm/support/lm_refs.h"

namespace nuvec::lm_test {
namespace {

std::shared_ptr<lm::Model> tiny(const std::string& name) { return lm::load_model(refs_path("lm_tiny/" + name)); }

std::vector<int> prompt_of(int n, int vocab = 128) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 37 + 11) % vocab);
  return ids;
}

bool same_bits(const Array& a, const Array& b) {
  if (a.shape() != b.shape()) return false;
  auto x = a.reshape({-1}).to_vector<float>(), y = b.reshape({-1}).to_vector<float>();
  return std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

TEST(LmGenerate, TheSameChunkPlanGivesTheSameBits) {
  auto m = tiny("llama");
  lm::GenerateOptions o;
  o.max_tokens = 12;
  o.prefill_step_size = 5;
  auto ids = prompt_of(23);
  EXPECT_EQ(lm::generate_tokens(*m, ids, o), lm::generate_tokens(*m, ids, o));
  // And the cache after the same plan holds the same bits.
  lm::PromptCache a, b;
  lm::generate_tokens(*m, ids, o, &a);
  lm::generate_tokens(*m, ids, o, &b);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    auto sa = a[i]->state(), sb = b[i]->state();
    for (size_t j = 0; j < sa.size(); ++j) EXPECT_TRUE(same_bits(sa[j], sb[j])) << i << "." << j;
  }
}

TEST(LmGenerate, ResumingFromASavedPromptCacheEqualsTheUninterruptedRun) {
  for (const char* name : {"llama", "gemma3_text"}) {  // contiguous and rotating caches
    auto m = tiny(name);
    auto ids = prompt_of(20);
    lm::GenerateOptions o;
    o.max_tokens = 16;
    o.prefill_step_size = 4;
    auto whole = lm::generate_tokens(*m, ids, o);
    // Prefill the first 12 tokens (a chunk boundary of the same plan), save,
    // load, and continue with the rest of the prompt.
    lm::PromptCache c = m->make_cache();
    std::vector<int> head(ids.begin(), ids.begin() + 12), tail(ids.begin() + 12, ids.end());
    for (size_t i = 0; i < head.size(); i += 4)
      (*m)(array(std::vector<int>(head.begin() + i, head.begin() + i + 4), Shape{1, 4}), c);
    lm::eval_cache(c);
    auto file = (std::filesystem::temp_directory_path() / "nuvec_prompt_cache.safetensors").string();
    lm::save_prompt_cache(file, c, {{"model", name}});
    std::unordered_map<std::string, std::string> meta;
    lm::PromptCache loaded = lm::load_prompt_cache(file, &meta);
    EXPECT_EQ(meta["model"], name);
    EXPECT_EQ(lm::generate_tokens(*m, tail, o, &loaded), whole) << name;
    std::filesystem::remove(file);
  }
}

TEST(LmGenerate, SpeculativeDecodingEqualsTheTargetsGreedyTokens) {
  auto target = tiny("llama"), draft = tiny("llama_q4");
  lm::GenerateOptions o;
  o.max_tokens = 24;
  for (int n : {1, 7, 19}) {
    auto ids = prompt_of(n);
    auto want = lm::generate_tokens(*target, ids, o);
    for (int k : {1, 3, 7}) EXPECT_EQ(lm::speculative_generate_tokens(*target, *draft, ids, o, k), want) << n << " " << k;
  }
}

TEST(LmGenerate, AQuantizedCacheHoldsTheKeysWithinItsQuantizationError) {
  // Keys and values of head dimension 64 in two updates (a prompt, then a
  // step): what the cache returns is the dequantization of the 8-bit groups
  // of 64, so within half a step of each group's range.
  random::seed(3);
  Array k1 = random::normal({1, 2, 7, 64}), v1 = random::normal({1, 2, 7, 64});
  Array k2 = random::normal({1, 2, 1, 64}), v2 = random::normal({1, 2, 1, 64});
  lm::QuantizedKVCache c(64, 8);
  c.update_and_fetch(k1, v1);
  auto [k, v] = c.update_and_fetch(k2, v2);
  EXPECT_EQ(c.offset(), 8);
  Array want_k = concatenate({k1, k2}, 2), want_v = concatenate({v1, v2}, 2);
  ASSERT_EQ(k.shape(), want_k.shape());
  // 8 bits over a range of about 8 standard deviations: steps of ~0.03.
  EXPECT_LT(max(abs(k - want_k)).item<float>(), 0.03f);
  EXPECT_LT(max(abs(v - want_v)).item<float>(), 0.03f);
  EXPECT_GT(max(abs(k - want_k)).item<float>(), 0.0f);  // it did quantize
  // quantize_cache of a model's cache keeps the tokens it holds.
  lm::PromptCache pc;
  pc.push_back(std::make_unique<lm::KVCache>());
  pc[0]->update_and_fetch(k1, v1);
  lm::quantize_cache(pc, 64, 8);
  EXPECT_EQ(pc[0]->kind(), "QuantizedKVCache");
  EXPECT_EQ(pc[0]->offset(), 7);
}

TEST(LmGenerate, MaxKvSizeMakesRotatingCaches) {
  auto m = tiny("llama");
  auto c = m->make_cache(8);
  for (auto& l : c) EXPECT_EQ(l->kind(), "RotatingKVCache");
  lm::GenerateOptions o;
  o.max_tokens = 20;
  o.max_kv_size = 8;
  EXPECT_EQ(lm::generate_tokens(*m, prompt_of(19), o).size(), 20u);
}

TEST(LmGenerate, InvalidCallsAreErrors) {
  auto m = tiny("llama");
  EXPECT_THROW(lm::generate_tokens(*m, {}), Error);
  EXPECT_THROW(lm::generate_tokens(*m, {1, 128}), Error);
  auto d = tiny("qwen3");
  lm::GenerateOptions o;
  EXPECT_THROW(lm::speculative_generate_tokens(*m, *d, {1}, o, 9), Error);
}

}  // namespace
}  // namespace nuvec::lm_test
