// RoPE on the GPU (fast_kernels.h): elementwise, so any grouping gives the
// same bits: each rotated pair is x1 cos - x2 sin, x1 sin + x2 cos in
// float32 (no contraction) with theta = pos * inv_freq[i], pos =
// (t + offset) * scale, sin and cos by nuvec's SinCos (the CPU's
// functions and formulas), rounded once.
//
// rope_table (the layouts [items, sharers, t_len, d] where a row's
// position depends on t and its item's offset only): a block takes TP
// consecutive positions of one item and a slice of the rows that share
// them (the heads; every row when the offset is shared), computes their
// TP x half (cos, sin) once into shared memory, then streams the rows
// through it, 16 bytes of x per unit of work: the accurate sincos costs
// 1 / sharers per pair. rope_rows (any other layout, or half > 4096)
// computes each pair's sincos itself.
#include <cmath>

#include "backend/cuda/fast_rows.cuh"

namespace nuvec::cuda::fastk {

namespace {

constexpr int kRopeBlock = 256;

__device__ __forceinline__ float inv_freq(int i, const float* freqs,
                                          float coef) {
  return freqs ? kn::Reciprocal{}(freqs[i]) : kn::Exp{}(float(-i) * coef);
}

// The rotation's (cos, sin) of theta = pos * inv (sin negated for the
// inverse rotation).
__device__ __forceinline__ float2 rotation(float pos, float inv, bool forward) {
  const kn::SinCosOf<float> sc = kn::SinCos{}(pos * inv);
  return {sc.cos, forward ? sc.sin : kn::Negative{}(sc.sin)};
}

// a[k], b[k] <- the rotated pair k of G pairs, cs[k] = (cos, sin).
template <class T, int G>
__device__ __forceinline__ void rotate(Pack<T, G>& a, Pack<T, G>& b,
                                       const float2* cs) {
  if constexpr (G == kVec<T> && kHalf<T>) {  // whole chunks: paired casts
    Chunk<T> ca, cb;
    memcpy(&ca, &a, 16);
    memcpy(&cb, &b, 16);
    float x1[G], x2[G];
    widen_chunk<T>(ca, x1);
    widen_chunk<T>(cb, x2);
#pragma unroll
    for (int k = 0; k < G; ++k) {
      const float c = cs[k].x, sn = cs[k].y, y1 = x1[k] * c - x2[k] * sn;
      x2[k] = x1[k] * sn + x2[k] * c;
      x1[k] = y1;
    }
    ca = narrow_chunk<T>(x1);
    cb = narrow_chunk<T>(x2);
    memcpy(&a, &ca, 16);
    memcpy(&b, &cb, 16);
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k) {
      const float x1 = widen(a.v[k]), x2 = widen(b.v[k]);
      const float c = cs[k].x, sn = cs[k].y;
      a.v[k] = narrow<T>(x1 * c - x2 * sn);
      b.v[k] = narrow<T>(x1 * sn + x2 * c);
    }
  }
}

// The G pairs of unit i (first member index i) of a row: adjacent pairs
// (TRAD) or the two halves.
template <class T, int G, bool TRAD>
__device__ __forceinline__ void load_pairs(const T* xr, int i, int half,
                                           Pack<T, G>& a, Pack<T, G>& b) {
  if constexpr (TRAD) {
    Pack<T, 2 * G> p;
    if constexpr (G == 1)
      p.v[0] = xr[2 * i], p.v[1] = xr[2 * i + 1];
    else
      p = *reinterpret_cast<const Pack<T, 2 * G>*>(xr + 2 * i);
#pragma unroll
    for (int k = 0; k < G; ++k) a.v[k] = p.v[2 * k], b.v[k] = p.v[2 * k + 1];
  } else {
    a = *reinterpret_cast<const Pack<T, G>*>(xr + i);
    b = *reinterpret_cast<const Pack<T, G>*>(xr + half + i);
  }
}
template <class T, int G, bool TRAD>
__device__ __forceinline__ void store_pairs(T* o, int i, int half,
                                            const Pack<T, G>& a,
                                            const Pack<T, G>& b) {
  if constexpr (TRAD) {
    Pack<T, 2 * G> p;
#pragma unroll
    for (int k = 0; k < G; ++k) p.v[2 * k] = a.v[k], p.v[2 * k + 1] = b.v[k];
    if constexpr (G == 1)
      o[2 * i] = p.v[0], o[2 * i + 1] = p.v[1];
    else
      *reinterpret_cast<Pack<T, 2 * G>*>(o + 2 * i) = p;
  } else {
    *reinterpret_cast<Pack<T, G>*>(o + i) = a;
    *reinterpret_cast<Pack<T, G>*>(o + half + i) = b;
  }
}

// The copied features from 2 half on: unit u of cw elements.
template <class T>
__device__ __forceinline__ void copy_unit(const T* xr, T* o, int j, int cw) {
  if (cw == 1)
    o[j] = xr[j];
  else
    *reinterpret_cast<Chunk<T>*>(o + j) =
        *reinterpret_cast<const Chunk<T>*>(xr + j);
}

struct RopeArgs {
  const int32_t* offsets;
  const float* freqs;
  int64_t rows, per_item, t_len;
  int n_off, d, half, cw;
  float coef, scale;
  bool forward;
  // The position of row r's time step t of item `item`.
  __device__ float pos(int64_t t, int64_t item) const {
    return (float(t) + float(offsets[n_off == 1 ? 0 : item])) * scale;
  }
};

// Table layout: block b is (group, position tile, slice of sharers); a
// group is an item (per-item offsets) or all rows (one offset), whose
// rows at time step t are g * gstride + j * t_len + t, j < sharers.
struct TableTiles {
  int64_t groups, tiles, slices, sharers, gstride;
  int tp, jb;  // positions per tile (a power of two), sharers per slice
  int log_tp;
};

template <class T, int G, bool TRAD>
__global__ void __launch_bounds__(kRopeBlock, 4)  // 64 registers
    rope_table(const T* x, T* out, const RopeArgs a, const TableTiles tt,
               int tpr) {
  enter_held_kernel();
  extern __shared__ float2 tab[];  // [tp][half] (cos, sin), then inv[half]
  float* const inv = reinterpret_cast<float*>(tab + tt.tp * a.half);
  const int half = a.half;
  for (int i = threadIdx.x; i < half; i += kRopeBlock)
    inv[i] = inv_freq(i, a.freqs, a.coef);
  const int pair_units = half / G, units = pair_units + (a.d - 2 * half) / a.cw;
  const int lt = threadIdx.x % tpr, rpp = kRopeBlock / tpr;  // rows a pass
  const int64_t total = tt.groups * tt.tiles * tt.slices;
  for (int64_t b = blockIdx.x; b < total; b += gridDim.x) {
    const int64_t slice = b % tt.slices, rest = b / tt.slices;
    const int64_t tile = rest % tt.tiles, g = rest / tt.tiles;
    const int64_t t0 = tile * tt.tp;
    const int64_t j0 = slice * tt.jb;
    const int jn = int(tt.sharers - j0 < tt.jb ? tt.sharers - j0 : tt.jb);
    __syncthreads();  // inv is ready; the previous tile's table is done
    for (int e = threadIdx.x; e < tt.tp * half; e += kRopeBlock) {
      const int p = e / half, i = e - p * half;
      const int64_t t = t0 + p;
      tab[e] = t < a.t_len ? rotation(a.pos(t, g), inv[i], a.forward)
                           : float2{0.0f, 0.0f};
    }
    __syncthreads();
    // Rows of the block: q = jj * tp + p (p fastest: consecutive rows),
    // two rows a thread at a time (both loaded before either is stored:
    // more bytes in flight).
    const int nrows = jn << tt.log_tp;
    auto row_of = [&](int q) -> int64_t {  // -1: past the time steps
      const int64_t t = t0 + (q & (tt.tp - 1));
      return q < nrows && t < a.t_len
                 ? g * tt.gstride + (j0 + (q >> tt.log_tp)) * a.t_len + t
                 : -1;
    };
    for (int q = threadIdx.x / tpr; q < nrows; q += 2 * rpp) {
      const int64_t r[2] = {row_of(q), row_of(q + rpp)};
      const float2* cs[2] = {tab + (q & (tt.tp - 1)) * half,
                             tab + ((q + rpp) & (tt.tp - 1)) * half};
      for (int u = lt; u < units; u += tpr) {
        if (u >= pair_units) {
#pragma unroll
          for (int h = 0; h < 2; ++h)
            if (r[h] >= 0)
              copy_unit(x + r[h] * a.d, out + r[h] * a.d,
                        2 * half + (u - pair_units) * a.cw, a.cw);
          continue;
        }
        const int i = u * G;
        Pack<T, G> pa[2], pb[2];
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (r[h] >= 0)
            load_pairs<T, G, TRAD>(x + r[h] * a.d, i, half, pa[h], pb[h]);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          if (r[h] < 0) continue;
          rotate<T, G>(pa[h], pb[h], cs[h] + i);
          store_pairs<T, G, TRAD>(out + r[h] * a.d, i, half, pa[h], pb[h]);
        }
      }
    }
  }
}

// a / b and a % b, in 32 bits when both fit (64-bit division is slow).
__device__ __forceinline__ int64_t div64(int64_t a, int64_t b) {
  return ((a | b) >> 31) == 0 ? int64_t(u32(a) / u32(b)) : a / b;
}
__device__ __forceinline__ int64_t mod64(int64_t a, int64_t b) {
  return ((a | b) >> 31) == 0 ? int64_t(u32(a) % u32(b)) : a % b;
}

// Any layout: a row's units over tpr threads, several rows a block; the
// inverse frequencies in shared memory (`table`) or computed per pair.
template <class T, int G, bool TRAD>
__global__ void __launch_bounds__(kRopeBlock)
    rope_rows(const T* x, T* out, const RopeArgs a, int tpr, bool table) {
  enter_held_kernel();
  extern __shared__ float inv_tab[];
  const int half = a.half;
  if (table) {
    for (int i = threadIdx.x; i < half; i += blockDim.x)
      inv_tab[i] = inv_freq(i, a.freqs, a.coef);
    __syncthreads();
  }
  const int rpb = kRopeBlock / tpr, lt = threadIdx.x % tpr;
  const int pair_units = half / G, units = pair_units + (a.d - 2 * half) / a.cw;
  for (int64_t r = int64_t(blockIdx.x) * rpb + threadIdx.x / tpr; r < a.rows;
       r += int64_t(gridDim.x) * rpb) {
    const float pos = a.pos(mod64(r, a.t_len), div64(r, a.per_item));
    const T* xr = x + r * a.d;
    T* o = out + r * a.d;
    for (int u = lt; u < units; u += tpr) {
      if (u >= pair_units) {
        copy_unit(xr, o, 2 * half + (u - pair_units) * a.cw, a.cw);
        continue;
      }
      const int i = u * G;
      Pack<T, G> pa, pb;
      load_pairs<T, G, TRAD>(xr, i, half, pa, pb);
      float2 cs[G];
#pragma unroll
      for (int k = 0; k < G; ++k)
        cs[k] = rotation(
            pos, table ? inv_tab[i + k] : inv_freq(i + k, a.freqs, a.coef),
            a.forward);
      rotate<T, G>(pa, pb, cs);
      store_pairs<T, G, TRAD>(o, i, half, pa, pb);
    }
  }
}

// The table kernel's tiles for this layout; false when it does not apply
// (a row's position is not a function of (item, t), or half > 4096).
bool table_tiles(const RopeArgs& a, TableTiles& tt) {
  if (a.half <= 0 || a.half > 4096 || a.t_len <= 0 || a.per_item <= 0 ||
      a.per_item % a.t_len != 0 || a.rows % a.per_item != 0)
    return false;
  const int64_t items = a.rows / a.per_item;
  if (a.n_off == 1) {
    tt.groups = 1, tt.sharers = a.rows / a.t_len, tt.gstride = 0;
  } else {
    if (a.n_off < items) return false;
    tt.groups = items, tt.sharers = a.per_item / a.t_len;
    tt.gstride = a.per_item;
  }
  // Up to 16 positions, the table within 32 KiB.
  tt.log_tp = 0;
  while (tt.log_tp < 4 && (int64_t(2) << tt.log_tp) * a.half <= 4096 &&
         (int64_t(1) << tt.log_tp) < a.t_len)
    ++tt.log_tp;
  tt.tp = 1 << tt.log_tp;
  tt.tiles = (a.t_len + tt.tp - 1) / tt.tp;
  // Slices of sharers: about 2048 blocks of work, at least 8 rows a
  // position per block where there are that many.
  const int64_t base = tt.groups * tt.tiles;
  int64_t slices = std::max<int64_t>(1, (2048 + base - 1) / base);
  slices = std::min(slices, std::max<int64_t>(1, tt.sharers / 8));
  tt.jb = int(std::min<int64_t>((tt.sharers + slices - 1) / slices, 1 << 20));
  tt.slices = (tt.sharers + tt.jb - 1) / tt.jb;
  return true;
}

}  // namespace

void rope(DType t, const void* x, void* out, const int32_t* offsets, int n_off,
          const float* freqs, int64_t rows, int64_t per_item, int64_t t_len,
          int d, int dims, bool traditional, float base, float scale,
          bool forward, void* stream) {
  if (rows <= 0 || d <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  RopeArgs a{};
  a.offsets = offsets, a.freqs = freqs, a.rows = rows, a.per_item = per_item;
  a.t_len = t_len, a.n_off = n_off, a.d = d, a.half = dims / 2;
  // As the CPU and the composite: the host's log, one float division.
  a.coef = a.half > 0 ? std::log(base) / float(a.half) : 0.0f;
  a.scale = scale, a.forward = forward;
  TableTiles tt{};
  const bool tiled = table_tiles(a, tt);
  with_type(t, "RoPE", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int V = kVec<T>,
                  GT = V / 2;  // pairs per 16 bytes: adjacent, halves
    const T* px = static_cast<const T*>(x);
    T* po = static_cast<T*>(out);
    const bool al = aligned16(x) && aligned16(out);
    const int half = a.half;
    const int g = !al           ? 1
                  : traditional ? (d % V == 0 && half % GT == 0 ? GT : 1)
                                : (d % V == 0 && half % V == 0 ? V : 1);
    a.cw = al && d % V == 0 && (2 * half) % V == 0 ? V : 1;
    const int units = half / g + (d - 2 * half) / a.cw;
    int tpr = 1;
    while (tpr < units && tpr < kRopeBlock) tpr *= 2;
    auto go = [&](auto kt, auto kr) {
      if (tiled) {
        const size_t smem = size_t(tt.tp) * half * sizeof(float2) +
                            size_t(half) * sizeof(float);
        const int64_t total = tt.groups * tt.tiles * tt.slices;
        hold_launch(kt, grid_of(std::min<int64_t>(total, 65536)), kRopeBlock, smem, s, "RoPE", px, po, a, tt,
                    tpr);
      } else {
        const bool table = half <= 8192;  // 32 KiB of shared memory at most
        const size_t smem = table ? size_t(half) * sizeof(float) : 0;
        const unsigned grid = grid_of(std::min<int64_t>(
            (rows + kRopeBlock / tpr - 1) / (kRopeBlock / tpr), 8192));
        hold_launch(kr, grid, kRopeBlock, smem, s, "RoPE", px, po, a, tpr, table);
      }
    };
    if (traditional) {
      if (g > 1)
        go(rope_table<T, GT, true>, rope_rows<T, GT, true>);
      else
        go(rope_table<T, 1, true>, rope_rows<T, 1, true>);
    } else {
      if (g > 1)
        go(rope_table<T, V, false>, rope_rows<T, V, false>);
      else
        go(rope_table<T, 1, false>, rope_rows<T, 1, false>);
    }
  });
  ew::check_launch("RoPE");
}

}  // namespace nuvec::cuda::fastk
