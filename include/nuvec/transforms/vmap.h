// vmap over trees: a function of several tree arguments vectorized over a
// batch axis of each (docs/transforms.md).
#pragma once

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "nuvec/transforms/flat.h"
#include "nuvec/transforms/mlx.h"
#include "nuvec/transforms/signature.h"
#include "nuvec/tree/ops.h"

namespace nuvec {

/// f vectorized over batch axes: configure with in_axes (one per top-level
/// argument, see VmapInAxes: std::nullopt, or -1 given as an int, means not
/// batched; one value: every argument) and out_axes (one per top-level
/// output, the elements of a returned pair or tuple; one value: every
/// output), then call it. Axis 0 by default; other negative axes count from
/// the end (std::optional<int>(-1) is the last axis of an argument; out axis
/// -1 the last of an output). Outputs that do not depend on a batched input
/// are broadcast along the batch axis; a batch of size 0 gives empty
/// outputs. For f of one std::vector<Array>, vmap(f)(inputs) maps every
/// input along axis 0 (MLX's vmap(f)).
template <class F>
class Vmap {
 public:
  explicit Vmap(F f) : f_(std::move(f)) {}
  Vmap in_axes(VmapInAxes axes) const {
    Vmap v = *this;
    v.in_ = axes.axes();
    return v;
  }
  /// One axis for every argument; -1 means not batched (as in MLX's int
  /// axes), std::optional<int>(-1) the last axis.
  Vmap in_axes(int axis) const { return in_axes(VmapInAxes{axis}); }
  Vmap in_axes(std::optional<int> axis) const { return in_axes(VmapInAxes{axis}); }
  Vmap out_axes(std::vector<int> axes) const {
    Vmap v = *this;
    v.out_ = std::move(axes);
    return v;
  }
  Vmap out_axes(int axis) const { return out_axes(std::vector<int>{axis}); }

  /// MLX's call of a vmapped function of positional arrays (a braced list
  /// of inputs works too).
  std::vector<Array> operator()(const std::vector<Array>& inputs) const
    requires transforms_detail::arrays_to_arrays<F>
  {
    return call(inputs);
  }
  template <Tree... Args>
    requires std::is_invocable_v<const F&, const Args&...>
  auto operator()(const Args&... args) const {
    return call(args...);
  }

 private:
  template <Tree... Args>
  auto call(const Args&... args) const {
    using R = std::remove_cvref_t<std::invoke_result_t<const F&, const Args&...>>;
    constexpr size_t n = sizeof...(Args);
    if (in_.size() > 1 && in_.size() != n)
      (Error(ErrorKind::transform, "vmap: " + std::to_string(in_.size()) + " in_axes for " +
                                            std::to_string(n) + " arguments")).raise();
    std::vector<Array> leaves;
    std::vector<int> axes;
    std::vector<size_t> counts;
    size_t arg = 0;
    auto add = [&](const auto& tree) {
      std::optional<int> a = in_.empty() ? std::optional<int>(0) : in_[in_.size() == 1 ? 0 : arg];
      auto ls = tree_leaves(tree);
      counts.push_back(ls.size());
      for (auto& l : ls) {
        int ax = -1;
        if (a) {
          ax = *a < 0 ? *a + l.ndim() : *a;
          if (ax < 0 || ax >= l.ndim())
            (Error(ErrorKind::transform, "vmap: in_axis " + std::to_string(*a) +
                                                  " is out of range for argument " +
                                                  std::to_string(arg))).raise();
        }
        axes.push_back(ax);
        leaves.push_back(std::move(l));
      }
      ++arg;
    };
    (add(args), ...);
    std::optional<R> result;
    auto like = std::forward_as_tuple(args...);
    FlatFunction flat = [&](const std::vector<Array>& ls) {
      size_t offset = 0;
      auto rebuild = [&]<size_t... I>(std::index_sequence<I...>) {
        auto one = [&](const auto& t, size_t count) {
          std::vector<Array> part(ls.begin() + offset, ls.begin() + offset + count);
          offset += count;
          return tree_replace_leaves(t, part);
        };
        return std::tuple<Args...>{one(std::get<I>(like), counts[I])...};
      };
      result.emplace(std::apply(f_, rebuild(std::make_index_sequence<n>{})));
      return tree_leaves(*result);
    };
    auto out_axes = [&](const std::vector<Array>& outs) {
      std::vector<int> per_output = output_axes(*result);
      std::vector<int> r;
      for (size_t i = 0; i < outs.size(); ++i) {
        int a = per_output[i];
        int nd = outs[i].ndim() + 1;
        int norm = a < 0 ? a + nd : a;
        if (norm < 0 || norm >= nd)
          (Error(ErrorKind::transform, "vmap: out_axis " + std::to_string(a) + " is out of range")).raise();
        r.push_back(norm);
      }
      return r;
    };
    auto outs = detail::vmap(flat, leaves, axes, out_axes);
    return tree_replace_leaves(*result, outs);
  }

  // One out axis per leaf of the result, from out_ (per top-level output).
  template <class R>
  std::vector<int> output_axes(const R& r) const {
    std::vector<int> per_leaf;
    if (out_.size() <= 1) {
      per_leaf.assign(tree_leaves(r).size(), out_.empty() ? 0 : out_[0]);
      return per_leaf;
    }
    if constexpr (tree_detail::IsTupleLike<R>::value) {
      if (out_.size() != std::tuple_size_v<R>)
        (Error(ErrorKind::transform, "vmap: " + std::to_string(out_.size()) +
                                              " out_axes for " + std::to_string(std::tuple_size_v<R>) +
                                              " outputs")).raise();
      size_t i = 0;
      std::apply([&](const auto&... e) {
        ((per_leaf.insert(per_leaf.end(), tree_leaves(e).size(), out_[i]), ++i), ...);
      }, r);
      return per_leaf;
    } else {
      (Error(ErrorKind::transform, "vmap: several out_axes for a single output")).raise();
    }
  }

  F f_;
  std::vector<std::optional<int>> in_;
  std::vector<int> out_;
};

/// Returns f vectorized over a batch axis of its arguments (see Vmap; the
/// forms with axes, vmap(f, in_axis, out_axis), vmap(f, in_axis_a,
/// in_axis_b, out_axis) and vmap(f, in_axes, out_axes), are MLX's, in
/// mlx.h).
template <class F>
Vmap<std::decay_t<F>> vmap(F&& f) {
  return Vmap<std::decay_t<F>>(std::forward<F>(f));
}

}  // namespace nuvec
