// Sequential: layers applied in order, their paths "layers.0", "layers.1",
// ... as MLX's Sequential.
#pragma once

#include <tuple>
#include <utility>

#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// Applies its layers in order: `nn::Sequential seq(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 2))`.
/// Each layer is called with the previous one's output.
template <class... Layers>
struct Sequential : Module<Sequential<Layers...>> {
  std::tuple<Layers...> layers;
  explicit Sequential(Layers... ls) : layers(std::move(ls)...) {}
  Array operator()(const Array& x) const {
    Array y = x;
    std::apply([&](const auto&... layer) { ((y = layer(y)), ...); }, layers);
    return y;
  }
  std::string name() const override { return "Sequential"; }
};

template <class T>
struct IsSequential : std::false_type {};
template <class... L>
struct IsSequential<Sequential<L...>> : std::true_type {};

/// Sequential's tree declaration (NUVEC_TREE's form, for a class template).
template <class S, class V>
  requires IsSequential<std::remove_const_t<S>>::value
void nuvec_tree_fields(S& self, V& v) {
  v.field("layers", self.layers);
}

}  // namespace nuvec::nn
