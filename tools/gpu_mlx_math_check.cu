// Exhaustive check that kernels/mlx_math.h gives the same bits on the GPU
// as on the CPU: MlxExp, MlxErf and MlxErfInv over every float32 input
// (and every float16 and bfloat16 one). Never needed by the build or tests.
//
// Build and run (flags as cmake/cuda.cmake and the CPU build):
//   nvcc -std=c++20 -O2 -arch=sm_90 --fmad=false --ftz=false --prec-div=true \
//     --prec-sqrt=true -Xcompiler -ffp-contract=off,-fno-math-errno,-fopenmp \
//     -Iinclude tools/gpu_mlx_math_check.cu -o /tmp/gpu_mlx_math_check
//   /tmp/gpu_mlx_math_check
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "nuvec/kernels/mlx_math.h"

namespace k = nuvec::kernels;

namespace {

template <class F, class T>
__global__ void run(uint64_t base, uint32_t n, T* out) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if constexpr (sizeof(T) == 4) {
    out[i] = F{}(k::bit_cast<T>(static_cast<uint32_t>(base + i)));
  } else {
    out[i] = F{}(k::bit_cast<T>(static_cast<unsigned short>(base + i)));
  }
}

template <class T>
uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

// NaNs compare as equal whatever their payload.
template <class T>
bool same(T a, T b) {
  float fa = float(a), fb = float(b);
  if (fa != fa && fb != fb) return true;
  return bits_of(a) == bits_of(b);
}

template <class F, class T>
void check(const char* name, uint64_t count) {
  const uint32_t chunk = 1u << 26;
  std::vector<T> host(chunk);
  T* dev = nullptr;
  cudaMalloc(&dev, chunk * sizeof(T));
  uint64_t differ = 0;
  for (uint64_t base = 0; base < count; base += chunk) {
    uint32_t n =
        static_cast<uint32_t>(count - base < chunk ? count - base : chunk);
    run<F, T><<<(n + 255) / 256, 256>>>(base, n, dev);
    cudaMemcpy(host.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost);
    uint64_t local = 0;
#pragma omp parallel for reduction(+ : local)
    for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) {
      T x;
      if constexpr (sizeof(T) == 4) {
        x = k::bit_cast<T>(static_cast<uint32_t>(base + i));
      } else {
        x = k::bit_cast<T>(static_cast<unsigned short>(base + i));
      }
      if (!same(F{}(x), host[i])) ++local;
    }
    differ += local;
  }
  cudaFree(dev);
  std::printf("%-22s %llu inputs, %llu differ between CPU and GPU\n", name,
              (unsigned long long)count, (unsigned long long)differ);
}

}  // namespace

int main() {
  check<k::MlxExp, float>("MlxExp float32", 1ull << 32);
  check<k::MlxErf, float>("MlxErf float32", 1ull << 32);
  check<k::MlxErfInv, float>("MlxErfInv float32", 1ull << 32);
  check<k::MlxExp, k::float16_t>("MlxExp float16", 1ull << 16);
  check<k::MlxErf, k::float16_t>("MlxErf float16", 1ull << 16);
  check<k::MlxErfInv, k::float16_t>("MlxErfInv float16", 1ull << 16);
  check<k::MlxExp, k::bfloat16_t>("MlxExp bfloat16", 1ull << 16);
  check<k::MlxErf, k::bfloat16_t>("MlxErf bfloat16", 1ull << 16);
  check<k::MlxErfInv, k::bfloat16_t>("MlxErfInv bfloat16", 1ull << 16);
  return 0;
}
