// The few-row quantized product for affine 4- and 8-bit weights with float
// scales (the decode step of a quantized language model on the CPU): each
// group's values are unpacked eight at a time in registers and multiplied
// into the rows of x at once, four weight rows per pass. Every output is
// x_row . w_row in eight lanes over k (lane = k mod 8, the same order
// whatever the number of rows or threads), summed in a fixed tree: rows
// are independent of the batch.
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstring>

#include "backend/cpu/quant_rows.h"

namespace nuvec::cpu {

template <int Bits>
void qmv_affine_rows(const float* x, int64_t R, int64_t K, int64_t N, const PackedRows<float>& pk, float* out) {
  typedef uint32_t v8u __attribute__((vector_size(32)));
  typedef float v8f __attribute__((vector_size(32)));
  constexpr int per = 32 / Bits;
  constexpr uint32_t mask = (1u << Bits) - 1u;
  const int64_t G = pk.q.group_size, groups = pk.groups, chunks = G / 8;
  auto hsum = [](v8f l) { return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7])); };
  auto unpack = [&](const uint32_t* gw, int64_t k) {
    if constexpr (Bits == 4) {
      const uint32_t a = gw[k];
      const v8u words = v8u{a, a, a, a, a, a, a, a}, shifts = v8u{0, 4, 8, 12, 16, 20, 24, 28};
      return __builtin_convertvector((words >> shifts) & mask, v8f);
    } else {
      // Eight bytes are eight values (little-endian words, value i in byte i).
      typedef uint8_t v8b __attribute__((vector_size(8)));
      v8b bytes;
      std::memcpy(&bytes, reinterpret_cast<const uint8_t*>(gw) + k * 8, sizeof(bytes));
      return __builtin_convertvector(bytes, v8f);
    }
  };
  constexpr int kRows = 4;
  for_row_blocks(N, K, [&](int64_t n0, int64_t n1) {
    for (int64_t m = 0; m < R; ++m) {
      const float* xr = x + m * K;
      for (int64_t n = n0; n < n1; n += kRows) {
        const int nr = static_cast<int>(std::min<int64_t>(kRows, n1 - n));
        v8f acc[kRows] = {};
        for (int64_t g = 0; g < groups; ++g) {
          for (int r = 0; r < nr; ++r) {
            const int64_t row = n + r;
            const float s = pk.scales[row * groups + g], b = pk.biases[row * groups + g];
            const v8f sv = {s, s, s, s, s, s, s, s}, bv = {b, b, b, b, b, b, b, b};
            const uint32_t* gw = pk.w + row * pk.words + g * (G / per);
            for (int64_t k = 0; k < chunks; ++k) {
              v8f xv;
              std::memcpy(&xv, xr + g * G + k * 8, sizeof(xv));
              const v8f w = unpack(gw, k) * sv + bv;
              acc[r] += xv * w;
            }
          }
        }
        for (int r = 0; r < nr; ++r) out[m * N + n + r] = hsum(acc[r]);
      }
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
