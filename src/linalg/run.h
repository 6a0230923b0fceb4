// The one way the linalg functions build a Linalg node (src/linalg/*.cpp).
#pragma once

#include <utility>
#include <vector>

#include "nuvec/primitives/linalg.h"
#include "ops/builder.h"

namespace nuvec::linalg::detail {

/// The outputs of a Linalg node for `op` named `name` (the user's function,
/// which failed arrays and evaluation errors name); a rejected call gives
/// `n` copies of the failed array.
inline std::vector<Array> run(Linalg::Op op, bool upper, std::vector<Array> in,
                              size_t n, StreamOrDevice s, const char* name,
                              Location loc) {
  auto out = ops::impl::build(ops::impl::make<Linalg>(op, upper), std::move(in),
                              s, name, loc);
  if (out.size() < n) out.resize(n, out.at(0));
  return out;
}

/// `x` failed with its error renamed to `name` at `loc` (composites report
/// the user's function, not the op inside them that refused the call).
Array renamed(const Array& x, const char* name, Location loc);

}  // namespace nuvec::linalg::detail
