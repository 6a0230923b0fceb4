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
