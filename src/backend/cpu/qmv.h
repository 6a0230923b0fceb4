// The few-row quantized product for affine 4- and 8-bit weights with float
// scales (the decode step of a quantized language model on the CPU): each
// group's values are unpacked in registers, two weight rows to a 16-lane
// vector (row n in lanes 0-7, row n + 1 in lanes 8-15), and multiplied into
// up to eight rows of x at once, four weight rows per pass. Every output
// is x_row . w_row in eight lanes over k (lane = k mod 8, the same order
// whatever the number of rows or threads), summed in a fixed tree: the
// bits of product()'s dot4 in qmm.cpp, and rows independent of the batch.
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstring>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "backend/cpu/quant_rows.h"

namespace nuvec::cpu {

namespace qmv_detail {

typedef uint32_t v16u __attribute__((vector_size(64)));
typedef float v16f __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef uint8_t v16b __attribute__((vector_size(16)));
typedef uint64_t v2q __attribute__((vector_size(16)));

// The values of chunk k (eight consecutive values) of rows a and b.
template <int Bits>
inline v16f unpack2(const uint32_t* a, const uint32_t* b, int64_t k) {
  if constexpr (Bits == 4) {
    const uint32_t x = a[k], y = b[k];
    const v16u words = {x, x, x, x, x, x, x, x, y, y, y, y, y, y, y, y};
    const v16u shifts = {0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28};
    return __builtin_convertvector((words >> shifts) & 15u, v16f);
  } else {
    // Eight bytes are eight values (little-endian words, value i in byte i).
    uint64_t x, y;
    std::memcpy(&x, reinterpret_cast<const uint8_t*>(a) + k * 8, 8);
    std::memcpy(&y, reinterpret_cast<const uint8_t*>(b) + k * 8, 8);
#if defined(__AVX512F__)
    // One widening move: GCC 12 compiles the generic conversion below to
    // sixteen scalar byte extractions (the same values either way).
    // (GCC 12's header warns about its own placeholder operand here.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
    const __m512i wide = _mm512_cvtepu8_epi32(_mm_set_epi64x(static_cast<long long>(y), static_cast<long long>(x)));
    const __m512 values = _mm512_cvtepi32_ps(wide);
#pragma GCC diagnostic pop
    return values;
#else
    const v2q q = {x, y};
    return __builtin_convertvector(reinterpret_cast<const v16b&>(q), v16f);
#endif
  }
}

inline float hsum8(const v16f& l, int h) {
  const int o = 8 * h;
  return ((l[o] + l[o + 1]) + (l[o + 2] + l[o + 3])) + ((l[o + 4] + l[o + 5]) + (l[o + 6] + l[o + 7]));
}

// Eight floats at p in both halves.
inline v16f twice(const float* p) {
  v8f h;
  std::memcpy(&h, p, sizeof(h));
  return __builtin_shufflevector(h, h, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
}

inline v16f halves(float a, float b) { return v16f{a, a, a, a, a, a, a, a, b, b, b, b, b, b, b, b}; }

// Rows [m0, m0 + MR) of x (row indices past R repeat the last row, their
// sums unused) against weight rows [n, n + 4) (past n1: repeats, unused).
// Each accumulator sees the chunks (g, k) in order, as dot4's lanes.
template <int Bits, int MR>
void pass(const float* x, int64_t R, int64_t K, int64_t N, int64_t m0, int64_t n, int64_t n1,
          const PackedRows<float>& pk, float* out) {
  constexpr int per = 32 / Bits;
  const int64_t G = pk.q.group_size, groups = pk.groups, chunks = G / 8;
  const int64_t r0 = n, r1 = std::min(n + 1, n1 - 1), r2 = std::min(n + 2, n1 - 1), r3 = std::min(n + 3, n1 - 1);
  const float* xr[MR];
  for (int m = 0; m < MR; ++m) xr[m] = x + std::min(m0 + m, R - 1) * K;
  v16f a0[MR], a1[MR];
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) a0[m] = a1[m] = v16f{};
  for (int64_t g = 0; g < groups; ++g) {
    const float* sc = pk.scales + g;
    const float* bi = pk.biases + g;
    const v16f s0 = halves(sc[r0 * groups], sc[r1 * groups]), s1 = halves(sc[r2 * groups], sc[r3 * groups]);
    const v16f b0 = halves(bi[r0 * groups], bi[r1 * groups]), b1 = halves(bi[r2 * groups], bi[r3 * groups]);
    const int64_t wo = g * (G / per);
    const uint32_t *w0 = pk.w + r0 * pk.words + wo, *w1 = pk.w + r1 * pk.words + wo;
    const uint32_t *w2 = pk.w + r2 * pk.words + wo, *w3 = pk.w + r3 * pk.words + wo;
    for (int64_t k = 0; k < chunks; ++k) {
      const v16f v0 = unpack2<Bits>(w0, w1, k) * s0 + b0;
      const v16f v1 = unpack2<Bits>(w2, w3, k) * s1 + b1;
#pragma GCC unroll 8
      for (int m = 0; m < MR; ++m) {
        const v16f xv = twice(xr[m] + g * G + k * 8);
        a0[m] += xv * v0;
        a1[m] += xv * v1;
      }
    }
  }
  for (int m = 0; m < MR && m0 + m < R; ++m)
    for (int r = 0; r < 4 && n + r < n1; ++r)
      out[(m0 + m) * N + n + r] = hsum8(r < 2 ? a0[m] : a1[m], r % 2);
}

}  // namespace qmv_detail

template <int Bits>
void qmv_affine_rows(const float* x, int64_t R, int64_t K, int64_t N, const PackedRows<float>& pk, float* out) {
  for_row_blocks(N, K * std::min<int64_t>(R, 8), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; n += 4)
      for (int64_t m0 = 0; m0 < R; m0 += 8) {
        const int64_t left = R - m0;
        if (left == 1)
          qmv_detail::pass<Bits, 1>(x, R, K, N, m0, n, n1, pk, out);
        else if (left == 2)
          qmv_detail::pass<Bits, 2>(x, R, K, N, m0, n, n1, pk, out);
        else if (left <= 4)
          qmv_detail::pass<Bits, 4>(x, R, K, N, m0, n, n1, pk, out);
        else
          qmv_detail::pass<Bits, 8>(x, R, K, N, m0, n, n1, pk, out);
      }
  });
}

/// Whether qmv_affine applies: float scales and biases, 4 or 8 bits, groups
/// of a multiple of 8.
inline bool qmv_affine_applies(const PackedRows<float>& pk) {
  return pk.q.has_biases() && (pk.q.bits == 4 || pk.q.bits == 8) && pk.q.group_size % 8 == 0;
}

inline void qmv_affine(const float* x, int64_t R, int64_t K, int64_t N, const PackedRows<float>& pk, float* out) {
  if (pk.q.bits == 4) return qmv_affine_rows<4>(x, R, K, N, pk, out);
  return qmv_affine_rows<8>(x, R, K, N, pk, out);
}

}  // namespace nuvec::cpu
