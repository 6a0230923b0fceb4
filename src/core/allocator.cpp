#include "core/allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "nuvec/core/memory.h"

namespace nuvec::allocator {
namespace {

constexpr size_t kPage = 4096;
// Classes: multiples of 64 up to kSmallMax, four per power of two up to
// kClassMax, then page multiples.
constexpr size_t kSmallMax = 256;
constexpr size_t kClassMax = size_t{1} << 20;

size_t round_up(size_t n, size_t step) { return (n + step - 1) / step * step; }

// A cached block may serve a request a little smaller than itself: exact class
// for small blocks, up to 1/8 more for page-multiple ones (so a 64 MiB request
// finds a 64 MiB + 4 KiB buffer).
size_t max_reuse(size_t capacity) {
  return capacity <= kClassMax ? capacity : capacity + capacity / 8;
}

size_t default_memory_limit() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::numeric_limits<size_t>::max();
  size_t ram = size_t(pages) * size_t(page);
  if (ram > std::numeric_limits<size_t>::max() / 3 * 2) {
    return std::numeric_limits<size_t>::max();
  }
  return ram + ram / 2;
}

void* system_alloc(size_t capacity) {
  if (capacity < kHugeThreshold)
    return std::aligned_alloc(kAlignment, capacity);
  // Over-map by 2 MiB and trim both ends so the block is 2 MiB-aligned and
  // huge pages can back it from its first byte.
  size_t len = capacity + kHugeThreshold;
  void* raw = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto base = reinterpret_cast<uintptr_t>(raw);
  uintptr_t start = (base + kHugeThreshold - 1) & ~(kHugeThreshold - 1);
  if (start > base) munmap(raw, start - base);
  size_t tail = base + len - (start + capacity);
  if (tail > 0) munmap(reinterpret_cast<void*>(start + capacity), tail);
  auto* p = reinterpret_cast<void*>(start);
  madvise(p, capacity, MADV_HUGEPAGE);  // advisory: failure is harmless
  return p;
}

void system_free(void* ptr, size_t capacity) {
  if (capacity < kHugeThreshold) {
    std::free(ptr);
  } else {
    munmap(ptr, capacity);
  }
}

struct Cached {
  void* ptr;
  size_t capacity;
};

// All statistics and the cache sit under one mutex. System calls (mmap,
// munmap, free of evicted blocks) run after it is released.
struct State {
  std::mutex mu;
  size_t active = 0;
  size_t peak = 0;
  size_t cached = 0;
  size_t memory_limit = default_memory_limit();
  size_t cache_limit = memory_limit;
  uint64_t next_seq = 0;
  // Invariant: both hold the same blocks; `lru` ordered by free time (oldest
  // first), `by_size` by (capacity, free time).
  std::map<uint64_t, Cached> lru;
  std::set<std::pair<size_t, uint64_t>> by_size;

  // Moves the least recently freed block to `out`. Requires a non-empty cache.
  void evict_oldest(std::vector<Cached>& out) {
    auto it = lru.begin();
    by_size.erase({it->second.capacity, it->first});
    cached -= it->second.capacity;
    out.push_back(it->second);
    lru.erase(it);
  }

  // Takes the most recently freed block with capacity in [lo, hi], if any.
  bool take(size_t lo, size_t hi, Cached& out) {
    auto it = by_size.lower_bound({lo, 0});
    if (it == by_size.end() || it->first > hi) return false;
    it = std::prev(by_size.upper_bound({it->first, UINT64_MAX}));
    auto node = lru.find(it->second);
    out = node->second;
    lru.erase(node);
    by_size.erase(it);
    cached -= out.capacity;
    return true;
  }
};

State& state() {
  // Leaked on purpose: buffers may be freed by other static destructors.
  static State* s = new State();
  return *s;
}

void release(const std::vector<Cached>& blocks) {
  for (const Cached& b : blocks) system_free(b.ptr, b.capacity);
}

[[noreturn]] void throw_limit(size_t nbytes, size_t limit, size_t active) {
  throw OutOfMemory("[malloc] cannot allocate " + std::to_string(nbytes) +
                    " bytes: memory limit " + std::to_string(limit) +
                    " bytes reached (active " + std::to_string(active) + ")");
}

[[noreturn]] void throw_system(size_t nbytes, size_t active) {
  throw OutOfMemory("[malloc] cannot allocate " + std::to_string(nbytes) +
                    " bytes: the system refused (active " +
                    std::to_string(active) + ")");
}

// Allocates a fresh block whose bytes are already counted as active; on
// failure drops the cache and tries once more, then uncounts and throws.
void* fresh(State& s, size_t nbytes, size_t capacity) {
  if (void* p = system_alloc(capacity)) return p;
  std::vector<Cached> evicted;
  {
    std::lock_guard lock(s.mu);
    while (!s.lru.empty()) s.evict_oldest(evicted);
  }
  release(evicted);
  if (void* p = system_alloc(capacity)) return p;
  size_t active;
  {
    std::lock_guard lock(s.mu);
    s.active -= capacity;
    active = s.active;
  }
  throw_system(nbytes, active);
}

}  // namespace

size_t size_class(size_t nbytes) {
  if (nbytes <= kSmallMax) return std::max(kAlignment, round_up(nbytes, 64));
  if (nbytes <= kClassMax)
    return round_up(nbytes, std::bit_floor(nbytes - 1) / 4);
  if (nbytes > std::numeric_limits<size_t>::max() - kHugeThreshold * 2)
    return 0;
  return round_up(nbytes, kPage);
}

Block malloc(size_t nbytes) {
  State& s = state();
  size_t capacity = size_class(nbytes);
  std::vector<Cached> evicted;
  {
    std::unique_lock lock(s.mu);
    size_t room = s.memory_limit > s.active ? s.memory_limit - s.active : 0;
    if (capacity == 0 || capacity > room) {
      size_t limit = s.memory_limit, active = s.active;
      lock.unlock();
      if (capacity == 0) throw_system(nbytes, active);  // size overflows
      throw_limit(nbytes, limit, active);
    }
    Cached hit;
    if (s.take(capacity, std::min(max_reuse(capacity), room), hit)) {
      s.active += hit.capacity;
      s.peak = std::max(s.peak, s.active);
      return Block{hit.ptr, nbytes, hit.capacity};
    }
    // Keep active plus cached memory under the limit: drop old cached blocks.
    while (!s.lru.empty() && s.cached + capacity > room)
      s.evict_oldest(evicted);
    // Counted now so that concurrent calls see it. The peak includes it even
    // if the system then refuses the memory (rare; active is restored).
    s.active += capacity;
    s.peak = std::max(s.peak, s.active);
  }
  release(evicted);
  return Block{fresh(s, nbytes, capacity), nbytes, capacity};
}

void free(Block b) {
  if (b.ptr == nullptr) return;
  State& s = state();
  std::vector<Cached> evicted;
  bool cache_it = false;
  {
    std::lock_guard lock(s.mu);
    s.active -= b.capacity;
    if (b.capacity <= s.cache_limit) {
      while (s.cached + b.capacity > s.cache_limit) s.evict_oldest(evicted);
      try {
        uint64_t seq = s.next_seq++;
        auto node = s.lru.emplace(seq, Cached{b.ptr, b.capacity}).first;
        try {
          s.by_size.insert({b.capacity, seq});
        } catch (...) {
          s.lru.erase(node);
          throw;
        }
        s.cached += b.capacity;
        cache_it = true;
      } catch (const std::bad_alloc&) {
        // No memory for the cache's bookkeeping: give the block back instead.
      }
    }
  }
  release(evicted);
  if (!cache_it) system_free(b.ptr, b.capacity);
}

}  // namespace nuvec::allocator

namespace nuvec {

using allocator::Cached;

namespace {

// Evicts (oldest first) while `over(state)` holds, then releases outside the
// lock.
template <class Over>
void trim(Over over) {
  auto& s = allocator::state();
  std::vector<Cached> evicted;
  {
    std::lock_guard lock(s.mu);
    while (!s.lru.empty() && over(s)) s.evict_oldest(evicted);
  }
  allocator::release(evicted);
}

}  // namespace

size_t get_active_memory() {
  auto& s = allocator::state();
  std::lock_guard lock(s.mu);
  return s.active;
}

size_t get_peak_memory() {
  auto& s = allocator::state();
  std::lock_guard lock(s.mu);
  return s.peak;
}

void reset_peak_memory() {
  auto& s = allocator::state();
  std::lock_guard lock(s.mu);
  s.peak = s.active;
}

size_t get_cache_memory() {
  auto& s = allocator::state();
  std::lock_guard lock(s.mu);
  return s.cached;
}

size_t set_memory_limit(size_t limit) {
  auto& s = allocator::state();
  size_t previous;
  {
    std::lock_guard lock(s.mu);
    previous = s.memory_limit;
    s.memory_limit = limit;
  }
  trim([](const allocator::State& st) {
    return st.active + st.cached > st.memory_limit;
  });
  return previous;
}

size_t get_memory_limit() {
  auto& s = allocator::state();
  std::lock_guard lock(s.mu);
  return s.memory_limit;
}

size_t set_cache_limit(size_t limit) {
  auto& s = allocator::state();
  size_t previous;
  {
    std::lock_guard lock(s.mu);
    previous = s.cache_limit;
    s.cache_limit = limit;
  }
  trim([](const allocator::State& st) { return st.cached > st.cache_limit; });
  return previous;
}

void clear_cache() {
  trim([](const allocator::State&) { return true; });
}

}  // namespace nuvec
