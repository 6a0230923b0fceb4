// The tensor-core building blocks of the tiled attention kernels (the
// forward, fast_attention_tiled.cu, and the backward,
// fast_attention_backward.cu): cp.async, ldmatrix, mma.sync m16n8k16 with
// 16-bit inputs and float32 accumulators, and the base-2 softmax helpers.
#pragma once

#include <cuda_runtime.h>

#include "backend/cuda/fast_attention.cuh"

namespace nuvec::cuda::fastk::attn::tc {

__device__ __forceinline__ u32 smem_addr(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}
// 16 bytes global -> shared; `full` false writes 16 zero bytes.
__device__ __forceinline__ void cp_async16(void* dst, const void* src,
                                           bool full) {
  asm volatile(
      "cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
      "l"(src), "r"(full ? 16 : 0)
      : "memory");
}
__device__ __forceinline__ void cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most one committed group is still in flight.
__device__ __forceinline__ void cp_wait1() {
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
}
// Waits until every committed group has landed.
__device__ __forceinline__ void cp_wait0() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

__device__ __forceinline__ void ldsm_x4(u32 (&r)[4], const u16* p) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_trans(u32 (&r)[4], const u16* p) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smem_addr(p)));
}

// d += a b for a 16x16 A (row-major fragments) and a 16x8 B (column-major).
template <class T>
__device__ __forceinline__ void mma16816(float (&d)[4], const u32 (&a)[4],
                                         u32 b0, u32 b1) {
  if constexpr (kBf16<T>)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats rounded to T (nearest even) in one word, `lo` in the low half.
template <class T>
__device__ __forceinline__ u32 pack2(float lo, float hi) {
  u32 r;
  if constexpr (kBf16<T>)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// ---- The softmax in base 2 -------------------------------------------------
// Scores are kept as t = s log2(e), so a weight is one ex2: p = 2^(t - m).
// Its float32 accuracy (about 2^-18 relative for |t| < 100) is far below
// the 16-bit rounding P gets for the tensor cores (2^-9 or 2^-11).

constexpr float kLog2e = 0x1.715476p+0f;
constexpr float kMaxF = 3.40282347e38f;

__device__ __forceinline__ float ex2_ftz(float y) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return r;
}
// s log2(e), finite where s is: a lowest-value score must stay finite, so
// that a row whose every key is hidden still averages them (t - m = 0).
__device__ __forceinline__ float to_log2(float s) {
  const float t = s * kLog2e;
  return fabsf(t) == kInf && fabsf(s) != kInf ? copysignf(kMaxF, t) : t;
}

// The lane's row / column offsets of ldmatrix x4 (matrix lane / 8): A and
// V^T take matrices (rows 0-7, 8-15) x (cols 0-7, 8-15) column-block
// major; K takes them row-block major.
struct Lanes {
  int arow, acol, krow, kcol;
};
__device__ __forceinline__ Lanes lanes_of(int lane) {
  return {(lane & 7) + 8 * ((lane >> 3) & 1), 8 * (lane >> 4),
          (lane & 7) + 8 * (lane >> 4), 8 * ((lane >> 3) & 1)};
}

}  // namespace nuvec::cuda::fastk::attn::tc
