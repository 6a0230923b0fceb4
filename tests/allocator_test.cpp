#include "core/allocator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "nuvec/core/memory.h"

namespace nuvec {
namespace {

namespace al = allocator;
constexpr size_t kMiB = size_t{1} << 20;

bool aligned(const void* p, size_t a) {
  return reinterpret_cast<uintptr_t>(p) % a == 0;
}

// Starts each test with an empty cache and no active memory, and restores the
// limits afterwards.
class Allocator : public ::testing::Test {
 protected:
  void SetUp() override {
    memory_limit_ = get_memory_limit();
    cache_limit_ = set_cache_limit(0);  // also empties the cache
    set_cache_limit(cache_limit_);
    ASSERT_EQ(get_active_memory(), 0u);
    ASSERT_EQ(get_cache_memory(), 0u);
    reset_peak_memory();
  }
  void TearDown() override {
    set_memory_limit(memory_limit_);
    set_cache_limit(cache_limit_);
    clear_cache();
    EXPECT_EQ(get_active_memory(), 0u);
  }
  size_t memory_limit_ = 0;
  size_t cache_limit_ = 0;
};

TEST(AllocatorSizeClass, Table) {
  // (request, class), worked out by hand from the documented rule.
  const std::pair<size_t, size_t> table[] = {
      {0, 64},
      {1, 64},
      {64, 64},
      {65, 128},
      {200, 256},
      {256, 256},
      {257, 320},
      {512, 512},
      {513, 640},
      {1000, 1024},
      {1025, 1280},
      {3000, 3072},
      {5000, 5120},
      {kMiB, kMiB},
      {kMiB + 1, kMiB + 4096},
      {2 * kMiB - 1, 2 * kMiB},
      {64 * kMiB + 5, 64 * kMiB + 4096},
  };
  for (auto [n, c] : table) EXPECT_EQ(al::size_class(n), c) << n;
  EXPECT_EQ(al::size_class(SIZE_MAX), 0u);
}

TEST(AllocatorSizeClass, WasteIsBounded) {
  for (size_t n = 1; n < 4 * kMiB; n += n / 7 + 1) {
    size_t c = al::size_class(n);
    EXPECT_GE(c, n);
    EXPECT_EQ(c % 64, 0u);
    EXPECT_LT(c - n, n / 4 + 64) << n;
  }
}

TEST_F(Allocator, ZeroBytesGivesAValidBlock) {
  al::Block b = al::malloc(0);
  EXPECT_NE(b.ptr, nullptr);
  EXPECT_EQ(b.size, 0u);
  EXPECT_EQ(b.capacity, 64u);
  EXPECT_EQ(get_active_memory(), 64u);
  al::free(b);
  al::free(al::Block{});  // a null block is ignored
}

TEST_F(Allocator, StatisticsAddUp) {
  al::Block a = al::malloc(100);   // class 128
  al::Block b = al::malloc(5000);  // class 5120
  EXPECT_EQ(a.size, 100u);
  EXPECT_EQ(a.capacity, 128u);
  EXPECT_EQ(b.capacity, 5120u);
  EXPECT_EQ(get_active_memory(), 5248u);
  EXPECT_EQ(get_peak_memory(), 5248u);
  EXPECT_EQ(get_cache_memory(), 0u);

  al::free(a);
  EXPECT_EQ(get_active_memory(), 5120u);
  EXPECT_EQ(get_cache_memory(), 128u);
  EXPECT_EQ(get_peak_memory(), 5248u);
  al::free(b);
  EXPECT_EQ(get_active_memory(), 0u);
  EXPECT_EQ(get_cache_memory(), 5248u);

  reset_peak_memory();
  EXPECT_EQ(get_peak_memory(), 0u);
  al::Block c = al::malloc(120);  // reuses a's block
  EXPECT_EQ(get_active_memory(), 128u);
  EXPECT_EQ(get_cache_memory(), 5120u);
  EXPECT_EQ(get_peak_memory(), 128u);
  clear_cache();
  EXPECT_EQ(get_cache_memory(), 0u);
  EXPECT_EQ(get_active_memory(), 128u);
  al::free(c);
  EXPECT_EQ(get_cache_memory(), 128u);
}

TEST_F(Allocator, ReusesFreedBlockOfSameClass) {
  al::Block a = al::malloc(3000);
  void* p = a.ptr;
  al::free(a);
  al::Block other = al::malloc(4000);  // class 4096: must not take p
  EXPECT_NE(other.ptr, p);
  al::Block b = al::malloc(2900);  // class 3072, as 3000
  EXPECT_EQ(b.ptr, p);
  EXPECT_EQ(b.size, 2900u);
  EXPECT_EQ(b.capacity, 3072u);
  al::free(b);
  al::free(other);

  // The most recently freed block of a class comes back first.
  al::Block x = al::malloc(1000), y = al::malloc(1000);
  void* px = x.ptr;
  void* py = y.ptr;
  al::free(x);
  al::free(y);
  al::Block z = al::malloc(1000);
  EXPECT_EQ(z.ptr, py);
  al::Block w = al::malloc(1000);
  EXPECT_EQ(w.ptr, px);
  al::free(z);
  al::free(w);
}

TEST_F(Allocator, ReusesLargeBlocks) {
  al::Block a = al::malloc(64 * kMiB);
  void* p = a.ptr;
  al::free(a);
  EXPECT_EQ(get_cache_memory(), 64 * kMiB);
  al::Block b = al::malloc(64 * kMiB - 100);  // same page-rounded class
  EXPECT_EQ(b.ptr, p);
  EXPECT_EQ(b.capacity, 64 * kMiB);
  al::free(b);
  al::Block c = al::malloc(60 * kMiB);  // a little smaller still fits
  EXPECT_EQ(c.ptr, p);
  EXPECT_EQ(c.capacity, 64 * kMiB);
  EXPECT_EQ(get_active_memory(), 64 * kMiB);
  al::free(c);
  al::Block d = al::malloc(32 * kMiB);  // half the size: not reused
  EXPECT_NE(d.ptr, p);
  EXPECT_EQ(get_cache_memory(), 64 * kMiB);
  al::free(d);
}

TEST_F(Allocator, CacheLimitEvictsLeastRecentlyFreed) {
  EXPECT_EQ(set_cache_limit(3 * 4096), cache_limit_);
  al::Block b[4];
  for (auto& x : b) x = al::malloc(4096);
  for (auto& x : b) al::free(x);  // b[0] is evicted when b[3] arrives
  EXPECT_EQ(get_cache_memory(), 3 * 4096u);
  std::set<void*> got;
  al::Block r[3];
  for (auto& x : r) {
    x = al::malloc(4096);
    got.insert(x.ptr);
  }
  EXPECT_EQ(got, (std::set<void*>{b[1].ptr, b[2].ptr, b[3].ptr}));
  EXPECT_EQ(get_cache_memory(), 0u);
  for (auto& x : r) al::free(x);

  // Lowering the limit evicts at once; a block above the limit is not cached.
  EXPECT_EQ(set_cache_limit(4096), 3 * 4096u);
  EXPECT_EQ(get_cache_memory(), 4096u);
  al::Block big = al::malloc(8192);
  al::free(big);
  EXPECT_EQ(get_cache_memory(), 4096u);
  set_cache_limit(0);
  EXPECT_EQ(get_cache_memory(), 0u);
  al::Block small = al::malloc(64);
  al::free(small);
  EXPECT_EQ(get_cache_memory(), 0u);
}

TEST_F(Allocator, ClearCacheEmptiesIt) {
  std::vector<al::Block> blocks;
  for (size_t n : {10, 1000, 100000, 3000000}) blocks.push_back(al::malloc(n));
  for (auto& b : blocks) al::free(b);
  EXPECT_EQ(get_cache_memory(), 64u + 1024 + 114688 + 3002368);
  clear_cache();
  EXPECT_EQ(get_cache_memory(), 0u);
  EXPECT_EQ(get_active_memory(), 0u);
}

TEST_F(Allocator, MemoryLimitThrowsAndKeepsStatistics) {
  EXPECT_EQ(set_memory_limit(1000), memory_limit_);
  EXPECT_EQ(get_memory_limit(), 1000u);
  al::Block a = al::malloc(500);  // class 512
  try {
    al::malloc(1048576);
    FAIL() << "no exception";
  } catch (const al::OutOfMemory& e) {
    EXPECT_STREQ(e.what(),
                 "[malloc] cannot allocate 1048576 bytes: memory limit 1000 "
                 "bytes reached (active 512)");
  }
  EXPECT_THROW(al::malloc(489), al::OutOfMemory);  // class 512: 1024 > 1000
  EXPECT_EQ(get_active_memory(), 512u);
  EXPECT_EQ(get_peak_memory(), 512u);
  EXPECT_EQ(get_cache_memory(), 0u);
  al::Block b = al::malloc(440);  // class 448 fits: 960
  EXPECT_EQ(get_active_memory(), 960u);
  al::free(a);
  al::free(b);
  EXPECT_EQ(get_active_memory(), 0u);
  EXPECT_EQ(get_cache_memory(), 960u);

  // Cached blocks give way to a fresh block that needs their room.
  set_memory_limit(10240);
  clear_cache();
  al::free(al::malloc(8192));
  EXPECT_EQ(get_cache_memory(), 8192u);
  al::Block c = al::malloc(4096);
  EXPECT_EQ(get_cache_memory(), 0u);
  EXPECT_EQ(get_active_memory(), 4096u);
  al::free(c);
  // Lowering the limit trims the cache to keep active + cached under it.
  set_memory_limit(0);
  EXPECT_EQ(get_cache_memory(), 0u);
  EXPECT_THROW(al::malloc(0), al::OutOfMemory);
}

TEST_F(Allocator, ImpossibleSizeThrows) {
  EXPECT_THROW(al::malloc(SIZE_MAX), al::OutOfMemory);
  EXPECT_THROW(al::malloc(SIZE_MAX / 2), al::OutOfMemory);
  EXPECT_EQ(get_active_memory(), 0u);
}

TEST_F(Allocator, DefaultLimits) {
  size_t ram = size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(memory_limit_, ram / 2 * 3 + ram % 2);
  EXPECT_EQ(cache_limit_, memory_limit_);
}

TEST_F(Allocator, Alignment) {
  std::vector<al::Block> blocks;
  for (size_t n = 0; n < 5 * kMiB; n = n * 3 + 17) {
    al::Block b = al::malloc(n);
    EXPECT_TRUE(aligned(b.ptr, 64)) << n;
    if (b.capacity >= al::kHugeThreshold) {
      EXPECT_TRUE(aligned(b.ptr, al::kHugeThreshold)) << n;
    }
    std::memset(b.ptr, 0xab, b.capacity);
    blocks.push_back(b);
  }
  for (auto& b : blocks) al::free(b);
}

TEST_F(Allocator, HugeBuffers) {
  al::Block b = al::malloc(96 * kMiB + 1);
  EXPECT_EQ(b.capacity, 96 * kMiB + 4096);
  EXPECT_TRUE(aligned(b.ptr, 2 * kMiB));
  auto* bytes = static_cast<unsigned char*>(b.ptr);
  for (size_t i = 0; i < b.capacity; i += 4096) bytes[i] = 1;
  bytes[b.size - 1] = 2;
  bytes[b.capacity - 1] = 3;
  EXPECT_EQ(get_active_memory(), b.capacity);
  al::free(b);
  EXPECT_EQ(get_cache_memory(), b.capacity);
  clear_cache();
  EXPECT_EQ(get_cache_memory(), 0u);
}

TEST_F(Allocator, ConcurrentMallocFree) {
  constexpr int kThreads = 4, kIters = 3000, kHeld = 8;
  auto run = [](unsigned seed) {
    struct Held {
      al::Block b;
      unsigned tag;
    };
    std::vector<Held> held;
    for (int i = 0; i < kIters; ++i) {
      seed = seed * 1664525u + 1013904223u;
      if (!held.empty() && (seed >> 31 || held.size() == kHeld)) {
        size_t k = (seed >> 8) % held.size();
        if (*static_cast<unsigned*>(held[k].b.ptr) != held[k].tag) {
          ADD_FAILURE() << "block handed out twice";
        }
        al::free(held[k].b);
        held.erase(held.begin() + long(k));
      } else {
        size_t n = 4 + (seed >> 12) % (size_t{64} << ((seed >> 4) % 12));
        al::Block b = al::malloc(n);
        *static_cast<unsigned*>(b.ptr) = seed;
        held.push_back({b, seed});
      }
    }
    for (auto& h : held) al::free(h.b);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(run, 12345u + t);
  for (auto& t : threads) t.join();
  EXPECT_EQ(get_active_memory(), 0u);
  EXPECT_GT(get_peak_memory(), 0u);
  EXPECT_GT(get_cache_memory(), 0u);
}

}  // namespace
}  // namespace nuvec
