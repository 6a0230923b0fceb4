// The optimizer base, SGD, Adam and AdamW: MLX's formulas in MLX's order,
// hyperparameters as doubles (Python floats, weak scalars) so the float32
// results are MLX's bits.
#include "nuvec/nn/optimizer.h"

#include <string>

namespace nuvec::optim {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) Error(ErrorKind::invalid_argument, message).raise();
}

}  // namespace

Optimizer::Optimizer(const LearningRate& lr)
    : step(ops::zeros({}, uint64)), learning_rate(ops::zeros({}, float32)) {
  if (auto* s = std::get_if<Schedule>(&lr.value)) {
    require(static_cast<bool>(*s), "optimizer: the learning-rate schedule is empty");
    schedule = *s;
    learning_rate = Buffer(schedule(step.value).astype(float32));
  } else {
    set_learning_rate(std::get<double>(lr.value));
  }
}

void Optimizer::set_learning_rate(double lr) {
  schedule = nullptr;
  learning_rate = Buffer(array(static_cast<float>(lr)));
}

Array Optimizer::lr_as(const Array& gradient) const { return learning_rate.value.astype(gradient.dtype()); }

void Optimizer::begin_update(const nn::NamedArrays& trainable) {
  for (auto& [path, p] : trainable)
    if (!state.count(path)) state[path] = init_single(p);
  if (schedule) learning_rate = Buffer(schedule(step.value).astype(float32));
  step = Buffer(step.value + 1);
}

Array Optimizer::apply(const std::string& path, const Array& parameter,
                       const std::map<std::string, Array>& g) {
  auto it = g.find(path);
  if (it == g.end())
    Error(ErrorKind::invalid_argument, "optimizer update: no gradient for '" + path + "'").raise();
  if (it->second.shape() != parameter.shape())
    Error(ErrorKind::shape_mismatch, "optimizer update: the gradient of '" + path +
                                         "' does not have the parameter's shape")
        .raise();
  return apply_single(it->second, parameter, state.at(path));
}

SGD::SGD(const LearningRate& lr, double momentum_, double weight_decay_, double dampening_, bool nesterov_)
    : Optimizer(lr), momentum(momentum_), weight_decay(weight_decay_), dampening(dampening_),
      nesterov(nesterov_) {
  require(!nesterov || (momentum > 0 && dampening == 0),
          "SGD: Nesterov momentum requires a momentum and zero dampening");
}

Slots SGD::init_single(const Array& p) const { return {{"v", ops::zeros_like(p)}}; }

Array SGD::apply_single(const Array& gradient, const Array& parameter, Slots& slots) const {
  Array g = gradient;
  if (weight_decay != 0) g = g + weight_decay * parameter;
  if (momentum <= 0) return parameter - lr_as(g) * g;
  Array v = momentum * slots.at("v");
  v = dampening > 0 ? v + (1 - dampening) * g : v + g;
  Array update = nesterov ? g + momentum * v : v;
  slots["v"] = v;
  return parameter - lr_as(g) * update;
}

Adam::Adam(const LearningRate& lr, std::vector<double> betas_, double eps_, bool bias_correction_)
    : Optimizer(lr), betas(std::move(betas_)), eps(eps_), bias_correction(bias_correction_) {
  require(betas.size() == 2, "Adam: betas must hold two values");
  for (size_t i = 0; i < 2; ++i)
    require(betas[i] >= 0 && betas[i] < 1,
            "Adam: beta" + std::to_string(i + 1) + " should be in [0, 1), got " + std::to_string(betas[i]));
  require(eps >= 0, "Adam: epsilon should be >= 0, got " + std::to_string(eps));
}

Slots Adam::init_single(const Array& p) const {
  return {{"m", ops::zeros_like(p)}, {"v", ops::zeros_like(p)}};
}

Array Adam::apply_single(const Array& gradient, const Array& parameter, Slots& slots) const {
  Array lr = lr_as(gradient);
  double b1 = betas[0], b2 = betas[1];
  Array m = b1 * slots.at("m") + (1 - b1) * gradient;
  Array v = b2 * slots.at("v") + (1 - b2) * gradient.square();
  slots["m"] = m;
  slots["v"] = v;
  if (bias_correction) {
    Array c1 = (lr / (1 - ops::power(b1, step.value))).astype(gradient.dtype());
    Array c2 = ops::rsqrt(1 - ops::power(b2, step.value)).astype(gradient.dtype());
    return parameter - (c1 * m) / (v.sqrt() * c2 + eps);
  }
  return parameter - lr * m / (v.sqrt() + eps);
}

AdamW::AdamW(const LearningRate& lr, std::vector<double> betas_, double eps_, double weight_decay_,
             bool bias_correction_)
    : Adam(lr, std::move(betas_), eps_, bias_correction_), weight_decay(weight_decay_) {}

Array AdamW::apply_single(const Array& gradient, const Array& parameter, Slots& slots) const {
  Array lr = lr_as(gradient);
  return Adam::apply_single(gradient, parameter * (1 - lr * weight_decay), slots);
}

}  // namespace nuvec::optim
