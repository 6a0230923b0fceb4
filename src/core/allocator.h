// The CPU buffer allocator: size classes, a cache of freed buffers that later
// requests reuse, statistics and limits (the public side is
// <nuvec/core/memory.h>). Fresh large buffers cost page faults (about 40 ms for
// 64 MiB here), so freed buffers are kept and handed out again.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace nuvec::allocator {

/// Thrown by `malloc` when the active memory would exceed the memory limit or
/// when the system refuses the memory; the statistics are left unchanged.
class OutOfMemory : public std::runtime_error {
 public:
  explicit OutOfMemory(const std::string& message)
      : std::runtime_error(message) {}
};

/// A buffer from `malloc`. Invariant: `ptr` is 64-byte aligned (2 MiB-aligned
/// when `capacity >= kHugeThreshold`), `size <= capacity`, and `capacity` is
/// the size class of the request, which `free` needs back unchanged.
struct Block {
  void* ptr = nullptr;
  size_t size = 0;      // bytes requested
  size_t capacity = 0;  // bytes reserved (what the statistics count)
};

/// Every block is aligned to at least this many bytes.
inline constexpr size_t kAlignment = 64;
/// Requests whose size class reaches this size are mapped with `mmap`,
/// 2 MiB-aligned and advised to use transparent huge pages.
inline constexpr size_t kHugeThreshold = size_t{2} << 20;

/// The capacity `malloc(nbytes)` reserves for a fresh block: multiples of 64
/// up to 256 bytes, then four classes per power of two (waste under 25%) up
/// to 1 MiB, then multiples of the 4 KiB page. Returns 0 when it overflows.
size_t size_class(size_t nbytes);

/// Returns a block of at least `nbytes` (0 gives a valid non-null block),
/// reusing a cached block of the same class when one is free. Throws
/// `OutOfMemory` with a message such as "[malloc] cannot allocate 1048576
/// bytes: memory limit 1000 bytes reached (active 500)".
Block malloc(size_t nbytes);

/// Returns the block to the cache, or to the system when caching it would
/// exceed the cache limit (least recently freed blocks are released first).
/// A block with a null `ptr` is ignored.
void free(Block b);

}  // namespace nuvec::allocator
