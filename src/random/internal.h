// What the distributions share from random.cpp.
#pragma once

#include "nuvec/random.h"

namespace nuvec::random {

/// uniform's values in [0, 1) (at most `upper`) in `dtype` (float32,
/// float16 or bfloat16): bits, divided by 2^32 - 1, clamped and converted,
/// as one RandomBits node with its unit-uniform epilogue.
Array unit_uniform(const Shape& shape, DType dtype, float upper, const Key& key,
                   const StreamOrDevice& s, Location loc);

}  // namespace nuvec::random
