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
#include "nuvec/transforms/mlx.h"
#include "nuvec/transforms/signature.h"
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

template <class F, Tree P, Tree C>
auto tree_vjp(F& f, const P& primals, const C& cotangents) {
  using R = Result<F, P>;
  std::optional<R> result;
  auto flat = flat_of(f, primals, result);
  auto seeds = [&](const std::vector<Array>& outputs) {
    auto cots = tree_leaves(cotangents);
    auto paths = leaf_paths(*result);
    if (leaf_paths(cotangents) != paths)
      tree_detail::check_same_paths("vjp cotangents", tree_flatten(*result),
                                    tree_flatten(cotangents));
    detail::check_like("vjp cotangents", outputs, cots, paths);
    return cots;
  };
  auto r = detail::vjp(flat, tree_leaves(primals), seeds, trainable_indices(primals));
  return std::pair<R, P>(std::move(*result), tree_replace_leaves(primals, r.grads));
}

template <class F, Tree P, Tree T>
auto tree_jvp(F& f, const P& primals, const T& tangents) {
  using R = Result<F, P>;
  auto fp = tree_flatten(primals);
  auto ft = tree_flatten(tangents);
  tree_detail::check_same_paths("jvp tangents", fp, ft);
  std::vector<int> args = trainable_indices(primals);
  std::vector<Array> expected, given;
  std::vector<std::string> names;
  for (int i : args) {
    expected.push_back(fp[i].second);
    given.push_back(ft[i].second);
    names.push_back(fp[i].first);
  }
  detail::check_like("jvp tangents", expected, given, names);
  std::optional<R> result;
  auto flat = flat_of(f, primals, result);
  auto r = detail::jvp(flat, tree_leaves(primals), given, args);
  R out = tree_replace_leaves(*result, r.grads);
  return std::pair<R, R>(std::move(*result), std::move(out));
}

/// A call of an MLX form: MLX's vjp(fun, primals, cotangents) over
/// std::vector<Array> (the tree form would mean the same; this keeps one
/// implementation of MLX's form).
template <class F, class P, class C>
inline constexpr bool mlx_vector_call = arrays_to_arrays<F> && std::is_same_v<P, std::vector<Array>> &&
                                        std::is_same_v<C, std::vector<Array>>;

}  // namespace transforms_detail

/// Reverse mode over trees: {f(primals), the vector-Jacobian product for
/// `cotangents`} (cotangents: a tree like the output, same paths and shapes,
/// else nuvec::Error naming the path, cast to the outputs' dtypes as MLX
/// casts them; the result is a tree like primals, zeros for leaves that are
/// not trainable). With std::vector<Array> primals and cotangents this is
/// MLX's vjp (mlx.h).
template <class F, Tree P, Tree C>
auto vjp(F&& f, const P& primals, const C& cotangents) {
  if constexpr (transforms_detail::mlx_vector_call<F, P, C>)
    return vjp_flat(FlatFunction(std::forward<F>(f)), primals, cotangents);
  else
    return transforms_detail::tree_vjp(f, primals, cotangents);
}

/// Forward mode over trees: {f(primals), the Jacobian-vector product for
/// `tangents`} (a tree like primals, same shapes, cast to the primals'
/// dtypes; tangents of leaves that are not trainable are ignored), as a
/// tree like the output. With std::vector<Array> it is MLX's jvp.
template <class F, Tree P, Tree T>
auto jvp(F&& f, const P& primals, const T& tangents) {
  if constexpr (transforms_detail::mlx_vector_call<F, P, T>)
    return jvp_flat(FlatFunction(std::forward<F>(f)), primals, tangents);
  else
    return transforms_detail::tree_jvp(f, primals, tangents);
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
    requires std::is_invocable_v<const F&, const P&, const Rest&...>
  auto operator()(const P& params, const Rest&... rest) const {
    using R = transforms_detail::Result<const F, P, Rest...>;
    static_assert(transforms_detail::is_grad_output<R>(),
                  "value_and_grad: f must return an Array (the loss) or a pair/tuple whose "
                  "first element is the loss");
    std::optional<R> result;
    auto flat = transforms_detail::flat_of(f_, params, result, rest...);
    auto seed = [](const std::vector<Array>& outputs) {
      if (outputs.at(0).size() != 1)
        (Error(ErrorKind::transform, "value_and_grad: the loss must be a scalar")).raise();
      return std::vector<Array>{ops::ones_like(outputs[0])};
    };
    auto r = detail::vjp(flat, tree_leaves(params), seed,
                         transforms_detail::trainable_indices(params));
    return std::pair<R, P>(std::move(*result), tree_replace_leaves(params, r.grads));
  }

 private:
  F f_;
};

/// grad(f)(params, rest...): the gradient alone (see ValueAndGrad).
template <class F>
class GradFunction {
 public:
  explicit GradFunction(F f) : vg_(std::move(f)) {}
  template <Tree P, class... Rest>
    requires std::is_invocable_v<const F&, const P&, const Rest&...>
  auto operator()(const P& params, const Rest&... rest) const {
    return vg_(params, rest...).second;
  }

 private:
  ValueAndGrad<F> vg_;
};

/// value_and_grad(f): for f of a tree (and any other arguments), a
/// ValueAndGrad; for f declared as a function of one std::vector<Array>
/// (MLX's form), MLX's value_and_grad(f, 0): a ValueAndGradFn when f
/// returns std::vector<Array>, a SimpleValueAndGradFn when it returns an
/// Array, with the gradient of the first input alone. For f of one Array,
/// both mean MLX's {value, grad}.
template <class F>
auto value_and_grad(F&& f) {
  if constexpr (transforms_detail::arrays_to_arrays<F>)
    return value_and_grad(FlatFunction(std::forward<F>(f)), 0);
  else if constexpr (transforms_detail::arrays_to_array<F>)
    return value_and_grad(ArraysToArray(std::forward<F>(f)), 0);
  else
    return ValueAndGrad<std::decay_t<F>>(std::forward<F>(f));
}

/// grad(f): the gradient alone (see value_and_grad); for f declared as a
/// function of one std::vector<Array> returning an Array, MLX's grad(f, 0)
/// (the gradient of the first input, in a vector of one).
template <class F>
auto grad(F&& f) {
  if constexpr (transforms_detail::arrays_to_array<F>)
    return grad(ArraysToArray(std::forward<F>(f)), 0);
  else
    return GradFunction<std::decay_t<F>>(std::forward<F>(f));
}

}  // namespace nuvec
