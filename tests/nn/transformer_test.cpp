// MultiHeadAttention, Transformer layers, positional encodings, Sequential
// and quantized layers against MLX 0.32.4 (tools/record_mlx_nn.py).
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

/// The first `n` recorded outputs bit for bit, the rest within `tol`.
void expect(const refs::Case& c, const std::vector<Array>& got, size_t exact, double tol) {
  ASSERT_EQ(got.size(), c.outputs.size()) << c.where();
  for (size_t i = 0; i < got.size(); ++i) {
    Array want = ref_array(c.outputs[i]);
    if (i < exact) {
      EXPECT_TRUE(same_bits(got[i], want)) << c.where() << " output " << i;
    } else {
      ASSERT_EQ(got[i].shape(), want.shape()) << c.where() << " output " << i;
      EXPECT_TRUE(ops::allclose(got[i], want, tol, tol).item<bool>())
          << c.where() << " output " << i << " max diff "
          << ops::max(ops::abs(got[i] - want)).item<float>();
    }
  }
}

Array relu(const Array& x) { return ops::maximum(x, 0); }

}  // namespace

TEST(NnTransformer, MultiHeadAttentionWeightsMaskAndOutputs) {
  auto& c = ref("mha");
  random::seed(31);
  nn::MultiHeadAttention m(8, 2);
  nn::MultiHeadAttention m2(8, 4, 6, 5, std::nullopt, 12, 3, true);
  Array mask = nn::MultiHeadAttention::create_additive_causal_mask(5);
  Array x = ref_array(c.inputs[0]);
  auto got = params_of(m, m2);
  size_t n = got.size();
  got.push_back(mask);
  got.push_back(m(x, x, x));
  got.push_back(m(x, x, x, mask));
  expect(c, got, n + 1, 1e-5);
  EXPECT_THROW(nn::MultiHeadAttention(6, 4), Error);
}

TEST(NnTransformer, EncoderAndTransformer) {
  auto& c = ref("transformer");
  random::seed(32);
  nn::TransformerEncoder e(2, 8, 2, 16);
  nn::Transformer t(8, 2, 1, 1, 16, 0.0, relu, false);
  Array x = ref_array(c.inputs[0]), mem = ref_array(c.inputs[1]);
  Array mask = nn::MultiHeadAttention::create_additive_causal_mask(5);
  auto got = params_of(e, t);
  size_t n = got.size();
  got.push_back(e(x, mask));
  got.push_back(t(mem, x, std::nullopt, mask, std::nullopt));
  expect(c, got, n, 1e-5);
  // Checkpointed layers: the same values and gradients.
  nn::TransformerEncoder ck = e;
  ck.checkpoint = true;
  auto loss = [&](const nn::TransformerEncoder& m) { return m(x, mask).square().sum(); };
  auto [l1, g1] = value_and_grad(loss)(e);
  auto [l2, g2] = value_and_grad(loss)(ck);
  EXPECT_TRUE(same_bits(l1, l2));
  EXPECT_TRUE(same_bits(g1.layers[1].linear1.weight.value, g2.layers[1].linear1.weight.value));
}

TEST(NnPositional, SinusoidalRopeAlibi) {
  auto& s = ref("sinusoidal");
  Array pos = ref_array(s.inputs[0]);
  nn::SinusoidalPositionalEncoding a(8), b(6, 0.01, 2, 1.0, true, true);
  expect(s, {a(pos), b(pos)}, 0, 1e-5);
  EXPECT_TRUE(a.parameters().empty());  // MLX's _sigmas is not a parameter
  auto& r = ref("rope");
  Array x = ref_array(r.inputs[0]);
  expect(r, {nn::RoPE(4)(x, 2), nn::RoPE(8, true, 100, 0.5f)(x)}, 0, 2e-6);
  auto& al = ref("alibi");
  Array scores = ref_array(al.inputs[0]);
  Array sub = ops::slice(scores, {0, 0, 0, 0}, {1, 4, 4, 4});
  expect(al, {nn::ALiBi::create_alibi_slope(6), nn::ALiBi()(scores), nn::ALiBi()(sub, 1)}, 3, 0);
  EXPECT_THROW(nn::RoPE(3), Error);
}

TEST(NnContainers, SequentialPathsAndCalls) {
  random::seed(0);
  nn::Sequential seq(nn::Linear(4, 8), nn::Identity(), nn::Linear(8, 2, false));
  std::vector<std::string> paths;
  for (auto& [p, a] : seq.parameters()) paths.push_back(p);
  EXPECT_EQ(paths, (std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.2.weight"}));
  Array x = random::normal({3, 4});
  Array want = std::get<2>(seq.layers)(std::get<0>(seq.layers)(x));
  EXPECT_TRUE(same_bits(seq(x), want));
}

TEST(NnQuantized, QuantizedLinearIsMlxs) {
  auto& c = ref("quantized_linear");
  random::seed(41);
  nn::QuantizedLinear a(64, 8);
  nn::QuantizedLinear b(64, 4, false, 32, 8);
  Array x = ref_array(c.inputs[0]);
  auto got = params_of(a, b);
  size_t n = got.size();
  got.push_back(a(x));
  got.push_back(b(x));
  got.push_back(random::uniform({2}));  // the key sequence advanced as MLX's
  ASSERT_EQ(got.size(), c.outputs.size());
  for (size_t i = 0; i < got.size(); ++i) {
    Array want = ref_array(c.outputs[i]);
    if (i < n || i + 1 == got.size())  // the quantized weights and the next draw
      EXPECT_TRUE(same_bits(got[i], want)) << i;
    else
      EXPECT_TRUE(ops::allclose(got[i], want, 1e-5, 1e-5).item<bool>()) << i;
  }
  EXPECT_TRUE(a.trainable_parameters().empty());
  EXPECT_EQ(a.name(), "QuantizedLinear");
  EXPECT_EQ(a.input_dims(), 64);
}

TEST(NnQuantized, QuantizeAModelInPlace) {
  auto& c = ref("quantize_model");
  random::seed(42);
  // Braces: C++ evaluates a braced list left to right (arguments in
  // parentheses in an unspecified order), so the draws are MLX's order.
  nn::Sequential m{nn::Embedding(10, 64), nn::Linear(64, 16)};
  nn::quantize(m, 32, 4);
  std::vector<std::string> trainable;
  for (auto& [p, a] : m.trainable_parameters()) trainable.push_back(p);
  EXPECT_EQ(trainable, std::vector<std::string>{"layers.1.bias"});  // as MLX
  Array x = ref_array(c.inputs[0]), idx = ref_array(c.inputs[1]);
  auto got = params_of(m);
  size_t n = got.size();
  auto& [emb, lin] = m.layers;
  got.push_back(emb(idx));
  got.push_back(emb.as_linear(x));
  got.push_back(lin(x));
  got.push_back(random::uniform({2}));
  ASSERT_EQ(got.size(), c.outputs.size());
  for (size_t i = 0; i < got.size(); ++i) {
    Array want = ref_array(c.outputs[i]);
    bool exact = i < n + 1 || i + 1 == got.size();  // weights, dequantized rows, the next draw
    if (exact)
      EXPECT_TRUE(same_bits(got[i], want)) << i;
    else
      EXPECT_TRUE(ops::allclose(got[i], want, 1e-5, 1e-5).item<bool>()) << i;
  }
  // A group size that does not divide the input dims: an error naming the layer.
  nn::Linear odd(48, 4);
  EXPECT_THROW(odd.to_quantized(32, 4), Error);
  EXPECT_THROW(lin.to_quantized(), Error);  // already quantized
}
