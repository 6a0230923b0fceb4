// Per-thread free lists for the graph's small fixed-size objects: nodes and
// array descriptors, each allocated together with its shared_ptr control
// block (std::allocate_shared with PoolAllocator).
//
// Why: building and dropping a graph of small arrays allocates and frees
// thousands of these in bursts. They are too large for glibc's fast bins and
// its per-thread cache holds only 7 blocks per size, so most frees took the
// slow path (coalescing, later consolidation): about half of the time of a
// 1,000-node graph (docs/performance.md, Transforms). A free list per thread
// and size makes both a pointer push or pop.
//
// Blocks come from ::operator new one at a time, so any block may be freed on
// any thread: a block freed on another thread joins that thread's list. Each
// list keeps at most kMaxBlocks blocks (a few MiB) and gives the rest back;
// a thread's list is emptied when the thread exits.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace nuvec::detail {

template <size_t Size>
class FreeList {
 public:
  static constexpr size_t kMaxBlocks = 8192;

  static void* get() {
    State& s = state();
    if (Block* b = s.head) {
      s.head = b->next;
      --s.count;
      return b;
    }
    return ::operator new(Size);
  }

  static void put(void* p) noexcept {
    State& s = state();
    if (s.open && s.count < kMaxBlocks) {
      auto* b = static_cast<Block*>(p);
      b->next = s.head;
      s.head = b;
      ++s.count;
      return;
    }
    ::operator delete(p);
  }

 private:
  struct Block {
    Block* next;
  };
  // Trivially destructible, so it stays usable while other thread-local
  // objects are destroyed at thread exit (they may free nodes).
  struct State {
    Block* head = nullptr;
    size_t count = 0;
    bool open = false;
  };
  // Empties the list at thread exit and closes it: later frees go straight
  // back to the system allocator.
  struct Drain {
    State& s;
    explicit Drain(State& st) : s(st) { s.open = true; }
    ~Drain() {
      s.open = false;
      while (Block* b = s.head) {
        s.head = b->next;
        ::operator delete(b);
      }
      s.count = 0;
    }
  };

  static State& state() {
    thread_local State s;
    thread_local Drain drain(s);
    return s;
  }
};

/// An allocator for std::allocate_shared that takes single objects from the
/// calling thread's free list of their size.
template <class T>
struct PoolAllocator {
  using value_type = T;
  static constexpr size_t kSize = (sizeof(T) + 15) / 16 * 16;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n == 1) return static_cast<T*>(FreeList<kSize>::get());
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1) FreeList<kSize>::put(p);
    else std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace nuvec::detail
