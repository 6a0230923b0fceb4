// Shared by the two kernels of the attention backward
// (fast_attention_backward.cu: the dQ kernel, the row statistics and the
// entry points; fast_attention_backward_kv.cu: the dK dV kernel): the
// call as the kernels see it, the tile sizes, and the tile products.
#pragma once

#include <cuda_runtime.h>

#include "backend/cuda/fast_attention.cuh"
#include "backend/cuda/fast_attention_mma.cuh"

namespace nuvec::cuda::fastk::attn::bwd {

using namespace tc;

constexpr int kQThreads = 128;  // the dQ kernel: 4 warps
constexpr int kBMq = 64;        // query rows of a dQ CTA
constexpr int kPad = 64;        // the statistics' rows: Lq rounded up to this
// Warps of a dK dV CTA (16 keys each): 4 (two CTAs an SM) or 8 (one).
constexpr int kKvWarps = 4;

template <int D>
struct BwdCfg {
  static constexpr int SROW = D + 8;  // shared row stride (elements)
  static constexpr int DB = D / 8;    // 8-column blocks of an accumulator
  // The dQ kernel: key tiles of BN.
  static constexpr int BN = D == 256 ? 32 : 64;
  static constexpr int NB = BN / 8;
  static constexpr int Q_SMEM = (2 * kBMq + 4 * BN) * SROW * 2 + kBMq * 4;
  static constexpr int Q_MIN = D <= 64 ? 3 : D <= 128 ? 2 : 1;
  // The dK dV kernel: NW warps of 16 keys, query tiles of BM.
  static constexpr int NW = kKvWarps;
  static constexpr int KBN = 16 * NW;
  static constexpr int BM = D == 256 ? 32 : 64;
  static constexpr int MB = BM / 8;
  static constexpr int KV_THREADS = 32 * NW;
  static constexpr int KV_SMEM = (2 * KBN + 4 * BM) * SROW * 2 + 2 * 3 * BM * 4;
  static constexpr int KV_MIN = D <= 128 && NW == 4 ? 2 : 1;
  // dK and dV in one pass (3), or dV (1) then dK (2).
  static constexpr bool kSplit = D == 256;
  static_assert(kPad % BM == 0 && kPad % kBMq == 0, "statistics padding");
};

struct BwdJob {
  const u16 *q, *k, *v, *o, *dout;
  const void *mask, *sinks;
  u16 *dq, *dk, *dv;
  float* st;    // m (base 2), 1 / l, Di: three arrays of B Hq Lqp rows
  int64_t nst;  // B Hq Lqp
  int Hq, Hkv, Lq, Lk, Lqp, rep, nqb;
  int64_t qs[3], ks[3], vs[3], ms[4];
  float scale;
  bool causal, mask_bool, vec;
};

// Rows [0, ROWS) of a [*, D] tile into shared memory (row r from
// g + r * stride, rows D + 8 apart); rows from `nrows` on are zeros.
// cp.async where the views are 16-byte aligned, else plain loads and
// stores of the same bytes.
template <int ROWS, int D, int NT>
__device__ __forceinline__ void load_rows(u16* dst, const u16* g,
                                          int64_t stride, int nrows, bool vec) {
  constexpr int CPR = D / 8;                     // 16-byte pieces per row
  constexpr int N = (ROWS * CPR + NT - 1) / NT;  // pieces per thread
  if (vec) {
#pragma unroll 1
    for (int n = 0; n < N; ++n) {
      const int idx = int(threadIdx.x) + n * NT;
      if (ROWS * CPR % NT == 0 || idx < ROWS * CPR) {
        const int r = idx / CPR, c = idx % CPR;
        const bool in = r < nrows;
        cp_async16(dst + r * (D + 8) + c * 8, in ? g + r * stride + c * 8 : g,
                   in);
      }
    }
    return;
  }
  for (int idx = threadIdx.x; idx < ROWS * CPR; idx += NT) {
    const int r = idx / CPR, c = idx % CPR;
    const u16* s = g + r * stride + c * 8;
    uint4 w = make_uint4(0, 0, 0, 0);
    if (r < nrows) {
      w.x = u32(s[0]) | u32(s[1]) << 16, w.y = u32(s[2]) | u32(s[3]) << 16;
      w.z = u32(s[4]) | u32(s[5]) << 16, w.w = u32(s[6]) | u32(s[7]) << 16;
    }
    *reinterpret_cast<uint4*>(dst + r * (D + 8) + c * 8) = w;
  }
}

// 8 elements at p (16-byte aligned when `vec`).
__device__ __forceinline__ uint4 load8(const u16* p, bool vec) {
  if (vec) return *reinterpret_cast<const uint4*>(p);
  return make_uint4(u32(p[0]) | u32(p[1]) << 16, u32(p[2]) | u32(p[3]) << 16,
                    u32(p[4]) | u32(p[5]) << 16, u32(p[6]) | u32(p[7]) << 16);
}

// acc = A B^T for the 16 rows of A at `A` and the 8 NB rows of B at `Bm`
// (both [*, D] in shared memory, rows D + 8 apart): Q K^T, dO V^T, K Q^T,
// V dO^T.
template <class T, int D, int NB>
__device__ __forceinline__ void mma_abt(float (&acc)[NB][4], const u16* A,
                                        const u16* Bm, const Lanes& ln) {
  constexpr int SROW = D + 8;
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
    acc[nb][0] = acc[nb][1] = acc[nb][2] = acc[nb][3] = 0.0f;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    u32 a[4];
    ldsm_x4(a, A + ln.arow * SROW + ks * 16 + ln.acol);
#pragma unroll
    for (int np = 0; np < NB / 2; ++np) {
      u32 b[4];
      ldsm_x4(b, Bm + (np * 16 + ln.krow) * SROW + ks * 16 + ln.kcol);
      mma16816<T>(acc[2 * np], a, b[0], b[1]);
      mma16816<T>(acc[2 * np + 1], a, b[2], b[3]);
    }
  }
}

// acc += P Bm for a 16 x 16 KK P in A fragments and the 16 KK rows of Bm
// ([*, D] in shared memory): dS K, P^T dO, dS^T Q.
template <class T, int D, int KK>
__device__ __forceinline__ void mma_pb(float (&acc)[D / 8][4],
                                       const u32 (&P)[KK][4], const u16* Bm,
                                       const Lanes& ln) {
  constexpr int SROW = D + 8;
#pragma unroll
  for (int kk = 0; kk < KK; ++kk)
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      u32 b[4];
      ldsm_x4_trans(b, Bm + (kk * 16 + ln.arow) * SROW + dp * 16 + ln.acol);
      mma16816<T>(acc[2 * dp], P[kk], b[0], b[1]);
      mma16816<T>(acc[2 * dp + 1], P[kk], b[2], b[3]);
    }
}

// Accumulator element e of 8-column block nb (in a thread's layout) in
// A-fragment position: 16 columns per fragment.
template <class T>
__device__ __forceinline__ void put_frag(u32 (&F)[4], int nb, int rh, float lo,
                                         float hi) {
  F[rh + 2 * (nb % 2)] = pack2<T>(lo, hi);
}

// The base-2 score of query row i and key `key` (accumulator acc) where a
// tile needs the checks: -inf for keys the row does not see (causal, past
// Lk, rows past Lq), the lowest value for every key of an all-hidden
// causal row, then the mask. `live` is false where the score does not
// depend on q and k (no gradient flows).
template <class T>
__device__ __forceinline__ float score_at(const BwdJob& j, int b, int h, int i,
                                          int key, float acc, float sl2,
                                          bool& live) {
  const RowKeys rk = row_keys(i, j.Lq, j.Lk, j.causal);
  const int lim = i < j.Lq ? rk.lim : 0;
  if (key >= lim) {
    live = false;
    return -kInf;
  }
  live = !rk.hidden;
  if (!rk.hidden && !j.mask) return acc * sl2;
  float s = rk.hidden ? lowest<T>() : j.scale * acc;
  if (j.mask) {
    const int64_t o =
        b * j.ms[0] + h * j.ms[1] + int64_t(i) * j.ms[2] + key * j.ms[3];
    if (j.mask_bool) {
      if (!static_cast<const unsigned char*>(j.mask)[o]) {
        s = lowest<T>();
        live = false;
      }
    } else {
      s += widen(static_cast<const T*>(j.mask)[o]);
    }
  }
  return to_log2(s);
}

/// The dK dV kernel (fast_attention_backward_kv.cu) for the call in j, on
/// s, after the dQ kernel wrote the row statistics.
void launch_dkv(const BwdJob& j, DType t, int D, int B, cudaStream_t s);

}  // namespace nuvec::cuda::fastk::attn::bwd
