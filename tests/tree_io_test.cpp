// Checkpoints of trees: save by path, load_into strictly, partial loads.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>

#include <nuvec/nuvec.h>

using namespace nuvec;

namespace treeiotest {
struct Layer {
  Param weight;
  std::optional<Array> bias;
};
NUVEC_TREE(Layer, weight, bias)
struct Model {
  std::vector<Layer> layers;
  Buffer steps;
};
NUVEC_TREE(Model, layers, steps)

Model make(float scale) {
  Model m;
  m.layers.push_back({Param(ops::full({2, 3}, scale)), ops::full({3}, scale + 1)});
  m.layers.push_back({Param(ops::full({3, 3}, scale * 2).astype(float16), true), std::nullopt});
  m.steps = Buffer(array(7));
  return m;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("nuvec_tree_io_") + name)).string();
}
}  // namespace treeiotest
using namespace treeiotest;

TEST(TreeIo, SaveAndLoadIntoByPath) {
  std::string path = temp_path("model.safetensors");
  save(path, make(1.5f), {{"format", "nuvec"}});
  auto names = io::load_safetensors(path).first;
  std::vector<std::string> keys;
  for (auto& [k, v] : names) keys.push_back(k);
  std::sort(keys.begin(), keys.end());  // MLX's unordered map
  EXPECT_EQ(keys, (std::vector<std::string>{"layers.0.bias", "layers.0.weight", "layers.1.weight", "steps"}));
  EXPECT_EQ(io::load_safetensors_metadata(path).at("format"), "nuvec");

  Model m = make(0.0f);
  load_into(path, m);
  EXPECT_EQ(m.layers[0].weight.value.to_vector<float>(), std::vector<float>(6, 1.5f));
  EXPECT_EQ(m.layers[0].bias->to_vector<float>(), std::vector<float>(3, 2.5f));
  EXPECT_EQ(m.layers[1].weight.value.dtype(), float16);  // loaded dtypes kept
  EXPECT_TRUE(m.layers[1].weight.frozen);                 // flags untouched
  EXPECT_EQ(m.steps.value.item<int>(), 7);
  std::filesystem::remove(path);
}

TEST(TreeIo, StrictLoadListsEveryProblemAndLeavesTheTreeUnchanged) {
  std::string path = temp_path("other.safetensors");
  std::map<std::string, Array> arrays{{"layers.0.weight", ops::ones({4, 4})},  // wrong shape
                                      {"layers.1.weight", ops::ones({3, 3})},
                                      {"extra", ops::ones({1})}};               // matches nothing
  io::save_safetensors(path, arrays);
  Model m = make(3.0f);
  try {
    load_into(path, m);
    FAIL() << "must throw";
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(w.find("4 problems"), std::string::npos) << w;
    EXPECT_NE(w.find("'layers.0.weight' has shape (4, 4)"), std::string::npos) << w;
    EXPECT_NE(w.find("'layers.0.bias' is missing"), std::string::npos) << w;
    EXPECT_NE(w.find("'steps' is missing"), std::string::npos) << w;
    EXPECT_NE(w.find("'extra' matches no leaf"), std::string::npos) << w;
    EXPECT_NE(w.find(path), std::string::npos) << w;
  }
  EXPECT_EQ(m.layers[1].weight.value.astype(float32).to_vector<float>(), std::vector<float>(9, 6.0f));

  // Partial: what matches is loaded, the rest stays.
  std::map<std::string, Array> some{{"layers.1.weight", ops::zeros({3, 3})}, {"junk", ops::ones({2})}};
  tree_load_flat(m, some, LoadMode::partial);
  EXPECT_EQ(m.layers[1].weight.value.to_vector<float>(), std::vector<float>(9, 0.0f));
  EXPECT_EQ(m.steps.value.item<int>(), 7);
  EXPECT_THROW(load_into(temp_path("does_not_exist.safetensors"), m), Error);
  std::filesystem::remove(path);
}

TEST(TreeIo, DuplicatePathsCannotBeSaved) {
  // A key with the separator in it clashes with a nested key: both leaves
  // are named "a.b".
  using Node = std::variant<Array, std::map<std::string, Array>>;
  std::map<std::string, Node> tree{{"a.b", Node(ops::ones({1}))},
                                   {"a", Node(std::map<std::string, Array>{{"b", ops::zeros({1})}})}};
  auto flat = tree_flatten(tree);
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_EQ(flat[0].first, flat[1].first);
  try {
    save(temp_path("dup.safetensors"), tree);
    FAIL() << "must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("two leaves named 'a.b'"), std::string::npos) << e.what();
  }
}
