// Sizes computed in a wider type and checked once, so that no shape rule
// truncates or wraps a dimension, an element count or a byte size
// (docs/semantics.md, "Sizes"). Every op output passes checked_size where
// the graph node is made (ops/builder.cpp), and again before its buffer is
// allocated (core/eval.cpp); shape rules that compute a dimension use
// checked_dim.
#pragma once

#include <cstdint>
#include <string>

#include "nuvec/core/error.h"
#include "nuvec/core/shape.h"

namespace nuvec {

/// Decimal text of a wide integer (std::to_string has no __int128).
std::string wide_text(__int128 v);

/// A dimension computed in int64 or wider (`what` names it: "output
/// length"): the value as int, or an overflow error with the true size
/// ("output length 4294967297 exceeds the int range") past the int range,
/// or an invalid_shape error when negative.
Expected<int> checked_dim(__int128 v, const std::string& what);

/// The product of a shape's dimensions in __int128, saturated at 2^126 (so
/// a comparison with any int64 limit is exact; the exact value for messages
/// is shape_size_text). A 0-d shape gives 1; negative dimensions are the
/// caller's to refuse.
__int128 wide_size(const Shape& shape);

/// The exact decimal product of the nonzero dimensions of `shape` (any
/// size), or of all of them when `nonzero_only` is false.
std::string shape_size_text(const Shape& shape, bool nonzero_only = false);

/// The element count of an array of `shape` with items of `itemsize` bytes,
/// when it can exist: every dimension non-negative (invalid_shape), the
/// product of the nonzero dimensions within int64 (overflow; strides are
/// such products even when another dimension is 0, so a 0 next to huge
/// dimensions does not make them valid, as the loaders rule) and that
/// product times the item size within int64 (overflow). `what` starts the
/// message ("output", "data shape").
Expected<int64_t> checked_size(const Shape& shape, int64_t itemsize,
                               const std::string& what);

/// The byte size `count * itemsize` as size_t, or an overflow error when it
/// exceeds int64 (a count that already passed checked_size never does).
Expected<size_t> checked_bytes(int64_t count, int64_t itemsize,
                               const std::string& what);

}  // namespace nuvec
