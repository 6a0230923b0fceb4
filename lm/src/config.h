// Reading config.json (and the other JSON files of a checkpoint): typed
// accessors whose errors name the file and the key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nuvec/core/error.h"

namespace nuvec::lm::detail {

[[noreturn]] inline void fail(ErrorKind kind, const std::string& what) {
  Error(kind, "[nuvec_lm] " + what).raise();
}

/// A JSON object from a file, with typed lookups.
class Config {
 public:
  Config() : j_(nlohmann::json::object()) {}
  Config(nlohmann::json j, std::string source) : j_(std::move(j)), source_(std::move(source)) {}
  /// Parses `text`; a syntax error or a non-object names `source`.
  static Config parse(const std::string& text, const std::string& source);
  static Config from_file(const std::string& file);

  bool has(const std::string& key) const { return j_.contains(key) && !j_[key].is_null(); }
  int get_int(const std::string& key) const;
  int get_int(const std::string& key, int fallback) const;
  std::optional<int> opt_int(const std::string& key) const;
  double get_double(const std::string& key, double fallback) const;
  std::optional<double> opt_double(const std::string& key) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  /// An integer or a list of integers (eos_token_id), empty when absent.
  std::vector<int> int_list(const std::string& key) const;
  /// A nested object (empty when absent; an error when not an object).
  Config object(const std::string& key) const;
  const nlohmann::json& json() const { return j_; }
  const std::string& source() const { return source_; }

 private:
  [[noreturn]] void bad(const std::string& key, const char* want) const;
  nlohmann::json j_;
  std::string source_;
};

}  // namespace nuvec::lm::detail
