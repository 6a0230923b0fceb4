// Quantize and Dequantize on the CPU: MLX 0.32's arithmetic step for step
// (docs/quantization.md, "Formats"), one group at a time, rows in parallel.
// Affine statistics are float32 (double for float64 weights); the floating
// modes round to the weights' dtype after every step, as MLX's composite.
#include <cmath>
#include <cstring>

#include "backend/cpu/quant_rows.h"
#include "nuvec/kernels/quant.h"

namespace nuvec::cpu {

namespace {

namespace kq = kernels::quant;
using kernels::u32;
using kernels::u8;

// Writes code `v` of element i into a zeroed row of words (bitstream).
inline void pack(u32* words, int64_t i, int bits, u32 v) {
  const int64_t at = i * bits;
  const int sh = int(at & 31);
  u32* w = words + (at >> 5);
  w[0] |= v << sh;
  if (sh + bits > 32) w[1] |= v >> (32 - sh);
}

template <class T>
void quantize_affine(const T* w, int64_t n, int bits, u32* words, T* scales, T* biases, int gs) {
  using A = acc_t<T>;
  const A n_bins = A((1 << bits) - 1), eps = A(1e-7f);
  kernels::Cast<T> to_t;
  for (int64_t g = 0; g * gs < n; ++g) {
    const T* v = w + g * gs;
    A lo = A(v[0]), hi = A(v[0]);
    for (int j = 1; j < gs; ++j) {
      A x = A(v[j]);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    A scale = std::max((hi - lo) / n_bins, eps), bias = lo;
    if (bits > 1) {
      // MLX moves the grid so that the edge of larger magnitude is exact
      // (1 bit keeps min and step).
      const bool mask = std::abs(lo) > std::abs(hi);
      scale = mask ? scale : -scale;
      const A edge = mask ? lo : hi;
      const A q0 = std::rint(edge / scale);
      bias = 0;
      if (q0 != 0) {
        scale = edge / q0;
        bias = edge;
      }
    }
    for (int j = 0; j < gs; ++j) {
      A q = std::rint((A(v[j]) - bias) / scale);
      q = std::min(std::max(q, A(0)), n_bins);
      pack(words, g * gs + j, bits, u32(q));
    }
    scales[g] = to_t(scale);
    biases[g] = to_t(bias);
  }
}

// The floating modes, every step rounded to T (r()).
template <class T>
void quantize_fp(const T* w, int64_t n, const QuantSpec& q, u32* words, u8* scales) {
  using A = acc_t<T>;
  kernels::Cast<T> to_t;
  auto r = [&](A x) { return A(to_t(x)); };
  const int gs = q.group_size;
  const A maxval = q.bits == 4 ? A(6) : A(448);
  static const float lut[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int64_t g = 0; g * gs < n; ++g) {
    const T* v = w + g * gs;
    A m = std::abs(A(v[0]));
    for (int j = 1; j < gs; ++j) m = std::max(m, std::abs(A(v[j])));
    const A s = r(m / maxval);
    A div;
    if (q.mode == QuantMode::nvfp4) {
      const u8 code = kq::fp8_code(float(s));
      scales[g] = code;
      div = r(A(kq::fp8_value(code)));
    } else {
      // The smallest power of two that keeps the group's largest value in range.
      const A e = s == 0 ? A(0) : std::ceil(r(std::log2(s)));
      div = r(std::exp2(e));
      scales[g] = u8(u32(int32_t(e) + 127));
    }
    for (int j = 0; j < gs; ++j) {
      const A x = r(A(v[j]) / div);
      u32 code;
      if (q.bits == 8) {
        code = kq::fp8_code(float(x));
      } else {
        code = 0;
        A best = std::abs(r(x - A(lut[0])));
        for (u32 c = 1; c < 16; ++c) {
          A d = std::abs(r(x - A(lut[c])));
          if (d < best) best = d, code = c;
        }
      }
      pack(words, g * gs + j, q.bits, code);
    }
  }
}

template <class T>
void quantize_rows(const Quantize& p, const Array& w_in, Arrays& out) {
  const QuantSpec& q = p.spec();
  Scratch<T> keep;
  const T* w = dense_rows<T>(w_in, keep);
  const int64_t n = w_in.shape(-1), rows = w_in.size() / std::max<int64_t>(n, 1);
  const int64_t nw = q.words(n), ng = n / q.group_size;
  u32* words = ptr<u32>(out[0]);
  std::memset(words, 0, size_t(rows * nw) * sizeof(u32));
  for_row_blocks(rows, n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (q.has_biases())
        quantize_affine<T>(w + r * n, n, q.bits, words + r * nw, ptr<T>(out[1]) + r * ng,
                           ptr<T>(out[2]) + r * ng, q.group_size);
      else
        quantize_fp<T>(w + r * n, n, q, words + r * nw, ptr<u8>(out[1]) + r * ng);
    }
  });
}

template <class S, class O>
void dequantize_rows(const Dequantize& p, const Arrays& in, Array& out) {
  const QuantSpec& q = p.spec();
  PackedRows<S> pk(q, in[0], in[1], q.has_biases() ? &in[2] : nullptr);
  const int64_t n = pk.cols, rows = pk.rows;
  O* dst = ptr<O>(out);
  kernels::Cast<O> to_o;
  for_row_blocks(rows, n, [&](int64_t r0, int64_t r1) {
    std::vector<acc_t<S>> buf(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      pk.row(r, buf.data());
      for (int64_t i = 0; i < n; ++i) dst[r * n + i] = to_o(buf[i]);
    }
  });
}

}  // namespace

void eval(const Quantize& p, const Arrays& in, Arrays& out) {
  if (in[0].size() == 0) return;
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    quantize_rows<typename decltype(tag)::type>(p, in[0], out);
  });
}

void eval(const Dequantize& p, const Arrays& in, Arrays& out) {
  if (out[0].size() == 0) return;
  const DType st = p.spec().has_biases() ? in[1].dtype() : float32;
  dispatch_floating(st, [&](auto s) {
    dispatch_floating(p.dtype(), [&](auto o) {
      dequantize_rows<typename decltype(s)::type, typename decltype(o)::type>(p, in, out[0]);
    });
  });
}

}  // namespace nuvec::cpu
