// The inputs of the kernels that write fused regions' lookup tables
// (fused.cpp): every 16-bit pattern, in order.
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/cuda.h"
#include "backend/cuda/module.h"

namespace nuvec::cuda {

namespace {

constexpr int kPatterns = 1 << 16;

__global__ void all_patterns(uint16_t* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kPatterns) out[i] = static_cast<uint16_t>(i);
}

}  // namespace

void launch_all_patterns(void* out, void* stream) {
  all_patterns<<<kPatterns / 256, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<uint16_t*>(out));
  check(cudaGetLastError(), "a table's patterns");
}

}  // namespace nuvec::cuda
