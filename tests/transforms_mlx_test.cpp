// Gradients and Hessian-vector products of composite functions against MLX
// (tests/refs/grads.ref, written by tools/record_mlx_grads.py). Each case
// names a function; the same function is written here with nuvec ops in
// `functions()`, and run through value_and_grad_flat (the value and the
// gradient of every float input) and, for "hvp" cases, jvp_flat of
// grad_flat (the Hessian applied to the recorded tangents).
//
// Tolerance, per output k and element i:
//   |got_i - want_i| <= 1e-5 * (|want_i| + max_j |want_j|)
// Both sides compute in float32, but in different orders: nuvec's and
// MLX's reductions, matmuls and convolutions sum in different orders and
// blockings, and their vectorized exp / log / erf differ by an ulp here and
// there; through a chain of a few dozen ops this leaves a few tens of ulps
// (1e-5 is about 84 float32 ulps). The absolute floor is scaled to the
// largest value of the same output because elements that come out of a
// cancellation (layer-norm gradients, which sum to zero; the masked rows of
// attention) carry the absolute error of the larger terms they cancel. The
// recorder checks that MLX's own float32 results stay within a few percent
// of this bound of its float64 results.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <set>
#include <sstream>

#include "support/conformance.h"

namespace nuvec {
namespace {

namespace cf = conformance;
using Fn = std::function<Array(const std::vector<Array>&)>;

constexpr double kRtol = 1e-5;
const double kInf = std::numeric_limits<double>::infinity();

Array gelu(const Array& h) { return 0.5 * h * (1 + ops::erf(h * (1 / std::numbers::sqrt2))); }
Array relu(const Array& h) { return ops::maximum(h, 0.0); }

Array mlp(const std::vector<Array>& a, Array (*act)(const Array&)) {
  Array out = ops::matmul(act(ops::matmul(a[0], a[1]) + a[2]), a[3]) + a[4];
  return ops::mean(ops::square(out - a[5]));
}

// The functions of tools/record_mlx_grads.py, in the same order, keyed by
// the case names there.
const std::map<std::string, Fn>& functions() {
  static const std::map<std::string, Fn> table = {
      {"softmax_xent",
       [](const std::vector<Array>& a) {
         Array labels = ops::expand_dims(a[1], Axes{1});
         Array picked = ops::squeeze(ops::take_along_axis(a[0], labels, -1), Axes{-1});
         return ops::mean(ops::logsumexp(a[0], Axes{-1}) - picked);
       }},
      {"log_softmax",
       [](const std::vector<Array>& a) {
         return ops::sum((a[0] - ops::logsumexp(a[0], Axes{-1}, true)) * a[1]);
       }},
      {"softmax_axes",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::softmax(a[0], Axes{-1}) * a[1]) +
                ops::sum(ops::square(ops::softmax(a[0], Axes{0})));
       }},
      {"layer_norm",
       [](const std::vector<Array>& a) {
         Array mu = ops::mean(a[0], Axes{-1}, true);
         Array var = ops::var(a[0], Axes{-1}, true);
         Array y = (a[0] - mu) * ops::rsqrt(var + 1e-5) * a[1] + a[2];
         return ops::sum(y * a[3]);
       }},
      {"rms_norm",
       [](const std::vector<Array>& a) {
         Array ms = ops::mean(ops::square(a[0]), Axes{-1}, true);
         return ops::sum(a[0] * ops::rsqrt(ms + 1e-6) * a[1] * a[2]);
       }},
      {"attention",
       [](const std::vector<Array>& a) {
         Array s = ops::matmul(a[0], ops::swapaxes(a[1], -1, -2)) * (1 / std::sqrt(8.0));
         Array causal = ops::greater_equal(ops::expand_dims(ops::arange(5), Axes{1}),
                                           ops::expand_dims(ops::arange(5), Axes{0}));
         Array p = ops::softmax(ops::where(causal, s, -kInf), Axes{-1});
         return ops::sum(ops::matmul(p, a[2]) * a[3]);
       }},
      {"mlp_relu", [](const std::vector<Array>& a) { return mlp(a, relu); }},
      {"mlp_gelu", [](const std::vector<Array>& a) { return mlp(a, gelu); }},
      {"logsumexp_axes",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::square(ops::logsumexp(a[0], Axes{0, 2}))) +
                ops::sum(ops::logsumexp(a[0], Axes{1}, true) * a[1]);
       }},
      {"var_std",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::var(a[0], Axes{1})) +
                ops::sum(ops::std(a[0], Axes{0, 2}, false, 1)) + ops::std(a[0]);
       }},
      {"cumsum_loss",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::square(ops::cumsum(a[0], 1))) +
                ops::sum(ops::cumsum(a[0], 0, true) * a[1]) +
                ops::sum(ops::cumsum(a[0], 1, false, false) * a[1]);
       }},
      {"cumprod_loss",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::cumprod(a[0], 1)) +
                ops::sum(ops::cumprod(a[0], 0, true, false) * a[1]);
       }},
      {"scan_minmax",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::cummax(a[0], 1) * a[1]) +
                ops::sum(ops::cummin(a[0], 0, true) * a[1]);
       }},
      {"logcumsumexp_loss",
       [](const std::vector<Array>& a) { return ops::sum(ops::logcumsumexp(a[0], 1) * a[1]); }},
      {"sort_topk",
       [](const std::vector<Array>& a) {
         Array top3 = ops::sort(a[0], -1).i(slice(), slice(-3, {}));
         // topk's order is unspecified: only an order-free function of it
         return ops::sum(top3 * a[1]) + ops::sum(ops::square(ops::topk(a[0], 2, -1)));
       }},
      {"embedding",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::tanh(ops::take(a[0], a[1], 0)) * a[2]);
       }},
      {"gather_rows",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::square(ops::take(a[0], a[1], 0))) +
                ops::sum(ops::exp(ops::take_along_axis(a[0], a[2], 1)));
       }},
      {"conv1d",
       [](const std::vector<Array>& a) {
         return 0.1 * ops::sum(ops::square(ops::conv1d(a[0], a[1], 2, 1)));
       }},
      {"conv2d",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::tanh(ops::conv2d(a[0], a[1], {2, 1}, 1)) * a[2]);
       }},
      {"concat_split",
       [](const std::vector<Array>& a) {
         Array c = ops::concatenate({a[0], a[1] * 2.0}, 1);
         auto p = ops::split(c, 3, 1);
         auto q = ops::split(c, std::vector<int>{1, 4}, 1);
         return ops::sum(p[0] * p[1]) + ops::sum(ops::square(p[2])) + ops::sum(ops::sin(q[1])) +
                ops::sum(q[0] * q[2].i(slice(), slice({}, 1)));
       }},
      {"huber",
       [](const std::vector<Array>& a) {
         Array d = a[0] - a[1];
         Array ad = ops::abs(d);
         return ops::mean(ops::where(ad < 1.0, 0.5 * ops::square(d), ad - 0.5));
       }},
      {"bce_sigmoid",
       [](const std::vector<Array>& a) {
         Array p = ops::sigmoid(a[0]);
         return -ops::mean(a[1] * ops::log(p) + (1 - a[1]) * ops::log(1 - p));
       }},
      {"softplus",
       [](const std::vector<Array>& a) { return ops::sum(ops::logaddexp(a[0], 0.0) * a[1]); }},
      {"cosine_similarity",
       [](const std::vector<Array>& a) {
         Array num = ops::sum(a[0] * a[1], Axes{-1});
         Array den = ops::sqrt(ops::sum(a[0] * a[0], Axes{-1})) *
                     ops::sqrt(ops::sum(a[1] * a[1], Axes{-1}));
         return ops::mean(num / ops::maximum(den, 1e-8));
       }},
      {"linalg_norm",
       [](const std::vector<Array>& a) {
         const Array& x = a[0];
         return linalg::norm(x) + ops::sum(linalg::norm(x, std::nullopt, Axes{-1})) +
                ops::sum(linalg::norm(x, 1.0, Axes{0})) +
                ops::sum(linalg::norm(x, kInf, Axes{1})) + linalg::norm(x, 1.0);
       }},
      {"power_chain",
       [](const std::vector<Array>& a) {
         const Array &x = a[0], &y = a[1];
         return ops::sum(ops::power(x, 3.0) * ops::power(y, 2.5)) + ops::sum(ops::power(x, y)) +
                ops::sum(ops::sqrt(x) * ops::rsqrt(y)) + ops::sum(ops::reciprocal(x + y));
       }},
      {"trig_chain",
       [](const std::vector<Array>& a) {
         const Array &x = a[0], &y = a[1];
         return ops::sum(ops::arctan2(x, y) + ops::tanh(x) * ops::cosh(y) +
                         ops::log1p(ops::exp(x)) + ops::expm1(y) * ops::sin(x * y) +
                         ops::exp(-ops::square(x)));
       }},
      {"strided_slices",
       [](const std::vector<Array>& a) {
         const Array& x = a[0];
         Array p = x.i(slice({}, {}, 2), slice(1, {}, 3));
         Array q = x.i(slice({}, {}, -1), slice({}, {}, -2)).i(slice(1, 4), slice({}, 3));
         return ops::sum(p * q) + ops::sum(ops::square(x.t().i(slice(2, 5), slice({}, {}, 3))));
       }},
      {"broadcast_transpose",
       [](const std::vector<Array>& a) {
         Array c = a[0] * a[1];
         Array e = ops::reshape(ops::transpose(c, {2, 0, 1}), {12, 5});
         return ops::sum(ops::sin(e) * e.i(slice(0, 1), slice())) +
                ops::sum(ops::broadcast_to(a[1], {2, 5, 3}) *
                         c.i(slice({}, 2), slice(), slice({}, 3)));
       }},
      {"maximum_minimum",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::maximum(a[0], a[1]) * ops::minimum(a[1], a[2])) +
                ops::sum(ops::max(a[0], Axes{1})) + ops::sum(ops::min(a[2], Axes{0}));
       }},
      {"reshape_chain",
       [](const std::vector<Array>& a) {
         Array y = ops::matmul(ops::reshape(a[0], {6, 4}), a[1]);
         Array z = ops::squeeze(ops::expand_dims(ops::flatten(y), Axes{0}), Axes{0});
         return ops::sum(ops::tanh(z) * (ops::arange(36) / 36.0));
       }},
      {"prod_mean",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::prod(a[0], Axes{1})) +
                ops::square(ops::sum(ops::mean(a[0], Axes{0}))) + ops::prod(a[0]);
       }},
      {"where_clip",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::where(a[0] > 0, ops::square(a[0]), ops::sin(a[1]))) +
                ops::sum(ops::clip(a[1], -0.5, 0.5) * a[0]);
       }},
      {"matmul_chain",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::tanh(ops::matmul(ops::matmul(a[0], a[1]), a[2]))) +
                ops::sum(ops::square(ops::matmul(ops::swapaxes(a[0], 1, 2), a[0])));
       }},
      {"einsum",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::einsum("ij,jk->ik", {a[0], a[1]}) * a[2]) +
                ops::einsum("ij,ij->", {a[2], a[2]}) +
                ops::sum(ops::square(ops::einsum("ij->j", {a[0]})));
       }},
      {"pad_loss",
       [](const std::vector<Array>& a) {
         return ops::sum(ops::square(ops::pad(a[0], {{1, 1}, {0, 2}}) * a[1]));
       }},
  };
  return table;
}

const std::vector<refs::Case>& cases() {
  static const std::vector<refs::Case> all = [] {
    try {
      return cf::load_cases("grads.ref");
    } catch (const std::exception& e) {
      // reported by FileAndTableAgree; the parameterized tests get none
      std::fprintf(stderr, "grads.ref: %s\n", e.what());
      return std::vector<refs::Case>{};
    }
  }();
  return all;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& c : cases()) names.push_back(c.id);
  return names;
}

const refs::Case& find_case(const std::string& name) {
  for (const auto& c : cases())
    if (c.id == name) return c;
  throw std::runtime_error("no case " + name);
}

// An empty string when `got` matches `want` within the tolerance above.
std::string compare(const refs::Tensor& want, const Array& got) {
  std::ostringstream os;
  if (got.dtype() != cf::dtype_from_name(want.dtype)) {
    os << "dtype " << dtype_name(got.dtype()) << ", want " << want.dtype;
    return os.str();
  }
  if (got.shape() != Shape(want.shape.begin(), want.shape.end())) {
    os << "shape " << got.shape() << ", want " << Shape(want.shape.begin(), want.shape.end());
    return os.str();
  }
  std::vector<double> g = ops::astype(got, float64).to_vector<double>();
  double floor = cf::max_abs(want);
  for (size_t i = 0; i < g.size(); ++i) {
    double w = cf::value_at(want, i);
    double bound = kRtol * (std::fabs(w) + floor);
    if (!(std::fabs(g[i] - w) <= bound)) {  // NaN fails too
      os.precision(9);
      os << "element " << i << ": got " << g[i] << ", want " << w << " (|diff| "
         << std::fabs(g[i] - w) << " > " << bound << ")";
      return os.str();
    }
  }
  return {};
}

// The file's outputs in its order: the value, the gradients of the argnum
// inputs, and (hvp) jvp of grad along the recorded tangents.
std::vector<Array> evaluate(const refs::Case& c, const Fn& f) {
  std::vector<Array> in = cf::make_inputs(c);
  const auto nargs = static_cast<size_t>(c.param_int("nargs"));
  std::vector<int> argnums = c.param_ints("argnums");
  std::vector<Array> args(in.begin(), in.begin() + static_cast<long>(nargs));
  FlatFunction flat = [f](const std::vector<Array>& x) { return std::vector<Array>{f(x)}; };

  auto [values, grads] = value_and_grad_flat(flat, argnums)(args);
  std::vector<Array> out{values.at(0)};
  out.insert(out.end(), grads.begin(), grads.end());  // one per argnum
  if (c.op == "hvp") {
    // The function of the float inputs alone (the integer ones held), as
    // the recorder's mx.jvp(grad_of_floats, ...).
    FlatFunction of_floats = [flat, args, argnums](const std::vector<Array>& xs) {
      std::vector<Array> full = args;
      for (size_t k = 0; k < argnums.size(); ++k) full[static_cast<size_t>(argnums[k])] = xs[k];
      return flat(full);
    };
    std::vector<int> all(argnums.size());
    for (size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int>(k);
    std::vector<Array> primals, tangents(in.begin() + static_cast<long>(nargs), in.end());
    for (int i : argnums) primals.push_back(args[static_cast<size_t>(i)]);
    std::vector<Array> hvps = jvp_flat(grad_flat(of_floats, all), primals, tangents).second;
    out.insert(out.end(), hvps.begin(), hvps.end());
  }
  return out;
}

std::string what_of(size_t k, size_t nargnums) {
  if (k == 0) return "value";
  if (k <= nargnums) return "grad " + std::to_string(k - 1);
  return "hvp " + std::to_string(k - 1 - nargnums);
}

class TransformsMlxCase : public ::testing::TestWithParam<std::string> {};

TEST_P(TransformsMlxCase, MatchesMlx) {
  const refs::Case& c = find_case(GetParam());
  auto fn = functions().find(c.id);
  ASSERT_NE(fn, functions().end()) << c.where() << ": no C++ function for this case";
  ASSERT_TRUE(c.op == "grad" || c.op == "hvp") << c.where() << ": unknown kind " << c.op;
  std::vector<Array> got;
  try {
    got = evaluate(c, fn->second);
    for (auto& a : got) a.eval();
  } catch (const std::exception& e) {
    FAIL() << c.where() << ": " << e.what();
  }
  ASSERT_EQ(got.size(), c.outputs.size()) << c.where();
  const size_t nargnums = c.param_ints("argnums").size();
  for (size_t k = 0; k < got.size(); ++k) {
    std::string m = compare(c.outputs[k], got[k]);
    EXPECT_TRUE(m.empty()) << c.where() << " " << what_of(k, nargnums) << ": " << m;
  }
}

INSTANTIATE_TEST_SUITE_P(TransformsMlx, TransformsMlxCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// A case without a C++ function, or a function without a case, is a
// mistake in one of the two files.
TEST(TransformsMlx, FileAndTableAgree) {
  ASSERT_FALSE(cases().empty()) << "grads.ref missing or unreadable";
  std::set<std::string> in_file;
  for (const auto& c : cases()) {
    in_file.insert(c.id);
    EXPECT_TRUE(functions().count(c.id)) << c.where() << ": no C++ function";
  }
  for (const auto& [name, f] : functions())
    EXPECT_TRUE(in_file.count(name)) << name << ": no case in grads.ref";
  EXPECT_GE(cases().size(), 30u);
  size_t hvps = 0;
  for (const auto& c : cases()) hvps += c.op == "hvp";
  EXPECT_GE(hvps, 10u);
}

// The comparison itself: it must catch a wrong value, shape or dtype.
TEST(TransformsMlx, ComparisonRejectsMismatches) {
  const refs::Case& c = cases().at(0);
  const refs::Tensor& value = c.outputs.at(0);
  Array want = cf::make_input(value);
  EXPECT_EQ(compare(value, want), "");
  EXPECT_NE(compare(value, want * (1 + 3 * kRtol)), "");
  EXPECT_NE(compare(value, ops::astype(want, float64)), "");
  EXPECT_NE(compare(value, ops::reshape(want, {1})), "");
}

}  // namespace
}  // namespace nuvec
