// Convolution, pooling and upsampling layers against MLX 0.32.4
// (tools/record_mlx_nn_layers2.py): initial weights bit for bit, forward
// outputs, a gradient check against finite differences, error cases.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "nn/support/layer_refs.h"

using namespace nuvec;
using nn_test::all_of;
using nn_test::error_of;
using nn_test::expect_outputs;
using nn_test::layers2;
using nn_test::params_of;
using nn_test::ref_array;

TEST(NnConv, InitialWeightsAreMlxsBits) {
  random::seed(31);
  nn::Conv1d a(3, 4, 3);
  nn::Conv1d b(4, 6, 2, 2, 1, 1, 2, false);
  nn::Conv2d c(3, 5, {2, 3});
  nn::Conv2d d(4, 4, 3, {2, 1}, {1, 0}, 1, 2);
  nn::Conv3d e(2, 3, 2);
  nn::ConvTranspose1d f(3, 2, 3);
  nn::ConvTranspose2d g(2, 3, {3, 2}, 1, 0, 1, 0, false);
  nn::ConvTranspose3d h(2, 2, 2);
  EXPECT_FALSE(b.bias.has_value());
  EXPECT_EQ(b.weight.value.shape(), (Shape{6, 2, 2}));
  EXPECT_EQ(e.weight.value.shape(), (Shape{3, 2, 2, 2, 2}));
  expect_outputs(layers2("init_conv"), params_of(a, b, c, d, e, f, g, h));
  auto names = d.parameters();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].first, "weight");
  EXPECT_EQ(names[1].first, "bias");
}

TEST(NnConv, ForwardMatchesMlx) {
  auto& c = layers2("forward_conv");
  random::seed(41);
  nn::Conv1d c1(4, 6, 3, 2, 1, 2);
  nn::Conv1d c2(4, 6, 2, 1, 0, 1, 2);
  nn::Conv2d c3(4, 4, {3, 2}, {1, 2}, {1, 1}, {2, 1}, 2);
  nn::Conv3d c4(2, 3, {2, 3, 2}, {1, 1, 2}, {1, 0, 1});
  c1.bias->value = ref_array(c.inputs[3]);
  c3.bias->value = ref_array(c.inputs[4]);
  c4.bias->value = ref_array(c.inputs[5]);
  Array x1 = ref_array(c.inputs[0]), x2 = ref_array(c.inputs[1]),
        x3 = ref_array(c.inputs[2]);
  // im2col + sgemm sums the products in another order than MLX's direct
  // CPU convolution: float32 rounding.
  expect_outputs(c, {c1(x1), c2(x1), c3(x2), c4(x3)}, 2e-6, all_of(4));
}

TEST(NnConv, TransposeForwardMatchesMlx) {
  auto& c = layers2("forward_conv_transpose");
  random::seed(42);
  nn::ConvTranspose1d d1(3, 4, 3, 2, 1, 1, 1);
  nn::ConvTranspose2d d2(2, 3, {3, 2}, {2, 1}, {1, 0}, {1, 2});
  nn::ConvTranspose3d d3(2, 2, 2, 2, 0, 1, {1, 0, 1});
  d1.bias->value = ref_array(c.inputs[3]);
  std::vector<Array> got = {d1(ref_array(c.inputs[0])),
                            d2(ref_array(c.inputs[1])),
                            d3(ref_array(c.inputs[2]))};
  expect_outputs(c, got, 2e-6, all_of(3));
}

TEST(NnConv, PoolingMatchesMlx) {
  auto& c = layers2("forward_pool");
  Array x1 = ref_array(c.inputs[0]), x2 = ref_array(c.inputs[1]),
        x3 = ref_array(c.inputs[2]);
  std::vector<Array> got = {
      nn::MaxPool1d(2)(x1),    nn::MaxPool1d(3, 2, 1)(x1),
      nn::AvgPool1d(2)(x1),    nn::AvgPool1d(3, 1, 1)(x1),
      nn::MaxPool2d(2)(x2),    nn::MaxPool2d({2, 3}, {1, 2}, {1, 1})(x2),
      nn::AvgPool2d(2)(x2),    nn::AvgPool2d(3, 2, 1)(x2),
      nn::MaxPool3d(2)(x3),    nn::AvgPool3d({1, 2, 2}, 1)(x3),
      nn::AvgPool3d(2, 2)(x3),
  };
  expect_outputs(c, got);
}

TEST(NnConv, UpsampleMatchesMlx) {
  auto& c = layers2("forward_upsample");
  Array x1 = ref_array(c.inputs[0]), x2 = ref_array(c.inputs[1]),
        x3 = ref_array(c.inputs[2]);
  struct M {
    std::vector<double> s;
    const char* mode;
    bool ac, aa;
  };
  std::vector<Array> got;
  for (M m : std::vector<M>{{{2}, "nearest", false, false},
                            {{1.5}, "nearest", false, false},
                            {{0.5}, "nearest", false, false},
                            {{2}, "linear", false, false},
                            {{1.7}, "linear", true, false},
                            {{2}, "cubic", false, false},
                            {{2.5}, "cubic", true, false},
                            {{0.5}, "linear", false, true},
                            {{0.6}, "cubic", false, true},
                            {{2}, "linear", false, true}})
    got.push_back(nn::Upsample(m.s[0], m.mode, m.ac, m.aa)(x1));
  for (M m : std::vector<M>{{{2, 3}, "nearest", false, false},
                            {{1.5, 0.7}, "nearest", false, false},
                            {{2, 1.5}, "linear", false, false},
                            {{2}, "linear", true, false},
                            {{1.5, 2}, "cubic", false, false},
                            {{2}, "cubic", true, false},
                            {{0.5}, "linear", false, true},
                            {{0.5, 2}, "cubic", false, true}}) {
    if (m.s.size() == 1)
      got.push_back(nn::Upsample(m.s[0], m.mode, m.ac, m.aa)(x2));
    else
      got.push_back(nn::Upsample(m.s, m.mode, m.ac, m.aa)(x2));
  }
  got.push_back(nn::Upsample(2.0)(x3));
  got.push_back(nn::Upsample(std::vector<double>{1, 2, 1.5}, "linear")(x3));
  got.push_back(nn::Upsample(2.0, "linear", true)(x3));
  expect_outputs(c, got);
}

namespace {

/// Central differences of `loss` in the entries of `leaf` (every `every`-th),
/// compared with the gradient `g`.
template <class M, class L>
void check_fd(const M& model, const L& loss,
              const std::function<Array&(M&)>& leaf, const Array& g,
              int every = 1) {
  M base = model;
  Array orig = leaf(base);
  auto v = orig.reshape({-1}).template to_vector<double>();
  auto gv = g.reshape({-1}).template to_vector<double>();
  ASSERT_EQ(v.size(), gv.size());
  const double h = 1e-6;
  for (size_t i = 0; i < v.size(); i += every) {
    M plus = model, minus = model;
    auto vp = v, vm = v;
    vp[i] += h;
    vm[i] -= h;
    leaf(plus) = array(vp, orig.shape());
    leaf(minus) = array(vm, orig.shape());
    double fd = (loss(plus).template item<double>() -
                 loss(minus).template item<double>()) /
                (2 * h);
    EXPECT_NEAR(gv[i], fd, 1e-6 * std::max(1.0, std::abs(fd))) << "entry " << i;
  }
}

struct Net : nn::Module<Net> {
  std::vector<nn::Conv2d> layers;
  nn::MaxPool2d pool{2};
  Net() { layers.emplace_back(3, 4, 3); }
};
NUVEC_TREE(Net, layers, pool)

}  // namespace

TEST(NnConv, GradientMatchesFiniteDifferences) {
  // float64, so that central differences are accurate to ~1e-9.
  random::seed(7);
  nn::Conv2d conv(3, 2, {2, 3}, {1, 2}, 1, 1, 1);
  conv.bias->value = random::uniform(-1.0, 1.0, {2});
  conv.set_dtype(float64);
  Array x = random::normal({2, 5, 6, 3}).astype(float64);
  auto loss = [](const nn::Conv2d& m, const Array& in) {
    return ops::sum(ops::square(m(in)) * 0.5);
  };
  auto [value, grads] = nn::value_and_grad(conv, loss)(x);
  EXPECT_EQ(grads.weight.value.dtype(), float64);
  auto of = [&](const nn::Conv2d& m) { return loss(m, x); };
  check_fd<nn::Conv2d>(
      conv, of, [](nn::Conv2d& m) -> Array& { return m.weight.value; },
      grads.weight.value, 3);
  check_fd<nn::Conv2d>(
      conv, of, [](nn::Conv2d& m) -> Array& { return m.bias->value; },
      grads.bias->value);
  // And through a transposed convolution's input.
  nn::ConvTranspose1d t(3, 2, 3, 2, 1, 1, 1);
  t.set_dtype(float64);
  Array xt = random::normal({1, 4, 3}).astype(float64);
  auto gx =
      grad([&t](const Array& in) { return ops::sum(ops::sin(t(in))); })(xt);
  auto xv = xt.reshape({-1}).to_vector<double>();
  auto gxv = gx.reshape({-1}).to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) {
    auto p = xv, m = xv;
    p[i] += 1e-6;
    m[i] -= 1e-6;
    double fd = (ops::sum(ops::sin(t(array(p, xt.shape())))).item<double>() -
                 ops::sum(ops::sin(t(array(m, xt.shape())))).item<double>()) /
                2e-6;
    EXPECT_NEAR(gxv[i], fd, 1e-6) << "input " << i;
  }
}

TEST(NnConv, WrongInputsNameTheLayer) {
  Net net;
  nn::name_modules(net);
  std::string msg = error_of(net.layers[0](ops::ones({1, 5, 5, 2})));
  EXPECT_NE(msg.find("layers.0: expected input channels 3, got 2"),
            std::string::npos)
      << msg;
  msg = error_of(net.layers[0](ops::ones({5, 5, 3})));
  EXPECT_NE(msg.find("layers.0: expected an input with 4 dimensions"),
            std::string::npos)
      << msg;
  msg = error_of(net.layers[0](ops::ones({1, 5, 5, 3}, int32)));
  EXPECT_NE(msg.find("expected a floating input"), std::string::npos) << msg;
  msg = error_of(net.pool(ops::ones({4, 4, 3})));
  EXPECT_NE(msg.find("pool: expected an input with 4 dimensions"),
            std::string::npos)
      << msg;
  msg = error_of(nn::Conv1d(3, 4, 2)(ops::ones({1, 5, 4})));
  EXPECT_NE(msg.find("Conv1d: expected input channels 3, got 4"),
            std::string::npos)
      << msg;
  msg = error_of(nn::MaxPool1d(4, 1)(ops::ones({1, 2, 1})));
  EXPECT_NE(msg.find("larger than the padded input"), std::string::npos) << msg;
  msg = error_of(nn::Upsample(2.0)(ops::ones({4, 3})));
  EXPECT_NE(
      msg.find("Upsample: the input should have at least 1 spatial dimension"),
      std::string::npos);
  msg = error_of(nn::Upsample(std::vector<double>{2, 2})(ops::ones({1, 4, 3})));
  EXPECT_NE(msg.find("one scale per spatial dimension"), std::string::npos)
      << msg;
  msg = error_of(nn::upsample_linear(ops::ones({1, 4, 3}), {2, 2}));
  EXPECT_NE(msg.find("[upsample_linear] one scale per spatial dimension"),
            std::string::npos)
      << msg;
}

TEST(NnConv, InvalidConstructorArgumentsThrow) {
  EXPECT_THROW(nn::Conv1d(3, 4, 2, 1, 0, 1, 2), Error);  // 3 channels, 2 groups
  EXPECT_THROW(nn::Conv1d(4, 3, 2, 1, 0, 1, 2), Error);  // 3 outputs, 2 groups
  EXPECT_THROW(nn::Conv1d(0, 4, 2), Error);
  EXPECT_THROW(nn::Conv2d(3, 4, {2, 0}), Error);
  EXPECT_THROW(nn::Conv2d(3, 4, 2, 0), Error);
  EXPECT_THROW(nn::Conv3d(3, 4, 2, 1, -1), Error);
  EXPECT_THROW(nn::ConvTranspose1d(3, 4, 2, 1, 0, 0), Error);
  EXPECT_THROW(nn::ConvTranspose2d(3, 4, 2, 1, 0, 1, -1), Error);
  EXPECT_THROW(nn::MaxPool2d(0), Error);
  EXPECT_THROW(nn::AvgPool1d(2, 0), Error);
  EXPECT_THROW(nn::MaxPool3d(2, 2, -1), Error);
  EXPECT_THROW(nn::Upsample(2.0, "bilinear"), Error);
  EXPECT_THROW(nn::Upsample(2.0, "nearest", false, true), Error);
  EXPECT_THROW(nn::Upsample(2.0, "linear", true, true), Error);
  EXPECT_THROW(nn::Upsample(-1.0), Error);
  try {
    nn::Conv2d(3, 4, 3, 1, 0, 1, 2);
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "Conv2d: the number of input channels (3) must be divisible"),
              std::string::npos)
        << e.what();
  }
  // A failed constructor draws nothing: the key sequence is where it was.
  random::seed(3);
  Array before = random::uniform({2});
  random::seed(3);
  EXPECT_THROW(nn::Conv1d(3, 4, 2, 0), Error);
  EXPECT_TRUE(nn_test::same_bits(random::uniform({2}), before));
}

TEST(NnConv, PoolStrideDefaultsToKernel) {
  nn::MaxPool2d p(3, std::nullopt, 1);
  EXPECT_EQ(p.stride, (std::vector<int>{3, 3}));
  EXPECT_EQ(p.padding, (std::vector<int>{1, 1}));
  nn::AvgPool2d q({2, 3}, std::nullopt);  // one braced argument alone would
                                          // also match the copy constructor
  EXPECT_EQ(q.stride, (std::vector<int>{2, 3}));
  // Hand-derived: mean of [[1, 2], [3, 4]] windows.
  Array x = ops::arange(1, 17).astype(float32).reshape({1, 4, 4, 1});
  Array y = nn::AvgPool2d(2)(x).reshape({-1});
  EXPECT_EQ(y.to_vector<float>(),
            (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
  Array z = nn::MaxPool2d(2, 1)(x).reshape({-1});
  EXPECT_EQ(z.to_vector<float>(),
            (std::vector<float>{6, 7, 8, 10, 11, 12, 14, 15, 16}));
}
