// What quantized_pack.cu and quantized_mv.cu share: the element types
// (nuvec's 16-bit types, whose conversions are the CPU's), the accumulator
// type of each (float, double for float64), index clamping and launch
// checks.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "backend/cuda/quantized_kernels.h"
#include "nuvec/core/error.h"
#include "nuvec/kernels/cast.h"
#include "nuvec/kernels/functors.h"
#include "nuvec/kernels/quant.h"

namespace nuvec::cuda::quantk {

namespace kn = nuvec::kernels;
namespace qk = nuvec::kernels::quant;
using kn::bfloat16_t;
using kn::float16_t;
using kn::u32;
using kn::u8;

// The arithmetic type of T (float for the 16-bit types).
template <class T>
using acc_t = kn::compute_t<T>;

// x as its arithmetic type, in one instruction for the 16-bit types (exact).
__device__ __forceinline__ float to_acc(float16_t x) {
  return __half2float(__ushort_as_half(x.bits));
}
__device__ __forceinline__ float to_acc(bfloat16_t x) { return __uint_as_float(u32(x.bits) << 16); }
__device__ __forceinline__ float to_acc(float x) { return x; }
__device__ __forceinline__ double to_acc(double x) { return x; }

// v rounded to T and back: T's arithmetic emulated in its compute type.
template <class T>
__device__ __forceinline__ acc_t<T> round_to(acc_t<T> v) {
  return acc_t<T>(T(v));
}

// The matrix item i reads: idx[i] clamped, or i (one matrix: 0).
__device__ __forceinline__ int64_t pick(const uint32_t* idx, int64_t i, int64_t count) {
  int64_t m = idx ? int64_t(idx[i]) : (count == 1 ? 0 : i);
  return m < count ? m : count - 1;
}

inline void check_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    (Error(ErrorKind::backend,
           std::string("CUDA launch of ") + what + " failed: " + cudaGetErrorString(e)))
        .raise();
}

// Whether p is aligned to n bytes (n a power of two).
inline bool aligned(const void* p, uintptr_t n) { return (reinterpret_cast<uintptr_t>(p) & (n - 1)) == 0; }

[[noreturn]] inline void unsupported(const std::string& what) {
  (Error(ErrorKind::backend, what)).raise();
}

// Calls f(T{}) with the element type of dtype t (the floating ones).
template <class F>
void with_type(DType t, const char* what, F&& f) {
  if (t == float32) f(float{});
  else if (t == float16) f(float16_t{});
  else if (t == bfloat16) f(bfloat16_t{});
  else if (t == float64) f(double{});
  else unsupported(std::string("no GPU kernel for ") + what + " on " + std::string(dtype_name(t)));
}

// The tensor-core few-row product (quantized_mma.cu) where it takes `a`
// (transposed 4-bit affine weights, 16-bit x) and NUVEC_GPU_QMMA=1:
// launched, true; else false. Which kernel runs depends on the format,
// dtype and shape only (and the setting, fixed for the process).
bool qmma(const MvArgs& a, cudaStream_t s);

}  // namespace nuvec::cuda::quantk
