// DivMod and the arg-reductions on the GPU, with the CPU's bits.
// DivMod: the CPU's functors (FloorDivide, Remainder) element-wise.
// ArgReduce: a group of threads per output row; each thread scans part of
// the row, then the group combines pairs (value, index) in a tree. The
// combination picks the first NaN if there is one, else the first index
// holding the extremum (less_than orders the other values strictly and
// weakly), which is what the CPU's sequential scan returns, whatever the
// order of combination: ties and NaNs match it, run to run.
#include "backend/cuda/data.h"
#include "backend/cuda/elementwise.cuh"
#include "nuvec/kernels/binary.h"

namespace nuvec::cuda::data {

namespace {

using ew::Layout;

unsigned grid_for(int64_t n, int64_t per_block) {
  return static_cast<unsigned>(
      std::min<int64_t>((n + per_block - 1) / per_block, 1 << 20));
}

template <class T>
__global__ void divmod_kernel(const T* a, const T* b, T* q, T* r, int64_t n,
                              Layout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += step) {
    T x = a[ew::at(l, 0, i)], y = b[ew::at(l, 1, i)];
    q[i] = kernels::FloorDivide{}(x, y);
    r[i] = kernels::Remainder{}(x, y);
  }
}

// Whether (b, ib) replaces (a, ia) as the arg-extremum.
template <bool is_max, class T>
__device__ __forceinline__ bool replaces(T a, uint32_t ia, T b, uint32_t ib) {
  bool na = kernels::any_nan(a), nb = kernels::any_nan(b);
  if (na || nb) return nb && (!na || ib < ia);
  if (is_max ? kernels::less_than(a, b) : kernels::less_than(b, a)) return true;
  if (is_max ? kernels::less_than(b, a) : kernels::less_than(a, b))
    return false;
  return ib < ia;
}

// One thread's part of a row: elements k0, k0 + step, ... below k1.
template <bool is_max, class T>
__device__ __forceinline__ void scan_part(const T* row, int k0, int k1, int step, int64_t stride, bool& have,
                                          T& best, uint32_t& bi) {
  for (int k = k0; k < k1; k += step) {
    T v = row[k * stride];
    if (!have || replaces<is_max>(best, bi, v, static_cast<uint32_t>(k))) {
      best = v;
      bi = static_cast<uint32_t>(k);
    }
    have = true;
  }
}

// The tree over a group of `group` threads (lane = the thread's place in
// it); the group's result ends in its lane 0. Every thread of the block
// calls it (it synchronizes).
template <bool is_max, class T>
__device__ __forceinline__ void combine_group(T* values, uint32_t* index, bool* valid, int t, int lane,
                                              int group) {
  for (int half = group / 2; half > 0; half >>= 1) {
    if (lane < half && valid[t + half] &&
        (!valid[t] || replaces<is_max>(values[t], index[t], values[t + half], index[t + half]))) {
      values[t] = values[t + half];
      index[t] = index[t + half];
      valid[t] = true;
    }
    __syncthreads();
  }
}

// Operand 0 of `kept` walks the output rows (x's offset included); a row
// is `len` elements `stride` apart. `group` threads per row (a power of two
// dividing kThreads).
template <bool is_max, class T>
__global__ void arg_reduce_kernel(const T* x, uint32_t* o, int64_t rows,
                                  Layout kept, int len, int64_t stride,
                                  int group) {
  // Raw storage: complex64_t has a constructor, which __shared__ forbids.
  __shared__ alignas(8) unsigned char storage[kThreads * sizeof(T)];
  T* values = reinterpret_cast<T*>(storage);
  __shared__ uint32_t index[kThreads];
  __shared__ bool valid[kThreads];
  const int t = threadIdx.x, lane = t % group;
  const int64_t per_block = kThreads / group;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * per_block; base < rows;
       base += static_cast<int64_t>(gridDim.x) * per_block) {
    int64_t r = base + t / group;
    bool have = false;
    T best{};
    uint32_t bi = 0;
    if (r < rows) scan_part<is_max>(x + ew::at(kept, 0, r), lane, len, group, stride, have, best, bi);
    values[t] = best;
    index[t] = bi;
    valid[t] = have;
    __syncthreads();
    combine_group<is_max>(values, index, valid, t, lane, group);
    if (lane == 0 && r < rows) o[r] = index[t];
    __syncthreads();
  }
}

// Long rows of few outputs (greedy sampling over a vocabulary): each row in
// `parts` chunks, one block per chunk, the chunks' (value, index) pairs
// then combined per row. replaces() is a total order with ties broken by
// index, so the split returns the same index as one block's scan.
template <bool is_max, class T>
__global__ void arg_partial_kernel(const T* x, T* pv, uint32_t* pi, int64_t rows, Layout kept, int len,
                                   int64_t stride, int parts, int chunk) {
  __shared__ alignas(8) unsigned char storage[kThreads * sizeof(T)];
  T* values = reinterpret_cast<T*>(storage);
  __shared__ uint32_t index[kThreads];
  __shared__ bool valid[kThreads];
  const int t = threadIdx.x;
  const int64_t r = blockIdx.x / parts;
  const int part = static_cast<int>(blockIdx.x % parts);
  const int k0 = part * chunk, k1 = min(len, k0 + chunk);
  const T* row = x + ew::at(kept, 0, r);
  bool have = false;
  T best{};
  uint32_t bi = 0;
  scan_part<is_max>(row, k0 + t, k1, kThreads, stride, have, best, bi);
  values[t] = best;
  index[t] = bi;
  valid[t] = have;
  __syncthreads();
  combine_group<is_max>(values, index, valid, t, t, kThreads);
  if (t == 0) {
    pv[blockIdx.x] = values[0];
    pi[blockIdx.x] = index[0];
  }
}

// One thread per row folds its parts in order (every part is non-empty).
template <bool is_max, class T>
__global__ void arg_combine_kernel(const T* pv, const uint32_t* pi, uint32_t* o, int64_t rows, int parts) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  T best = pv[r * parts];
  uint32_t bi = pi[r * parts];
  for (int p = 1; p < parts; ++p)
    if (replaces<is_max>(best, bi, pv[r * parts + p], pi[r * parts + p])) {
      best = pv[r * parts + p];
      bi = pi[r * parts + p];
    }
  o[r] = bi;
}

}  // namespace

void divmod(const Array& a, const Array& b, Array& quotient, Array& remainder,
            cudaStream_t s) {
  int64_t n = quotient.size();
  Layout l = ew::layout_of({&a, &b}, quotient.shape());
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_invocable_v<kernels::FloorDivide, T, T>) {
      if (n > 0)
        divmod_kernel<T><<<grid_for(n, kThreads), kThreads, 0, s>>>(
            ew::dev<T>(a), ew::dev<T>(b), ew::dev_out<T>(quotient),
            ew::dev_out<T>(remainder), n, l);
      ew::check_launch("DivMod");
    } else {
      ew::no_kernel("DivMod", a.dtype());
    }
  });
}

void arg_reduce(const ArgReduce& p, const Array& x, Array& out,
                cudaStream_t s, Stream st) {
  int64_t rows = out.size();
  if (rows == 0) return;
  const int axis = p.axis();
  Shape kept = x.shape();
  Strides kst = x.strides();
  kept.erase(kept.begin() + axis);
  kst.erase(kst.begin() + axis);
  Layout l = layout1(kept, kst, x.desc()->offset);
  const int len = x.shape()[axis];
  const int64_t stride = x.strides()[axis];
  // Long rows get a whole block, short ones a warp (8 rows per block).
  const int group = len >= 4096 ? kThreads : 32;
  const unsigned grid = grid_for(rows, kThreads / group);
  const bool is_max = p.type() == ArgReduce::Type::argmax;
  // Few long rows: split each row over blocks (chunks of 4096 elements).
  constexpr int kChunk = 4096;
  if (len >= 4 * kChunk && rows <= 64) {
    const int parts = (len + kChunk - 1) / kChunk;
    dispatch_dtype(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Scratch pv(static_cast<size_t>(rows) * parts * sizeof(T), st);
      Scratch pi(static_cast<size_t>(rows) * parts * sizeof(uint32_t), st);
      const unsigned blocks = static_cast<unsigned>(rows * parts);
      const unsigned rgrid = static_cast<unsigned>((rows + kThreads - 1) / kThreads);
      if (is_max) {
        arg_partial_kernel<true, T><<<blocks, kThreads, 0, s>>>(ew::dev<T>(x), pv.as<T>(), pi.as<uint32_t>(), rows,
                                                               l, len, stride, parts, kChunk);
        arg_combine_kernel<true, T><<<rgrid, kThreads, 0, s>>>(pv.as<T>(), pi.as<uint32_t>(),
                                                              ew::dev_out<uint32_t>(out), rows, parts);
      } else {
        arg_partial_kernel<false, T><<<blocks, kThreads, 0, s>>>(ew::dev<T>(x), pv.as<T>(), pi.as<uint32_t>(), rows,
                                                                l, len, stride, parts, kChunk);
        arg_combine_kernel<false, T><<<rgrid, kThreads, 0, s>>>(pv.as<T>(), pi.as<uint32_t>(),
                                                               ew::dev_out<uint32_t>(out), rows, parts);
      }
    });
    ew::check_launch("ArgReduce");
    return;
  }
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = ew::dev<T>(x);
    uint32_t* dst = ew::dev_out<uint32_t>(out);
    if (is_max)
      arg_reduce_kernel<true, T>
          <<<grid, kThreads, 0, s>>>(src, dst, rows, l, len, stride, group);
    else
      arg_reduce_kernel<false, T>
          <<<grid, kThreads, 0, s>>>(src, dst, rows, l, len, stride, group);
  });
  ew::check_launch("ArgReduce");
}

}  // namespace nuvec::cuda::data
