// Kernel scratch is taken from the allocator (src/backend/cpu/scratch.h), so
// the memory limit covers it and a refusal is out_of_memory (issue 26: a
// take of 2^26 int8 indices under a 128 MiB limit grew RSS by 577 MiB with
// no error). Each case leaves room for the op's output but not for scratch
// of 8 bytes per index or row, and then checks the values with the limit
// lifted against hand-derived ones.
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include "support/cpu_default.h"

using namespace nuvec;

namespace {

constexpr size_t MiB = size_t(1) << 20;

class ScratchMemory : public ::testing::Test {
 protected:
  void SetUp() override { old_limit_ = get_memory_limit(); }
  void TearDown() override { set_memory_limit(old_limit_); }

  // Allows `extra` bytes above what is active now.
  void allow(size_t extra) {
    clear_cache();
    set_memory_limit(get_active_memory() + extra);
  }
  void lift() { set_memory_limit(old_limit_); }

  static void expect_out_of_memory(const Array& a) {
    try {
      a.eval();
      ADD_FAILURE() << "evaluated past the memory limit";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::out_of_memory) << e.what();
    }
  }

  // The CPU kernels' scratch, whatever the default device (the GPU's
  // kernels take none of it).
  nuvec::testing::CpuDefault cpu_;
  size_t old_limit_ = 0;
};

// i % 4 as int8, for n indices (made on the host).
Array cyclic_indices(int n) {
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<int8_t>(i % 4);
  return array(v.data(), {n}).eval();
}

TEST_F(ScratchMemory, TakeIndicesCountAgainstTheLimit) {
  const int n = 1 << 23;  // 8 MiB of int8 indices: 64 MiB as int64
  Array x = array<int8_t>({10, 20, 30, 40}).eval();
  Array idx = cyclic_indices(n);
  allow(24 * MiB);  // the 8 MiB output fits, the index scratch does not
  expect_out_of_memory(ops::take(x, idx, 0));
  lift();
  auto got = ops::take(x, idx, 0).to_vector<int8_t>();
  ASSERT_EQ(got.size(), static_cast<size_t>(n));
  for (int i : {0, 1, 2, 3, 4, 12345, n - 1})
    EXPECT_EQ(got[static_cast<size_t>(i)], 10 * (i % 4 + 1)) << i;
}

TEST_F(ScratchMemory, TakeOuterOffsetsCountAgainstTheLimit) {
  // Rows of a (2^22, 2) int8 array along axis 1: 8 bytes of offsets a row.
  const int rows = 1 << 22;
  Array x = ops::zeros({rows, 2}, int8).eval();
  Array idx = array<int8_t>({1}).eval();
  allow(16 * MiB);  // output 4 MiB, offsets 32 MiB
  expect_out_of_memory(ops::take(x, idx, 1));
}

TEST_F(ScratchMemory, SortRowOffsetsCountAgainstTheLimit) {
  // 2^22 rows of 2: row offsets of input and output take 64 MiB.
  const int rows = 1 << 22;
  std::vector<int8_t> v(2 * static_cast<size_t>(rows));
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 2 ? 1 : 2;  // rows [2, 1]
  Array x = array(v.data(), {rows, 2}).eval();
  allow(24 * MiB);
  expect_out_of_memory(ops::sort(x, 1));
  lift();
  auto got = ops::sort(x, 1).to_vector<int8_t>();
  EXPECT_EQ(got[0], 1);
  EXPECT_EQ(got[1], 2);
  EXPECT_EQ(got[got.size() - 2], 1);
  EXPECT_EQ(got.back(), 2);
}

}  // namespace
