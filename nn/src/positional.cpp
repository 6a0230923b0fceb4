// RoPE, SinusoidalPositionalEncoding and ALiBi, MLX's formulas.
#include "nuvec/nn/positional.h"

#include <cmath>
#include <vector>

namespace nuvec::nn {

RoPE::RoPE(int dims_, bool traditional_, float base_, float scale_)
    : dims(dims_), traditional(traditional_), base(base_), scale(scale_) {
  if (dims <= 0 || dims % 2 != 0)
    Error(ErrorKind::invalid_argument, "RoPE: dims must be positive and even, got " + std::to_string(dims)).raise();
}

Array RoPE::operator()(const Array& x, int offset) const {
  if (x.ndim() < 2 || x.shape(-1) < dims)
    return detail::layer_error(*this, ErrorKind::shape_mismatch,
                               "expected at least " + std::to_string(dims) + " features in the last dimension");
  return fast::rope(x, dims, traditional, base, scale, offset);
}

SinusoidalPositionalEncoding::SinusoidalPositionalEncoding(int dims, double min_freq, double max_freq,
                                                           std::optional<double> scale_, bool cos_first_,
                                                           bool full_turns)
    : cos_first(cos_first_) {
  if (dims <= 0 || dims % 2 != 0)
    Error(ErrorKind::invalid_argument,
          "SinusoidalPositionalEncoding: dims must be positive and even, got " + std::to_string(dims))
        .raise();
  Array one_zero = dims == 2 ? array({1.0f}) : 1 - ops::arange(0, dims / 2) / (dims / 2 - 1);
  double lo = std::log(min_freq), hi = std::log(max_freq);
  sigmas = ops::exp(one_zero * (hi - lo) + lo);
  if (full_turns) sigmas = sigmas * (2 * M_PI);
  scale = scale_ ? *scale_ : std::pow(2.0 / dims, 0.5);
}

Array SinusoidalPositionalEncoding::operator()(const Array& x) const {
  Array y = ops::expand_dims(x, -1) * sigmas;
  Array c = ops::cos(y), s = ops::sin(y);
  y = cos_first ? ops::concatenate({c, s}, -1) : ops::concatenate({s, c}, -1);
  if (scale != 1) y = y * scale;
  return y;
}

Array ALiBi::create_alibi_slope(int num_heads, DType dtype) {
  std::function<std::vector<double>(int)> slopes = [&](int n) {
    double l2 = std::log2(n);
    std::vector<double> out;
    if (l2 == std::floor(l2)) {
      double start = std::pow(2.0, -std::pow(2.0, -(l2 - 3)));
      for (int i = 0; i < n; ++i) out.push_back(start * std::pow(start, i));
      return out;
    }
    int p = 1 << static_cast<int>(std::floor(l2));
    out = slopes(p);
    std::vector<double> more = slopes(2 * p);
    for (size_t i = 0; i < more.size() && out.size() < size_t(n); i += 2) out.push_back(more[i]);
    return out;
  };
  std::vector<double> s = slopes(num_heads);
  Array a = array(s.data(), {num_heads}).astype(dtype);
  return a.reshape({num_heads, 1, 1});
}

Array ALiBi::create_alibi_matrix(int q_len, int k_len, int num_heads, int offset, DType dtype) {
  Array x1 = ops::arange(offset, q_len), x2 = ops::arange(0, k_len);
  Array distance = -ops::abs(ops::expand_dims(x1, 1) - ops::expand_dims(x2, 0)).reshape({1, 1, q_len - offset, k_len});
  return (distance * create_alibi_slope(num_heads, dtype)).astype(dtype);
}

Array ALiBi::operator()(const Array& scores, int offset, const std::optional<Array>& mask) const {
  if (scores.ndim() != 4)
    return detail::layer_error(*this, ErrorKind::invalid_shape, "expected attention scores [B, H, Lq, Lk]");
  Array m = create_alibi_matrix(scores.shape(-2) + offset, scores.shape(-1), scores.shape(1), offset, scores.dtype());
  if (mask) m = m + *mask;
  return scores + m;
}

}  // namespace nuvec::nn
