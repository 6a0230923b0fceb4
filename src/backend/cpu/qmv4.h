// The few-row product for transposed affine 4-bit weights with float scales
// where K is a multiple of 64 and the group size divides 128 (the decode
// step of a 4-bit language model on the CPU). A 64-byte load is 16 words,
// 128 codes; code j of every word is a shift and a ternary logic operation
// away (as the float 16 + q), so lane i of a 16-lane vector holds code j
// of word i (k = 128 b + 8 i + j).
// x is permuted once per call to the same order (and its sums over each
// word's 8 elements taken), so each block's sums d = sum_j x (16 + q) per
// lane need no unpacking beyond that, and are scaled once per block:
// acc += s d + (b - 16 s) X = acc + s sum(x q) + b X (MLX's factoring, the
// 16 folded into the bias), s and b the lane's group's.
//
// Every output is the fixed tree of its 16 lanes, each lane summing the
// blocks in order (a last block of 64 codes padded with zeros): the bits
// depend on K and the group size only, not on the number of rows of x, the
// rows per pass or the threads.
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/cpu/quant_rows.h"
#include "backend/cpu/rows.h"

namespace nuvec::cpu {

namespace qmv4_detail {

typedef uint32_t v16u __attribute__((vector_size(64)));
typedef float v16f __attribute__((vector_size(64)));

inline v16f load16f(const float* p) {
  v16f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline v16u load16u(const uint32_t* p) {
  v16u v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// 16 + code j of every word of w, as floats, exactly: the code shifted
// into the top of the mantissa of 16.0f (one shift and one ternary logic
// operation, no conversion).
inline v16f codes(const v16u& w, int j) {
  const v16u t = j <= 4 ? w << static_cast<uint32_t>(19 - 4 * j) : w >> static_cast<uint32_t>(4 * j - 19);
  const v16u bits = (t & (15u << 19)) | 0x41800000u;
  v16f v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

// The 16 lanes' scales of one block: lane i takes value (i * per) / 16 of
// the block's `per` groups (per = 128 / group size: 1, 2 or 4).
template <int Per>
inline v16f lanes(const float* p) {
  if constexpr (Per == 1) {
    return v16f{} + p[0];
  } else if constexpr (Per == 2) {
    const float a = p[0], b = p[1];
    return v16f{a, a, a, a, a, a, a, a, b, b, b, b, b, b, b, b};
  } else {
    const float a = p[0], b = p[1], c = p[2], d = p[3];
    return v16f{a, a, a, a, b, b, b, b, c, c, c, c, d, d, d, d};
  }
}

inline float hsum16(const v16f& v) {
  float s[8];
  for (int i = 0; i < 8; ++i) s[i] = v[i] + v[i + 8];
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

// The lanes' scales of a last block of 64 codes (words 0-7; lanes 8-15
// multiply zeros, so they repeat the last group's value).
template <int Per>
inline v16f tail_lanes(const float* p) {
  if constexpr (Per == 4) {
    const float a = p[0], b = p[1];
    return v16f{a, a, a, a, b, b, b, b, b, b, b, b, b, b, b, b};
  } else {
    return v16f{} + p[0];
  }
}

// x rows [m0, m0 + MR) (the permuted xt, the word sums xs, both padded to
// a whole last block with zeros) against weight rows [n, n + RP) (clamped
// to n1 - 1; the repeats are not stored).
template <int Per, int MR, int RP>
void pass(const float* xt, const float* xs, int64_t R, int64_t K, int64_t N, int64_t m0, int64_t n,
          int64_t n1, const PackedRows<float>& pk, int64_t row0, float* out) {
  const int64_t full = K / 128, kp = (K + 127) / 128 * 128, groups = pk.groups;
  const float* xr[MR];
  const float* sr[MR];
  for (int m = 0; m < MR; ++m) {
    const int64_t row = std::min(m0 + m, R - 1);
    xr[m] = xt + row * kp, sr[m] = xs + row * (kp / 8);
  }
  const uint32_t* w[RP];
  const float *sc[RP], *bi[RP];
  for (int r = 0; r < RP; ++r) {
    const int64_t row = row0 + std::min(n + r, n1 - 1);
    w[r] = pk.w + row * pk.words, sc[r] = pk.scales + row * groups, bi[r] = pk.biases + row * groups;
  }
  v16f acc[RP][MR];
  for (int r = 0; r < RP; ++r)
    for (int m = 0; m < MR; ++m) acc[r][m] = v16f{};
  // Block b: 128 codes, or the last 64 (Half: words 0-7, the rest zero).
  auto block = [&](int64_t b, auto half) {
    constexpr bool Half = decltype(half)::value;
    v16u wv[RP];
    for (int r = 0; r < RP; ++r) {
      if constexpr (Half) {
        wv[r] = v16u{};
        std::memcpy(&wv[r], w[r] + b * 16, 32);
      } else {
        wv[r] = load16u(w[r] + b * 16);
      }
    }
    v16f d[RP][MR];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      v16f xv[MR];
      for (int m = 0; m < MR; ++m) xv[m] = load16f(xr[m] + b * 128 + j * 16);
      for (int r = 0; r < RP; ++r) {
        const v16f q = codes(wv[r], j);
        for (int m = 0; m < MR; ++m) d[r][m] = j == 0 ? xv[m] * q : d[r][m] + xv[m] * q;
      }
    }
    for (int r = 0; r < RP; ++r) {
      // d sums x (16 + q): s d + (b - 16 s) X = s sum(x q) + b X.
      const v16f s = Half ? tail_lanes<Per>(sc[r] + b * Per) : lanes<Per>(sc[r] + b * Per);
      const v16f bb = (Half ? tail_lanes<Per>(bi[r] + b * Per) : lanes<Per>(bi[r] + b * Per)) - s * 16.0f;
      for (int m = 0; m < MR; ++m) acc[r][m] += s * d[r][m] + bb * load16f(sr[m] + b * 16);
    }
  };
  for (int64_t b = 0; b < full; ++b) block(b, std::false_type{});
  if (kp != K) block(full, std::true_type{});
  for (int m = 0; m < MR && m0 + m < R; ++m)
    for (int r = 0; r < RP && n + r < n1; ++r) out[(m0 + m) * N + n + r] = hsum16(acc[r][m]);
}

template <int Per>
void rows(const float* x, int64_t R, int64_t K, int64_t N, const PackedRows<float>& pk, int64_t row0, float* out) {
  // x in the codes' order: xt[128 b + 16 j + i] = x[128 b + 8 i + j]; xs
  // the sums of each word's eight elements in k order; zeros past K.
  const int64_t kp = (K + 127) / 128 * 128;
  std::vector<float> xt(size_t(R * kp), 0.0f), xs(size_t(R * kp / 8), 0.0f);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t i8 = 0; i8 < K / 8; ++i8) {
      const int64_t b = i8 / 16, i = i8 % 16;
      const float* p = x + r * K + 8 * i8;
      float s = 0.0f;
      for (int j = 0; j < 8; ++j) {
        xt[size_t(r * kp + b * 128 + 16 * j + i)] = p[j];
        s += p[j];
      }
      xs[size_t(r * (kp / 8) + i8)] = s;
    }
  for_row_blocks(N, K * std::min<int64_t>(R, 8), [&](int64_t n0, int64_t n1) {
    for (int64_t m0 = 0; m0 < R; m0 += 8) {
      const int64_t left = R - m0;
      // Weight rows per pass: as many as the accumulators allow.
      if (left == 1)
        for (int64_t n = n0; n < n1; n += 4) pass<Per, 1, 4>(xt.data(), xs.data(), R, K, N, m0, n, n1, pk, row0, out);
      else if (left == 2)
        for (int64_t n = n0; n < n1; n += 4) pass<Per, 2, 4>(xt.data(), xs.data(), R, K, N, m0, n, n1, pk, row0, out);
      else if (left <= 4)
        for (int64_t n = n0; n < n1; n += 2) pass<Per, 4, 2>(xt.data(), xs.data(), R, K, N, m0, n, n1, pk, row0, out);
      else
        for (int64_t n = n0; n < n1; ++n) pass<Per, 8, 1>(xt.data(), xs.data(), R, K, N, m0, n, n1, pk, row0, out);
    }
  });
}

}  // namespace qmv4_detail

/// Whether qmv4 applies: 4-bit affine with float scales and biases, K a
/// multiple of 64, groups of 32, 64 or 128.
inline bool qmv4_applies(const PackedRows<float>& pk, int64_t K) {
  const int g = pk.q.group_size;
  return pk.q.has_biases() && pk.q.bits == 4 && K % 64 == 0 && (g == 32 || g == 64 || g == 128);
}

/// out [R, N] = x [R, K] @ W^T, W the rows [row0, row0 + N) of pk.
inline void qmv4(const float* x, int64_t R, int64_t K, int64_t N, const PackedRows<float>& pk, float* out,
                 int64_t row0 = 0) {
  switch (pk.q.group_size) {
    case 128: return qmv4_detail::rows<1>(x, R, K, N, pk, row0, out);
    case 64: return qmv4_detail::rows<2>(x, R, K, N, pk, row0, out);
    default: return qmv4_detail::rows<4>(x, R, K, N, pk, row0, out);
  }
}

}  // namespace nuvec::cpu
