// nuvec::nn::losses against MLX 0.32.4's mlx.nn.losses
// (tests/refs/nn_losses.ref, recorded by tools/record_mlx_nn_losses.py),
// MLX's defaults, gradients against finite differences, invalid calls.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <set>

#include "nn/support/nn_refs.h"
#include "nuvec/nn.h"
#include "support/refs.h"

using namespace nuvec;
using namespace nuvec::nn::losses;
using nuvec::nn_test::ref_array;
using nuvec::nn_test::ulp_distance;

namespace {

const std::vector<refs::Case>& all_cases() {
  static auto cases = refs::load(refs::ref_path("nn_losses.ref"));
  return cases;
}

/// How far a loss may be from MLX's: `ulps` in the dtype, or `atol` times
/// the largest |MLX value| of the output (at least 1).
struct Tol {
  int ulps = 0;
  double atol = 0;
};

::testing::AssertionResult close_to(const refs::Tensor& want_t,
                                    const Array& got, Tol tol) {
  Array want = ref_array(want_t);
  if (got.dtype() != want.dtype())
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(got.dtype()) << ", MLX's "
           << dtype_name(want.dtype());
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape differs";
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
  double scale = 1;
  for (double v : wf)
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(gf[i]) && std::isnan(wf[i])) continue;
    if (std::isnan(gf[i]) != std::isnan(wf[i]) ||
        std::isinf(gf[i]) != std::isinf(wf[i]))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << gf[i] << ", MLX's " << wf[i];
    int64_t d = ulp_distance(g[i], w[i], width);
    if (d <= tol.ulps || std::abs(gf[i] - wf[i]) <= tol.atol * scale) continue;
    return ::testing::AssertionFailure()
           << "element " << i << ": " << gf[i] << ", MLX's " << wf[i] << " ("
           << d << " ulps)";
  }
  return ::testing::AssertionSuccess();
}

/// Arithmetic, abs, min/max and where alone: MLX's bits when nothing is
/// summed.
/// (huber_loss squares with power, which is libm's pow in MLX.)
const std::set<std::string> kArithmetic = {"l1_loss", "mse_loss",
                                           "smooth_l1_loss", "hinge_loss",
                                           "margin_ranking_loss"};

/// Exact for arithmetic losses without a reduction; otherwise nuvec's math
/// functions (within about 1 ulp, MLX's a few ulp off) and its summation
/// order (fixed, not MLX's) leave rounding differences: 8 ulp of float32
/// (2 of a 16-bit format), or 4 epsilons of the output's scale (MLX's exp
/// flushes tiny results such as logaddexp(0, -100) to 0).
Tol tol_for(const refs::Case& c, DType dtype) {
  std::string red = c.has("reduction") ? c.param("reduction") : "";
  if (kArithmetic.count(c.op) && red == "none") return {};
  if (dtype == float32) return {8, 4 * 1.1920929e-7};
  if (dtype == float16) return {2, 4 * 9.765625e-4};
  return {2, 4 * 7.8125e-3};
}

const std::set<std::string> kLosses = {"cross_entropy",
                                       "binary_cross_entropy",
                                       "l1_loss",
                                       "mse_loss",
                                       "nll_loss",
                                       "gaussian_nll_loss",
                                       "kl_div_loss",
                                       "smooth_l1_loss",
                                       "triplet_loss",
                                       "hinge_loss",
                                       "huber_loss",
                                       "log_cosh_loss",
                                       "cosine_similarity_loss",
                                       "margin_ranking_loss"};

Array run_loss(const refs::Case& c, const std::vector<Array>& in,
               bool use_options) {
  const std::string& op = c.op;
  auto d = [&](const char* k, double def) {
    return c.has(k) ? c.param_double(k) : def;
  };
  auto i = [&](const char* k, int def) {
    return c.has(k) ? static_cast<int>(c.param_int(k)) : def;
  };
  auto red = [&](const char* def) {
    return c.has("reduction") ? c.param("reduction") : std::string(def);
  };
  const Array& a = in.at(0);
  const Array& b = in.at(1);
  if (op == "cross_entropy") {
    std::optional<Array> w;
    if (c.param_bool("weights")) w = in.at(2);
    if (use_options)
      return cross_entropy(
          a, b,
          CrossEntropyOptions{.weights = w,
                              .axis = i("axis", -1),
                              .label_smoothing = d("label_smoothing", 0),
                              .reduction = red("none")});
    return cross_entropy(a, b, w, i("axis", -1), d("label_smoothing", 0),
                         red("none"));
  }
  if (op == "binary_cross_entropy") {
    std::optional<Array> w;
    if (c.param_bool("weights")) w = in.at(2);
    return binary_cross_entropy(a, b, w, c.param_bool("with_logits"),
                                red("mean"));
  }
  if (op == "l1_loss") return l1_loss(a, b, red("mean"));
  if (op == "mse_loss") return mse_loss(a, b, red("mean"));
  if (op == "nll_loss") return nll_loss(a, b, i("axis", -1), red("none"));
  if (op == "gaussian_nll_loss")
    return gaussian_nll_loss(a, b, in.at(2),
                             c.has("full") && c.param_bool("full"),
                             d("eps", 1e-6), red("mean"));
  if (op == "kl_div_loss") return kl_div_loss(a, b, i("axis", -1), red("none"));
  if (op == "smooth_l1_loss")
    return smooth_l1_loss(a, b, d("beta", 1.0), red("mean"));
  if (op == "triplet_loss")
    return triplet_loss(a, b, in.at(2), i("axis", -1), i("p", 2),
                        d("margin", 1.0), d("eps", 1e-6), red("none"));
  if (op == "hinge_loss") return hinge_loss(a, b, red("none"));
  if (op == "huber_loss") return huber_loss(a, b, d("delta", 1.0), red("none"));
  if (op == "log_cosh_loss") return log_cosh_loss(a, b, red("none"));
  if (op == "cosine_similarity_loss")
    return cosine_similarity_loss(a, b, i("axis", 1), d("eps", 1e-8),
                                  red("none"));
  if (op == "margin_ranking_loss")
    return margin_ranking_loss(a, b, in.at(2), d("margin", 0.0), red("none"));
  throw std::runtime_error("no loss " + op);
}

}  // namespace

TEST(NnLosses, EqualMlx) {
  std::set<std::string> seen;
  int replayed = 0, errors = 0;
  for (auto& c : all_cases()) {
    if (!kLosses.count(c.op)) continue;
    std::vector<Array> in;
    for (auto& t : c.inputs) in.push_back(ref_array(t));
    Array y = run_loss(c, in, replayed % 2 == 1);
    ++replayed;
    seen.insert(c.op);
    if (c.error) {
      ++errors;
      EXPECT_TRUE(y.is_failed()) << c.where() << " (MLX: " << *c.error << ")";
      EXPECT_THROW(y.eval(), Error) << c.where();
      continue;
    }
    ASSERT_EQ(c.outputs.size(), 1u) << c.where();
    EXPECT_TRUE(close_to(c.outputs[0], y, tol_for(c, y.dtype()))) << c.where();
  }
  EXPECT_EQ(seen, kLosses);
  EXPECT_GE(replayed, 175);
  EXPECT_GE(errors, 20);
}

TEST(NnLosses, DefaultArgumentsAreMlxs) {
  // MLX's signatures: the default reduction differs between losses.
  Array p = array({0.3f, -1.2f, 2.5f, 0.1f, -0.7f, 1.9f}, {2, 3});
  Array t = array({0.1f, -0.2f, 0.5f, -1.0f, 0.4f, 1.0f}, {2, 3});
  Array v = array({0.5f, 1.5f, 0.2f, 1e-9f, 2.0f, 0.7f}, {2, 3});
  Array idx = array({2, 0});
  Array sign = array({1.0f, -1.0f, 1.0f, -1.0f, -1.0f, 1.0f}, {2, 3});
  auto same = [](const Array& x, const Array& y) {
    return ops::array_equal(x, y, true).item<bool>();
  };
  EXPECT_TRUE(same(cross_entropy(p, idx),
                   cross_entropy(p, idx, std::nullopt, -1, 0.0, "none")));
  EXPECT_TRUE(same(cross_entropy(p, idx, CrossEntropyOptions{}),
                   cross_entropy(p, idx)));
  EXPECT_TRUE(same(
      binary_cross_entropy(p, sign * 0.5 + 0.5),
      binary_cross_entropy(p, sign * 0.5 + 0.5, std::nullopt, true, "mean")));
  EXPECT_TRUE(same(l1_loss(p, t), l1_loss(p, t, "mean")));
  EXPECT_TRUE(same(mse_loss(p, t), mse_loss(p, t, "mean")));
  EXPECT_TRUE(same(nll_loss(p, idx), nll_loss(p, idx, -1, "none")));
  EXPECT_TRUE(same(gaussian_nll_loss(p, t, v),
                   gaussian_nll_loss(p, t, v, false, 1e-6, "mean")));
  EXPECT_TRUE(same(kl_div_loss(p, t), kl_div_loss(p, t, -1, "none")));
  EXPECT_TRUE(same(smooth_l1_loss(p, t), smooth_l1_loss(p, t, 1.0, "mean")));
  EXPECT_TRUE(same(triplet_loss(p, t, v),
                   triplet_loss(p, t, v, -1, 2, 1.0, 1e-6, "none")));
  EXPECT_TRUE(same(hinge_loss(p, sign), hinge_loss(p, sign, "none")));
  EXPECT_TRUE(same(huber_loss(p, t), huber_loss(p, t, 1.0, "none")));
  EXPECT_TRUE(same(log_cosh_loss(p, t), log_cosh_loss(p, t, "none")));
  EXPECT_TRUE(same(cosine_similarity_loss(p, t),
                   cosine_similarity_loss(p, t, 1, 1e-8, "none")));
  EXPECT_TRUE(same(margin_ranking_loss(p, t, sign),
                   margin_ranking_loss(p, t, sign, 0.0, "none")));
  EXPECT_EQ(cosine_similarity_loss(p, t).shape(),
            (Shape{2}));  // axis 1 by default
  EXPECT_EQ(l1_loss(p, t).ndim(), 0);
}

TEST(NnLosses, InvalidCallsGiveFailedArrays) {
  Array x = ops::zeros({4, 5});
  Array t = ops::zeros({4}, int32);
  auto message = [](const Array& a) {
    try {
      a.check();
    } catch (const Error& e) {
      return std::make_pair(e.kind(), std::string(e.message()));
    }
    return std::make_pair(ErrorKind::internal, std::string("did not fail"));
  };
  auto [k1, m1] = message(cross_entropy(x, t, std::nullopt, -1, 0.0, "avg"));
  EXPECT_EQ(k1, ErrorKind::invalid_argument);
  EXPECT_NE(m1.find("reduction"), std::string::npos) << m1;
  auto [k2, m2] = message(cross_entropy(x, ops::zeros({5}, int32)));
  EXPECT_EQ(k2, ErrorKind::shape_mismatch);
  EXPECT_EQ(m2, "targets shape (5,) does not match logits shape (4, 5)");
  auto [k3, m3] = message(cross_entropy(x, t, std::nullopt, 2));
  EXPECT_EQ(k3, ErrorKind::invalid_axis) << m3;
  auto [k4, m4] = message(cross_entropy(x, t, {.label_smoothing = 1.0}));
  EXPECT_EQ(k4, ErrorKind::invalid_argument) << m4;
  auto [k5, m5] = message(mse_loss(ops::zeros({2, 3}), ops::zeros({3, 2})));
  EXPECT_EQ(m5, "predictions shape (2, 3) does not match targets shape (3, 2)");
  auto [k6, m6] = message(
      binary_cross_entropy(ops::zeros({3}), ops::zeros({3}), ops::ones({2})));
  EXPECT_EQ(m6,
            "weights with shape (2,) is not the same as the output loss with "
            "shape (3,)");
  EXPECT_EQ(k6, ErrorKind::shape_mismatch);
  // The failed array names the loss and the caller's line.
  Array bad = huber_loss(ops::zeros({2}), ops::zeros({2}), 1.0, "max");
  int line = __LINE__ - 1;
  ASSERT_TRUE(bad.is_failed());
  EXPECT_EQ(bad.error()->op_name().value_or(""), "huber_loss");
  EXPECT_EQ(bad.error()->line(), line);
  // A failed input passes through; reading any of these throws.
  Array failed = ops::reshape(ops::ones({6}), {4, 2});
  EXPECT_THROW(l1_loss(failed, failed).eval(), Error);
  EXPECT_THROW(cross_entropy(failed, t).eval(), Error);
  EXPECT_THROW(triplet_loss(failed, failed, failed).eval(), Error);
  // Shapes that do not broadcast fail in the op.
  EXPECT_THROW(hinge_loss(ops::zeros({3}), ops::zeros({4})).eval(), Error);
  EXPECT_THROW(nll_loss(x, ops::zeros({3}, int32)).eval(), Error);
}

namespace {

/// The gradient nuvec computes for loss(x) against central differences in
/// float64.
void expect_grad_matches_fd(const std::function<Array(const Array&)>& loss,
                            const Array& x0, const std::string& what) {
  Array x = x0.astype(float64);
  auto f = [&](const std::vector<Array>& a) { return loss(a[0]); };
  auto [value, grads] = value_and_grad(ArraysToArray(f), 0)({x});
  ASSERT_EQ(value.size(), 1) << what;
  auto g = grads[0].to_vector<double>();
  auto xv = x.to_vector<double>();
  const double h = 1e-6;
  for (size_t i = 0; i < xv.size(); ++i) {
    auto at = [&](double delta) {
      auto v = xv;
      v[i] += delta;
      return loss(array(v, x.shape())).item<double>();
    };
    double fd = (at(h) - at(-h)) / (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-6 * (1 + std::abs(fd)))
        << what << " element " << i;
  }
}

}  // namespace

TEST(NnLosses, GradientsMatchFiniteDifferences) {
  Array logits =
      array({1.2, -0.4, 0.3, 2.1, -1.7, 0.8, 0.05, -0.9, 1.4, -2.2, 0.6, 0.0},
            {3, 4});
  Array idx = array({2, 0, 3});
  Array probs = ops::softmax(
      array({0.1, 0.9, -0.3, 0.2, 1.1, -0.5, 0.4, 0.0, -1.0, 0.3, 0.7, 0.2},
            {3, 4}),
      -1);
  Array w = array({0.5, 1.0, 2.0}, float64);
  expect_grad_matches_fd(
      [&](const Array& l) {
        return cross_entropy(l, idx, std::nullopt, -1, 0.0, "mean");
      },
      logits, "cross_entropy");
  expect_grad_matches_fd(
      [&](const Array& l) { return cross_entropy(l, idx, w, -1, 0.2, "sum"); },
      logits, "cross_entropy smoothed, weighted");
  expect_grad_matches_fd(
      [&](const Array& l) {
        return cross_entropy(l, probs, {.reduction = "mean"});
      },
      logits, "cross_entropy probabilities");
  expect_grad_matches_fd(
      [&](const Array& l) {
        return cross_entropy(l, idx, {.axis = 0, .reduction = "sum"});
      },
      logits.transpose(), "cross_entropy axis 0");
  Array y = array({1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0},
                  {3, 4});
  expect_grad_matches_fd(
      [&](const Array& l) { return binary_cross_entropy(l, y); }, logits,
      "bce logits");
  Array p = ops::sigmoid(logits.astype(float64));
  expect_grad_matches_fd(
      [&](const Array& q) {
        return binary_cross_entropy(q, y, std::nullopt, false, "sum");
      },
      p, "bce probabilities");
  Array t = logits * 0.5 + 0.3;
  expect_grad_matches_fd(
      [&](const Array& a) { return smooth_l1_loss(a, t, 0.5); }, logits,
      "smooth_l1");
  expect_grad_matches_fd(
      [&](const Array& a) { return huber_loss(a, t, 0.4, "sum"); }, logits,
      "huber");
  expect_grad_matches_fd(
      [&](const Array& a) { return log_cosh_loss(a, t, "mean"); }, logits,
      "log_cosh");
  Array vars = ops::abs(logits) + 0.1;
  expect_grad_matches_fd(
      [&](const Array& v) { return gaussian_nll_loss(t, logits, v, true); },
      vars, "gaussian_nll vars");
  expect_grad_matches_fd(
      [&](const Array& a) {
        return cosine_similarity_loss(a, t, 1, 1e-8, "sum");
      },
      logits, "cosine_similarity");
  expect_grad_matches_fd(
      [&](const Array& a) {
        return triplet_loss(a, t, logits * -0.2, -1, 2, 1.0, 1e-6, "mean");
      },
      logits, "triplet");
  expect_grad_matches_fd(
      [&](const Array& a) {
        return kl_div_loss(nn::log_softmax(a), nn::log_softmax(t), -1, "sum");
      },
      logits, "kl_div");
}
