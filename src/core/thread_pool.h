// A small pool of worker threads for CPU kernels. Work is split into fixed
// index blocks that depend only on the problem size and the grain, never on
// the thread count or timing, so a reduction that combines per-block results
// in block order gives the same bits on every machine (DESIGN.md, section 10).
#pragma once

#include <functional>
#include <memory>
#include <type_traits>

namespace nuvec::cpu {

/// Threads that run a parallel_for, the caller included: the value of the
/// NUVEC_NUM_THREADS environment variable when it is a positive integer, else
/// std::thread::hardware_concurrency(); at least 1. Read once per process.
int num_threads();

/// One block of indices, [begin, end).
struct BlockRange {
  long long begin = 0;
  long long end = 0;
  bool operator==(const BlockRange&) const = default;
};

/// The blocks of [0, n) for a grain: block i is [i * grain, min((i + 1) *
/// grain, n)). A grain below 1 counts as 1; n <= 0 gives no blocks.
class BlockRanges {
 public:
  BlockRanges(long long n, long long grain)
      : n_(n > 0 ? n : 0), grain_(grain > 0 ? grain : 1) {
    count_ = n_ / grain_ + (n_ % grain_ != 0 ? 1 : 0);
  }
  long long size() const { return count_; }
  long long grain() const { return grain_; }
  BlockRange operator[](long long i) const {
    long long begin = i * grain_;
    return {begin, n_ - begin > grain_ ? begin + grain_ : n_};
  }

 private:
  long long n_;
  long long grain_;
  long long count_;  // invariant: blocks cover [0, n_) exactly
};

/// The blocks that parallel_for(n, grain, fn) runs.
inline BlockRanges block_ranges(long long n, long long grain) {
  return BlockRanges(n, grain);
}

namespace detail {

// A non-owning reference to a callable taking (begin, end).
struct TaskRef {
  void* obj;
  void (*call)(void* obj, long long begin, long long end);
};

void parallel_for(long long n, long long grain, TaskRef task);

}  // namespace detail

/// Runs fn(begin, end) once for each block of block_ranges(n, grain), on the
/// pool's threads and the caller, and returns when all are done. Runs inline
/// (blocks in order, on the caller) when there is one block, one thread, or
/// when called from inside a block (nesting never deadlocks). If fn throws,
/// blocks not yet started are skipped and the first exception is rethrown
/// here. Worker threads start on the first call that needs them; idle ones
/// poll for about 100 us before they sleep.
void parallel_for(long long n, long long grain,
                  const std::function<void(long long, long long)>& fn);

/// As above, without wrapping fn in a std::function (no allocation).
template <class F>
requires std::is_invocable_v<F&, long long, long long>
void parallel_for(long long n, long long grain, F&& fn) {
  using Fn = std::remove_reference_t<F>;
  detail::TaskRef task{
      const_cast<void*>(static_cast<const void*>(std::addressof(fn))),
      [](void* obj, long long begin, long long end) {
        (*static_cast<Fn*>(obj))(begin, end);
      }};
  detail::parallel_for(n, grain, task);
}

}  // namespace nuvec::cpu
