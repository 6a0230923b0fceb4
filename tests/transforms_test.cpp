// Transforms: the spec's examples, hand-derived derivatives and the
// engines' rules (tapes, tracers, zeros, errors).
#include <gtest/gtest.h>

#include <cmath>

#include <nuvec/nuvec.h>

using namespace nuvec;

namespace transformtest {
struct Affine {
  Array w;
  Array b;
};
NUVEC_TREE(Affine, w, b)
}  // namespace transformtest
using transformtest::Affine;

TEST(Transforms, SpecGradOfCube) {
  auto f = [](const Array& x) { return (x * x * x).sum(); };  // sum(x^3)
  Array x = array({1.0f, 2.0f});
  EXPECT_EQ(grad(f)(x).to_vector<float>(), (std::vector<float>{3.0f, 12.0f}));  // 3x^2
  Array g2 = grad([&](const Array& y) { return grad(f)(y).sum(); })(x);
  EXPECT_EQ(g2.to_vector<float>(), (std::vector<float>{6.0f, 12.0f}));  // 6x
}

TEST(Transforms, SpecAffineValueAndGrad) {
  Array x = array({1.0f, 2.0f});
  auto loss = [&](const Affine& p) { return (p.w * x + p.b).sum(); };
  auto [value, grads] = value_and_grad(loss)(Affine{array({3.0f, 4.0f}), array({1.0f, 1.0f})});
  EXPECT_EQ(value.item<float>(), 13.0f);
  EXPECT_EQ(grads.w.to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(grads.b.to_vector<float>(), (std::vector<float>{1.0f, 1.0f}));
  nuvec::eval(std::tie(value, grads));
}

TEST(Transforms, FlatVjpJvp) {
  // f(a, b) = (a * b, exp(a)): hand-derived products.
  FlatFunction f = [](const std::vector<Array>& in) {
    return std::vector<Array>{in[0] * in[1], ops::exp(in[0])};
  };
  Array a = array({0.5f, -1.0f});
  Array b = array({2.0f, 3.0f});
  auto [outs, vjps] = vjp_flat(f, {a, b}, {array({1.0f, 1.0f}), array({1.0f, 0.0f})});
  auto ga = vjps[0].to_vector<float>();
  EXPECT_FLOAT_EQ(ga[0], 2.0f + std::exp(0.5f));
  EXPECT_FLOAT_EQ(ga[1], 3.0f);
  EXPECT_EQ(vjps[1].to_vector<float>(), (std::vector<float>{0.5f, -1.0f}));
  auto [o2, jvps] = jvp_flat(f, {a, b}, {array({1.0f, 0.0f}), array({0.0f, 1.0f})});
  EXPECT_EQ(jvps[0].to_vector<float>(), (std::vector<float>{2.0f, -1.0f}));
  auto j1 = jvps[1].to_vector<float>();
  EXPECT_FLOAT_EQ(j1[0], std::exp(0.5f));
  EXPECT_FLOAT_EQ(j1[1], 0.0f);
}

TEST(Transforms, FlatVmapElementwise) {
  FlatFunction f = [](const std::vector<Array>& in) {
    return std::vector<Array>{ops::exp(in[0]) * in[1] + 1.0f};
  };
  Array x = ops::reshape(ops::arange(6).astype(float32), {3, 2});
  Array y = array({10.0f, 20.0f, 30.0f});
  // Batched over x's columns: out[i][j] = exp(x[j][i]) * y[j] + 1.
  auto out = vmap_flat(f, {1, std::nullopt}, {0})({x, y});
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  auto v = out[0].to_vector<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_FLOAT_EQ(v[i * 3 + j], std::exp(float(j * 2 + i)) * (10.0f * (j + 1)) + 1.0f);
}

TEST(Transforms, TreeVjpJvpZerosForFrozen) {
  // f(p) = w * b with b a frozen Param: its gradient is zero.
  std::pair<Array, Param> p{array({2.0f, 3.0f}), Param(array({5.0f, 7.0f}), true)};
  auto f = [](const std::pair<Array, Param>& q) { return q.first * q.second.value; };
  auto [out, g] = vjp(f, p, array({1.0f, 1.0f}));
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{10.0f, 21.0f}));
  EXPECT_EQ(g.first.to_vector<float>(), (std::vector<float>{5.0f, 7.0f}));
  EXPECT_EQ(g.second.value.to_vector<float>(), (std::vector<float>{0.0f, 0.0f}));
  EXPECT_TRUE(g.second.frozen);
  auto [o2, t] = jvp(f, p, std::pair<Array, Param>{array({1.0f, 0.0f}), Param(array({9.0f, 9.0f}))});
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{5.0f, 0.0f}));  // frozen tangent ignored
  EXPECT_THROW(vjp(f, p, array({1.0f, 1.0f, 1.0f})), Error);           // wrong cotangent shape
}

TEST(Transforms, ValueAndGradWithAux) {
  auto f = [](const Array& x) {
    Array y = ops::exp(x);
    return std::make_pair((y * 2.0f).sum(), y);
  };
  Array x = array({0.0f, 1.0f});
  auto [out, g] = value_and_grad(f)(x);
  EXPECT_FLOAT_EQ(out.first.item<float>(), 2.0f * (1.0f + std::exp(1.0f)));
  EXPECT_FLOAT_EQ(out.second.to_vector<float>()[1], std::exp(1.0f));
  auto gv = g.to_vector<float>();
  EXPECT_FLOAT_EQ(gv[0], 2.0f);
  EXPECT_FLOAT_EQ(gv[1], 2.0f * std::exp(1.0f));
  // A non-scalar loss is an error at the boundary.
  EXPECT_THROW(value_and_grad([](const Array& x) { return x * 2.0f; })(x), Error);
}

TEST(Transforms, ErrorsSurfaceWithOpNameAndLocation) {
  auto f = [](const Array& x) { return ops::matmul(x, x).sum(); };
  try {
    (void)grad(f)(ops::ones({2, 3}));
    FAIL() << "must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.op_name().value_or(""), "matmul");
    EXPECT_NE(e.file().find("transforms_test.cpp"), std::string::npos);
  }
}

TEST(Transforms, GradOfConstantIsZero) {
  Array c = array({1.0f, 2.0f});
  auto g = grad([&](const Array&) { return (c * 3.0f).sum(); })(array({5.0f, 6.0f}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{0.0f, 0.0f}));
  // A captured array is a constant even when it is also the argument.
  Array x = array({2.0f});
  auto g2 = grad([&](const Array& y) { return (y * x).sum(); })(x);
  EXPECT_EQ(g2.item<float>(), 2.0f);
}

TEST(Transforms, EvalInsideTransformKeepsGraph) {
  auto f = [](const Array& x) {
    Array y = ops::exp(x);
    EXPECT_FLOAT_EQ(y.to_vector<float>()[0], 1.0f);  // values available while tracing
    return (y * x).sum();
  };
  auto g = grad(f)(array({0.0f, 1.0f})).to_vector<float>();
  EXPECT_FLOAT_EQ(g[0], 1.0f);                    // e^x (1 + x)
  EXPECT_FLOAT_EQ(g[1], 2.0f * std::exp(1.0f));
}

TEST(Transforms, CustomFunctionRules) {
  // f(x) = exp(x) with a deliberately different vjp (3 * cot) and jvp.
  auto f = custom_function([](const Array& x) { return ops::exp(x); })
               .with_vjp([](const Array&, const Array& cot, const Array&) { return cot * 3.0f; })
               .with_jvp([](const Array&, const Array& t) { return t * 5.0f; });
  Array x = array({0.0f, 1.0f});
  EXPECT_FLOAT_EQ(f(x).to_vector<float>()[1], std::exp(1.0f));
  auto g = grad([&](const Array& y) { return f(y).sum(); })(x);
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{3.0f, 3.0f}));
  auto [o, t] = jvp([&](const Array& y) { return f(y); }, x, array({1.0f, 2.0f}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{5.0f, 10.0f}));
  // Without rules: the function itself is differentiated.
  auto plain = custom_function([](const Array& y) { return y * y; });
  EXPECT_EQ(grad([&](const Array& y) { return plain(y).sum(); })(x).to_vector<float>(),
            (std::vector<float>{0.0f, 2.0f}));
}

TEST(Transforms, CheckpointSameValuesAndGradients) {
  auto block = [](const Array& x) { return ops::tanh(ops::exp(x) * 0.5f) * x; };
  auto loss = [&](const Array& x) { return block(block(x)).sum(); };
  auto loss_cp = [&](const Array& x) {
    auto b = checkpoint(block);
    return b(b(x)).sum();
  };
  Array x = array({0.1f, -0.4f, 0.7f});
  auto [v1, g1] = value_and_grad(loss)(x);
  auto [v2, g2] = value_and_grad(loss_cp)(x);
  EXPECT_EQ(v1.item<float>(), v2.item<float>());
  EXPECT_EQ(g1.to_vector<float>(), g2.to_vector<float>());
}

TEST(Transforms, CheckpointRedrawsTheSameRandomNumbers) {
  // Dropout-like: the mask drawn in the forward pass is drawn again, with
  // the same key, when the backward pass recomputes the block.
  random::seed(7);
  auto block = [](const Array& x) {
    Array keep = random::bernoulli(0.5, x.shape());
    return ops::where(keep, x * 2.0f, ops::zeros_like(x));
  };
  Array x = ops::arange(64).astype(float32) + 1.0f;
  auto [out, g] = value_and_grad([&](const Array& y) {
    Array o = checkpoint(block)(y);
    return std::make_pair(o.sum(), o);
  })(x);
  auto o = out.second.to_vector<float>();
  auto gv = g.to_vector<float>();
  int kept = 0;
  for (size_t i = 0; i < o.size(); ++i) {
    EXPECT_EQ(gv[i], o[i] != 0.0f ? 2.0f : 0.0f) << i;
    kept += o[i] != 0.0f;
  }
  EXPECT_GT(kept, 10);
  EXPECT_LT(kept, 54);
}

TEST(Transforms, TreeVmapAxes) {
  // vmap over a tree argument and an unbatched argument, with out_axes.
  auto f = [](const Affine& p, const Array& x) { return std::make_pair(p.w * x + p.b, x * 2.0f); };
  Affine p{ops::reshape(ops::arange(6).astype(float32), {3, 2}), array({1.0f, 1.0f, 1.0f})};
  Array x = array({10.0f, 20.0f});
  auto [a, b] = vmap(f).in_axes({0, std::nullopt}).out_axes({1, 0})(p, x);
  ASSERT_EQ(a.shape(), (Shape{2, 3}));
  auto av = a.to_vector<float>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) EXPECT_EQ(av[j * 3 + i], float(i * 2 + j) * (10.0f * (j + 1)) + 1.0f);
  ASSERT_EQ(b.shape(), (Shape{3, 2}));  // independent of the batch: broadcast
  EXPECT_EQ(b.to_vector<float>()[4], 20.0f);
}

TEST(Transforms, RandomDrawsAreConstantsOfGrad) {
  Array k = random::key(3);
  Array noise = random::normal({4}, k);
  auto g = grad([&](const Array& x) { return (x * random::normal({4}, k)).sum(); })(ops::ones({4}));
  EXPECT_EQ(g.to_vector<float>(), noise.to_vector<float>());
}

TEST(Transforms, VmapOverKeys) {
  // A batch of keys gives each key's own draw, as MLX's random under vmap.
  Array keys = random::split(random::key(11), 3);
  auto draws = vmap([](const Array& key) { return random::uniform({5}, float32, key); })(keys);
  ASSERT_EQ(draws.shape(), (Shape{3, 5}));
  auto all = draws.to_vector<float>();
  for (int i = 0; i < 3; ++i) {
    auto one = random::uniform({5}, float32, keys.i(i)).to_vector<float>();
    for (int j = 0; j < 5; ++j) EXPECT_EQ(all[i * 5 + j], one[j]) << i << "," << j;
  }
}

TEST(Transforms, CustomFunctionVmapRule) {
  // A vmap rule that is visibly different (adds 100) proves it is used; the
  // default falls back to vmapping f itself.
  auto f = custom_function([](const Array& x) { return x * 2.0f; })
               .with_vmap([](const Array& xs, const std::vector<int>& axes) {
                 return std::make_pair(ops::moveaxis(xs, axes[0], 0) * 2.0f + 100.0f, std::vector<int>{0});
               });
  Array xs = ops::reshape(ops::arange(6).astype(float32), {2, 3});
  auto out = vmap([&](const Array& x) { return f(x); }).in_axes(1)(xs);
  ASSERT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{100, 106, 102, 108, 104, 110}));
  auto plain = custom_function([](const Array& x) { return x * 2.0f; });
  auto out2 = vmap([&](const Array& x) { return plain(x); }).in_axes(1)(xs);
  EXPECT_EQ(out2.to_vector<float>(), (std::vector<float>{0, 6, 2, 8, 4, 10}));
}
