// Macros shared by every scalar functor header. These headers use compiler
// builtins only (no <cmath>, no libm): they are compiled by the CPU loops, by
// nvcc, by NVRTC and by the CPU JIT, and must give the same bits everywhere.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define NUVEC_HOST_DEVICE __host__ __device__
#else
#define NUVEC_HOST_DEVICE
#endif

#define NUVEC_KERNEL_INLINE NUVEC_HOST_DEVICE inline __attribute__((always_inline))

// Placed before a CPU loop whose iterations touch disjoint elements (an
// output may be the very buffer of an input, element for element, never a
// shifted one): the compiler vectorizes it without run-time alias checks.
// GCC gives up vectorizing a loop that would need more than 10 such checks
// (a 4-input, 3-output Adam step needs 15), restrict-qualified locals
// notwithstanding.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define NUVEC_INDEPENDENT_ITERATIONS
#elif defined(__clang__)
#define NUVEC_INDEPENDENT_ITERATIONS _Pragma("clang loop vectorize(assume_safety)")
#else
#define NUVEC_INDEPENDENT_ITERATIONS _Pragma("GCC ivdep")
#endif

namespace nuvec::kernels {

using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned int;
using u64 = unsigned long long;
using i32 = int;
using i64 = long long;

template <class To, class From>
NUVEC_KERNEL_INLINE To bit_cast(const From& v) {
  return __builtin_bit_cast(To, v);
}

}  // namespace nuvec::kernels
