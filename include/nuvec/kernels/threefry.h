// Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3", SC'11): the counter-based hash behind nuvec's random
// bits, as MLX and JAX use it. Builtins only: the CPU kernel and (later) the
// CUDA kernel call this one function, so both give the same bits.
#pragma once

#include "nuvec/kernels/config.h"

namespace nuvec::kernels {

/// Two 32-bit words: the key, the counter, or the hash.
struct U32Pair {
  u32 x0, x1;
};

/// Hashes counter (c.x0, c.x1) under key (k.x0, k.x1): five groups of four
/// add-rotate-xor rounds, with a key injection after each group.
NUVEC_KERNEL_INLINE U32Pair threefry2x32(U32Pair k, U32Pair c) {
  // The third key word makes the schedule's parity constant (Skein's C240).
  const u32 k2 = k.x0 ^ k.x1 ^ 0x1BD11BDAu;
  const u32 ks[3] = {k.x0, k.x1, k2};
  u32 a = c.x0 + k.x0;
  u32 b = c.x1 + k.x1;
  // Rotation distances alternate between the two sets of four.
  const u32 rot[2][4] = {{13u, 15u, 26u, 6u}, {17u, 29u, 16u, 24u}};
  for (u32 g = 0; g < 5; ++g) {
    for (u32 r = 0; r < 4; ++r) {
      const u32 d = rot[g & 1u][r];
      a += b;
      b = (b << d) | (b >> (32u - d));
      b ^= a;
    }
    a += ks[(g + 1u) % 3u];
    b += ks[(g + 2u) % 3u] + g + 1u;
  }
  return {a, b};
}

}  // namespace nuvec::kernels
