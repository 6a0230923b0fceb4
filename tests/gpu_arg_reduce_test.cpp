// The GPU's arg-reductions over long rows (greedy sampling over a
// vocabulary: one row of 128256 logits) split each row over blocks
// (src/backend/cuda/data_math.cu); the index must be the CPU's sequential
// scan's: the first extremum, the first NaN when there is one, ties to the
// lowest index. Skipped where no GPU is present (CI).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "support/gpu.h"

namespace nuvec::testing {
namespace {

const StreamOrDevice G = Device::gpu;

std::vector<uint32_t> on(const Array& x, bool max, StreamOrDevice s) {
  Array r = max ? ops::argmax(x, -1, false, s) : ops::argmin(x, -1, false, s);
  return r.reshape({-1}).to_vector<uint32_t>();
}

TEST(GpuArgReduce, LongRowsGiveTheCpusIndex) {
  NUVEC_GPU_REQUIRED();
  for (DType dt : {float32, bfloat16, float16}) {
    for (auto [rows, len] : std::vector<std::pair<int, int>>{{1, 128256}, {3, 70001}, {2, 16384}, {1, 16383}}) {
      Array x = ops::astype(random::normal({rows, len}, random::key(rows * 7 + len), kCpu), dt, kCpu);
      // Ties: the maximum repeated late and early in another chunk.
      std::vector<float> v = ops::astype(x, float32, kCpu).to_vector<float>();
      v[static_cast<size_t>(len - 5)] = 50.0f;
      v[static_cast<size_t>(len / 3)] = 50.0f;
      v[static_cast<size_t>(len / 2)] = -50.0f;
      v[static_cast<size_t>(len - 1)] = -50.0f;
      Array t = ops::astype(array(v, Shape{rows, len}), dt, kCpu);
      for (bool max : {true, false}) {
        EXPECT_EQ(on(t, max, G), on(t, max, kCpu)) << dtype_name(dt) << " " << rows << "x" << len << " max " << max;
        EXPECT_EQ(on(x, max, G), on(x, max, kCpu)) << dtype_name(dt) << " " << rows << "x" << len;
      }
      // A NaN wins, the first one.
      v[static_cast<size_t>(len - 2)] = NAN;
      v[static_cast<size_t>(len / 4 * 3)] = NAN;
      Array n = ops::astype(array(v, Shape{rows, len}), dt, kCpu);
      EXPECT_EQ(on(n, true, G), on(n, true, kCpu));
      EXPECT_EQ(on(n, false, G), on(n, false, kCpu));
    }
  }
}

}  // namespace
}  // namespace nuvec::testing
