// Shared helpers of the nuvec_lm tests: the recorded references under
// tests/refs/ (JSON written by tools/*.py) and float comparisons.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nuvec/nuvec.h"

namespace nuvec::lm_test {

/// tests/refs/<relative> as text / as JSON.
std::string refs_path(const std::string& relative);
nlohmann::json read_json(const std::string& relative);
/// Little-endian float32 hex to floats.
std::vector<float> hex_floats(const std::string& hex);
/// Whether |a - b| <= rel * max|b| everywhere (and the sizes agree).
::testing::AssertionResult close_rel(const std::vector<float>& a, const std::vector<float>& b, double rel);
/// The int list of a JSON array.
std::vector<int> ints(const nlohmann::json& j);

}  // namespace nuvec::lm_test
