// Shared by the fuzz targets: read every element of a loaded array, so that
// AddressSanitizer sees any array that reaches past its bytes and
// UndefinedBehaviorSanitizer any bool byte other than 0 or 1.
#pragma once

#include <cstdlib>

#include "nuvec/nuvec.h"

namespace nuvec::fuzz {

inline void touch(const Array& a) {
  // Nothing to read in an empty array. (The CPU loops' dimension merging
  // multiplies dimensions in int and overflows on shapes such as
  // (0, 1474, 147, 7, 14, 147, 0, 43, 97, 7, 7): a core issue, not the
  // loader's, reported separately.)
  if (a.size() == 0) return;
  ops::copy(a).eval();  // every element, through the array's strides
  if (a.dtype() == bool_) ops::logical_not(a).astype(int32).sum().eval();
}

/// Loaders may fail only with an io error; anything else is a bug.
template <class F>
void expect_io_or_success(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::io) std::abort();
  }
}

}  // namespace nuvec::fuzz
