// Reading recorded MLX values (tests/refs/nn_*.ref) as arrays, for the
// nuvec_nn tests.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <map>

#include "nuvec/nuvec.h"
#include "support/refs.h"

namespace nuvec::nn_test {

/// The recorded tensor as an array of its dtype (view "c" only).
Array ref_array(const refs::Tensor& t);
/// Every case of tests/refs/<file>, by id.
std::map<std::string, refs::Case> ref_cases(const std::string& file);
/// Whether a and b have the same shape, dtype and bits.
::testing::AssertionResult same_bits(const Array& a, const Array& b);

}  // namespace nuvec::nn_test
