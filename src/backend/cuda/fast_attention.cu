// Attention on the GPU (fast_attention.h): the vector kernel for 1 to 8
// query rows ("gpu_vector", decode) and the dispatch; the tensor-core
// kernel for longer queries is in fast_attention_tiled.cu ("gpu_tiled").
//
// Chunks. A row's keys [0, lim) are cut into chunks of kChunk = 256 keys
// from key 0, the same constant for every call. One block (128 threads)
// takes one chunk of one key/value head for up to NR = 1, 2 or 4 query rows
// of that head (its Hq / Hkv query heads times the Lq rows, in groups), so
// K and V are read once for the group (never copied for GQA). Blocks:
// B * Hkv * groups * chunks (decode B = 32, Hkv = 32, Lk = 4096: 16384
// blocks of 128 KB of K and V each).
//
// A chunk, three steps, each row's arithmetic on its own:
//   1. scores: G lanes own a key (G = D / elements-of-16-bytes rounded up
//      to a power of two, at most 32; each lane one 16-byte vector, two for
//      float32 D = 256), so the block has S = 128 / G key slots; chunk key j
//      belongs to slot j % S. Each lane's partial dot product runs over its
//      elements in order with fma, then an xor butterfly over the G lanes
//      (offsets G/2 .. 1, the same bits in every lane); s = scale * dot goes
//      to shared memory.
//   2. finish and max: thread t takes chunk keys t and t + 128: the hidden
//      value, the mask (coalesced reads), then the row's chunk max m by a
//      warp butterfly and the 4 warps in order; p_j = exp(s_j - m) (0 when
//      m = -inf) replaces s_j.
//   3. values: slot j % S adds p_j to its l and p_j v_j to its output
//      (fma), its keys in increasing order; the S slots are then summed in
//      slot order through shared memory. (m, l, o[Dv]) of the chunk go to
//      the scratch as float32.
// A second kernel (one warp per row) combines the row's chunks in chunk
// order: M = max(sink, m_c), l = exp(sink - M) + sum_c w_c l_c and
// o = sum_c w_c o_c with w_c = exp(m_c - M), then out = o / l rounded once
// (NaN when l == 0). No atomics; every order is fixed.
//
// Why the serial rule holds. Row i of a causal call sees keys [0, lim_i),
// lim_i = Lk - Lq + i + 1; the one-query call over those keys sees the
// same [0, lim_i). Both cut it into the same chunks (from key 0, 256
// each, the last one truncated at lim_i) and treat a chunk key j >= lim_i
// the same way: it is not in the row's max, gets no p, and is skipped in
// the sums (not added as zero). Every step above depends only on the
// chunk-relative key index and the row's own key count, never on the other
// rows of the block, NR, B or Lq: a key's score is the same function of q
// and k_j (step 1 has no cross-key arithmetic), the max tree and the slot
// sums are fixed by the key's place in the chunk, and the combine visits
// the row's ceil(lim_i / 256) chunks in order. So row i has the prefix
// call's bits, and with Lq == 1 each (b, h) row those of its item alone.
// The block's other rows only widen which keys are loaded.
//
// Loads are 16-byte vectors where the views allow (base and strides
// aligned), else element by element: the same values, the same bits.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "backend/cuda/elementwise.cuh"
#include "backend/cuda/fast_attention.cuh"
#include "backend/cuda/launch.cuh"

namespace nuvec::cuda::fastk {

namespace {

using namespace attn;

constexpr int kChunk = 256;
constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;

constexpr int pow2_ceil(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

// The lane layout of a key for element type T and head dimension D.
template <class T, int D>
struct VecCfg {
  static constexpr int E = 16 / int(sizeof(T));  // elements per 16-byte vector
  static constexpr int G =
      imin(32, pow2_ceil((D + E - 1) / E));             // lanes per key
  static constexpr int NV = (D + E * G - 1) / (E * G);  // vectors per lane
  static constexpr int S = kThreads / G;                // key slots per block
  static constexpr int U = NV == 1 ? 8 : 4;  // keys per slot in flight
  static constexpr int EL = NV * E;          // elements per lane
};

// The call as the kernels see it.
struct VecJob {
  const void *q, *k, *v, *mask, *sinks;
  void* out;
  int B, Hq, Hkv, Lq, Lk;
  int64_t qs[3], ks[3], vs[3], ms[4];
  bool mask_bool, causal, vec;
  float scale;
  int rep, rows_bk, groups, nc;  // Hq / Hkv, rows per K/V head, groups, chunks
};

// 16 bytes at p: one vector load when `vec`, else element by element.
template <class T>
__device__ __forceinline__ uint4 load16(const T* p, bool vec) {
  if (vec) return __ldg(reinterpret_cast<const uint4*>(p));
  uint4 r;
  u32 w[4];
  if constexpr (sizeof(T) == 2) {
    const u16* h = reinterpret_cast<const u16*>(p);
#pragma unroll
    for (int i = 0; i < 4; ++i)
      w[i] = u32(h[2 * i]) | (u32(h[2 * i + 1]) << 16);
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = __float_as_uint(p[i]);
  }
  r.x = w[0], r.y = w[1], r.z = w[2], r.w = w[3];
  return r;
}

template <class T>
__device__ __forceinline__ void unpack16(const uint4& w, float* f) {
  if constexpr (sizeof(T) == 2) {
    widen2<T>(w.x, f[0], f[1]);
    widen2<T>(w.y, f[2], f[3]);
    widen2<T>(w.z, f[4], f[5]);
    widen2<T>(w.w, f[6], f[7]);
  } else {
    f[0] = __uint_as_float(w.x), f[1] = __uint_as_float(w.y);
    f[2] = __uint_as_float(w.z), f[3] = __uint_as_float(w.w);
  }
}

// The lane's NV vectors of a D-long row (zeros where absent or past D).
template <class T, int D>
__device__ __forceinline__ void load_lane(const T* row, int lk, bool ok,
                                          bool vec,
                                          uint4 (&w)[VecCfg<T, D>::NV]) {
  using C = VecCfg<T, D>;
#pragma unroll
  for (int n = 0; n < C::NV; ++n) {
    const int e0 = (n * C::G + lk) * C::E;
    w[n] = ok && e0 < D ? load16(row + e0, vec) : make_uint4(0, 0, 0, 0);
  }
}

template <class T, int D>
__device__ __forceinline__ void unpack_lane(const uint4 (&w)[VecCfg<T, D>::NV],
                                            float (&f)[VecCfg<T, D>::EL]) {
  using C = VecCfg<T, D>;
#pragma unroll
  for (int n = 0; n < C::NV; ++n) unpack16<T>(w[n], f + n * C::E);
}

// Asks L2 for the lane's vectors of a row (the rows of later rounds, so
// that their loads find them in L2).
template <class T, int D>
__device__ __forceinline__ void prefetch_lane(const T* row, int lk, bool ok) {
  using C = VecCfg<T, D>;
#pragma unroll
  for (int n = 0; n < C::NV; ++n) {
    const int e0 = (n * C::G + lk) * C::E;
    if (ok && e0 < D) asm volatile("prefetch.global.L2 [%0];" ::"l"(row + e0));
  }
}
// The lane's rows of rounds [from, rounds) of a pass, keys slot + S t.
template <class T, int D>
__device__ __forceinline__ void prefetch_rounds(const T* base, int64_t stride,
                                                int key0, int slot, int lk,
                                                int from, int rounds,
                                                int maxvalid) {
  using C = VecCfg<T, D>;
  for (int t = from; t < rounds; ++t) {
    const int jj = slot + C::S * t;
    prefetch_lane<T, D>(base + (key0 + jj) * stride, lk, jj < maxvalid);
  }
}

template <int G>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int off = G / 2; off > 0; off /= 2)
    x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}
__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2)
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}

// The rows of a block: its group's query rows of one K/V head.
template <int NR>
struct BlockRows {
  int nvalid[NR];    // the row's keys in this chunk (0: not in the block)
  bool hidden[NR];   // every score the lowest value (causal, Lq > Lk)
  int64_t mrow[NR];  // the row's mask offset
  int64_t id[NR];    // the row's index in out: (b * Hq + h) * Lq + i
  int head[NR], qi[NR];
  int maxvalid;
};

template <int NR>
__device__ __forceinline__ BlockRows<NR> block_rows(const VecJob& j, int b,
                                                    int kvh, int g, int key0) {
  BlockRows<NR> br;
  br.maxvalid = 0;
#pragma unroll
  for (int r = 0; r < NR; ++r) {
    const int u = g * NR + r;
    const bool in = u < j.rows_bk;
    const int h = kvh * j.rep + (in ? u / j.Lq : 0), i = in ? u % j.Lq : 0;
    const RowKeys rk = row_keys(i, j.Lq, j.Lk, j.causal);
    const int n = in ? imin(kChunk, rk.lim - key0) : 0;
    br.nvalid[r] = n > 0 ? n : 0;
    br.hidden[r] = rk.hidden;
    br.head[r] = h;
    br.qi[r] = i;
    br.mrow[r] = b * j.ms[0] + h * j.ms[1] + i * j.ms[2];
    br.id[r] = (int64_t(b) * j.Hq + h) * j.Lq + i;
    br.maxvalid = imax(br.maxvalid, br.nvalid[r]);
  }
  return br;
}

// Step 2's score of chunk key jj of row r: hidden, then the mask.
template <class T, int NR>
__device__ __forceinline__ float finish_score(const VecJob& j,
                                              const BlockRows<NR>& br, int r,
                                              float s, int key) {
  if (br.hidden[r]) s = lowest<T>();
  if (j.mask) {
    const int64_t o = br.mrow[r] + key * j.ms[3];
    if (j.mask_bool) {
      if (!static_cast<const unsigned char*>(j.mask)[o]) s = lowest<T>();
    } else {
      s += widen(static_cast<const T*>(j.mask)[o]);
    }
  }
  return s;
}

template <class T, int D, int NR>
struct VecSmem {
  static constexpr int kBuf = imax(NR * kChunk, VecCfg<T, D>::S* NR* D);
  float buf[kBuf];  // scores, then weights; then the slots' outputs
  float wmax[kWarps][NR];
  float lsum[VecCfg<T, D>::S][NR];
};

// One chunk of one K/V head for up to NR query rows (see the top).
// At most 128 registers (4 blocks an SM; 168 and 3 for 4 rows), where
// ptxas spills nothing.
template <class T, int D, int NR>
__global__ void __launch_bounds__(kThreads, NR == 4 ? 3 : 4)
    vec_chunk_kernel(VecJob j, float* part_o, float* part_ml) {
  enter_held_kernel();
  using C = VecCfg<T, D>;
  __shared__ VecSmem<T, D, NR> sm;
  const int tid = threadIdx.x, slot = tid / C::G, lk = tid % C::G;
  const int g = blockIdx.x % j.groups, bk = blockIdx.x / j.groups;
  const int b = bk / j.Hkv, kvh = bk % j.Hkv, c = blockIdx.y, key0 = c * kChunk;
  const BlockRows<NR> br = block_rows<NR>(j, b, kvh, g, key0);
  if (br.maxvalid == 0) return;  // every row's keys end before this chunk
  const int rounds = (br.maxvalid + C::S - 1) / C::S;

  // Step 1: scores.
  {
    float q[NR][C::EL];
#pragma unroll
    for (int r = 0; r < NR; ++r) {
      const T* qrow = static_cast<const T*>(j.q) + b * j.qs[0] +
                      br.head[r] * j.qs[1] + br.qi[r] * j.qs[2];
      uint4 w[C::NV];
      load_lane<T, D>(qrow, lk, br.nvalid[r] > 0, j.vec, w);
      unpack_lane<T, D>(w, q[r]);
    }
    const T* kb = static_cast<const T*>(j.k) + b * j.ks[0] + kvh * j.ks[1];
    for (int t0 = 0; t0 < rounds; t0 += C::U) {
      uint4 w[C::U][C::NV];
#pragma unroll
      for (int u = 0; u < C::U; ++u) {
        const int jj = slot + C::S * (t0 + u);
        load_lane<T, D>(kb + (key0 + jj) * j.ks[2], lk, jj < br.maxvalid, j.vec,
                        w[u]);
      }
      if (t0 == 0)
        prefetch_rounds<T, D>(kb, j.ks[2], key0, slot, lk, C::U, rounds,
                              br.maxvalid);
#pragma unroll
      for (int u = 0; u < C::U; ++u) {
        if (t0 + u >= rounds) break;  // the same for the whole block
        const int jj = slot + C::S * (t0 + u);
        float kf[C::EL];
        unpack_lane<T, D>(w[u], kf);
#pragma unroll
        for (int r = 0; r < NR; ++r) {
          float acc = 0.0f;
#pragma unroll
          for (int e = 0; e < C::EL; ++e) acc = __fmaf_rn(q[r][e], kf[e], acc);
          acc = group_sum<C::G>(acc);
          if (lk == 0 && jj < br.maxvalid)
            sm.buf[r * kChunk + jj] = j.scale * acc;
        }
      }
    }
  }
  const T* vb = static_cast<const T*>(j.v) + b * j.vs[0] + kvh * j.vs[1];
  prefetch_rounds<T, D>(vb, j.vs[2], key0, slot, lk, 0, rounds,
                        br.maxvalid);  // for step 3
  __syncthreads();

  // Step 2: finished scores, the chunk max, the weights.
  const int lane = tid % 32, warp = tid / 32;
#pragma unroll
  for (int r = 0; r < NR; ++r) {
    float mx = -kInf;
#pragma unroll
    for (int kk = 0; kk < kChunk / kThreads; ++kk) {
      const int jj = tid + kThreads * kk;
      if (jj < br.nvalid[r]) {
        const float s =
            finish_score<T, NR>(j, br, r, sm.buf[r * kChunk + jj], key0 + jj);
        sm.buf[r * kChunk + jj] = s;
        mx = fmaxf(mx, s);
      }
    }
    mx = warp_max(mx);
    if (lane == 0) sm.wmax[warp][r] = mx;
  }
  __syncthreads();
  float m[NR];
#pragma unroll
  for (int r = 0; r < NR; ++r) {
    m[r] = sm.wmax[0][r];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) m[r] = fmaxf(m[r], sm.wmax[w][r]);
#pragma unroll
    for (int kk = 0; kk < kChunk / kThreads; ++kk) {
      const int jj = tid + kThreads * kk;
      if (jj < br.nvalid[r]) {
        float& s = sm.buf[r * kChunk + jj];
        s = m[r] == -kInf ? 0.0f : exp_softmax(s - m[r]);
      }
    }
  }
  __syncthreads();

  // Step 3: the weighted values, per slot, then the slots in order.
  float o[NR][C::EL], l[NR];
#pragma unroll
  for (int r = 0; r < NR; ++r) {
    l[r] = 0.0f;
#pragma unroll
    for (int e = 0; e < C::EL; ++e) o[r][e] = 0.0f;
  }
  for (int t0 = 0; t0 < rounds; t0 += C::U) {
    uint4 w[C::U][C::NV];
#pragma unroll
    for (int u = 0; u < C::U; ++u) {
      const int jj = slot + C::S * (t0 + u);
      load_lane<T, D>(vb + (key0 + jj) * j.vs[2], lk, jj < br.maxvalid, j.vec,
                      w[u]);
    }
#pragma unroll
    for (int u = 0; u < C::U; ++u) {
      if (t0 + u >= rounds) break;
      const int jj = slot + C::S * (t0 + u);
      float vf[C::EL];
      unpack_lane<T, D>(w[u], vf);
#pragma unroll
      for (int r = 0; r < NR; ++r) {
        if (jj < br.nvalid[r]) {  // keys past the row's end are skipped
          const float p = sm.buf[r * kChunk + jj];
          l[r] += p;
#pragma unroll
          for (int e = 0; e < C::EL; ++e)
            o[r][e] = __fmaf_rn(p, vf[e], o[r][e]);
        }
      }
    }
  }
  __syncthreads();  // the weights are read: the buffer takes the slots' outputs
#pragma unroll
  for (int r = 0; r < NR; ++r) {
#pragma unroll
    for (int n = 0; n < C::NV; ++n)
#pragma unroll
      for (int e = 0; e < C::E; ++e) {
        const int d = (n * C::G + lk) * C::E + e;
        if (d < D) sm.buf[(slot * NR + r) * D + d] = o[r][n * C::E + e];
      }
    if (lk == 0) sm.lsum[slot][r] = l[r];
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < NR; ++r) {
    if (br.nvalid[r] == 0) continue;
    const int64_t at = br.id[r] * j.nc + c;
    for (int d = tid; d < D; d += kThreads) {
      float acc = sm.buf[r * D + d];
#pragma unroll
      for (int s = 1; s < C::S; ++s) acc += sm.buf[(s * NR + r) * D + d];
      part_o[at * D + d] = acc;
    }
    if (tid == 0) {
      float ls = sm.lsum[0][r];
#pragma unroll
      for (int s = 1; s < C::S; ++s) ls += sm.lsum[s][r];
      part_ml[at * 2] = m[r];
      part_ml[at * 2 + 1] = ls;
    }
  }
}

// The chunks of each row, combined in chunk order (one warp per row).
template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    vec_combine_kernel(VecJob j, const float* part_o, const float* part_ml) {
  enter_held_kernel();
  constexpr int NQ = (D + 127) / 128;  // float4 groups per lane
  const int lane = threadIdx.x % 32;
  const int64_t row = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (row >= int64_t(j.B) * j.Hq * j.Lq) return;
  const int i = int(row % j.Lq), h = int((row / j.Lq) % j.Hq);
  const RowKeys rk = row_keys(i, j.Lq, j.Lk, j.causal);
  const int nc = (rk.lim + kChunk - 1) / kChunk;
  const float* ml = part_ml + row * j.nc * 2;
  const float* po = part_o + row * j.nc * D;
  const float sink = j.sinks ? widen(static_cast<const T*>(j.sinks)[h]) : -kInf;
  // Lane k reads chunk c0 + k's (m, l); the max is a butterfly, the sums
  // visit the chunks in order (their weights broadcast by shuffles).
  float M = sink;
  for (int c0 = 0; c0 < nc; c0 += 32) {
    const int c = c0 + lane;
    M = fmaxf(M, warp_max(c < nc ? ml[2 * c] : -kInf));
  }
  float l =
      j.sinks ? rescale(sink, M) : 0.0f;  // the sink's weight, 1 at M = sink
  float4 o[NQ];
#pragma unroll
  for (int n = 0; n < NQ; ++n) o[n] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int c0 = 0; c0 < nc; c0 += 32) {
    const int c = c0 + lane;
    const float wc = c < nc ? rescale(ml[2 * c], M) : 0.0f;
    const float lc = c < nc ? ml[2 * c + 1] : 0.0f;
    const int n_here = imin(32, nc - c0);
#pragma unroll 4
    for (int k = 0; k < n_here; ++k) {
      const float w = __shfl_sync(0xffffffffu, wc, k);
      l = __fmaf_rn(w, __shfl_sync(0xffffffffu, lc, k), l);
      const float* oc = po + int64_t(c0 + k) * D;
#pragma unroll
      for (int n = 0; n < NQ; ++n) {
        const int d = 4 * (lane + 32 * n);
        if (d < D) {
          const float4 x = *reinterpret_cast<const float4*>(oc + d);
          o[n].x = __fmaf_rn(w, x.x, o[n].x);
          o[n].y = __fmaf_rn(w, x.y, o[n].y);
          o[n].z = __fmaf_rn(w, x.z, o[n].z);
          o[n].w = __fmaf_rn(w, x.w, o[n].w);
        }
      }
    }
  }
  T* dst = static_cast<T*>(j.out) + row * D;
  const float nan = __int_as_float(0x7fc00000);
#pragma unroll
  for (int n = 0; n < NQ; ++n) {
    const int d = 4 * (lane + 32 * n);
    if (d < D) {
      const float x[4] = {o[n].x, o[n].y, o[n].z, o[n].w};
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dst[d + e] = narrow<T>(l > 0.0f ? x[e] / l : nan);
    }
  }
}

bool valid_dim(int d) {
  return d == 64 || d == 80 || d == 96 || d == 128 || d == 256;
}

// Query rows per block: 1, 2 or 4 (3 rows take the 4-row kernel).
int rows_per_block(int64_t rows_bk) { return rows_bk <= 2 ? int(rows_bk) : 4; }

template <class F>
void with_type(DType t, F&& f) {
  if (t == float16)
    f(kn::float16_t{});
  else if (t == bfloat16)
    f(kn::bfloat16_t{});
  else
    f(0.0f);
}

struct VecGrid {
  int64_t groups, chunks, blocks_x, combine_blocks;
};
VecGrid vec_grid(const AttentionArgs& a) {
  const int64_t rows_bk = int64_t(a.Hq / a.Hkv) * a.Lq;
  const int nr = rows_per_block(rows_bk);
  VecGrid g;
  g.groups = nr ? (rows_bk + nr - 1) / nr : 0;
  g.chunks = (int64_t(a.Lk) + kChunk - 1) / kChunk;
  g.blocks_x = int64_t(a.B) * a.Hkv * g.groups;
  g.combine_blocks = (int64_t(a.B) * a.Hq * a.Lq + kWarps - 1) / kWarps;
  return g;
}

void launch_vector(const AttentionArgs& a, void* scratch, cudaStream_t s) {
  const VecGrid g = vec_grid(a);
  VecJob j;
  j.q = a.q, j.k = a.k, j.v = a.v, j.mask = a.mask, j.sinks = a.sinks,
  j.out = a.out;
  j.B = a.B, j.Hq = a.Hq, j.Hkv = a.Hkv, j.Lq = a.Lq, j.Lk = a.Lk;
  for (int i = 0; i < 3; ++i)
    j.qs[i] = a.q_st[i], j.ks[i] = a.k_st[i], j.vs[i] = a.v_st[i];
  for (int i = 0; i < 4; ++i) j.ms[i] = a.mask_st[i];
  j.mask_bool = a.mask_is_bool, j.causal = a.causal, j.scale = a.scale;
  const int size = a.t.size();
  j.vec = aligned16(a.q, a.q_st, size) && aligned16(a.k, a.k_st, size) &&
          aligned16(a.v, a.v_st, size);
  j.rep = a.Hq / a.Hkv;
  j.rows_bk = j.rep * a.Lq;
  j.groups = int(g.groups);
  j.nc = int(g.chunks);
  float* part_o = static_cast<float*>(scratch);
  float* part_ml = part_o + int64_t(a.B) * a.Hq * a.Lq * g.chunks * a.Dv;
  const int nr = rows_per_block(j.rows_bk);
  const dim3 grid(unsigned(g.blocks_x), unsigned(g.chunks));
  with_type(a.t, [&](auto tag) {
    using T = decltype(tag);
    with_dim(a.D, [&](auto dim) {
      constexpr int D = decltype(dim)::value;
      // Both held (launch.cuh): the step's other kernels go with them.
      auto chunk = nr == 1   ? vec_chunk_kernel<T, D, 1>
                   : nr == 2 ? vec_chunk_kernel<T, D, 2>
                             : vec_chunk_kernel<T, D, 4>;
      hold_launch(chunk, grid, kThreads, 0, s, "Attention (vector)", j, part_o, part_ml);
      hold_launch(vec_combine_kernel<T, D>, unsigned(g.combine_blocks), kThreads, 0, s, "Attention (combine)", j,
                  part_o, part_ml);
    });
  });
}

}  // namespace

const char* attention_kernel(const AttentionArgs& a) {
  if (!(a.t == float16 || a.t == bfloat16 || a.t == float32)) return "";
  if (a.D != a.Dv || !valid_dim(a.D)) return "";
  if (a.B < 0 || a.Lq < 0 || a.Lk < 0 || a.Hq <= 0 || a.Hkv <= 0 ||
      a.Hq % a.Hkv)
    return "";
  if (a.Lq <= 8) {
    const VecGrid g = vec_grid(a);
    if (g.chunks > 65535 || g.blocks_x > INT_MAX || g.combine_blocks > INT_MAX)
      return "";
    return "gpu_vector";
  }
  if (a.t == float32 || !tiled_fits(a)) return "";
  return "gpu_tiled";
}

size_t attention_scratch_bytes(const AttentionArgs& a) {
  const char* k = attention_kernel(a);
  if (std::strcmp(k, "gpu_vector") != 0 || a.Lk == 0) return 0;
  const int64_t parts = int64_t(a.B) * a.Hq * a.Lq * vec_grid(a).chunks;
  return size_t(parts) * (size_t(a.Dv) + 2) * sizeof(float);
}

void attention(const AttentionArgs& a, void* scratch, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const int64_t n = int64_t(a.B) * a.Hq * a.Lq * a.Dv;
  if (n == 0) return;
  // Only the vector kernels are held (launch.cuh): anything else is
  // enqueued after what the stream holds.
  const char* k = a.Lk != 0 ? attention_kernel(a) : "";
  const bool vector = std::strcmp(k, "gpu_vector") == 0;
  if (!vector) flush_launches(s);
  if (a.Lk == 0) {  // softmax over no key: the composite's empty product
    const cudaError_t e = cudaMemsetAsync(a.out, 0, size_t(n) * a.t.size(), s);
    if (e != cudaSuccess)
      (Error(ErrorKind::backend,
             std::string("CUDA memset of Attention failed: ") +
                 cudaGetErrorString(e)))
          .raise();
    return;
  }
  if (vector)
    launch_vector(a, scratch, s);
  else if (std::strcmp(k, "gpu_tiled") == 0)
    launch_tiled(a, s);
  else
    (Error(ErrorKind::backend, "no GPU attention kernel takes this call"))
        .raise();
}

}  // namespace nuvec::cuda::fastk
