// Shared by the CPU quantization kernels (quantize.cpp, qmm.cpp): dense
// views of inputs and the rows of a packed matrix as values.
#pragma once

#include <type_traits>
#include <vector>

#include "backend/cpu/rows.h"
#include "backend/cpu/scratch.h"
#include "nuvec/kernels/quant.h"
#include "nuvec/primitives/quantized.h"

namespace nuvec::cpu {

/// The accumulation type of T: double for double, else float.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// `a`'s elements in row-major order: its own buffer when it is laid out so,
/// else a copy in `keep`.
template <class T>
const T* dense_rows(const Array& a, Scratch<T>& keep) {
  bool dense = true;
  int64_t expect = 1;
  for (int d = a.ndim() - 1; d >= 0; --d) {
    if (a.shape(d) != 1 && a.strides()[d] != expect) dense = false;
    expect *= a.shape(d);
  }
  if (dense) return ptr<T>(a);
  keep.reset(a.size());
  Rows rows(a);
  const int64_t n = rows.length();
  for (int64_t r = 0; r < rows.count(); ++r) load_row<T, T>(a, rows, r, keep.data() + r * n);
  return keep.data();
}

/// The rows of a packed matrix (w_q [..., W], scales and biases [..., G] of
/// type S; S float for the floating modes, whose scales are uint8 codes) as
/// values of acc_t<S>: Dequantize's arithmetic.
template <class S>
struct PackedRows {
  using A = acc_t<S>;
  QuantSpec q;
  const kernels::u32* w;
  const S* scales = nullptr;
  const S* biases = nullptr;
  const kernels::u8* codes = nullptr;
  int64_t words, cols, groups, rows;
  Scratch<kernels::u32> kw;
  Scratch<S> ks, kb;
  Scratch<kernels::u8> kc;

  PackedRows(const QuantSpec& spec, const Array& wq, const Array& sc, const Array* b) : q(spec) {
    w = dense_rows<kernels::u32>(wq, kw);
    words = wq.shape(-1);
    cols = words * 32 / q.bits;
    groups = cols / q.group_size;
    rows = wq.size() / (words ? words : 1);
    if (q.has_biases()) {
      scales = dense_rows<S>(sc, ks);
      biases = dense_rows<S>(*b, kb);
    } else {
      codes = dense_rows<kernels::u8>(sc, kc);
    }
  }

  /// Row r's values into dst[0, cols).
  void row(int64_t r, A* dst) const {
    if (q.has_biases()) {
      switch (q.bits) {  // whole words of values: loops the compiler vectorizes
        case 2: return affine_row<2>(r, dst);
        case 4: return affine_row<4>(r, dst);
        case 8: return affine_row<8>(r, dst);
        default: break;
      }
    }
    namespace kq = kernels::quant;
    const kernels::u32* wr = w + r * words;
    kernels::Cast<S> to_s;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t i0 = g * q.group_size;
      if (q.has_biases()) {
        const A s = A(scales[r * groups + g]), b = A(biases[r * groups + g]);
        for (int j = 0; j < q.group_size; ++j) {
          const A v = A(to_s(s * A(kq::unpack(wr, i0 + j, q.bits))));
          dst[i0 + j] = A(to_s(v + b));
        }
      } else {
        const kernels::u8 c = codes[r * groups + g];
        const float s = q.mode == QuantMode::nvfp4 ? kq::fp8_value(c) : kq::e8m0_value(c);
        for (int j = 0; j < q.group_size; ++j) {
          const kernels::u32 e = kq::unpack(wr, i0 + j, q.bits);
          dst[i0 + j] = A((q.bits == 4 ? kq::fp4_value(e) : kq::fp8_value(kernels::u8(e))) * s);
        }
      }
    }
  }

  /// affine_row for float scales, eight values at a time (GCC vector
  /// extensions: one shift, mask, conversion, multiply and add per lane):
  /// the same arithmetic, so the same values.
  template <int Bits>
  void affine_row_vec(int64_t r, float* dst) const {
    typedef kernels::u32 v8u __attribute__((vector_size(32)));
    typedef float v8f __attribute__((vector_size(32)));
    constexpr int per = 32 / Bits;
    constexpr kernels::u32 mask = (1u << Bits) - 1u;
    const kernels::u32* wr = w + r * words;
    const int64_t lanes_per_group = q.group_size / 8;
    for (int64_t g = 0; g < groups; ++g) {
      const float s = scales[r * groups + g], b = biases[r * groups + g];
      const v8f sv = {s, s, s, s, s, s, s, s}, bv = {b, b, b, b, b, b, b, b};
      const kernels::u32* gw = wr + g * (q.group_size / per);
      float* out = dst + g * q.group_size;
      for (int64_t k = 0; k < lanes_per_group; ++k) {
        v8u words8, shifts;
        if constexpr (Bits == 4) {
          const kernels::u32 x = gw[k];
          words8 = v8u{x, x, x, x, x, x, x, x};
          shifts = v8u{0, 4, 8, 12, 16, 20, 24, 28};
        } else {
          const kernels::u32 x = gw[2 * k], y = gw[2 * k + 1];
          words8 = v8u{x, x, x, x, y, y, y, y};
          shifts = v8u{0, 8, 16, 24, 0, 8, 16, 24};
        }
        const v8u qv = (words8 >> shifts) & mask;
        const v8f v = __builtin_convertvector(qv, v8f) * sv;
        const v8f o = v + bv;
        __builtin_memcpy(out + k * 8, &o, sizeof(o));
      }
    }
  }

  /// The affine row for widths that divide a word (values never straddle
  /// two words): the same values as unpack's, word by word.
  template <int Bits>
  void affine_row(int64_t r, A* dst) const {
    if constexpr (std::is_same_v<S, float> && (Bits == 4 || Bits == 8)) {
      if (q.group_size % 8 == 0) return affine_row_vec<Bits>(r, dst);
    }
    constexpr int per = 32 / Bits;
    constexpr kernels::u32 mask = (1u << Bits) - 1u;
    const kernels::u32* wr = w + r * words;
    kernels::Cast<S> to_s;
    const int64_t words_per_group = q.group_size / per;
    for (int64_t g = 0; g < groups; ++g) {
      const A s = A(scales[r * groups + g]), b = A(biases[r * groups + g]);
      const kernels::u32* gw = wr + g * words_per_group;
      A* out = dst + g * q.group_size;
      for (int64_t k = 0; k < words_per_group; ++k) {
        const kernels::u32 word = gw[k];
        for (int j = 0; j < per; ++j) {
          const A v = A(to_s(s * A((word >> (j * Bits)) & mask)));
          out[k * per + j] = A(to_s(v + b));
        }
      }
    }
  }
};

}  // namespace nuvec::cpu
