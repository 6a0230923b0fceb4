// float16 and bfloat16 storage types. They widen to float32 for arithmetic and
// round back to nearest-even, exactly as IEEE binary16 / bfloat16 do. Builtins
// only: this header is part of the functor world (CPU loops, CUDA, the JITs).
#pragma once

#include "config.h"

namespace nuvec::kernels {

#ifdef __CUDA_ARCH__
// The GPU's conversions round to nearest even too (subnormals and overflow
// included); every NaN becomes the canonical 0x7fff.
__device__ __forceinline__ u16 gpu_half_bits(float f) {
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ u16 gpu_bfloat_bits(float f) {
  u16 b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}
// x op y for two float16 or bfloat16 operands in one correctly rounded
// 16-bit instruction (bfloat16 needs sm_90). The same bits as computing in
// float32 and rounding once (float32's 24 bits are at least 2p + 2 for
// p = 11 and 8, so the double rounding is innocuous), in a third of the
// instructions. Gpu.HalfArithmeticEqualsFloatRounding checks every pair.
// gpu_half2_* and gpu_bfloat2_* do it for two pairs of operands packed in
// 32-bit words (kernels/pairs.h), each half rounded as the scalar
// instruction rounds it.
#define NUVEC_GPU_HALF_ASM(fn, ptx, word, con)                     \
  __device__ __forceinline__ word fn(word a, word b) {            \
    word d;                                                       \
    asm(ptx " %0, %1, %2;" : "=" con(d) : con(a), con(b));        \
    return d;                                                     \
  }
#define NUVEC_GPU_HALF_OP(name, ptx)                                  \
  NUVEC_GPU_HALF_ASM(gpu_half_##name, #ptx ".rn.f16", u16, "h")       \
  NUVEC_GPU_HALF_ASM(gpu_bfloat_##name, #ptx ".rn.bf16", u16, "h")    \
  NUVEC_GPU_HALF_ASM(gpu_half2_##name, #ptx ".rn.f16x2", u32, "r")    \
  NUVEC_GPU_HALF_ASM(gpu_bfloat2_##name, #ptx ".rn.bf16x2", u32, "r")
// Where those instructions exist for both types (the functors use them).
#if __CUDA_ARCH__ >= 900
#define NUVEC_GPU_HALF_INSTRUCTIONS 1
#endif
NUVEC_GPU_HALF_OP(add, add)
NUVEC_GPU_HALF_OP(sub, sub)
NUVEC_GPU_HALF_OP(mul, mul)
#undef NUVEC_GPU_HALF_OP
#undef NUVEC_GPU_HALF_ASM
#endif

/// Rounds a float32 to the nearest binary16 (ties to even), keeping NaN quiet.
NUVEC_KERNEL_INLINE u16 float_to_half_bits(float f) {
  u32 x = bit_cast<u32>(f);
  u32 sign = (x >> 16) & 0x8000u;
  u32 ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or NaN
    return static_cast<u16>(sign | 0x7c00u |
                            (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu)
                                              : 0u));
  }
#ifdef __CUDA_ARCH__
  return gpu_half_bits(f);  // the same bits in one instruction
#else
  if (ax >= 0x477ff000u) return static_cast<u16>(sign | 0x7c00u);  // >= 65520
  if (ax < 0x38800000u) {  // below 2^-14: subnormal result, rounded by the FPU
    float t = bit_cast<float>(ax) + 0.5f;
    return static_cast<u16>(sign | (bit_cast<u32>(t) - 0x3f000000u));
  }
  u32 odd = (ax >> 13) & 1u;
  ax += 0xc8000fffu + odd;  // rebias the exponent by -112, round to nearest-even
  return static_cast<u16>(sign | (ax >> 13));
#endif
}

/// Widens a binary16 to float32 (exact).
NUVEC_KERNEL_INLINE float half_bits_to_float(u16 h) {
  u32 sign = static_cast<u32>(h & 0x8000u) << 16;
  u32 em = h & 0x7fffu;
  if (em >= 0x7c00u) return bit_cast<float>(sign | 0x7f800000u | ((em & 0x3ffu) << 13));
  if (em >= 0x400u) return bit_cast<float>(sign | ((em << 13) + 0x38000000u));
  float sub = static_cast<float>(em) * 5.9604644775390625e-8f;  // em * 2^-24
  return bit_cast<float>(sign | bit_cast<u32>(sub));
}

/// Rounds a float32 to the nearest bfloat16 (ties to even), keeping NaN quiet.
NUVEC_KERNEL_INLINE u16 float_to_bfloat_bits(float f) {
  u32 x = bit_cast<u32>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<u16>((x >> 16) | 0x40u);
#ifdef __CUDA_ARCH__
  return gpu_bfloat_bits(f);  // as float_to_half_bits
#else
  return static_cast<u16>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
#endif
}

NUVEC_KERNEL_INLINE float bfloat_bits_to_float(u16 b) {
  return bit_cast<float>(static_cast<u32>(b) << 16);
}

/// IEEE binary16: stored as 16 bits, computed in float32.
struct float16_t {
  u16 bits;
  float16_t() = default;
  NUVEC_KERNEL_INLINE float16_t(float f) : bits(float_to_half_bits(f)) {}
  NUVEC_KERNEL_INLINE explicit float16_t(double d)
      : bits(float_to_half_bits(static_cast<float>(d))) {}
  template <class I, class = decltype(static_cast<float>(I{} + 1))>
  NUVEC_KERNEL_INLINE explicit float16_t(I i)
      : bits(float_to_half_bits(static_cast<float>(i))) {}
  NUVEC_KERNEL_INLINE operator float() const { return half_bits_to_float(bits); }
  NUVEC_KERNEL_INLINE static float16_t from_bits(u16 b) {
    float16_t h;
    h.bits = b;
    return h;
  }
};

/// bfloat16: the top 16 bits of a float32, computed in float32.
struct bfloat16_t {
  u16 bits;
  bfloat16_t() = default;
  NUVEC_KERNEL_INLINE bfloat16_t(float f) : bits(float_to_bfloat_bits(f)) {}
  NUVEC_KERNEL_INLINE explicit bfloat16_t(double d)
      : bits(float_to_bfloat_bits(static_cast<float>(d))) {}
  template <class I, class = decltype(static_cast<float>(I{} + 1))>
  NUVEC_KERNEL_INLINE explicit bfloat16_t(I i)
      : bits(float_to_bfloat_bits(static_cast<float>(i))) {}
  NUVEC_KERNEL_INLINE operator float() const { return bfloat_bits_to_float(bits); }
  NUVEC_KERNEL_INLINE static bfloat16_t from_bits(u16 b) {
    bfloat16_t h;
    h.bits = b;
    return h;
  }
};

}  // namespace nuvec::kernels

namespace nuvec {
using kernels::bfloat16_t;
using kernels::float16_t;
}  // namespace nuvec
