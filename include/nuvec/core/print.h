// Printing arrays as MLX prints them: `array([[1, 2]], dtype=int32)`.
#pragma once

#include <ostream>
#include <string>

#include "nuvec/core/array.h"

namespace nuvec {

/// Evaluates and prints the array as MLX does, summarising large arrays
/// (more than 1000 elements) with "..." after three leading and trailing
/// entries per axis. A failed array prints its error.
std::ostream& operator<<(std::ostream& os, const Array& a);
/// The printed form as a string.
std::string to_string(const Array& a);

}  // namespace nuvec
