// MLX's C++ transforms forms next to nuvec's tree forms: which form a call
// picks (by the function's declared signature), vmap's in-axes rule (-1 as
// an int means "not mapped"), empty batches, dtype casts of cotangents and
// tangents, and nuvec's rule for integer paths. Values are hand-derived;
// the MLX-idiom calls themselves are compared with MLX in
// tests/parity/cases_transforms.inc (MlxParity.transforms).
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <functional>
#include <optional>
#include <type_traits>

using namespace nuvec;

namespace mlxformstest {
struct Pair {
  Array a;
  Array b;
};
NUVEC_TREE(Pair, a, b)
}  // namespace mlxformstest
using mlxformstest::Pair;

namespace {

using Axis = std::optional<int>;
using Arrays = std::vector<Array>;

std::vector<float> values(const Array& a) {
  return a.astype(float32).to_vector<float>();
}

// 2x3 matrix [[1, 2, 3], [4, 5, 6]].
Array m23() { return array({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3}); }

auto loss3 = [](const Arrays& in) { return (in[0] * in[1] * in[2]).sum(); };
auto vec_to_vec = [](const Arrays& in) {
  return Arrays{(in[0] * in[1]).sum(), in[1]};
};
auto unary = [](const Array& x) { return (x * x).sum(); };

// Which form each one-argument call picks, by the function's signature.
static_assert(std::is_same_v<decltype(grad(loss3)), FlatFunction>);
static_assert(
    std::is_same_v<decltype(value_and_grad(loss3)), SimpleValueAndGradFn>);
static_assert(
    std::is_same_v<decltype(value_and_grad(vec_to_vec)), ValueAndGradFn>);
static_assert(std::is_convertible_v<decltype(grad(unary)),
                                    std::function<Array(const Array&)>>);
static_assert(std::is_convertible_v<
              decltype(value_and_grad(unary)),
              std::function<std::pair<Array, Array>(const Array&)>>);
static_assert(std::is_convertible_v<decltype(vmap(vec_to_vec)), FlatFunction>);
static_assert(
    std::is_convertible_v<decltype(checkpoint(vec_to_vec)), FlatFunction>);
static_assert(
    std::is_convertible_v<decltype(custom_function(vec_to_vec)), FlatFunction>);
// The results' call operators are constrained, so probing them with the
// wrong arguments answers false instead of failing to compile.
static_assert(!std::is_invocable_v<decltype(grad(unary)), const Arrays&>);
static_assert(
    !std::is_invocable_v<decltype(grad(unary)), const Array&, const Array&>);
static_assert(!std::is_invocable_v<decltype(vmap(unary)), const Arrays&>);

TEST(TransformsMlxForms, GradOfVectorFunctionIsMlxArgnumZero) {
  Array a = array({1.0f, 2.0f}), b = array({3.0f, 4.0f}),
        c = array({0.5f, -1.0f});
  // d/da sum(a b c) = b c: one gradient (argnum 0), as MLX's grad(fun).
  auto g = grad(loss3)({a, b, c});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(values(g[0]), (std::vector<float>{1.5f, -4.0f}));
  // Every input: list them, in any order (returned in increasing order).
  auto all = grad(loss3, {2, 0, 1})({a, b, c});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(values(all[0]), (std::vector<float>{1.5f, -4.0f}));  // b c
  EXPECT_EQ(values(all[1]), (std::vector<float>{0.5f, -2.0f}));  // a c
  EXPECT_EQ(values(all[2]), (std::vector<float>{3.0f, 8.0f}));   // a b
  // A function of a vector and another argument is a tree form: the
  // gradient of every leaf of the vector.
  auto tree = grad([](const Arrays& in, const Array& k) {
    return (in[0] * in[1] * k).sum();
  });
  auto gt = tree(Arrays{a, b}, c);
  ASSERT_EQ(gt.size(), 2u);
  EXPECT_EQ(values(gt[0]), (std::vector<float>{1.5f, -4.0f}));
  EXPECT_EQ(values(gt[1]), (std::vector<float>{0.5f, -2.0f}));
}

TEST(TransformsMlxForms, TreeFormsKeepTheirMeaning) {
  Pair p{array({1.0f, 2.0f}), array({3.0f})};
  auto f = [](const Pair& q) { return (q.a * q.a).sum() + (q.b * 5.0f).sum(); };
  Pair g = grad(f)(p);
  EXPECT_EQ(values(g.a), (std::vector<float>{2.0f, 4.0f}));
  EXPECT_EQ(values(g.b), (std::vector<float>{5.0f}));
  // A generic lambda has no declared signature: the tree form.
  Pair g2 = grad([](const auto& q) { return (q.a * q.b).sum(); })(p);
  EXPECT_EQ(values(g2.a), (std::vector<float>{3.0f, 3.0f}));
  EXPECT_EQ(values(g2.b), (std::vector<float>{3.0f}));
  auto [v, gv] =
      value_and_grad([](const auto& q) { return (q.a * 2.0f).sum(); })(p);
  EXPECT_EQ(v.item<float>(), 6.0f);
  EXPECT_EQ(values(gv.b), (std::vector<float>{0.0f}));
  // vjp over a tree with a cotangent of another dtype: cast.
  auto [out, cot] = vjp([](const Pair& q) { return q.a * q.b; }, p,
                        array({1.0f, 2.0f}, float16));
  EXPECT_EQ(out.dtype(), float32);
  EXPECT_EQ(cot.a.dtype(), float32);
  EXPECT_EQ(values(cot.a), (std::vector<float>{3.0f, 6.0f}));
  EXPECT_EQ(values(cot.b), (std::vector<float>{5.0f}));  // 1 * 1 + 2 * 2
}

TEST(TransformsMlxForms, MismatchedShapesNameThePath) {
  Pair p{array({1.0f, 2.0f}), array({3.0f})};
  auto f = [](const Pair& q) { return Pair{q.a * 2.0f, q.b}; };
  try {
    (void)vjp(f, p, Pair{array({1.0f, 1.0f}), array({1.0f, 1.0f})});
    FAIL() << "must throw";
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'b'"), std::string::npos) << what;
    EXPECT_NE(what.find("shape"), std::string::npos) << what;
  }
  try {
    (void)jvp_flat([](const Arrays& in) { return in; }, {array({1.0f})},
                   {array({1.0f, 2.0f})});
    FAIL() << "must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'primal 0'"), std::string::npos)
        << e.what();
  }
}

TEST(TransformsMlxForms, TangentsAreCastToThePrimalsDtype) {
  // MLX keeps the tangent's dtype (a float64 tangent gives a float64 jvp);
  // nuvec casts it to the primal's dtype, so tangents match their arrays.
  auto [out, t] = jvp([](const Array& x) { return x * x; }, array({3.0f}),
                      array({0.5}, float64));
  EXPECT_EQ(t.dtype(), float32);
  EXPECT_EQ(values(t), (std::vector<float>{3.0f}));  // 2 x t
  auto [o2, t2] = jvp([](const Array& x) { return x; }, array({3.0f}),
                      array({2.0f}, float16));
  EXPECT_EQ(t2.dtype(), float32);
  EXPECT_EQ(values(t2), (std::vector<float>{2.0f}));
}

TEST(TransformsMlxForms, IntegerPathsHaveZeroDerivatives) {
  // nuvec's rule, which differs from MLX 0.32.4: MLX passes the cotangent
  // through astype (grad of sum(astype(x, int32)) is [1, 1, 1], the value
  // 3) and into integer inputs (grad of sum(x * x) at int32 [1, 2, 3] is
  // [2, 4, 6] int32). Truncation is constant between integers and integers
  // have no neighbours to differentiate over, so the derivative is 0.
  Array x = array({1.5f, 2.5f, -0.7f});
  auto [v, g] =
      value_and_grad([](const Array& y) { return y.astype(int32).sum(); })(x);
  EXPECT_EQ(v.dtype(), int32);
  EXPECT_EQ(v.item<int32_t>(), 3);  // 1 + 2 + 0
  EXPECT_EQ(g.dtype(), float32);
  EXPECT_EQ(values(g), (std::vector<float>{0.0f, 0.0f, 0.0f}));
  Array xi = array({1, 2, 3});
  Array gi = grad([](const Array& y) { return (y * y).sum(); })(xi);
  EXPECT_EQ(gi.dtype(), int32);
  EXPECT_EQ(gi.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  auto gm = grad(loss3, {0, 1})(
      {xi, array({0.5f, 1.0f, 2.0f}), array({1.0f, 1.0f, 1.0f})});
  EXPECT_EQ(gm[0].to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(values(gm[1]), (std::vector<float>{1.0f, 2.0f, 3.0f}));
}

TEST(TransformsMlxForms, VmapFlatMinusOneAsIntIsNotMapped) {
  FlatFunction f = [](const Arrays& in) { return Arrays{in[0] * in[1]}; };
  Array v3 = array({10.0f, 20.0f, 30.0f});
  // Braced ints: -1 leaves v3 unmapped (MLX): rows of m23 times v3.
  auto out = vmap_flat(f, {0, -1})({m23(), v3});
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values(out[0]), (std::vector<float>{10, 40, 90, 40, 100, 180}));
  // A std::vector<int> too.
  auto out2 = vmap_flat(f, std::vector<int>{0, -1})({m23(), v3});
  EXPECT_EQ(values(out2[0]), values(out[0]));
  // std::optional<int>(-1) is the last axis: columns of m23 times 10, 20, 30.
  auto cols = vmap_flat(f, {Axis(-1), Axis(0)})({m23(), v3});
  ASSERT_EQ(cols[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values(cols[0]), (std::vector<float>{10, 40, 40, 100, 90, 180}));
  auto cols2 = vmap_flat(f, std::vector<Axis>{-1, 0})({m23(), v3});
  EXPECT_EQ(values(cols2[0]), values(cols[0]));
  // std::nullopt is not mapped; -2 as an int counts from the end.
  auto out3 = vmap_flat(f, {Axis(0), std::nullopt})({m23(), v3});
  EXPECT_EQ(values(out3[0]), values(out[0]));
  auto out4 = vmap_flat(f, {-2, -1})({m23(), v3});
  EXPECT_EQ(values(out4[0]), values(out[0]));
  // Nothing mapped is an error.
  EXPECT_THROW(vmap_flat(f, {-1, -1})({m23(), v3}), std::invalid_argument);
  // vmap_flat's out axis -1 is the last axis.
  auto last = vmap_flat(f, {0, -1}, {-1})({m23(), v3});
  ASSERT_EQ(last[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values(last[0]), (std::vector<float>{10, 40, 40, 100, 90, 180}));
}

TEST(TransformsMlxForms, TreeVmapInAxesFollowTheSameRule) {
  auto f = [](const Array& a, const Array& b) { return a * b; };
  Array v3 = array({10.0f, 20.0f, 30.0f});
  Array rows = vmap(f).in_axes({0, -1})(m23(), v3);
  EXPECT_EQ(values(rows), (std::vector<float>{10, 40, 90, 40, 100, 180}));
  Array cols = vmap(f).in_axes({Axis(-1), Axis(0)})(m23(), v3);
  EXPECT_EQ(values(cols), (std::vector<float>{10, 40, 40, 100, 90, 180}));
  // One axis for every argument: the int -1 maps nothing, the optional -1
  // the last axis of each.
  EXPECT_THROW(vmap(f).in_axes(-1)(m23(), m23()), std::invalid_argument);
  Array last = vmap(f).in_axes(Axis(-1))(m23(), m23());
  ASSERT_EQ(last.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(last), (std::vector<float>{1, 16, 4, 25, 9, 36}));
}

TEST(TransformsMlxForms, MlxVmapRejectsNegativeOutAxes) {
  FlatFunction f = [](const Arrays& in) { return Arrays{in[0] * 2.0f}; };
  EXPECT_THROW(vmap(f, {0}, {-1}), std::invalid_argument);
  EXPECT_THROW(vmap(f, {-1}, {0}), std::invalid_argument);
  EXPECT_THROW(vmap([](const Array& x) { return x; }, 0, -1),
               std::invalid_argument);
  auto v = vmap(f, {1}, {1})({m23()});
  EXPECT_EQ(v[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values(v[0]), (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

TEST(TransformsMlxForms, EmptyBatch) {
  FlatFunction f = [](const Arrays& in) {
    return Arrays{ops::matmul(in[0], in[1]), in[0].sum().astype(int32),
                  in[1] * 2.0f};
  };
  Array xs = ops::zeros({0, 2, 3});
  Array w = ops::ones({3, 4});
  auto out = vmap_flat(f, {0, std::nullopt}, {1, 0, 0})({xs, w});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(out[0].dtype(), float32);
  EXPECT_EQ(out[1].shape(), (Shape{0}));
  EXPECT_EQ(out[1].dtype(), int32);
  EXPECT_EQ(out[2].shape(), (Shape{0, 3, 4}));  // independent of the batch
  EXPECT_TRUE(out[0].to_vector<float>().empty());
  // The tree form, and a batch axis that is not the first.
  Array t = vmap([](const Array& x) { return x * x; })
                .in_axes(1)
                .out_axes(-1)(ops::zeros({3, 0}));
  EXPECT_EQ(t.shape(), (Shape{3, 0}));
  // Derivatives through an empty batch: the sum over it is 0, its gradient
  // with respect to an unbatched input zeros of that input's shape.
  auto g = grad_flat([&](const Arrays& in) {
    return Arrays{vmap_flat(f, {0, std::nullopt})({xs, in[0]})[0].sum()};
  })({w});
  EXPECT_EQ(g[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(values(g[0]), std::vector<float>(12, 0.0f));
  // vmap of a gradient over an empty batch.
  Array gs = vmap(grad([](const Array& x) { return (x * x).sum(); }))(
      ops::zeros({0, 5}));
  EXPECT_EQ(gs.shape(), (Shape{0, 5}));
}

TEST(TransformsMlxForms, CustomJvpRuleSeesArgnums) {
  // MLX's jvp rule gets the tangents of the differentiated primals only.
  std::vector<int> seen;
  auto f = custom_function(
      [](const Arrays& in) { return Arrays{in[0] * in[1]}; }, std::nullopt,
      [&](const Arrays& p, const Arrays& t, const std::vector<int>& argnums) {
        seen = argnums;
        return Arrays{t[0] * p[0]};
      });
  Array a = array({2.0f, 3.0f}), b = array({5.0f, 7.0f});
  auto [o, t] = jvp(
      [&](const Arrays& in) {
        return f({a, in[0]});
      },
      {b}, {array({1.0f, 2.0f})});
  EXPECT_EQ(seen, (std::vector<int>{1}));
  EXPECT_EQ(values(t[0]),
            (std::vector<float>{2.0f, 6.0f}));  // the rule's t * a
  EXPECT_EQ(values(o[0]), (std::vector<float>{10.0f, 21.0f}));
}

TEST(TransformsMlxForms, CheckpointAndCustomFunctionCalledWithBracedInputs) {
  Array a = array({2.0f, 3.0f}), b = array({5.0f, 7.0f});
  auto block = [](const Arrays& in) { return Arrays{in[0] * in[1]}; };
  auto cp = checkpoint(block);
  EXPECT_EQ(values(cp({a, b})[0]), (std::vector<float>{10.0f, 21.0f}));
  auto plain = custom_function(block);
  EXPECT_EQ(values(plain({a, b})[0]), (std::vector<float>{10.0f, 21.0f}));
  auto g =
      grad([&](const Arrays& in) { return cp(in)[0].sum(); }, {0, 1})({a, b});
  EXPECT_EQ(values(g[0]), (std::vector<float>{5.0f, 7.0f}));
  EXPECT_EQ(values(g[1]), (std::vector<float>{2.0f, 3.0f}));
}

}  // namespace
