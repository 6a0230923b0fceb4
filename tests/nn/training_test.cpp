// Training steps: compile_mut over (model, optimizer) gives the uncompiled
// steps' bits, traces once, retraces once on a train/eval switch.
#include <gtest/gtest.h>

#include "nn/support/nn_refs.h"
#include "nuvec/nn.h"

using namespace nuvec;
using nuvec::nn_test::same_bits;

namespace {

struct Block : nn::Module<Block> {
  nn::LayerNorm norm;
  nn::Linear up, down;
  nn::Dropout drop;
  Block(int d) : norm(d, 1e-5f, true, false), up(d, 4 * d), down(4 * d, d), drop(0.2) {}
  Array operator()(const Array& x) const { return x + drop(down(ops::maximum(up(norm(x)), 0))); }
};
NUVEC_TREE(Block, norm, up, down, drop)

struct Lm : nn::Module<Lm> {
  nn::Embedding embed;
  std::vector<Block> layers;
  Lm(int vocab, int d, int n) : embed(vocab, d) {
    for (int i = 0; i < n; ++i) layers.emplace_back(d);
  }
  Array operator()(const Array& t) const {
    Array h = embed(t);
    for (auto& l : layers) h = l(h);
    return embed.as_linear(h);
  }
};
NUVEC_TREE(Lm, embed, layers)

struct State {
  Lm model;
  optim::AdamW opt;
};
NUVEC_TREE(State, model, opt)

Array loss_fn(const Lm& m, const Array& x, const Array& y) { return fast::cross_entropy(m(x), y).mean(); }

Array train_step(State& s, const std::pair<Array, Array>& xy) {
  auto [l, g] = value_and_grad(loss_fn)(s.model, xy.first, xy.second);
  s.opt.update(s.model, g);
  return l;
}

std::pair<Array, Array> batch(int i) {
  Array x = random::randint(0, 11, {4, 6}, int32, random::key(100 + i));
  return {x, ops::remainder(x * 3 + 1, 11)};
}

State fresh() {
  random::seed(9);
  State s{Lm(11, 8, 2), optim::AdamW(1e-2, {0.9, 0.99}, 1e-8, 0.1)};
  s.opt.init(s.model);
  return s;
}

}  // namespace

TEST(NnTraining, CompiledStepsEqualUncompiledBitForBit) {
  State a = fresh();
  random::seed(1);
  std::vector<float> la;
  for (int i = 0; i < 4; ++i) la.push_back(train_step(a, batch(i)).item<float>());
  State b = fresh();
  random::seed(1);
  auto step = compile_mut(train_step);
  std::vector<float> lb;
  for (int i = 0; i < 4; ++i) {
    lb.push_back(step(b, batch(i)).item<float>());
    eval(b);
  }
  EXPECT_EQ(step.trace_count(), 1u);
  EXPECT_EQ(la, lb);
  auto pa = tree_flatten(a), pb = tree_flatten(b);
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(same_bits(pa[i].second, pb[i].second)) << pa[i].first;
  EXPECT_EQ(b.opt.step.value.item<uint64_t>(), 4u);
  EXPECT_LT(la.back(), la.front());  // it learns
}

TEST(NnTraining, EvalSwitchRetracesOnceAndDropsDropout) {
  State s = fresh();
  auto step = compile_mut([](State& st, const std::pair<Array, Array>& xy) {
    return loss_fn(st.model, xy.first, xy.second);
  });
  auto xy = batch(0);
  Array t1 = step(s, xy);
  Array t2 = step(s, xy);
  EXPECT_FALSE(same_bits(t1, t2));  // fresh dropout masks each call
  s.model.eval();
  Array e1 = step(s, xy), e2 = step(s, xy);
  EXPECT_TRUE(same_bits(e1, e2));  // no dropout in eval mode
  EXPECT_EQ(step.trace_count(), 2u);
  s.model.train();
  step(s, xy);
  EXPECT_EQ(step.trace_count(), 2u);  // the training trace is cached
}

TEST(NnTraining, FrozenParametersStayAndAverageGradientsIsIdentityOnOneProcess) {
  State s = fresh();
  s.model.embed.freeze();
  Array before = s.model.embed.weight.value;
  auto [l, g] = value_and_grad(loss_fn)(s.model, batch(0).first, batch(0).second);
  Lm avg = nn::average_gradients(g);
  EXPECT_TRUE(same_bits(avg.layers[0].up.weight.value, g.layers[0].up.weight.value));
  s.opt.update(s.model, avg);
  EXPECT_TRUE(s.model.embed.weight.value.id() == before.id());
  EXPECT_FALSE(same_bits(s.model.layers[0].up.weight.value, fresh().model.layers[0].up.weight.value));
}

TEST(NnTraining, AverageGradientsBucketsAndRestoresShapes) {
  // A stand-in group of two processes whose other rank holds zeros: the
  // average halves every value. Buckets of 64 bytes: several collectives.
  int calls = 0;
  nn::set_gradient_averager([&](const Array& bucket) {
    ++calls;
    EXPECT_EQ(bucket.ndim(), 1);
    return bucket * 0.5f;
  });
  State s = fresh();
  auto [l, g] = value_and_grad(loss_fn)(s.model, batch(0).first, batch(0).second);
  Lm avg = nn::average_gradients(g, 64);
  nn::set_gradient_averager({});
  auto fa = tree_flatten(avg), fg = tree_flatten(g);
  for (size_t i = 0; i < fa.size(); ++i)
    EXPECT_TRUE(same_bits(fa[i].second, fg[i].second * 0.5f)) << fa[i].first;
  EXPECT_GT(calls, 3);
  EXPECT_TRUE(same_bits(nn::average_gradients(g).embed.weight.value, g.embed.weight.value));
}
