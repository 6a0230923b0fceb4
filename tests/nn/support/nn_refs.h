// Reading recorded MLX values (tests/refs/nn_*.ref) as arrays, for the
// nuvec_nn tests.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <cstdint>
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

/// The parameters of every layer, in order (MLX's tree_flatten order).
template <class... M>
std::vector<Array> params_of(const M&... layers) {
  std::vector<Array> out;
  (
      [&] {
        for (auto& [p, a] : layers.parameters()) out.push_back(a);
      }(),
      ...);
  return out;
}

/// The distance in units in the last place between two floats of one
/// format, given as sign-magnitude bit patterns of `width` bits.
inline int64_t ulp_distance(uint64_t a, uint64_t b, int width) {
  uint64_t sign = uint64_t(1) << (width - 1);
  auto ordered = [&](uint64_t v) {
    return (v & sign) ? -static_cast<int64_t>(v & ~sign) : static_cast<int64_t>(v);
  };
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

}  // namespace nuvec::nn_test
