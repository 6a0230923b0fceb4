// Memory statistics and limits of the CPU buffer allocator, with MLX's names.
// All byte counts are buffer capacities: the bytes the allocator reserved for
// a buffer (its request rounded up to a size class), as MLX counts buffer
// lengths. Every function here is thread-safe.
#pragma once

#include <cstddef>

#include "nuvec/core/device.h"

namespace nuvec {

/// Bytes held by buffers handed out and not yet freed (by capacity; cached
/// buffers are not counted).
size_t get_active_memory();

/// The largest value `get_active_memory()` reached since the start of the
/// process or the last `reset_peak_memory()`.
size_t get_peak_memory();

/// Sets the peak to the current active memory.
void reset_peak_memory();

/// Bytes held by freed buffers kept in the cache for reuse.
size_t get_cache_memory();

/// Sets the memory limit in bytes and returns the previous one: an allocation
/// that would take the active memory above it throws; cached buffers are
/// released first so that active plus cached memory stays under it. The
/// default is 1.5 times the physical memory (never reached without swap, so
/// the system refuses first); a limit below the active memory is allowed and
/// makes every new allocation fail until buffers are freed.
size_t set_memory_limit(size_t limit);

/// The current memory limit in bytes.
size_t get_memory_limit();

/// Sets the most bytes the buffer cache may hold and returns the previous
/// limit; the least recently freed buffers are released at once to meet it.
/// 0 disables the cache. The default equals the default memory limit.
size_t set_cache_limit(size_t limit);

/// Releases every cached buffer to the system; active buffers are untouched.
void clear_cache();

// The same for one device's memory: Device::cpu is the functions above,
// Device::gpu the CUDA backend's caching allocator of device buffers. On
// the GPU the default memory limit is the device's memory, the default
// cache limit the same; where no GPU is available the statistics are 0 and
// setting a limit changes nothing (and returns 0).

size_t get_active_memory(Device d);
size_t get_peak_memory(Device d);
void reset_peak_memory(Device d);
size_t get_cache_memory(Device d);
size_t set_memory_limit(size_t limit, Device d);
size_t get_memory_limit(Device d);
size_t set_cache_limit(size_t limit, Device d);
void clear_cache(Device d);

}  // namespace nuvec
