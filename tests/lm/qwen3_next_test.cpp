// qwen3_next beyond the mlx-lm references of model_test.cpp: its
// ArraysCache (the contract of cache.h, saving and loading, resuming a run
// from a saved cache), and batch rows against solo runs.
#include <gtest/gtest.h>

#include <filesystem>

#include "lm/support/lm_refs.h"
#include "nuvec/io.h"
#include "nuvec/lm.h"

namespace nuvec::lm_test {
namespace {

std::shared_ptr<lm::Model> next_model() {
  return lm::load_model(refs_path("lm_tiny/qwen3_next"));
}

std::vector<int> prompt_of(int n, int salt = 0) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 37 + 11 + salt) % 128);
  return ids;
}

std::vector<float> floats_of(const Array& a) {
  return a.astype(float32).reshape({-1}).to_vector<float>();
}

TEST(Qwen3Next, MakesArraysCachesForDeltaNetLayersAndKVCachesForAttention) {
  auto m = next_model();
  lm::PromptCache c = m->make_cache();
  ASSERT_EQ(c.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c[i]->kind(), "ArraysCache") << i;
  EXPECT_EQ(c[3]->kind(), "KVCache");
  EXPECT_EQ(m->make_cache(8)[3]->kind(), "RotatingKVCache");
  // After 5 tokens: the conv's last 3 inputs (2 * 2 * 16 + 4 * 16 channels)
  // and the float32 state [1, 4, 16, 16]; offsets count the tokens.
  (*m)(array(prompt_of(5), Shape{1, 5}), c);
  auto st = c[0]->state();
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].shape(), (Shape{1, 3, 128}));
  EXPECT_EQ(st[1].shape(), (Shape{1, 4, 16, 16}));
  EXPECT_EQ(st[1].dtype(), float32);
  for (auto& l : c) EXPECT_EQ(l->offset(), 5);
}

TEST(Qwen3Next, ArraysCacheKeepsItsContract) {
  lm::ArraysCache c(2);
  EXPECT_EQ(c.size(), 2);
  EXPECT_FALSE(c.get(0).has_value());
  EXPECT_TRUE(c.state().empty());
  EXPECT_THROW(c.update_and_fetch(zeros({1, 1, 1, 4}), zeros({1, 1, 1, 4})),
               Error);
  EXPECT_THROW(c.attend(zeros({1, 1, 1, 4}), zeros({1, 1, 1, 4}),
                        zeros({1, 1, 1, 4}), 1.0f),
               Error);
  EXPECT_THROW(c.get(2), Error);
  EXPECT_THROW(c.set(-1, zeros({1})), Error);
  c.set(0, array({1.0f, 2.0f}));
  EXPECT_EQ(c.state().size(), 1u);  // slot 1 still empty
  c.set(1, array({3.0f}));
  c.advance(4);
  EXPECT_EQ(c.offset(), 4);
  EXPECT_TRUE(c.trim(0));
  EXPECT_FALSE(c.trim(1));
  EXPECT_EQ(c.offset(), 4);
  auto copy = c.clone();
  c.set(0, array({9.0f}));
  EXPECT_EQ(copy->state()[0].to_vector<float>(),
            (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(copy->offset(), 4);
  lm::ArraysCache d(2);
  EXPECT_THROW(d.set_state({zeros({1}), zeros({1}), zeros({1})}, 0), Error);
  d.set_state({array({5.0f})}, 3);
  EXPECT_EQ(d.offset(), 3);
  EXPECT_TRUE(d.get(0).has_value());
  EXPECT_FALSE(d.get(1).has_value());
}

TEST(Qwen3Next, ResumingFromASavedPromptCacheEqualsTheUninterruptedRun) {
  auto m = next_model();
  auto ids = prompt_of(20);
  lm::GenerateOptions o;
  o.max_tokens = 16;
  o.prefill_step_size = 4;
  auto whole = lm::generate_tokens(*m, ids, o);
  lm::PromptCache c = m->make_cache();
  std::vector<int> head(ids.begin(), ids.begin() + 12),
      tail(ids.begin() + 12, ids.end());
  for (size_t i = 0; i < head.size(); i += 4)
    (*m)(array(std::vector<int>(head.begin() + i, head.begin() + i + 4),
               Shape{1, 4}),
         c);
  lm::eval_cache(c);
  auto file = (std::filesystem::temp_directory_path() /
               "nuvec_qwen3_next_cache.safetensors")
                  .string();
  lm::save_prompt_cache(file, c);
  lm::PromptCache loaded = lm::load_prompt_cache(file);
  ASSERT_EQ(loaded.size(), 4u);
  EXPECT_EQ(loaded[0]->kind(), "ArraysCache");
  EXPECT_EQ(loaded[0]->offset(), 12);
  EXPECT_EQ(lm::generate_tokens(*m, tail, o, &loaded), whole);
  std::filesystem::remove(file);
}

TEST(Qwen3Next, APromptCacheWithMoreArraysThanSlotsIsAnError) {
  auto file = (std::filesystem::temp_directory_path() /
               "nuvec_bad_arrays_cache.safetensors")
                  .string();
  save_safetensors(
      file, {{"0.0", zeros({1})}, {"0.1", zeros({1})}, {"0.2", zeros({1})}},
      {{"2.0", "ArraysCache"}, {"0.0.0", "3"}, {"0.0.1", "2"}});
  EXPECT_THROW(lm::load_prompt_cache(file), Error);
  std::filesystem::remove(file);
}

TEST(Qwen3Next, EachRowOfABatchMatchesItsSoloRun) {
  auto m = next_model();
  auto a = prompt_of(9), b = prompt_of(9, 5);
  std::vector<int> both(a);
  both.insert(both.end(), b.begin(), b.end());
  lm::PromptCache c = m->make_cache();
  Array batch = (*m)(array(both, Shape{2, 9}), c);
  Array step = (*m)(array({7, 8}, Shape{2, 1}), c);
  int row = 0;
  for (const auto& ids : {a, b}) {
    lm::PromptCache s = m->make_cache();
    Array solo = (*m)(array(ids, Shape{1, 9}), s);
    Array solo_step = (*m)(array({row == 0 ? 7 : 8}, Shape{1, 1}), s);
    auto pick = [&](const Array& x) {
      return slice(x, {row, 0, 0}, {row + 1, x.shape(1), x.shape(2)});
    };
    EXPECT_TRUE(close_rel(floats_of(pick(batch)), floats_of(solo), 1e-5))
        << "row " << row;
    EXPECT_TRUE(close_rel(floats_of(pick(step)), floats_of(solo_step), 1e-5))
        << "row " << row;
    ++row;
  }
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() &&
         s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(Qwen3Next, TheHuggingFaceLayoutGivesTheSameLogits) {
  // The tiny checkpoint written back in Hugging Face's layout (the inverse
  // of mlx-lm's Model.sanitize): experts one by one, the conv weight
  // [C, 1, K], norms stored as w - 1, and an mtp tensor mlx-lm drops.
  namespace fs = std::filesystem;
  auto [w, meta] =
      load_safetensors(refs_path("lm_tiny/qwen3_next/model.safetensors"));
  std::unordered_map<std::string, Array> hf;
  for (const auto& [name, a] : w) {
    const auto at = name.find("switch_mlp.");
    if (at != std::string::npos) {
      for (int e = 0; e < a.shape(0); ++e)
        hf[name.substr(0, at) + "experts." + std::to_string(e) + "." +
           name.substr(at + 11)] = take(a, e, 0);
    } else if (ends_with(name, "conv1d.weight")) {
      hf[name] = swapaxes(a, 1, 2);
    } else if (ends_with(name, ".input_layernorm.weight") ||
               ends_with(name, ".post_attention_layernorm.weight") ||
               name == "model.norm.weight" ||
               ends_with(name, ".q_norm.weight") ||
               ends_with(name, ".k_norm.weight")) {
      hf[name] = a - 1.0f;
    } else {
      hf[name] = a;
    }
  }
  hf["mtp.fc.weight"] = zeros({4, 4});
  fs::path dir = fs::temp_directory_path() / "nuvec_qwen3_next_hf";
  fs::create_directories(dir);
  fs::copy_file(refs_path("lm_tiny/qwen3_next/config.json"),
                dir / "config.json", fs::copy_options::overwrite_existing);
  save_safetensors((dir / "model.safetensors").string(), hf);
  auto mlx_layout = next_model();
  auto hf_layout = lm::load_model(dir.string());
  auto ids = prompt_of(7);
  lm::PromptCache a = mlx_layout->make_cache(), b = hf_layout->make_cache();
  Array want = (*mlx_layout)(array(ids, Shape{1, 7}), a);
  Array got = (*hf_layout)(array(ids, Shape{1, 7}), b);
  // (w - 1) + 1 may differ from w in the last bit.
  EXPECT_TRUE(close_rel(floats_of(got), floats_of(want), 1e-5));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nuvec::lm_test
