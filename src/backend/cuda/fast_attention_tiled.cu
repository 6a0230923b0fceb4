// The tensor-core attention kernel ("gpu_tiled", fast_attention.h):
// float16 and bfloat16, more than 8 query rows (prefill), FlashAttention-2
// style.
//
// Tiles. A CTA of 4 warps takes kBM = 64 query rows of one (b, h); warp w
// owns rows 16w .. 16w + 15. Keys go in tiles of BN = 64 (32 for D = 256)
// from key 0, in order, through shared memory: cp.async copies (16 bytes a
// thread) into two buffers for K and two for V, so tile t + 1 loads while
// tile t computes. Rows are D + 8 elements apart in shared memory, which
// makes every ldmatrix phase (8 rows of 16 bytes) hit 8 distinct bank
// groups for each D. Shared memory: 4 tiles (69632 bytes for D = 128; Q
// lives in the second K buffer until the first tile, its fragments then
// stay in registers); for D = 256 Q keeps its own 33792 bytes and is read
// again per tile (registers: 128 accumulators of O already).
//
// Per tile, per warp: S = Q K^T with mma.sync m16n8k16 (16-bit inputs,
// float32 accumulators; K fragments by ldmatrix), then an online softmax in
// registers, in base 2: t = acc * (scale log2 e) (with the hidden value or
// the mask where the tile needs them: t = (scale acc + mask) log2 e), the
// row's tile max over the 4 threads of a quad (xor shuffles),
// m' = max(m, tile max), O and l scaled by 2^(m - m'), p = 2^(t - m')
// (ex2.approx) rounded to T for the P operand, and l += the rounded p's (the
// weights of numerator and denominator agree: equal values come back up to
// float32 rounding); then O += P V
// (V fragments by ldmatrix.trans). The weights' float32 accuracy (about
// 2^-18) is far below P's 16-bit rounding. Causal tiles past the block's
// last visible key are never loaded; tiles entirely visible to a warp skip
// the per-element checks. The output is o / l rounded once.
//
// For D <= 128 the launch takes tiled2_kernel instead (kTwoTiles): 128
// rows a CTA, 32 a warp as two 16-row tiles sharing each K and V fragment,
// Q read from its own buffer per tile; each row's arithmetic is the one
// above (the same tiles up to its last key; later tiles give it p = 0 and
// alpha = 1, changing nothing), so both kernels give the same bits.
//
// Determinism: no atomics, every reduction in a fixed order, and a row's
// arithmetic depends only on its block of 64 rows (q0 = a multiple of 64),
// Lq, Lk and the data: not on B or Hq, which only replicate CTAs. CTAs
// run heavy-first within a head under a causal mask (the grid's x reversed).
//
// Hidden keys of a tile that crosses the causal diagonal (or Lk) enter the
// P V product with p = 0; keys past Lk are zero-filled in shared memory,
// so they add exact zeros (an infinite or NaN value in a key the mask
// hides would still give NaN: 0 * inf).
#include <cuda_runtime.h>

#include <algorithm>

#include "backend/cuda/elementwise.cuh"
#include "backend/cuda/fast_attention.cuh"
#include "backend/cuda/fast_attention_mma.cuh"

namespace nuvec::cuda::fastk::attn {

namespace {

using namespace tc;

constexpr int kBM = 64;
constexpr int kThreads = 128;

template <int D>
struct TileCfg {
  static constexpr int BN = D == 256 ? 32 : 64;  // keys per tile
  static constexpr bool kQRegs = D <= 128;  // Q fragments kept in registers
  static constexpr int SROW = D + 8;        // shared row stride (elements)
  static constexpr int TILE = BN * SROW;    // elements of one K or V buffer
  static constexpr int QTILE = kBM * SROW;
  static constexpr int SMEM = (4 * TILE + (kQRegs ? 0 : QTILE)) * 2;  // bytes
  static constexpr int KS = D / 16;  // k-steps of Q K^T
  static constexpr int NB = BN / 8;  // 8-key blocks of S
  static constexpr int DB = D / 8;   // 8-column blocks of O
  // CTAs an SM should hold: 3 where 168 registers suffice without spills.
  static constexpr int kMinBlocks = D <= 80 ? 3 : 2;
  static_assert(!kQRegs || BN >= kBM, "Q borrows a K buffer");
};

struct TileJob {
  const u16 *q, *k, *v;
  const void *mask, *sinks;
  u16* out;
  int Hq, Lq, Lk, rep, nqb;
  int64_t qs[3], ks[3], vs[3], ms[4];
  float scale;
  bool causal, mask_bool, vec;
};

// ---- Tiles ----------------------------------------------------------------

// Rows [0, ROWS) of a tile into shared memory (row r from g + r * stride);
// rows from `nrows` on are zeros. cp.async where the views are 16-byte
// aligned, else plain loads and stores of the same bytes.
template <int ROWS, int D>
__device__ __forceinline__ void load_tile(u16* dst, const u16* g,
                                          int64_t stride, int nrows, bool vec) {
  constexpr int CPR = D / 8;  // 16-byte pieces per row
  for (int idx = threadIdx.x; idx < ROWS * CPR; idx += kThreads) {
    const int r = idx / CPR, c = idx % CPR;
    u16* d = dst + r * TileCfg<D>::SROW + c * 8;
    const u16* s = g + r * stride + c * 8;
    if (vec) {
      cp_async16(d, r < nrows ? s : g, r < nrows);
    } else {
      uint4 w = make_uint4(0, 0, 0, 0);
      if (r < nrows) {
        w.x = u32(s[0]) | u32(s[1]) << 16, w.y = u32(s[2]) | u32(s[3]) << 16;
        w.z = u32(s[4]) | u32(s[5]) << 16, w.w = u32(s[6]) | u32(s[7]) << 16;
      }
      *reinterpret_cast<uint4*>(d) = w;
    }
  }
}

// S = Q K^T for the warp's 16 rows and the tile's BN keys.
template <class T, int D>
__device__ __forceinline__ void qk_tile(
    float (&S)[TileCfg<D>::NB][4],
    const u32 (&qf)[TileCfg<D>::kQRegs ? TileCfg<D>::KS : 1][4], const u16* Qw,
    const u16* Kb, const Lanes& ln) {
  using C = TileCfg<D>;
#pragma unroll
  for (int nb = 0; nb < C::NB; ++nb)
    S[nb][0] = S[nb][1] = S[nb][2] = S[nb][3] = 0.0f;
#pragma unroll
  for (int ks = 0; ks < C::KS; ++ks) {
    u32 a[4];
    if constexpr (C::kQRegs) {
      a[0] = qf[ks][0], a[1] = qf[ks][1], a[2] = qf[ks][2], a[3] = qf[ks][3];
    } else {
      ldsm_x4(a, Qw + ln.arow * C::SROW + ks * 16 + ln.acol);
    }
#pragma unroll
    for (int np = 0; np < C::NB / 2; ++np) {
      u32 b[4];
      ldsm_x4(b, Kb + (np * 16 + ln.krow) * C::SROW + ks * 16 + ln.kcol);
      mma16816<T>(S[2 * np], a, b[0], b[1]);
      mma16816<T>(S[2 * np + 1], a, b[2], b[3]);
    }
  }
}

// O += P V for the warp's 16 rows.
template <class T, int D>
__device__ __forceinline__ void pv_tile(float (&O)[TileCfg<D>::DB][4],
                                        const u32 (&P)[TileCfg<D>::NB / 2][4],
                                        const u16* Vb, const Lanes& ln) {
  using C = TileCfg<D>;
#pragma unroll
  for (int kk = 0; kk < C::BN / 16; ++kk)
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      u32 b[4];
      ldsm_x4_trans(b, Vb + (kk * 16 + ln.arow) * C::SROW + dp * 16 + ln.acol);
      mma16816<T>(O[2 * dp], P[kk], b[0], b[1]);
      mma16816<T>(O[2 * dp + 1], P[kk], b[2], b[3]);
    }
}

// The base-2 scores of the thread's accumulators where the tile is not
// entirely visible: scale, the hidden value and the mask, -inf for keys
// the row does not see (past its causal end or Lk, or rows past Lq). With
// neither hidden value nor mask, t = acc * sl2 as the visible tiles.
template <class T, int D>
__device__ __forceinline__ void mask_scores(float (&S)[TileCfg<D>::NB][4],
                                            const TileJob& j, int b, int h,
                                            int row0, int key0, int tq,
                                            float sl2) {
  using C = TileCfg<D>;
#pragma unroll
  for (int rh = 0; rh < 2; ++rh) {
    const int i = row0 + 8 * rh;
    const RowKeys rk = row_keys(i, j.Lq, j.Lk, j.causal);
    const int lim = i < j.Lq ? rk.lim : 0;
    const int64_t mrow = b * j.ms[0] + h * j.ms[1] + int64_t(i) * j.ms[2];
#pragma unroll
    for (int nb = 0; nb < C::NB; ++nb)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int key = key0 + nb * 8 + 2 * tq + c;
        float t = S[nb][2 * rh + c] * sl2;
        if (rk.hidden || (j.mask && key < lim)) {
          float s = rk.hidden ? lowest<T>() : j.scale * S[nb][2 * rh + c];
          if (j.mask && key < lim) {
            const int64_t o = mrow + key * j.ms[3];
            if (j.mask_bool) {
              if (!static_cast<const unsigned char*>(j.mask)[o])
                s = lowest<T>();
            } else {
              s += widen(static_cast<const T*>(j.mask)[o]);
            }
          }
          t = to_log2(s);
        }
        S[nb][2 * rh + c] = key < lim ? t : -kInf;
      }
  }
}

// The online softmax step of a tile (base-2 scores; m in base 2 too):
// updates m, l (thread partials of the rounded weights) and O's scale;
// writes the P operand.
template <class T, int D>
__device__ __forceinline__ void softmax_tile(float (&S)[TileCfg<D>::NB][4],
                                             float (&m)[2], float (&l)[2],
                                             float (&O)[TileCfg<D>::DB][4],
                                             u32 (&P)[TileCfg<D>::NB / 2][4]) {
  using C = TileCfg<D>;
#pragma unroll
  for (int rh = 0; rh < 2; ++rh) {
    float mt = -kInf;
#pragma unroll
    for (int nb = 0; nb < C::NB; ++nb)
      mt = fmaxf(mt, fmaxf(S[nb][2 * rh], S[nb][2 * rh + 1]));
    mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
    mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 2));
    const float mn = fmaxf(m[rh], mt);
    const float alpha = m[rh] == -kInf ? 0.0f : ex2_ftz(m[rh] - mn);
    m[rh] = mn;
    float sum = 0.0f;
#pragma unroll
    for (int nb = 0; nb < C::NB; ++nb) {
      const float p0 = mn == -kInf ? 0.0f : ex2_ftz(S[nb][2 * rh] - mn);
      const float p1 = mn == -kInf ? 0.0f : ex2_ftz(S[nb][2 * rh + 1] - mn);
      const u32 w = pack2<T>(p0, p1);
      float r0, r1;
      widen2<T>(w, r0, r1);
      sum += r0;
      sum += r1;
      // A operand of P V: rows g (rh 0) / g + 8 (rh 1), keys 8 nb + 2 tq.
      P[nb / 2][rh + 2 * (nb % 2)] = w;
    }
    l[rh] = __fmaf_rn(l[rh], alpha, sum);
#pragma unroll
    for (int db = 0; db < C::DB; ++db) {
      O[db][2 * rh] *= alpha;
      O[db][2 * rh + 1] *= alpha;
    }
  }
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads, TileCfg<D>::kMinBlocks)
    tiled_kernel(TileJob j) {
  using C = TileCfg<D>;
  extern __shared__ uint4 smem_raw[];
  u16* smem = reinterpret_cast<u16*>(smem_raw);
  // K buffers at tiles 0 and 1, V buffers at 2 and 3, then Q (D = 256).
  auto kbuf = [&](int i) { return smem + i * C::TILE; };
  auto vbuf = [&](int i) { return smem + (2 + i) * C::TILE; };
  u16* const Qs = C::kQRegs ? kbuf(1) : smem + 4 * C::TILE;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, tq = lane % 4;
  const int qb = j.causal ? j.nqb - 1 - int(blockIdx.x) : int(blockIdx.x);
  const int h = blockIdx.y, b = blockIdx.z, kvh = h / j.rep;
  const int q0 = qb * kBM, qrows = imin(kBM, j.Lq - q0);
  const int row0 =
      q0 + warp * 16 + lane / 4;  // the thread's rows: row0, row0 + 8
  const Lanes ln = lanes_of(lane);
  const float sl2 = j.scale * kLog2e;  // scores straight to base 2

  // The keys the block needs: up to its last row's causal end, or all of
  // them when one of its rows sees none (every key is then hidden).
  int kend = j.Lk;
  if (j.causal && !row_keys(q0, j.Lq, j.Lk, true).hidden)
    kend = row_keys(q0 + qrows - 1, j.Lq, j.Lk, true).lim;
  const int nt = (kend + C::BN - 1) / C::BN;

  const u16* qg = j.q + b * j.qs[0] + h * j.qs[1] + q0 * j.qs[2];
  const u16* kg = j.k + b * j.ks[0] + kvh * j.ks[1];
  const u16* vg = j.v + b * j.vs[0] + kvh * j.vs[1];
  load_tile<kBM, D>(Qs, qg, j.qs[2], qrows, j.vec);
  load_tile<C::BN, D>(kbuf(0), kg, j.ks[2], imin(C::BN, j.Lk), j.vec);
  cp_commit();
  load_tile<C::BN, D>(vbuf(0), vg, j.vs[2], imin(C::BN, j.Lk), j.vec);
  cp_commit();

  // The running max starts at the sink, the sum at its weight 1 (counted
  // once per row: in the quad's first thread).
  float m[2], l[2];
  const float sink = j.sinks ? widen(static_cast<const T*>(j.sinks)[h]) : -kInf;
  m[0] = m[1] = to_log2(sink);
  l[0] = l[1] = j.sinks && tq == 0 ? 1.0f : 0.0f;
  float O[C::DB][4];
#pragma unroll
  for (int db = 0; db < C::DB; ++db)
    O[db][0] = O[db][1] = O[db][2] = O[db][3] = 0.0f;
  u32 qf[C::kQRegs ? C::KS : 1][4];
  const u16* Qw = Qs + warp * 16 * C::SROW;

  for (int t = 0; t < nt; ++t) {
    const int buf = t & 1, key0 = t * C::BN;
    cp_wait1();  // K_t (and Q) landed; V_t may still be in flight
    __syncthreads();
    if constexpr (C::kQRegs) {
      if (t == 0) {
#pragma unroll
        for (int ks = 0; ks < C::KS; ++ks)
          ldsm_x4(qf[ks], Qw + ln.arow * C::SROW + ks * 16 + ln.acol);
        __syncthreads();  // Q's buffer takes K_1 next
      }
    }
    // K_{t+1} into the buffer K_{t-1} left (its readers passed the barrier).
    if (t + 1 < nt)
      load_tile<C::BN, D>(kbuf(buf ^ 1), kg + (key0 + C::BN) * j.ks[2], j.ks[2],
                          imin(C::BN, j.Lk - key0 - C::BN), j.vec);
    cp_commit();

    float S[C::NB][4];
    qk_tile<T, D>(S, qf, Qw, kbuf(buf), ln);
    // Whether every key of the tile is visible to every row of the warp.
    bool full = !j.mask && key0 + C::BN <= j.Lk;
    if (j.causal) {
      const RowKeys rk = row_keys(q0 + warp * 16, j.Lq, j.Lk, true);
      full = full && !rk.hidden && key0 + C::BN <= rk.lim;
    }
    if (full) {
#pragma unroll
      for (int nb = 0; nb < C::NB; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) S[nb][e] *= sl2;
    } else {
      mask_scores<T, D>(S, j, b, h, row0, key0, tq, sl2);
    }
    u32 P[C::NB / 2][4];
    softmax_tile<T, D>(S, m, l, O, P);

    cp_wait1();  // V_t landed; K_{t+1} may still be in flight
    __syncthreads();
    if (t + 1 < nt)
      load_tile<C::BN, D>(vbuf(buf ^ 1), vg + (key0 + C::BN) * j.vs[2], j.vs[2],
                          imin(C::BN, j.Lk - key0 - C::BN), j.vec);
    cp_commit();
    pv_tile<T, D>(O, P, vbuf(buf), ln);
  }

  // o / l, rounded once; l sums the quad's partials in a fixed order.
  const float nan = __int_as_float(0x7fc00000);
#pragma unroll
  for (int rh = 0; rh < 2; ++rh) {
    float lt = l[rh];
    lt += __shfl_xor_sync(0xffffffffu, lt, 1);
    lt += __shfl_xor_sync(0xffffffffu, lt, 2);
    const int i = row0 + 8 * rh;
    if (i >= j.Lq) continue;
    u16* dst = j.out + ((int64_t(b) * j.Hq + h) * j.Lq + i) * D;
#pragma unroll
    for (int db = 0; db < C::DB; ++db) {
      const float x0 = lt > 0.0f ? O[db][2 * rh] / lt : nan;
      const float x1 = lt > 0.0f ? O[db][2 * rh + 1] / lt : nan;
      dst[db * 8 + 2 * tq] = narrow<T>(x0).bits;
      dst[db * 8 + 2 * tq + 1] = narrow<T>(x1).bits;
    }
  }
}

// ---- Two row tiles a warp (D <= 128) ---------------------------------------
// The same arithmetic for each row with 128 rows a CTA: warp w owns rows
// 32w .. 32w + 31 as two 16-row tiles that share every K and V fragment
// (half the ldmatrix traffic per mma, twice the independent mma a warp, as
// FlashAttention-2's forward). Q keeps its own buffer and is read per tile
// (2 ldmatrix per k-step for 16 mma). A warp skips the causal tiles past
// its own rows' last key (only extra tiles, in which its rows' weights are
// all 0, so the rows' bits do not change).
constexpr int kBM2 = 128;
// Whether D <= 128 takes tiled2_kernel (else tiled_kernel, 64 rows a CTA).
constexpr bool kTwoTiles = true;

template <int D>
struct Tile2Cfg {
  static constexpr int SMEM =
      (4 * TileCfg<D>::TILE + kBM2 * TileCfg<D>::SROW) * 2;  // bytes
};

template <class T, int D>
__global__ void __launch_bounds__(kThreads, 2) tiled2_kernel(TileJob j) {
  using C = TileCfg<D>;
  extern __shared__ uint4 smem_raw[];
  u16* smem = reinterpret_cast<u16*>(smem_raw);
  auto kbuf = [&](int i) { return smem + i * C::TILE; };
  auto vbuf = [&](int i) { return smem + (2 + i) * C::TILE; };
  u16* const Qs = smem + 4 * C::TILE;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, tq = lane % 4;
  const int qb = j.causal ? j.nqb - 1 - int(blockIdx.x) : int(blockIdx.x);
  const int h = blockIdx.y, b = blockIdx.z, kvh = h / j.rep;
  const int q0 = qb * kBM2, qrows = imin(kBM2, j.Lq - q0);
  const int wr0 = q0 + warp * 32;  // the warp's rows: tile mi from wr0 + 16 mi
  const Lanes ln = lanes_of(lane);
  const float sl2 = j.scale * kLog2e;

  int kend = j.Lk, wend = j.Lk;
  if (j.causal && !row_keys(q0, j.Lq, j.Lk, true).hidden)
    kend = row_keys(q0 + qrows - 1, j.Lq, j.Lk, true).lim;
  if (j.causal && !row_keys(wr0, j.Lq, j.Lk, true).hidden)
    wend = row_keys(imin(wr0 + 31, j.Lq - 1), j.Lq, j.Lk, true).lim;
  if (wr0 >= j.Lq) wend = 0;  // no row of the warp is stored
  const int nt = (kend + C::BN - 1) / C::BN;

  const u16* qg = j.q + b * j.qs[0] + h * j.qs[1] + q0 * j.qs[2];
  const u16* kg = j.k + b * j.ks[0] + kvh * j.ks[1];
  const u16* vg = j.v + b * j.vs[0] + kvh * j.vs[1];
  load_tile<kBM2, D>(Qs, qg, j.qs[2], qrows, j.vec);
  load_tile<C::BN, D>(kbuf(0), kg, j.ks[2], imin(C::BN, j.Lk), j.vec);
  cp_commit();
  load_tile<C::BN, D>(vbuf(0), vg, j.vs[2], imin(C::BN, j.Lk), j.vec);
  cp_commit();

  float m[2][2], l[2][2];
  const float sink = j.sinks ? widen(static_cast<const T*>(j.sinks)[h]) : -kInf;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
    m[mi][0] = m[mi][1] = to_log2(sink);
    l[mi][0] = l[mi][1] = j.sinks && tq == 0 ? 1.0f : 0.0f;
  }
  float O[2][C::DB][4];
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int db = 0; db < C::DB; ++db)
      O[mi][db][0] = O[mi][db][1] = O[mi][db][2] = O[mi][db][3] = 0.0f;
  const u16* Qw = Qs + warp * 32 * C::SROW;

  for (int t = 0; t < nt; ++t) {
    const int buf = t & 1, key0 = t * C::BN;
    cp_wait1();  // K_t (and Q) landed; V_t may still be in flight
    __syncthreads();
    if (t + 1 < nt)
      load_tile<C::BN, D>(kbuf(buf ^ 1), kg + (key0 + C::BN) * j.ks[2], j.ks[2],
                          imin(C::BN, j.Lk - key0 - C::BN), j.vec);
    cp_commit();

    const bool act = key0 < wend;  // some row of the warp sees a key here
    u32 P[2][C::NB / 2][4];
    if (act) {
      float S[2][C::NB][4];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int nb = 0; nb < C::NB; ++nb)
          S[mi][nb][0] = S[mi][nb][1] = S[mi][nb][2] = S[mi][nb][3] = 0.0f;
      const u16* Kb = kbuf(buf);
#pragma unroll
      for (int ks = 0; ks < C::KS; ++ks) {
        u32 a0[4], a1[4];
        ldsm_x4(a0, Qw + ln.arow * C::SROW + ks * 16 + ln.acol);
        ldsm_x4(a1, Qw + (16 + ln.arow) * C::SROW + ks * 16 + ln.acol);
#pragma unroll
        for (int np = 0; np < C::NB / 2; ++np) {
          u32 bk[4];
          ldsm_x4(bk, Kb + (np * 16 + ln.krow) * C::SROW + ks * 16 + ln.kcol);
          mma16816<T>(S[0][2 * np], a0, bk[0], bk[1]);
          mma16816<T>(S[0][2 * np + 1], a0, bk[2], bk[3]);
          mma16816<T>(S[1][2 * np], a1, bk[0], bk[1]);
          mma16816<T>(S[1][2 * np + 1], a1, bk[2], bk[3]);
        }
      }
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        // Whether every key of the tile is visible to every row of the
        // 16-row tile (as tiled_kernel decides for its warps).
        bool full = !j.mask && key0 + C::BN <= j.Lk;
        if (j.causal) {
          const RowKeys rk = row_keys(wr0 + 16 * mi, j.Lq, j.Lk, true);
          full = full && !rk.hidden && key0 + C::BN <= rk.lim;
        }
        if (full) {
#pragma unroll
          for (int nb = 0; nb < C::NB; ++nb)
#pragma unroll
            for (int e = 0; e < 4; ++e) S[mi][nb][e] *= sl2;
        } else {
          mask_scores<T, D>(S[mi], j, b, h, wr0 + 16 * mi + lane / 4, key0, tq,
                            sl2);
        }
        softmax_tile<T, D>(S[mi], m[mi], l[mi], O[mi], P[mi]);
      }
    }

    cp_wait1();  // V_t landed; K_{t+1} may still be in flight
    __syncthreads();
    if (t + 1 < nt)
      load_tile<C::BN, D>(vbuf(buf ^ 1), vg + (key0 + C::BN) * j.vs[2], j.vs[2],
                          imin(C::BN, j.Lk - key0 - C::BN), j.vec);
    cp_commit();
    if (act) {
      const u16* Vb = vbuf(buf);
#pragma unroll
      for (int kk = 0; kk < C::BN / 16; ++kk)
#pragma unroll
        for (int dp = 0; dp < D / 16; ++dp) {
          u32 bv[4];
          ldsm_x4_trans(bv,
                        Vb + (kk * 16 + ln.arow) * C::SROW + dp * 16 + ln.acol);
          mma16816<T>(O[0][2 * dp], P[0][kk], bv[0], bv[1]);
          mma16816<T>(O[0][2 * dp + 1], P[0][kk], bv[2], bv[3]);
          mma16816<T>(O[1][2 * dp], P[1][kk], bv[0], bv[1]);
          mma16816<T>(O[1][2 * dp + 1], P[1][kk], bv[2], bv[3]);
        }
    }
  }

  // o / l, rounded once, as tiled_kernel.
  const float nan = __int_as_float(0x7fc00000);
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int rh = 0; rh < 2; ++rh) {
      float lt = l[mi][rh];
      lt += __shfl_xor_sync(0xffffffffu, lt, 1);
      lt += __shfl_xor_sync(0xffffffffu, lt, 2);
      const int i = wr0 + 16 * mi + lane / 4 + 8 * rh;
      if (i >= j.Lq) continue;
      u16* dst = j.out + ((int64_t(b) * j.Hq + h) * j.Lq + i) * D;
#pragma unroll
      for (int db = 0; db < C::DB; ++db) {
        const float x0 = lt > 0.0f ? O[mi][db][2 * rh] / lt : nan;
        const float x1 = lt > 0.0f ? O[mi][db][2 * rh + 1] / lt : nan;
        dst[db * 8 + 2 * tq] = narrow<T>(x0).bits;
        dst[db * 8 + 2 * tq + 1] = narrow<T>(x1).bits;
      }
    }
}

template <class T, int D>
void launch(TileJob j, int Lq, int B, cudaStream_t s) {
  using C = TileCfg<D>;
  if constexpr (D <= 128) {
    if (kTwoTiles) {
      auto* kern = tiled2_kernel<T, D>;
      constexpr int smem = Tile2Cfg<D>::SMEM;
      cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           smem);
      cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                           100);
      j.nqb = (Lq + kBM2 - 1) / kBM2;
      kern<<<dim3(unsigned(j.nqb), unsigned(j.Hq), unsigned(B)), kThreads, smem,
             s>>>(j);
      ew::check_launch("Attention (tiled)");
      return;
    }
  }
  {
    auto* kern = tiled_kernel<T, D>;
    cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         C::SMEM);
    cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                         100);
    j.nqb = (Lq + kBM - 1) / kBM;
    kern<<<dim3(unsigned(j.nqb), unsigned(j.Hq), unsigned(B)), kThreads,
           C::SMEM, s>>>(j);
  }
  ew::check_launch("Attention (tiled)");
}

}  // namespace

bool tiled_fits(const AttentionArgs& a) {
  return a.Hq <= 65535 && a.B <= 65535;
}

void launch_tiled(const AttentionArgs& a, cudaStream_t s) {
  TileJob j;
  j.q = static_cast<const u16*>(a.q), j.k = static_cast<const u16*>(a.k);
  j.v = static_cast<const u16*>(a.v), j.out = static_cast<u16*>(a.out);
  j.mask = a.mask, j.sinks = a.sinks;
  j.Hq = a.Hq, j.Lq = a.Lq, j.Lk = a.Lk, j.rep = a.Hq / a.Hkv;
  for (int i = 0; i < 3; ++i)
    j.qs[i] = a.q_st[i], j.ks[i] = a.k_st[i], j.vs[i] = a.v_st[i];
  for (int i = 0; i < 4; ++i) j.ms[i] = a.mask_st[i];
  j.scale = a.scale, j.causal = a.causal, j.mask_bool = a.mask_is_bool;
  j.vec = aligned16(a.q, a.q_st, 2) && aligned16(a.k, a.k_st, 2) &&
          aligned16(a.v, a.v_st, 2);
  with_dim(a.D, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    if (a.t == float16)
      launch<kn::float16_t, D>(j, a.Lq, a.B, s);
    else
      launch<kn::bfloat16_t, D>(j, a.Lq, a.B, s);
  });
}

}  // namespace nuvec::cuda::fastk::attn
