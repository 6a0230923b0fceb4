// Non-temporal stores for the CPU's generated kernels (src/compile/emit_cpp):
// a kernel whose outputs are larger than the last-level cache computes a
// tile of each output into a buffer on the stack and writes it to memory
// past the caches. A normal store first reads the line it writes (64 bytes
// in for every 64 out); a non-temporal one does not, so a memory-bound loop
// moves a third less for one input and one output. Values are unchanged:
// only how the finished tile reaches memory differs.
#pragma once

#include "config.h"

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)

namespace nuvec::kernels {

/// Elements per tile of a streaming kernel (a few KiB per output: in L1).
inline constexpr long kStreamTile = 256;

/// Copies `bytes` (a multiple of 64) from `src` to `dst`, both 64-byte
/// aligned, with non-temporal stores where the target has them.
NUVEC_KERNEL_INLINE void stream_copy(void* dst, const void* src, long bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
#if defined(__x86_64__) && defined(__AVX512F__)
  typedef long long v8 __attribute__((vector_size(64), __may_alias__));
  for (long o = 0; o < bytes; o += 64) {
#if defined(__clang__)
    __builtin_nontemporal_store(*reinterpret_cast<const v8*>(s + o), reinterpret_cast<v8*>(d + o));
#else
    __builtin_ia32_movntdq512(reinterpret_cast<v8*>(d + o), *reinterpret_cast<const v8*>(s + o));
#endif
  }
#elif defined(__x86_64__) && defined(__AVX__)
  typedef long long v4 __attribute__((vector_size(32), __may_alias__));
  for (long o = 0; o < bytes; o += 32) {
#if defined(__clang__)
    __builtin_nontemporal_store(*reinterpret_cast<const v4*>(s + o), reinterpret_cast<v4*>(d + o));
#else
    __builtin_ia32_movntdq256(reinterpret_cast<v4*>(d + o), *reinterpret_cast<const v4*>(s + o));
#endif
  }
#elif defined(__x86_64__)
  typedef long long v2 __attribute__((vector_size(16), __may_alias__));
  for (long o = 0; o < bytes; o += 16) {
#if defined(__clang__)
    __builtin_nontemporal_store(*reinterpret_cast<const v2*>(s + o), reinterpret_cast<v2*>(d + o));
#else
    __builtin_ia32_movntdq(reinterpret_cast<v2*>(d + o), *reinterpret_cast<const v2*>(s + o));
#endif
  }
#else
  __builtin_memcpy(d, s, static_cast<unsigned long>(bytes));
#endif
}

/// Orders the non-temporal stores before whatever the thread does next
/// (they are weakly ordered): called once at the end of a streaming kernel.
NUVEC_KERNEL_INLINE void stream_fence() {
#if defined(__x86_64__)
  __builtin_ia32_sfence();
#endif
}

/// Writes a finished tile of `count` elements of T to `dst`: streamed when
/// it is a whole tile and `dst` is 64-byte aligned, else stored normally.
template <class T>
NUVEC_KERNEL_INLINE void stream_tile(T* __restrict__ dst, const T* __restrict__ tile, long count) {
  if (count == kStreamTile && (reinterpret_cast<unsigned long>(dst) & 63) == 0 &&
      (kStreamTile * static_cast<long>(sizeof(T))) % 64 == 0) {
    stream_copy(dst, tile, kStreamTile * static_cast<long>(sizeof(T)));
    return;
  }
  for (long i = 0; i < count; ++i) dst[i] = tile[i];
}

}  // namespace nuvec::kernels

#endif
