// mlx.nn.init: the same draws in the same order, so a seed gives MLX's bits.
#include "nuvec/nn/init.h"

#include <cmath>
#include <utility>

#include "nuvec/core/graph.h"

namespace nuvec::nn::init {
namespace {

Array failed(const char* op, ErrorKind kind, const std::string& message) {
  return make_failed(Error(kind, std::string("[") + op + "] " + message, op));
}

/// {fan_in, fan_out} as MLX's _calculate_fan_in_fan_out; nullopt below 2-D.
std::optional<std::pair<double, double>> fans(const Array& a) {
  if (a.ndim() < 2) return std::nullopt;
  double fan_in = a.shape(-1), fan_out = a.shape(0);
  if (a.ndim() > 2) {
    double field = 1;
    for (int i = 1; i < a.ndim() - 1; ++i) field *= a.shape(i);
    fan_in *= field;
    fan_out *= field;
  }
  return std::make_pair(fan_in, fan_out);
}

Array needs_2d(const char* op, const Array& a) {
  return failed(op, ErrorKind::invalid_shape,
                "requires an array of at least 2 dimensions, got " +
                    std::to_string(a.ndim()));
}

/// A Python float argument as MLX's binding makes it: float32, then dtype.
Array scalar(double v, DType dtype) {
  return array(static_cast<float>(v)).astype(dtype);
}

Array normal_scaled(const Shape& shape, DType dtype, double std) {
  return random::normal(shape, dtype, std::nullopt, scalar(std, dtype),
                        std::nullopt);
}

bool fan_in_mode(const std::string& mode, const char* op) {
  if (mode != "fan_in" && mode != "fan_out")
    Error(ErrorKind::invalid_argument,
          std::string(op) + ": invalid mode " + mode +
              "; valid modes are fan_in and fan_out")
        .raise();
  return mode == "fan_in";
}

}  // namespace

Initializer constant(double value, DType dtype) {
  return [value, dtype](const Array& a) {
    return ops::full(a.shape(), array(static_cast<float>(value)), dtype);
  };
}

Initializer normal(double mean, double std, DType dtype) {
  return [mean, std, dtype](const Array& a) {
    return random::normal(a.shape(), dtype, scalar(mean, dtype),
                          scalar(std, dtype), std::nullopt);
  };
}

Initializer uniform(double low, double high, DType dtype) {
  return [low, high, dtype](const Array& a) {
    return random::uniform(low, high, a.shape(), dtype);
  };
}

Initializer identity(DType dtype) {
  return [dtype](const Array& a) {
    if (a.ndim() != 2 || a.shape(0) != a.shape(1))
      return failed("identity", ErrorKind::invalid_shape,
                    "the array must be a square matrix");
    return ops::eye(a.shape(0), dtype);
  };
}

Initializer glorot_normal(DType dtype, double gain) {
  return [dtype, gain](const Array& a) {
    auto f = fans(a);
    if (!f) return needs_2d("glorot_normal", a);
    return normal_scaled(a.shape(), dtype,
                         gain * std::sqrt(2.0 / (f->first + f->second)));
  };
}

Initializer glorot_uniform(DType dtype, double gain) {
  return [dtype, gain](const Array& a) {
    auto f = fans(a);
    if (!f) return needs_2d("glorot_uniform", a);
    double limit = gain * std::sqrt(6.0 / (f->first + f->second));
    return random::uniform(-limit, limit, a.shape(), dtype);
  };
}

Initializer he_normal(DType dtype, const std::string& mode, double gain) {
  bool use_in = fan_in_mode(mode, "he_normal");
  return [dtype, gain, use_in](const Array& a) {
    auto f = fans(a);
    if (!f) return needs_2d("he_normal", a);
    return normal_scaled(a.shape(), dtype,
                         gain / std::sqrt(use_in ? f->first : f->second));
  };
}

Initializer he_uniform(DType dtype, const std::string& mode, double gain) {
  bool use_in = fan_in_mode(mode, "he_uniform");
  return [dtype, gain, use_in](const Array& a) {
    auto f = fans(a);
    if (!f) return needs_2d("he_uniform", a);
    double limit = gain * std::sqrt(3.0 / (use_in ? f->first : f->second));
    return random::uniform(-limit, limit, a.shape(), dtype);
  };
}

Initializer sparse(double sparsity, double mean, double std, DType dtype) {
  return [=](const Array& a) {
    if (a.ndim() != 2)
      return failed("sparse", ErrorKind::invalid_shape,
                    "only 2-D arrays are supported");
    int cols = a.shape(1);
    int zeros = static_cast<int>(std::ceil(sparsity * cols));
    Array order = ops::argsort(random::uniform(a.shape()), 1);
    Array out = random::normal(a.shape(), dtype, scalar(mean, dtype),
                               scalar(std, dtype), std::nullopt);
    zeros = std::max(0, std::min(zeros, cols));
    if (zeros == 0) return out;
    return ops::put_along_axis(
        out, order.i(IndexSlice{}, slice(std::nullopt, zeros)), 0, 1);
  };
}

Initializer orthogonal(double gain, DType dtype) {
  return [gain, dtype](const Array& a) {
    if (a.ndim() != 2)
      return failed("orthogonal", ErrorKind::invalid_shape,
                    "requires a 2-D array");
    int rows = a.shape(0), cols = a.shape(1);
    int n = std::max(rows, cols);
    auto [q, r] = linalg::qr(random::normal({n, n}), Device(Device::cpu));
    Array d = ops::diag(r);
    Array out = (q * ops::sign(d))
                    .i(slice(std::nullopt, rows), slice(std::nullopt, cols));
    return (out * gain).astype(dtype);
  };
}

}  // namespace nuvec::nn::init
