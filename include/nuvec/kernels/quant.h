// Scalar pieces of MLX's quantization formats (docs/quantization.md), shared
// by the CPU kernels and the CUDA kernels so that both read and write the
// same bits: the packed bitstream, the FP4 E2M1 values, the E8M0 and FP8
// E4M3 scales.
#pragma once

#include "nuvec/kernels/config.h"

namespace nuvec::kernels::quant {

/// Element i of a row packed at `bits` per element: a little-endian
/// bitstream over the row's uint32 words (element i starts at bit i * bits;
/// with 3, 5 or 6 bits an element may straddle two words).
NUVEC_KERNEL_INLINE u32 unpack(const u32* words, long long i, int bits) {
  const long long at = i * bits;
  const int sh = int(at & 31);
  const u32* w = words + (at >> 5);
  u32 v = w[0] >> sh;
  if (sh + bits > 32) v |= w[1] << (32 - sh);
  return v & ((1u << bits) - 1u);
}

/// The value of an FP4 E2M1 code (sign bit 3; 0, 0.5, 1, 1.5, 2, 3, 4, 6).
NUVEC_KERNEL_INLINE float fp4_value(u32 code) {
  const u32 mag = code & 7u;
  // 0.5 * mag for mag < 4; then 2, 3, 4, 6 (2^(e-1) * (1 + m/2)).
  const u32 up = (mag - 4u) >> 1;
  float v = mag < 4u ? 0.5f * float(mag) : float(((mag & 1u) ? 3u : 2u) << up);
  return (code & 8u) ? -v : v;
}

/// The scale of an E8M0 code: 2^(s - 127), with MLX's 2^-127 for code 0.
NUVEC_KERNEL_INLINE float e8m0_value(u8 s) {
  return bit_cast<float>(s == 0 ? 0x00400000u : u32(s) << 23);
}

/// The value of an FP8 E4M3 code (bias 7, subnormals, 0x7F and 0xFF NaN).
NUVEC_KERNEL_INLINE float fp8_value(u8 c) {
  const u32 sign = u32(c & 0x80u) << 24;
  const u32 e = (c >> 3) & 15u, m = c & 7u;
  float mag;
  if (e == 15u && m == 7u) {
    mag = bit_cast<float>(0x7FC00000u);
  } else if (e == 0u) {
    mag = float(m) * 0.001953125f;  // m * 2^-9
  } else {
    mag = bit_cast<float>(((e + 120u) << 23) | (m << 20));
  }
  return bit_cast<float>(bit_cast<u32>(mag) | sign);
}

/// The FP8 E4M3 code nearest to x (ties to even), saturating at 448; NaN
/// and values of magnitude 464 and above give the largest code (MLX's).
NUVEC_KERNEL_INLINE u8 fp8_code(float x) {
  u32 b = bit_cast<u32>(x);
  const u32 sign = (b >> 24) & 0x80u;
  b &= 0x7FFFFFFFu;
  u32 r;
  if (b >= (543u << 21)) {
    r = 0x7Eu;
  } else if (b < (121u << 23)) {
    // Below 2^-6: the subnormal codes m * 2^-9. Adding 2^14 (whose float
    // ulp is 2^-9) rounds x to that step, ties to even, in the low bits.
    const float shifted = bit_cast<float>(b) + bit_cast<float>(141u << 23);
    r = bit_cast<u32>(shifted) - (141u << 23);
  } else {
    const u32 odd = (b >> 20) & 1u;
    r = (b + ((u32(7 - 127) << 23) + 0x7FFFFu) + odd) >> 20;
  }
  return u8(r | sign);
}

}  // namespace nuvec::kernels::quant
