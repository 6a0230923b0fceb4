// A small strict JSON parser (RFC 8259) for safetensors headers. Nothing in
// a file is trusted: nesting depth is bounded, strings must be valid UTF-8
// (escapes included: a lone surrogate is an error), duplicate object keys
// are an error, and numbers keep their literal text so that integers are
// read exactly (no detour through double).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nuvec::io::detail {

struct JsonMember;

struct JsonValue {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  // The decoded UTF-8 of a string, or the literal text of a number.
  std::string text;
  std::vector<JsonValue> items;  // array elements
  // Object members in file order; keys are unique.
  std::vector<JsonMember> members;
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

/// A syntax error: what is wrong and the byte offset where it was found.
class JsonError : public std::runtime_error {
 public:
  JsonError(const std::string& what, size_t offset)
      : std::runtime_error(what), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

/// Parses `text` as exactly one JSON value, with optional whitespace around
/// it. Arrays and objects nest at most `max_depth` deep. Throws JsonError.
JsonValue parse_json(std::string_view text, int max_depth = 64);

/// The value of a number literal that is a non-negative integer without
/// fraction or exponent ("12"), if it fits in uint64; nullopt otherwise.
std::optional<uint64_t> json_uint(const JsonValue& v);

/// Whether a number literal is negative ("-3", "-0.5").
inline bool json_negative(const JsonValue& v) {
  return v.type == JsonValue::Type::number && !v.text.empty() &&
         v.text[0] == '-';
}

/// `s` as a JSON string literal (quotes, escapes). `s` must be valid UTF-8.
std::string json_quote(std::string_view s);

/// Whether `s` is valid UTF-8 (no overlong forms, no surrogates, at most
/// U+10FFFF).
bool valid_utf8(std::string_view s);

}  // namespace nuvec::io::detail
