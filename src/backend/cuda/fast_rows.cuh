// The machinery of the row kernels of the fast primitives (fast_kernels.h),
// shared by fast_rows.cu (the norms), fast_softmax.cu (softmax, logsumexp,
// cross entropy and its gradient) and fast_rope.cu.
//
// Layout. A row is cut into chunks of V = 16 / sizeof(T) elements (16
// bytes); a group of TPR threads owns a row, thread lt the chunks lt,
// lt + TPR, lt + 2 TPR, ... (coalesced 16-byte accesses). A thread holds
// K = 4 chunks (32 elements of the 16-bit types, 16 of float32; K = 2 for
// the float16 cross-entropy gradient, whose conversions keep more values
// live), within a 64-register budget (1024 resident threads per SM): the
// more elements a thread holds, the less the per-row work (addresses,
// reductions) weighs. The configuration depends on n and the dtype only
// (C = chunks per row):
//   C <= 32: one warp per row, one chunk a thread (4 rows per block);
//   C <= 32 K, 64 K, ..., 1024 K: 32 (4 rows per block), 64 (2), 128, 256,
//   512, 1024 threads, K chunks each, so n <= 32768 (16-bit, K = 4) or
//   16384 (float32; 16-bit with K = 2). The row stays in registers (read
//   once, written once) and the statistics are the CPU's two-pass
//   definitions (max, then the sum of exp(x - max); the mean, then the
//   mean of squared deviations).
//   Prefetch: on the 16-byte path each thread copies its chunks of its
//   next S rows into its own shared-memory slots (cp.async, S = 1 to 3
//   stages, 64 to 192 KiB in flight per SM) while it computes the current
//   one, under a grid of resident blocks, so loads stay in flight through
//   the reductions and across rows. Per-feature parameters
//   (weights, biases) are copied once per block into the thread's own
//   slots. The reductions alternate between two sets of slots (row
//   parity), so a row needs no trailing barrier.
//   Longer rows: a block of 256 threads per row walks it K chunks a thread
//   at a time, the next batch copied in while one is computed (Walk).
//
// Determinism. A thread folds its elements in chunk order, element order
// within a chunk, into one float32 accumulator; the group combines its
// threads by an xor butterfly within each warp (lane 0's result taken) and
// then the warps' results in order, through shared memory. No atomics. So
// a row's bits are a function of n and the dtype alone: not of `rows`, the
// grid, the stages, the other rows of the block, or of alignment: the
// 16-byte path (n % V == 0 and every pointer 16-byte aligned, as dense
// buffers from the allocator are) and the elementwise path access the same
// chunks and fold them in the same order; elements past the row's end
// enter the folds as +0 (sums of non-negative terms, or of values from +0
// on, which never reach -0) or -inf (maxima; exp(-inf) = +0), or are
// masked out. They are not the CPU's bits (another summation order, and
// the exponential below).
//
// Arithmetic. Conversions in hardware (cvt.rn, two values per instruction
// where they pair: the software casts' bits for every non-NaN value; a NaN
// becomes the canonical one). The exponentials of the softmax family are
// ex2.approx.ftz (MUFU.EX2) of the argument times log2(e) (exp_shifted,
// exp_accurate below). The 16-bit multiply and add of the weights and
// biases are nuvec's functors (paired instructions, the CPU's bits). The
// per-row values (rsqrt, log, the reciprocal of a sum) are nuvec's
// accurate functors, once per row.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "backend/cuda/elementwise.cuh"
#include "backend/cuda/fast_kernels.h"
#include "backend/cuda/launch.cuh"
#include "nuvec/kernels/functors.h"

namespace nuvec::cuda::fastk {

namespace {

namespace kn = nuvec::kernels;
using kn::u32;

constexpr float kInf = __builtin_huge_valf();

template <class T>
inline constexpr int kVec = 16 / static_cast<int>(sizeof(T));
// Chunks of a 16-element batch.
template <class T>
inline constexpr int kChunks = 16 / kVec<T>;
template <class T>
inline constexpr bool kHalf = !std::is_same_v<T, float>;

template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};
template <class T>
using Chunk = Pack<T, kVec<T>>;

// ---- Conversions ----

template <class T>
__device__ __forceinline__ float widen(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else if constexpr (std::is_same_v<T, kn::bfloat16_t>) {
    return __uint_as_float(u32(x.bits) << 16);
  } else {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
    return f;
  }
}
template <class T>
__device__ __forceinline__ T narrow(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else {
    unsigned short b;
    if constexpr (std::is_same_v<T, kn::bfloat16_t>)
      asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(x));
    else
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(x));
    return T::from_bits(b);
  }
}
// narrow(a) in the low half, narrow(b) in the high half (the element
// order in memory), one instruction.
template <class T>
__device__ __forceinline__ u32 narrow2(float a, float b) {
  u32 d;
  if constexpr (std::is_same_v<T, kn::bfloat16_t>)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(b), "f"(a));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(b), "f"(a));
  return d;
}

// The V elements of a chunk as floats.
template <class T>
__device__ __forceinline__ void widen_chunk(const Chunk<T>& c, float* f) {
  if constexpr (std::is_same_v<T, kn::bfloat16_t>) {
    u32 w[4];
    memcpy(w, &c, 16);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      f[2 * j] = __uint_as_float(w[j] << 16);
      f[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
    }
  } else if constexpr (std::is_same_v<T, kn::float16_t>) {
    u32 w[4];
    memcpy(w, &c, 16);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      asm("{\n .reg .f16 l, h;\n mov.b32 {l, h}, %2;\n"
          " cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}"
          : "=f"(f[2 * j]), "=f"(f[2 * j + 1])
          : "r"(w[j]));
  } else {
#pragma unroll
    for (int v = 0; v < kVec<T>; ++v) f[v] = c.v[v];
  }
}
// V floats rounded to a chunk.
template <class T>
__device__ __forceinline__ Chunk<T> narrow_chunk(const float* f) {
  Chunk<T> c;
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int v = 0; v < 4; ++v) c.v[v] = f[v];
  } else {
    u32 w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = narrow2<T>(f[2 * j], f[2 * j + 1]);
    memcpy(&c, w, 16);
  }
  return c;
}
template <class T>
__device__ __forceinline__ Chunk<T> splat_chunk(float x) {
  float f[kVec<T>];
#pragma unroll
  for (int v = 0; v < kVec<T>; ++v) f[v] = x;
  return narrow_chunk<T>(f);
}

// ---- Exponentials ----
//
// ex2.approx.ftz.f32: MUFU.EX2, 2 ulp (the CUDA guide's bound for exp2f,
// which is this instruction), results below 2^-126 flushed to +0 (terms
// that small do not move a sum that holds the row's max term, e^0 = 1).
__device__ __forceinline__ float ex2(float t) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t));
  return r;
}
// max(a, b), NaN when either is NaN (fmaxf would drop it).
__device__ __forceinline__ float max_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

constexpr float kLog2e = 1.44269502f;       // log2(e) rounded
constexpr float kLog2eLo = 1.92596299e-8f;  // log2(e) - kLog2e
constexpr float kLn2 = 0.693147182f;

// e^(x - m) for the 16-bit dtypes' rows and the sums: 2^(x log2e - ml)
// with ml = m * log2e rounded, one fma and one ex2. The error of ml is a
// factor common to the row's terms (it cancels in a quotient by their
// sum; in a logsumexp it is below half an ulp of m); the fma's rounding
// adds |x - m| 2^-24 relative (the CUDA guide's 2 + 1.17 |x| ulp of
// __expf), that is at most 2^-25.4 of the row's max term e^0 for every
// term (|d| e^d <= 1/e): sums get the 2 ulp of ex2 and 16-bit outputs
// are unchanged by it. -inf gives +0, +inf gives +inf, NaN gives NaN.
__device__ __forceinline__ float exp_shifted(float x, float ml) {
  return ex2(__fmaf_rn(x, kLog2e, -ml));
}
// e^d for d <= 0 (or NaN) within 2 ulp (float32 outputs): ex2 of d log2e
// rounded, times 1 + ln2 times that rounding's error (exact by fma, plus
// d times the error of kLog2e). d is clamped at -127 (the result is then
// +0 either way), NaN kept, so that d = -inf never reaches inf - inf.
__device__ __forceinline__ float exp_accurate(float d) {
  d = max_nan(d, -127.0f);
  const float t = d * kLog2e;
  const float lo = __fmaf_rn(d, kLog2eLo, __fmaf_rn(d, kLog2e, -t));
  const float e = ex2(t);
  return __fmaf_rn(e, lo * kLn2, e);
}

// The terms e^(x - m) of a row shifted by m: exp_shifted (ACC false) or
// exp_accurate (ACC true: float32 softmax and gradient outputs). scale(a,
// b) rescales a sum of terms shifted by a to shift b >= a, consistently.
template <bool ACC>
struct Terms;
template <>
struct Terms<false> {
  float ml;
  __device__ explicit Terms(float m) : ml(m * kLog2e) {}
  __device__ float operator()(float x) const { return exp_shifted(x, ml); }
  __device__ static float scale(float a, float b) {
    return ex2(a * kLog2e - b * kLog2e);
  }
};
template <>
struct Terms<true> {
  float m;
  __device__ explicit Terms(float m_) : m(m_) {}
  __device__ float operator()(float x) const { return exp_accurate(x - m); }
  __device__ static float scale(float a, float b) {
    return exp_accurate(a - b);
  }
};
template <class T>
using OutTerms = Terms<std::is_same_v<T, float>>;

// logsumexp's shift: the max, or 0 where it is infinite.
__device__ __forceinline__ float shift_of(float m) {
  return kn::IsInf{}(m) ? 0.0f : m;
}

// ---- Memory ----

// Elements [i0, i0 + V) of a row of n, zero bits past its end. `vec`: the
// row is 16-byte aligned and n % V == 0, so the chunk is whole or empty.
template <class T>
__device__ __forceinline__ T zero_bits() {
  if constexpr (std::is_same_v<T, float>)
    return 0.0f;
  else
    return T::from_bits(0);
}
template <class T, class I>
__device__ __forceinline__ Chunk<T> load_chunk(const T* row, I i0, I n,
                                               bool vec) {
  if (vec && i0 < n) return *reinterpret_cast<const Chunk<T>*>(row + i0);
  Chunk<T> p;
#pragma unroll
  for (int v = 0; v < kVec<T>; ++v)
    p.v[v] = !vec && i0 + v < n ? row[i0 + v] : zero_bits<T>();
  return p;
}
// p, hidden from the optimizer's reassociation: the address of each chunk
// is then one 64-bit add to p, not a multiply-add from the row index.
template <class P>
__device__ __forceinline__ P* opaque(P* p) {
  asm("" : "+l"(p));
  return p;
}

// Streaming stores (evict-first) of the 16-byte path: the outputs are not
// read back by these kernels.
template <class T, class I>
__device__ __forceinline__ void store_chunk(T* row, I i0, I n, bool vec,
                                            const Chunk<T>& p) {
  if (vec) {
    if (i0 < n) {
      int4 w;
      memcpy(&w, &p, 16);
      __stcs(reinterpret_cast<int4*>(row + i0), w);
    }
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
// Waits until at most N of the thread's groups are pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ unsigned char* dynamic_smem() {
  extern __shared__ __align__(16) unsigned char fast_rows_smem[];
  return fast_rows_smem;
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

// ---- Reductions ----

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
// fmaxf skips NaN, which still makes every result that depends on it NaN
// through the sum of exp(x - max) (as the CPU's NaN max does).
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
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
// thread: an xor butterfly per warp, then one over the warps' results
// (`slots`: the group's TPR / 32 values in shared memory, lane l of each
// warp taking warp l mod W's; one __syncthreads, so every group of the
// block calls it together). Op is commutative, so both partners of each
// butterfly step get the same bits.
template <int TPR, class A, class Op>
__device__ __forceinline__ A group_all(A v, A* slots, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, shuffle(v, o, true));
  if constexpr (TPR == 32) {
    return shuffle(v, 0, false);
  } else {
    constexpr int W = TPR / 32;
    if ((threadIdx.x & 31) == 0) slots[(threadIdx.x % TPR) / 32] = v;
    __syncthreads();
    v = slots[threadIdx.x & (W - 1)];
#pragma unroll
    for (int o = W / 2; o > 0; o >>= 1) v = op(v, shuffle(v, o, true));
    return v;
  }
}

// ---- Rows held in registers ----

template <int TPR_, int K_>
struct Cfg {
  static constexpr int TPR = TPR_;                          // threads per row
  static constexpr int K = K_;                              // chunks per thread
  static constexpr int RPB = TPR_ >= 128 ? 1 : 128 / TPR_;  // rows per block
  static constexpr int BLOCK = TPR_ * RPB;
  static constexpr int W = TPR_ / 32;              // warps per row
  static constexpr int MIN_BLOCKS = 1024 / BLOCK;  // 64 registers at most
};

// Prefetch stages of the 16-byte path: NS sources' chunks of a row per
// stage, P parameters' chunks once, within 192 KiB of shared memory per
// SM (1024 resident threads of K chunks: 16 KiB * K per chunk set), 1 to
// 3 stages (K = 4: 3 for the softmax family, 2 for RMSNorm, 1 for
// LayerNorm and AddRMSNorm; 64 to 192 KiB of rows in flight per SM).
template <class C, int NS, int P>
inline constexpr int kStages = std::clamp((192 * 1024 - P * 16384 * C::K) /
                                              (NS * 16384 * C::K),
                                          1, 3);

// The dynamic shared memory of a block: S stages of NS sources and P
// parameters, K chunks a thread.
template <class T, class C, int S, int NS, int P>
inline constexpr int kRowsSmem = (S * NS + P) * C::K* C::BLOCK * 16;

// Where a group's row is for its threads: a row past the last has len 0
// (no accesses; its threads still join the group's reductions).
struct RowAt {
  int lt, g;       // thread in the group, group in the block
  int len;         // the row's length (0 or n)
  u32 in;          // bit k: the thread's chunk k starts inside a row of n
  int64_t r, off;  // row, its first element
  bool active;
  template <class C, class T>
  __device__ int chunk(int k) const {  // element of the thread's chunk k
    return (lt + k * C::TPR) * kVec<T>;
  }
  // Whether element i of the thread's K * V is in the row (on the 16-byte
  // path chunks are whole or empty).
  template <class C, class T, bool VEC>
  __device__ bool has(int i) const {
    if constexpr (VEC)
      return active && ((in >> (i / kVec<T>)) & 1u);
    else
      return chunk<C, T>(i / kVec<T>) + i % kVec<T> < len;
  }
};

// The register kernels' driver: each group takes rows first + g, first
// striding over the grid; `op` computes a row from its chunks (p[s][k]:
// source s, chunk k). On the prefetch path a thread keeps its chunks of
// its next S rows in flight into its own slots (the same thread reads
// them back: no barrier), refilling a stage once it has taken it. Op's
// parameters are copied once into the thread's own slots (`prm`, P * K
// chunks a BLOCK apart). `aux` carries per-row values read one row ahead
// (cross entropy's target and cotangent).
template <class T, class C, bool VEC, class Op>
__global__ void __launch_bounds__(C::BLOCK, C::MIN_BLOCKS)
    rows_kernel(const Op op, int64_t rows, int n) {
  enter_held_kernel();
  constexpr int NS = Op::kSources, P = Op::kParams, K = C::K;
  constexpr int S = VEC ? kStages<C, NS, P> : 0;
  Chunk<T>* const stage = reinterpret_cast<Chunk<T>*>(dynamic_smem());
  Chunk<T>* const prm = stage + S * NS * K * C::BLOCK;
  __shared__ typename Op::template Shared<C> sh[2];
  RowAt at;
  at.lt = threadIdx.x % C::TPR;
  at.g = threadIdx.x / C::TPR;
  at.in = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) at.in |= u32(at.chunk<C, T>(k) < n) << k;
#pragma unroll
  for (int q = 0; q < P; ++q) {
#pragma unroll
    for (int k = 0; k < K; ++k)
      prm[(q * K + k) * C::BLOCK + threadIdx.x] =
          op.param(q) ? load_chunk(op.param(q), at.chunk<C, T>(k), n, VEC)
                      : Chunk<T>{};
  }
  const int64_t stride = int64_t(gridDim.x) * C::RPB;
  // Stage `slot` <- the thread's chunks of the rows of the block's
  // iteration starting at row `first` (nothing past the last row; an
  // empty copy still gets an address inside the data).
  auto issue = [&](int slot, int64_t first) {
    if (first < rows) {
      const int64_t r = first + at.g;
      const bool live = r < rows;
      const int64_t base = (live ? r : rows - 1) * n;
#pragma unroll
      for (int s = 0; s < NS; ++s) {
        const T* row = opaque(op.src(s) + base);
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const bool in = (at.in >> k) & 1u;
          cp_async16(&stage[((slot * NS + s) * K + k) * C::BLOCK + threadIdx.x],
                     row + (in ? at.chunk<C, T>(k) : 0), live && in);
        }
      }
    }
    cp_async_commit();  // one group per iteration, empty or not
  };
  int64_t first = int64_t(blockIdx.x) * C::RPB;
  typename Op::Aux aux = op.aux(first + at.g, rows);
  if constexpr (VEC) {
#pragma unroll
    for (int j = 0; j < S; ++j) issue(j, first + j * stride);
  }
  for (int it = 0, slot = 0; first < rows; first += stride, ++it) {
    at.r = first + at.g;
    at.active = at.r < rows;
    at.len = at.active ? n : 0;
    at.off = at.active ? at.r * n : 0;
    Chunk<T> p[NS][K];
    if constexpr (VEC) {
      cp_async_wait<S - 1>();
#pragma unroll
      for (int s = 0; s < NS; ++s) {
#pragma unroll
        for (int k = 0; k < K; ++k)
          p[s][k] = stage[((slot * NS + s) * K + k) * C::BLOCK + threadIdx.x];
      }
      issue(slot, first + S * stride);
      slot = slot + 1 == S ? 0 : slot + 1;
    } else {
#pragma unroll
      for (int s = 0; s < NS; ++s) {
#pragma unroll
        for (int k = 0; k < K; ++k)
          p[s][k] =
              load_chunk(op.src(s) + at.off, at.chunk<C, T>(k), at.len, VEC);
      }
    }
    const typename Op::Aux a = aux;
    aux = op.aux(at.r + stride, rows);
    op.template row<C, VEC>(p, a, at, sh[it & 1], prm);
  }
}

// The thread's chunks of one source as floats (`pad` past the end; zero
// chunks widen to +0, so pad 0 needs no mask).
template <class T, class C, bool VEC>
__device__ __forceinline__ void to_floats(const Chunk<T> (&p)[C::K],
                                          const RowAt& at, float pad,
                                          float (&xs)[C::K * kVec<T>]) {
#pragma unroll
  for (int k = 0; k < C::K; ++k) widen_chunk<T>(p[k], &xs[k * kVec<T>]);
  if (pad != 0.0f) {
#pragma unroll
    for (int i = 0; i < C::K * kVec<T>; ++i)
      xs[i] = at.has<C, T, VEC>(i) ? xs[i] : pad;
  }
}

// Parameter q's chunk k of this thread (from its slots).
template <class T, class C>
__device__ __forceinline__ Chunk<T> param_chunk(const Chunk<T>* prm, int q,
                                                int k) {
  return prm[(q * C::K + k) * C::BLOCK + threadIdx.x];
}

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
        cp_async_wait<0>();
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
// T, K chunks a thread (4: 32 elements of the 16-bit types, 16 of
// float32); false when the rows need the streaming kernels (over 1024 K
// chunks).
template <class T, int K, class F>
bool with_cfg(int n, F&& f) {
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

inline int current_device() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return dev;
}

inline int sm_count() {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                             current_device()) != cudaSuccess) {
    cudaGetLastError();  // not a launch error: fall back to one block per row
    return 0;
  }
  return sms;
}

// Resident blocks per SM of `kernel` with `smem` bytes of dynamic shared
// memory, after allowing that much (once per kernel and device; 0 if
// unknown).
template <auto kernel>
int blocks_per_sm(int block, int smem) {
  constexpr int kDevices = 16;
  static std::atomic<int> cached[kDevices];  // 0: not asked yet
  const int dev = current_device();
  if (dev >= 0 && dev < kDevices) {
    const int c = cached[dev].load(std::memory_order_relaxed);
    if (c != 0) return c - 1;
  }
  int b = 0;
  // Always (not only above 48 KiB): the kernel's static shared memory adds
  // to the dynamic bytes, and the sum must fit the allowed size.
  if (smem > 0) {
    if (cudaFuncSetAttribute(kernel,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem) != cudaSuccess)
      cudaGetLastError();
  }
  if (smem > 0) {
    if (cudaFuncSetAttribute(kernel,
                             cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared) != cudaSuccess)
      cudaGetLastError();
  }
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, block, smem) !=
      cudaSuccess) {
    cudaGetLastError();
    b = 0;
  }
  if (dev >= 0 && dev < kDevices)
    cached[dev].store(b + 1, std::memory_order_relaxed);
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

// Launches Op over rows of n: rows_kernel with the configuration of n
// (resident blocks, each walking several rows), or the streaming kernel
// `stream` (called with the VEC tag: it launches).
template <class T, int K, class Op, class S>
void launch_rows(const Op& op, int64_t rows, int n, bool vec, cudaStream_t s,
                 S&& stream) {
  auto go = [&](auto v) {
    constexpr bool VEC = decltype(v)::value;
    bool launched = false;
    with_cfg<T, K>(n, [&](auto c) {
      using C = decltype(c);
      constexpr int St = VEC ? kStages<C, Op::kSources, Op::kParams> : 0;
      constexpr int smem = kRowsSmem<T, C, St, Op::kSources, Op::kParams>;
      constexpr auto kernel = rows_kernel<T, C, VEC, Op>;
      int64_t grid = (rows + C::RPB - 1) / C::RPB;
      const int per_sm = blocks_per_sm<kernel>(C::BLOCK, smem);
      // No resident block (the configuration's shared memory is beyond the
      // device's): the streaming kernel, a choice fixed per n, dtype and
      // GPU generation.
      if (per_sm == 0 && smem > 0) return;
      const int64_t resident = int64_t(per_sm) * sm_count();
      if (resident > 0) grid = std::min(grid, resident);
      hold_launch(kernel, grid_of(grid), C::BLOCK, smem, s, "a row kernel", op, rows, n);
      launched = true;
    });
    if (!launched) stream(v);
  };
  if (vec)
    go(std::true_type{});
  else
    go(std::false_type{});
}

}  // namespace

}  // namespace nuvec::cuda::fastk
