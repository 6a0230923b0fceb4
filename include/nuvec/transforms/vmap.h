// vmap over trees: a function of several tree arguments vectorized over a
// batch axis of each (docs/transforms.md).
#pragma once

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "nuvec/transforms/flat.h"
#include "nuvec/tree/ops.h"

namespace nuvec {

/// f vectorized over batch axes: configure with in_axes (one per top-level
/// argument; std::nullopt: not batched; one value: every argument) and
/// out_axes (one per top-level output, the elements of a returned pair or
/// tuple; one value: every output), then call it. Axis 0 by default;
/// negative axes count from the end. Outputs that do not depend on a batched
/// input are broadcast along the batch axis.
template <class F>
class Vmap {
 public:
  explicit Vmap(F f) : f_(std::move(f)) {}
  Vmap in_axes(std::vector<std::optional<int>> axes) const {
    Vmap v = *this;
    v.in_ = std::move(axes);
    return v;
  }
  Vmap in_axes(int axis) const {
    return in_axes(std::vector<std::optional<int>>{std::optional<int>(axis)});
  }
  Vmap out_axes(std::vector<int> axes) const {
    Vmap v = *this;
    v.out_ = std::move(axes);
    return v;
  }
  Vmap out_axes(int axis) const { return out_axes(std::vector<int>{axis}); }

  template <Tree... Args>
  auto operator()(const Args&... args) const {
    using R = std::remove_cvref_t<std::invoke_result_t<const F&, const Args&...>>;
    constexpr size_t n = sizeof...(Args);
    if (in_.size() > 1 && in_.size() != n)
      throw Error(ErrorKind::transform, "vmap: " + std::to_string(in_.size()) + " in_axes for " +
                                            std::to_string(n) + " arguments");
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
            throw Error(ErrorKind::transform, "vmap: in_axis " + std::to_string(*a) +
                                                  " is out of range for argument " +
                                                  std::to_string(arg));
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
          throw Error(ErrorKind::transform, "vmap: out_axis " + std::to_string(a) + " is out of range");
        r.push_back(norm);
      }
      return r;
    };
    auto outs = detail::vmap(flat, leaves, axes, out_axes);
    return tree_replace_leaves(*result, outs);
  }

 private:
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
        throw Error(ErrorKind::transform, "vmap: " + std::to_string(out_.size()) +
                                              " out_axes for " + std::to_string(std::tuple_size_v<R>) +
                                              " outputs");
      size_t i = 0;
      std::apply([&](const auto&... e) {
        ((per_leaf.insert(per_leaf.end(), tree_leaves(e).size(), out_[i]), ++i), ...);
      }, r);
      return per_leaf;
    } else {
      throw Error(ErrorKind::transform, "vmap: several out_axes for a single output");
    }
  }

  F f_;
  std::vector<std::optional<int>> in_;
  std::vector<int> out_;
};

/// Returns f vectorized over a batch axis of its arguments (see Vmap).
template <class F>
Vmap<std::decay_t<F>> vmap(F&& f) {
  return Vmap<std::decay_t<F>>(std::forward<F>(f));
}

}  // namespace nuvec
