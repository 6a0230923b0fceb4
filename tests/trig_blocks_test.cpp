// The eager CPU kernels of sin and cos run blocks whose arguments are all
// small (|x| < 2^18) through the fast variants (kernels::Small): the result
// equals the per-element functor bit for bit on arrays mixing small and
// large arguments, all small, all large, in float32 and the 16-bit floats,
// through an unaligned view and into a donated input buffer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "support/bits.h"
#include "support/cpu_default.h"
#include <nuvec/kernels/functors.h>
#include <nuvec/nuvec.h>

using namespace nuvec;

namespace {

// n values of magnitude up to `bound`; with `spikes`, every third block of
// 256 gets one large or special value (2^18 itself, inf, NaN), the others
// none.
std::vector<float> values(int n, float bound, bool spikes) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = bound * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  v[0] = -0.0f;
  if (spikes) {
    const float special[] = {0x1p18f,
                             -3e7f,
                             1e30f,
                             std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN(),
                             -0x1p18f};
    for (int b = 0, k = 0; b * 256 + 255 < n; b += 3, ++k)
      v[b * 256 + (k * 97) % 256] = special[k % 6];
  }
  return v;
}

// The result of F{} element by element, in the array's dtype.
template <class F, class T>
Array per_element(const Array& x) {
  std::vector<T> in = x.to_vector<T>(), out(in.size());
  for (size_t i = 0; i < in.size(); ++i) out[i] = F{}(in[i]);
  return array<T>(out, x.shape());
}

template <class T>
void check(const std::vector<float>& v, DType dt) {
  Array x = array<float>(v, {static_cast<int>(v.size())}).astype(dt);
  x.eval();
  using nuvec::testing::bits_of;
  EXPECT_EQ(bits_of(ops::sin(x)), bits_of(per_element<kernels::Sin, T>(x)));
  EXPECT_EQ(bits_of(ops::cos(x)), bits_of(per_element<kernels::Cos, T>(x)));
  // A contiguous view that starts mid-block.
  Array tail = x.i(slice(37, static_cast<int>(v.size())));
  EXPECT_EQ(bits_of(ops::sin(tail)), bits_of(per_element<kernels::Sin, T>(tail)));
  // Into the buffer of its input (a temporary that nothing else holds).
  Array donated = ops::cos(x * 1.0f);
  EXPECT_EQ(bits_of(donated), bits_of(per_element<kernels::Cos, T>(x)));
}

}  // namespace

TEST(TrigBlocks, EagerEqualsPerElement) {
  nuvec::testing::CpuDefault cpu_default;
  // Past one parallel block (32,768 elements) and not a multiple of 256.
  const int n = 70000;
  // All small; small with spikes; across 2^18 in most blocks; all large.
  for (auto [bound, spikes] : {std::pair{1000.0f, false}, std::pair{1000.0f, true},
                               std::pair{3e5f, false}, std::pair{1e9f, false}}) {
    SCOPED_TRACE("bound " + std::to_string(bound) + (spikes ? " with spikes" : ""));
    std::vector<float> v = values(n, bound, spikes);
    check<float>(v, float32);
    check<bfloat16_t>(v, bfloat16);
    if (bound < 6e4f) check<float16_t>(v, float16);
  }
}

// kernels::SinCos (one argument reduction for both, which the generated
// GPU kernels call where a region takes sin and cos of one value) gives
// the bits of Sin and Cos: every float16 and bfloat16, and float32 bit
// patterns spread over the whole range (every 4099th) plus the boundaries.
TEST(TrigBlocks, SinCosEqualsSinAndCos) {
  auto same = [](auto x) {
    auto sc = kernels::SinCos{}(x);
    auto s = kernels::Sin{}(x), c = kernels::Cos{}(x);
    return std::memcmp(&sc.sin, &s, sizeof s) == 0 && std::memcmp(&sc.cos, &c, sizeof c) == 0;
  };
  int bad = 0;
  for (uint32_t u = 0; u < 0x10000u; ++u) {
    bad += !same(kernels::bit_cast<float16_t>(static_cast<uint16_t>(u)));
    bad += !same(kernels::bit_cast<bfloat16_t>(static_cast<uint16_t>(u)));
  }
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) bad += !same(kernels::bit_cast<float>(static_cast<uint32_t>(u)));
  for (float x : {0x1p18f, -0x1p18f, 0x1.fffffep17f, -0x1.fffffep17f, 0.0f, -0.0f, 1e-45f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    bad += !same(x);
  EXPECT_EQ(bad, 0);
}
