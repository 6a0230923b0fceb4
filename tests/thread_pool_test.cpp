#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace nuvec::cpu {
namespace {

using Blocks = std::vector<BlockRange>;

Blocks all_blocks(long long n, long long grain) {
  BlockRanges r = block_ranges(n, grain);
  Blocks out;
  for (long long i = 0; i < r.size(); ++i) out.push_back(r[i]);
  return out;
}

TEST(ThreadPool, NumThreadsIsPositive) { EXPECT_GE(num_threads(), 1); }

TEST(ThreadPool, BlockRangesTable) {
  EXPECT_EQ(all_blocks(10, 3), (Blocks{{0, 3}, {3, 6}, {6, 9}, {9, 10}}));
  EXPECT_EQ(all_blocks(6, 3), (Blocks{{0, 3}, {3, 6}}));
  EXPECT_EQ(all_blocks(3, 10), (Blocks{{0, 3}}));
  EXPECT_EQ(all_blocks(3, 0), (Blocks{{0, 1}, {1, 2}, {2, 3}}));
  EXPECT_EQ(all_blocks(3, -5), (Blocks{{0, 1}, {1, 2}, {2, 3}}));
  EXPECT_EQ(all_blocks(0, 4), Blocks{});
  EXPECT_EQ(all_blocks(-7, 4), Blocks{});
  const long long half = (1LL << 62);
  EXPECT_EQ(all_blocks(LLONG_MAX, half),
            (Blocks{{0, half}, {half, LLONG_MAX}}));
}

// Runs parallel_for and records each block and how often each index ran.
struct Record {
  std::vector<std::atomic<int>> hits;
  std::mutex mu;
  Blocks seen;
  explicit Record(long long n) : hits(size_t(n > 0 ? n : 0)) {}
};

void check_cover(long long n, long long grain) {
  Record rec(n);
  parallel_for(n, grain, [&](long long b, long long e) {
    for (long long i = b; i < e; ++i) rec.hits[size_t(i)]++;
    std::lock_guard lock(rec.mu);
    rec.seen.push_back({b, e});
  });
  for (long long i = 0; i < n; ++i) {
    ASSERT_EQ(rec.hits[size_t(i)].load(), 1) << n << " " << grain << " " << i;
  }
  std::sort(rec.seen.begin(), rec.seen.end(),
            [](auto& x, auto& y) { return x.begin < y.begin; });
  EXPECT_EQ(rec.seen, all_blocks(n, grain)) << n << " " << grain;
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (long long n : {0, 1, 2, 3, 7, 64, 1000, 4097}) {
    for (long long grain : {0, 1, 2, 3, 5, 64, 1000, 5000}) {
      check_cover(n, grain);
    }
  }
}

// Fixed blocks combined in block order give the same bits however the blocks
// were scheduled: compare with the same blocks run on one thread (nested).
TEST(ThreadPool, BlockedReductionIsDeterministic) {
  const long long n = 100003, grain = 997;
  std::vector<float> x(n);
  for (long long i = 0; i < n; ++i) x[size_t(i)] = 1.0f / float(i % 113 + 1);
  auto reduce = [&] {
    BlockRanges blocks = block_ranges(n, grain);
    std::vector<float> partial(size_t(blocks.size()));
    parallel_for(n, grain, [&](long long b, long long e) {
      float s = 0;
      for (long long i = b; i < e; ++i) s += x[size_t(i)];
      partial[size_t(b / grain)] = s;
    });
    float total = 0;
    for (float p : partial) total += p;
    return total;
  };
  float pooled = reduce();
  float inlined = 0;
  parallel_for(2, 1, [&](long long b, long long) {
    if (b == 0) inlined = reduce();  // nested: runs on one thread
  });
  for (int rep = 0; rep < 20; ++rep) {
    float again = reduce();
    EXPECT_EQ(std::memcmp(&again, &pooled, sizeof(float)), 0);
  }
  EXPECT_EQ(std::memcmp(&inlined, &pooled, sizeof(float)), 0);
}

TEST(ThreadPool, NestedCallsDoNotDeadlock) {
  std::atomic<long long> total{0};
  parallel_for(8, 1, [&](long long, long long) {
    parallel_for(10, 2, [&](long long b, long long e) {
      parallel_for(e - b, 1,
                   [&](long long b2, long long e2) { total += e2 - b2; });
    });
  });
  EXPECT_EQ(total.load(), 80);
}

TEST(ThreadPool, ExceptionsPropagate) {
  auto thrower = [](long long b, long long e) {
    if (b <= 37 && 37 < e) throw std::runtime_error("block 37");
  };
  try {
    parallel_for(100, 1, thrower);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "block 37");
  }
  // Every block throws: exactly one exception comes back.
  EXPECT_THROW(
      parallel_for(64, 1,
                   [](long long, long long) { throw std::logic_error("all"); }),
      std::logic_error);
  // Inline (one block) and nested paths propagate too.
  EXPECT_THROW(parallel_for(40, 100, thrower), std::runtime_error);
  EXPECT_NO_THROW(parallel_for(37, 100, thrower));
  EXPECT_THROW(parallel_for(1, 1,
                            [](long long, long long) {
                              throw std::out_of_range("inline");
                            }),
               std::out_of_range);
  EXPECT_THROW(
      parallel_for(4, 1,
                   [&](long long, long long) { parallel_for(50, 1, thrower); }),
      std::runtime_error);
  // The pool still works afterwards.
  check_cover(1000, 7);
}

TEST(ThreadPool, StdFunctionOverload) {
  std::atomic<long long> sum{0};
  std::function<void(long long, long long)> fn = [&](long long b, long long e) {
    for (long long i = b; i < e; ++i) sum += i;
  };
  parallel_for(1000, 10, fn);
  const std::function<void(long long, long long)>& cfn = fn;
  parallel_for(1000, 10, cfn);
  EXPECT_EQ(sum.load(), 2 * 499500);
}

TEST(ThreadPool, ConcurrentCallers) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 100; ++rep) {
        long long n = 50 + t * 31 + rep, grain = 1 + (rep % 9);
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        parallel_for(n, grain, [&](long long b, long long e) {
          for (long long i = b; i < e; ++i) hits[size_t(i)]++;
        });
        for (auto& h : hits) failures += h.load() != 1;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace nuvec::cpu
