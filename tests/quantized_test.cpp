// Quantization against MLX 0.32.4 (tests/refs/quant.ref, recorded by
// tools/record_mlx_quant.py): quantize and dequantize bit for bit in every
// mode, bits and group size; products within a summation-order tolerance
// (nuvec's order is fixed but is not MLX's); errors. Then the contracts MLX
// does not state: row independence, float64 references, safetensors round
// trips, argument errors naming the argument.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "support/bits.h"
#include "support/conformance.h"

namespace nuvec {
namespace {

namespace cf = conformance;

std::string mode_of(const refs::Case& c) { return c.has("mode") ? c.param("mode") : "affine"; }

std::vector<Array> build(const refs::Case& c) {
  auto in = cf::make_inputs(c);
  if (c.op == "gather_mm")
    return {ops::gather_mm(in[0], in[1], std::nullopt, in[2], c.param_bool("sorted_indices"))};
  const int gs = int(c.param_int("group_size")), bits = int(c.param_int("bits"));
  const std::string mode = mode_of(c);
  if (c.op == "quantize") {
    auto q = ops::quantize(in[0], gs, bits, mode);
    std::optional<Array> b;
    if (q.size() == 3) b = q[2];
    q.push_back(ops::dequantize(q[0], q[1], b, gs, bits, mode));
    return q;
  }
  if (c.op == "dequantize") return {ops::dequantize(in[0], in[1], in[2], gs, bits, mode)};
  const bool t = c.has("transpose") ? c.param_bool("transpose") : true;
  if (c.op == "quantized_matmul")
    return {ops::quantized_matmul(in[0], in[1], in[2], in[3], t, gs, bits, mode)};
  return {ops::gather_qmm(in[0], in[1], in[2], in[3], std::nullopt, in[4], t, gs, bits, mode,
                          std::nullopt, c.param_bool("sorted_indices"))};
}

TEST(QuantizedMlx, ReplaysRecordedCases) {
  cf::FileHooks hooks;
  hooks.tolerance = [](const refs::Case& c) {
    if (c.op == "quantize" || c.op == "dequantize") return cf::Tolerance::exact();
    // Products: float32 sums of K terms in another order.
    const double k = 128;
    return cf::Tolerance::reduction(k, 2 * k);
  };
  cf::run_file("quant.ref", [](const refs::Case& c) { return build(c); }, hooks);
}

Array normal(Shape s, uint64_t seed, DType t = float32) {
  return ops::astype(random::normal(s, float32, random::key(seed)), t);
}

// Every row of a product with up to ROW_INDEPENDENT_ROWS rows has the bits
// of the row's product alone.
void expect_rows_independent(const std::function<Array(const Array&)>& f, const Array& x,
                             const std::string& what) {
  Array all = f(x);
  all.eval();
  const int m = x.shape(-2);
  for (int r = 0; r < m; ++r) {
    Array one = f(ops::slice(x, Shape{0, r, 0}, Shape{x.shape(0), r + 1, x.shape(2)}, StreamOrDevice{}));
    Array want = ops::slice(all, Shape{0, r, 0}, Shape{all.shape(0), r + 1, all.shape(2)}, StreamOrDevice{});
    EXPECT_TRUE(testing::bits_of(one) == testing::bits_of(want))
        << what << " row " << r;
  }
}

TEST(Quantized, RowIndependenceOfProducts) {
  std::mt19937 rng(7);
  for (DType t : {float32, float16, bfloat16})
    for (int bits : {2, 3, 4, 5, 6, 8})
      for (int gs : {32, 64, 128}) {
        const int k = 128, n = 40;
        int m = 1 + int(rng() % ROW_INDEPENDENT_ROWS);
        auto q = ops::quantize(normal({n, k}, rng(), t), gs, bits);
        auto qn = ops::quantize(normal({k, n * 0 + 128}, rng(), t), gs, bits);
        Array x = normal({2, m, k}, rng(), t);
        std::string what = std::string(dtype_name(t)) + " bits " + std::to_string(bits) + " g" +
                           std::to_string(gs) + " m " + std::to_string(m);
        expect_rows_independent(
            [&](const Array& a) { return ops::quantized_matmul(a, q[0], q[1], q[2], true, gs, bits); }, x, what);
        expect_rows_independent(
            [&](const Array& a) { return ops::quantized_matmul(a, qn[0], qn[1], qn[2], false, gs, bits); },
            x, what + " untransposed");
        Array idx = array({1, 0});
        auto e = ops::quantize(normal({2, n, k}, rng(), t), gs, bits);
        expect_rows_independent(
            [&](const Array& a) {
              return ops::gather_qmm(a, e[0], e[1], e[2], std::nullopt, idx, true, gs, bits);
            },
            x, what + " gathered");
      }
}

TEST(Quantized, DenseMatmulRowIndependence) {
  std::mt19937 rng(11);
  for (DType t : {float32, float16, bfloat16})
    for (int trial = 0; trial < 6; ++trial) {
      int m = 1 + int(rng() % ROW_INDEPENDENT_ROWS), k = 16 + int(rng() % 300), n = 1 + int(rng() % 200);
      Array w = normal({k, n}, rng(), t);
      Array x = normal({1, m, k}, rng(), t);
      expect_rows_independent([&](const Array& a) { return ops::matmul(a, w); }, x,
                              std::string(dtype_name(t)) + " matmul");
      Array b = normal({3, k, n}, rng(), t);
      expect_rows_independent(
          [&](const Array& a) {
            return ops::gather_mm(a, b, std::nullopt, array({2}));
          },
          x, std::string(dtype_name(t)) + " gather_mm");
    }
}

// The product against a float64 reference of the dequantized matrix: the
// error bound of docs/quantization.md (float32 accumulation).
TEST(Quantized, ProductsMatchFloat64OfDequantized) {
  // The decode kernels' shapes too: K a multiple of 128, of 64 or neither (96), N not a
  // multiple of 4, every group size of 4-bit weights, 8-bit weights.
  struct Case {
    int k, n, group, bits;
  };
  for (const Case& c : {Case{256, 128, 64, 4}, Case{384, 37, 32, 4}, Case{1024, 21, 128, 4}, Case{192, 40, 64, 4},
                        Case{576, 24, 32, 4}, Case{96, 20, 32, 4}, Case{256, 30, 64, 8}})
  for (bool t : {true, false})
    for (int m : {1, 3, 5, 8, 20}) {
      const int k = c.k, n = c.n;
      if (!t && n % c.group != 0) continue;  // untransposed: groups along N
      Array w = normal(t ? Shape{n, k} : Shape{k, n}, 3 + m + k);
      auto q = ops::quantize(w, c.group, c.bits);
      Array x = normal({m, k}, 5 + m);
      Array got = ops::quantized_matmul(x, q[0], q[1], q[2], t, c.group, c.bits);
      Array wd = ops::astype(ops::dequantize(q[0], q[1], q[2], c.group, c.bits), float64);
      Array want = ops::matmul(ops::astype(x, float64), t ? ops::transpose(wd) : wd);
      Array bound = ops::matmul(ops::abs(ops::astype(x, float64)), ops::abs(t ? ops::transpose(wd) : wd));
      Array err = ops::abs(ops::subtract(ops::astype(got, float64), want));
      EXPECT_TRUE(ops::all(ops::less_equal(err, ops::multiply(bound, 2.0 * k * 6e-8))).item<bool>())
          << "k " << k << " n " << n << " g" << c.group << " bits " << c.bits << " transpose " << t << " m " << m;
    }
}

TEST(Quantized, SafetensorsRoundTripWithMlxNames) {
  auto q = ops::quantize(normal({8, 128}, 21, bfloat16), 64, 4);
  std::string path = ::testing::TempDir() + "nuvec_quant.safetensors";
  io::save_safetensors(path, {{"layer.weight", q[0]}, {"layer.scales", q[1]}, {"layer.biases", q[2]}});
  auto [arrays, meta] = io::load_safetensors(path);
  Array a = ops::dequantize(q[0], q[1], q[2]);
  Array b = ops::dequantize(arrays.at("layer.weight"), arrays.at("layer.scales"),
                            arrays.at("layer.biases"));
  EXPECT_EQ(arrays.at("layer.weight").dtype(), uint32);
  EXPECT_TRUE(testing::bits_of(a) == testing::bits_of(b));
  std::remove(path.c_str());
}

std::string message(const Array& a) {
  EXPECT_TRUE(a.is_failed());
  return a.is_failed() ? a.error()->message() : "";
}

TEST(Quantized, InvalidArgumentsNameTheArgument) {
  Array w = ops::ones({4, 128});
  EXPECT_NE(message(ops::quantize(w, 48, 4)[0]).find("group size 48"), std::string::npos);
  EXPECT_NE(message(ops::quantize(w, 64, 7)[0]).find("bits 7"), std::string::npos);
  EXPECT_NE(message(ops::quantize(w, 64, 4, "int4")[0]).find("'int4'"), std::string::npos);
  EXPECT_NE(message(ops::quantize(w, 64, 4, "mxfp4")[0]).find("group size 32"), std::string::npos);
  EXPECT_NE(message(ops::quantize(ops::ones({4, 96}), 64, 4)[0]).find("divisible"), std::string::npos);
  EXPECT_NE(message(ops::quantize(ops::ones({128}), 64, 4)[0]).find("2 dimension"), std::string::npos);
  EXPECT_NE(message(ops::quantize(ops::ones({4, 128}, int32), 64, 4)[0]).find("floating"), std::string::npos);
  auto q = ops::quantize(w, 64, 4);
  EXPECT_NE(message(ops::dequantize(q[0], q[1])).find("biases"), std::string::npos);
  EXPECT_NE(message(ops::dequantize(q[0], ops::slice(q[1], Shape{0, 0}, Shape{4, 1}, StreamOrDevice{}), q[2])).find("scales"),
            std::string::npos);
  EXPECT_NE(message(ops::dequantize(ops::astype(q[0], int32), q[1], q[2])).find("uint32"), std::string::npos);
  EXPECT_NE(message(ops::quantized_matmul(ops::ones({2, 64}), q[0], q[1], q[2])).find("last dimension of x"),
            std::string::npos);
  EXPECT_NE(message(ops::gather_qmm(ops::ones({2, 1, 128}), q[0], q[1], q[2], array({0.5f, 1.0f})))
                .find("lhs_indices"),
            std::string::npos);
  EXPECT_NE(message(ops::quantize(w, 64, 4, "affine", array(1.0f))[0]).find("global_scale"),
            std::string::npos);
}

TEST(Quantized, EmptyAndBatched) {
  auto q = ops::quantize(ops::zeros({0, 64}), 64, 4);
  EXPECT_EQ(q[0].shape(), (Shape{0, 8}));
  EXPECT_EQ(ops::dequantize(q[0], q[1], q[2]).shape(), (Shape{0, 64}));
  // A batched w broadcasts against x's batch axes; each item as its own product.
  auto e = ops::quantize(normal({3, 16, 64}, 31), 64, 4);
  Array x = normal({2, 1, 4, 64}, 32);
  Array y = ops::quantized_matmul(x, e[0], e[1], e[2]);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4, 16}));
  Array one = ops::quantized_matmul(ops::take(ops::take(x, 1, 0), 0, 0), ops::take(e[0], 2, 0),
                                    ops::take(e[1], 2, 0), ops::take(e[2], 2, 0));
  Array want = ops::take(ops::take(y, 1, 0), 2, 0);
  EXPECT_TRUE(testing::bits_of(one) == testing::bits_of(want));
}

}  // namespace
}  // namespace nuvec
