// The GPU's 16-bit arithmetic (kernels/half.h, kernels/binary.h): float16
// and bfloat16 + - * in one 16-bit instruction, bfloat16 / through an
// approximate reciprocal. Their bits must be those of the float32
// operation rounded once, which the CPU computes; checked here for every
// pair of 16-bit operands (2^32 pairs per operation), against the same
// operation done in float32 on the GPU and rounded by astype.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "support/gpu.h"
#include <nuvec/nuvec.h>

using namespace nuvec;
using namespace nuvec::testing;

TEST(Gpu, HalfArithmeticEqualsFloatRounding) {
  NUVEC_GPU_REQUIRED();
  using Op = std::function<Array(const Array&, const Array&, StreamOrDevice)>;
  const std::vector<std::pair<const char*, Op>> arith = {
      {"add", [](const Array& p, const Array& q, StreamOrDevice s) { return ops::add(p, q, s); }},
      {"subtract", [](const Array& p, const Array& q, StreamOrDevice s) { return ops::subtract(p, q, s); }},
      {"multiply", [](const Array& p, const Array& q, StreamOrDevice s) { return ops::multiply(p, q, s); }},
      {"divide", [](const Array& p, const Array& q, StreamOrDevice s) { return ops::divide(p, q, s); }},
  };
  const int rows = 8192;  // operand pairs per step: rows * 65536
  for (DType dt : {bfloat16, float16}) {
    Array all = ops::view(ops::arange(0.0, 65536.0, 1.0, uint16, Device::gpu), dt);
    Array y = all.reshape({1, 65536});
    for (const auto& [name, op] : arith) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + name);
      int64_t differ = 0;
      for (int r = 0; r < 65536; r += rows) {
        Array x = ops::slice(all, {r}, {r + rows}).reshape({rows, 1});
        Array got = ops::view(op(x, y, Device::gpu), uint16);
        Array wide = op(x.astype(float32), y.astype(float32), Device::gpu);
        Array want = ops::view(ops::astype(wide, dt, Device::gpu), uint16);
        differ += ops::sum(ops::not_equal(got, want, Device::gpu), false, Device::gpu).astype(int64).item<int64_t>();
      }
      EXPECT_EQ(differ, 0);
    }
  }
}
