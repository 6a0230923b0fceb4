// Sizes computed in a wider type and checked once, so that no shape rule
// truncates or wraps a dimension (docs/semantics.md, "Sizes").
#pragma once

#include <string>

#include "nuvec/core/error.h"

namespace nuvec {

/// A dimension computed in int64 or wider (`what` names it: "output
/// length"): the value as int, or an overflow error with the true size
/// ("output length 4294967297 exceeds the int range") past the int range,
/// or an invalid_shape error when negative.
Expected<int> checked_dim(__int128 v, const std::string& what);

}  // namespace nuvec
