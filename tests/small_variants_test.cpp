// The fast variants for small arguments that only the generated GPU kernels
// take (kernels::Small<Exp>; GpuCompile tests run them on the GPU): their
// bits and their ranges, on the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include <nuvec/kernels/functors.h>

namespace k = nuvec::kernels;

namespace {

// exp_normal (Small<Exp>) gives exp's bits wherever |x| < kExpNormal: every
// 251st bit pattern below it, both signs, and the 1000 floats next to the
// bound (the whole range, 2.2e9 floats, was checked once: 0 differ); and
// Small<Exp>::outside is 1 from the bound on, for inf and NaN.
TEST(SmallVariants, ExpNormalGivesExpsBits) {
  using S = k::Small<k::Exp>;
  const float bound = k::math::kExpNormal, inf = std::numeric_limits<float>::infinity();
  const uint32_t top = k::bit_cast<uint32_t>(bound);
  long differ = 0;
  auto check = [&](float x) {
    ASSERT_EQ(S::outside(x), 0u) << x;
    differ += k::bit_cast<uint32_t>(S{}(x)) != k::bit_cast<uint32_t>(k::Exp{}(x));
  };
  for (uint32_t b = 0; b < top; b += 251)
    for (uint32_t sign : {0u, 0x80000000u}) check(k::bit_cast<float>(b | sign));
  float below = std::nextafter(bound, 0.0f);
  for (int i = 0; i < 1000; ++i, below = std::nextafter(below, 0.0f)) check(below), check(-below);
  EXPECT_EQ(differ, 0);
  for (float x : {bound, -bound, std::nextafter(bound, inf), 88.5f, -100.0f, 3e38f, inf, -inf,
                  std::numeric_limits<float>::quiet_NaN()})
    EXPECT_EQ(S::outside(x), 1u) << x;
}

}  // namespace
