// The paged cache and batch generation on the tiny mlx-lm checkpoints: a
// batch's tokens equal each prompt's solo generate_tokens (the contiguous
// cache), bit for bit, whatever else is in the batch; the paged cache's
// logits equal the contiguous cache's bit for bit; the allocator; invalid
// calls.
#include <gtest/gtest.h>

#include "lm/support/lm_refs.h"
#include "nuvec/lm.h"

namespace nuvec::lm_test {
namespace {

std::shared_ptr<lm::Model> tiny(const std::string& name) {
  return lm::load_model(refs_path("lm_tiny/" + name));
}

// Prompts of different lengths (1 to about 40 tokens) and contents.
std::vector<std::vector<int>> prompts_of(int n, int vocab = 128) {
  std::vector<std::vector<int>> out;
  for (int p = 0; p < n; ++p) {
    const int len = 1 + (p * 13 + 4) % 41;
    std::vector<int> ids;
    for (int i = 0; i < len; ++i) ids.push_back((i * 37 + p * 19 + 11) % vocab);
    out.push_back(ids);
  }
  return out;
}

std::vector<std::vector<int>> solo(const lm::Model& m,
                                   const std::vector<std::vector<int>>& prompts,
                                   const lm::GenerateOptions& o) {
  std::vector<std::vector<int>> out;
  for (const auto& p : prompts) out.push_back(lm::generate_tokens(m, p, o));
  return out;
}

TEST(LmBatch, GreedyTokensEqualEachPromptAlone) {
  for (const char* name : {"llama", "qwen3", "llama_bf16"}) {
    auto m = tiny(name);
    lm::GenerateOptions o;
    o.max_tokens = 12;
    o.prefill_step_size = 7;  // several chunks for the longer prompts
    auto prompts = prompts_of(11);
    auto want = solo(*m, prompts, o);
    for (size_t n : {1u, 3u, 8u, 11u}) {
      std::vector<std::vector<int>> some(
          prompts.begin(), prompts.begin() + static_cast<std::ptrdiff_t>(n));
      for (int bs : {4, 16}) {
        auto got = lm::batch_generate_tokens(*m, some, o, bs);
        ASSERT_EQ(got.size(), n);
        for (size_t i = 0; i < n; ++i)
          EXPECT_EQ(got[i], want[i])
              << name << " batch " << n << " block " << bs << " prompt " << i;
      }
    }
  }
}

TEST(LmBatch, EachRowStopsAtItsOwnEos) {
  auto m = tiny("llama");
  lm::GenerateOptions o;
  o.max_tokens = 16;
  auto prompts = prompts_of(9);
  auto free_run = solo(*m, prompts, o);
  // An id that row 0 generates at its 4th step: rows stop at different steps
  // (some never), the EOS token included as generate_tokens does.
  o.eos_token_ids = {free_run[0][3]};
  auto want = solo(*m, prompts, o);
  ASSERT_EQ(want[0].size(), 4u);
  bool some_longer = false;
  for (const auto& w : want) some_longer |= w.size() > 4;
  EXPECT_TRUE(some_longer);
  EXPECT_EQ(lm::batch_generate_tokens(*m, prompts, o), want);
  // max_tokens 0 generates nothing; 1 gives the prefill's token.
  o.max_tokens = 0;
  EXPECT_EQ(lm::batch_generate_tokens(*m, prompts, o),
            std::vector<std::vector<int>>(prompts.size()));
  o.max_tokens = 1;
  o.eos_token_ids = {};
  auto first = lm::batch_generate_tokens(*m, prompts, o);
  for (size_t i = 0; i < prompts.size(); ++i)
    EXPECT_EQ(first[i], std::vector<int>{free_run[i][0]}) << i;
}

TEST(LmBatch, ProcessorsSeeEachRowsHistory) {
  auto m = tiny("qwen3");
  lm::GenerateOptions o;
  o.max_tokens = 10;
  o.processors.repetition_penalty = 1.5f;
  o.processors.repetition_context_size = 6;
  auto prompts = prompts_of(5);
  EXPECT_EQ(lm::batch_generate_tokens(*m, prompts, o), solo(*m, prompts, o));
}

TEST(LmBatch, SampledRunsAreReproducible) {
  auto m = tiny("llama");
  lm::GenerateOptions o;
  o.max_tokens = 8;
  o.sampler.temp = 0.8f;
  o.seed = 5;
  auto prompts = prompts_of(10);
  auto a = lm::batch_generate_tokens(*m, prompts, o),
       b = lm::batch_generate_tokens(*m, prompts, o);
  EXPECT_EQ(a, b);
  for (const auto& r : a) EXPECT_EQ(r.size(), 8u);
}

std::vector<float> values(const Array& a) {
  return a.astype(float32).reshape({-1}).to_vector<float>();
}

TEST(LmBatch, PagedLogitsEqualTheContiguousCaches) {
  for (const char* name : {"llama", "llama_bf16"}) {
    auto m = tiny(name);
    const int layers = m->info().num_layers;
    // Bit for bit: every row's attention is its solo call, so nothing is
    // left to rounding (rel 0 asks |a - b| <= 0).
    const double rel = 0;
    auto prompts = prompts_of(3);
    prompts[0].resize(9);
    prompts[1].resize(2);
    prompts[2].resize(23);
    lm::PagedKVCache paged(layers, 4);
    std::vector<lm::PromptCache> contiguous;
    std::vector<int> ids;
    // Prefill: each prompt in two chunks, alone, through both caches.
    for (const auto& p : prompts) {
      ids.push_back(paged.add_sequence());
      auto view = paged.view({ids.back()});
      contiguous.push_back(m->make_cache());
      const int half = static_cast<int>(p.size()) / 2;
      for (auto [lo, hi] :
           {std::pair{0, half}, std::pair{half, static_cast<int>(p.size())}}) {
        if (lo == hi) continue;
        Array t = array(std::vector<int>(p.begin() + lo, p.begin() + hi),
                        Shape{1, hi - lo});
        Array a = (*m)(t, view), b = (*m)(t, contiguous.back());
        EXPECT_TRUE(close_rel(values(a), values(b), rel)) << name << " prefill";
      }
      EXPECT_EQ(paged.length(ids.back()), static_cast<int>(p.size()));
    }
    // Three decode steps of the three rows together (different lengths).
    for (int step = 0; step < 3; ++step) {
      std::vector<int> next = {5 + step, 17 + step, 90 + step};
      auto view = paged.view(ids);
      Array batch = (*m)(array(next, Shape{3, 1}), view);
      ASSERT_EQ(batch.shape(), (Shape{3, 1, m->info().vocab_size}));
      for (int r = 0; r < 3; ++r) {
        Array one = (*m)(
            array(std::vector<int>{next[static_cast<size_t>(r)]}, Shape{1, 1}),
            contiguous[static_cast<size_t>(r)]);
        Array row =
            slice(batch, Shape{r, 0, 0}, Shape{r + 1, 1, batch.shape(2)});
        EXPECT_TRUE(close_rel(values(row), values(one), rel))
            << name << " step " << step << " row " << r;
      }
    }
    for (size_t r = 0; r < 3; ++r)
      EXPECT_EQ(paged.length(ids[r]), static_cast<int>(prompts[r].size()) + 3);
  }
}

TEST(LmBatch, TheAllocatorHandsOutAndTakesBackBlocks) {
  lm::PagedKVCache c(2, 4);
  auto m = tiny("llama");
  ASSERT_EQ(m->info().num_layers, 2);
  const int a = c.add_sequence(), b = c.add_sequence();
  EXPECT_EQ(c.sequences(), (std::vector<int>{a, b}));
  auto va = c.view({a});
  (*m)(array(std::vector<int>(9, 3), Shape{1, 9}),
       va);  // 9 tokens: 3 blocks of 4
  EXPECT_EQ(c.length(a), 9);
  EXPECT_EQ(c.blocks(a), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(c.num_blocks(), 16);  // the first growth
  auto vb = c.view({b});
  (*m)(array(std::vector<int>(4, 5), Shape{1, 4}), vb);
  EXPECT_EQ(c.blocks(b), (std::vector<int>{3}));
  EXPECT_EQ(c.used_blocks(), 4);
  ASSERT_EQ(c.state(1).size(), 2u);
  EXPECT_EQ(c.state(1)[0].shape(),
            (Shape{16, m->info().num_kv_heads, 4, m->info().head_dim}));
  c.remove_sequence(a);
  EXPECT_EQ(c.used_blocks(), 1);
  EXPECT_FALSE(c.has_sequence(a));
  const int d = c.add_sequence();
  auto vd = c.view({d});
  (*m)(array(std::vector<int>(5, 7), Shape{1, 5}), vd);
  EXPECT_EQ(c.blocks(d),
            (std::vector<int>{0, 1}));  // the freed blocks, lowest first
  // Growing past the pool: the pools extend and keep what they hold.
  const int e = c.add_sequence();
  auto ve = c.view({e});
  (*m)(array(std::vector<int>(60, 9), Shape{1, 60}), ve);
  EXPECT_EQ(c.num_blocks(), 32);
  EXPECT_EQ(c.blocks(e).size(), 15u);
  EXPECT_EQ(c.state(0)[0].shape(0), 32);
  EXPECT_THROW(c.remove_sequence(a), Error);
  EXPECT_THROW(c.view({b, b}), Error);
  EXPECT_THROW(
      va[0]->update_and_fetch(zeros({1, 2, 1, 16}), zeros({1, 2, 1, 16})),
      Error);
  EXPECT_THROW(va[0]->clone(), Error);
  EXPECT_THROW(lm::PagedKVCache(0, 4), Error);
}

TEST(LmBatch, InvalidCallsThrow) {
  auto m = tiny("llama");
  EXPECT_THROW(lm::batch_generate_tokens(*m, {{1, 2}, {}}), Error);
  EXPECT_THROW(lm::batch_generate_tokens(*m, {{1, 128}}), Error);
  EXPECT_THROW(lm::batch_generate_tokens(*m, {{1}}, {}, 0), Error);
  lm::GenerateOptions o;
  o.kv_bits = 8;
  EXPECT_THROW(lm::batch_generate_tokens(*m, {{1}}, o), Error);
  // Sliding-window layers (rotating caches) are not served.
  EXPECT_THROW(lm::batch_generate_tokens(*tiny("gemma3_text"), {{1, 2}}),
               Error);
  EXPECT_TRUE(lm::batch_generate_tokens(*m, {}).empty());
}

}  // namespace
}  // namespace nuvec::lm_test
