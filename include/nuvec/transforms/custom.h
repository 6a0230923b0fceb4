// custom_function and checkpoint, over trees and over positional arrays.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "nuvec/primitives/custom.h"
#include "nuvec/random.h"
#include "nuvec/transforms/flat.h"
#include "nuvec/transforms/signature.h"
#include "nuvec/tree/ops.h"

namespace nuvec {

namespace transforms_detail {

/// No rule given: transforms fall back to transforming the function.
struct NoRule {};

/// Checkpoint's key replay: the recomputation draws the same random numbers
/// as the first run, from the thread's key as it was then.
class KeyReplay {
 public:
  template <class G>
  auto run(G&& g) {
    Array& key = random::KeySequence::thread_default().state();
    if (!first_) {
      first_ = key;
      return g();
    }
    Array now = key;
    key = *first_;
    struct Restore {
      Array& key;
      Array now;
      ~Restore() { key = now; }
    } restore{key, now};
    return g();
  }

 private:
  std::optional<Array> first_;
};

}  // namespace transforms_detail

/// MLX's vjp rule: (primals, cotangents, outputs) -> one vjp per primal.
using CustomVjpFn = std::function<std::vector<Array>(
    const std::vector<Array>&, const std::vector<Array>&, const std::vector<Array>&)>;
/// MLX's jvp rule: (primals, tangents, argnums) -> one tangent per output;
/// `tangents` holds the tangents of the primals listed in `argnums` only.
using CustomJvpFn = std::function<std::vector<Array>(
    const std::vector<Array>&, const std::vector<Array>&, const std::vector<int>&)>;
/// MLX's vmap rule: (inputs, axes) -> {outputs, output axes}; axis -1: not
/// batched.
using CustomVmapFn = std::function<std::pair<std::vector<Array>, std::vector<int>>(
    const std::vector<Array>&, const std::vector<int>&)>;

/// MLX's custom_function: fun with the rules given replacing vjp, jvp and
/// vmap of fun (a rule not given falls back to transforming fun, which
/// runs it again); with no rule it returns fun itself, as MLX does. The
/// one-argument custom_function(f) is nuvec's CustomFunction below.
FlatFunction custom_function(FlatFunction fun, std::optional<CustomVjpFn> fun_vjp,
                             std::optional<CustomJvpFn> fun_jvp = std::nullopt,
                             std::optional<CustomVmapFn> fun_vmap = std::nullopt);

/// MLX's custom_vjp: custom_function(fun, fun_vjp).
FlatFunction custom_vjp(FlatFunction fun, CustomVjpFn fun_vjp);

/// A function of positional arrays with custom transform rules (the flat
/// form of custom_function): with_vjp(g) takes g(primals, cotangents,
/// outputs) -> one gradient per primal; with_jvp(g) takes g(primals,
/// tangents) -> one tangent per output (tangents of primals that are not
/// differentiated are zeros); with_vmap(g) takes g(inputs, axes) ->
/// {outputs, output axes} (axis -1: not batched). A rule not given falls
/// back to transforming f itself.
class CustomFunctionFlat {
 public:
  explicit CustomFunctionFlat(FlatFunction f, std::string name = "custom_function") {
    rules_.f = std::move(f);
    rules_.name = std::move(name);
  }
  CustomFunctionFlat with_vjp(decltype(CustomRules::vjp) g) const {
    auto c = *this;
    c.rules_.vjp = std::move(g);
    return c;
  }
  CustomFunctionFlat with_jvp(decltype(CustomRules::jvp) g) const {
    auto c = *this;
    c.rules_.jvp = std::move(g);
    return c;
  }
  CustomFunctionFlat with_vmap(decltype(CustomRules::vmap) g) const {
    auto c = *this;
    c.rules_.vmap = std::move(g);
    return c;
  }
  std::vector<Array> operator()(const std::vector<Array>& primals) const {
    return detail::apply_custom(std::make_shared<const CustomRules>(rules_), primals);
  }

 private:
  CustomRules rules_;
};

inline CustomFunctionFlat custom_function_flat(FlatFunction f) {
  return CustomFunctionFlat(std::move(f));
}

/// f with gradient checkpointing (flat form): the same values and
/// derivatives, but f's intermediates are not kept for the backward pass;
/// f runs again to differentiate, drawing the same random numbers.
inline FlatFunction checkpoint_flat(FlatFunction f) {
  return [f = std::move(f)](const std::vector<Array>& primals) {
    auto replay = std::make_shared<transforms_detail::KeyReplay>();
    FlatFunction g = [f, replay](const std::vector<Array>& p) { return replay->run([&] { return f(p); }); };
    return CustomFunctionFlat(std::move(g), "checkpoint")(primals);
  };
}

/// A function of a tree with custom transform rules (custom_function):
/// with_vjp(g): g(primals, cotangents, outputs) -> a tree like primals;
/// with_jvp(g): g(primals, tangents) -> a tree like the outputs;
/// with_vmap(g): g(inputs, axes per leaf) -> {outputs, axes per output leaf}.
/// Rules not given fall back to transforming f itself.
template <class F, class V = transforms_detail::NoRule, class J = transforms_detail::NoRule,
          class M = transforms_detail::NoRule>
class CustomFunction {
 public:
  CustomFunction(F f, V v = {}, J j = {}, M m = {}, bool checkpoint = false)
      : f_(std::move(f)), v_(std::move(v)), j_(std::move(j)), m_(std::move(m)),
        checkpoint_(checkpoint) {}

  template <class G>
  CustomFunction<F, std::decay_t<G>, J, M> with_vjp(G&& g) const {
    return {f_, std::forward<G>(g), j_, m_, checkpoint_};
  }
  template <class G>
  CustomFunction<F, V, std::decay_t<G>, M> with_jvp(G&& g) const {
    return {f_, v_, std::forward<G>(g), m_, checkpoint_};
  }
  template <class G>
  CustomFunction<F, V, J, std::decay_t<G>> with_vmap(G&& g) const {
    return {f_, v_, j_, std::forward<G>(g), checkpoint_};
  }

  /// MLX's call of a custom function of positional arrays (a braced list
  /// of inputs works too).
  std::vector<Array> operator()(const std::vector<Array>& primals) const
    requires transforms_detail::arrays_to_arrays<F>
  {
    return call(primals);
  }
  template <Tree P>
    requires std::is_invocable_v<const F&, const P&>
  auto operator()(const P& primals) const {
    return call(primals);
  }

 private:
  template <Tree P>
  auto call(const P& primals) const {
    using R = std::remove_cvref_t<std::invoke_result_t<const F&, const P&>>;
    auto out_like = std::make_shared<std::optional<R>>();
    auto replay = std::make_shared<transforms_detail::KeyReplay>();
    CustomRules rules;
    rules.name = checkpoint_ ? "checkpoint" : "custom_function";
    rules.f = [f = f_, like = primals, out_like, replay, cp = checkpoint_](const Arrays& leaves) {
      auto run = [&] { return f(tree_replace_leaves(like, leaves)); };
      R r = cp ? replay->run(run) : run();
      Arrays out = tree_leaves(r);
      if (!*out_like) out_like->emplace(std::move(r));
      return out;
    };
    if constexpr (!std::is_same_v<V, transforms_detail::NoRule>) {
      rules.vjp = [v = v_, like = primals, out_like](const Arrays& p, const Arrays& c, const Arrays& o) {
        const R& ol = **out_like;
        return tree_leaves(v(tree_replace_leaves(like, p), tree_replace_leaves(ol, c),
                             tree_replace_leaves(ol, o)));
      };
    }
    if constexpr (!std::is_same_v<J, transforms_detail::NoRule>) {
      rules.jvp = [j = j_, like = primals](const Arrays& p, const Arrays& t) {
        return tree_leaves(j(tree_replace_leaves(like, p), tree_replace_leaves(like, t)));
      };
    }
    if constexpr (!std::is_same_v<M, transforms_detail::NoRule>) {
      rules.vmap = [m = m_, like = primals](const Arrays& in, const std::vector<int>& axes) {
        auto [r, ax] = m(tree_replace_leaves(like, in), axes);
        return std::pair<Arrays, std::vector<int>>(tree_leaves(r), ax);
      };
    }
    Arrays outs = detail::apply_custom(std::make_shared<const CustomRules>(std::move(rules)),
                                       tree_leaves(primals));
    return tree_replace_leaves(**out_like, outs);
  }

  F f_;
  V v_;
  J j_;
  M m_;
  bool checkpoint_;
};

/// Wraps f (a function of a tree, returning a tree) so that transforms use
/// the rules set with with_vjp, with_jvp and with_vmap. For f of one
/// std::vector<Array> the result is also MLX's custom_function(f).
template <class F>
CustomFunction<std::decay_t<F>> custom_function(F&& f) {
  return CustomFunction<std::decay_t<F>>(std::forward<F>(f));
}

/// f with gradient checkpointing: values and derivatives equal f's, but f's
/// intermediates are not kept for the backward pass; f runs again to
/// differentiate, and random numbers drawn inside f are drawn again with the
/// same key (so dropout masks match). For f of one std::vector<Array> it is
/// MLX's checkpoint(fun): call it with the inputs (or a braced list), or
/// keep it as a std::function.
template <class F>
CustomFunction<std::decay_t<F>> checkpoint(F&& f) {
  return CustomFunction<std::decay_t<F>>(std::forward<F>(f), {}, {}, {}, true);
}

}  // namespace nuvec
