// Samplers and logits processors against mlx-lm's (recorded by
// tools/record_mlx_lm_samplers.py): the kept positions of each filter, the
// tokens of seeded sampling, and the processed logits.
#include <gtest/gtest.h>

#include <cmath>

#include "nuvec/lm.h"
#include "lm/support/lm_refs.h"

namespace nuvec::lm_test {
namespace {

const nlohmann::json& refs() {
  static const nlohmann::json r = read_json("lm_samplers/refs.json");
  return r;
}

Array ref_logits() {
  auto v = hex_floats(refs()["logits_f32_hex"]);
  return array(v, Shape{1, static_cast<int>(v.size())});
}

Array logprobs() {
  Array x = ref_logits();
  return x - logsumexp(x, {-1}, true);
}

std::vector<int> kept(const Array& filtered) {
  auto v = filtered.reshape({-1}).to_vector<float>();
  std::vector<int> out;
  for (size_t i = 0; i < v.size(); ++i)
    if (std::isfinite(v[i])) out.push_back(static_cast<int>(i));
  return out;
}

TEST(LmSampler, FiltersKeepMlxLmsPositions) {
  for (const auto& f : refs()["filters"]) {
    const std::string name = f["name"];
    Array out = name == "top_k"   ? lm::apply_top_k(logprobs(), 5)
                : name == "top_p" ? lm::apply_top_p(logprobs(), 0.7f)
                : name == "min_p" ? lm::apply_min_p(logprobs(), 0.1f)
                                  : lm::apply_min_p(logprobs(), 0.9f, 4);
    EXPECT_EQ(kept(out), ints(f["kept"])) << name;
  }
}

TEST(LmSampler, SeededSamplingDrawsMlxLmsTokens) {
  for (const auto& s : refs()["samplers"]) {
    const auto& o = s["options"];
    lm::SamplerOptions so;
    so.temp = o.value("temp", 0.0f);
    so.top_p = o.value("top_p", 0.0f);
    so.top_k = o.value("top_k", 0);
    so.min_p = o.value("min_p", 0.0f);
    auto sampler = lm::make_sampler(so);
    random::seed(s["seed"].get<uint64_t>());
    std::vector<int> got;
    for (int i = 0; i < 24; ++i) got.push_back(static_cast<int>(sampler(logprobs()).astype(int32).item<int32_t>()));
    EXPECT_EQ(got, ints(s["tokens"])) << o.dump();
  }
}

TEST(LmSampler, LogitsProcessorsMatchMlxLm) {
  for (const auto& p : refs()["processors"]) {
    const auto& o = p["options"];
    lm::ProcessorOptions po;
    if (o.contains("repetition_penalty")) {
      po.repetition_penalty = o["repetition_penalty"].get<float>();
      po.repetition_context_size = o.value("repetition_context_size", 20);
    }
    if (o.contains("presence_penalty")) po.presence_penalty = o["presence_penalty"].get<float>();
    if (o.contains("frequency_penalty")) po.frequency_penalty = o["frequency_penalty"].get<float>();
    if (o.contains("logit_bias"))
      for (auto it = o["logit_bias"].begin(); it != o["logit_bias"].end(); ++it)
        po.logit_bias[std::stoi(it.key())] = it.value().get<float>();
    Array x = ref_logits();
    for (auto& f : lm::make_logits_processors(po)) x = f(ints(p["history"]), x);
    EXPECT_TRUE(close_rel(x.reshape({-1}).to_vector<float>(), hex_floats(p["logits_f32_hex"]), 0)) << o.dump();
  }
}

TEST(LmSampler, InvalidOptionsAreErrors) {
  EXPECT_THROW(lm::apply_top_k(logprobs(), 0).eval(), Error);
  EXPECT_THROW(lm::apply_top_k(logprobs(), 96).eval(), Error);
  EXPECT_THROW(lm::apply_min_p(logprobs(), 1.5f), Error);
  lm::SamplerOptions bad;
  bad.temp = -1;
  EXPECT_THROW(lm::make_sampler(bad), Error);
}

}  // namespace
}  // namespace nuvec::lm_test
