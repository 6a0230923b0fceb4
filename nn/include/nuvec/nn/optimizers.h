// The other optimizers of mlx.optimizers (RMSprop, Adagrad, AdaDelta, Adamax,
// Lion, Adafactor, Muon) on the Optimizer base of optimizer.h: MLX's
// constructor arguments in MLX's order with its defaults and checks, its
// formulas in its order (docs/nn.md, "Optimizers and schedules"); and
// MultiOptimizer.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "nuvec/nn/optimizer.h"

namespace nuvec::optim {

/// RMSprop: v = alpha v + (1 - alpha) g^2, w -= lr g / (sqrt(v) + eps)
/// (MLX's; alpha >= 0 and eps > 0, else nuvec::Error).
struct RMSprop : Optimizer {
  double alpha, eps;
  RMSprop(const LearningRate& learning_rate, double alpha = 0.99,
          double eps = 1e-8);

 protected:
  Slots init_single(const Array& parameter) const override;
  Array apply_single(const Array& gradient, const Array& parameter,
                     Slots& slots) const override;
};
NUVEC_OPTIMIZER(RMSprop, NUVEC_STATIC(alpha), NUVEC_STATIC(eps))

/// Adagrad: v += g^2, w -= lr g / (sqrt(v) + eps) (MLX's; eps > 0).
struct Adagrad : Optimizer {
  double eps;
  explicit Adagrad(const LearningRate& learning_rate, double eps = 1e-8);

 protected:
  Slots init_single(const Array& parameter) const override;
  Array apply_single(const Array& gradient, const Array& parameter,
                     Slots& slots) const override;
};
NUVEC_OPTIMIZER(Adagrad, NUVEC_STATIC(eps))

/// AdaDelta with a learning rate (MLX's; rho >= 0 and eps > 0): slots "v"
/// (squared gradients) and "u" (squared updates).
struct AdaDelta : Optimizer {
  double rho, eps;
  AdaDelta(const LearningRate& learning_rate, double rho = 0.9,
           double eps = 1e-6);

 protected:
  Slots init_single(const Array& parameter) const override;
  Array apply_single(const Array& gradient, const Array& parameter,
                     Slots& slots) const override;
};
NUVEC_OPTIMIZER(AdaDelta, NUVEC_STATIC(rho), NUVEC_STATIC(eps))

/// Adamax: Adam with v = max(beta2 v, |g|) and w -= lr m / (v + eps), never
/// bias-corrected (MLX's; betas in [0, 1), eps >= 0).
struct Adamax : Adam {
  Adamax(const LearningRate& learning_rate,
         std::vector<double> betas = {0.9, 0.999}, double eps = 1e-8);

 protected:
  Array apply_single(const Array& gradient, const Array& parameter,
                     Slots& slots) const override;
};
NUVEC_OPTIMIZER(Adamax, NUVEC_STATIC(betas), NUVEC_STATIC(eps),
                NUVEC_STATIC(bias_correction))

/// Lion: w -= lr sign(beta1 m + (1 - beta1) g) after the decay
/// w *= 1 - lr weight_decay (when weight_decay > 0); m = beta2 m +
/// (1 - beta2) g (MLX's; betas in [0, 1)).
struct Lion : Optimizer {
  std::vector<double> betas;
  double weight_decay;
  Lion(const LearningRate& learning_rate,
       std::vector<double> betas = {0.9, 0.99}, double weight_decay = 0.0);

 protected:
  Slots init_single(const Array& parameter) const override;
  Array apply_single(const Array& gradient, const Array& parameter,
                     Slots& slots) const override;
};
NUVEC_OPTIMIZER(Lion, NUVEC_STATIC(betas), NUVEC_STATIC(weight_decay))

/// Adafactor (MLX's). Without a learning rate (MLX's None) the relative
/// step size min(1e-2, 1/sqrt(step)) (or min(1e-6 step, ...) with
/// warmup_init) is used and `learning_rate` stays 0; relative_step false
/// then needs a learning rate (nuvec::Error at construction; MLX fails at
/// the first update). Parameters of two or more dimensions keep factored
/// slots "exp_avg_sq_row" and "exp_avg_sq_col", others "exp_avg_sq"; with
/// beta_1, also "exp_avg". eps must hold two values.
struct Adafactor : Optimizer {
  std::vector<double> eps;
  double clip_threshold, decay_rate;
  std::optional<double> beta_1;
  double weight_decay;
  bool scale_parameter, relative_step, warmup_init;
  explicit Adafactor(
      const std::optional<LearningRate>& learning_rate = std::nullopt,
      std::vector<double> eps = {1e-30, 1e-3}, double clip_threshold = 1.0,
      double decay_rate = -0.8, std::optional<double> beta_1 = std::nullopt,
      double weight_decay = 0.0, bool scale_parameter = true,
      bool relative_step = true, bool warmup_init = false);

 protected:
  Slots init_single(const Array& parameter) const override;
  Array apply_single(const Array& gradient, const Array& parameter,
                     Slots& slots) const override;
};
NUVEC_OPTIMIZER(Adafactor, NUVEC_STATIC(eps), NUVEC_STATIC(clip_threshold),
                NUVEC_STATIC(decay_rate), NUVEC_STATIC(beta_1),
                NUVEC_STATIC(weight_decay), NUVEC_STATIC(scale_parameter),
                NUVEC_STATIC(relative_step), NUVEC_STATIC(warmup_init))

/// Muon (MLX's): SGD momentum (Nesterov by default) whose update of a
/// parameter of two or more dimensions (flattened to 2-D past the first)
/// is orthogonalized by ns_steps quintic Newton-Schulz iterations and the
/// learning rate scaled by sqrt(max(1, rows / cols)); 0-D and 1-D
/// parameters take the plain momentum update.
struct Muon : Optimizer {
  double momentum, weight_decay;
  bool nesterov;
  int ns_steps;
  Muon(const LearningRate& learning_rate, double momentum = 0.95,
       double weight_decay = 0.01, bool nesterov = true, int ns_steps = 5);

 protected:
  Slots init_single(const Array& parameter) const override;
  Array apply_single(const Array& gradient, const Array& parameter,
                     Slots& slots) const override;
};
NUVEC_OPTIMIZER(Muon, NUVEC_STATIC(momentum), NUVEC_STATIC(weight_decay),
                NUVEC_STATIC(nesterov), NUVEC_STATIC(ns_steps))

/// Chooses a parameter's optimizer in MultiOptimizer: (path, gradient or
/// parameter) -> whether the optimizer takes it.
using Filter = std::function<bool(const std::string& path, const Array&)>;

/// Delegates parameters to several optimizers (MLX's MultiOptimizer): the
/// first optimizer whose filter accepts (path, gradient) updates the
/// parameter; the last optimizer, which has no filter, takes the rest.
/// `filters` must hold one fewer than the optimizers (else nuvec::Error).
/// A tree: "states.<i>." then optimizer i's leaves (MLX's {"states": [..]}),
/// so a compiled step over it traces once. The parameters must be Params
/// (a module's): a plain array leaf cannot be routed (nuvec::Error).
template <class... Opts>
struct MultiOptimizer {
  static_assert(sizeof...(Opts) >= 1, "MultiOptimizer needs an optimizer");
  std::tuple<Opts...> optimizers;
  std::vector<Filter> filters;

  MultiOptimizer(std::tuple<Opts...> opts, std::vector<Filter> fs)
      : optimizers(std::move(opts)), filters(std::move(fs)) {
    if (filters.size() != sizeof...(Opts) - 1)
      Error(ErrorKind::invalid_argument,
            "MultiOptimizer: given " + std::to_string(filters.size()) +
                " filters but " + std::to_string(sizeof...(Opts) - 1) +
                " needed")
          .raise();
    for (auto& f : filters)
      if (!f)
        Error(ErrorKind::invalid_argument, "MultiOptimizer: a filter is empty")
            .raise();
  }

  /// Optimizer i (as std::get<i>(optimizers)).
  template <size_t I>
  auto& get() {
    return std::get<I>(optimizers);
  }

  /// The first optimizer's learning rate (MLX's learning_rate property).
  const Array& learning_rate() const {
    return std::get<0>(optimizers).learning_rate.value;
  }
  /// Sets a constant learning rate on every optimizer.
  void set_learning_rate(double lr) {
    std::apply([&](auto&... o) { (o.set_learning_rate(lr), ...); }, optimizers);
  }

  /// Each optimizer's init on the parameters its filter accepts (filters
  /// see (path, parameter), as MLX's init).
  template <class M>
  void init(M& model) {
    nn::name_modules(model);
    auto owner = owners(model.trainable_parameters());
    for_each([&](auto& opt, size_t i) {
      M view = restricted(model, owner, i);
      opt.init(view);
    });
  }

  /// Each optimizer's update of the parameters its filter accepts (filters
  /// see (path, gradient), as MLX's apply_gradients), in order.
  template <class M>
  void update(M& model, const M& grads) {
    std::map<std::string, Array> g;
    for (auto& [path, a] : tree_flatten(grads)) g.emplace(path, a);
    nn::NamedArrays by_gradient;
    for (auto& [path, p] : model.trainable_parameters()) {
      auto it = g.find(path);
      by_gradient.emplace_back(path, it == g.end() ? p : it->second);
    }
    auto owner = owners(by_gradient);
    for_each([&](auto& opt, size_t i) {
      M view = restricted(model, owner, i);
      opt.update(view, grads);
      std::map<std::string, Array> updated;
      for (auto& [path, a] : tree_flatten(view)) updated.emplace(path, a);
      struct Back : nn::Walk {
        const std::map<std::string, size_t>& owner;
        const std::map<std::string, Array>& updated;
        size_t i;
        Back(const std::map<std::string, size_t>& o,
             const std::map<std::string, Array>& u, size_t k)
            : owner(o), updated(u), i(k) {}
        void param(const std::string& p, Param& x) override {
          if (!x.frozen && owner.at(p) == i) x.value = updated.at(p);
        }
      } back(owner, updated, i);
      nn::walk(model, "", back);
    });
  }

 private:
  template <class F>
  void for_each(F&& f) {
    size_t i = 0;
    std::apply([&](auto&... o) { ((f(o, i), ++i), ...); }, optimizers);
  }

  std::map<std::string, size_t> owners(const nn::NamedArrays& leaves) const {
    std::map<std::string, size_t> out;
    for (auto& [path, a] : leaves) {
      size_t i = 0;
      while (i < filters.size() && !filters[i](path, a)) ++i;
      out[path] = i;
    }
    return out;
  }

  // A copy of the model in which only optimizer i's parameters are
  // trainable: the base optimizers then see exactly their share.
  template <class M>
  static M restricted(const M& model,
                      const std::map<std::string, size_t>& owner, size_t i) {
    M view = model;
    struct Freezer : nn::Walk {
      const std::map<std::string, size_t>& owner;
      size_t i;
      Freezer(const std::map<std::string, size_t>& o, size_t k)
          : owner(o), i(k) {}
      void param(const std::string& p, Param& x) override {
        if (!x.frozen && owner.at(p) != i) x.frozen = true;
      }
      void array(const std::string& p, Array&) override {
        Error(ErrorKind::invalid_argument,
              "MultiOptimizer: '" + p +
                  "' is a plain array, not a Param: it cannot be routed")
            .raise();
      }
    } freezer(owner, i);
    nn::walk(view, "", freezer);
    return view;
  }
};

template <class V, class... Opts>
void nuvec_tree_fields(MultiOptimizer<Opts...>& m, V& v) {
  v.field("states", m.optimizers);
}
template <class V, class... Opts>
void nuvec_tree_fields(const MultiOptimizer<Opts...>& m, V& v) {
  v.field("states", m.optimizers);
}

}  // namespace nuvec::optim
