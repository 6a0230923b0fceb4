// RNN, GRU and LSTM against MLX 0.32.4 (tools/record_mlx_nn_layers2.py):
// initial weights bit for bit, every step's outputs, a gradient check
// through an LSTM against finite differences, error cases.
#include <gtest/gtest.h>

#include <cmath>

#include "nn/support/layer_refs.h"

using namespace nuvec;
using nn_test::all_of;
using nn_test::error_of;
using nn_test::expect_outputs;
using nn_test::layers2;
using nn_test::params_of;
using nn_test::ref_array;

TEST(NnRnn, InitialWeightsAreMlxsBits) {
  random::seed(32);
  nn::RNN r1(3, 4), r2(2, 3, false);
  nn::GRU g1(3, 4), g2(2, 3, false);
  nn::LSTM l1(3, 4), l2(2, 2, false);
  expect_outputs(layers2("init_recurrent"), params_of(r1, r2, g1, g2, l1, l2));
  std::vector<std::string> names;
  for (auto& [p, a] : g1.parameters()) names.push_back(p);
  EXPECT_EQ(names, (std::vector<std::string>{"Wx", "Wh", "b", "bhn"}));
  names.clear();
  for (auto& [p, a] : r1.parameters()) names.push_back(p);
  EXPECT_EQ(names, (std::vector<std::string>{"Wxh", "Whh", "bias"}));
  EXPECT_EQ(l1.Wx.value.shape(), (Shape{16, 3}));
  EXPECT_EQ(g2.parameters().size(), 2u);
}

TEST(NnRnn, ForwardMatchesMlx) {
  auto& c = layers2("forward_recurrent");
  random::seed(51);
  nn::RNN r1(3, 4);
  nn::RNN r2(3, 4, false, [](const Array& a) { return nn::relu(a); });
  nn::GRU g1(3, 4), g2(3, 4, false);
  nn::LSTM l1(3, 4), l2(3, 4, false);
  Array x = ref_array(c.inputs[0]), x2d = ref_array(c.inputs[1]);
  Array h0 = ref_array(c.inputs[2]), c0 = ref_array(c.inputs[3]);
  std::vector<Array> got = {r1(x),     r1(x, h0), r2(x),     r1(x2d), g1(x),
                            g1(x, h0), g2(x),     g2(x, h0), g1(x2d)};
  for (auto [h, cell] :
       {l1(x), l1(x, h0, c0), l1(x, h0), l2(x, h0, c0), l1(x2d)}) {
    got.push_back(h);
    got.push_back(cell);
  }
  EXPECT_EQ(got[0].shape(), (Shape{2, 5, 4}));
  // The products go through sgemm, whose summation order differs from
  // MLX's: float32 rounding, carried through the steps.
  expect_outputs(c, got, 2e-6, all_of(got.size()));
}

TEST(NnRnn, LstmGradientMatchesFiniteDifferences) {
  random::seed(9);
  nn::LSTM lstm(3, 4);
  lstm.set_dtype(float64);
  Array x = random::normal({2, 4, 3}).astype(float64);
  Array h0 = random::normal({2, 4}).astype(float64);
  auto loss = [](const nn::LSTM& m, const Array& in, const Array& h) {
    auto [hs, cs] = m(in, h);
    return ops::sum(hs * hs) + ops::sum(ops::sin(cs));
  };
  auto [value, grads] = nn::value_and_grad(lstm, loss)(x, h0);
  const double eps = 1e-6;
  auto check = [&](auto leaf, const Array& g, const char* what) {
    nn::LSTM base = lstm;
    Array orig = leaf(base);
    auto v = orig.reshape({-1}).to_vector<double>();
    auto gv = g.reshape({-1}).to_vector<double>();
    ASSERT_EQ(v.size(), gv.size()) << what;
    for (size_t i = 0; i < v.size(); i += 3) {
      nn::LSTM p = lstm, m = lstm;
      auto vp = v, vm = v;
      vp[i] += eps;
      vm[i] -= eps;
      leaf(p) = array(vp, orig.shape());
      leaf(m) = array(vm, orig.shape());
      double fd =
          (loss(p, x, h0).item<double>() - loss(m, x, h0).item<double>()) /
          (2 * eps);
      EXPECT_NEAR(gv[i], fd, 1e-6 * std::max(1.0, std::abs(fd)))
          << what << " " << i;
    }
  };
  check([](nn::LSTM& m) -> Array& { return m.Wx.value; }, grads.Wx.value, "Wx");
  check([](nn::LSTM& m) -> Array& { return m.Wh.value; }, grads.Wh.value, "Wh");
  check([](nn::LSTM& m) -> Array& { return m.bias->value; }, grads.bias->value,
        "bias");
  // The gradient with respect to the initial hidden state too.
  auto gh = grad([&](const Array& h) { return loss(lstm, x, h); })(h0);
  auto hv = h0.reshape({-1}).to_vector<double>();
  auto ghv = gh.reshape({-1}).to_vector<double>();
  for (size_t i = 0; i < hv.size(); ++i) {
    auto p = hv, m = hv;
    p[i] += eps;
    m[i] -= eps;
    double fd = (loss(lstm, x, array(p, h0.shape())).item<double>() -
                 loss(lstm, x, array(m, h0.shape())).item<double>()) /
                (2 * eps);
    EXPECT_NEAR(ghv[i], fd, 1e-6 * std::max(1.0, std::abs(fd))) << "h0 " << i;
  }
}

TEST(NnRnn, HandDerivedSingleStep) {
  // One step of an RNN with every weight 0.5 and no bias: h = tanh(0.5 *
  // sum(x)); of a GRU from zero state: (1 - z) * tanh(n).
  nn::RNN r(2, 1, false);
  r.Wxh.value = ops::full({1, 2}, 0.5f);
  r.Whh.value = ops::full({1, 1}, 0.5f);
  Array x = array({1.0f, 3.0f}, {1, 1, 2});
  EXPECT_FLOAT_EQ(r(x).item<float>(), std::tanh(2.0f));
  EXPECT_FLOAT_EQ(r(x, array({2.0f}, {1, 1})).item<float>(), std::tanh(3.0f));
  nn::GRU g(1, 1, false);
  g.Wx.value = array({0.0f, 0.0f, 1.0f}, {3, 1});  // r = z = sigmoid(0) = 0.5
  Array y = g(array({0.8f}, {1, 1}));
  EXPECT_FLOAT_EQ(y.item<float>(), 0.5f * std::tanh(0.8f));
}

TEST(NnRnn, WrongInputsNameTheLayer) {
  nn::LSTM lstm(3, 4);
  nn::GRU gru(3, 4);
  nn::RNN rnn(3, 4);
  EXPECT_NE(error_of(lstm(ops::ones({2, 5, 2})).first)
                .find("LSTM: expected input size 3, got 2"),
            std::string::npos);
  EXPECT_NE(error_of(gru(ops::ones({2, 5, 3}), ops::ones({2, 3})))
                .find("GRU: expected hidden state size 4, got 3"),
            std::string::npos);
  EXPECT_NE(
      error_of(lstm(ops::ones({2, 5, 3}), ops::ones({2, 4}), ops::ones({2, 5}))
                   .second)
          .find("expected cell state size 4"),
      std::string::npos);
  EXPECT_NE(error_of(rnn(ops::ones({3})))
                .find("RNN: expected an input with at least 2 dimensions"),
            std::string::npos);
  EXPECT_NE(
      error_of(rnn(ops::ones({2, 0, 3}))).find("the input sequence is empty"),
      std::string::npos);
  EXPECT_NE(error_of(rnn(ops::ones({2, 5, 3}, int32)))
                .find("expected a floating input"),
            std::string::npos);
  EXPECT_THROW(nn::RNN(0, 4), Error);
  EXPECT_THROW(nn::GRU(3, 0), Error);
  EXPECT_THROW(nn::LSTM(-1, 2), Error);
}
