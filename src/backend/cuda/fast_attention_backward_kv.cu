// The dK dV kernel of the attention backward (the design is at the top of
// fast_attention_backward.cu): one CTA per 16 NW keys of one (b, key/value
// head), every query head of the group and query tile in a fixed order.
#include <cuda_runtime.h>

#include "backend/cuda/elementwise.cuh"
#include "backend/cuda/fast_attention_backward.cuh"

namespace nuvec::cuda::fastk::attn::bwd {

namespace {

// ---- The dK dV kernel -------------------------------------------------------

// MODE: bit 0 dV, bit 1 dK.
template <class T, int D, int MODE>
__global__ void __launch_bounds__(BwdCfg<D>::KV_THREADS, BwdCfg<D>::KV_MIN)
    dkv_kernel(BwdJob j) {
  using C = BwdCfg<D>;
  constexpr int SROW = C::SROW, BM = C::BM, MB = C::MB, NT = C::KV_THREADS;
  extern __shared__ uint4 smem_raw[];
  u16* const Ks = reinterpret_cast<u16*>(smem_raw);
  u16* const Vs = Ks + C::KBN * SROW;
  auto qbuf = [&](int i) { return Vs + C::KBN * SROW + i * BM * SROW; };
  auto obuf = [&](int i) { return Vs + C::KBN * SROW + (2 + i) * BM * SROW; };
  float* const St = reinterpret_cast<float*>(Vs + (C::KBN + 4 * BM) * SROW);
  // St + (buf * 3 + s) * BM: statistic s (m, 1 / l, Di) of buffer buf.

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, tq = lane % 4;
  const int kb = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int k0 = kb * C::KBN, kw0 = k0 + warp * 16;
  const Lanes ln = lanes_of(lane);
  const float sl2 = j.scale * kLog2e;

  // The query tiles of each head: those holding all-hidden causal rows
  // (rows below Lq - Lk, which see every key), then those from the first
  // row that sees key k0; all of them without a causal mask.
  const int nqa = (j.Lq + BM - 1) / BM;
  int nh = 0, qfirst = 0;
  if (j.causal) {
    if (j.Lq > j.Lk) nh = (j.Lq - j.Lk + BM - 1) / BM;
    qfirst = imax(imax(k0 + j.Lq - j.Lk, 0) / BM, nh);
  }
  const int nvis = nh + nqa - qfirst, nit = j.rep * nvis;

  const u16* kg = j.k + b * j.ks[0] + kvh * j.ks[1] + k0 * j.ks[2];
  const u16* vg = j.v + b * j.vs[0] + kvh * j.vs[1] + k0 * j.vs[2];
  const int krows = imin(C::KBN, j.Lk - k0);
  load_rows<C::KBN, D, NT>(Ks, kg, j.ks[2], krows, j.vec);
  load_rows<C::KBN, D, NT>(Vs, vg, j.vs[2], krows, j.vec);

  // Tile `it`: head kvh rep + it / nvis, query tile (it % nvis)'s.
  auto head_of = [&](int it) { return kvh * j.rep + it / nvis; };
  auto q0_of = [&](int it) {
    const int v = it % nvis;
    return (v < nh ? v : qfirst + v - nh) * BM;
  };
  auto load_tile = [&](int it, int buf) {
    const int h = head_of(it), q0 = q0_of(it), n = imin(BM, j.Lq - q0);
    const int64_t bh = int64_t(b) * j.Hq + h;
    load_rows<BM, D, NT>(qbuf(buf),
                         j.q + b * j.qs[0] + h * j.qs[1] + q0 * j.qs[2],
                         j.qs[2], n, j.vec);
    load_rows<BM, D, NT>(obuf(buf), j.dout + (bh * j.Lq + q0) * D, D, n, j.vec);
    // The statistics: always 16-byte aligned (Lqp is a multiple of 64).
    for (int idx = threadIdx.x; idx < 3 * BM / 4; idx += NT) {
      const int s = idx / (BM / 4), c = idx % (BM / 4);
      cp_async16(St + (buf * 3 + s) * BM + 4 * c,
                 j.st + s * j.nst + bh * j.Lqp + q0 + 4 * c, true);
    }
  };
  if (nit > 0) load_tile(0, 0);
  cp_commit();

  float dK[C::DB][4], dV[C::DB][4];
#pragma unroll
  for (int db = 0; db < C::DB; ++db)
#pragma unroll
    for (int e = 0; e < 4; ++e) dK[db][e] = dV[db][e] = 0.0f;
  const u16* Kw = Ks + warp * 16 * SROW;
  const u16* Vw = Vs + warp * 16 * SROW;
  const int key_r0 = kw0 + lane / 4;  // the thread's keys: key_r0, key_r0 + 8

  for (int it = 0; it < nit; ++it) {
    const int buf = it & 1;
    cp_wait0();
    __syncthreads();
    if (it + 1 < nit) load_tile(it + 1, buf ^ 1);
    cp_commit();
    if (kw0 >= j.Lk) continue;  // the warp has no key
    const int h = head_of(it), q0 = q0_of(it), qrows = imin(BM, j.Lq - q0);
    const RowKeys rf = row_keys(q0, j.Lq, j.Lk, j.causal);
    if (j.causal && !rf.hidden &&
        row_keys(q0 + qrows - 1, j.Lq, j.Lk, true).lim <= kw0)
      continue;  // no row of the tile sees the warp's keys
    const u16* Qt = qbuf(buf);
    const u16* dOt = obuf(buf);
    const float* sm = St + buf * 3 * BM;

    // S^T: rows the warp's keys, columns the tile's queries.
    float S[MB][4];
    mma_abt<T, D, MB>(S, Kw, Qt, ln);
    bool full = !j.mask && kw0 + 16 <= j.Lk && q0 + BM <= j.Lq;
    if (j.causal) full = full && !rf.hidden && kw0 + 16 <= rf.lim;
    u32 live = 0xffffffffu;
#pragma unroll
    for (int nb = 0; nb < MB; ++nb) {
      const int col = nb * 8 + 2 * tq;
      const float2 mm = *reinterpret_cast<const float2*>(sm + col);
      const float2 rl = *reinterpret_cast<const float2*>(sm + BM + col);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = e % 2;
        float t;
        if (full) {
          t = S[nb][e] * sl2;
        } else {
          bool lv;
          t = score_at<T>(j, b, h, q0 + col + c, key_r0 + 8 * (e / 2), S[nb][e],
                          sl2, lv);
          if (!lv) live &= ~(1u << (4 * nb + e));
        }
        S[nb][e] = ex2_ftz(t - (c ? mm.y : mm.x)) * (c ? rl.y : rl.x);
      }
    }
    if constexpr ((MODE & 1) != 0) {
      u32 F[MB / 2][4];
#pragma unroll
      for (int nb = 0; nb < MB; ++nb)
#pragma unroll
        for (int rh = 0; rh < 2; ++rh)
          put_frag<T>(F[nb / 2], nb, rh, S[nb][2 * rh], S[nb][2 * rh + 1]);
      mma_pb<T, D, MB / 2>(dV, F, dOt, ln);
    }
    if constexpr ((MODE & 2) != 0) {
      float dP[MB][4];
      mma_abt<T, D, MB>(dP, Vw, dOt, ln);
      u32 F[MB / 2][4];
#pragma unroll
      for (int nb = 0; nb < MB; ++nb) {
        const float2 dd =
            *reinterpret_cast<const float2*>(sm + 2 * BM + nb * 8 + 2 * tq);
#pragma unroll
        for (int rh = 0; rh < 2; ++rh) {
          float ds[2];
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const int e = 2 * rh + c;
            ds[c] = live >> (4 * nb + e) & 1u
                        ? S[nb][e] * (dP[nb][e] - (c ? dd.y : dd.x))
                        : 0.0f;
          }
          put_frag<T>(F[nb / 2], nb, rh, ds[0], ds[1]);
        }
      }
      mma_pb<T, D, MB / 2>(dK, F, Qt, ln);
    }
  }

  // dK = scale dK and dV, rounded once.
#pragma unroll
  for (int rh = 0; rh < 2; ++rh) {
    const int key = key_r0 + 8 * rh;
    if (key >= j.Lk) continue;
    const int64_t row = (int64_t(b) * j.Hkv + kvh) * j.Lk + key;
    if constexpr ((MODE & 2) != 0) {
      u32* dst = reinterpret_cast<u32*>(j.dk + row * D);
#pragma unroll
      for (int db = 0; db < C::DB; ++db)
        dst[db * 4 + tq] = u32(narrow<T>(dK[db][2 * rh] * j.scale).bits) |
                           u32(narrow<T>(dK[db][2 * rh + 1] * j.scale).bits)
                               << 16;
    }
    if constexpr ((MODE & 1) != 0) {
      u32* dst = reinterpret_cast<u32*>(j.dv + row * D);
#pragma unroll
      for (int db = 0; db < C::DB; ++db)
        dst[db * 4 + tq] = u32(narrow<T>(dV[db][2 * rh]).bits) |
                           u32(narrow<T>(dV[db][2 * rh + 1]).bits) << 16;
    }
  }
}

template <class K>
void prepare(K* kern, int smem) {
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                       100);
}

template <class T, int D>
void launch_kv(const BwdJob& j, int B, cudaStream_t s) {
  using C = BwdCfg<D>;
  const dim3 grid(unsigned((j.Lk + C::KBN - 1) / C::KBN), unsigned(j.Hkv),
                  unsigned(B));
  if constexpr (C::kSplit) {
    auto* kv1 = dkv_kernel<T, D, 1>;
    auto* kv2 = dkv_kernel<T, D, 2>;
    prepare(kv1, C::KV_SMEM);
    prepare(kv2, C::KV_SMEM);
    kv1<<<grid, C::KV_THREADS, C::KV_SMEM, s>>>(j);
    ew::check_launch("AttentionGrad (dv)");
    kv2<<<grid, C::KV_THREADS, C::KV_SMEM, s>>>(j);
    ew::check_launch("AttentionGrad (dk)");
  } else {
    auto* kv = dkv_kernel<T, D, 3>;
    prepare(kv, C::KV_SMEM);
    kv<<<grid, C::KV_THREADS, C::KV_SMEM, s>>>(j);
    ew::check_launch("AttentionGrad (dk, dv)");
  }
}

}  // namespace

void launch_dkv(const BwdJob& j, DType t, int D, int B, cudaStream_t s) {
  with_dim(D, [&](auto dim) {
    constexpr int Dc = decltype(dim)::value;
    if (t == float16)
      launch_kv<kn::float16_t, Dc>(j, B, s);
    else
      launch_kv<kn::bfloat16_t, Dc>(j, B, s);
  });
}

}  // namespace nuvec::cuda::fastk::attn::bwd
