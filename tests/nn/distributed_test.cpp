// Data-parallel training over the mpi backend, run by the test itself under
// mpirun with 2 ranks: each rank's half of a batch, its gradients averaged
// with nn::average_gradients, equals the gradients of the whole batch
// computed in one process (within float32 rounding), and compiled
// data-parallel steps keep the ranks' parameters bit-identical and close to
// the one-process run's; tensor-parallel layers (AllToShardedLinear into
// ShardedToAllLinear) equal the full layers, gradients of the replicated
// input included.
#include <gtest/gtest.h>

#include <cmath>

#include "nn/support/nn_refs.h"
#include "nuvec/nn.h"
#include "support/mpi_run.h"

using namespace nuvec;
using nuvec::nn_test::same_bits;
namespace dist = nuvec::distributed;

namespace {

struct Mlp : nn::Module<Mlp> {
  nn::Embedding embed;
  nn::LayerNorm norm;
  nn::Linear up, down;
  Mlp() : embed(11, 8), norm(8), up(8, 32), down(32, 8) {}
  Array operator()(const Array& t) const {
    Array h = embed(t);
    h = h + down(ops::maximum(up(norm(h)), 0));
    return embed.as_linear(h);
  }
};
NUVEC_TREE(Mlp, embed, norm, up, down)

struct State {
  Mlp model;
  optim::AdamW opt;
};
NUVEC_TREE(State, model, opt)

Array loss_fn(const Mlp& m, const Array& x, const Array& y) { return fast::cross_entropy(m(x), y).mean(); }

State fresh() {
  random::seed(9);
  State s{Mlp(), optim::AdamW(1e-2, {0.9, 0.99}, 1e-8, 0.1)};
  s.opt.init(s.model);
  return s;
}

// The global batch of step i: 4 sequences of 6 tokens.
std::pair<Array, Array> batch(int i) {
  Array x = random::randint(0, 11, {4, 6}, int32, random::key(100 + i));
  return {x, ops::remainder(x * 3 + 1, 11)};
}

// Rows [2 r, 2 r + 2) of the batch: rank r's half.
std::pair<Array, Array> half(const std::pair<Array, Array>& xy, int r) {
  return {ops::slice(xy.first, {2 * r, 0}, {2 * r + 2, 6}), ops::slice(xy.second, {2 * r, 0}, {2 * r + 2, 6})};
}

double max_abs(const Array& a) { return ops::max(ops::abs(a.astype(float64))).item<double>(); }

}  // namespace

TEST(MpiNn, HalvesAveragedEqualTheWholeBatch) {
  if (!nuvec::testing::in_mpi_child()) GTEST_SKIP() << "runs under mpirun (NnDistributed)";
  auto g = dist::init(true, "mpi");
  ASSERT_EQ(g.size(), 2);
  State s = fresh();
  auto xy = batch(0);
  auto [lw, whole] = value_and_grad(loss_fn)(s.model, xy.first, xy.second);
  auto mine = half(xy, g.rank());
  auto [lh, grads] = value_and_grad(loss_fn)(s.model, mine.first, mine.second);
  Mlp avg = nn::average_gradients(grads, g, 64);  // several buckets
  Mlp one = nn::average_gradients(grads, g);      // one bucket: the same sums
  auto fa = tree_flatten(avg), fo = tree_flatten(one), fw = tree_flatten(whole);
  ASSERT_EQ(fa.size(), fw.size());
  for (size_t i = 0; i < fa.size(); ++i) {
    EXPECT_TRUE(same_bits(fa[i].second, fo[i].second)) << fa[i].first;
    double scale = max_abs(fw[i].second) + 1e-30;
    EXPECT_LT(max_abs(fa[i].second - fw[i].second) / scale, 1e-5) << fa[i].first;
  }
  // The same bits on both ranks.
  for (auto& [name, a] : fa) EXPECT_TRUE(same_bits(dist::all_max(a, g), dist::all_min(a, g))) << name;
}

TEST(MpiNn, CompiledDataParallelStepsFollowTheOneProcessRun) {
  if (!nuvec::testing::in_mpi_child()) GTEST_SKIP() << "runs under mpirun (NnDistributed)";
  auto g = dist::init(true, "mpi");
  State dp = fresh(), ref = fresh();
  auto step = compile_mut([g](State& st, const std::pair<Array, Array>& xy) {
    auto [l, grads] = value_and_grad(loss_fn)(st.model, xy.first, xy.second);
    st.opt.update(st.model, nn::average_gradients(grads, g));
    return dist::all_sum(l, g) / 2.0f;
  });
  for (int i = 0; i < 3; ++i) {
    auto xy = batch(i);
    Array l = step(dp, half(xy, g.rank()));
    eval(dp);
    auto [lr, gr] = value_and_grad(loss_fn)(ref.model, xy.first, xy.second);
    ref.opt.update(ref.model, gr);
    eval(ref);
    EXPECT_NEAR(l.item<float>(), lr.item<float>(), 1e-5 * std::abs(lr.item<float>()));
  }
  EXPECT_EQ(step.trace_count(), 1u);
  auto pd = tree_flatten(dp.model), pr = tree_flatten(ref.model);
  for (size_t i = 0; i < pd.size(); ++i) {
    EXPECT_TRUE(same_bits(dist::all_max(pd[i].second, g), dist::all_min(pd[i].second, g))) << pd[i].first;
    EXPECT_LT(max_abs(pd[i].second - pr[i].second), 1e-4) << pd[i].first;
  }
}

TEST(MpiNn, ShardedLinearsEqualTheFullLayers) {
  if (!nuvec::testing::in_mpi_child()) GTEST_SKIP() << "runs under mpirun (NnDistributed)";
  auto g = dist::init(true, "mpi");
  const int r = g.rank();
  random::seed(3);  // the same full layers on every rank
  nn::Linear l1(8, 12), l2(12, 8);
  auto a = nn::AllToShardedLinear::from_linear(l1, 1, g);
  auto b = nn::ShardedToAllLinear::from_linear(l2, 1, g);
  EXPECT_EQ(a.weight.value.shape(), (Shape{6, 8}));
  EXPECT_EQ(b.weight.value.shape(), (Shape{8, 6}));
  Array x = random::normal({3, 8}, random::key(4));
  Array w = random::normal({3, 8}, random::key(5));
  auto tp = [&](const Array& v) { return b(ops::maximum(a(v), 0)); };
  auto full = [&](const Array& v) { return l2(ops::maximum(l1(v), 0)); };
  Array y = tp(x), ref = full(x);
  EXPECT_LT(max_abs(y - ref), 1e-5 * max_abs(ref));
  EXPECT_TRUE(same_bits(dist::all_max(y, g), dist::all_min(y, g)));  // the same on every rank
  EXPECT_LT(max_abs(a(x) - ops::slice(l1(x), {0, 6 * r}, {3, 6 * r + 6})), 1e-6);
  // The gradient of the replicated input: each rank's part summed.
  auto loss = [&](auto f) {
    return [&, f](const std::vector<Array>& v) { return ops::sum(f(v[0]) * w); };
  };
  Array dx = grad(loss(tp), 0)({x})[0], dref = grad(loss(full), 0)({x})[0];
  EXPECT_LT(max_abs(dx - dref), 1e-5 * max_abs(dref));
  // Weight gradients: this rank's rows of the full layer's.
  auto [v1, ga] = value_and_grad([&](const nn::AllToShardedLinear& m, const Array& v) {
    return ops::sum(b(ops::maximum(m(v), 0)) * w);
  })(a, x);
  auto [v2, gl] = value_and_grad([&](const nn::Linear& m, const Array& v) {
    return ops::sum(l2(ops::maximum(m(v), 0)) * w);
  })(l1, x);
  Array rows = ops::slice(gl.weight.value, {6 * r, 0}, {6 * r + 6, 8});
  EXPECT_LT(max_abs(ga.weight.value - rows), 1e-5 * max_abs(rows));
  // Uneven sizes, and a fused projection of 3 segments (rows 4 s + 2 r ..).
  auto u = nn::AllToShardedLinear::from_linear(l1, 1, g, std::vector<int>{5, 7});
  const int lo = r == 0 ? 0 : 5, hi = r == 0 ? 5 : 12;
  EXPECT_TRUE(same_bits(u.weight.value, ops::slice(l1.weight.value, {lo, 0}, {hi, 8})));
  auto q = nn::AllToShardedLinear::from_linear(l1, 3, g);
  for (int seg = 0; seg < 3; ++seg)
    EXPECT_TRUE(same_bits(ops::slice(q.weight.value, {2 * seg, 0}, {2 * seg + 2, 8}),
                          ops::slice(l1.weight.value, {4 * seg + 2 * r, 0}, {4 * seg + 2 * r + 2, 8})));
  EXPECT_THROW(nn::AllToShardedLinear::from_linear(l1, 1, g, std::vector<int>{5, 5}), Error);
}

TEST(NnSharded, AGroupOfOneHoldsTheWholeLayer) {
  if (nuvec::testing::in_mpi_child()) GTEST_SKIP() << "under mpirun";
  auto one = dist::init("single");
  random::seed(3);
  nn::Linear l(8, 6);
  Array x = random::normal({2, 8}, random::key(4));
  auto a = nn::AllToShardedLinear::from_linear(l, 1, one);
  nn::Linear l3(12, 6);
  auto b = nn::ShardedToAllLinear::from_linear(l3, 3, one);
  EXPECT_TRUE(same_bits(a(x), l(x)));
  EXPECT_TRUE(same_bits(b.weight.value, l3.weight.value));
  EXPECT_THROW(nn::ShardedToAllLinear::from_linear(l, 3, one), Error);  // 8 inputs in 3 segments
  EXPECT_EQ(nn::rank_sizes(10, 3), (std::vector<int>{4, 3, 3}));
  EXPECT_THROW(nn::AllToShardedLinear(8, 6, true, one, std::vector<int>{5}), Error);
  EXPECT_THROW(nn::ShardedToAllLinear(8, 6, true, one, std::vector<int>{4, 4}), Error);
  Array bad = a(random::normal({2, 7}));
  ASSERT_TRUE(bad.is_failed());
  EXPECT_NE(std::string(bad.error()->what()).find("last dimension 8"), std::string::npos) << bad.error()->what();
}

TEST(NnDistributed, TwoRanksTrainAsOneProcess) {
  if (nuvec::testing::in_mpi_child()) GTEST_SKIP() << "the parent of the MPI run";
  if (!nuvec::testing::have_mpirun() || !dist::is_available("mpi")) GTEST_SKIP() << "no mpirun or libmpi (openmpi-bin)";
  int status = 0;
  std::string out = nuvec::testing::run_ranks(2, "MpiNn.*", "", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("[  FAILED  ]"), std::string::npos) << out;
  EXPECT_NE(out.find("[  PASSED  ] 3 tests"), std::string::npos) << out;
}
