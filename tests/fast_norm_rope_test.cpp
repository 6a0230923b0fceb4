// fast::norm_rope against a float64 reference computed here (RMS norm over
// the last axis, then RoPE of the first `dims` features, non-traditional
// halves or traditional pairs), its bits against the separate calls, the
// cache write, and invalid calls.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nuvec/fast_norm_rope.h"
#include "nuvec/nuvec.h"

namespace nuvec {
namespace {

// x [B, H, T, D] row-major as doubles -> the reference.
std::vector<double> reference(const std::vector<float>& x, const std::vector<float>& w, int B, int H, int T, int D,
                              int dims, bool traditional, double base, double eps, int offset) {
  std::vector<double> out(x.size());
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t) {
        const size_t row = ((size_t(b) * H + h) * T + t) * D;
        double ss = 0;
        for (int d = 0; d < D; ++d) ss += double(x[row + d]) * x[row + d];
        const double inv = 1.0 / std::sqrt(ss / D + eps);
        std::vector<double> n(D);
        for (int d = 0; d < D; ++d) n[d] = x[row + d] * inv * w[d];
        std::vector<double> r = n;
        const double pos = offset + t;
        for (int i = 0; i < dims / 2; ++i) {
          const double theta = pos * std::pow(base, -2.0 * i / dims);
          const int a = traditional ? 2 * i : i, c = traditional ? 2 * i + 1 : i + dims / 2;
          r[a] = n[a] * std::cos(theta) - n[c] * std::sin(theta);
          r[c] = n[a] * std::sin(theta) + n[c] * std::cos(theta);
        }
        for (int d = 0; d < D; ++d) out[row + d] = r[d];
      }
  return out;
}

TEST(FastNormRope, MatchesAFloat64ReferenceAndTheSeparateCallsBitForBit) {
  for (bool traditional : {false, true}) {
    for (int dims : {64, 32}) {
      const int B = 2, H = 3, T = 5, D = 64, offset = 7;
      Array x = random::normal({B, H, T, D}, random::key(dims + traditional));
      Array w = random::uniform(0.5f, 1.5f, {D}, float32, random::key(3));
      Array got = fast::norm_rope(x, w, 1e-5f, dims, traditional, 10000.0f, 1.0f, offset);
      auto ref = reference(x.to_vector<float>(), w.to_vector<float>(), B, H, T, D, dims, traditional, 10000.0, 1e-5,
                           offset);
      auto g = got.to_vector<float>();
      double worst = 0;
      for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - ref[i]));
      EXPECT_LT(worst, 2e-5) << "traditional " << traditional << " dims " << dims;
      Array sep = fast::rope(fast::rms_norm(x, w, 1e-5f), dims, traditional, 10000.0f, 1.0f, offset);
      EXPECT_TRUE(array_equal(got, sep).item<bool>());
      // Per-row offsets: row b at offset b * 3.
      Array offs = array({0, 3}, Shape{2});
      Array per = fast::norm_rope(x, w, 1e-5f, dims, traditional, 10000.0f, 1.0f, offs);
      Array row1 = fast::norm_rope(slice(x, {1, 0, 0, 0}, {2, H, T, D}), w, 1e-5f, dims, traditional, 10000.0f, 1.0f, 3);
      EXPECT_TRUE(array_equal(slice(per, {1, 0, 0, 0}, {2, H, T, D}), row1).item<bool>());
    }
  }
}

TEST(FastNormRope, WritesTheRotatedKeysIntoTheCache) {
  const int B = 1, H = 2, T = 3, D = 32, C = 8;
  Array x = random::normal({B, H, T, D}, random::key(9));
  Array cache = random::normal({B, H, C, D}, random::key(10));
  eval(cache);
  auto [r, updated] = fast::norm_rope(x, std::nullopt, 1e-6f, D, false, 10000.0f, 1.0f, 4, cache);
  EXPECT_TRUE(array_equal(slice(updated, {0, 0, 4, 0}, {B, H, 7, D}), r).item<bool>());
  EXPECT_TRUE(array_equal(slice(updated, {0, 0, 0, 0}, {B, H, 4, D}), slice(cache, {0, 0, 0, 0}, {B, H, 4, D}))
                  .item<bool>());
  EXPECT_TRUE(array_equal(slice(updated, {0, 0, 7, 0}, {B, H, 8, D}), slice(cache, {0, 0, 7, 0}, {B, H, 8, D}))
                  .item<bool>());
  // Positions past the cache, or a cache of other heads: failed arrays.
  EXPECT_THROW(fast::norm_rope(x, std::nullopt, 1e-6f, D, false, 10000.0f, 1.0f, 6, cache).second.eval(), Error);
  EXPECT_THROW(fast::norm_rope(x, std::nullopt, 1e-6f, D, false, 10000.0f, 1.0f, 0, zeros({1, 3, 8, D})).second.eval(),
               Error);
}

}  // namespace
}  // namespace nuvec
