// Tensor parallelism (lm::shard_model) on the tiny mlx-lm checkpoints over
// the mpi backend, 2 ranks started by the test itself: each rank keeps half
// of the heads and of the MLP; the greedy tokens equal the one-process
// run's, the logits are within float32 rounding of it (the sum of two
// partial products is another rounding) and the same bits on both ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "lm/support/lm_refs.h"
#include "nuvec/lm.h"
#include "support/mpi_run.h"

namespace nuvec::lm_test {
namespace {

namespace dist = nuvec::distributed;

std::shared_ptr<lm::Model> tiny(const std::string& name) { return lm::load_model(refs_path("lm_tiny/" + name)); }

std::vector<int> prompt_of(int n) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 37 + 11) % 128);
  return ids;
}

Array logits(const lm::Model& m, const std::vector<int>& ids) {
  auto cache = m.make_cache();
  Array y = m(array(ids.data(), {1, static_cast<int>(ids.size())}), cache).astype(float32);
  y.eval();
  return y;
}

// Rows of the weight `name` (-1 when the model has none of that name).
int rows_of(const lm::Model& m, const std::string& name) {
  for (const auto& [n, a] : m.weights())
    if (n == name) return static_cast<int>(a.shape(0));
  return -1;
}

double max_abs(const Array& a) { return max(abs(a.astype(float64))).item<double>(); }

bool same_bits(const Array& a, const Array& b) {
  auto x = a.reshape({-1}).to_vector<float>(), y = b.reshape({-1}).to_vector<float>();
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

TEST(MpiLm, ShardedModelsGenerateTheOneProcessTokens) {
  if (!nuvec::testing::in_mpi_child()) GTEST_SKIP() << "runs under mpirun (LmTensorParallel)";
  auto g = dist::init(true, "mpi");
  ASSERT_EQ(g.size(), 2);
  const auto ids = prompt_of(9);
  lm::GenerateOptions o;
  o.max_tokens = 8;
  o.eos_token_ids = {-1};
  for (const char* name : {"llama", "llama_q4", "qwen2", "qwen3", "gemma3_text", "mistral"}) {
    auto whole = tiny(name), part = tiny(name);
    lm::shard_model(*part, g);
    EXPECT_EQ(rows_of(*part, "model.layers.0.self_attn.q_proj.weight") * 2,
              rows_of(*whole, "model.layers.0.self_attn.q_proj.weight"))
        << name;
    EXPECT_EQ(rows_of(*part, "model.layers.1.mlp.down_proj.scales"), rows_of(*whole, "model.layers.1.mlp.down_proj.scales"));
    Array lw = logits(*whole, ids), lp = logits(*part, ids);
    EXPECT_LT(max_abs(lp - lw), 1e-4 * max_abs(lw)) << name;
    EXPECT_TRUE(same_bits(dist::all_max(lp, g), dist::all_min(lp, g))) << name;
    EXPECT_EQ(lm::generate_tokens(*part, ids, o), lm::generate_tokens(*whole, ids, o)) << name;
  }
  // What has no tensor-parallel form yet is an Error, and stays usable.
  auto moe = tiny("qwen3_moe");
  EXPECT_THROW(lm::shard_model(*moe, g), Error);
  EXPECT_EQ(lm::generate_tokens(*moe, ids, o).size(), 8u);
  EXPECT_THROW(lm::shard_model(*tiny("qwen3_next"), g), Error);
}

TEST(LmTensorParallel, AGroupOfOneChangesNothing) {
  if (nuvec::testing::in_mpi_child()) GTEST_SKIP() << "under mpirun";
  auto whole = tiny("llama"), part = tiny("llama");
  lm::shard_model(*part, dist::init("single"));
  EXPECT_TRUE(same_bits(logits(*part, prompt_of(5)), logits(*whole, prompt_of(5))));
}

TEST(LmTensorParallel, TwoRanksGenerateAsOne) {
  if (nuvec::testing::in_mpi_child()) GTEST_SKIP() << "the parent of the MPI run";
  if (!nuvec::testing::have_mpirun() || !dist::is_available("mpi")) GTEST_SKIP() << "no mpirun or libmpi";
  int status = 0;
  std::string out = nuvec::testing::run_ranks(2, "MpiLm.*", "", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("[  FAILED  ]"), std::string::npos) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
}

}  // namespace nuvec::lm_test
