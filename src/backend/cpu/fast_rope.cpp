// RoPE on the CPU: the composite's arithmetic step for step (positions,
// frequencies, cos and sin through the same functors, products in float32
// and one rounding), with the cos/sin table made once per position.
#include <cmath>

#include "backend/cpu/rows.h"
#include "backend/cpu/scratch.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/unary.h"

namespace nuvec::cpu {

namespace {

template <class T>
void rope_rows(const RoPE& p, const Array& x, const Array& offset, const Array* freqs, Array& out) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  if (out.size() == 0) return;
  Rows rows(x);
  const int64_t d = rows.length();
  const int dims = p.dims(), half = dims / 2;
  const int64_t batch = x.shape(0), t_len = x.shape(x.ndim() - 2);
  const int64_t per_item = rows.count() / batch;  // rows of one batch item
  // Offsets: one for all items (0-d) or one per item.
  const int64_t n_off = offset.ndim() == 0 ? 1 : batch;
  Scratch<int32_t> offs(n_off);
  {
    Rows orows(offset);
    load_row<int32_t, int32_t>(offset, orows, 0, offs.data());
  }
  // Inverse frequencies, as the composite: 1 / freqs or
  // exp(-i * (log(base) / half)).
  Scratch<float> inv(half);
  if (freqs) {
    Scratch<float> f(half);
    Rows frows(*freqs);
    load_row<float, float>(*freqs, frows, 0, f.data());
    for (int i = 0; i < half; ++i) inv[i] = kernels::Reciprocal{}(f[i]);
  } else {
    const float coef = std::log(p.base()) / float(half);
    for (int i = 0; i < half; ++i) inv[i] = kernels::Exp{}(kernels::Multiply{}(float(-i), coef));
  }
  // cos and sin per (offset, position, frequency).
  Scratch<float> cs(n_off * t_len * half * 2);
  parallel_for(n_off * t_len, 64, [&](long long a, long long b) {
    for (long long k = a; k < b; ++k) {
      const float pos = kernels::Multiply{}(
          kernels::Add{}(float(k % t_len), float(offs[k / t_len])), p.scale());
      float* c = cs.data() + k * half * 2;
      for (int i = 0; i < half; ++i) {
        float th = kernels::Multiply{}(pos, inv[i]);
        float sn = kernels::Sin{}(th);
        c[2 * i] = kernels::Cos{}(th);
        c[2 * i + 1] = p.forward() ? sn : kernels::Negative{}(sn);
      }
    }
  });
  T* dst = ptr<T>(out);
  const bool trad = p.traditional();
  for_row_blocks(rows.count(), d, [&](int64_t r0, int64_t r1) {
    Scratch<T> xr(d);
    kernels::Cast<T> to_t;
    kernels::Cast<A> to_a;
    for (int64_t r = r0; r < r1; ++r) {
      load_row<T, T>(x, rows, r, xr.data());
      const int64_t item = r / per_item, t = r % t_len;
      const float* c = cs.data() + ((n_off == 1 ? 0 : item) * t_len + t) * half * 2;
      T* o = dst + r * d;
      for (int i = 0; i < half; ++i) {
        const int64_t i1 = trad ? 2 * i : i, i2 = trad ? 2 * i + 1 : i + half;
        A x1 = to_a(xr[i1]), x2 = to_a(xr[i2]);
        A co = A(c[2 * i]), sn = A(c[2 * i + 1]);
        o[i1] = to_t(kernels::Subtract{}(kernels::Multiply{}(x1, co), kernels::Multiply{}(x2, sn)));
        o[i2] = to_t(kernels::Add{}(kernels::Multiply{}(x1, sn), kernels::Multiply{}(x2, co)));
      }
      for (int64_t j = dims; j < d; ++j) o[j] = xr[j];
    }
  });
}

}  // namespace

void eval(const RoPE& p, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    rope_rows<typename decltype(tag)::type>(p, in[0], in[1], p.has_freqs() ? &in[2] : nullptr,
                                            out[0]);
  });
}

}  // namespace nuvec::cpu
