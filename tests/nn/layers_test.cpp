// Layers against values recorded from MLX 0.32.4 (tools/record_mlx_nn.py):
// initial weights after a seed bit for bit, forward outputs.
#include <gtest/gtest.h>

#include "nn/support/nn_refs.h"
#include "nuvec/nn.h"

using namespace nuvec;
using nuvec::nn_test::ref_array;
using nuvec::nn_test::params_of;
using nuvec::nn_test::same_bits;

namespace {

const refs::Case& ref(const std::string& id) {
  static auto cases = nn_test::ref_cases("nn_layers.ref");
  return cases.at(id);
}

void expect_outputs(const refs::Case& c, const std::vector<Array>& got, bool bits = true, double tol = 0) {
  ASSERT_EQ(got.size(), c.outputs.size()) << c.where();
  for (size_t i = 0; i < got.size(); ++i) {
    Array want = ref_array(c.outputs[i]);
    if (bits)
      EXPECT_TRUE(same_bits(got[i], want)) << c.where() << " output " << i;
    else
      EXPECT_TRUE(ops::allclose(got[i], want, tol, tol).item<bool>()) << c.where() << " output " << i;
  }
}

}  // namespace

TEST(NnLayers, InitialWeightsAreMlxsBits) {
  random::seed(11);
  nn::Linear a(5, 3), b(4, 2, false), c(1, 7);
  expect_outputs(ref("init_linear"), params_of(a, b, c));
  random::seed(12);
  nn::Embedding e1(10, 6), e2(3, 1);
  expect_outputs(ref("init_embedding"), params_of(e1, e2));
  random::seed(13);
  nn::Bilinear b1(3, 4, 2), b2(2, 2, 3, false);
  expect_outputs(ref("init_bilinear"), params_of(b1, b2));
}

TEST(NnLayers, LinearAndBilinearForward) {
  auto& c = ref("forward_linear");
  random::seed(21);
  nn::Linear a(5, 3), b(5, 4, false);
  Array x = ref_array(c.inputs[0]);
  // OpenBLAS's and MLX's sgemm sum in different orders: within rounding.
  expect_outputs(c, {a(x), b(x)}, false, 1e-6);
  auto& cb = ref("forward_bilinear");
  random::seed(22);
  nn::Bilinear bl(3, 5, 2);
  expect_outputs(cb, {bl(ref_array(cb.inputs[0]), ref_array(cb.inputs[1]))}, false, 1e-5);
}

TEST(NnLayers, EmbeddingLookupAndTiedHead) {
  auto& c = ref("forward_embedding");
  random::seed(23);
  nn::Embedding e(10, 5);
  Array rows = e(ref_array(c.inputs[0]));
  Array head = e.as_linear(ref_array(c.inputs[1]));
  Array want_rows = ref_array(c.outputs[0]);
  EXPECT_TRUE(same_bits(rows, want_rows));  // a gather: exact
  EXPECT_TRUE(ops::allclose(head, ref_array(c.outputs[1]), 1e-6, 1e-6).item<bool>());
}

TEST(NnLayers, Norms) {
  auto& c = ref("forward_norms");
  Array x = ref_array(c.inputs[0]), w = ref_array(c.inputs[1]), b = ref_array(c.inputs[2]);
  nn::LayerNorm ln(6), ln2(6, 1e-3f, false), ln3(6, 1e-5f, true, false);
  ln.weight->value = w;
  ln.bias->value = b;
  ln3.weight->value = w;
  EXPECT_FALSE(ln2.weight.has_value());
  EXPECT_FALSE(ln3.bias.has_value());
  nn::RMSNorm rms(6, 1e-6f);
  rms.weight.value = w;
  expect_outputs(c, {ln(x), ln2(x), ln3(x), rms(x)}, false, 2e-6);
}

TEST(NnLayers, DropoutMasksAreMlxs) {
  auto& c = ref("forward_dropout");
  random::seed(24);
  nn::Dropout d(0.25);
  nn::Dropout2d d2(0.5);
  nn::Dropout3d d3(0.5);
  Array x = ref_array(c.inputs[0]);
  std::vector<Array> got = {d(x), d2(ops::ones({2, 3, 3, 4})), d3(ops::ones({2, 2, 3, 3, 4}))};
  d.eval();
  got.push_back(d(x));
  expect_outputs(c, got);
  EXPECT_THROW(d2(ops::ones({3, 4})).check(), Error);
}

TEST(NnLayers, DropoutInCompiledStepMatchesUncompiled) {
  // Masks drawn inside compile_mut advance the thread's key sequence as an
  // uncompiled step would: same outputs, same next draw.
  struct S {
    Array acc;
  };
  nn::Dropout d(0.5);
  auto body = [&d](Array& acc, const Array& x) {
    acc = acc + d(x);
    return acc;
  };
  random::seed(5);
  Array a = ops::zeros({64});
  for (int i = 0; i < 3; ++i) body(a, ops::ones({64}));
  Array after_uncompiled = random::uniform({1});
  random::seed(5);
  Array b = ops::zeros({64});
  auto step = compile_mut(body);
  for (int i = 0; i < 3; ++i) step(b, ops::ones({64}));
  Array after_compiled = random::uniform({1});
  EXPECT_TRUE(same_bits(a, b));
  EXPECT_TRUE(same_bits(after_uncompiled, after_compiled));
  EXPECT_EQ(step.trace_count(), 1u);
}
