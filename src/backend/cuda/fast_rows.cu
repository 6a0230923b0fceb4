// Row-wise kernels of the fast primitives (fast_kernels.h): RMSNorm,
// AddRMSNorm, LayerNorm, softmax, logsumexp, cross entropy and RoPE.
//
// Layout. A row is cut into chunks of V = 16 / sizeof(T) elements (16
// bytes); a group of TPR threads owns a row, thread lt the chunks lt,
// lt + TPR, lt + 2 TPR, ... (coalesced 16-byte accesses). A thread holds
// 16 elements at once (K = 4 chunks of float32, 2 of the 16-bit types),
// as floats, within a 64-register budget (1024 resident threads per SM).
// The configuration depends on n and the dtype only (C = chunks per row):
//   C <= 32: one warp per row, one chunk a thread (4 rows per block);
//   C <= 32 K, 64 K, ..., 1024 K: 32 (4 rows per block), 64 (2), 128, 256,
//   512, 1024 threads, K chunks each, so n <= 16384 for every dtype. The
//   row stays in registers (read once, written once) and the statistics
//   are the CPU's two-pass definitions (max, then the sum of exp(x - max);
//   the mean, then the mean of squared deviations). On the 16-byte path
//   each thread copies its chunks of its next row into its own shared-
//   memory slots (cp.async) while it computes the current one, under a
//   grid of resident blocks, so loads stay in flight through the
//   reductions (where the slots fit in 32 KiB of static shared memory:
//   not for float32 rows over 8192, 4096 for AddRMSNorm, nor 16-bit
//   AddRMSNorm rows over 8192).
//   Longer rows: a block of 256 threads per row walks it K chunks a thread
//   at a time, the next batch copied in while one is computed; the norms
//   read the row again for each pass (2 or 3), while softmax, logsumexp
//   and cross entropy keep an online (max, sum) per thread, rescaled when
//   a batch raises the max (logsumexp and cross entropy read the row
//   once, softmax twice).
//
// Determinism. A thread folds its elements in chunk order, element order
// within a chunk, into one float32 accumulator; the group combines its
// threads by an xor butterfly within each warp (lane 0's result taken) and
// then the warps' results in order, through shared memory. No atomics. So
// a row's bits are a function of n and the dtype alone: not of `rows`, the
// grid, the other rows of the block, or of alignment: the 16-byte path
// (n % V == 0 and every pointer 16-byte aligned, as dense buffers from the
// allocator are) and the elementwise path access the same chunks and fold
// them in the same order; elements past the row's end enter the folds as
// +0 (sums of non-negative terms, or of values from +0 on, which never
// reach -0) or are masked out. They are not the CPU's bits (another
// summation order; the streaming kernels' online sums also round
// differently).
//
// Arithmetic. nuvec's functors (exp, log, rsqrt, sin/cos, casts, the
// 16-bit multiply and add), with their exact fast variants where they
// apply to all of a thread's values: Small<Exp> for |x| < 87, and
// Small<Divide> for softmax's quotients (one reciprocal per row). Maxima
// by fmaxf: a NaN it skips still makes every result that depends on it
// NaN, through exp(NaN - max) in the sum.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "backend/cuda/elementwise.cuh"
#include "backend/cuda/fast_kernels.h"
#include "nuvec/kernels/functors.h"

namespace nuvec::cuda::fastk {

namespace {

namespace kn = nuvec::kernels;
using kn::u32;

constexpr float kInf = __builtin_huge_valf();

template <class T>
inline constexpr int kVec = 16 / static_cast<int>(sizeof(T));
// Chunks a thread holds at once: 16 elements.
template <class T>
inline constexpr int kChunks = 16 / kVec<T>;

template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};
template <class T>
using Chunk = Pack<T, kVec<T>>;

template <class T>
__device__ __forceinline__ float widen(T x) {
  return kn::Cast<float>{}(x);
}
template <class T>
__device__ __forceinline__ T narrow(float x) {
  return kn::Cast<T>{}(x);
}
template <class T>
__device__ __forceinline__ T zero_bits() {
  if constexpr (std::is_same_v<T, float>)
    return 0.0f;
  else
    return T::from_bits(0);
}

// Elements [i0, i0 + V) of a row of n, zero bits past its end. `vec`: the
// row is 16-byte aligned and n % V == 0, so the chunk is whole or empty.
template <class T>
__device__ __forceinline__ Chunk<T> load_chunk(const T* row, int64_t i0,
                                               int64_t n, bool vec) {
  if (vec && i0 < n) return *reinterpret_cast<const Chunk<T>*>(row + i0);
  Chunk<T> p;
#pragma unroll
  for (int v = 0; v < kVec<T>; ++v)
    p.v[v] = !vec && i0 + v < n ? row[i0 + v] : zero_bits<T>();
  return p;
}
template <class T>
__device__ __forceinline__ void store_chunk(T* row, int64_t i0, int64_t n,
                                            bool vec, const Chunk<T>& p) {
  if (vec) {
    if (i0 < n) *reinterpret_cast<Chunk<T>*>(row + i0) = p;
    return;
  }
#pragma unroll
  for (int v = 0; v < kVec<T>; ++v)
    if (i0 + v < n) row[i0 + v] = p.v[v];
}

// 16 bytes from global to shared memory (full == false: 16 zero bytes,
// nothing read), asynchronously; a thread waits for its own copies.
__device__ __forceinline__ void cp_async16(void* dst, const void* src,
                                           bool full) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s),
               "l"(src), "r"(full ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

// F (Add, Multiply) element by element in T's arithmetic; 16-bit pairs in
// one paired instruction (the scalar functor's bits, kernels/pairs.h).
template <class F, class T>
__device__ __forceinline__ Chunk<T> apply(const Chunk<T>& a,
                                          const Chunk<T>& b) {
  Chunk<T> r;
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int v = 0; v < kVec<T>; ++v) r.v[v] = F{}(a.v[v], b.v[v]);
  } else {
#pragma unroll
    for (int v = 0; v < kVec<T>; v += 2) {
      kn::Two<T> c = kn::pair_call(F{}, kn::Two<T>{a.v[v], a.v[v + 1]},
                                   kn::Two<T>{b.v[v], b.v[v + 1]});
      r.v[v] = c.a;
      r.v[v + 1] = c.b;
    }
  }
  return r;
}

// d[i] = exp(d[i]): Small<Exp> (Exp's bits) when every value is inside
// its range, else Exp (a branch per thread, not per element).
template <int N>
__device__ __forceinline__ void exp_all(float (&d)[N]) {
  using SE = kn::Small<kn::Exp>;
  u32 out = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) out |= SE::outside(d[i]);
  if (out == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) d[i] = SE{}(d[i]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) d[i] = kn::Exp{}(d[i]);
  }
}

// e[i] = e[i] / s, Divide's bits: Small<Divide> (its reciprocal shared by
// the row) when s and every nonzero e are inside its range (0 / s is then
// 0), else the IEEE division.
template <int N>
__device__ __forceinline__ void div_all(float (&e)[N], float s) {
  using SD = kn::Small<kn::Divide>;
  u32 out = SD::outside(1.0f, s);
#pragma unroll
  for (int i = 0; i < N; ++i) out |= u32(e[i] != 0.0f) & SD::outside(e[i], s);
  if (out == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) e[i] = e[i] == 0.0f ? e[i] : SD{}(e[i], s);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) e[i] = kn::Divide{}(e[i], s);
  }
}

// logsumexp's shift: the max, or 0 where it is infinite.
__device__ __forceinline__ float shift_of(float m) {
  return kn::IsInf{}(m) ? 0.0f : m;
}

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
// fmaxf skips NaN, which still makes every result that depends on it NaN
// through the sum of exp(x - max) (as the CPU's NaN max does).
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// A thread's (or group's) running max m, sum s of exp(x - shift_of(m)) and
// sum sx of x. Combining rescales each sum to the larger max (a sum of 0,
// from no finite element, stays 0: no 0 * inf).
struct Online {
  float m, s, sx;
};
struct OnlineOp {
  __device__ Online operator()(const Online& a, const Online& b) const {
    const float m = fmaxf(a.m, b.m), mt = shift_of(m);
    const float sa = a.s == 0.0f ? 0.0f : a.s * kn::Exp{}(shift_of(a.m) - mt);
    const float sb = b.s == 0.0f ? 0.0f : b.s * kn::Exp{}(shift_of(b.m) - mt);
    return {m, sa + sb, a.sx + b.sx};
  }
};

template <class A>
__device__ __forceinline__ A shuffle(const A& a, int arg, bool xor_mode) {
  static_assert(sizeof(A) % 4 == 0, "shuffled values are 32-bit words");
  constexpr int N = sizeof(A) / 4;
  u32 w[N];
  memcpy(w, &a, sizeof(A));
#pragma unroll
  for (int i = 0; i < N; ++i)
    w[i] = xor_mode ? __shfl_xor_sync(0xffffffffu, w[i], arg)
                    : __shfl_sync(0xffffffffu, w[i], arg);
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

// The combination of v over a group of TPR threads, the same bits in every
// thread: a butterfly per warp, then the warps in order (`slots`: the
// group's TPR / 32 values in shared memory; one __syncthreads, so every
// group of the block calls it together).
template <int TPR, class A, class Op>
__device__ __forceinline__ A group_all(A v, A* slots, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, shuffle(v, o, true));
  if constexpr (TPR == 32) {
    return shuffle(v, 0, false);
  } else {
    if ((threadIdx.x & 31) == 0) slots[(threadIdx.x % TPR) / 32] = v;
    __syncthreads();
    v = slots[0];
#pragma unroll
    for (int w = 1; w < TPR / 32; ++w) v = op(v, slots[w]);
    return v;
  }
}

// ---- Rows held in registers (n <= 16384) ----

template <int TPR_, int K_>
struct Cfg {
  static constexpr int TPR = TPR_;                          // threads per row
  static constexpr int K = K_;                              // chunks per thread
  static constexpr int RPB = TPR_ >= 128 ? 1 : 128 / TPR_;  // rows per block
  static constexpr int BLOCK = TPR_ * RPB;
  static constexpr int W = TPR_ / 32;              // warps per row
  static constexpr int MIN_BLOCKS = 1024 / BLOCK;  // 64 registers at most
};

// Whether the 16-byte path prefetches rows through shared memory: NS
// sources' slots in 32 KiB (static shared memory, two blocks per SM).
template <class C, bool VEC, int NS>
inline constexpr bool kPrefetch = VEC&& NS* C::BLOCK* C::K * 16 <= 32768;

// Where a group's row is for its threads: a row past the last has len 0
// (no accesses; its threads still join the group's reductions).
struct RowAt {
  int lt, g;            // thread in the group, group in the block
  int64_t r, len, off;  // row, its length (0 or n), its first element
  bool active;
  template <class C, class T>
  __device__ int64_t chunk(int k) const {  // element of the thread's chunk k
    return int64_t(lt + k * C::TPR) * kVec<T>;
  }
  // Whether element i of the thread's K * V is in the row (on the 16-byte
  // path chunks are whole or empty).
  template <class C, class T, bool VEC>
  __device__ bool has(int i) const {
    return chunk<C, T>(i / kVec<T>) + (VEC ? 0 : i % kVec<T>) < len;
  }
};

// The register kernels' driver: each group takes rows first + g, first
// striding over the grid; `op` computes a row from its chunks (p[s][k]:
// source s, chunk k). On the prefetch path a thread copies its chunks of
// its next row into its own slots once it has taken the current ones
// (the same thread reads them back: no barrier), so the next row's loads
// overlap the current row's reductions and stores; the grid is then the
// resident blocks. `aux` carries one value per row read ahead (the target
// of cross entropy).
template <class T, class C, bool VEC, class Op>
__global__ void __launch_bounds__(C::BLOCK, C::MIN_BLOCKS)
    rows_kernel(const Op op, int64_t rows, int n) {
  constexpr int NS = Op::kSources, K = C::K;
  constexpr bool kPre = kPrefetch<C, VEC, NS>;
  __shared__ Chunk<T> stage[kPre ? NS * K * C::BLOCK : 1];
  __shared__ typename Op::template Shared<C> sh;
  RowAt at;
  at.lt = threadIdx.x % C::TPR;
  at.g = threadIdx.x / C::TPR;
  const int64_t stride = int64_t(gridDim.x) * C::RPB;
  auto issue = [&](int64_t r) {
#pragma unroll
    for (int s = 0; s < NS; ++s) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int64_t i0 = at.chunk<C, T>(k);
        const bool full = r < rows && i0 < n;
        cp_async16(&stage[(s * K + k) * C::BLOCK + threadIdx.x],
                   op.src(s) + (full ? r * n + i0 : 0), full);
      }
    }
    cp_async_commit();
  };
  int64_t first = int64_t(blockIdx.x) * C::RPB;
  int aux = first < rows ? op.aux(first + at.g, rows) : 0;
  if constexpr (kPre) {
    if (first < rows) issue(first + at.g);
  }
  for (; first < rows; first += stride) {
    at.r = first + at.g;
    at.active = at.r < rows;
    at.len = at.active ? n : 0;
    at.off = at.active ? at.r * n : 0;
    const bool more = first + stride < rows;
    Chunk<T> p[NS][K];
    if constexpr (kPre) {
      cp_async_wait();
#pragma unroll
      for (int s = 0; s < NS; ++s) {
#pragma unroll
        for (int k = 0; k < K; ++k)
          p[s][k] = stage[(s * K + k) * C::BLOCK + threadIdx.x];
      }
      if (more) issue(at.r + stride);
    } else {
#pragma unroll
      for (int s = 0; s < NS; ++s) {
#pragma unroll
        for (int k = 0; k < K; ++k)
          p[s][k] =
              load_chunk(op.src(s) + at.off, at.chunk<C, T>(k), at.len, VEC);
      }
    }
    const int a = aux;
    if (more) aux = op.aux(at.r + stride, rows);
    op.template row<C, VEC>(p, a, at, sh);
    // The reduction slots are reused by the next row.
    if (C::TPR > 32 && more) __syncthreads();
  }
}

// The thread's chunks of one source as floats (`pad` past the end).
template <class T, class C, bool VEC>
__device__ __forceinline__ void to_floats(const Chunk<T> (&p)[C::K],
                                          const RowAt& at, float pad,
                                          float (&xs)[C::K * kVec<T>]) {
#pragma unroll
  for (int i = 0; i < C::K * kVec<T>; ++i)
    xs[i] = at.has<C, T, VEC>(i) ? widen(p[i / kVec<T>].v[i % kVec<T>]) : pad;
}

template <class T, class C>
__device__ __forceinline__ void load_param(const T* w, const RowAt& at,
                                           bool vec, Chunk<T> (&wk)[C::K]) {
#pragma unroll
  for (int k = 0; k < C::K; ++k)
    wk[k] = w ? load_chunk(w, at.chunk<C, T>(k), at.len, vec) : Chunk<T>{};
}

// y = round(xs * r), then * wk and + bk in T where has_w, has_b; stored at
// the thread's chunks.
template <class T, class C>
__device__ __forceinline__ void store_scaled(T* out, const RowAt& at, bool vec,
                                             const float (&xs)[C::K * kVec<T>],
                                             float r, bool has_w,
                                             const Chunk<T> (&wk)[C::K],
                                             bool has_b,
                                             const Chunk<T> (&bk)[C::K]) {
#pragma unroll
  for (int k = 0; k < C::K; ++k) {
    Chunk<T> y;
#pragma unroll
    for (int v = 0; v < kVec<T>; ++v)
      y.v[v] = narrow<T>(xs[k * kVec<T> + v] * r);
    if (has_w) y = apply<kn::Multiply>(y, wk[k]);
    if (has_b) y = apply<kn::Add>(y, bk[k]);
    store_chunk(out + at.off, at.chunk<C, T>(k), at.len, vec, y);
  }
}

template <class T, bool ADD>
struct RmsOp {
  static constexpr int kSources = ADD ? 2 : 1;
  const T *x, *res, *w;
  T *h, *out;
  float inv_n, eps;
  template <class C>
  struct Shared {
    float v[C::RPB][C::W];
  };
  __device__ const T* src(int s) const { return s == 0 ? x : res; }
  __device__ int aux(int64_t, int64_t) const { return 0; }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[kSources][C::K], int, const RowAt& at,
                      Shared<C>& sh) const {
    Chunk<T> wk[C::K];
    load_param<T, C>(w, at, VEC, wk);
    if constexpr (ADD) {
#pragma unroll
      for (int k = 0; k < C::K; ++k) {
        p[0][k] = apply<kn::Add>(p[0][k], p[1][k]);
        store_chunk(h + at.off, at.chunk<C, T>(k), at.len, VEC, p[0][k]);
      }
    }
    float xs[C::K * kVec<T>], acc = 0.0f;
    to_floats<T, C, VEC>(p[0], at, 0.0f, xs);
#pragma unroll
    for (int i = 0; i < C::K * kVec<T>; ++i) acc = acc + xs[i] * xs[i];
    const float r =
        kn::Rsqrt{}(group_all<C::TPR>(acc, sh.v[at.g], Sum{}) * inv_n + eps);
    store_scaled<T, C>(out, at, VEC, xs, r, w != nullptr, wk, false, wk);
  }
};

template <class T>
struct LayerOp {
  static constexpr int kSources = 1;
  const T *x, *w, *b;
  T* out;
  float inv_n, eps;
  template <class C>
  struct Shared {
    float v[2][C::RPB][C::W];
  };
  __device__ const T* src(int) const { return x; }
  __device__ int aux(int64_t, int64_t) const { return 0; }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[1][C::K], int, const RowAt& at,
                      Shared<C>& sh) const {
    float xs[C::K * kVec<T>], acc = 0.0f;
    to_floats<T, C, VEC>(p[0], at, 0.0f, xs);
#pragma unroll
    for (int i = 0; i < C::K * kVec<T>; ++i) acc = acc + xs[i];
    const float mu = group_all<C::TPR>(acc, sh.v[0][at.g], Sum{}) * inv_n;
    acc = 0.0f;
#pragma unroll
    for (int i = 0; i < C::K * kVec<T>; ++i) {
      xs[i] = at.has<C, T, VEC>(i) ? xs[i] - mu : 0.0f;
      acc = acc + xs[i] * xs[i];
    }
    const float r =
        kn::Rsqrt{}(group_all<C::TPR>(acc, sh.v[1][at.g], Sum{}) * inv_n + eps);
    // w and b only now (L1 hits mostly): held through the reductions they
    // would not fit in the registers.
    Chunk<T> wk[C::K], bk[C::K];
    load_param<T, C>(w, at, VEC, wk);
    load_param<T, C>(b, at, VEC, bk);
    store_scaled<T, C>(out, at, VEC, xs, r, w != nullptr, wk, b != nullptr, bk);
  }
};

// The row's max (xs: its elements, -inf past the end).
template <class T, class C, bool VEC>
__device__ __forceinline__ float max_of(const Chunk<T> (&p)[C::K],
                                        const RowAt& at,
                                        float (&xs)[C::K * kVec<T>]) {
  to_floats<T, C, VEC>(p, at, -kInf, xs);
  float m = -kInf;
#pragma unroll
  for (int i = 0; i < C::K * kVec<T>; ++i) m = fmaxf(m, xs[i]);
  return m;
}

// xs[i] = exp(xs[i] - m) (0 past the end); returns the thread's sum.
template <class T, class C, bool VEC>
__device__ __forceinline__ float exp_sum(const RowAt& at, float m,
                                         float (&xs)[C::K * kVec<T>]) {
  constexpr int N = C::K * kVec<T>;
#pragma unroll
  for (int i = 0; i < N; ++i) xs[i] = at.has<C, T, VEC>(i) ? xs[i] - m : 0.0f;
  exp_all(xs);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    xs[i] = at.has<C, T, VEC>(i) ? xs[i] : 0.0f;
    s = s + xs[i];
  }
  return s;
}

template <class T>
struct SoftmaxOp {
  static constexpr int kSources = 1;
  const T* x;
  T* out;
  template <class C>
  struct Shared {
    float v[2][C::RPB][C::W];
  };
  __device__ const T* src(int) const { return x; }
  __device__ int aux(int64_t, int64_t) const { return 0; }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[1][C::K], int, const RowAt& at,
                      Shared<C>& sh) const {
    float xs[C::K * kVec<T>];
    const float m = group_all<C::TPR>(max_of<T, C, VEC>(p[0], at, xs),
                                      sh.v[0][at.g], Max{});
    div_all(xs, group_all<C::TPR>(exp_sum<T, C, VEC>(at, m, xs), sh.v[1][at.g],
                                  Sum{}));
#pragma unroll
    for (int k = 0; k < C::K; ++k) {
      Chunk<T> y;
#pragma unroll
      for (int v = 0; v < kVec<T>; ++v) y.v[v] = narrow<T>(xs[k * kVec<T> + v]);
      store_chunk(out + at.off, at.chunk<C, T>(k), at.len, VEC, y);
    }
  }
};

template <class T>
struct LogSumExpOp {
  static constexpr int kSources = 1;
  const T* x;
  T* out;
  template <class C>
  struct Shared {
    float v[2][C::RPB][C::W];
  };
  __device__ const T* src(int) const { return x; }
  __device__ int aux(int64_t, int64_t) const { return 0; }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[1][C::K], int, const RowAt& at,
                      Shared<C>& sh) const {
    float xs[C::K * kVec<T>];
    const float m = shift_of(group_all<C::TPR>(max_of<T, C, VEC>(p[0], at, xs),
                                               sh.v[0][at.g], Max{}));
    const float s =
        group_all<C::TPR>(exp_sum<T, C, VEC>(at, m, xs), sh.v[1][at.g], Sum{});
    if (at.lt == 0 && at.active) out[at.r] = narrow<T>(kn::Log{}(s) + m);
  }
};

struct CeArgs {
  const int32_t* targets;
  float* out;
  int n;
  float smoothing, keep, inv_n;
  bool has_ignore;
  int ignore;
  __device__ float loss(float lse, float picked, float sx) const {
    if (!(smoothing > 0.0f)) return lse - picked;
    return (lse - picked * keep) - (sx * inv_n) * smoothing;
  }
  // The value of an ignored row or of one whose target is outside [0, n).
  __device__ bool skipped(int t) const {
    return (has_ignore && t == ignore) || t < 0 || t >= n;
  }
  __device__ float skipped_value(int t) const {
    return has_ignore && t == ignore ? 0.0f : __builtin_nanf("");
  }
};

template <class T>
struct CrossEntropyOp {
  static constexpr int kSources = 1;
  const T* logits;
  CeArgs a;
  template <class C>
  struct Shared {
    float v[3][C::RPB][C::W];
  };
  __device__ const T* src(int) const { return logits; }
  __device__ int aux(int64_t r, int64_t rows) const {
    return r < rows ? a.targets[r] : 0;
  }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[1][C::K], int t, const RowAt& at,
                      Shared<C>& sh) const {
    constexpr int N = C::K * kVec<T>;
    // The thread whose chunks hold the target reads its logit again (an
    // L2 hit, in flight through the reductions) and writes the loss.
    const bool skip = a.skipped(t),
               mine = at.active && !skip && (t / kVec<T>) % C::TPR == at.lt;
    const float picked = mine ? widen(logits[at.off + t]) : 0.0f;
    float xs[N], sx = 0.0f;
    const float m = shift_of(group_all<C::TPR>(max_of<T, C, VEC>(p[0], at, xs),
                                               sh.v[0][at.g], Max{}));
    const bool smooth = a.smoothing > 0.0f;
    if (smooth) {
#pragma unroll
      for (int i = 0; i < N; ++i)
        sx = sx + (at.has<C, T, VEC>(i) ? xs[i] : 0.0f);
    }
    const float s =
        group_all<C::TPR>(exp_sum<T, C, VEC>(at, m, xs), sh.v[1][at.g], Sum{});
    if (smooth) sx = group_all<C::TPR>(sx, sh.v[2][at.g], Sum{});
    if (mine)
      a.out[at.r] = a.loss(kn::Log{}(s) + m, picked, sx);
    else if (skip && at.active && at.lt == 0)
      a.out[at.r] = a.skipped_value(t);
  }
};

// ---- Longer rows: one block of kST threads per row ----

constexpr int kST = 256;
constexpr int kSW = kST / 32;
constexpr int kSMinBlocks = 1024 / kST;  // 64 registers at most

// A thread's walk over a row of n from NS sources, kChunks<T> chunks
// (16 elements) a batch: body(i, p) for each batch, i its first element,
// chunk j at i + j * kStep, p[s][j]. On the 16-byte path the next batch
// is copied into the thread's own shared-memory slots while the body runs.
template <class T, bool VEC, int NS>
struct Walk {
  static constexpr int B = kChunks<T>;
  static constexpr int64_t kStep = int64_t(kST) * kVec<T>, kJump = B * kStep;
  Chunk<T>* slots;  // [NS * B][kST] in shared memory (VEC)
  const T* src[NS];
  int64_t n;

  __device__ bool has(int64_t i, int e) const {  // element e of the batch at i
    return i + (e / kVec<T>)*kStep + (VEC ? 0 : e % kVec<T>) < n;
  }
  __device__ void issue(int64_t i) const {
#pragma unroll
    for (int s = 0; s < NS; ++s) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        const int64_t e = i + j * kStep;
        cp_async16(&slots[(s * B + j) * kST + threadIdx.x],
                   src[s] + (e < n ? e : 0), e < n);
      }
    }
    cp_async_commit();
  }
  template <class F>
  __device__ void operator()(F&& body) const {
    int64_t i = int64_t(threadIdx.x) * kVec<T>;
    if constexpr (VEC) {
      if (i < n) issue(i);
    }
    for (; i < n; i += kJump) {
      Chunk<T> p[NS][B];
      if constexpr (VEC) {
        cp_async_wait();
#pragma unroll
        for (int s = 0; s < NS; ++s) {
#pragma unroll
          for (int j = 0; j < B; ++j)
            p[s][j] = slots[(s * B + j) * kST + threadIdx.x];
        }
        if (i + kJump < n) issue(i + kJump);
      } else {
#pragma unroll
        for (int s = 0; s < NS; ++s) {
#pragma unroll
          for (int j = 0; j < B; ++j)
            p[s][j] = load_chunk(src[s], i + j * kStep, n, false);
        }
      }
      body(i, p);
    }
  }
};

// The slots of a walk over NS sources (one element on the elementwise path).
#define NUVEC_WALK_SLOTS(NS) \
  __shared__ Chunk<T> slots[VEC ? (NS)*kChunks<T> * kST : 1]

template <class T, bool ADD, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    rms_stream(const RmsOp<T, ADD> op, int64_t rows, int64_t n) {
  constexpr int V = kVec<T>, B = kChunks<T>;
  __shared__ float sh[kSW];
  NUVEC_WALK_SLOTS(ADD ? 2 : 1);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t off = r * n;
    float acc = 0.0f;
    Walk<T, VEC, ADD ? 2 : 1> first{slots, {op.x + off}, n};
    if constexpr (ADD) first.src[1] = op.res + off;
    first([&](int64_t i, auto& p) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        if constexpr (ADD) {
          p[0][j] = apply<kn::Add>(p[0][j], p[1][j]);
          store_chunk(op.h + off, i + j * first.kStep, n, VEC, p[0][j]);
        }
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float f = widen(p[0][j].v[v]);
          acc = acc + f * f;
        }
      }
    });
    // (The reduction's barrier also orders h's stores before the reads.)
    const float rr =
        kn::Rsqrt{}(group_all<kST>(acc, sh, Sum{}) * op.inv_n + op.eps);
    Walk<T, VEC, 1> second{slots, {(ADD ? op.h : op.x) + off}, n};
    second([&](int64_t i, auto& p) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        Chunk<T> y;
#pragma unroll
        for (int v = 0; v < V; ++v)
          y.v[v] = narrow<T>(widen(p[0][j].v[v]) * rr);
        const int64_t e = i + j * second.kStep;
        if (op.w) y = apply<kn::Multiply>(y, load_chunk(op.w, e, n, VEC));
        store_chunk(op.out + off, e, n, VEC, y);
      }
    });
    if (r + gridDim.x < rows) __syncthreads();
  }
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    layer_stream(const LayerOp<T> op, int64_t rows, int64_t n) {
  constexpr int V = kVec<T>, B = kChunks<T>;
  __shared__ float sh[2][kSW];
  NUVEC_WALK_SLOTS(1);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t off = r * n;
    const Walk<T, VEC, 1> walk{slots, {op.x + off}, n};
    float acc = 0.0f;
    walk([&](int64_t, auto& p) {
#pragma unroll
      for (int e = 0; e < B * V; ++e) acc = acc + widen(p[0][e / V].v[e % V]);
    });
    const float mu = group_all<kST>(acc, sh[0], Sum{}) * op.inv_n;
    acc = 0.0f;
    walk([&](int64_t i, auto& p) {
#pragma unroll
      for (int e = 0; e < B * V; ++e) {
        const float d =
            walk.has(i, e) ? widen(p[0][e / V].v[e % V]) - mu : 0.0f;
        acc = acc + d * d;
      }
    });
    const float rr =
        kn::Rsqrt{}(group_all<kST>(acc, sh[1], Sum{}) * op.inv_n + op.eps);
    walk([&](int64_t i, auto& p) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        Chunk<T> y;
#pragma unroll
        for (int v = 0; v < V; ++v)
          y.v[v] = narrow<T>((widen(p[0][j].v[v]) - mu) * rr);
        const int64_t e = i + j * walk.kStep;
        if (op.w) y = apply<kn::Multiply>(y, load_chunk(op.w, e, n, VEC));
        if (op.b) y = apply<kn::Add>(y, load_chunk(op.b, e, n, VEC));
        store_chunk(op.out + off, e, n, VEC, y);
      }
    });
    if (r + gridDim.x < rows) __syncthreads();
  }
}

// One pass over a row: each thread's Online state (its max raised a batch
// at a time, the sum rescaled then), combined over the block. `with_sum`:
// also the sum of x.
template <class T, bool VEC>
__device__ __forceinline__ Online online_row(const Walk<T, VEC, 1>& walk,
                                             bool with_sum, Online* sh) {
  constexpr int V = kVec<T>, N = kChunks<T> * kVec<T>;
  Online st{-kInf, 0.0f, 0.0f};
  walk([&](int64_t i, auto& p) {
    float xs[N], bm = -kInf;
#pragma unroll
    for (int e = 0; e < N; ++e) {
      xs[e] = walk.has(i, e) ? widen(p[0][e / V].v[e % V]) : -kInf;
      bm = fmaxf(bm, xs[e]);
    }
    if (with_sum) {
#pragma unroll
      for (int e = 0; e < N; ++e)
        st.sx = st.sx + (walk.has(i, e) ? xs[e] : 0.0f);
    }
    if (bm > st.m) {
      if (st.s != 0.0f) st.s = st.s * kn::Exp{}(shift_of(st.m) - shift_of(bm));
      st.m = bm;
    }
    const float mt = shift_of(st.m);
#pragma unroll
    for (int e = 0; e < N; ++e) xs[e] = walk.has(i, e) ? xs[e] - mt : 0.0f;
    exp_all(xs);
#pragma unroll
    for (int e = 0; e < N; ++e) st.s = st.s + (walk.has(i, e) ? xs[e] : 0.0f);
  });
  return group_all<kST>(st, sh, OnlineOp{});
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    softmax_stream(const SoftmaxOp<T> op, int64_t rows, int64_t n) {
  constexpr int V = kVec<T>, N = kChunks<T> * kVec<T>;
  __shared__ Online sh[kSW];
  NUVEC_WALK_SLOTS(1);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t off = r * n;
    const Walk<T, VEC, 1> walk{slots, {op.x + off}, n};
    const Online st = online_row(walk, false, sh);
    // A non-finite max makes every output NaN, as exp(x - max) does on
    // the CPU (inf - inf, or a NaN sum).
    const float m = st.m, s = kn::IsFinite{}(m) ? st.s : __builtin_nanf("");
    walk([&](int64_t i, auto& p) {
      float xs[N];
#pragma unroll
      for (int e = 0; e < N; ++e)
        xs[e] = walk.has(i, e) ? widen(p[0][e / V].v[e % V]) - m : 0.0f;
      exp_all(xs);
      div_all(xs, s);
#pragma unroll
      for (int j = 0; j < kChunks<T>; ++j) {
        Chunk<T> y;
#pragma unroll
        for (int v = 0; v < V; ++v) y.v[v] = narrow<T>(xs[j * V + v]);
        store_chunk(op.out + off, i + j * walk.kStep, n, VEC, y);
      }
    });
    if (r + gridDim.x < rows) __syncthreads();
  }
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    logsumexp_stream(const LogSumExpOp<T> op, int64_t rows, int64_t n) {
  __shared__ Online sh[kSW];
  NUVEC_WALK_SLOTS(1);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const Walk<T, VEC, 1> walk{slots, {op.x + r * n}, n};
    const Online st = online_row(walk, false, sh);
    if (threadIdx.x == 0)
      op.out[r] = narrow<T>(kn::Log{}(st.s) + shift_of(st.m));
    if (r + gridDim.x < rows) __syncthreads();
  }
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    ce_stream(const CrossEntropyOp<T> op, int64_t rows, int64_t n) {
  __shared__ Online sh[kSW];
  NUVEC_WALK_SLOTS(1);
  const CeArgs& a = op.a;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int t = a.targets[r];
    // A skipped row touches no shared memory (the whole block skips it).
    if (a.skipped(t)) {
      if (threadIdx.x == 0) a.out[r] = a.skipped_value(t);
      continue;
    }
    const T* row = op.logits + r * n;
    // The thread whose chunks hold the target reads its logit (in flight
    // through the pass) and writes the loss.
    const bool mine = (t / kVec<T>) % kST == int(threadIdx.x);
    const float picked = mine ? widen(row[t]) : 0.0f;
    const Online st =
        online_row(Walk<T, VEC, 1>{slots, {row}, n}, a.smoothing > 0.0f, sh);
    if (mine)
      a.out[r] = a.loss(kn::Log{}(st.s) + shift_of(st.m), picked, st.sx);
    if (r + gridDim.x < rows) __syncthreads();
  }
}

#undef NUVEC_WALK_SLOTS

// RoPE: elementwise, so any grouping gives the CPU's bits. A unit is G
// pairs (16 bytes of x when the layout allows, else 1 pair) or `cw`
// copied features; a row's units are spread over tpr threads (a power of
// two up to the block's 256), several rows per block. The inverse
// frequencies go to shared memory once per block (`table`) or are
// computed per pair (very wide rows).
__device__ __forceinline__ float inv_freq(int i, const float* freqs,
                                          float coef) {
  return freqs ? kn::Reciprocal{}(freqs[i]) : kn::Exp{}(float(-i) * coef);
}

// a / b and a % b, in 32 bits when both fit (64-bit division is slow).
__device__ __forceinline__ int64_t div64(int64_t a, int64_t b) {
  return ((a | b) >> 31) == 0 ? int64_t(u32(a) / u32(b)) : a / b;
}
__device__ __forceinline__ int64_t mod64(int64_t a, int64_t b) {
  return ((a | b) >> 31) == 0 ? int64_t(u32(a) % u32(b)) : a % b;
}

constexpr int kRopeBlock = 256;

template <class T, int G, bool TRAD>
__global__ void __launch_bounds__(kRopeBlock)
    rope_rows(const T* x, T* out, const int32_t* offsets, int n_off,
              const float* freqs, int64_t rows, int64_t per_item, int64_t t_len,
              int d, int half, int cw, int tpr, float coef, float scale,
              bool forward, bool table) {
  extern __shared__ float inv_tab[];
  if (table) {
    for (int i = threadIdx.x; i < half; i += blockDim.x)
      inv_tab[i] = inv_freq(i, freqs, coef);
    __syncthreads();
  }
  const int rpb = kRopeBlock / tpr, lt = threadIdx.x % tpr;
  const int pair_units = half / G, units = pair_units + (d - 2 * half) / cw;
  for (int64_t r = int64_t(blockIdx.x) * rpb + threadIdx.x / tpr; r < rows;
       r += int64_t(gridDim.x) * rpb) {
    const int64_t item = div64(r, per_item), t = mod64(r, t_len);
    const float pos =
        (float(t) + float(offsets[n_off == 1 ? 0 : item])) * scale;
    const T* xr = x + r * d;
    T* o = out + r * d;
    for (int u = lt; u < units; u += tpr) {
      if (u >= pair_units) {
        const int j = 2 * half + (u - pair_units) * cw;
        if (cw == 1)
          o[j] = xr[j];
        else
          *reinterpret_cast<Chunk<T>*>(o + j) =
              *reinterpret_cast<const Chunk<T>*>(xr + j);
        continue;
      }
      const int i = u * G;
      Pack<T, G> a, b;  // first and second members of the G pairs
      if constexpr (TRAD) {
        Pack<T, 2 * G> p;
        if constexpr (G == 1)
          p.v[0] = xr[2 * i], p.v[1] = xr[2 * i + 1];
        else
          p = *reinterpret_cast<const Pack<T, 2 * G>*>(xr + 2 * i);
#pragma unroll
        for (int k = 0; k < G; ++k)
          a.v[k] = p.v[2 * k], b.v[k] = p.v[2 * k + 1];
      } else {
        a = *reinterpret_cast<const Pack<T, G>*>(xr + i);
        b = *reinterpret_cast<const Pack<T, G>*>(xr + half + i);
      }
#pragma unroll
      for (int k = 0; k < G; ++k) {
        const float th =
            pos * (table ? inv_tab[i + k] : inv_freq(i + k, freqs, coef));
        const kn::SinCosOf<float> sc = kn::SinCos{}(th);
        const float sn = forward ? sc.sin : kn::Negative{}(sc.sin);
        const float x1 = widen(a.v[k]), x2 = widen(b.v[k]);
        a.v[k] = narrow<T>(x1 * sc.cos - x2 * sn);
        b.v[k] = narrow<T>(x1 * sn + x2 * sc.cos);
      }
      if constexpr (TRAD) {
        Pack<T, 2 * G> p;
#pragma unroll
        for (int k = 0; k < G; ++k)
          p.v[2 * k] = a.v[k], p.v[2 * k + 1] = b.v[k];
        if constexpr (G == 1)
          o[2 * i] = p.v[0], o[2 * i + 1] = p.v[1];
        else
          *reinterpret_cast<Pack<T, 2 * G>*>(o + 2 * i) = p;
      } else {
        *reinterpret_cast<Pack<T, G>*>(o + i) = a;
        *reinterpret_cast<Pack<T, G>*>(o + half + i) = b;
      }
    }
  }
}

// ---- Host side ----

template <class T>
struct Tag {
  using type = T;
};

template <class F>
void with_type(DType t, const char* what, F&& f) {
  if (t == float32)
    f(Tag<float>{});
  else if (t == float16)
    f(Tag<kn::float16_t>{});
  else if (t == bfloat16)
    f(Tag<kn::bfloat16_t>{});
  else
    ew::no_kernel(what, t);
}

// Calls f(Cfg) with the register configuration of rows of n elements of
// T; false when the rows need the streaming kernels.
template <class T, class F>
bool with_cfg(int n, F&& f) {
  constexpr int K = kChunks<T>;
  const int64_t c = (int64_t(n) + kVec<T> - 1) / kVec<T>;
  if (c <= 32)
    f(Cfg<32, 1>{});
  else if (c <= 32 * K)
    f(Cfg<32, K>{});
  else if (c <= 64 * K)
    f(Cfg<64, K>{});
  else if (c <= 128 * K)
    f(Cfg<128, K>{});
  else if (c <= 256 * K)
    f(Cfg<256, K>{});
  else if (c <= 512 * K)
    f(Cfg<512, K>{});
  else if (c <= 1024 * K)
    f(Cfg<1024, K>{});
  else
    return false;
  return true;
}

inline unsigned grid_of(int64_t blocks) {
  return static_cast<unsigned>(std::min<int64_t>(blocks, 0x7fffffff));
}

inline int sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
          cudaSuccess) {
    cudaGetLastError();  // not a launch error: fall back to one block per row
    return 0;
  }
  return sms;
}

template <class Kernel>
int blocks_per_sm(Kernel kernel, int block) {
  int b = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, block, 0) !=
      cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return b;
}

inline bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// The 16-byte path: n a (nonzero) multiple of V, every pointer aligned.
template <class T>
bool vec_ok(int64_t n, std::initializer_list<const void*> ptrs) {
  if (n == 0 || n % kVec<T> != 0) return false;
  for (const void* p : ptrs)
    if (!aligned16(p)) return false;
  return true;
}

inline float inv_len(int n) {
  return n > 0 ? kn::Cast<float>{}(1.0 / double(n)) : 0.0f;
}

// Launches Op over rows of n: rows_kernel with the configuration of n, or
// the streaming kernel `stream` (called with the VEC tag: it launches).
// The prefetching register kernels get the resident blocks only (each
// walks several rows); the others one block per group of rows.
template <class T, class Op, class S>
void launch_rows(const Op& op, int64_t rows, int n, bool vec, cudaStream_t s,
                 S&& stream) {
  auto go = [&](auto v) {
    constexpr bool VEC = decltype(v)::value;
    const bool reg = with_cfg<T>(n, [&](auto c) {
      using C = decltype(c);
      auto kernel = rows_kernel<T, C, VEC, Op>;
      int64_t grid = (rows + C::RPB - 1) / C::RPB;
      if constexpr (kPrefetch<C, VEC, Op::kSources>) {
        static const int per_sm = blocks_per_sm(kernel, C::BLOCK);
        const int64_t resident = int64_t(per_sm) * sm_count();
        if (resident > 0) grid = std::min(grid, resident);
      }
      kernel<<<grid_of(grid), C::BLOCK, 0, s>>>(op, rows, n);
    });
    if (!reg) stream(v);
  };
  if (vec)
    go(std::true_type{});
  else
    go(std::false_type{});
}

template <bool ADD>
void launch_rms(DType t, const void* x, const void* res, const void* w, void* h,
                void* out, int64_t rows, int n, float eps, cudaStream_t s) {
  with_type(t, ADD ? "AddRMSNorm" : "RMSNorm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const RmsOp<T, ADD> op{static_cast<const T*>(x),
                           static_cast<const T*>(res),
                           static_cast<const T*>(w),
                           static_cast<T*>(h),
                           static_cast<T*>(out),
                           inv_len(n),
                           eps};
    launch_rows<T>(op, rows, n, vec_ok<T>(n, {x, res, w, h, out}), s,
                   [&](auto v) {
                     rms_stream<T, ADD, decltype(v)::value>
                         <<<grid_of(rows), kST, 0, s>>>(op, rows, n);
                   });
  });
  ew::check_launch(ADD ? "AddRMSNorm" : "RMSNorm");
}

}  // namespace

bool supports(DType t) { return t == float32 || t == float16 || t == bfloat16; }

void rms_norm(DType t, const void* x, const void* w, void* out, int64_t rows,
              int n, float eps, void* stream) {
  if (rows <= 0 || n <= 0) return;
  launch_rms<false>(t, x, nullptr, w, nullptr, out, rows, n, eps,
                    static_cast<cudaStream_t>(stream));
}

void add_rms_norm(DType t, const void* x, const void* residual, const void* w,
                  void* h, void* out, int64_t rows, int n, float eps,
                  void* stream) {
  if (rows <= 0 || n <= 0) return;
  launch_rms<true>(t, x, residual, w, h, out, rows, n, eps,
                   static_cast<cudaStream_t>(stream));
}

void layer_norm(DType t, const void* x, const void* w, const void* b, void* out,
                int64_t rows, int n, float eps, void* stream) {
  if (rows <= 0 || n <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  with_type(t, "LayerNorm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const LayerOp<T> op{static_cast<const T*>(x),
                        static_cast<const T*>(w),
                        static_cast<const T*>(b),
                        static_cast<T*>(out),
                        inv_len(n),
                        eps};
    launch_rows<T>(op, rows, n, vec_ok<T>(n, {x, w, b, out}), s, [&](auto v) {
      layer_stream<T, decltype(v)::value>
          <<<grid_of(rows), kST, 0, s>>>(op, rows, n);
    });
  });
  ew::check_launch("LayerNorm");
}

void softmax(DType t, const void* x, void* out, int64_t rows, int n,
             void* stream) {
  if (rows <= 0 || n <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  with_type(t, "Softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const SoftmaxOp<T> op{static_cast<const T*>(x), static_cast<T*>(out)};
    launch_rows<T>(op, rows, n, vec_ok<T>(n, {x, out}), s, [&](auto v) {
      softmax_stream<T, decltype(v)::value>
          <<<grid_of(rows), kST, 0, s>>>(op, rows, n);
    });
  });
  ew::check_launch("Softmax");
}

void logsumexp(DType t, const void* x, void* out, int64_t rows, int n,
               void* stream) {
  if (rows <= 0 || n <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  with_type(t, "LogSumExp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const LogSumExpOp<T> op{static_cast<const T*>(x), static_cast<T*>(out)};
    launch_rows<T>(op, rows, n, vec_ok<T>(n, {x}), s, [&](auto v) {
      logsumexp_stream<T, decltype(v)::value>
          <<<grid_of(rows), kST, 0, s>>>(op, rows, n);
    });
  });
  ew::check_launch("LogSumExp");
}

void cross_entropy(DType t, const void* logits, const int32_t* targets,
                   float* out, int64_t rows, int n, float smoothing,
                   bool has_ignore, int ignore, void* stream) {
  if (rows <= 0 || n < 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const CeArgs a{targets,          out,        n,          smoothing,
                 1.0f - smoothing, inv_len(n), has_ignore, ignore};
  with_type(t, "CrossEntropy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const CrossEntropyOp<T> op{static_cast<const T*>(logits), a};
    launch_rows<T>(op, rows, n, vec_ok<T>(n, {logits}), s, [&](auto v) {
      ce_stream<T, decltype(v)::value>
          <<<grid_of(rows), kST, 0, s>>>(op, rows, n);
    });
  });
  ew::check_launch("CrossEntropy");
}

void rope(DType t, const void* x, void* out, const int32_t* offsets, int n_off,
          const float* freqs, int64_t rows, int64_t per_item, int64_t t_len,
          int d, int dims, bool traditional, float base, float scale,
          bool forward, void* stream) {
  if (rows <= 0 || d <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const int half = dims / 2;
  // As the CPU and the composite: the host's log, one float division.
  const float coef = half > 0 ? std::log(base) / float(half) : 0.0f;
  const bool table = half <= 8192;  // 32 KiB of shared memory at most
  const size_t smem = table ? size_t(half) * sizeof(float) : 0;
  with_type(t, "RoPE", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int V = kVec<T>,
                  GT = V / 2;  // pairs per 16 bytes: adjacent, halves
    const T* px = static_cast<const T*>(x);
    T* po = static_cast<T*>(out);
    const bool al = aligned16(x) && aligned16(out);
    const int g = !al           ? 1
                  : traditional ? (d % V == 0 && half % GT == 0 ? GT : 1)
                                : (d % V == 0 && half % V == 0 ? V : 1);
    const int cw = al && d % V == 0 && (2 * half) % V == 0 ? V : 1;
    const int units = half / g + (d - 2 * half) / cw;
    int tpr = 1;
    while (tpr < units && tpr < kRopeBlock) tpr *= 2;
    const unsigned grid = grid_of(std::min<int64_t>(
        (rows + kRopeBlock / tpr - 1) / (kRopeBlock / tpr), 8192));
    auto go = [&](auto kernel) {
      kernel<<<grid, kRopeBlock, smem, s>>>(px, po, offsets, n_off, freqs, rows,
                                            per_item, t_len, d, half, cw, tpr,
                                            coef, scale, forward, table);
    };
    if (traditional) {
      if (g > 1)
        go(rope_rows<T, GT, true>);
      else
        go(rope_rows<T, 1, true>);
    } else {
      if (g > 1)
        go(rope_rows<T, V, false>);
      else
        go(rope_rows<T, 1, false>);
    }
  });
  ew::check_launch("RoPE");
}

}  // namespace nuvec::cuda::fastk
