#include "config.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace nuvec::lm::detail {

Config Config::parse(const std::string& text, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) fail(ErrorKind::io, source + ": not valid JSON");
  if (!j.is_object()) fail(ErrorKind::io, source + ": not a JSON object");
  return Config(std::move(j), source);
}

Config Config::from_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorKind::io, file + ": cannot be opened");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), file);
}

void Config::bad(const std::string& key, const char* want) const {
  fail(ErrorKind::io, source_ + ": \"" + key + "\" must be " + want);
}

std::optional<int> Config::opt_int(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const auto& v = j_[key];
  if (v.is_number_integer()) {
    auto x = v.get<int64_t>();
    if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) bad(key, "an int");
    return static_cast<int>(x);
  }
  if (v.is_number_float()) {  // 1e5 written as a float
    double d = v.get<double>();
    if (std::floor(d) == d && std::abs(d) < 2e9) return static_cast<int>(d);
  }
  bad(key, "an integer");
}

int Config::get_int(const std::string& key) const {
  auto v = opt_int(key);
  if (!v) fail(ErrorKind::io, source_ + ": missing \"" + key + "\"");
  return *v;
}

int Config::get_int(const std::string& key, int fallback) const { return opt_int(key).value_or(fallback); }

std::optional<double> Config::opt_double(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  if (!j_[key].is_number()) bad(key, "a number");
  return j_[key].get<double>();
}

double Config::get_double(const std::string& key, double fallback) const {
  return opt_double(key).value_or(fallback);
}

bool Config::get_bool(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!j_[key].is_boolean()) bad(key, "true or false");
  return j_[key].get<bool>();
}

std::string Config::get_string(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  if (!j_[key].is_string()) bad(key, "a string");
  return j_[key].get<std::string>();
}

std::vector<int> Config::int_list(const std::string& key) const {
  if (!has(key)) return {};
  const auto& v = j_[key];
  std::vector<int> out;
  if (v.is_number_integer()) return {v.get<int>()};
  if (!v.is_array()) bad(key, "an integer or a list of integers");
  for (const auto& x : v) {
    if (!x.is_number_integer()) bad(key, "a list of integers");
    out.push_back(x.get<int>());
  }
  return out;
}

Config Config::object(const std::string& key) const {
  if (!has(key)) return Config(nlohmann::json::object(), source_);
  if (!j_[key].is_object()) bad(key, "an object");
  return Config(j_[key], source_ + ": " + key);
}

}  // namespace nuvec::lm::detail
