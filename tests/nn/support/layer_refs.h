// Replaying tests/refs/nn_layers2.ref (tools/record_mlx_nn_layers2.py) in
// the conv, recurrent and normalization tests.
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "nn/support/nn_refs.h"
#include "nuvec/nn.h"

namespace nuvec::nn_test {

inline const refs::Case& layers2(const std::string& id) {
  static auto cases = ref_cases("nn_layers2.ref");
  return cases.at(id);
}

/// Compares got[i] with the case's output i: bit for bit, or within `tol`
/// (relative and absolute) for the outputs listed in `near`.
inline void expect_outputs(const refs::Case& c, const std::vector<Array>& got,
                           double tol = 0, const std::set<size_t>& near = {}) {
  ASSERT_EQ(got.size(), c.outputs.size()) << c.where();
  for (size_t i = 0; i < got.size(); ++i) {
    Array want = ref_array(c.outputs[i]);
    if (tol == 0 || !near.count(i)) {
      EXPECT_TRUE(same_bits(got[i], want)) << c.where() << " output " << i;
    } else {
      ASSERT_EQ(got[i].shape(), want.shape()) << c.where() << " output " << i;
      EXPECT_TRUE(ops::allclose(got[i], want, tol, tol).item<bool>())
          << c.where() << " output " << i << ": max |got - want| = "
          << ops::max(ops::abs(got[i].astype(float32) - want.astype(float32)))
                 .item<float>();
    }
  }
}

/// Every index in [0, n).
inline std::set<size_t> all_of(size_t n) {
  std::set<size_t> s;
  for (size_t i = 0; i < n; ++i) s.insert(i);
  return s;
}

/// The message of the error reading `a` throws ("" when it does not).
inline std::string error_of(const Array& a) {
  try {
    a.check();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace nuvec::nn_test
