// The Custom primitive: custom_function and checkpoint.
#include "nuvec/primitives/custom.h"

#include "nuvec/ops/ops.h"
#include "nuvec/transforms/custom.h"
#include "nuvec/transforms/flat.h"
#include "ops/builder.h"
#include "primitives/rules.h"
#include "transforms/tape.h"

namespace nuvec {

Expected<std::vector<OutputSpec>> Custom::output_specs(const std::vector<Array>& inputs) const {
  std::vector<OutputSpec> out;
  for (size_t i = num_primals_; i < inputs.size(); ++i) {
    const Array& x = inputs[i];
    OutputSpec s;
    s.shape = x.shape();
    s.dtype = x.dtype();
    s.is_view = true;
    s.view_of = static_cast<int>(i);
    s.strides = x.strides();
    s.offset = x.desc()->offset;
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

Arrays first(const Arrays& a, int n) { return Arrays(a.begin(), a.begin() + n); }

}  // namespace

Arrays Custom::vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
                   const Arrays& outputs) const {
  Arrays p = first(primals, num_primals_);
  std::vector<int> args;
  for (int a : argnums)
    if (a < num_primals_) args.push_back(a);
  Arrays grads;
  if (rules_->vjp) {
    grads = rules_->vjp(p, cotangents, outputs);
    if (grads.size() != p.size())
      (Error(ErrorKind::transform, rules_->name + ": the vjp rule returned " +
                                            std::to_string(grads.size()) + " gradients for " +
                                            std::to_string(p.size()) + " primals")).raise();
  } else {
    // Recompute f and differentiate it (checkpoint's backward pass). The
    // primals are made to depend on the cotangents, so the recomputation
    // runs when the backward pass reaches this node, not as soon as its
    // inputs exist (which would hold every recomputed block at once).
    auto seeds = [&](const Arrays&) { return cotangents; };
    grads = detail::vjp(rules_->f, ops::depends(p, cotangents), seeds, args).grads;
  }
  Arrays out;
  for (int a : argnums)
    out.push_back(a < num_primals_ ? grads[a] : rules::zeros_of(primals[a]));
  return out;
}

Arrays Custom::jvp(const Arrays& primals, const Arrays& tangents, const std::vector<int>& argnums) const {
  Arrays p = first(primals, num_primals_);
  std::vector<int> args;
  Arrays tans;
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] >= num_primals_) continue;
    args.push_back(argnums[i]);
    tans.push_back(tangents[i]);
  }
  if (rules_->jvp_argnums) return rules_->jvp_argnums(p, tans, args);
  if (rules_->jvp) {
    Arrays full;
    for (int i = 0; i < num_primals_; ++i) full.push_back(rules::zeros_of(p[i]));
    for (size_t k = 0; k < args.size(); ++k) full[args[k]] = tans[k];
    return rules_->jvp(p, full);
  }
  return detail::jvp(rules_->f, p, tans, args).grads;
}

std::pair<Arrays, std::vector<int>> Custom::vmap(const Arrays& inputs, const std::vector<int>& axes) const {
  Arrays p = first(inputs, num_primals_);
  std::vector<int> ax(axes.begin(), axes.begin() + num_primals_);
  if (rules_->vmap) return rules_->vmap(p, ax);
  auto zeros = [](const Arrays& outs) { return std::vector<int>(outs.size(), 0); };
  Arrays outs = detail::vmap(rules_->f, p, ax, zeros);
  return {outs, std::vector<int>(outs.size(), 0)};
}

namespace detail {

Arrays apply_custom(std::shared_ptr<const CustomRules> rules, const Arrays& primals) {
  transforms::throw_if_failed(primals);
  Arrays outs;
  {
    TracePause pause;  // the inner graph is not kept: rules recompute it
    outs = rules->f(primals);
  }
  transforms::throw_if_failed(outs);
  Arrays inputs = primals;
  inputs.insert(inputs.end(), outs.begin(), outs.end());
  int n = static_cast<int>(primals.size());
  Arrays result = ops::impl::build(std::make_shared<const Custom>(std::move(rules), n),
                                     std::move(inputs), {}, "custom_function", Location::none());
  transforms::throw_if_failed(result);
  return result;
}

}  // namespace detail

FlatFunction custom_function(FlatFunction fun, std::optional<CustomVjpFn> fun_vjp,
                             std::optional<CustomJvpFn> fun_jvp,
                             std::optional<CustomVmapFn> fun_vmap) {
  if (!fun_vjp && !fun_jvp && !fun_vmap) return fun;  // as MLX: nothing to redefine
  auto rules = std::make_shared<CustomRules>();
  rules->f = std::move(fun);
  if (fun_vjp) rules->vjp = std::move(*fun_vjp);
  if (fun_jvp) rules->jvp_argnums = std::move(*fun_jvp);
  if (fun_vmap) rules->vmap = std::move(*fun_vmap);
  std::shared_ptr<const CustomRules> shared = std::move(rules);
  return [shared](const Arrays& primals) { return detail::apply_custom(shared, primals); };
}

FlatFunction custom_vjp(FlatFunction fun, CustomVjpFn fun_vjp) {
  return custom_function(std::move(fun), std::move(fun_vjp), std::nullopt, std::nullopt);
}

}  // namespace nuvec

namespace nuvec {
Expected<std::vector<OutputSpec>> Placeholder::output_specs(const std::vector<Array>&) const {
  OutputSpec s;
  s.shape = shape_;
  s.dtype = dtype_;
  return std::vector<OutputSpec>{s};
}
}  // namespace nuvec
