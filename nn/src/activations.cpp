// The activations of mlx.nn, each MLX's formula written with the core's ops
// in MLX's order. Constants that are Python floats in MLX are doubles here
// (weak scalars, rounded to the array's dtype by the op, as MLX's).
#include "nuvec/nn/activations.h"

#include <cmath>
#include <numbers>

#include "nuvec/core/graph.h"

namespace nuvec::nn {

Array sigmoid(const Array& x) { return ops::sigmoid(x); }

Array relu(const Array& x) { return ops::maximum(x, 0); }

Array relu2(const Array& x) { return ops::square(ops::maximum(x, 0)); }

Array relu6(const Array& x) { return ops::minimum(ops::maximum(x, 0), 6.0); }

Array leaky_relu(const Array& x, double negative_slope) {
  return ops::maximum(negative_slope * x, x);
}

Array log_softmax(const Array& x, int axis) {
  // Shifting first keeps the normalizer: adding logsumexp's own max back
  // would round it away for large inputs.
  Array shifted = x - ops::stop_gradient(ops::max(x, axis, true));
  return shifted - ops::logsumexp(shifted, axis, true);
}

Array elu(const Array& x, double alpha) {
  return ops::where(x > 0, x, alpha * (ops::exp(x) - 1));
}

Array softmax(const Array& x, int axis) { return ops::softmax(x, axis, false); }

Array softplus(const Array& x) { return ops::logaddexp(x, 0); }

Array softsign(const Array& x) { return ops::divide(x, 1 + ops::abs(x)); }

Array softshrink(const Array& x, double lambd) {
  return ops::where(ops::abs(x) > lambd, x - ops::sign(x) * lambd, 0);
}

Array celu(const Array& x, double alpha) {
  return ops::maximum(x, 0.0) +
         alpha * (ops::exp(ops::minimum(x, 0.0) / alpha) - 1);
}

Array silu(const Array& x) { return x * ops::sigmoid(x); }

Array log_sigmoid(const Array& x) { return -softplus(-x); }

Array gelu(const Array& x) {
  return x * (1 + ops::erf(x / std::sqrt(2.0))) / 2;
}

Array gelu_approx(const Array& x) {
  const double c = std::sqrt(2 / std::numbers::pi);
  return 0.5 * x * (1 + ops::tanh(c * (x + 0.044715 * ops::power(x, 3))));
}

Array gelu_fast_approx(const Array& x) { return x * ops::sigmoid(1.702 * x); }

Array glu(const Array& x, int axis) {
  if (x.is_failed()) return x;
  int nd = x.ndim();
  if (axis < -nd || axis >= nd)
    return make_failed(Error(ErrorKind::invalid_axis,
                             "axis " + std::to_string(axis) +
                                 " is out of range for an array of " +
                                 std::to_string(nd) + " dimensions",
                             "glu"));
  if (x.shape(axis) % 2 != 0)
    return make_failed(Error(ErrorKind::invalid_shape,
                             "the size of axis " + std::to_string(axis) + " (" +
                                 std::to_string(x.shape(axis)) +
                                 ") must be even",
                             "glu"));
  auto halves = ops::split(x, 2, axis);
  return halves[0] * ops::sigmoid(halves[1]);
}

Array step(const Array& x, double threshold) {
  return ops::where(x >= threshold, 1, 0);
}

Array selu(const Array& x) { return elu(x, 1.67326) * 1.0507; }

Array prelu(const Array& x, const Array& alpha) {
  return ops::maximum(0, x) + alpha * ops::minimum(0, x);
}

Array mish(const Array& x) { return x * ops::tanh(softplus(x)); }

Array hardswish(const Array& x) {
  Array clipped_low = ops::maximum(x + 3, 0);
  return x * ops::minimum(clipped_low, 6) / 6;
}

Array hard_tanh(const Array& x, double min_val, double max_val) {
  return ops::minimum(ops::maximum(x, min_val), max_val);
}

Array hard_shrink(const Array& x, double lambd) {
  return ops::where(ops::abs(x) > lambd, x, 0);
}

Array softmin(const Array& x, int axis) {
  return ops::softmax(-x, axis, false);
}

Array tanh(const Array& x) { return ops::tanh(x); }

PReLU::PReLU(int num_parameters, double init) {
  if (num_parameters <= 0)
    Error(ErrorKind::invalid_argument,
          "PReLU: num_parameters must be positive, got " +
              std::to_string(num_parameters))
        .raise();
  // MLX's mx.full([n], init) with a Python float: float32.
  weight = ops::full({num_parameters}, static_cast<float>(init));
}

GELU::GELU(std::string approx_) : approx(std::move(approx_)) {
  if (approx != "none" && approx != "precise" && approx != "tanh" &&
      approx != "fast")
    Error(ErrorKind::invalid_argument,
          "GELU: the approximation should be one of 'none', 'precise', 'tanh', "
          "'fast' but '" +
              approx + "' was given")
        .raise();
}

Array GELU::operator()(const Array& x) const {
  if (approx == "none") return gelu(x);
  if (approx == "precise" || approx == "tanh") return gelu_approx(x);
  return gelu_fast_approx(x);
}

}  // namespace nuvec::nn
