// Modules: paths, parameters, freezing, modes, summaries, saving and loading.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "nuvec/nn.h"

using namespace nuvec;

namespace {

struct Block : nn::Module<Block> {
  nn::Linear up, down;
  nn::Dropout drop;
  nn::LayerNorm norm;
  Block(int d, int h) : up(d, h), down(h, d, false), drop(0.1), norm(d) {}
  Array operator()(const Array& x) const { return x + down(drop(up(norm(x)))); }
};
NUVEC_TREE(Block, up, down, drop, norm)

struct Net : nn::Module<Net> {
  nn::Embedding embed;
  std::vector<Block> layers;
  Net(int vocab, int d, int n) : embed(vocab, d) {
    for (int i = 0; i < n; ++i) layers.emplace_back(d, 2 * d);
  }
  Array operator()(const Array& tokens) const {
    Array h = embed(tokens);
    for (auto& l : layers) h = l(h);
    return embed.as_linear(h);
  }
};
NUVEC_TREE(Net, embed, layers)

std::vector<std::string> paths(const nn::NamedArrays& p) {
  std::vector<std::string> out;
  for (auto& [k, v] : p) out.push_back(k);
  return out;
}

}  // namespace

TEST(NnModule, PathsAreMlxNames) {
  Net net(11, 4, 2);
  auto p = paths(net.parameters());
  std::vector<std::string> want = {"embed.weight",          "layers.0.up.weight",   "layers.0.up.bias",
                                   "layers.0.down.weight",  "layers.0.norm.weight", "layers.0.norm.bias",
                                   "layers.1.up.weight",    "layers.1.up.bias",     "layers.1.down.weight",
                                   "layers.1.norm.weight",  "layers.1.norm.bias"};
  EXPECT_EQ(p, want);
  // 11*4 + 2 * (8*4 + 8 + 4*8 + 4 + 4)
  EXPECT_EQ(net.num_parameters(), 44u + 2u * 80u);
}

TEST(NnModule, FreezeByKeyPrefixAndAll) {
  Net net(11, 4, 2);
  net.freeze({"bias"});
  for (auto& k : paths(net.trainable_parameters())) EXPECT_EQ(k.find("bias"), std::string::npos) << k;
  EXPECT_EQ(net.trainable_parameters().size(), 11u - 4u);
  net.unfreeze();
  EXPECT_EQ(net.trainable_parameters().size(), 11u);
  net.freeze({"layers.1"});
  for (auto& k : paths(net.trainable_parameters())) EXPECT_NE(k.rfind("layers.1.", 0), 0u) << k;
  EXPECT_EQ(net.trainable_parameters().size(), 6u);
  net.unfreeze().freeze({}, /*recurse=*/false);  // Net owns no Param directly
  EXPECT_EQ(net.trainable_parameters().size(), 11u);
  net.layers[0].freeze();
  EXPECT_EQ(net.trainable_parameters().size(), 6u);
  // "up" is a module name, not a parameter's local name: it selects as a
  // path prefix only at the root.
  net.unfreeze().freeze({"layers.0.up"});
  EXPECT_EQ(net.trainable_parameters().size(), 9u);
}

TEST(NnModule, TrainEvalSetsEveryModuleAndTheStructure) {
  Net net(11, 4, 1);
  EXPECT_TRUE(net.layers[0].drop.training());
  TreeDef before = tree_def(net);
  net.eval();
  EXPECT_FALSE(net.training());
  EXPECT_FALSE(net.layers[0].drop.training());
  EXPECT_FALSE(net.layers[0].up.training());
  EXPECT_FALSE(tree_def(net) == before);  // the dropout's mode flag is structure
  net.train();
  EXPECT_TRUE(tree_def(net) == before);
}

TEST(NnModule, ApplyToModulesVisitsParentsFirstWithPaths) {
  Net net(5, 4, 2);
  std::vector<std::string> seen;
  net.apply_to_modules([&](const std::string& path, nn::ModuleBase& m) { seen.push_back(path + ":" + m.name()); });
  std::vector<std::string> want = {":Net",
                                   "embed:Embedding",
                                   "layers.0:Block",
                                   "layers.0.up:Linear",
                                   "layers.0.down:Linear",
                                   "layers.0.drop:Dropout",
                                   "layers.0.norm:LayerNorm",
                                   "layers.1:Block",
                                   "layers.1.up:Linear",
                                   "layers.1.down:Linear",
                                   "layers.1.drop:Dropout",
                                   "layers.1.norm:LayerNorm"};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(net.layers[1].up.path(), "layers.1.up");
}

TEST(NnModule, WrongInputNamesTheLayerPath) {
  Net net(5, 4, 2);
  nn::name_modules(net);
  Array y = net.layers[1].up(ops::ones({2, 3}));
  try {
    y.check();
    FAIL() << "expected a failed array";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "layers.1.up: expected last dimension 4, got 3");
    EXPECT_EQ(e.kind(), ErrorKind::shape_mismatch);
  }
  nn::Linear lone(4, 2);
  EXPECT_THROW(lone(ops::ones({2, 4}, int32)).check(), Error);
  EXPECT_THROW(net.embed(ops::ones({2}, float32)).check(), Error);
  EXPECT_THROW(nn::Linear(0, 2), Error);
  EXPECT_THROW(nn::Dropout(1.0), Error);
  EXPECT_THROW(nn::LayerNorm(4, 0.0f), Error);
}

TEST(NnModule, SetDtypeCastsFloatingLeaves) {
  Net net(5, 4, 1);
  net.set_dtype(bfloat16);
  for (auto& [k, v] : net.parameters()) EXPECT_EQ(v.dtype(), bfloat16) << k;
  Array logits = net(array({1, 2, 3}));
  EXPECT_EQ(logits.dtype(), bfloat16);
  EXPECT_EQ(logits.shape(), (Shape{3, 5}));
}

TEST(NnModule, SaveLoadStrictPartialAndMismatches) {
  auto dir = std::filesystem::temp_directory_path() / ("nuvec_nn_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string file = (dir / "net.safetensors").string();
  random::seed(3);
  Net a(7, 4, 2);
  a.save_weights(file);
  random::seed(4);
  Net b(7, 4, 2);
  b.load_weights(file);
  auto pa = a.parameters(), pb = b.parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_TRUE(ops::array_equal(pa[i].second, pb[i].second).item<bool>()) << pa[i].first;
  // A model with another shape: every mismatch listed, nothing changed.
  Net c(7, 4, 3);
  Array before = c.layers[0].up.weight.value;
  try {
    c.load_weights(file);
    FAIL() << "expected nuvec::Error";
  } catch (const Error& e) {
    std::string m = e.message();
    EXPECT_NE(m.find("layers.2.up.weight"), std::string::npos) << m;
    EXPECT_NE(m.find("layers.2.norm.bias"), std::string::npos) << m;
  }
  EXPECT_TRUE(c.layers[0].up.weight.value.id() == before.id());
  c.load_weights(file, LoadMode::partial);
  EXPECT_TRUE(ops::array_equal(c.layers[1].up.weight.value, a.layers[1].up.weight.value).item<bool>());
  std::filesystem::remove_all(dir);
}

TEST(NnModule, SummaryListsEveryLeaf) {
  Net net(5, 4, 1);
  std::string s = net.summary();
  size_t row = s.find("layers.0.up.weight ");
  ASSERT_NE(row, std::string::npos) << s;
  std::string line = s.substr(row, s.find('\n', row) - row);
  EXPECT_NE(line.find("(8, 4)"), std::string::npos) << line;
  EXPECT_NE(line.find("float32"), std::string::npos) << line;
  EXPECT_NE(s.find("total: " + std::to_string(net.num_parameters())), std::string::npos) << s;
}

TEST(NnModule, ValueAndGradGivesTheModelsType) {
  random::seed(0);
  nn::Linear lin(3, 2);
  lin.freeze({"bias"});
  Array x = array({{1.0f, 2.0f, 3.0f}});
  auto loss = [](const nn::Linear& m, const Array& in) { return m(in).square().sum(); };
  auto vg = nn::value_and_grad(lin, loss);
  auto [l, g] = vg(x);
  // d/dW sum((xW^T + b)^2) = 2 (xW^T + b)^T x
  Array y = ops::matmul(x, lin.weight.value.t()) + lin.bias->value;
  Array want = ops::matmul((2.0f * y).t(), x);
  EXPECT_TRUE(ops::allclose(g.weight.value, want, 1e-6, 1e-6).item<bool>());
  EXPECT_FLOAT_EQ(l.item<float>(), y.square().sum().item<float>());
  EXPECT_TRUE(ops::array_equal(g.bias->value, ops::zeros({2})).item<bool>());  // frozen
}

TEST(NnModule, MixedPrecisionGivesFloat32Gradients) {
  random::seed(1);
  Net net(7, 8, 1);
  net.eval();  // no dropout: the three computations see the same network
  auto loss = [](const Net& m, const Array& tokens) {
    Net low = m;
    low.set_dtype(bfloat16);
    Array logits = low(tokens);
    EXPECT_EQ(logits.dtype(), bfloat16);
    return logits.astype(float32).square().mean();
  };
  auto [l, g] = nn::value_and_grad(net, loss)(array({1, 2, 3}));
  EXPECT_EQ(l.dtype(), float32);
  for (auto& [path, a] : g.parameters()) EXPECT_EQ(a.dtype(), float32) << path;
  // The float32 gradient is the bfloat16 computation's, within its rounding.
  auto f32 = [](const Net& m, const Array& tokens) { return m(tokens).square().mean(); };
  auto [l32, g32] = nn::value_and_grad(net, f32)(array({1, 2, 3}));
  Array d = ops::abs(g.embed.weight.value - g32.embed.weight.value);
  EXPECT_TRUE(ops::allclose(g.embed.weight.value, g32.embed.weight.value, 0.02, 0.02).item<bool>())
      << ops::max(d).item<float>() << " " << ops::max(ops::abs(g32.embed.weight.value)).item<float>();
}
