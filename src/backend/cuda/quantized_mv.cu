// The few-row products on the GPU (quantized_kernels.h): a packed matrix
// times up to 8 rows at a time, and the dense gathered product.
//
// Transposed packed matrix ([N, K], x @ W^T; the decode step of a language
// model): a warp owns NC consecutive columns n (packed rows of W), reads
// each packed word once for every row of the tile (MT = 1, 2, 4 or 8 rows),
// and lane l takes the 32-element chunks c = l, l + 32, l + 64, ... of the
// row (coalesced 4 * bits-byte loads: 16 bytes at 4 bits). Each chunk's
// codes are folded against x with fma in element order (one sum per
// (column, row); nvfp4 one per 16-element scale group), then scaled once
// into the (column, row) accumulator: acc + b sum(x) + s dot for affine
// weights (MLX's factoring; 4- and 8-bit codes decoded in two operations),
// acc + s dot for the others; the warp then adds its 32 lanes by an xor
// butterfly and lane 0 writes. So a row's bits depend on K, the format
// and the dtype only: the tile size, the other rows, which kernel
// instantiation ran and the alignment (vector or scalar loads read the same
// values) do not enter its arithmetic. No atomics: run-to-run identical.
//
// Packed matrix not transposed ([K, N], x @ W) and the dense gathered
// product (b [K, N]): one thread per column n, the k loop in order, one
// accumulator per row of the tile (up to 8); the same argument holds.
#include "backend/cuda/launch.cuh"
#include "backend/cuda/quantized.cuh"

#include <type_traits>

namespace nuvec::cuda::quantk {

namespace {

constexpr int kWarps = 4;     // warps per block of the transposed kernel
constexpr int kCols = 128;    // threads (columns) per block of the others
constexpr int kTile = 8;      // rows per tile of the others
constexpr unsigned kFull = 0xFFFFFFFFu;

enum Fmt { kAffine, kMxfp4, kNvfp4, kMxfp8 };

__device__ __forceinline__ float fma_of(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double fma_of(double a, double b, double c) { return __fma_rn(a, b, c); }

template <class T>
__device__ __forceinline__ T store_of(acc_t<T> v) {
  return kn::from_arith<T>(v);
}

// Element e of a 32-element chunk packed at BITS bits in wv[0, BITS).
template <int BITS>
__device__ __forceinline__ u32 extract(const u32* wv, int e) {
  const int bit = e * BITS, wd = bit >> 5, sh = bit & 31;
  u32 v = wv[wd] >> sh;
  if (sh + BITS > 32) v |= wv[wd + 1] << (32 - sh);
  return v & ((1u << BITS) - 1u);
}

// The value of code q before its scale (and bias).
template <int FMT, class A>
__device__ __forceinline__ A code_value(u32 q) {
  if constexpr (FMT == kAffine) {
    if constexpr (sizeof(A) == 4) return __uint_as_float(q | 0x4B000000u) - 8388608.0f;  // exact
    else return A(q);
  } else if constexpr (FMT == kMxfp8) {
    return A(qk::fp8_value(u8(q)));
  } else {
    return A(qk::fp4_value(q));
  }
}

// An affine code as a float in two operations where its bits allow: the
// element's bits, masked in place, become the low mantissa of a float whose
// unit in the last place at the element's lowest bit is 1, so the value
// minus that float's base is the code exactly. Elements reaching into the
// exponent's bits are shifted down by 16 first. `base[sh]` is 2^(23 - sh)'s
// bits, held in registers (built from a run-time value, so that the mask
// and the base form one three-operand logic instruction).
template <int BITS, class A>
__device__ __forceinline__ A affine_code(const u32* wv, int e, const u32* base) {
  if constexpr (sizeof(A) == 4 && (BITS == 4 || BITS == 8)) {
    const int bit = e * BITS, wd = bit >> 5;
    int sh = bit & 31;
    u32 w = wv[wd];
    if (sh + BITS > 23) w >>= 16, sh -= 16;
    const u32 b = base[sh];
    return __uint_as_float((w & (((1u << BITS) - 1u) << sh)) | b) - __uint_as_float(b);
  } else {
    return code_value<kAffine, A>(extract<BITS>(wv, e));
  }
}

template <class T>
__device__ __forceinline__ acc_t<T> scale_value(const void* s, int64_t i) {
  return to_acc(static_cast<const T*>(s)[i]);
}

// A chunk's BITS words (streamed: read once).
template <int BITS>
__device__ __forceinline__ void load_words(const u32* p, bool vec, u32* wv) {
  if constexpr (BITS % 4 == 0) {
    if (vec) {
#pragma unroll
      for (int i = 0; i < BITS / 4; ++i) {
        const uint4 r = __ldcs(reinterpret_cast<const uint4*>(p) + i);
        wv[4 * i] = r.x, wv[4 * i + 1] = r.y, wv[4 * i + 2] = r.z, wv[4 * i + 3] = r.w;
      }
      return;
    }
  } else if constexpr (BITS % 2 == 0) {
    if (vec) {
#pragma unroll
      for (int i = 0; i < BITS / 2; ++i) {
        const uint2 r = __ldcs(reinterpret_cast<const uint2*>(p) + i);
        wv[2 * i] = r.x, wv[2 * i + 1] = r.y;
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < BITS; ++i) wv[i] = __ldcs(p + i);
}

// Eight consecutive elements of x as the accumulator type.
template <class T>
__device__ __forceinline__ void load8(const T* p, bool vec, acc_t<T>* v) {
  if (vec) {
    if constexpr (sizeof(T) == 2) {
      const uint4 r = __ldg(reinterpret_cast<const uint4*>(p));
      const u32 w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        v[2 * i] = to_acc(T::from_bits(static_cast<kn::u16>(w[i] & 0xFFFFu)));
        v[2 * i + 1] = to_acc(T::from_bits(static_cast<kn::u16>(w[i] >> 16)));
      }
    } else if constexpr (sizeof(T) == 4) {
      const float4 a = __ldg(reinterpret_cast<const float4*>(p));
      const float4 b = __ldg(reinterpret_cast<const float4*>(p) + 1);
      v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z,
      v[7] = b.w;
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const double2 d = __ldg(reinterpret_cast<const double2*>(p) + i);
        v[2 * i] = d.x, v[2 * i + 1] = d.y;
      }
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = to_acc(p[i]);
}

template <class T, int FMT, int BITS, int MT, int NC>
__global__ void __launch_bounds__(kWarps * 32)
    qmv_t_kernel(MvArgs a, int tiles, bool xvec, bool wvec) {
  using A = acc_t<T>;
  const int lane = threadIdx.x & 31;
  const int n0 = (blockIdx.y * kWarps + (threadIdx.x >> 5)) * NC;
  if (n0 >= a.n) {  // the whole warp
    enter_held_kernel();
    return;
  }
  const int64_t item = blockIdx.x / tiles;
  const int r0 = int(blockIdx.x - item * tiles) * MT;
  const int64_t xm = pick(a.lhs, item, a.x_count), wm = pick(a.rhs, item, a.w.count);
  const int K = a.k, chunks = K >> 5;
  const int64_t words = int64_t(chunks) * BITS;
  const int group = a.w.q.group_size, G = K / group;
  const int cpg_log = group >= 32 ? __ffs(group / 32) - 1 : 0;  // chunks per group: a power of 2
  // The bases of affine_code (a run-time zero keeps them in registers).
  u32 base[20];
  const u32 zero = u32(K) >> 31;
#pragma unroll
  for (int sh = 0; sh < 20; ++sh) base[sh] = (u32(127 + 23 - sh) << 23) | zero;
  const T* xr[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    const int r = r0 + m < a.m ? r0 + m : a.m - 1;
    xr[m] = static_cast<const T*>(a.x) + (xm * a.m + r) * int64_t(K);
  }
  const u32* wr[NC];
  int64_t srow[NC];
#pragma unroll
  for (int j = 0; j < NC; ++j) {
    const int64_t row = wm * a.n + (n0 + j < a.n ? n0 + j : a.n - 1);
    wr[j] = a.w.w + row * words;
    srow[j] = row * G;
  }
  // The warp's first words into the L2 while the predecessor still runs,
  // where nothing in the chain writes them (MvArgs::early_w).
  if (a.early_w)
#pragma unroll
    for (int j = 0; j < NC; ++j)
      for (int c = lane; c < chunks && c < lane + 4 * 32; c += 32)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(wr[j] + int64_t(c) * BITS));
  enter_held_kernel();
  A acc[NC][MT];
#pragma unroll
  for (int j = 0; j < NC; ++j)
#pragma unroll
    for (int m = 0; m < MT; ++m) acc[j][m] = A(0);

  // One loop for vector loads, one for scalar ones (the same values and
  // operations), so that neither runs the other's predicated instructions.
  auto run = [&](auto vec) {
    constexpr bool V = decltype(vec)::value;
    for (int c = lane; c < chunks; c += 32) {
      u32 wv[NC][BITS];
      A s0[NC], s1[NC], b0[NC];
  #pragma unroll
      for (int j = 0; j < NC; ++j) {
        load_words<BITS>(wr[j] + int64_t(c) * BITS, V, wv[j]);
        if constexpr (FMT == kNvfp4) {
          const u8* sc = static_cast<const u8*>(a.w.scales) + srow[j] + 2 * c;
          s0[j] = A(qk::fp8_value(sc[0]));
          s1[j] = A(qk::fp8_value(sc[1]));
          b0[j] = A(0);
        } else if constexpr (FMT == kAffine) {
          const int64_t g = srow[j] + (c >> cpg_log);
          s0[j] = s1[j] = scale_value<T>(a.w.scales, g);
          b0[j] = scale_value<T>(a.w.biases, g);
        } else {
          s0[j] = s1[j] = A(qk::e8m0_value(static_cast<const u8*>(a.w.scales)[srow[j] + (c >> cpg_log)]));
          b0[j] = A(0);
        }
      }
      // The chunk's codes against x (d0; nvfp4's second scale group d1), and
      // for affine weights x's sum, in element order; then scale (and bias)
      // once per chunk, as MLX's kernels: acc + s d0 (+ b xs).
      A d0[NC][MT], d1[NC][MT], xs[MT];
  #pragma unroll
      for (int m = 0; m < MT; ++m) {
        xs[m] = A(0);
  #pragma unroll
        for (int j = 0; j < NC; ++j) d0[j][m] = d1[j][m] = A(0);
      }
  #pragma unroll
      for (int sub = 0; sub < 4; ++sub) {
        A xv[MT][8];
  #pragma unroll
        for (int m = 0; m < MT; ++m) load8<T>(xr[m] + c * 32 + sub * 8, V, xv[m]);
        if constexpr (FMT == kAffine)
  #pragma unroll
          for (int m = 0; m < MT; ++m)
  #pragma unroll
            for (int e = 0; e < 8; ++e) xs[m] += xv[m][e];
  #pragma unroll
        for (int j = 0; j < NC; ++j)
  #pragma unroll
          for (int e = 0; e < 8; ++e) {
            const int ee = sub * 8 + e;
            A cv;
            if constexpr (FMT == kAffine) cv = affine_code<BITS, A>(wv[j], ee, base);
            else cv = code_value<FMT, A>(extract<BITS>(wv[j], ee));
  #pragma unroll
            for (int m = 0; m < MT; ++m) {
              if (FMT == kNvfp4 && ee >= 16) d1[j][m] = fma_of(xv[m][e], cv, d1[j][m]);
              else d0[j][m] = fma_of(xv[m][e], cv, d0[j][m]);
            }
          }
      }
  #pragma unroll
      for (int j = 0; j < NC; ++j)
  #pragma unroll
        for (int m = 0; m < MT; ++m) {
          A v = acc[j][m];
          if constexpr (FMT == kAffine) v = fma_of(b0[j], xs[m], v);
          v = fma_of(s0[j], d0[j][m], v);
          if constexpr (FMT == kNvfp4) v = fma_of(s1[j], d1[j][m], v);
          acc[j][m] = v;
        }
    }
  };
  if (xvec && wvec) run(std::true_type{});
  else run(std::false_type{});
#pragma unroll
  for (int j = 0; j < NC; ++j)
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      A v = acc[j][m];
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(kFull, v, off);
      acc[j][m] = v;
    }
  if (lane != 0) return;
  T* out = static_cast<T*>(a.out);
#pragma unroll
  for (int j = 0; j < NC; ++j)
#pragma unroll
    for (int m = 0; m < MT; ++m)
      if (n0 + j < a.n && r0 + m < a.m)
        out[(item * a.m + r0 + m) * int64_t(a.n) + n0 + j] = store_of<T>(acc[j][m]);
}

template <class T, int FMT>
__global__ void __launch_bounds__(kCols) qmv_n_kernel(MvArgs a, int tiles) {
  using A = acc_t<T>;
  const int n = blockIdx.y * kCols + threadIdx.x;
  if (n >= a.n) return;
  const int64_t item = blockIdx.x / tiles;
  const int r0 = int(blockIdx.x - item * tiles) * kTile;
  const int rows = a.m - r0 < kTile ? a.m - r0 : kTile;
  const int64_t xm = pick(a.lhs, item, a.x_count), wm = pick(a.rhs, item, a.w.count);
  const int bits = a.w.q.bits, group = a.w.q.group_size;
  const int64_t words = int64_t(a.n) * bits / 32, G = a.n / group;
  const T* xr = static_cast<const T*>(a.x) + (xm * a.m + r0) * int64_t(a.k);
  A acc[kTile];
#pragma unroll
  for (int m = 0; m < kTile; ++m) acc[m] = A(0);
  for (int k = 0; k < a.k; ++k) {
    const int64_t row = wm * a.k + k;
    const u32 q = qk::unpack(a.w.w + row * words, n, bits);
    const int64_t g = row * G + n / group;
    A v;
    if constexpr (FMT == kAffine) {
      v = fma_of(scale_value<T>(a.w.scales, g), A(q), scale_value<T>(a.w.biases, g));
    } else {
      const u8 sc = static_cast<const u8*>(a.w.scales)[g];
      const A s = A(FMT == kNvfp4 ? qk::fp8_value(sc) : qk::e8m0_value(sc));
      v = code_value<FMT, A>(q) * s;
    }
#pragma unroll
    for (int m = 0; m < kTile; ++m)
      if (m < rows) acc[m] = fma_of(to_acc(xr[m * int64_t(a.k) + k]), v, acc[m]);
  }
  T* out = static_cast<T*>(a.out);
#pragma unroll
  for (int m = 0; m < kTile; ++m)
    if (m < rows) out[(item * a.m + r0 + m) * int64_t(a.n) + n] = store_of<T>(acc[m]);
}

template <class T>
__global__ void __launch_bounds__(kCols)
    gmv_kernel(const T* a, int64_t a_count, const T* b, int64_t b_count, const uint32_t* lhs,
               const uint32_t* rhs, int m_rows, int n_cols, int k_len, T* out, int tiles) {
  using A = acc_t<T>;
  const int n = blockIdx.y * kCols + threadIdx.x;
  if (n >= n_cols) return;
  const int64_t item = blockIdx.x / tiles;
  const int r0 = int(blockIdx.x - item * tiles) * kTile;
  const int rows = m_rows - r0 < kTile ? m_rows - r0 : kTile;
  const T* ar = a + (pick(lhs, item, a_count) * m_rows + r0) * int64_t(k_len);
  const T* bc = b + pick(rhs, item, b_count) * int64_t(k_len) * n_cols + n;
  A acc[kTile];
#pragma unroll
  for (int m = 0; m < kTile; ++m) acc[m] = A(0);
  for (int k = 0; k < k_len; ++k) {
    const A bv = to_acc(bc[int64_t(k) * n_cols]);
#pragma unroll
    for (int m = 0; m < kTile; ++m)
      if (m < rows) acc[m] = fma_of(to_acc(ar[m * int64_t(k_len) + k]), bv, acc[m]);
  }
#pragma unroll
  for (int m = 0; m < kTile; ++m)
    if (m < rows) out[(item * m_rows + r0 + m) * int64_t(n_cols) + n] = store_of<T>(acc[m]);
}

void check_grid(int64_t x, int64_t y, const char* what) {
  if (x > 0x7FFFFFFF || y > 65535)
    unsupported(std::string(what) + ": the product is too large for one launch (" +
                std::to_string(x) + " x " + std::to_string(y) + " blocks)");
}

template <class T, int FMT, int BITS>
void launch_t(const MvArgs& a, cudaStream_t s) {
  if (qmma(a, s)) return;
  const int mt = a.m <= 1 ? 1 : a.m <= 2 ? 2 : a.m <= 4 ? 4 : 8;
  const int64_t tiles = (a.m + mt - 1) / mt;
  const bool xvec = aligned(a.x, 16), wvec = aligned(a.w.w, 16);
  auto go = [&](auto kernel, int nc) {
    const int64_t gx = a.items * tiles, gy = (a.n + kWarps * nc - 1) / (kWarps * nc);
    check_grid(gx, gy, "QuantizedMatmul");
    hold_launch(kernel, dim3(unsigned(gx), unsigned(gy)), kWarps * 32, 0, s, "QuantizedMatmul (few rows)", a,
                int(tiles), xvec, wvec);
  };
  switch (mt) {
    case 1: go(qmv_t_kernel<T, FMT, BITS, 1, 2>, 2); break;
    case 2: go(qmv_t_kernel<T, FMT, BITS, 2, 2>, 2); break;
    case 4: go(qmv_t_kernel<T, FMT, BITS, 4, 4>, 4); break;
    default: go(qmv_t_kernel<T, FMT, BITS, 8, 2>, 2); break;
  }
}

template <class T, int FMT>
void launch_n(const MvArgs& a, cudaStream_t s) {
  const int64_t tiles = (a.m + kTile - 1) / kTile;
  const int64_t gx = a.items * tiles, gy = (a.n + kCols - 1) / kCols;
  check_grid(gx, gy, "QuantizedMatmul");
  flush_launches(s);  // after the launches held before it (launch.cuh)
  qmv_n_kernel<T, FMT><<<dim3(unsigned(gx), unsigned(gy)), kCols, 0, s>>>(a, int(tiles));
}

}  // namespace

void qmv(const MvArgs& a, void* stream) {
  if (a.items == 0 || a.m == 0 || a.n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const QuantSpec& q = a.w.q;
  with_type(a.t, "QuantizedMatmul", [&](auto tag) {
    using T = decltype(tag);
    if (!a.transpose) {
      switch (q.mode) {
        case QuantMode::affine: launch_n<T, kAffine>(a, s); break;
        case QuantMode::mxfp4: launch_n<T, kMxfp4>(a, s); break;
        case QuantMode::nvfp4: launch_n<T, kNvfp4>(a, s); break;
        case QuantMode::mxfp8: launch_n<T, kMxfp8>(a, s); break;
      }
      return;
    }
    switch (q.mode) {
      case QuantMode::mxfp4: launch_t<T, kMxfp4, 4>(a, s); return;
      case QuantMode::nvfp4: launch_t<T, kNvfp4, 4>(a, s); return;
      case QuantMode::mxfp8: launch_t<T, kMxfp8, 8>(a, s); return;
      case QuantMode::affine: break;
    }
    switch (q.bits) {
      case 1: launch_t<T, kAffine, 1>(a, s); break;
      case 2: launch_t<T, kAffine, 2>(a, s); break;
      case 3: launch_t<T, kAffine, 3>(a, s); break;
      case 4: launch_t<T, kAffine, 4>(a, s); break;
      case 5: launch_t<T, kAffine, 5>(a, s); break;
      case 6: launch_t<T, kAffine, 6>(a, s); break;
      case 8: launch_t<T, kAffine, 8>(a, s); break;
      default: unsupported("no GPU kernel for QuantizedMatmul with " + std::to_string(q.bits) + " bits");
    }
  });
  check_launch("QuantizedMatmul");
}

void gmv(DType t, const void* a, int64_t a_count, const void* b, int64_t b_count,
         const uint32_t* lhs, const uint32_t* rhs, int64_t items, int m, int n, int k, void* out,
         void* stream) {
  if (items == 0 || m == 0 || n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  with_type(t, "GatherMM", [&](auto tag) {
    using T = decltype(tag);
    const int64_t tiles = (m + kTile - 1) / kTile;
    const int64_t gx = items * tiles, gy = (n + kCols - 1) / kCols;
    check_grid(gx, gy, "GatherMM");
    gmv_kernel<T><<<dim3(unsigned(gx), unsigned(gy)), kCols, 0, s>>>(
        static_cast<const T*>(a), a_count, static_cast<const T*>(b), b_count, lhs, rhs, m, n, k,
        static_cast<T*>(out), int(tiles));
  });
  check_launch("GatherMM");
}

}  // namespace nuvec::cuda::quantk
