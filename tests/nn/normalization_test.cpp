// GroupNorm, InstanceNorm, BatchNorm and mlx.nn.init against MLX 0.32.4
// (tools/record_mlx_nn_layers2.py).
#include <gtest/gtest.h>

#include <cstdio>

#include "nn/support/layer_refs.h"

using namespace nuvec;
using nn_test::all_of;
using nn_test::error_of;
using nn_test::expect_outputs;
using nn_test::layers2;
using nn_test::params_of;
using nn_test::ref_array;
using nn_test::same_bits;

TEST(NnNorm, InitialParametersAreMlxs) {
  nn::GroupNorm g(2, 6);
  nn::InstanceNorm i(5, 1e-5f, true);
  nn::BatchNorm b(3), b2(2, 1e-5f, 0.1, false);
  std::vector<Array> got = params_of(g, i, b);
  // MLX keeps BatchNorm's running statistics as frozen parameters; they
  // are buffers here, after the parameters in the same order.
  for (auto& [p, a] : b.buffers()) got.push_back(a);
  for (auto& [p, a] : b2.buffers()) got.push_back(a);
  expect_outputs(layers2("init_norm"), got);
  EXPECT_EQ(g.parameters()[0].first, "bias");
  EXPECT_EQ(b.buffers()[0].first, "running_mean");
  EXPECT_EQ(b.trainable_parameters().size(), 2u);
  EXPECT_TRUE(b2.parameters().empty());
}

TEST(NnNorm, GroupAndInstanceNormMatchMlx) {
  auto& c = layers2("forward_norm");
  Array x = ref_array(c.inputs[0]), xi = ref_array(c.inputs[1]);
  Array w = ref_array(c.inputs[2]), b = ref_array(c.inputs[3]);
  nn::GroupNorm g1(2, 6);
  g1.weight->value = w;
  g1.bias->value = b;
  nn::GroupNorm g2(3, 6, 1e-3f, true, true);
  g2.weight->value = w;
  g2.bias->value = b;
  nn::GroupNorm g3(2, 6, 1e-5f, false, true);
  nn::InstanceNorm i1(6, 1e-5f, true);
  i1.weight->value = w;
  i1.bias->value = b;
  nn::InstanceNorm i2(6, 1e-2f);
  // Bit for bit, except GroupNorm over the 36 values of a group of a 4-d
  // input, where fast::layer_norm sums in another order than MLX's kernel.
  expect_outputs(c, {g1(x), g2(x), g3(xi), i1(xi), i2(x)}, 2e-6, {2});
}

TEST(NnNorm, BatchNormRunningStatsAndEvalMatchMlx) {
  auto& c = layers2("forward_batchnorm");
  std::vector<Array> in;
  for (auto& t : c.inputs) in.push_back(ref_array(t));
  std::vector<Array> got;
  nn::BatchNorm bn(4);
  bn.weight->value = in[7];
  bn.bias->value = in[8];
  got.push_back(bn(in[0]));
  got.push_back(bn(in[1]));
  got.push_back(bn.running_mean->value);
  got.push_back(bn.running_var->value);
  bn.eval();
  got.push_back(bn(in[2]));
  nn::BatchNorm bn2(4, 1e-3f, 0.3, false);
  got.push_back(bn2(in[3]));
  got.push_back(bn2(in[4]));
  got.push_back(bn2.running_mean->value);
  got.push_back(bn2.running_var->value);
  bn2.eval();
  got.push_back(bn2(in[5]));
  nn::BatchNorm bn3(4, 1e-5f, 0.1, true, false);
  EXPECT_FALSE(bn3.running_mean.has_value());
  got.push_back(bn3(in[6]));
  bn3.eval();
  got.push_back(bn3(in[6]));
  // Bit for bit over [N, C] and [N, L, C]; over [N, H, W, C] (outputs 5 to
  // 9) the core's mean and var of three axes sum in another order than
  // MLX's: float32 rounding.
  expect_outputs(c, got, 2e-6, {5, 6, 7, 8, 9});
}

TEST(NnNorm, BatchNormModeIsStructure) {
  // A compiled step retraces once when the mode changes, and in eval mode
  // leaves the running statistics alone.
  nn::BatchNorm bn(3);
  random::seed(4);
  Array x = random::normal({6, 3});
  auto step =
      compile_mut([](nn::BatchNorm& m, const Array& in) { return m(in); });
  Array y1 = step(bn, x);
  eval({y1, bn.running_mean->value});
  Array mean_after_train = bn.running_mean->value;
  EXPECT_FALSE(
      ops::array_equal(mean_after_train, ops::zeros({3})).item<bool>());
  bn.eval();
  Array y2 = step(bn, x);
  EXPECT_EQ(step.trace_count(), 2u);
  EXPECT_TRUE(same_bits(bn.running_mean->value, mean_after_train));
  // Eval-mode output with running statistics m, v: (x - m) / sqrt(v + eps).
  Array want =
      (x - bn.running_mean->value) * ops::rsqrt(bn.running_var->value + 1e-5f);
  EXPECT_TRUE(ops::allclose(y2, want, 1e-6, 1e-6).item<bool>());
  step(bn, x);
  EXPECT_EQ(step.trace_count(), 2u);
}

TEST(NnNorm, BatchNormStatisticsThroughValueAndGrad) {
  // Loss functions see the model as const: a training step calls a copy
  // and hands the updated statistics back as an auxiliary output.
  nn::BatchNorm bn(3);
  random::seed(5);
  Array x = random::normal({5, 3});
  auto loss = [](const nn::BatchNorm& m, const Array& in) {
    nn::BatchNorm t = m;
    Array y = t(in);
    return std::make_pair(ops::sum(y * y * in), t);
  };
  auto [out, grads] = nn::value_and_grad(bn, loss)(x);
  nn::BatchNorm direct = bn;
  Array y = direct(x);
  EXPECT_TRUE(same_bits(out.first, ops::sum(y * y * x)));
  bn.running_mean = out.second.running_mean;
  bn.running_var = out.second.running_var;
  EXPECT_TRUE(same_bits(bn.running_mean->value, direct.running_mean->value));
  EXPECT_TRUE(same_bits(bn.running_var->value, direct.running_var->value));
  // d/db sum(y^2 x) with y = w xhat + b: sum over the batch of 2 y x.
  Array want_db = ops::sum(2 * y * x, 0);
  EXPECT_TRUE(
      ops::allclose(grads.bias->value, want_db, 1e-5, 1e-5).item<bool>());
  // Buffers get no gradient (zeros) and are not parameters.
  EXPECT_TRUE(same_bits(grads.running_mean->value, ops::zeros({3})));
}

TEST(NnNorm, BatchNormSavesAndLoadsItsStatistics) {
  nn::BatchNorm bn(3);
  random::seed(6);
  bn(random::normal({4, 3}));
  std::string file = testing::TempDir() + "nuvec_bn_stats.safetensors";
  bn.save_weights(file);
  nn::BatchNorm fresh(3);
  fresh.load_weights(file);
  EXPECT_TRUE(same_bits(fresh.running_mean->value, bn.running_mean->value));
  EXPECT_TRUE(same_bits(fresh.running_var->value, bn.running_var->value));
  std::remove(file.c_str());
}

TEST(NnNorm, WrongInputsNameTheLayer) {
  nn::BatchNorm bn(4);
  EXPECT_NE(error_of(bn(ops::ones({2, 3})))
                .find("BatchNorm: expected last dimension 4, got 3"),
            std::string::npos);
  EXPECT_NE(
      error_of(bn(ops::ones({1, 4}))).find("more than one value per channel"),
      std::string::npos);
  EXPECT_NE(error_of(bn(ops::ones({2, 2, 2, 2, 4})))
                .find("expected an input with 2 to 4 dimensions"),
            std::string::npos);
  EXPECT_TRUE(same_bits(bn.running_mean->value,
                        ops::zeros({4})));  // unchanged by failed calls
  nn::GroupNorm g(2, 4);
  EXPECT_NE(error_of(g(ops::ones({2, 3})))
                .find("GroupNorm: expected last dimension 4, got 3"),
            std::string::npos);
  nn::InstanceNorm in(4);
  EXPECT_NE(error_of(in(ops::ones({2, 4})))
                .find("InstanceNorm: expected an input with at least 3"),
            std::string::npos);
  EXPECT_THROW(nn::GroupNorm(4, 6), Error);
  EXPECT_THROW(nn::GroupNorm(0, 6), Error);
  EXPECT_THROW(nn::GroupNorm(2, 6, 0.0f), Error);
  EXPECT_THROW(nn::BatchNorm(0), Error);
  EXPECT_THROW(nn::BatchNorm(3, -1e-5f), Error);
  EXPECT_THROW(nn::InstanceNorm(3, 0.0f), Error);
}

TEST(NnInit, InitializersMatchMlx) {
  namespace I = nn::init;
  auto z = [](Shape s) { return ops::zeros(s); };
  std::vector<Array> got;
  random::seed(61);
  got.push_back(I::constant(0.5)(z({2, 3})));
  got.push_back(I::constant(-2.0, float16)(z({3})));
  got.push_back(I::normal()(z({3, 4})));
  got.push_back(I::normal(0.5, 2.0)(z({2, 5})));
  got.push_back(I::normal(0.0, 1.0, float16)(z({4})));
  got.push_back(I::uniform()(z({3, 4})));
  got.push_back(I::uniform(-1.0, 2.0)(z({2, 5})));
  got.push_back(I::uniform(0.0, 1.0, bfloat16)(z({4})));
  got.push_back(I::identity()(z({3, 3})));
  got.push_back(I::identity(float16)(z({2, 2})));
  random::seed(62);
  got.push_back(I::glorot_normal()(z({4, 3})));
  got.push_back(I::glorot_normal(float32, 2.0)(z({4, 2, 3})));
  got.push_back(I::glorot_uniform()(z({4, 3})));
  got.push_back(I::glorot_uniform(float32, 0.5)(z({3, 2, 2, 5})));
  random::seed(63);
  got.push_back(I::he_normal()(z({4, 3})));
  got.push_back(I::he_normal(float32, "fan_out", 2.0)(z({4, 2, 3})));
  got.push_back(I::he_uniform()(z({4, 3})));
  got.push_back(I::he_uniform(float32, "fan_out")(z({5, 2, 3})));
  random::seed(64);
  got.push_back(I::sparse(0.5)(z({4, 6})));
  got.push_back(I::sparse(0.3, 1.0, 0.1)(z({3, 5})));
  got.push_back(I::sparse(0.0)(z({2, 3})));
  expect_outputs(layers2("init_functions"), got);
  // ceil(0.5 * 6) = 3 zeros in every row.
  EXPECT_EQ(ops::sum(ops::equal(got[18], 0.0f), 1).to_vector<int32_t>(),
            (std::vector<int32_t>(4, 3)));
}

TEST(NnInit, OrthogonalMatchesMlx) {
  namespace I = nn::init;
  random::seed(65);
  std::vector<Array> got = {I::orthogonal()(ops::zeros({3, 5})),
                            I::orthogonal(2.0)(ops::zeros({4, 2})),
                            I::orthogonal()(ops::zeros({3, 3}))};
  // Q comes from LAPACK's Householder QR (the same algorithm as MLX's, but
  // another build): within float32 rounding.
  expect_outputs(layers2("init_orthogonal"), got, 1e-5, all_of(3));
  Array q = got[2];
  EXPECT_TRUE(ops::allclose(ops::matmul(q, q.t()), ops::eye(3), 1e-5, 1e-5)
                  .item<bool>());
}

TEST(NnInit, InvalidShapesFail) {
  namespace I = nn::init;
  EXPECT_NE(error_of(I::identity()(ops::zeros({2, 3}))).find("square"),
            std::string::npos);
  EXPECT_NE(error_of(I::glorot_uniform()(ops::zeros({3})))
                .find("at least 2 dimensions"),
            std::string::npos);
  EXPECT_NE(error_of(I::sparse(0.5)(ops::zeros({2, 3, 4}))).find("2-D"),
            std::string::npos);
  EXPECT_NE(error_of(I::orthogonal()(ops::zeros({2, 3, 4}))).find("2-D"),
            std::string::npos);
  EXPECT_THROW(I::he_normal(float32, "fan_avg"), Error);
}
