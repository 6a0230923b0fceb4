// Building graph nodes: the one path from an op to the graph. It returns the
// first failed input unchanged, runs the primitive's shape-and-dtype rule,
// and gives a failed array carrying the op name and the caller's location
// when the rule rejects the call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/checked.h"
#include "nuvec/core/graph.h"

namespace nuvec::inline ops::impl {

std::vector<Array> build(std::shared_ptr<const Primitive> p,
                         std::vector<Array> inputs, const StreamOrDevice& s,
                         const char* op, Location loc);
Array build1(std::shared_ptr<const Primitive> p, std::vector<Array> inputs,
             const StreamOrDevice& s, const char* op, Location loc);
/// A failed array for `op` at `loc`.
Array fail(ErrorKind kind, std::string message, const char* op, Location loc);
/// The first failed array among `arrays`, if any.
const Array* first_failed(const std::vector<Array>& arrays);
/// Normalises an axis against ndim, or nullopt when out of range.
std::optional<int> normalize_axis(int axis, int ndim);
/// Sorted, unique, normalised axes, or an error message.
Expected<std::vector<int>> normalize_axes(const std::vector<int>& axes, int ndim);

/// Whether shapeless compile is tracing on this thread (element-wise ops
/// then make every broadcast relative).
bool& shapeless_tracing();

template <class P, class... Args>
std::shared_ptr<const Primitive> make(Args&&... args) {
  if constexpr (sizeof...(Args) == 0) {
    // A primitive without parameters is immutable and the same for every
    // node, so nodes share one instance (one allocation less per add or
    // multiply; the thread-safe static is built once).
    static const std::shared_ptr<const Primitive> shared = std::make_shared<const P>();
    return shared;
  } else {
    return std::make_shared<const P>(std::forward<Args>(args)...);
  }
}

}  // namespace nuvec::ops::impl
