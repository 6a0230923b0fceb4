// Memory statistics and limits of the GPU's caching allocator through the
// public API (memory.h, Device::gpu). Without a GPU they read 0 and limits
// change nothing; on the H200 (scripts/gpu.sh) they follow the buffers.
#include <gtest/gtest.h>

#include <nuvec/nuvec.h>

using namespace nuvec;

namespace {
// n float32 values in a buffer of their own on the GPU (full alone is a
// broadcast view of one value).
Array filled(size_t n, float v) {
  return ops::add(ops::full({static_cast<int>(n)}, v, float32, Device::gpu), 0.0f, Device::gpu);
}
}  // namespace

TEST(GpuMemory, ZeroWithoutAGpu) {
  if (is_available(Device::gpu)) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(get_active_memory(Device::gpu), 0u);
  EXPECT_EQ(get_peak_memory(Device::gpu), 0u);
  EXPECT_EQ(get_cache_memory(Device::gpu), 0u);
  EXPECT_EQ(get_memory_limit(Device::gpu), 0u);
  EXPECT_EQ(set_memory_limit(1000, Device::gpu), 0u);
  EXPECT_EQ(set_cache_limit(1000, Device::gpu), 0u);
  clear_cache(Device::gpu);
  reset_peak_memory(Device::gpu);
  // The CPU's statistics are the CPU allocator's.
  EXPECT_EQ(get_memory_limit(Device::cpu), get_memory_limit());
}

TEST(GpuMemory, FollowsBuffers) {
  if (!is_available(Device::gpu)) GTEST_SKIP() << "no GPU in this process";
  const size_t bytes = size_t(64) << 20;
  clear_cache(Device::gpu);
  size_t active0 = get_active_memory(Device::gpu);
  reset_peak_memory(Device::gpu);
  EXPECT_EQ(get_peak_memory(Device::gpu), active0);
  EXPECT_GT(get_memory_limit(Device::gpu), size_t(1) << 30);  // the device's memory
  {
    Array x = filled(bytes / 4, 1.0f);
    x.eval();
    EXPECT_GE(get_active_memory(Device::gpu), active0 + bytes);
    EXPECT_GE(get_peak_memory(Device::gpu), active0 + bytes);
    EXPECT_EQ(get_active_memory(), get_active_memory(Device::cpu));
  }
  // Freed: kept in the cache, then released.
  EXPECT_EQ(get_active_memory(Device::gpu), active0);
  EXPECT_GE(get_cache_memory(Device::gpu), bytes);
  clear_cache(Device::gpu);
  EXPECT_EQ(get_cache_memory(Device::gpu), 0u);
  // A cache limit of 0 keeps nothing.
  size_t old_cache = set_cache_limit(0, Device::gpu);
  {
    Array x = filled(1 << 20, 2.0f);
    x.eval();
  }
  EXPECT_EQ(get_cache_memory(Device::gpu), 0u);
  EXPECT_EQ(set_cache_limit(old_cache, Device::gpu), 0u);
  // Beyond the memory limit an allocation fails with a clear error.
  size_t old = set_memory_limit(active0 + (size_t(16) << 20), Device::gpu);
  Array big = filled(bytes / 4, 1.0f);
  try {
    big.eval();
    ADD_FAILURE() << "allocated past the memory limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory) << e.what();
  }
  EXPECT_EQ(set_memory_limit(old, Device::gpu), active0 + (size_t(16) << 20));
  Array again = filled(bytes / 4, 1.0f);
  EXPECT_EQ(ops::sum(again).item<float>(), static_cast<float>(bytes / 4));
}

// Buffer donation on the GPU: an element-wise op writes over an input
// nothing else holds, so a chain of them needs one buffer, not two.
TEST(GpuMemory, ElementwiseChainsWriteOverTheirTemporaries) {
  if (!is_available(Device::gpu)) GTEST_SKIP() << "no GPU in this process";
  const size_t bytes = size_t(64) << 20, n = bytes / 4;
  Array x = filled(n, 0.5f);
  x.eval();
  Array want = ops::exp(ops::sin(ops::add(x, 1.0f, Device::cpu), Device::cpu), Device::cpu);
  want.eval();
  clear_cache(Device::gpu);
  reset_peak_memory(Device::gpu);
  size_t base = get_active_memory(Device::gpu);
  Array y = ops::exp(ops::sin(ops::add(x, 1.0f, Device::gpu), Device::gpu), Device::gpu);
  y.eval();
  EXPECT_EQ(get_peak_memory(Device::gpu) - base, bytes) << "without donation: 2 buffers";
  EXPECT_TRUE(ops::array_equal(y, want).item<bool>());
  // A donated buffer that was read on the host before: the host copy of the
  // old bytes is not served for the new ones.
  Array t = ops::add(x, 1.0f, Device::gpu);
  EXPECT_EQ(t.to_vector<float>()[0], 1.5f);
  Array u = ops::exp(std::move(t), Device::gpu);
  EXPECT_EQ(u.to_vector<float>()[0], ops::exp(array(1.5f), Device::cpu).item<float>());
  // An input held elsewhere is not written over.
  Array v = ops::add(x, 1.0f, Device::gpu);
  v.eval();
  Array w = ops::exp(v, Device::gpu);
  w.eval();
  EXPECT_EQ(v.to_vector<float>()[0], 1.5f);
}

// A buffer read by a kernel on another stream goes back to its stream's
// cache only after that read: a long scan on stream b reads x while x is
// dropped and stream a allocates and fills a buffer of x's size.
TEST(GpuMemory, BuffersReadOnAnotherStreamWaitForTheRead) {
  if (!is_available(Device::gpu)) GTEST_SKIP() << "no GPU in this process";
  const int n = 1 << 20;  // one float row: a sequential scan (milliseconds)
  Stream a = new_stream(Device::gpu), b = new_stream(Device::gpu);
  clear_cache(Device::gpu);
  Array x = random::uniform({n}, float32, random::key(3), a);
  x.eval();
  Array x_host = array(x.to_vector<float>(), {n});
  Array y = ops::cumsum(x, 0, false, true, b);
  async_eval({y});
  x = Array();
  Array z = ops::add(ops::full({n}, -1.0f, float32, a), 0.0f, a);  // reuses x's block
  z.eval();
  EXPECT_TRUE(ops::array_equal(y, ops::cumsum(x_host, 0, false, true, Device::cpu)).item<bool>());
  EXPECT_EQ(z.to_vector<float>()[n - 1], -1.0f);
}

// A scatter's scratch buffers (the keys and orders its sort of the updates
// by destination uses: four arrays of 8 bytes per update) come from the
// caching allocator: they count in the peak, above the inputs and output.
TEST(GpuMemory, ScatterScratchCountsInThePeak) {
  if (!is_available(Device::gpu)) GTEST_SKIP() << "no GPU in this process";
  const int n = 1 << 10, u = 1 << 20;
  Array x = filled(n, 0.0f);
  Array positions = ops::remainder(ops::arange(0, u, 1, int32, Device::gpu), n, Device::gpu);
  Array ones = filled(u, 1.0f);
  nuvec::eval({x, positions, ones});
  clear_cache(Device::gpu);
  const size_t active0 = get_active_memory(Device::gpu);
  reset_peak_memory(Device::gpu);
  Array y = ops::scatter_add_along_axis(x, positions, ones, 0, Device::gpu);
  y.eval();
  EXPECT_GE(get_peak_memory(Device::gpu), active0 + size_t(4) * n + size_t(32) * u);
  // The scratch is back in the cache once the scatter is done.
  EXPECT_LE(get_active_memory(Device::gpu), active0 + (size_t(1) << 20));
  std::vector<float> v = y.to_vector<float>();
  for (int i = 0; i < n; ++i) ASSERT_EQ(v[i], static_cast<float>(u / n)) << i;
}
