// The few-row product of a transposed 4-bit affine matrix ([N, K], x @ W^T,
// group 32, 64 or 128) with 16-bit x (bfloat16 or float16) on the tensor
// cores: the decode step of a 4-bit language model, one to eight rows.
//
// mma.m16n8k16 with the weight's rows as its 16-row side and x's rows (up
// to 8, the rest zero) as its 8 columns, so the eight rows cost what one
// row costs. Lane (g = lane / 4, t = lane % 4) holds weight rows g and
// g + 8 of the warp's 16 and x row g; per scale group it loads group / 32
// consecutive words of each of its two rows (the group's 4 lanes together
// read the group's words) and the matching x elements. The k order inside
// an mma is free as long as A and B agree: a word's pairs (code j, code
// j + 4), j = 0..3, become the 16-bit values base + code exactly
// ((w >> 4j) & 0x000F000F as the low mantissa bits of base = 128 or 1024),
// and x's elements are paired the same way by byte permutes. Every mma
// stays inside one scale group: the group's d = sum(x (q + base)) and x's
// group sum X (an mma against ones) are scaled once in float32,
// acc + (b - base s) X + s d = acc + b X + s sum(x q) (MLX's factoring,
// the base folded into the bias). Warp w of W takes a contiguous run of
// the groups (steps of U groups, split by N and K alone), loading each
// step's scales with one vector load a row, and warp 0 adds the other
// warps' sums in warp order.
//
// Row independence: an output (weight row n, x row r) depends on column r
// of B and on the weights only (a tensor core computes each output from
// its own row and column), and the split of K over the warps depends on N
// and K only; the number of x rows and the alignment (vector or scalar
// loads read the same values) do not enter its arithmetic. No atomics:
// run-to-run identical.
#include "backend/cuda/launch.cuh"
#include "backend/cuda/quantized.cuh"

#include <cstdlib>
#include <string>
#include <type_traits>

namespace nuvec::cuda::quantk {

namespace {

constexpr int kMaxWarps = 16;

template <class T>
inline constexpr bool kBf = std::is_same_v<T, bfloat16_t>;

template <class T>
__device__ __forceinline__ void mma(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  if constexpr (kBf<T>)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ u32 prmt(u32 a, u32 b, u32 sel) {
  u32 r;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
  return r;
}

// Codes j and j + 4 of word w plus the base (128 or 1024) as two T values
// (j in the low half), exact: the codes are the low mantissa bits of the
// base, whose unit in the last place is 1.
template <class T>
__device__ __forceinline__ u32 code_pair(u32 w, int j) {
  constexpr u32 base = kBf<T> ? 0x43004300u : 0x64006400u;  // 128 or 1024, twice
  return ((w >> (4 * j)) & 0x000F000Fu) | base;
}

template <class T>
inline constexpr float kBase = kBf<T> ? 128.0f : 1024.0f;

template <class T>
inline constexpr u32 kOnes = kBf<T> ? 0x3F803F80u : 0x3C003C00u;

// What one lane reads for U consecutive scale groups: LW words of each of
// its two weight rows a group, the U matching pieces of x (8 LW elements
// each), and the rows' U scales and biases as stored.
template <class T, int LW, int U>
struct Frag {
  u32 w[U][2][LW];
  u32 x[U][LW][4];
  T s[2][U], b[2][U];
};

template <int N, bool V>
__device__ __forceinline__ void load_w(const u32* p, u32 (&v)[N]) {
  if constexpr (V && N == 4) {
    const uint4 r = __ldcs(reinterpret_cast<const uint4*>(p));
    v[0] = r.x, v[1] = r.y, v[2] = r.z, v[3] = r.w;
  } else if constexpr (V && N == 2) {
    const uint2 r = __ldcs(reinterpret_cast<const uint2*>(p));
    v[0] = r.x, v[1] = r.y;
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = __ldcs(p + i);
  }
}

template <class T, bool V>
__device__ __forceinline__ void load_x(const T* p, u32 (&v)[4]) {
  if constexpr (V) {
    const uint4 r = __ldg(reinterpret_cast<const uint4*>(p));
    v[0] = r.x, v[1] = r.y, v[2] = r.z, v[3] = r.w;
  } else {
    const kn::u16* q = reinterpret_cast<const kn::u16*>(p);
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = u32(__ldg(q + 2 * i)) | (u32(__ldg(q + 2 * i + 1)) << 16);
  }
}

// U consecutive 16-bit values (2 U bytes, aligned to them where V).
template <class T, int U, bool V>
__device__ __forceinline__ void load_s(const T* p, T (&v)[U]) {
  if constexpr (V && U >= 2) {
    u32 r[U / 2];
    if constexpr (U == 8) {
      const uint4 q = __ldg(reinterpret_cast<const uint4*>(p));
      r[0] = q.x, r[1] = q.y, r[2] = q.z, r[3] = q.w;
    } else if constexpr (U == 4) {
      const uint2 q = __ldg(reinterpret_cast<const uint2*>(p));
      r[0] = q.x, r[1] = q.y;
    } else {
      r[0] = __ldg(reinterpret_cast<const u32*>(p));
    }
#pragma unroll
    for (int i = 0; i < U; ++i) v[i].bits = kn::u16(r[i / 2] >> (16 * (i & 1)));
  } else {
    const kn::u16* q = reinterpret_cast<const kn::u16*>(p);
#pragma unroll
    for (int i = 0; i < U; ++i) v[i].bits = __ldg(q + i);
  }
}

template <class T, int LW>
__global__ void __launch_bounds__(kMaxWarps * 32)
    qmma_kernel(MvArgs a, int tiles, bool vec) {
  constexpr int U = 8 / LW;  // groups a step: 32 bytes of each row a lane
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n0 = blockIdx.y * 16;
  const int64_t item = blockIdx.x / tiles;
  const int r0 = int(blockIdx.x - item * tiles) * 8;
  const int64_t xm = pick(a.lhs, item, a.x_count), wm = pick(a.rhs, item, a.w.count);
  const int K = a.k, group = a.w.q.group_size, G = K / group, gw = group / 8;
  const int64_t words = int64_t(K) / 8;
  // Warp w takes the steps [w C / W, (w + 1) C / W) of the C = G / U steps;
  // the last warp also the G % U groups after them.
  const int C = G / U, lo = warp * C / warps * U, hi = warp == warps - 1 ? G : (warp + 1) * C / warps * U;
  const bool xok = r0 + g < a.m;
  const T* xp = static_cast<const T*>(a.x) + (xm * a.m + (xok ? r0 + g : 0)) * int64_t(K) + t * LW * 8;
  const u32* wrow[2];
  const T *srow[2], *brow[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int n = n0 + g + 8 * h;
    const int64_t row = wm * a.n + (n < a.n ? n : a.n - 1);
    wrow[h] = a.w.w + row * words + t * LW;
    srow[h] = static_cast<const T*>(a.w.scales) + row * G;
    brow[h] = static_cast<const T*>(a.w.biases) + row * G;
  }
  if (a.early_w)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      for (int st = lo; st < hi && st < lo + 2 * U; ++st)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(wrow[h] + int64_t(st) * gw));
  enter_held_kernel();

  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  // One group: its codes against x (d) and x's sum (dx), scaled once.
  auto compute = [&](const u32 (&w)[2][LW], const u32 (&x)[LW][4], T s0, T s1, T b0v, T b1v) {
    float dx[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int i = 0; i < LW; ++i) {
      // x's elements e0..e7 paired as the codes are: (e0, e4), (e1, e5), ...
      const u32 b0 = prmt(x[i][0], x[i][2], 0x5410u), b1 = prmt(x[i][0], x[i][2], 0x7632u);
      const u32 b2 = prmt(x[i][1], x[i][3], 0x5410u), b3 = prmt(x[i][1], x[i][3], 0x7632u);
      mma<T>(dx, kOnes<T>, kOnes<T>, kOnes<T>, kOnes<T>, b0, b1);
      mma<T>(dx, kOnes<T>, kOnes<T>, kOnes<T>, kOnes<T>, b2, b3);
      const u32 wg = w[0][i], wh = w[1][i];
      mma<T>(d, code_pair<T>(wg, 0), code_pair<T>(wh, 0), code_pair<T>(wg, 1), code_pair<T>(wh, 1), b0, b1);
      mma<T>(d, code_pair<T>(wg, 2), code_pair<T>(wh, 2), code_pair<T>(wg, 3), code_pair<T>(wh, 3), b2, b3);
    }
    // d holds sum(x (q + base)): s d + (b - base s) sum(x) = s sum(x q) + b sum(x).
    const float sv[2] = {to_acc(s0), to_acc(s1)};
    const float bv[2] = {__fmaf_rn(-kBase<T>, sv[0], to_acc(b0v)), __fmaf_rn(-kBase<T>, sv[1], to_acc(b1v))};
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[c] = __fmaf_rn(sv[c >> 1], d[c], __fmaf_rn(bv[c >> 1], dx[c & 1], acc[c]));
  };
  auto load_group = [&](int st, u32 (&w)[2][LW], u32 (&x)[LW][4], auto vtag) {
    constexpr bool V = decltype(vtag)::value;
#pragma unroll
    for (int h = 0; h < 2; ++h) load_w<LW, V>(wrow[h] + int64_t(st) * gw, w[h]);
#pragma unroll
    for (int i = 0; i < LW; ++i) {
      if (xok) load_x<T, V>(xp + int64_t(st) * group + 8 * i, x[i]);
      else x[i][0] = x[i][1] = x[i][2] = x[i][3] = 0u;
    }
  };
  auto run = [&](auto vtag) {
    constexpr bool V = decltype(vtag)::value;
    int st = lo;
    for (; st + U <= hi; st += U) {
      Frag<T, LW, U> f;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        load_s<T, U, V>(srow[h] + st, f.s[h]);
        load_s<T, U, V>(brow[h] + st, f.b[h]);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) load_group(st + u, f.w[u], f.x[u], vtag);
#pragma unroll
      for (int u = 0; u < U; ++u) compute(f.w[u], f.x[u], f.s[0][u], f.s[1][u], f.b[0][u], f.b[1][u]);
    }
    for (; st < hi; ++st) {
      u32 w[2][LW], x[LW][4];
      load_group(st, w, x, std::false_type{});
      compute(w, x, srow[0][st], srow[1][st], brow[0][st], brow[1][st]);
    }
  };
  if (vec) run(std::true_type{});
  else run(std::false_type{});

  // Warp 0 adds the other warps' sums in warp order.
  __shared__ float red[kMaxWarps - 1][4][32];
  if (warp > 0)
#pragma unroll
    for (int c = 0; c < 4; ++c) red[warp - 1][c][lane] = acc[c];
  __syncthreads();
  if (warp > 0) return;
  for (int w = 1; w < warps; ++w)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[c] += red[w - 1][c][lane];
  T* out = static_cast<T*>(a.out);
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int n = n0 + g + 8 * (c >> 1), xr = r0 + 2 * t + (c & 1);
    if (n < a.n && xr < a.m) out[(item * a.m + xr) * int64_t(a.n) + n] = kn::from_arith<T>(acc[c]);
  }
}

// The warps splitting K: a function of N and K only (row bits). About 2048
// warps over the GPU where each keeps at least four steps of groups.
int warps_for(int64_t n, int groups, int step) {
  const int64_t blocks = (n + 15) / 16;
  int w = 4;
  while (w < kMaxWarps && blocks * w < 2048 && groups >= 4 * step * w) w *= 2;
  return w;
}

template <class T, int LW>
void launch(const MvArgs& a, cudaStream_t s) {
  constexpr int U = 8 / LW;
  const int G = a.k / a.w.q.group_size;
  int warps = warps_for(a.n, G, U);
  const int64_t tiles = (a.m + 7) / 8;
  const int64_t gx = a.items * tiles, gy = (a.n + 15) / 16;
  if (gx > 0x7FFFFFFF || gy > 65535)
    unsupported("QuantizedMatmul: the product is too large for one launch (" + std::to_string(gx) + " x " +
                std::to_string(gy) + " blocks)");
  // Vector loads where every address they take is aligned (the values read
  // are the same either way).
  const bool vec = aligned(a.x, 16) && aligned(a.w.w, 16) && aligned(a.w.scales, 2 * U) &&
                   aligned(a.w.biases, 2 * U) && G % U == 0;
  hold_launch(qmma_kernel<T, LW>, dim3(unsigned(gx), unsigned(gy)), warps * 32, 0, s,
              "QuantizedMatmul (few rows, mma)", a, int(tiles), vec);
}

}  // namespace

bool qmma(const MvArgs& a, cudaStream_t s) {
  // Opt-in until its final form has run on a GPU (docs/quantization.md):
  // NUVEC_GPU_QMMA=1, read once, so every row count takes the same kernel.
  static const bool on = [] {
    const char* e = std::getenv("NUVEC_GPU_QMMA");
    return e && std::string(e) == "1";
  }();
  if (!on) return false;
  const QuantSpec& q = a.w.q;
  if (!a.transpose || q.mode != QuantMode::affine || q.bits != 4) return false;
  if (a.t != float16 && a.t != bfloat16) return false;
  if (a.k % q.group_size != 0) return false;
  auto by_type = [&](auto tag) {
    using T = decltype(tag);
    switch (q.group_size) {
      case 32: launch<T, 1>(a, s); return true;
      case 64: launch<T, 2>(a, s); return true;
      case 128: launch<T, 4>(a, s); return true;
      default: return false;
    }
  };
  return a.t == bfloat16 ? by_type(bfloat16_t{}) : by_type(float16_t{});
}

}  // namespace nuvec::cuda::quantk
