// The fixed order of a GPU reduction over one row by a block of
// rows::kThreads threads, shared by the Reduce kernel
// (src/backend/cuda/reduce.cu) and the row kernels compile generates for
// FusedReduce steps (src/compile/emit_cuda_rows.cpp), so both give the same
// bits. Element c of a row goes to thread (c / 4) % kThreads, accumulator
// c % 4, in increasing c; a thread's four accumulators fold as ((0, 1),
// (2, 3)); a warp's threads by shuffles (offsets 16, 8, 4, 2, 1); the
// warps' results by the first warp the same way. The order depends only
// on the row's length, never on its layout (nor on how many threads play
// those kThreads: compile's row kernels give a short row one warp).
#pragma once

#include "config.h"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace nuvec::kernels::rows {

constexpr int kThreads = 256;
constexpr int kPack = 4;                    // consecutive elements of one thread
constexpr int kStride = kPack * kThreads;   // between a thread's packs

struct AllOf {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const { return A(a && b); }
};
struct AnyOf {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const { return A(a || b); }
};

// The unsigned word of A's size.
template <int Bytes> struct Word;
template <> struct Word<1> { using type = unsigned char; };
template <> struct Word<2> { using type = unsigned short; };
template <> struct Word<4> { using type = unsigned int; };
template <> struct Word<8> { using type = unsigned long long; };

// `v` of lane (this lane + offset), moved as a 64-bit word.
template <class A>
__device__ __forceinline__ A shuffle_down(const A& v, int offset) {
  static_assert(sizeof(A) <= 8, "accumulators of at most 8 bytes");
  using W = typename Word<sizeof(A)>::type;
  unsigned long long bits = bit_cast<W>(v);
  bits = __shfl_down_sync(0xffffffffu, bits, offset);
  return bit_cast<A>(static_cast<W>(bits));
}

// `v` of lane `from`, moved as a 64-bit word.
template <class A>
__device__ __forceinline__ A shuffle_from(const A& v, int from) {
  static_assert(sizeof(A) <= 8, "values of at most 8 bytes");
  using W = typename Word<sizeof(A)>::type;
  unsigned long long bits = bit_cast<W>(v);
  bits = __shfl_sync(0xffffffffu, bits, from);
  return bit_cast<A>(static_cast<W>(bits));
}

// `a` combined with `b` where each may be absent.
template <class A, class C>
__device__ __forceinline__ void merge(A& a, bool& have, const A& b, bool b_have, C c) {
  if (b_have) a = have ? c(a, b) : b;
  have = have || b_have;
}

// Folds the warp's (acc, have) pairs into lane 0's.
template <class A, class C>
__device__ __forceinline__ void warp_fold(A& acc, bool& have, C c) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    A other = shuffle_down(acc, offset);
    bool other_have = __shfl_down_sync(0xffffffffu, have, offset);
    merge(acc, have, other, other_have, c);
  }
}

/// A thread's four accumulators.
template <class A>
struct Acc4 {
  A part[kPack];
  bool have[kPack] = {false, false, false, false};
  template <class C>
  __device__ __forceinline__ void add(int k, A e, C c) {
    part[k] = have[k] ? c(part[k], e) : e;
    have[k] = true;
  }
  template <class C>
  __device__ __forceinline__ void total(A& acc, bool& h, C c) const {
    A lo = part[0], hi = part[2];
    bool hl = have[0], hh = have[2];
    merge(lo, hl, part[1], have[1], c);
    merge(hi, hh, part[3], have[3], c);
    acc = lo;
    h = hl;
    merge(acc, h, hi, hh, c);
  }
};

/// The block's (acc, have) pairs folded; thread 0 holds the result.
/// `values` and `valid` are shared arrays of kThreads / 32 entries.
template <class A, class C>
__device__ __forceinline__ void block_fold(A& acc, bool& have, C c, A* values, bool* valid) {
  const int t = threadIdx.x;
  warp_fold(acc, have, c);
  if (t % 32 == 0) {
    values[t / 32] = acc;
    valid[t / 32] = have;
  }
  __syncthreads();
  if (t < 32) {
    have = t < kThreads / 32 && valid[t];
    acc = have ? values[t] : A();
    warp_fold(acc, have, c);
  }
}

}  // namespace nuvec::kernels::rows

#endif
