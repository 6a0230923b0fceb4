// Builders of the tokenizer pipeline's components from tokenizer.json
// objects, and the few that GGUF vocabularies need (internal).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/regex.h"
#include "tokenizer/tokenizer_impl.h"

namespace nuvec::lm::tok {

using Json = nlohmann::json;

/// The member `key` of object `j` as a string (`what` names the object in
/// the error a missing or mistyped member throws).
std::string json_string(const Json& j, const char* key,
                        const std::string& what);
bool json_bool(const Json& j, const char* key, bool fallback,
               const std::string& what);
const Json& json_member(const Json& j, const char* key,
                        const std::string& what);

const Json& json_array(const Json& j, const char* key, const std::string& what);
size_t json_size(const Json& j, const char* key, const std::string& what);
/// The "type" of a component object.
std::string type_of(const Json& j, const std::string& what);
void replace_all(std::string& s, const std::string& from,
                 const std::string& to);

// A Replace pattern: {"String": "..."} or {"Regex": "..."}.
struct Pattern {
  std::string literal;
  std::optional<Regex> regex;
  Pattern(const Json& j, const std::string& what) {
    if (j.is_object() && j.contains("String") && j["String"].is_string()) {
      literal = j["String"].get<std::string>();
    } else if (j.is_object() && j.contains("Regex") && j["Regex"].is_string()) {
      regex.emplace(j["Regex"].get<std::string>());
    } else {
      fail(
          what +
              ": \"pattern\" is neither {\"String\": ...} nor {\"Regex\": ...}",
          ErrorKind::io);
    }
  }
  std::vector<std::pair<size_t, size_t>> find(const std::string& s) const {
    if (regex) return regex->find_all(s);
    std::vector<std::pair<size_t, size_t>> m;
    if (literal.empty()) return m;
    for (size_t k = s.find(literal); k != std::string::npos;
         k = s.find(literal, k + literal.size()))
      m.emplace_back(k, k + literal.size());
    return m;
  }
  void replace(std::string& s, const std::string& content) const {
    if (!regex) return replace_all(s, literal, content);
    std::string out;
    size_t prev = 0;
    for (auto [b, e] : regex->find_all(s)) {
      out.append(s, prev, b - prev);
      out += content;
      prev = e;
    }
    out.append(s, prev);
    s = std::move(out);
  }
};

/// Metaspace's prepend_scheme (or the older add_prefix_space flag).
enum class Prepend3 { always, first, never };
Prepend3 parse_prepend(const Json& j, const std::string& what);
/// Metaspace's replacement: one character.
std::string metaspace_replacement(const Json& j, const std::string& what);

/// Counts the nesting of Sequence components while one is built: a file
/// nesting them past 64 deep is an error, not a stack overflow.
struct NestingGuard {
  explicit NestingGuard(const std::string& what);
  ~NestingGuard();
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;
};

std::shared_ptr<const Normalizer> make_normalizer(const Json& j);
std::shared_ptr<const PreTokenizer> make_pre_tokenizer(const Json& j);
std::shared_ptr<const Decoder> make_decoder(const Json& j);

std::shared_ptr<const PreTokenizer> byte_level_pre_tokenizer(
    bool add_prefix_space, bool use_regex);
/// Isolated splits by each of `patterns` in turn, then the byte-level map.
std::shared_ptr<const PreTokenizer> regex_byte_level_pre_tokenizer(
    const std::vector<std::string>& patterns);
std::shared_ptr<const Decoder> byte_level_decoder();
/// Replace("▁", " "), ByteFallback, Fuse, Strip(" ", 1, 0): Llama 2's.
std::shared_ptr<const Decoder> sentencepiece_decoder(bool strip_space);

}  // namespace nuvec::lm::tok
