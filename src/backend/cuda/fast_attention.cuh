// Device helpers shared by the attention kernels (fast_attention.cu, the
// vector kernel and the dispatch; fast_attention_tiled.cu, the tensor-core
// kernel): element conversions, the softmax's exponential, the keys a
// query row sees.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "backend/cuda/fast_attention.h"
#include "nuvec/kernels/half.h"

namespace nuvec::cuda::fastk::attn {

namespace kn = nuvec::kernels;
using u16 = uint16_t;
using u32 = uint32_t;

constexpr float kInf = __builtin_huge_valf();

// By value (std::min binds references, which device code cannot take to
// constexpr members).
__host__ __device__ constexpr int imin(int a, int b) { return a < b ? a : b; }
__host__ __device__ constexpr int imax(int a, int b) { return a > b ? a : b; }

// The storage types: kn::float16_t, kn::bfloat16_t (16 bits) or float.
template <class T>
inline constexpr bool kHalf = std::is_same_v<T, kn::float16_t>;
template <class T>
inline constexpr bool kBf16 = std::is_same_v<T, kn::bfloat16_t>;

__device__ __forceinline__ float half_to_float(u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));  // exact
  return f;
}
__device__ __forceinline__ float bf16_to_float(u16 b) {
  return __uint_as_float(u32(b) << 16);
}

// Exact widening to float32.
template <class T>
__device__ __forceinline__ float widen(T x) {
  if constexpr (kHalf<T>)
    return half_to_float(x.bits);
  else if constexpr (kBf16<T>)
    return bf16_to_float(x.bits);
  else
    return x;
}
// The two 16-bit values of a word (element 0 in the low half), widened.
template <class T>
__device__ __forceinline__ void widen2(u32 w, float& lo, float& hi) {
  if constexpr (kHalf<T>) {
    lo = half_to_float(u16(w & 0xffffu));
    hi = half_to_float(u16(w >> 16));
  } else {
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
  }
}
// One rounding to T, nearest even (NaN kept quiet, as the CPU's casts).
template <class T>
__device__ __forceinline__ T narrow(float x) {
  if constexpr (kHalf<T>)
    return T::from_bits(kn::float_to_half_bits(x));
  else if constexpr (kBf16<T>)
    return T::from_bits(kn::float_to_bfloat_bits(x));
  else
    return x;
}
// finfo(T).min: the score of a key a bool mask hides.
template <class T>
__device__ __forceinline__ float lowest() {
  if constexpr (kHalf<T>)
    return -65504.0f;
  else if constexpr (kBf16<T>)
    return __uint_as_float(0xff7f0000u);
  else
    return -3.40282347e38f;
}

__device__ __forceinline__ float ex2_approx(float y) {
  float r;
  asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(y));
  return r;
}

// e^x for the softmax (x <= 0 in use): 2^y with y = x log2(e) rounded, and
// the product's rounding error e (recovered by an fma, plus x times
// log2(e)'s own tail) restored as 2^y (1 + e ln2). So the result is within
// ex2.approx's error (about 2 ulp) plus one rounding, where 2^y alone would
// be off by |y| 2^-24 relative (7 ulp at x = -10). x below -200 becomes
// -200 (the same 0; -inf or -3e38 would make e infinite or NaN) by a max
// that keeps NaN.
__device__ __forceinline__ float exp_softmax(float x) {
  constexpr float kLog2e = 0x1.715476p+0f;
  constexpr float kLog2eLo = 0x1.4ae0c0p-26f;  // log2(e) - kLog2e
  constexpr float kLn2 = 0x1.62e430p-1f;
  asm("max.NaN.f32 %0, %0, 0fC3480000;" : "+f"(x));  // max(x, -200), NaN kept
  const float y = x * kLog2e;
  float e = __fmaf_rn(x, kLog2e, -y);
  e = __fmaf_rn(x, kLog2eLo, e);
  const float r = ex2_approx(y);
  return __fmaf_rn(r, e * kLn2, r);
}

// The weight of a running max m against the final max M: 0 for a max of
// -inf (nothing to rescale; exp(-inf - -inf) would be NaN).
__device__ __forceinline__ float rescale(float m, float M) {
  return m == -kInf ? 0.0f : exp_softmax(m - M);
}

// The keys query row i sees: [0, lim). A causal row with no visible key
// (Lq > Lk) sees all of them, every score replaced by the lowest value
// (`hidden`), as the CPU kernel.
struct RowKeys {
  int lim;
  bool hidden;
};
__host__ __device__ __forceinline__ RowKeys row_keys(int i, int Lq, int Lk,
                                                     bool causal) {
  if (!causal) return {Lk, false};
  const int64_t n = int64_t(i) + Lk - Lq + 1;
  if (n <= 0) return {Lk, true};
  return {n < Lk ? int(n) : Lk, false};
}

// Whether every [B, H, L] step and the base of a view keep 16-byte
// alignment (16-byte vector loads and cp.async), for elements of `size`.
inline bool aligned16(const void* p, const int64_t* st, int size) {
  if (reinterpret_cast<uintptr_t>(p) % 16) return false;
  for (int i = 0; i < 3; ++i)
    if ((st[i] * size) % 16) return false;
  return true;
}

// Calls f(Int<D>{}) for a head dimension D of the kernels.
template <int V>
struct Int {
  static constexpr int value = V;
};
template <class F>
void with_dim(int d, F&& f) {
  switch (d) {
    case 64:
      return f(Int<64>{});
    case 80:
      return f(Int<80>{});
    case 96:
      return f(Int<96>{});
    case 128:
      return f(Int<128>{});
    default:
      return f(Int<256>{});
  }
}

/// The tensor-core kernel (fast_attention_tiled.cu): float16 / bfloat16,
/// Lq > 8, D == Dv in {64, 80, 96, 128, 256}.
void launch_tiled(const AttentionArgs& a, cudaStream_t s);
/// Whether launch_tiled's grid holds the call.
bool tiled_fits(const AttentionArgs& a);

}  // namespace nuvec::cuda::fastk::attn
