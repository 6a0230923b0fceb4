// Lookup tables for fused regions of one 16-bit input (fused.cpp): every
// input bit pattern's result is computed once by the region's own
// generated kernel, so a lookup gives the region's bits; here are the
// kernel that writes the 65536 patterns and the one that looks them up.
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

// Eight outputs of one 16-byte pack of inputs.
template <class Out>
struct Eight;
template <>
struct Eight<uint16_t> {
  using Word = uint4;
};
template <>
struct Eight<uint8_t> {
  using Word = uint2;
};

template <class Out>
__device__ __forceinline__ typename Eight<Out>::Word look_up(const Out* t, uint4 v) {
  uint32_t w[4] = {v.x, v.y, v.z, v.w};
  Out r[8];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    r[2 * j] = t[w[j] & 0xffffu];
    r[2 * j + 1] = t[w[j] >> 16];
  }
  typename Eight<Out>::Word o;
  static_assert(sizeof o == sizeof r);
  memcpy(&o, r, sizeof o);
  return o;
}

// The table is staged in shared memory (random reads there cost a few bank
// conflicts; from L1 they would cost a transaction per distinct line).
// Each thread keeps two packs in flight.
template <class Out>
__global__ void table_lookup(const uint16_t* __restrict__ in, Out* __restrict__ out,
                             const Out* __restrict__ table, long long n) {
  extern __shared__ uint4 staged[];
  const uint4* src = reinterpret_cast<const uint4*>(table);
  for (int i = threadIdx.x; i < kPatterns * int(sizeof(Out)) / 16; i += blockDim.x) staged[i] = src[i];
  __syncthreads();
  const Out* t = reinterpret_cast<const Out*>(staged);
  using Word = typename Eight<Out>::Word;
  const uint4* in8 = reinterpret_cast<const uint4*>(in);
  Word* out8 = reinterpret_cast<Word*>(out);
  const long long packs = n / 8;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; p + step < packs; p += 2 * step) {
    uint4 a = in8[p], b = in8[p + step];
    out8[p] = look_up(t, a);
    out8[p + step] = look_up(t, b);
  }
  if (p < packs) out8[p] = look_up(t, in8[p]);
  for (long long i = packs * 8 + static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step)
    out[i] = t[in[i]];
}

template <class Out>
void launch_lookup(const void* in, void* out, const void* table, long long n, cudaStream_t cs) {
  constexpr int kThreads = 1024;
  constexpr size_t kBytes = kPatterns * sizeof(Out);
  static const int per_sm = [] {
    check(cudaFuncSetAttribute(table_lookup<Out>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(kBytes)),
          "cudaFuncSetAttribute");
    int blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, table_lookup<Out>, kThreads, kBytes),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks > 0 ? blocks : 1;
  }();
  static const int sms = [] {
    int dev = 0, count = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    return count > 0 ? count : 1;
  }();
  long long wanted = (n / 8 + kThreads - 1) / kThreads;
  long long blocks = std::min<long long>(std::max<long long>(wanted, 1), static_cast<long long>(per_sm) * sms);
  table_lookup<Out><<<static_cast<unsigned>(blocks), kThreads, kBytes, cs>>>(
      static_cast<const uint16_t*>(in), static_cast<Out*>(out), static_cast<const Out*>(table), n);
  check(cudaGetLastError(), "a table lookup");
}

}  // namespace

void launch_all_patterns(void* out, void* stream) {
  all_patterns<<<kPatterns / 256, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<uint16_t*>(out));
  check(cudaGetLastError(), "a table's patterns");
}

void launch_table_lookup(const void* in, void* out, const void* table, int out_size, long long n,
                         void* stream) {
  auto cs = static_cast<cudaStream_t>(stream);
  if (out_size == 2) launch_lookup<uint16_t>(in, out, table, n, cs);
  else launch_lookup<uint8_t>(in, out, table, n, cs);
}

}  // namespace nuvec::cuda
