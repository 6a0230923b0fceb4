// Trees: paths as MLX's tree_flatten names them, structure (TreeDef) with
// its negative cases, rebuilding, mapping, visiting and evaluating.
#include <gtest/gtest.h>

#include <nuvec/nuvec.h>
#include <nuvec/tree.h>

#include <cmath>
#include <optional>
#include <unordered_map>
#include <variant>

using namespace nuvec;

namespace treetest {

struct Affine {
  Array w;
  Array b;
};
NUVEC_TREE(Affine, w, b)

struct Config {
  int dims = 4;
  float scale = 1.0f;
  std::string act = "relu";
};
NUVEC_STATIC_STRUCT(Config, dims, scale, act)

struct Layer {
  Param weight;
  std::optional<Array> bias;
  Config config;
  bool training = true;
  std::string name;  // not part of the structure
};
NUVEC_TREE(Layer, weight, bias, NUVEC_STATIC(config), NUVEC_MODE(training), NUVEC_UNCHECKED(name))

struct Model {
  std::vector<Layer> layers;
  Buffer steps;
  std::map<std::string, Array> extra;
};
NUVEC_TREE(Model, layers, steps, extra)

struct Empty {};
NUVEC_TREE(Empty)

Layer make_layer(int n, bool with_bias) {
  Layer l;
  l.weight = Param(ops::ones({n, n}));
  if (with_bias) l.bias = ops::zeros({n});
  l.config.dims = n;
  return l;
}

Model make_model() {
  Model m;
  m.layers.push_back(make_layer(2, true));
  m.layers.push_back(make_layer(3, false));
  m.steps = Buffer(array(0));
  m.extra["z"] = array({1.0f});
  m.extra["a"] = array({2.0f});
  return m;
}

std::vector<std::string> paths(const std::vector<std::pair<std::string, Array>>& f) {
  std::vector<std::string> out;
  for (const auto& p : f) out.push_back(p.first);
  return out;
}

}  // namespace treetest

using namespace treetest;

TEST(Tree, PathsAsMlxTreeFlatten) {
  // MLX: tree_flatten({"layers": [{"weight":.., "bias":..}, {"weight":..}],
  // "steps":.., "extra": {"a":.., "z":..}}) in field order, dict keys sorted.
  auto f = tree_flatten(make_model());
  std::vector<std::string> want = {"layers.0.weight", "layers.0.bias", "layers.1.weight",
                                   "steps", "extra.a", "extra.z"};
  EXPECT_EQ(paths(f), want);
  EXPECT_EQ(f[4].second.item<float>(), 2.0f);  // "a" sorts first

  Array x = array({1.0f, 2.0f});
  auto root = tree_flatten(x);
  ASSERT_EQ(root.size(), 1u);
  EXPECT_EQ(root[0].first, "");  // MLX names a lone array ""

  auto nested = std::make_tuple(x, std::vector<Array>{x, x}, std::make_pair(x, std::optional<Array>{}));
  EXPECT_EQ(paths(tree_flatten(nested)), (std::vector<std::string>{"0", "1.0", "1.1", "2.0"}));

  std::unordered_map<std::string, Array> um{{"b", x}, {"a", x}, {"c", x}};
  EXPECT_EQ(paths(tree_flatten(um)), (std::vector<std::string>{"a", "b", "c"}));

  std::array<Affine, 2> arr{Affine{x, x}, Affine{x, x}};
  EXPECT_EQ(paths(tree_flatten(arr)), (std::vector<std::string>{"0.w", "0.b", "1.w", "1.b"}));
  EXPECT_TRUE(tree_flatten(Empty{}).empty());
}

// tree_def(tree, leaves) (compile's one visit a call) collects the leaves of
// tree_leaves, in its order, and the structure of tree_def(tree); paths
// past nine (indices of two digits and more) included.
TEST(Tree, DefAndLeavesInOneVisit) {
  auto model = make_model();
  std::vector<Array> many;
  for (int i = 0; i < 123; ++i) many.push_back(array({static_cast<float>(i)}));
  auto both = std::make_tuple(model, many);
  std::vector<Array> leaves;
  TreeDef def = tree_def(both, leaves);
  std::vector<Array> want = tree_leaves(both);
  ASSERT_EQ(leaves.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(leaves[i].desc(), want[i].desc()) << i;
  EXPECT_TRUE(def == tree_def(both));
  EXPECT_EQ(tree_flatten(many)[107].first, "107");
}

TEST(Tree, LeafKindsAndTrainable) {
  Model m = make_model();
  m.layers[1].weight.frozen = true;
  TreeDef d = tree_def(m);
  ASSERT_EQ(d.leaves.size(), 6u);
  EXPECT_EQ(d.leaves[0].kind, LeafKind::param);
  EXPECT_TRUE(d.leaves[0].trainable);
  EXPECT_EQ(d.leaves[1].kind, LeafKind::array);
  EXPECT_FALSE(d.leaves[2].trainable);  // frozen
  EXPECT_EQ(d.leaves[3].kind, LeafKind::buffer);
  EXPECT_FALSE(d.leaves[3].trainable);
  EXPECT_NE(d.root_type.find("Model"), std::string::npos);
}

TEST(Tree, EqualStructuresAreEqual) {
  Model a = make_model();
  Model b = make_model();
  b.layers[0].weight = Param(ops::zeros({5, 7}, float16));  // values, shapes, dtypes: not structure
  b.layers[0].name = "renamed";                             // unchecked
  EXPECT_EQ(tree_def(a), tree_def(b));
  EXPECT_EQ(tree_def(a).hash(), tree_def(b).hash());
  EXPECT_EQ(std::hash<TreeDef>{}(tree_def(a)), std::hash<TreeDef>{}(tree_def(b)));
  EXPECT_EQ(tree_def(a).difference(tree_def(b)), "");
}

TEST(Tree, DifferentStructuresDiffer) {
  const TreeDef base = tree_def(make_model());
  auto expect_differs = [&](const Model& m, const std::string& why) {
    TreeDef d = tree_def(m);
    EXPECT_NE(d, base) << why;
    EXPECT_NE(d.hash(), base.hash()) << why;
    EXPECT_NE(d.difference(base), "") << why;
  };
  Model m = make_model();
  m.layers[0].config.dims = 5;
  expect_differs(m, "a changed static value");
  m = make_model();
  m.layers[0].config.scale = -0.0f;
  expect_differs(m, "a static float compared by bits");
  m = make_model();
  m.layers[1].weight.frozen = true;
  expect_differs(m, "a frozen flag");
  m = make_model();
  m.layers[0].training = false;
  expect_differs(m, "a train/eval switch");
  EXPECT_NE(tree_def(m).difference(base).find("mode"), std::string::npos);
  m = make_model();
  m.layers[1].bias = ops::zeros({3});
  expect_differs(m, "an optional now present");
  m = make_model();
  m.steps = Buffer();
  m.extra["steps"] = array(1);
  expect_differs(m, "a leaf moved");

  using V = std::variant<Array, Affine>;
  Array x = array({1.0f});
  V v1 = Affine{x, x}, v2 = x;
  EXPECT_NE(tree_def(v1), tree_def(v2));
  std::vector<std::vector<Array>> e1{{}, {}}, e2{{}};
  EXPECT_NE(tree_def(e1), tree_def(e2)) << "container lengths are structure";
  EXPECT_NE(tree_def(std::make_tuple(x)), tree_def(std::vector<Array>{x})) << "root type";
}

TEST(Tree, UnflattenChecksCountAndShapes) {
  Model m = make_model();
  auto leaves = tree_leaves(m);
  for (auto& l : leaves) l = l + 1;
  Model r = tree_unflatten(m, leaves);
  EXPECT_EQ(r.layers[0].weight.value.to_vector<float>(), std::vector<float>(4, 2.0f));
  EXPECT_EQ(r.steps.value.item<int>(), 1);
  EXPECT_FALSE(r.layers[1].bias.has_value());
  EXPECT_EQ(r.layers[0].config.dims, 2);  // static fields copied from `like`
  EXPECT_EQ(m.layers[0].weight.value.to_vector<float>(), std::vector<float>(4, 1.0f));  // unchanged

  leaves.pop_back();
  try {
    (void)tree_unflatten(m, leaves);
    FAIL() << "a wrong count must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("6 leaves but 5"), std::string::npos) << e.what();
  }
  leaves = tree_leaves(m);
  leaves[2] = ops::ones({4});
  try {
    (void)tree_unflatten(m, leaves);
    FAIL() << "a wrong shape must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::shape_mismatch);
    EXPECT_NE(std::string(e.what()).find("layers.1.weight"), std::string::npos) << e.what();
  }
  Model any = tree_replace_leaves(m, leaves);  // no shape check
  EXPECT_EQ(any.layers[1].weight.value.shape(), (Shape{4}));
}

TEST(Tree, MapAndMapPairs) {
  Model m = make_model();
  m.layers[1].weight.frozen = true;
  Model doubled = tree_map(m, [](const Array& a) { return a * 2; });
  EXPECT_EQ(doubled.extra["a"].item<float>(), 4.0f);
  EXPECT_TRUE(doubled.layers[1].weight.frozen);
  EXPECT_EQ(tree_def(doubled), tree_def(m));

  Model sum = tree_map(m, doubled, [](const Array& a, const Array& b) { return a + b; });
  EXPECT_EQ(sum.extra["z"].item<float>(), 3.0f);

  Model other = make_model();
  other.layers.pop_back();
  EXPECT_THROW((void)tree_map(m, other, [](const Array& a, const Array&) { return a; }), Error);
  other = make_model();
  other.extra.erase("a");
  other.extra["b"] = array({0.0f});
  try {
    (void)tree_map(m, other, [](const Array& a, const Array&) { return a; });
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'extra.a' vs 'extra.b'"), std::string::npos) << e.what();
  }
}

TEST(Tree, VisitInPlace) {
  Model m = make_model();
  std::vector<std::string> seen;
  tree_visit_mut(m, [&](std::string_view path, Array& a) {
    seen.emplace_back(path);
    a = ops::zeros_like(a);
  });
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(m.extra["z"].item<float>(), 0.0f);
  int trainable = 0;
  tree_visit(m, [&](std::string_view, const Array&, LeafKind, bool t) { trainable += t; });
  EXPECT_EQ(trainable, 5);  // every leaf but the buffer
}

TEST(Tree, EvalAnyTreeBorrowed) {
  // The spec's `nuvec::eval(&(&value, &grads))`: a tuple of references.
  Array value = array({1.0f, 2.0f}).sum();
  Affine grads{array({1.0f}) * 3, array({2.0f}) + 1};
  nuvec::eval(std::tie(value, grads));
  EXPECT_TRUE(value.is_available());
  EXPECT_TRUE(grads.w.is_available());
  EXPECT_TRUE(grads.b.is_available());
  Model m = make_model();
  m.extra["late"] = array({1.0f}) * 5;
  nuvec::async_eval(m);
  EXPECT_EQ(m.extra["late"].item<float>(), 5.0f);
  Array failed = ops::matmul(ops::ones({2, 3}), ops::ones({2, 3}));
  EXPECT_THROW(nuvec::eval(std::make_tuple(value, failed)), Error);
}

TEST(Tree, StaticHashIsDeterministicAndTyped) {
  EXPECT_EQ(static_hash(Config{}), static_hash(Config{}));
  Config c;
  c.act = "gelu";
  EXPECT_NE(static_hash(c), static_hash(Config{}));
  EXPECT_NE(static_hash(std::vector<int>{1, 2}), static_hash(std::vector<int>{2, 1}));
  EXPECT_NE(static_hash(0.0), static_hash(-0.0));
  EXPECT_EQ(static_hash(std::nan("")), static_hash(std::nan("")));
}
