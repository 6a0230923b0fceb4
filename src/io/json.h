// A small strict JSON reader (RFC 8259) for safetensors headers. Nothing in
// a file is trusted: it is a pull reader that keeps no document tree, so the
// caller decides, value by value, what to keep and refuses what the format
// does not allow at the first byte that shows it (a 100 MB header costs
// what the caller keeps, not a tree of 50 million values). Nesting depth is
// bounded, strings must be valid UTF-8 (escapes included: a lone surrogate is
// an error), and numbers are handed over as their literal text so that
// integers are read exactly (no detour through double).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nuvec::io::detail {

/// A syntax error: what is wrong and the byte offset where it was found.
class JsonError : public std::runtime_error {
 public:
  JsonError(const std::string& what, size_t offset)
      : std::runtime_error(what), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

/// Reads one JSON value from `text`, token by token. Every call throws
/// JsonError on a syntax error; the reader holds only the nesting state
/// (at most `max_depth` levels).
class JsonReader {
 public:
  enum class Kind { null, boolean, number, string, array, object };

  explicit JsonReader(std::string_view text, int max_depth = 64);

  /// The kind of the next value (after whitespace), judged by its first byte.
  Kind peek();
  /// Consumes '{' and enters the object.
  void begin_object();
  /// Reads the next member's key and ':' into `key`, or consumes '}' and
  /// returns false. Call before each member of an entered object.
  bool next_member(std::string& key);
  /// Consumes '[' and enters the array.
  void begin_array();
  /// Whether another element follows (consuming ',' between them), or
  /// consumes ']' and returns false. Call before each element.
  bool next_item();
  /// A string value, decoded.
  std::string string_value();
  /// The literal text of a number value ("12", "-0.5e3"), a view of `text`.
  std::string_view number_value();
  /// Checks and skips one value of any kind, keeping nothing.
  void skip_value();
  /// Checks that only whitespace follows the value.
  void finish();
  /// The byte offset of the next token (after whitespace).
  size_t offset();
  /// The byte offset of the key that next_member read last.
  size_t key_offset() const { return key_pos_; }
  /// Throws JsonError(what) at the current offset.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  bool at_end() const { return pos_ >= s_.size(); }
  char current() const { return s_[pos_]; }
  void skip_ws();
  void expect(char c);
  void literal(std::string_view word);
  void enter(char open);
  bool next(char close);
  uint32_t hex4();
  void escape(std::string& out);
  std::string_view s_;
  int max_depth_;
  size_t pos_ = 0, key_pos_ = 0;
  // Per open level: whether no element or member has been read yet.
  std::vector<bool> first_;
};

/// The value of a number literal that is a non-negative integer without
/// fraction or exponent ("12"), if it fits in uint64; nullopt otherwise.
std::optional<uint64_t> json_uint(std::string_view number);

/// Whether a number literal is negative ("-3", "-0.5").
inline bool json_negative(std::string_view number) {
  return !number.empty() && number[0] == '-';
}

/// `s` as a JSON string literal (quotes, escapes). `s` must be valid UTF-8.
std::string json_quote(std::string_view s);

/// Whether `s` is valid UTF-8 (no overlong forms, no surrogates, at most
/// U+10FFFF).
bool valid_utf8(std::string_view s);

}  // namespace nuvec::io::detail
