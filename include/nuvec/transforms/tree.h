// Transforms over trees: vjp, jvp, grad, value_and_grad and vmap of
// functions of any tree (docs/transforms.md). Each is a thin layer over the
// flat engines: the tree is flattened, the function sees it rebuilt.
#pragma once

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "nuvec/ops/creation.h"
#include "nuvec/transforms/flat.h"
#include "nuvec/tree/ops.h"

namespace nuvec {

namespace transforms_detail {

template <class F, class P, class... Rest>
using Result = std::remove_cvref_t<std::invoke_result_t<F&, const P&, const Rest&...>>;

/// The indices of the trainable leaves: what transforms differentiate.
template <Tree P>
std::vector<int> trainable_indices(const P& p) {
  std::vector<int> out;
  int i = 0;
  tree_visit(p, [&](std::string_view, const Array&, LeafKind, bool trainable) {
    if (trainable) out.push_back(i);
    ++i;
  });
  return out;
}

template <Tree T>
std::vector<std::string> leaf_paths(const T& t) {
  std::vector<std::string> out;
  for (auto& [path, a] : tree_flatten(t)) out.push_back(path);
  return out;
}

/// Runs f on the tree rebuilt from leaves and keeps its result's structure.
template <class F, Tree P, class R, class... Rest>
FlatFunction flat_of(F& f, const P& like, std::optional<R>& result, const Rest&... rest) {
  return [&f, &like, &result, &rest...](const std::vector<Array>& leaves) {
    result.emplace(f(tree_replace_leaves(like, leaves), rest...));
    return tree_leaves(*result);
  };
}

/// The first leaf of a GradOutput: the loss (an Array alone, or the first
/// element of a pair or tuple whose other elements are auxiliary outputs).
template <class R>
constexpr bool is_grad_output() {
  if constexpr (std::is_same_v<R, Array>) {
    return true;
  } else if constexpr (tree_detail::IsTupleLike<R>::value) {
    return std::is_same_v<std::remove_cvref_t<std::tuple_element_t<0, R>>, Array>;
  } else {
    return false;
  }
}

}  // namespace transforms_detail

/// Reverse mode over trees: {f(primals), the vector-Jacobian product for
/// `cotangents`} (cotangents: a tree like the output, same paths, shapes and
/// dtypes, else nuvec::Error naming the path; the result is a tree like
/// primals, zeros for leaves that are not trainable).
template <class F, Tree P, Tree C>
auto vjp(F&& f, const P& primals, const C& cotangents) {
  using R = transforms_detail::Result<F, P>;
  std::optional<R> result;
  auto flat = transforms_detail::flat_of(f, primals, result);
  auto seeds = [&](const std::vector<Array>& outputs) {
    auto cots = tree_leaves(cotangents);
    auto paths = transforms_detail::leaf_paths(*result);
    auto given = transforms_detail::leaf_paths(cotangents);
    if (given != paths) tree_detail::check_same_paths("vjp cotangents", tree_flatten(*result), tree_flatten(cotangents));
    detail::check_like("vjp cotangents", outputs, cots, paths);
    return cots;
  };
  auto r = detail::vjp(flat, tree_leaves(primals), seeds,
                       transforms_detail::trainable_indices(primals));
  return std::pair<R, P>(std::move(*result), tree_replace_leaves(primals, r.grads));
}

/// Forward mode over trees: {f(primals), the Jacobian-vector product for
/// `tangents`} (a tree like primals; tangents of leaves that are not
/// trainable are ignored), as a tree like the output.
template <class F, Tree P, Tree T>
auto jvp(F&& f, const P& primals, const T& tangents) {
  using R = transforms_detail::Result<F, P>;
  auto fp = tree_flatten(primals);
  auto ft = tree_flatten(tangents);
  tree_detail::check_same_paths("jvp tangents", fp, ft);
  std::vector<int> args = transforms_detail::trainable_indices(primals);
  std::vector<Array> expected, given;
  std::vector<std::string> names;
  for (int i : args) {
    expected.push_back(fp[i].second);
    given.push_back(ft[i].second);
    names.push_back(fp[i].first);
  }
  detail::check_like("jvp tangents", expected, given, names);
  std::optional<R> result;
  auto flat = transforms_detail::flat_of(f, primals, result);
  auto r = detail::jvp(flat, tree_leaves(primals), given, args);
  R out = tree_replace_leaves(*result, r.grads);
  return std::pair<R, R>(std::move(*result), std::move(out));
}

/// value_and_grad(f)(params, rest...): {f(params, rest...), the gradient of
/// the loss with respect to the trainable leaves of params, as a tree of
/// params' type (zeros for frozen leaves and buffers)}. f returns the loss
/// (a scalar Array) or a pair/tuple whose first element is the loss and
/// whose others are auxiliary outputs, returned without gradients.
template <class F>
class ValueAndGrad {
 public:
  explicit ValueAndGrad(F f) : f_(std::move(f)) {}
  template <Tree P, class... Rest>
  auto operator()(const P& params, const Rest&... rest) const {
    using R = transforms_detail::Result<const F, P, Rest...>;
    static_assert(transforms_detail::is_grad_output<R>(),
                  "value_and_grad: f must return an Array (the loss) or a pair/tuple whose "
                  "first element is the loss");
    std::optional<R> result;
    auto flat = transforms_detail::flat_of(f_, params, result, rest...);
    auto seed = [](const std::vector<Array>& outputs) {
      if (outputs.at(0).size() != 1)
        throw Error(ErrorKind::transform, "value_and_grad: the loss must be a scalar");
      return std::vector<Array>{ops::ones_like(outputs[0])};
    };
    auto r = detail::vjp(flat, tree_leaves(params), seed,
                         transforms_detail::trainable_indices(params));
    return std::pair<R, P>(std::move(*result), tree_replace_leaves(params, r.grads));
  }

 private:
  F f_;
};

template <class F>
ValueAndGrad<std::decay_t<F>> value_and_grad(F&& f) {
  return ValueAndGrad<std::decay_t<F>>(std::forward<F>(f));
}

/// grad(f)(params, rest...): the gradient alone (see value_and_grad).
template <class F>
auto grad(F&& f) {
  return [vg = value_and_grad(std::forward<F>(f))](const auto& params, const auto&... rest) {
    return vg(params, rest...).second;
  };
}

}  // namespace nuvec
