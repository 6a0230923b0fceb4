// addmm as one primitive (AddMM): on the CPU it gives the bits of the
// composite it replaced (matmul, then * alpha, c * beta and + as element-wise
// ops), written out here with ops, over random shapes (batched, broadcast,
// 1-D operands), layouts (transposed, strided), c shapes and dtypes, alpha
// and beta; its errors name addmm; compile (shaped and shapeless) and vmap
// keep the bits. Transform rules are checked by the rule harness
// (support/rule_cases_structural.cpp), the GPU by support/gpu_ops_cases.cpp.
#include <gtest/gtest.h>
#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

#include <cmath>
#include <mutex>
#include <random>
#include <string>
#include <unordered_set>

#include "nuvec/core/graph.h"
#include "support/bits.h"
#include "support/cpu_default.h"

using namespace nuvec;
using nuvec::testing::bits_of;

namespace {

// The composite ops::addmm was before AddMM.
Array composite(const Array& c, const Array& a, const Array& b, float alpha,
                float beta) {
  DType d = promote_types(promote_types(a.dtype(), b.dtype()), c.dtype());
  Array p = ops::matmul(ops::astype(a, d), ops::astype(b, d));
  if (alpha != 1.0f) p = p * alpha;
  if (beta == 0.0f) {
    Shape s = *ops::try_broadcast_shapes(p.shape(), c.shape());
    return ops::astype(ops::broadcast_to(p, s),
                       promote_types(p.dtype(), c.dtype()));
  }
  return p + (beta != 1.0f ? c * beta : c);
}

// Whether x's pending graph holds a node of `id`.
bool holds(const Array& x, PrimitiveId id) {
  std::vector<std::shared_ptr<Node>> stack;
  std::unordered_set<const Node*> seen;
  auto push = [&](const Array& a) {
    const auto& n = a.desc()->node;
    if (n && seen.insert(n.get()).second) stack.push_back(n);
  };
  push(x);
  while (!stack.empty()) {
    auto n = stack.back();
    stack.pop_back();
    std::lock_guard<std::mutex> lock(n->mu);
    if (n->primitive && n->primitive->id() == id) return true;
    for (const auto& in : n->inputs) push(in);
  }
  return false;
}

class AddMMTest : public ::testing::Test {
 protected:
  nuvec::testing::CpuDefault cpu;
  std::mt19937 rng{20261130};
  int key = 0;

  // Normal values of `shape` in `dt`, in a layout: 0 dense, 1 a transpose
  // of the last two axes, 2 every other column of a wider array.
  Array values(const Shape& shape, DType dt, int layout = 0) {
    Shape s = shape;
    int nd = static_cast<int>(s.size());
    if (layout == 1 && nd >= 2) std::swap(s[nd - 1], s[nd - 2]);
    if (layout == 2 && nd >= 1) s[nd - 1] *= 2;
    Array x = (random::normal(s, random::key(++key)) * 1.5f).astype(dt);
    if (layout == 1 && nd >= 2) return ops::swapaxes(x, -1, -2);
    if (layout == 2 && nd >= 1) {
      std::vector<int> start(nd, 0), stop(s.begin(), s.end()), step(nd, 1);
      step[nd - 1] = 2;
      return ops::slice(x, start, stop, step);
    }
    return x;
  }
  int dim(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  }
};

// Random shapes: a [..., m, k] or [k], b [..., k, n] or [k], c one of the
// shapes that broadcast to the product (some widen it: composite path).
TEST_F(AddMMTest, BitsEqualTheComposite) {
  const DType dtypes[] = {float32, float64, float16, bfloat16};
  const float alphas[] = {1.0f, 0.5f, -2.0f};
  const float betas[] = {1.0f, 0.5f, -2.0f, 0.0f};
  int built = 0, cases = 0;
  for (int trial = 0; trial < 300; ++trial) {
    int m = dim(1, 7), k = dim(0, 6), n = dim(1, 7), batch = dim(2, 3);
    if (trial % 50 == 0) m = 150, k = 33, n = 230;  // past one parallel block
    int form =
        dim(0, 5);  // 2-D, batched, broadcast batch, 1-D a, 1-D b, both 1-D
    Shape sa{m, k}, sb{k, n};
    if (form == 1) sa.insert(sa.begin(), batch), sb.insert(sb.begin(), batch);
    if (form == 2) sa.insert(sa.begin(), batch);
    if (form == 3 || form == 5) sa = {k};
    if (form == 4 || form == 5) sb = {k};
    Shape p = *ops::try_broadcast_shapes(
        Shape(sa.begin(), sa.end() - std::min<size_t>(2, sa.size())),
        Shape(sb.begin(), sb.end() - std::min<size_t>(2, sb.size())));
    if (sa.size() > 1) p.push_back(m);
    if (sb.size() > 1) p.push_back(n);
    std::vector<Shape> cs{p, {}};
    if (!p.empty()) cs.push_back({p.back()});
    if (p.size() >= 2) cs.push_back({p[p.size() - 2], 1});
    if (p.size() == 2) cs.push_back({batch, p[0], p[1]});  // widens the product
    if (p.size() == 3) cs.push_back({batch, 1, p[2]});
    DType dt = dtypes[trial % 4];
    DType dc =
        trial % 7 == 0 ? dtypes[(trial / 7) % 4] : dt;  // c of another dtype
    Array a = values(sa, dt, dim(0, 2)), b = values(sb, dt, dim(0, 2));
    Array c =
        values(cs[dim(0, static_cast<int>(cs.size()) - 1)], dc, dim(0, 2));
    float alpha = alphas[dim(0, 2)], beta = betas[dim(0, 3)];
    std::string what =
        "trial " + std::to_string(trial) + ": a " + std::to_string(sa.size()) +
        "-d, c " + std::to_string(c.ndim()) + "-d, " +
        std::string(dtype_name(dt)) + "/" + std::string(dtype_name(dc)) +
        ", alpha " + std::to_string(alpha) + ", beta " + std::to_string(beta);
    Array got = ops::addmm(c, a, b, alpha, beta),
          want = composite(c, a, b, alpha, beta);
    ASSERT_FALSE(got.is_failed()) << what << ": " << got.error()->what();
    ASSERT_EQ(got.shape(), want.shape()) << what;
    ASSERT_EQ(got.dtype(), want.dtype()) << what;
    bool primitive = holds(got, PrimitiveId::AddMM);
    if (beta != 0.0f && dc == dt &&
        ops::try_broadcast_shapes(p, c.shape())->size() == p.size() &&
        *ops::try_broadcast_shapes(p, c.shape()) == p)
      EXPECT_TRUE(primitive) << what << ": expected the AddMM primitive";
    built += primitive;
    ++cases;
    EXPECT_EQ(bits_of(got), bits_of(want)) << what;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(built, cases / 3) << "too few cases ran the primitive";
}

// Infinities and NaNs in every operand, and c's NaNs not read when beta is
// 0 (as BLAS and MLX).
TEST_F(AddMMTest, SpecialValuesKeepTheCompositeBits) {
  Array a = array({{1.0f, INFINITY}, {NAN, 2.0f}, {-0.0f, 0.0f}});
  Array b = array({{0.0f, 1.0f}, {3.0f, -INFINITY}});
  Array c = array({NAN, -0.0f});
  for (float alpha : {1.0f, -2.0f})
    for (float beta : {1.0f, 0.5f, 0.0f})
      EXPECT_EQ(bits_of(ops::addmm(c, a, b, alpha, beta)),
                bits_of(composite(c, a, b, alpha, beta)))
          << alpha << " " << beta;
  Array zero = ops::addmm(c, a, b, 1.0f, 0.0f);
  EXPECT_FALSE(std::isnan(zero.to_vector<float>()[4]));  // row 2 reads no NaN
}

TEST_F(AddMMTest, ErrorsNameAddmm) {
  auto expect_error = [](const Array& x, ErrorKind kind,
                         const std::string& text) {
    ASSERT_TRUE(x.is_failed());
    EXPECT_EQ(x.error()->op_name().value_or(""), "addmm") << x.error()->what();
    EXPECT_EQ(x.error()->kind(), kind) << x.error()->what();
    EXPECT_NE(std::string(x.error()->what()).find(text), std::string::npos)
        << x.error()->what();
  };
  Array a = ops::ones({2, 3}), b = ops::ones({3, 4});
  expect_error(ops::addmm(ops::ones({4}), a, a), ErrorKind::shape_mismatch,
               "must match");
  expect_error(ops::addmm(ops::ones({3}), a, b), ErrorKind::shape_mismatch,
               "cannot be broadcast");
  expect_error(ops::addmm(ops::ones({3}), a, b, 1.0f, 0.0f),
               ErrorKind::shape_mismatch, "cannot be broadcast");
  expect_error(ops::addmm(ops::ones({4}), ops::ones({}), b),
               ErrorKind::invalid_shape, "0-d");
  expect_error(ops::addmm(ops::ones({4}, int32), ops::ones({2, 3}, int32),
                          ops::ones({3, 4}, int32)),
               ErrorKind::unsupported_dtype, "int32");
  expect_error(
      ops::addmm(ops::ones({4}), ops::ones({2, 2, 3}), ops::ones({3, 3, 4})),
      ErrorKind::shape_mismatch, "broadcast");
  Array bad = ops::reshape(ops::ones({4}), {3});
  EXPECT_EQ(ops::addmm(bad, a, b).error()->op_name().value_or(""), "reshape");
  EXPECT_EQ(ops::addmm(ops::ones({4}), a, bad).error()->op_name().value_or(""),
            "reshape");
}

// compile keeps the bits, shaped and shapeless (the primitive reads c
// broadcast itself, so a bias needs no literal broadcast node), next to
// fused element-wise work and the beta == 0 composite.
TEST_F(AddMMTest, CompiledEqualsUncompiled) {
  auto layer = [](const Array& x, const Array& w, const Array& bias) {
    return ops::maximum(ops::addmm(bias, x, w, 0.5f, 1.0f), 0.0f) +
           ops::addmm(bias, x, w, 0.5f, -0.0f);
  };
  Array w = values({24, 16}, float32), bias = values({16}, float32);
  auto shaped = compile(layer);
  auto shapeless = compile(layer, CompileOptions{.shapeless = true});
  for (int rows : {5, 9}) {
    Array x = values({rows, 24}, float32);
    auto want = bits_of(layer(x, w, bias));
    EXPECT_EQ(bits_of(shaped(x, w, bias)), want) << rows;
    EXPECT_EQ(bits_of(shapeless(x, w, bias)), want) << rows;
  }
}

// vmap with only c batched, only a batched, and a bias: the loop's bits.
TEST_F(AddMMTest, VmapEqualsLoop) {
  Array a = values({3, 4}, float64), b = values({4, 2}, float64);
  Array cs = values({5, 3, 2}, float64), as = values({5, 3, 4}, float64),
        bias = values({2}, float64);
  auto f = [](const Array& c, const Array& x, const Array& y) {
    return ops::addmm(c, x, y, -2.0f, 0.5f);
  };
  Array only_c = vmap(f).in_axes({0, std::nullopt, std::nullopt})(cs, a, b);
  Array only_a = vmap(f).in_axes({std::nullopt, 0, std::nullopt})(bias, as, b);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(bits_of(only_c.i(i)), bits_of(f(cs.i(i), a, b))) << i;
    EXPECT_EQ(bits_of(only_a.i(i)), bits_of(f(bias, as.i(i), b))) << i;
  }
}

// The gradient of a bias (c broadcast over rows) sums the rows of beta * G.
TEST_F(AddMMTest, BiasGradientSumsRows) {
  Array x = values({6, 3}, float64), w = values({3, 2}, float64),
        bias = values({2}, float64);
  auto loss = [&](const Array& c) {
    return ops::sum(ops::addmm(c, x, w, 0.5f, -2.0f));
  };
  EXPECT_EQ(grad(loss)(bias).to_vector<double>(),
            (std::vector<double>{-12.0, -12.0}));
}

}  // namespace
