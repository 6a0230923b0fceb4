// Division by a divisor known before a kernel runs, without a divide: the
// host computes a multiplier and a shift once (Granlund and Montgomery's
// method), the kernel takes the high half of a 32-bit product and shifts.
// Generated GPU kernels use it for the position in a repeated row (i % len),
// where a 64-bit remainder costs dozens of instructions per element.
#pragma once

#include "config.h"

namespace nuvec::kernels {

/// Multiplier and shift for dividing numbers below 2^31 by d (2 <= d < 2^31).
struct FastDiv {
  u32 mul = 0, shr = 0;
};

NUVEC_KERNEL_INLINE FastDiv fast_div(u32 d) {
  u32 log2 = 0;  // ceil(log2(d))
  while ((u64(1) << log2) < d) ++log2;
  u32 p = 31 + log2;
  return {u32(((u64(1) << p) + d - 1) / d), p - 32};
}

/// x / d for 0 <= x < 2^31, from fast_div(d).
NUVEC_KERNEL_INLINE u32 fast_quotient(u32 x, FastDiv f) {
#if defined(__CUDA_ARCH__)
  return __umulhi(x, f.mul) >> f.shr;
#else
  return u32((u64(x) * f.mul) >> 32) >> f.shr;
#endif
}

}  // namespace nuvec::kernels
