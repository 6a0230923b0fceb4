// The activations of mlx.nn (docs/nn.md, "Activations"): each as a function
// and as a layer. The functions are MLX's formulas in MLX's order of
// operations with its constants (Python floats: computed in double, then
// weak scalars), so on the CPU they give MLX's bits. They accept any array
// the underlying ops accept (integers too, with the ops' promotions), and
// broadcast where an op does (prelu's alpha).
//
// Call them qualified (`nn::relu(x)`): `nuvec::sigmoid`, `nuvec::tanh` and
// `nuvec::softmax` are core ops of the same name.
#pragma once

#include <string>

#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// 1 / (1 + exp(-x)) (ops::sigmoid).
Array sigmoid(const Array& x);
/// max(x, 0).
Array relu(const Array& x);
/// max(x, 0)^2 (MLX's relu2, "ReLU squared").
Array relu2(const Array& x);
/// min(max(x, 0), 6); integer inputs give float32 (6.0 is a float).
Array relu6(const Array& x);
/// max(negative_slope * x, x).
Array leaky_relu(const Array& x, double negative_slope = 0.01);
/// (x - max) - logsumexp(x - max) over `axis` (the max without gradient).
Array log_softmax(const Array& x, int axis = -1);
/// x where x > 0, else alpha * (exp(x) - 1).
Array elu(const Array& x, double alpha = 1.0);
/// exp(x) / sum(exp(x)) over `axis` (ops::softmax, not precise).
Array softmax(const Array& x, int axis = -1);
/// log(1 + exp(x)) as logaddexp(x, 0).
Array softplus(const Array& x);
/// x / (1 + |x|).
Array softsign(const Array& x);
/// x - sign(x) lambd where |x| > lambd, else 0.
Array softshrink(const Array& x, double lambd = 0.5);
/// max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1).
Array celu(const Array& x, double alpha = 1.0);
/// x * sigmoid(x) (Swish).
Array silu(const Array& x);
/// -softplus(-x).
Array log_sigmoid(const Array& x);
/// x * (1 + erf(x / sqrt(2))) / 2: the exact GELU.
Array gelu(const Array& x);
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): the tanh
/// approximation.
Array gelu_approx(const Array& x);
/// x * sigmoid(1.702 x).
Array gelu_fast_approx(const Array& x);
/// a * sigmoid(b) where a and b are the two halves of `axis` (whose size
/// must be even: else a failed array).
Array glu(const Array& x, int axis = -1);
/// 1 where x >= threshold, else 0, as int32 (MLX's where of two ints).
Array step(const Array& x, double threshold = 0.0);
/// elu(x, 1.67326) * 1.0507 (MLX's rounded constants).
Array selu(const Array& x);
/// max(0, x) + alpha * min(0, x); alpha broadcasts against x.
Array prelu(const Array& x, const Array& alpha);
/// x * tanh(softplus(x)).
Array mish(const Array& x);
/// x * min(max(x + 3, 0), 6) / 6.
Array hardswish(const Array& x);
/// min(max(x, min_val), max_val).
Array hard_tanh(const Array& x, double min_val = -1.0, double max_val = 1.0);
/// x where |x| > lambd, else 0.
Array hard_shrink(const Array& x, double lambd = 0.5);
/// softmax(-x) over `axis`.
Array softmin(const Array& x, int axis = -1);
/// tanh(x) (ops::tanh).
Array tanh(const Array& x);

// ---- The layers: MLX's classes with their constructor arguments; each call
// is the function above.

#define NUVEC_NN_ACTIVATION(Name, fn)                                     \
  struct Name : Module<Name> {                                            \
    Array operator()(const Array& x) const { return ::nuvec::nn::fn(x); } \
  };                                                                      \
  NUVEC_TREE(Name)

/// sigmoid.
NUVEC_NN_ACTIVATION(Sigmoid, sigmoid)
/// mish.
NUVEC_NN_ACTIVATION(Mish, mish)
/// relu.
NUVEC_NN_ACTIVATION(ReLU, relu)
/// relu2.
NUVEC_NN_ACTIVATION(ReLU2, relu2)
/// relu6.
NUVEC_NN_ACTIVATION(ReLU6, relu6)
/// softmax over the last axis.
NUVEC_NN_ACTIVATION(Softmax, softmax)
/// softplus.
NUVEC_NN_ACTIVATION(Softplus, softplus)
/// softsign.
NUVEC_NN_ACTIVATION(Softsign, softsign)
/// silu.
NUVEC_NN_ACTIVATION(SiLU, silu)
/// log_softmax over the last axis.
NUVEC_NN_ACTIVATION(LogSoftmax, log_softmax)
/// log_sigmoid.
NUVEC_NN_ACTIVATION(LogSigmoid, log_sigmoid)
/// tanh.
NUVEC_NN_ACTIVATION(Tanh, tanh)
/// hardswish.
NUVEC_NN_ACTIVATION(Hardswish, hardswish)
/// selu.
NUVEC_NN_ACTIVATION(SELU, selu)
/// hard_tanh with its default bounds [-1, 1] (MLX's HardTanh has no
/// arguments).
NUVEC_NN_ACTIVATION(HardTanh, hard_tanh)
/// softmin over the last axis.
NUVEC_NN_ACTIVATION(Softmin, softmin)

#undef NUVEC_NN_ACTIVATION

/// glu over `axis`.
struct GLU : Module<GLU> {
  int axis;
  explicit GLU(int axis = -1) : axis(axis) {}
  Array operator()(const Array& x) const { return nn::glu(x, axis); }
};
NUVEC_TREE(GLU, NUVEC_STATIC(axis))

/// leaky_relu with `negative_slope`.
struct LeakyReLU : Module<LeakyReLU> {
  double negative_slope;
  explicit LeakyReLU(double negative_slope = 1e-2)
      : negative_slope(negative_slope) {}
  Array operator()(const Array& x) const {
    return nn::leaky_relu(x, negative_slope);
  }
};
NUVEC_TREE(LeakyReLU, NUVEC_STATIC(negative_slope))

/// elu with `alpha`.
struct ELU : Module<ELU> {
  double alpha;
  explicit ELU(double alpha = 1.0) : alpha(alpha) {}
  Array operator()(const Array& x) const { return nn::elu(x, alpha); }
};
NUVEC_TREE(ELU, NUVEC_STATIC(alpha))

/// softshrink with `lambd`.
struct Softshrink : Module<Softshrink> {
  double lambd;
  explicit Softshrink(double lambd = 0.5) : lambd(lambd) {}
  Array operator()(const Array& x) const { return nn::softshrink(x, lambd); }
};
NUVEC_TREE(Softshrink, NUVEC_STATIC(lambd))

/// celu with `alpha`.
struct CELU : Module<CELU> {
  double alpha;
  explicit CELU(double alpha = 1.0) : alpha(alpha) {}
  Array operator()(const Array& x) const { return nn::celu(x, alpha); }
};
NUVEC_TREE(CELU, NUVEC_STATIC(alpha))

/// prelu with a learned `weight` of num_parameters slopes, each `init`
/// (float32, as MLX's mx.full); the weight broadcasts against the input's
/// last axis.
struct PReLU : Module<PReLU> {
  Param weight;
  /// num_parameters must be positive (else throws nuvec::Error).
  explicit PReLU(int num_parameters = 1, double init = 0.25);
  Array operator()(const Array& x) const { return nn::prelu(x, weight.value); }
};
NUVEC_TREE(PReLU, weight)

/// GELU: approx "none" (gelu), "precise" or its alias "tanh" (gelu_approx),
/// or "fast" (gelu_fast_approx); another value throws nuvec::Error
/// (invalid_argument), as MLX's ValueError.
struct GELU : Module<GELU> {
  std::string approx;
  explicit GELU(std::string approx = "none");
  Array operator()(const Array& x) const;
};
NUVEC_TREE(GELU, NUVEC_STATIC(approx))

/// step with `threshold`.
struct Step : Module<Step> {
  double threshold;
  explicit Step(double threshold = 0.0) : threshold(threshold) {}
  Array operator()(const Array& x) const { return nn::step(x, threshold); }
};
NUVEC_TREE(Step, NUVEC_STATIC(threshold))

/// hard_shrink with `lambd`.
struct HardShrink : Module<HardShrink> {
  double lambd;
  explicit HardShrink(double lambd = 0.5) : lambd(lambd) {}
  Array operator()(const Array& x) const { return nn::hard_shrink(x, lambd); }
};
NUVEC_TREE(HardShrink, NUVEC_STATIC(lambd))

}  // namespace nuvec::nn
