// The few-row dense product (matmul_rows.h): out = A B for up to 8 rows,
// B read once for all rows, accumulation in the arithmetic type (float for
// the 16-bit types, exact products), each output element's order fixed by
// K, B's layout and the dtype. Two kernels, chosen by B's layout alone:
//
// B dense along k (b_rs == 1: x @ W^T with W [N, K], a Linear layer's
// weight): a warp owns NC consecutive columns; lane l takes the 16-byte
// vectors v = l, l + 32, ... of the k axis (E = 16 / sizeof(T) elements;
// a partial last vector comes last) and folds their elements with fma into
// one accumulator per (column, row), in element order; the 32 lanes are
// then added by an xor butterfly.
//
// B dense along n ([K, N]): a block owns 8 * E columns (8 groups of E,
// one 16-byte load per k) and 32 k-lanes; a cluster of C blocks (C from K:
// 1, 2, 4 or 8) gives S = 32 C slices, slice s the rows k = s, s + S, ...
// folded in order. The slices are added by a complete binary tree in slice
// order: two xor steps inside a warp, three levels over the 8 warps in
// shared memory, log2(C) over the cluster's blocks through distributed
// shared memory. One launch, no atomics, no workspace.
//
// Bandwidth: B streams through a per-thread ring of R 16-byte slots in
// shared memory filled by cp.async (R - 1 loads in flight per thread and
// column without holding registers); A is read through the L1 (k-dense)
// or staged in shared memory per chunk of k (n-dense). Unaligned operands
// take scalar loads of the same values.
//
// The row tile (MT = 1, 2, 4 or 8), the columns per warp, the pipeline,
// vector or scalar loads and the batch only change which registers hold
// which accumulator, never the operations on one: a row's bits are its
// one-row product's.
#include <cooperative_groups.h>

#include <cstring>
#include <string>
#include <type_traits>

#include "backend/cuda/launch.cuh"
#include "backend/cuda/matmul_rows.h"
#include "backend/cuda/quantized.cuh"

namespace nuvec::cuda::rows {

namespace {

namespace cg = cooperative_groups;
using quantk::acc_t;
using quantk::bfloat16_t;
using quantk::float16_t;
using quantk::u32;

constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr int kTWarps = 4;      // warps per block of the k-dense kernel
constexpr int kNThreads = 256;  // threads per block of the n-dense kernel
constexpr int kNGroups = 8;     // its column groups (lane & 7)
constexpr int kNLanes = 32;     // its k-lanes (8 warps x 4)
constexpr int kRing = 8;        // slots of a thread's ring (a power of 2)

__device__ __forceinline__ float fma_of(float a, float b, float c) {
  return __fmaf_rn(a, b, c);
}
__device__ __forceinline__ double fma_of(double a, double b, double c) {
  return __fma_rn(a, b, c);
}

// 16 bytes from global to shared memory, asynchronously (L2 only).
__device__ __forceinline__ void copy16(uint4* dst, const void* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src)
               : "memory");
}
__device__ __forceinline__ void commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most N of this thread's groups are pending.
template <int N>
__device__ __forceinline__ void wait_pending() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// One element of T at p, as its arithmetic type.
template <class T>
__device__ __forceinline__ acc_t<T> load_elem(const T* p) {
  if constexpr (sizeof(T) == 2) {
    const unsigned short h = __ldg(reinterpret_cast<const unsigned short*>(p));
    if constexpr (std::is_same_v<T, bfloat16_t>)
      return __uint_as_float(u32(h) << 16);
    else
      return __half2float(__ushort_as_half(h));
  } else {
    return __ldg(p);
  }
}

// Element e (0 <= e < 16 / sizeof(T), a constant after unrolling) of a
// 16-byte vector of T.
template <class T>
__device__ __forceinline__ acc_t<T> elem(const uint4& r, int e) {
  if constexpr (sizeof(T) == 2) {
    const u32 w = e / 2 == 0 ? r.x : e / 2 == 1 ? r.y : e / 2 == 2 ? r.z : r.w;
    if constexpr (std::is_same_v<T, bfloat16_t>) {
      return __uint_as_float(e % 2 == 0 ? w << 16 : w & 0xFFFF0000u);
    } else {
      return __half2float(__ushort_as_half(
          static_cast<unsigned short>(e % 2 == 0 ? w : w >> 16)));
    }
  } else if constexpr (sizeof(T) == 4) {
    return __uint_as_float(e == 0 ? r.x : e == 1 ? r.y : e == 2 ? r.z : r.w);
  } else {
    return e == 0 ? __hiloint2double(int(r.y), int(r.x))
                  : __hiloint2double(int(r.w), int(r.z));
  }
}

// The element offsets of item i in a and b (row-major over the batch).
__device__ __forceinline__ void item_offsets(const RowsArgs& p, int64_t i,
                                             int64_t& oa, int64_t& ob) {
  oa = 0, ob = 0;
  for (int d = p.batch_ndim - 1; d >= 0; --d) {
    const int64_t x = i % p.batch_shape[d];
    i /= p.batch_shape[d];
    oa += x * p.a_bs[d];
    ob += x * p.b_bs[d];
  }
}

template <class T>
__device__ __forceinline__ void store(const RowsArgs& p, int64_t item, int m,
                                      int n, acc_t<T> v) {
  if (m < p.m && n < p.n)
    static_cast<T*>(p.out)[(item * p.m + m) * int64_t(p.n) + n] =
        kernels::from_arith<T>(v);
}

// ---- B dense along k ----

template <class T, int MT, int NC>
__global__ void __launch_bounds__(kTWarps * 32)
    rows_t_kernel(RowsArgs p, int64_t groups, bool vec) {
  using A = acc_t<T>;
  constexpr int E = 16 / int(sizeof(T)), TH = kTWarps * 32;
  extern __shared__ uint4 ring[];  // [kRing][NC][TH]
  const int t = threadIdx.x, lane = t & 31;
  const int64_t w = int64_t(blockIdx.x) * kTWarps + (t >> 5);
  if (w >= groups * p.items) {  // the whole warp (no block barrier here)
    enter_held_kernel();
    return;
  }
  const int64_t item = w / groups;
  const int n0 = int(w - item * groups) * NC;
  int64_t oa, ob;
  item_offsets(p, item, oa, ob);
  const int K = p.k, VF = K / E;  // full vectors
  const int steps = lane < VF ? (VF - lane + 31) / 32 : 0;
  const T* ar[MT];
  const T* br[NC];
#pragma unroll
  for (int m = 0; m < MT; ++m)
    ar[m] = static_cast<const T*>(p.a) + oa +
            int64_t(m < p.m ? m : p.m - 1) * p.a_rs;
#pragma unroll
  for (int j = 0; j < NC; ++j)
    br[j] = static_cast<const T*>(p.b) + ob +
            int64_t(n0 + j < p.n ? n0 + j : p.n - 1) * p.b_cs;
  A acc[NC][MT] = {};
  // Elements e of vector v (scalar loads), in order.
  auto scalar_vector = [&](int v, int count) {
#pragma unroll
    for (int e = 0; e < E; ++e) {
      if (e >= count) break;
      const int64_t k = int64_t(v) * E + e;
      A bv[NC], av[MT];
#pragma unroll
      for (int j = 0; j < NC; ++j) bv[j] = load_elem(br[j] + k * p.b_rs);
#pragma unroll
      for (int m = 0; m < MT; ++m) av[m] = load_elem(ar[m] + k * p.a_cs);
#pragma unroll
      for (int j = 0; j < NC; ++j)
#pragma unroll
        for (int m = 0; m < MT; ++m)
          acc[j][m] = fma_of(av[m], bv[j], acc[j][m]);
    }
  };
  if (vec) {
    auto issue = [&](int i) {
      if (i < steps)
#pragma unroll
        for (int j = 0; j < NC; ++j)
          copy16(&ring[((i & (kRing - 1)) * NC + j) * TH + t],
                 reinterpret_cast<const uint4*>(br[j]) + (lane + 32 * i));
      commit();
    };
    // B's first loads before the predecessor's end where nothing in the
    // chain writes B (RowsArgs::early_b), else after it.
    if (!p.early_b) enter_held_kernel();
#pragma unroll
    for (int i = 0; i < kRing - 1; ++i) issue(i);
    if (p.early_b) enter_held_kernel();
    for (int i = 0; i < steps; ++i) {
      issue(i + kRing - 1);
      wait_pending<kRing - 1>();
      const int v = lane + 32 * i;
      uint4 ra[MT], rb[NC];
#pragma unroll
      for (int m = 0; m < MT; ++m)
        ra[m] = __ldg(reinterpret_cast<const uint4*>(ar[m]) + v);
#pragma unroll
      for (int j = 0; j < NC; ++j)
        rb[j] = ring[((i & (kRing - 1)) * NC + j) * TH + t];
#pragma unroll
      for (int e = 0; e < E; ++e) {
        A bv[NC], av[MT];
#pragma unroll
        for (int j = 0; j < NC; ++j) bv[j] = elem<T>(rb[j], e);
#pragma unroll
        for (int m = 0; m < MT; ++m) av[m] = elem<T>(ra[m], e);
#pragma unroll
        for (int j = 0; j < NC; ++j)
#pragma unroll
          for (int m = 0; m < MT; ++m)
            acc[j][m] = fma_of(av[m], bv[j], acc[j][m]);
      }
    }
    wait_pending<0>();
  } else {
    enter_held_kernel();
    for (int i = 0; i < steps; ++i) scalar_vector(lane + 32 * i, E);
  }
  // The partial last vector: the last of its lane's.
  if (K % E != 0 && lane == VF % 32) scalar_vector(VF, K % E);
#pragma unroll
  for (int j = 0; j < NC; ++j)
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      A v = acc[j][m];
#pragma unroll
      for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(kFull, v, off);
      acc[j][m] = v;  // every lane holds the sum
    }
#pragma unroll
  for (int j = 0; j < NC; ++j)
#pragma unroll
    for (int m = 0; m < MT; ++m)
      if (lane == ((j * MT + m) & 31)) store<T>(p, item, m, n0 + j, acc[j][m]);
}

// ---- B dense along n ----

// MT rows of the staged A at q (16-byte aligned when MT values are).
template <class A, int MT>
__device__ __forceinline__ void read_rows(const A* q, A* av) {
  if constexpr (MT * sizeof(A) % 16 == 0) {
#pragma unroll
    for (int i = 0; i < int(MT * sizeof(A) / 16); ++i) {
      const uint4 r = reinterpret_cast<const uint4*>(q)[i];
      memcpy(av + i * (16 / sizeof(A)), &r, 16);
    }
  } else {
#pragma unroll
    for (int m = 0; m < MT; ++m) av[m] = q[m];
  }
}

// The n-dense kernel's shared memory: the ring (reused for the warps'
// sums), A's values for a chunk of k-steps ([step][k-lane][row], 16 KiB),
// the block's sums (read by the cluster).
template <class T, int MT>
struct NLayout {
  using A = acc_t<T>;
  static constexpr int E = 16 / int(sizeof(T)), COLS = kNGroups * E,
                       W = MT * COLS;
  static constexpr int ICH = int(16384 / (kNLanes * MT * sizeof(A)));
  static constexpr size_t ring = size_t(kRing) * kNThreads * 16;
  static constexpr size_t parts = size_t(8) * W * sizeof(A);
  static constexpr size_t first = ring > parts ? ring : parts;
  static constexpr size_t stage = size_t(ICH) * kNLanes * MT * sizeof(A);
  static constexpr size_t bytes = first + stage + size_t(W) * sizeof(A);
};

template <class T, int MT>
__global__ void __launch_bounds__(kNThreads, 2)
    rows_n_kernel(RowsArgs p, int tiles, int C, bool bvec) {
  using L = NLayout<T, MT>;
  using A = acc_t<T>;
  constexpr int E = L::E, COLS = L::COLS, W = L::W, ICH = L::ICH;
  constexpr int kStage = ICH * kNLanes * MT;
  extern __shared__ uint4 smem[];
  uint4* ring = smem;
  A* part = reinterpret_cast<A*>(smem);
  A* stage = reinterpret_cast<A*>(reinterpret_cast<char*>(smem) + L::first);
  A* done =
      reinterpret_cast<A*>(reinterpret_cast<char*>(smem) + L::first + L::stage);
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
  const int cgi = lane & 7, kl = warp * 4 + (lane >> 3);
  const int rank = int(blockIdx.x % unsigned(C));
  const int64_t ti = blockIdx.x / unsigned(C);
  const int tile = int(ti % tiles);
  const int64_t item = ti / tiles;
  int64_t oa, ob;
  item_offsets(p, item, oa, ob);
  const T* a = static_cast<const T*>(p.a) + oa;
  const T* b = static_cast<const T*>(p.b) + ob;
  const int K = p.k, N = p.n, S = kNLanes * C, base = kNLanes * rank,
            s = base + kl;
  const int c0 = tile * COLS + cgi * E;
  const bool vec = bvec && c0 + E <= N;
  // Steps of the block's first slice (the others have as many or one less)
  // and of this thread's.
  const int steps = base < K ? (K - base + S - 1) / S : 0;
  const int mine = s < K ? (K - s + S - 1) / S : 0;
  A acc[MT][E] = {};
  auto issue = [&](int i) {
    if (vec && i < mine)
      copy16(&ring[(i & (kRing - 1)) * kNThreads + t],
             b + (int64_t(s) + int64_t(i) * S) * p.b_rs + c0);
    commit();
  };
#pragma unroll
  for (int i = 0; i < kRing - 1; ++i) issue(i);
  for (int i0 = 0; i0 < steps; i0 += ICH) {
    __syncthreads();  // the previous chunk's readers are done
    for (int e = t; e < kStage; e += kNThreads) {
      const int m = e / (ICH * kNLanes), idx = e - m * (ICH * kNLanes);
      const int64_t k =
          base + (idx & (kNLanes - 1)) + int64_t(i0 + idx / kNLanes) * S;
      stage[idx * MT + m] =
          m < p.m && k < K ? load_elem(a + int64_t(m) * p.a_rs + k * p.a_cs)
                           : A(0);
    }
    __syncthreads();
    const int end = mine - i0 < ICH ? mine - i0 : ICH;
    for (int g = 0; g < end; ++g) {
      const int i = i0 + g;
      A bv[E], av[MT];
      if (vec) {
        issue(i + kRing - 1);
        wait_pending<kRing - 1>();
        const uint4 r = ring[(i & (kRing - 1)) * kNThreads + t];
#pragma unroll
        for (int e = 0; e < E; ++e) bv[e] = elem<T>(r, e);
      } else {
        const T* row = b + (int64_t(s) + int64_t(i) * S) * p.b_rs;
#pragma unroll
        for (int e = 0; e < E; ++e)
          bv[e] =
              load_elem(row + int64_t(c0 + e < N ? c0 + e : N - 1) * p.b_cs);
      }
      read_rows<A, MT>(stage + (g * kNLanes + kl) * MT, av);
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int e = 0; e < E; ++e) acc[m][e] = fma_of(av[m], bv[e], acc[m][e]);
    }
  }
  wait_pending<0>();
  // Slices kl = 4 warp + (lane >> 3): (0 + 1) + (2 + 3) inside the warp.
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int e = 0; e < E; ++e) {
      A v = acc[m][e];
      v += __shfl_xor_sync(kFull, v, 8);
      v += __shfl_xor_sync(kFull, v, 16);
      acc[m][e] = v;
    }
  __syncthreads();  // the ring is idle
  if ((lane >> 3) == 0)
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int e = 0; e < E; ++e)
        part[warp * W + m * COLS + cgi * E + e] = acc[m][e];
  __syncthreads();
  for (int x = t; x < W; x += kNThreads) {
    const A* q = part + x;
    const A v = ((q[0] + q[W]) + (q[2 * W] + q[3 * W])) +
                ((q[4 * W] + q[5 * W]) + (q[6 * W] + q[7 * W]));
    if (C == 1)
      store<T>(p, item, x / COLS, tile * COLS + x % COLS, v);
    else
      done[x] = v;
  }
  if (C == 1) return;
  cg::cluster_group cl = cg::this_cluster();
  cl.sync();
  const int share = W / C;  // W is a multiple of 16, C at most 8
  for (int x = t; x < share; x += kNThreads) {
    const int i = rank * share + x;
    A v[8];
#pragma unroll
    for (int q = 0; q < 8; ++q)
      if (q < C) v[q] = cl.map_shared_rank(done, q)[i];
#pragma unroll
    for (int st = 1; st < 8; st *= 2)
#pragma unroll
      for (int q = 0; q + st < 8; q += 2 * st)
        if (q + st < C) v[q] = v[q] + v[q + st];
    store<T>(p, item, i / COLS, tile * COLS + i % COLS, v[0]);
  }
  cl.sync();  // the other blocks' shared memory stays until all have read
}

// ---- launches ----

// Blocks per cluster of the n-dense kernel: a function of K alone (it
// sets the summation tree), about 32 rows of B per thread.
int cluster_of(int k) {
  return k >= 8192 ? 8 : k >= 4096 ? 4 : k >= 2048 ? 2 : 1;
}

bool aligned(const void* p, int64_t bytes) {
  return ((reinterpret_cast<uintptr_t>(p) | uint64_t(bytes)) & 15u) == 0;
}

// Whether every item's matrix starts 16-byte aligned (batch strides bs).
bool batch_aligned(const RowsArgs& p, const int64_t* bs, int64_t item) {
  uint64_t v = 0;
  for (int d = 0; d < p.batch_ndim; ++d) v |= uint64_t(bs[d] * item);
  return (v & 15u) == 0;
}

// B dense along k: that kernel (b_rs == 1 or k == 1), else the other.
bool k_dense(const RowsArgs& p) {
  const bool n_ok = p.b_cs == 1 || p.n == 1, k_ok = p.b_rs == 1 || p.k == 1;
  return p.n == 1 ? k_ok : !n_ok && k_ok;
}

[[noreturn]] void too_large(int64_t blocks) {
  quantk::unsupported(
      "Matmul: the product is too large for one few-row launch (" +
      std::to_string(blocks) + " blocks)");
}

void check(cudaError_t e) {
  if (e != cudaSuccess)
    quantk::unsupported(
        std::string("CUDA launch of Matmul (few rows) failed: ") +
        cudaGetErrorString(e));
}

template <class T, int MT, int NC>
void launch_t(const RowsArgs& p, bool vec, cudaStream_t s) {
  constexpr size_t bytes = size_t(kRing) * NC * kTWarps * 32 * 16;
  auto kernel = rows_t_kernel<T, MT, NC>;
  // Over the default 48 KiB of dynamic shared memory: allowed once.
  static const cudaError_t allowed = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  check(allowed);
  const int64_t groups = (p.n + NC - 1) / NC;
  const int64_t blocks = (groups * p.items + kTWarps - 1) / kTWarps;
  if (blocks > 0x7FFFFFFF) too_large(blocks);
  hold_launch(kernel, unsigned(blocks), kTWarps * 32, bytes, s, "Matmul (few rows)", p, groups, vec);
}

template <class T>
void launch_t(const RowsArgs& p, cudaStream_t s) {
  const int64_t item = sizeof(T);
  const bool vec = p.a_cs == 1 && p.b_rs == 1 &&
                   aligned(p.a, p.m == 1 ? 0 : p.a_rs * item) &&
                   aligned(p.b, p.b_cs * item) &&
                   batch_aligned(p, p.a_bs, item) &&
                   batch_aligned(p, p.b_bs, item);
  // Four columns a warp where that still gives 8192 warps (a wide product:
  // fewer loads of A), else one: a [2048, 2048] weight is then 512 blocks,
  // not 128 (one a multiprocessor, too few loads in flight; measured on the
  // H200, docs/performance.md). The sums are the same either way.
  const bool wide = (p.n + 3) / 4 * p.items >= 8192;
  auto go = [&](auto mt) {
    constexpr int MT = decltype(mt)::value;
    if (wide)
      launch_t<T, MT, 4>(p, vec, s);
    else
      launch_t<T, MT, 1>(p, vec, s);
  };
  if (p.m <= 1)
    go(std::integral_constant<int, 1>{});
  else if (p.m <= 2)
    go(std::integral_constant<int, 2>{});
  else if (p.m <= 4)
    go(std::integral_constant<int, 4>{});
  else
    go(std::integral_constant<int, 8>{});
}

template <class T, int MT>
void launch_n(const RowsArgs& p, int C, bool bvec, cudaStream_t s) {
  constexpr size_t bytes = NLayout<T, MT>::bytes;
  constexpr int COLS = NLayout<T, MT>::COLS;
  auto kernel = rows_n_kernel<T, MT>;
  static const cudaError_t allowed = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  check(allowed);
  const int64_t tiles = (p.n + COLS - 1) / COLS, blocks = p.items * tiles * C;
  if (blocks > 0x7FFFFFFF) too_large(blocks);
  flush_launches(s);  // a cluster launch: not held (launch.cuh)
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(blocks));
  cfg.blockDim = dim3(kNThreads);
  cfg.dynamicSmemBytes = bytes;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = unsigned(C);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  check(cudaLaunchKernelEx(&cfg, kernel, p, int(tiles), C, bvec));
}

template <class T>
void launch_n(const RowsArgs& p, cudaStream_t s) {
  const int64_t item = sizeof(T);
  const int C = cluster_of(p.k);
  const bool bvec = p.b_cs == 1 && aligned(p.b, p.b_rs * item) &&
                    batch_aligned(p, p.b_bs, item);
  if (p.m <= 1)
    launch_n<T, 1>(p, C, bvec, s);
  else if (p.m <= 2)
    launch_n<T, 2>(p, C, bvec, s);
  else if (p.m <= 4)
    launch_n<T, 4>(p, C, bvec, s);
  else
    launch_n<T, 8>(p, C, bvec, s);
}

}  // namespace

bool supports(DType t) {
  return t == float32 || t == float16 || t == bfloat16 || t == float64;
}

bool b_layout_ok(int64_t b_rs, int64_t b_cs, int k, int n) {
  return b_cs == 1 || n == 1 || b_rs == 1 || k == 1;
}

void matmul_rows(const RowsArgs& p, void* stream) {
  if (p.items == 0 || p.m == 0 || p.n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  quantk::with_type(p.t, "Matmul", [&](auto tag) {
    using T = decltype(tag);
    if (k_dense(p))
      launch_t<T>(p, s);
    else
      launch_n<T>(p, s);
  });
  quantk::check_launch("Matmul (few rows)");
}

}  // namespace nuvec::cuda::rows
