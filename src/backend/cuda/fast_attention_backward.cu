// The gradients of the tiled attention ("gpu_tiled_backward",
// fast_attention.h): float16 and bfloat16, FlashAttention-2's backward
// with float32 accumulation, deterministic (no atomics; every sum in a
// fixed order, so a call gives the same bits on every run).
//
// With s = scale q.k (+ mask), P = softmax(s) (the forward's, sinks
// included), Di = rowsum(dO * O): dV = P^T dO, dP = dO V^T,
// dS = P * (dP - Di), dQ = scale dS K, dK = scale dS^T Q. Scores a bool
// mask or the all-hidden causal row replace by the lowest value do not
// depend on q and k: their dS is 0 (they still weigh in P, hence dV).
//
// Two kernels, in this order on the stream (helpers shared in
// fast_attention_backward.cuh):
//   dQ kernel (this file), one CTA (4 warps) per 64 query rows of one
//     (b, h), the forward's layout (warp w: rows 16w .. 16w + 15): key
//     tiles of BN from key 0 through double-buffered shared memory
//     (cp.async), per tile S = Q K^T, the online softmax (running max m and
//     sum l in base 2, as the forward), dP = dO V^T, and
//     dQ += e^(s - m) (dP - Di) K with the accumulator rescaled when m
//     grows; at the end dQ = scale dQ / l. Di is summed at the start from
//     dO and O (two threads a row, in order). It writes each row's final m,
//     1 / l and Di (float32, scratch) for:
//   dK dV kernel (fast_attention_backward_kv.cu), one CTA (NW warps, 16
//     keys each) per 16 NW keys of one (b, key/value head): its K and V
//     rows stay in shared memory; it visits the query heads of the group
//     and their query tiles of BM rows in a fixed order (Q, dO and the
//     rows' statistics double-buffered), per tile per warp S^T = K Q^T,
//     P^T = 2^(t - m) / l, dV += P^T dO, dP^T = V dO^T,
//     dS^T = P^T (dP^T - Di), dK += dS^T Q, all in registers (the
//     accumulators' layout is the A operand's); dK and dV are written
//     once, rounded once. For D = 256 (accumulators of 256 floats a
//     thread) it runs twice: dV alone, then dK alone.
// Every product is mma.sync m16n8k16 with 16-bit operands (P and dS
// rounded to T, as FlashAttention) and float32 accumulators; operands come
// from shared memory by ldmatrix (.trans for the B operands of P V-like
// products). Causal tiles a warp's rows (or keys) cannot see are skipped,
// and tiles every element of which is visible skip the per-element checks.
// A row with no weight at all (an additive mask of -inf everywhere) has
// 1 / l = NaN: NaN reaches its dq and every dk, dv row it touches, as the
// composite's softmax.
#include <cuda_runtime.h>

#include <cstring>

#include "backend/cuda/elementwise.cuh"
#include "backend/cuda/fast_attention_backward.cuh"

namespace nuvec::cuda::fastk {

namespace attn::bwd {

namespace {

// ---- The dQ kernel (and the row statistics) --------------------------------

template <class T, int D>
__global__ void __launch_bounds__(kQThreads, BwdCfg<D>::Q_MIN)
    dq_kernel(BwdJob j) {
  using C = BwdCfg<D>;
  constexpr int SROW = C::SROW, BN = C::BN, NB = C::NB;
  extern __shared__ uint4 smem_raw[];
  u16* const Qs = reinterpret_cast<u16*>(smem_raw);
  u16* const dOs = Qs + kBMq * SROW;
  u16* const kbase = dOs + kBMq * SROW;
  auto kbuf = [&](int i) { return kbase + i * BN * SROW; };
  auto vbuf = [&](int i) { return kbase + (2 + i) * BN * SROW; };
  float* const Ds = reinterpret_cast<float*>(kbase + 4 * BN * SROW);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, tq = lane % 4;
  const int qb = j.causal ? j.nqb - 1 - int(blockIdx.x) : int(blockIdx.x);
  const int h = blockIdx.y, b = blockIdx.z, kvh = h / j.rep;
  const int q0 = qb * kBMq, qrows = imin(kBMq, j.Lq - q0);
  const int wr0 = q0 + warp * 16;   // the warp's first row
  const int row0 = wr0 + lane / 4;  // the thread's rows: row0, row0 + 8
  const Lanes ln = lanes_of(lane);
  const float sl2 = j.scale * kLog2e;

  // The keys the block needs (as the forward), and those the warp needs.
  int kend = j.Lk, wend = j.Lk;
  if (j.causal && !row_keys(q0, j.Lq, j.Lk, true).hidden)
    kend = row_keys(q0 + qrows - 1, j.Lq, j.Lk, true).lim;
  const RowKeys wk = row_keys(wr0, j.Lq, j.Lk, j.causal);
  if (j.causal && !wk.hidden)
    wend = row_keys(imin(wr0 + 15, j.Lq - 1), j.Lq, j.Lk, true).lim;
  if (wr0 >= j.Lq) wend = 0;  // no row of the warp is stored
  const int nt = (kend + BN - 1) / BN;

  const int64_t bh = int64_t(b) * j.Hq + h;
  const u16* qg = j.q + b * j.qs[0] + h * j.qs[1] + q0 * j.qs[2];
  const u16* dog = j.dout + (bh * j.Lq + q0) * D;
  const u16* og = j.o + (bh * j.Lq + q0) * D;
  const u16* kg = j.k + b * j.ks[0] + kvh * j.ks[1];
  const u16* vg = j.v + b * j.vs[0] + kvh * j.vs[1];
  load_rows<kBMq, D, kQThreads>(Qs, qg, j.qs[2], qrows, j.vec);
  load_rows<kBMq, D, kQThreads>(dOs, dog, D, qrows, j.vec);
  load_rows<BN, D, kQThreads>(kbuf(0), kg, j.ks[2], imin(BN, j.Lk), j.vec);
  load_rows<BN, D, kQThreads>(vbuf(0), vg, j.vs[2], imin(BN, j.Lk), j.vec);
  cp_commit();

  // Di = rowsum(dO O): two threads a row, each half of it in order.
  {
    const int r = threadIdx.x / 2, half = threadIdx.x % 2;
    float acc = 0.0f;
    if (r < qrows) {
      const u16* pa = dog + r * D + half * (D / 2);
      const u16* pb = og + r * D + half * (D / 2);
#pragma unroll 4
      for (int e = 0; e < D / 2; e += 8) {
        const uint4 wa = load8(pa + e, j.vec), wb = load8(pb + e, j.vec);
        const u32 xa[4] = {wa.x, wa.y, wa.z, wa.w};
        const u32 xb[4] = {wb.x, wb.y, wb.z, wb.w};
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          float a0, a1, b0, b1;
          widen2<T>(xa[n], a0, a1);
          widen2<T>(xb[n], b0, b1);
          acc = __fmaf_rn(a0, b0, acc);
          acc = __fmaf_rn(a1, b1, acc);
        }
      }
    }
    acc += __shfl_xor_sync(0xffffffffu, acc, 1);
    if (half == 0) Ds[r] = acc;
  }

  // The running max starts at the sink, the sum at its weight 1 (counted
  // once per row: in the quad's first thread), as the forward.
  float m[2], l[2], di[2];
  const float sink = j.sinks ? widen(static_cast<const T*>(j.sinks)[h]) : -kInf;
  m[0] = m[1] = to_log2(sink);
  l[0] = l[1] = j.sinks && tq == 0 ? 1.0f : 0.0f;
  float dQ[C::DB][4];
#pragma unroll
  for (int db = 0; db < C::DB; ++db)
    dQ[db][0] = dQ[db][1] = dQ[db][2] = dQ[db][3] = 0.0f;
  const u16* Qw = Qs + warp * 16 * SROW;
  const u16* dOw = dOs + warp * 16 * SROW;

  for (int t = 0; t < nt; ++t) {
    const int buf = t & 1, key0 = t * BN;
    cp_wait0();       // tile t (and Q, dO) landed
    __syncthreads();  // and every warp is done with tile t - 1's buffers
    if (t == 0) di[0] = Ds[row0 - q0], di[1] = Ds[row0 - q0 + 8];
    if (t + 1 < nt) {
      const int nk = imin(BN, j.Lk - key0 - BN);
      load_rows<BN, D, kQThreads>(kbuf(buf ^ 1), kg + (key0 + BN) * j.ks[2],
                                  j.ks[2], nk, j.vec);
      load_rows<BN, D, kQThreads>(vbuf(buf ^ 1), vg + (key0 + BN) * j.vs[2],
                                  j.vs[2], nk, j.vec);
    }
    cp_commit();
    if (key0 >= wend) continue;  // no row of the warp sees these keys

    float S[NB][4];
    mma_abt<T, D, NB>(S, Qw, kbuf(buf), ln);
    bool full = !j.mask && key0 + BN <= j.Lk;
    if (j.causal) full = full && !wk.hidden && key0 + BN <= wk.lim;
    u32 live = 0xffffffffu;  // bit 4 nb + e: the element has a gradient
    if (full) {
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) S[nb][e] *= sl2;
    } else {
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          bool lv;
          S[nb][e] =
              score_at<T>(j, b, h, row0 + 8 * (e / 2),
                          key0 + nb * 8 + 2 * tq + e % 2, S[nb][e], sl2, lv);
          if (!lv) live &= ~(1u << (4 * nb + e));
        }
    }
    // The online softmax: p = 2^(t - m) against the running max, the
    // accumulator rescaled where the max grows.
#pragma unroll
    for (int rh = 0; rh < 2; ++rh) {
      float mt = -kInf;
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
        mt = fmaxf(mt, fmaxf(S[nb][2 * rh], S[nb][2 * rh + 1]));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 2));
      const float mn = fmaxf(m[rh], mt);
      const float alpha = m[rh] == -kInf ? 0.0f : ex2_ftz(m[rh] - mn);
      m[rh] = mn;
      float sum = 0.0f;
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          float& x = S[nb][2 * rh + c];
          x = mn == -kInf ? 0.0f : ex2_ftz(x - mn);
          sum += x;
        }
      l[rh] = __fmaf_rn(l[rh], alpha, sum);
#pragma unroll
      for (int db = 0; db < C::DB; ++db) {
        dQ[db][2 * rh] *= alpha;
        dQ[db][2 * rh + 1] *= alpha;
      }
    }
    float dP[NB][4];
    mma_abt<T, D, NB>(dP, dOw, vbuf(buf), ln);
    u32 F[NB / 2][4];
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int rh = 0; rh < 2; ++rh) {
        float ds[2];
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int e = 2 * rh + c;
          ds[c] = live >> (4 * nb + e) & 1u ? S[nb][e] * (dP[nb][e] - di[rh])
                                            : 0.0f;
        }
        put_frag<T>(F[nb / 2], nb, rh, ds[0], ds[1]);
      }
    mma_pb<T, D, NB / 2>(dQ, F, kbuf(buf), ln);
  }

  // dQ = scale dQ / l, rounded once; the row statistics for the dK dV
  // kernel (rows past Lq: zeros, which give them no weight there).
  const float nan = __int_as_float(0x7fc00000);
#pragma unroll
  for (int rh = 0; rh < 2; ++rh) {
    float lt = l[rh];
    lt += __shfl_xor_sync(0xffffffffu, lt, 1);
    lt += __shfl_xor_sync(0xffffffffu, lt, 2);
    const int i = row0 + 8 * rh;
    const bool in = i < j.Lq;
    if (tq == 0) {
      const int64_t at = bh * j.Lqp + i;
      j.st[at] = in ? m[rh] : 0.0f;
      j.st[j.nst + at] = in ? (lt > 0.0f ? 1.0f / lt : nan) : 0.0f;
      j.st[2 * j.nst + at] = in ? di[rh] : 0.0f;
    }
    if (!in) continue;
    const float f = lt > 0.0f ? j.scale / lt : nan;
    u32* dst = reinterpret_cast<u32*>(j.dq + (bh * j.Lq + i) * D);
#pragma unroll
    for (int db = 0; db < C::DB; ++db)
      dst[db * 4 + tq] = u32(narrow<T>(dQ[db][2 * rh] * f).bits) |
                         u32(narrow<T>(dQ[db][2 * rh + 1] * f).bits) << 16;
  }
}

template <class K>
void prepare(K* kern, int smem) {
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                       100);
}

template <class T, int D>
void launch_dq(const BwdJob& j, int B, cudaStream_t s) {
  using C = BwdCfg<D>;
  auto* dq = dq_kernel<T, D>;
  prepare(dq, C::Q_SMEM);
  dq<<<dim3(unsigned(j.nqb), unsigned(j.Hq), unsigned(B)), kQThreads, C::Q_SMEM,
       s>>>(j);
  ew::check_launch("AttentionGrad (dq)");
}

int64_t stat_rows(const AttentionArgs& a) {
  return int64_t(a.B) * a.Hq * ((int64_t(a.Lq) + kPad - 1) / kPad * kPad);
}

void memset_or_raise(void* p, size_t bytes, cudaStream_t s) {
  if (bytes == 0) return;
  const cudaError_t e = cudaMemsetAsync(p, 0, bytes, s);
  if (e != cudaSuccess)
    (Error(ErrorKind::backend,
           std::string("CUDA memset of AttentionGrad failed: ") +
               cudaGetErrorString(e)))
        .raise();
}

}  // namespace

}  // namespace attn::bwd

const char* attention_backward_kernel(const AttentionArgs& a) {
  if (!(a.t == float16 || a.t == bfloat16)) return "";
  if (a.D != a.Dv) return "";
  if (!(a.D == 64 || a.D == 80 || a.D == 96 || a.D == 128 || a.D == 256))
    return "";
  if (a.B < 0 || a.Lq < 0 || a.Lk < 0 || a.Hq <= 0 || a.Hkv <= 0 ||
      a.Hq % a.Hkv)
    return "";
  if (a.Hq > 65535 || a.B > 65535) return "";
  return "gpu_tiled_backward";
}

size_t attention_backward_scratch_bytes(const AttentionArgs& a) {
  if (!*attention_backward_kernel(a) || a.Lq == 0 || a.Lk == 0) return 0;
  return size_t(3 * attn::bwd::stat_rows(a)) * sizeof(float);
}

void attention_backward(const AttentionGradArgs& g, void* scratch,
                        void* stream) {
  using namespace attn;
  using namespace attn::bwd;
  const AttentionArgs& a = g.a;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (!*attention_backward_kernel(a))
    (Error(ErrorKind::backend,
           "no GPU attention backward kernel takes this call"))
        .raise();
  const size_t nq = size_t(a.B) * a.Hq * a.Lq * a.D * 2;
  const size_t nk = size_t(a.B) * a.Hkv * a.Lk * a.D * 2;
  if (a.B == 0) return;
  if (a.Lk == 0 || a.Lq == 0) {
    // No key: dq is the gradient of zeros; no query: nothing reaches k, v.
    memset_or_raise(g.dq, nq, s);
    memset_or_raise(g.dk, nk, s);
    memset_or_raise(g.dv, nk, s);
    return;
  }
  BwdJob j;
  j.q = static_cast<const u16*>(a.q), j.k = static_cast<const u16*>(a.k);
  j.v = static_cast<const u16*>(a.v), j.o = static_cast<const u16*>(g.o);
  j.dout = static_cast<const u16*>(g.dout);
  j.mask = a.mask, j.sinks = a.sinks;
  j.dq = static_cast<u16*>(g.dq), j.dk = static_cast<u16*>(g.dk);
  j.dv = static_cast<u16*>(g.dv);
  j.st = static_cast<float*>(scratch);
  j.nst = stat_rows(a);
  j.Hq = a.Hq, j.Hkv = a.Hkv, j.Lq = a.Lq, j.Lk = a.Lk, j.rep = a.Hq / a.Hkv;
  j.Lqp = int((int64_t(a.Lq) + kPad - 1) / kPad * kPad);
  j.nqb = (a.Lq + kBMq - 1) / kBMq;
  for (int i = 0; i < 3; ++i)
    j.qs[i] = a.q_st[i], j.ks[i] = a.k_st[i], j.vs[i] = a.v_st[i];
  for (int i = 0; i < 4; ++i) j.ms[i] = a.mask_st[i];
  j.scale = a.scale, j.causal = a.causal, j.mask_bool = a.mask_is_bool;
  const int64_t dense_st[3] = {0, 0, 0};  // o, dout: dense, rows of 2 D bytes
  j.vec = aligned16(a.q, a.q_st, 2) && aligned16(a.k, a.k_st, 2) &&
          aligned16(a.v, a.v_st, 2) && aligned16(g.o, dense_st, 2) &&
          aligned16(g.dout, dense_st, 2);
  with_dim(a.D, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    if (a.t == float16)
      launch_dq<kn::float16_t, D>(j, a.B, s);
    else
      launch_dq<kn::bfloat16_t, D>(j, a.B, s);
  });
  launch_dkv(j, a.t, a.D, a.B, s);
}

}  // namespace nuvec::cuda::fastk