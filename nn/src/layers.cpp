// Identity, Linear, Bilinear, Embedding, LayerNorm, RMSNorm and Dropout.
#include "nuvec/nn/layers.h"

#include <cmath>
#include <string>

namespace nuvec::nn {
namespace {

std::string dims_text(const Array& x) {
  std::string s = "(";
  for (int i = 0; i < x.ndim(); ++i) s += (i ? ", " : "") + std::to_string(x.shape(i));
  return s + (x.ndim() == 1 ? ",)" : ")");
}

/// A failed array when x is not floating or its last axis is not `dims`;
/// nullopt when x fits.
std::optional<Array> check_features(const ModuleBase& m, const Array& x, int64_t dims,
                                    const char* what = "last dimension") {
  if (!is_floating(x.dtype()))
    return detail::layer_error(m, ErrorKind::unsupported_dtype,
                               "expected a floating input, got " + std::string(dtype_name(x.dtype())));
  if (x.ndim() == 0 || x.shape(-1) != dims)
    return detail::layer_error(m, ErrorKind::shape_mismatch,
                               "expected " + std::string(what) + " " + std::to_string(dims) + ", got " +
                                   (x.ndim() == 0 ? std::string("a scalar") : std::to_string(x.shape(-1))));
  return std::nullopt;
}

void check_probability(double p, const char* layer) {
  if (!(p >= 0 && p < 1))
    Error(ErrorKind::invalid_argument,
          std::string(layer) + ": the dropout probability " + std::to_string(p) + " is not in [0, 1)")
        .raise();
}

void check_eps(float eps, const char* layer) {
  if (!(eps > 0))
    Error(ErrorKind::invalid_argument, std::string(layer) + ": eps must be positive, got " +
                                           std::to_string(eps))
        .raise();
}

void check_positive(int n, const char* what, const char* layer) {
  if (n <= 0)
    Error(ErrorKind::invalid_argument,
          std::string(layer) + ": " + what + " must be positive, got " + std::to_string(n))
        .raise();
}

Array channel_dropout(const ModuleBase& m, const Array& x, double p, int lo, int hi, int spatial) {
  if (x.ndim() < lo || x.ndim() > hi)
    return detail::layer_error(m, ErrorKind::invalid_shape,
                               "expected an input with " + std::to_string(lo) + " or " + std::to_string(hi) +
                                   " dimensions, got " + dims_text(x));
  if (p == 0 || !m.training()) return x;
  double keep = 1 - p;
  Shape mask_shape = x.shape();
  for (int i = 2; i <= spatial + 1; ++i) mask_shape[mask_shape.size() - i] = 1;
  Array mask = random::bernoulli(keep, mask_shape);
  return (mask * x) * (1 / keep);
}

}  // namespace

Linear::Linear(int input_dims, int output_dims, bool has_bias) {
  check_positive(input_dims, "input_dims", "Linear");
  check_positive(output_dims, "output_dims", "Linear");
  double scale = std::sqrt(1.0 / input_dims);
  weight = random::uniform(-scale, scale, {output_dims, input_dims});
  if (has_bias) bias = Param(random::uniform(-scale, scale, {output_dims}));
}

int Linear::input_dims() const {
  int64_t cols = weight.value.shape(1);  // packed words when quantized: 32 / bits values each
  return static_cast<int>(quantized() ? cols * 32 / quantization.bits : cols);
}

Array Linear::operator()(const Array& x) const {
  if (auto bad = check_features(*this, x, input_dims())) return *bad;
  if (quantized()) {
    std::optional<Array> b;
    if (biases) b = biases->value;
    Array y = ops::quantized_matmul(x, weight.value, scales->value, b, true, quantization.group_size,
                                    quantization.bits, quantization.mode);
    return bias ? y + bias->value : y;
  }
  if (bias) return ops::addmm(bias->value, x, weight.value.t());
  return ops::matmul(x, weight.value.t());
}

Bilinear::Bilinear(int input1_dims, int input2_dims, int output_dims, bool has_bias) {
  check_positive(input1_dims, "input1_dims", "Bilinear");
  check_positive(input2_dims, "input2_dims", "Bilinear");
  check_positive(output_dims, "output_dims", "Bilinear");
  double scale = std::sqrt(1.0 / input1_dims);
  weight = random::uniform(-scale, scale, {output_dims, input2_dims, input1_dims});
  if (has_bias) bias = Param(random::uniform(-scale, scale, {output_dims}));
}

Array Bilinear::operator()(const Array& x1, const Array& x2) const {
  const Array& w = weight.value;
  int out = w.shape(0), in2 = w.shape(1), in1 = w.shape(2);
  if (auto bad = check_features(*this, x1, in1, "last dimension of x1")) return *bad;
  if (auto bad = check_features(*this, x2, in2, "last dimension of x2")) return *bad;
  // MLX's order: (x1 W^T) reshaped per output, then contracted with x2.
  Shape batch(x1.shape().begin(), x1.shape().end() - 1);
  Array a = x1.reshape({-1, in1});
  Array b = x2.reshape({-1, 1, in2});
  Array wr = w.reshape({out * in2, in1});
  Array y = ops::matmul(a, wr.t()).reshape({-1, out, in2}).swapaxes(-2, -1);
  y = ops::matmul(b, y).squeeze(1);
  Shape out_shape = batch;
  out_shape.push_back(out);
  y = y.reshape(out_shape);
  if (bias) y = y + bias->value;
  return y;
}

Embedding::Embedding(int num_embeddings, int dims) {
  check_positive(num_embeddings, "num_embeddings", "Embedding");
  check_positive(dims, "dims", "Embedding");
  float scale = static_cast<float>(std::sqrt(1.0 / dims));
  weight = random::normal({num_embeddings, dims}, float32, 0.0f, scale);
}

int Embedding::dims() const {
  int64_t cols = weight.value.shape(1);
  return static_cast<int>(quantized() ? cols * 32 / quantization.bits : cols);
}

Array Embedding::operator()(const Array& x) const {
  if (!is_integer(x.dtype()))
    return detail::layer_error(*this, ErrorKind::unsupported_dtype,
                               "expected integer indices, got " + std::string(dtype_name(x.dtype())));
  if (quantized()) {
    std::optional<Array> b;
    if (biases) b = ops::take(biases->value, x, 0);
    return ops::dequantize(ops::take(weight.value, x, 0), ops::take(scales->value, x, 0), b,
                           quantization.group_size, quantization.bits, quantization.mode);
  }
  return ops::take(weight.value, x, 0);
}

Array Embedding::as_linear(const Array& x) const {
  if (auto bad = check_features(*this, x, dims())) return *bad;
  if (quantized()) {
    std::optional<Array> b;
    if (biases) b = biases->value;
    return ops::quantized_matmul(x, weight.value, scales->value, b, true, quantization.group_size,
                                 quantization.bits, quantization.mode);
  }
  return ops::matmul(x, weight.value.t());
}

LayerNorm::LayerNorm(int dims_, float eps_, bool affine, bool has_bias) : dims(dims_), eps(eps_) {
  check_eps(eps, "LayerNorm");
  check_positive(dims, "dims", "LayerNorm");
  if (affine) {
    weight = Param(ops::ones({dims}));
    if (has_bias) bias = Param(ops::zeros({dims}));
  }
}

Array LayerNorm::operator()(const Array& x) const {
  if (auto bad = check_features(*this, x, dims)) return *bad;
  std::optional<Array> w, b;
  if (weight) w = weight->value;
  if (bias) b = bias->value;
  return fast::layer_norm(x, w, b, eps);
}

RMSNorm::RMSNorm(int dims, float eps_) : eps(eps_) {
  check_eps(eps, "RMSNorm");
  check_positive(dims, "dims", "RMSNorm");
  weight = Param(ops::ones({dims}));
}

Array RMSNorm::operator()(const Array& x) const {
  if (auto bad = check_features(*this, x, weight.value.shape(0))) return *bad;
  return fast::rms_norm(x, weight.value, eps);
}

Dropout::Dropout(double p_) : p(p_) { check_probability(p, "Dropout"); }

Array Dropout::operator()(const Array& x) const {
  if (p == 0 || !training()) return x;
  double keep = 1 - p;
  Array mask = random::bernoulli(keep, x.shape());
  return (mask * x) * (1 / keep);
}

Dropout2d::Dropout2d(double p_) : p(p_) { check_probability(p, "Dropout2d"); }
Array Dropout2d::operator()(const Array& x) const { return channel_dropout(*this, x, p, 3, 4, 2); }

Dropout3d::Dropout3d(double p_) : p(p_) { check_probability(p, "Dropout3d"); }
Array Dropout3d::operator()(const Array& x) const { return channel_dropout(*this, x, p, 4, 5, 3); }

}  // namespace nuvec::nn
