#include "lm/support/lm_refs.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace nuvec::lm_test {

std::string refs_path(const std::string& relative) { return std::string(NUVEC_REFS_DIR) + relative; }

nlohmann::json read_json(const std::string& relative) {
  std::ifstream in(refs_path(relative));
  if (!in) throw std::runtime_error("missing reference file " + refs_path(relative));
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

std::vector<float> hex_floats(const std::string& hex) {
  std::vector<float> out(hex.size() / 8);
  for (size_t i = 0; i < out.size(); ++i) {
    uint8_t b[4];
    for (int j = 0; j < 4; ++j) b[j] = static_cast<uint8_t>(std::stoul(hex.substr(i * 8 + j * 2, 2), nullptr, 16));
    std::memcpy(&out[i], b, 4);
  }
  return out;
}

::testing::AssertionResult close_rel(const std::vector<float>& a, const std::vector<float>& b, double rel) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size();
  double scale = 0, worst = 0;
  size_t at = 0;
  for (float v : b) scale = std::max(scale, std::abs(static_cast<double>(v)));
  for (size_t i = 0; i < a.size(); ++i) {
    double d = std::abs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  if (worst <= rel * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max difference " << worst << " at " << at << " (" << a[at] << " vs "
                                       << b[at] << "), allowed " << rel * scale;
}

std::string smollm2_gguf() {
  const char* p = std::getenv("NUVEC_SMOLLM2_GGUF");
  return p && *p && std::ifstream(p).good() ? std::string(p) : std::string();
}

std::vector<int> ints(const nlohmann::json& j) { return j.get<std::vector<int>>(); }

}  // namespace nuvec::lm_test
