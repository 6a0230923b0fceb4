// The activations of nuvec::nn against MLX 0.32.4's (functions and layer
// classes; tests/refs/nn_losses.ref, recorded by
// tools/record_mlx_nn_losses.py), their gradients against finite
// differences, and invalid calls.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "nn/support/nn_refs.h"
#include "nuvec/nn.h"
#include "support/refs.h"

using namespace nuvec;
using nuvec::nn_test::ref_array;
using nuvec::nn_test::ulp_distance;

namespace {

const std::vector<refs::Case>& all_cases() {
  static auto cases = refs::load(refs::ref_path("nn_losses.ref"));
  return cases;
}

/// How far an output may be from MLX's: `ulps` units in the last place of
/// the dtype, or `atol` absolute.
struct Tol {
  int ulps = 0;
  double atol = 0;
};

/// Same dtype and shape, and every element within the tolerance (NaN
/// matches NaN; integers and bools exactly).
::testing::AssertionResult close_to(const refs::Tensor& want_t,
                                    const Array& got, Tol tol) {
  Array want = ref_array(want_t);
  if (got.dtype() != want.dtype())
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(got.dtype()) << ", MLX's "
           << dtype_name(want.dtype());
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape differs";
  if (!is_floating(got.dtype())) {
    if (ops::array_equal(got, want).item<bool>())
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "integer values differ";
  }
  int width = got.itemsize() * 8;
  DType bits = width == 32 ? uint32 : (width == 16 ? uint16 : uint64);
  auto g = ops::view(ops::contiguous(got), bits)
               .astype(uint64)
               .to_vector<uint64_t>();
  auto w = ops::view(ops::contiguous(want), bits)
               .astype(uint64)
               .to_vector<uint64_t>();
  auto gf = got.astype(float64).to_vector<double>();
  auto wf = want.astype(float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(gf[i]) && std::isnan(wf[i])) continue;
    if (std::isnan(gf[i]) != std::isnan(wf[i]) ||
        std::isinf(gf[i]) != std::isinf(wf[i]))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << gf[i] << ", MLX's " << wf[i];
    int64_t d = ulp_distance(g[i], w[i], width);
    if (d <= tol.ulps || std::abs(gf[i] - wf[i]) <= tol.atol) continue;
    return ::testing::AssertionFailure()
           << "element " << i << ": " << gf[i] << ", MLX's " << wf[i] << " ("
           << d << " ulps)";
  }
  return ::testing::AssertionSuccess();
}

Array run_activation(const refs::Case& c, const std::vector<Array>& in) {
  const std::string& op = c.op;
  const Array& x = in.at(0);
  bool has = !c.params.empty();
  auto d = [&](const char* k) { return c.param_double(k); };
  auto axis = [&] { return static_cast<int>(c.param_int("axis")); };
  if (op == "sigmoid") return nn::sigmoid(x);
  if (op == "relu") return nn::relu(x);
  if (op == "relu2") return nn::relu2(x);
  if (op == "relu6") return nn::relu6(x);
  if (op == "leaky_relu")
    return has ? nn::leaky_relu(x, d("negative_slope")) : nn::leaky_relu(x);
  if (op == "log_softmax")
    return has ? nn::log_softmax(x, axis()) : nn::log_softmax(x);
  if (op == "elu") return has ? nn::elu(x, d("alpha")) : nn::elu(x);
  if (op == "softmax") return has ? nn::softmax(x, axis()) : nn::softmax(x);
  if (op == "softplus") return nn::softplus(x);
  if (op == "softsign") return nn::softsign(x);
  if (op == "softshrink")
    return has ? nn::softshrink(x, d("lambd")) : nn::softshrink(x);
  if (op == "celu") return has ? nn::celu(x, d("alpha")) : nn::celu(x);
  if (op == "silu") return nn::silu(x);
  if (op == "log_sigmoid") return nn::log_sigmoid(x);
  if (op == "gelu") return nn::gelu(x);
  if (op == "gelu_approx") return nn::gelu_approx(x);
  if (op == "gelu_fast_approx") return nn::gelu_fast_approx(x);
  if (op == "glu") return has ? nn::glu(x, axis()) : nn::glu(x);
  if (op == "step") return has ? nn::step(x, d("threshold")) : nn::step(x);
  if (op == "selu") return nn::selu(x);
  if (op == "prelu") return nn::prelu(x, in.at(1));
  if (op == "mish") return nn::mish(x);
  if (op == "hardswish") return nn::hardswish(x);
  if (op == "hard_tanh")
    return has ? nn::hard_tanh(x, d("min_val"), d("max_val"))
               : nn::hard_tanh(x);
  if (op == "hard_shrink")
    return has ? nn::hard_shrink(x, d("lambd")) : nn::hard_shrink(x);
  if (op == "softmin") return has ? nn::softmin(x, axis()) : nn::softmin(x);
  if (op == "tanh") return nn::tanh(x);
  throw std::runtime_error("no activation " + op);
}

template <class L>
std::vector<Array> call(const L& layer, const Array& x) {
  return {layer(x)};
}

std::vector<Array> run_layer(const refs::Case& c, const Array& x) {
  const std::string& cls = c.param("cls");
  bool has = c.params.size() > 1;
  auto d = [&](const char* k) { return c.param_double(k); };
  if (cls == "Sigmoid") return call(nn::Sigmoid(), x);
  if (cls == "Mish") return call(nn::Mish(), x);
  if (cls == "ReLU") return call(nn::ReLU(), x);
  if (cls == "ReLU2") return call(nn::ReLU2(), x);
  if (cls == "ReLU6") return call(nn::ReLU6(), x);
  if (cls == "LeakyReLU")
    return call(has ? nn::LeakyReLU(d("negative_slope")) : nn::LeakyReLU(), x);
  if (cls == "ELU") return call(has ? nn::ELU(d("alpha")) : nn::ELU(), x);
  if (cls == "Softmax") return call(nn::Softmax(), x);
  if (cls == "Softplus") return call(nn::Softplus(), x);
  if (cls == "Softsign") return call(nn::Softsign(), x);
  if (cls == "Softshrink")
    return call(has ? nn::Softshrink(d("lambd")) : nn::Softshrink(), x);
  if (cls == "CELU") return call(has ? nn::CELU(d("alpha")) : nn::CELU(), x);
  if (cls == "SiLU") return call(nn::SiLU(), x);
  if (cls == "LogSoftmax") return call(nn::LogSoftmax(), x);
  if (cls == "LogSigmoid") return call(nn::LogSigmoid(), x);
  if (cls == "PReLU") {
    nn::PReLU p =
        has ? nn::PReLU(static_cast<int>(c.param_int("num_parameters")),
                        d("init"))
            : nn::PReLU();
    return {p.weight.value, p(x)};
  }
  if (cls == "GELU")
    return call(has ? nn::GELU(c.param("approx")) : nn::GELU(), x);
  if (cls == "Tanh") return call(nn::Tanh(), x);
  if (cls == "Hardswish") return call(nn::Hardswish(), x);
  if (cls == "Step")
    return call(has ? nn::Step(d("threshold")) : nn::Step(), x);
  if (cls == "SELU") return call(nn::SELU(), x);
  if (cls == "HardTanh") return call(nn::HardTanh(), x);
  if (cls == "HardShrink")
    return call(has ? nn::HardShrink(d("lambd")) : nn::HardShrink(), x);
  if (cls == "Softmin") return call(nn::Softmin(), x);
  if (cls == "GLU")
    return call(
        has ? nn::GLU(static_cast<int>(c.param_int("axis"))) : nn::GLU(), x);
  throw std::runtime_error("no layer " + cls);
}

/// The activations made of comparisons, min/max, sign, abs and arithmetic
/// alone: MLX's bits.
const std::set<std::string> kExact = {
    "relu", "relu2", "relu6",     "leaky_relu", "softshrink", "softsign",
    "step", "prelu", "hardswish", "hard_tanh",  "hard_shrink"};

/// The tolerance for an activation: exact for kExact; for those through
/// exp, log, tanh, erf or sigmoid (nuvec's math functions are its own,
/// within about 1 ulp, and MLX's are a few ulp off, flush tiny results to
/// zero and compute 16-bit sigmoid and logsumexp in 16 bits) 16 ulp of
/// float32 or 2 ulp of a 16-bit format, or 4 machine epsilons absolute
/// (the cancellations of gelu's tail, log_softmax near 0, underflow).
Tol tol_for(const std::string& op, DType dtype) {
  if (kExact.count(op)) return {};
  if (dtype == float32) return {16, 4 * 1.1920929e-7};
  if (dtype == float16) return {2, 4 * 9.765625e-4};
  return {2, 4 * 7.8125e-3};
}

const std::set<std::string> kActivations = {"sigmoid",
                                            "relu",
                                            "relu2",
                                            "relu6",
                                            "leaky_relu",
                                            "log_softmax",
                                            "elu",
                                            "softmax",
                                            "softplus",
                                            "softsign",
                                            "softshrink",
                                            "celu",
                                            "silu",
                                            "log_sigmoid",
                                            "gelu",
                                            "gelu_approx",
                                            "gelu_fast_approx",
                                            "glu",
                                            "step",
                                            "selu",
                                            "prelu",
                                            "mish",
                                            "hardswish",
                                            "hard_tanh",
                                            "hard_shrink",
                                            "softmin",
                                            "tanh"};

/// The function each layer class calls.
const std::map<std::string, std::string> kLayerFunction = {
    {"Sigmoid", "sigmoid"},
    {"Mish", "mish"},
    {"ReLU", "relu"},
    {"ReLU2", "relu2"},
    {"ReLU6", "relu6"},
    {"LeakyReLU", "leaky_relu"},
    {"ELU", "elu"},
    {"Softmax", "softmax"},
    {"Softplus", "softplus"},
    {"Softsign", "softsign"},
    {"Softshrink", "softshrink"},
    {"CELU", "celu"},
    {"SiLU", "silu"},
    {"LogSoftmax", "log_softmax"},
    {"LogSigmoid", "log_sigmoid"},
    {"PReLU", "prelu"},
    {"GELU", "gelu"},
    {"Tanh", "tanh"},
    {"Hardswish", "hardswish"},
    {"Step", "step"},
    {"SELU", "selu"},
    {"HardTanh", "hard_tanh"},
    {"HardShrink", "hard_shrink"},
    {"Softmin", "softmin"},
    {"GLU", "glu"}};

}  // namespace

TEST(NnActivations, FunctionsEqualMlx) {
  std::set<std::string> seen;
  int replayed = 0;
  for (auto& c : all_cases()) {
    if (!kActivations.count(c.op)) continue;
    std::vector<Array> in;
    for (auto& t : c.inputs) in.push_back(ref_array(t));
    Array y = run_activation(c, in);
    ++replayed;
    seen.insert(c.op);
    if (c.error) {
      EXPECT_THROW(y.eval(), Error)
          << c.where() << " (MLX: " << *c.error << ")";
      continue;
    }
    ASSERT_EQ(c.outputs.size(), 1u) << c.where();
    EXPECT_TRUE(close_to(c.outputs[0], y, tol_for(c.op, y.dtype())))
        << c.where();
  }
  EXPECT_EQ(seen, kActivations);
  EXPECT_GE(replayed, 131);
}

TEST(NnActivations, LayersEqualMlx) {
  int replayed = 0;
  for (auto& c : all_cases()) {
    if (c.op != "layer") continue;
    ++replayed;
    Array x = ref_array(c.inputs.at(0));
    if (c.error) {
      EXPECT_THROW(run_layer(c, x), Error)
          << c.where() << " (MLX: " << *c.error << ")";
      continue;
    }
    auto got = run_layer(c, x);
    ASSERT_EQ(got.size(), c.outputs.size()) << c.where();
    Tol tol = tol_for(kLayerFunction.at(c.param("cls")), float32);
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(close_to(c.outputs[i], got[i], tol)) << c.where();
  }
  EXPECT_GE(replayed, 36);
}

TEST(NnActivations, LayersAreModules) {
  nn::PReLU p(4, 0.5);
  auto params = p.parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(params[0].second.shape(), (Shape{4}));
  EXPECT_EQ(params[0].second.dtype(), float32);
  EXPECT_EQ(p.name(), "PReLU");
  EXPECT_EQ(nn::GELU("tanh").name(), "GELU");
  EXPECT_TRUE(nn::ReLU().parameters().empty());
  // Options are structure: a changed slope is a different tree.
  EXPECT_FALSE(tree_def(nn::LeakyReLU(0.1)) == tree_def(nn::LeakyReLU(0.2)));
  EXPECT_TRUE(tree_def(nn::GELU("fast")) == tree_def(nn::GELU("fast")));
}

TEST(NnActivations, InvalidCalls) {
  EXPECT_THROW(nn::GELU("erf"), Error);
  EXPECT_THROW(nn::PReLU(0), Error);
  try {
    nn::glu(ops::ones({3, 5})).check();
    FAIL() << "expected a failed array";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_shape);
    EXPECT_NE(e.message().find("must be even"), std::string::npos)
        << e.message();
  }
  EXPECT_THROW(nn::glu(ops::ones({4}), 1).check(), Error);
  EXPECT_THROW(nn::glu(ops::ones({4}), -2).check(), Error);
  // prelu's alpha must broadcast
  EXPECT_THROW(nn::prelu(ops::ones({2, 3}), ops::ones({4})).eval(), Error);
  // a failed input passes through
  Array bad = ops::reshape(ops::ones({6}), {4, 2});
  EXPECT_THROW(nn::gelu(bad).eval(), Error);
  EXPECT_THROW(nn::glu(bad).eval(), Error);
}

namespace {

/// Central differences of sum(f(x) * w) in float64 against the gradient
/// nuvec computes, at the points of x (away from kinks).
void expect_grad_matches_fd(const std::function<Array(const Array&)>& f,
                            const Array& x0, const std::string& what) {
  Array x = x0.astype(float64);
  Array w = random::normal(f(x).shape(), float32, 0.0f, 1.0f, random::key(7))
                .astype(float64);
  auto loss = [&](const std::vector<Array>& a) {
    return ops::sum(f(a[0]) * w);
  };
  Array g = grad(ArraysToArray(loss), 0)({x})[0];
  auto gv = g.to_vector<double>();
  auto xv = x.to_vector<double>();
  const double h = 1e-6;
  for (size_t i = 0; i < xv.size(); ++i) {
    auto at = [&](double delta) {
      auto v = xv;
      v[i] += delta;
      return loss({array(v, x.shape())}).item<double>();
    };
    double fd = (at(h) - at(-h)) / (2 * h);
    EXPECT_NEAR(gv[i], fd, 1e-6 * (1 + std::abs(fd)))
        << what << " element " << i;
  }
}

}  // namespace

TEST(NnActivations, GradientsMatchFiniteDifferences) {
  Array x = array({-2.7, -1.1, -0.3, 0.2, 0.9, 1.6, 3.4, -4.2}, {2, 4});
  expect_grad_matches_fd(nn::gelu, x, "gelu");
  expect_grad_matches_fd(nn::gelu_approx, x, "gelu_approx");
  expect_grad_matches_fd(nn::mish, x, "mish");
  expect_grad_matches_fd(nn::silu, x, "silu");
  expect_grad_matches_fd(nn::log_sigmoid, x, "log_sigmoid");
  expect_grad_matches_fd([](const Array& a) { return nn::elu(a, 0.7); }, x,
                         "elu");
  expect_grad_matches_fd([](const Array& a) { return nn::celu(a, 1.5); }, x,
                         "celu");
  expect_grad_matches_fd(nn::selu, x, "selu");
  expect_grad_matches_fd(nn::softsign, x, "softsign");
  expect_grad_matches_fd([](const Array& a) { return nn::log_softmax(a, -1); },
                         x, "log_softmax");
  expect_grad_matches_fd([](const Array& a) { return nn::softmin(a, 0); }, x,
                         "softmin");
  expect_grad_matches_fd([](const Array& a) { return nn::glu(a, -1); }, x,
                         "glu");
  expect_grad_matches_fd(nn::hardswish, x, "hardswish");
}

TEST(NnActivations, PReLUWeightIsTrained) {
  // d/dw sum(max(0, x) + w min(0, x)) = sum(min(0, x)) = -2 - 1 = -3 for
  // the one slope; the value is 3 + 0.25 * -3.
  nn::PReLU p;
  Array x = array({-2.0f, 3.0f, -1.0f});
  auto vg = nn::value_and_grad(
      p, [](const nn::PReLU& m, const Array& in) { return ops::sum(m(in)); });
  auto [loss, grads] = vg(x);
  EXPECT_FLOAT_EQ(loss.item<float>(), 3.0f - 0.75f);
  EXPECT_EQ(grads.weight.value.shape(), (Shape{1}));
  EXPECT_FLOAT_EQ(grads.weight.value.item<float>(), -3.0f);
}
