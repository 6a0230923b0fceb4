// The transform rules of compile's regions (Fused, FusedReduce): each
// transform applied to the region expanded into the ordinary nodes it was
// made from, so the rules are those nodes' own.
#pragma once

#include <utility>
#include <vector>

#include "nuvec/transforms/flat.h"

namespace nuvec::compiler {

inline Arrays expanded_vjp(const FlatFunction& expand, const Arrays& primals, const Arrays& cotangents,
                           const std::vector<int>& argnums) {
  auto seeds = [&](const Arrays&) { return cotangents; };
  Arrays g = detail::vjp(expand, primals, seeds, argnums).grads;
  Arrays out;
  for (int a : argnums) out.push_back(g[a]);
  return out;
}

inline Arrays expanded_jvp(const FlatFunction& expand, const Arrays& primals, const Arrays& tangents,
                           const std::vector<int>& argnums) {
  return detail::jvp(expand, primals, tangents, argnums).grads;
}

inline std::pair<Arrays, std::vector<int>> expanded_vmap(const FlatFunction& expand, const Arrays& inputs,
                                                         const std::vector<int>& axes) {
  auto zeros = [](const Arrays& o) { return std::vector<int>(o.size(), 0); };
  Arrays out = detail::vmap(expand, inputs, axes, zeros);
  return {out, std::vector<int>(out.size(), 0)};
}

}  // namespace nuvec::compiler
