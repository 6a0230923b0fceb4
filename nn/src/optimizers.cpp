// RMSprop, Adagrad, AdaDelta, Adamax, Lion, Adafactor and Muon: MLX's
// formulas in MLX's order, hyperparameters as doubles (Python floats, weak
// scalars: each product with an array rounds the value to the array's
// dtype first, as MLX does), so float32 results carry MLX's bits.
#include "nuvec/nn/optimizers.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "nuvec/linalg.h"

namespace nuvec::optim {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) Error(ErrorKind::invalid_argument, message).raise();
}

// Python's repr of a float is what MLX's messages show; %g is close enough.
std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void require_betas(const char* who, const std::vector<double>& betas) {
  require(betas.size() == 2, std::string(who) + ": betas must hold two values");
  for (size_t i = 0; i < 2; ++i)
    require(betas[i] >= 0 && betas[i] < 1,
            std::string(who) + ": beta" + std::to_string(i + 1) +
                " should be in [0, 1), got " + num(betas[i]));
}

Array rms(const Array& x) { return ops::sqrt(ops::mean(ops::square(x))); }

}  // namespace

// ---------------------------------------------------------------- RMSprop

RMSprop::RMSprop(const LearningRate& lr, double alpha_, double eps_)
    : Optimizer(lr), alpha(alpha_), eps(eps_) {
  require(alpha >= 0, "RMSprop: alpha should be >= 0, got " + num(alpha));
  require(eps > 0, "RMSprop: epsilon should be > 0, got " + num(eps));
}

Slots RMSprop::init_single(const Array& p) const {
  return {{"v", ops::zeros_like(p)}};
}

Array RMSprop::apply_single(const Array& gradient, const Array& parameter,
                            Slots& slots) const {
  Array lr = lr_as(gradient);
  Array v = alpha * slots.at("v") + (1 - alpha) * ops::square(gradient);
  slots["v"] = v;
  return parameter - lr * gradient / (ops::sqrt(v) + eps);
}

// ---------------------------------------------------------------- Adagrad

Adagrad::Adagrad(const LearningRate& lr, double eps_)
    : Optimizer(lr), eps(eps_) {
  require(eps > 0, "Adagrad: epsilon should be > 0, got " + num(eps));
}

Slots Adagrad::init_single(const Array& p) const {
  return {{"v", ops::zeros_like(p)}};
}

Array Adagrad::apply_single(const Array& gradient, const Array& parameter,
                            Slots& slots) const {
  Array lr = lr_as(gradient);
  Array v = slots.at("v") + ops::square(gradient);
  slots["v"] = v;
  return parameter - lr * gradient / (ops::sqrt(v) + eps);
}

// ---------------------------------------------------------------- AdaDelta

AdaDelta::AdaDelta(const LearningRate& lr, double rho_, double eps_)
    : Optimizer(lr), rho(rho_), eps(eps_) {
  require(rho >= 0, "AdaDelta: rho should be >= 0, got " + num(rho));
  require(eps > 0, "AdaDelta: epsilon should be > 0, got " + num(eps));
}

Slots AdaDelta::init_single(const Array& p) const {
  return {{"u", ops::zeros_like(p)}, {"v", ops::zeros_like(p)}};
}

Array AdaDelta::apply_single(const Array& gradient, const Array& parameter,
                             Slots& slots) const {
  Array lr = lr_as(gradient);
  Array u = slots.at("u");
  Array v = rho * slots.at("v") + (1 - rho) * ops::square(gradient);
  Array d = ops::sqrt(u + eps) / ops::sqrt(v + eps) * gradient;
  u = rho * u + (1 - rho) * ops::square(d);
  slots["v"] = v;
  slots["u"] = u;
  return parameter - lr * d;
}

// ---------------------------------------------------------------- Adamax

Adamax::Adamax(const LearningRate& lr, std::vector<double> betas_, double eps_)
    : Adam(lr, std::move(betas_), eps_) {}

Array Adamax::apply_single(const Array& gradient, const Array& parameter,
                           Slots& slots) const {
  Array lr = lr_as(gradient);
  double b1 = betas[0], b2 = betas[1];
  Array m = b1 * slots.at("m") + (1 - b1) * gradient;
  Array v = ops::maximum(b2 * slots.at("v"), ops::abs(gradient));
  slots["m"] = m;
  slots["v"] = v;
  return parameter - lr * m / (v + eps);
}

// ---------------------------------------------------------------- Lion

Lion::Lion(const LearningRate& lr, std::vector<double> betas_,
           double weight_decay_)
    : Optimizer(lr), betas(std::move(betas_)), weight_decay(weight_decay_) {
  require_betas("Lion", betas);
}

Slots Lion::init_single(const Array& p) const {
  return {{"m", ops::zeros_like(p)}};
}

Array Lion::apply_single(const Array& gradient, const Array& parameter,
                         Slots& slots) const {
  Array lr = lr_as(gradient);
  double b1 = betas[0], b2 = betas[1];
  Array m = slots.at("m");
  Array c = b1 * m + (1 - b1) * gradient;
  slots["m"] = b2 * m + (1 - b2) * gradient;
  Array p = parameter;
  if (weight_decay > 0) p = (1 - lr * weight_decay) * p;
  return p - lr * ops::sign(c);
}

// ---------------------------------------------------------------- Adafactor

Adafactor::Adafactor(const std::optional<LearningRate>& lr,
                     std::vector<double> eps_, double clip_threshold_,
                     double decay_rate_, std::optional<double> beta_1_,
                     double weight_decay_, bool scale_parameter_,
                     bool relative_step_, bool warmup_init_)
    : Optimizer(lr ? *lr : LearningRate(0.0)),
      eps(std::move(eps_)),
      clip_threshold(clip_threshold_),
      decay_rate(decay_rate_),
      beta_1(beta_1_),
      weight_decay(weight_decay_),
      scale_parameter(scale_parameter_),
      relative_step(relative_step_),
      warmup_init(warmup_init_) {
  require(eps.size() == 2, "Adafactor: eps must hold two values");
  require(relative_step || lr.has_value(),
          "Adafactor: relative_step false needs a learning_rate");
}

Slots Adafactor::init_single(const Array& p) const {
  Slots s;
  if (p.ndim() >= 2) {
    Shape shape = p.shape();
    Shape row(shape.begin(), shape.end() - 1);
    Shape col(shape.begin(), shape.end() - 2);
    col.push_back(shape.back());
    s["exp_avg_sq_row"] = ops::zeros(row, p.dtype());
    s["exp_avg_sq_col"] = ops::zeros(col, p.dtype());
  } else {
    s["exp_avg_sq"] = ops::zeros_like(p);
  }
  if (beta_1) s["exp_avg"] = ops::zeros_like(p);
  return s;
}

Array Adafactor::apply_single(const Array& gradient, const Array& parameter,
                              Slots& slots) const {
  const Array& t = step.value;
  Array parameter_rms = rms(parameter);
  // The step size, MLX's _compute_learning_rate.
  Array relative = relative_step
                       ? (warmup_init ? ops::minimum(1e-6 * t, ops::rsqrt(t))
                                      : ops::minimum(1e-2, ops::rsqrt(t)))
                       : learning_rate.value;
  relative = relative.astype(parameter_rms.dtype());
  Array lr = scale_parameter ? ops::maximum(eps[1], parameter_rms) * relative
                             : 1.0 * relative;
  Array beta_2 = 1.0 - ops::power(t, decay_rate).astype(parameter_rms.dtype());
  Array update = ops::square(gradient) + eps[0];
  if (gradient.ndim() >= 2) {
    Array row = beta_2 * slots.at("exp_avg_sq_row") +
                (1 - beta_2) * ops::mean(update, -1);
    Array col = beta_2 * slots.at("exp_avg_sq_col") +
                (1 - beta_2) * ops::mean(update, -2);
    slots["exp_avg_sq_row"] = row;
    slots["exp_avg_sq_col"] = col;
    Array r_factor = ops::rsqrt(row / ops::mean(row, -1, true));
    Array c_factor = ops::rsqrt(col);
    update =
        ops::expand_dims(r_factor, {-1}) * ops::expand_dims(c_factor, {-2});
    update = update * gradient;
  } else {
    Array v = beta_2 * slots.at("exp_avg_sq") + (1 - beta_2) * update;
    slots["exp_avg_sq"] = v;
    update = ops::rsqrt(v) * gradient;
  }
  update = update / ops::maximum(1.0, rms(update) / clip_threshold);
  update = lr * update;
  if (beta_1) {
    Array m = *beta_1 * slots.at("exp_avg") + (1 - *beta_1) * update;
    slots["exp_avg"] = m;
    update = m;
  }
  Array p = parameter;
  if (weight_decay != 0) p = p + p * (-weight_decay * lr);
  return p - update;
}

// ---------------------------------------------------------------- Muon

namespace {

// The quintic Newton-Schulz iteration of Muon on a 2-D array, with MLX's
// coefficients; wide orientation so that X X^T is the small product.
Array newton_schulz5(Array x, int steps) {
  const double a = 3.4445, b = -4.7750, c = 2.0315;
  bool transposed = x.shape()[0] > x.shape()[1];
  if (transposed) x = x.t();
  x = x / (linalg::norm(x, std::nullopt, true) + 1e-7);
  for (int i = 0; i < steps; ++i) {
    Array g = ops::matmul(x, x.t());
    Array h = ops::addmm(b * g, g, g, static_cast<float>(c), 1.0f);
    x = ops::addmm(a * x, h, x, 1.0f, 1.0f);
  }
  return transposed ? x.t() : x;
}

}  // namespace

Muon::Muon(const LearningRate& lr, double momentum_, double weight_decay_,
           bool nesterov_, int ns_steps_)
    : Optimizer(lr),
      momentum(momentum_),
      weight_decay(weight_decay_),
      nesterov(nesterov_),
      ns_steps(ns_steps_) {}

Slots Muon::init_single(const Array& p) const {
  return {{"v", ops::zeros_like(p)}};
}

Array Muon::apply_single(const Array& gradient, const Array& parameter,
                         Slots& slots) const {
  Array g = gradient;
  if (weight_decay != 0) g = g + weight_decay * parameter;
  Array v = momentum * slots.at("v");
  v = v + (1 - momentum) * g;
  slots["v"] = v;
  Array update = nesterov ? g * (1 - momentum) + v * momentum : v;
  Array lr = lr_as(g);
  if (update.ndim() >= 2) {
    Shape shape = update.shape();
    if (update.ndim() > 2) update = ops::reshape(update, {shape[0], -1});
    update = newton_schulz5(update, ns_steps);
    if (shape.size() > 2) update = ops::reshape(update, shape);
    double rows = static_cast<double>(shape[shape.size() - 2]);
    double cols = static_cast<double>(shape.back());
    lr = lr * std::pow(std::max(1.0, rows / cols), 0.5);
  }
  return parameter - lr * update;
}

}  // namespace nuvec::optim
