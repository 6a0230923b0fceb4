// Optimizers in the manner of mlx.optimizers (docs/nn.md). An optimizer is
// a tree: its step count, learning rate and per-parameter state are arrays,
// so a compiled training step over (model, optimizer) traces once.
//
//   optim::AdamW opt(1e-3);
//   opt.init(model);                      // before the first (compiled) step
//   auto [loss, grads] = nn::value_and_grad(model, loss_fn)(x, y);
//   opt.update(model, grads);
#pragma once

#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "nuvec/nn/module.h"

namespace nuvec::optim {

/// A schedule: the learning rate as a function of the step count (a uint64
/// scalar array), MLX's callable learning rates.
using Schedule = std::function<Array(const Array& step)>;

/// A learning rate given as a value or as a schedule.
struct LearningRate {
  std::variant<double, Schedule> value;
  LearningRate(double v) : value(v) {}
  LearningRate(Schedule s) : value(std::move(s)) {}
  template <class F>
    requires std::is_invocable_r_v<Array, F, const Array&>
  LearningRate(F f) : value(Schedule(std::move(f))) {}
};

/// One parameter's state: named slots ("m", "v", ...), MLX's state dicts.
using Slots = std::map<std::string, Array>;

/// What every optimizer has. Derived optimizers give init_single and
/// apply_single and declare themselves trees with NUVEC_OPTIMIZER.
class Optimizer {
 public:
  explicit Optimizer(const LearningRate& lr);
  Optimizer(const Optimizer&) = default;
  Optimizer(Optimizer&&) = default;
  Optimizer& operator=(const Optimizer&) = default;
  Optimizer& operator=(Optimizer&&) = default;
  virtual ~Optimizer() = default;

  /// The step count: a uint64 scalar, 0 before the first update.
  Buffer step;
  /// The learning rate as a float32 scalar (the schedule's value at the
  /// last update, when there is a schedule).
  Buffer learning_rate;
  /// The state of each trainable parameter, by its path in the model.
  std::map<std::string, Slots> state;
  /// The schedule, if the learning rate was given as one.
  Schedule schedule;

  /// Sets a constant learning rate (replacing any schedule).
  void set_learning_rate(double lr);

  /// Creates the state of every trainable parameter of `model` that has
  /// none yet (MLX's init). Call it before the first compiled step, so the
  /// state exists when the step is traced. Also names the model's modules.
  template <class M>
  void init(M& model) {
    nn::name_modules(model);
    for (auto& [path, p] : model.trainable_parameters())
      if (!state.count(path)) state[path] = init_single(p);
  }

  /// One update of `model` with `grads` (a tree of the model's type, as
  /// nn::value_and_grad gives): the schedule is evaluated at the current
  /// step, the step count is incremented, then every trainable parameter is
  /// replaced by apply_single (MLX's apply_gradients order).
  template <class M>
  void update(M& model, const M& grads) {
    std::map<std::string, Array> g;
    for (auto& [path, a] : tree_flatten(grads)) g.emplace(path, a);
    begin_update(model.trainable_parameters());
    struct Apply : nn::Walk {
      Optimizer& o;
      const std::map<std::string, Array>& g;
      Apply(Optimizer& opt, const std::map<std::string, Array>& grads) : o(opt), g(grads) {}
      void param(const std::string& p, Param& x) override {
        if (!x.frozen) x.value = o.apply(p, x.value, g);
      }
      void array(const std::string& p, Array& x) override { x = o.apply(p, x, g); }
    } apply(*this, g);
    nn::walk(model, "", apply);
  }

 protected:
  /// The initial state of a parameter.
  virtual Slots init_single(const Array& parameter) const = 0;
  /// The updated parameter; `slots` is updated in place.
  virtual Array apply_single(const Array& gradient, const Array& parameter, Slots& slots) const = 0;
  /// The learning rate in the gradient's dtype.
  Array lr_as(const Array& gradient) const;

 private:
  void begin_update(const nn::NamedArrays& trainable);
  Array apply(const std::string& path, const Array& parameter, const std::map<std::string, Array>& g);
};

/// Declares an optimizer type a tree: the base's arrays, then the listed
/// hyperparameters (normally NUVEC_STATIC fields: changing one retraces).
#define NUVEC_OPTIMIZER(Type, ...) \
  NUVEC_TREE(Type, step, learning_rate, state, NUVEC_UNCHECKED(schedule) __VA_OPT__(, ) __VA_ARGS__)

/// Stochastic gradient descent with momentum, dampening, Nesterov momentum
/// and weight decay (MLX's SGD; Nesterov needs momentum > 0 and no dampening).
struct SGD : Optimizer {
  double momentum, weight_decay, dampening;
  bool nesterov;
  SGD(const LearningRate& learning_rate, double momentum = 0.0, double weight_decay = 0.0,
      double dampening = 0.0, bool nesterov = false);

 protected:
  Slots init_single(const Array& parameter) const override;
  Array apply_single(const Array& gradient, const Array& parameter, Slots& slots) const override;
};
NUVEC_OPTIMIZER(SGD, NUVEC_STATIC(momentum), NUVEC_STATIC(weight_decay), NUVEC_STATIC(dampening),
                NUVEC_STATIC(nesterov))

/// Adam (MLX's: bias_correction is false by default, unlike PyTorch's).
struct Adam : Optimizer {
  std::vector<double> betas;
  double eps;
  bool bias_correction;
  Adam(const LearningRate& learning_rate, std::vector<double> betas = {0.9, 0.999}, double eps = 1e-8,
       bool bias_correction = false);

 protected:
  Slots init_single(const Array& parameter) const override;
  Array apply_single(const Array& gradient, const Array& parameter, Slots& slots) const override;
};
NUVEC_OPTIMIZER(Adam, NUVEC_STATIC(betas), NUVEC_STATIC(eps), NUVEC_STATIC(bias_correction))

/// AdamW: Adam with decoupled weight decay, parameter * (1 - lr * weight_decay)
/// before the Adam step (MLX's AdamW, weight_decay 0.01 by default).
struct AdamW : Adam {
  double weight_decay;
  AdamW(const LearningRate& learning_rate, std::vector<double> betas = {0.9, 0.999}, double eps = 1e-8,
        double weight_decay = 0.01, bool bias_correction = false);

 protected:
  Array apply_single(const Array& gradient, const Array& parameter, Slots& slots) const override;
};
NUVEC_OPTIMIZER(AdamW, NUVEC_STATIC(betas), NUVEC_STATIC(eps), NUVEC_STATIC(bias_correction),
                NUVEC_STATIC(weight_decay))

}  // namespace nuvec::optim
