// vjp and jvp rules of the non-element-wise primitives, family by family,
// against central finite differences in float64: every element of the vjp
// of <u, f(x)>, the jvp along a random direction, the identity
// <u, jvp(v)> = <vjp(u), v>, and for some families the second derivatives
// (the same checks on the function x -> grad f(x)). Inputs include
// transposed and strided views and broadcasting; max, min, sort and the
// eigen/singular values use distinct values.
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "support/cpu_default.h"

using namespace nuvec;

namespace {

using Vec = std::vector<double>;

constexpr double kEps = 1e-6;
constexpr auto None = std::nullopt;

Array T(const Array& x) { return ops::transpose(x); }

Vec values(const Array& a) { return a.astype(float64).to_vector<double>(); }

// Uniform values in [lo, hi).
Array uniform_array(const Shape& shape, uint32_t seed, double lo = -1.0,
                    double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  Vec v(static_cast<size_t>(shape_size(shape)));
  for (double& e : v) e = d(rng);
  return array(v, shape);
}

// Values at least 0.1 apart, shuffled (no ties for max, sort, ...).
Array distinct_array(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  Vec v(static_cast<size_t>(shape_size(shape)));
  std::uniform_real_distribution<double> jitter(0.0, 0.05);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 0.3 * double(i) - 2.0 + jitter(rng);
  std::shuffle(v.begin(), v.end(), rng);
  return array(v, shape);
}

Array with_element(const Array& x, size_t i, double delta) {
  Vec v = values(x);
  v[i] += delta;
  return array(v, x.shape());
}

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

void expect_close(const Vec& got, const Vec& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1.0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * scale) << what << " at element " << i;
}

// <u, f(x)> summed over the outputs.
double pairing(const FlatFunction& f, const std::vector<Array>& xs,
               const std::vector<Vec>& us) {
  auto outs = f(xs);
  double s = 0;
  for (size_t o = 0; o < outs.size(); ++o) s += dot(us[o], values(outs[o]));
  return s;
}

// The full check of one function (see the file comment). `second`: also
// check the derivatives of x -> grad <u, f(x)> (for a scalar f).
void check_rules(const FlatFunction& f, const std::vector<Array>& xs,
                 const std::string& what, double tol = 1e-6,
                 uint32_t seed = 7) {
  SCOPED_TRACE(what);
  auto outs = f(xs);
  std::vector<Array> us, vs;
  std::vector<Vec> uvals, vvals;
  for (size_t o = 0; o < outs.size(); ++o) {
    us.push_back(uniform_array(outs[o].shape(), seed + 100 + uint32_t(o)));
    uvals.push_back(values(us.back()));
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    vs.push_back(uniform_array(xs[i].shape(), seed + 200 + uint32_t(i)));
    vvals.push_back(values(vs.back()));
  }
  auto [vo, grads] = vjp_flat(f, xs, us);
  auto [jo, tans] = jvp_flat(f, xs, vs);
  ASSERT_EQ(grads.size(), xs.size());
  ASSERT_EQ(tans.size(), outs.size());
  // Every element of the vjp against the derivative of <u, f(x)>.
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(grads[i].shape(), xs[i].shape());
    Vec fd(static_cast<size_t>(xs[i].size()));
    for (size_t e = 0; e < fd.size(); ++e) {
      auto plus = xs, minus = xs;
      plus[i] = with_element(xs[i], e, kEps);
      minus[i] = with_element(xs[i], e, -kEps);
      fd[e] = (pairing(f, plus, uvals) - pairing(f, minus, uvals)) / (2 * kEps);
    }
    expect_close(values(grads[i]), fd, tol,
                 "vjp of input " + std::to_string(i));
  }
  // The jvp along v against a directional difference, output by output.
  auto plus = xs, minus = xs;
  for (size_t i = 0; i < xs.size(); ++i) {
    plus[i] = xs[i] + vs[i] * kEps;
    minus[i] = xs[i] - vs[i] * kEps;
  }
  auto fp = f(plus), fm = f(minus);
  double lhs = 0, rhs = 0;
  for (size_t o = 0; o < outs.size(); ++o) {
    ASSERT_EQ(tans[o].shape(), outs[o].shape());
    Vec a = values(fp[o]), b = values(fm[o]), fd(a.size());
    for (size_t e = 0; e < a.size(); ++e) fd[e] = (a[e] - b[e]) / (2 * kEps);
    Vec t = values(tans[o]);
    expect_close(t, fd, tol, "jvp of output " + std::to_string(o));
    lhs += dot(uvals[o], t);
  }
  for (size_t i = 0; i < xs.size(); ++i) rhs += dot(values(grads[i]), vvals[i]);
  EXPECT_NEAR(lhs, rhs, 1e-9 * std::max(1.0, std::abs(rhs)))
      << "<u, jvp(v)> = <vjp(u), v>";
}

// The derivatives of x -> grad f(x) for a scalar f (grad of grad, and jvp
// of grad).
void check_second(const FlatFunction& f, const std::vector<Array>& xs,
                  const std::string& what, double tol = 1e-6) {
  std::vector<int> all(xs.size());
  std::iota(all.begin(), all.end(), 0);
  check_rules(grad_flat(f, all), xs, what + " (second order)", tol);
}

FlatFunction unary(std::function<Array(const Array&)> g) {
  return [g](const std::vector<Array>& in) {
    return std::vector<Array>{g(in[0])};
  };
}

FlatFunction binary(std::function<Array(const Array&, const Array&)> g) {
  return [g](const std::vector<Array>& in) {
    return std::vector<Array>{g(in[0], in[1])};
  };
}

// A scalar from several outputs, nonlinear so second derivatives matter.
FlatFunction scalar_of(FlatFunction g) {
  return [g](const std::vector<Array>& in) {
    auto outs = g(in);
    Array s = ops::sin(outs[0]).sum();
    for (size_t i = 1; i < outs.size(); ++i) s = s + ops::sin(outs[i]).sum();
    return std::vector<Array>{s};
  };
}

Array transposed(const Shape& shape, uint32_t seed) {
  Shape rev(shape.rbegin(), shape.rend());
  return ops::transpose(uniform_array(rev, seed));
}

}  // namespace

// ---------------------------------------------------------------- shapes

TEST(TransformsGrad, ReshapeTransposeBroadcast) {
  check_rules(unary([](const Array& x) {
                return ops::reshape(x, {2, 3, 2}) * 2.0;
              }),
              {transposed({3, 4}, 1)}, "reshape of a transposed view");
  check_rules(unary([](const Array& x) {
                return ops::transpose(x, {2, 0, 1});
              }),
              {uniform_array({2, 3, 4}, 2)}, "transpose");
  check_rules(binary([](const Array& a, const Array& b) { return a * b; }),
              {uniform_array({3, 1}, 3), uniform_array({2, 1, 4}, 4)},
              "broadcast both sides");
  check_rules(unary([](const Array& x) {
                return ops::broadcast_to(x, {2, 3, 1, 4});
              }),
              {uniform_array({3, 1, 1}, 5)}, "broadcast_to");
}

TEST(TransformsGrad, Slices) {
  check_rules(unary([](const Array& x) {
                return x.i(slice(1, 4), slice(None, None, 2));
              }),
              {uniform_array({5, 5}, 1)}, "slice with step");
  check_rules(unary([](const Array& x) {
                return x.i(slice(4, 0, -2), slice(None, None, -1));
              }),
              {uniform_array({6, 3}, 2)}, "negative steps");
  check_rules(unary([](const Array& x) {
                return x.i(1, slice(None, None, 3)) * x.i(2, slice(1, 4));
              }),
              {uniform_array({3, 7}, 3).i(slice(), slice(None, None, 1))},
              "integer index and step 3");
  check_rules(unary([](const Array& x) {
                return ops::square(x.i(slice(None, None, 2)));
              }),
              {uniform_array({7, 2}, 4).i(slice(None, None, -1))},
              "strided view input");
  check_second(scalar_of(unary([](const Array& x) {
                 return x.i(slice(3, 0, -2)) * x.i(slice(0, 2));
               })),
               {uniform_array({4}, 5)}, "slice");
}

TEST(TransformsGrad, StopGradientCopyDependsBitcast) {
  auto [o, g] = vjp_flat(
      [](const std::vector<Array>& in) {
        return std::vector<Array>{
            ops::stop_gradient(in[0]) * in[0] + ops::copy(in[0]) * 3.0 +
            ops::view(ops::view(in[0], uint64), float64) * in[0]};
      },
      {array<double>({1.0, 2.0})}, {array<double>({1.0, 1.0})});
  // x * x with one factor held (x), 3 from the copy, x from the bitcast path.
  EXPECT_EQ(values(g[0]), (Vec{1.0 + 3.0 + 1.0, 2.0 + 3.0 + 2.0}));
  check_rules(binary([](const Array& a, const Array& b) {
                return ops::depends({a * 2.0}, {b * 3.0})[0];
              }),
              {uniform_array({3}, 1), uniform_array({2}, 2)}, "depends");
  check_rules(unary([](const Array& x) { return ops::copy(T(x)) * T(x); }),
              {uniform_array({2, 3}, 3)}, "copy");
}

TEST(TransformsGrad, ConcatenateAndPad) {
  check_rules(
      [](const std::vector<Array>& in) {
        return std::vector<Array>{
            ops::concatenate({in[0], in[1] * in[1], in[0]}, 1)};
      },
      {uniform_array({2, 2}, 1), transposed({2, 3}, 2)}, "concatenate");
  check_rules(unary([](const Array& x) {
                return ops::pad(x, {{1, 2}, {0, 1}});
              }),
              {uniform_array({2, 3}, 3)}, "pad");
  check_rules(unary([](const Array& x) {
                auto parts = ops::split(x, 3, 0);
                return parts[0] * parts[2] + parts[1];
              }),
              {uniform_array({6, 2}, 4)}, "split");
}

// ---------------------------------------------------------------- reductions

TEST(TransformsGrad, SumMeanVar) {
  check_rules(unary([](const Array& x) {
                return x.sum({0, 2});
              }),
              {uniform_array({2, 3, 4}, 1)}, "sum over two axes");
  check_rules(unary([](const Array& x) { return ops::mean(x, {1}, true); }),
              {transposed({4, 3}, 2)}, "mean keepdims");
  check_rules(unary([](const Array& x) { return ops::var(x, {0}, false, 1); }),
              {uniform_array({5, 2}, 3)}, "var ddof 1");
  check_rules(unary([](const Array& x) { return ops::logsumexp(x, {1}); }),
              {uniform_array({3, 4}, 4, -3, 3)}, "logsumexp");
  check_rules(unary([](const Array& x) { return ops::softmax(x, {-1}); }),
              {uniform_array({2, 4}, 5)}, "softmax");
  check_second(
      scalar_of(unary([](const Array& x) { return ops::var(x, {0}); })),
      {uniform_array({4, 2}, 6)}, "var");
}

TEST(TransformsGrad, ProdWithZeros) {
  auto f = unary([](const Array& x) { return ops::prod(x, {1}); });
  check_rules(f, {uniform_array({3, 4}, 1)}, "prod");
  check_rules(f,
              {array<double>(
                  {1.5, 0.0, -2.0, 0.5, 0.0, 3.0, 0.0, 2.0, 1.0, 4.0, 0.5, 2.0},
                  {3, 4})},
              "prod with one and two zeros");
  check_rules(
      unary([](const Array& x) {
        return ops::prod(x, {0, 2});
      }),
      {array<double>({1.5, 0.0, -2.0, 0.5, 0.7, 3.0, -1.0, 2.0}, {2, 2, 2})},
      "prod of two axes");
  check_second(unary([](const Array& x) { return ops::prod(x); }),
               {array<double>({1.5, -0.5, 2.0, 0.7})}, "prod");
  check_second(unary([](const Array& x) { return ops::prod(x); }),
               {array<double>({1.5, 0.0, 2.0, 0.7})}, "prod with a zero");
}

TEST(TransformsGrad, MaxMinArgmax) {
  check_rules(unary([](const Array& x) { return ops::max(x, {1}); }),
              {distinct_array({3, 4}, 1)}, "max");
  check_rules(unary([](const Array& x) {
                return ops::min(x, {0, 1}, true);
              }),
              {T(distinct_array({3, 4}, 2))}, "min of a transposed view");
  // Ties share the cotangent equally (as MLX).
  auto [o, g] = vjp_flat(unary([](const Array& x) { return ops::max(x); }),
                         {array<double>({1.0, 3.0, 3.0, 2.0})},
                         {array<double>({1.0}, {})});
  EXPECT_EQ(values(g[0]), (Vec{0.0, 0.5, 0.5, 0.0}));
  // argmax is constant; the gradient goes through the gather.
  check_rules(unary([](const Array& x) {
                return ops::take_along_axis(x, ops::argmax(x, 1, true), 1) +
                       ops::argmin(x, 1, true).astype(float64);
              }),
              {distinct_array({3, 4}, 3)}, "argmax and argmin");
}

TEST(TransformsGrad, Matmul) {
  check_rules(
      binary([](const Array& a, const Array& b) { return ops::matmul(a, b); }),
      {uniform_array({2, 3}, 1), transposed({3, 4}, 2)},
      "2-D, transposed operand");
  check_rules(
      binary([](const Array& a, const Array& b) { return ops::matmul(a, b); }),
      {uniform_array({2, 1, 2, 3}, 3), uniform_array({3, 3, 2}, 4)},
      "broadcast batch dims");
  check_rules(
      binary([](const Array& a, const Array& b) { return ops::matmul(a, b); }),
      {uniform_array({3}, 5), uniform_array({2, 3, 2}, 6)},
      "vector times batch");
  check_second(scalar_of(binary([](const Array& a, const Array& b) {
                 return ops::matmul(a, b);
               })),
               {uniform_array({2, 3}, 7), uniform_array({3, 2}, 8)}, "matmul");
}

// ---------------------------------------------------------------- convolution

TEST(TransformsGrad, Conv) {
  check_rules(binary([](const Array& x, const Array& w) {
                return ops::conv1d(x, w, 2, 1, 1);
              }),
              {uniform_array({2, 7, 3}, 1), uniform_array({2, 3, 3}, 2)},
              "conv1d stride 2 pad 1");
  check_rules(binary([](const Array& x, const Array& w) {
                return ops::conv2d(x, w, {1, 2}, {1, 0}, {2, 1}, 2);
              }),
              {uniform_array({1, 5, 6, 4}, 3), uniform_array({2, 2, 3, 2}, 4)},
              "conv2d dilation, groups");
  check_rules(binary([](const Array& x, const Array& w) {
                return ops::conv_transpose1d(x, w, 2, 1, 1, 1);
              }),
              {uniform_array({1, 4, 2}, 5), uniform_array({3, 3, 2}, 6)},
              "conv_transpose1d (input dilation)");
  check_rules(binary([](const Array& x, const Array& w) {
                return ops::conv_general(x, w, {1}, {-1}, {2}, {1}, {1}, 1,
                                         false);
              }),
              {uniform_array({1, 6, 2}, 7), uniform_array({1, 2, 2}, 8)},
              "negative padding");
  check_second(
      scalar_of(binary([](const Array& x, const Array& w) {
        return ops::conv2d(x, w, 2, 1);
      })),
      {uniform_array({1, 4, 4, 1}, 9), uniform_array({1, 2, 2, 1}, 10)},
      "conv2d");
}

// ---------------------------------------------------------------- gathers,
// scatters

TEST(TransformsGrad, TakeAndIndexing) {
  Array idx = array({2, 0, 2, -1}, {2, 2});  // repeated and negative indices
  check_rules(unary([idx](const Array& x) { return ops::take(x, idx, 1); }),
              {uniform_array({2, 3, 2}, 1)}, "take with repeats");
  check_rules(unary([idx](const Array& x) { return ops::take(x, idx); }),
              {transposed({3, 2}, 2)}, "take flat");
  Array along = array({1, 0, 1, 1, 0, 0}, {2, 3});
  check_rules(unary([along](const Array& x) {
                return ops::take_along_axis(x, along, 0);
              }),
              {uniform_array({2, 3}, 3)}, "take_along_axis");
  check_rules(unary([](const Array& x) {
                return x.i(array({0, 2, 0}), slice(), array({1}));
              }),
              {uniform_array({3, 2, 2}, 4)}, "advanced indexing");
  check_second(scalar_of(unary([idx](const Array& x) {
                 return ops::take(x, idx, 0) * x.i(0);
               })),
               {uniform_array({3}, 5)}, "take");
}

TEST(TransformsGrad, Scatters) {
  Array dup = array({1, 3, 1});  // position 1 written twice
  check_rules(binary([dup](const Array& x, const Array& u) {
                return x.at(dup).set(u);
              }),
              {uniform_array({4}, 1), uniform_array({3}, 2)},
              "set, last write wins");
  check_rules(binary([dup](const Array& x, const Array& u) {
                return x.at(dup).add(u * u);
              }),
              {uniform_array({4}, 3), uniform_array({3}, 4)},
              "add with repeats");
  check_rules(binary([dup](const Array& x, const Array& u) {
                return x.at(dup).multiply(u);
              }),
              {uniform_array({4}, 5), uniform_array({3}, 6)},
              "multiply with repeats");
  check_rules(binary([dup](const Array& x, const Array& u) {
                return x.at(dup).multiply(u);
              }),
              {uniform_array({4}, 7), array<double>({0.0, 2.0, 1.5})},
              "multiply by a zero");
  check_rules(binary([dup](const Array& x, const Array& u) {
                return x.at(dup).multiply(u);
              }),
              {uniform_array({4}, 7), array<double>({0.0, 2.0, 0.0})},
              "multiply by two zeros");
  check_rules(
      binary([dup](const Array& x, const Array& u) {
        return x.at(dup).maximum(u);
      }),
      {array<double>({0.1, 0.5, -0.3, 0.2}), array<double>({0.7, -0.6, 0.3})},
      "maximum");
  check_rules(
      binary([dup](const Array& x, const Array& u) {
        return x.at(dup).minimum(u);
      }),
      {array<double>({0.1, 0.5, -0.3, 0.2}), array<double>({0.7, -0.6, 0.3})},
      "minimum");
  check_rules(binary([](const Array& x, const Array& u) {
                return x.at(slice(), slice(None, None, 2)).set(T(u));
              }),
              {uniform_array({2, 4}, 8), uniform_array({2, 2}, 9)},
              "2-D set through a view");
  check_rules(binary([](const Array& x, const Array& u) {
                return ops::put_along_axis(x, array({1, 0}, {1, 2}), u, 0);
              }),
              {uniform_array({2, 2}, 10), uniform_array({1, 2}, 11)},
              "put_along_axis");
  check_second(scalar_of(binary([dup](const Array& x, const Array& u) {
                 return x.at(dup).multiply(u) +
                        x.at(dup).add(u * x.i(slice(0, 3)));
               })),
               {uniform_array({4}, 12), uniform_array({3}, 13)}, "scatters");
}

// ---------------------------------------------------------------- sorts

TEST(TransformsGrad, SortPartition) {
  check_rules(unary([](const Array& x) { return ops::sort(x, 0); }),
              {distinct_array({4, 3}, 1)}, "sort axis 0");
  check_rules(
      unary([](const Array& x) {
        return ops::sort(x) * array<double>({1.0, 2.0, 3.0, 4.0, 5.0, 6.0});
      }),
      {T(distinct_array({2, 3}, 2))}, "sort flat of a transposed view");
  check_rules(unary([](const Array& x) { return ops::partition(x, 2, 1); }),
              {distinct_array({2, 5}, 3)}, "partition");
  check_rules(unary([](const Array& x) { return ops::topk(x, 2, -1); }),
              {distinct_array({3, 4}, 4)}, "topk");
  check_rules(unary([](const Array& x) {
                return x * ops::argsort(x, 0).astype(float64) +
                       ops::argpartition(x, 1, 0).astype(float64);
              }),
              {distinct_array({3, 2}, 5)},
              "argsort and argpartition are constant");
  check_second(
      scalar_of(unary([](const Array& x) { return ops::sort(x) * x; })),
      {distinct_array({5}, 6)}, "sort");
}

// ---------------------------------------------------------------- scans

TEST(TransformsGrad, Cumsum) {
  for (bool reverse : {false, true})
    for (bool inclusive : {false, true})
      check_rules(unary([=](const Array& x) {
                    return ops::cumsum(x, 1, reverse, inclusive);
                  }),
                  {transposed({4, 2}, 1)},
                  "cumsum reverse " + std::to_string(reverse) + " inclusive " +
                      std::to_string(inclusive));
}

TEST(TransformsGrad, Cumprod) {
  Array zeros = array<double>(
      {1.5, 0.0, -2.0, 0.5, 0.0, 3.0, 0.7, -1.2, 0.0, 2.0}, {2, 5});
  for (bool reverse : {false, true})
    for (bool inclusive : {false, true}) {
      auto f = unary([=](const Array& x) {
        return ops::cumprod(x, 1, reverse, inclusive);
      });
      std::string name = "cumprod reverse " + std::to_string(reverse) +
                         " inclusive " + std::to_string(inclusive);
      check_rules(f, {uniform_array({2, 5}, 2, 0.5, 1.5)}, name);
      check_rules(f, {zeros}, name + " with zeros");
    }
  check_second(
      scalar_of(unary([](const Array& x) { return ops::cumprod(x, 0); })),
      {uniform_array({4}, 3, 0.5, 1.5)}, "cumprod");
  check_second(scalar_of(unary([](const Array& x) {
                 return ops::cumprod(x, 0, true, false);
               })),
               {array<double>({0.5, 0.0, 1.5, 0.0, -0.7})},
               "reverse exclusive cumprod with zeros");
  // A longer axis (not a power of two) for the recursive doubling.
  check_rules(unary([](const Array& x) { return ops::cumprod(x, 1); }),
              {uniform_array({2, 37}, 4, 0.8, 1.2)}, "cumprod of 37");
}

TEST(TransformsGrad, CummaxCummin) {
  for (bool reverse : {false, true})
    for (bool inclusive : {false, true}) {
      std::string name = " reverse " + std::to_string(reverse) + " inclusive " +
                         std::to_string(inclusive);
      // Exclusive scans start from -inf / +inf: keep only the finite part.
      check_rules(unary([=](const Array& x) {
                    Array y = ops::cummax(x, 1, reverse, inclusive);
                    return ops::where(ops::greater(ops::abs(y), 1e300), 0.0, y);
                  }),
                  {distinct_array({2, 5}, 1)}, "cummax" + name);
      check_rules(unary([=](const Array& x) {
                    Array y = ops::cummin(x, 0, reverse, inclusive);
                    return ops::where(ops::greater(ops::abs(y), 1e300), 0.0, y);
                  }),
                  {distinct_array({4, 2}, 2)}, "cummin" + name);
    }
}

TEST(TransformsGrad, Logcumsumexp) {
  for (bool reverse : {false, true})
    for (bool inclusive : {false, true}) {
      std::string name = "logcumsumexp reverse " + std::to_string(reverse) +
                         " inclusive " + std::to_string(inclusive);
      check_rules(unary([=](const Array& x) {
                    Array y = ops::logcumsumexp(x, 1, reverse, inclusive);
                    return ops::where(ops::isinf(y), 0.0, y);
                  }),
                  {uniform_array({2, 4}, 1, -3, 3)}, name);
    }
  // Widely spread values: the rule's weights exp(x_j - y_i) stay <= 1, so
  // nothing overflows (exp(-x) would).
  auto [o, g] = vjp_flat(
      unary([](const Array& x) { return ops::logcumsumexp(x, 0); }),
      {array<double>({-800.0, 0.0, 700.0})}, {array<double>({1.0, 1.0, 1.0})});
  Vec gv = values(g[0]);
  EXPECT_NEAR(gv[0], 1.0, 1e-12);  // y_0 = x_0 exactly
  EXPECT_NEAR(gv[1], 1.0, 1e-12);
  EXPECT_NEAR(gv[2], 1.0, 1e-12);
  check_second(
      scalar_of(unary([](const Array& x) { return ops::logcumsumexp(x, 0); })),
      {uniform_array({4}, 2, -2, 2)}, "logcumsumexp");
  check_second(scalar_of(unary([](const Array& x) {
                 Array y = ops::logcumsumexp(x, 0, true, false);
                 return ops::where(ops::isinf(y), 0.0, y);
               })),
               {uniform_array({5}, 3, -2, 2)},
               "reverse exclusive logcumsumexp");
  check_rules(unary([](const Array& x) { return ops::logcumsumexp(x, 0); }),
              {array<double>({-800.0, 0.0, 700.0, -5.0})}, "spread values");
}

// ---------------------------------------------------------------- linear
// algebra

namespace {

// A well-conditioned square matrix (diagonal dominant), as a batch.
Array well_conditioned(const Shape& shape, uint32_t seed) {
  int n = shape.back();
  return uniform_array(shape, seed) + ops::eye(n, float64) * 3.0;
}

}  // namespace

TEST(TransformsGrad, InvSolve) {
  nuvec::testing::CpuDefault cpu_default;  // LAPACK: CPU only, as MLX
  check_rules(unary([](const Array& x) { return linalg::inv(x); }),
              {well_conditioned({2, 3, 3}, 1)}, "inv");
  check_rules(binary([](const Array& a, const Array& b) {
                return linalg::solve(a, b);
              }),
              {well_conditioned({3, 3}, 2), uniform_array({2, 3, 2}, 3)},
              "solve with broadcast batch");
  check_rules(binary([](const Array& a, const Array& b) {
                return linalg::solve(a, b);
              }),
              {T(well_conditioned({3, 3}, 4)), uniform_array({3}, 5)},
              "solve a vector");
  check_second(scalar_of(unary([](const Array& x) { return linalg::inv(x); })),
               {well_conditioned({3, 3}, 6)}, "inv");
}

TEST(TransformsGrad, Cholesky) {
  nuvec::testing::CpuDefault cpu_default;  // LAPACK: CPU only, as MLX
  // Cholesky reads the lower triangle only: the gradient is zero above it,
  // and a general (non-symmetric) matrix is a fine input.
  Array a = well_conditioned({3, 3}, 1) + ops::eye(3, float64) * 2.0;
  for (bool upper : {false, true})
    check_rules(
        unary([upper](const Array& x) { return linalg::cholesky(x, upper); }),
        {a}, std::string("cholesky upper ") + (upper ? "1" : "0"));
  check_rules(
      unary([](const Array& x) {
        return linalg::cholesky(ops::matmul(x, ops::swapaxes(x, -1, -2)));
      }),
      {well_conditioned({2, 3, 3}, 2)}, "cholesky of x x^T (batched)");
  check_second(
      scalar_of(unary([](const Array& x) { return linalg::cholesky(x); })), {a},
      "cholesky", 1e-5);
}

TEST(TransformsGrad, Qr) {
  nuvec::testing::CpuDefault cpu_default;  // LAPACK: CPU only, as MLX
  auto f = [](const std::vector<Array>& in) {
    auto [q, r] = linalg::qr(in[0]);
    return std::vector<Array>{q, r};
  };
  check_rules(f, {well_conditioned({3, 3}, 1)}, "qr square");
  check_rules(f, {uniform_array({2, 4, 2}, 2) + 1.5}, "qr tall, batched");
  check_rules(f, {uniform_array({2, 4}, 3) + ops::eye(2, 4, 0, float64) * 2.0},
              "qr wide");
  // Only R kept: the rule recomputes Q.
  check_rules(unary([](const Array& x) { return linalg::qr(x).second; }),
              {uniform_array({3, 2}, 5) + 1.0}, "qr, R only");
  check_second(scalar_of(f), {well_conditioned({3, 3}, 4)}, "qr", 1e-5);
}

TEST(TransformsGrad, Eigh) {
  nuvec::testing::CpuDefault cpu_default;  // LAPACK: CPU only, as MLX
  // Reads one triangle; eigenvectors up to sign: test V o V.
  Array a = distinct_array({4, 4}, 1) * 0.5 +
            ops::diag(array<double>({-3.0, 0.0, 3.0, 6.0}));
  for (std::string uplo : {"L", "U"}) {
    check_rules(
        [uplo](const std::vector<Array>& in) {
          auto [w, v] = linalg::eigh(in[0], uplo);
          return std::vector<Array>{w, v * v};
        },
        {a}, "eigh " + uplo);
    check_rules(
        unary([uplo](const Array& x) { return linalg::eigvalsh(x, uplo); }),
        {a}, "eigvalsh " + uplo);
  }
  // Only the eigenvectors kept: the rule recomputes the eigenvalues.
  check_rules(unary([](const Array& x) {
                auto v = linalg::eigh(x).second;
                return v * v;
              }),
              {a}, "eigenvectors only");
  check_second(
      scalar_of(unary([](const Array& x) { return linalg::eigvalsh(x); })), {a},
      "eigvalsh", 1e-5);
}

TEST(TransformsGrad, Svd) {
  nuvec::testing::CpuDefault cpu_default;  // LAPACK: CPU only, as MLX
  // Singular vectors up to sign: test S, U o U and Vt o Vt on the reduced
  // part, and the projector onto the complement of a full factor.
  auto f = [](const std::vector<Array>& in) {
    auto usv = linalg::svd(in[0]);
    int m = in[0].shape(-2), n = in[0].shape(-1), k = std::min(m, n);
    Array uk = usv[0].i(ellipsis, slice(0, k)),
          vk = usv[2].i(ellipsis, slice(0, k), slice());
    std::vector<Array> out{usv[1], uk * uk, vk * vk};
    if (m > k) {
      Array rest = usv[0].i(ellipsis, slice(k, m));
      out.push_back(ops::matmul(rest, ops::swapaxes(rest, -1, -2)));
    }
    if (n > k) {
      Array rest = usv[2].i(ellipsis, slice(k, n), slice());
      out.push_back(ops::matmul(ops::swapaxes(rest, -1, -2), rest));
    }
    return out;
  };
  check_rules(
      f, {uniform_array({3, 3}, 1) + ops::diag(array<double>({3.0, 1.5, 0.5}))},
      "svd square");
  check_rules(f, {uniform_array({2, 4, 2}, 2)}, "svd tall, batched");
  check_rules(f, {uniform_array({2, 4}, 3)}, "svd wide");
  check_rules(unary([](const Array& x) { return linalg::svd(x, false)[0]; }),
              {uniform_array({3, 2}, 4)}, "svdvals");
  check_rules(unary([](const Array& x) { return linalg::svd(x)[1]; }),
              {uniform_array({2, 3}, 4)}, "svd, S only");
  // The full factors, raw: the rules stay adjoint (the complement's gauge
  // is the rule's choice, so no finite differences here).
  for (Shape shape : {Shape{4, 2}, Shape{2, 3}}) {
    Array x = uniform_array(shape, 5);
    auto usv = linalg::svd(x);
    FlatFunction g = [](const std::vector<Array>& in) {
      return linalg::svd(in[0]);
    };
    std::vector<Array> us{uniform_array(usv[0].shape(), 6),
                          uniform_array(usv[1].shape(), 7),
                          uniform_array(usv[2].shape(), 8)};
    Array v = uniform_array(shape, 9);
    auto [o1, grads] = vjp_flat(g, {x}, us);
    auto [o2, tans] = jvp_flat(g, {x}, {v});
    double lhs = 0;
    for (int i = 0; i < 3; ++i) lhs += dot(values(us[i]), values(tans[i]));
    EXPECT_NEAR(lhs, dot(values(grads[0]), values(v)), 1e-9)
        << "full svd " << shape[0] << "x" << shape[1];
    // The tangent keeps U and V orthogonal: U^T dU is antisymmetric.
    Vec s = values(ops::matmul(T(usv[0]), tans[0]) +
                   ops::matmul(T(tans[0]), usv[0]));
    for (double e : s) EXPECT_NEAR(e, 0.0, 1e-12);
  }
  check_second(
      scalar_of(unary([](const Array& x) { return linalg::svd(x, false)[0]; })),
      {uniform_array({3, 2}, 10)}, "svdvals", 1e-5);
}

TEST(TransformsGrad, PinvThroughSvd) {
  nuvec::testing::CpuDefault cpu_default;  // LAPACK: CPU only, as MLX
  check_rules(unary([](const Array& x) { return linalg::pinv(x); }),
              {uniform_array({3, 2}, 1) + ops::eye(3, 2, 0, float64)}, "pinv");
}

TEST(TransformsGrad, Float32Dtypes) {
  nuvec::testing::CpuDefault cpu_default;  // LAPACK: CPU only, as MLX
  // Rules keep the input dtype (the engine checks shapes, casts dtypes).
  Array x = uniform_array({3, 3}, 1).astype(float32) + ops::eye(3) * 3.0f;
  auto g = grad_flat([](const std::vector<Array>& in) {
    return std::vector<Array>{(linalg::inv(in[0]) * ops::sort(in[0], 1)).sum() +
                              ops::cumprod(in[0], 0).sum() +
                              ops::max(in[0], {0}).sum()};
  })({x});
  EXPECT_EQ(g[0].dtype(), float32);
  for (float e : g[0].to_vector<float>()) EXPECT_TRUE(std::isfinite(e));
}
